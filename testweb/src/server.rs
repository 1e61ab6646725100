//! The loopback HTTP/1.1 server: accept loop, Host dispatch, responses.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::ops::Bound;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::body::{Body, Bytes};
use hyper::body::Incoming;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::{JoinHandle, JoinSet};

use super::bodies::{self, GuardedBody};
use super::log::RequestLog;
use super::{escape, page, Resource, RetryAfter, Site, WebSpec};

/// Generators may hand back another generator; stop following after this many.
const MAX_GENERATOR_HOPS: usize = 4;

struct State {
    spec: WebSpec,
    log: RequestLog,
    /// (host, path+query) → requests seen, for `Resource::Status { times, .. }`.
    hits: Mutex<HashMap<(String, String), u32>>,
}

/// A running test web on the caller's tokio runtime. Dropping it stops accepting; call
/// [`TestWebHandle::shutdown`] to also close every open connection and wait for that.
pub struct TestWebHandle {
    /// Where it listens (always a loopback address).
    pub addr: SocketAddr,
    /// Every request it has seen.
    pub log: RequestLog,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl TestWebHandle {
    /// `HOST=ADDR:PORT`, the crawler's `--resolve` argument for a host (or `*.suffix`).
    pub fn resolve_arg(&self, host: &str) -> String {
        resolve_arg(host, self.addr)
    }

    /// Stops the server: no more connections, open ones (endless bodies too) are closed.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for TestWebHandle {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

fn resolve_arg(host: &str, addr: SocketAddr) -> String {
    format!("{host}={addr}")
}

/// Starts `spec` on `127.0.0.1:0` (a free port) on the current tokio runtime.
pub async fn serve(spec: WebSpec) -> io::Result<TestWebHandle> {
    serve_on(spec, SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await
}

/// Starts `spec` on `addr`, which must be a loopback address (127.0.0.0/8 or ::1).
pub async fn serve_on(spec: WebSpec, addr: SocketAddr) -> io::Result<TestWebHandle> {
    if !addr.ip().is_loopback() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("testweb only binds loopback addresses, not {addr}"),
        ));
    }
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let log = RequestLog::default();
    let state = Arc::new(State { spec, log: log.clone(), hits: Mutex::new(HashMap::new()) });
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(accept_loop(listener, state, stopped));
    Ok(TestWebHandle { addr, log, stop, task: Some(task) })
}

async fn accept_loop(listener: TcpListener, state: Arc<State>, mut stop: watch::Receiver<bool>) {
    // Connections live in a JoinSet so shutdown can cut them all, endless bodies included.
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    break;
                }
            }
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    let _ = stream.set_nodelay(true);
                    conns.spawn(serve_connection(stream, state.clone()));
                }
                // Out of descriptors and the like: back off briefly, keep serving.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    conns.abort_all();
    while conns.join_next().await.is_some() {}
}

async fn serve_connection(stream: tokio::net::TcpStream, state: Arc<State>) {
    let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service);
    // Client resets and half-sent bodies end here; they are the client's business.
    let _ = conn.await;
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Response<GuardedBody>, Infallible> {
    let host = host_of(&req);
    let full = req.uri().path_and_query().map_or_else(|| "/".to_string(), |pq| pq.as_str().to_string());
    let path = req.uri().path().to_string();
    let user_agent =
        req.headers().get(header::USER_AGENT).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let guard = state.log.arrive(host.clone(), full.clone(), req.method().to_string(), user_agent);

    let response = match state.spec.site_for(&host) {
        None => not_found(&format!("No host {host} in this test web.")),
        Some(site) => {
            if !site.latency.is_zero() {
                tokio::time::sleep(site.latency).await;
            }
            match lookup(site, &host, &path, &full) {
                Some(resource) => respond(&state, &host, &full, resource).await,
                None => not_found(&format!("No page {full} on {host}.")),
            }
        }
    };
    Ok(response.map(|body| GuardedBody::new(body, guard)))
}

/// The host a request is for: the absolute-form authority if any, else the Host header;
/// lower-cased, port and trailing dot removed.
fn host_of(req: &Request<Incoming>) -> String {
    let raw = match req.uri().host() {
        Some(h) => h.to_string(),
        None => req
            .headers()
            .get(header::HOST)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default(),
    };
    normalize_host(&raw)
}

pub(crate) fn normalize_host(raw: &str) -> String {
    let raw = raw.trim();
    let host = if raw.starts_with('[') {
        // IPv6 literal: keep the brackets, drop a port after them.
        match raw.find(']') {
            Some(end) => &raw[..=end],
            None => raw,
        }
    } else {
        match raw.rfind(':') {
            Some(colon) => &raw[..colon],
            None => raw,
        }
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

fn lookup(site: &Site, host: &str, path: &str, full: &str) -> Option<Resource> {
    let mut found = site.pages.get(full).or_else(|| site.pages.get(path)).cloned();
    if found.is_none() && path == "/robots.txt" {
        found = site.robots_txt.as_ref().map(|r| Resource::text(r.clone()));
    }
    if found.is_none() {
        // Longest generator prefix: keys are sorted, so scan back from the path itself.
        found = site
            .pages
            .range::<str, _>((Bound::Unbounded, Bound::Included(path)))
            .rev()
            .find(|(key, res)| {
                key.ends_with('/') && path.starts_with(key.as_str()) && matches!(res, Resource::Generated(_))
            })
            .map(|(_, res)| res.clone());
    }
    let mut hops = 0;
    while let Some(Resource::Generated(generate)) = &found {
        hops += 1;
        if hops > MAX_GENERATOR_HOPS {
            return None;
        }
        found = generate(host, full);
    }
    found
}

async fn respond(state: &State, host: &str, full: &str, resource: Resource) -> Response<Body> {
    let mut resource = resource;
    // Unwrap throttling statuses whose quota is used up.
    while let Resource::Status { code, retry_after, times, then } = resource {
        let seen = {
            let mut hits = state.hits.lock().unwrap_or_else(|e| e.into_inner());
            let n = hits.entry((host.to_string(), full.to_string())).or_insert(0);
            *n = n.saturating_add(1);
            *n
        };
        match then {
            Some(next) if seen > times => resource = *next,
            _ => return status_response(code, retry_after.as_ref()),
        }
    }

    match resource {
        Resource::Html { body, charset, extra_headers } => {
            let content_type = match charset {
                Some(cs) => format!("text/html; charset={cs}"),
                None => "text/html".to_string(),
            };
            let mut resp = simple(StatusCode::OK, &content_type, Body::from(body));
            for (name, value) in &extra_headers {
                if let (Ok(n), Ok(v)) =
                    (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value))
                {
                    resp.headers_mut().append(n, v);
                }
            }
            resp
        }
        Resource::Bytes { content_type, body } => simple(StatusCode::OK, &content_type, Body::from(body)),
        Resource::Redirect { status, location } => {
            let code = StatusCode::from_u16(status)
                .ok()
                .filter(StatusCode::is_redirection)
                .unwrap_or(StatusCode::FOUND);
            let body = page("Moved", &format!("<p>Moved to {}.</p>", escape(&location)));
            let mut resp = simple(code, "text/html; charset=utf-8", Body::from(body));
            match HeaderValue::from_str(&location) {
                Ok(v) => {
                    resp.headers_mut().insert(header::LOCATION, v);
                    resp
                }
                Err(_) => server_error("bad redirect location in the spec"),
            }
        }
        Resource::EndlessBody => simple(StatusCode::OK, "text/html; charset=utf-8", bodies::endless()),
        Resource::GzipBomb => match tokio::task::spawn_blocking(bodies::gzip_bomb).await {
            Ok(Some(bomb)) => {
                let mut resp = simple(StatusCode::OK, "text/html; charset=utf-8", Body::from(bomb));
                resp.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
                resp
            }
            _ => server_error("could not build the gzip bomb"),
        },
        Resource::SlowDrip { bytes_per_sec, total } => {
            let mut resp =
                simple(StatusCode::OK, "text/html; charset=utf-8", bodies::drip(bytes_per_sec, total));
            resp.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(total));
            resp
        }
        Resource::HugeHeaders { bytes } => {
            let body = page("Huge headers", "<p>This response has one enormous header.</p>");
            let mut resp = simple(StatusCode::OK, "text/html; charset=utf-8", Body::from(body));
            let value = Bytes::from(vec![b'h'; bytes]);
            match HeaderValue::from_maybe_shared(value) {
                Ok(v) => {
                    resp.headers_mut().insert(HeaderName::from_static("x-huge"), v);
                    resp
                }
                Err(_) => server_error("could not build the huge header"),
            }
        }
        // Handled above; kept total so the compiler checks every kind.
        Resource::Status { code, .. } => status_response(code, None),
        Resource::Generated(_) => not_found("generator loop"),
    }
}

fn simple(status: StatusCode, content_type: &str, body: Body) -> Response<Body> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    let headers = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(content_type) {
        headers.insert(header::CONTENT_TYPE, v);
    }
    headers.insert(header::SERVER, HeaderValue::from_static("ditto-testweb"));
    resp
}

fn status_response(code: u16, retry_after: Option<&RetryAfter>) -> Response<Body> {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let reason = status.canonical_reason().unwrap_or("Status");
    let body = page(reason, &format!("<h1>{} {}</h1>", status.as_u16(), escape(reason)));
    let mut resp = simple(status, "text/html; charset=utf-8", Body::from(body));
    let value = retry_after.map(|ra| match ra {
        RetryAfter::Seconds(s) => s.to_string(),
        RetryAfter::DateIn(d) => httpdate::fmt_http_date(SystemTime::now() + *d),
        RetryAfter::Raw(raw) => raw.clone(),
    });
    if let Some(Ok(v)) = value.map(|v| HeaderValue::from_str(&v)) {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

fn not_found(message: &str) -> Response<Body> {
    let body = page("Not found", &format!("<p>{}</p>", escape(message)));
    simple(StatusCode::NOT_FOUND, "text/html; charset=utf-8", Body::from(body))
}

fn server_error(message: &str) -> Response<Body> {
    let body = page("Server error", &format!("<p>{}</p>", escape(message)));
    simple(StatusCode::INTERNAL_SERVER_ERROR, "text/html; charset=utf-8", Body::from(body))
}

/// A test web running on its own runtime thread, for synchronous callers (tests, `ditto
/// demo`). Safe to start from inside another tokio runtime. Dropping it stops the server.
pub struct TestWeb {
    /// Where it listens (always a loopback address).
    pub addr: SocketAddr,
    /// Every request it has seen.
    pub log: RequestLog,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestWeb {
    /// Starts `spec` on `127.0.0.1:0` and returns once it is listening.
    pub fn start_blocking(spec: WebSpec) -> io::Result<TestWeb> {
        Self::start_blocking_on(spec, SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
    }

    /// Starts `spec` on `addr` (loopback only) and returns once it is listening.
    pub fn start_blocking_on(spec: WebSpec, addr: SocketAddr) -> io::Result<TestWeb> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new().name("testweb".into()).spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("testweb-worker")
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            runtime.block_on(async move {
                match serve_on(spec, addr).await {
                    Ok(handle) => {
                        let _ = ready_tx.send(Ok((handle.addr, handle.log.clone())));
                        // Sender dropped or fired: either way, stop.
                        let _ = stop_rx.await;
                        handle.shutdown().await;
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                }
            });
        })?;
        match ready_rx.recv() {
            Ok(Ok((addr, log))) => Ok(TestWeb { addr, log, stop: Some(stop_tx), thread: Some(thread) }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(io::Error::other("testweb thread exited before listening"))
            }
        }
    }

    /// `HOST=ADDR:PORT`, the crawler's `--resolve` argument for a host (or `*.suffix`).
    pub fn resolve_arg(&self, host: &str) -> String {
        resolve_arg(host, self.addr)
    }

    /// Stops the server and waits for its thread.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for TestWeb {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

#[cfg(test)]
mod tests {
    use super::normalize_host;

    #[test]
    fn hosts_lose_port_case_and_trailing_dot() {
        assert_eq!(normalize_host("Wiki.Demo.Test:8080"), "wiki.demo.test");
        assert_eq!(normalize_host("wiki.demo.test."), "wiki.demo.test");
        assert_eq!(normalize_host("[::1]:80"), "[::1]");
        assert_eq!(normalize_host(""), "");
    }
}
