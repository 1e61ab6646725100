//! The `ditto` commands' flags: clap types that parse the command line into the plain
//! `*Config` structs the engine takes. Value parsers shared by several commands live here.

pub mod crawl;
pub mod discover;
pub mod export;
pub mod labelset;
pub mod labelset_import;
pub mod origins;
pub mod quilts;
pub mod recrawl;
pub mod replicas;
pub mod report;
pub mod scan;
pub mod stats;
pub mod stopchunks;
pub mod store;

/// Parse a size: `123`, `64KiB`, `512MB`, `1.5G` (K, M, G, T with or without `B`/`iB` are
/// powers of 1024).
pub fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("{s:?}: expected a size such as 512MB"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        u => return Err(format!("{s:?}: unknown unit {u:?} (use B, KB, MB, GB, TB)")),
    };
    let v = n * mult as f64;
    if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 {
        return Err(format!("{s:?}: out of range"));
    }
    Ok(v as u64)
}

/// Parse `--threads`: 1 to [`crate::pipeline::pool::MAX_WORKERS`]; anything else is a usage
/// error (exit 2) before the command opens anything.
pub fn parse_threads(s: &str) -> std::result::Result<usize, String> {
    let max = crate::pipeline::pool::MAX_WORKERS;
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("expected a number of workers from 1 to {max}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("512MB"), Ok(512 << 20));
        assert_eq!(parse_bytes("64KiB"), Ok(64 << 10));
        assert_eq!(parse_bytes("1.5g"), Ok(3 << 29));
        assert_eq!(parse_bytes("1000"), Ok(1000));
        assert!(parse_bytes("12 parsecs").is_err());
        assert!(parse_bytes("MB").is_err());
    }

    #[test]
    fn threads_are_bounded() {
        assert_eq!(parse_threads("4"), Ok(4));
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("100000").is_err());
        assert!(parse_threads("-1").is_err());
    }
}
