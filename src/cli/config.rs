//! Configuration as crawler users expect it: `--config FILE.toml` holding any long option of
//! the command it is given to, environment variables for the common ones (`DITTO_STORE`,
//! `DITTO_LABELSET`, `DITTO_USER_AGENT`, declared on the clap arguments), precedence flag >
//! environment > file > default; and shell completions and man pages generated from the clap
//! definitions (`ditto completions SHELL`, `ditto man DIR`).
//!
//! A file is a flat TOML table whose keys are long option names (`max-pages` or `max_pages`):
//!
//! ```toml
//! store = "crawl.db"
//! labelset = "wikipedia.dls"
//! user-agent = "ditto/0.1 (+https://example.org/bot)"
//! max-pages = 100000
//! seed = ["https://a.example/", "https://b.example/"]   # a repeated option
//! allow-private = false                                  # a switch: true gives it
//! ```

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::ArgAction;

/// The command line with the options of its `--config FILE` added where neither the command
/// line nor the environment gives them; without `--config`, the command line unchanged.
pub fn expand(args: Vec<OsString>, root: &clap::Command) -> Result<Vec<OsString>> {
    let (file, mut args) = take_config_flag(args)?;
    let Some(file) = file else { return Ok(args) };
    let text = std::fs::read_to_string(&file).with_context(|| format!("--config {}", file.display()))?;
    let table: toml::Table =
        text.parse().with_context(|| format!("--config {}: not a TOML table", file.display()))?;
    // The subcommand the file is for: the leading words of the command line naming one.
    let mut cmd = root;
    let mut at = 1;
    while let Some(sub) = args.get(at).and_then(|a| a.to_str()).and_then(|a| cmd.find_subcommand(a)) {
        cmd = sub;
        at += 1;
    }
    let path = args[1..at].iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ");
    let mut extra: Vec<OsString> = Vec::new();
    for (key, value) in &table {
        let long = key.replace('_', "-");
        let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(long.as_str())) else {
            bail!(
                "--config {}: `{key}` is not an option of `ditto {path}` (see `ditto {path} --help`)",
                file.display()
            );
        };
        if given_on_command_line(&args, &long) {
            continue;
        }
        if arg.get_env().is_some_and(|var| std::env::var_os(var).is_some()) {
            continue;
        }
        let flag = OsString::from(format!("--{long}"));
        let switch = matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count);
        let values: Vec<&toml::Value> = match value {
            toml::Value::Array(items) => items.iter().collect(),
            v => vec![v],
        };
        if let Some(joined) = delimited_list(arg, &values) {
            // One occurrence rather than one per item: clap keeps several hundred bytes for
            // each occurrence (`ditto crawl` with 100,000 `--resolve` mappings in a file
            // peaked at 101 MiB as 100,000 flags, 50 MiB as one value).
            extra.push(flag);
            extra.push(OsString::from(joined));
            continue;
        }
        for v in values {
            match (switch, v) {
                (true, toml::Value::Boolean(true)) => extra.push(flag.clone()),
                (true, toml::Value::Boolean(false)) => {}
                (true, _) => bail!("--config {}: `{key}` is a switch: write true or false", file.display()),
                (false, v) => {
                    extra.push(flag.clone());
                    extra.push(OsString::from(
                        scalar(v).with_context(|| format!("--config {}: `{key}`", file.display()))?,
                    ));
                }
            }
        }
    }
    let tail = args.split_off(at);
    args.extend(extra);
    args.extend(tail);
    Ok(args)
}

/// Remove `--config FILE` / `--config=FILE` from the command line (before a `--`).
fn take_config_flag(mut args: Vec<OsString>) -> Result<(Option<PathBuf>, Vec<OsString>)> {
    let mut i = 1;
    while i < args.len() {
        let a = args[i].to_string_lossy().into_owned();
        if a == "--" {
            break;
        }
        if a == "--config" {
            if i + 1 >= args.len() {
                bail!("--config needs a file (a TOML table of long options)");
            }
            let file = PathBuf::from(args.remove(i + 1));
            args.remove(i);
            return Ok((Some(file), args));
        }
        if let Some(f) = a.strip_prefix("--config=") {
            let file = PathBuf::from(f);
            args.remove(i);
            return Ok((Some(file), args));
        }
        i += 1;
    }
    Ok((None, args))
}

fn given_on_command_line(args: &[OsString], long: &str) -> bool {
    let flag = format!("--{long}");
    let with_value = format!("--{long}=");
    args.iter()
        .map(|a| a.to_string_lossy())
        .take_while(|a| a != "--")
        .any(|a| a == flag || a.starts_with(&with_value))
}

/// The items of a file's array for an option that splits its value at a delimiter, joined by
/// it: None when the option has no delimiter, the array has fewer than 2 items, or an item is
/// not a string or holds the delimiter itself (then each item is passed on its own).
fn delimited_list(arg: &clap::Arg, values: &[&toml::Value]) -> Option<String> {
    let d = arg.get_value_delimiter()?;
    if values.len() < 2 {
        return None;
    }
    let mut joined = String::new();
    for (i, v) in values.iter().enumerate() {
        let s = v.as_str().filter(|s| !s.contains(d))?;
        if i > 0 {
            joined.push(d);
        }
        joined.push_str(s);
    }
    Some(joined)
}

fn scalar(v: &toml::Value) -> Result<String> {
    Ok(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        _ => bail!("a value must be a string, number or boolean (or an array of them)"),
    })
}

/// `ditto completions SHELL`: the completion script on standard output.
pub fn completions(shell: clap_complete::Shell, mut cmd: clap::Command) -> Result<()> {
    // Into memory first: the generator panics on a write error (a closed pipe).
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "ditto", &mut buf);
    std::io::Write::write_all(&mut std::io::stdout().lock(), &buf)?;
    Ok(())
}

/// `ditto man DIR`: `ditto.1` and one page per subcommand (`ditto-crawl.1`, …) into `dir`.
pub fn man_pages(dir: &Path, cmd: clap::Command) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut n = 0;
    let mut todo = vec![(String::from("ditto"), cmd)];
    while let Some((name, cmd)) = todo.pop() {
        let cmd = cmd.name(name.clone());
        for sub in cmd.get_subcommands() {
            if sub.get_name() != "help" {
                todo.push((format!("{name}-{}", sub.get_name()), sub.clone()));
            }
        }
        let mut buf = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut buf)?;
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, buf).with_context(|| format!("writing {}", path.display()))?;
        n += 1;
    }
    eprintln!("wrote {n} man pages to {} (man -l {}/ditto.1)", dir.display(), dir.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, Command};

    fn cmd() -> Command {
        Command::new("ditto").subcommand(
            Command::new("crawl")
                .arg(Arg::new("store").long("store").env("DITTO_TEST_CONFIG_STORE"))
                .arg(Arg::new("max-pages").long("max-pages"))
                .arg(Arg::new("seed").long("seed").action(ArgAction::Append))
                .arg(Arg::new("resolve").long("resolve").action(ArgAction::Append).value_delimiter(','))
                .arg(Arg::new("allow-private").long("allow-private").action(ArgAction::SetTrue)),
        )
    }

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_file_list_for_a_delimited_option_is_one_occurrence() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("crawl.toml");
        std::fs::write(&f, "resolve = [\"a=1.2.3.4:80\", \"b=5.6.7.8:80\", \"*.c=9.9.9.9:8080\"]\n").unwrap();
        let got = expand(os(&["ditto", "crawl", "--config", f.to_str().unwrap()]), &cmd()).unwrap();
        let got: Vec<String> = got.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(got, ["ditto", "crawl", "--resolve", "a=1.2.3.4:80,b=5.6.7.8:80,*.c=9.9.9.9:8080"]);
        // clap splits it back into the same values.
        let m = cmd().get_matches_from(&got);
        let vals: Vec<&String> =
            m.subcommand_matches("crawl").unwrap().get_many("resolve").unwrap().collect();
        assert_eq!(vals, ["a=1.2.3.4:80", "b=5.6.7.8:80", "*.c=9.9.9.9:8080"]);
        // An item holding the delimiter is passed on its own, as is every item then.
        std::fs::write(
            &f,
            "resolve = [\"a=1.2.3.4:80\", \"x,y\"]\nseed = [\"http://a/?q=1,2\", \"http://b/\"]\n",
        )
        .unwrap();
        let got = expand(os(&["ditto", "crawl", "--config", f.to_str().unwrap()]), &cmd()).unwrap();
        let got: Vec<String> = got.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(got.iter().filter(|a| *a == "--resolve").count(), 2, "{got:?}");
        // No delimiter (seeds are URLs, which may hold commas): one flag per item.
        assert!(got.windows(2).any(|w| w == ["--seed", "http://a/?q=1,2"]), "{got:?}");
        assert_eq!(got.iter().filter(|a| *a == "--seed").count(), 2, "{got:?}");
    }

    #[test]
    fn file_options_fill_what_the_command_line_leaves_out() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("crawl.toml");
        std::fs::write(
            &f,
            "max_pages = 10\nstore = \"a.db\"\nseed = [\"http://a/\", \"http://b/\"]\nallow-private = true\n",
        )
        .unwrap();
        let got =
            expand(os(&["ditto", "crawl", "--config", f.to_str().unwrap(), "--max-pages", "5"]), &cmd())
                .unwrap();
        let got: Vec<String> = got.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(&got[..2], ["ditto", "crawl"]);
        assert!(got.windows(2).any(|w| w == ["--store", "a.db"]), "{got:?}");
        assert!(got.windows(2).any(|w| w == ["--seed", "http://b/"]), "{got:?}");
        assert!(got.contains(&"--allow-private".to_string()));
        // The command line wins: one --max-pages, the given one.
        assert_eq!(got.iter().filter(|a| *a == "--max-pages").count(), 1);
        assert!(got.windows(2).any(|w| w == ["--max-pages", "5"]));
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "max-page = 10\n").unwrap();
        let err = expand(os(&["ditto", "crawl", "--config", bad.to_str().unwrap()]), &cmd()).unwrap_err();
        assert!(err.to_string().contains("`max-page` is not an option of `ditto crawl`"), "{err}");
    }
}
