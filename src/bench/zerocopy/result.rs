//! What `bench --zero-copy` found, as `--json` writes it.

use serde::{Deserialize, Serialize};

use super::path::Path;
use crate::bench::core::{CopyCheck, Header, NoiseSummary, Placement, Series, Status, Warmup};

/// The `schema` of [`ZeroCopyResult`] documents.
pub const SCHEMA: &str = "pipespeed.zero-copy/1";

/// What a zero-copy measurement is asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZeroCopyConfig {
    /// Bytes every measured run moves.
    pub bytes: u64,
    /// Bytes per call (write, read, splice, vmsplice's half).
    pub chunk: usize,
    /// The pipe size asked for, in bytes (the vmsplice rows size theirs
    /// to one chunk; a user past the pipe quota gets less).
    pub pipe_size: usize,
    /// Where the writer and the reader thread run.
    pub placement: Placement,
    /// Measured runs of every path.
    pub runs: usize,
    /// The most measured runs of a path whose interval stays too wide.
    pub max_runs: usize,
    /// Seed of the shuffled run order.
    pub seed: u64,
    /// When a path's warm-up ends.
    pub warmup: Warmup,
}

/// One path: its check and its cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathResult {
    /// The path.
    pub path: Path,
    /// Its name in the table.
    pub name: String,
    /// What its check found on this kernel: `references` (the other end
    /// saw a change made to the source after the call), `copies` or
    /// `unknown` with why; `null` for read/write, which is not checked.
    pub found: Option<CopyCheck>,
    /// How it is checked and how its runs move bytes.
    pub method: String,
    /// Whether its runs were made: `ok`, `unavailable` (the machine
    /// cannot, or the path is not timed) or `failed`.
    pub status: Status,
    /// Why it did not run, or failed.
    pub reason: Option<String>,
    /// Every measured run's rate in GiB/s (bytes over the wall time from
    /// the first end's start to the last end's finish), in the order run.
    pub gib_s: Series,
    /// Every measured run's CPU seconds per GiB, user + system, of the
    /// whole process over the run (io_uring's workers included).
    pub cpu_s_per_gib: Series,
    /// The median rate over read/write's (`null`: either not measured).
    pub vs_read_write: Option<f64>,
    /// How many times less CPU a GiB costs than by read/write (`null`:
    /// either not measured).
    pub cpu_vs_read_write: Option<f64>,
}

/// What `bench --zero-copy` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZeroCopyResult {
    /// The format, the pipespeed, the machine, and whether a signal cut
    /// it short.
    pub header: Header,
    /// What it was asked to do.
    pub config: ZeroCopyConfig,
    /// The answer in a few lines, made from the findings.
    pub verdict: Vec<String>,
    /// Every path, read/write first.
    pub paths: Vec<PathResult>,
    /// Steal and other load over every measured run.
    pub noise: Option<NoiseSummary>,
}

impl ZeroCopyResult {
    /// The read/write path's row, if measured.
    pub fn baseline(&self) -> Option<&PathResult> {
        self.paths
            .iter()
            .find(|p| p.path == Path::ReadWrite && p.gib_s.median.is_some())
    }

    /// Sets every path's ratios to read/write.
    pub fn compare_to_read_write(&mut self) {
        let (rate, cpu) = match self.baseline() {
            Some(b) => (b.gib_s.median, b.cpu_s_per_gib.median),
            None => (None, None),
        };
        for p in &mut self.paths {
            p.vs_read_write = ratio(p.gib_s.median, rate);
            p.cpu_vs_read_write = ratio(cpu, p.cpu_s_per_gib.median);
        }
    }

    /// Whether any path was measured at all.
    pub fn measured_anything(&self) -> bool {
        self.paths.iter().any(|p| !p.gib_s.runs.is_empty())
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() => Some(a / b),
        _ => None,
    }
}
