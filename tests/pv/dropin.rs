//! The binary called `pv` is pv: its syntax, words, statuses and display
//! rules, and the options pv has beyond `pipespeed pv`'s first set.

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use super::*;

/// A directory holding a `pv` symlink to the binary; removed at the end.
struct PvLink {
    dir: tempfile::TempDir,
}

impl PvLink {
    fn new() -> PvLink {
        let dir = tempfile::tempdir().unwrap();
        symlink(EXE, dir.path().join("pv")).unwrap();
        PvLink { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("pv")
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(self.path());
        cmd.args(args);
        cmd
    }

    /// Runs `pv args` with `input` piped in.
    fn piped(&self, args: &[&str], input: &[u8]) -> Output {
        run_piped(self.cmd(args), input)
    }
}

#[test]
fn a_symlink_named_pv_speaks_pvs_language() {
    let pv = PvLink::new();
    let input = data(100_000);
    let f = file_with(&input);
    let out = pv
        .cmd(&["-q", f.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout == input && out.stderr.is_empty());
    // Version, on stdout, status 0: for the name and for the subcommand.
    for mut cmd in [pv.cmd(&["--version"]), super::pv(&["-V"])] {
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.starts_with("pv (pipespeed) "), "{text:?}");
    }
    // Help: one option a line, in pv's layout.
    let out = pv.cmd(&["-h"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.starts_with("Usage: pv [OPTION] [FILE]...\n"), "{help}");
    for line in [
        "  -R, --remote PID         ",
        "  -L, --rate-limit RATE    ",
        "  -A, --last-written NUM   ",
        "  -p, --progress           ",
        "  -h, --help               ",
    ] {
        assert!(
            help.lines().any(|l| l.starts_with(line)),
            "{line:?} in {help}"
        );
    }
    // Bad usage: one line starting `pv:`, pv's status 64; after getopt's
    // words (an unknown option, a missing value) pv 1.12's second line.
    for args in [&["--no-such-option"][..], &["-L", "fast"], &["-S"], &["-L"]] {
        let out = pv.cmd(args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(64), "{args:?}");
        let err = stderr(&out);
        let mut lines = err.lines();
        assert!(
            lines.next().is_some_and(|l| l.starts_with("pv: ")),
            "{err:?}"
        );
        assert!(
            lines.all(|l| l == "Try `pv --help' for more information."),
            "{err:?}"
        );
    }
    // As `pipespeed pv`, usage stays pipespeed's status 2.
    let out = super::pv(&["-L", "fast"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn each_display_is_the_line_then_a_carriage_return() {
    let pv = PvLink::new();
    // One display, the last: the line, CR, then LF.
    let out = pv.piped(&["-f", "-b"], &[0; 100]);
    assert_eq!(stderr(&out), " 100  B\r\n");
    let out = pv.piped(&["-f", "-b", "-8"], &[0; 100]);
    assert_eq!(stderr(&out), " 800  b\r\n");
    // pv 1.12 keeps the bytes written from its first frame on: a copy
    // over before it shows dots (`printf 'abc\ndef\n' | pv -f -A 8`).
    let out = pv.piped(&["-f", "-A", "8"], b"abc\ndef\n");
    assert_eq!(stderr(&out), "........\r\n");
    let out = pv.piped(&["-f", "-F", "<%b|%%|%{transferred}>"], &[0; 2048]);
    assert_eq!(stderr(&out), "<2.00KiB|%|2.00KiB>\r\n");
}

#[test]
fn numbers_need_no_terminal_and_always_end_with_a_final_line() {
    let pv = PvLink::new();
    // The transfer ends long before the first interval.
    let out = pv.piped(&["-n", "-s", "100"], &[0; 100]);
    assert_eq!(stderr(&out), "100\n");
    // More than the size: past 100.
    let out = pv.piped(&["-n", "-s", "50"], &[0; 100]);
    assert_eq!(stderr(&out), "200\n");
    let out = pv.piped(&["-n", "-b"], &[0; 1234]);
    assert_eq!(stderr(&out), "1234\n");
    let out = pv.piped(&["-n", "-b", "-l"], b"a\nb\nc\n");
    assert_eq!(stderr(&out), "3\n");
    // -s @FILE: that file's size.
    let reference = file_with(&[0; 400]);
    let at = format!("@{}", reference.path().display());
    let out = pv.piped(&["-n", "-s", &at], &[0; 100]);
    assert_eq!(stderr(&out), "25\n");
}

/// Behaviour, not timing: a machine under load only makes the transfer
/// slower, so the checks are what the limit guarantees at the least (it
/// cannot end sooner than the rate allows, so some frame is drawn before
/// the end), never how many frames or how long at the most. How the limit
/// counts lines with `-l` is checked on a fake clock
/// (`src/pv/copy/tests.rs`, `a_line_limit_counts_lines_not_bytes`).
#[test]
fn a_rate_limit_spreads_even_a_tiny_transfer_over_its_time() {
    let pv = PvLink::new();
    let start = Instant::now();
    let out = pv.piped(&["-n", "-s", "100", "-i", "0.1", "-L", "100"], &[0; 100]);
    let took = start.elapsed();
    assert_eq!(out.stdout.len(), 100);
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    // The bucket starts empty and holds a tenth of a second's worth.
    assert!(took >= Duration::from_millis(800), "{took:?}");
    assert_eq!(lines.last(), Some(&"100"));
    // Percentages only grow, and the display came before the end.
    let numbers: Vec<u64> = lines.iter().map(|l| l.parse().unwrap()).collect();
    assert!(numbers.windows(2).all(|w| w[0] <= w[1]), "{numbers:?}");
    assert!(numbers.len() >= 2 && numbers[0] < 100, "{numbers:?}");
    // With -l the limit counts lines: 20 lines at 40 a second take half a
    // second at the least, and every byte arrives.
    let text = "a long line of text, much longer than one byte\n".repeat(20);
    let start = Instant::now();
    let out = pv.piped(&["-q", "-l", "-L", "40"], text.as_bytes());
    let took = start.elapsed();
    assert_eq!(out.stdout, text.as_bytes());
    assert!(took >= Duration::from_millis(400), "{took:?}");
}

#[test]
fn the_transfer_options_move_the_bytes_whole() {
    let pv = PvLink::new();
    let input = data(3 << 20);
    let f = file_with(&input);
    let name = f.path().to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for options in [
        &["-Y"][..],
        &["-K"],
        &["-K", "-L", "20M"],
        &["-Y", "-L", "20M"],
    ] {
        let out = pv.cmd(options).args(["-q", name]).output().unwrap();
        assert!(out.status.success(), "{options:?}: {}", stderr(&out));
        assert!(out.stdout == input, "{options:?}");
    }
    // -o FILE; -X discards; -U stores first.
    let o = dir.path().join("o");
    let out = pv
        .cmd(&["-q", "-o", o.to_str().unwrap(), name])
        .output()
        .unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    assert!(std::fs::read(&o).unwrap() == input);
    let out = pv.cmd(&["-X", "-n", "-b", name]).output().unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    assert_eq!(stderr(&out), format!("{}\n", input.len()));
    let store = dir.path().join("store");
    let out = pv
        .cmd(&["-q", "-U", store.to_str().unwrap(), name])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout == input && std::fs::read(&store).unwrap() == input);
}

#[test]
fn a_pidfile_holds_the_pid_while_the_meter_runs() {
    let pv = PvLink::new();
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let mut child = pv
        .cmd(&["-q", "-L", "100", "-P", pidfile.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&[0; 50]).unwrap();
    drop(stdin);
    std::thread::sleep(Duration::from_millis(200));
    let stored = std::fs::read_to_string(&pidfile).unwrap();
    assert_eq!(stored.trim(), child.id().to_string());
    assert!(child.wait().unwrap().success());
    assert!(!pidfile.exists());
}

#[test]
fn a_full_progress_bar_fills_a_real_terminal_to_its_width() {
    let pv = PvLink::new();
    let (controller, terminal) = pty();
    let mut child = pv
        .cmd(&["-pSs", "1K"])
        .stdin(File::open("/dev/zero").unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::from(OwnedFd::from(terminal)))
        .spawn()
        .unwrap();
    let reader = std::thread::spawn(move || read_until_hangup(controller));
    assert!(child.wait().unwrap().success());
    let screen = String::from_utf8(reader.join().unwrap()).unwrap();
    // The terminal is 100 columns: the bar is 100 less `[`, `] 100%`.
    let line = screen.split(['\r', '\n']).find(|l| !l.is_empty()).unwrap();
    assert_eq!(line, format!("[{}>] 100%", "=".repeat(92)));
}

/// `pipespeed pv ARGS FILE` with the third read of FILE failing (strace's
/// fault injection, on that path only), or `None` without strace.
fn third_read_fails(args: &[&str], file: &std::path::Path) -> Option<Output> {
    let works = Command::new("strace")
        .args(["-f", "-o", "/dev/null", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !works {
        crate::common::skip(
            "strace",
            "fault injection needs strace, which cannot trace here",
        );
        return None;
    }
    let out = Command::new("strace")
        .args(["-f", "-o", "/dev/null", "-P"])
        .arg(file)
        .args(["-e", "trace=read", "-e", "inject=read:error=EIO:when=3"])
        .arg(EXE)
        .arg("pv")
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    Some(out)
}

#[test]
fn skipped_read_errors_become_zeros_and_the_rest_goes_on() {
    // No zero byte in the input: the zeros in the output are the skips.
    let input: Vec<u8> = data(64 * 1024).iter().map(|&b| b | 1).collect();
    let f = file_with(&input);
    let Some(out) = third_read_fails(&["-q", "-C", "-E", "-B", "4096"], f.path()) else {
        return;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let mut expected = input.clone();
    expected[8192] = 0;
    assert!(out.stdout == expected);
    // -O into a file skips read errors as well (it once ended the copy at
    // the first one).
    let dir = tempfile::tempdir().unwrap();
    let sparse = dir.path().join("out");
    let o = [
        "-q",
        "-O",
        "-E",
        "-B",
        "4096",
        "-o",
        sparse.to_str().unwrap(),
    ];
    if let Some(out) = third_read_fails(&o, f.path()) {
        assert!(out.status.success(), "-O: {}", stderr(&out));
        assert!(std::fs::read(&sparse).unwrap() == expected, "-O");
    }
    assert_eq!(
        stderr(&out),
        format!(
            "pipespeed pv: {}: warning: read error: skipped 1 bytes at offset 8192: \
             Input/output error\n",
            f.path().display()
        )
    );
    // -Z: a whole block at once.
    let Some(out) = third_read_fails(&["-q", "-C", "-E", "-Z", "512", "-B", "4096"], f.path())
    else {
        return;
    };
    let mut expected = input.clone();
    expected[8192..8192 + 512].fill(0);
    assert!(out.stdout == expected);
    // -Z past the input's end: zeros to the end, never more than the
    // input held (-Z 2^63 once wrote without end).
    for block in ["1G", "9223372036854775808"] {
        let Some(out) = third_read_fails(&["-q", "-C", "-E", "-Z", block, "-B", "4096"], f.path())
        else {
            return;
        };
        assert!(out.status.success(), "-Z {block}: {}", stderr(&out));
        let mut expected = input.clone();
        expected[8192..].fill(0);
        assert!(
            out.stdout == expected,
            "-Z {block}: {} bytes",
            out.stdout.len()
        );
    }
    // Without -E, the read error is the transfer's (status 16).
    let Some(out) = third_read_fails(&["-q", "-C", "-B", "4096"], f.path()) else {
        return;
    };
    assert_eq!(out.status.code(), Some(16));
    assert_eq!(out.stdout.len(), 8192);
}
