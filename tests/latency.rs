//! `pipespeed latency` through the binary, and its ping-pong through the
//! library, with a few hundred round trips: behaviour, never speed.
//!
//! On one CPU (`taskset -c 0 cargo test`), what needs two CPUs is checked
//! to be refused with a reason, not skipped.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

use pipespeed::bench::core::{Runner, Threads};
use pipespeed::bench::latency::{Exchange, PingConfig, PingJob, Placement, Span, ping};
use pipespeed::sys::{available_cpus, pin_to_cpu, pipe};
use pipespeed::wait::Wait;
use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

/// Sizes that cross the boundaries: one byte, a page, and one byte more
/// than the default pipe (64 KiB), which needs partial reads and writes.
const SIZES: &str = "1,4K,65537";

/// `pipespeed latency ARGS` at the width of text that goes to a pipe
/// (100), whatever `COLUMNS` the test run inherits.
fn latency(args: &[&str]) -> Output {
    Command::new(EXE)
        .arg("latency")
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .unwrap()
}

fn two_cpus() -> bool {
    available_cpus().unwrap().len() >= 2
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts a one-line `pipespeed: ` error with status 2 mentioning `needle`.
fn assert_usage_error(out: &Output, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
    assert!(err.starts_with("pipespeed: "), "{err}");
    assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Runs a few hundred verified round trips of every size and returns the
/// JSON document, checking what every document must hold.
fn measure(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut all = vec![
        "--sizes",
        SIZES,
        "--round-trips",
        "200",
        "--warmup",
        "10",
        "--runs",
        "1",
        "--verify",
        "--json",
        json.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let out = latency(&all);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{doc}");
    for (row, size) in rows.iter().zip([1, 4096, 65537]) {
        assert_eq!(row["size"], size);
        let run = &row["runs"][0];
        assert_eq!(run["round_trips"], 200);
        assert_eq!(run["warmup_round_trips"], 10);
        let rtt = &run["rtt_ns"];
        let p: Vec<u64> = ["p50", "p90", "p99", "p999", "max"]
            .iter()
            .map(|k| rtt[k].as_u64().unwrap())
            .collect();
        assert!(p[0] > 0 && p.windows(2).all(|w| w[0] <= w[1]), "{rtt}");
    }
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("round trips, pinger -> ponger"), "{table}");
    assert!(table.contains("65537B"), "{table}");
    doc
}

/// Every wait strategy the placement allows, in `mode`, on `placement`.
fn every_wait(mode: &str, placement: &str) {
    let cpus = available_cpus().unwrap();
    let same = placement == "same-cpu";
    if !same && cpus.len() < 2 {
        let out = latency(&[mode, "--placement", placement, "--round-trips", "10"]);
        return assert_usage_error(&out, "needs two CPUs");
    }
    for wait in ["block", "poll", "busy"] {
        let args = [mode, "--placement", placement, "--wait", wait];
        if wait == "busy" && same {
            assert_usage_error(&latency(&args), "would starve");
            continue;
        }
        let doc = measure(&args);
        assert_eq!(doc["wait"], wait);
        assert_eq!(doc["mode"], mode.trim_start_matches("--"));
        let p = &doc["placement"];
        assert_eq!(p["kind"], "pinned");
        // The pinger is the writer, the ponger the reader.
        assert_eq!(p["writer_cpu"], cpus[0]);
        assert_eq!(p["reader_cpu"], cpus[if same { 0 } else { 1 }]);
    }
}

#[test]
fn processes_on_one_cpu() {
    every_wait("--processes", "same-cpu");
}

#[test]
fn processes_on_two_cpus() {
    every_wait("--processes", "different-cpu");
}

#[test]
fn threads_on_one_cpu() {
    every_wait("--threads", "same-cpu");
}

#[test]
fn threads_on_two_cpus() {
    every_wait("--threads", "different-cpu");
}

#[test]
fn unpinned_and_explicit_cpus() {
    let doc = measure(&["--placement", "unpinned"]);
    assert_eq!(doc["placement"]["kind"], "unpinned");
    assert!(doc["placement"].get("writer_cpu").is_none());
    let cpu = available_cpus().unwrap()[0].to_string();
    let doc = measure(&["--threads", "--cpus", &format!("{cpu},{cpu}")]);
    assert_eq!(
        doc["placement"]["reader_cpu"],
        doc["placement"]["writer_cpu"]
    );
}

#[test]
fn the_default_text_fits_80_and_120_columns_and_ends_with_the_verdict() {
    for columns in ["80", "120"] {
        let out = Command::new(EXE)
            .args(["latency", "--sizes", SIZES, "--round-trips", "50"])
            .args(["--warmup", "5", "--runs", "1"])
            .env("COLUMNS", columns)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        crate::common::assert_fits(&text, columns.parse().unwrap());
        let verdict = text.trim_end().rsplit("\n\n").next().unwrap();
        assert!(verdict.starts_with("round trip: 1B p50 "), "{text}");
        assert!(verdict.lines().count() <= 6, "{text}");
    }
}

#[test]
fn the_default_placement_follows_the_allowed_cpus() {
    let out = latency(&["--round-trips", "50", "--runs", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The machine's line may wrap (a long kernel or CPU name): by meaning.
    let table = crate::common::unwrapped(&String::from_utf8_lossy(&out.stdout));
    let line = table.lines().nth(1).unwrap();
    assert!(line.starts_with("two processes, "), "{line}");
    assert!(line.contains("wait block"), "{line}");
    let want = if two_cpus() {
        "pinger on CPU "
    } else {
        "pinger and ponger both on CPU "
    };
    assert!(line.contains(want), "{line}");
}

#[test]
fn one_allowed_cpu_refuses_two_cpu_placements_and_busy_waiting() {
    // A thread pinned to one CPU starts the binary: the child inherits the
    // thread's affinity mask, as under `taskset -c 0`.
    let cpu = available_cpus().unwrap()[0];
    let (different, busy) = std::thread::spawn(move || {
        pin_to_cpu(cpu).unwrap();
        let different = latency(&["--placement", "different-cpu"]);
        let busy = latency(&["--threads", "--wait", "busy", "--placement", "unpinned"]);
        (different, busy)
    })
    .join()
    .unwrap();
    assert_usage_error(&different, &format!("only run on CPU {cpu}"));
    assert_usage_error(&busy, "would starve");
}

#[test]
fn json_fields_have_the_documented_types() {
    let doc = measure(&["--threads"]);
    assert_eq!(doc["schema"], "pipespeed.latency/2");
    assert!(doc["pipespeed_version"].is_string());
    let system = &doc["system"];
    assert!(system["kernel"].is_string() && system["cpu_model"].is_string());
    assert!(system["cpus_allowed"].is_array() && system["cpus_online"].is_u64());
    assert!(doc["wait"].is_string() && doc["mode"].is_string() && doc["verify"].is_boolean());
    assert!(doc["placement"]["kind"].is_string());
    assert_eq!((&doc["runs"], &doc["max_runs"]), (&1.into(), &1.into()));
    assert!(doc["seed"].is_u64());
    assert_eq!(doc["sizes"], serde_json::json!([1, 4096, 65537]));
    assert_eq!(doc["warmup"], serde_json::json!({"round_trips": 10}));
    assert_eq!(doc["measure"], serde_json::json!({"round_trips": 200}));
    for row in doc["rows"].as_array().unwrap() {
        assert!(row["size"].is_u64() && row["status"] == "ok" && row["reason"].is_null());
        let rate = &row["round_trips_per_s"];
        assert!(rate["median"].as_f64().unwrap() > 0.0, "{rate}");
        for rtt in [&row["rtt_ns"], &row["runs"][0]["rtt_ns"]] {
            assert!(rtt["mean"].as_f64().unwrap() > 0.0, "{rtt}");
            for key in ["p50", "p90", "p99", "p999", "max"] {
                assert!(rtt[key].is_u64(), "{key} in {rtt}");
            }
        }
        // The series of the runs' p50: one run, no spread yet, the
        // machine's noise during it.
        let p50 = &row["rtt_p50_ns"];
        assert_eq!(p50["runs"].as_array().unwrap().len(), 1, "{p50}");
        for key in ["median", "min", "max"] {
            assert!(p50[key].as_f64().unwrap() > 0.0, "{key} in {p50}");
        }
        assert!(
            p50["spread"].is_null() && p50["diagnosis"].is_null(),
            "{p50}"
        );
        assert_eq!(p50["noise"].as_array().unwrap().len(), 1, "{p50}");
        assert!(p50["noise"][0]["wall_s"].as_f64().unwrap() > 0.0, "{p50}");
        let run = &row["runs"][0];
        assert!(run["round_trips"].is_u64() && run["warmup_round_trips"].is_u64());
        assert!(run["seconds"].as_f64().unwrap() > 0.0);
        let rate = run["round_trips_per_s"].as_f64().unwrap();
        let want = 200.0 / run["seconds"].as_f64().unwrap();
        assert!((rate - want).abs() < want * 1e-9, "{run}");
    }
}

#[test]
fn csv_has_one_row_per_run_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("out.csv");
    let args = [
        "--threads",
        "--sizes",
        "1,64",
        "--runs",
        "2",
        "--duration",
        "0.02",
    ];
    let out = latency(&[&args[..], &["--csv", csv.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[0].starts_with("size,run,round_trips,seconds,round_trips_per_s,"));
    let sizes_runs: Vec<(&str, &str)> = lines[1..]
        .iter()
        .map(|l| {
            let mut f = l.split(',');
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect();
    assert_eq!(
        sizes_runs,
        [("1", "1"), ("1", "2"), ("64", "1"), ("64", "2")]
    );
    for line in &lines[1..] {
        assert_eq!(
            line.split(',').count(),
            lines[0].split(',').count(),
            "{line}"
        );
        assert!(line.contains(",threads,block,"), "{line}");
    }
}

#[test]
fn bad_options_are_one_line_errors_with_status_2() {
    let not_allowed = format!("{},99", available_cpus().unwrap()[0]);
    for (args, needle) in [
        (&["--sizes", "12Q"][..], "unknown size suffix 'Q'"),
        (&["--sizes", "0"], "at least 1 byte"),
        (&["--sizes", "1G"], "too large"),
        (
            &["--cpus", &not_allowed],
            "CPU 99 is not one this process may use",
        ),
        (&["--cpus", "0"], "--cpus takes two CPUs"),
        (
            &["--cpus", "0,1", "--placement", "same-cpu"],
            "cannot be used with",
        ),
        (&["--round-trips", "0"], "--round-trips"),
        (
            &["--round-trips", "5", "--duration", "1"],
            "cannot be used with",
        ),
        (&["--duration", "0"], "not a duration"),
        (&["--warmup", "soon"], "not a warm-up"),
        (&["--wait", "spin"], "--wait"),
        (&["--placement", "far"], "--placement"),
        (&["--threads", "--processes"], "cannot be used with"),
        (&["--runs", "0"], "--runs"),
        (&["--runs", "1001"], "--runs"),
        (&["--min-runs", "0"], "--min-runs"),
        (&["--max-runs", "1001"], "--max-runs"),
        (&["--runs", "3", "--max-runs", "5"], "cannot be used with"),
        (
            &["--min-runs", "5", "--max-runs", "4"],
            "--max-runs 4 is below --min-runs 5",
        ),
    ] {
        assert_usage_error(&latency(args), needle);
    }
}

#[test]
fn the_ponger_needs_pipes() {
    use pipespeed::bench::core::Spawn;
    use pipespeed::bench::latency::Exchange;
    let exchange = Exchange {
        size: 1,
        wait: Wait::Block,
        verify: false,
    };
    let mut ponger = Spawn::new(&exchange, None);
    ponger.parent = None;
    let out = Command::new(EXE)
        .args(ponger.args())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the ponger's stdin must be a pipe"), "{err}");
    // One line for a person, and the same typed for the parent.
    assert_eq!(
        err.lines().filter(|l| l.starts_with("pipespeed: ")).count(),
        1,
        "{err}"
    );
    assert_eq!(
        pipespeed::bench::core::RunError::from_worker(&err),
        Some(pipespeed::bench::core::RunError::Failed(
            "the ponger's stdin must be a pipe".into()
        )),
        "{err}"
    );
}

#[test]
fn the_library_ping_pong_survives_messages_larger_than_the_pipe() {
    for (size, wait) in [(65537, Wait::Block), (300_000, Wait::Poll)] {
        let config = PingConfig {
            exchange: Exchange {
                size,
                wait,
                verify: true,
            },
            warmup: Span::RoundTrips(3),
            measure: Span::RoundTrips(30),
        };
        let job = PingJob {
            ping: config,
            placement: Placement::Unpinned,
            stall_timeout: pipespeed::bench::core::DEFAULT_STALL_TIMEOUT,
        };
        let run = Threads.run(&job).unwrap();
        assert_eq!((run.round_trips, run.warmup_round_trips), (30, 3));
        assert!(run.rtt_ns.p50 <= run.rtt_ns.max);
    }
}

#[test]
fn a_pinger_without_a_ponger_fails_instead_of_hanging() {
    let (a_to_b, b_to_a) = (pipe().unwrap(), pipe().unwrap());
    drop((a_to_b.read, b_to_a.write));
    let config = PingConfig {
        exchange: Exchange {
            size: 1,
            wait: Wait::Block,
            verify: false,
        },
        warmup: Span::RoundTrips(0),
        measure: Span::RoundTrips(5),
    };
    let err = ping(a_to_b.write, b_to_a.read, &config).unwrap_err();
    assert!(err.to_string().contains("closed its end"), "{err}");
}

#[test]
fn a_noisy_size_gets_runs_up_to_max_runs_and_a_quiet_setting_none() {
    // Whatever this machine's noise: at least --min-runs, at most
    // --max-runs, and more than the minimum only for a wide size.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = latency(&[
        "--threads",
        "--sizes",
        "1,64",
        "--round-trips",
        "100",
        "--warmup",
        "10",
        "--min-runs",
        "3",
        "--max-runs",
        "5",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!((&doc["runs"], &doc["max_runs"]), (&3.into(), &5.into()));
    for row in doc["rows"].as_array().unwrap() {
        let p50 = &row["rtt_p50_ns"];
        let runs = p50["runs"].as_array().unwrap().len();
        assert_eq!(runs, row["runs"].as_array().unwrap().len());
        assert!((3..=5).contains(&runs), "{row}");
        let wide = p50["spread"]["ci95_half_width"].as_f64().unwrap() > 0.10;
        // A size stops short of --max-runs only once its interval is narrow.
        assert!(runs == 5 || !wide, "{p50}");
        // Noisy or not, the table says the spread of every size.
        let noisy = p50["spread"]["noisy"].as_bool().unwrap();
        assert_eq!(noisy, !p50["diagnosis"].is_null(), "{p50}");
    }
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("p50 spread") && table.contains("3-5 runs"),
        "{table}"
    );
}

#[test]
fn a_version_1_document_still_loads() {
    use pipespeed::bench::core::{Placement, Status};
    use pipespeed::bench::latency::LatencyResult;
    // Written by `pipespeed latency --sizes 1,4K --runs 2 --round-trips
    // 2000 --warmup 100 --json` before the rows were series.
    let text = include_str!("fixtures/latency/v1.json");
    let r: LatencyResult = serde_json::from_str(text).unwrap();
    assert_eq!(r.header.schema, "pipespeed.latency/1");
    assert_eq!(
        r.config.placement,
        Placement::Pinned {
            writer_cpu: 0,
            reader_cpu: 1
        }
    );
    assert_eq!((r.config.runs, r.config.max_runs()), (2, 2));
    let v1: Value = serde_json::from_str(text).unwrap();
    for (row, old) in r.rows.iter().zip(v1["rows"].as_array().unwrap()) {
        assert_eq!(row.status, Status::Ok);
        assert_eq!(row.runs.len(), 2);
        let spread = &old["spread"];
        let p50 = &row.rtt_p50_ns;
        assert_eq!(p50.min, spread["p50_ns_min"].as_f64());
        assert_eq!(p50.max, spread["p50_ns_max"].as_f64());
        let rate = &row.round_trips_per_s;
        assert_eq!(rate.min, spread["round_trips_per_s_min"].as_f64());
        assert_eq!(rate.max, spread["round_trips_per_s_max"].as_f64());
        let (median, old_median) = (
            rate.median.unwrap(),
            old["round_trips_per_s"].as_f64().unwrap(),
        );
        assert!(
            (median - old_median).abs() < old_median * 1e-9,
            "{median} {old_median}"
        );
        assert_eq!(row.rtt_ns.p99, old["rtt_ns"]["p99"].as_u64().unwrap());
    }
    let unpinned = text.replace(
        r#""kind": "pinned",
    "pinger_cpu": 0,
    "ponger_cpu": 1"#,
        r#""kind": "unpinned""#,
    );
    assert_ne!(unpinned, text);
    let r: LatencyResult = serde_json::from_str(&unpinned).unwrap();
    assert_eq!(r.config.placement, Placement::Unpinned);
    // And compare reads it.
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("v1.json");
    std::fs::write(&old, text).unwrap();
    let out = Command::new(EXE)
        .args(["compare", old.to_str().unwrap(), old.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("4KiB"), "{text}");
}
