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

pub mod ends;
pub mod frame;
pub mod hogs;
pub mod pressure;
pub mod procs;
pub mod render;
mod threads;
pub mod verdict;

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::sys::{SystemFacts, fcntl_setpipe_size, pipe, pipe_max_size};
use crate::units::MIB;

use super::hist::{LatencyNs, new_histogram};
use super::ladder::Placement;
use super::stats::{median, min_max};
use crate::child::interrupted_error;
use ends::{ReaderEnd, WriterEnd};
use frame::CELL;
use hogs::{Hogs, PressureConfig, PressureReport};
use verdict::VerifyReport;

pub use ends::EndSetup;
pub use hogs::hog;
pub use procs::{serve_reader, serve_writer};

/// The `schema` of the JSON document.
pub const SCHEMA: &str = "pipespeed.contend/1";
/// Writes of up to this many bytes are atomic on a pipe (pipe(7)).
pub const PIPE_BUF: usize = 4096;
/// The pipe size asked for when none is given.
pub const DEFAULT_PIPE_SIZE: usize = MIB as usize;
/// The most writers (or readers) in one cell: writer ids are 16 bits.
pub const MAX_ENDS: usize = 4096;
/// pipe_bench's default grid: writers...
pub const SWEEP_WRITERS: [usize; 3] = [1, 2, 5];
/// ...times readers.
pub const SWEEP_READERS: [usize; 3] = [1, 5, 10];

/// Whether the ends are threads of this process or processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Threads of one process, as pipe_bench.
    Threads,
    /// One process per end.
    Processes,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Threads => "threads",
            Mode::Processes => "processes",
        })
    }
}

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
    if let Some(size) = requested {
        let granted = fcntl_setpipe_size(&scratch.write, size)?;
        return Ok(PipeSize {
            requested: size,
            granted,
            clamped: false,
        });
    }
    match fcntl_setpipe_size(&scratch.write, DEFAULT_PIPE_SIZE) {
        Ok(granted) => Ok(PipeSize {
            requested: DEFAULT_PIPE_SIZE,
            granted,
            clamped: false,
        }),
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
    /// Runs per cell (the grid is run this many times over, so drift
    /// spreads over all cells).
    pub runs: usize,
    /// Threads or processes.
    pub mode: Mode,
    /// Writers on one CPU and readers on another, or unpinned.
    pub placement: Placement,
    /// Send self-describing messages and check them all.
    pub verify: bool,
    /// Memory hogs to run for the whole measurement.
    pub pressure: Option<PressureConfig>,
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
                    "{} writers x {} readers: each must be 1 to {MAX_ENDS}",
                    c.writers, c.readers
                ));
            }
        }
        if self.msg_size == 0 || (self.verify && !self.msg_size.is_multiple_of(CELL)) {
            return bad(format!(
                "message size {} must be more than 0, and a multiple of {CELL} with verify",
                self.msg_size
            ));
        }
        if self.runs == 0 || self.duration.is_zero() {
            return bad("runs and duration must be more than 0".into());
        }
        Ok(())
    }
}

/// What the ends of one run need to know.
struct RunSetup {
    exe: PathBuf,
    pipe_size: usize,
    msg_size: usize,
    duration_ns: u64,
    verify: bool,
    placement: Placement,
}

impl RunSetup {
    fn end(&self, cell: Cell, writer: bool) -> EndSetup {
        EndSetup {
            msg_size: self.msg_size,
            writers: cell.writers,
            readers: cell.readers,
            verify: self.verify,
            cpu: match self.placement {
                Placement::Pinned {
                    writer_cpu,
                    reader_cpu,
                } => Some(if writer { writer_cpu } else { reader_cpu }),
                Placement::Unpinned => None,
            },
        }
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

/// One measured run of one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Measured seconds: first write started to last write returned.
    pub seconds: f64,
    /// Messages written (by all writers).
    pub messages: u64,
    /// Bytes written.
    pub bytes: u64,
    /// `messages / seconds`.
    pub writes_per_s: f64,
    /// `bytes / seconds`, in MiB/s.
    pub mib_per_s: f64,
    /// Per message written, in ns (all writers' histograms merged).
    pub write_latency_ns: LatencyNs,
    /// Per `read(2)` that returned data, in ns (all readers merged).
    pub read_latency_ns: LatencyNs,
    /// `read(2)` calls that returned data.
    pub read_calls: u64,
    /// Bytes read (always equal to `bytes`).
    pub bytes_read: u64,
    /// With verify, the verdict.
    pub verify: Option<VerifyReport>,
}

/// Everything measured for one cell: the median of its runs, and the
/// runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Writers.
    pub writers: usize,
    /// Readers.
    pub readers: usize,
    /// Median over runs.
    pub writes_per_s: f64,
    /// Smallest over runs.
    pub writes_per_s_min: f64,
    /// Largest over runs.
    pub writes_per_s_max: f64,
    /// Median over runs.
    pub mib_per_s: f64,
    /// Median measured seconds.
    pub seconds: f64,
    /// Median over runs, field by field.
    pub write_latency_ns: LatencyNs,
    /// Median over runs, field by field.
    pub read_latency_ns: LatencyNs,
    /// Every run, in the order measured.
    pub runs: Vec<RunResult>,
    /// With verify, the runs' verdicts summed.
    pub verify: Option<VerifyReport>,
}

/// The whole result, as the JSON document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContendResult {
    /// [`SCHEMA`].
    pub schema: String,
    /// The pipespeed version that measured.
    pub pipespeed_version: String,
    /// The machine.
    pub system: SystemFacts,
    /// Threads or processes.
    pub mode: Mode,
    /// Where the ends ran.
    pub placement: Placement,
    /// Pipe size granted, in bytes.
    pub pipe_size: usize,
    /// Pipe size asked for, in bytes.
    pub pipe_size_requested: usize,
    /// Whether the default pipe size was cut to pipe-max-size.
    pub pipe_size_clamped: bool,
    /// Bytes per message.
    pub msg_size: usize,
    /// Whether messages are at most `PIPE_BUF` bytes (atomic writes).
    pub atomic: bool,
    /// Nominal seconds writers write per run.
    pub duration_s: f64,
    /// Runs per cell.
    pub runs_per_cell: usize,
    /// Memory hogs and the kernel's evidence, or `None` without them.
    pub memory_pressure: Option<PressureReport>,
    /// One per cell.
    pub rows: Vec<Row>,
}

/// Progress, for a display.
#[derive(Debug)]
pub enum Event<'a> {
    /// The memory hogs have written their memory once.
    PressureReady {
        /// Bytes the hogs hold together.
        bytes: u64,
        /// Seconds it took.
        seconds: f64,
    },
    /// One run of one cell is done.
    Measured {
        /// Run number, from 0.
        run: usize,
        /// The cell.
        cell: Cell,
        /// What it measured.
        result: &'a RunResult,
    },
}

/// Runs every cell `config.runs` times (under memory pressure if asked),
/// reporting progress to `on_event`.
///
/// Returns an `Interrupted` error if SIGINT or SIGTERM came (see
/// [`crate::sys::process::catch_interrupts`]); every worker and hog is
/// killed and reaped before this returns, whatever happens.
pub fn run_contend(
    config: &ContendConfig,
    system: SystemFacts,
    on_event: &mut dyn FnMut(Event<'_>),
) -> io::Result<ContendResult> {
    config.validate()?;
    let hogs = match &config.pressure {
        Some(p) => Some(Hogs::start(p, &config.exe)?),
        None => None,
    };
    if let Some(h) = &hogs {
        on_event(Event::PressureReady {
            bytes: h.bytes_total(),
            seconds: h.ready_s(),
        });
    }
    let setup = RunSetup {
        exe: config.exe.clone(),
        pipe_size: config.pipe_size.granted,
        msg_size: config.msg_size,
        duration_ns: config.duration.as_nanos().min(u64::MAX as u128) as u64,
        verify: config.verify,
        placement: config.placement,
    };
    let atomic = config.msg_size <= PIPE_BUF;
    let mut per_cell = vec![Vec::new(); config.cells.len()];
    for run in 0..config.runs {
        for (i, &cell) in config.cells.iter().enumerate() {
            let raw = match config.mode {
                Mode::Threads => threads::run(cell, &setup),
                Mode::Processes => procs::run(cell, &setup),
            };
            if let Some(err) = interrupted_error() {
                return Err(err);
            }
            let in_cell = |e: io::Error| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{} writers x {} readers: {}",
                        cell.writers,
                        cell.readers,
                        crate::quote::strerror(&e)
                    ),
                )
            };
            let result =
                summarise_run(&raw.map_err(in_cell)?, config.msg_size, atomic).map_err(in_cell)?;
            on_event(Event::Measured {
                run,
                cell,
                result: &result,
            });
            per_cell[i].push(result);
        }
    }
    Ok(ContendResult {
        schema: SCHEMA.to_string(),
        pipespeed_version: env!("CARGO_PKG_VERSION").to_string(),
        system,
        mode: config.mode,
        placement: config.placement,
        pipe_size: config.pipe_size.granted,
        pipe_size_requested: config.pipe_size.requested,
        pipe_size_clamped: config.pipe_size.clamped,
        msg_size: config.msg_size,
        atomic,
        duration_s: config.duration.as_secs_f64(),
        runs_per_cell: config.runs,
        memory_pressure: hogs.map(Hogs::finish),
        rows: config
            .cells
            .iter()
            .zip(per_cell)
            .map(|(&cell, runs)| summarise_row(cell, runs))
            .collect(),
    })
}

/// Turns what the ends reported into one run's result: rates over the
/// measured time, merged histograms, and the verify verdict.
pub fn summarise_run(raw: &RawRun, msg_size: usize, atomic: bool) -> io::Result<RunResult> {
    let merge_failed = |e| io::Error::other(format!("cannot merge latency histograms: {e}"));
    let mut writes = new_histogram();
    let mut reads = new_histogram();
    for w in &raw.writers {
        writes.add(&w.latency).map_err(merge_failed)?;
    }
    for r in &raw.readers {
        reads.add(&r.latency).map_err(merge_failed)?;
    }
    let messages: u64 = raw.writers.iter().map(|w| w.messages).sum();
    let bytes: u64 = raw.writers.iter().map(|w| w.bytes).sum();
    let bytes_read: u64 = raw.readers.iter().map(|r| r.bytes).sum();
    if bytes_read != bytes {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the writers wrote {bytes} bytes but the readers read {bytes_read}"),
        ));
    }
    let first = raw.writers.iter().filter_map(|w| w.first_ns).min();
    let last = raw.writers.iter().filter_map(|w| w.last_ns).max();
    let seconds = match (first, last) {
        (Some(first), Some(last)) => last.saturating_sub(first) as f64 / 1e9,
        _ => 0.0,
    };
    let rate = |n: f64| if seconds > 0.0 { n / seconds } else { 0.0 };
    let tallies: Option<Vec<_>> = raw.readers.iter().map(|r| r.tally.clone()).collect();
    let sent: Vec<u64> = raw.writers.iter().map(|w| w.messages).collect();
    Ok(RunResult {
        seconds,
        messages,
        bytes,
        writes_per_s: rate(messages as f64),
        mib_per_s: rate(bytes as f64 / MIB as f64),
        write_latency_ns: LatencyNs::of(&writes),
        read_latency_ns: LatencyNs::of(&reads),
        read_calls: raw.readers.iter().map(|r| r.calls).sum(),
        bytes_read,
        verify: tallies
            .filter(|t| !t.is_empty())
            .map(|t| verdict::check(&t, &sent, msg_size, atomic)),
    })
}

/// The row of a cell: medians and spread over its runs.
pub fn summarise_row(cell: Cell, runs: Vec<RunResult>) -> Row {
    let of = |f: fn(&RunResult) -> f64| runs.iter().map(f).collect::<Vec<_>>();
    let writes = of(|r| r.writes_per_s);
    let (min, max) = min_max(&writes).unwrap_or((0.0, 0.0));
    let latency = |f: fn(&RunResult) -> LatencyNs| {
        LatencyNs::median_of(&runs.iter().map(f).collect::<Vec<_>>())
    };
    let verifies: Option<Vec<VerifyReport>> = runs.iter().map(|r| r.verify).collect();
    Row {
        writers: cell.writers,
        readers: cell.readers,
        writes_per_s: median(&writes).unwrap_or(0.0),
        writes_per_s_min: min,
        writes_per_s_max: max,
        mib_per_s: median(&of(|r| r.mib_per_s)).unwrap_or(0.0),
        seconds: median(&of(|r| r.seconds)).unwrap_or(0.0),
        write_latency_ns: latency(|r| r.write_latency_ns),
        read_latency_ns: latency(|r| r.read_latency_ns),
        verify: verifies.and_then(|v| VerifyReport::sum(&v)),
        runs,
    }
}

#[cfg(test)]
mod tests;
