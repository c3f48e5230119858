//! What every measurement is made of, whatever it measures: placement,
//! outcomes and cancelling, the runners and progress events, the one
//! [`schedule()`], the [`Series`] every result is made of with its noise,
//! and the watchdog. The kinds build on it, never on each other
//! (`docs/architecture.md` has the checklist for adding one).

pub(crate) mod compared;
pub(crate) mod copies;
pub(crate) mod document;
pub(crate) mod end_thread;
pub(crate) mod harness;
pub(crate) mod noise;
pub(crate) mod outcome;
pub(crate) mod placement;
pub(crate) mod schedule;
pub(crate) mod series;
pub(crate) mod shown;
pub(crate) mod stall;
pub(crate) mod stats;
pub(crate) mod trust;
pub(crate) mod watchdog;
pub(crate) mod worker;

pub use copies::{CopyCheck, check_vmsplice, check_with};
pub use harness::{
    Event, Figure, Header, Job, MAX_MESSAGE, MAX_RUNS, Mode, Processes, Runner, Threads,
};
pub use noise::{Diagnosis, Ends, NoiseSummary, Spread};
pub use outcome::{Cancel, EXIT_UNSUPPORTED, RunError, Status};
pub use placement::{Placement, pin};
pub use schedule::{Outcome, Phase, Plan, Sample, Schedule, Slot, Warmup, schedule};
pub use series::Series;
pub use stall::{Stall, StalledTask};
pub use stats::Shuffler;
pub use trust::Trust;
pub use watchdog::{DEFAULT_STALL_TIMEOUT, MAX_STALL_TIMEOUT_S, MIN_STALL_TIMEOUT_S};
pub use worker::{RoleSpec, Spawn};
