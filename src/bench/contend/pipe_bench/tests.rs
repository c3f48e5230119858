#![allow(clippy::unwrap_used)]

use super::*;
use crate::bench::contend::ContendResult;
use crate::report::Exporter;

const SWEEP: &str = include_str!("../../../../tests/fixtures/pipe_bench/sweep-3s.log");
const SINGLE: &str = include_str!("../../../../tests/fixtures/pipe_bench/w1r1.log");
const WITH_STDERR: &str = include_str!("../../../../tests/fixtures/pipe_bench/w1r1-stderr.log");

/// pipe_bench's sweep: writers 1, 2, 5 x readers 1, 5, 10, in its order.
const GRID: [(usize, usize); 9] = [
    (1, 1),
    (1, 5),
    (1, 10),
    (2, 1),
    (2, 5),
    (2, 10),
    (5, 1),
    (5, 5),
    (5, 10),
];

fn error(text: &str) -> ParseError {
    parse(text).expect_err("must not parse")
}

#[test]
fn a_real_sweep_reads_as_nine_cells_in_pipe_benchs_order() {
    let log = parse(SWEEP).unwrap();
    assert!(log.separated);
    let cells: Vec<_> = log.cells.iter().map(|c| (c.writers, c.readers)).collect();
    assert_eq!(cells, GRID);
    let first = &log.cells[0];
    assert_eq!(
        *first,
        PipeBenchCell {
            writers: 1,
            readers: 1,
            msg_size: 65536,
            duration_s: 3,
            pipe_size: 1048576,
            memory_pressure: false,
            writes_total: 89186,
            writes_per_s: 29729,
            throughput_mib_s: 1858.04,
            lat_avg_ns: 33607,
            lat_p50_ns_upper: 32767,
            lat_p99_ns_upper: 262143,
            lat_max_ns: 14885162,
            exact: None,
            notes: Vec::new(),
        }
    );
}

#[test]
fn a_log_is_written_back_byte_for_byte() {
    for text in [SWEEP, SINGLE] {
        assert_eq!(parse(text).unwrap().to_string(), text);
    }
}

#[test]
fn a_single_cell_has_no_separator_and_stderr_lines_are_passed_over() {
    let log = parse(SINGLE).unwrap();
    assert!(!log.separated);
    assert_eq!(log.cells.len(), 1);
    let log = parse(WITH_STDERR).unwrap();
    assert_eq!(log.cells.len(), 1);
    assert_eq!(log.cells[0].pipe_size, 99999999);
    assert_eq!(
        log.cells[0].notes,
        ["F_SETPIPE_SZ (continuing): Operation not permitted"]
    );
    assert!(looks_like(SWEEP) && looks_like(SINGLE) && looks_like(WITH_STDERR));
    assert!(!looks_like("{\"schema\": \"pipespeed.contend/2\"}"));
}

#[test]
fn pipespeeds_lines_read_with_the_same_code() {
    let mut log = parse(SWEEP).unwrap();
    log.cells[4].exact = Some(Exact {
        runs: 5,
        lat_p50_ns: 28123,
        lat_p99_ns: 401000,
    });
    let text = log.to_string();
    assert!(
        text.contains("lat_max_ns: 44084156\nruns: 5\nlat_p50_ns_exact: 28123\nlat_p99_ns_exact: 401000\n---\n"),
        "{text}"
    );
    assert_eq!(parse(&text).unwrap(), log);
}

#[test]
fn comments_and_blank_lines_are_passed_over() {
    let text = format!("# before A\n\n{SINGLE}\n# after\n");
    assert_eq!(parse(&text).unwrap(), parse(SINGLE).unwrap());
}

#[test]
fn a_malformed_block_names_its_line_and_cause() {
    let cases: [(&str, String, usize, &str); 10] = [
        ("empty", String::new(), 1, "no pipe_bench block"),
        ("only a separator", "---\n".into(), 1, "no pipe_bench block"),
        (
            "a truncated block",
            SINGLE.lines().take(4).collect::<Vec<_>>().join("\n"),
            5,
            "ends before its \"lat_p50_ns_upper\" line",
        ),
        (
            "a key out of order",
            SINGLE.replace("lat_avg_ns", "lat_mean_ns"),
            4,
            "expected \"lat_avg_ns: ...\", found \"lat_mean_ns: 40019\"",
        ),
        (
            "a negative count",
            SINGLE.replace("total=25105", "total=-1"),
            2,
            "total: \"-1\" is not a whole number",
        ),
        (
            "a count past 64 bits",
            SINGLE.replace("lat_max_ns: 10306632", "lat_max_ns: 18446744073709551616"),
            7,
            "larger than 2^64 - 1",
        ),
        (
            "no writers",
            SINGLE.replace("writers=1", "writers=0"),
            1,
            "writers=0: must be at least 1",
        ),
        (
            "an unknown config key",
            SINGLE.replace("readers=1", "reader=1"),
            1,
            "config: expected readers=..., found \"reader=1\"",
        ),
        (
            "a not-a-number throughput",
            SINGLE.replace("1569.06", "nan"),
            3,
            "throughput_MBps: \"nan\" is not a number",
        ),
        (
            "a stray line after a block",
            format!("{SINGLE}lat_p90_ns_upper: 1\n"),
            8,
            "expected a block's \"config: writers=...\" line",
        ),
    ];
    for (what, text, line, cause) in cases {
        let err = error(&text);
        assert_eq!(err.line, line, "{what}: {err}");
        assert!(err.cause.contains(cause), "{what}: {err}");
        assert!(!err.to_string().contains('\n'), "{what}: {err}");
    }
    let err = error(&format!("---\n{SINGLE}---\n"));
    assert_eq!(err.line, 9, "{err}");
    assert!(err.cause.contains("no block after it"), "{err}");
    let err = error(&format!(
        "{SINGLE}runs: 0\nlat_p50_ns_exact: 1\nlat_p99_ns_exact: 2\n"
    ));
    assert_eq!(
        (err.line, err.cause.as_str()),
        (8, "runs: must be at least 1")
    );
    let err = error(&format!("{SINGLE}runs: 3\nlat_p99_ns_exact: 2\n"));
    assert_eq!(err.line, 9, "{err}");
    let err =
        error("config: writers=1 readers=1 msgsize=1 duration=1 pipe_size=1 memory_pressure=maybe");
    assert!(err.cause.contains("must be yes or no"), "{err}");
    let err = error("\x1b[2Jhello");
    assert!(err.cause.contains("\\x1b[2Jhello"), "{err}");
}

#[test]
fn log2_buckets_and_percentiles_are_pipe_benchs() {
    assert_eq!(Log2Histogram::bucket(0), 0);
    assert_eq!(Log2Histogram::bucket(1), 0);
    assert_eq!(Log2Histogram::bucket(2), 1);
    assert_eq!(Log2Histogram::bucket(32767), 14);
    assert_eq!(Log2Histogram::bucket(32768), 15);
    assert_eq!(Log2Histogram::bucket(u64::MAX), LOG2_BUCKETS - 1);
    assert_eq!(Log2Histogram::upper(14), 32767);
    let mut h = Log2Histogram::default();
    assert_eq!(h.percentile_upper(50), 0);
    // One write: the target is at least 1.
    h.record_n(20_000, 1);
    assert_eq!(
        (h.percentile_upper(50), h.percentile_upper(99)),
        (32767, 32767)
    );
    // 100 writes: the 50th in bucket 14, the 99th in 18, the 100th beyond.
    let mut h = Log2Histogram::default();
    h.record_n(20_000, 50);
    h.record_n(60_000, 40);
    h.record_n(300_000, 9);
    h.record_n(5_000_000, 1);
    assert_eq!(h.total(), 100);
    assert_eq!(h.percentile_upper(50), 32767);
    assert_eq!(h.percentile_upper(99), 524287);
    // 51 writes: the target is 25 (truncated), as pipe_bench's.
    let mut h = Log2Histogram::default();
    h.record_n(1000, 25);
    h.record_n(100_000, 26);
    assert_eq!(h.percentile_upper(50), 1023);
}

#[test]
fn hdr_histograms_fall_into_the_same_log2_buckets() {
    let mut hdr = crate::bench::hist::new_histogram();
    let mut direct = Log2Histogram::default();
    // Every power of two and its neighbours, up to 2^35 ns.
    for k in 0..36u32 {
        for ns in [(1u64 << k).saturating_sub(1), 1 << k, (1 << k) + 1] {
            crate::bench::hist::record(&mut hdr, ns);
            // The HDR histogram records at least 1 ns.
            direct.record_n(ns.max(1), 1);
        }
    }
    assert_eq!(Log2Histogram::of_hdr(&hdr), direct);
    let p = direct.percentiles();
    assert_eq!(
        (p.p50_upper, p.p99_upper),
        (direct.percentile_upper(50), direct.percentile_upper(99))
    );
}

/// A one-cell contend result (2 writers, 1 reader, 3 runs) with
/// pipe_bench's percentiles given to its runs.
fn contend_result() -> ContendResult {
    let text = include_str!("../../../../tests/fixtures/contend-v1.json");
    let mut result: ContendResult = serde_json::from_str(text).unwrap();
    result.duration_s = 3.0;
    let bounds = [(1023, 16383), (2047, 32767), (1023, 8191)];
    for (run, (p50_upper, p99_upper)) in result.rows[0].runs.iter_mut().zip(bounds) {
        run.write_log2_ns = Some(Log2Percentiles {
            p50_upper,
            p99_upper,
        });
    }
    result
}

#[test]
fn a_contend_result_is_written_as_pipe_benchs_blocks_of_medians() {
    let log = log_of(&contend_result()).unwrap();
    let text = log.to_string();
    assert_eq!(
        text,
        "config: writers=2 readers=1 msgsize=4096 duration=3 pipe_size=1048576 memory_pressure=no\n\
         writes: total=19431 rate=387631/s\n\
         throughput_MBps: 1514.18\n\
         lat_avg_ns: 5049\n\
         lat_p50_ns_upper: 1023\n\
         lat_p99_ns_upper: 16383\n\
         lat_max_ns: 6778879\n\
         runs: 3\n\
         lat_p50_ns_exact: 922\n\
         lat_p99_ns_exact: 12895\n"
    );
    // The same parser reads it back (to the hundredth of a MiB/s).
    let back = parse(&text).unwrap();
    assert_eq!(back.to_string(), text);
    assert_eq!(back.cells[0].exact, log.cells[0].exact);
}

#[test]
fn several_cells_are_separated_and_unmeasured_ones_left_out() {
    let mut result = contend_result();
    let mut other = result.rows[0].clone();
    other.writers = 5;
    result.rows.push(other.clone());
    other.writers = 1;
    other.runs.clear();
    result.rows.push(other);
    // Two runs: the lower of the two middle bounds, still a bound.
    result.rows[1].runs.pop();
    let log = log_of(&result).unwrap();
    assert!(log.separated);
    let cells: Vec<_> = log
        .cells
        .iter()
        .map(|c| (c.writers, c.lat_p99_ns_upper))
        .collect();
    assert_eq!(cells, [(2, 16383), (5, 16383)]);
    assert!(log.to_string().starts_with("---\nconfig: writers=2 "));
}

#[test]
fn a_duration_pipe_bench_cannot_print_is_refused() {
    let mut result = contend_result();
    for bad in [0.5, 2.5, 0.0] {
        result.duration_s = bad;
        assert_eq!(log_of(&result), None);
        let err = PipeBenchFormat.export(&result).unwrap_err().to_string();
        assert!(err.contains("whole seconds"), "{err}");
    }
}

/// One boot's output in `kernels`: the guest's facts, then two runs of
/// one cell, each after pipe_bench's `pid=` on stderr.
const BOOT: &str = "# virtualization: qemu\n# kernel: 7.2.13+deb14-amd64\n# cpus: 2\n\
    # pipe_max_size: 1048576\n\
    pid=81\n\
    config: writers=1 readers=1 msgsize=65536 duration=1 pipe_size=1048576 memory_pressure=no\n\
    writes: total=2000 rate=2000/s\nthroughput_MBps: 125.00\nlat_avg_ns: 400000\n\
    lat_p50_ns_upper: 262143\nlat_p99_ns_upper: 2097151\nlat_max_ns: 3000000\n\
    pid=82\n\
    config: writers=1 readers=1 msgsize=65536 duration=1 pipe_size=1048576 memory_pressure=no\n\
    writes: total=3000 rate=3000/s\nthroughput_MBps: 187.50\nlat_avg_ns: 300000\n\
    lat_p50_ns_upper: 262143\nlat_p99_ns_upper: 1048575\nlat_max_ns: 2000000\n";

#[test]
fn the_blocks_of_one_cell_are_runs_of_one_row() {
    let r = result_of(BOOT).unwrap();
    assert_eq!(r.rows.len(), 1);
    let row = &r.rows[0];
    assert_eq!((row.writers, row.readers, row.runs.len()), (1, 1, 2));
    assert_eq!(row.runs[1].writes_per_s, 3000.0);
    assert_eq!(row.runs[0].write_latency_ns.p99, 2_097_151);
    assert_eq!(
        row.runs[0].write_log2_ns,
        Some(Log2Percentiles {
            p50_upper: 262_143,
            p99_upper: 2_097_151
        })
    );
    assert_eq!(row.writes_per_s.median, Some(2500.0));
    assert_eq!(
        (r.msg_size, r.pipe_size, r.runs_per_cell),
        (65536, 1 << 20, 2)
    );
    let system = &r.header.system;
    assert_eq!(system.kernel, "7.2.13+deb14-amd64");
    assert_eq!(system.cpus_online, 2);
    assert_eq!(system.virtualization.as_deref(), Some("qemu"));
}

#[test]
fn a_sweep_is_a_row_per_cell_in_pipe_benchs_order() {
    let r = result_of(SWEEP).unwrap();
    let cells: Vec<_> = r
        .rows
        .iter()
        .map(|row| (row.writers, row.readers))
        .collect();
    assert_eq!(cells, GRID);
    assert!(r.rows.iter().all(|row| row.runs.len() == 1));
    // Nothing says the system: unknown.
    assert_eq!(
        (r.header.system.kernel.as_str(), r.header.system.cpus_online),
        ("", 0)
    );
}

#[test]
fn a_text_that_is_not_pipe_benchs_is_an_error_naming_the_line() {
    let err = result_of("# kernel: 6.1\nSegmentation fault\n").unwrap_err();
    assert_eq!(err.line, 2, "{err}");
}
