//! Response bodies that are not a plain byte string: endless, dripping, the gzip bomb, and
//! the wrapper that keeps a request counted in flight until its body is done.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use flate2::{Compress, Compression, Crc, FlushCompress};
use hyper::body::{Frame, SizeHint};

use super::log::InFlight;

/// A response body that holds the request's in-flight guard: hyper drops the body when it
/// has sent the last byte or the client went away, which is exactly when the request ends.
pub(crate) struct GuardedBody {
    inner: Body,
    _guard: InFlight,
}

impl GuardedBody {
    pub(crate) fn new(inner: Body, guard: InFlight) -> Self {
        GuardedBody { inner, _guard: guard }
    }
}

impl hyper::body::Body for GuardedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    // Forwarded so fixed bodies keep their Content-Length (and end without a chunk trailer).
    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Size of each chunk of the endless body.
const ENDLESS_CHUNK: usize = 64 * 1024;

/// An HTML body that never ends: a page start, then 64 KiB chunks of paragraphs forever.
pub(crate) fn endless() -> Body {
    let head = Bytes::from_static(b"<!DOCTYPE html>\n<html><head><title>Endless</title></head><body>\n");
    let para = b"<p>This page never ends. A crawler must stop reading at its body size cap.</p>\n";
    let mut chunk = Vec::with_capacity(ENDLESS_CHUNK);
    while chunk.len() + para.len() <= ENDLESS_CHUNK {
        chunk.extend_from_slice(para);
    }
    let chunk = Bytes::from(chunk);
    let stream = futures_util::stream::unfold(Some(head), move |first| {
        let chunk = chunk.clone();
        async move {
            // Let other connections run between chunks when the reader is fast.
            tokio::task::yield_now().await;
            let next = first.unwrap_or(chunk);
            Some((Ok::<Bytes, Infallible>(next), None))
        }
    });
    Body::from_stream(stream)
}

/// `total` bytes of HTML sent at about `bytes_per_sec`, in pieces of a tenth of a second's
/// worth (at least one byte).
pub(crate) fn drip(bytes_per_sec: u32, total: u64) -> Body {
    let rate = u64::from(bytes_per_sec.max(1));
    let piece = (rate / 10).max(1);
    let pause = Duration::from_secs_f64(piece as f64 / rate as f64);
    let pattern: &'static [u8] =
        b"<!DOCTYPE html><html><body><p>drip drip drip, a slow server sends this body a few bytes at a time.</p></body></html>\n";
    let stream = futures_util::stream::unfold(0u64, move |sent| async move {
        if sent >= total {
            return None;
        }
        // The first piece goes out at once so the headers and first bytes arrive promptly.
        if sent > 0 {
            tokio::time::sleep(pause).await;
        }
        let n = piece.min(total - sent);
        let bytes: Vec<u8> = (sent..sent + n).map(|i| pattern[(i % pattern.len() as u64) as usize]).collect();
        Some((Ok::<Bytes, Infallible>(Bytes::from(bytes)), sent + n))
    });
    Body::from_stream(stream)
}

/// What the gzip bomb inflates to: [`BOMB_SEGMENTS`] × 1 MiB of spaces.
pub const BOMB_INFLATED_BYTES: u64 = (BOMB_SEGMENT as u64) * (BOMB_SEGMENTS as u64);
const BOMB_SEGMENT: usize = 1 << 20;
const BOMB_SEGMENTS: usize = 256;

/// The gzip bomb, built on first use and kept; `None` if zlib failed (then the server
/// answers 500 rather than panicking).
pub(crate) fn gzip_bomb() -> Option<Bytes> {
    static BOMB: OnceLock<Option<Bytes>> = OnceLock::new();
    BOMB.get_or_init(build_gzip_bomb).clone()
}

/// Compressing 256 MiB would take seconds in a debug build, so compress 1 MiB once with a
/// sync flush (a byte-aligned, non-final run of deflate blocks that only refers back to
/// spaces) and repeat those bytes 256 times: every repeat decodes to the same 1 MiB because
/// all history is spaces. The CRC of the whole comes from combining the segment's CRC.
fn build_gzip_bomb() -> Option<Bytes> {
    let spaces = vec![b' '; BOMB_SEGMENT];
    let mut deflate = Compress::new(Compression::best(), false);
    let mut segment = Vec::with_capacity(64 * 1024);
    while deflate.total_in() < BOMB_SEGMENT as u64 || segment.len() == segment.capacity() {
        if segment.len() == segment.capacity() {
            segment.reserve(64 * 1024);
        }
        let consumed = deflate.total_in() as usize;
        deflate.compress_vec(&spaces[consumed..], &mut segment, FlushCompress::Sync).ok()?;
    }
    let mut crc = Crc::new();
    let mut segment_crc = Crc::new();
    segment_crc.update(&spaces);
    for _ in 0..BOMB_SEGMENTS {
        crc.combine(&segment_crc);
    }

    let mut out = Vec::with_capacity(segment.len() * BOMB_SEGMENTS + 32);
    // gzip header: magic, deflate, no flags, no mtime, max compression, unknown OS.
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255]);
    for _ in 0..BOMB_SEGMENTS {
        out.extend_from_slice(&segment);
    }
    // A final, empty fixed-Huffman block ends the deflate stream.
    out.extend_from_slice(&[0x03, 0x00]);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(BOMB_INFLATED_BYTES as u32).to_le_bytes());
    Some(Bytes::from(out))
}
