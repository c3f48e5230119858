//! A contend result and pipe_bench's log, each as the other: the
//! blocks `contend --pipe-bench` writes ([`log_of`]), and a log read as a
//! contend result for `compare` and `kernels` ([`result_of`]).

use std::io;

use super::{Exact, Log2Percentiles, ParseError, PipeBenchCell, PipeBenchLog, parse};
use crate::bench::contend::{Cell, ContendResult, PIPE_BUF, Row, RunResult, summarise_row};
use crate::bench::core::Placement;
use crate::bench::core::harness::{Header, Mode};
use crate::bench::core::stats::median;
use crate::bench::hist::LatencyNs;
use crate::report::Exporter;
use crate::sys::facts::{SystemFacts, ThpMode};

/// The format a result read from a log is in ([`result_of`]), where a
/// result names its schema: `compare` says it in its heading.
pub const LOG_FORMAT: &str = "pipe_bench output";

/// A contend result in pipe_bench's words: a block per cell that was
/// measured, its figures the medians of the cell's runs, `---` before
/// each when there are several cells (pipe_bench's sweep). `rate` and
/// `throughput_MBps` are over the measured time (pipe_bench's over the
/// nominal duration); `pipe_size` is the size asked for, as pipe_bench
/// prints it. `None`: the duration is not a whole number of seconds,
/// which pipe_bench's `duration=` cannot say.
pub fn log_of(result: &ContendResult) -> Option<PipeBenchLog> {
    let duration = result.duration_s;
    if !(duration >= 1.0 && duration.fract() == 0.0) {
        return None;
    }
    let cells = (result.rows.iter())
        .filter(|row| !row.runs.is_empty())
        .map(|row| cell_of(result, row, duration as u64))
        .collect();
    Some(PipeBenchLog {
        cells,
        separated: result.rows.len() > 1,
    })
}

/// One measured row as a block.
fn cell_of(result: &ContendResult, row: &Row, duration_s: u64) -> PipeBenchCell {
    let of = |f: fn(&RunResult) -> f64| {
        median(&row.runs.iter().map(f).collect::<Vec<_>>()).unwrap_or(0.0)
    };
    // A bucket's bound stays one: of two middle runs, the lower.
    let bound = |f: fn(&Log2Percentiles) -> u64| {
        let mut v: Vec<u64> = (row.runs.iter())
            .filter_map(|r| r.write_log2_ns.as_ref().map(f))
            .collect();
        v.sort_unstable();
        v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
    };
    let lat = &row.write_latency_ns;
    PipeBenchCell {
        writers: row.writers,
        readers: row.readers,
        msg_size: result.msg_size as u64,
        duration_s,
        pipe_size: result.pipe_size_requested as u64,
        memory_pressure: result.memory_pressure.is_some(),
        writes_total: of(|r| r.messages as f64).round() as u64,
        writes_per_s: row.median_writes_per_s().round() as u64,
        throughput_mib_s: row.mib_per_s,
        // pipe_bench divides whole nanoseconds.
        lat_avg_ns: lat.mean as u64,
        lat_p50_ns_upper: bound(|p| p.p50_upper),
        lat_p99_ns_upper: bound(|p| p.p99_upper),
        lat_max_ns: lat.max,
        exact: Some(Exact {
            runs: row.runs.len() as u64,
            lat_p50_ns: lat.p50,
            lat_p99_ns: lat.p99,
        }),
        notes: Vec::new(),
    }
}

/// `contend --pipe-bench`: pipe_bench's blocks ([`log_of`]).
#[derive(Debug, Clone, Copy)]
pub struct PipeBenchFormat;

impl Exporter<ContendResult> for PipeBenchFormat {
    fn export(&self, result: &ContendResult) -> io::Result<Vec<u8>> {
        let log = log_of(result).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "pipe_bench's format has whole seconds, and the duration is {} s",
                    result.duration_s
                ),
            )
        })?;
        Ok(log.to_string().into_bytes())
    }
}

/// A log as a contend result, so that compare and kernels judge
/// pipe_bench's cells as they judge contend's: a row per cell (writers x
/// readers, in the order first printed), a run per block of it (a log of
/// several runs of pipe_bench, or of several sweeps, gives cells of
/// several runs). A block's figures are its run's: writes per second
/// and MiB/s over the nominal duration, the mean and maximum write
/// latency, and for p50 and p99 the upper bounds of their log2 buckets
/// (pipespeed's exact ones are left aside, so that a log of pipespeed's
/// and one of pipe_bench's are read alike); p90 and p99.9 are 0, and no
/// read latency is measured. The system is what the `# key: value`
/// lines before the blocks say ([`system_of`]).
pub fn result_of(text: &str) -> Result<ContendResult, ParseError> {
    let log = parse(text)?;
    let mut cells: Vec<(Cell, Vec<RunResult>)> = Vec::new();
    for block in &log.cells {
        let cell = Cell {
            writers: block.writers,
            readers: block.readers,
        };
        match cells.iter_mut().find(|(c, _)| *c == cell) {
            Some((_, runs)) => runs.push(run_of(block)),
            None => cells.push((cell, vec![run_of(block)])),
        }
    }
    // parse() refuses a text without a block.
    let first = log.cells.first().ok_or_else(|| ParseError {
        line: 1,
        cause: "no block".into(),
    })?;
    let msg_size = usize::try_from(first.msg_size).unwrap_or(usize::MAX);
    let pipe_size = usize::try_from(first.pipe_size).unwrap_or(usize::MAX);
    let runs_per_cell = cells.iter().map(|(_, r)| r.len()).min().unwrap_or(0);
    Ok(ContendResult {
        // pipe_bench's, not this pipespeed's: no version or build.
        header: Header {
            pipespeed_version: String::new(),
            build: None,
            ..Header::new(LOG_FORMAT, system_of(text))
        },
        mode: Mode::Threads,
        placement: Placement::Unpinned,
        pipe_size,
        pipe_size_requested: pipe_size,
        pipe_size_clamped: false,
        msg_size,
        atomic: msg_size <= PIPE_BUF,
        duration_s: first.duration_s as f64,
        warmup_duration_s: 0.0,
        runs_per_cell,
        max_runs_per_cell: None,
        seed: None,
        noise: None,
        memory_pressure: None,
        rows: cells
            .into_iter()
            .map(|(cell, runs)| summarise_row(cell, runs))
            .collect(),
    })
}

/// One block as one run of its cell.
fn run_of(c: &PipeBenchCell) -> RunResult {
    let bytes = c.writes_total.saturating_mul(c.msg_size);
    RunResult {
        seconds: c.duration_s as f64,
        messages: c.writes_total,
        bytes,
        writes_per_s: c.writes_per_s as f64,
        mib_per_s: c.throughput_mib_s,
        write_latency_ns: LatencyNs {
            mean: c.lat_avg_ns as f64,
            p50: c.lat_p50_ns_upper,
            p99: c.lat_p99_ns_upper,
            max: c.lat_max_ns,
            ..LatencyNs::default()
        },
        write_log2_ns: Some(Log2Percentiles {
            p50_upper: c.lat_p50_ns_upper,
            p99_upper: c.lat_p99_ns_upper,
        }),
        read_latency_ns: LatencyNs::default(),
        read_calls: 0,
        bytes_read: bytes,
        verify: None,
    }
}

/// The system a log was measured on, from `# key: value` lines
/// (`kernel`, `kernel_version`, `arch`, `cpu_model`, `cpus`,
/// `pipe_max_size`: what `kernels`' guest writes before pipe_bench's
/// output, and what a user may add to a log, as `# cpus: 8`); what is
/// missing is not recorded (empty, or 0).
pub fn system_of(text: &str) -> SystemFacts {
    let value = |key: &str| {
        let prefix = format!("# {key}:");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(|v| v.trim().to_string())
    };
    let number = |key: &str| value(key).and_then(|v| v.parse().ok()).unwrap_or(0);
    let cpus: usize = number("cpus");
    SystemFacts {
        kernel: value("kernel").unwrap_or_default(),
        kernel_version: value("kernel_version").unwrap_or_default(),
        arch: value("arch").unwrap_or_default(),
        cpu_model: value("cpu_model").unwrap_or_default(),
        cpus_online: cpus,
        cpus_allowed: (0..cpus).collect(),
        thp: ThpMode::Unknown,
        pipe_max_size_bytes: number("pipe_max_size"),
        page_size_bytes: number("page_size"),
        virtualization: value("virtualization"),
    }
}
