//! What a contend measurement is asked to do, and the job of one run of
//! one cell.
use crate::bench::core::{MAX_STALL_TIMEOUT_S, MIN_STALL_TIMEOUT_S, Placement, RunError};

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::super::core::harness;
pub use super::super::core::harness::Mode;
use super::super::core::harness::{MAX_MESSAGE, MAX_RUNS};
use super::ends::{EndSetup, ReaderEnd, WriterEnd};
use super::frame::CELL;
use super::hogs::PressureConfig;
use crate::sys::{fcntl_setpipe_size, pipe, pipe_max_size};
use crate::units::MIB;

/// Writes of up to this many bytes are atomic on a pipe (pipe(7)).
pub const PIPE_BUF: usize = 4096;
/// The message size when none is given: pipe_bench's 64 KiB writes.
pub const DEFAULT_MSG_SIZE: usize = 64 * 1024;
/// The pipe size asked for when none is given: pipe_bench's 1 MiB pipe.
pub const DEFAULT_PIPE_SIZE: usize = MIB as usize;
/// The most writers (or readers) in one cell: writer ids are 16 bits.
pub const MAX_ENDS: usize = 4096;
/// pipe_bench's default grid: writers...
pub(crate) const SWEEP_WRITERS: [usize; 3] = [1, 2, 5];
/// ...times readers.
pub(crate) const SWEEP_READERS: [usize; 3] = [1, 5, 10];

/// One configuration of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// Writers.
    pub writers: usize,
    /// Readers.
    pub readers: usize,
}

impl Cell {
    /// pipe_bench's grid, writers-major: 1x1, 1x5, 1x10, 2x1, ...
    pub fn sweep() -> Vec<Cell> {
        SWEEP_WRITERS
            .iter()
            .flat_map(|&writers| {
                SWEEP_READERS
                    .iter()
                    .map(move |&readers| Cell { writers, readers })
            })
            .collect()
    }
}

/// The pipe size asked for and the one the kernel granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PipeSize {
    /// Bytes asked for.
    pub requested: usize,
    /// Bytes granted (rounded up to a power-of-two number of pages).
    pub granted: usize,
    /// Whether the default was cut to `/proc/sys/fs/pipe-max-size`.
    pub clamped: bool,
}

/// Asks a scratch pipe for `requested` bytes (or the default, 1 MiB, cut
/// to `/proc/sys/fs/pipe-max-size` if that is smaller) to learn what the
/// runs will get. A size given explicitly is never cut: its refusal is
/// the error, naming the limit.
pub fn resolve_pipe_size(requested: Option<usize>) -> io::Result<PipeSize> {
    let scratch = pipe()?;
    let size = requested.unwrap_or(DEFAULT_PIPE_SIZE);
    match fcntl_setpipe_size(&scratch.write, size) {
        Ok(granted) => Ok(PipeSize {
            requested: size,
            granted,
            clamped: false,
        }),
        Err(err) if requested.is_some() => Err(err),
        Err(err) => match pipe_max_size() {
            Ok(max) if max < DEFAULT_PIPE_SIZE => Ok(PipeSize {
                requested: DEFAULT_PIPE_SIZE,
                granted: fcntl_setpipe_size(&scratch.write, max)?,
                clamped: true,
            }),
            _ => Err(err),
        },
    }
}

/// Everything a contend run can be told.
#[derive(Debug, Clone, PartialEq)]
pub struct ContendConfig {
    /// The cells to measure, in order.
    pub cells: Vec<Cell>,
    /// Bytes per message.
    pub msg_size: usize,
    /// The pipe size (see [`resolve_pipe_size`]).
    pub pipe_size: PipeSize,
    /// How long writers write, per run.
    pub duration: Duration,
    /// Measured runs every cell gets (after its warm-up run).
    pub runs: usize,
    /// Measured runs a cell may get while its interval stays wide (at
    /// most `runs`: none added).
    pub max_runs: usize,
    /// Seed of the order of the runs.
    pub seed: u64,
    /// When a row's warm-up ends (`--warmup-runs`; files written before
    /// it was recorded: the default).
    pub warmup_rule: crate::bench::core::Warmup,
    /// Threads or processes.
    pub mode: Mode,
    /// Writers on one CPU and readers on another, or unpinned.
    pub placement: Placement,
    /// Send self-describing messages and check them all.
    pub verify: bool,
    /// Memory hogs to run for the whole measurement.
    pub pressure: Option<PressureConfig>,
    /// How long an end may go without progress before the watchdog
    /// fails its run (`bench::core::watchdog`).
    pub stall_timeout: Duration,
    /// The pipespeed binary (started for processes and memory hogs).
    pub exe: PathBuf,
}

impl ContendConfig {
    /// Checks what the library relies on; the errors name the value.
    pub fn validate(&self) -> io::Result<()> {
        let bad = |what: String| Err(io::Error::new(io::ErrorKind::InvalidInput, what));
        if self.cells.is_empty() {
            return bad("no writers x readers cell to run".into());
        }
        for c in &self.cells {
            if !(1..=MAX_ENDS).contains(&c.writers) || !(1..=MAX_ENDS).contains(&c.readers) {
                return bad(format!(
                    "{}: each must be 1 to {MAX_ENDS}",
                    ends(c.writers, c.readers)
                ));
            }
        }
        if !(1..=MAX_MESSAGE).contains(&self.msg_size)
            || (self.verify && !self.msg_size.is_multiple_of(CELL))
        {
            return bad(format!(
                "message size {} must be 1 byte to {MAX_MESSAGE}, and a multiple of {CELL} \
                 with verify",
                self.msg_size
            ));
        }
        if !(1..=MAX_RUNS).contains(&self.runs) || self.duration.is_zero() {
            return bad(format!(
                "runs must be 1 to {MAX_RUNS} and duration more than 0 (runs {})",
                self.runs
            ));
        }
        let stall = self.stall_timeout.as_secs_f64();
        if !(MIN_STALL_TIMEOUT_S..=MAX_STALL_TIMEOUT_S).contains(&stall) {
            return bad(format!(
                "stall timeout {stall} s must be {MIN_STALL_TIMEOUT_S} to {MAX_STALL_TIMEOUT_S} s"
            ));
        }
        if self.max_runs > MAX_RUNS {
            return bad(format!(
                "max runs must be at most {MAX_RUNS} (max runs {})",
                self.max_runs
            ));
        }
        Ok(())
    }

    /// How long the writers write in a cell's warm-up run: a third of a
    /// measured run, enough to fault in the ends' buffers, start every
    /// thread or process once and find a cell that cannot run, without
    /// adding a whole run per cell.
    pub fn warmup_duration(&self) -> Duration {
        self.duration / 3
    }
}

/// What every end of one run reported.
#[derive(Debug, Default)]
pub struct RawRun {
    /// One per writer, in order.
    pub writers: Vec<WriterEnd>,
    /// One per reader.
    pub readers: Vec<ReaderEnd>,
}

/// What the ends of one run need to know.
#[derive(Debug, Clone)]
pub struct RunSetup {
    pub(super) pipe_size: usize,
    pub(super) msg_size: usize,
    pub(super) duration_ns: u64,
    pub(super) verify: bool,
    pub(super) placement: Placement,
    pub(super) stall_timeout: Duration,
}

impl RunSetup {
    pub(super) fn end(&self, cell: Cell, writer: bool) -> EndSetup {
        EndSetup {
            msg_size: self.msg_size,
            writers: cell.writers,
            readers: cell.readers,
            verify: self.verify,
            cpu: match self.placement.cpus() {
                (writer_cpu, _) if writer => writer_cpu,
                (_, reader_cpu) => reader_cpu,
            },
        }
    }
}

/// One run of one cell: the job a runner does.
#[derive(Debug, Clone)]
pub struct CellJob {
    /// Writers and readers.
    pub cell: Cell,
    /// What the ends need to know.
    pub setup: RunSetup,
}

impl harness::Job for CellJob {
    type Output = RawRun;
    type Error = RunError;
}

/// `1 writer x 5 readers`: a cell in words, singular or plural.
pub(crate) fn ends(writers: usize, readers: usize) -> String {
    format!(
        "{} x {}",
        counted(writers, "writer"),
        counted(readers, "reader")
    )
}

/// `1 writer`, `5 writers`: the count and its noun, singular or plural.
pub(crate) fn counted(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}
