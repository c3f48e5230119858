//! A [`Comparison`] as an aligned table for a terminal or a mail, as
//! GitHub-flavoured Markdown for a pull request, and as the text kernel
//! developers paste in a patch mail ([`lkml()`]). Pure functions, tested
//! on fixed data.

mod lkml;
pub(crate) use lkml::lkml;

use std::fmt::Write as _;

use super::bootstrap::Interval;
use super::conditions::describe;
use super::{Change, Comparison, DRIFT, Line, MIN_CHANGE, Outcome, Pair, Side, Table, Verdict};
use crate::bench::contend::pipe_bench::LOG_FORMAT;
use crate::bench::core::compared::{Better, Unit};
use crate::bench::core::noise::{MAX_HALF_WIDTH, MAX_OVER_MIN};
use crate::report::text::wrap_hanging;
use crate::units::readable_ns;

/// The columns of a compared row, after the row's name.
const HEADINGS: [&str; 7] = ["base", "new", "runs", "delta", "ratio", "CI", "verdict"];
/// Which columns are numbers (right-aligned), the name's included.
const RIGHT: [bool; 8] = [false, true, true, true, true, true, false, false];

/// One line of a table: every column, or a name and a sentence.
enum Cells {
    Full([String; 8]),
    Span(String, String),
}

/// The table on stdout, in lines of at most `width` columns: a header
/// naming both files and the rule, one table per metric (the ratio and
/// the interval left out where they would not fit), why a row has no
/// verdict, the machines, and the answer last, where the eye lands.
pub(crate) fn text(c: &Comparison, width: usize) -> String {
    let mut out = String::new();
    let head = format!(
        "pipespeed compare: {} (base) vs {} (new), {}",
        c.base, c.new, c.schema
    );
    let _ = writeln!(out, "{}", wrap_hanging(&head, width, 2));
    let _ = writeln!(out, "{}", wrap_hanging(&rule(c), width, 2));
    for table in &c.tables {
        let _ = writeln!(out, "\n{}", wrap_hanging(&heading(table), width, 2));
        let (head, rows, widths) = layout(c, table, 0);
        let shown = columns(&widths, width);
        let pick = |cols: &[String; 8]| -> String {
            let cells = aligned(cols, &widths);
            let kept: Vec<&str> = (cells.iter().zip(shown))
                .filter_map(|(cell, show)| show.then_some(cell.as_str()))
                .collect();
            kept.join("  ").trim_end().to_string()
        };
        let _ = writeln!(out, "{}", pick(&head));
        for row in rows {
            let _ = match row {
                Cells::Full(cols) => writeln!(out, "{}", pick(&cols)),
                Cells::Span(name, text) => {
                    let line = format!("{name:<w$}  {text}", w = widths[0]);
                    writeln!(out, "{}", wrap_hanging(&line, width, widths[0] + 2))
                }
            };
        }
    }
    out.push('\n');
    for line in legend(c) {
        let _ = writeln!(out, "{}", wrap_hanging(&line, width, 2));
    }
    out += &items(&format!("system: {}", facts_line(c)), width);
    if let Some(line) = noise_line(c) {
        out += &items(&format!("noise: {line}"), width);
    }
    if let Some(line) = settings_line(c) {
        out += &items(&format!("settings that differ: {line}"), width);
    }
    for note in &c.notes {
        let _ = writeln!(out, "{}", wrap_hanging(&format!("note: {note}"), width, 2));
    }
    for line in answer(c) {
        let _ = writeln!(out, "{}", wrap_hanging(&line, width, 2));
    }
    out
}

/// A list of `; `-separated items in lines of at most `width`, broken
/// between items, and within an item (at a space) only where one alone
/// is wider; ends with a newline.
fn items(text: &str, width: usize) -> String {
    let lines = wrap(text, width, "  ");
    let fitted: Vec<String> = (lines.lines())
        .map(|line| {
            if line.chars().count() <= width {
                return line.to_string();
            }
            match line.strip_prefix("  ") {
                Some(rest) => (wrap_hanging(rest, width - 2, 0).lines())
                    .map(|l| format!("  {l}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                None => wrap_hanging(line, width, 2),
            }
        })
        .collect();
    fitted.join("\n") + "\n"
}

/// Which columns the text table shows in `width`: all where they fit;
/// else without the ratio (the delta says it), then without the
/// interval.
fn columns(widths: &[usize; 8], width: usize) -> [bool; 8] {
    let total = |shown: &[bool; 8]| -> usize {
        let kept = (widths.iter().zip(shown)).filter(|(_, s)| **s);
        let (sum, n) = kept.fold((0, 0), |(sum, n), (w, _)| (sum + w, n + 1));
        sum + 2 * (n - 1)
    };
    let mut shown = [true; 8];
    for drop in [5, 6] {
        if total(&shown) <= width {
            break;
        }
        shown[drop] = false;
    }
    shown
}

/// A Markdown version for a pull request or a mail: the same tables,
/// the legend and one line of the machines' facts.
pub(crate) fn markdown(c: &Comparison) -> String {
    let mut out = format!(
        "`pipespeed compare {} {}` ({}): {}\n",
        c.base,
        c.new,
        c.schema,
        rule(c)
    );
    for table in &c.tables {
        let _ = writeln!(out, "\n**{}**\n", heading(table));
        // A dash rule needs 3 characters; the colon takes one more.
        let (head, rows, widths) = layout(c, table, 4);
        let rule = widths.map(|w| "-".repeat(w - 1));
        let rule = rule.iter().zip(RIGHT).map(|(dashes, right)| {
            if right {
                format!("{dashes}:")
            } else {
                format!(":{dashes}")
            }
        });
        let _ = writeln!(out, "| {} |", aligned(&head, &widths).join(" | "));
        let _ = writeln!(out, "| {} |", rule.collect::<Vec<_>>().join(" | "));
        for row in rows {
            let cols = match row {
                Cells::Full(cols) => cols.map(|col| escape(&col)),
                Cells::Span(name, text) => {
                    let mut cols: [String; 8] = Default::default();
                    (cols[0], cols[7]) = (escape(&name), escape(&text));
                    cols
                }
            };
            let _ = writeln!(out, "| {} |", aligned(&cols, &widths).join(" | "));
        }
    }
    let legend: Vec<String> = legend(c).iter().map(|l| l.trim().to_string()).collect();
    let _ = writeln!(out, "\n{}", legend.join(" "));
    let _ = writeln!(out, "\nSystem: {}", facts_line(c));
    if let Some(line) = noise_line(c) {
        let _ = writeln!(out, "\nNoise: {line}");
    }
    if let Some(line) = settings_line(c) {
        let _ = writeln!(out, "\nSettings that differ: {line}");
    }
    for note in &c.notes {
        let _ = writeln!(out, "\nNote: {note}");
    }
    let _ = writeln!(out, "\n{}", answer(c).join(" "));
    out
}

/// The rule the verdicts follow, named, with the samples it read.
fn rule(c: &Comparison) -> String {
    let b = &c.bootstrap;
    let (samples, floor) = match c.files {
        (b, n) if b >= 2 && n >= 2 => (
            format!("each file's median ({b} and {n} files)"),
            percent(MIN_CHANGE),
        ),
        _ => (
            "the runs".to_string(),
            format!("{}, the drift between invocations", percent(DRIFT)),
        ),
    };
    format!(
        "rule: mmtests' on {samples} (means apart by more than both 95% half-widths) and a \
         change past {floor}; CI: the ratio's, {} bootstrap resamples (seed {})",
        b.resamples, b.seed
    )
}

fn heading(t: &Table) -> String {
    match t.metric.better {
        Better::Higher => format!("{} (higher is better)", t.metric.name),
        Better::Lower => format!("{} (lower is better: a lower new is faster)", t.metric.name),
    }
}

fn headings(c: &Comparison) -> [String; 8] {
    let mut head: [String; 8] = Default::default();
    head[0] = c.kind.row_label().to_string();
    for (h, text) in head[1..].iter_mut().zip(HEADINGS) {
        *h = text.to_string();
    }
    head[6] = format!("{} CI", percent(c.bootstrap.confidence));
    head
}

/// The changes of every table, as the verdicts' counts.
fn verdicts(c: &Comparison) -> impl Iterator<Item = (&Line, &Change)> {
    (c.tables.iter().flat_map(|t| &t.lines)).filter_map(|l| match &l.outcome {
        Outcome::Compared(change) => Some((l, change)),
        _ => None,
    })
}

/// What each mark the tables show means: only the marks shown.
fn legend(c: &Comparison) -> Vec<String> {
    let shown = |v: Verdict| verdicts(c).any(|(_, ch)| ch.verdict == v);
    let floor = percent(DRIFT);
    let mut lines = vec![
        "faster, slower: called by the rule; ~: no change it can call; runs: base/new.".to_string(),
    ];
    if shown(Verdict::WithinDrift) {
        lines.push(format!(
            "? drift: past the noise of one file's runs, but under {floor}: two invocations of \
             one binary drift that far (splice-limit +20.8% between two default ladders)."
        ));
    }
    if shown(Verdict::Noisy) {
        lines.push(format!(
            "? noisy: that side's runs (or files) spread over {MAX_OVER_MIN}x, or their 95% \
             interval of the mean is wider than +-{:.0}%: no median to judge by.",
            MAX_HALF_WIDTH * 100.0
        ));
    }
    if shown(Verdict::TooFewRuns) {
        lines.push("? 1 run: fewer than 2 runs on a side: no interval.".into());
    }
    if shown(Verdict::OtherMachine) {
        lines.push("? machine: the files come from different machines.".into());
    }
    lines
}

/// The answer, last: the verdicts counted, the changes called, and how
/// to get a verdict where there is none.
fn answer(c: &Comparison) -> Vec<String> {
    let count = |f: fn(Verdict) -> bool| verdicts(c).filter(|(_, ch)| f(ch.verdict)).count();
    let called: Vec<String> = (verdicts(c))
        .filter(|(_, ch)| ch.verdict.called())
        .map(|(l, ch)| {
            let word = verdict(ch.verdict);
            format!("{} {word} {:+.1}%", l.row, (ch.ratio - 1.0) * 100.0)
        })
        .collect();
    let rows = |n: usize| {
        if n == 1 {
            "1 row".to_string()
        } else {
            format!("{n} rows")
        }
    };
    let refused = (c.tables.iter().flat_map(|t| &t.lines))
        .filter(|l| matches!(l.outcome, Outcome::Placements { .. }))
        .count();
    let counts: Vec<String> = [
        (count(|v| v == Verdict::NoChange), " ~"),
        (count(Verdict::unknown), " ?"),
        (refused, " not compared: placements differ"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| rows(n) + what)
    .collect();
    let mut first = match called.len() {
        0 => "answer: no change called".to_string(),
        _ => format!("answer: {}", called.join(", ")),
    };
    if !counts.is_empty() {
        let _ = write!(first, " ({})", counts.join(", "));
    }
    first.push('.');
    let mut lines = vec![first];
    let has = |v: Verdict| verdicts(c).any(|(_, ch)| ch.verdict == v);
    let mut how = Vec::new();
    if has(Verdict::WithinDrift) {
        how.push(
            "several files a side (a directory of results each, from separate invocations: \
             compare DIR_A DIR_B)",
        );
    }
    if has(Verdict::Noisy) || has(Verdict::TooFewRuns) {
        // pipe_bench has no --runs: a run of it is a log.
        how.push(match c.schema == LOG_FORMAT {
            true => "more logs a side (5 or more, in a directory each) on a quiet machine",
            false => "more runs (--runs 10 or more) on a quiet machine",
        });
    }
    if !how.is_empty() {
        lines.push(format!("for a verdict: {}.", how.join("; or ")));
    }
    lines
}

/// Each file's noise, `file quiet (steal ...)`, when either records it.
fn noise_line(c: &Comparison) -> Option<String> {
    let n = &c.conditions;
    n.recorded().then(|| {
        format!(
            "{} {}; {} {}",
            c.base,
            describe(n.base.as_ref()),
            c.new,
            describe(n.new.as_ref())
        )
    })
}

/// The machines' facts, `name value` or `name base -> new`.
fn facts_line(c: &Comparison) -> String {
    pairs_line(&c.facts)
}

/// The settings that differ, `name base -> new`, or `None`.
fn settings_line(c: &Comparison) -> Option<String> {
    (!c.settings.is_empty()).then(|| pairs_line(&c.settings))
}

fn pairs_line(pairs: &[Pair]) -> String {
    let items: Vec<String> = (pairs.iter())
        .map(|p| match p.base == p.new {
            true => format!("{} {}", p.name, p.base),
            false => format!("{} {} -> {}", p.name, p.base, p.new),
        })
        .collect();
    items.join("; ")
}

fn cells(c: &Comparison, line: &Line, unit: Unit) -> Cells {
    let name = line.row.clone();
    let file = |side: Side| match side {
        Side::Base => c.base.as_str(),
        Side::New => c.new.as_str(),
    };
    let change = match &line.outcome {
        Outcome::Compared(change) => change,
        Outcome::OnlyIn(side) => return Cells::Span(name, format!("only in {}", file(*side))),
        Outcome::NoRuns { base, new } => {
            let why = match (base, new) {
                (Some(b), Some(n)) if b == n => format!("no runs in either file ({b})"),
                _ => [(base, Side::Base), (new, Side::New)]
                    .iter()
                    .filter_map(|(why, side)| {
                        Some(format!("no runs in {} ({})", file(*side), why.as_ref()?))
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            return Cells::Span(name, why);
        }
        Outcome::Placements { base, new } => {
            let text = format!(
                "not compared: ends placed {base} in {}, {new} in {}",
                c.base, c.new
            );
            return Cells::Span(name, text);
        }
        Outcome::BadValues(side) => {
            let text = format!(
                "cannot compare: a run in {} is zero, negative or not a number",
                file(*side)
            );
            return Cells::Span(name, text);
        }
    };
    Cells::Full([
        name,
        value(unit, change.base_median),
        value(unit, change.new_median),
        format!("{}/{}", change.base_runs, change.new_runs),
        format!("{:+.1}%", (change.ratio - 1.0) * 100.0),
        format!("{:.3}", change.ratio),
        change.interval.map_or("-".into(), interval),
        match (change.verdict, change.noisy_in()) {
            (Verdict::Noisy, Some(files)) => format!("? noisy: {files}"),
            (v, _) => verdict(v).into(),
        },
    ])
}

fn interval(i: Interval) -> String {
    format!("[{:.3}, {:.3}]", i.low, i.high)
}

/// How a verdict is printed: benchstat's `~`, and `?` with why.
pub(crate) fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::NoChange => "~",
        Verdict::TooFewRuns => "? 1 run",
        Verdict::Noisy => "? noisy",
        Verdict::WithinDrift => "? drift",
        Verdict::OtherMachine => "? machine",
    }
}

/// A metric's value in a readable unit.
pub(crate) fn value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::GibPerS => format!("{v:.2}"),
        Unit::Nanoseconds => readable_ns(v),
        Unit::PerSecond => match v {
            v if v < 1e3 => format!("{v:.1}"),
            v if v < 1e6 => format!("{:.1}k", v / 1e3),
            v if v < 1e9 => format!("{:.2}M", v / 1e6),
            v => format!("{:.2}G", v / 1e9),
        },
    }
}

fn percent(fraction: f64) -> String {
    format!("{}%", (fraction * 1000.0).round() / 10.0)
}

/// The headings, the rows and the columns' widths (at least `min`);
/// a sentence spanning a row's columns widens none but the name's.
fn layout(c: &Comparison, table: &Table, min: usize) -> ([String; 8], Vec<Cells>, [usize; 8]) {
    let head = headings(c);
    let rows: Vec<Cells> = (table.lines.iter())
        .map(|l| cells(c, l, table.metric.unit))
        .collect();
    let mut widths = head.clone().map(|h| h.len().max(min));
    for row in &rows {
        match row {
            Cells::Full(cols) => {
                for (w, col) in widths.iter_mut().zip(cols) {
                    *w = (*w).max(col.chars().count());
                }
            }
            Cells::Span(name, _) => widths[0] = widths[0].max(name.chars().count()),
        }
    }
    (head, rows, widths)
}

/// Each column padded to its width, left or right as [`RIGHT`] says.
fn aligned(cols: &[String; 8], widths: &[usize; 8]) -> Vec<String> {
    let padded = cols.iter().zip(widths).zip(RIGHT);
    padded
        .map(|((col, &w), right)| {
            if right {
                format!("{col:>w$}")
            } else {
                format!("{col:<w$}")
            }
        })
        .collect()
}

/// `text` broken at `; ` into lines of at most `width` characters where
/// it can be, the lines after the first indented; ends with a newline.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for item in text.split_inclusive("; ") {
        if !line.trim().is_empty() && line.chars().count() + item.trim_end().chars().count() > width
        {
            out += line.trim_end();
            out.push('\n');
            line = indent.to_string();
        }
        line += item;
    }
    out += line.trim_end();
    out.push('\n');
    out
}

/// A Markdown table cell cannot hold a bare `|`.
fn escape(cell: &str) -> String {
    cell.replace('|', "\\|")
}

#[cfg(test)]
mod tests;
