//! The `ditto` binary: everything is in [`ditto::cli`].

fn main() -> std::process::ExitCode {
    ditto::cli::main()
}
