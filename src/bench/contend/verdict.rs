//! The answer at a glance: the best and the worst cell, what more writers
//! and more readers do to the rate, what `--verify` found, and how far to
//! trust it, in a few lines that agree with the table under them (the
//! same medians, the same rounding). `--verify`'s judgement of each run
//! is [`tally`](super::tally).

use serde::{Deserialize, Serialize, Serializer};

use super::hogs::PressureReport;
use super::job::{Mode, counted, ends};
use super::result::{ContendResult, Row};
use crate::bench::core::harness::Header;
use crate::bench::core::shown::status_word;
use crate::bench::core::{NoiseSummary, Placement};
use crate::bench::core::{Status, Trust};

/// What a contend measurement says, in a few lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// How far to trust the figures.
    pub trust: Trust,
    /// The answer as the text report prints it, a line each (the text
    /// wraps the long ones).
    pub lines: Vec<String>,
}

/// `2x5`, as the table's notes name a cell.
pub(crate) fn cell_name(row: &Row) -> String {
    format!("{}x{}", row.writers, row.readers)
}

/// `1x1 40000 writes/s (2500.0 MiB/s)`, as the table rounds them.
fn figure(row: &Row) -> String {
    format!(
        "{} {:.0} writes/s ({:.1} MiB/s)",
        cell_name(row),
        row.median_writes_per_s(),
        row.mib_per_s
    )
}

/// `4.0x` or `0.53x`: one decimal from 1 up, two below.
fn times(x: f64) -> String {
    match x >= 1.0 {
        true => format!("{x:.1}x"),
        false => format!("{x:.2}x"),
    }
}

/// How the rate changes from the fewest to the most `what` (writers or
/// readers), the other count held at its smallest: `1 -> 5 writers (1
/// reader): 0.53x`.
fn scaling(rows: &[&Row], writers: bool) -> Option<String> {
    let counts = |r: &Row| match writers {
        true => (r.writers, r.readers),
        false => (r.readers, r.writers),
    };
    let (count, other) = (|r: &Row| counts(r).0, |r: &Row| counts(r).1);
    let fixed = rows.iter().map(|r| other(r)).min()?;
    let line: Vec<&&Row> = rows.iter().filter(|r| other(r) == fixed).collect();
    let low = line.iter().min_by_key(|r| count(r))?;
    let high = line.iter().max_by_key(|r| count(r))?;
    let (lo, hi) = (low.median_writes_per_s(), high.median_writes_per_s());
    if count(low) == count(high) || lo <= 0.0 {
        return None;
    }
    let (many, held) = match writers {
        true => ("writer", "reader"),
        false => ("reader", "writer"),
    };
    Some(format!(
        "{} -> {} ({}): {}",
        count(low),
        counted(count(high), many),
        counted(fixed, held),
        times(hi / lo)
    ))
}

/// What `--verify` found over every cell (`None`: not asked).
fn verify_words(r: &ContendResult) -> Option<String> {
    let checked: Vec<&Row> = r.rows.iter().filter(|row| row.verify.is_some()).collect();
    if checked.is_empty() {
        return None;
    }
    let failed: Vec<String> = (checked.iter())
        .filter(|row| row.verify.is_some_and(|v| !v.ok))
        .map(|row| cell_name(row))
        .collect();
    let cells = match checked.len() {
        1 => "the cell".to_string(),
        n => format!("all {n} cells"),
    };
    Some(match failed.is_empty() {
        true if r.atomic => {
            format!("every message received whole and exactly once in {cells}")
        }
        true => format!("every message received exactly once in {cells}"),
        false => format!(
            "FAILED in {} of {} cells ({}): the verify lines under the table say what",
            failed.len(),
            checked.len(),
            failed.join(", ")
        ),
    })
}

/// Why a cell is missing, in the table's words.
fn status_words(status: Status) -> &'static str {
    match status {
        Status::Ok => "no runs",
        other => status_word(other),
    }
}

impl ContendResult {
    /// What the figures say, from the rows: the best and the worst cell,
    /// how the rate changes with more writers and more readers, what
    /// `--verify` found, the cells that could not be measured, and how
    /// far to trust it all.
    pub fn verdict(&self) -> Verdict {
        let measured: Vec<&Row> = (self.rows.iter())
            .filter(|r| !r.runs.is_empty() && r.writes_per_s.median.is_some())
            .collect();
        let by_rate =
            |a: &&&Row, b: &&&Row| a.median_writes_per_s().total_cmp(&b.median_writes_per_s());
        let mut lines = Vec::new();
        match (
            measured.iter().max_by(by_rate),
            measured.iter().min_by(by_rate),
        ) {
            (Some(best), Some(worst)) if measured.len() > 1 => {
                lines.push(format!("best:       {}", figure(best)));
                lines.push(format!("worst:      {}", figure(worst)));
            }
            (Some(only), _) => lines.push(format!(
                "rate:       {}: {:.0} writes/s ({:.1} MiB/s)",
                ends(only.writers, only.readers),
                only.median_writes_per_s(),
                only.mib_per_s
            )),
            _ => lines.push("rate:       no cell was measured".to_string()),
        }
        let scales: Vec<String> = [true, false]
            .into_iter()
            .filter_map(|writers| scaling(&measured, writers))
            .collect();
        if !scales.is_empty() {
            lines.push(format!("scaling:    writes/s {}", scales.join("; ")));
        }
        if let Some(words) = verify_words(self) {
            lines.push(format!("verify:     {words}"));
        }
        let missing: Vec<String> = (self.rows.iter())
            .filter(|r| r.status != Status::Ok || r.runs.is_empty())
            .map(|r| format!("{} {}", cell_name(r), status_words(r.status)))
            .collect();
        if !missing.is_empty() {
            lines.push(format!(
                "missing:    {} (the notes above say why)",
                missing.join(", ")
            ));
        }
        let rows = (self.rows.iter()).map(|r| (cell_name(r), &r.writes_per_s));
        let trust = Trust::of(rows, self.noise);
        lines.push(format!("trust:      {}", trust.line));
        Verdict { trust, lines }
    }
}

/// The fields, in their order, then the verdict the rows give (here, not
/// in `result`, which the verdict reads).
impl Serialize for ContendResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Document<'a> {
            #[serde(flatten)]
            header: &'a Header,
            mode: &'a Mode,
            placement: &'a Placement,
            pipe_size: usize,
            pipe_size_requested: usize,
            pipe_size_clamped: bool,
            msg_size: usize,
            atomic: bool,
            duration_s: f64,
            warmup_duration_s: f64,
            runs_per_cell: usize,
            max_runs_per_cell: Option<usize>,
            seed: Option<u64>,
            noise: Option<NoiseSummary>,
            memory_pressure: &'a Option<PressureReport>,
            rows: &'a [Row],
            verdict: Verdict,
        }
        // Every field by name: one added to ContendResult and not here
        // does not compile.
        let ContendResult {
            header,
            mode,
            placement,
            pipe_size,
            pipe_size_requested,
            pipe_size_clamped,
            msg_size,
            atomic,
            duration_s,
            warmup_duration_s,
            runs_per_cell,
            max_runs_per_cell,
            seed,
            noise,
            memory_pressure,
            rows,
        } = self;
        Document {
            header,
            mode,
            placement,
            pipe_size: *pipe_size,
            pipe_size_requested: *pipe_size_requested,
            pipe_size_clamped: *pipe_size_clamped,
            msg_size: *msg_size,
            atomic: *atomic,
            duration_s: *duration_s,
            warmup_duration_s: *warmup_duration_s,
            runs_per_cell: *runs_per_cell,
            max_runs_per_cell: *max_runs_per_cell,
            seed: *seed,
            noise: *noise,
            memory_pressure,
            rows,
            verdict: self.verdict(),
        }
        .serialize(s)
    }
}
