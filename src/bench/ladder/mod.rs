//! The ladder: every step of the blog, measured on this machine. `job`
//! makes each [`Rung`]'s [`Job`], `run` schedules them, `processes` runs
//! them as worker processes, `result` and `conclude` hold and judge the
//! figures, `report` writes them; `placement` measures the baseline in
//! every placement.

pub(crate) mod conclude;
pub(crate) use super::core::copies;
pub(crate) mod compare;
pub(crate) mod job;
pub(crate) mod pipe;
pub(crate) mod placement;
pub(crate) mod processes;
pub(crate) mod report;
#[cfg(feature = "cli")]
pub use report::{html_report, ladder_svg};
pub(crate) mod result;
pub(crate) mod run;
pub(crate) mod rung;
pub mod scan;
mod v1;
pub(crate) mod verdict;

pub use copies::{CopyCheck, check_vmsplice};
pub use job::{Job, LadderConfig, Sample, job_for};
pub use placement::{PlacementCheck, PlacementRow, Wakeup, check_placements};
pub use processes::{MEMCPY_NOT_PROFILED, ProcessExecutor};
pub use result::{LadderResult, RungResult, SCHEMA, SCHEMA_V1, SCHEMA_V2};
pub use run::run_ladder;
pub use rung::Rung;
pub use verdict::{Baseline, Step, Verdict};
