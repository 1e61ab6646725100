//! Checks `crawler::robots` against every expectation of Google's robots.txt test suite
//! (google/robotstxt `robots_test.cc`), converted to JSON Lines in
//! `shared/data/robots/` (see its MANIFEST.md for the format).
//!
//! `google-robotstxt-cases.jsonl`: every `IsUserAgentAllowed` case, all asserted.
//!
//! `google-robotstxt-other.jsonl`, by `kind`, all four kinds apply to us and are asserted:
//! - `valid_user_agent` → `robots::is_valid_product_token`;
//! - `parse_stats` → counted over `robots::for_each_directive` the way the upstream
//!   `RobotsStatsReporter` counts (user-agent/allow/disallow/sitemap are valid directives;
//!   every other `key: value` line, including our `crawl-delay`, is unknown as upstream);
//! - `get_path_params_query` → `robots::path_params_query`;
//! - `maybe_escape_pattern` → `robots::escape_pattern`.
//!
//! Not applied: nothing in these files. (Upstream's `reporting_robots_test.cc` per-line
//! metadata — typo flags, missing-colon flags — was never converted and has no
//! counterpart in our API.)

use base64::Engine;
use crawler::robots::{self, DirectiveKind, Robots};
use serde_json::Value;

const CASES: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/robots/google-robotstxt-cases.jsonl");
const OTHER: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/robots/google-robotstxt-other.jsonl");

fn records(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path} record {i}: {e}")))
        .collect()
}

/// A string field's bytes: the JSON string as UTF-8, or `<field>_base64` when the field
/// is null (bytes that are not valid UTF-8).
fn bytes_field(r: &Value, field: &str) -> Vec<u8> {
    match r.get(field) {
        Some(Value::String(s)) => s.as_bytes().to_vec(),
        _ => {
            let b64 = r
                .get(format!("{field}_base64"))
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("record {r} has neither {field} nor {field}_base64"));
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap_or_else(|e| panic!("bad base64 in {r}: {e}"))
        }
    }
}

fn str_field<'a>(r: &'a Value, field: &str) -> &'a str {
    r.get(field).and_then(Value::as_str).unwrap_or_else(|| panic!("record {r} lacks string {field}"))
}

fn name(r: &Value) -> String {
    format!(
        "{}:{}",
        r.get("test").and_then(Value::as_str).unwrap_or("?"),
        r.get("line").and_then(Value::as_u64).unwrap_or(0)
    )
}

fn short(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.len() > 300 {
        let cut = (0..=300).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        format!("{:?}… ({} bytes)", &s[..cut], b.len())
    } else {
        format!("{s:?}")
    }
}

#[test]
fn google_is_user_agent_allowed_cases() {
    let recs = records(CASES);
    assert_eq!(recs.len(), 145, "MANIFEST says 145 cases");
    let mut failures = Vec::new();
    for r in &recs {
        let body = bytes_field(r, "robots_txt");
        let agent = str_field(r, "user_agent");
        let url = str_field(r, "url");
        let expected =
            r.get("allowed").and_then(Value::as_bool).unwrap_or_else(|| panic!("record {r} lacks allowed"));
        let got = Robots::parse(&body).is_allowed(agent, url);
        if got != expected {
            failures.push(format!(
                "{}: agent {agent:?} url {url:?}: expected allowed={expected}, got {got}; robots.txt {}",
                name(r),
                short(&body)
            ));
        }
    }
    println!("robots cases: {}/{} pass", recs.len() - failures.len(), recs.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        recs.len(),
        failures.join("\n")
    );
}

#[derive(Default)]
struct Stats {
    valid_directives: u64,
    unknown_directives: u64,
    last_line_seen: u64,
    sitemap: String,
    lines_monotonic: bool,
}

fn stats(body: &[u8]) -> Stats {
    let mut s = Stats { lines_monotonic: true, ..Stats::default() };
    robots::for_each_directive(body, |d| {
        let line = d.line as u64;
        if line < s.last_line_seen {
            s.lines_monotonic = false;
        }
        s.last_line_seen = line;
        match d.kind {
            DirectiveKind::UserAgent | DirectiveKind::Allow | DirectiveKind::Disallow => {
                s.valid_directives += 1
            }
            DirectiveKind::Sitemap => {
                s.valid_directives += 1;
                s.sitemap.push_str(&String::from_utf8_lossy(&d.value));
            }
            // Upstream has no crawl-delay key: it reports it as unknown.
            DirectiveKind::CrawlDelay | DirectiveKind::Unknown => s.unknown_directives += 1,
        }
    });
    s
}

#[test]
fn google_other_expectations() {
    let recs = records(OTHER);
    assert_eq!(recs.len(), 56, "MANIFEST says 56 other records");
    let mut failures = Vec::new();
    let mut per_kind = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for r in &recs {
        let kind = str_field(r, "kind");
        let result: Result<(), String> = match kind {
            "valid_user_agent" => {
                // The null string_view record (line 186) is treated as empty.
                let ua = str_field(r, "user_agent");
                let expected = r.get("expected").and_then(Value::as_bool);
                let got = robots::is_valid_product_token(ua);
                if Some(got) == expected {
                    Ok(())
                } else {
                    Err(format!("{ua:?}: expected {expected:?}, got {got}"))
                }
            }
            "parse_stats" => {
                let body = bytes_field(r, "robots_txt");
                let st = stats(&body);
                let stat = str_field(r, "stat");
                let expected = r.get("expected").cloned().unwrap_or(Value::Null);
                let got = match stat {
                    "valid_directives" => Value::from(st.valid_directives),
                    "unknown_directives" => Value::from(st.unknown_directives),
                    "last_line_seen" => Value::from(st.last_line_seen),
                    "sitemap" => Value::from(st.sitemap.clone()),
                    other => Value::from(format!("unknown stat {other}")),
                };
                if !st.lines_monotonic {
                    Err(format!("line numbers decreased for {}", short(&body)))
                } else if got == expected {
                    Ok(())
                } else {
                    Err(format!("{stat}: expected {expected}, got {got} for {}", short(&body)))
                }
            }
            "get_path_params_query" => {
                let url = str_field(r, "url");
                let expected = str_field(r, "expected");
                let got = robots::path_params_query(url);
                if got == expected {
                    Ok(())
                } else {
                    Err(format!("{url:?}: expected {expected:?}, got {got:?}"))
                }
            }
            "maybe_escape_pattern" => {
                let pattern = bytes_field(r, "pattern");
                let expected = bytes_field(r, "expected");
                let got = robots::escape_pattern(&pattern);
                if *got == *expected {
                    Ok(())
                } else {
                    Err(format!("{}: expected {}, got {}", short(&pattern), short(&expected), short(&got)))
                }
            }
            other => Err(format!("unhandled kind {other:?}")),
        };
        let entry = per_kind.entry(kind.to_string()).or_default();
        entry.1 += 1;
        match result {
            Ok(()) => entry.0 += 1,
            Err(e) => failures.push(format!("{} [{kind}] {e}", name(r))),
        }
    }
    for (kind, (pass, total)) in &per_kind {
        println!("robots other {kind}: {pass}/{total} pass");
    }
    assert!(
        failures.is_empty(),
        "{} of {} other records failed:\n{}",
        failures.len(),
        recs.len(),
        failures.join("\n")
    );
}
