//! What a latency measurement found: a row per message size, as
//! `latency --json` writes it.

use serde::{Deserialize, Serialize};

use super::super::core::stats::{median, min_max};
use super::super::hist::LatencyNs;
use super::job::LatencyConfig;
use crate::bench::core::harness::Header;

/// The `schema` of [`LatencyResult`] documents.
pub const SCHEMA: &str = "pipespeed.latency/1";

/// One measured run of one message size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRun {
    /// Round trips measured (warm-up excluded).
    pub round_trips: u64,
    /// Seconds from the first measured round trip's start to the last one's end.
    pub seconds: f64,
    /// `round_trips / seconds`.
    pub round_trips_per_s: f64,
    /// The round-trip times.
    pub rtt_ns: LatencyNs,
    /// Round trips made before measuring.
    pub warmup_round_trips: u64,
}

/// How the runs of one size spread: the smallest and largest per-run
/// median and rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Smallest per-run p50, in ns.
    pub p50_ns_min: u64,
    /// Largest per-run p50, in ns.
    pub p50_ns_max: u64,
    /// Smallest per-run round trips per second.
    pub round_trips_per_s_min: f64,
    /// Largest per-run round trips per second.
    pub round_trips_per_s_max: f64,
}

/// The result of one message size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRow {
    /// Bytes per message.
    pub size: usize,
    /// Median over runs of round trips per second.
    pub round_trips_per_s: f64,
    /// Field by field, the median over runs of the round-trip summaries.
    pub rtt_ns: LatencyNs,
    /// How the runs spread.
    pub spread: Spread,
    /// Every run, in the order made.
    pub runs: Vec<LatencyRun>,
}

impl LatencyRow {
    /// The row of `size` summarising `runs`.
    pub fn summarize(size: usize, runs: Vec<LatencyRun>) -> LatencyRow {
        let rates: Vec<f64> = runs.iter().map(|r| r.round_trips_per_s).collect();
        let p50s: Vec<f64> = runs.iter().map(|r| r.rtt_ns.p50 as f64).collect();
        let (p50_min, p50_max) = min_max(&p50s).unwrap_or_default();
        let (rate_min, rate_max) = min_max(&rates).unwrap_or_default();
        let summaries: Vec<LatencyNs> = runs.iter().map(|r| r.rtt_ns).collect();
        LatencyRow {
            size,
            round_trips_per_s: median(&rates).unwrap_or(0.0),
            rtt_ns: LatencyNs::median_of(&summaries),
            spread: Spread {
                p50_ns_min: p50_min as u64,
                p50_ns_max: p50_max as u64,
                round_trips_per_s_min: rate_min,
                round_trips_per_s_max: rate_max,
            },
            runs,
        }
    }
}

/// Everything a latency measurement found, with what it was asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyResult {
    /// The format, the pipespeed that measured and the machine.
    #[serde(flatten)]
    pub header: Header,
    /// What was asked (its fields are the document's).
    #[serde(flatten)]
    pub config: LatencyConfig,
    /// One per size, in the order asked.
    pub rows: Vec<LatencyRow>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_take_medians_and_spreads_of_runs() {
        let run = |rate: f64, p50: u64| LatencyRun {
            round_trips: 100,
            seconds: 100.0 / rate,
            round_trips_per_s: rate,
            rtt_ns: LatencyNs {
                mean: p50 as f64,
                p50,
                p90: p50 * 2,
                p99: p50 * 3,
                p999: p50 * 4,
                max: p50 * 5,
            },
            warmup_round_trips: 10,
        };
        let row = LatencyRow::summarize(64, vec![run(300.0, 10), run(100.0, 30), run(200.0, 20)]);
        assert_eq!(row.round_trips_per_s, 200.0);
        assert_eq!((row.rtt_ns.p50, row.rtt_ns.max), (20, 100));
        assert_eq!((row.spread.p50_ns_min, row.spread.p50_ns_max), (10, 30));
        assert_eq!(row.spread.round_trips_per_s_min, 100.0);
        assert_eq!(row.spread.round_trips_per_s_max, 300.0);
        assert_eq!(row.runs.len(), 3);
    }
}
