//! The reader's input: a big buffer over the underlying reader that knows the file offset of
//! every byte, and gzip members decoded one at a time with our own header and trailer
//! handling (so a CRC failure or a truncation is pinned to one member).

use std::io::{self, Read};

use flate2::{Crc, Decompress, FlushDecompress, Status};

use super::error::{WarcError, WarcErrorKind};

/// Raw input buffer size (large reads keep syscalls off the profile).
const RAW_BUF: usize = 1 << 20;
/// Decompressed output buffer size.
pub(super) const OUT_BUF: usize = 256 << 10;
/// The first bytes of every gzip member (magic and the deflate method).
pub(super) const GZ_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

pub(super) struct RawInput<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    /// File offset of `buf[0]`.
    base: u64,
    eof: bool,
}

impl<R: Read> RawInput<R> {
    pub(super) fn new(inner: R) -> Self {
        Self { inner, buf: vec![0; RAW_BUF], pos: 0, len: 0, base: 0, eof: false }
    }

    pub(super) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub(super) fn avail(&self) -> &[u8] {
        &self.buf[self.pos..self.len]
    }

    pub(super) fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.len);
    }

    fn read_more(&mut self) -> io::Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.len, 0);
            self.base += self.pos as u64;
            self.len -= self.pos;
            self.pos = 0;
        }
        if self.len == self.buf.len() {
            let n = self.buf.len() * 2;
            self.buf.resize(n, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.len += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// At least `n` bytes available unless the input ends first.
    pub(super) fn fill_min(&mut self, n: usize) -> io::Result<usize> {
        while self.len - self.pos < n && !self.eof {
            self.read_more()?;
        }
        Ok(self.len - self.pos)
    }

    /// The buffered input from file offset `from` on, if it is still buffered.
    fn buffered_from(&self, from: u64) -> Option<&[u8]> {
        let at = usize::try_from(from.checked_sub(self.base)?).ok()?;
        self.buf.get(at..self.len)
    }

    /// Put bytes back in front of the current position (they came from there).
    pub(super) fn unread(&mut self, bytes: &[u8]) {
        let off = self.offset().saturating_sub(bytes.len() as u64);
        let mut v = Vec::with_capacity(bytes.len() + (self.len - self.pos) + RAW_BUF);
        v.extend_from_slice(bytes);
        v.extend_from_slice(&self.buf[self.pos..self.len]);
        self.len = v.len();
        v.resize(self.len.max(RAW_BUF), 0);
        self.buf = v;
        self.pos = 0;
        self.base = off;
    }
}

pub(super) struct GzMember {
    pub(super) start: u64,
    /// Input offset of its deflate data (after the gzip header).
    data_start: u64,
    inflate: Decompress,
    crc: Crc,
    pub(super) finished: bool,
}

impl GzMember {
    /// Bytes decompressed from this member so far.
    pub(super) fn decoded(&self) -> u64 {
        self.inflate.total_out()
    }

    /// A member starting at input offset `start`, its header already read (its deflate
    /// data starts at `data_start`).
    pub(super) fn new(start: u64, data_start: u64) -> Self {
        Self { start, data_start, inflate: Decompress::new(false), crc: Crc::new(), finished: false }
    }
}

/// One inflate step of member `m` into `out[*olen..]`; returns bytes produced (0 once the
/// member is finished and its trailer verified).
pub(super) fn gz_step<R: Read>(
    raw: &mut RawInput<R>,
    m: &mut GzMember,
    out: &mut Vec<u8>,
    olen: &mut usize,
) -> Result<usize, WarcError> {
    if m.finished {
        return Ok(0);
    }
    if out.len() - *olen < OUT_BUF / 4 {
        let n = out.len() + OUT_BUF;
        out.resize(n, 0);
    }
    loop {
        if raw.avail().is_empty() {
            raw.fill_min(1).map_err(|e| WarcError::read(m.start, e))?;
        }
        if raw.avail().is_empty() {
            return Err(WarcError::new(WarcErrorKind::TruncatedGzip, m.start, ""));
        }
        let (in0, out0) = (m.inflate.total_in(), m.inflate.total_out());
        let status = match m.inflate.decompress(raw.avail(), &mut out[*olen..], FlushDecompress::None) {
            Ok(s) => s,
            Err(e) => return Err(inflate_error(raw, m, &e)),
        };
        let consumed = (m.inflate.total_in() - in0) as usize;
        let produced = (m.inflate.total_out() - out0) as usize;
        raw.consume(consumed);
        m.crc.update(&out[*olen..*olen + produced]);
        *olen += produced;
        if status == Status::StreamEnd {
            m.finished = true;
            let have = raw.fill_min(8).map_err(|e| WarcError::read(m.start, e))?;
            if have < 8 {
                return Err(WarcError::new(WarcErrorKind::TruncatedGzip, m.start, "in trailer"));
            }
            let t = raw.avail();
            let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
            let size = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
            raw.consume(8);
            if crc != m.crc.sum() || size != m.crc.amount() {
                return Err(WarcError::new(WarcErrorKind::CorruptGzip, m.start, "incorrect data check"));
            }
            return Ok(produced);
        }
        if produced > 0 {
            return Ok(produced);
        }
        if consumed == 0 {
            // Input and output space available but no progress: the stream is stuck.
            return Err(WarcError::new(WarcErrorKind::Inflate, m.start, "inflate stalled"));
        }
    }
}

/// The error for member `m`'s deflate data failing, with zlib's reason.
///
/// zlib-rs 0.6.8 loses the reason when the error is found on its fast path (the usual one):
/// it records "invalid distance too far back" (say), then its state loop passes through
/// its `Bad` state, which overwrites that with "repeated call with bad state" (zlib's own
/// `BAD` state sets no message). So the member's deflate data, if still buffered, is
/// decoded again with an output window too small for the fast path, which keeps the
/// reason; failing that, the message says only what is known.
fn inflate_error<R: Read>(raw: &RawInput<R>, m: &GzMember, e: &flate2::DecompressError) -> WarcError {
    const UNHELPFUL: &str = "repeated call with bad state";
    let first = e.to_string();
    let reason = if first.contains(UNHELPFUL) {
        raw.buffered_from(m.data_start).and_then(inflate_reason).unwrap_or_else(|| {
            "invalid deflate data (the decoder did not say which check failed)".to_string()
        })
    } else {
        first.strip_prefix("deflate decompression error: ").unwrap_or(&first).to_string()
    };
    WarcError::new(
        WarcErrorKind::Inflate,
        m.start,
        format!(
            "{reason} (after {} compressed bytes of the member's deflate data, {} decompressed)",
            m.inflate.total_in(),
            m.inflate.total_out()
        ),
    )
}

/// Decode `data` (raw deflate) with a 256-byte output window, below zlib-rs's fast-path
/// minimum, and return the decoder's message for the first error; None if it decodes, stalls,
/// or has given more than 64 MiB before failing.
fn inflate_reason(data: &[u8]) -> Option<String> {
    let mut d = Decompress::new(false);
    let mut out = [0u8; 256];
    let (mut pos, mut budget) = (0usize, 64u64 << 20);
    loop {
        let (in0, out0) = (d.total_in(), d.total_out());
        let r = d.decompress(data.get(pos..)?, &mut out, FlushDecompress::None);
        let (used, made) = ((d.total_in() - in0) as usize, d.total_out() - out0);
        match r {
            Err(e) => {
                let text = e.to_string();
                return Some(text.strip_prefix("deflate decompression error: ").unwrap_or(&text).to_string());
            }
            Ok(Status::StreamEnd) => return None,
            Ok(_) => {}
        }
        pos += used;
        budget = budget.checked_sub(made)?;
        if used == 0 && made == 0 {
            return None;
        }
    }
}

/// Parse a gzip member header at the current raw position (magic already checked).
pub(super) fn gz_header<R: Read>(raw: &mut RawInput<R>, start: u64) -> Result<(), WarcError> {
    let trunc = || WarcError::new(WarcErrorKind::TruncatedGzip, start, "in header");
    let ioe = |e| WarcError::read(start, e);
    if raw.fill_min(10).map_err(ioe)? < 10 {
        return Err(trunc());
    }
    let flags = raw.avail()[3];
    raw.consume(10);
    if flags & 0xe0 != 0 {
        return Err(WarcError::new(WarcErrorKind::Inflate, start, "reserved gzip flags set"));
    }
    if flags & 0x04 != 0 {
        // FEXTRA (e.g. the "sl" subfield some writers add).
        if raw.fill_min(2).map_err(ioe)? < 2 {
            return Err(trunc());
        }
        let a = raw.avail();
        let mut xlen = u16::from_le_bytes([a[0], a[1]]) as usize;
        raw.consume(2);
        while xlen > 0 {
            let n = raw.fill_min(1).map_err(ioe)?;
            if n == 0 {
                return Err(trunc());
            }
            let k = n.min(xlen);
            raw.consume(k);
            xlen -= k;
        }
    }
    for bit in [0x08u8, 0x10] {
        // FNAME, FCOMMENT: zero-terminated.
        if flags & bit != 0 {
            loop {
                if raw.fill_min(1).map_err(ioe)? == 0 {
                    return Err(trunc());
                }
                let a = raw.avail();
                if let Some(i) = a.iter().position(|&b| b == 0) {
                    raw.consume(i + 1);
                    break;
                }
                let n = a.len();
                raw.consume(n);
            }
        }
    }
    if flags & 0x02 != 0 {
        if raw.fill_min(2).map_err(ioe)? < 2 {
            return Err(trunc());
        }
        raw.consume(2);
    }
    Ok(())
}
