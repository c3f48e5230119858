//! `contend`: N writers and M readers on one pipe, as the kernel's
//! `tools/testing/selftests/pipe/pipe_bench` runs them: fixed-size
//! messages, writes per second over the measured time (first write to
//! last), and the latency of every write and read, optionally under
//! memory pressure. Writers stop at the end of the duration; readers then
//! drain the pipe, so every byte written is read (docs/contend.md).
//!
//! `job` holds the configuration and one run's [`CellJob`], `run` the
//! schedule and the runners (`threads`, `procs`), `ends` the writer's and
//! reader's loops, `frame` and `tally` `--verify`, `hogs`, `stress_ng`
//! (where it is installed) and `pressure` `--memory-pressure`, `result`
//! what `contend --json` writes, `verdict` its answer in a few lines,
//! `pipe_bench` the kernel's pipe_bench's output read and written.

pub(crate) mod compare;
pub(crate) mod ends;
pub(crate) mod frame;
pub(crate) mod hogs;
pub(crate) mod job;
pub mod pipe_bench;
pub(crate) mod pressure;
pub(crate) mod procs;
pub(crate) mod report;
#[cfg(feature = "cli")]
pub use report::contend_svg;
pub(crate) mod result;
pub(crate) mod run;
pub(crate) mod stress_ng;
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
