//! A minimal crawler written with reqwest that uses ditto as a plug-in: fetch, detect,
//! accumulate neighborhoods in a store that `ditto report` reads.
//!
//! cargo run --example plugin_crawler -- LABELSET STORE SEED [MAX_PAGES] [HOST=ADDR:PORT]

use std::collections::{HashSet, VecDeque};

use ditto::api::{open_store, Detector, DetectorConfig};

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [labelset, store_path, seed, rest @ ..] = args.as_slice() else {
        anyhow::bail!("usage: plugin_crawler LABELSET STORE SEED [MAX_PAGES] [HOST=ADDR:PORT]");
    };
    let max_pages: usize = rest.first().map(|s| s.parse()).transpose()?.unwrap_or(100);
    let det = Detector::open(labelset, DetectorConfig::default())?;
    let store = open_store(store_path, &det)?;

    let mut client = reqwest::Client::builder()
        .user_agent("ditto-plugin-example/0.1 (+https://example.org/bot)")
        .redirect(reqwest::redirect::Policy::limited(5));
    if let Some((host, addr)) = rest.get(1).and_then(|m| m.split_once('=')) {
        client = client.resolve(host, addr.parse()?); // e.g. a test web on loopback
    }
    let client = client.build()?;
    let seed_host = reqwest::Url::parse(seed)?.host_str().unwrap_or_default().to_string();

    let mut queue = VecDeque::from([seed.clone()]);
    let mut seen: HashSet<String> = queue.iter().cloned().collect();
    let mut fetched = 0;
    while let Some(url) = queue.pop_front() {
        if fetched == max_pages {
            break;
        }
        let Ok(resp) = client.get(&url).send().await else { continue };
        fetched += 1;
        let status = resp.status().as_u16();
        let ctype = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).map(str::to_string);
        let body = resp.bytes().await?;
        let verdict = det.page_with_status(&url, status, ctype.as_deref(), &body)?;
        det.store(&store, &verdict)?;
        println!("{:.3} {:>3}/{:<3} {url}", verdict.contains, verdict.labeled_chunks, verdict.chunks);
        for link in verdict.links {
            let same_host =
                reqwest::Url::parse(&link).ok().and_then(|u| u.host_str().map(|h| h == seed_host));
            if same_host == Some(true) && seen.insert(link.clone()) {
                queue.push_back(link);
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await; // be polite
    }
    store.flush()?;
    eprintln!("fetched {fetched} pages; try: ditto report --store {store_path} --format table");
    Ok(())
}
