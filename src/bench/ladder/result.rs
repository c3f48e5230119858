//! What the ladder measured: a row per rung, as `bench --json` writes it.
use crate::bench::core::{Placement, Series, Stall, Status};

use serde::{Deserialize, Serialize};

use crate::bench::core::harness::Header;

use super::super::core::noise::NoiseSummary;
use super::super::profile::{Cost, Profile};
use super::copies::CopyCheck;
use super::placement::{PlacementCheck, PlacementRow};
use super::rung::Rung;
use super::verdict::{Baseline, Verdict};

/// One rung's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "v1::RungResult")]
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
    pub copy_check: Option<CopyCheck>,
    /// Whether it ran.
    pub status: Status,
    /// Why it did not run or failed.
    pub reason: Option<String>,
    /// Where both ends were when the watchdog failed the rung's run: one
    /// made no progress for `--stall-timeout` (`None`: no stall).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<Stall>,
    /// The buffer size in bytes.
    pub buf_size: usize,
    /// The pipe size asked for, in bytes (`None`: the kernel default).
    pub pipe_size: Option<usize>,
    /// Bytes per measured run.
    pub bytes_per_run: u64,
    /// The rate of the last warm-up run.
    pub warmup_gib_s: Option<f64>,
    /// Every measured run's rate in GiB/s, in the order run, and their
    /// summary.
    pub gib_s: Series,
    /// Where its figures were measured (`None`: one thread, memcpy and
    /// splice-limit, or a file from before it was recorded).
    pub placement: Option<Placement>,
    /// The rung in the ladder's other placement, when it ran in two and
    /// was slower there (the figures above are the faster's).
    pub other_placement: Option<PlacementRow>,
    /// Median over the baseline's median: `write-read` in the fastest
    /// placement measured ([`LadderResult::baseline`]).
    pub speedup_vs_write_read: Option<f64>,
    /// Median over the median of the rung's ceiling: `memcpy` for the
    /// rungs that copy, `splice-limit` for those that do not.
    pub share_of_ceiling: Option<f64>,
    /// What the measured runs cost, per GiB (`None`: not measured).
    pub cost: Option<Cost>,
    /// Where the time went, with `bench --profile`.
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
            stall: None,
            buf_size,
            pipe_size,
            bytes_per_run: 0,
            warmup_gib_s: None,
            gib_s: Series::new(),
            placement: None,
            other_placement: None,
            speedup_vs_write_read: None,
            share_of_ceiling: None,
            cost: None,
            profile: None,
        }
    }

    /// The median rate (`None`: no runs).
    pub fn median(&self) -> Option<f64> {
        self.gib_s.median
    }

    /// Whether the rung's runs spread too much to trust its median.
    pub fn noisy(&self) -> bool {
        self.gib_s.noisy()
    }

    /// The rung as a row of a placement check: its placement (`fallback`
    /// when it has none recorded), status and series.
    pub fn placement_row(&self, fallback: Placement) -> PlacementRow {
        let placement = self.placement.unwrap_or(fallback);
        PlacementRow {
            placement: Some(placement),
            kind: placement.kind().to_string(),
            status: self.status,
            reason: self.reason.clone(),
            gib_s: self.gib_s.clone(),
        }
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
    /// What the speed-ups are against: `write-read` in the fastest
    /// placement measured (the ladder's and the placement check's).
    #[serde(default)]
    pub baseline: Option<Baseline>,
    /// The answer in a few lines, from the figures above.
    #[serde(default)]
    pub verdict: Option<Verdict>,
}

/// The schema name of [`LadderResult`].
pub const SCHEMA: &str = "pipespeed.bench/3";

/// The schema before each rung recorded its placement, the speed-ups
/// were against the best placement and the verdict was written: still read.
pub const SCHEMA_V2: &str = "pipespeed.bench/2";

/// The schema before the series were nested: still read.
pub const SCHEMA_V1: &str = "pipespeed.bench/1";

/// `pipespeed.bench/1` rows, whose series were loose fields: they read
/// into the current types, their figures kept as they were.
mod v1 {
    use serde::Deserialize;

    use super::super::super::core::{Series, Status};
    use super::super::super::profile::{Cost, Profile};
    use super::super::v1::Loose;
    use super::{CopyCheck, Placement, PlacementRow, Rung, Stall};

    /// A rung of either version: `gib_s` (/2) or the loose fields (/1).
    #[derive(Deserialize)]
    pub(super) struct RungResult {
        name: Rung,
        changes: String,
        copies: u32,
        #[serde(default)]
        copy_check: Option<CopyCheck>,
        status: Status,
        reason: Option<String>,
        #[serde(default)]
        stall: Option<Stall>,
        buf_size: usize,
        pipe_size: Option<usize>,
        bytes_per_run: u64,
        warmup_gib_s: Option<f64>,
        #[serde(default)]
        gib_s: Option<Series>,
        #[serde(flatten)]
        loose: Loose,
        #[serde(default)]
        placement: Option<Placement>,
        #[serde(default)]
        other_placement: Option<PlacementRow>,
        speedup_vs_write_read: Option<f64>,
        #[serde(default)]
        share_of_ceiling: Option<f64>,
        #[serde(default)]
        cost: Option<Cost>,
        #[serde(default)]
        profile: Option<Profile>,
    }

    impl From<RungResult> for super::RungResult {
        fn from(r: RungResult) -> super::RungResult {
            super::RungResult {
                name: r.name,
                changes: r.changes,
                copies: r.copies,
                copy_check: r.copy_check,
                status: r.status,
                reason: r.reason,
                stall: r.stall,
                buf_size: r.buf_size,
                pipe_size: r.pipe_size,
                bytes_per_run: r.bytes_per_run,
                warmup_gib_s: r.warmup_gib_s,
                gib_s: r.gib_s.unwrap_or_else(|| r.loose.series()),
                placement: r.placement,
                other_placement: r.other_placement,
                speedup_vs_write_read: r.speedup_vs_write_read,
                share_of_ceiling: r.share_of_ceiling,
                cost: r.cost,
                profile: r.profile,
            }
        }
    }
}
