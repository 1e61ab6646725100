//! The exit codes of every `ditto` command (`docs/GUIDE.md`, "Exit codes"), and how a command's
//! outcome becomes one: errors print `error: …` and give 1, clap's usage errors give 2, a run
//! that finished but could not read some of its inputs gives 3, an interrupted one 130 with a
//! line saying how to resume. A closed stdout (`ditto report | head`) ends the command quietly
//! with 0: the reader has what it wanted.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Done, every input read.
pub const SUCCESS: u8 = 0;
/// An error stopped the command (message on stderr).
pub const ERROR: u8 = 1;
/// The command line is wrong (clap's own code; message and usage on stderr).
pub const USAGE: u8 = 2;
/// The command finished, but some inputs failed (unreadable WARC records, every seed
/// unreachable, …): what could be read is stored and reported; stderr says what failed.
pub const PARTIAL: u8 = 3;
/// Stopped by ^C (SIGINT); stderr says how to resume.
pub const INTERRUPTED: u8 = 130;

/// An outcome that is not a plain error: returned as the `anyhow::Error` of a command and
/// turned into its exit code by [`exit_code`].
#[derive(Debug, thiserror::Error)]
pub enum Outcome {
    /// Finished with some inputs failed; the message says which and what to do.
    #[error("{0}")]
    Partial(String),
    /// Stopped by ^C; the message says how to resume.
    #[error("interrupted: {0}")]
    Interrupted(String),
}

/// The exit code for a command's result, printing what the user needs on stderr.
pub fn exit_code(result: anyhow::Result<()>) -> ExitCode {
    let Err(e) = result else { return ExitCode::from(SUCCESS) };
    if is_broken_pipe(&e) {
        return ExitCode::from(SUCCESS);
    }
    match e.downcast_ref::<Outcome>() {
        Some(o @ Outcome::Partial(_)) => {
            eprintln!("finished with failures: {o}");
            ExitCode::from(PARTIAL)
        }
        Some(o @ Outcome::Interrupted(_)) => {
            eprintln!("{o}");
            ExitCode::from(INTERRUPTED)
        }
        None => {
            eprintln!("error: {e:#}");
            ExitCode::from(ERROR)
        }
    }
}

/// Whether the error (or one of its causes) is a write to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// `println!` panics when stdout is a closed pipe (`ditto stats | head -1`): end quietly with
/// 0 then, as for the commands that write with `?`. Any other panic goes to the default hook.
pub fn quiet_broken_pipe_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.contains("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(i32::from(SUCCESS));
        }
        default(info);
    }));
}

/// What ^C does to a long command.
pub enum OnInterrupt {
    /// Exit at once with [`INTERRUPTED`], printing `interrupted: {resume}`: for commands whose
    /// work is durable at any moment (a scan resumes from what it stored).
    ExitNow { resume: &'static str },
    /// Set the flag and let the command wind down (it returns [`Outcome::Interrupted`]); a
    /// second ^C exits at once with [`INTERRUPTED`], printing `interrupted: {resume}`.
    Flag { flag: Arc<AtomicBool>, first: &'static str, resume: &'static str },
}

/// Handle SIGINT on a thread of its own as `what` says. Errors only if the thread cannot start.
pub fn on_interrupt(what: OnInterrupt) -> std::io::Result<()> {
    std::thread::Builder::new().name("sigint".into()).spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
        rt.block_on(async {
            match what {
                OnInterrupt::ExitNow { resume } => {
                    if tokio::signal::ctrl_c().await.is_ok() {
                        eprintln!("\ninterrupted: {resume}");
                        std::process::exit(i32::from(INTERRUPTED));
                    }
                }
                OnInterrupt::Flag { flag, first, resume } => {
                    if tokio::signal::ctrl_c().await.is_ok() {
                        eprintln!("\nstopping: {first}");
                        flag.store(true, Ordering::Relaxed);
                    }
                    if tokio::signal::ctrl_c().await.is_ok() {
                        eprintln!("interrupted: {resume}");
                        std::process::exit(i32::from(INTERRUPTED));
                    }
                }
            }
        });
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_pipe_anywhere_in_the_chain_is_recognized() {
        let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "Broken pipe");
        let e = anyhow::Error::new(io).context("writing the report");
        assert!(is_broken_pipe(&e));
        let other = anyhow::Error::new(std::io::Error::other("disk full")).context("writing the report");
        assert!(!is_broken_pipe(&other));
    }

    #[test]
    fn outcomes_map_to_their_codes() {
        assert_eq!(exit_code(Ok(())), ExitCode::from(SUCCESS));
        assert_eq!(
            exit_code(Err(Outcome::Partial("1 WARC file unreadable".into()).into())),
            ExitCode::from(PARTIAL)
        );
        assert_eq!(
            exit_code(Err(Outcome::Interrupted("run it again".into()).into())),
            ExitCode::from(INTERRUPTED)
        );
        assert_eq!(exit_code(Err(anyhow::anyhow!("no such store"))), ExitCode::from(ERROR));
        let wrapped = anyhow::Error::new(Outcome::Partial("x".into())).context("scan");
        assert_eq!(exit_code(Err(wrapped)), ExitCode::from(PARTIAL));
    }
}
