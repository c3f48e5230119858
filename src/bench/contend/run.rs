//! Running contend: every cell `runs` times, each run by a runner that
//! makes the ends threads or processes, under memory pressure if asked;
//! and the statistics of the runs.

use crate::bench::core::harness::Header;
use std::io;

use super::super::core::harness::{Event, Figure, Processes, Runner, Threads};
use super::super::core::stats::{median, min_max};
use super::super::hist::{LatencyNs, new_histogram};
use super::ends::{ReaderEnd, WriterEnd};
use super::hogs::Hogs;
use super::job::{Cell, CellJob, ContendConfig, PIPE_BUF, RunSetup};
use super::result::{ContendResult, Row, RunResult, SCHEMA};
use super::verdict::{self, VerifyReport};
use crate::sys::SystemFacts;
use crate::sys::process::interrupted;
use crate::units::MIB;

/// What every end of one run reported.
#[derive(Debug, Default)]
pub struct RawRun {
    /// One per writer, in order.
    pub writers: Vec<WriterEnd>,
    /// One per reader.
    pub readers: Vec<ReaderEnd>,
}

/// Every end a thread of this process, as pipe_bench runs them.
impl Runner<CellJob> for Threads {
    fn run(&mut self, job: &CellJob) -> io::Result<RawRun> {
        super::threads::run(job.cell, &job.setup)
    }
}

/// Every end a process of its own: the pipespeed binary as a worker.
impl Runner<CellJob> for Processes {
    fn run(&mut self, job: &CellJob) -> io::Result<RawRun> {
        super::procs::run(job.cell, &job.setup, &self.exe)
    }
}

/// Runs every cell `config.runs` times (under memory pressure if asked),
/// reporting progress to `on_event`.
///
/// After SIGINT, SIGTERM or SIGHUP (see
/// [`crate::sys::process::catch_interrupts`]) no run starts, the run cut
/// short counts for nothing, and the result holds the cells measured
/// before it (with the runs they had), marked `interrupted`; every worker
/// and hog is killed and reaped before this returns, whatever happens.
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
        pipe_size: config.pipe_size.granted,
        msg_size: config.msg_size,
        duration_ns: config.duration.as_nanos().min(u64::MAX as u128) as u64,
        verify: config.verify,
        placement: config.placement,
    };
    let atomic = config.msg_size <= PIPE_BUF;
    let mut per_cell = vec![Vec::new(); config.cells.len()];
    let mut runner = config.mode.runner::<CellJob>(config.exe.clone());
    // validate() bounds runs (MAX_RUNS); cells are as many as the caller
    // gave: saturate rather than overflow.
    let total = config.runs.saturating_mul(config.cells.len());
    'runs: for run in 0..config.runs {
        for (i, &cell) in config.cells.iter().enumerate() {
            if interrupted().is_some() {
                break 'runs;
            }
            let job = CellJob {
                cell,
                setup: setup.clone(),
            };
            let raw = runner.run(&job);
            if interrupted().is_some() {
                break 'runs;
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
                row: &format!("{}x{}", cell.writers, cell.readers),
                index: run * config.cells.len() + i + 1,
                total,
                figure: Figure::WritesPerS(result.writes_per_s),
            });
            per_cell[i].push(result);
        }
    }
    let mut header = Header::new(SCHEMA, system);
    header.interrupted = interrupted().is_some();
    Ok(ContendResult {
        header,
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
            .filter(|(_, runs)| !runs.is_empty())
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
