//! A CPU stage as a pool of worker threads between two bounded channels.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};

use super::metrics::StageMetrics;

/// Most workers a CPU stage may have: far above any machine's cores, well below what the
/// OS refuses to spawn.
pub const MAX_WORKERS: usize = 1024;

/// Workers per CPU stage for `--threads`: the number of cores when not given; 0 and more
/// than [`MAX_WORKERS`] are errors. Every command with `--threads` goes through here.
pub fn worker_count(requested: Option<usize>) -> anyhow::Result<usize> {
    match requested {
        None => Ok(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)),
        Some(0) => anyhow::bail!("--threads must be at least 1"),
        Some(n) if n > MAX_WORKERS => anyhow::bail!("--threads {n} is more than the {MAX_WORKERS} allowed"),
        Some(n) => Ok(n),
    }
}

/// Spawn `workers` threads that each take items from `rx`, apply `f`, and send what it
/// returns to `tx`. The stage ends when `rx` is closed and drained; `tx` closes when the
/// last worker drops its clone. Bounded channels on both sides give back-pressure.
pub fn spawn_pool<I, O, F>(
    metrics: Arc<StageMetrics>,
    workers: usize,
    rx: Receiver<I>,
    tx: Sender<O>,
    f: F,
) -> Vec<JoinHandle<()>>
where
    I: Send + 'static,
    O: Send + 'static,
    F: Fn(I) -> Option<O> + Send + Sync + 'static,
{
    let f = Arc::new(f);
    metrics.workers.store(workers.max(1) as u64, std::sync::atomic::Ordering::Relaxed);
    (0..workers.max(1))
        .map(|i| {
            let (rx, tx, f, metrics) = (rx.clone(), tx.clone(), f.clone(), metrics.clone());
            std::thread::Builder::new()
                .name(format!("{}-{i}", metrics.name))
                .spawn(move || {
                    let cpu = super::metrics::CpuSpan::start();
                    run_worker(&rx, &tx, &*f, &metrics);
                    cpu.end(&metrics);
                })
                .expect("spawning a pipeline thread")
        })
        .collect()
}

/// One worker's loop: items from `rx` through `f` to `tx`, until `rx` closes or `tx` fails.
fn run_worker<I, O>(rx: &Receiver<I>, tx: &Sender<O>, f: &dyn Fn(I) -> Option<O>, metrics: &StageMetrics) {
    for item in rx {
        let start = Instant::now();
        let out = f(item);
        metrics.record(start.elapsed(), out.is_some());
        if let Some(out) = out {
            if tx.send(out).is_err() {
                // Downstream is gone (it failed); stop quietly, the
                // pipeline reports its error.
                return;
            }
        }
    }
}
