//! The answer at a glance: each size's median round trip and its tail,
//! where the two ends ran, and how far to trust it, in a few lines that
//! agree with the table under them (the same medians, the same rounding).

use serde::{Deserialize, Serialize, Serializer};

use super::result::{LatencyResult, LatencyRow};
use crate::bench::core::document::Document;
use crate::bench::core::{Series, Status, Trust};
use crate::units::{Size, readable_ns};

/// How many sizes the verdict names one by one; past it, the smallest
/// and the largest (the table has the rest).
const NAMED_SIZES: usize = 3;

/// What a latency measurement says, in a few lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// How far to trust the figures.
    pub trust: Trust,
    /// The answer as the text report prints it, a line each (the text
    /// wraps the long ones).
    pub lines: Vec<String>,
}

/// `1B p50 21.25 us (p99 26.25 us)`, as the table rounds them.
fn figure(row: &LatencyRow) -> String {
    format!(
        "{} p50 {} (p99 {})",
        Size(row.size as u64),
        readable_ns(row.rtt_ns.p50 as f64),
        readable_ns(row.rtt_ns.p99 as f64)
    )
}

/// Where the ends ran, and what it does to a round trip.
fn placement_words(r: &LatencyResult) -> String {
    match r.config.placement.cpus() {
        (Some(a), Some(b)) if a == b => {
            format!("both on CPU {a}: no cross-CPU wake-up (--placement different-cpu: two)")
        }
        (Some(a), Some(b)) => {
            format!("CPUs {a} and {b}: two cross-CPU wake-ups (--placement same-cpu: none)")
        }
        _ => "unpinned: the scheduler picks the CPUs (--placement pins them)".to_string(),
    }
}

/// The fields, then the verdict the rows give (here, not in `result`,
/// which the verdict reads).
impl Serialize for LatencyResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Document::new(&self.header, &self.config, &self.rows, self.verdict()).serialize(s)
    }
}

impl LatencyResult {
    /// The rows named as the verdict and the noise paragraph name them,
    /// one per size as the table shows one, with the series it was judged
    /// by: the size's p50 (by its size, `1B`), or its round trips per
    /// second (`1B round trips/s`) when those are noisy and the p50 is
    /// not, so that a noisy mark in the table is never left unsaid and a
    /// size is never counted twice ("1 of 2 rows noisy" with one row).
    pub fn named_series(&self) -> Vec<(String, &Series)> {
        let mut out = Vec::new();
        for row in &self.rows {
            let size = Size(row.size as u64);
            match row.round_trips_per_s.noisy() && !row.rtt_p50_ns.noisy() {
                true => out.push((format!("{size} round trips/s"), &row.round_trips_per_s)),
                false => out.push((size.to_string(), &row.rtt_p50_ns)),
            }
        }
        out
    }

    /// What the figures say, from the rows: the sizes' median round
    /// trips, where the ends ran, the sizes that could not be measured,
    /// and how far to trust it all.
    pub fn verdict(&self) -> Verdict {
        let measured: Vec<&LatencyRow> = self.rows.iter().filter(|r| !r.runs.is_empty()).collect();
        let mut lines = Vec::new();
        let named: Vec<String> = match measured.len() {
            0 => Vec::new(),
            n if n <= NAMED_SIZES => measured.iter().map(|r| figure(r)).collect(),
            n => vec![
                figure(measured[0]),
                format!("... {} more sizes ...", n - 2),
                figure(measured[n - 1]),
            ],
        };
        match named.is_empty() {
            true => lines.push("round trip: no size was measured".to_string()),
            false => lines.push(format!("round trip: {}", named.join(", "))),
        }
        lines.push(format!("ends:       {}", placement_words(self)));
        let missing: Vec<String> = (self.rows.iter())
            .filter(|r| r.status != Status::Ok || r.runs.is_empty())
            .map(|r| Size(r.size as u64).to_string())
            .collect();
        if !missing.is_empty() {
            lines.push(format!(
                "missing:    {} (the notes above say why)",
                missing.join(", ")
            ));
        }
        let trust = Trust::of(self.named_series(), self.noise());
        lines.push(format!("trust:      {}", trust.line));
        Verdict { trust, lines }
    }
}
