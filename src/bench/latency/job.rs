//! What a latency measurement is asked to do, and the job of one run.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

pub use super::super::core::harness::Mode;
pub use super::super::core::placement::Placement;
pub use super::super::ping::{Exchange, PingConfig, PingJob, Span};
use crate::wait::Wait;

/// `placement` in latency's words: the pinger is the writer, the ponger
/// the reader.
pub fn describe(placement: Placement) -> String {
    match placement.cpus() {
        (Some(a), Some(b)) if a == b => format!("pinger and ponger both on CPU {a}"),
        (Some(a), Some(b)) => format!("pinger on CPU {a}, ponger on CPU {b}"),
        _ => "unpinned (left to the scheduler)".into(),
    }
}

/// A placement as `pipespeed.latency/2` writes it, or as `/1` did
/// (`pinger_cpu`, `ponger_cpu`).
fn placement_any_version<'de, D: Deserializer<'de>>(d: D) -> Result<Placement, D::Error> {
    #[derive(Deserialize)]
    #[serde(tag = "kind", rename_all = "kebab-case")]
    enum V1 {
        Pinned {
            pinger_cpu: usize,
            ponger_cpu: usize,
        },
        Unpinned,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Any {
        Now(Placement),
        V1(V1),
    }
    Ok(match Any::deserialize(d)? {
        Any::Now(p) => p,
        Any::V1(V1::Pinned {
            pinger_cpu,
            ponger_cpu,
        }) => Placement::Pinned {
            writer_cpu: pinger_cpu,
            reader_cpu: ponger_cpu,
        },
        Any::V1(V1::Unpinned) => Placement::Unpinned,
    })
}

/// The most round trips a run or its warm-up may be asked for: a
/// billion, half an hour at 2 us a round trip, seventeen hours at the
/// 62 us of a busy host's cross-CPU wake-ups.
pub const MAX_ROUND_TRIPS: u64 = 1_000_000_000;

/// What a latency measurement is asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyConfig {
    /// Message sizes, one row each.
    pub sizes: Vec<usize>,
    /// Measured runs every size gets.
    pub runs: usize,
    /// Runs a noisy size may get: one more at a time while the 95%
    /// interval of its runs' median round trip is wider than +-10%, up to
    /// this many (at most `runs`: none added; `/1` documents had none).
    #[serde(default)]
    pub max_runs: usize,
    /// Seed of the shuffled order of the runs (`/1` documents ran the
    /// sizes in order: 0).
    #[serde(default)]
    pub seed: u64,
    /// When a row's warm-up ends (`--warmup-runs`; files written before
    /// it was recorded: the default).
    #[serde(default)]
    pub warmup_rule: crate::bench::core::Warmup,
    /// Warm-up before each run.
    pub warmup: Span,
    /// Length of each run.
    pub measure: Span,
    /// How both sides wait.
    pub wait: Wait,
    /// Check every byte.
    pub verify: bool,
    /// Threads or processes (recorded; the runner makes it so).
    pub mode: Mode,
    /// Where the sides run: the pinger is the writer, the ponger the
    /// reader (`/1` documents said `pinger_cpu` and `ponger_cpu`).
    #[serde(deserialize_with = "placement_any_version")]
    pub placement: Placement,
    /// How long a side may go without progress before the watchdog fails
    /// its run (not recorded: it changes nothing measured).
    #[serde(skip, default = "default_stall_timeout")]
    pub stall_timeout: Duration,
}

fn default_stall_timeout() -> Duration {
    crate::bench::core::DEFAULT_STALL_TIMEOUT
}

impl LatencyConfig {
    /// The most runs a size may take.
    pub fn max_runs(&self) -> usize {
        self.max_runs.max(self.runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_end_on_count_or_time() {
        assert!(!Span::RoundTrips(3).is_over(2, Duration::from_secs(9)));
        assert!(Span::RoundTrips(3).is_over(3, Duration::ZERO));
        assert!(!Span::Seconds(0.5).is_over(1000, Duration::from_millis(499)));
        assert!(Span::Seconds(0.5).is_over(0, Duration::from_millis(500)));
    }
}
