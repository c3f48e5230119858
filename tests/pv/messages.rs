//! What pipespeed pv says when it cannot do what it was asked: one line
//! naming the thing and the cause, pv's status, no "(os error N)".

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::stdio::{reference_pv, sh};
use super::{EXE, data, file_with, pv, run_piped, stderr};

/// A directory holding `f`, 100000 bytes.
fn files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), vec![b'x'; 100_000]).unwrap();
    dir
}

#[test]
fn capital_s_without_a_size_is_one_complete_line() {
    let out = pv(&["-S", "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "pipespeed pv: -S (--stop-at-size) needs -s SIZE, the size to stop at\n"
    );
}

/// 200 TiB is more than a process can map (47-bit address spaces), with
/// any overcommit setting.
#[test]
fn a_buffer_the_system_cannot_give_is_refused_before_copying() {
    let dir = files();
    let reference = reference_pv();
    for input in ["f", "<f"] {
        let out = sh(dir.path(), &format!("\"$P\" pv -q -B 200T {input}"));
        assert_eq!(out.status.code(), Some(64), "{input}: {}", stderr(&out));
        assert!(
            out.stdout.is_empty(),
            "{input}: {} bytes copied",
            out.stdout.len()
        );
        assert_eq!(
            stderr(&out),
            "pipespeed pv: buffer allocation failed: -B 200TiB: Cannot allocate memory\n"
        );
        if let Some(theirs) = &reference {
            let theirs = sh(
                dir.path(),
                &format!("timeout 20 {theirs} -q -B 200T {input}"),
            );
            assert_eq!(theirs.status.code(), Some(64), "pv {input}");
            assert!(theirs.stdout.is_empty(), "pv {input}");
        }
    }
}

#[test]
fn size_0_is_no_size_and_capital_s_then_copies_everything() {
    let dir = files();
    let reference = reference_pv();
    for input in ["f", "<f", "- <f"] {
        let script = format!("\"$P\" pv -q -s 0 -S {input}");
        let out = sh(dir.path(), &script);
        assert_eq!(out.status.code(), Some(0), "{script}: {}", stderr(&out));
        assert_eq!(out.stdout.len(), 100_000, "{script}");
        if let Some(theirs) = &reference {
            let theirs = sh(
                dir.path(),
                &format!("timeout 20 {theirs} -q -s 0 -S {input}"),
            );
            assert_eq!(theirs.stdout.len(), 100_000, "pv {input}");
        }
    }
}

/// A process holding a pipe on 0 and /dev/null on 1 for a while.
fn holder() -> Child {
    Command::new("sleep")
        .arg("20")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn watching_a_pipe_or_a_device_is_refused_as_pv_refuses_it() {
    let mut held = holder();
    let pid = held.id();
    let reference = reference_pv();
    for (fd, name) in [(0, "pipe:["), (1, "/dev/null")] {
        let target = format!("{pid}:{fd}");
        let out = pv(&["-d", &target, "-f"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{target}: {err}");
        let want = format!("pipespeed pv: pid {pid}: fd {fd}: {name}");
        assert!(err.starts_with(&want), "{err}");
        assert!(
            err.ends_with(": not a regular file or block device\n"),
            "{err}"
        );
        if let Some(theirs) = &reference {
            let theirs = Command::new("timeout")
                .args(["20", theirs, "-d", &target])
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert_eq!(theirs.status.code(), Some(2), "pv -d {target}");
            assert!(
                stderr(&theirs).contains("not a regular file"),
                "pv -d {target}"
            );
        }
    }
    held.kill().unwrap();
    held.wait().unwrap();
    let gone = pv(&["-d", "999999999:3"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(gone.status.code(), Some(2));
    assert_eq!(
        stderr(&gone),
        "pipespeed pv: pid 999999999: No such process\n"
    );
}

/// The watched descriptor closed and opened again on another file: the
/// watch ends at the last position in the first file, not at the new
/// file's.
#[test]
fn a_watched_descriptor_reused_for_another_file_ends_the_watch() {
    let first = file_with(b"line one\nmore\n");
    let second = file_with(b"other\n");
    // `read` takes a line from fd 3 a byte at a time, leaving fd 3 at 9.
    let script = "exec 3<\"$1\"; read -r l <&3; sleep 1; exec 3<\"$2\"; sleep 1";
    let mut shell = Command::new("sh")
        .args(["-c", script, "sh"])
        .arg(first.path())
        .arg(second.path())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let pid = shell.id();
    let fd3 = format!("/proc/{pid}/fd/3");
    let t0 = Instant::now();
    while std::fs::read_link(&fd3).ok().as_deref() != Some(first.path()) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "sh never opened its file"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let target = format!("{pid}:3");
    let out = pv(&["-d", &target, "-n", "-b", "-f", "-i", "0.1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    shell.wait().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // A line a frame; once the descriptor is closed, its row blanked
    // (80 columns off a terminal), as pv 1.12 leaves it.
    let numbers = crate::common::watched_numbers(&stderr(&out));
    assert_eq!(numbers.last(), Some(&9), "{numbers:?}");
    assert!(numbers.windows(2).all(|w| w[0] <= w[1]), "{numbers:?}");
}

/// pv's sizes (-s, -L, -B, -Z) keep pv 1.12's own rule, not pipespeed's
/// GNU one: a number with an optional fraction (`.` or `,`) and one
/// letter K, M, G or T, powers of 1024; `KB`, `KiB` and anything after
/// the letter are refused, as pv 1.12 refuses them ("numeric value not
/// understood", status 64 as pv, 2 as `pipespeed pv`). With PIPESPEED_PV
/// naming pv 1.12, it is run on the same sizes.
#[test]
fn sizes_follow_pv_s_own_rule() {
    let input = data(3 * 1024 * 1024);
    let reference = super::stdio::reference_pv();
    let taken = [
        ("1K", 1024),
        ("1k", 1024),
        ("1.5K", 1536),
        ("1,5K", 1536),
        ("2 K", 2048),
        ("0.5M", 512 * 1024),
        ("1M", 1024 * 1024),
        ("4097", 4097),
    ];
    for (size, n) in taken {
        for program in std::iter::once(None).chain(reference.as_deref().map(Some)) {
            let mut cmd = match program {
                Some(theirs) => Command::new(theirs),
                None => pv(&[]),
            };
            cmd.args(["-q", "-S", "-s", size]);
            let out = run_piped(cmd, &input);
            assert!(
                out.status.success(),
                "{program:?} -s {size}: {}",
                stderr(&out)
            );
            assert_eq!(out.stdout.len(), n, "{program:?} -s {size}");
        }
    }
    for size in ["1KB", "1kB", "1KiB", "1GB", "1X", "1e3", "1KK"] {
        for option in ["-s", "-L", "-B"] {
            let out = pv(&[option, size]).stdin(Stdio::null()).output().unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{option} {size}: {err}");
            assert_eq!(err.lines().count(), 1, "{option} {size}: {err}");
            assert!(err.contains("pv 1.12"), "{option} {size}: {err}");
            if let Some(theirs) = &reference {
                let out = Command::new(theirs)
                    .args([option, size])
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                assert_eq!(out.status.code(), Some(64), "pv {option} {size}");
            }
        }
    }
}

/// Bad usage: 64 when the binary is called pv, as pv 1.12, for scripts
/// written for pv; 2 as `pipespeed pv`, as every pipespeed command; the
/// manual page says both, and which is which.
#[test]
fn bad_usage_is_64_as_pv_and_2_as_pipespeed_pv_as_the_man_page_says() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("pv");
    std::os::unix::fs::symlink(EXE, &link).unwrap();
    for args in [&["--bogus"][..], &["-s", "1KB"], &["-L"]] {
        let as_pv = Command::new(&link)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            as_pv.status.code(),
            Some(64),
            "pv {args:?}: {}",
            stderr(&as_pv)
        );
        // pv 1.12's words: getopt's and its hint for --bogus and -L.
        let lines = if args[0] == "-s" { 1 } else { 2 };
        assert_eq!(stderr(&as_pv).lines().count(), lines, "{}", stderr(&as_pv));
        let as_pipespeed = pv(args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(as_pipespeed.status.code(), Some(2), "pipespeed pv {args:?}");
        if let Some(theirs) = super::stdio::reference_pv() {
            let out = Command::new(&theirs)
                .args(args)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(64), "pv 1.12 {args:?}");
        }
    }
    let man = dir.path().join("man");
    let made = Command::new(EXE)
        .args(["generate", "man"])
        .arg(&man)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    let page = std::fs::read_to_string(man.join("pipespeed-pv.1")).unwrap();
    assert!(
        page.contains("Bad usage: 64 when called as pv")
            && page.contains("2 as `pipespeed pv`, as every pipespeed command"),
        "{page}"
    );
}

/// `-d` with an option it cannot honour is refused in one line that
/// names that option (issue 36: `-o` was ignored, and `-M` was refused
/// as "line mode or transfer modifier options"); pv 1.12 says
/// `pv: -o: cannot transfer files when watching file descriptors`, 64.
#[test]
fn watching_refuses_o_u_and_m_naming_them() {
    let dir = files();
    let cases = [
        (
            "-o out -d 1",
            "-o: cannot transfer files when watching file descriptors",
        ),
        (
            "-d 1 -o out",
            "-o: cannot transfer files when watching file descriptors",
        ),
        (
            "-d 1 -U out",
            "-U: cannot transfer files when watching file descriptors",
        ),
        (
            "-M both -d 1 -- cat",
            "-M: cannot run a command when watching file descriptors",
        ),
        (
            "-d 1 -M both -- cat",
            "-M: cannot run a command when watching file descriptors",
        ),
        (
            "-d 1 -l",
            "cannot use line mode or transfer modifier options when watching file descriptors",
        ),
    ];
    for (args, said) in cases {
        // Called pv: pv's words and status (`pipespeed pv` says clap's,
        // which name both options too).
        let script = format!("ln -sf \"$P\" pv; exec timeout 20 ./pv {args} </dev/null");
        let out = sh(dir.path(), &script);
        assert_eq!(stderr(&out), format!("pv: {said}\n"), "{args}");
        assert_eq!(out.status.code(), Some(64), "{args}");
        assert!(!dir.path().join("out").exists(), "{args}: out was made");
    }
    if let Some(theirs) = reference_pv() {
        let out = sh(dir.path(), &format!("exec timeout 20 {theirs} -o out -d 1"));
        assert_eq!(out.status.code(), Some(64));
        assert_eq!(
            stderr(&out),
            "pv: -o: cannot transfer files when watching file descriptors\n"
        );
    }
}
