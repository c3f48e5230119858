//! `pipespeed write | pipespeed read` and `pipespeed bench` through the
//! binary, at tiny sizes: behaviour, never speed.

#![allow(clippy::unwrap_used)]

use std::io::Read;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

fn pipespeed(args: &[&str]) -> Command {
    let mut cmd = Command::new(EXE);
    cmd.args(args);
    cmd
}

fn spawn_writer(args: &[&str]) -> Child {
    pipespeed(&[&["write"], args].concat())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start writer")
}

/// `pipespeed write W | pipespeed read R`: the reader's output and the
/// writer's exit status and stderr.
fn pipeline(writer_args: &[&str], reader_args: &[&str]) -> (Output, Output) {
    let mut writer = spawn_writer(writer_args);
    let pipe = writer.stdout.take().expect("writer stdout");
    let reader = pipespeed(&[&["read"], reader_args].concat())
        .stdin(Stdio::from(pipe))
        .output()
        .expect("run reader");
    (reader, writer.wait_with_output().expect("writer ends"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `out`'s stdout with every run of white space one space: its words
/// whatever the width they were wrapped to.
fn flat_stdout(out: &Output) -> String {
    stdout(out).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(out), stderr(out)))
}

/// Asserts a one-line error, with the given status, mentioning `needle`.
fn assert_one_line_error(out: &Output, code: i32, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
    assert!(err.starts_with("pipespeed: "), "{err}");
    assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn the_blogs_command_lines_work_as_written() {
    let (reader, writer) = pipeline(
        &[
            "--write_with_vmsplice",
            "--huge_page",
            "--busy_loop",
            "--buf_size",
            "64K",
        ],
        &[
            "--read_with_splice",
            "--busy_loop",
            "--buf_size",
            "64K",
            "--bytes_to_pipe",
            "1M",
        ],
    );
    assert!(reader.status.success(), "{}", stderr(&reader));
    let line = stdout(&reader);
    let (rate, rest) = line.split_once("GiB/s").expect("rate");
    rate.parse::<f64>().expect("numeric rate");
    assert_eq!(rest, ", 64KiB buffer, 16 iterations (1MiB piped)\n");
    assert!(writer.status.success(), "writer: {}", stderr(&writer));
    // Quiet, but for the hint to pin a busy end on 2 CPUs or fewer
    // (tests/ends.rs).
    assert!(
        stderr(&writer)
            .lines()
            .all(|l| l.contains("busy-looping unpinned on")),
        "the writer ends quietly when the reader goes: {}",
        stderr(&writer)
    );
    let (reader, _) = pipeline(
        &["--write_with_vmsplice", "--dont_touch_pages"],
        &["--bytes_to_pipe", "1M", "--csv"],
    );
    assert!(reader.status.success(), "{}", stderr(&reader));
    assert_eq!(stdout(&reader).trim().split(',').count(), 14);
}

/// Every writer method and reader method, blocking, polling and busy,
/// at sizes around page and pipe boundaries: every byte checked.
#[test]
fn verify_passes_for_every_method_at_boundary_sizes() {
    let writers: &[&[&str]] = &[
        &[],
        &["--vmsplice"],
        &["--vmsplice", "--same-buffer", "--gift"],
        &["--poll"],
    ];
    let readers: &[&[&str]] = &[
        &[],
        &["--splice"],
        &["--splice", "--busy-loop"],
        &["--busy-loop", "--poll"],
    ];
    for (i, w) in writers.iter().enumerate() {
        for (j, r) in readers.iter().enumerate() {
            let sizes: &[u64] = if i == j {
                &[1, 4095, 4096, 4097, 65535, 65537, (1 << 20) + 1]
            } else {
                &[300_001]
            };
            for &bytes in sizes {
                let n = bytes.to_string();
                let w = [&["--verify", "--buf-size", "64K"], *w].concat();
                let r = [
                    &["--verify", "--buf-size", "16K", "--json", "--bytes", &n],
                    *r,
                ]
                .concat();
                let (reader, writer) = pipeline(&w, &r);
                assert!(
                    reader.status.success(),
                    "{w:?} | {r:?}: {}",
                    stderr(&reader)
                );
                let report = json(&reader);
                assert_eq!(report["bytes"], bytes, "{w:?} | {r:?}");
                assert_eq!(report["mismatch"], serde_json::Value::Null);
                assert!(writer.status.success(), "{}", stderr(&writer));
            }
        }
    }
}

#[test]
fn a_writer_with_a_byte_limit_ends_the_stream_exactly_there() {
    for method in [&[][..], &["--vmsplice"][..]] {
        for bytes in ["0", "1", "131071", "131073"] {
            let w = [&["--verify", "--buf-size", "64K", "--bytes", bytes], method].concat();
            let (reader, writer) = pipeline(&w, &["--verify", "--json", "--bytes", "1G"]);
            assert!(writer.status.success(), "{}", stderr(&writer));
            let report = json(&reader);
            assert_eq!(report["bytes"].to_string(), bytes, "{w:?}");
            assert_eq!(report["eof"], true);
        }
    }
}

/// The hazard of the blog's footnote: refilling a vmspliced half while the
/// pipe still references its pages changes what the reader gets. The
/// reader starts late, so the writer has refilled every half by then.
#[test]
fn early_reuse_of_a_vmspliced_buffer_is_caught_and_the_discipline_is_not() {
    for (unsafe_args, should_fail) in [
        (&["--unsafe-early-reuse", "256K"][..], true),
        (&[][..], false),
    ] {
        let w = [
            &["--vmsplice", "--verify", "--buf-size", "64K"],
            unsafe_args,
        ]
        .concat();
        let mut writer = spawn_writer(&w);
        std::thread::sleep(Duration::from_millis(300));
        let reader = pipespeed(&["read", "--verify", "--bytes", "2M"])
            .stdin(Stdio::from(writer.stdout.take().expect("stdout")))
            .output()
            .expect("reader");
        let _ = writer.wait();
        if should_fail {
            assert_eq!(
                reader.status.code(),
                Some(1),
                "early reuse went unnoticed: {}",
                stdout(&reader)
            );
            let err = stderr(&reader);
            assert!(err.contains("verify failed: data"), "{err}");
            // The first half was refilled before the reader came: the bytes
            // of a later offset are there, in the very first word.
            let at: u64 = err
                .split("at byte ")
                .nth(1)
                .and_then(|s| s.split(':').next())
                .unwrap()
                .parse()
                .unwrap();
            assert!(at < 8, "{err}");
            assert!(err.contains("arrived"), "{err}");
        } else {
            assert!(reader.status.success(), "{}", stderr(&reader));
        }
    }
}

/// SPLICE_F_GIFT gives the pages to the kernel: refilling them early
/// breaks vmsplice's contract, so the two are refused together.
#[test]
fn gift_with_early_reuse_is_a_usage_error() {
    let out = pipespeed(&[
        "write",
        "--vmsplice",
        "--gift",
        "--unsafe-early-reuse",
        "4K",
    ])
    .stdout(Stdio::null())
    .output()
    .unwrap();
    assert_one_line_error(&out, 2, "--gift");
    assert!(
        stderr(&out).contains("--unsafe-early-reuse"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_closed_reader_ends_the_writer_quietly() {
    for method in [
        &[][..],
        &["--vmsplice"][..],
        &["--vmsplice", "--busy-loop"][..],
    ] {
        let mut writer = spawn_writer(method);
        let mut pipe = writer.stdout.take().expect("stdout");
        let mut some = [0u8; 4096];
        pipe.read_exact(&mut some).expect("data flows");
        drop(pipe);
        let out = writer.wait_with_output().expect("writer ends");
        assert!(out.status.success(), "{method:?}: {:?}", out.status);
        assert!(
            stderr(&out)
                .lines()
                .all(|l| l.contains("busy-looping unpinned on")),
            "{method:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn bad_sizes_and_options_give_one_line_and_status_2() {
    assert_one_line_error(
        &pipespeed(&["read", "--buf-size", "12Q"]).output().unwrap(),
        2,
        "'Q'",
    );
    assert_one_line_error(
        &pipespeed(&["write", "--bytes", "lots"]).output().unwrap(),
        2,
        "'lots' is not a size",
    );
    assert_one_line_error(
        &pipespeed(&["bench", "--rungs", "write-read,fast"])
            .output()
            .unwrap(),
        2,
        "invalid value 'fast' for '--rungs <RUNGS>' [possible values: memcpy, write-read,",
    );
    assert_one_line_error(
        &pipespeed(&["bench", "--cpus", "0"]).output().unwrap(),
        2,
        "--cpus takes two CPUs",
    );
    assert_one_line_error(
        &pipespeed(&["bench", "--runs", "0"]).output().unwrap(),
        2,
        "--runs",
    );
    assert_one_line_error(
        &pipespeed(&["write", "--vmsplice", "--pipe-size", "64K"])
            .output()
            .unwrap(),
        2,
        "half of --buf-size",
    );
    assert_one_line_error(
        &pipespeed(&["write", "--bogus"]).output().unwrap(),
        2,
        "--bogus",
    );
    let help = pipespeed(&["write", "--help"]).output().unwrap();
    assert!(help.status.success() && stdout(&help).contains("--vmsplice"));
}

#[test]
fn latency_and_contend_agree_on_the_largest_message() {
    for args in [
        &["latency", "--sizes", "65M"][..],
        &["contend", "--msg-size", "65M"],
    ] {
        let out = pipespeed(args).output().unwrap();
        assert_one_line_error(
            &out,
            2,
            "'65M' is not a message size: too large (at most 64MiB)",
        );
    }
    let out = pipespeed(&["latency", "--sizes", "0"]).output().unwrap();
    assert_one_line_error(&out, 2, "a message holds at least 1 byte");
}

fn has_cap_sys_resource() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps >> 24 & 1 == 1)
}

#[test]
fn a_refused_pipe_size_names_the_limit() {
    let max: u64 = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let too_big = (max * 2).to_string();
    let (_, writer) = pipeline(
        &["--pipe-size", &too_big, "--bytes", "1"],
        &["--bytes", "1"],
    );
    if has_cap_sys_resource() {
        assert!(writer.status.success(), "{}", stderr(&writer));
    } else {
        assert_one_line_error(&writer, 1, "exceeds /proc/sys/fs/pipe-max-size");
    }
    // Not a pipe at all.
    let out = pipespeed(&["write", "--pipe-size", "64K", "--bytes", "1"])
        .stdout(tempfile::tempfile().unwrap())
        .output()
        .unwrap();
    assert_one_line_error(&out, 1, "not a pipe");
}

fn bench_json(extra: &[&str]) -> (Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ladder.json");
    let args = [
        &[
            "bench",
            "--runs",
            "2",
            "--bytes",
            "2M",
            "--buf-size",
            "64K",
            "--json",
            path.to_str().unwrap(),
        ],
        extra,
    ]
    .concat();
    let out = pipespeed(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    (out, value)
}

/// The whole ladder, every byte checked, on whatever CPUs this test may use
/// (CI also runs the tests under `taskset -c 0`).
#[test]
fn every_rung_verifies_or_says_why_it_cannot_run() {
    // --explain: the copies as checked are in its second table.
    let (out, value) = bench_json(&["--verify", "--explain"]);
    let one_cpu = value["system"]["cpus_allowed"].as_array().unwrap().len() < 2;
    let rungs = value["rungs"].as_array().unwrap();
    let names: Vec<&str> = rungs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "memcpy",
            "write-read",
            "vmsplice-read",
            "vmsplice-splice",
            "vmsplice-splice-huge",
            "vmsplice-splice-huge-busy",
            "tuned",
            "splice-limit"
        ]
    );
    for r in rungs {
        let name = r["name"].as_str().unwrap();
        match r["status"].as_str().unwrap() {
            "ok" => {
                assert_eq!(r["gib_s"]["runs"].as_array().unwrap().len(), 2, "{name}");
                assert!(r["gib_s"]["median"].as_f64().unwrap() > 0.0, "{name}");
                // Every vmsplice rung checked, on this kernel, that the
                // pipe gets page references.
                let vmsplices = !matches!(name, "memcpy" | "write-read");
                assert_eq!(vmsplices, !r["copy_check"].is_null(), "{name}");
                if vmsplices {
                    // What this kernel does, and the copies said to match.
                    let design = u64::from(name == "vmsplice-read");
                    let (copies, cell) = match r["copy_check"]["found"].as_str().unwrap() {
                        "references" => (design, "(checked)"),
                        "copies" => (design + 1, "(this kernel copies)"),
                        other => panic!("{name}: copy check {other}"),
                    };
                    assert_eq!(r["copies"].as_u64(), Some(copies), "{name}");
                    assert!(stdout(&out).contains(cell), "{}", stdout(&out));
                }
            }
            "unavailable" => {
                let reason = r["reason"].as_str().unwrap();
                let allowed =
                    (name == "vmsplice-splice-huge-busy" && one_cpu && reason.contains("two CPUs"))
                        || (name.contains("huge") && reason.contains("huge pages"))
                        || (name == "splice-limit" && reason.contains("none can be verified"));
                assert!(allowed, "{name} unavailable: {reason}");
                let said = format!("unavailable: {reason}");
                let said = said.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(flat_stdout(&out).contains(&said), "{}", stdout(&out));
            }
            status => panic!("{name} {status}: {}", r["reason"]),
        }
    }
    assert!(flat_stdout(&out).contains("every byte verified"));
}

#[test]
fn bench_writes_json_and_csv_with_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("ladder.csv");
    let (out, value) = bench_json(&[
        "--rungs",
        "write-read,memcpy",
        "--no-pin",
        "--seed",
        "5",
        "--placement-runs",
        "2",
        "--csv",
        csv.to_str().unwrap(),
        "--explain",
    ]);
    assert_eq!(value["schema"], "pipespeed.bench/3");
    assert_eq!(value["seed"], 5);
    // The build that measured, as --version names it.
    let version = text_of(&pipespeed(&["--version"]).output().unwrap().stdout);
    for key in ["commit", "rustc", "target", "libc", "profile"] {
        let field = value["build"][key].as_str().unwrap();
        assert!(
            version.contains(&format!("{key}: {field}\n")),
            "{key}: {version}"
        );
    }
    assert_eq!(value["placement"]["kind"], "unpinned");
    assert_eq!(
        (value["runs"].as_u64(), value["max_runs"].as_u64()),
        (Some(2), Some(2))
    );
    for key in [
        "kernel",
        "cpu_model",
        "cpus_online",
        "thp",
        "pipe_max_size_bytes",
    ] {
        assert!(value["system"].get(key).is_some(), "system.{key}");
    }
    let rung = &value["rungs"][0];
    assert_eq!(rung["name"], "write-read");
    assert_eq!(rung["bytes_per_run"], 2 << 20);
    // Speed-ups are against write-read in its fastest placement measured
    // (the placement check's included): unpinned here may be slower.
    let baseline = &value["baseline"];
    assert_eq!(baseline["rung"], "write-read");
    assert!(
        ["same-cpu", "different-cpu", "unpinned"]
            .contains(&baseline["placement"].as_str().unwrap()),
        "{baseline}"
    );
    let ratio = rung["gib_s"]["median"].as_f64().unwrap() / baseline["gib_s"].as_f64().unwrap();
    assert!((rung["speedup_vs_write_read"].as_f64().unwrap() - ratio).abs() < 1e-9);
    assert!(ratio <= 1.0, "the baseline is the fastest: {value}");
    let verdict = value["verdict"]["lines"].as_array().unwrap();
    assert!(
        verdict[0]
            .as_str()
            .unwrap()
            .starts_with("baseline: write-read "),
        "{verdict:?}"
    );
    assert!(value["verdict"]["trust"]["line"].is_string());
    assert_eq!(value["rungs"][1]["name"], "memcpy");
    // Noise: one record per run, a spread per rung, and the summary.
    for r in value["rungs"].as_array().unwrap() {
        assert_eq!(r["gib_s"]["noise"].as_array().unwrap().len(), 2, "{r}");
        assert!(r["gib_s"]["noise"][0]["wall_s"].as_f64().unwrap() > 0.0);
        assert!(r["gib_s"]["spread"]["noisy"].is_boolean(), "{r}");
        assert_eq!(
            r["gib_s"]["diagnosis"].is_null(),
            r["gib_s"]["spread"]["noisy"] == false
        );
    }
    assert_eq!(value["noise"]["runs"], 4);
    // The machine's noise and the placement check: under --explain.
    assert!(flat_stdout(&out).contains("during the runs: CPU steal "));
    // The baseline in every placement, after the ladder.
    let check = &value["placement_check"];
    assert_eq!(check["rung"], "write-read");
    let kinds: Vec<&str> = check["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["same-cpu", "different-cpu", "unpinned"]);
    assert!(flat_stdout(&out).contains("placement: write-read same-cpu "));
    // The CSV says the same: a row per run of each part, every row as
    // wide as the header.
    let csv = std::fs::read_to_string(csv).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert!(rows.iter().all(|r| r.len() == header.len()), "{csv}");
    let ladder: Vec<_> = rows.iter().filter(|r| r[col("part")] == "ladder").collect();
    assert_eq!(ladder.len(), 4, "{csv}");
    assert!(ladder.iter().all(|r| r[col("placement")] == "unpinned"));
    assert!(
        ladder.iter().all(|r| !r[col("steal_s")].is_empty()),
        "{csv}"
    );
    for row in check["rows"].as_array().unwrap() {
        let kind = row["kind"].as_str().unwrap();
        let runs = row["gib_s"]["runs"].as_array().unwrap().len();
        let in_csv = rows
            .iter()
            .filter(|r| r[col("part")] == "placement-check" && r[col("placement")] == kind)
            .filter(|r| !r[col("gib_s")].is_empty())
            .count();
        assert_eq!(in_csv, runs, "{kind}: {csv}");
    }
}

fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn version_is_one_line_short_and_names_the_build_long() {
    let short = text_of(&pipespeed(&["-V"]).output().unwrap().stdout);
    assert_eq!(short.lines().count(), 1, "{short}");
    assert!(short.starts_with(&format!("pipespeed {} (", env!("CARGO_PKG_VERSION"))));
    let long = text_of(&pipespeed(&["--version"]).output().unwrap().stdout);
    let keys: Vec<&str> = long
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(": "))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        keys,
        ["commit", "rustc", "target", "libc", "profile"],
        "{long}"
    );
}

/// Without write-read, or with --placement-runs 0, there is no placement
/// check; --placement puts both ends where asked; the runs' bounds.
#[test]
fn placement_is_chosen_and_the_check_can_be_left_out() {
    let (out, value) = bench_json(&["--rungs", "vmsplice-read", "--placement", "same-cpu"]);
    let p = &value["placement"];
    assert_eq!(p["kind"], "pinned");
    assert_eq!(p["writer_cpu"], p["reader_cpu"]);
    assert!(value["placement_check"].is_null());
    assert!(flat_stdout(&out).contains("writer and reader both on CPU"));
    let (_, value) = bench_json(&["--rungs", "write-read", "--placement-runs", "0"]);
    assert!(value["placement_check"].is_null());
    let out = pipespeed(&["bench", "--placement", "same-cpu", "--cpus", "0,0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = pipespeed(&["bench", "--runs", "3", "--max-runs", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // --min-runs alone raises the default maximum with it.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = pipespeed(&[
        "bench",
        "--rungs",
        "write-read",
        "--min-runs",
        "12",
        "--bytes",
        "1M",
    ])
    .args(["--placement-runs", "0", "--json", json.to_str().unwrap()])
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        (value["runs"].as_u64(), value["max_runs"].as_u64()),
        (Some(12), Some(12))
    );
    let out = pipespeed(&["bench", "--runs", "1001"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = pipespeed(&["bench", "--min-runs", "6", "--max-runs", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--max-runs 5 is below --min-runs 6"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bench_draws_its_chart_and_writes_a_self_contained_page() {
    let dir = tempfile::tempdir().unwrap();
    let (svg, html) = (dir.path().join("ladder.svg"), dir.path().join("r.html"));
    let (_, value) = bench_json(&[
        "--rungs",
        "write-read,vmsplice-read",
        "--svg",
        svg.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(value["rungs"].as_array().unwrap().len(), 2);
    let svg = std::fs::read_to_string(svg).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert!(svg.contains("vmsplice-read"), "{svg}");
    let html = std::fs::read_to_string(html).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<svg") && html.contains("vmsplice-read"));
}

#[test]
fn a_scan_runs_the_ladder_per_value_and_charts_it() {
    let dir = tempfile::tempdir().unwrap();
    let [json, csv, svg, html, md] =
        ["scan.json", "scan.csv", "scan.svg", "scan.html", "scan.md"].map(|f| dir.path().join(f));
    let out = pipespeed(&[
        "bench",
        "--html",
        html.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
        "--scan",
        "buf-size=16K,64K",
        "--rungs",
        "write-read,vmsplice-read",
        "--runs",
        "2",
        "--bytes",
        "1M",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    assert_eq!(value["schema"], "pipespeed.scan/1");
    assert_eq!(value["param"], "buf-size");
    let points = value["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (point, size) in points.iter().zip([16 << 10, 64 << 10]) {
        assert_eq!(point["value"], size);
        for rung in point["result"]["rungs"].as_array().unwrap() {
            assert_eq!(rung["buf_size"], size, "{rung}");
            assert_eq!(rung["gib_s"]["runs"].as_array().unwrap().len(), 2, "{rung}");
        }
    }
    // One header, then two runs of two rungs at each of two values.
    let csv = std::fs::read_to_string(csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 2 * 2, "{csv}");
    assert_eq!(csv.lines().filter(|l| l.starts_with("rung,")).count(), 1);
    roxmltree::Document::parse(&std::fs::read_to_string(svg).unwrap()).unwrap();
    let text = stdout(&out);
    assert!(text.contains("median GiB/s by buf-size"), "{text}");
    assert!(text.contains("16KiB") && text.contains("64KiB"), "{text}");
    // The answer first, then each value's table; the noise once at most.
    let medians = text.find("median GiB/s by buf-size").unwrap();
    assert!(medians < text.find("== buf-size 16KiB").unwrap(), "{text}");
    assert!(text.contains("\ntrust: "), "{text}");
    assert!(text.matches("noisy: ").count() <= 1, "{text}");
    // --scan takes every export.
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("<table id=\"medians\">"), "{page}");
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("## Median GiB/s by buf-size"), "{md}");
}

#[test]
fn a_scan_of_placement_pins_each_ladder_and_names_the_placements() {
    let dir = tempfile::tempdir().unwrap();
    let [json, svg] = ["scan.json", "scan.svg"].map(|f| dir.path().join(f));
    let out = pipespeed(&[
        "bench",
        "--scan",
        "placement=same-cpu,unpinned",
        "--rungs",
        "write-read",
        "--runs",
        "1",
        "--bytes",
        "1M",
        "--json",
        json.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    assert_eq!(value["param"], "placement");
    let points = value["points"].as_array().unwrap();
    let labels: Vec<&str> = points
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["same-cpu", "unpinned"]);
    let same = &points[0]["result"]["placement"];
    assert_eq!(same["writer_cpu"], same["reader_cpu"]);
    assert_eq!(points[1]["result"]["placement"]["kind"], "unpinned");
    let svg = std::fs::read_to_string(svg).unwrap();
    roxmltree::Document::parse(&svg).unwrap();
    assert!(
        svg.contains("same-cpu") && svg.contains("unpinned"),
        "{svg}"
    );
    let text = stdout(&out);
    assert!(text.contains("== placement same-cpu"), "{text}");
    assert!(text.contains("median GiB/s by placement"), "{text}");
    let out = pipespeed(&["bench", "--scan", "placement=same-cpu,nowhere"])
        .output()
        .unwrap();
    assert_one_line_error(&out, 2, "'nowhere' is not a placement");
}

#[test]
fn a_scan_refuses_rungs_and_values_it_cannot_measure() {
    let run = |args: &[&str]| pipespeed(&[&["bench"], args].concat()).output().unwrap();
    let out = run(&["--scan", "pipe-size=64K,128K", "--rungs", "vmsplice-read"]);
    assert_one_line_error(&out, 2, "vmsplice-read does not depend on pipe-size");
    let out = run(&["--scan", "buf-size=4K,64K", "--rungs", "write-read"]);
    assert_one_line_error(&out, 2, "at least 8K");
    let out = run(&["--scan", "runs=1,2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot scan 'runs'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_unwritable_chart_is_a_one_line_error_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ladder.json");
    let out = pipespeed(&[
        "bench",
        "--rungs",
        "write-read",
        "--runs",
        "1",
        "--bytes",
        "1M",
        "--json",
        json.to_str().unwrap(),
        "--svg",
        "/nonexistent-dir/ladder.svg",
    ])
    .output()
    .unwrap();
    assert_one_line_error(&out, 1, "cannot write /nonexistent-dir/ladder.svg");
    // Found before the measuring, and nothing written: no JSON file.
    assert!(!json.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// `bench` with `args` and a JSON file: its status, stderr and the JSON
/// (null when none was written).
fn bench_status(args: &[&str]) -> (Output, serde_json::Value) {
    bench_status_within(None, args)
}

/// [`bench_status`] with its address space limited to `kib` (`ulimit
/// -v`), when given: a writer cannot map a 1 GiB buffer then.
fn bench_status_within(kib: Option<u64>, args: &[&str]) -> (Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut cmd = match kib {
        Some(kib) => {
            let mut sh = Command::new("sh");
            let script = format!(r#"ulimit -v {kib} && exec "$0" "$@""#);
            sh.args(["-c", &script, EXE]);
            sh
        }
        None => Command::new(EXE),
    };
    cmd.args(["bench", "--runs", "1", "--bytes", "1M"]);
    cmd.args(args).arg("--json").arg(&json);
    let out = cmd.output().unwrap();
    let value = std::fs::read(&json).map_or(serde_json::Value::Null, |text| {
        serde_json::from_slice(&text).unwrap()
    });
    (out, value)
}

#[test]
fn a_failed_rung_makes_bench_fail_after_its_table_and_files() {
    // The buffer cannot be mapped within 512 MiB of address space.
    let small = Some(512 << 10);
    let (out, json) = bench_status_within(small, &["--rungs", "write-read", "--buf-size", "1G"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("failed"), "{}", stdout(&out));
    // Nothing measured: no result file to replace an older one.
    assert_eq!(json, serde_json::Value::Null);
    let err = stderr(&out);
    assert!(err.contains("pipespeed: nothing was measured: "), "{err}");
    assert!(
        err.contains("pipespeed: 1 of 1 rungs failed: write-read"),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
    // Beside a measured rung (tuned sizes its own buffer), the failure is
    // in the file too.
    let (out, json) =
        bench_status_within(small, &["--rungs", "write-read,tuned", "--buf-size", "1G"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("1 of 2 rungs failed: write-read"));
    let statuses: Vec<&str> = json["rungs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert!(statuses.contains(&"failed"), "{json}");
}

#[test]
fn rungs_asked_for_that_this_machine_cannot_run_exit_3() {
    // Busy looping on one CPU is refused before it starts (a CPU this
    // process may use: CI runs the tests pinned to CPU 0 and to CPU 1).
    let cpu = pipespeed::sys::available_cpus().unwrap()[0];
    let cpus = format!("{cpu},{cpu}");
    let (out, json) = bench_status(&["--rungs", "vmsplice-splice-huge-busy", "--cpus", &cpus]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(json, serde_json::Value::Null);
    // Beside a measured rung, an unavailable one is only said.
    let (out, json) = bench_status(&[
        "--rungs",
        "write-read,vmsplice-splice-huge-busy",
        "--cpus",
        &cpus,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json["rungs"][1]["status"], "unavailable", "{json}");
}

#[test]
fn meaningless_measurements_are_refused_with_the_range() {
    for args in [
        &["bench", "--bytes", "0"][..],
        &["bench", "--run-seconds", "1e30"],
        &["bench", "--run-seconds", "NaN"],
        &["latency", "--duration", "1e30"],
        &["latency", "--duration=-1"],
        &["latency", "--warmup", "1e30s"],
        &["contend", "--duration", "1e-9"],
        &["contend", "--duration", "inf"],
        &["read", "--bytes", "0"],
    ] {
        let out = pipespeed(args).stdin(Stdio::null()).output().unwrap();
        let value = args[args.len() - 1].trim_start_matches("--duration=");
        assert_one_line_error(&out, 2, value);
        let err = stderr(&out);
        assert!(
            !args[1].starts_with("--duration") && args[1] != "--run-seconds"
                || err.contains("from 0.01 to 86400"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_reader_fed_less_than_asked_fails_and_says_how_much_came() {
    let (reader, writer) = pipeline(&["--bytes", "1000"], &["--bytes", "10M"]);
    assert!(writer.status.success(), "{}", stderr(&writer));
    assert_eq!(reader.status.code(), Some(1), "{}", stderr(&reader));
    assert_eq!(
        stderr(&reader),
        "pipespeed: read: input ended after 1000 bytes, before the 10MiB asked for\n"
    );
    let (reader, _) = pipeline(&["--bytes", "1M"], &["--bytes", "1M"]);
    assert!(reader.status.success(), "{}", stderr(&reader));
}

#[test]
fn cpus_and_pipe_sizes_are_checked_by_one_rule_in_every_command() {
    // An allowed CPU beside a CPU number the parser takes (0-1023,
    // tests/sizes.rs tries past it) that this machine does not have.
    let cpus = format!("{},1000", pipespeed::sys::available_cpus().unwrap()[0]);
    for command in ["bench", "latency", "contend"] {
        let out = pipespeed(&[command, "--cpus", &cpus]).output().unwrap();
        assert_one_line_error(
            &out,
            2,
            "--cpus: CPU 1000 is not one this process may use (allowed: ",
        );
        let out = pipespeed(&[command, "--cpus", "0"]).output().unwrap();
        assert_one_line_error(&out, 2, "--cpus takes two CPUs, the ");
    }
    for args in [
        &["bench", "--pipe-size", "0"][..],
        &["contend", "--pipe-size", "0"],
        &["read", "--pipe-size", "0"],
    ] {
        let out = pipespeed(args).stdin(Stdio::null()).output().unwrap();
        assert_one_line_error(&out, 2, "a pipe holds at least one page");
    }
}

/// `-` sends one result to stdout (the table then goes to stderr), each
/// file written is named on stderr, and --markdown writes the table as
/// Markdown.
#[test]
fn results_go_to_stdout_with_a_dash_and_written_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("ladder.md");
    let out = pipespeed(&[
        "bench",
        "--rungs",
        "write-read,vmsplice-read",
        "--runs",
        "2",
        "--bytes",
        "2M",
        "--placement-runs",
        "0",
        "--json",
        "-",
        "--markdown",
        md.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["rungs"].as_array().unwrap().len(), 2);
    let err = stderr(&out);
    assert!(
        err.contains("vs baseline"),
        "the table goes to stderr: {err}"
    );
    assert!(
        err.contains(&format!("pipespeed: wrote {}\n", md.display())),
        "{err}"
    );
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("| rung | what it changes | copies |"), "{md}");
    assert!(
        md.contains("| vmsplice-read | writer vmsplices its pages in | 1 (checked) |"),
        "{md}"
    );
    assert!(
        md.contains("| write-read | write(2) \\| read(2): the baseline |"),
        "{md}"
    );
    let out = pipespeed(&["bench", "--json", "-", "--csv", "-"])
        .output()
        .unwrap();
    assert_one_line_error(&out, 2, "only one result may go to standard output");
}

/// The default ladder's text, with tiny settings, at 80 and at 120
/// columns: no line wider than the terminal, the answer (baseline to
/// trust, at most six lines of it as the result records them) last.
#[test]
fn the_default_ladder_fits_the_terminal_with_its_answer_last() {
    for columns in [80, 120] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ladder.json");
        let out = pipespeed(&["bench", "--runs", "3", "--bytes", "2M", "--buf-size", "64K"])
            .args(["--placement-runs", "2", "--json", path.to_str().unwrap()])
            .env("COLUMNS", columns.to_string())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        for line in text.lines() {
            assert!(
                line.chars().count() <= columns,
                "{} columns at COLUMNS={columns}: {line:?}\n{text}",
                line.chars().count()
            );
        }
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let answer: Vec<&str> = value["verdict"]["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        assert!((3..=6).contains(&answer.len()), "{answer:?}");
        // The answer's lines, wrapped, are the text's last lines.
        let tail: Vec<&str> = text.lines().rev().take_while(|l| !l.is_empty()).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        assert!(tail[0].starts_with("baseline: "), "{text}");
        let labels: Vec<&str> = tail
            .iter()
            .filter(|l| !l.starts_with(' '))
            .map(|l| l.split(':').next().unwrap())
            .collect();
        let want: Vec<&str> = answer
            .iter()
            .map(|l| l.split(':').next().unwrap())
            .collect();
        assert_eq!(labels, want, "{text}");
        assert_eq!(
            tail.join(" ").split_whitespace().collect::<Vec<_>>(),
            answer.join(" ").split_whitespace().collect::<Vec<_>>(),
            "{text}"
        );
        assert!(answer.last().unwrap().starts_with("trust:"), "{answer:?}");
        // The columns the default leaves to --explain.
        assert!(
            !text.contains("of limit") && !text.contains("median GiB/s"),
            "{text}"
        );
    }
}
