//! `compare --lkml`: a [`Comparison`] in the form kernel developers paste
//! into a patch mail (docs/compare.md, "--lkml"): 78 columns where the
//! numbers allow, the machines' facts, per metric `base -> patched
//! (change)` with `*+12%*` where mmtests' rule
//! ([`MeanTest`](super::super::bootstrap::MeanTest)) finds it significant,
//! a legend and the command. Nothing is computed here that
//! [`compare`](super::super::compare) did not.

use std::fmt::Write as _;

use super::super::bootstrap::Bootstrap;
use super::super::conditions::describe;
use super::super::{
    Comparison, DRIFT, Kind, Line, MIN_CHANGE, Outcome, Pair, Side, Table, Verdict,
};
use super::{percent, value, wrap};
use crate::bench::contend::pipe_bench::LOG_FORMAT;
use crate::bench::core::compared::{Better, NOT_RECORDED, Unit, parse_cell_name};
use crate::bench::core::noise::{MAX_HALF_WIDTH, MAX_OVER_MIN};
use crate::quote::quote_file_name;
use crate::units::{Size, readable_ns};

/// The width a mail's lines keep to (RFC 5322 asks for 78 characters).
const WIDTH: usize = 78;
/// The width of the labels of the facts block.
const LABEL: usize = 16;
/// What marks a row whose runs are noisy in base or patched.
const NOISY: &str = "!";
/// What marks a change without a verdict: fewer than 2 runs a side,
/// within the drift of one file a side, another machine.
const NO_VERDICT: &str = "?";

/// The legend: what the change's form and the marks say, in mmtests'
/// words where it has them (compare-kernels writes a significant
/// difference between stars).
fn legend() -> String {
    format!(
        "\
*+12%*: called: the means differ by more than the half-widths of their two
  95% intervals together (Student's t), mmtests' rule, and the change passes
  {} with one file a side (two invocations drift that far), {} with
  several (then judged on each file's median). (+12%): not called. Changes
  are of the medians. {NO_VERDICT} no verdict: fewer than 2 runs on a side, a change
  within the drift, or two machines. {NOISY} noisy runs in base or patched
  (spread over {MAX_OVER_MIN}x or an interval wider than +-{:.0}%).
",
        percent(DRIFT),
        percent(MIN_CHANGE),
        MAX_HALF_WIDTH * 100.0
    )
}

/// The whole mail text: facts, one block per metric, legend, command.
pub(crate) fn lkml(c: &Comparison) -> String {
    let mut out = header(c);
    for grid in grids(c) {
        out.push('\n');
        out += &grid.render();
    }
    if !c.notes.is_empty() {
        out.push('\n');
    }
    for note in &c.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out.push('\n');
    out += &legend();
    let _ = writeln!(out, "{}", command(c));
    out
}

/// `pipespeed compare --lkml BASE NEW` and the options that were not
/// the defaults, so that pasting it prints the same.
fn command(c: &Comparison) -> String {
    if let Some(command) = &c.command {
        return command.clone();
    }
    let quote =
        |name: &str| String::from_utf8_lossy(&quote_file_name(name.as_bytes(), true)).into_owned();
    let mut line = format!(
        "pipespeed compare --lkml {} {}",
        quote(&c.base),
        quote(&c.new)
    );
    let (b, default) = (&c.bootstrap, Bootstrap::default());
    if b.confidence != default.confidence {
        let _ = write!(line, " --confidence {}", b.confidence);
    }
    if b.resamples != default.resamples {
        let _ = write!(line, " --resamples {}", b.resamples);
    }
    if b.seed != default.seed {
        let _ = write!(line, " --seed {}", b.seed);
    }
    line
}

/// The first line and the facts, `base -> patched` where they differ.
fn header(c: &Comparison) -> String {
    // Both sides the kernel's pipe_bench's output: its name, not ours.
    let tool = match c.schema == LOG_FORMAT {
        true => LOG_FORMAT.to_string(),
        false => format!("pipespeed {}", c.kind),
    };
    let mut out = format!("{tool}: base -> patched (change), medians of the runs\n");
    let fact = |name: &str| c.facts.iter().find(|p| p.name == name);
    let shown = [
        ("kernel", "kernel"),
        ("cpu", "cpu_model"),
        ("cpus online", "cpus_online"),
        ("virtualization", "virtualization"),
        ("pipe-max-size", "pipe_max_size_bytes"),
        ("thp", "thp"),
        ("placement", "placement"),
    ];
    for (label, name) in shown {
        let (base, new) = match fact(name) {
            Some(p) if name == "pipe_max_size_bytes" => (bytes(&p.base), bytes(&p.new)),
            Some(p) => (p.base.clone(), p.new.clone()),
            // A fact neither file records.
            None => (NOT_RECORDED.into(), NOT_RECORDED.into()),
        };
        out += &fact_line(label, &base, &new);
    }
    let n = &c.conditions;
    if n.recorded() {
        let (base, new) = (describe(n.base.as_ref()), describe(n.new.as_ref()));
        out += &fact_line("noise", &base, &new);
    }
    out += &fact_line(
        &format!("runs per {}", row_word(c.kind)),
        &runs(c, Side::Base),
        &runs(c, Side::New),
    );
    if !c.settings.is_empty() {
        let items: Vec<String> = (c.settings.iter())
            .map(|p: &Pair| format!("{} {} -> {}", p.name, p.base, p.new))
            .collect();
        let text = format!("{:LABEL$}{}", "settings", items.join("; "));
        out += &wrap(&text, WIDTH, &" ".repeat(LABEL));
    }
    out
}

/// `label value`, or `label base -> new`, broken before the arrow when
/// the line would pass [`WIDTH`].
fn fact_line(label: &str, base: &str, new: &str) -> String {
    if base == new {
        return format!("{label:LABEL$}{base}\n");
    }
    let line = format!("{label:LABEL$}{base} -> {new}");
    if line.chars().count() <= WIDTH {
        return line + "\n";
    }
    format!("{label:LABEL$}{base}\n{:>w$} {new}\n", "->", w = LABEL - 1)
}

/// A byte count as `1MiB`; `unknown` for 0 (the file could not be read).
fn bytes(text: &str) -> String {
    match text.parse::<u64>() {
        Ok(0) => "unknown".into(),
        Ok(n) => Size(n).to_string(),
        Err(_) => text.into(),
    }
}

fn row_word(kind: Kind) -> &'static str {
    match kind {
        Kind::Bench => "rung",
        Kind::Latency => "size",
        Kind::Contend => "cell",
        Kind::Ipc => "row",
    }
}

/// The runs of one side's compared rows: `5`, or `3-5` when they differ.
fn runs(c: &Comparison, side: Side) -> String {
    let counts = c
        .tables
        .iter()
        .flat_map(|t| &t.lines)
        .filter_map(|l| match &l.outcome {
            Outcome::Compared(change) => Some(match side {
                Side::Base => change.base_runs,
                Side::New => change.new_runs,
            }),
            _ => None,
        });
    let (low, high) = counts.fold((usize::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
    match (low, high) {
        (usize::MAX, _) => "none compared".into(),
        (lo, hi) if lo == hi => lo.to_string(),
        (lo, hi) => format!("{lo}-{hi}"),
    }
}

/// The blocks of each kind: pipe_bench's grid per contend metric, p50
/// and p99 side by side per message size, one line per rung.
fn grids(c: &Comparison) -> Vec<Grid> {
    match c.kind {
        Kind::Contend => (c.tables.iter())
            .map(|t| matrix(t).unwrap_or_else(|| list(t)))
            .collect(),
        Kind::Latency => {
            let tails: Vec<&Table> = (c.tables.iter())
                .filter(|t| t.metric.unit == Unit::Nanoseconds)
                .collect();
            vec![sizes(&tails)]
        }
        Kind::Bench | Kind::Ipc => c.tables.iter().map(list).collect(),
    }
}

fn title(table: &Table, rows: &str) -> String {
    let better = match table.metric.better {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    };
    format!("{} ({better}){rows}:", table.metric.name)
}

/// One line per row, one column.
fn list(table: &Table) -> Grid {
    Grid {
        title: title(table, ""),
        corner: String::new(),
        heads: vec![String::new()],
        rows: (table.lines.iter())
            .map(|line| (line.row.clone(), vec![cell(line, table.metric.unit, false)]))
            .collect(),
    }
}

/// Writers as rows, readers as columns; `None` if a row is not a cell.
fn matrix(table: &Table) -> Option<Grid> {
    let cells: Vec<((usize, usize), &Line)> = (table.lines.iter())
        .map(|line| Some((parse_cell_name(&line.row)?, line)))
        .collect::<Option<_>>()?;
    let sorted = |pick: fn(&(usize, usize)) -> usize| {
        let mut v: Vec<usize> = cells.iter().map(|(wr, _)| pick(wr)).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (writers, readers) = (sorted(|wr| wr.0), sorted(|wr| wr.1));
    let rows = writers.iter().map(|&w| {
        let row = readers.iter().map(|&r| {
            let found = cells.iter().find(|(wr, _)| *wr == (w, r));
            found.map_or(Cell::Empty, |(_, line)| cell(line, table.metric.unit, true))
        });
        (w.to_string(), row.collect())
    });
    Some(Grid {
        title: title(table, ", writers (w) x readers (r)"),
        corner: "w\\r".into(),
        heads: readers.iter().map(usize::to_string).collect(),
        rows: rows.collect(),
    })
}

/// One line per message size, a column per latency metric.
fn sizes(tables: &[&Table]) -> Grid {
    let names: Vec<&str> = (tables.iter())
        .flat_map(|t| t.lines.iter().map(|l| l.row.as_str()))
        .fold(Vec::new(), |mut names, name| {
            if !names.contains(&name) {
                names.push(name);
            }
            names
        });
    let rows = names.iter().map(|&name| {
        let row = tables.iter().map(|t| {
            let line = t.lines.iter().find(|l| l.row == name);
            line.map_or(Cell::Empty, |l| cell(l, t.metric.unit, false))
        });
        (name.to_string(), row.collect())
    });
    Grid {
        title: "round trip latency (lower is better):".into(),
        corner: "size".into(),
        heads: tables
            .iter()
            .map(|t| t.metric.name.trim_start_matches("round trip ").to_string())
            .collect(),
        rows: rows.collect(),
    }
}

/// One row's outcome as a cell; `short` for the grid's narrow columns.
fn cell(line: &Line, unit: Unit, short: bool) -> Cell {
    let number = |v: f64| match (unit, short) {
        (Unit::Nanoseconds, true) => short_ns(v),
        (Unit::Nanoseconds, false) => readable_ns(v),
        _ => value(unit, v),
    };
    let reason = |why: &str| match why {
        "no runs" => String::new(),
        why => format!(" ({why})"),
    };
    match &line.outcome {
        Outcome::Compared(change) => Cell::Change {
            base: number(change.base_median),
            new: number(change.new_median),
            delta: match change.verdict.called() {
                true => format!("*{}*", delta(change.ratio)),
                false => format!("({})", delta(change.ratio)),
            },
            mark: match change.verdict {
                Verdict::Noisy => NOISY,
                v if v.unknown() => NO_VERDICT,
                _ => "",
            },
        },
        Outcome::Placements { .. } => Cell::Note("not compared: placements differ".into()),
        Outcome::OnlyIn(Side::Base) => Cell::Note("base only".into()),
        Outcome::OnlyIn(Side::New) => Cell::Note("patched only".into()),
        Outcome::NoRuns { base, new } => Cell::Note(match (base, new) {
            (Some(b), Some(n)) if b == n => format!("no runs{}", reason(b)),
            (Some(b), _) => format!("no runs in base{}", reason(b)),
            (_, Some(n)) => format!("no runs in patched{}", reason(n)),
            (None, None) => "no runs".into(),
        }),
        Outcome::BadValues(side) => Cell::Note(match side {
            Side::Base => "bad values in base".into(),
            Side::New => "bad values in patched".into(),
        }),
    }
}

/// The change in percent: one decimal below 10%, whole percents above,
/// where a tenth no longer matters and the grid needs the room.
fn delta(ratio: f64) -> String {
    let d = (ratio - 1.0) * 100.0;
    if d.abs() < 9.95 {
        format!("{d:+.1}%")
    } else {
        format!("{d:+.0}%")
    }
}

/// A duration with three significant digits and no space (`812ns`,
/// `45.6us`, `135us`, `3.86ms`): pipe_bench's grid of p99 latencies then
/// fits in 78 columns, where `readable_ns`' `135.20 us` would not.
fn short_ns(ns: f64) -> String {
    let (v, unit) = match ns {
        n if n < 1e3 => return format!("{n:.0}ns"),
        n if n < 1e6 => (n / 1e3, "us"),
        n if n < 1e9 => (n / 1e6, "ms"),
        n => (n / 1e9, "s"),
    };
    let decimals = match v {
        v if v >= 99.95 => 0,
        v if v >= 9.995 => 1,
        _ => 2,
    };
    format!("{v:.decimals$}{unit}")
}

/// A block: a title, a heading row (if any), then labelled rows.
struct Grid {
    title: String,
    corner: String,
    heads: Vec<String>,
    rows: Vec<(String, Vec<Cell>)>,
}

/// What one position of a grid shows.
enum Cell {
    /// `base -> new (delta)` and a mark.
    Change {
        base: String,
        new: String,
        delta: String,
        mark: &'static str,
    },
    /// A few words instead: only in one file, no runs.
    Note(String),
    /// A cell neither file has (the grids of the two differ).
    Empty,
}

/// The widths of one column's parts.
#[derive(Default, Clone, Copy)]
struct Widths {
    base: usize,
    new: usize,
    delta: usize,
    mark: usize,
    all: usize,
}

impl Grid {
    fn render(&self) -> String {
        let columns = self.heads.len();
        let mut widths = vec![Widths::default(); columns];
        for (w, head) in widths.iter_mut().zip(&self.heads) {
            w.all = head.chars().count();
        }
        for (_, cells) in &self.rows {
            for (w, cell) in widths.iter_mut().zip(cells) {
                if let Cell::Change {
                    base,
                    new,
                    delta,
                    mark,
                } = cell
                {
                    w.base = w.base.max(base.chars().count());
                    w.new = w.new.max(new.chars().count());
                    w.delta = w.delta.max(delta.chars().count());
                    w.mark = w.mark.max(mark.chars().count());
                }
            }
        }
        for (col, w) in widths.iter_mut().enumerate() {
            let change = w.base + " -> ".len() + w.new + 1 + w.delta + w.mark;
            let notes = (self.rows.iter())
                .filter_map(|(_, cells)| match cells.get(col) {
                    Some(Cell::Note(text)) => Some(text.chars().count()),
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            w.all = w.all.max(notes).max(if w.base > 0 { change } else { 0 });
        }
        let label = (self.rows.iter())
            .map(|(name, _)| name.chars().count())
            .chain([self.corner.chars().count()])
            .max()
            .unwrap_or(0);
        // Two spaces between columns; one after a column of marks, whose
        // slot is blank where a cell has none.
        let join = |texts: Vec<String>| {
            let mut line = String::new();
            for (text, w) in texts.iter().zip(&widths) {
                line += text;
                line += if w.mark > 0 { " " } else { "  " };
            }
            line
        };
        let mut out = format!("{}\n", self.title);
        if self.heads.iter().any(|h| !h.is_empty()) {
            let heads = self
                .heads
                .iter()
                .zip(&widths)
                .map(|(h, w)| format!("{h:<0$}", w.all));
            let line = format!("{:label$}  {}", self.corner, join(heads.collect()));
            let _ = writeln!(out, "{}", line.trim_end());
        }
        for (name, cells) in &self.rows {
            let texts = cells.iter().zip(&widths).map(|(cell, w)| {
                let text = match cell {
                    Cell::Change {
                        base,
                        new,
                        delta,
                        mark,
                    } => format!(
                        "{base:>bw$} -> {new:>nw$} {delta:>dw$}{mark}",
                        bw = w.base,
                        nw = w.new,
                        dw = w.delta
                    ),
                    Cell::Note(text) => text.clone(),
                    Cell::Empty => String::new(),
                };
                format!("{text:<0$}", w.all)
            });
            let line = format!("{name:label$}  {}", join(texts.collect()));
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out
    }
}

#[cfg(test)]
mod tests;
