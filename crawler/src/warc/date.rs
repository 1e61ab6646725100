//! `WARC-Date` values (WARC 1.1 §5.4): parsed by the reader, written by the writer. Both
//! directions use Howard Hinnant's civil-date algorithms.

use std::time::{SystemTime, UNIX_EPOCH};

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// Civil UTC date and time of Unix seconds.
fn utc_parts(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, (sod / 3600) as u32, (sod % 3600 / 60) as u32, (sod % 60) as u32)
}

/// ISO 8601 / W3C-DTF date as in WARC-Date (`2014-01-27T17:12:38Z`, fractional seconds,
/// `+hh:mm` offsets, or just a date) to Unix seconds; None when invalid.
pub fn parse_warc_date(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let year = num(0..4)?;
    let (mut month, mut day) = (1, 1);
    let (mut hh, mut mm, mut ss) = (0, 0, 0);
    let mut i = 4;
    if b.get(i) == Some(&b'-') {
        month = num(5..7)?;
        i = 7;
        if b.get(i) == Some(&b'-') {
            day = num(8..10)?;
            i = 10;
        }
    }
    let mut offset_secs = 0;
    if matches!(b.get(i), Some(b'T' | b't' | b' ')) {
        hh = num(i + 1..i + 3)?;
        i += 3;
        if b.get(i) == Some(&b':') {
            mm = num(i + 1..i + 3)?;
            i += 3;
            if b.get(i) == Some(&b':') {
                ss = num(i + 1..i + 3)?;
                i += 3;
                if matches!(b.get(i), Some(b'.' | b',')) {
                    i += 1;
                    while b.get(i).is_some_and(u8::is_ascii_digit) {
                        i += 1;
                    }
                }
            }
        }
        match b.get(i) {
            None => {}
            Some(b'Z' | b'z') => i += 1,
            Some(&c @ (b'+' | b'-')) => {
                let oh = num(i + 1..i + 3)?;
                let om = if b.get(i + 3) == Some(&b':') {
                    let v = num(i + 4..i + 6)?;
                    i += 6;
                    v
                } else if b.len() >= i + 5 {
                    let v = num(i + 3..i + 5)?;
                    i += 5;
                    v
                } else {
                    i += 3;
                    0
                };
                offset_secs = (oh * 3600 + om * 60) * if c == b'+' { 1 } else { -1 };
            }
            _ => return None,
        }
    }
    if i != b.len() || !(1..=12).contains(&month) || !(1..=31).contains(&day) || hh > 24 || mm > 59 || ss > 60
    {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86400 + hh * 3600 + mm * 60 + ss - offset_secs)
}

/// `WARC-Date` form (W3C-ISO8601 at second precision, UTC): `2024-03-01T12:00:05Z`.
pub fn warc_date(secs: i64) -> String {
    let (y, mo, d, h, mi, s) = utc_parts(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `YYYYMMDDhhmmss` (UTC) for file names.
pub(crate) fn file_stamp(secs: i64) -> String {
    let (y, mo, d, h, mi, s) = utc_parts(secs);
    format!("{y:04}{mo:02}{d:02}{h:02}{mi:02}{s:02}")
}

pub(crate) fn now_secs() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_warc_dates() {
        assert_eq!(parse_warc_date("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_warc_date("2014-01-27T17:12:38Z"), Some(1390842758));
        assert_eq!(parse_warc_date("2014-01-27T17:12:38.123456Z"), Some(1390842758));
        assert_eq!(parse_warc_date("2014-01-27T18:12:38+01:00"), Some(1390842758));
        assert_eq!(parse_warc_date("2014-01-27"), Some(1390780800));
        assert_eq!(parse_warc_date("2008-10-294T00:00:00Z"), None);
        assert_eq!(parse_warc_date("garbage"), None);
        assert_eq!(parse_warc_date(""), None);
    }

    #[test]
    fn writes_warc_dates() {
        assert_eq!(warc_date(0), "1970-01-01T00:00:00Z");
        assert_eq!(warc_date(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(warc_date(1_709_294_405), "2024-03-01T12:00:05Z");
        assert_eq!(warc_date(-1), "1969-12-31T23:59:59Z");
        assert_eq!(file_stamp(1_709_294_405), "20240301120005");
    }

    #[test]
    fn written_dates_parse_back() {
        for secs in [0, 951_782_400, 1_709_294_405, -1, 4_102_444_800] {
            assert_eq!(parse_warc_date(&warc_date(secs)), Some(secs));
        }
    }
}
