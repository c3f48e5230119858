//! The runner's pure parts on fixed data, and short live runs that check
//! behaviour (never speed).
use crate::bench::core::{Cancel, Placement, RunError, Runner, Status};

use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::bench::hist::{LatencyNs, new_histogram, record};
use crate::sys::SystemFacts;
use ends::{ReaderEnd, WriterEnd};

fn histogram(ns: &[u64]) -> hdrhistogram::Histogram<u64> {
    let mut latency = new_histogram();
    for &n in ns {
        record(&mut latency, n);
    }
    latency
}

fn writer(messages: u64, first: u64, last: u64, ns: &[u64]) -> WriterEnd {
    WriterEnd {
        messages,
        bytes: messages * 1024,
        first_ns: Some(first),
        last_ns: Some(last),
        latency: histogram(ns),
    }
}

fn reader(bytes: u64, ns: &[u64]) -> ReaderEnd {
    ReaderEnd {
        bytes,
        calls: ns.len() as u64,
        latency: histogram(ns),
        tally: None,
    }
}

#[test]
fn rates_use_the_measured_time_from_first_write_to_last() {
    let raw = RawRun {
        writers: vec![
            writer(1000, 1_000_000_000, 1_400_000_000, &[1000, 3000]),
            writer(1000, 1_100_000_000, 1_500_000_000, &[2000]),
        ],
        readers: vec![reader(2000 * 1024, &[500, 700, 900])],
    };
    let r = summarise_run(&raw, 1024, true).unwrap();
    assert!((r.seconds - 0.5).abs() < 1e-9, "{r:?}");
    assert!((r.writes_per_s - 4000.0).abs() < 1e-6);
    assert!((r.mib_per_s - 2000.0 * 1024.0 / 0.5 / (1 << 20) as f64).abs() < 1e-9);
    assert_eq!(r.write_latency_ns.max / 10, 3000 / 10);
    assert_eq!(r.read_calls, 3);
    assert_eq!(r.verify, None);
}

#[test]
fn bytes_not_read_are_an_error() {
    let raw = RawRun {
        writers: vec![writer(10, 0, 10, &[1])],
        readers: vec![reader(5, &[1])],
    };
    let err = summarise_run(&raw, 1024, true).unwrap_err();
    assert!(err.to_string().contains("readers read 5"), "{err}");
}

#[test]
fn a_row_is_the_median_of_its_runs_with_the_spread() {
    let run = |writes_per_s: f64, p99: u64| RunResult {
        seconds: 1.0,
        messages: 1,
        bytes: 1,
        writes_per_s,
        mib_per_s: writes_per_s / 16.0,
        write_latency_ns: LatencyNs {
            p99,
            ..LatencyNs::default()
        },
        write_log2_ns: None,
        read_latency_ns: LatencyNs::default(),
        read_calls: 1,
        bytes_read: 1,
        verify: None,
    };
    let row = summarise_row(
        Cell {
            writers: 2,
            readers: 5,
        },
        vec![run(300.0, 9), run(100.0, 1), run(200.0, 5)],
    );
    let w = &row.writes_per_s;
    assert_eq!(
        (w.median, w.min, w.max),
        (Some(200.0), Some(100.0), Some(300.0))
    );
    assert_eq!(row.write_latency_ns.p99, 5);
    assert_eq!(row.runs.len(), 3);
    assert_eq!(row.runs[0].writes_per_s, 300.0, "runs keep their order");
}

#[test]
fn the_sweep_is_pipe_bench_s_grid_writers_major() {
    let grid: Vec<_> = Cell::sweep()
        .iter()
        .map(|c| (c.writers, c.readers))
        .collect();
    assert_eq!(
        grid,
        [
            (1, 1),
            (1, 5),
            (1, 10),
            (2, 1),
            (2, 5),
            (2, 10),
            (5, 1),
            (5, 5),
            (5, 10)
        ]
    );
}

fn config(cells: Vec<Cell>, msg_size: usize) -> ContendConfig {
    ContendConfig {
        cells,
        msg_size,
        pipe_size: resolve_pipe_size(Some(64 * 1024)).unwrap(),
        duration: Duration::from_millis(50),
        runs: 1,
        max_runs: 1,
        seed: 1,
        mode: Mode::Threads,
        placement: Placement::Unpinned,
        verify: true,
        pressure: None,
        stall_timeout: crate::bench::core::DEFAULT_STALL_TIMEOUT,
        exe: PathBuf::from("/nonexistent"),
        warmup_rule: crate::bench::core::Warmup::exactly(1),
    }
}

#[test]
fn bad_configurations_are_refused_naming_the_value() {
    let no_writer = Cell {
        writers: 0,
        readers: 1,
    };
    let refused = |c: ContendConfig| c.validate().unwrap_err().to_string();
    assert!(refused(config(vec![no_writer], 1024)).contains("0 writers"));
    assert!(refused(config(vec![TIGHT], 1000)).contains("multiple of 16"));
    for runs in [0, 1001, usize::MAX] {
        let mut c = config(vec![TIGHT], 1024);
        c.runs = runs;
        let err = c.validate().unwrap_err().to_string();
        assert!(err.contains(&format!("(runs {runs})")), "{err}");
    }
}

#[test]
fn threads_move_and_verify_every_message() {
    for msg_size in [1024, 64 * 1024] {
        let cells = vec![Cell {
            writers: 2,
            readers: 2,
        }];
        let result = run_contend(
            &config(cells, msg_size),
            SystemFacts::collect(),
            &Cancel::never(),
            &mut |_| {},
        )
        .unwrap();
        let v = result.rows[0].verify.unwrap();
        assert!(v.ok, "{msg_size}: {v:?}");
        assert!(v.messages_sent > 0);
        assert_eq!(result.atomic, msg_size <= PIPE_BUF);
    }
}

#[test]
fn the_default_pipe_size_fits_under_the_limit() {
    let p = resolve_pipe_size(None).unwrap();
    assert_eq!(p.requested, DEFAULT_PIPE_SIZE);
    assert!(p.granted >= 4096);
}

/// A runner without timings: every run of a cell writes `messages` 1 KiB
/// messages in the second its `rates` give, one after the other (the
/// warm-up run first), so a cell's spread is what the test injects.
struct Mock {
    rates: Vec<(Cell, Vec<u64>)>,
    made: Vec<Cell>,
}

impl Runner<CellJob> for Mock {
    fn run(&mut self, job: &CellJob) -> Result<RawRun, RunError> {
        let runs = self.made.iter().filter(|&&c| c == job.cell).count();
        self.made.push(job.cell);
        let rates = &self.rates.iter().find(|(c, _)| *c == job.cell).unwrap().1;
        let Some(&messages) = rates.get(runs) else {
            return Err(RunError::Failed("no more runs in the mock".into()));
        };
        Ok(RawRun {
            writers: vec![writer(messages, 1_000_000_000, 2_000_000_000, &[1000])],
            readers: vec![reader(messages * 1024, &[500])],
        })
    }
}

fn mocked(rates: Vec<(Cell, Vec<u64>)>, runs: usize, max_runs: usize) -> (ContendResult, Mock) {
    let cells = rates.iter().map(|(c, _)| *c).collect();
    let mut c = config(cells, 1024);
    (c.verify, c.runs, c.max_runs) = (false, runs, max_runs);
    let mut mock = Mock {
        rates,
        made: Vec::new(),
    };
    let result = run_contend_on(
        &c,
        SystemFacts::collect(),
        &mut mock,
        &Cancel::never(),
        &mut |_| {},
    )
    .unwrap();
    (result, mock)
}

const TIGHT: Cell = Cell {
    writers: 1,
    readers: 1,
};
const WIDE: Cell = Cell {
    writers: 2,
    readers: 1,
};

#[test]
fn a_cell_with_an_injected_spread_is_marked_noisy_and_diagnosed_and_a_tight_one_is_not() {
    let (result, mock) = mocked(
        vec![
            // Warm-up, then the measured runs.
            (TIGHT, vec![9000, 10_000, 10_100, 9_900, 10_000]),
            (
                WIDE,
                vec![9000, 10_000, 20_000, 10_000, 20_000, 10_000, 20_000],
            ),
        ],
        3,
        6,
    );
    let [tight, wide] = &result.rows[..] else {
        panic!("{:?}", result.rows)
    };
    assert_eq!((tight.status, wide.status), (Status::Ok, Status::Ok));
    assert_eq!(tight.warmup_writes_per_s, Some(9000.0));
    assert_eq!(tight.writes_per_s.runs, [10_000.0, 10_100.0, 9_900.0]);
    assert!(!tight.writes_per_s.noisy(), "{:?}", tight.writes_per_s);
    assert_eq!(tight.writes_per_s.diagnosis, None);
    // Runs were added while the interval stayed wide, up to max-runs.
    assert_eq!(wide.writes_per_s.runs.len(), 6, "{:?}", wide.writes_per_s);
    assert_eq!(wide.runs.len(), 6, "a rich record per measured run");
    assert!(wide.writes_per_s.noisy(), "{:?}", wide.writes_per_s);
    assert!(wide.writes_per_s.diagnosis.is_some());
    assert_eq!(
        wide.writes_per_s.noise.len(),
        6,
        "noise read around every run"
    );
    assert_eq!(
        (wide.writes_per_s.min, wide.writes_per_s.max),
        (Some(10_000.0), Some(20_000.0))
    );
    assert_eq!(result.noise.map(|n| n.runs), Some(9));
    // Warm-ups first, cell by cell; then the measured runs interleaved.
    assert_eq!(&mock.made[..2], [TIGHT, WIDE]);
    assert_eq!(
        (result.runs_per_cell, result.max_runs_per_cell),
        (3, Some(6))
    );
}

#[test]
fn a_failing_cell_keeps_its_runs_and_says_why_and_the_others_go_on() {
    let (result, _) = mocked(
        vec![
            (TIGHT, vec![9000, 10_000]),
            (WIDE, vec![9000, 10_000, 10_000, 10_000]),
        ],
        3,
        3,
    );
    let [broken, fine] = &result.rows[..] else {
        panic!("{:?}", result.rows)
    };
    assert_eq!(broken.status, Status::Failed);
    assert_eq!(broken.reason.as_deref(), Some("no more runs in the mock"));
    assert_eq!(broken.runs.len(), 1);
    assert_eq!(broken.writes_per_s.runs, [10_000.0]);
    assert_eq!((fine.status, fine.runs.len()), (Status::Ok, 3));
}

#[test]
fn a_cancelled_schedule_keeps_the_cells_measured_and_says_so() {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut mock = Mock {
        rates: vec![(TIGHT, vec![1, 2, 3])],
        made: Vec::new(),
    };
    let c = config(vec![TIGHT], 1024);
    let result = run_contend_on(
        &c,
        SystemFacts::collect(),
        &mut mock,
        &Cancel::on_flag(flag),
        &mut |_| {},
    )
    .unwrap();
    assert!(result.header.interrupted);
    assert!(result.rows.is_empty(), "{:?}", result.rows);
    assert!(mock.made.is_empty());
}

#[test]
fn a_v1_document_still_loads_its_series_rebuilt_from_its_runs() {
    let text = include_str!("../../../tests/fixtures/contend-v1.json");
    let doc: ContendResult = serde_json::from_str(text).unwrap();
    assert_eq!(doc.header.schema, SCHEMA_V1);
    let row = &doc.rows[0];
    assert_eq!(row.status, Status::Ok);
    let runs: Vec<f64> = row.runs.iter().map(|r| r.writes_per_s).collect();
    assert_eq!(row.writes_per_s.runs, runs);
    assert_eq!(runs.len(), 3);
    assert!(row.writes_per_s.spread.is_some() && row.writes_per_s.median.is_some());
    assert_eq!(
        (doc.seed, doc.max_runs_per_cell, doc.noise),
        (None, None, None)
    );
    // And a /2 document reads back as written.
    let again: ContendResult = serde_json::from_str(&serde_json::to_string(&doc).unwrap()).unwrap();
    assert_eq!(again.rows[0].writes_per_s.runs.len(), 3);
    assert_eq!(again.rows[0].runs, doc.rows[0].runs);
}
