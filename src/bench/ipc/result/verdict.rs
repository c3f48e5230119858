//! The answer at a glance, in a few lines that agree with the tables
//! above them (ranked by the same medians).

use serde::{Deserialize, Serialize};

use super::{IpcResult, IpcRow, Mechanism};
use crate::bench::core::{Series, Status, Trust};
use crate::units::Size;

/// What an `ipc` measurement says, in a few lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// How far to trust the figures.
    pub trust: Trust,
    /// The answer as the text report prints it, a line each (the text
    /// wraps the long ones).
    pub lines: Vec<String>,
}

/// A rate in GiB/s as the tables print it: two decimals from 1 up, three
/// significant digits below (`12.50`, `0.500`, `0.00271`), where small
/// messages' rates are.
pub(crate) fn gib_s_cell(v: f64) -> String {
    if !(v.is_finite() && v > 0.0 && v < 1.0) {
        return format!("{v:.2}");
    }
    let decimals = (2.0 - v.log10().floor()).clamp(2.0, 9.0) as usize;
    format!("{v:.decimals$}")
}

/// The median GiB/s the table shows for `row`.
pub(crate) fn speed(row: &IpcRow) -> Option<f64> {
    let t = row.throughput.as_ref()?;
    (t.status == Status::Ok && !t.runs.is_empty())
        .then_some(t.gib_s.median)
        .flatten()
}

/// The median round-trip p50, in ns, the table shows for `row`.
pub(crate) fn rtt_p50(row: &IpcRow) -> Option<u64> {
    let l = row.latency.as_ref()?;
    (l.status == Status::Ok && !l.runs.is_empty())
        .then_some(l.rtt_ns)
        .flatten()
        .map(|l| l.p50)
}

/// `1st`, `2nd`, `3rd`, `4th`, ..., `11th`, `12th`, `13th`, `21st`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// One metric of the verdict: its name and how to rank rows by it.
struct Metric {
    /// `throughput` or `round trip`.
    name: &'static str,
    /// The row's figure, larger is better (`None`: not measured).
    key: fn(&IpcRow) -> Option<f64>,
}

const THROUGHPUT: Metric = Metric {
    name: "throughput",
    key: speed,
};

const ROUND_TRIP: Metric = Metric {
    name: "round trip",
    // Shorter is better: ranked by the negated time.
    key: |row| rtt_p50(row).map(|ns| -(ns as f64)),
};

/// `rows` of one size with a figure for `m`, best first (ties in the
/// order measured).
fn ranked<'a>(rows: &[&'a IpcRow], m: &Metric) -> Vec<(&'a IpcRow, f64)> {
    let mut out: Vec<(&IpcRow, f64)> = rows
        .iter()
        .filter_map(|row| Some((*row, (m.key)(row)?)))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// The fastest mechanism at each size, sizes grouped under their
/// mechanism: `throughput: fastest shm at 64B, pipe-splice at 64KiB`.
/// The figures are the tables' (each table's first row is its fastest):
/// the line names, so that the answer fits a few lines of an 80-column
/// terminal.
fn fastest(by_size: &[(usize, Vec<&IpcRow>)], m: &Metric) -> Option<String> {
    let groups = grouped(by_size.iter().filter_map(|(size, rows)| {
        let &(row, _) = ranked(rows, m).first()?;
        Some((row.mechanism, Size(*size as u64).to_string()))
    }));
    let groups: Vec<String> = (groups.iter())
        .map(|(mech, sizes)| format!("{mech} at {}", sizes.join("/")))
        .collect();
    (!groups.is_empty()).then(|| {
        format!(
            "{:<12}fastest {}",
            format!("{}:", m.name),
            groups.join(", ")
        )
    })
}

/// The columns the verdict is laid out for: pipe's place goes on the
/// line of its metric while that fits them, else on a line of its own.
const NARROW: usize = 80;

/// `items`' values grouped by their keys, in the order each key first
/// comes.
fn grouped<K: PartialEq, V>(items: impl IntoIterator<Item = (K, V)>) -> Vec<(K, Vec<V>)> {
    let mut out: Vec<(K, Vec<V>)> = Vec::new();
    for (key, value) in items {
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, values)) => values.push(value),
            None => out.push((key, vec![value])),
        }
    }
    out
}

/// Pipe's rank for `m` at the largest size where it ranks: `2nd of 5`,
/// with `at 4KiB` when that is not the largest size measured (how far it
/// is from the fastest: the table's `x pipe` and figures).
fn pipe_place(by_size: &[(usize, Vec<&IpcRow>)], m: &Metric) -> Option<String> {
    let (size, of, place) = by_size.iter().rev().find_map(|(size, rows)| {
        let ranked = ranked(rows, m);
        let place = ranked
            .iter()
            .position(|(r, _)| r.mechanism == Mechanism::Pipe)?;
        Some((*size, ranked.len(), place))
    })?;
    let largest = by_size.iter().map(|(size, _)| *size).max();
    let at = match largest == Some(size) {
        true => String::new(),
        false => format!(" at {}", Size(size as u64)),
    };
    Some(format!("{} of {of}{at}", ordinal(place + 1)))
}

impl IpcResult {
    /// Every row's series, named as the verdict and the noise paragraph
    /// name them: `pipe 64KiB throughput`, `pipe 64KiB round trip`.
    pub fn named_series(&self) -> Vec<(String, &Series)> {
        let mut out = Vec::new();
        for row in &self.rows {
            let what =
                |metric: &str| format!("{} {} {metric}", row.mechanism, Size(row.size as u64));
            if let Some(t) = &row.throughput {
                out.push((what("throughput"), &t.gib_s));
            }
            if let Some(l) = &row.latency {
                out.push((what("round trip"), &l.p50_ns));
            }
        }
        out
    }

    /// What the figures say: the fastest mechanism at each message size
    /// and pipe's place among them, for each metric; the rows that
    /// failed; how far to trust it all. At most six lines at 80 columns
    /// for the default run (`tests/ipc_report.rs`).
    pub fn verdict(&self) -> Verdict {
        let by_size = grouped(self.rows.iter().map(|row| (row.size, row)));
        let metrics = [THROUGHPUT, ROUND_TRIP];
        // Each metric's fastest, with pipe's place after it while every
        // such line fits 80 columns; else pipe's places in a line of
        // their own.
        let answers: Vec<(String, Option<(String, &str)>)> = (metrics.iter())
            .filter_map(|m| {
                let place = pipe_place(&by_size, m).map(|p| (p, m.name));
                Some((fastest(&by_size, m)?, place))
            })
            .collect();
        let with = |line: &String, place: &Option<(String, &str)>| match place {
            Some((place, _)) => format!("{line}; pipe {place}"),
            None => line.clone(),
        };
        let fits =
            (answers.iter()).all(|(line, place)| with(line, place).chars().count() <= NARROW);
        let mut lines: Vec<String> = match fits {
            true => answers
                .iter()
                .map(|(line, place)| with(line, place))
                .collect(),
            false => {
                let places: Vec<String> = (answers.iter())
                    .filter_map(|(_, place)| place.as_ref())
                    .map(|(place, metric)| format!("{place} in {metric}"))
                    .collect();
                let mut lines: Vec<String> = answers.into_iter().map(|(line, _)| line).collect();
                if !places.is_empty() {
                    lines.push(format!("pipe:       {}", places.join(", ")));
                }
                lines
            }
        };
        if lines.is_empty() {
            lines.push("fastest:    no mechanism was measured".to_string());
        }
        // What failed is part of the answer; what this machine cannot
        // run (a limit, a facility turned off, no round trip by design)
        // is said with its reason under the tables, as the settings are.
        let mut failed: Vec<String> = Vec::new();
        for row in &self.rows {
            let statuses = [
                row.throughput.as_ref().map(|t| t.status),
                row.latency.as_ref().map(|l| l.status),
            ];
            if statuses.contains(&Some(Status::Failed)) {
                failed.push(format!("{} {}", row.mechanism, Size(row.size as u64)));
            }
        }
        if !failed.is_empty() {
            lines.push(format!(
                "failed:     {} (the notes say why)",
                failed.join(", ")
            ));
        }
        let trust = Trust::of(self.named_series(), self.noise);
        lines.push(format!("trust:      {}", trust.line));
        Verdict { trust, lines }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_read_as_english() {
        let words: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal).to_vec();
        assert_eq!(
            words,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
            ]
        );
    }
}
