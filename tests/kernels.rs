//! `pipespeed kernels`: real boots under qemu's emulator (TCG) of the
//! kernel image in `PIPESPEED_KERNEL` (.ci/run extracts one from Debian's
//! linux-image package), with busybox-static's busybox; each boot is short
//! (a one-cell contend of tiny runs). Without qemu, busybox or a kernel
//! the boot tests say they are skipped (`PIPESPEED_REQUIRE_KERNELS=1`:
//! they fail). The guest runs `PIPESPEED_GUEST` if set (a static release
//! build: faster to load), else the binary under test.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

/// The kernel image to boot, with qemu and busybox installed; else the
/// test says it is skipped.
fn kernel() -> Option<PathBuf> {
    let on_path = |p: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let why = match std::env::var_os("PIPESPEED_KERNEL").map(PathBuf::from) {
        None => "PIPESPEED_KERNEL names no kernel image to boot".to_string(),
        Some(k) if !k.is_file() => format!("PIPESPEED_KERNEL={}: no such file", k.display()),
        Some(_) if !on_path("qemu-system-x86_64") => "qemu-system-x86_64 is not installed".into(),
        Some(_) if !on_path("busybox") => "busybox is not installed".into(),
        Some(k) => return Some(k),
    };
    common::skip("kernels", &why);
    None
}

/// `pipespeed kernels ARGS` with its own cache and temporary directory.
fn kernels(dir: &Path, args: &[&str]) -> Command {
    with(common::catchable(EXE), dir, args)
}

/// `pipespeed kernels ARGS` found in no `PATH`: `PATH` is `dir`.
fn kernels_without_path(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = with(Command::new(EXE), dir, args);
    cmd.env("PATH", dir);
    cmd
}

fn with(cmd: Command, dir: &Path, args: &[&str]) -> Command {
    let mut cmd = own_guest(cmd, dir, &[]);
    // Before ARGS: after their `--` it would be the guest's.
    if let Some(guest) = std::env::var_os("PIPESPEED_GUEST") {
        cmd.arg("--guest-pipespeed").arg(guest);
    }
    cmd.args(args);
    cmd
}

/// `with`, without `PIPESPEED_GUEST`: ARGS name the guest or leave it.
fn own_guest(mut cmd: Command, dir: &Path, args: &[&str]) -> Command {
    cmd.arg("kernels")
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("TMPDIR", dir.join("tmp"))
        .args(args);
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    cmd
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A one-cell contend of one 1 s run (after a warm-up), pipe_bench's
/// sizes: one run per boot, so that every pooled run is a boot of its own
/// (docs/kernels.md, "Why one run per boot").
const CONTEND: [&str; 8] = [
    "--",
    "contend",
    "--duration",
    "1",
    "--runs",
    "1",
    "--warmup-runs",
    "1",
];

#[test]
fn two_boots_of_one_kernel_each_are_pooled_and_no_cell_is_significant() {
    let Some(kernel) = kernel() else { return };
    let dir = tempfile::tempdir().unwrap();
    let k = kernel.to_str().unwrap();
    let json = dir.path().join("pair.json");
    let out_dir = dir.path().join("boots");
    // Four boots (two rounds: the least that interleaves and pools) of a
    // large debug binary, maybe on one CPU beside other tests' boots:
    // time enough to reach /init.
    let mut args = vec![k, k, "--rounds", "2", "--boot-timeout", "600"];
    args.extend(["--json", json.to_str().unwrap()]);
    args.extend(["--out", out_dir.to_str().unwrap()]);
    args.extend(CONTEND);
    let out = kernels(dir.path(), &args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["schema"], "pipespeed.kernels/1");
    // Interleaved A, B, A, B, every boot's result kept.
    let boots = doc["boots"].as_array().unwrap();
    let order: Vec<(u64, &str)> = boots
        .iter()
        .map(|b| (b["round"].as_u64().unwrap(), b["kernel"].as_str().unwrap()))
        .collect();
    assert_eq!(order, [(1, "A"), (1, "B"), (2, "A"), (2, "B")]);
    for boot in boots {
        let file = boot["files"][0].as_str().unwrap();
        assert!(file.starts_with(out_dir.to_str().unwrap()), "{file}");
        let one: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        assert_eq!(
            one["rows"][0]["runs"].as_array().unwrap().len(),
            1,
            "{file}"
        );
    }
    // Each kernel's runs are its two boots' runs.
    let m = &doc["measurements"][0];
    assert_pooled_1x1(m, 2);
    // The table: pipe_bench's grid, the guest's kernel, every change
    // unmarked (a kernel against itself), none without an interval.
    let table = String::from_utf8_lossy(&out.stdout);
    let lkml = m["lkml"].as_str().unwrap();
    assert!(table.contains(lkml), "{table}");
    assert!(
        lkml.contains("writes/s (higher is better), writers (w) x readers (r):"),
        "{lkml}"
    );
    assert!(lkml.contains("2 boots of A and 2 of B pooled"), "{lkml}");
    let cells: Vec<&str> = lkml.lines().filter(|l| l.starts_with("1  ")).collect();
    assert_eq!(cells.len(), 2, "{lkml}");
    for cell in cells {
        assert!(!cell.contains('*') && !cell.contains('?'), "{cell}\n{lkml}");
    }
    // Emulated (TCG) figures say so, in the table and the JSON alike.
    let emulated = doc["emulated"] == true;
    assert_eq!(emulated, doc["accel"] == "tcg");
    assert_eq!(table.contains("EMULATED"), emulated, "{table}");
    assert_eq!(table.contains("(emulated)"), emulated, "{table}");
}

#[test]
fn a_kernel_that_panics_before_init_fails_naming_the_panic() {
    let Some(kernel) = kernel() else { return };
    let dir = tempfile::tempdir().unwrap();
    let k = kernel.to_str().unwrap();
    // No /init to run: the kernel looks for a root device and panics.
    let args = [
        k,
        k,
        "--accel",
        "tcg",
        "--rounds",
        "1",
        "--append",
        "rdinit=/none",
    ];
    let start = Instant::now();
    let out = kernels(dir.path(), &args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("kernel A (") && err.contains("the kernel panicked before /init: "),
        "{err}"
    );
    assert!(err.contains("Kernel panic - not syncing"), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(120),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_kernel_that_does_not_reach_init_in_time_fails_within_its_timeout() {
    let Some(kernel) = kernel() else { return };
    let dir = tempfile::tempdir().unwrap();
    let k = kernel.to_str().unwrap();
    let start = Instant::now();
    let args = [k, k, "--accel", "tcg", "--boot-timeout", "0.5"];
    let out = kernels(dir.path(), &args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("did not reach /init within 0.5 s (qemu killed)"),
        "{err}"
    );
    // The initramfs is built first; the boot itself stops at 0.5 s.
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    // Nothing left behind in the temporary directory.
    assert_eq!(
        std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
        0
    );
}

#[test]
fn a_file_that_is_no_kernel_fails_with_qemu_s_words() {
    let Some(kernel) = kernel() else { return };
    let dir = tempfile::tempdir().unwrap();
    let not_kernel = dir.path().join("vmlinuz");
    std::fs::write(&not_kernel, b"not a kernel\n").unwrap();
    let args = [
        not_kernel.to_str().unwrap(),
        kernel.to_str().unwrap(),
        "--accel",
        "tcg",
    ];
    let out = kernels(dir.path(), &args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("kernel A (") && err.contains("qemu ended (exit status: 1) before /init: "),
        "{err}"
    );
}

#[test]
fn sigterm_kills_qemu_and_removes_the_work_directory() {
    let Some(kernel) = kernel() else { return };
    let dir = tempfile::tempdir().unwrap();
    let k = kernel.to_str().unwrap();
    let child = kernels(dir.path(), &[k, k, "--accel", "tcg"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Until qemu runs: its console file exists in the work directory.
    let tmp = dir.path().join("tmp");
    let deadline = Instant::now() + Duration::from_secs(60);
    let console = loop {
        let found = std::fs::read_dir(&tmp).unwrap().flatten().find_map(|work| {
            let c = work.path().join("boot-1-A/console.log");
            c.exists().then_some(c)
        });
        if let Some(c) = found {
            break c;
        }
        assert!(Instant::now() < deadline, "qemu never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    let qemus = |console: &Path| -> usize {
        let needle = console.to_str().unwrap().to_string();
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|p| {
                std::fs::read(p.path().join("cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&needle))
            })
            .count()
    };
    assert_eq!(qemus(&console), 1);
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("interrupted by SIGTERM"),
        "{}",
        stderr(&out)
    );
    assert_eq!(qemus(&console), 0, "qemu still runs");
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "the work directory is left"
    );
}

#[test]
fn without_qemu_one_line_names_the_package() {
    let dir = tempfile::tempdir().unwrap();
    let k = "/nonexistent/vmlinuz";
    let out = kernels_without_path(dir.path(), &[k, k]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        stderr(&out),
        "pipespeed: kernels: qemu-system-x86_64 not found: install the package qemu-system-x86\n"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn vng_without_virtme_ng_names_the_package() {
    let dir = tempfile::tempdir().unwrap();
    // A qemu (that never runs): vng is what is missing.
    let qemu = dir.path().join("qemu-system-x86_64");
    std::fs::write(&qemu, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&qemu, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let kernel = dir.path().join("vmlinuz");
    std::fs::write(&kernel, b"").unwrap();
    let k = kernel.to_str().unwrap();
    let out = kernels_without_path(dir.path(), &[k, k, "--vng"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "pipespeed: kernels: vng not found: install the package virtme-ng (pip install virtme-ng)\n"
    );
}

#[test]
fn bad_usage_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let k = "/nonexistent/vmlinuz";
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("keep"), b"mine").unwrap();
    let cases: [(&[&str], &str); 9] = [
        (&[k, k, "--rounds", "0"], "'0' is not a count from 1 to 100"),
        (&[k, k, "--memory", "1G0"], "--memory"),
        (&[k, k, "--out", full.to_str().unwrap()], "not empty"),
        (
            &[k, k, "--", "cat", "x"],
            "the guest runs bench, contend, latency or ipc",
        ),
        (&[k, k, "--", "contend", "--json", "x"], "leave --json out"),
        (
            &[k, k, "--rounds", "100", "--runs", "20"],
            "--rounds 100 x 20 runs a boot (--runs) pools 2000 runs a row: at most 1000",
        ),
        (
            &[k, k, "--rounds", "3", "--", "contend", "--runs=400"],
            "--rounds 3 x 400 runs a boot (its most runs a row) pools 1200",
        ),
        (
            &[k, k, "--rounds", "100", "--", "bench", "--runs", "11"],
            "pools 1100",
        ),
        (
            &[k, k, "--pipe-bench", "pb", "--", "--memory-pressure"],
            "the guest has no stress-ng",
        ),
    ];
    for (args, said) in cases {
        let out = kernels_without_path(dir.path(), args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(said), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read(full.join("keep")).unwrap(), b"mine");
    // A result written over a kernel image (or the guest's binary): the
    // image is the user's, refused before anything runs.
    let image = dir.path().join("bzImage");
    std::fs::write(&image, b"kernel").unwrap();
    let i = image.to_str().unwrap();
    let linked = dir.path().join("linked");
    std::fs::hard_link(&image, &linked).unwrap();
    for json in [i, linked.to_str().unwrap()] {
        let out = kernels_without_path(dir.path(), &[i, k, "--json", json])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(std::fs::read(&image).unwrap(), b"kernel");
    }
}

/// An executable shell script `name` in `dir`: a stand-in for a program.
fn stand_in(dir: &Path, name: &str, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `dir` before this process's `PATH`.
fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// Waits for `child` up to `limit` (a hang's bound); kills it after.
fn wait_or_kill(child: &mut std::process::Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// The latency of the issue's reproduction: never run (refused first).
const LATENCY: [&str; 10] = [
    "--",
    "latency",
    "--round-trips",
    "100",
    "--runs",
    "1",
    "--warmup-runs",
    "1",
    "--sizes",
    "1",
];

/// busybox where `PATH` has it; else the test says it is skipped.
fn busybox() -> Option<PathBuf> {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("busybox"))
        .find(|p| p.is_file());
    if found.is_none() {
        common::skip("kernels", "busybox is not installed");
    }
    found
}

#[test]
fn a_result_over_a_program_found_by_default_is_refused_before_booting() {
    let Some(busybox) = busybox() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bb");
    std::fs::create_dir(&bin).unwrap();
    std::fs::copy(&busybox, bin.join("busybox")).unwrap();
    let booted = dir.path().join("booted");
    let qemu = format!("#!/bin/sh\necho qemu >>{}\nexit 1\n", booted.display());
    stand_in(&bin, "qemu-system-x86_64", &qemu);
    let image = dir.path().join("vmlinuz");
    std::fs::write(&image, b"kernel").unwrap();
    let pp2 = dir.path().join("pp2");
    std::fs::copy(EXE, &pp2).unwrap();
    let programs = ["bb/busybox", "bb/qemu-system-x86_64", "pp2"];
    let before: Vec<Vec<u8>> = programs
        .iter()
        .map(|p| std::fs::read(dir.path().join(p)).unwrap())
        .collect();
    // busybox and qemu from PATH, the guest's pipespeed the running one.
    for json in programs {
        let mut cmd = Command::new(&pp2);
        cmd.current_dir(dir.path())
            .env("PATH", path_with(&bin))
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .env("TMPDIR", dir.path())
            .args(["kernels", "vmlinuz", "vmlinuz", "--json", json])
            .args(LATENCY);
        let out = cmd.output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "--json {json}: {err}");
        assert_eq!(err.lines().count(), 1, "--json {json}: {err}");
        assert!(err.contains("it is the input"), "--json {json}: {err}");
        assert!(!booted.exists(), "--json {json}: qemu ran");
        assert!(!dir.path().join("cache").exists(), "--json {json}");
    }
    for (p, bytes) in programs.iter().zip(before) {
        assert!(
            std::fs::read(dir.path().join(p)).unwrap() == bytes,
            "{p} changed"
        );
    }
}

/// A scratch directory holding a stand-in kernel image `vmlinuz` and an
/// empty `bin` for stand-in programs.
fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("vmlinuz");
    std::fs::write(&image, b"kernel").unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    (dir, image, bin)
}

#[test]
fn an_input_that_is_no_regular_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("vmlinuz");
    std::fs::write(&image, b"kernel").unwrap();
    let fifo = dir.path().join("kf");
    common::fifo::mkfifo(&fifo);
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    stand_in(&bin, "qemu-system-x86_64", "#!/bin/sh\nexit 1\n");
    let (k, f) = (image.to_str().unwrap(), fifo.to_str().unwrap());
    let cases: [&[&str]; 4] = [
        &[f, k],
        &[k, f],
        &[k, "/dev/null"],
        &[k, k, "--guest-pipespeed", f],
    ];
    for args in cases {
        let mut child = own_guest(common::catchable(EXE), dir.path(), args)
            .env("PATH", path_with(&bin))
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let code = wait_or_kill(&mut child, Duration::from_secs(30));
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert_eq!(
            std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
            0,
            "{args:?}: a work directory was left"
        );
        assert!(!dir.path().join("cache").exists(), "{args:?}");
    }
}

#[test]
fn an_out_directory_through_a_link_planted_in_tmp_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    if !rustix::process::geteuid().is_root() {
        return common::skip("root", "planting another user's link needs root");
    }
    let (dir, image, bin) = scratch();
    stand_in(&bin, "qemu-system-x86_64", "#!/bin/sh\nexit 1\n");
    // /tmp's kind: sticky and writable by all.
    let sticky = dir.path().join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let target = dir.path().join("target");
    for (name, made) in [("absent", false), ("empty", true)] {
        if made {
            std::fs::create_dir(&target).unwrap();
        }
        let link = sticky.join(name);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // nobody's link.
        std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
        let k = image.to_str().unwrap();
        let out = kernels(dir.path(), &[k, k, "--out", link.to_str().unwrap()])
            .env("PATH", path_with(&bin))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains("symbolic link of uid 65534"), "{name}: {err}");
        assert_eq!(
            std::fs::read_dir(&target).map_or(0, |d| d.count()),
            0,
            "{name}: written through the link"
        );
        assert_eq!(target.exists(), made, "{name}");
    }
    // nobody's directory there: root's files would go where nobody says.
    let planted = sticky.join("planted");
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
    let k = image.to_str().unwrap();
    let out = kernels(dir.path(), &[k, k, "--out", planted.to_str().unwrap()])
        .env("PATH", path_with(&bin))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("belongs to another user (uid 65534)"), "{err}");
    assert_eq!(std::fs::read_dir(&planted).unwrap().count(), 0);
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn sigkill_takes_qemu_along_and_the_next_run_removes_the_work_directory() {
    // It packs an initramfs.
    if busybox().is_none() {
        return;
    }
    let (dir, image, bin) = scratch();
    let pidfile = dir.path().join("qemu.pid");
    let qemu = format!(
        "#!/bin/sh\necho $$ >{}.new\nmv {0}.new {0}\nexec sleep 600\n",
        pidfile.display()
    );
    stand_in(&bin, "qemu-system-x86_64", &qemu);
    let k = image.to_str().unwrap();
    let mut child = kernels(dir.path(), &[k, k, "--accel", "tcg"])
        .env("PATH", path_with(&bin))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The initramfs of a debug build takes a while.
    let deadline = Instant::now() + Duration::from_secs(300);
    let pid: i32 = loop {
        if let Ok(text) = std::fs::read_to_string(&pidfile) {
            break text.trim().parse().unwrap();
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("kernels ended ({status}) before starting qemu");
        }
        assert!(Instant::now() < deadline, "qemu never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !gone(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let alive = !gone(pid);
    if alive {
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid).unwrap(),
            rustix::process::Signal::KILL,
        );
    }
    assert!(!alive, "qemu outlived pipespeed's SIGKILL");
    let tmp = dir.path().join("tmp");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 1, "no work dir?");
    // The next run, whatever it does, removes the dead one's directory.
    let out = kernels(dir.path(), &[k, k, "--qemu", "/nonexistent/qemu"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "the dead run's work directory is left"
    );
}

#[test]
fn the_initramfs_cache_keeps_the_most_recent_archives_only() {
    // It packs an initramfs.
    if busybox().is_none() {
        return;
    }
    let (dir, image, bin) = scratch();
    stand_in(&bin, "qemu-system-x86_64", "#!/bin/sh\nexit 1\n");
    let cache = dir.path().join("cache/pipespeed");
    std::fs::create_dir_all(&cache).unwrap();
    let day = Duration::from_secs(86400);
    for i in 0..8u32 {
        let old = cache.join(format!("initramfs-{i:016x}.cpio"));
        let f = std::fs::File::create(&old).unwrap();
        f.set_len(1 << 20).unwrap();
        f.set_modified(std::time::SystemTime::now() - day * (10 - i))
            .unwrap();
    }
    let k = image.to_str().unwrap();
    let out = kernels(dir.path(), &[k, k, "--accel", "tcg"])
        .env("PATH", path_with(&bin))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let mut kept: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    kept.sort();
    assert_eq!(kept.len(), 4, "{kept:?}");
    // The newest three old ones, and the one just built.
    for i in 5..8u32 {
        assert!(
            kept.contains(&format!("initramfs-{i:016x}.cpio")),
            "{kept:?}"
        );
    }
}

#[test]
fn a_directory_of_the_user_s_or_of_a_live_run_elsewhere_is_never_removed() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // `--out "$TMPDIR/pipespeed-kernels-$(date +%F)"`: the user's own.
    let dated = tmp.join("pipespeed-kernels-2024-06-01");
    std::fs::create_dir(&dated).unwrap();
    std::fs::write(dated.join("result.json"), b"{}").unwrap();
    // A run on another host (a shared /tmp or NFS home): its process ID
    // is none here, and it holds its lock.
    let elsewhere = tmp.join("pipespeed-kernels-4194999-5-abcdef");
    std::fs::create_dir(&elsewhere).unwrap();
    let held = std::fs::File::create(elsewhere.join("lock")).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let out = kernels(
        dir.path(),
        &["vmlinuz", "vmlinuz", "--qemu", "/nonexistent/qemu"],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        dated.join("result.json").exists(),
        "the user's directory is removed"
    );
    assert!(elsewhere.exists(), "a live run's directory is removed");
}

#[test]
fn an_out_that_cannot_be_read_or_made_is_bad_usage_and_leaves_nothing_made() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let k = "/nonexistent/vmlinuz";
    // Made on the way, then refused: nothing made stays.
    std::fs::write(dir.path().join("file"), b"").unwrap();
    let through = dir.path().join("new/deeper/../../file/out");
    let out = kernels_without_path(dir.path(), &[k, k, "--out", through.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!dir.path().join("new").exists(), "a directory made is left");
    // There, but not readable: bad usage too (status 2). Root reads it
    // all: nobody is asked.
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o311)).unwrap();
    let root = rustix::process::geteuid().is_root();
    let mut cmd = match root {
        true => {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "nobody", "--", EXE]);
            cmd
        }
        false => Command::new(EXE),
    };
    let out = cmd
        .args(["kernels", k, k, "--qemu", "/nonexistent/qemu", "--out"])
        .arg(&locked)
        .env("TMPDIR", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--out"), "{}", stderr(&out));
    // Without /proc, a directory made is found all the same.
    if !root || Command::new("unshare").arg("--help").output().is_err() {
        return common::skip("root", "hiding /proc needs root and unshare");
    }
    let made = dir.path().join("made");
    let script = r#"mount -t tmpfs none /proc && exec "$EXE" kernels "$K" "$K" \
        --guest-pipespeed /bin/true --qemu /nonexistent/qemu --out "$MADE""#;
    let out = Command::new("unshare")
        .args(["--mount", "sh", "-c", script])
        .env("EXE", EXE)
        .env("K", k)
        .env("MADE", &made)
        .env("TMPDIR", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(made.is_dir());
}

#[test]
fn pipe_bench_runs_in_every_boot_and_its_cell_is_pooled_over_the_boots() {
    let Some(kernel) = kernel() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(pipe_bench) = common::pipe_bench(dir.path()) else {
        return;
    };
    let k = kernel.to_str().unwrap();
    let json = dir.path().join("pair.json");
    let out_dir = dir.path().join("boots");
    // One cell, one 1 s run a boot, two boots a kernel.
    let mut args = vec![k, k, "--rounds", "2", "--boot-timeout", "600"];
    args.extend(["--pipe-bench", pipe_bench.to_str().unwrap()]);
    args.extend(["--json", json.to_str().unwrap()]);
    args.extend(["--out", out_dir.to_str().unwrap()]);
    args.extend(["--", "-w", "1", "-r", "1", "-d", "1"]);
    let out = kernels(dir.path(), &args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    // Each boot kept pipe_bench's own words, a block of the cell.
    let boots = doc["boots"].as_array().unwrap();
    assert_eq!(boots.len(), 4);
    for boot in boots {
        let file = boot["files"][0].as_str().unwrap();
        assert!(file.ends_with("pipe_bench.log"), "{file}");
        let log = std::fs::read_to_string(file).unwrap();
        let blocks = log.lines().filter(|l| l.starts_with("config: ")).count();
        assert_eq!(blocks, 1, "{log}");
        assert!(
            log.contains("config: writers=1 readers=1 msgsize=65536 duration=1"),
            "{log}"
        );
        assert!(log.contains("# kernel: "), "{log}");
    }
    // Each kernel's cell holds its two boots' runs.
    let m = &doc["measurements"][0];
    assert_eq!(m["measurement"]["program"]["pipe_bench"]["runs"], 1, "{m}");
    assert_pooled_1x1(m, 2);
    // The table as for contend, the command named, no change called
    // between a kernel and itself; emulated said where TCG ran.
    let table = String::from_utf8_lossy(&out.stdout);
    let lkml = m["lkml"].as_str().unwrap();
    assert!(table.contains(lkml), "{table}");
    assert!(table.contains("== pipe_bench -w 1 -r 1 -d 1"), "{table}");
    assert!(
        lkml.contains("2 boots of A and 2 of B pooled, `pipe_bench -w 1 -r 1 -d 1` in each"),
        "{lkml}"
    );
    let cells: Vec<&str> = lkml.lines().filter(|l| l.starts_with("1  ")).collect();
    assert_eq!(cells.len(), 2, "{lkml}");
    for cell in cells {
        assert!(!cell.contains('*'), "{cell}\n{lkml}");
    }
    let emulated = doc["emulated"] == true;
    assert_eq!(emulated, doc["accel"] == "tcg");
    assert_eq!(table.contains("(emulated)"), emulated, "{table}");
}

/// Each side's one row is the cell 1x1 and every metric of it holds `runs`
/// runs (its boots' runs pooled).
fn assert_pooled_1x1(m: &Value, runs: usize) {
    for side in ["a", "b"] {
        let row = &m[side][0];
        assert_eq!(row["name"], "1x1");
        for metric in row["metrics"].as_array().unwrap() {
            assert_eq!(
                metric["runs"].as_array().unwrap().len(),
                runs,
                "{side}: {metric}"
            );
        }
    }
}
