//! `ipc`: pipes beside every other way two processes on one machine can
//! talk. Each [`Mechanism`] is measured per message size twice, as slots
//! of the one schedule (`bench::core::schedule`): throughput (a sender
//! process to a receiver process, timed as the ladder's reader does) and
//! round trips (a pinger thread to a ponger process, as `latency` does).

pub(crate) mod channel;
pub(crate) mod compare;
pub(crate) mod ends;
pub(crate) mod flow;
pub(crate) mod job;
pub(crate) mod mechanism;
pub(crate) mod procs;
pub(crate) mod record;
pub(crate) mod report;
#[cfg(feature = "cli")]
pub use report::ipc_svg;
pub(crate) mod result;
pub(crate) mod run;
pub(crate) mod splice;
pub(crate) mod traits;
pub(crate) mod zerocopy;

pub use job::IpcConfig;
pub use mechanism::{Mechanism, UnknownMechanism};
pub use result::{
    IpcResult, IpcRow, RoundTrips, SCHEMA, SCHEMA_V1, StreamRun, Throughput, TripRun, Verdict,
};
pub use run::{SPIN_ON_ONE_CPU, run_ipc};
