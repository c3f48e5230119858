//! The runner's pure parts on fixed data, and short live runs that check
//! behaviour (never speed).
use crate::bench::core::Placement;

use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::bench::hist::{LatencyNs, new_histogram, record};
use crate::sys::SystemFacts;
use ends::{ReaderEnd, WriterEnd};

fn writer(messages: u64, first: u64, last: u64, ns: &[u64]) -> WriterEnd {
    let mut latency = new_histogram();
    for &n in ns {
        record(&mut latency, n);
    }
    WriterEnd {
        messages,
        bytes: messages * 1024,
        first_ns: Some(first),
        last_ns: Some(last),
        latency,
    }
}

fn reader(bytes: u64, ns: &[u64]) -> ReaderEnd {
    let mut latency = new_histogram();
    for &n in ns {
        record(&mut latency, n);
    }
    ReaderEnd {
        bytes,
        calls: ns.len() as u64,
        latency,
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
    assert_eq!(
        (row.writes_per_s, row.writes_per_s_min, row.writes_per_s_max),
        (200.0, 100.0, 300.0)
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
        mode: Mode::Threads,
        placement: Placement::Unpinned,
        verify: true,
        pressure: None,
        exe: PathBuf::from("/nonexistent"),
    }
}

#[test]
fn bad_configurations_are_refused_naming_the_value() {
    let c = config(
        vec![Cell {
            writers: 0,
            readers: 1,
        }],
        1024,
    );
    assert!(c.validate().unwrap_err().to_string().contains("0 writers"));
    let c = config(
        vec![Cell {
            writers: 1,
            readers: 1,
        }],
        1000,
    );
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("multiple of 16")
    );
    let cell = Cell {
        writers: 1,
        readers: 1,
    };
    for runs in [0, 1001, usize::MAX] {
        let mut c = config(vec![cell], 1024);
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
