//! `contend`: N writers and M readers on one pipe, as the kernel's
//! `tools/testing/selftests/pipe/pipe_bench` runs them: fixed-size
//! messages, writes per second, and the latency of every write and read,
//! optionally under memory pressure.
//!
//! What is measured, per run of one cell (writers x readers):
//! - *writes/s* and *MiB/s*: messages (bytes) written, divided by the
//!   measured time from the start of the first write to the return of
//!   the last one (of any writer), not by the nominal duration;
//! - *write latency*: per message, from the first `write(2)` to the
//!   return of the one that put its last byte in (partial writes
//!   continue until the whole message is in);
//! - *read latency*: per `read(2)` call that returned data, blocking
//!   included: readers ask for the rest of the current message each time.
//!
//! Writers stop at the end of the duration; readers then drain the pipe
//! to end of file, so every byte written is read.

//!
//! - `job`: what a measurement is asked to do, one run's [`CellJob`]
//!   and what its ends report ([`RawRun`]);
//! - `run`: [`run_contend`], on `bench::core`'s schedule, and the
//!   runners that make the ends threads (`threads`) or worker processes
//!   (`procs`);
//! - `ends`: one writer's and one reader's loop; `frame` and
//!   `tally`: `--verify`;
//! - `hogs` and `pressure`: `--memory-pressure` and its evidence;
//! - `result`: [`ContendResult`], what `contend --json` writes;
//! - `verdict`: its answer in a few lines, [`Verdict`].

pub(crate) mod compare;
pub(crate) mod ends;
pub(crate) mod frame;
pub(crate) mod hogs;
pub(crate) mod job;
pub(crate) mod pressure;
pub(crate) mod procs;
pub(crate) mod report;
#[cfg(feature = "cli")]
pub use report::contend_svg;
pub(crate) mod result;
pub(crate) mod run;
pub(crate) mod tally;
mod threads;
pub(crate) mod verdict;

#[cfg(test)]
pub(crate) use ends::EndSetup;
pub(crate) use hogs::HogSpec;
pub use hogs::{DEFAULT_SHARE_PERCENT, DEFAULT_WORKERS, MAX_HOGS, PressureConfig, hog};
pub use job::{
    Cell, CellJob, ContendConfig, DEFAULT_MSG_SIZE, DEFAULT_PIPE_SIZE, MAX_ENDS, Mode, PIPE_BUF,
    RawRun, resolve_pipe_size,
};
pub(crate) use procs::{ReaderSpec, WriterSpec, serve_reader, serve_writer};
pub use result::{ContendResult, Row, RunResult, SCHEMA, SCHEMA_V1};
#[cfg(test)]
pub(crate) use run::summarise_run;
pub use run::{run_contend, run_contend_on, summarise_row};
pub use tally::VerifyReport;
pub use verdict::Verdict;

#[cfg(test)]
mod tests;
