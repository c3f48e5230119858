use super::*;

const SWEEP: &str = include_str!("../../../../tests/fixtures/pipe_bench/sweep-3s.log");
const SINGLE: &str = include_str!("../../../../tests/fixtures/pipe_bench/w1r1.log");
const WITH_STDERR: &str = include_str!("../../../../tests/fixtures/pipe_bench/w1r1-stderr.log");

fn error(text: &str) -> ParseError {
    parse(text).expect_err("must not parse")
}

#[test]
fn a_real_sweep_reads_as_nine_cells_in_pipe_benchs_order() {
    let log = parse(SWEEP).unwrap();
    assert!(log.separated);
    let cells: Vec<_> = log.cells.iter().map(|c| (c.writers, c.readers)).collect();
    assert_eq!(
        cells,
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
