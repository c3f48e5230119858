//! What contend measured: a row per cell, as `contend --json` writes it.
use crate::bench::core::Placement;

use serde::{Deserialize, Serialize};

use super::super::hist::LatencyNs;
use super::hogs::PressureReport;
use super::job::Mode;
use super::verdict::VerifyReport;
use crate::bench::core::harness::Header;

/// The `schema` of the JSON document.
pub const SCHEMA: &str = "pipespeed.contend/1";

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
    /// Nominal seconds writers write per run.
    pub duration_s: f64,
    /// Runs per cell.
    pub runs_per_cell: usize,
    /// Memory hogs and the kernel's evidence, or `None` without them.
    pub memory_pressure: Option<PressureReport>,
    /// One per cell.
    pub rows: Vec<Row>,
}
