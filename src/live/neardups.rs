//! Live near-duplicate marking: each page matched in a scan or crawl is looked up among the
//! pages matched before it (Manku et al.'s permuted tables, `detector::neardup`), then added.

use std::sync::Mutex;

/// SimHash distance at or below which a page is marked a near duplicate of an earlier one
/// (`ditto replicas --simhash-k`'s default, Manku et al.'s k = 3 for 64-bit keys).
pub const NEAR_DUP_K: u32 = 3;

/// The pages matched so far in a scan or crawl, as a Manku et al. near-duplicate index of
/// their SimHashes (`detector::neardup`), for marking each new page as a near duplicate of
/// an earlier one (`PageRecord::near_duplicate_of`).
///
/// "Earlier" is the order in which pages reach the match stage: with several match workers
/// two near duplicates matched at once may mark either one. Pages without visible text are
/// neither marked nor indexed (their SimHashes all agree). A URL is never its own near
/// duplicate (a page refetched with a new body).
pub struct LiveNearDups {
    inner: Mutex<(detector::neardup::NearDupIndex, Vec<String>)>,
}

impl LiveNearDups {
    /// An empty index of distance `k` (< 64).
    pub fn new(k: u32) -> Result<LiveNearDups, detector::neardup::IndexError> {
        let index =
            detector::neardup::NearDupIndex::build(detector::neardup::IndexConfig::new(k), Vec::new())?;
        Ok(LiveNearDups { inner: Mutex::new((index, Vec::new())) })
    }

    /// The URL of the nearest earlier page within k of `simhash` (the earliest among equally
    /// near ones), then adds this page to the index.
    pub fn check_insert(&self, url: &str, simhash: u64) -> Option<String> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (index, urls) = &mut *g;
        let found = index
            .query(simhash)
            .into_iter()
            .filter_map(|m| urls.get(m.id as usize))
            .find(|u| u.as_str() != url)
            .cloned();
        if let Ok(id) = u32::try_from(urls.len()) {
            if id < u32::MAX - 1 {
                index.insert(simhash, id);
                urls.push(url.to_string());
            }
        }
        found
    }

    /// Adds pages stored before this run (one index rebuild, no lookups).
    pub fn load(&self, pages: Vec<(String, u64)>) {
        if pages.is_empty() {
            return;
        }
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (index, urls) = &mut *g;
        let mut items: Vec<(u64, u32)> = Vec::with_capacity(pages.len());
        for (url, simhash) in pages {
            let Ok(id) = u32::try_from(urls.len()) else { break };
            if id >= u32::MAX - 1 {
                break;
            }
            items.push((simhash, id));
            urls.push(url);
        }
        if index.is_empty() {
            match detector::neardup::NearDupIndex::build(index.config(), items) {
                Ok(built) => *index = built,
                Err(e) => eprintln!("warning: near-duplicate index not loaded: {e}"),
            }
        } else {
            for (key, id) in items {
                index.insert(key, id);
            }
        }
    }

    /// Pages indexed.
    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).1.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_near_dups_mark_the_nearest_earlier_page() {
        let nd = LiveNearDups::new(NEAR_DUP_K).unwrap();
        assert_eq!(nd.check_insert("http://a/1", 0b1111_0000), None);
        assert_eq!(nd.check_insert("http://a/2", 0xffff_0000_0000_0000), None);
        // Distance 2 from the first page.
        assert_eq!(nd.check_insert("http://b/1", 0b1111_0011).as_deref(), Some("http://a/1"));
        // Distance 4 from everything: not marked.
        assert_eq!(nd.check_insert("http://c/1", 0x0f00_0000_0000_0000), None);
        // A URL refetched with a new body is not its own near duplicate.
        assert_eq!(nd.check_insert("http://a/2", 0xffff_0000_0000_0001), None);
        assert_eq!(nd.len(), 5);
        // Beyond the pending list: the index rebuilds and keeps answering.
        for i in 0..5000u64 {
            nd.check_insert(&format!("http://x/{i}"), i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | (1 << 40));
        }
        assert_eq!(nd.check_insert("http://d/1", 0b1111_0001).as_deref(), Some("http://a/1"));
    }

    #[test]
    fn live_near_dups_count_loaded_pages_as_earlier() {
        let nd = LiveNearDups::new(NEAR_DUP_K).unwrap();
        nd.load(vec![("http://old/1".into(), 0xabcd), ("http://old/2".into(), 0xffff_0000)]);
        assert_eq!(nd.len(), 2);
        assert_eq!(nd.check_insert("http://new/1", 0xabce).as_deref(), Some("http://old/1"));
        assert_eq!(nd.check_insert("http://old/2", 0xffff_0000), None, "itself, refetched");
        nd.load(vec![("http://old/3".into(), 0x1234_5678_0000)]);
        assert_eq!(nd.check_insert("http://new/2", 0x1234_5678_0001).as_deref(), Some("http://old/3"));
    }
}
