//! The README's one test command does all the set-up a fresh machine (only Rust) needs, and
//! CI runs exactly that command (issue 25, item 9). `scripts/test.sh` runs here in a sandbox
//! whose PATH has no java, redis-server, python venv or Chromium: it must call each installer
//! and then `cargo test --workspace --release`; with everything present it installs nothing.

use std::fs;
use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The commands of the README's first fenced block (under "Set up on a fresh machine").
fn readme_setup_commands() -> Vec<String> {
    let readme = fs::read_to_string(root().join("README.md")).expect("reading README.md");
    let block = readme.split("```sh").nth(1).and_then(|b| b.split("```").next()).expect("a ```sh block");
    block.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect()
}

#[test]
fn readme_has_two_setup_commands_and_ci_runs_the_test_one() {
    let cmds = readme_setup_commands();
    assert_eq!(cmds, ["cargo run --release -- demo", "scripts/test.sh"], "README's set-up block");
    let ci = fs::read_to_string(root().join(".ci/run")).expect("reading .ci/run");
    let code: Vec<&str> =
        ci.lines().map(str::trim).filter(|l| !l.starts_with('#') && !l.is_empty()).collect();
    assert!(code.contains(&"scripts/test.sh"), ".ci/run must run the README's test command: {code:?}");
    assert!(
        !code.iter().any(|l| l.starts_with("cargo test") || l.contains("install_")),
        ".ci/run must not test or install beside scripts/test.sh (that would hide a gap in it): {code:?}"
    );
}

/// A sandbox copy of the repository's scripts with each installer replaced by one that logs
/// its name, a `cargo` that logs its arguments, and a PATH holding only those and the few
/// tools the script uses. `present` names the tools that are "installed" already.
fn run_sandboxed(present: &[&str]) -> (bool, String, String) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let repo = tmp.path().join("repo");
    let bin = tmp.path().join("bin");
    fs::create_dir_all(repo.join("scripts")).unwrap();
    fs::create_dir_all(tmp.path().join("shared/data")).unwrap();
    fs::create_dir_all(&bin).unwrap();
    let log = tmp.path().join("log");
    fs::copy(root().join("scripts/test.sh"), repo.join("scripts/test.sh")).unwrap();
    for name in ["install_java.sh", "install_redis.sh", "install_python.sh", "install_browser.sh"] {
        assert!(root().join("scripts").join(name).exists(), "scripts/{name} is missing");
        fs::write(repo.join("scripts").join(name), format!("echo {name} >> {}\n", log.display())).unwrap();
    }
    let stub = |name: &str, body: &str| {
        let p = bin.join(name);
        fs::write(&p, format!("#!/bin/bash\n{body}\n")).unwrap();
        Command::new("/bin/chmod").arg("+x").arg(&p).status().unwrap();
    };
    stub("cargo", &format!("echo \"cargo $*\" >> {}", log.display()));
    stub("id", "echo 0");
    stub("bash", "exec /bin/bash \"$@\"");
    stub("dirname", "/usr/bin/dirname \"$@\"");
    for tool in present {
        stub(tool, "exit 0");
    }
    let out = Command::new("/bin/bash")
        .arg(repo.join("scripts/test.sh"))
        .env_clear()
        .env("PATH", &bin)
        .output()
        .expect("running scripts/test.sh");
    let logged = fs::read_to_string(&log).unwrap_or_default();
    (out.status.success(), logged, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn test_script_installs_what_a_fresh_machine_lacks_then_runs_every_test() {
    let (ok, log, err) = run_sandboxed(&[]);
    assert!(ok, "scripts/test.sh failed: {err}");
    let lines: Vec<&str> = log.lines().collect();
    for installer in ["install_java.sh", "install_redis.sh", "install_python.sh"] {
        assert!(lines.contains(&installer), "{installer} not run on a machine without it: {lines:?}");
    }
    let test_at = lines.iter().position(|l| *l == "cargo test --workspace --release");
    let last_install = lines.iter().rposition(|l| l.starts_with("install_"));
    assert!(test_at.is_some() && test_at > last_install, "installs, then the tests: {lines:?}");
    assert!(lines.contains(&"cargo test --release --features parquet --test parquet_export"), "{lines:?}");
}

#[test]
fn test_script_installs_nothing_when_everything_is_there() {
    let (ok, log, err) = run_sandboxed(&["java", "redis-server", "python3"]);
    assert!(ok, "scripts/test.sh failed: {err}");
    let installs: Vec<&str> =
        log.lines().filter(|l| l.starts_with("install_") && *l != "install_browser.sh").collect();
    assert!(installs.is_empty(), "installed although present: {installs:?}");
    assert!(log.lines().any(|l| l == "cargo test --workspace --release"), "{log}");
}
