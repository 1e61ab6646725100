//! The `ditto` binary: everything is in [`ditto::cli`].

/// jemalloc rather than the system allocator (feature `jemalloc`, default; see Cargo.toml).
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    ditto::cli::main()
}
