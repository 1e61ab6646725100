//! A throwaway `redis-server` on loopback for the partitioned-crawl tests and benchmarks.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

/// A throwaway `redis-server` on a loopback port, for tests and benchmarks of the Redis
/// exchange: no snapshots, an append-only file fsynced at every write (so a kill loses no
/// acknowledged command), in `dir`. Killed when dropped.
pub struct LocalRedis {
    child: Option<std::process::Child>,
    pub port: u16,
    pub dir: std::path::PathBuf,
}

impl LocalRedis {
    /// Start on a free loopback port; fails with a clear message when `redis-server` is
    /// missing (Debian package `redis-server`: `scripts/install_redis.sh`).
    pub fn start(dir: &Path) -> Result<LocalRedis> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut r = LocalRedis { child: None, port, dir: dir.to_path_buf() };
        r.restart()?;
        Ok(r)
    }

    /// `redis://127.0.0.1:PORT/DB`
    pub fn url(&self, db: u32) -> String {
        format!("redis://127.0.0.1:{}/{db}", self.port)
    }

    /// Empty database `db` (FLUSHDB), e.g. before reusing it for another crawl.
    pub fn flush_db(&self, db: u32) -> Result<()> {
        use std::io::{Read, Write};
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
        let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
        let db = db.to_string();
        write!(s, "*2\r\n$6\r\nSELECT\r\n${}\r\n{db}\r\n*1\r\n$7\r\nFLUSHDB\r\n", db.len())?;
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        while got.windows(2).filter(|w| w == b"\r\n").count() < 2 {
            let n = s.read(&mut buf)?;
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        if got != b"+OK\r\n+OK\r\n" {
            bail!("redis FLUSHDB {db}: unexpected reply {:?}", String::from_utf8_lossy(&got));
        }
        Ok(())
    }

    /// Kill the server (SIGKILL) and wait for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Start the server again on the same port with the same directory (after
    /// [`LocalRedis::kill`]); waits up to 10 s for it to answer PING.
    pub fn restart(&mut self) -> Result<()> {
        use std::io::{Read, Write};
        self.kill();
        std::fs::create_dir_all(&self.dir)?;
        let child = std::process::Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "yes", "--appendfsync", "always", "--protected-mode", "yes"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(std::fs::File::create(self.dir.join("redis.log"))?)
            .stderr(std::process::Stdio::null())
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "redis-server not found: install the Debian package redis-server (scripts/install_redis.sh)"
            ),
            Err(e) => return Err(e).context("starting redis-server"),
        };
        self.child = Some(child);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let ready = (|| -> std::io::Result<bool> {
                let addr = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
                let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200))?;
                s.set_read_timeout(Some(Duration::from_millis(500)))?;
                s.write_all(b"PING\r\n")?;
                let mut buf = [0u8; 7];
                let n = s.read(&mut buf)?;
                Ok(buf[..n].starts_with(b"+PONG"))
            })();
            if matches!(ready, Ok(true)) {
                return Ok(());
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                bail!("redis-server exited ({status}); see {}", self.dir.join("redis.log").display());
            }
            if std::time::Instant::now() > deadline {
                self.kill();
                bail!("redis-server on port {} did not answer within 10 s", self.port);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for LocalRedis {
    fn drop(&mut self) {
        self.kill();
    }
}
