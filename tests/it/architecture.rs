//! ARCHITECTURE.md stays true: every file or folder path it names in backticks exists.

use std::path::Path;

/// The backticked spans of `text` that name a path of the repository: they contain a `/`
/// and no spaces, and start at a top-level folder or file that exists. `path::item` names
/// (`src/pipeline/stages.rs::filter`) are cut at the `::`; `{a,b}.rs` groups are expanded.
fn named_paths(text: &str, root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (i, span) in text.split('`').enumerate() {
        if i % 2 == 0 || span.contains(' ') || !span.contains('/') || span.contains("://") {
            continue;
        }
        let path = span.split("::").next().unwrap_or(span).trim_end_matches(['.', ',']);
        let top = path.split('/').next().unwrap_or("");
        if top.is_empty() || top == ".." || !root.join(top).exists() {
            continue;
        }
        out.extend(expand_braces(path));
    }
    out
}

/// `detector/src/{simhash,shingles}.rs` → both paths.
fn expand_braces(path: &str) -> Vec<String> {
    match (path.find('{'), path.find('}')) {
        (Some(a), Some(b)) if a < b => {
            path[a + 1..b].split(',').map(|alt| format!("{}{}{}", &path[..a], alt, &path[b + 1..])).collect()
        }
        _ => vec![path.to_string()],
    }
}

#[test]
fn every_path_architecture_md_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("reading ARCHITECTURE.md");
    let paths = named_paths(&text, root);
    assert!(paths.len() >= 30, "ARCHITECTURE.md should tour the code by path; found {}", paths.len());
    let missing: Vec<&String> = paths.iter().filter(|p| !root.join(p).exists()).collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md names paths that do not exist: {missing:?}");
}

#[test]
fn a_path_that_does_not_exist_is_caught() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let paths = named_paths("see `src/no_such_module.rs::run` and `detector/src/{clean,nope}.rs`", root);
    assert_eq!(paths, ["src/no_such_module.rs", "detector/src/clean.rs", "detector/src/nope.rs"]);
    assert!(paths.iter().any(|p| !root.join(p).exists()));
}

/// The modules of one crate's `src/` (`pipeline::stages`, …; `main.rs` left out), each with
/// the modules its code names: `crate::…` and `super::…` paths, and for a `mod.rs` or `lib.rs`
/// the children its code names by `child::`. Left out: test-only code (every item under
/// `#[cfg(test)]`: test modules and helpers may import anything) and a parent's `pub use
/// child::…` re-exports (the child's public face, not code of the parent that uses it).
fn module_imports(src: &Path) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let mut files = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("reading src/") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("src/main.rs") {
                files.push(path);
            }
        }
    }
    let module_of = |path: &Path| -> String {
        let rel = path.strip_prefix(src).expect("under src").with_extension("");
        let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
            parts.pop();
        }
        parts.join("::")
    };
    let modules: std::collections::BTreeSet<String> = files.iter().map(|f| module_of(f)).collect();
    let resolve = |path: &str| -> Option<String> {
        let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        (1..=segs.len()).rev().map(|n| segs[..n].join("::")).find(|m| modules.contains(m))
    };
    let mut graph = std::collections::BTreeMap::new();
    for file in &files {
        let module = module_of(file);
        let text = std::fs::read_to_string(file).expect("reading a module");
        let code: String = without_test_items(&text)
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let parent: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
        let parent = parent[..parent.len().saturating_sub(1)].join("::");
        let mut named = Vec::new();
        for (prefix, base) in [("crate::", String::new()), ("super::", parent.clone())] {
            for path in paths_after(&code, prefix) {
                named.push(if base.is_empty() { path } else { format!("{base}::{path}") });
            }
        }
        let is_dir_module = file.ends_with("mod.rs") || file.ends_with("lib.rs");
        if is_dir_module {
            let uses: String = code.lines().filter(|l| !is_re_export(l)).collect::<Vec<_>>().join("\n");
            for child in code.lines().filter_map(|l| l.trim().trim_start_matches("pub ").strip_prefix("mod "))
            {
                let child = child.trim_end_matches(';');
                if uses.contains(&format!("{child}::")) {
                    named.push(if module.is_empty() {
                        child.to_string()
                    } else {
                        format!("{module}::{child}")
                    });
                }
            }
        }
        let deps = named.iter().filter_map(|p| resolve(p)).filter(|m| *m != module).collect();
        graph.insert(module, deps);
    }
    graph
}

/// `pub use …;` or `pub(crate) use …;`: a re-export.
fn is_re_export(line: &str) -> bool {
    let l = line.trim_start();
    let l =
        l.strip_prefix("pub")
            .map(|r| if r.starts_with('(') { r.split_once(')').map_or("", |x| x.1) } else { r });
    l.is_some_and(|r| r.trim_start().starts_with("use "))
}

/// `text` without the items marked `#[cfg(test)]` (each up to its `;` or the brace that
/// closes its body; braces inside comments, strings and character literals do not count).
fn without_test_items(text: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let b = text.as_bytes();
    let mut out = String::new();
    let mut at = 0;
    while let Some(found) = text[at..].find(MARK) {
        let start = at + found;
        out.push_str(&text[at..start]);
        at = item_end(b, start + MARK.len());
    }
    out.push_str(&text[at.min(text.len())..]);
    out
}

/// Where the item starting at `i` ends: after its `;` (before any brace) or its closing brace.
fn item_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'"' => {
                // A raw string `r#"…"#` ends at `"` and as many `#`s as it opened with.
                let mut hashes = 0;
                while i > hashes && b[i - hashes - 1] == b'#' {
                    hashes += 1;
                }
                let raw = i > hashes && b[i - hashes - 1] == b'r';
                i += 1;
                while i < b.len() {
                    if !raw && b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == b'"'
                        && (!raw || b[i + 1..].iter().take(hashes).filter(|&&c| c == b'#').count() == hashes)
                    {
                        i += if raw { hashes } else { 0 };
                        break;
                    }
                    i += 1;
                }
            }
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 2,
            b';' if depth == 0 => return i + 1,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// The paths that follow `prefix` in `code`, with `prefix{a, b::c}` groups expanded.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        if code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + prefix.len()..];
        let head: String = rest.chars().take_while(|&c| is_path_char(c)).collect();
        let after = &rest[head.len()..];
        match after.strip_prefix('{').and_then(|g| g.split_once('}')) {
            Some((group, _)) => {
                for item in group.split(',') {
                    let item: String = item.trim().chars().take_while(|&c| is_path_char(c)).collect();
                    out.push(format!("{head}{item}"));
                }
            }
            None => out.push(head),
        }
    }
    out
}

/// The modules of a cycle in `graph`, if there is one (depth-first search).
fn find_cycle(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Option<Vec<String>> {
    fn visit<'a>(
        m: &'a str,
        graph: &'a std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        stack: &mut Vec<&'a str>,
        done: &mut std::collections::BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|s| *s == m) {
            return Some(stack[at..].iter().map(|s| s.to_string()).collect());
        }
        if !done.insert(m) {
            return None;
        }
        stack.push(m);
        for dep in graph.get(m).into_iter().flatten() {
            if let Some(cycle) = visit(dep, graph, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        None
    }
    let mut done = std::collections::BTreeSet::new();
    graph.keys().find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_of_the_engine_imports_one_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = module_imports(&root.join("src"));
    assert!(graph.len() >= 50, "found only {} modules under src/", graph.len());
    assert!(graph["pipeline::stages"].contains("live::neardups"), "the import scan misses imports");
    assert_eq!(find_cycle(&graph), None, "an import loop in src/");
    let engine_uses_cli: Vec<&String> = graph
        .iter()
        .filter(|(m, deps)| !m.starts_with("cli") && deps.iter().any(|d| d.starts_with("cli")))
        .map(|(m, _)| m)
        .collect();
    assert!(engine_uses_cli.is_empty(), "engine modules import the CLI: {engine_uses_cli:?}");
}

/// The crates of the repository: every folder at the top, one below it (`bindings/python`)
/// or the root itself, that holds a `Cargo.toml` and a `src/`.
fn crates(root: &Path) -> Vec<std::path::PathBuf> {
    let mut dirs = vec![root.to_path_buf()];
    for entry in std::fs::read_dir(root).expect("reading the repository") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !path.is_dir() || name.starts_with('.') || name == "target" {
            continue;
        }
        dirs.push(path.clone());
        if let Ok(inner) = std::fs::read_dir(&path) {
            dirs.extend(inner.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()));
        }
    }
    let mut found: Vec<_> =
        dirs.into_iter().filter(|d| d.join("Cargo.toml").is_file() && d.join("src").is_dir()).collect();
    found.sort();
    found
}

#[test]
fn no_crate_has_an_import_loop_among_its_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = crates(root);
    let names: Vec<String> =
        crates.iter().map(|c| c.strip_prefix(root).unwrap().display().to_string()).collect();
    for want in ["", "detector", "labelsets", "store", "crawler", "testweb", "fuzz", "bindings/python"] {
        assert!(names.iter().any(|n| n == want), "crate {want:?} not found among {names:?}");
    }
    let mut loops = Vec::new();
    for (dir, name) in crates.iter().zip(&names) {
        let graph = module_imports(&dir.join("src"));
        if let Some(cycle) = find_cycle(&graph) {
            loops.push(format!("{}/src: {}", if name.is_empty() { "." } else { name }, cycle.join(" -> ")));
        }
    }
    assert!(
        loops.is_empty(),
        "import loops (each module names the next, the last the first):\n{}",
        loops.join("\n")
    );
}

#[test]
fn a_planted_loop_in_a_crate_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("crawl")).unwrap();
    let write = |p: &str, t: &str| std::fs::write(src.join(p), t).unwrap();
    write("lib.rs", "pub mod crawl;\npub mod util;\n");
    write("util.rs", "pub fn now() -> u64 { 0 }\n#[cfg(test)]\nfn t() { crate::crawl::finish::f(); }\n");
    write("crawl/mod.rs", "mod finish;\nmod schedule;\npub use finish::f;\npub struct Config;\n");
    write("crawl/finish.rs", "use super::schedule::Scheduler;\npub fn f() -> u64 { crate::util::now() }\n");
    write("crawl/schedule.rs", "use super::Config;\npub struct Scheduler;\n#[cfg(test)]\nmod tests { use crate::crawl::finish::f; }\n");
    // Test-only code and the parent's re-export make no loop.
    assert_eq!(find_cycle(&module_imports(&src)), None);
    write("crawl/schedule.rs", "use super::finish::{f};\npub struct Scheduler;\n");
    assert_eq!(
        find_cycle(&module_imports(&src)),
        Some(vec!["crawl::finish".to_string(), "crawl::schedule".to_string()])
    );
}

#[test]
fn test_items_are_cut_whatever_their_braces_hold() {
    let text = "a\n#[cfg(test)]\nfn t() { let s = \"}{\"; let c = '}'; let r = r#\"}\"#; /* } */ // }\n}\nb\n#[cfg(test)]\nuse x::y;\nc";
    assert_eq!(without_test_items(text), "a\n\nb\n\nc");
    assert!(is_re_export("    pub use finish::f;") && is_re_export("pub(crate) use a::b;"));
    assert!(!is_re_export("use finish::f;") && !is_re_export("pub fn user() {}"));
}

#[test]
fn an_import_loop_is_found() {
    let mut graph = std::collections::BTreeMap::new();
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    graph.insert("report".to_string(), set(&["report::parquet"]));
    graph.insert("report::parquet".to_string(), set(&["report"]));
    graph.insert("pipeline".to_string(), set(&[]));
    assert_eq!(find_cycle(&graph), Some(vec!["report".to_string(), "report::parquet".to_string()]));
    assert_eq!(
        paths_after("use crate::report::{rows, merged::x};", "crate::"),
        ["report::rows", "report::merged::x"]
    );
}
