//! Ping-pong round-trip latency over a pair of pipes, as `perf bench sched
//! pipe` and lmbench's `lat_pipe` measure it, with percentiles: the
//! pinger writes a message, the ponger reads all of it and writes it back,
//! and the pinger reads all of the reply (both loop on partial reads and
//! writes); each round trip is recorded in an HDR histogram.
//!
//! `job` holds the configuration and one run's [`PingJob`], `run` the
//! schedule and the runners, `result` what `latency --json` writes,
//! `verdict` its answer in a few lines.

pub(crate) mod compare;
pub(crate) mod job;
pub(crate) mod report;
#[cfg(feature = "cli")]
pub use report::latency_svg;
pub(crate) mod result;
pub(crate) mod run;
pub(crate) mod verdict;

pub use super::hist::TripRun;
pub use super::ping::{ping, pong};
pub use job::{
    Exchange, LatencyConfig, MAX_ROUND_TRIPS, Mode, PingConfig, PingJob, Placement, Span, describe,
};
pub use result::{LatencyResult, LatencyRow, SCHEMA, SCHEMA_V1};
pub use run::run_latency;
pub use verdict::Verdict;
