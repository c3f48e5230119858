//! What one `ipc` run measured, below the jobs that make it and the
//! results that keep it.

use serde::{Deserialize, Serialize};

use crate::sys::RunNoise;

/// One measured throughput run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamRun {
    /// Bytes the rate was computed from: all but the first receive's,
    /// which starts the clock.
    pub timed_bytes: u64,
    /// Seconds from the receiver's first receive to its last.
    pub seconds: f64,
    /// `timed_bytes / seconds`, in GiB/s.
    pub gib_s: f64,
    /// Messages per second at that rate.
    pub msgs_per_s: f64,
    /// CPU seconds of both ends, start-up included (`None`: not measured).
    pub cpu_s: Option<f64>,
    /// Bytes the sender sent (all of them arrived).
    pub bytes: u64,
    /// What else the machine did meanwhile (`None`: not measured).
    pub noise: Option<RunNoise>,
}

pub use crate::bench::hist::TripRun;
