//! The ladder: every step of the blog, measured on this machine.
//!
//! - `job`: what the ladder is asked to do, the [`Job`] each
//!   [`Rung`] runs here (or why it cannot), and what one run gives back;
//! - `run`: [`run_ladder`], the rungs as rows of
//!   [`schedule`](super::core::schedule()), then profiles, cost and speed-ups;
//! - `processes`: the real runner, the ends as worker processes (and
//!   memcpy in a thread), with `perf record` for `--profile`; `pipe`:
//!   one run of the two processes, watched, and what their outcomes say;
//! - `result`: [`LadderResult`], what `bench --json` writes;
//! - `rung`: the rungs, what each changes and why it is faster;
//! - `verdict`: the answer in a few lines, and the baseline of the
//!   speed-ups; `conclude` works them out from the figures;
//! - `copies` (in `core`, shared with `zerocopy`): the start-up check
//!   that vmsplice moves page references;
//! - `report`: how the result reads: the table, CSV, Markdown, the
//!   chart and the page;
//! - `placement`: the baseline in every placement, and the cost of a
//!   cross-CPU wake-up.

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
