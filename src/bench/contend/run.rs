//! Running contend: every cell by the one schedule of `bench::core`, each
//! run by a runner that makes the ends threads or processes, under memory
//! pressure if asked; and the statistics of the runs.

use std::io;
use std::time::Duration;

use super::super::core::harness::{Event, Figure, Processes, Runner, Threads};
use super::super::core::schedule::{Phase, Plan, Slot, measure};
use super::super::core::stats::median;
use super::super::core::{Cancel, RunError, Series, Status};
use super::super::hist::{LatencyNs, new_histogram};
use super::hogs::Hogs;
use super::job::{Cell, CellJob, ContendConfig, PIPE_BUF, RawRun, RunSetup};
use super::pipe_bench::Log2Histogram;
use super::result::{ContendResult, Row, RunResult, SCHEMA};
use super::tally::{self, VerifyReport};
use crate::sys::SystemFacts;
use crate::units::MIB;

/// Every end a thread of this process, as pipe_bench runs them.
impl Runner<CellJob> for Threads {
    fn run(&mut self, job: &CellJob) -> Result<RawRun, RunError> {
        super::threads::run(job.cell, &job.setup)
    }
}

/// Every end a process of its own: the pipespeed binary as a worker.
impl Runner<CellJob> for Processes {
    fn run(&mut self, job: &CellJob) -> Result<RawRun, RunError> {
        super::procs::run(job.cell, &job.setup, &self.exe)
    }
}

/// Runs every cell by `config` (under memory pressure if asked), its ends
/// threads or processes as `config.mode` says, reporting progress to
/// `on_event`: see [`run_contend_on`].
pub fn run_contend(
    config: &ContendConfig,
    system: SystemFacts,
    cancel: &Cancel,
    on_event: &mut dyn FnMut(Event<'_>),
) -> io::Result<ContendResult> {
    let mut runner = config.mode.runner::<CellJob>(config.exe.clone());
    run_contend_on(config, system, runner.as_mut(), cancel, on_event)
}

/// Runs every cell by `config` with `runner`, by the one
/// [`schedule()`](super::super::core::schedule()): a warm-up run per cell
/// (a third of `config.duration`), then the measured runs; memory hogs,
/// if asked, run for the whole schedule.
///
/// A run that fails stops its cell; the others go on. Once `cancel` is
/// set the result holds the cells measured before, marked `interrupted`;
/// every worker and hog is killed and reaped before this returns. The
/// error is for what stops everything: a bad configuration, or hogs that
/// could not start.
pub fn run_contend_on(
    config: &ContendConfig,
    system: SystemFacts,
    runner: &mut dyn Runner<CellJob>,
    cancel: &Cancel,
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
    let setup = |duration: Duration| RunSetup {
        pipe_size: config.pipe_size.granted,
        msg_size: config.msg_size,
        duration_ns: duration.as_nanos().min(u64::MAX as u128) as u64,
        verify: config.verify,
        placement: config.placement,
        stall_timeout: config.stall_timeout,
    };
    let (measured, warmup) = (setup(config.duration), setup(config.warmup_duration()));
    let atomic = config.msg_size <= PIPE_BUF;
    let slots: Vec<Slot> = config
        .cells
        .iter()
        .map(|c| Slot::new(cell_name(*c)))
        .collect();
    let plan = Plan {
        runs: config.runs,
        max_runs: config.max_runs.max(config.runs),
        seed: config.seed,
        ends: config.placement.ends(&system),
        warmup: config.warmup_rule,
    };
    let cpus = config.placement.cpu_list();
    let done = measure(&slots, &plan, &cpus, cancel, on_event, &mut |i, phase| {
        let job = CellJob {
            cell: config.cells[i],
            setup: match phase {
                Phase::WarmUp => warmup.clone(),
                Phase::Measure => measured.clone(),
            },
        };
        let result = summarise_run(&runner.run(&job)?, config.msg_size, atomic)
            .map_err(|e| RunError::Failed(crate::quote::strerror(&e)))?;
        Ok((Figure::WritesPerS(result.writes_per_s), result))
    });
    let header = done.schedule.header(SCHEMA, system);
    let noise = done.schedule.noise;
    let rows = (done.reached())
        .map(|(i, outcome, runs)| {
            let mut row = summarise_row(config.cells[i], runs);
            row.status = outcome.status;
            row.reason = outcome.reason;
            row.stall = outcome.stall;
            row.warmup_writes_per_s = outcome.warmup;
            row.writes_per_s = outcome.series;
            row
        })
        .collect();
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
        warmup_duration_s: config.warmup_duration().as_secs_f64(),
        runs_per_cell: config.runs,
        max_runs_per_cell: Some(plan.max_runs),
        seed: Some(config.seed),
        noise,
        memory_pressure: hogs.map(Hogs::finish),
        rows,
    })
}

/// A cell's name in progress and in `compare`: `WxR`.
pub(crate) fn cell_name(cell: Cell) -> String {
    format!("{}x{}", cell.writers, cell.readers)
}

/// Turns what the ends reported into one run's result: rates over the
/// measured time, merged histograms, and the verify verdict.
pub(crate) fn summarise_run(raw: &RawRun, msg_size: usize, atomic: bool) -> io::Result<RunResult> {
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
        write_log2_ns: Some(Log2Histogram::of_hdr(&writes).percentiles()),
        read_latency_ns: LatencyNs::of(&reads),
        read_calls: raw.readers.iter().map(|r| r.calls).sum(),
        bytes_read,
        verify: tallies
            .filter(|t| !t.is_empty())
            .map(|t| tally::check(&t, &sent, msg_size, atomic)),
    })
}

/// The row of a cell measured by `runs`: its writes per second as a
/// series (without noise: [`run_contend_on`] puts in the schedule's, with
/// the diagnosis), the medians of the rest.
pub fn summarise_row(cell: Cell, runs: Vec<RunResult>) -> Row {
    let of = |f: fn(&RunResult) -> f64| runs.iter().map(f).collect::<Vec<_>>();
    let latency = |f: fn(&RunResult) -> LatencyNs| {
        LatencyNs::median_of(&runs.iter().map(f).collect::<Vec<_>>())
    };
    let verifies: Option<Vec<VerifyReport>> = runs.iter().map(|r| r.verify).collect();
    Row {
        writers: cell.writers,
        readers: cell.readers,
        status: Status::Ok,
        reason: None,
        stall: None,
        warmup_writes_per_s: None,
        writes_per_s: Series::of(&of(|r| r.writes_per_s)),
        mib_per_s: median(&of(|r| r.mib_per_s)).unwrap_or(0.0),
        seconds: median(&of(|r| r.seconds)).unwrap_or(0.0),
        write_latency_ns: latency(|r| r.write_latency_ns),
        read_latency_ns: latency(|r| r.read_latency_ns),
        verify: verifies.and_then(|v| VerifyReport::sum(&v)),
        runs,
    }
}
