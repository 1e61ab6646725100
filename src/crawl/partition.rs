//! Wiring for partitioned crawls (issue 10): the link exchange a partition's router uses.
//! Ownership, the exchange and termination are in `crawler::partition`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use crawler::partition::{FileExchange, Partition, PartitionRouter, RedisExchange};

/// Open the file exchange in `dir` for `partition` and make its router.
pub fn file_router(dir: &Path, partition: Partition, grace: Duration) -> Result<Arc<PartitionRouter>> {
    let ex = FileExchange::open(dir, partition)
        .with_context(|| format!("opening the link exchange {}", dir.display()))?;
    Ok(Arc::new(PartitionRouter::new(partition, Arc::new(ex), grace)))
}

/// Connect to the Redis coordinator at `url` for `partition` and make its router.
pub fn redis_router(url: &str, partition: Partition, grace: Duration) -> Result<Arc<PartitionRouter>> {
    let ex = RedisExchange::open(url, partition).context("opening the Redis link exchange")?;
    Ok(Arc::new(PartitionRouter::new(partition, Arc::new(ex), grace)))
}
