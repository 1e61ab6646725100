//! A fuzz harness for ditto's input parsers that runs on stable Rust.
//!
//! cargo-fuzz needs nightly and libFuzzer; this harness needs neither. Each [`Target`] takes
//! arbitrary bytes, seeds come from `../shared/data` ([`seeds`]), and [`run`] mutates them
//! with a deterministic mutator ([`Mutator`]: bit flips, interesting bytes, deletions,
//! duplications, insertions, splices of two inputs, truncation), runs every input under
//! `catch_unwind` and times it. There is no coverage feedback; a mutant joins the corpus when
//! the target reports a result *signature* it has not seen (counts of records, errors,
//! blocks, … folded into a u64), a cheap proxy that keeps inputs reaching new outcomes.
//! Inputs are capped per target ([`Target::max_len`], libFuzzer's `-max_len`; `--max-len`
//! overrides it): seeds are cut to it and no mutation grows past it. Mutants are made from
//! the shorter of two random corpus entries, and a shorter input reaching a signature already
//! held replaces the holder, so the corpus drifts to small inputs; one input buffer is reused.
//!
//! What counts: a **crash** is a panic; a **hang** an input over the per-input time limit;
//! **over memory** a run whose peak RSS (`VmHWM`) passes the cap. Each is saved under the
//! artifacts folder with the target's name. A watchdog thread aborts the process (after
//! saving the input) if one input runs past ten times the limit, so a real infinite loop is
//! reported too. `scripts/fuzz.sh` runs every target for a set time; `fuzz/tests/brief.rs`
//! runs each for a few seconds (CI).

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub mod seeds;
pub mod targets;

/// One fuzz target: bytes in, a signature of what the code under test made of them out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `crawler::warc::WarcReader` over the bytes, every record converted to a page.
    Warc,
    /// `detector::clean` as HTML (links on), and as sniffed.
    Html,
    /// `crawler::robots::Robots::parse`, then queries.
    Robots,
    /// `crawler::urls` canonicalization, SURT, resolution against a base.
    Url,
    /// `labelsets::LabelSet::open` of the bytes as a `.dls` file, then lookups and `verify`.
    Labelset,
    /// The store's record decoding: page records, frontier entries, stored text.
    Store,
}

impl Target {
    pub const ALL: [Target; 6] =
        [Target::Warc, Target::Html, Target::Robots, Target::Url, Target::Labelset, Target::Store];

    pub fn name(self) -> &'static str {
        match self {
            Target::Warc => "warc",
            Target::Html => "html",
            Target::Robots => "robots",
            Target::Url => "url",
            Target::Labelset => "labelset",
            Target::Store => "store",
        }
    }

    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Run the code under test on `data`; the signature of its result.
    pub fn run(self, data: &[u8], scratch: &Path) -> u64 {
        match self {
            Target::Warc => targets::warc(data),
            Target::Html => targets::html(data),
            Target::Robots => targets::robots(data),
            Target::Url => targets::url(data),
            Target::Labelset => targets::labelset(data, scratch),
            Target::Store => targets::store(data),
        }
    }

    /// Largest input the harness runs for this target by default (libFuzzer's `-max_len`):
    /// seeds are cut to it and mutants never grow past it. Big enough for every structure
    /// the parser has (several WARC records, gzip members, a page with its head, scripts and
    /// deep nesting, the whole seed label set), small enough that a run spends its time on
    /// many inputs rather than on a few huge ones; size-driven behaviour (caps, bombs, the
    /// quadratic attribute case) has its own tests at full size.
    pub fn max_len(self) -> usize {
        match self {
            Target::Warc => 64 << 10,
            Target::Html => 16 << 10,
            Target::Labelset => 256 << 10,
            Target::Robots => 8 << 10,
            Target::Url => 4 << 10,
            Target::Store => 16 << 10,
        }
    }
}

/// A small deterministic PRNG (xorshift64*): the same seed gives the same run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform-ish in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Bytes that often reach edge cases in parsers.
const INTERESTING: [u8; 16] =
    [0, 0xff, 0x7f, 0x80, b'\r', b'\n', b'<', b'>', b'"', b'\'', b'=', b'/', b':', b'%', b'&', 0x1b];

/// Tokens worth inserting whole (markup, WARC and robots.txt syntax).
const TOKENS: [&[u8]; 18] = [
    b"WARC/1.0\r\n",
    b"Content-Length: ",
    b"\r\n\r\n",
    b"\x1f\x8b\x08",
    b"<!--",
    b"-->",
    b"<script>",
    b"</script>",
    b"<a href=\"",
    b" x=1",
    b"<plaintext>",
    b"User-agent: *\n",
    b"Disallow: /",
    b"Allow: /*$",
    b"%00",
    b"http://[::1]/",
    b"../",
    b"\xef\xbf\xbd",
];

/// The mutator: one to four stacked edits of a corpus input, sometimes spliced with another.
pub struct Mutator {
    pub rng: Rng,
}

impl Mutator {
    pub fn mutate(&mut self, base: &[u8], other: &[u8], max_len: usize) -> Vec<u8> {
        let mut v = Vec::new();
        self.mutate_into(&mut v, base, other, max_len);
        v
    }

    /// [`Mutator::mutate`] into `v` (cleared first), so a run reuses one buffer; no edit
    /// grows `v` past `max_len`.
    pub fn mutate_into(&mut self, v: &mut Vec<u8>, base: &[u8], other: &[u8], max_len: usize) {
        v.clear();
        v.extend_from_slice(&base[..base.len().min(max_len)]);
        let edits = 1 + self.rng.below(4);
        for _ in 0..edits {
            self.edit(v, other, max_len);
        }
        v.truncate(max_len);
    }

    fn edit(&mut self, v: &mut Vec<u8>, other: &[u8], max_len: usize) {
        let room = max_len.saturating_sub(v.len());
        let r = &mut self.rng;
        let len = v.len();
        match r.below(9) {
            0 if len > 0 => {
                let i = r.below(len);
                v[i] ^= 1 << r.below(8);
            }
            1 if len > 0 => {
                let i = r.below(len);
                v[i] = INTERESTING[r.below(INTERESTING.len())];
            }
            2 if len > 0 => {
                let i = r.below(len);
                let n = 1 + r.below((len - i).min(64));
                v.drain(i..i + n);
            }
            3 if len > 0 => {
                // Duplicate a stretch (repetition is where quadratic code shows).
                let i = r.below(len);
                let n = 1 + r.below((len - i).min(256));
                let piece = v[i..i + n].to_vec();
                let most = if r.below(8) == 0 { 2000 } else { 8 };
                let times = (1 + r.below(most)).min(room / n);
                let at = r.below(len + 1);
                let mut ins = Vec::with_capacity(n * times);
                for _ in 0..times {
                    ins.extend_from_slice(&piece);
                }
                v.splice(at..at, ins);
            }
            4 => {
                let at = r.below(len + 1);
                let t = TOKENS[r.below(TOKENS.len())];
                v.splice(at..at, t.iter().copied());
            }
            5 => {
                let at = r.below(len + 1);
                let n = 1 + r.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| r.next_u64() as u8).collect();
                v.splice(at..at, bytes);
            }
            6 if !other.is_empty() => {
                // Splice: our head, the other input's tail.
                let cut = r.below(len + 1);
                let from = r.below(other.len());
                v.truncate(cut);
                let end = other.len().min(from + max_len.saturating_sub(cut));
                v.extend_from_slice(&other[from..end]);
            }
            7 if len > 0 => v.truncate(r.below(len)),
            _ if len > 0 => {
                // Overwrite 1–8 bytes with a length-like number.
                let i = r.below(len);
                let s = [0u64, 1, 7, 255, 65535, 1 << 31, u64::MAX][r.below(7)].to_string();
                for (k, b) in s.bytes().enumerate() {
                    if let Some(x) = v.get_mut(i + k) {
                        *x = b;
                    }
                }
            }
            _ => v.push(r.next_u64() as u8),
        }
    }
}

/// Limits and output of a run.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Stop after this long…
    pub duration: Duration,
    /// …or this many executions, whichever comes first.
    pub max_execs: u64,
    /// An input running longer than this is a hang.
    pub per_input: Duration,
    /// Peak RSS (VmHWM) above this, in bytes, is a failure.
    pub rss_cap: u64,
    pub seed: u64,
    /// Crashes, hangs and memory cases are written here, under the target's name.
    pub artifacts: PathBuf,
    /// Scratch folder (label-set inputs are written to a file there).
    pub scratch: PathBuf,
    /// Keep at most this many inputs in the corpus (seeds included).
    pub max_corpus: usize,
    /// Largest input run (seeds cut to it, mutants kept under it); 0: the target's default,
    /// [`Target::max_len`].
    pub max_len: usize,
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub target: &'static str,
    pub execs: u64,
    pub crashes: u64,
    pub hangs: u64,
    pub over_memory: u64,
    pub seeds: usize,
    pub corpus: usize,
    /// Bytes in the corpus at the end.
    pub corpus_bytes: u64,
    /// Corpus entries replaced by a shorter input with the same signature.
    pub shrunk: u64,
    /// The input length limit the run used.
    pub max_len: usize,
    /// Bytes of all inputs run (mean input length = this / execs).
    pub bytes_run: u64,
    pub signatures: usize,
    pub seconds: f64,
    /// Slowest input, in seconds.
    pub slowest: f64,
    /// Peak RSS of the process at the end, bytes.
    pub peak_rss: u64,
    /// Files written for crashes, hangs and memory cases.
    pub saved: Vec<PathBuf>,
}

impl Report {
    pub fn line(&self) -> String {
        format!(
            "{:<9} execs {:>9}  {:>7.0}/s  crashes {}  hangs {}  over-memory {}  seeds {}  corpus {} ({} KB, {} shrunk)  signatures {}  max-len {}  mean input {} B  slowest {:.3}s  peak RSS {} MB  ({:.0} s)",
            self.target,
            self.execs,
            self.execs as f64 / self.seconds.max(1e-9),
            self.crashes,
            self.hangs,
            self.over_memory,
            self.seeds,
            self.corpus,
            self.corpus_bytes >> 10,
            self.shrunk,
            self.signatures,
            self.max_len,
            self.bytes_run / self.execs.max(1),
            self.slowest,
            self.peak_rss >> 20,
            self.seconds
        )
    }
}

/// Peak resident set size of this process (`VmHWM`), bytes; 0 where unknown.
pub fn peak_rss() -> u64 {
    proc_status_kb("VmHWM:") * 1024
}

fn proc_status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn save(dir: &Path, kind: &str, data: &[u8]) -> PathBuf {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut h);
    let path = dir.join(format!("{kind}-{:016x}", h.finish()));
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(&path, data);
    path
}

/// Fuzz `target` from `seeds` under `s`.
pub fn run(target: Target, seeds: Vec<Vec<u8>>, s: &Settings) -> Report {
    let artifacts = s.artifacts.join(target.name());
    let _ = std::fs::create_dir_all(&s.scratch);
    let max_len = if s.max_len == 0 { target.max_len() } else { s.max_len };
    // Seeds cut to the input limit; cutting can make two the same.
    let mut seeds: Vec<Vec<u8>> = seeds
        .into_iter()
        .map(|mut v| {
            v.truncate(max_len);
            v
        })
        .collect();
    seeds.sort();
    seeds.dedup();
    let mut report = Report { target: target.name(), seeds: seeds.len(), max_len, ..Report::default() };
    let mut corpus: Vec<Vec<u8>> = if seeds.is_empty() { vec![Vec::new()] } else { seeds };
    let n_seeds = corpus.len();
    let mut seen: HashSet<u64> = HashSet::new();
    // The corpus entry (past the seeds) that first reached each signature; a shorter input
    // with the same signature takes its place, so the corpus drifts to small inputs.
    let mut holder: HashMap<u64, usize> = HashMap::new();
    let mut m = Mutator { rng: Rng::new(s.seed ^ (target as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)) };

    // The watchdog: the current input and when it started; aborts past 10× the limit.
    let current: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    let started_ms = Arc::new(AtomicU64::new(u64::MAX));
    let done = Arc::new(AtomicBool::new(false));
    let epoch = Instant::now();
    let watchdog = {
        let (current, started_ms, done) = (current.clone(), started_ms.clone(), done.clone());
        let (limit, dir) = (s.per_input * 10, artifacts.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let st = started_ms.load(Ordering::Relaxed);
                if st != u64::MAX && epoch.elapsed().as_millis() as u64 > st + limit.as_millis() as u64 {
                    let data = current.lock().map(|d| d.clone()).unwrap_or_default();
                    let p = save(&dir, "hang", &data);
                    eprintln!("fuzz: an input ran past {limit:?}; saved to {}; aborting", p.display());
                    let _ = std::io::stderr().flush();
                    std::process::abort();
                }
            }
        })
    };

    // Panics are expected to be caught and counted; keep their messages short.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        eprintln!("fuzz: panic: {info}");
    }));

    let start = Instant::now();
    let mut input: Vec<u8> = Vec::with_capacity(max_len);
    while report.execs < s.max_execs && start.elapsed() < s.duration {
        // Seeds run as they are first, then mutants of the shorter of two picks.
        let seed_pass = (report.execs as usize) < n_seeds;
        if seed_pass {
            input.clear();
            input.extend_from_slice(&corpus[report.execs as usize]);
        } else {
            let (a, b) = (m.rng.below(corpus.len()), m.rng.below(corpus.len()));
            let base = if corpus[a].len() <= corpus[b].len() { a } else { b };
            let other = m.rng.below(corpus.len());
            m.mutate_into(&mut input, &corpus[base], &corpus[other], max_len);
        }
        if let Ok(mut c) = current.lock() {
            c.clone_from(&input);
        }
        let t = Instant::now();
        started_ms.store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
        let result = catch_unwind(AssertUnwindSafe(|| target.run(&input, &s.scratch)));
        started_ms.store(u64::MAX, Ordering::Relaxed);
        let took = t.elapsed();
        report.execs += 1;
        report.bytes_run += input.len() as u64;
        report.slowest = report.slowest.max(took.as_secs_f64());
        match result {
            Err(_) => {
                report.crashes += 1;
                report.saved.push(save(&artifacts, "crash", &input));
            }
            Ok(sig) => {
                if took > s.per_input {
                    report.hangs += 1;
                    report.saved.push(save(&artifacts, "slow", &input));
                }
                if seed_pass {
                    seen.insert(sig);
                } else if seen.insert(sig) {
                    if corpus.len() < s.max_corpus {
                        holder.insert(sig, corpus.len());
                        corpus.push(input.clone());
                    }
                } else if let Some(&k) = holder.get(&sig) {
                    if input.len() < corpus[k].len() {
                        corpus[k].clone_from(&input);
                        report.shrunk += 1;
                    }
                }
            }
        }
        if report.execs.is_multiple_of(256) && peak_rss() > s.rss_cap {
            report.over_memory += 1;
            report.saved.push(save(
                &artifacts,
                "memory",
                &current.lock().map(|d| d.clone()).unwrap_or_default(),
            ));
            break;
        }
    }
    std::panic::set_hook(default_hook);
    done.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    report.corpus = corpus.len();
    report.corpus_bytes = corpus.iter().map(|c| c.len() as u64).sum();
    report.signatures = seen.len();
    report.seconds = start.elapsed().as_secs_f64();
    report.peak_rss = peak_rss();
    report
}
