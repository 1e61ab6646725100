//! The build's threads, named by stage (`ls-decode`, `ls-feed`, `ls-digest`, `ls-collect`,
//! `ls-sort`): `top -H` and `/proc/PID/task/*/comm` then tell each stage's CPU apart.

use std::thread::JoinHandle;

/// A thread named `name` (shown by `top -H` and in `/proc/PID/task/*/comm`, so that each
/// stage's CPU can be told apart); one that cannot be started panics, as
/// `std::thread::spawn` does.
pub(crate) fn named<T: Send + 'static>(name: &str, f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .unwrap_or_else(|e| panic!("starting a thread: {e}"))
}

/// As [`named`], in a scope.
pub(crate) fn named_scoped<'scope, T: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, '_>,
    name: &str,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, T> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn_scoped(s, f)
        .unwrap_or_else(|e| panic!("starting a thread: {e}"))
}
