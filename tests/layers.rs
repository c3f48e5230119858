//! The layers of `src/bench`: no module imports a sibling that imports
//! it back (the kinds build on `bench::core`, never on each other in a
//! circle; a kind's `job`, `run` and `result` build on each other one
//! way).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file under `src/`: `bench/ladder/mod.rs` is
/// `bench::ladder`.
fn module_of(file: &Path, src: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The module paths `code` names, resolved from `module`: `super::x`,
/// `crate::bench::x`, `self::x`.
fn references(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if starts_word && (rest.starts_with("super::") || rest.starts_with("crate::")) {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let path: Vec<&str> = rest[..end].split("::").filter(|s| !s.is_empty()).collect();
            let mut base: Vec<String> = Vec::new();
            let mut segs = path.iter().peekable();
            if path.first() == Some(&"crate") {
                segs.next();
            } else {
                base = module.to_vec();
                while segs.peek() == Some(&&"super") {
                    segs.next();
                    base.pop();
                }
            }
            base.extend(segs.map(|s| s.to_string()));
            out.push(base);
            i += end;
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

#[test]
fn no_module_of_bench_imports_a_sibling_that_imports_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src.join("bench"), &mut files);
    assert!(
        files.len() > 20,
        "found {} files under src/bench",
        files.len()
    );
    let mut edges: BTreeSet<(String, String)> = BTreeSet::new();
    for file in &files {
        let module = module_of(file, &src);
        let text = fs::read_to_string(file).unwrap_or_default();
        // Code only: comments (and doc links) are not dependencies, and
        // unit tests may reach anywhere.
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or("")
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for target in references(&module, &code) {
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            if common < 1 || common >= module.len() || common >= target.len() {
                continue;
            }
            let (from, to) = (&module[..=common], &target[..=common]);
            // A name in the parent (`super::Foo`) is not a sibling module.
            let to_is_module = to[common]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_lowercase());
            if to_is_module && from != to {
                edges.insert((from.join("::"), to.join("::")));
            }
        }
    }
    let circles: Vec<String> = edges
        .iter()
        .filter(|(a, b)| a < b && edges.contains(&(b.clone(), a.clone())))
        .map(|(a, b)| format!("{a} <-> {b}"))
        .collect();
    assert!(
        circles.is_empty(),
        "modules that import each other:\n{}",
        circles.join("\n")
    );
}
