//! The layers of `src/`: no module reaches itself again through the
//! modules it imports, directly (`a <-> b`) or through others
//! (`a -> b -> c -> a`), from `src/lib.rs` down (the command line, `cli`,
//! included).
//!
//! An edge is drawn between siblings: a file's `crate::` and `super::` paths are lifted to the level just below
//! the module the file and the path have in common, so
//! `bench::contend::hogs` naming `crate::bench::contend::procs::Worker`
//! is `bench::contend::hogs -> bench::contend::procs`, and
//! `bench::ladder` naming `crate::report::Row` is `bench -> report`. A
//! parent and its child never form an edge; comments and everything after
//! a file's first `#[cfg(test)]` are not read (unit tests may reach
//! anywhere); an uppercase name in the parent (`super::Config`) is an
//! item, not a module.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::Path;

/// One source file and the module it is.
struct Source {
    module: Vec<String>,
    /// Its code: comment lines and everything from `#[cfg(test)]` on
    /// removed.
    code: String,
}

/// The file's code, without comment lines and without its tests.
fn code_of(text: &str) -> String {
    text.split("#[cfg(test)]")
        .next()
        .unwrap_or("")
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules `text` declares in files (`mod x;`), with the
/// `#[path = ".."]` each names, if any; those under `#[cfg(test)]` left
/// out.
fn declared_modules(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut path = None;
    let mut test = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("//") || line.is_empty() {
            continue;
        }
        if let Some(attr) = line.strip_prefix("#[") {
            if attr.starts_with("cfg(test)") {
                test = true;
            } else if let Some(p) = attr.strip_prefix("path") {
                path = p.split('"').nth(1).map(str::to_string);
            }
            continue;
        }
        let decl = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub(super) "))
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';'))
            && !test
        {
            out.push((name.trim().to_string(), path.take()));
        }
        path = None;
        test = false;
    }
    out
}

/// Reads `file`, the module `module`, and every module it
/// declares, as rustc finds them: `mod x;` in `a.rs` is `a/x.rs` or
/// `a/x/mod.rs`; in `mod.rs`, a crate root or a file named by
/// `#[path]`, `x.rs` or `x/mod.rs` beside it; `#[path = "p"]` is `p`
/// beside the declaring file.
fn read_tree(file: &Path, module: Vec<String>, owns_dir: bool, out: &mut Vec<Source>) {
    let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let here = file.parent().expect("a file has a directory");
    let dir = if owns_dir {
        here.to_path_buf()
    } else {
        here.join(file.file_stem().expect("a file has a name"))
    };
    for (name, path) in declared_modules(&text) {
        let mut child = module.clone();
        child.push(name.clone());
        let (child_file, child_owns_dir) = match path {
            Some(p) => (here.join(p), true),
            None => {
                let flat = dir.join(format!("{name}.rs"));
                if flat.exists() {
                    (flat, false)
                } else {
                    (dir.join(&name).join("mod.rs"), true)
                }
            }
        };
        read_tree(&child_file, child, child_owns_dir, out);
    }
    out.push(Source {
        module,
        code: code_of(&text),
    });
}

/// The paths a `use` tree or an expression starting at `s` names:
/// `crate::a::{b, c::D, self}` is `crate::a::b`, `crate::a::c::D` and
/// `crate::a`. Returns them and the bytes read.
fn paths_at(s: &str) -> (Vec<Vec<String>>, usize) {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut prefix: Vec<String> = Vec::new();
    let mut i = 0;
    loop {
        let end = s[i..].find(|c: char| !ident(c)).map_or(s.len(), |e| i + e);
        if end > i && &s[i..end] != "self" {
            prefix.push(s[i..end].to_string());
        }
        i = end;
        if !s[i..].starts_with("::") {
            return (vec![prefix], i);
        }
        i += 2;
        if s[i..].starts_with('{') {
            i += 1;
            let mut out = Vec::new();
            loop {
                i += s[i..].len() - s[i..].trim_start().len();
                if s[i..].starts_with('}') {
                    return (out, i + 1);
                }
                if s[i..].starts_with(',') {
                    i += 1;
                    continue;
                }
                let (inner, used) = paths_at(&s[i..]);
                if used == 0 {
                    // Something this reader does not know (`*`, `as`):
                    // skip a character.
                    if inner.iter().all(Vec::is_empty) {
                        out.push(prefix.clone());
                    }
                    i += s[i..].chars().next().map_or(1, char::len_utf8);
                    continue;
                }
                out.extend(inner.into_iter().map(|p| {
                    let mut full = prefix.clone();
                    full.extend(p);
                    full
                }));
                i += used;
                // `x as y`: the alias is no module.
                let rest = s[i..].trim_start();
                if let Some(alias) = rest.strip_prefix("as ") {
                    let alias = alias.trim_start();
                    let len = alias.find(|c: char| !ident(c)).unwrap_or(alias.len());
                    i = s.len() - alias.len() + len;
                }
            }
        }
    }
}

/// The module paths `code` names, resolved from `module`.
fn references(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let starts_word = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b':');
        let root: Option<(Vec<String>, bool)> = if !starts_word {
            None
        } else if rest.starts_with("crate::") {
            Some((Vec::new(), false))
        } else if rest.starts_with("super::") {
            Some((module.to_vec(), true))
        } else {
            None
        };
        let Some((base, relative)) = root else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let (paths, used) = paths_at(rest);
        for path in paths {
            let mut target = base.clone();
            let mut segs = path.into_iter().peekable();
            if relative {
                while segs.next_if(|s| s == "super").is_some() {
                    target.pop();
                }
            } else {
                segs.next();
            }
            target.extend(segs);
            out.push(target);
        }
        i += used.max(1);
    }
    out
}

/// The import edges between sibling modules of `sources`.
fn edges(sources: &[Source]) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for source in sources {
        let module = &source.module;
        for target in references(module, &source.code) {
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            if common >= module.len() || common >= target.len() {
                continue;
            }
            // A name in the parent (`super::Foo`) is not a sibling module.
            let to_is_module = target[common]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_lowercase());
            if to_is_module {
                edges
                    .entry(module[..=common].join("::"))
                    .or_default()
                    .insert(target[..=common].join("::"));
            }
        }
    }
    edges
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct Tarjan<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.insert(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.out.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !tarjan.index.contains_key(v.as_str()) {
            tarjan.visit(v);
        }
    }
    tarjan.out.sort();
    tarjan.out
}

/// A circle as chains a reader can follow, `a -> b -> c -> a`: the
/// shortest one through each module not yet shown in an earlier chain.
fn chains(component: &BTreeSet<String>, edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut shown: BTreeSet<&str> = BTreeSet::new();
    let mut out = Vec::new();
    for start in component {
        if shown.contains(start.as_str()) {
            continue;
        }
        // Breadth first from `start` back to it, inside the component.
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([start.as_str()]);
        'search: while let Some(v) = queue.pop_front() {
            for w in edges.get(v).into_iter().flatten() {
                if !component.contains(w) || came_from.contains_key(w.as_str()) {
                    continue;
                }
                came_from.insert(w, v);
                if w == start {
                    break 'search;
                }
                queue.push_back(w);
            }
        }
        let mut chain = vec![start.as_str()];
        let mut v = came_from[start.as_str()];
        while v != start {
            chain.push(v);
            v = came_from[v];
        }
        chain.push(start);
        chain.reverse();
        shown.extend(chain.iter().copied());
        out.push(chain.join(" -> "));
    }
    out
}

#[test]
fn the_reader_follows_use_trees() {
    let module: Vec<String> = ["bench", "contend", "hogs"].map(String::from).to_vec();
    let code = "use super::{job::Job, procs as p, self};\n\
                use crate::bench::{core::{schedule, Plan}, *};\n\
                let x = crate::report::svg::draw(super::super::ladder::X);";
    let found: Vec<String> = references(&module, code)
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        found,
        [
            "bench::contend::job::Job",
            "bench::contend::procs",
            "bench::contend",
            "bench::core::schedule",
            "bench::core::Plan",
            "bench",
            "report::svg::draw",
            "bench::ladder::X",
        ]
    );
}

#[test]
fn a_circle_of_three_is_found_and_told_as_a_chain() {
    // bench::contend as it was when the issue named it: hogs -> procs ->
    // job -> hogs, none of the three importing the one before it.
    let sources: Vec<Source> = [
        (
            "hogs",
            "use super::procs::spawn;\nuse crate::bench::core::Plan;",
        ),
        ("procs", "use super::{job::Job, Config};"),
        ("job", "pub fn run() { super::hogs::start() }"),
        ("mod", "use crate::report::contend::Text;"),
    ]
    .into_iter()
    .map(|(name, code)| {
        let mut module: Vec<String> = ["bench", "contend"].map(String::from).to_vec();
        if name != "mod" {
            module.push(name.to_string());
        }
        Source {
            module,
            code: code.to_string(),
        }
    })
    .collect();
    let edges = edges(&sources);
    let found = circles(&edges);
    assert_eq!(found.len(), 1, "{found:?} in {edges:?}");
    assert_eq!(
        chains(&found[0], &edges),
        [
            "bench::contend::hogs -> bench::contend::procs -> bench::contend::job -> bench::contend::hogs"
        ]
    );
}

#[test]
fn no_module_of_src_reaches_itself_through_its_imports() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = Vec::new();
    read_tree(&src.join("lib.rs"), Vec::new(), true, &mut sources);
    let cli = sources
        .iter()
        .filter(|s| s.module.first().is_some_and(|m| m == "cli"))
        .count();
    assert!(
        sources.len() > 120 && cli > 20,
        "read {} files, {cli} of them the command line's",
        sources.len()
    );
    let edges = edges(&sources);
    // A reader that sees no imports finds no circle: the tree has hundreds.
    let count: usize = edges.values().map(BTreeSet::len).sum();
    assert!(count > 200, "only {count} imports between sibling modules");
    let found: Vec<String> = circles(&edges)
        .iter()
        .flat_map(|c| chains(c, &edges))
        .collect();
    assert!(
        found.is_empty(),
        "modules that reach themselves through their imports:\n{}",
        found.join("\n")
    );
}
