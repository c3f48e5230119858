//! `ipc`: pipes beside every other way two processes on one machine can
//! talk, on the one schedule of `bench::core`.
//!
//! Each [`Mechanism`] is measured twice per message size: throughput (a
//! sender process moves a run's bytes in messages of the size to a
//! receiver process, which times them from its first receive to its
//! last, as the ladder's reader does) and round trips (the pinger, a
//! thread of this process, sends a message that a ponger process sends
//! back, as `latency` does). Both ends are pinned as the placement says;
//! each row's two metrics are slots of the one schedule
//! (`bench::core::schedule`): every run one of a shuffled order, repeated
//! while its slot is noisy.
//!
//! - `mechanism`: the mechanisms, what they copy and where their cost
//!   goes;
//! - `channel`: the descriptors a mechanism's ends share, made by the
//!   parent and handed to the worker processes;
//! - `traits`: what an end is (the `Sender` and `Receiver` every
//!   mechanism's ends implement), below every end;
//! - `ends`: one end's sending and receiving over any mechanism;
//! - `splice` and `zerocopy`: the vmsplice/splice ends and the
//!   `MSG_ZEROCOPY` sender (the shared-memory ring is
//!   [`crate::ring`], the io_uring operations `crate::sys::uring`);
//! - `flow`: the sender, the receiver, the pinger and the ponger;
//! - `procs`: the ends as worker processes, and the runner that starts
//!   them;
//! - `record`: what one run measured, below the jobs that make it and
//!   the results that keep it;
//! - `job`, `run` and `result`: the harness, as every measurement
//!   has it.

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
