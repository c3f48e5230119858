//! `pipespeed tee`: every byte to every output, whatever the inputs and
//! outputs are, and GNU tee's options, messages and statuses (compared
//! with GNU tee 9.10 itself where `PIPESPEED_GNU_TEE` names it).

#![allow(clippy::unwrap_used)]

use crate::common;

mod errors;
mod gnu;
mod records;

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread;

use common::{SIZES, sh};

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

/// `len` bytes that differ from one page to the next.
fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i / 4096 + i * 13) as u8).collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `pipespeed tee ARGS` in `dir`, `input` written to its stdin (a pipe)
/// by a thread.
fn tee_piped(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(EXE)
        .arg("tee")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[test]
fn every_output_gets_every_byte_at_the_boundary_sizes() {
    let dir = tempfile::tempdir().unwrap();
    for len in SIZES {
        let bytes = data(len);
        std::fs::write(dir.path().join("in"), &bytes).unwrap();
        for outputs in 0..=4 {
            let names: Vec<String> = (0..outputs).map(|i| format!("o{i}")).collect();
            let args: Vec<&str> = names.iter().map(String::as_str).collect();
            // From a pipe.
            let out = tee_piped(dir.path(), &args, &bytes);
            assert!(out.status.success(), "{}", text(&out.stderr));
            assert!(out.stdout == bytes, "{len} bytes, {outputs} files: stdout");
            for name in &names {
                let got = std::fs::read(dir.path().join(name)).unwrap();
                assert!(got == bytes, "{len} bytes, {outputs} files: {name}");
            }
            // From a file.
            let out = Command::new(EXE)
                .arg("tee")
                .args(&args)
                .current_dir(dir.path())
                .stdin(File::open(dir.path().join("in")).unwrap())
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", text(&out.stderr));
            assert!(out.stdout == bytes, "{len} bytes from a file: stdout");
            for name in &names {
                let got = std::fs::read(dir.path().join(name)).unwrap();
                assert!(got == bytes, "{len} bytes from a file: {name}");
            }
        }
    }
}

#[test]
fn outputs_of_every_kind_at_once_and_a_slow_reader() {
    // stdout a pipe read slowly, a FIFO, a file, a file appended to,
    // /dev/null, and a socket: 3 MiB from a pipe.
    let dir = tempfile::tempdir().unwrap();
    let bytes = data(3 << 20);
    std::fs::write(dir.path().join("in"), &bytes).unwrap();
    std::fs::write(dir.path().join("app"), b"kept\n").unwrap();
    let out = sh(
        dir.path(),
        r#"mkfifo fifo && { cat fifo > from-fifo & }
        cat in | "$P" tee fifo file -a app /dev/null | { sleep 0.3; cat > slow; }
        wait; cmp in slow && cmp in from-fifo && cmp in file && tail -c +6 app | cmp in - && echo same"#,
    );
    assert_eq!(text(&out.stdout), "same\n", "{}", text(&out.stderr));
}

#[test]
fn a_terminal_as_output_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = data(100_000);
    std::fs::write(dir.path().join("in"), &bytes).unwrap();
    let (controller, terminal) = common::pty();
    let mut child = Command::new(EXE)
        .args(["tee", "f"])
        .current_dir(dir.path())
        .stdin(File::open(dir.path().join("in")).unwrap())
        .stdout(terminal)
        .spawn()
        .unwrap();
    let screen = common::read_until_hangup(&controller);
    assert!(child.wait().unwrap().success());
    assert!(screen == bytes);
    assert!(std::fs::read(dir.path().join("f")).unwrap() == bytes);
}

#[test]
fn a_terminal_as_input_is_read_line_by_line() {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let dir = tempfile::tempdir().unwrap();
    let (controller, terminal) = common::pty();
    // Canonical mode, so that ^D ends the input.
    let mut t = tcgetattr(&terminal).unwrap();
    t.local_modes |= LocalModes::ICANON;
    tcsetattr(&terminal, OptionalActions::Now, &t).unwrap();
    let child = Command::new(EXE)
        .args(["tee", "f"])
        .current_dir(dir.path())
        .stdin(terminal)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut keys = File::from(controller);
    keys.write_all(b"one\ntwo\n\x04").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "one\ntwo\n");
    assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"one\ntwo\n");
}

#[test]
fn what_comes_is_written_at_once() {
    // One byte, then the input stays open: the byte must reach the file
    // before more comes (GNU's tests/tee/tee.sh has the same).
    let dir = tempfile::tempdir().unwrap();
    let out = sh(
        dir.path(),
        r#"{ printf a; i=0; while [ $i -lt 100 ] && ! [ -s f ]; do sleep 0.1; i=$((i+1)); done; test -s f && echo seen >&2; } | "$P" tee f >/dev/null"#,
    );
    assert_eq!(text(&out.stderr), "seen\n");
}

#[test]
fn a_failing_output_is_said_and_dropped_the_others_get_everything() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = data(1 << 20);
    for args in [&["/dev/full", "f"][..], &["f", "/dev/full"]] {
        let out = tee_piped(dir.path(), args, &bytes);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            text(&out.stderr),
            "pipespeed tee: /dev/full: No space left on device\n"
        );
        assert!(out.stdout == bytes);
        assert!(std::fs::read(dir.path().join("f")).unwrap() == bytes);
    }
    // Standard output failing: said once, by the name GNU gives it.
    let out = sh(
        dir.path(),
        r#"seq 100000 > in; "$P" tee f < in > /dev/full; echo $? >&2; cmp in f >&2"#,
    );
    assert_eq!(
        text(&out.stderr),
        "pipespeed tee: 'standard output': No space left on device\n1\n"
    );
}

#[test]
fn a_file_that_cannot_be_opened_is_said_and_the_rest_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = tee_piped(dir.path(), &["a", "no/such/dir", "b"], b"x\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "pipespeed tee: no/such/dir: No such file or directory\n"
    );
    assert_eq!(out.stdout, b"x\n");
    assert_eq!(std::fs::read(dir.path().join("b")).unwrap(), b"x\n");
    // With --output-error=exit, tee exits at once, writing nothing.
    let out = tee_piped(dir.path(), &["--output-error=exit", "no/x", "c"], b"x\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(!dir.path().join("c").exists());
}

#[test]
fn dash_is_a_file_and_options_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let out = tee_piped(dir.path(), &["-a", "-", "-a", "--append", "x"], b"dash\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(out.stdout, b"dash\n");
    assert_eq!(std::fs::read(dir.path().join("-")).unwrap(), b"dash\n");
    assert_eq!(std::fs::read(dir.path().join("x")).unwrap(), b"dash\n");
}

/// A refused command line is read once, as getopt reads it: 100,000
/// operands (as xargs gives them) before a bad `--output-error` and a bad
/// option are refused at once (each argument was checked again with all
/// those before it: 16 s for 20,000, 70 s for 50,000).
#[test]
fn a_long_command_line_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(EXE)
        .arg("tee")
        .args(std::iter::repeat_n("x", 100_000))
        .args(["--output-error=bad", "-z"])
        .env("LC_ALL", "C")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(10) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("tee still refusing its command line after 10 s");
        }
        thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(
        err.lines().next(),
        Some("pipespeed tee: invalid argument 'bad' for '--output-error'"),
        "{err}"
    );
    assert!(!dir.path().join("x").exists());
}

#[test]
fn a_file_that_is_the_input_is_refused_not_destroyed() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = data(100_000);
    std::fs::write(dir.path().join("f"), &bytes).unwrap();
    // GNU tee truncates f before reading it (`tee f <f`), or appends to
    // it while reading it, without end (`tee -a f <f`, `tee <f >>f`).
    for script in [
        r#""$P" tee f other < f > out"#,
        r#""$P" tee -a f other < f > out"#,
        r#"cp f out; "$P" tee other < f >> f"#,
    ] {
        let _ = std::fs::remove_file(dir.path().join("other"));
        let out = sh(dir.path(), &format!("{script}; echo $? >&2"));
        let err = text(&out.stderr);
        assert!(
            err.ends_with(": input file is output file\n1\n"),
            "{script}: {err}"
        );
        assert!(
            std::fs::read(dir.path().join("f")).unwrap() == bytes,
            "{script}"
        );
        assert!(
            std::fs::read(dir.path().join("other")).unwrap() == bytes,
            "{script}"
        );
        assert!(
            std::fs::read(dir.path().join("out")).unwrap() == bytes,
            "{script}"
        );
    }
}

#[test]
fn the_binary_called_tee_is_tee() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(EXE, dir.path().join("tee")).unwrap();
    let out = sh(
        dir.path(),
        "echo hi | ./tee f; ./tee --help | head -n 1; ./tee -z",
    );
    assert_eq!(
        text(&out.stdout),
        "hi\nUsage: ./tee [OPTION]... [FILE]...\n"
    );
    assert_eq!(
        text(&out.stderr),
        "./tee: invalid option -- 'z'\nTry './tee --help' for more information.\n"
    );
    assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"hi\n");
}

#[test]
fn many_files_under_a_low_descriptor_limit_are_all_written() {
    // 30 files and the three standard descriptors fit in 40 descriptors,
    // as they do for GNU tee; tee's own pipes must give way, not fail an
    // output.
    let dir = tempfile::tempdir().unwrap();
    let out = sh(
        dir.path(),
        r#"seq 200000 > in; files=$(seq 30 | sed s/^/f/)
        cat in | (ulimit -n 40; exec "$P" tee $files > out); echo $?
        for f in out $files; do cmp -s in $f || echo "$f differs"; done"#,
    );
    assert_eq!(text(&out.stdout), "0\n", "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn no_descriptor_to_spare_still_copies() {
    // stdin, stdout, stderr and one file: not a descriptor left for a
    // pipe of tee's own.
    let dir = tempfile::tempdir().unwrap();
    let out = sh(
        dir.path(),
        r#"seq 100000 > in; cat in | (ulimit -n 4; exec "$P" tee f) > out; echo $?; cmp in out && cmp in f"#,
    );
    assert_eq!(text(&out.stdout), "0\n", "{}", text(&out.stderr));
}

/// What GNU tee leaves in a file that several of its outputs are (each
/// appending or not): it reads 8 KiB at a time and writes each chunk
/// whole to each output in turn, standard output first, an appending
/// one at the file's end and another at its own offset.
fn as_gnu_writes_one_file(appending: &[bool], input: &[u8]) -> Vec<u8> {
    let mut file = Vec::new();
    let mut offsets = vec![0; appending.len()];
    for chunk in input.chunks(8192) {
        for (&append, offset) in appending.iter().zip(&mut offsets) {
            let at = if append { file.len() } else { *offset };
            let end = at + chunk.len();
            if file.len() < end {
                file.resize(end, 0);
            }
            file[at..end].copy_from_slice(chunk);
            *offset = end;
        }
    }
    file
}

/// Outputs that are one file get what GNU tee's give it (a round spliced
/// into the file while standard output appended to it wrote a MiB twice:
/// `tee a >>a` left 4,048,576 bytes of 3,000,000).
#[test]
fn outputs_that_are_one_file_get_what_gnu_tee_gives_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = data(3_000_000);
    std::fs::write(dir.path().join("in"), &input).unwrap();
    // The script, the file, and which of the outputs writing it append.
    for (script, file, appending) in [
        (r#""$P" tee a >>a <in"#, "a", &[true, false][..]),
        (r#""$P" tee /dev/stdout >>o <in"#, "o", &[true, false]),
        (r#"cat in | "$P" tee a >>a"#, "a", &[true, false]),
        (r#""$P" tee a a <in >/dev/null"#, "a", &[false, false]),
        (r#""$P" tee a >a <in"#, "a", &[false, false]),
        (r#""$P" tee -a a >>a <in"#, "a", &[true, true]),
        (r#""$P" tee -a a >a <in"#, "a", &[false, true]),
        (r#""$P" tee -a a a <in >/dev/null"#, "a", &[true, true]),
    ] {
        for name in ["a", "o"] {
            let _ = std::fs::remove_file(dir.path().join(name));
        }
        let out = sh(dir.path(), script);
        assert_eq!(text(&out.stderr), "", "{script}");
        assert!(out.status.success(), "{script}: {:?}", out.status);
        let got = std::fs::read(dir.path().join(file)).unwrap();
        // (From a pipe GNU's reads take what is there, 8 KiB at most:
        // for outputs that write at one offset, the file is the input
        // whatever the chunks.)
        let want = as_gnu_writes_one_file(appending, &input);
        assert!(
            got == want,
            "{script}: {} bytes where GNU tee leaves {}",
            got.len(),
            want.len()
        );
    }
}

/// Outputs that are one pipe or `/dev/null` (`tee /dev/null >/dev/null`,
/// `tee /dev/stderr 2>&1 | ...`) still move page references: giving
/// each the same bytes in turn is what GNU's writes do, and only a file
/// with an offset, written twice, needs GNU's 8 KiB chunks (all of these
/// were read and written 8 KiB at a time).
#[test]
fn outputs_that_are_one_pipe_or_dev_null_are_spliced() {
    let dir = tempfile::tempdir().unwrap();
    let input = data(1 << 20);
    std::fs::write(dir.path().join("in"), &input).unwrap();
    for (script, doubled) in [
        (
            r#""$S" -f -o trace -e trace=tee,splice "$P" tee /dev/null <in >/dev/null"#,
            false,
        ),
        (
            r#"cat in | "$S" -f -o trace -e trace=tee,splice "$P" tee /dev/null >/dev/null"#,
            false,
        ),
        (
            r#"cat in | "$S" -f -o trace -e trace=tee,splice "$P" tee /dev/stderr 2>&1 | cat >out"#,
            true,
        ),
    ] {
        let Some(strace) = common::strace() else {
            return;
        };
        let out = sh(dir.path(), &format!("S={strace}; {script}"));
        assert!(
            out.status.success(),
            "{script}: {:?} {}",
            out.status,
            text(&out.stderr)
        );
        let trace = std::fs::read_to_string(dir.path().join("trace")).unwrap();
        let calls = trace
            .lines()
            .filter(|line| line.contains("splice(") || line.contains("tee("))
            .count();
        assert!(calls > 0, "{script}: no splice(2) or tee(2) call:\n{trace}");
        if doubled {
            // Each output gets every byte: each round twice, in turn.
            let got = std::fs::read(dir.path().join("out")).unwrap();
            let count = |bytes: &[u8]| {
                let mut counts = vec![0usize; 256];
                bytes.iter().for_each(|&b| counts[b as usize] += 1);
                counts
            };
            assert_eq!(got.len(), 2 * input.len(), "{script}");
            let twice: Vec<usize> = count(&input).iter().map(|n| 2 * n).collect();
            assert!(count(&got) == twice, "{script}: other bytes");
        }
    }
}

#[test]
fn files_written_side_by_side_start_their_threads_once_not_every_round() {
    let Some(strace) = common::strace() else {
        return;
    };
    if pipespeed::sys::available_cpus().unwrap().len() < 2 {
        eprintln!("skipped: files_written_side_by_side_start_their_threads_once: one CPU allowed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = data(16 << 20);
    let log = tee_under_strace(
        strace,
        dir.path(),
        "-f -e trace=clone,clone3",
        &["a", "b", "c"],
        &input,
    );
    for name in ["a", "b", "c"] {
        assert!(
            std::fs::read(dir.path().join(name)).unwrap() == input,
            "{name}"
        );
    }
    // Three files, each but the last spliced to with a pipe of its own:
    // two threads empty those, for the whole copy (a thread a round
    // started 34 for these 16 MiB).
    let threads = log.lines().filter(|l| l.contains("clone")).count();
    assert!(threads <= 2, "{threads} threads started:\n{log}");
}

#[test]
fn dev_null_beside_another_output_is_given_nothing() {
    let Some(strace) = common::strace() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = data(4 << 20);
    let log = tee_under_strace(
        strace,
        dir.path(),
        "-e trace=openat,splice,tee,write",
        &["/dev/null"],
        &input,
    );
    // openat(AT_FDCWD, "/dev/null", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 3
    let null = log
        .lines()
        .find(|l| l.contains("\"/dev/null\"") && l.contains("O_WRONLY"))
        .and_then(|l| l.rsplit("= ").next())
        .unwrap_or_else(|| panic!("/dev/null not opened: {log}"))
        .trim()
        .to_owned();
    let into_null = |l: &&str| {
        l.starts_with(&format!("write({null},"))
            || l.contains(&format!(", NULL, {null}, NULL"))
            || (l.starts_with("tee(") && l.contains(&format!(", {null}, ")))
    };
    let calls: Vec<&str> = log.lines().filter(into_null).collect();
    assert!(calls.is_empty(), "given to /dev/null: {calls:?}");
}

/// `strace OPTIONS -o LOG pipespeed tee ARGS` in `dir`, fed `input`: asserts
/// it succeeds with `input` on stdout and returns strace's log.
fn tee_under_strace(
    strace: &str,
    dir: &std::path::Path,
    options: &str,
    args: &[&str],
    input: &[u8],
) -> String {
    let log = dir.join("log");
    let mut child = Command::new(strace)
        .args(options.split(' '))
        .arg("-o")
        .arg(&log)
        .arg(EXE)
        .arg("tee")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feed = input.to_vec();
    let feeder = thread::spawn(move || stdin.write_all(&feed).unwrap());
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout == input);
    std::fs::read_to_string(log).unwrap()
}
