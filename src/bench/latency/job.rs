//! What a latency measurement is asked to do, and the job of one run.

use std::io;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::super::core::harness;
pub use super::super::core::harness::Mode;
use super::result::LatencyRun;
use crate::wait::Wait;

/// Where pinger and ponger run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Placement {
    /// Each pinned to one CPU (possibly the same one).
    Pinned {
        /// The pinger's CPU.
        pinger_cpu: usize,
        /// The ponger's CPU.
        ponger_cpu: usize,
    },
    /// Left to the scheduler, within the process's allowed CPUs.
    Unpinned,
}

impl Placement {
    /// The pinger's and the ponger's CPU, `None` when unpinned.
    pub fn cpus(self) -> (Option<usize>, Option<usize>) {
        match self {
            Placement::Pinned {
                pinger_cpu,
                ponger_cpu,
            } => (Some(pinger_cpu), Some(ponger_cpu)),
            Placement::Unpinned => (None, None),
        }
    }
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cpus() {
            (Some(a), Some(b)) if a == b => write!(f, "pinger and ponger both on CPU {a}"),
            (Some(a), Some(b)) => write!(f, "pinger on CPU {a}, ponger on CPU {b}"),
            _ => f.write_str("unpinned (left to the scheduler)"),
        }
    }
}

/// The most round trips a run or its warm-up may be asked for: a
/// billion, half an hour at 2 us a round trip, seventeen hours at the
/// 62 us of a busy host's cross-CPU wake-ups.
pub const MAX_ROUND_TRIPS: u64 = 1_000_000_000;

/// How long a warm-up or a measurement lasts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Span {
    /// This many round trips.
    RoundTrips(u64),
    /// Round trips until this many seconds have passed.
    Seconds(f64),
}

impl Span {
    /// Whether a span that has done `trips` round trips in `elapsed` is over.
    pub fn is_over(self, trips: u64, elapsed: Duration) -> bool {
        match self {
            Span::RoundTrips(n) => trips >= n,
            Span::Seconds(s) => elapsed.as_secs_f64() >= s,
        }
    }
}

/// What both sides agree on: the message and how to wait for the pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchange {
    /// Bytes per message (at least 1).
    pub size: usize,
    /// How both sides wait for their pipes.
    pub wait: Wait,
    /// Check every byte of every message, not just the first and last.
    pub verify: bool,
}

/// Latency's ponger, as a worker process.
impl crate::bench::core::RoleSpec for Exchange {
    const ROLE: &'static str = "ponger";
}

/// What the pinger does in one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingConfig {
    /// The messages.
    pub exchange: Exchange,
    /// Round trips made, not recorded, before measuring.
    pub warmup: Span,
    /// How long the measurement lasts.
    pub measure: Span,
}

/// One run: the pinger's job, and where both sides run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingJob {
    /// What the pinger does.
    pub ping: PingConfig,
    /// Where pinger and ponger run.
    pub placement: Placement,
}

impl harness::Job for PingJob {
    type Output = LatencyRun;
    type Error = io::Error;
}

/// What a latency measurement is asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyConfig {
    /// Message sizes, one row each.
    pub sizes: Vec<usize>,
    /// Runs per size.
    pub runs: usize,
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
    /// Where the sides run.
    pub placement: Placement,
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
