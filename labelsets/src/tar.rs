//! Tar archives read member by member from a stream (Wikimedia Enterprise dumps ship as
//! `.json.tar.gz`): nothing is extracted to disk. ustar, GNU (long names `L`) and pax
//! (`x`, `g`) headers; regular files are handed over, everything else skipped.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::{io_err, Error, Result};

/// Is `head` (the first decompressed bytes) a tar header? The `ustar` magic, or a header
/// block whose checksum field matches its bytes (old V7 archives).
pub fn is_tar_header(head: &[u8]) -> bool {
    if head.len() < 512 {
        return false;
    }
    if &head[257..262] == b"ustar" {
        return true;
    }
    let Some(stored) = octal(&head[148..156]) else { return false };
    let sum: u64 = head[..512]
        .iter()
        .enumerate()
        .map(|(i, &c)| if (148..156).contains(&i) { 32 } else { c as u64 })
        .sum();
    stored == sum && head[0] != 0
}

/// Parse an octal tar number field (NUL/space padded). GNU base-256 numbers (high bit set)
/// are read too.
pub fn octal(field: &[u8]) -> Option<u64> {
    if field.first().is_some_and(|&b| b & 0x80 != 0) {
        let mut v: u64 = (field[0] & 0x7f) as u64;
        for &b in &field[1..] {
            v = v.checked_mul(256)?.checked_add(b as u64)?;
        }
        return Some(v);
    }
    let s: Vec<u8> = field.iter().copied().filter(|&b| b != 0 && b != b' ').collect();
    if s.is_empty() {
        return Some(0);
    }
    let s = std::str::from_utf8(&s).ok()?;
    u64::from_str_radix(s, 8).ok()
}

fn field_str(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// What a walk over an archive saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TarStats {
    /// Regular-file members handed to the callback.
    pub files: u64,
    /// Other members (directories, links, pax headers…).
    pub other: u64,
}

/// Call `member(name, reader)` for every regular file of the tar stream `r`, in archive
/// order. The reader yields exactly the member's bytes; whatever the callback leaves unread
/// is skipped.
pub fn for_each_member(
    r: impl Read,
    path: &Path,
    mut member: impl FnMut(&str, &mut dyn BufRead) -> Result<()>,
) -> Result<TarStats> {
    let mut r = BufReader::with_capacity(1 << 16, r);
    let mut stats = TarStats::default();
    let mut long_name: Option<String> = None;
    let mut header = [0u8; 512];
    let mut at = 0u64;
    loop {
        match read_block(&mut r, &mut header).map_err(io_err(path))? {
            false => break,
            true if header.iter().all(|&b| b == 0) => break,
            true => {}
        }
        let here = at;
        let bad = move |what: &str| Error::Input {
            path: path.into(),
            reason: format!("tar header at byte {here}: {what}"),
        };
        if !is_tar_header(&header) {
            return Err(bad("not a tar header (damaged or not a tar archive)"));
        }
        let size = octal(&header[124..136]).ok_or_else(|| bad("unreadable size"))?;
        let kind = header[156];
        let mut name = field_str(&header[0..100]);
        if &header[257..262] == b"ustar" {
            let prefix = field_str(&header[345..500]);
            if !prefix.is_empty() {
                name = format!("{prefix}/{name}");
            }
        }
        if let Some(n) = long_name.take() {
            name = n;
        }
        let padded = size.next_multiple_of(512);
        at += 512;
        match kind {
            b'0' | 0 | b'7' => {
                let mut body = (&mut r).take(size);
                {
                    let mut br = BufReader::with_capacity(1 << 16, &mut body);
                    member(&name, &mut br)?;
                    std::io::copy(&mut br, &mut std::io::sink()).map_err(io_err(path))?;
                }
                std::io::copy(&mut body, &mut std::io::sink()).map_err(io_err(path))?;
                if body.limit() != 0 {
                    return Err(bad("the archive ends inside a member"));
                }
                stats.files += 1;
            }
            b'L' => {
                let mut n = Vec::new();
                (&mut r).take(size.min(1 << 16)).read_to_end(&mut n).map_err(io_err(path))?;
                std::io::copy(&mut (&mut r).take(size - n.len() as u64), &mut std::io::sink())
                    .map_err(io_err(path))?;
                long_name = Some(field_str(&n));
                stats.other += 1;
            }
            _ => {
                std::io::copy(&mut (&mut r).take(size), &mut std::io::sink()).map_err(io_err(path))?;
                stats.other += 1;
            }
        }
        let pad = padded - size;
        let skipped = std::io::copy(&mut (&mut r).take(pad), &mut std::io::sink()).map_err(io_err(path))?;
        if skipped != pad {
            return Err(bad("the archive ends inside a member"));
        }
        at += padded;
    }
    Ok(stats)
}

/// Read one 512-byte block; `false` at a clean end of stream.
fn read_block(r: &mut impl Read, b: &mut [u8; 512]) -> std::io::Result<bool> {
    let mut got = 0;
    while got < 512 {
        let n = r.read(&mut b[got..])?;
        if n == 0 {
            return if got == 0 {
                Ok(false)
            } else {
                Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the archive ends inside a tar header",
                ))
            };
        }
        got += n;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(name: &str, size: usize, kind: u8) -> [u8; 512] {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..107].copy_from_slice(b"0000644");
        let s = format!("{size:011o}");
        h[124..135].copy_from_slice(s.as_bytes());
        h[156] = kind;
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|&c| c as u32).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        h
    }

    fn archive(members: &[(&str, &[u8], u8)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, body, kind) in members {
            out.extend_from_slice(&header(name, body.len(), *kind));
            out.extend_from_slice(body);
            out.resize(out.len().next_multiple_of(512), 0);
        }
        out.extend_from_slice(&[0u8; 1024]);
        out
    }

    #[test]
    fn members_in_order_with_exact_bytes() {
        let long = "d/".repeat(80) + "x.ndjson";
        let mut members: Vec<(&str, &[u8], u8)> =
            vec![("dir/", b"", b'5'), ("a.ndjson", b"{\"a\":1}\n", b'0'), ("empty", b"", b'0')];
        members.push(("././@LongLink", long.as_bytes(), b'L'));
        members.push(("short", &[7u8; 1000], b'0'));
        let tar = archive(&members);
        let mut seen = Vec::new();
        let stats = for_each_member(&tar[..], Path::new("t.tar"), |name, r| {
            let mut b = Vec::new();
            r.read_to_end(&mut b).unwrap();
            seen.push((name.to_string(), b));
            Ok(())
        })
        .unwrap();
        assert_eq!(stats, TarStats { files: 3, other: 2 });
        assert_eq!(seen[0], ("a.ndjson".to_string(), b"{\"a\":1}\n".to_vec()));
        assert_eq!(seen[1].1.len(), 0);
        assert_eq!(seen[2], (long, vec![7u8; 1000]));
        // A callback that reads nothing still leaves the stream at the next member.
        let mut names = Vec::new();
        for_each_member(&tar[..], Path::new("t.tar"), |name, _| {
            names.push(name.to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!(names.len(), 3);
    }

    #[test]
    fn damaged_archives_are_errors_not_panics() {
        let tar = archive(&[("a", &[1u8; 700], b'0')]);
        for cut in [100, 512, 900, 1100] {
            let r = for_each_member(&tar[..cut], Path::new("t.tar"), |_, r| {
                let mut b = Vec::new();
                let _ = r.read_to_end(&mut b);
                Ok(())
            });
            assert!(r.is_err(), "cut at {cut}");
        }
        // The block after the member (header 512 + body padded to 1024) is no header.
        let mut bad = tar.clone();
        bad[1536..2048].copy_from_slice(&[b'q'; 512]);
        assert!(for_each_member(&bad[..], Path::new("t.tar"), |_, _| Ok(())).is_err());
    }
}
