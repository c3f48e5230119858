//! The answer at a glance, in a few lines that agree with the tables
//! under them (the same medians, the same rounding).

use serde::{Deserialize, Serialize};

use super::{IpcResult, IpcRow, Mechanism};
use crate::bench::core::{Series, Status, Trust};
use crate::units::{Size, readable_ns};

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

/// One metric of the verdict: how to rank rows and say their figure.
struct Metric {
    /// `throughput` or `round trip`.
    name: &'static str,
    /// The row's figure, larger is better (`None`: not measured).
    key: fn(&IpcRow) -> Option<f64>,
    /// The figure as the table prints it.
    show: fn(f64) -> String,
}

const THROUGHPUT: Metric = Metric {
    name: "throughput",
    key: speed,
    show: |g| format!("{} GiB/s", gib_s_cell(g)),
};

const ROUND_TRIP: Metric = Metric {
    name: "round trip",
    // Shorter is better: ranked by the negated time.
    key: |row| rtt_p50(row).map(|ns| -(ns as f64)),
    show: |neg| readable_ns(-neg),
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
/// mechanism: `fastest shm: 64B 1.20 GiB/s; pipe-splice: 64KiB 20.00
/// GiB/s`.
fn fastest(by_size: &[(usize, Vec<&IpcRow>)], m: &Metric) -> Option<String> {
    let groups = grouped(by_size.iter().filter_map(|(size, rows)| {
        let &(row, v) = ranked(rows, m).first()?;
        Some((
            row.mechanism,
            format!("{} {}", Size(*size as u64), (m.show)(v)),
        ))
    }));
    let groups: Vec<String> = (groups.iter())
        .map(|(mech, figures)| format!("{mech}: {}", figures.join(", ")))
        .collect();
    (!groups.is_empty()).then(|| {
        format!(
            "{:<12}fastest {}",
            format!("{}:", m.name),
            groups.join("; ")
        )
    })
}

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

/// Pipe's rank for `m` at the largest size where it ranks, and how far it
/// is from the fastest there: `2nd of 5 at 64KiB (shm 2.40x pipe)`.
fn pipe_place(by_size: &[(usize, Vec<&IpcRow>)], m: &Metric) -> Option<String> {
    let (size, ranked, place) = by_size.iter().rev().find_map(|(size, rows)| {
        let ranked = ranked(rows, m);
        let place = ranked
            .iter()
            .position(|(r, _)| r.mechanism == Mechanism::Pipe)?;
        Some((*size, ranked, place))
    })?;
    let size_name = Size(size as u64).to_string();
    let (pipe, (best, best_v)) = (ranked[place].1, ranked[0]);
    let gap = match place {
        0 => String::new(),
        // The table's `x pipe` column, for throughput.
        _ if pipe > 0.0 && m.name == THROUGHPUT.name => {
            format!(" ({} {:.2}x pipe)", best.mechanism, best_v / pipe)
        }
        _ => format!(
            " ({}, {} {})",
            (m.show)(pipe),
            best.mechanism,
            (m.show)(best_v)
        ),
    };
    Some(format!(
        "{} {} of {} at {size_name}{gap}",
        m.name,
        ordinal(place + 1),
        ranked.len()
    ))
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

    /// What the figures say: the fastest mechanism at each message size,
    /// pipe's place among them, the rows not measured, and how far to
    /// trust it all.
    pub fn verdict(&self) -> Verdict {
        let by_size = grouped(self.rows.iter().map(|row| (row.size, row)));
        let metrics = [THROUGHPUT, ROUND_TRIP];
        let mut lines: Vec<String> = metrics
            .iter()
            .filter_map(|m| fastest(&by_size, m))
            .collect();
        if lines.is_empty() {
            lines.push("fastest:    no mechanism was measured".to_string());
        }
        let places: Vec<String> = (metrics.iter())
            .filter_map(|m| pipe_place(&by_size, m))
            .collect();
        if !places.is_empty() {
            lines.push(format!("pipe:       {}", places.join("; ")));
        }
        let mut failed: Vec<String> = Vec::new();
        // Each mechanism unavailable somewhere, with the sizes.
        let mut unavailable = Vec::new();
        for row in &self.rows {
            let statuses = [
                row.throughput.as_ref().map(|t| t.status),
                // pipe-splice has no round trip by design: not missing.
                (row.latency.as_ref())
                    .filter(|_| row.mechanism.no_round_trip().is_none())
                    .map(|l| l.status),
            ];
            let size = Size(row.size as u64).to_string();
            if statuses.contains(&Some(Status::Failed)) {
                failed.push(format!("{} {size}", row.mechanism));
            } else if statuses.contains(&Some(Status::Unavailable)) {
                unavailable.push((row.mechanism, size));
            }
        }
        let unavailable: Vec<String> = (grouped(unavailable).iter())
            .map(|(m, sizes)| {
                let everywhere =
                    sizes.len() == self.rows.iter().filter(|r| r.mechanism == *m).count();
                match everywhere {
                    true => m.to_string(),
                    false => format!("{m} at {}", sizes.join("/")),
                }
            })
            .collect();
        let mut missing = Vec::new();
        if !failed.is_empty() {
            missing.push(format!("{} failed", failed.join(", ")));
        }
        if !unavailable.is_empty() {
            missing.push(format!("{} unavailable here", unavailable.join(", ")));
        }
        if !missing.is_empty() {
            lines.push(format!(
                "missing:    {} (the notes under each table say why)",
                missing.join("; ")
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
