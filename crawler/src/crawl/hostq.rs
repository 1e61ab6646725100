//! The scheduler's queue of hosts: which hosts have queued URLs, in rank order, and which of
//! them may start a request now, at a cost per change rather than per host.
//!
//! Host names are interned to [`HostId`]s (recycled once a host is evicted). A host with
//! queued URLs sits in `by_rank` (ordered by rank, then its best URL's priority, then, when
//! asked ([`HostQueue::contacted_first`]), hosts this run has sent a request to before the
//! others, then name, so runs are repeatable) unless it rests (parked, robots.txt
//! unavailable) or is drained (nothing may be fetched: its URLs are finished without
//! requests); those of its hosts that may start a request now sit in `ready` too, in the same
//! order. A host that must wait is in a heap of timers until its due time (stale timers are
//! skipped by generation). Changing one host's rank, best priority or politeness status
//! moves one key; nothing is copied or sorted per pass, and a pass looks at the hosts it
//! starts (plus, with a ranker, the few best ones that keep their places:
//! [`HostQueue::pick`]).
//!
//! Hosts may share a [`GateId`] (a server: the hosts on one IP address, issue 37 item 4). A
//! host of a gate that may start a request waits in its gate's own set, and the gate lets
//! one of them (its best) into `ready` at a time, when the gate's state, which the caller sets
//! ([`GateState`]), allows a request: so 500 hosts on one address cost the same per request
//! as one host, never a walk over the address's hosts.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::ops::Bound;
use std::sync::Arc;
use std::time::Instant;

/// A host's interned id in one [`HostQueue`].
pub type HostId = u32;

/// Whether and when a host may start a request, as its politeness state and robots.txt say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostStatus {
    /// May start a request at this instant (now, or later: a timer moves it to `ready`).
    DueAt(Instant),
    /// At its limit of requests in flight, or its robots.txt is being fetched: it keeps its
    /// place in the ranking and waits for a fetch to finish.
    Busy,
    /// Resting until this instant (parked after failures, robots.txt unavailable): out of
    /// the ranking until then, and such hosts alone do not keep a crawl going.
    RestingUntil(Instant),
    /// Nothing may be fetched from it (address refused, host retired): its URLs are finished
    /// without requests, without politeness waits.
    Drain,
}

/// A gate's interned id ([`HostQueue::new_gate`]).
pub type GateId = u32;

/// Whether a gate lets one of its hosts start a request, as the caller last set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateState {
    /// From this instant (now, or later: a timer opens it).
    OpenAt(Instant),
    /// Not until the caller says so (its requests in flight are at their bound).
    Shut,
}

#[derive(Debug)]
struct Gate {
    state: GateState,
    /// Its hosts that may start a request but wait for the gate, best first.
    waiting: BTreeSet<Key>,
    /// The one host let into `ready`, if any.
    let_in: Option<HostId>,
    /// Hosts that belong to it.
    members: usize,
    /// Bumped whenever a timer is set, so that older timers of the gate are skipped.
    gen: u32,
    /// When its live timer fires, if it has one.
    timer_at: Option<Instant>,
    live: bool,
}

/// A rank in a total order (NaN and infinities never come in: see [`HostQueue::set_best`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rank(f64);
impl Eq for Rank {}
impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Rank {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A host's place: best rank first, then best priority, then (with
/// [`HostQueue::contacted_first`]) contacted before not, then name. The name's first bytes
/// are kept in the key, zero-padded (host names hold no NUL, so the order is the names'):
/// most comparisons end there, without reading the name from the heap.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    rank: Reverse<Rank>,
    best: Reverse<u32>,
    not_contacted: bool,
    prefix: [u8; 16],
    name: Arc<str>,
    id: HostId,
}

/// The gate of host `id` in `slots`.
fn s_gate(slots: &[Slot], id: HostId) -> Option<GateId> {
    slots.get(id as usize).and_then(|s| s.gate)
}

fn name_prefix(name: &str) -> [u8; 16] {
    let mut p = [0u8; 16];
    let n = name.len().min(16);
    p[..n].copy_from_slice(&name.as_bytes()[..n]);
    p
}

#[derive(Debug)]
struct Slot {
    name: Arc<str>,
    /// The priority of the host's best queued URL; None: nothing queued.
    best: Option<u32>,
    rank: f64,
    status: HostStatus,
    /// Bumped whenever a timer is set, so that older timers of the host are skipped.
    gen: u32,
    /// A request to it has started in this run (robots.txt or a page): set by
    /// [`HostQueue::set_status`] with [`HostStatus::Busy`], which a host's first request,
    /// its robots.txt fetch, always sets.
    contacted: bool,
    in_rank: bool,
    in_ready: bool,
    in_drain: bool,
    /// The host's gate, if any, and whether it waits in the gate's set.
    gate: Option<GateId>,
    in_wait: bool,
    live: bool,
}

/// A host picked for a pass: its id, rank and position among the ranked hosts (0 = best;
/// for a spare pick, its place among the ready hosts beyond the focus set, counted on from
/// the set's end).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Picked {
    pub id: HostId,
    pub rank: f64,
    pub position: usize,
    /// Picked with spare capacity: beyond the focus set ([`FocusRule::spare`]).
    pub spare: bool,
}

/// How a pass picks hosts ([`HostQueue::pick`]).
#[derive(Debug, Clone, Copy)]
pub struct PickRule {
    /// Most hosts picked (the free request slots).
    pub room: usize,
    /// With a ranker: first the best `focus_hosts` ranked hosts, and beyond the best
    /// `min_hosts` only those ranked at least `rank_span` × the best (the focus set); a host
    /// among them that must wait keeps its place and a slot. Then up to `spare` ready hosts
    /// beyond the set. None: every ready host, best first.
    pub focus: Option<FocusRule>,
}

/// The focused crawl's limits on which hosts may be fetched from ([`PickRule::focus`]).
#[derive(Debug, Clone, Copy)]
pub struct FocusRule {
    pub focus_hosts: usize,
    pub min_hosts: usize,
    pub rank_span: f64,
    /// Most ready hosts beyond the focus set picked in this pass (spare capacity), in rank
    /// order, within the room left once every host of the set that waits has a slot kept for
    /// it (0: the set alone, the focused crawl before issue 37 item 2).
    pub spare: usize,
}

/// The queue of hosts (see the module notes).
#[derive(Debug, Default)]
pub struct HostQueue {
    slots: Vec<Slot>,
    ids: HashMap<Arc<str>, HostId>,
    free: Vec<HostId>,
    by_rank: BTreeSet<Key>,
    ready: BTreeSet<Key>,
    drain: BTreeSet<Key>,
    timers: BinaryHeap<Reverse<(Instant, HostId, u32)>>,
    /// Hosts with queued URLs.
    queued: usize,
    gates: Vec<Gate>,
    free_gates: Vec<GateId>,
    gate_timers: BinaryHeap<Reverse<(Instant, GateId, u32)>>,
    contacted_first: bool,
}

impl HostQueue {
    pub fn new() -> Self {
        HostQueue::default()
    }

    /// Among hosts of equal rank and best priority, those this run has sent a request to
    /// come before the others. A host not contacted costs a robots.txt fetch and a new
    /// connection before its first page, a contacted one the page alone: so a crawl finishes
    /// the hosts it opened before opening more (at 100,000 hosts of 3 pages, a breadth-first
    /// crawl sent 14 % fewer requests for the same pages). For a crawl without a ranker,
    /// whose priority is the link's depth: the order of depths holds.
    pub fn contacted_first(mut self) -> Self {
        self.contacted_first = true;
        self
    }

    /// The id of `name`, interning it (a new host: nothing queued, due `now`).
    pub fn intern(&mut self, name: &str, now: Instant) -> HostId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let name: Arc<str> = Arc::from(name);
        let slot = Slot {
            name: name.clone(),
            best: None,
            rank: 0.0,
            status: HostStatus::DueAt(now),
            gen: 0,
            contacted: false,
            in_rank: false,
            in_ready: false,
            in_drain: false,
            gate: None,
            in_wait: false,
            live: true,
        };
        let id = match self.free.pop() {
            Some(id) => {
                let gen = self.slots[id as usize].gen.wrapping_add(1);
                self.slots[id as usize] = Slot { gen, ..slot };
                id
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as HostId
            }
        };
        self.ids.insert(name, id);
        id
    }

    /// The id of `name`, if interned.
    pub fn id(&self, name: &str) -> Option<HostId> {
        self.ids.get(name).copied()
    }

    /// The name of `id` (empty for an id not live).
    pub fn name(&self, id: HostId) -> &str {
        self.slots.get(id as usize).filter(|s| s.live).map_or("", |s| &s.name)
    }

    /// The priority of the host's best queued URL, as last set.
    pub fn best(&self, id: HostId) -> Option<u32> {
        self.slot(id).and_then(|s| s.best)
    }

    /// The host's politeness status, as last set.
    pub fn status(&self, id: HostId) -> Option<HostStatus> {
        self.slot(id).map(|s| s.status)
    }

    /// Whether the host may start a request now (in the ready set: due, and let in by its
    /// gate if it has one).
    pub fn is_ready(&self, id: HostId) -> bool {
        self.slot(id).is_some_and(|s| s.in_ready)
    }

    /// Hosts interned (queued or not).
    pub fn interned(&self) -> usize {
        self.ids.len()
    }

    /// Hosts with queued URLs.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// True when every host with queued URLs rests (or none has any): nothing can be started
    /// before a rest ends.
    pub fn only_resting(&self) -> bool {
        self.by_rank.is_empty() && self.drain.is_empty()
    }

    fn slot(&self, id: HostId) -> Option<&Slot> {
        self.slots.get(id as usize).filter(|s| s.live)
    }

    fn key(&self, id: HostId) -> Option<Key> {
        let s = self.slot(id)?;
        Some(Key {
            rank: Reverse(Rank(s.rank)),
            best: Reverse(s.best.unwrap_or(0)),
            not_contacted: self.contacted_first && !s.contacted,
            prefix: name_prefix(&s.name),
            name: s.name.clone(),
            id,
        })
    }

    /// Take the host out of every index (its fields may then change).
    fn unindex(&mut self, id: HostId) {
        let Some(key) = self.key(id) else { return };
        let s = &mut self.slots[id as usize];
        if std::mem::take(&mut s.in_rank) {
            self.by_rank.remove(&key);
        }
        if std::mem::take(&mut s.in_ready) {
            self.ready.remove(&key);
        }
        if std::mem::take(&mut s.in_drain) {
            self.drain.remove(&key);
        }
        let gate = s.gate;
        let waited = std::mem::take(&mut s.in_wait);
        if let Some(g) = gate.and_then(|g| self.gates.get_mut(g as usize)) {
            if waited {
                g.waiting.remove(&key);
            }
            if g.let_in == Some(id) {
                g.let_in = None;
            }
        }
    }

    /// Put the host into the indexes its fields call for, and set a timer when it must wait.
    fn index(&mut self, id: HostId, now: Instant) {
        let Some(key) = self.key(id) else { return };
        let s = &mut self.slots[id as usize];
        // A host with nothing queued needs no timer: it is indexed again when it gets URLs.
        let timer = match s.status {
            _ if s.best.is_none() => None,
            HostStatus::DueAt(t) if t > now => Some(t),
            HostStatus::RestingUntil(t) => Some(t.max(now)),
            _ => None,
        };
        if let Some(t) = timer {
            s.gen = s.gen.wrapping_add(1);
            self.timers.push(Reverse((t, id, s.gen)));
        }
        if s.best.is_none() {
            return;
        }
        match s.status {
            HostStatus::Drain => {
                s.in_drain = true;
                self.drain.insert(key);
            }
            HostStatus::RestingUntil(_) => {}
            HostStatus::Busy => {
                s.in_rank = true;
                self.by_rank.insert(key);
            }
            HostStatus::DueAt(t) => {
                s.in_rank = true;
                self.by_rank.insert(key.clone());
                if t <= now {
                    match s.gate {
                        Some(g) => {
                            s.in_wait = true;
                            self.gates[g as usize].waiting.insert(key);
                        }
                        None => {
                            s.in_ready = true;
                            self.ready.insert(key);
                        }
                    }
                }
            }
        }
    }

    /// Let the gate's best waiting host into `ready` if the gate is open and has let none
    /// in; set a timer for when it opens otherwise.
    fn admit(&mut self, g: Option<GateId>, now: Instant) {
        let Some(gi) = g.filter(|g| self.gates.get(*g as usize).is_some_and(|g| g.live)) else { return };
        let let_in = self.gates[gi as usize].let_in;
        if let Some(h) = let_in {
            // A better host than the one let in joined the waiting ones: it goes first (the
            // one let in may sit where a focused pick never looks, while the better one waits).
            let Some(hk) = self.key(h) else { return };
            let gate = &mut self.gates[gi as usize];
            if gate.waiting.first().is_none_or(|w| *w >= hk) {
                return;
            }
            gate.let_in = None;
            self.ready.remove(&hk);
            let s = &mut self.slots[h as usize];
            s.in_ready = false;
            s.in_wait = true;
            self.gates[gi as usize].waiting.insert(hk);
        }
        let gate = &mut self.gates[gi as usize];
        if gate.waiting.is_empty() {
            return;
        }
        match gate.state {
            GateState::OpenAt(t) if t <= now => {
                let Some(key) = gate.waiting.pop_first() else { return };
                gate.let_in = Some(key.id);
                let s = &mut self.slots[key.id as usize];
                s.in_wait = false;
                s.in_ready = true;
                self.ready.insert(key);
            }
            GateState::OpenAt(t) if gate.timer_at != Some(t) => {
                gate.gen = gate.gen.wrapping_add(1);
                gate.timer_at = Some(t);
                self.gate_timers.push(Reverse((t, gi, gate.gen)));
            }
            GateState::OpenAt(_) => {}
            GateState::Shut => {}
        }
    }

    /// A new gate, open now.
    pub fn new_gate(&mut self, now: Instant) -> GateId {
        let gate = Gate {
            state: GateState::OpenAt(now),
            waiting: BTreeSet::new(),
            let_in: None,
            members: 0,
            gen: 0,
            timer_at: None,
            live: true,
        };
        match self.free_gates.pop() {
            Some(g) => {
                let gen = self.gates[g as usize].gen.wrapping_add(1);
                self.gates[g as usize] = Gate { gen, ..gate };
                g
            }
            None => {
                self.gates.push(gate);
                (self.gates.len() - 1) as GateId
            }
        }
    }

    /// Put the host behind `gate` (None: no gate).
    pub fn set_gate(&mut self, id: HostId, gate: Option<GateId>, now: Instant) {
        let Some(s) = self.slot(id) else { return };
        let gate = gate.filter(|g| self.gates.get(*g as usize).is_some_and(|g| g.live));
        let old = s.gate;
        if old == gate {
            return;
        }
        self.unindex(id);
        if let Some(g) = old {
            self.gates[g as usize].members -= 1;
        }
        if let Some(g) = gate {
            self.gates[g as usize].members += 1;
        }
        self.slots[id as usize].gate = gate;
        self.index(id, now);
        self.admit(old, now);
        self.admit(gate, now);
    }

    /// The host's gate, if any.
    pub fn gate(&self, id: HostId) -> Option<GateId> {
        self.slot(id).and_then(|s| s.gate)
    }

    /// Hosts that belong to the gate.
    pub fn gate_members(&self, g: GateId) -> usize {
        self.gates.get(g as usize).filter(|g| g.live).map_or(0, |g| g.members)
    }

    /// The gate's state is now `state`. A host let in that may not start now goes back to
    /// waiting.
    pub fn set_gate_state(&mut self, g: GateId, state: GateState, now: Instant) {
        let Some(gate) = self.gates.get_mut(g as usize).filter(|g| g.live) else { return };
        gate.state = state;
        let open = matches!(state, GateState::OpenAt(t) if t <= now);
        if let (false, Some(h)) = (open, gate.let_in) {
            self.unindex(h);
            self.index(h, now);
        }
        self.admit(Some(g), now);
    }

    /// Forget a gate without members (false if it has some): its id may be reused.
    pub fn drop_gate(&mut self, g: GateId) -> bool {
        match self.gates.get_mut(g as usize) {
            Some(gate) if gate.live && gate.members == 0 => {
                gate.live = false;
                gate.waiting.clear();
                gate.let_in = None;
                self.free_gates.push(g);
                true
            }
            _ => false,
        }
    }

    /// The host's best queued priority is now `best` (None: nothing queued), ranked `rank`
    /// (a rank that is not finite counts as 0).
    pub fn set_best(&mut self, id: HostId, best: Option<u32>, rank: f64, now: Instant) {
        let Some(s) = self.slot(id) else { return };
        let rank = if rank.is_finite() { rank } else { 0.0 };
        if s.best == best && s.rank.to_bits() == rank.to_bits() {
            return;
        }
        let was_queued = s.best.is_some();
        self.unindex(id);
        let s = &mut self.slots[id as usize];
        s.best = best;
        s.rank = rank;
        match (was_queued, best.is_some()) {
            (false, true) => self.queued += 1,
            (true, false) => self.queued -= 1,
            _ => {}
        }
        self.index(id, now);
        self.admit(s_gate(&self.slots, id), now);
    }

    /// The host's politeness status is now `status`.
    pub fn set_status(&mut self, id: HostId, status: HostStatus, now: Instant) {
        let Some(s) = self.slot(id) else { return };
        if s.status == status
            && !matches!(status, HostStatus::DueAt(t) | HostStatus::RestingUntil(t) if t <= now)
        {
            return;
        }
        self.unindex(id);
        let s = &mut self.slots[id as usize];
        s.status = status;
        s.contacted |= status == HostStatus::Busy;
        self.index(id, now);
        self.admit(s_gate(&self.slots, id), now);
    }

    /// The hosts with queued URLs whose timers ran out by `now`, for the caller to set their
    /// status again (a host due now is moved to `ready` here already). Stale timers are
    /// dropped.
    pub fn expired(&mut self, now: Instant) -> Vec<HostId> {
        let mut out = Vec::new();
        while let Some(Reverse((t, id, gen))) = self.timers.peek().copied() {
            if t > now {
                break;
            }
            self.timers.pop();
            let Some(s) = self.slot(id) else { continue };
            if s.gen != gen {
                continue;
            }
            if matches!(s.status, HostStatus::DueAt(_)) && s.best.is_some() && !s.in_ready && !s.in_wait {
                self.unindex(id);
                self.index(id, now);
                self.admit(s_gate(&self.slots, id), now);
            }
            out.push(id);
        }
        while let Some(Reverse((t, g, gen))) = self.gate_timers.peek().copied() {
            if t > now {
                break;
            }
            self.gate_timers.pop();
            if let Some(gate) = self.gates.get_mut(g as usize).filter(|gate| gate.live && gate.gen == gen) {
                gate.timer_at = None;
                self.admit(Some(g), now);
            }
        }
        out
    }

    /// The soonest timer (possibly a stale one: waking early is harmless).
    pub fn next_timer(&self) -> Option<Instant> {
        let host = self.timers.peek().map(|Reverse((t, _, _))| *t);
        let gate = self.gate_timers.peek().map(|Reverse((t, _, _))| *t);
        host.into_iter().chain(gate).min()
    }

    /// The names of the hosts with queued URLs.
    pub fn queued_names(&self) -> Vec<String> {
        self.slots.iter().filter(|s| s.live && s.best.is_some()).map(|s| s.name.to_string()).collect()
    }

    /// Hosts being drained (their URLs finished without requests), up to `n`.
    pub fn draining(&self, n: usize) -> Vec<HostId> {
        self.drain.iter().take(n).map(|k| k.id).collect()
    }

    /// The hosts a pass should try to start, best first (see [`PickRule`]): with a focus
    /// rule, those of the best ranked hosts that are ready, then (spare capacity) the best
    /// ready hosts beyond them; without, the best `room` ready hosts. Costs O(hosts looked
    /// at × log hosts), never a walk over all hosts.
    pub fn pick(&self, rule: PickRule) -> Vec<Picked> {
        let mut out = Vec::new();
        if rule.room == 0 {
            return out;
        }
        match rule.focus {
            None => {
                for k in self.ready.iter().take(rule.room) {
                    out.push(Picked { id: k.id, rank: k.rank.0 .0, position: out.len(), spare: false });
                }
            }
            Some(f) => {
                let best = self.by_rank.first().map_or(0.0, |k| k.rank.0 .0);
                let mut last = None;
                let mut walked = 0;
                for (position, k) in self.by_rank.iter().enumerate() {
                    let rank = k.rank.0 .0;
                    let beyond_span = position >= f.min_hosts && rank < best * f.rank_span;
                    if position >= f.focus_hosts.max(1) || beyond_span || out.len() >= rule.room {
                        break;
                    }
                    (last, walked) = (Some(k), position + 1);
                    if self.slots[k.id as usize].in_ready {
                        out.push(Picked { id: k.id, rank, position, spare: false });
                    }
                }
                // Spare capacity: the slots left once each host of the focus set that waits
                // has one kept for it go to the best ready hosts beyond the set, in rank order.
                let kept = walked - out.len();
                let spare = rule.room.saturating_sub(out.len() + kept).min(f.spare);
                if spare > 0 {
                    let beyond = match last {
                        Some(k) => self.ready.range((Bound::Excluded(k.clone()), Bound::Unbounded)),
                        None => self.ready.range::<Key, _>(..),
                    };
                    for (i, k) in beyond.take(spare).enumerate() {
                        out.push(Picked { id: k.id, rank: k.rank.0 .0, position: walked + i, spare: true });
                    }
                }
            }
        }
        out
    }

    /// Forget a host (nothing queued, nothing in flight, its state dropped by the caller): its
    /// id may be given to another host. False when it still has queued URLs.
    pub fn evict(&mut self, id: HostId) -> bool {
        match self.slot(id) {
            Some(s) if s.best.is_none() => {}
            _ => return false,
        }
        self.unindex(id);
        if let Some(g) = self.slots[id as usize].gate.take() {
            self.gates[g as usize].members -= 1;
            self.admit(Some(g), Instant::now());
        }
        let s = &mut self.slots[id as usize];
        s.live = false;
        s.gen = s.gen.wrapping_add(1);
        let name = s.name.clone();
        self.ids.remove(&name);
        self.slots[id as usize].name = Arc::from("");
        self.free.push(id);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ms(t0: Instant, n: u64) -> Instant {
        t0 + Duration::from_millis(n)
    }

    fn names(q: &HostQueue, p: &[Picked]) -> Vec<String> {
        p.iter().map(|p| q.name(p.id).to_string()).collect()
    }

    #[test]
    fn ready_hosts_come_best_first_and_waiting_ones_join_when_due() {
        let t0 = Instant::now();
        let mut q = HostQueue::new();
        let [a, b, c, d] = ["a", "b", "c", "d"].map(|h| q.intern(h, t0));
        q.set_best(a, Some(5), 5.0, t0);
        q.set_best(b, Some(9), 9.0, t0);
        q.set_best(c, Some(5), 5.0, t0); // ties with a: name decides
        q.set_best(d, Some(7), f64::NAN, t0); // not finite: 0
        let all = PickRule { room: 10, focus: None };
        assert_eq!(names(&q, &q.pick(all)), ["b", "a", "c", "d"]);
        assert_eq!(names(&q, &q.pick(PickRule { room: 2, focus: None })), ["b", "a"]);
        // b starts a fetch (busy), a must wait 100 ms.
        q.set_status(b, HostStatus::Busy, t0);
        q.set_status(a, HostStatus::DueAt(ms(t0, 100)), t0);
        assert_eq!(names(&q, &q.pick(all)), ["c", "d"]);
        assert_eq!(q.next_timer(), Some(ms(t0, 100)));
        assert!(q.expired(ms(t0, 99)).is_empty());
        assert_eq!(q.expired(ms(t0, 100)), [a]);
        assert_eq!(names(&q, &q.pick(all)), ["a", "c", "d"]);
        // A new best priority moves a host; nothing queued takes it out.
        q.set_best(d, Some(7), 10.0, ms(t0, 100));
        q.set_best(c, None, 0.0, ms(t0, 100));
        assert_eq!(names(&q, &q.pick(all)), ["d", "a"]);
        assert_eq!(q.queued(), 3);
        // An old timer of a host set again is stale.
        q.set_status(a, HostStatus::DueAt(ms(t0, 300)), ms(t0, 100));
        q.set_status(a, HostStatus::DueAt(ms(t0, 200)), ms(t0, 100));
        assert_eq!(q.expired(ms(t0, 250)), [a]);
        assert!(q.expired(ms(t0, 400)).is_empty(), "the 300 ms timer is stale");
    }

    #[test]
    fn among_equals_hosts_already_contacted_come_first() {
        let t0 = Instant::now();
        let mut q = HostQueue::new().contacted_first();
        let [a, b, c, z] = ["a", "b", "c", "z"].map(|h| q.intern(h, t0));
        for id in [a, b, c, z] {
            q.set_best(id, Some(5), 5.0, t0);
        }
        let all = PickRule { room: 10, focus: None };
        assert_eq!(names(&q, &q.pick(all)), ["a", "b", "c", "z"]);
        // z and c start a request (robots.txt), then are due again: they go before the
        // hosts never contacted, still by name among themselves.
        for id in [z, c] {
            q.set_status(id, HostStatus::Busy, t0);
            q.set_status(id, HostStatus::DueAt(t0), t0);
        }
        assert_eq!(names(&q, &q.pick(all)), ["c", "z", "a", "b"]);
        // Rank and priority still come first.
        q.set_best(b, Some(6), 5.0, t0);
        assert_eq!(names(&q, &q.pick(all)), ["b", "c", "z", "a"]);
        q.set_best(a, Some(5), 7.0, t0);
        assert_eq!(names(&q, &q.pick(all)), ["a", "b", "c", "z"]);
        // Without contacted_first, name alone breaks the tie.
        let mut q = HostQueue::new();
        let [a, z] = ["a", "z"].map(|h| q.intern(h, t0));
        for id in [a, z] {
            q.set_best(id, Some(5), 5.0, t0);
        }
        q.set_status(z, HostStatus::Busy, t0);
        q.set_status(z, HostStatus::DueAt(t0), t0);
        assert_eq!(names(&q, &q.pick(all)), ["a", "z"]);
    }

    #[test]
    fn ties_go_by_name_past_the_kept_prefix_too() {
        let t0 = Instant::now();
        let mut q = HostQueue::new();
        let hosts = ["com,example,long-name,b,", "com,example,long-name,a,", "ab", "abc", "a"];
        for h in hosts {
            let id = q.intern(h, t0);
            q.set_best(id, Some(3), 3.0, t0);
        }
        let mut sorted = hosts.map(String::from).to_vec();
        sorted.sort();
        assert_eq!(names(&q, &q.pick(PickRule { room: 9, focus: None })), sorted);
    }

    #[test]
    fn resting_and_drained_hosts_leave_the_ranking() {
        let t0 = Instant::now();
        let mut q = HostQueue::new();
        let [a, b] = ["a", "b"].map(|h| q.intern(h, t0));
        q.set_best(a, Some(1), 1.0, t0);
        q.set_best(b, Some(2), 2.0, t0);
        q.set_status(a, HostStatus::RestingUntil(ms(t0, 50)), t0);
        q.set_status(b, HostStatus::Drain, t0);
        assert!(!q.only_resting() && q.draining(9) == [b]);
        assert!(q.pick(PickRule { room: 9, focus: None }).is_empty());
        q.set_best(b, None, 0.0, t0);
        assert!(q.only_resting(), "a rests, b has nothing queued");
        assert_eq!(q.expired(ms(t0, 50)), [a], "the caller sets a's status again");
        q.set_status(a, HostStatus::DueAt(ms(t0, 50)), ms(t0, 50));
        assert_eq!(names(&q, &q.pick(PickRule { room: 9, focus: None })), ["a"]);
        // Eviction frees the id for another host; a host with queued URLs is kept.
        assert!(!q.evict(a));
        assert!(q.evict(b));
        assert_eq!(q.id("b"), None);
        let e = q.intern("e", t0);
        assert_eq!(e, b, "the id is reused");
        assert_eq!(q.best(e), None);
        assert_eq!(q.interned(), 2);
    }

    #[test]
    fn a_gate_lets_in_one_host_at_a_time_best_first() {
        let t0 = Instant::now();
        let mut q = HostQueue::new();
        let all = PickRule { room: 10, focus: None };
        let [a, b, c, x] = ["a", "b", "c", "x"].map(|h| q.intern(h, t0));
        for (id, rank) in [(a, 3.0), (b, 2.0), (c, 1.0), (x, 0.5)] {
            q.set_best(id, Some(1), rank, t0);
        }
        let g = q.new_gate(t0);
        for id in [a, b, c] {
            q.set_gate(id, Some(g), t0);
        }
        assert_eq!(q.gate_members(g), 3);
        // Open: its best host is let in; x has no gate.
        assert_eq!(names(&q, &q.pick(all)), ["a", "x"]);
        // a starts (busy), the gate shuts for 100 ms: nobody of the gate is ready.
        q.set_status(a, HostStatus::Busy, t0);
        q.set_gate_state(g, GateState::OpenAt(ms(t0, 100)), t0);
        assert_eq!(names(&q, &q.pick(all)), ["x"]);
        assert_eq!(q.next_timer(), Some(ms(t0, 100)));
        assert!(!q.only_resting(), "hosts waiting at a gate keep the crawl going");
        // The gate opens on its timer: b (the best waiting) is let in, c still waits.
        assert!(q.expired(ms(t0, 100)).is_empty());
        assert_eq!(names(&q, &q.pick(all)), ["b", "x"]);
        // Shut (its requests in flight at their bound): b goes back to waiting.
        q.set_gate_state(g, GateState::Shut, ms(t0, 100));
        assert_eq!(names(&q, &q.pick(all)), ["x"]);
        // A rank change reorders the waiting hosts.
        q.set_best(c, Some(1), 9.0, ms(t0, 100));
        q.set_gate_state(g, GateState::OpenAt(ms(t0, 100)), ms(t0, 100));
        assert_eq!(names(&q, &q.pick(all)), ["c", "x"]);
        // A better host joining the waiting ones takes the place of the one let in.
        q.set_best(a, Some(1), 20.0, ms(t0, 100));
        q.set_status(a, HostStatus::DueAt(ms(t0, 100)), ms(t0, 100));
        assert_eq!(names(&q, &q.pick(all)), ["a", "x"]);
        q.set_status(a, HostStatus::Busy, ms(t0, 100));
        assert_eq!(names(&q, &q.pick(all)), ["c", "x"]);
        // The host let in leaves (nothing queued): the next one is let in at once.
        q.set_best(c, None, 0.0, ms(t0, 100));
        assert_eq!(names(&q, &q.pick(all)), ["b", "x"]);
        // Out of the gate: b is ready on its own; a gate without members can be dropped.
        assert!(!q.drop_gate(g));
        for id in [a, b, c] {
            q.set_gate(id, None, ms(t0, 100));
        }
        q.set_status(a, HostStatus::DueAt(ms(t0, 100)), ms(t0, 100));
        assert_eq!(names(&q, &q.pick(all)), ["a", "b", "x"]);
        assert_eq!(q.gate_members(g), 0);
        assert!(q.drop_gate(g));
        assert_eq!(q.new_gate(t0), g, "the id is reused");
    }

    #[test]
    fn an_evicted_host_leaves_its_gate() {
        let t0 = Instant::now();
        let mut q = HostQueue::new();
        let [a, b] = ["a", "b"].map(|h| q.intern(h, t0));
        let g = q.new_gate(t0);
        q.set_gate(a, Some(g), t0);
        q.set_gate(b, Some(g), t0);
        q.set_best(a, Some(1), 2.0, t0);
        q.set_best(b, Some(1), 1.0, t0);
        assert_eq!(names(&q, &q.pick(PickRule { room: 9, focus: None })), ["a"]);
        q.set_best(a, None, 0.0, t0);
        assert!(q.evict(a));
        assert_eq!(q.gate_members(g), 1);
        assert_eq!(names(&q, &q.pick(PickRule { room: 9, focus: None })), ["b"]);
    }

    /// Hosts h0…h5, each with one URL due, ranked 1.0, 0.5, 0.2, 0.05, 0.04, 0.03.
    fn six_ranked_hosts(t0: Instant) -> (HostQueue, Vec<HostId>) {
        let mut q = HostQueue::new();
        let ids: Vec<HostId> = (0..6).map(|i| q.intern(&format!("h{i}"), t0)).collect();
        for (&id, rank) in ids.iter().zip([1.0, 0.5, 0.2, 0.05, 0.04, 0.03]) {
            q.set_best(id, Some(1), rank, t0);
        }
        (q, ids)
    }

    #[test]
    fn focus_picks_among_the_best_hosts_and_waiting_ones_keep_their_places() {
        let t0 = Instant::now();
        let (mut q, ids) = six_ranked_hosts(t0);
        let rule = |focus_hosts, min_hosts| PickRule {
            room: 10,
            focus: Some(FocusRule { focus_hosts, min_hosts, rank_span: 0.1, spare: 0 }),
        };
        // Beyond the best 2, only ranks ≥ 0.1 × 1.0.
        assert_eq!(names(&q, &q.pick(rule(64, 2))), ["h0", "h1", "h2"]);
        assert_eq!(names(&q, &q.pick(rule(2, 2))), ["h0", "h1"]);
        // h0 waits: it keeps its place, h3 is not fetched in its stead.
        q.set_status(ids[0], HostStatus::DueAt(ms(t0, 10)), t0);
        let p = q.pick(rule(3, 2));
        assert_eq!(names(&q, &p), ["h1", "h2"]);
        assert_eq!(p.iter().map(|p| p.position).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn spare_capacity_goes_to_the_best_ready_hosts_beyond_the_focus_set() {
        let t0 = Instant::now();
        let (mut q, ids) = six_ranked_hosts(t0);
        let rule = |room, spare| PickRule {
            room,
            focus: Some(FocusRule { focus_hosts: 64, min_hosts: 2, rank_span: 0.1, spare }),
        };
        // The focus set is h0, h1, h2; beyond it, h3, h4, h5 in rank order.
        assert_eq!(names(&q, &q.pick(rule(10, 0))), ["h0", "h1", "h2"]);
        let p = q.pick(rule(10, 9));
        assert_eq!(names(&q, &p), ["h0", "h1", "h2", "h3", "h4", "h5"]);
        assert_eq!(p.iter().map(|p| p.spare).collect::<Vec<_>>(), [false, false, false, true, true, true]);
        assert_eq!(p.iter().map(|p| p.position).collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5]);
        assert_eq!(names(&q, &q.pick(rule(10, 2))), ["h0", "h1", "h2", "h3", "h4"], "at most `spare`");
        assert_eq!(names(&q, &q.pick(rule(4, 9))), ["h0", "h1", "h2", "h3"], "within the room");
        // h0 waits for its delay: it keeps a slot, so a room of 4 leaves one spare pick.
        q.set_status(ids[0], HostStatus::DueAt(ms(t0, 10)), t0);
        assert_eq!(names(&q, &q.pick(rule(4, 9))), ["h1", "h2", "h3"]);
        // h4 waits too: the next ready host beyond the set takes its turn.
        q.set_status(ids[4], HostStatus::Busy, t0);
        assert_eq!(names(&q, &q.pick(rule(10, 9))), ["h1", "h2", "h3", "h5"]);
        // Every host of the set waits: the spare slots still go to the others.
        q.set_status(ids[1], HostStatus::Busy, t0);
        q.set_status(ids[2], HostStatus::Busy, t0);
        assert_eq!(names(&q, &q.pick(rule(10, 9))), ["h3", "h5"]);
    }
}
