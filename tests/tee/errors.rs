//! Outputs that go away or fail, in each `--output-error` mode, and
//! system calls made to fail by strace's fault injection: the failing
//! output is said (or not, as GNU says it), the others get every byte.

use std::time::{Duration, Instant};

use super::*;

/// `{ yes | pipespeed tee ARGS; } | head -c 1`, `trap '' PIPE` first when
/// `ignored`: tee's status and stderr.
fn reader_goes(args: &str, ignored: bool) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let trap = if ignored { "trap '' PIPE; " } else { "" };
    let out = sh(
        dir.path(),
        &format!(
            r#"{trap}{{ yes | "$P" tee {args} 2>err; echo $? > status; }} | head -c 1 >/dev/null; cat status; cat err"#
        ),
    );
    let stdout = text(&out.stdout);
    let (status, err) = stdout.split_once('\n').unwrap();
    (status.to_owned(), err.to_owned())
}

#[test]
fn a_reader_going_away_is_handled_as_each_mode_says() {
    for (args, status, lines) in [
        // SIGPIPE kills tee, silently (128 + 13).
        ("", "141", 0),
        ("-p", "0", 0),
        ("--output-error", "0", 0),
        ("--output-error=warn-nopipe", "0", 0),
        ("--output-error=warn", "1", 1),
        ("--output-error=exit", "1", 1),
        ("--output-error=exit-nopipe", "0", 0),
        ("--output-error=exit /dev/null", "1", 1),
    ] {
        let (got, err) = reader_goes(args, false);
        assert_eq!(got, status, "tee {args}: {err}");
        assert_eq!(err.lines().count(), lines, "tee {args}: {err}");
        if lines == 1 {
            assert_eq!(err, "pipespeed tee: 'standard output': Broken pipe\n");
        }
    }
    // With SIGPIPE ignored by the parent, the broken pipe is an EPIPE:
    // dropped without a word unless the mode says it.
    assert_eq!(reader_goes("", true), ("0".into(), String::new()));
    assert_eq!(reader_goes("--output-error=warn", true).0, "1");
}

#[test]
fn minus_p_ends_when_its_last_reader_goes_even_with_no_input() {
    // stdin a pipe (spliced) or a terminal (read), open and idle; stdout
    // a pipe whose reader is gone. Without -p tee would wait for input.
    let (controller, terminal) = common::pty();
    let input = pipespeed::sys::pipe().unwrap();
    for (what, stdin) in [
        ("a pipe", Stdio::from(input.read)),
        ("a terminal", Stdio::from(terminal)),
    ] {
        let output = pipespeed::sys::pipe().unwrap();
        let mut child = Command::new(EXE)
            .args(["tee", "-p"])
            .stdin(stdin)
            .stdout(output.write)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(output.read);
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if start.elapsed() > Duration::from_secs(20) {
                child.kill().unwrap();
                break None;
            }
            thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = status.unwrap_or_else(|| {
            panic!("tee -p from {what} went on waiting for input with no reader left")
        });
        assert!(status.success(), "{what}: {status}: {err}");
        assert_eq!(err, "", "{what}");
    }
    drop((input.write, controller));
}

#[test]
fn ignore_interrupts_ignores_sigint() {
    for (args, survives) in [(&["tee", "-i"][..], true), (&["tee"], false)] {
        let mut child = common::catchable(EXE)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // Once a line has come through, tee is running.
        stdin.write_all(b"first\n").unwrap();
        let mut line = [0u8; 6];
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut line)
            .unwrap();
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&child),
            rustix::process::Signal::INT,
        )
        .unwrap();
        thread::sleep(Duration::from_millis(100));
        let _ = stdin.write_all(b"second\n");
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        if survives {
            assert!(out.status.success(), "{:?}", out.status);
            assert_eq!(text(&out.stdout), "second\n");
        } else {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(out.status.signal(), Some(libc::SIGINT));
        }
    }
}

/// `cat in | strace -e inject=INJECT pipespeed tee FILES > out` in `dir`:
/// tee's status and stderr.
fn injected(dir: &Path, inject: &str, files: &str, input: &str) -> Option<(i32, String)> {
    let strace = common::strace()?;
    let out = sh(
        dir,
        &format!(
            r#"{input} | {strace} -f -o /dev/null -e inject={inject} "$P" tee {files} > out 2>err; echo $?; cat err >&2"#
        ),
    );
    let status = text(&out.stdout).trim().parse().unwrap();
    Some((status, text(&out.stderr)))
}

#[test]
fn a_failing_call_is_charged_to_the_output_it_wrote_to() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = data(4 << 20);
    std::fs::write(dir.path().join("in"), &bytes).unwrap();
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    // Into a pipe: stdout gets its copies by tee(2) (the file by splice
    // from the input pipe).
    let pipe_out = |files: &str, inject: &str| {
        let strace = common::strace()?;
        let out = sh(
            dir.path(),
            &format!(
                r#"cat in | {strace} -f -o /dev/null -e inject={inject} "$P" tee {files} 2>err | cat > out; cat err"#
            ),
        );
        Some(text(&out.stdout))
    };
    if let Some(err) = pipe_out("f", "tee:error=EIO:when=3") {
        assert_eq!(
            err,
            "pipespeed tee: 'standard output': Input/output error\n"
        );
        assert!(read("f") == bytes);
        let out = read("out");
        assert!(!out.is_empty() && out.len() < bytes.len() && bytes.starts_with(&out));
    }
    // The file, by splice from tee's own pipe: each round splices the
    // input into that pipe (odd calls), then that pipe into the file.
    if let Some(err) = pipe_out("f", "splice:error=EIO:when=4") {
        assert_eq!(err, "pipespeed tee: f: Input/output error\n");
        assert!(read("out") == bytes);
        let f = read("f");
        assert!(!f.is_empty() && bytes.starts_with(&f));
    }
    // Read/write (a small file as input): the third write is g's.
    std::fs::write(dir.path().join("small"), &bytes[..1000]).unwrap();
    if let Some((status, err)) =
        injected(dir.path(), "write:error=EIO:when=3", "f g < small", "true")
    {
        assert_eq!(status, 1);
        assert_eq!(err, "pipespeed tee: g: Input/output error\n");
        assert!(read("out") == bytes[..1000] && read("f") == bytes[..1000]);
    }
    // Reading the input, after a round: a file spliced into tee's own
    // pipe (splice 1), the pipe spliced into stdout, a file (2), the
    // second splice from the file (3).
    if let Some((status, err)) = injected(dir.path(), "splice:error=EIO:when=3", "< in", "true") {
        assert_eq!(status, 1);
        assert_eq!(err, "pipespeed tee: read error: Input/output error\n");
        let out = read("out");
        assert!(!out.is_empty() && out.len() < bytes.len() && bytes.starts_with(&out));
    }
}

/// Every `--output-error` is checked, not only the last, before any file
/// is created or truncated, as GNU tee's getopt loop checks each, in
/// order: a bad value followed by a good one ran with the good one,
/// status 0, and created the file.
#[test]
fn every_output_error_value_is_checked_before_any_file_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    let valid = "Valid arguments are:\n  - 'warn'\n  - 'warn-nopipe'\n  - 'exit'\n  - 'exit-nopipe'\n\
                 Try 'pipespeed tee --help' for more information.\n";
    for (args, what) in [
        (
            "--output-error=bad --output-error=warn",
            "invalid argument 'bad'",
        ),
        (
            "--output-error=warn --output-error=bad",
            "invalid argument 'bad'",
        ),
        ("--output-e=w --output-error=exit", "ambiguous argument 'w'"),
        ("--output-error=exit --output-e=w", "ambiguous argument 'w'"),
        ("-p --output-error=bad -p", "invalid argument 'bad'"),
        (
            "--output-error=bad --output-error=e",
            "invalid argument 'bad'",
        ),
        // Met before what getopt refuses, or --help: said first, as GNU's.
        ("--output-error=bad --foo", "invalid argument 'bad'"),
        ("--output-error=bad -z", "invalid argument 'bad'"),
        ("--output-e=w --help", "ambiguous argument 'w'"),
        ("--output-error=bad --vers", "invalid argument 'bad'"),
    ] {
        std::fs::write(dir.path().join("kept"), "kept\n").unwrap();
        let out = sh(
            dir.path(),
            &format!(r#"LC_ALL=C "$P" tee {args} o2 kept </dev/null; echo $?"#),
        );
        assert_eq!(
            text(&out.stderr),
            format!("pipespeed tee: {what} for '--output-error'\n{valid}"),
            "{args}"
        );
        assert_eq!(text(&out.stdout), "1\n", "{args}");
        assert!(!dir.path().join("o2").exists(), "{args}: o2 was created");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("kept")).unwrap(),
            "kept\n",
            "{args}: kept was truncated"
        );
    }
}
