//! Scheduling CPU per page against the number of queued hosts, without a network (issue 37,
//! item 1). A benchmark, not a test: it prints a table.
//!
//! `cargo run --release --example sched_scale [-- --hosts 10000,100000,1000000 --pages 20000]`
//!
//! A synthetic frontier of N hosts, 3 URLs each, is crawled on a virtual clock (1 ms ticks;
//! every fetch takes 50 ms; 1 s between requests to a host; 256 requests in flight), with
//! the focused crawl's ranker (`FocusState`: one host in 50 copies, half the others show
//! text without labeled chunks) and without one (breadth first). Only the scheduler's work is
//! timed (wall clock, one thread, no waits): ranking, picking the hosts to start, the pops'
//! bookkeeping and the politeness updates. Two schedulers:
//!
//! - `before`: the scheduler as it was until issue 37, reproduced step for step: at every
//!   tick with a finished fetch, every queued host's name copied, ranked and sorted
//!   (`crawler::crawl::rank_hosts`), then a walk over the ranked hosts checking each one's
//!   politeness state until the in-flight limit (with a ranker: the best 64 eligible).
//! - `after`: [`HostQueue`], the scheduler's queue since: only the hosts whose best URL or
//!   statistics changed are ranked again, a pass looks only at the hosts it starts.
//!
//! The store is a map of vectors here: both schedulers read it the same way, so the store's
//! own costs (and `before`'s walk over the store every 5 s) are left out.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crawler::crawl::hostq::{FocusRule, HostQueue, HostStatus, PickRule};
use crawler::crawl::{rank_hosts, HostRanker};
use crawler::politeness::{HostState, Outcome, PolitenessConfig};
use ditto::pipeline::focus::{score_priority, FocusState, TitleIndex};

const FETCH: Duration = Duration::from_millis(50);
const TICK: Duration = Duration::from_millis(1);
const MAX_IN_FLIGHT: usize = 256;
const URLS_PER_HOST: usize = 3;
const FOCUS_HOSTS: usize = 64;
/// `before` stops early once its scheduling took this long (its cost grows with the hosts).
const BEFORE_CPU_CAP: Duration = Duration::from_secs(20);

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The synthetic frontier: each host's queued priorities, best last.
struct Frontier {
    names: Vec<String>,
    queues: Vec<Vec<u32>>,
}

impl Frontier {
    fn new(hosts: usize) -> Frontier {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let names = (0..hosts).map(|i| format!("test,h{i:07},")).collect();
        let queues = (0..hosts)
            .map(|_| {
                let mut q: Vec<u32> = (0..URLS_PER_HOST)
                    .map(|d| score_priority((rng.next() % 100) as f64 / 400.0, 1 + d as u32))
                    .collect();
                q.sort_unstable();
                q
            })
            .collect();
        Frontier { names, queues }
    }
}

/// What a fetched page of host `i` shows the ranker: copiers carry labeled chunks.
fn observe(ranker: &FocusState, name: &str, i: usize) {
    match i % 50 {
        0 => ranker.observe(name, 10, 5),
        x if x % 2 == 0 => ranker.observe(name, 10, 0),
        _ => ranker.observe(name, 0, 0),
    }
}

struct Run {
    pages: u64,
    /// Loading the hosts into the scheduler at the start (`after` only; once per crawl).
    load: Duration,
    sched: Duration,
}

/// The scheduler before issue 37.
fn before(hosts: usize, pages: u64, ranker: Option<&FocusState>) -> Run {
    let mut f = Frontier::new(hosts);
    let cfg = PolitenessConfig::default();
    let t0 = Instant::now();
    let mut states: HashMap<String, HostState> = HashMap::new();
    let mut best: HashMap<String, u32> =
        f.names.iter().zip(&f.queues).map(|(n, q)| (n.clone(), *q.last().unwrap_or(&0))).collect();
    let ids: HashMap<String, usize> = f.names.iter().enumerate().map(|(i, n)| (n.clone(), i)).collect();
    let mut in_flight: Vec<(Instant, usize)> = Vec::new();
    let (mut started, mut sched, mut now) = (0u64, Duration::ZERO, t0);
    let (mut last_step, mut last_refresh, mut next_due) = (t0, t0, None);
    let mut queued = Vec::new();
    let mut first = true;
    let dyn_ranker = ranker.map(|r| r as &dyn HostRanker);
    while started < pages && sched < BEFORE_CPU_CAP && !(best.is_empty() && in_flight.is_empty()) {
        now += TICK;
        let finished: Vec<usize> = in_flight.iter().filter(|(end, _)| *end <= now).map(|(_, i)| *i).collect();
        in_flight.retain(|(end, _)| *end > now);
        if let Some(r) = ranker {
            for &i in &finished {
                observe(r, &f.names[i], i);
            }
        }
        // The loop wakes for a finished fetch, a host due, or after 100 ms.
        if !first
            && finished.is_empty()
            && next_due.is_none_or(|d| d > now)
            && now - last_step < Duration::from_millis(100)
        {
            continue;
        }
        first = false;
        last_step = now;
        let clock = Instant::now();
        for &i in &finished {
            if let Some(st) = states.get_mut(&f.names[i]) {
                st.on_finish(now, Outcome::Ok { elapsed: FETCH }, &cfg);
            }
        }
        // refresh_queue (after a finished fetch, else every 200 ms): every host copied,
        // ranked and sorted.
        if queued.is_empty() || !finished.is_empty() || now - last_refresh >= Duration::from_millis(200) {
            queued = rank_hosts(best.iter().map(|(h, p)| (h.clone(), *p)).collect(), dyn_ranker);
            last_refresh = now;
        }
        // start_due_hosts: a walk, best first.
        let mut eligible = 0;
        next_due = None;
        for h in &queued {
            if in_flight.len() >= MAX_IN_FLIGHT || started >= pages {
                break;
            }
            if ranker.is_some() {
                if eligible >= FOCUS_HOSTS {
                    break;
                }
                eligible += 1;
            }
            let st = states.entry(h.host.clone()).or_insert_with(|| HostState::new(now));
            if !st.is_due(now, &cfg) {
                if st.in_flight == 0 {
                    next_due = Some(next_due.map_or(st.due_at(), |d: Instant| d.min(st.due_at())));
                }
                continue;
            }
            let i = ids[&h.host];
            if f.queues[i].is_empty() {
                continue; // taken since the last ranking: the old pop found nothing
            }
            st.on_start(now, &cfg);
            f.queues[i].pop();
            match f.queues[i].last() {
                Some(p) => best.insert(h.host.clone(), *p),
                None => best.remove(&h.host),
            };
            in_flight.push((now + FETCH, i));
            started += 1;
        }
        sched += clock.elapsed();
    }
    Run { pages: started, load: Duration::ZERO, sched }
}

/// The scheduler since issue 37: the [`HostQueue`].
fn after(hosts: usize, pages: u64, ranker: Option<&FocusState>) -> Run {
    let mut f = Frontier::new(hosts);
    let cfg = PolitenessConfig::default();
    let t0 = Instant::now();
    let mut states: Vec<Option<HostState>> = (0..hosts).map(|_| None).collect();
    let mut q = HostQueue::new();
    let mut in_flight: Vec<(Instant, usize)> = Vec::new();
    let rank = |name: &str, p: u32| ranker.map_or(p as f64, |r| r.rank(name, p));
    let clock = Instant::now();
    let mut by_id = HashMap::new();
    for (i, name) in f.names.iter().enumerate() {
        let id = q.intern(name, t0);
        by_id.insert(id, i);
        let p = f.queues[i].last().copied();
        q.set_best(id, p, p.map_or(0.0, |p| rank(name, p)), t0);
    }
    let load = clock.elapsed();
    let mut sched = Duration::ZERO;
    let focus = ranker.map(|_| FocusRule {
        focus_hosts: FOCUS_HOSTS,
        min_hosts: crawler::crawl::FOCUS_MIN_HOSTS,
        rank_span: 0.0,
        spare: 0,
    });
    let (mut started, mut now, mut last_step) = (0u64, t0, t0);
    while started < pages && !(q.queued() == 0 && in_flight.is_empty()) {
        now += TICK;
        let finished: Vec<usize> = in_flight.iter().filter(|(end, _)| *end <= now).map(|(_, i)| *i).collect();
        in_flight.retain(|(end, _)| *end > now);
        if let Some(r) = ranker {
            for &i in &finished {
                observe(r, &f.names[i], i);
            }
        }
        // The loop wakes for a finished fetch, a timer, or after 100 ms.
        if started > 0
            && finished.is_empty()
            && q.next_timer().is_none_or(|d| d > now)
            && now - last_step < Duration::from_millis(100)
        {
            continue;
        }
        last_step = now;
        let clock = Instant::now();
        for &i in &finished {
            if let Some(st) = states[i].as_mut() {
                st.on_finish(now, Outcome::Ok { elapsed: FETCH }, &cfg);
                if let Some(id) = q.id(&f.names[i]) {
                    q.set_status(id, HostStatus::DueAt(st.due_at()), now);
                }
            }
        }
        if let Some(r) = ranker {
            for host in r.take_changed() {
                if let Some(id) = q.id(&host) {
                    if let Some(p) = q.best(id) {
                        q.set_best(id, Some(p), r.rank(&host, p), now);
                    }
                }
            }
        }
        for id in q.expired(now) {
            let i = by_id[&id];
            if let Some(st) = &states[i] {
                q.set_status(id, HostStatus::DueAt(st.due_at()), now);
            }
        }
        let room = (MAX_IN_FLIGHT - in_flight.len()).min((pages - started) as usize);
        for p in q.pick(PickRule { room, focus }) {
            let i = by_id[&p.id];
            let st = states[i].get_or_insert_with(|| HostState::new(now));
            st.on_start(now, &cfg);
            f.queues[i].pop();
            let next = f.queues[i].last().copied();
            q.set_best(p.id, next, next.map_or(0.0, |n| rank(&f.names[i], n)), now);
            q.set_status(p.id, HostStatus::Busy, now);
            in_flight.push((now + FETCH, i));
            started += 1;
        }
        sched += clock.elapsed();
    }
    Run { pages: started, load, sched }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let sizes: Vec<usize> = arg("--hosts")
        .unwrap_or_else(|| "10000,100000,1000000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let pages: u64 = arg("--pages").and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let only = arg("--only");
    println!("scheduler  focus      hosts    pages   load_ms  sched_ms  sched_us_per_page");
    for &hosts in &sizes {
        for focused in [true, false] {
            for which in ["before", "after"] {
                if only.as_deref().is_some_and(|o| o != which) {
                    continue;
                }
                let ranker = focused.then(|| FocusState::new(TitleIndex::default()));
                let run = match which {
                    "before" => before(hosts, pages, ranker.as_ref()),
                    _ => after(hosts, pages, ranker.as_ref()),
                };
                println!(
                    "{which:<9}  {:<7}  {hosts:>9}  {:>7}  {:>8.1}  {:>8.1}  {:>8.2}",
                    if focused { "labeled" } else { "bfs" },
                    run.pages,
                    run.load.as_secs_f64() * 1e3,
                    run.sched.as_secs_f64() * 1e3,
                    run.sched.as_secs_f64() * 1e6 / run.pages.max(1) as f64
                );
            }
        }
    }
}
