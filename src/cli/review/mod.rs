//! `ditto review` (a loopback web page where people check flagged neighborhoods and label
//! them) and `ditto labels export|import`. Labels live in the store (`store::labels`) and
//! `ditto report` honors them.

pub mod diff;
pub mod html;
pub mod marked;
pub mod server;
pub mod svg;

use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use store::Store;

use crate::report::ThresholdChoice;
pub use server::{router, Names, Review};

/// The address served when no `--listen` is given.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8700";

#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// Store to review (labels are written into it).
    #[arg(long, env = "DITTO_STORE")]
    pub store: PathBuf,
    /// Address to serve on. Default 127.0.0.1:8700. A non-loopback address exposes the
    /// store and its labels to the network: it is only used when given here, with a warning.
    #[arg(long)]
    pub listen: Option<String>,
    /// Name recorded with every label.
    #[arg(long, default_value_t = default_reviewer())]
    pub reviewer: String,
    /// Label set for source titles and URLs (default: the one the store was scanned with).
    #[arg(long, env = "DITTO_LABELSET")]
    pub labelset: Option<PathBuf>,
    /// `auto` = mean + one standard deviation over all neighborhoods, or a value in [0, 1].
    #[arg(long, default_value = "auto")]
    pub threshold: ThresholdChoice,
    /// The pages the label set was built from (the directory, or files, given to `ditto
    /// labelset build`; repeatable): a page's view then shows each copied block beside the
    /// source paragraph it came from, the words that differ marked. A label set keeps hashes,
    /// not text, so without this the view shows the copied blocks only.
    #[arg(long = "source-pages", value_name = "DIR")]
    pub source_pages: Vec<PathBuf>,
}

fn default_reviewer() -> String {
    std::env::var("USER").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| "reviewer".into())
}

#[derive(Subcommand, Debug)]
pub enum LabelsCommand {
    /// Write every review label as JSON Lines to stdout.
    Export {
        /// The store whose labels to write.
        #[arg(long)]
        store: PathBuf,
    },
    /// Read review labels (JSON Lines, as exported); a label replaces the store's only when newer.
    Import {
        /// The store to add the labels to.
        #[arg(long)]
        store: PathBuf,
        /// The JSONL file (`-` for stdin).
        file: PathBuf,
    },
}

/// Where to bind, and a warning to print when it is not loopback. `explicit` says the
/// address came from `--listen`; a non-loopback address is refused otherwise.
pub fn bind_addr(listen: Option<&str>, explicit: bool) -> Result<(SocketAddr, Option<String>)> {
    let text = listen.unwrap_or(DEFAULT_LISTEN);
    let addrs: Vec<SocketAddr> =
        text.to_socket_addrs().with_context(|| format!("--listen {text:?}: not an ADDR:PORT"))?.collect();
    let Some(&addr) = addrs.first() else { bail!("--listen {text:?} resolves to no address") };
    if addrs.iter().all(|a| a.ip().is_loopback()) {
        return Ok((addr, None));
    }
    if !explicit {
        bail!("refusing to serve on non-loopback address {addr}: give it with --listen to mean it");
    }
    Ok((
        addr,
        Some(format!(
            "warning: serving on {addr}, which is not a loopback address: anyone who can reach it can read \
             this store's pages and evidence (labels still need the page's CSRF token)"
        )),
    ))
}

/// `ditto review`.
pub fn run(a: ReviewArgs) -> Result<()> {
    let (addr, warning) = bind_addr(a.listen.as_deref(), a.listen.is_some())?;
    if let Some(w) = &warning {
        eprintln!("{w}");
    }
    let store = Arc::new(Store::open_existing(&a.store)?);
    // `ditto report`/`stats`/`labels export` read snapshots of it while the review runs.
    store.serve_snapshots()?;
    let names = Names::open(&store, a.labelset.as_deref());
    let t0 = std::time::Instant::now();
    let mut review = Review::build(store, names, a.threshold, &a.reviewer)?;
    review.check_host = warning.is_none();
    if !a.source_pages.is_empty() {
        review.sources = Some(crate::source::labeled::SourceTexts::new(a.source_pages.clone())?);
    }
    let review = Arc::new(review);
    // Which pages are near replicas of which: one pass over the pages, beside the server.
    let indexing = review.clone();
    std::thread::Builder::new()
        .name("near-replicas".into())
        .spawn(move || indexing.index_near_replicas())
        .context("starting the near-replica index thread")?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(async move {
        let listener =
            tokio::net::TcpListener::bind(addr).await.with_context(|| format!("binding {addr}"))?;
        let local = listener.local_addr()?;
        let host = if local.ip().is_unspecified() || warning.is_some() {
            local.to_string()
        } else if local.is_ipv6() {
            format!("[::1]:{}", local.port())
        } else {
            local.to_string()
        };
        eprintln!(
            "{} neighborhoods above threshold {:.4} ({}), read in {:.0} ms",
            review.flagged_count(),
            review.threshold.value,
            review.threshold.kind,
            t0.elapsed().as_secs_f64() * 1e3
        );
        // The URL on stdout, alone on its line, for people and scripts.
        println!("serving http://{host}/ (^C to stop)");
        std::io::stdout().flush()?;
        axum::serve(listener, router(review))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok(())
    })
}

/// `ditto labels export|import`.
pub fn labels_cmd(c: LabelsCommand) -> Result<()> {
    match c {
        LabelsCommand::Export { store } => {
            let store = crate::analysis::open_store_for_reading(&store)?;
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let n = store.export_labels(&mut out)?;
            out.flush()?;
            eprintln!("{n} labels exported");
        }
        LabelsCommand::Import { store, file } => {
            let store = Store::open_existing(&store)?;
            let o = if file.as_os_str() == "-" {
                store.import_labels(&mut std::io::stdin().lock())?
            } else {
                let f = std::fs::File::open(&file).with_context(|| format!("opening {}", file.display()))?;
                store.import_labels(&mut std::io::BufReader::new(f))?
            };
            eprintln!(
                "{} labels imported, {} skipped (the store's were as new or newer)",
                o.imported, o.older
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_by_default_non_loopback_only_when_explicit() {
        let (a, w) = bind_addr(None, false).unwrap();
        assert_eq!(a.to_string(), DEFAULT_LISTEN);
        assert!(w.is_none());
        assert!(bind_addr(Some("0.0.0.0:8700"), false).is_err());
        let (a, w) = bind_addr(Some("0.0.0.0:8700"), true).unwrap();
        assert!(a.ip().is_unspecified() && w.is_some());
        assert!(bind_addr(Some("[::1]:0"), true).unwrap().1.is_none());
        assert!(bind_addr(Some("nonsense"), true).is_err());
    }
}
