//! The kernel's pipe_bench as a guest's measurement (`kernels
//! --pipe-bench FILE`): its output of one boot (several runs of it, each
//! one run of every cell) read by the one pipe_bench parser
//! ([`crate::bench::contend::pipe_bench`]) into a contend result, a run
//! per block, so that each kernel's boots pool into cells of several runs
//! and are judged by the same compare as contend's cells.
//!
//! pipe_bench gives a cell's writes per second and its write latency's
//! mean, maximum and the upper bounds of the log2 buckets of its median
//! and 99th percentile: those are the run's figures here (p90 and p99.9
//! are 0, and it measures no read latency). Its rate is over the nominal
//! duration, as it prints it.

use crate::bench::contend::pipe_bench::{ParseError, PipeBenchCell, parse};
use crate::bench::contend::{Cell, ContendResult, RunResult, SCHEMA, summarise_row};
use crate::bench::core::Placement;
use crate::bench::core::harness::{Header, Mode};
use crate::bench::hist::LatencyNs;
use crate::compare::Document;
use crate::sys::facts::{SystemFacts, ThpMode};

/// The guest's facts from the `# key: value` lines its `/init` writes
/// before pipe_bench's output; what is missing is unknown (0).
pub(crate) fn facts(text: &str) -> SystemFacts {
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
        cpu_model: value("cpu_model").unwrap_or_else(|| "unknown".into()),
        cpus_online: cpus,
        cpus_allowed: (0..cpus).collect(),
        thp: ThpMode::Unknown,
        pipe_max_size_bytes: number("pipe_max_size"),
        page_size_bytes: 4096,
        virtualization: Some("qemu".into()),
    }
}

/// One block as one run of its cell.
fn run(c: &PipeBenchCell) -> RunResult {
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
        read_latency_ns: LatencyNs::default(),
        read_calls: 0,
        bytes_read: bytes,
        verify: None,
    }
}

/// One boot's pipe_bench output (all its runs, `2>&1`) as a contend
/// result: a row per cell (writers x readers, in the order first
/// printed), a run per block of it.
pub(crate) fn document(text: &str) -> Result<Document, ParseError> {
    let log = parse(text)?;
    let mut cells: Vec<(Cell, Vec<RunResult>)> = Vec::new();
    for block in &log.cells {
        let cell = Cell {
            writers: block.writers,
            readers: block.readers,
        };
        match cells.iter_mut().find(|(c, _)| *c == cell) {
            Some((_, runs)) => runs.push(run(block)),
            None => cells.push((cell, vec![run(block)])),
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
    Ok(Document::Contend(Box::new(ContendResult {
        header: Header::new(SCHEMA, facts(text)),
        mode: Mode::Threads,
        placement: Placement::Unpinned,
        pipe_size,
        pipe_size_requested: pipe_size,
        pipe_size_clamped: false,
        msg_size,
        atomic: msg_size <= crate::bench::contend::PIPE_BUF,
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
    })))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const BOOT: &str = "# kernel: 7.2.13+deb14-amd64\n# cpus: 2\n# pipe_max_size: 1048576\n\
        pid=81\n\
        config: writers=1 readers=1 msgsize=65536 duration=1 pipe_size=1048576 memory_pressure=no\n\
        writes: total=2000 rate=2000/s\nthroughput_MBps: 125.00\nlat_avg_ns: 400000\n\
        lat_p50_ns_upper: 262143\nlat_p99_ns_upper: 2097151\nlat_max_ns: 3000000\n\
        pid=82\n\
        config: writers=1 readers=1 msgsize=65536 duration=1 pipe_size=1048576 memory_pressure=no\n\
        writes: total=3000 rate=3000/s\nthroughput_MBps: 187.50\nlat_avg_ns: 300000\n\
        lat_p50_ns_upper: 262143\nlat_p99_ns_upper: 1048575\nlat_max_ns: 2000000\n";

    #[test]
    fn the_runs_of_a_boot_pool_into_one_cell() {
        let Document::Contend(r) = document(BOOT).unwrap() else {
            panic!("not contend")
        };
        assert_eq!(r.rows.len(), 1);
        let row = &r.rows[0];
        assert_eq!((row.writers, row.readers, row.runs.len()), (1, 1, 2));
        assert_eq!(row.runs[1].writes_per_s, 3000.0);
        assert_eq!(row.runs[0].write_latency_ns.p99, 2_097_151);
        assert_eq!(row.writes_per_s.median, Some(2500.0));
        assert_eq!(
            (r.msg_size, r.pipe_size, r.runs_per_cell),
            (65536, 1 << 20, 2)
        );
        assert_eq!(r.header.system.kernel, "7.2.13+deb14-amd64");
        assert_eq!(r.header.system.cpus_online, 2);
    }

    #[test]
    fn a_text_that_is_not_pipe_bench_s_is_an_error_naming_the_line() {
        let err = document("# kernel: 6.1\nSegmentation fault\n")
            .err()
            .unwrap();
        assert_eq!(err.line, 2, "{err}");
    }
}
