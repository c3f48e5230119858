//! The lists the README and docs/ keep of what the code defines, compared
//! with the code as sets, so that none can go stale: the commands, the
//! ladder's rungs, ipc's mechanisms, what a test may skip, and a command's
//! options (docs/testing.md, "The lists the docs keep").
//!
//! A list is the table, bullet list, code block or paragraph right under
//! a line `<!-- list: KIND -->` (several kinds: `; ` between them). KIND
//! is `subcommands`, `rungs`, `ipc mechanisms`, `skips` or `options of
//! CMD`, and names all of them; `some KIND` names only some (each must
//! exist); `part of KIND` is one of several blocks of a page that
//! together name all. Of a table the first column counts, of a bullet
//! what comes before its first `:`. The code's side: the command line
//! (`pipespeed::cli::Cli`), `Rung::ALL`, `Mechanism::ALL`, and the
//! `skip(...)` and `sys::available(...)` calls in tests/ and src/.
//!
//! The same pages' relative links must lead to a file and, with an
//! anchor, to one of its headings; the README must link every page of
//! docs/.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use pipespeed::bench::ipc::Mechanism;
use pipespeed::bench::ladder::Rung;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every docs/*.md: (the name from the root, the text).
fn pages() -> Vec<(String, String)> {
    let mut names = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    names.extend(docs);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root().join(&n)).unwrap();
            (n, text)
        })
        .collect()
}

/// What a page's line is, for the parser: inside a fenced code block or
/// not (a fence may be indented, in a bullet).
fn in_code(lines: &[&str]) -> Vec<bool> {
    let mut inside = false;
    lines
        .iter()
        .map(|l| {
            let fence = l.trim_start().starts_with("```") || l.trim_start().starts_with("~~~");
            if fence {
                inside = !inside;
                true
            } else {
                inside
            }
        })
        .collect()
}

/// The code spans of a piece of Markdown, in order.
fn spans(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        let ticks = rest[start..].chars().take_while(|&c| c == '`').count();
        let after = &rest[start + ticks..];
        let closing = "`".repeat(ticks);
        let Some(end) = after.find(&closing) else {
            break;
        };
        out.push(after[..end].trim().to_string());
        rest = &after[end + ticks..];
    }
    out
}

/// A table row's cells: split on `|` outside code spans, `\|` being a
/// `|` of the cell.
fn cells(row: &str) -> Vec<String> {
    let row = row.trim().trim_start_matches('|').trim_end_matches('|');
    let (mut out, mut cell, mut code) = (Vec::new(), String::new(), false);
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => cell.push(chars.next().unwrap()),
            '`' => {
                code = !code;
                cell.push(c);
            }
            '|' if !code => out.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    out.push(cell);
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// Whether a row is a table's separator (`| --- | ---: |`).
fn separator(row: &str) -> bool {
    cells(row)
        .iter()
        .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
}

/// The shape of a listed block.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Table,
    Bullets,
    Code,
    Paragraph,
}

/// A block under a marker: where, its shape, and its terms (a table's
/// first cells, each bullet's term, a code block's lines, a paragraph's
/// text), each with its line number.
#[derive(Debug)]
struct Block {
    page: String,
    line: usize,
    shape: Shape,
    terms: Vec<(usize, String)>,
}

/// The block that starts at `lines[at]` (0-based), its terms, and where
/// it ends.
fn block_at(lines: &[&str], code: &[bool], at: usize) -> (Shape, Vec<(usize, String)>) {
    let first = lines.get(at).map_or("", |l| l.trim());
    let mut terms = Vec::new();
    if first.starts_with("```") || first.starts_with("~~~") {
        for (i, l) in lines.iter().enumerate().skip(at + 1) {
            if !code[i] || l.trim_start().starts_with("```") {
                break;
            }
            terms.push((i + 1, format!("`{}`", l.replace('`', ""))));
        }
        (Shape::Code, terms)
    } else if first.starts_with('|') {
        let rows: Vec<(usize, &str)> = (at..lines.len())
            .take_while(|&i| lines[i].trim_start().starts_with('|'))
            .map(|i| (i, lines[i]))
            .collect();
        for (i, row) in rows.into_iter().skip(1) {
            if separator(row) {
                continue;
            }
            terms.push((i + 1, cells(row).swap_remove(0)));
        }
        (Shape::Table, terms)
    } else if first.starts_with("- ") || first.starts_with("* ") {
        for i in (at..lines.len()).take_while(|&i| !lines[i].trim().is_empty()) {
            let l = lines[i];
            if l.starts_with("- ") || l.starts_with("* ") {
                terms.push((i + 1, l[2..].to_string()));
            } else if let Some((_, term)) = terms.last_mut() {
                term.push(' ');
                term.push_str(l.trim());
            }
        }
        for (_, term) in &mut terms {
            *term = before_colon(term);
        }
        (Shape::Bullets, terms)
    } else {
        let text: Vec<&str> = (at..lines.len())
            .take_while(|&i| !lines[i].trim().is_empty())
            .map(|i| lines[i])
            .collect();
        terms.push((at + 1, text.join(" ")));
        (Shape::Paragraph, terms)
    }
}

/// A bullet's term: its text before the first `:` outside a code span.
fn before_colon(text: &str) -> String {
    let mut code = false;
    for (i, c) in text.char_indices() {
        match c {
            '`' => code = !code,
            ':' if !code => return text[..i].to_string(),
            _ => {}
        }
    }
    text.to_string()
}

/// Every marked block of every page, with the kinds its marker names.
fn marked() -> Vec<(Vec<String>, Block)> {
    let mut out = Vec::new();
    for (page, text) in pages() {
        let lines: Vec<&str> = text.lines().collect();
        let code = in_code(&lines);
        for (i, l) in lines.iter().enumerate() {
            let l = l.trim();
            let Some(kinds) = l
                .strip_prefix("<!-- list:")
                .and_then(|k| k.strip_suffix("-->"))
            else {
                continue;
            };
            assert!(!code[i], "{page}:{}: a list marker inside code", i + 1);
            let (shape, terms) = block_at(&lines, &code, i + 1);
            let kinds = kinds.split(';').map(|k| k.trim().to_string()).collect();
            let line = i + 1;
            let page = page.clone();
            out.push((
                kinds,
                Block {
                    page,
                    line,
                    shape,
                    terms,
                },
            ));
        }
    }
    out
}

/// The commands a user may type (clap's `help` and the hidden `worker`
/// aside).
fn subcommands() -> BTreeSet<String> {
    pipespeed::cli::Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect()
}

/// Options: every spelling (`--long`, `-s`, their aliases) of each of a
/// command's arguments, to the argument's id; and the ids a complete
/// list must name (not hidden, not `--help`/`--version`).
struct Options {
    names: BTreeMap<String, String>,
    required: BTreeSet<String>,
}

fn options_of(command: &str) -> Options {
    // Built, so that clap's own `-h`/`--help` and `-V`/`--version` are
    // among the arguments.
    let mut cli = pipespeed::cli::Cli::command();
    cli.build();
    let cmd = cli
        .get_subcommands()
        .find(|c| c.get_name() == command)
        .unwrap_or_else(|| panic!("no command {command:?} (`options of {command}`)"));
    let (mut names, mut required) = (BTreeMap::new(), BTreeSet::new());
    for arg in cmd.get_arguments() {
        if arg.is_positional() {
            continue;
        }
        let id = arg.get_id().to_string();
        let mut spellings: Vec<String> = Vec::new();
        if let Some(long) = arg.get_long() {
            spellings.push(format!("--{long}"));
        }
        if let Some(short) = arg.get_short() {
            spellings.push(format!("-{short}"));
        }
        for alias in arg.get_all_aliases().unwrap_or_default() {
            spellings.push(format!("--{alias}"));
        }
        for alias in arg.get_all_short_aliases().unwrap_or_default() {
            spellings.push(format!("-{alias}"));
        }
        let help = matches!(arg.get_long(), Some("help" | "version"));
        if !arg.is_hide_set() && !help {
            required.insert(id.clone());
        }
        for s in spellings {
            names.insert(s, id.clone());
        }
    }
    Options { names, required }
}

/// The option spellings a term names: the words of its code spans (a
/// code block's line is one) that start with `-`, cut at `=` or `[`;
/// `-abc` is `-a -b -c` unless `-abc` is a spelling itself.
fn option_words(term: &str, options: &Options) -> Vec<String> {
    let mut out = Vec::new();
    for span in spans(term) {
        for word in span.split(|c: char| c.is_whitespace() || ",/|()[]".contains(c)) {
            let word = word.split(['=', '[']).next().unwrap_or("");
            let Some(rest) = word.strip_prefix('-') else {
                continue;
            };
            let long = rest.strip_prefix('-');
            let valid = |s: &str| {
                s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            };
            match long {
                Some(name) if valid(name) => out.push(word.to_string()),
                Some(_) => {}
                None if !valid(rest) => {}
                None if rest.len() == 1 || options.names.contains_key(word) => {
                    out.push(word.to_string())
                }
                None => out.extend(rest.chars().map(|c| format!("-{c}"))),
            }
        }
    }
    out
}

/// What a term names of a set given by name: its code spans, each
/// normalised by `name`; `None` drops a span.
fn named(term: &str, name: impl Fn(&str) -> Vec<String>) -> Vec<String> {
    spans(term).iter().flat_map(|s| name(s)).collect()
}

/// The commands a span names: the words after `pipespeed` (`pipespeed
/// write | pipespeed read`), or the span itself if it is one word.
fn command_words(span: &str) -> Vec<String> {
    let words: Vec<&str> = span
        .split(|c: char| c.is_whitespace() || c == '|')
        .collect();
    if words.contains(&"pipespeed") {
        words
            .windows(2)
            .filter(|w| w[0] == "pipespeed" && w[1].chars().all(|c| c.is_ascii_lowercase()))
            .filter(|w| !w[1].is_empty())
            .map(|w| w[1].to_string())
            .collect()
    } else if words.len() == 1 && span.chars().all(|c| c.is_ascii_lowercase()) {
        vec![span.to_string()]
    } else {
        Vec::new()
    }
}

/// The `<WHAT>` of a span `PIPESPEED_REQUIRE_<WHAT>`.
fn skip_word(span: &str) -> Vec<String> {
    span.strip_prefix("PIPESPEED_REQUIRE_")
        .map(|w| vec![w.to_string()])
        .unwrap_or_default()
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The first argument of every call to `skip(` or `available(` (not a
/// method, not its definition) in `text`, whole-line comments left out:
/// (line, the argument as written).
fn skip_calls(text: &str) -> Vec<(usize, String)> {
    let mut code = String::new();
    let mut line_of = Vec::new();
    for (n, l) in text.lines().enumerate() {
        if l.trim_start().starts_with("//") {
            continue;
        }
        code.push_str(l);
        code.push('\n');
        line_of.resize(code.len(), n + 1);
    }
    let mut out = Vec::new();
    for name in ["skip(", "available("] {
        for (at, _) in code.match_indices(name) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
                continue;
            }
            if code[..at].trim_end().ends_with("fn") {
                continue;
            }
            let args = code[at + name.len()..].trim_start();
            let arg = if let Some(lit) = args.strip_prefix('"') {
                let end = lit.find('"').unwrap();
                format!("\"{}\"", &lit[..end])
            } else {
                let mut depth = 0;
                let end = args
                    .char_indices()
                    .find(|&(_, c)| {
                        match c {
                            '(' => depth += 1,
                            ')' if depth == 0 => return true,
                            ')' => depth -= 1,
                            ',' if depth == 0 => return true,
                            _ => {}
                        }
                        false
                    })
                    .map_or(args.len(), |(i, _)| i);
                args[..end].trim().to_string()
            };
            out.push((line_of[at], arg));
        }
    }
    out
}

/// Every `<WHAT>` a test may skip (as `PIPESPEED_REQUIRE_<WHAT>` names
/// it), with where one call is: from the `skip("what", ...)` calls in
/// tests/ and the `sys::available("what", ...)` calls of the unit tests in
/// src/. A call whose name is not a literal must be one this test knows.
fn skips() -> BTreeMap<String, String> {
    let facilities: Vec<String> = Mechanism::ALL
        .iter()
        .filter_map(|m| m.facility())
        .map(str::to_string)
        .collect();
    assert!(!facilities.is_empty());
    let mut out = BTreeMap::new();
    for dir in ["tests", "src"] {
        for file in sources(&root().join(dir)) {
            // This file's own strings and patterns are no skips.
            if file.ends_with("tests/doc_lists.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            let shown = file.strip_prefix(root()).unwrap().display().to_string();
            for (line, arg) in skip_calls(&text) {
                let whats = if let Some(lit) = arg.strip_prefix('"') {
                    vec![lit.trim_end_matches('"').to_string()]
                } else if arg.contains("facility()") {
                    facilities.clone()
                } else if arg == "what" {
                    // The helpers' own bodies pass their parameter on.
                    continue;
                } else {
                    panic!(
                        "{shown}:{line}: a skip named by `{arg}`: tests/doc_lists.rs \
                         cannot tell what it names; teach it (fn skips)"
                    );
                };
                for what in whats {
                    out.entry(what.to_uppercase())
                        .or_insert_with(|| format!("{shown}:{line}"));
                }
            }
        }
    }
    out
}

/// A finding: where, and what is wrong.
type Findings = Vec<String>;

/// Compares what `blocks` name with `code`: all of it (`exact`), or
/// only what exists.
fn compare_sets(
    kind: &str,
    blocks: &[&Block],
    items: &[(String, usize, String)],
    code: &BTreeSet<String>,
    exact: bool,
    found: &mut Findings,
) {
    let where_ = |b: &Block| format!("{}:{}", b.page, b.line);
    let at = blocks
        .iter()
        .map(|b| where_(b))
        .collect::<Vec<_>>()
        .join(", ");
    for (page, line, item) in items {
        if !code.contains(item) {
            found.push(format!(
                "{page}:{line}: {kind}: `{item}` is not in the code"
            ));
        }
    }
    if exact {
        let named: BTreeSet<&String> = items.iter().map(|(_, _, i)| i).collect();
        for missing in code.iter().filter(|c| !named.contains(c)) {
            found.push(format!("{at}: {kind}: the list lacks `{missing}`"));
        }
    }
}

/// The items of `block` for a set-valued kind.
fn items_of(kind: &str, block: &Block) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    for (line, term) in &block.terms {
        let names = match kind {
            "subcommands" => named(term, command_words),
            "rungs" | "ipc mechanisms" => named(term, |s| vec![s.to_string()]),
            "skips" => named(term, skip_word),
            _ => panic!("{}:{}: unknown list kind {kind:?}", block.page, block.line),
        };
        out.extend(names.into_iter().map(|n| (block.page.clone(), *line, n)));
    }
    out
}

/// Checks a group of blocks of one kind (one block, or every `part of`
/// block of a page).
fn check(kind: &str, exact: bool, blocks: &[&Block], found: &mut Findings) {
    for b in blocks {
        if b.terms.is_empty() {
            found.push(format!(
                "{}:{}: {kind}: no list under the marker",
                b.page, b.line
            ));
        }
    }
    if let Some(command) = kind.strip_prefix("options of ") {
        let options = options_of(command);
        let mut covered = BTreeSet::new();
        for b in blocks {
            let mut any = false;
            for (line, term) in &b.terms {
                for word in option_words(term, &options) {
                    any = true;
                    match options.names.get(&word) {
                        Some(id) => {
                            covered.insert(id.clone());
                        }
                        None => found.push(format!(
                            "{}:{line}: {kind}: `{word}` is no option of `pipespeed {command}`",
                            b.page
                        )),
                    }
                }
            }
            if !any {
                found.push(format!("{}:{}: {kind}: names no option", b.page, b.line));
            }
        }
        if exact {
            let at: Vec<String> = blocks
                .iter()
                .map(|b| format!("{}:{}", b.page, b.line))
                .collect();
            for id in options.required.difference(&covered) {
                let spelling = options
                    .names
                    .iter()
                    .filter(|(_, v)| *v == id)
                    .map(|(k, _)| k.as_str())
                    .max_by_key(|k| k.len())
                    .unwrap_or(id);
                found.push(format!(
                    "{}: {kind}: the list lacks `{spelling}` (`pipespeed {command} --help`)",
                    at.join(", ")
                ));
            }
        }
        return;
    }
    // A prose paragraph names many things in code; a list of names is a
    // table or bullets.
    for b in blocks
        .iter()
        .filter(|b| !matches!(b.shape, Shape::Table | Shape::Bullets))
    {
        found.push(format!(
            "{}:{}: {kind}: a list of names must be a table or bullets, not {:?}",
            b.page, b.line, b.shape
        ));
    }
    let code: BTreeSet<String> = match kind {
        "subcommands" => subcommands(),
        "rungs" => Rung::ALL.iter().map(|r| r.name().to_string()).collect(),
        "ipc mechanisms" => Mechanism::ALL
            .iter()
            .map(|m| m.name().to_string())
            .collect(),
        "skips" => skips().into_keys().collect(),
        _ => {
            let b = blocks[0];
            found.push(format!("{}:{}: unknown list kind {kind:?}", b.page, b.line));
            return;
        }
    };
    let items: Vec<_> = blocks.iter().flat_map(|b| items_of(kind, b)).collect();
    if kind == "skips" && exact {
        let named: BTreeSet<&String> = items.iter().map(|(_, _, i)| i).collect();
        for (what, at) in skips() {
            if !named.contains(&what) {
                found.push(format!(
                    "{at}: skips `PIPESPEED_REQUIRE_{what}`, which the list in {} lacks",
                    blocks[0].page
                ));
            }
        }
        compare_sets(kind, blocks, &items, &code, false, found);
        return;
    }
    compare_sets(kind, blocks, &items, &code, exact, found);
}

/// Every marked list against the code: what is wrong, one line each.
fn findings() -> Findings {
    let mut found = Vec::new();
    let blocks = marked();
    // (page, kind) -> the `part of` blocks.
    let mut parts: BTreeMap<(String, String), Vec<&Block>> = BTreeMap::new();
    for (kinds, block) in &blocks {
        for kind in kinds {
            if let Some(kind) = kind.strip_prefix("part of ") {
                parts
                    .entry((block.page.clone(), kind.to_string()))
                    .or_default()
                    .push(block);
            } else if let Some(kind) = kind.strip_prefix("some ") {
                check(kind, false, &[block], &mut found);
            } else {
                check(kind, true, &[block], &mut found);
            }
        }
    }
    for ((_, kind), group) in &parts {
        check(kind, true, group, &mut found);
    }
    found.extend(unmarked(&blocks));
    found
}

/// The tables that are lists of what the code defines but have no
/// marker: a first column headed `option`, or naming only rungs, only
/// mechanisms, only commands or only skips (three rows or more).
fn unmarked(blocks: &[(Vec<String>, Block)]) -> Findings {
    let marked: BTreeSet<(String, usize)> = blocks
        .iter()
        .map(|(_, b)| (b.page.clone(), b.line + 1))
        .collect();
    let rungs: BTreeSet<String> = Rung::ALL.iter().map(|r| r.name().to_string()).collect();
    let mechanisms: BTreeSet<String> = Mechanism::ALL
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    let commands = subcommands();
    let mut found = Vec::new();
    for (page, text) in pages() {
        let lines: Vec<&str> = text.lines().collect();
        let code = in_code(&lines);
        for i in 0..lines.len() {
            let starts = lines[i].trim_start().starts_with('|')
                && !code[i]
                && (i == 0 || !lines[i - 1].trim_start().starts_with('|'));
            if !starts || marked.contains(&(page.clone(), i + 1)) {
                continue;
            }
            let header = cells(lines[i]).swap_remove(0).to_lowercase();
            let (_, terms) = block_at(&lines, &code, i);
            let firsts: Vec<Vec<String>> = terms.iter().map(|(_, t)| spans(t)).collect();
            let all_in = |set: &BTreeSet<String>| {
                firsts.len() >= 3
                    && firsts
                        .iter()
                        .all(|s| !s.is_empty() && s.iter().all(|x| set.contains(x)))
            };
            let what = if header == "option" || header.ends_with(" option") {
                Some("options")
            } else if all_in(&rungs) {
                Some("rungs")
            } else if all_in(&mechanisms) {
                Some("ipc mechanisms")
            } else if all_in(&commands) {
                Some("commands")
            } else if firsts.len() >= 3
                && firsts
                    .iter()
                    .all(|s| s.iter().any(|x| x.starts_with("PIPESPEED_REQUIRE_")))
            {
                Some("skips")
            } else {
                None
            };
            if let Some(what) = what {
                found.push(format!(
                    "{page}:{}: a table of {what} with no `<!-- list: ... -->` line above it \
                     (`some {what}` if it names only some)",
                    i + 1
                ));
            }
        }
    }
    found
}

/// GitHub's anchor of a heading: its text (code, emphasis and link
/// marks dropped) in lower case, what is not a letter, a digit, a space,
/// `-` or `_` left out, spaces made `-`.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // [text](url) -> text
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings, the second of one name `-1`, and so on.
fn anchors(text: &str) -> BTreeSet<String> {
    let lines: Vec<&str> = text.lines().collect();
    let code = in_code(&lines);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (i, l) in lines.iter().enumerate() {
        if code[i] || !l.starts_with('#') {
            continue;
        }
        let heading = l
            .trim_start_matches('#')
            .trim()
            .trim_end_matches('#')
            .trim();
        let base = slug(heading);
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of a page's inline links (`[text](target)`), outside code,
/// with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let code = in_code(&lines);
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if code[i] {
            continue;
        }
        // Outside code spans only.
        let mut plain = String::new();
        for (n, part) in l.split('`').enumerate() {
            plain.push_str(if n % 2 == 0 { part } else { "" });
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push((i + 1, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    out
}

fn link_findings() -> Findings {
    let pages = pages();
    let by_name: BTreeMap<&str, &str> = pages
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let mut found = Vec::new();
    let mut from_readme = BTreeSet::new();
    for (page, text) in &pages {
        let dir = Path::new(page).parent().unwrap();
        for (line, target) in links(text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let name = if file.is_empty() {
                page.clone()
            } else {
                normalise(&dir.join(file))
            };
            if !root().join(&name).exists() {
                found.push(format!("{page}:{line}: a link to {target}: no file {name}"));
                continue;
            }
            if page == "README.md" {
                from_readme.insert(name.clone());
            }
            if let (Some(anchor), Some(text)) = (anchor, by_name.get(name.as_str()))
                && !anchors(text).contains(anchor)
            {
                found.push(format!(
                    "{page}:{line}: a link to {target}: {name} has no such heading"
                ));
            }
        }
    }
    for (page, _) in &pages {
        if page.starts_with("docs/") && !from_readme.contains(page) {
            found.push(format!("README.md: no link to {page}"));
        }
    }
    found
}

/// `docs/../README.md` -> `README.md`.
fn normalise(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::CurDir => {}
            c => parts.push(c.as_os_str().to_string_lossy().into_owned()),
        }
    }
    parts.join("/")
}

fn say(found: &Findings) -> String {
    found.join("\n")
}

#[test]
fn every_list_in_the_docs_is_the_codes() {
    let found = findings();
    assert!(
        found.is_empty(),
        "the docs' lists and the code differ:\n{}",
        say(&found)
    );
}

#[test]
fn every_link_of_the_docs_leads_somewhere_and_the_readme_links_every_page() {
    let found = link_findings();
    assert!(found.is_empty(), "{}", say(&found));
}

/// The lists are found: each kind at least once, and the skips a test
/// makes are among what the parser sees (the helpers' calls included).
#[test]
fn the_lists_and_the_skips_are_found() {
    let kinds: BTreeSet<String> = marked()
        .into_iter()
        .flat_map(|(k, _)| k)
        .map(|k| {
            k.trim_start_matches("part of ")
                .trim_start_matches("some ")
                .to_string()
        })
        .collect();
    for kind in [
        "subcommands",
        "rungs",
        "ipc mechanisms",
        "skips",
        "options of bench",
    ] {
        assert!(kinds.contains(kind), "no list of {kind}: {kinds:?}");
    }
    let skips = skips();
    for what in [
        "PV",
        "GNU_CAT",
        "PIPE_BENCH",
        "KERNELS",
        "IO_URING",
        "SO_ZEROCOPY",
        "MQUEUE",
    ] {
        assert!(skips.contains_key(what), "{what} not found among {skips:?}");
    }
}

/// The parser on made-up pages: a table, bullets, code, a paragraph;
/// `\|` in a cell; bundled short options; a skip named by a literal or
/// by a facility.
#[test]
fn the_parser_reads_what_the_pages_write() {
    assert_eq!(cells("| `a \\| b` | c |"), ["`a | b`", "c"]);
    assert_eq!(
        command_words("pipespeed write | pipespeed read"),
        ["write", "read"]
    );
    assert_eq!(command_words("pipespeed"), Vec::<String>::new());
    assert_eq!(command_words("bench"), ["bench"]);
    let lines = [
        "| a | b |",
        "| --- | --- |",
        "| `x` | 1 |",
        "| `y` | 2 |",
        "",
        "after",
    ];
    let code = in_code(&lines);
    let (shape, terms) = block_at(&lines, &code, 0);
    assert_eq!(shape, Shape::Table);
    assert_eq!(terms, [(3, "`x`".to_string()), (4, "`y`".to_string())]);
    let lines = [
        "- `one`: the first",
        "  more: of it",
        "- `two` and `three`: more",
        "",
    ];
    let (shape, terms) = block_at(&lines, &in_code(&lines), 0);
    assert_eq!(shape, Shape::Bullets);
    assert_eq!(terms[0].1, "`one`");
    assert_eq!(spans(&terms[1].1), ["two", "three"]);
    let pv = options_of("pv");
    assert_eq!(
        option_words("`-pterb` and `--format FORMAT`, `-M in|out`", &pv),
        ["-p", "-t", "-e", "-r", "-b", "--format", "-M"]
    );
    let calls = skip_calls(
        "// skip(\"not\", \"a comment\")\nfn skip(what: &str) {}\n\
         common::skip(\n    \"gnu_cat\",\n    \"why\",\n);\nx.skip(1);\n\
         skip(row.mechanism.facility().unwrap(), &why);\n",
    );
    assert_eq!(
        calls,
        [
            (3, "\"gnu_cat\"".to_string()),
            (8, "row.mechanism.facility().unwrap()".to_string())
        ]
    );
    assert_eq!(
        slug("The watchdog: `--stall-timeout`"),
        "the-watchdog---stall-timeout"
    );
    assert_eq!(slug("Sizes (pv 1.12's rule)"), "sizes-pv-112s-rule");
    assert_eq!(
        slug("pipe_bench's own words: `--pipe-bench FILE`"),
        "pipe_benchs-own-words---pipe-bench-file"
    );
}

/// The README's top is the answer (issue 48): within its first 15 lines
/// the two set-up commands, each with what it does, and no other command
/// before them; and it stays one page or so, at most 250 lines.
#[test]
fn the_readme_opens_with_the_two_set_up_commands() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= 250, "README.md has {} lines", lines.len());
    let top = &lines[..15.min(lines.len())];
    let code = in_code(top);
    let commands: Vec<&str> = top
        .iter()
        .zip(&code)
        .filter(|(l, inside)| **inside && !l.trim_start().starts_with("```"))
        .map(|(l, _)| l.trim())
        .collect();
    assert_eq!(commands.len(), 2, "{commands:?}");
    for (line, command) in commands.iter().zip(["cargo run --release ", "cargo test "]) {
        assert!(line.starts_with(command), "{line:?}");
        let (_, says) = line.split_once('#').unwrap_or_else(|| panic!("{line:?}"));
        assert!(
            says.contains("about") || says.contains("minute"),
            "{line:?}: how long?"
        );
    }
}
