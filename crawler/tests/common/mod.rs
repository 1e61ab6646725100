//! What the crawler's integration tests share: page sinks and a failure log kept in memory.
#![allow(dead_code)] // each test binary uses a part of it

use std::io::Write;
use std::sync::{Arc, Mutex};

use crawler::crawl::{CrawledPage, LinkPolicy, PageSink};
use crawler::urls::{Scope, ScopeRules, TrapGuard, TrapLimits};

/// Links followed to any host, default trap limits, at most 5 deep.
pub fn any_scope_links() -> Arc<LinkPolicy> {
    Arc::new(LinkPolicy::new(ScopeRules::new(Scope::Any), TrapGuard::new(TrapLimits::default()), 5))
}

/// A sink that keeps nothing.
pub struct Discard;
impl PageSink for Discard {
    fn send(&self, _page: CrawledPage) -> bool {
        true
    }
}

/// A sink that counts the pages it is sent.
#[derive(Default)]
pub struct Count(pub Mutex<usize>);
impl PageSink for Count {
    fn send(&self, _page: CrawledPage) -> bool {
        *self.0.lock().unwrap() += 1;
        true
    }
}

/// A `--failure-log` written to memory.
#[derive(Clone, Default)]
pub struct Lines(pub Arc<Mutex<Vec<u8>>>);

impl Lines {
    /// The lines written, each parsed as JSON.
    pub fn json(&self) -> Vec<serde_json::Value> {
        let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}
impl Write for Lines {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
