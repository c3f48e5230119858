//! Ping-pong round-trip latency over a pair of pipes, as `perf bench sched
//! pipe` and lmbench's `lat_pipe` measure it, with percentiles.
//!
//! The pinger writes a message into pipe A->B, the ponger reads all of it
//! and writes it back into pipe B->A, and the pinger reads all of the
//! reply: one round trip, timed with the monotonic clock and recorded in an
//! HDR histogram. One way is about half of it. Messages larger than
//! `PIPE_BUF` or than the pipe itself arrive in several pieces: both sides
//! loop on partial reads and writes.
//!
//! Every message carries a pattern that depends on its round trip: both
//! sides check its first and last bytes (cheap, always), or every byte
//! with `verify`.
//!
//! - `job`: what a measurement is asked to do, one run's [`PingJob`]
//!   and what it gives, a [`TripRun`];
//! - `exchange`: the pinger and the ponger;
//! - `run`: [`run_latency`], a slot per size in the one
//!   [`schedule`](super::core::schedule()), and the runners that place the two sides
//!   in threads ([`Threads`](super::core::harness::Threads)) or processes
//!   ([`Processes`](super::core::harness::Processes));
//! - `result`: [`LatencyResult`], what `latency --json` writes;
//! - `verdict`: its answer in a few lines, [`Verdict`].

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
