//! `pipespeed top` on real pipelines with a bottleneck put where the test
//! wants it, read from its JSON lines; and what watching must never do:
//! hold back a writer's SIGPIPE or a reader's end of file.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

/// Runs `pipespeed top --run SCRIPT --json -` and returns its status, the
/// JSON lines (windows, then the summary) and its stderr.
fn watch(script: &str, interval: &str) -> (Option<i32>, Vec<Value>, String) {
    let out = Command::new(EXE)
        .args([
            "top",
            "--interval",
            interval,
            "--json",
            "-",
            "--run",
            script,
        ])
        // Scripts name the binary "$EXE", quoted: the checkout may lie
        // at a path holding spaces.
        .env("EXE", EXE)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{stderr}")))
        .collect();
    (out.status.code(), lines, stderr)
}

fn summary(lines: &[Value]) -> &Value {
    let last = lines.last().expect("a summary line");
    assert_eq!(last["type"], "summary", "{last}");
    assert_eq!(last["schema"], "pipespeed.top/1");
    last
}

/// The stage most windows named, checked to be named in more than half
/// of them (the whole run's verdict, a mean over windows that moved, may
/// fall between the rules' thresholds on a loaded machine).
fn named(lines: &[Value]) -> String {
    let s = summary(lines);
    let samples = s["samples"].as_u64().unwrap();
    let first = &s["named"][0][0];
    let windows = first["windows"].as_u64().unwrap_or(0);
    assert!(
        2 * windows > samples,
        "named in {windows} of {samples} windows: {s}"
    );
    first["name"].as_str().unwrap().to_string()
}

fn stage_names(pipeline: &Value) -> Vec<String> {
    pipeline["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_cpu_bound_middle_stage_is_named() {
    let (code, lines, stderr) = watch(
        "head -c 24M /dev/urandom | gzip -1 | cat > /dev/null",
        "0.2",
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(lines.len() >= 2, "{lines:?}");
    let s = summary(&lines);
    assert_eq!(stage_names(&s["pipelines"][0]), ["head", "gzip", "cat"]);
    assert_eq!(named(&lines), "gzip", "{s}");
    assert_eq!(s["pipelines"][0]["pipes"].as_array().unwrap().len(), 2);
}

#[test]
fn a_rate_limited_stage_is_named_whatever_its_cpu() {
    let script = r#"head -c 3M /dev/zero | "$EXE" pv -q -L 2M | cat > /dev/null"#;
    let (code, lines, stderr) = watch(script, "0.25");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(named(&lines), "pipespeed pv", "{}", summary(&lines));
}

#[test]
fn the_reader_at_the_end_is_named() {
    let (code, lines, stderr) = watch("head -c 1G /dev/zero | sha256sum -b > /dev/null", "0.2");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(named(&lines), "sha256sum", "{}", summary(&lines));
}

#[test]
fn a_splicing_stage_gets_an_estimated_rate() {
    let script = r#"head -c 3M /dev/zero | "$EXE" pv -q -L 3M | "$EXE" cat | cat > /dev/null"#;
    let (code, lines, stderr) = watch(script, "0.25");
    assert_eq!(code, Some(0), "{stderr}");
    let s = summary(&lines);
    let stages = s["pipelines"][0]["stages"].as_array().unwrap();
    let cat = stages
        .iter()
        .find(|st| st["name"] == "pipespeed cat")
        .unwrap_or_else(|| panic!("{s}"));
    assert_eq!(cat["bytes_in"]["estimated"], true, "{cat}");
    assert!(
        cat["bytes_in"]["bytes_per_s"].as_f64().unwrap() > 0.0,
        "{cat}"
    );
    assert_eq!(cat["copies"], false, "{cat}");
    // head reads and writes: counted, not estimated.
    assert_eq!(stages[0]["bytes_out"]["estimated"], false, "{}", stages[0]);
}

#[test]
fn a_fifo_joins_its_stages() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("f");
    let script = format!(
        "mkfifo {0}; head -c 12M /dev/urandom | gzip -1 > {0} & cat {0} > /dev/null; wait",
        fifo.display()
    );
    let (code, lines, stderr) = watch(&script, "0.2");
    assert_eq!(code, Some(0), "{stderr}");
    let s = summary(&lines);
    let pipeline = &s["pipelines"][0];
    assert_eq!(stage_names(pipeline), ["head", "gzip", "cat"], "{s}");
    let names: Vec<&str> = pipeline["pipes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&fifo.to_str().unwrap()), "{names:?}");
}

#[test]
fn a_stage_that_exits_mid_run_is_marked_and_the_watch_goes_on() {
    let (code, lines, stderr) = watch("sleep 0.3 | sleep 1.2", "0.2");
    assert_eq!(code, Some(0), "{stderr}");
    let windows = &lines[..lines.len() - 1];
    let states = |w: &Value| -> Vec<String> {
        w["pipelines"][0]["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["state"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        windows.iter().any(|w| states(w) == ["exited", "running"]),
        "{windows:?}"
    );
    assert_eq!(windows[0]["type"], "sample");
}

/// Stages that come and go behind one pipe (a subshell's commands one
/// after the other), and subshells waiting for them: the shape grows and
/// the parents are not stages.
#[test]
fn stages_that_come_and_go_behind_one_pipe_are_followed() {
    let (code, lines, stderr) = watch(
        "{ head -c 1M /dev/zero; sleep 0.5; head -c 1M /dev/zero; sleep 0.5; } | \
         { head -c 1M >/dev/null; sleep 0.5; cat >/dev/null; }",
        "0.1",
    );
    assert_eq!(code, Some(0), "{stderr}");
    let s = summary(&lines);
    let names = stage_names(&s["pipelines"][0]);
    assert!(names.contains(&"sleep".to_string()), "{s}");
    assert!(names.contains(&"cat".to_string()), "{s}");
    assert!(
        !names.contains(&"sh".to_string()),
        "the waiting subshells: {s}"
    );
}

#[test]
fn the_pipeline_s_status_is_top_s() {
    let (code, lines, _) = watch("sleep 0.2 | sh -c 'exit 7'", "0.1");
    assert_eq!(code, Some(7));
    summary(&lines);
}

#[test]
fn bad_targets_and_intervals_are_one_line_and_status_2() {
    for args in [
        &["top", "x"][..],
        &["top", "="],
        &["top", "0"],
        &["top", "--interval", "0"],
        &["top", "--interval", "1e9"],
        &["top", "1", "--run", "true"],
        &["top", "--once", "--run", "true"],
    ] {
        let out = Command::new(EXE).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("pipespeed: "), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    let out = Command::new(EXE)
        .args(["top", "4194304", "--once"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pipespeed: no process 4194304\n"
    );
    let out = Command::new(EXE)
        .args(["top", "=no-such-command-here", "--once"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn without_a_terminal_the_session_is_refused_with_the_way_out() {
    let out = Command::new("setsid")
        .args(["-w", EXE, "top", "--once"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pipespeed: not run from a terminal: name a PID or =NAME to watch\n"
    );
}

#[test]
fn the_screen_is_plain_lines_when_not_a_terminal() {
    let out = Command::new(EXE)
        .args(["top", "--interval", "0.1", "--run", "sleep 0.3 | sleep 0.3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\x1b'), "{text}");
    assert!(text.contains("    PID  STAGE"), "{text}");
    assert!(text.contains("pipespeed top: summary of"), "{text}");
}

#[test]
fn the_screen_fits_80_and_120_columns() {
    for columns in ["80", "120"] {
        let out = Command::new(EXE)
            .args(["top", "--interval", "0.1", "--run", "sleep 0.3 | sleep 0.3"])
            .env("COLUMNS", columns)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8(out.stdout).unwrap();
        common::assert_fits(&text, columns.parse().unwrap());
        assert!(text.contains("pipespeed top: summary of"), "{text}");
    }
}

/// A process of another user is shown with what anyone may read (its
/// CPU), and one line says what cannot be seen.
#[test]
fn another_user_s_stage_is_degraded_with_its_message() {
    if !rustix::process::geteuid().is_root() {
        common::skip("root", "starting a process of another user needs root");
        return;
    }
    let (mut writer, mut reader) = piped(&["sleep", "5"], &["sleep", "5"]);
    let out = Command::new("runuser")
        .args([
            "-u",
            "nobody",
            "--",
            EXE,
            "top",
            "--once",
            "--interval",
            "0.2",
            "--json",
            "-",
        ])
        .arg(writer.id().to_string())
        .current_dir("/")
        .output()
        .unwrap();
    let _ = writer.kill();
    let _ = reader.kill();
    let _ = writer.wait();
    let _ = reader.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let sample: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stage = &sample["pipelines"][0]["stages"][0];
    assert_eq!(stage["visible"], false, "{sample}");
    // The shares the table shows as `?` are null, not numbers.
    for share in [
        "working_pct",
        "input_wait_pct",
        "output_wait_pct",
        "other_pct",
    ] {
        assert!(stage[share].is_null(), "{share}: {sample}");
    }
    let unseen = sample["unseen"].as_array().unwrap();
    assert!(
        unseen
            .iter()
            .any(|l| l.as_str().unwrap().contains("another user's process")),
        "{sample}"
    );
}

/// `writer | reader`, started by this test. Nothing else of the test's is
/// joined to them: where their other descriptors would go (the harness's
/// capture) is a pipe too, so they get /dev/null.
fn piped(writer: &[&str], reader: &[&str]) -> (std::process::Child, std::process::Child) {
    let mut w = Command::new(writer[0])
        .args(&writer[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let r = Command::new(reader[0])
        .args(&reader[1..])
        .stdin(w.stdout.take().unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (w, r)
}

/// `pipespeed top --interval 0.1 PID`, once it has printed its first
/// window (so it is probing).
fn probing(pid: u32) -> std::process::Child {
    use std::io::BufRead;
    let mut top = Command::new(EXE)
        .args(["top", "--interval", "0.1", "--json", "-"])
        .arg(pid.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(top.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.contains("\"type\":\"sample\""), "{first}");
    // The rest is read, so that top never waits on its output.
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    top
}

/// While top probes (every 5 ms at --interval 0.1), a writer whose reader
/// exits still gets its SIGPIPE at once, and a reader whose writer exits
/// its end of file.
#[test]
fn watching_holds_back_neither_sigpipe_nor_end_of_file() {
    // yes | sleep: when sleep exits, yes dies of SIGPIPE.
    let (mut yes, mut sleep) = piped(&["yes"], &["sleep", "1"]);
    let mut top = probing(yes.id());
    sleep.wait().unwrap();
    let gone = Instant::now();
    let status = yes.wait().unwrap();
    let late = gone.elapsed();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
    assert!(late < Duration::from_millis(100), "SIGPIPE {late:?} late");

    // sleep | cat: when sleep exits, cat reads its end of file.
    let (mut writer, mut cat) = piped(&["sleep", "1"], &["cat"]);
    let mut top2 = probing(cat.id());
    writer.wait().unwrap();
    let gone = Instant::now();
    assert!(cat.wait().unwrap().success());
    let late = gone.elapsed();
    assert!(
        late < Duration::from_millis(100),
        "end of file {late:?} late"
    );
    for t in [&mut top, &mut top2] {
        // Each ends by itself once its pipeline is gone.
        let deadline = Instant::now() + Duration::from_secs(5);
        while t.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "top did not end with its pipeline"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(t.wait().unwrap().success());
    }
}

/// SIGTERM to top: the summary is printed, the status is 143, and the
/// pipeline --run started is gone with it.
#[test]
fn an_interrupt_prints_the_summary_and_takes_the_run_pipeline_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("pids");
    let script = format!("echo $$ > {}; sleep 30 | sleep 30", marker.display());
    let top = common::catchable(EXE)
        .args(["top", "--interval", "0.2", "--json", "-", "--run", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&marker).map_or(true, |s| s.trim().is_empty()) {
        assert!(Instant::now() < deadline, "the pipeline did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    let shell: i32 = std::fs::read_to_string(&marker)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(top.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let out = top.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("\"type\":\"summary\""),
        "{text}"
    );
    // The pipeline's process group is gone.
    let group = rustix::process::Pid::from_raw(shell).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while rustix::process::test_kill_process_group(group).is_ok() {
        assert!(Instant::now() < deadline, "the pipeline outlived top");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `=NAME` finds the process by its command name, and --once prints one
/// window of its pipeline.
#[test]
fn a_name_finds_its_pipeline_and_once_prints_one_window() {
    let dir = tempfile::tempdir().unwrap();
    let nap = dir.path().join("topnap");
    std::os::unix::fs::symlink("/bin/sleep", &nap).unwrap();
    let nap = nap.to_str().unwrap();
    let (mut writer, mut reader) = piped(&[nap, "3"], &["cat"]);
    // Until the symlink's name is the process's (it is once exec'd).
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(format!("/proc/{}/comm", writer.id()))
        .map_or(true, |c| c.trim() != "topnap")
    {
        assert!(Instant::now() < deadline, "topnap did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = Command::new(EXE)
        .args([
            "top",
            "=topnap",
            "--once",
            "--interval",
            "0.2",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    let _ = writer.kill();
    let _ = writer.wait();
    let _ = reader.wait();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "one window, no summary: {text}");
    let sample: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(sample["type"], "sample");
    assert_eq!(
        stage_names(&sample["pipelines"][0]),
        ["topnap", "cat"],
        "{sample}"
    );
}
