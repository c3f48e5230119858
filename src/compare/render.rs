//! A [`Comparison`] as an aligned table for a terminal or a mail, as
//! GitHub-flavoured Markdown for a pull request, and as the text kernel
//! developers paste in a patch mail ([`lkml()`]). Pure functions, tested
//! on fixed data.

mod lkml;
pub(crate) use lkml::lkml;

use std::fmt::Write as _;

use super::bootstrap::Interval;
use super::conditions::describe;
use super::{Comparison, Line, Outcome, Pair, Side, Table, Verdict};
use crate::bench::core::compared::{Better, Unit};
use crate::bench::core::noise::{MAX_HALF_WIDTH, MAX_OVER_MIN};
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

/// The table on stdout: a header naming both files, one table per
/// metric, a footer on the verdicts and the machines.
pub(crate) fn text(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "pipespeed compare: {} (base) vs {} (new), {}",
        c.base, c.new, c.schema
    );
    let _ = writeln!(out, "{}", method(c));
    for table in &c.tables {
        let _ = writeln!(out, "\n{}", heading(table));
        let (head, rows, widths) = layout(c, table, 0);
        let _ = writeln!(out, "{}", aligned(&head, &widths).join("  ").trim_end());
        for row in rows {
            let _ = match row {
                Cells::Full(cols) => {
                    writeln!(out, "{}", aligned(&cols, &widths).join("  ").trim_end())
                }
                Cells::Span(name, text) => writeln!(out, "{name:<w$}  {text}", w = widths[0]),
            };
        }
    }
    out += &format!("\n{}", legend(c).join("\n"));
    out += &wrap(&format!("\nsystem: {}", facts_line(c)), 78, "  ");
    if let Some(line) = noise_line(c) {
        out += &wrap(&format!("noise: {line}"), 78, "  ");
    }
    if let Some(line) = settings_line(c) {
        out += &wrap(&format!("settings that differ: {line}"), 78, "  ");
    }
    for note in &c.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// A Markdown version for a pull request or a mail: the same tables,
/// the legend and one line of the machines' facts.
pub(crate) fn markdown(c: &Comparison) -> String {
    let mut out = format!(
        "`pipespeed compare {} {}` ({}): {}\n",
        c.base,
        c.new,
        c.schema,
        method(c)
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
    out
}

fn method(c: &Comparison) -> String {
    let b = &c.bootstrap;
    format!(
        "medians of the runs; ratio = new/base, with its {} interval from {} bootstrap \
         resamples (seed {})",
        percent(b.confidence),
        b.resamples,
        b.seed
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

fn legend(c: &Comparison) -> Vec<String> {
    let p = percent(c.bootstrap.confidence);
    let mut lines = vec![
        format!("faster, slower: significant: the whole {p} interval of the ratio excludes 1."),
        "~: no significant change: the interval contains 1.".into(),
        "?: fewer than 2 runs on a side: no interval, never significant. runs: base/new.".into(),
    ];
    if any_noisy(c) {
        lines.push(format!(
            "noisy: base, new or both: that file's runs spread over more than {MAX_OVER_MIN}x,"
        ));
        lines.push(format!(
            "  or their 95% interval of the mean is wider than +-{:.0}%: a median to trust less.",
            MAX_HALF_WIDTH * 100.0
        ));
    }
    lines
}

/// Whether a compared row is noisy in either file.
fn any_noisy(c: &Comparison) -> bool {
    (c.tables.iter().flat_map(|t| &t.lines)).any(|l| match &l.outcome {
        Outcome::Compared(change) => change.noisy_in().is_some(),
        _ => false,
    })
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
        match change.noisy_in() {
            None => verdict(change.verdict).into(),
            Some(files) => format!("{} (noisy: {files})", verdict(change.verdict)),
        },
    ])
}

fn interval(i: Interval) -> String {
    format!("[{:.3}, {:.3}]", i.low, i.high)
}

/// How a verdict is printed, as benchstat prints it.
pub(crate) fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::NoChange => "~",
        Verdict::TooFewRuns => "?",
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
