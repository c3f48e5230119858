//! The round trip, below the kinds that time it (`latency`, and the
//! ladder's placement check for the cost of a cross-CPU wake-up).

use std::io;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::core::harness;
use super::core::placement::Placement;
use super::hist::TripRun;
use crate::wait::Wait;

pub(crate) mod exchange;

pub use exchange::{ping, pong};

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

/// The ponger, as a worker process.
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
    /// How long a side may go without progress before the watchdog
    /// fails the run (`bench::core::watchdog`).
    pub stall_timeout: Duration,
}

impl harness::Job for PingJob {
    type Output = TripRun;
    type Error = io::Error;
}
