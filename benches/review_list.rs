//! The review list over a store of many flagged neighborhoods: how long `ditto review` takes
//! to read the store at start, and to render the first list page (unfiltered and filtered).
//!
//! `cargo bench --bench review_list` (env: HOODS, default 100000; ITERS, default 50)
//! Builds the store by scanning a generated directory web (4 neighborhoods per page: `host/`,
//! `host/a/`, `host/a/b/`, `host/a/b/c/`), each page copying one labeled paragraph, so every
//! neighborhood is flagged at threshold 0.

use std::sync::Arc;
use std::time::Instant;

use detector::TrapRules;
use ditto::cli::review::server::ListQuery;
use ditto::cli::review::{Names, Review};
use ditto::pipeline::progress::ProgressMode;
use ditto::pipeline::{run_scan, ScanConfig};
use ditto::report::ThresholdChoice;
use labelsets::{DocumentSink, Kind, LabelSetBuilder};
use store::Store;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn paragraph(i: usize) -> String {
    format!(
        "Labeled paragraph number {i} about the history of the subject, long enough to be kept as a chunk \
         of the label set because it has more than one hundred characters."
    )
}

fn main() {
    let hoods = env_or("HOODS", 100_000);
    let iters = env_or("ITERS", 50);
    let hosts = hoods.div_ceil(4);
    let tmp = tempfile::tempdir().unwrap();

    let ls_path = tmp.path().join("l.dls");
    let mut b = LabelSetBuilder::new("bench", Kind::Chunks, Default::default(), 100, "bench");
    for i in 0..1000 {
        let body = format!("<p>{}</p>", paragraph(i));
        b.document(
            &format!("Article {i}"),
            &format!("https://en.wikipedia.org/wiki/A{i}"),
            body.as_bytes(),
            None,
        )
        .unwrap();
    }
    b.write(&ls_path).unwrap();

    let site = tmp.path().join("site");
    for h in 0..hosts {
        let dir = site.join(format!("h{h}.test/a/b/c"));
        std::fs::create_dir_all(&dir).unwrap();
        // 1 labeled paragraph among 1–4 original ones: badness varies, so sorting matters.
        let mut body = format!("<p>{}</p>", paragraph(h % 1000));
        for k in 0..=(h * 7919 % 4) {
            body.push_str(&format!("<p>Original text {k} of host {h}, written by its own authors.</p>"));
        }
        std::fs::write(dir.join("p.html"), body).unwrap();
    }

    let t = Instant::now();
    let loaded = ditto::labelset::load_for_scan(&ls_path, None, &[], true).unwrap();
    let db = tmp.path().join("review.db");
    let store = Arc::new(Store::open(&db).unwrap());
    let cfg = ScanConfig {
        inputs: vec![site.clone()],
        url_prefix: Some("http://".into()),
        normalization: loaded.normalization,
        traps: TrapRules::default(),
        threads: 2,
        readers: 0,
        batch_size: 256,
        max_body_bytes: 1 << 20,
        progress: ProgressMode::None,
        remote: Default::default(),
    };
    run_scan(&cfg, store.clone(), loaded.matcher).unwrap();
    store.flush().unwrap();
    eprintln!("store: {hosts} pages scanned in {:.1} s", t.elapsed().as_secs_f64());

    let t = Instant::now();
    let review = Review::build(
        store.clone(),
        Names::open(&store, Some(&ls_path)),
        ThresholdChoice::Fixed(0.0),
        "bench",
    )
    .unwrap();
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    println!("review start (read {} neighborhoods, sort flagged): {build_ms:.0} ms", review.flagged_count());
    assert!(review.flagged_count() >= hoods * 9 / 10, "{} flagged", review.flagged_count());

    let queries = [
        ("first page, unfiltered", ListQuery::default()),
        ("first page, unreviewed", ListQuery { state: "unreviewed".into(), ..ListQuery::default() }),
        ("first page, host filter", ListQuery { host: "h99".into(), ..ListQuery::default() }),
        ("page 1000, unfiltered", ListQuery { page: 1000, ..ListQuery::default() }),
    ];
    for (what, q) in &queries {
        // The first render reads top sources from the store (then cached), so it is timed apart.
        let t = Instant::now();
        let html = review.render_list(q);
        let first = t.elapsed().as_secs_f64() * 1e3;
        let mut times = Vec::with_capacity(iters);
        for _ in 0..iters {
            let t = Instant::now();
            std::hint::black_box(review.render_list(q));
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{what}: first {first:.2} ms, then median {:.2} ms, p95 {:.2} ms ({} bytes)",
            times[times.len() / 2],
            times[times.len() * 95 / 100],
            html.len()
        );
    }
}
