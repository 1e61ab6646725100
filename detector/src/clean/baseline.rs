//! The per-core limit of a scan: html5ever's bare tokenizer over the same bytes, with a sink
//! that does nothing but switch to raw-text states where the HTML spec says so (as our
//! cleaner's sink does). Benchmarks report cleaning and scanning as a share of this.

use std::cell::Cell;

use html5ever::local_name;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

struct NullSink(Cell<usize>);

impl TokenSink for NullSink {
    type Handle = ();
    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        if let Token::TagToken(tag) = token {
            if tag.kind == TagKind::StartTag {
                return match tag.name {
                    local_name!("script") => TokenSinkResult::RawData(RawKind::ScriptData),
                    local_name!("style")
                    | local_name!("noscript")
                    | local_name!("iframe")
                    | local_name!("noembed")
                    | local_name!("noframes")
                    | local_name!("xmp") => TokenSinkResult::RawData(RawKind::Rawtext),
                    local_name!("title") | local_name!("textarea") => {
                        TokenSinkResult::RawData(RawKind::Rcdata)
                    }
                    local_name!("plaintext") => TokenSinkResult::Plaintext,
                    _ => TokenSinkResult::Continue,
                };
            }
        }
        self.0.set(self.0.get() + 1);
        TokenSinkResult::Continue
    }
}

/// Tokenize one page with the bare tokenizer, decoding as `clean` does in the common case
/// (valid UTF-8 borrowed, otherwise windows-1252) so both pay for getting to a `&str`.
/// Returns the number of non-tag tokens (so the work cannot be optimized away).
pub fn tokenize_only(body: &[u8]) -> usize {
    let text = match std::str::from_utf8(body) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => encoding_rs::WINDOWS_1252.decode_without_bom_handling(body).0,
    };
    let tok = Tokenizer::new(NullSink(Cell::new(0)), TokenizerOpts::default());
    let q = BufferQueue::default();
    q.push_back(StrTendril::from_slice(&text));
    let _ = tok.feed(&q);
    tok.end();
    tok.sink.0.get()
}

/// Only the attribute guard that `clean` runs before tokenizing (`clean/guard.rs`): the
/// number of attributes it would drop. For measuring its share of cleaning.
pub fn guard_only(text: &str) -> u64 {
    super::guard::cap_attributes(text, super::guard::MAX_ATTRIBUTES_PER_TAG).attributes_dropped
}

/// Whether the cleaner collects the same blocks, block tags, links and anchors from `body`
/// with the guard's stripping of unread attributes and inline tags (`clean/guard.rs`,
/// `prepare`) as without it, with links collected and without. For checking that stripping changes nothing on a corpus (`examples/scan_vs_tokenizer.rs
/// --check-strip`); the bytes are decoded as [`tokenize_only`] decodes them.
pub fn stripping_agrees(body: &[u8], page_url: &str) -> bool {
    let text = match std::str::from_utf8(body) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => encoding_rs::WINDOWS_1252.decode_without_bom_handling(body).0,
    };
    [true, false].into_iter().all(|links| {
        let a = super::html::clean_html_with(&text, Some(page_url), links, false);
        let b = super::html::clean_html_with(&text, Some(page_url), links, true);
        a.blocks.to_vec() == b.blocks.to_vec()
            && a.block_tags == b.block_tags
            && a.links == b.links
            && a.anchors == b.anchors
            && a.truncated == b.truncated
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokenizes_any_bytes() {
        assert!(super::tokenize_only(b"<p>a</p><script><p>x</script><p>b") > 0);
        assert!(super::tokenize_only(b"\xff\xfe<p \x80 broken") > 0);
        assert_eq!(super::tokenize_only(b""), super::tokenize_only(b""));
    }
}
