//! What contend measured: a row per cell, as `contend --json` writes it.
use crate::bench::core::{NoiseSummary, Placement, Series, Stall, Status};

use serde::{Deserialize, Serialize};

use super::super::hist::LatencyNs;
use super::hogs::PressureReport;
use super::job::Mode;
use super::pipe_bench::Log2Percentiles;
use super::tally::VerifyReport;
use crate::bench::core::harness::Header;

/// The `schema` of the JSON document.
pub const SCHEMA: &str = "pipespeed.contend/2";
/// The schema before the rows were made of [`Series`]: such a document
/// still loads into [`ContendResult`] (the series is rebuilt from its
/// runs).
pub const SCHEMA_V1: &str = "pipespeed.contend/1";

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
    /// The same writes' p50 and p99 as the kernel's pipe_bench computes
    /// them, from log2 buckets (`None` in files written before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_log2_ns: Option<Log2Percentiles>,
    /// Per `read(2)` that returned data, in ns (all readers merged).
    pub read_latency_ns: LatencyNs,
    /// `read(2)` calls that returned data.
    pub read_calls: u64,
    /// Bytes read (always equal to `bytes`).
    pub bytes_read: u64,
    /// With verify, the verdict.
    pub verify: Option<VerifyReport>,
}

/// Everything measured for one cell: its writes per second as a series
/// (median, range, spread, the noisy mark and its diagnosis), the medians
/// of the rest, and every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "RowWire")]
pub struct Row {
    /// Writers.
    pub writers: usize,
    /// Readers.
    pub readers: usize,
    /// Whether every run was measured.
    pub status: Status,
    /// Why the cell failed, or cannot run here (`None`: it ran).
    pub reason: Option<String>,
    /// Where every end was when the watchdog failed the cell's run: one
    /// made no progress for `--stall-timeout` (`None`: no stall).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<Stall>,
    /// Writes per second of the warm-up run (`None`: none made).
    pub warmup_writes_per_s: Option<f64>,
    /// Writes per second, every run and what they say.
    pub writes_per_s: Series,
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

impl Row {
    /// The median writes per second (0 without a run).
    pub fn median_writes_per_s(&self) -> f64 {
        self.writes_per_s.median.unwrap_or(0.0)
    }
}

/// A row as either schema writes it: `writes_per_s` a series (/2) or a
/// median beside `writes_per_s_min` and `_max` (/1, whose series is
/// rebuilt from its runs).
#[derive(Deserialize)]
struct RowWire {
    writers: usize,
    readers: usize,
    #[serde(default = "ok")]
    status: Status,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    stall: Option<Stall>,
    #[serde(default)]
    warmup_writes_per_s: Option<f64>,
    writes_per_s: WritesWire,
    mib_per_s: f64,
    seconds: f64,
    write_latency_ns: LatencyNs,
    read_latency_ns: LatencyNs,
    runs: Vec<RunResult>,
    verify: Option<VerifyReport>,
}

fn ok() -> Status {
    Status::Ok
}

#[derive(Deserialize)]
#[serde(untagged)]
enum WritesWire {
    Series(Series),
    /// The /1 median, rebuilt from the runs with the rest of the series.
    Median(#[allow(dead_code)] f64),
}

impl From<RowWire> for Row {
    fn from(w: RowWire) -> Row {
        let writes_per_s = match w.writes_per_s {
            WritesWire::Series(series) => series,
            WritesWire::Median(_) => {
                let runs: Vec<f64> = w.runs.iter().map(|r| r.writes_per_s).collect();
                Series::of(&runs)
            }
        };
        Row {
            writers: w.writers,
            readers: w.readers,
            status: w.status,
            reason: w.reason,
            stall: w.stall,
            warmup_writes_per_s: w.warmup_writes_per_s,
            writes_per_s,
            mib_per_s: w.mib_per_s,
            seconds: w.seconds,
            write_latency_ns: w.write_latency_ns,
            read_latency_ns: w.read_latency_ns,
            runs: w.runs,
            verify: w.verify,
        }
    }
}

/// The whole result, as the JSON document; the document also has a
/// `verdict` ([`Verdict`](super::Verdict), worked out from the rows as it is written; a
/// document read back gets it worked out again).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ContendResult {
    /// The format, the pipespeed that measured and the machine.
    #[serde(flatten)]
    pub header: Header,
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
    /// Nominal seconds writers write per measured run.
    pub duration_s: f64,
    /// Nominal seconds writers write in a cell's warm-up run (0: none,
    /// as in /1 files).
    #[serde(default)]
    pub warmup_duration_s: f64,
    /// Measured runs every cell gets (`--min-runs`).
    pub runs_per_cell: usize,
    /// Measured runs a cell may get while its interval is wide
    /// (`--max-runs`; /1 files: `runs_per_cell`).
    #[serde(default)]
    pub max_runs_per_cell: Option<usize>,
    /// Seed of the order of the runs (`None` in /1 files: cell by cell).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Steal and other load over every measured run (`None`: not
    /// measured).
    #[serde(default)]
    pub noise: Option<NoiseSummary>,
    /// Memory hogs and the kernel's evidence, or `None` without them.
    pub memory_pressure: Option<PressureReport>,
    /// One per cell.
    pub rows: Vec<Row>,
}
