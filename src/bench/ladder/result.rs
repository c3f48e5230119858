//! What the ladder measured: a row per rung, as `bench --json` writes it.
use crate::bench::core::{Placement, Status};

use serde::{Deserialize, Serialize};

use crate::bench::core::harness::Header;

use super::super::core::noise::{Diagnosis, NoiseSummary, Spread};
use super::super::core::stats::{median, min_max};
use super::super::profile::{Cost, Profile};
use super::copies::CopyCheck;
use super::placement::PlacementCheck;
use super::rung::Rung;
use crate::sys::RunNoise;

/// One rung's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RungResult {
    /// The rung's name.
    pub name: Rung,
    /// What it changes.
    pub changes: String,
    /// Bytes copied by the CPU per byte piped (0: page references move):
    /// the rung's design, plus one where [`copy_check`](Self::copy_check)
    /// found that this kernel's vmsplice copies.
    pub copies: u32,
    /// What the start-up check of a vmsplice rung found on this kernel
    /// (`None`: the rung does not vmsplice, or was not checked).
    #[serde(default)]
    pub copy_check: Option<CopyCheck>,
    /// Whether it ran.
    pub status: Status,
    /// Why it did not run or failed.
    pub reason: Option<String>,
    /// The buffer size in bytes.
    pub buf_size: usize,
    /// The pipe size asked for, in bytes (`None`: the kernel default).
    pub pipe_size: Option<usize>,
    /// Bytes per measured run.
    pub bytes_per_run: u64,
    /// The rate of the warm-up run.
    pub warmup_gib_s: Option<f64>,
    /// Every measured run's rate, in the order run.
    pub runs_gib_s: Vec<f64>,
    /// The median rate.
    pub median_gib_s: Option<f64>,
    /// The slowest run.
    pub min_gib_s: Option<f64>,
    /// The fastest run.
    pub max_gib_s: Option<f64>,
    /// Median over the `write-read` median.
    pub speedup_vs_write_read: Option<f64>,
    /// Median over the median of the rung's ceiling: `memcpy` for the
    /// rungs that copy, `splice-limit` for those that do not.
    #[serde(default)]
    pub share_of_ceiling: Option<f64>,
    /// What the machine did during each measured run, in the order run.
    #[serde(default)]
    pub runs_noise: Vec<RunNoise>,
    /// How the runs spread, and whether the rung is noisy (`None`: fewer
    /// than 2 runs).
    #[serde(default)]
    pub spread: Option<Spread>,
    /// For a noisy rung: the likely causes and what to do.
    #[serde(default)]
    pub diagnosis: Option<Diagnosis>,
    /// What the measured runs cost, per GiB (`None`: not measured).
    #[serde(default)]
    pub cost: Option<Cost>,
    /// Where the time went, with `bench --profile`.
    #[serde(default)]
    pub profile: Option<Profile>,
}

impl RungResult {
    /// `rung` before its first run: `ok`, no runs and no figures yet.
    pub fn new(rung: Rung, buf_size: usize, pipe_size: Option<usize>) -> RungResult {
        RungResult {
            name: rung,
            changes: rung.changes().to_string(),
            copies: rung.copies(),
            copy_check: None,
            status: Status::Ok,
            reason: None,
            buf_size,
            pipe_size,
            bytes_per_run: 0,
            warmup_gib_s: None,
            runs_gib_s: Vec::new(),
            median_gib_s: None,
            min_gib_s: None,
            max_gib_s: None,
            speedup_vs_write_read: None,
            share_of_ceiling: None,
            runs_noise: Vec::new(),
            spread: None,
            diagnosis: None,
            cost: None,
            profile: None,
        }
    }

    /// Sets the median, the slowest and the fastest from `runs_gib_s`,
    /// and the spread.
    pub fn summarize(&mut self) {
        self.median_gib_s = median(&self.runs_gib_s);
        let (lo, hi) = min_max(&self.runs_gib_s).unzip();
        self.min_gib_s = lo;
        self.max_gib_s = hi;
        self.spread = Spread::of(&self.runs_gib_s);
    }

    /// Whether the rung's runs spread too much to trust its median.
    pub fn noisy(&self) -> bool {
        self.spread.is_some_and(|s| s.noisy)
    }
}

/// The whole ladder's results: what `--json` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LadderResult {
    /// The format, the pipespeed that measured and the machine.
    #[serde(flatten)]
    pub header: Header,
    /// Where writer and reader ran.
    pub placement: Placement,
    /// Measured runs per rung (at least; see `max_runs`).
    pub runs: usize,
    /// Runs a noisy rung may take, adding one at a time until its spread
    /// is small enough (equal to `runs`: no runs added).
    #[serde(default)]
    pub max_runs: usize,
    /// Steal and other load over all the measured runs.
    #[serde(default)]
    pub noise: Option<NoiseSummary>,
    /// The baseline rung in the other placements, and the cost of a
    /// cross-CPU wake-up.
    #[serde(default)]
    pub placement_check: Option<PlacementCheck>,
    /// Whether every byte was checked.
    pub verify: bool,
    /// Seed of the run order.
    pub seed: u64,
    /// Per rung, in ladder order.
    pub rungs: Vec<RungResult>,
}

/// The schema name of [`LadderResult`].
pub const SCHEMA: &str = "pipespeed.bench/1";
