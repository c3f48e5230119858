//! What an `ipc` measurement is asked to do, and the jobs of one run.
use crate::bench::core::{Placement, RunError};

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::super::core::harness;
use super::mechanism::Mechanism;
use super::record::{StreamRun, TripRun};

/// What an `ipc` measurement is asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpcConfig {
    /// The mechanisms, one row per mechanism and size.
    pub mechanisms: Vec<Mechanism>,
    /// Message sizes in bytes.
    pub sizes: Vec<usize>,
    /// Whether throughput is measured.
    pub throughput: bool,
    /// Whether round trips are measured.
    pub latency: bool,
    /// Measured runs per row and metric, at least.
    pub runs: usize,
    /// Runs a noisy row may take, while its interval is too wide.
    pub max_runs: usize,
    /// Seconds a measured run lasts, about (throughput runs size their
    /// bytes from the warm-up's rate).
    pub duration_s: f64,
    /// Bytes per measured throughput run, instead of `duration_s` worth.
    pub bytes: Option<u64>,
    /// Where the two ends run: `writer_cpu` is the sender's (the
    /// pinger's), `reader_cpu` the receiver's (the ponger's).
    pub placement: Placement,
    /// Check every byte of every message.
    pub verify: bool,
    /// Seed of the run order.
    pub seed: u64,
    /// When a row's warm-up ends (the default in files that predate it).
    #[serde(default)]
    pub warmup_rule: crate::bench::core::Warmup,
    /// How long an end may go without progress (not recorded: it changes
    /// nothing measured).
    #[serde(skip, default = "default_stall_timeout")]
    pub stall_timeout: Duration,
}

fn default_stall_timeout() -> Duration {
    crate::bench::core::DEFAULT_STALL_TIMEOUT
}

/// One throughput run: a sender moves `bytes` in messages of `size` to
/// a receiver, which times them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamJob {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// Bytes per message.
    pub size: usize,
    /// Bytes in all, a whole number of messages.
    pub bytes: u64,
    /// Check every byte.
    pub verify: bool,
    /// Where the ends run.
    pub placement: Placement,
    /// How long an end may go without progress (`bench::core::watchdog`).
    pub stall_timeout: Duration,
}

/// One latency run: round trips of `size`-byte messages for `seconds`,
/// after `warmup_seconds` not recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TripJob {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// Bytes per message.
    pub size: usize,
    /// Seconds of round trips, recorded.
    pub seconds: f64,
    /// Seconds of round trips before, not recorded.
    pub warmup_seconds: f64,
    /// Check every byte.
    pub verify: bool,
    /// Where the ends run.
    pub placement: Placement,
    /// How long an end may go without progress (`bench::core::watchdog`).
    pub stall_timeout: Duration,
}

impl harness::Job for StreamJob {
    type Output = StreamRun;
    type Error = RunError;
}

impl harness::Job for TripJob {
    type Output = TripRun;
    type Error = RunError;
}

impl StreamJob {
    /// `bytes` rounded up to a whole number of messages, at least two
    /// (the receiver's clock starts at its first receive); rounded down
    /// where up does not fit in 64 bits.
    pub fn whole_messages(size: usize, bytes: u64) -> u64 {
        let size = size.max(1) as u64;
        let messages = bytes.div_ceil(size).max(2);
        messages
            .checked_mul(size)
            .unwrap_or((u64::MAX / size).max(2).saturating_mul(size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_messages_round_up_and_never_wrap() {
        assert_eq!(StreamJob::whole_messages(4096, 1), 2 * 4096);
        assert_eq!(StreamJob::whole_messages(4096, 3 * 4096 + 1), 4 * 4096);
        assert_eq!(StreamJob::whole_messages(64, u64::MAX), u64::MAX / 64 * 64);
        for size in [1, 3, 64, 4096, 1 << 20, 64 << 20, usize::MAX] {
            for bytes in [0, 1, 1 << 31, 1 << 32, 1 << 63, u64::MAX - 1, u64::MAX] {
                let whole = StreamJob::whole_messages(size, bytes);
                let size = size as u64;
                assert!(
                    whole > 0 && whole.is_multiple_of(size),
                    "{size} {bytes}: {whole}"
                );
                assert!(whole >= bytes.min(u64::MAX / size * size), "{size} {bytes}");
            }
        }
    }
}
