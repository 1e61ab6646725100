//! The Redis link exchange (`ditto crawl --coordinator redis://HOST:PORT[/DB] --partition i/N`).
//!
//! Same contract as the file exchange ([`super::LinkExchange`], module docs of
//! [`super`]): at-least-once delivery, acknowledged by the owner only after the links are
//! durably in its store, so neither a crash of a crawler nor a restart of Redis loses a link.
//!
//! Keys (one Redis database per crawl; use `/DB` in the URL or a fresh server):
//!
//! ```text
//! ditto:partitions        N, set by the first partition (SET NX); the others check it
//! ditto:inbox:<i>         stream of messages for partition i; field `links`: JSON lines of
//!                         FrontierEntry (the file exchange's message body)
//!                         consumer group `owner`, one consumer `p<i>` (the same name after a
//!                         restart, so a restarted partition finds its predecessor's
//!                         delivered, unacknowledged entries)
//! ditto:state:<i>         PartitionState of partition i, JSON
//! ditto:bad               unreadable messages, moved aside (XADD) and counted
//! ```
//!
//! - **Send**: `XADD ditto:inbox:<to> * links …`. It returns only once Redis has the message
//!   (with `--appendonly yes --appendfsync always` on the server, once it is on disk).
//! - **Receive**: `XREADGROUP GROUP owner p<i> COUNT n STREAMS ditto:inbox:<i> 0` first — the
//!   entries delivered to this consumer and never acknowledged (a crash, a lost reply) — and
//!   `>` (new entries) once none is left. Pending entries are read again after every
//!   reconnection, since a reply lost with the connection may have delivered entries.
//! - **Ack**: `XACK` and `XDEL` in one `MULTI`, after the router has queued the links and
//!   flushed the store ([`super::PartitionRouter::poll`]). A stream's length is therefore
//!   the number of messages not yet acknowledged ([`LinkExchange::pending`]).
//!
//! Redis down or restarting: every command waits and reconnects with backoff (0.25 s
//! doubling to 5 s), saying once `redis coordinator unreachable at …: retrying in Ns` and
//! then `redis coordinator reconnected at … after Xs`; nothing is dropped meanwhile (a
//! failed `XADD` is sent again; its links stay with the caller, whose page is not committed
//! until the send returns). A resent `XADD` whose first reply was lost duplicates the
//! message; the owner's seen set drops the links again. Only errors that waiting cannot
//! cure (wrong type, no permission, a bad URL) are returned.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::{ErrorKind, RedisError, ServerErrorKind, Value};
use store::FrontierEntry;

use super::{Delivery, ExchangeError, LinkExchange, Partition, PartitionState};

const GROUP: &str = "owner";
const PREFIX: &str = "ditto";
const BACKOFF_START: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// While Redis stays unreachable, the wait is logged again this often.
const REMIND_EVERY: Duration = Duration::from_secs(60);

/// Redis commands sent, by kind (for benchmarks: messages/s at a crawl rate).
#[derive(Debug, Default)]
pub struct RedisCounters {
    pub xadd: AtomicU64,
    pub xreadgroup: AtomicU64,
    pub xack: AtomicU64,
    pub other: AtomicU64,
    pub reconnects: AtomicU64,
}

impl RedisCounters {
    pub fn snapshot(&self) -> std::collections::BTreeMap<&'static str, u64> {
        super::snapshot_counters([
            ("redis_xadd", &self.xadd),
            ("redis_xreadgroup", &self.xreadgroup),
            ("redis_xack", &self.xack),
            ("redis_other", &self.other),
            ("redis_reconnects", &self.reconnects),
        ])
    }
}

/// A stream entry as read: its ID and its `links` field (None: the entry was deleted).
type RawEntry = (String, Option<Vec<u8>>);

struct Outage {
    since: Instant,
    last_log: Instant,
}

/// The Redis Streams exchange (module docs).
pub struct RedisExchange {
    client: redis::Client,
    /// The URL with any password left out, for log lines.
    shown: String,
    me: Partition,
    conn: Mutex<Option<redis::Connection>>,
    outage: Mutex<Option<Outage>>,
    /// Read this consumer's pending entries (ID 0) before new ones.
    reread_pending: AtomicBool,
    pub counters: RedisCounters,
    /// Messages moved to `ditto:bad`.
    pub bad_messages: AtomicU64,
}

fn inbox_key(p: u32) -> String {
    format!("{PREFIX}:inbox:{p}")
}

fn state_key(p: u32) -> String {
    format!("{PREFIX}:state:{p}")
}

fn redis_err(what: &str, e: RedisError) -> ExchangeError {
    ExchangeError::Redis { what: what.to_string(), error: e }
}

/// Errors that waiting and reconnecting can cure: the server is down, restarting, loading
/// its append-only file, or the connection broke or timed out.
fn transient(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || matches!(
            e.kind(),
            ErrorKind::Parse
                | ErrorKind::Server(
                    ServerErrorKind::BusyLoading
                        | ServerErrorKind::TryAgain
                        | ServerErrorKind::MasterDown
                        | ServerErrorKind::ClusterDown
                )
        )
}

fn no_group(e: &RedisError) -> bool {
    e.code() == Some("NOGROUP") || e.to_string().contains("NOGROUP")
}

fn bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::BulkString(b) => Some(b.clone()),
        Value::SimpleString(s) => Some(s.clone().into_bytes()),
        Value::VerbatimString { text, .. } => Some(text.clone().into_bytes()),
        _ => None,
    }
}

fn text(v: &Value) -> Option<String> {
    bytes(v).and_then(|b| String::from_utf8(b).ok())
}

impl RedisExchange {
    /// Connect (waiting for Redis if it is not up yet), record or check the partition count
    /// and create this partition's consumer group.
    pub fn open(url: &str, me: Partition) -> Result<RedisExchange, ExchangeError> {
        let client = redis::Client::open(url).map_err(|e| redis_err(&format!("bad URL {url:?}"), e))?;
        let shown = match url::Url::parse(url) {
            Ok(mut u) => {
                let _ = u.set_password(None);
                u.to_string()
            }
            Err(_) => url.to_string(),
        };
        let ex = RedisExchange {
            client,
            shown,
            me,
            conn: Mutex::new(None),
            outage: Mutex::new(None),
            reread_pending: AtomicBool::new(true),
            counters: RedisCounters::default(),
            bad_messages: AtomicU64::new(0),
        };
        let count_key = format!("{PREFIX}:partitions");
        let n: Option<String> = ex.run("recording the partition count", &ex.counters.other, |c| {
            redis::cmd("SET").arg(&count_key).arg(me.count).arg("NX").query::<()>(c)?;
            redis::cmd("GET").arg(&count_key).query(c)
        })?;
        if let Some(n) = n {
            if n.trim() != me.count.to_string() {
                return Err(ExchangeError::Config(format!(
                    "redis coordinator {} is an exchange for {n} partitions, not {}",
                    ex.shown, me.count
                )));
            }
        }
        ex.create_group()?;
        Ok(ex)
    }

    fn create_group(&self) -> Result<(), ExchangeError> {
        let key = inbox_key(self.me.index);
        let r: Result<(), ExchangeError> =
            self.run("creating the consumer group", &self.counters.other, |c| {
                match redis::cmd("XGROUP")
                    .arg("CREATE")
                    .arg(&key)
                    .arg(GROUP)
                    .arg("0")
                    .arg("MKSTREAM")
                    .query::<()>(c)
                {
                    Err(e) if e.code() == Some("BUSYGROUP") || e.to_string().contains("BUSYGROUP") => Ok(()),
                    other => other,
                }
            });
        r
    }

    /// Run `f` on a connection, reconnecting and waiting out transient failures (module
    /// docs); other errors are returned.
    fn run<T>(
        &self,
        what: &str,
        counter: &AtomicU64,
        mut f: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, ExchangeError> {
        let mut backoff = BACKOFF_START;
        loop {
            let attempt = {
                let mut guard = self.conn.lock().unwrap_or_else(|e| e.into_inner());
                if guard.is_none() {
                    match self.connect() {
                        Ok(c) => *guard = Some(c),
                        Err(e) if transient(&e) => {
                            drop(guard);
                            self.wait(&e, &mut backoff);
                            continue;
                        }
                        Err(e) => return Err(redis_err(what, e)),
                    }
                }
                match guard.as_mut() {
                    Some(c) => {
                        counter.fetch_add(1, Relaxed);
                        let r = f(c);
                        if matches!(&r, Err(e) if transient(e)) {
                            // The connection's state is unknown: start a new one.
                            *guard = None;
                            self.reread_pending.store(true, Relaxed);
                        }
                        r
                    }
                    None => continue,
                }
            };
            match attempt {
                Ok(v) => {
                    self.recovered();
                    return Ok(v);
                }
                Err(e) if transient(&e) => self.wait(&e, &mut backoff),
                Err(e) => return Err(redis_err(what, e)),
            }
        }
    }

    fn connect(&self) -> redis::RedisResult<redis::Connection> {
        let c = self.client.get_connection_with_timeout(Duration::from_secs(2))?;
        c.set_read_timeout(Some(Duration::from_secs(10)))?;
        c.set_write_timeout(Some(Duration::from_secs(10)))?;
        Ok(c)
    }

    fn wait(&self, e: &RedisError, backoff: &mut Duration) {
        {
            let mut o = self.outage.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            match o.as_mut() {
                None => {
                    eprintln!(
                        "redis coordinator unreachable at {}: {e}: retrying in {:.2}s (links are kept until it is back)",
                        self.shown,
                        backoff.as_secs_f64()
                    );
                    *o = Some(Outage { since: now, last_log: now });
                }
                Some(out) if now.duration_since(out.last_log) >= REMIND_EVERY => {
                    eprintln!(
                        "redis coordinator still unreachable at {} after {:.0}s: {e}: retrying in {:.1}s",
                        self.shown,
                        now.duration_since(out.since).as_secs_f64(),
                        backoff.as_secs_f64()
                    );
                    out.last_log = now;
                }
                Some(_) => {}
            }
        }
        std::thread::sleep(*backoff);
        *backoff = (*backoff * 2).min(BACKOFF_MAX);
    }

    fn recovered(&self) {
        let mut o = self.outage.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(out) = o.take() {
            self.counters.reconnects.fetch_add(1, Relaxed);
            eprintln!(
                "redis coordinator reconnected at {} after {:.1}s",
                self.shown,
                out.since.elapsed().as_secs_f64()
            );
        }
    }

    /// XREADGROUP from `id` ("0": this consumer's pending entries; ">": new ones).
    fn read(&self, id: &str, max: usize) -> Result<Vec<RawEntry>, ExchangeError> {
        let key = inbox_key(self.me.index);
        let consumer = format!("p{}", self.me.index);
        let mut recreated = false;
        let reply: Value = loop {
            let r = self.run("reading the inbox", &self.counters.xreadgroup, |c| {
                match redis::cmd("XREADGROUP")
                    .arg("GROUP")
                    .arg(GROUP)
                    .arg(&consumer)
                    .arg("COUNT")
                    .arg(max.max(1))
                    .arg("STREAMS")
                    .arg(&key)
                    .arg(id)
                    .query::<Value>(c)
                {
                    // The group vanished (a Redis without persistence restarted): made again
                    // below; report it as a value so that `run` does not give up.
                    Err(e) if no_group(&e) && !recreated => Ok(Value::SimpleString("NOGROUP".into())),
                    other => other,
                }
            })?;
            if r == Value::SimpleString("NOGROUP".into()) {
                recreated = true;
                self.create_group()?;
                continue;
            }
            break r;
        };
        let mut out = Vec::new();
        // [[key, [[id, [field, value, ...]], ...]]] (RESP2) or {key: [...]} (RESP3); Nil: none.
        let streams: Vec<Value> = match reply {
            Value::Array(v) => v,
            Value::Map(m) => m.into_iter().map(|(k, v)| Value::Array(vec![k, v])).collect(),
            _ => return Ok(out),
        };
        for s in streams {
            let Value::Array(kv) = s else { continue };
            let Some(Value::Array(entries)) = kv.get(1) else { continue };
            for e in entries {
                let Value::Array(parts) = e else { continue };
                let Some(eid) = parts.first().and_then(text) else { continue };
                let mut links = None;
                if let Some(Value::Array(fields)) = parts.get(1) {
                    for pair in fields.chunks(2) {
                        if pair.first().and_then(text).as_deref() == Some("links") {
                            links = pair.get(1).and_then(bytes);
                        }
                    }
                }
                out.push((eid, links));
            }
        }
        Ok(out)
    }

    fn ack_ids(&self, ids: &[&str]) -> Result<(), ExchangeError> {
        if ids.is_empty() {
            return Ok(());
        }
        let key = inbox_key(self.me.index);
        self.run("acknowledging", &self.counters.xack, |c| {
            redis::pipe()
                .atomic()
                .cmd("XACK")
                .arg(&key)
                .arg(GROUP)
                .arg(ids)
                .ignore()
                .cmd("XDEL")
                .arg(&key)
                .arg(ids)
                .ignore()
                .query::<()>(c)
        })
    }
}

impl LinkExchange for RedisExchange {
    fn partitions(&self) -> u32 {
        self.me.count
    }

    fn send(&self, to: u32, entries: &[FrontierEntry]) -> Result<(), ExchangeError> {
        let body = super::encode_links(self.me, to, entries)?;
        let key = inbox_key(to);
        self.run("sending links", &self.counters.xadd, |c| {
            redis::cmd("XADD").arg(&key).arg("*").arg("links").arg(&body).query::<Value>(c)
        })?;
        Ok(())
    }

    fn receive(&self, max: usize) -> Result<Vec<Delivery>, ExchangeError> {
        let mut raw = Vec::new();
        if self.reread_pending.load(Relaxed) {
            raw = self.read("0", max)?;
            if raw.is_empty() {
                self.reread_pending.store(false, Relaxed);
            }
        }
        if raw.is_empty() {
            raw = self.read(">", max)?;
        }
        let mut out = Vec::new();
        let mut drop_ids = Vec::new();
        for (id, links) in raw {
            let Some(body) = links else {
                // Deleted meanwhile (acknowledged by an earlier run): forget it.
                drop_ids.push(id);
                continue;
            };
            let parsed: Option<Vec<FrontierEntry>> = std::str::from_utf8(&body).ok().and_then(|t| {
                t.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).ok()).collect()
            });
            match parsed {
                Some(entries) => out.push(Delivery { id, entries }),
                None => {
                    // Not ours to guess at: keep it aside for a person, go on.
                    self.bad_messages.fetch_add(1, Relaxed);
                    let key = inbox_key(self.me.index);
                    self.run("moving a bad message aside", &self.counters.other, |c| {
                        redis::cmd("XADD")
                            .arg(format!("{PREFIX}:bad"))
                            .arg("*")
                            .arg("stream")
                            .arg(&key)
                            .arg("id")
                            .arg(&id)
                            .arg("links")
                            .arg(&body)
                            .query::<Value>(c)
                    })?;
                    drop_ids.push(id);
                }
            }
        }
        let ids: Vec<&str> = drop_ids.iter().map(String::as_str).collect();
        self.ack_ids(&ids)?;
        Ok(out)
    }

    fn ack(&self, d: &Delivery) -> Result<(), ExchangeError> {
        self.ack_ids(&[d.id.as_str()])
    }

    fn publish(&self, state: &PartitionState) -> Result<(), ExchangeError> {
        let json = serde_json::to_string(state)
            .map_err(|x| ExchangeError::Io { what: "encoding the state".into(), source: x.into() })?;
        let key = state_key(self.me.index);
        self.run("publishing the state", &self.counters.other, |c| {
            redis::cmd("SET").arg(&key).arg(&json).query::<()>(c)
        })
    }

    fn states(&self) -> Result<Vec<Option<PartitionState>>, ExchangeError> {
        let keys: Vec<String> = (0..self.me.count).map(state_key).collect();
        let vals: Vec<Option<String>> =
            self.run("reading the states", &self.counters.other, |c| redis::cmd("MGET").arg(&keys).query(c))?;
        Ok(vals.into_iter().map(|v| v.and_then(|s| serde_json::from_str(&s).ok())).collect())
    }

    fn stats(&self) -> std::collections::BTreeMap<&'static str, u64> {
        let mut m = self.counters.snapshot();
        m.insert("bad_messages", self.bad_messages.load(Relaxed));
        m
    }

    fn pending(&self, p: u32) -> Result<u64, ExchangeError> {
        let key = inbox_key(p);
        self.run("counting pending messages", &self.counters.other, |c| redis::cmd("XLEN").arg(&key).query(c))
    }
}
