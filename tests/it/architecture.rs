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

/// The modules of the root crate's `src/` (`pipeline::stages`, …; `main.rs` left out), each
/// with the modules its code names: `crate::…` and `super::…` paths, and for a `mod.rs` the
/// children it names by `child::`. Test modules are left out: they may import anything.
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
        let code: String = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or("")
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
            for child in code.lines().filter_map(|l| l.trim().trim_start_matches("pub ").strip_prefix("mod "))
            {
                let child = child.trim_end_matches(';');
                if code.contains(&format!("{child}::")) {
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
