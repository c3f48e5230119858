//! `pipespeed cat` through the binary: fixed expectations, and the same
//! stdout bytes, stderr and exit status as GNU cat (coreutils) on a corpus
//! of tricky inputs, when GNU cat is installed.

#![allow(clippy::unwrap_used)]

use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

mod common;

#[path = "cat/errors.rs"]
mod errors;
#[path = "cat/inplace.rs"]
mod inplace;
#[path = "cat/records.rs"]
mod records;

// ---------------------------------------------------------------------------
// A small harness in the manner of uutils' tests:
// `pipespeed_cat().args(["-n"]).pipe_in("a\n").succeeds().stdout_is("     1\ta\n")`.

/// A command to run, with what goes to its stdin.
struct Run {
    cmd: Command,
    stdin: Vec<u8>,
    stdout: Option<File>,
}

/// `pipespeed cat`.
fn pipespeed_cat() -> Run {
    let mut cmd = Command::new(EXE);
    cmd.arg("cat");
    Run::new(cmd)
}

/// What a run did.
#[derive(Debug)]
struct Outcome {
    stdout: Vec<u8>,
    stderr: String,
    status: ExitStatus,
}

impl Run {
    fn new(cmd: Command) -> Run {
        Run {
            cmd,
            stdin: Vec::new(),
            stdout: None,
        }
    }

    fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Run {
        self.cmd.args(args);
        self
    }

    fn pipe_in(mut self, data: impl Into<Vec<u8>>) -> Run {
        self.stdin = data.into();
        self
    }

    fn current_dir(mut self, dir: &Path) -> Run {
        self.cmd.current_dir(dir);
        self
    }

    fn env(mut self, key: &str, value: &str) -> Run {
        self.cmd.env(key, value);
        self
    }

    /// Stdout goes to `file` instead of a pipe (the outcome's stdout is
    /// then empty).
    fn stdout_to(mut self, file: File) -> Run {
        self.stdout = Some(file);
        self
    }

    fn run(mut self) -> Outcome {
        let stdout = match self.stdout.take() {
            Some(file) => Stdio::from(file),
            None => Stdio::piped(),
        };
        let mut child = self
            .cmd
            .stdin(Stdio::piped())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let data = std::mem::take(&mut self.stdin);
        // A thread, so that a large input cannot block against the output.
        let feeder = thread::spawn(move || {
            // cat may end before reading all (bad option): not an error.
            let _ = stdin.write_all(&data);
        });
        let out = child.wait_with_output().unwrap();
        feeder.join().unwrap();
        Outcome {
            stdout: out.stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            status: out.status,
        }
    }

    fn succeeds(self) -> Outcome {
        let outcome = self.run();
        assert!(outcome.status.success(), "failed: {outcome:?}");
        outcome
    }

    fn fails(self) -> Outcome {
        let outcome = self.run();
        assert_eq!(outcome.status.code(), Some(1), "{outcome:?}");
        outcome
    }
}

impl Outcome {
    fn stdout_is(&self, expected: impl AsRef<[u8]>) -> &Outcome {
        let expected = expected.as_ref();
        assert!(
            self.stdout == expected,
            "stdout {:?}\n  expected {:?}",
            String::from_utf8_lossy(&self.stdout),
            String::from_utf8_lossy(expected)
        );
        self
    }

    fn stderr_is(&self, expected: &str) -> &Outcome {
        assert_eq!(self.stderr, expected);
        self
    }

    fn no_stderr(&self) -> &Outcome {
        self.stderr_is("")
    }
}

/// A directory with files, removed at the end of the test.
struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        Dir(tempfile::tempdir().unwrap())
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path().join(name);
        fs::write(&path, bytes).unwrap();
        path
    }
}

// ---------------------------------------------------------------------------
// GNU cat, to compare with.

/// GNU cat's program name, if `cat --version` says it is GNU's.
fn gnu_cat() -> Option<&'static str> {
    static GNU: OnceLock<bool> = OnceLock::new();
    let found = *GNU.get_or_init(|| {
        Command::new("cat")
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("GNU coreutils"))
    });
    if found {
        Some("cat")
    } else {
        common::skip(
            "gnu_cat",
            "the differential tests compare with GNU cat, and no GNU cat is installed",
        );
        None
    }
}

/// GNU's messages as ours: its program name `cat` becomes `pipespeed cat`.
fn as_ours(gnu_stderr: &str) -> String {
    gnu_stderr
        .lines()
        .map(|line| {
            let line = match line.strip_prefix("cat: ") {
                Some(rest) => format!("pipespeed cat: {rest}"),
                None => line.to_owned(),
            };
            line.replace("Try 'cat --help'", "Try 'pipespeed cat --help'") + "\n"
        })
        .collect()
}

/// Runs GNU cat and `pipespeed cat` with `args` in `dir`, `stdin` on
/// their standard input, and asserts the same stdout bytes, the same
/// stderr (with our name) and the same exit status.
fn same_as_gnu<S: AsRef<OsStr>>(gnu: &str, dir: &Path, args: &[S], stdin: &[u8]) {
    let theirs = Run::new(Command::new(gnu))
        .args(args)
        .current_dir(dir)
        .pipe_in(stdin)
        .run();
    let ours = pipespeed_cat()
        .args(args)
        .current_dir(dir)
        .pipe_in(stdin)
        .run();
    let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_owned()).collect();
    assert!(
        ours.stdout == theirs.stdout,
        "cat {shown:?}: stdout differs\n  ours {:?}\n  GNU  {:?}",
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&theirs.stdout)
    );
    assert_eq!(
        ours.stderr,
        as_ours(&theirs.stderr),
        "cat {shown:?}: stderr"
    );
    assert_eq!(ours.status, theirs.status, "cat {shown:?}: status");
}

/// Files every option must get right.
fn corpus(dir: &Dir) -> Vec<&'static str> {
    let all_bytes: Vec<u8> = (0..=255u8).chain(0..=255u8).collect();
    let controls: Vec<u8> = (0..32u8).chain(*b"x\n").chain(0..32).collect();
    let high: Vec<u8> = (127..=255u8).chain(*b"\n").chain(127..=255).collect();
    let files: [(&'static str, Vec<u8>); 11] = [
        ("no_newline", b"first\nlast line without a newline".to_vec()),
        ("blank_runs", b"\n\n\na\n\n\n\nb\n\n\n".to_vec()),
        ("controls", controls),
        ("high", high),
        ("all_bytes", all_bytes),
        ("crlf", b"one\r\ntwo\r\n\r\n\r\rthree\rfour\r".to_vec()),
        ("cr_then_lf", b"\n".to_vec()),
        ("empty", Vec::new()),
        ("tabs", b"\ta\t\tb\t\n\t\n".to_vec()),
        ("blank_start", b"\n\n\nstarts with blank lines\n".to_vec()),
        ("one_line", b"one line\n".to_vec()),
    ];
    for (name, bytes) in &files {
        dir.write(name, bytes);
    }
    fs::create_dir(dir.path().join("a_dir")).unwrap();
    files.iter().map(|(name, _)| *name).collect()
}

/// Every option, long forms, abbreviations, and combinations.
const OPTION_SETS: &[&[&str]] = &[
    &[],
    &["-A"],
    &["-b"],
    &["-e"],
    &["-E"],
    &["-n"],
    &["-s"],
    &["-t"],
    &["-T"],
    &["-u"],
    &["-v"],
    &["--show-all"],
    &["--number-nonblank"],
    &["--show-ends"],
    &["--number"],
    &["--squeeze-blank"],
    &["--show-tabs"],
    &["--show-nonprinting"],
    &["--number-n"],
    &["--sq", "--show-t"],
    &["-nE"],
    &["-bs"],
    &["-sn"],
    &["-An"],
    &["-vT"],
    &["-et"],
    &["-bn"],
    &["-n", "-b"],
    &["-sAu"],
    &["-ET"],
    &["-vE"],
    &["-n", "-n", "--number"],
];

const STDIN: &[u8] = b"from stdin\n\n\n\tline\r\n";

#[test]
fn every_option_matches_gnu_on_every_file_of_the_corpus() {
    let Some(gnu) = gnu_cat() else { return };
    let dir = Dir::new();
    let files = corpus(&dir);
    for options in OPTION_SETS {
        for file in &files {
            let args: Vec<&str> = options.iter().copied().chain([*file]).collect();
            same_as_gnu(gnu, dir.path(), &args, STDIN);
        }
    }
}

#[test]
fn state_carries_across_files_as_in_gnu() {
    let Some(gnu) = gnu_cat() else { return };
    let dir = Dir::new();
    let files = corpus(&dir);
    for options in OPTION_SETS {
        // All files in one run, then in the reverse order: line numbers,
        // unfinished lines, blank-line runs and CRs cross file boundaries.
        let mut args: Vec<&str> = options.to_vec();
        args.extend(&files);
        same_as_gnu(gnu, dir.path(), &args, STDIN);
        let mut args: Vec<&str> = options.to_vec();
        args.extend(files.iter().rev());
        same_as_gnu(gnu, dir.path(), &args, STDIN);
    }
}

#[test]
fn stdin_missing_files_and_directories_match_gnu() {
    let Some(gnu) = gnu_cat() else { return };
    let dir = Dir::new();
    corpus(&dir);
    let runs: &[&[&str]] = &[
        &[],
        &["-"],
        &["-", "-"],
        &["no_newline", "-", "crlf", "-"],
        &["one_line", "no such file", "no_newline"],
        &["a_dir", "one_line"],
        &["one_line", "a_dir", "one_line"],
        &["nosuch", "a_dir", "-", "nosuch2"],
        &["--", "-n"],
        &["one_line", "--", "-", "--"],
        &["one_line", "-n"],
        &["blank_runs", "-s", "--", "blank_runs"],
        &["it's missing", "a b", "a:b", "$x", ""],
    ];
    for options in [&[][..], &["-n"], &["-A"], &["-sE"]] {
        for files in runs {
            let args: Vec<&str> = options.iter().chain(files.iter()).copied().collect();
            same_as_gnu(gnu, dir.path(), &args, STDIN);
        }
    }
}

#[test]
fn many_files_match_gnu() {
    let Some(gnu) = gnu_cat() else { return };
    let dir = Dir::new();
    let mut names = Vec::new();
    for i in 0..60 {
        let text = match i % 4 {
            0 => format!("file {i}\n"),
            1 => format!("no newline {i}"),
            2 => "\n\n".to_owned(),
            _ => String::new(),
        };
        let name = format!("f{i:02}");
        dir.write(&name, text);
        names.push(name);
    }
    for options in [&[][..], &["-n"], &["-bs"], &["-E"]] {
        let args: Vec<&str> = options
            .iter()
            .copied()
            .chain(names.iter().map(String::as_str))
            .collect();
        same_as_gnu(gnu, dir.path(), &args, b"");
    }
}

#[test]
fn bad_options_give_gnus_two_lines_and_status_1() {
    pipespeed_cat()
        .args(["-z"])
        .fails()
        .stdout_is("")
        .stderr_is(
            "pipespeed cat: invalid option -- 'z'\nTry 'pipespeed cat --help' for more information.\n",
        );
    pipespeed_cat()
        .args(["file", "--foo"])
        .fails()
        .stderr_is(
            "pipespeed cat: unrecognized option '--foo'\nTry 'pipespeed cat --help' for more information.\n",
        );
    pipespeed_cat().args(["--num"]).fails().stderr_is(
        "pipespeed cat: option '--num' is ambiguous; possibilities: '--number-nonblank' '--number'\n\
         Try 'pipespeed cat --help' for more information.\n",
    );
    pipespeed_cat().args(["--number=3"]).fails().stderr_is(
        "pipespeed cat: option '--number' doesn't allow an argument\n\
         Try 'pipespeed cat --help' for more information.\n",
    );
    // GNU cat has no -h and no -V.
    pipespeed_cat().args(["-h"]).fails();
    pipespeed_cat().args(["-V"]).fails();
}

#[test]
fn bad_options_match_gnu() {
    let Some(gnu) = gnu_cat() else { return };
    let dir = Dir::new();
    dir.write("f", "f\n");
    let runs: &[&[&str]] = &[
        &["-z"],
        &["-nzq"],
        &["-n="],
        &["-n-"],
        &["--foo=bar"],
        &["---"],
        &["--="],
        &["--s"],
        &["--show"],
        &["--num=3"],
        &["--show-all=x"],
        &["--help=x"],
        &["f", "-n", "--bogus", "f"],
        &["-z", "--help"],
        &["-1"],
    ];
    for args in runs {
        same_as_gnu(gnu, dir.path(), args, b"");
    }
}

#[test]
fn posixly_correct_ends_options_at_the_first_file_as_in_gnu() {
    let Some(gnu) = gnu_cat() else { return };
    let dir = Dir::new();
    dir.write("f", "f\n");
    for args in [
        &["f", "-n"][..],
        &["-n", "f", "-E"],
        &["-n", "--", "-u", "f"],
    ] {
        let theirs = Run::new(Command::new(gnu))
            .args(args)
            .current_dir(dir.path())
            .env("POSIXLY_CORRECT", "1")
            .run();
        let ours = pipespeed_cat()
            .args(args)
            .current_dir(dir.path())
            .env("POSIXLY_CORRECT", "1")
            .run();
        assert_eq!(ours.stdout, theirs.stdout, "{args:?}");
        assert_eq!(ours.stderr, as_ours(&theirs.stderr), "{args:?}");
        assert_eq!(ours.status, theirs.status, "{args:?}");
    }
}

#[test]
fn options_may_follow_file_names_and_dash_is_stdin() {
    let dir = Dir::new();
    let f = dir.write("f", "a\n");
    pipespeed_cat()
        .args([
            f.as_os_str(),
            OsStr::new("-"),
            OsStr::new("-n"),
            f.as_os_str(),
        ])
        .pipe_in("b\n")
        .succeeds()
        .no_stderr()
        .stdout_is("     1\ta\n     2\tb\n     3\ta\n");
    pipespeed_cat()
        .args(["--", "-n"])
        .current_dir(dir.path())
        .fails()
        .stderr_is("pipespeed cat: -n: No such file or directory\n");
}

#[test]
fn a_missing_file_is_reported_and_the_others_are_still_copied() {
    let dir = Dir::new();
    dir.write("one", "1\n");
    dir.write("two", "2\n");
    fs::create_dir(dir.path().join("sub")).unwrap();
    pipespeed_cat()
        .args(["one", "nosuch", "sub", "two"])
        .current_dir(dir.path())
        .fails()
        .stdout_is("1\n2\n")
        .stderr_is(
            "pipespeed cat: nosuch: No such file or directory\npipespeed cat: sub: Is a directory\n",
        );
}

#[test]
fn u_is_accepted_and_ignored() {
    let input: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    pipespeed_cat()
        .args(["-u"])
        .pipe_in(input.clone())
        .succeeds()
        .stdout_is(&input);
    let numbered = pipespeed_cat()
        .args(["-n"])
        .pipe_in(input.clone())
        .succeeds();
    pipespeed_cat()
        .args(["-un"])
        .pipe_in(input)
        .succeeds()
        .stdout_is(&numbered.stdout);
}

#[test]
fn help_and_version_print_ours_and_succeed() {
    let help = pipespeed_cat().args(["--help"]).succeeds();
    let text = String::from_utf8(help.stdout.clone()).unwrap();
    assert!(
        text.starts_with("Usage: pipespeed cat [OPTION]... [FILE]...\n"),
        "{text}"
    );
    for option in [
        "-A, --show-all",
        "-b, --number-nonblank",
        "-e ",
        "-E, --show-ends",
        "-n, --number",
        "-s, --squeeze-blank",
        "-t ",
        "-T, --show-tabs",
        "-u ",
        "-v, --show-nonprinting",
        "--help",
        "--version",
    ] {
        assert!(text.contains(option), "help lacks {option}: {text}");
    }
    // Abbreviated, and wherever it stands.
    pipespeed_cat()
        .args(["nosuch", "--he"])
        .succeeds()
        .no_stderr()
        .stdout_is(&help.stdout);
    let version = pipespeed_cat().args(["--version"]).succeeds();
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with("cat (pipespeed) "),
        "{version:?}"
    );
}

// ---------------------------------------------------------------------------
// Large inputs.

/// 1 MiB and a few bytes of text lines with every byte value sprinkled in.
fn large_text() -> Vec<u8> {
    let mut text = Vec::new();
    let mut i = 0u32;
    while text.len() <= 1 << 20 {
        text.extend_from_slice(format!("line {i}").as_bytes());
        if i.is_multiple_of(7) {
            text.push((i % 256) as u8);
        }
        if i.is_multiple_of(13) {
            text.extend_from_slice(b"\n\n\n");
        }
        text.push(if i.is_multiple_of(11) { b'\r' } else { b'\t' });
        text.push(b'\n');
        i += 1;
    }
    text.extend_from_slice(b"tail without newline");
    text
}

#[test]
fn a_large_file_goes_through_unchanged_to_a_pipe_and_to_a_file() {
    let dir = Dir::new();
    let text = large_text();
    let path = dir.write("large", &text);
    pipespeed_cat()
        .args([&path])
        .succeeds()
        .no_stderr()
        .stdout_is(&text);
    let out_path = dir.path().join("copy");
    pipespeed_cat()
        .args([&path, &path])
        .stdout_to(File::create(&out_path).unwrap())
        .succeeds()
        .no_stderr();
    assert!(fs::read(&out_path).unwrap() == [&text[..], &text[..]].concat());
    pipespeed_cat()
        .pipe_in(text.clone())
        .succeeds()
        .stdout_is(&text);
}

#[test]
fn a_large_file_with_options_matches_gnu() {
    let Some(gnu) = gnu_cat() else { return };
    let dir = Dir::new();
    dir.write("large", large_text());
    for options in [&["-n"][..], &["-b"], &["-A"], &["-s", "-E"], &["-T"]] {
        let args: Vec<&str> = options.iter().copied().chain(["large"]).collect();
        same_as_gnu(gnu, dir.path(), &args, b"");
    }
    // Through stdin, in whatever pieces the pipe gives.
    same_as_gnu(gnu, dir.path(), &["-nE"], &large_text());
}

// ---------------------------------------------------------------------------
// Where the output goes.

/// Without its input-is-output check, cat would grow the file without
/// end: a file size limit, which cat inherits, turns that into a quick
/// failure (SIGXFSZ) instead of a full disk. No test writes a file near
/// the limit.
fn limit_file_size() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = 64 << 20;
    let old = getrlimit(Resource::Fsize);
    if old.current.is_none_or(|current| current > limit) {
        let new = Rlimit {
            current: Some(limit),
            maximum: old.maximum,
        };
        setrlimit(Resource::Fsize, new).unwrap();
    }
}

#[test]
fn input_file_is_output_file_is_refused_like_gnu() {
    limit_file_size();
    let dir = Dir::new();
    let path = dir.write("f", "data\n");
    let append = || File::options().append(true).open(&path).unwrap();
    for options in [&[][..], &["-n"]] {
        pipespeed_cat()
            .args(options.iter().chain(&["f"]))
            .current_dir(dir.path())
            .stdout_to(append())
            .fails()
            .stderr_is("pipespeed cat: f: input file is output file\n");
        assert_eq!(fs::read(&path).unwrap(), b"data\n");
    }
    // Stdin is that file too.
    let mut cmd = Command::new(EXE);
    cmd.args(["cat", "-"])
        .stdin(File::open(&path).unwrap())
        .stdout(append())
        .stderr(Stdio::piped());
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pipespeed cat: -: input file is output file\n"
    );
    // Other files are still copied; from its end, the file is no input.
    let other = dir.write("other", "other\n");
    pipespeed_cat()
        .args([other.as_os_str(), path.as_os_str()])
        .stdout_to(append())
        .fails();
    assert_eq!(fs::read(&path).unwrap(), b"data\nother\n");
    pipespeed_cat()
        .args(["f"])
        .current_dir(dir.path())
        .stdout_to(File::create(&path).unwrap())
        .succeeds()
        .no_stderr();
    assert_eq!(fs::read(&path).unwrap(), b"");
}

#[test]
fn input_file_is_output_file_matches_gnu() {
    let Some(gnu) = gnu_cat() else { return };
    limit_file_size();
    // The same file in two directories, one for each cat.
    let (theirs_dir, ours_dir) = (Dir::new(), Dir::new());
    let run = |run: Run, dir: &Dir| {
        let path = dir.write("f", "data\n");
        dir.write("g", "g\n");
        let outcome = run
            .args(["-n", "f", "g", "f"])
            .current_dir(dir.path())
            .stdout_to(File::options().append(true).open(&path).unwrap())
            .run();
        (outcome, fs::read(&path).unwrap())
    };
    let (theirs, theirs_file) = run(Run::new(Command::new(gnu)), &theirs_dir);
    let (ours, ours_file) = run(pipespeed_cat(), &ours_dir);
    assert_eq!(ours.stderr, as_ours(&theirs.stderr));
    assert_eq!(ours.status, theirs.status);
    assert_eq!(ours_file, theirs_file);
    assert_eq!(ours_file, b"data\n     1\tg\n");
}

#[test]
fn a_full_disk_is_a_write_error_and_ends_cat_at_once() {
    let Ok(full) = File::options().write(true).open("/dev/full") else {
        common::skip("dev_full", "no /dev/full here");
        return;
    };
    let dir = Dir::new();
    let f = dir.write("f", "some text\n");
    for options in [&[][..], &["-n"]] {
        pipespeed_cat()
            .args(
                options
                    .iter()
                    .map(OsStr::new)
                    .chain([f.as_os_str(), OsStr::new("nosuch")]),
            )
            .stdout_to(full.try_clone().unwrap())
            .fails()
            .stderr_is("pipespeed cat: write error: No space left on device\n");
    }
    pipespeed_cat()
        .args(["--help"])
        .stdout_to(full.try_clone().unwrap())
        .fails()
        .stderr_is("pipespeed cat: write error: No space left on device\n");
}

/// Runs `cmd` with stdout a pipe whose read end is already closed.
fn with_reader_gone(mut cmd: Command) -> Outcome {
    let (reader, writer) = io::pipe().unwrap();
    drop(reader);
    let out = cmd
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    Outcome {
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status,
    }
}

#[test]
fn a_reader_that_goes_away_ends_cat_by_sigpipe_quietly() {
    let dir = Dir::new();
    let f = dir.write("f", large_text());
    for options in [&[][..], &["-n"]] {
        let mut cmd = Command::new(EXE);
        cmd.arg("cat").args(options).arg(&f);
        let outcome = with_reader_gone(cmd);
        assert_eq!(outcome.status.signal(), Some(13), "{options:?} {outcome:?}");
        assert_eq!(outcome.stderr, "", "{options:?}");
    }
    if let Some(gnu) = gnu_cat() {
        let mut cmd = Command::new(gnu);
        cmd.arg(&f);
        assert_eq!(with_reader_gone(cmd).status.signal(), Some(13), "GNU cat");
    }
}

// ---------------------------------------------------------------------------
// Called by the name cat.

#[test]
fn a_symlink_named_cat_behaves_as_pipespeed_cat_with_its_own_name() {
    let dir = Dir::new();
    let cat = dir.path().join("cat");
    std::os::unix::fs::symlink(EXE, &cat).unwrap();
    let name = cat.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut cmd = Command::new(&cat);
        cmd.args(args);
        Run::new(cmd)
    };
    run(&["-n", "-"])
        .pipe_in("a\nb\n")
        .succeeds()
        .no_stderr()
        .stdout_is("     1\ta\n     2\tb\n");
    run(&["nosuch"])
        .fails()
        .stderr_is(&format!("{name}: nosuch: No such file or directory\n"));
    run(&["-z"]).fails().stderr_is(&format!(
        "{name}: invalid option -- 'z'\nTry '{name} --help' for more information.\n"
    ));
    let help = run(&["--help"]).succeeds();
    assert!(
        String::from_utf8_lossy(&help.stdout)
            .starts_with(&format!("Usage: {name} [OPTION]... [FILE]...\n")),
        "{help:?}"
    );
    // `cat cat`: the argument is a file, not a subcommand.
    run(&["cat"])
        .current_dir(Path::new("/"))
        .fails()
        .stderr_is(&format!("{name}: cat: No such file or directory\n"));
}

// ---------------------------------------------------------------------------
// Interactive use.

/// Kills a child if the test takes longer than a minute, so that a lost
/// line fails the test instead of hanging it.
struct Watchdog {
    done: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Watchdog {
    fn new(child: &Child) -> Watchdog {
        let pid = child.id().to_string();
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                wait.recv_timeout(Duration::from_secs(60))
            {
                let _ = Command::new("kill").args(["-9", &pid]).status();
            }
        });
        Watchdog {
            done: Some(done),
            thread: Some(thread),
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn each_line_shows_as_soon_as_it_is_typed() {
    for options in [&[][..], &["-n"], &["-A"]] {
        let mut child = Command::new(EXE)
            .arg("cat")
            .args(options)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let _watchdog = Watchdog::new(&child);
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        for line in ["first\n", "second\n"] {
            stdin.write_all(line.as_bytes()).unwrap();
            // The line comes back while stdin stays open.
            let mut got = Vec::new();
            let mut byte = [0u8];
            while !got.ends_with(b"\n") {
                assert_eq!(stdout.read(&mut byte).unwrap(), 1, "{options:?}: cat ended");
                got.push(byte[0]);
            }
            let got = String::from_utf8(got).unwrap();
            assert!(got.contains(line.trim_end()), "{options:?}: {got:?}");
        }
        drop(stdin);
        assert!(child.wait().unwrap().success());
    }
}

#[test]
fn a_non_blocking_stdin_is_waited_on_not_an_error() {
    for options in [&[][..], &["-n"]] {
        let (reader, mut writer) = io::pipe().unwrap();
        rustix::fs::fcntl_setfl(&reader, rustix::fs::OFlags::NONBLOCK).unwrap();
        let child = Command::new(EXE)
            .arg("cat")
            .args(options)
            .stdin(reader)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _watchdog = Watchdog::new(&child);
        // cat finds the pipe empty (EAGAIN) before anything comes.
        thread::sleep(Duration::from_millis(100));
        writer.write_all(b"late\n").unwrap();
        thread::sleep(Duration::from_millis(50));
        writer.write_all(b"later\n").unwrap();
        drop(writer);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{options:?}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "");
        let expected: &[u8] = if options.is_empty() {
            b"late\nlater\n"
        } else {
            b"     1\tlate\n     2\tlater\n"
        };
        assert_eq!(out.stdout, expected, "{options:?}");
    }
}

#[test]
fn file_names_in_messages_are_quoted_as_gnu_quotes_them() {
    let dir = Dir::new();
    for (name, shown) in [
        ("a b", "'a b'"),
        ("it's", "\"it's\""),
        ("a:b", "'a:b'"),
        ("a\nb", "'a'$'\\n''b'"),
        ("plain-name.txt", "plain-name.txt"),
    ] {
        pipespeed_cat()
            .args([name])
            .current_dir(dir.path())
            .fails()
            .stderr_is(&format!(
                "pipespeed cat: {shown}: No such file or directory\n"
            ));
    }
    // Not UTF-8 (nor text at all in the C locale): octal escapes.
    let name: OsString = std::os::unix::ffi::OsStringExt::from_vec(b"x\xff".to_vec());
    pipespeed_cat()
        .args([&name])
        .env("LC_ALL", "C")
        .current_dir(dir.path())
        .fails()
        .stderr_is("pipespeed cat: 'x'$'\\377': No such file or directory\n");
}

// ---------------------------------------------------------------------------
// Page references.

/// cat's output pipe, filled by `pipespeed cat f` with `env`, read only
/// after cat has exited and `f` has been overwritten in place.
fn read_after_overwrite(env: &[(&str, &str)]) -> (Vec<u8>, Vec<u8>) {
    let dir = Dir::new();
    // Above the size cat copies by read/write, within one pipe's 64 KiB.
    let old = vec![b'o'; 48 * 1024];
    let f = dir.write("f", &old);
    let (mut reader, writer) = io::pipe().unwrap();
    let mut run = pipespeed_cat().args([&f]);
    for (key, value) in env {
        run = run.env(key, value);
    }
    run.stdout_to(File::from(std::os::fd::OwnedFd::from(writer)))
        .succeeds();
    // In place: the same page-cache pages, not a new file.
    let mut file = fs::OpenOptions::new().write(true).open(&f).unwrap();
    file.write_all(&vec![b'n'; old.len()]).unwrap();
    drop(file);
    let mut got = Vec::new();
    reader.read_to_end(&mut got).unwrap();
    (old, got)
}

#[test]
fn pipespeed_no_splice_gives_the_reader_the_bytes_of_when_cat_ran() {
    for value in ["1", "yes"] {
        let (old, got) = read_after_overwrite(&[("PIPESPEED_NO_SPLICE", value)]);
        assert!(
            got == old,
            "PIPESPEED_NO_SPLICE={value}: the reader saw later bytes"
        );
    }
    // Spliced, the reader may see either (6.18 shows it the new bytes),
    // but never a mixture of lengths.
    let (old, got) = read_after_overwrite(&[("PIPESPEED_NO_SPLICE", "0")]);
    assert_eq!(got.len(), old.len());
}

/// Files of every boundary size and of 1-64 KiB, some below the size cat
/// reads and writes (32 KiB), some spliced, so that the engine turns from
/// one mechanism to the other from file to file, and its pipes grow once
/// the stream has shown it is large (after 64 KiB): names and the bytes
/// they hold together.
fn small_files(dir: &Dir) -> (Vec<PathBuf>, Vec<u8>) {
    let mut sizes: Vec<usize> = common::SIZES.to_vec();
    sizes.extend([32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1]);
    // A fixed sequence, 1-64 KiB (a linear congruential generator).
    let mut x = 39u64;
    for _ in 0..150 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        sizes.push(1024 + (x >> 33) as usize % (63 * 1024 + 1));
    }
    let mut all = Vec::new();
    let names = sizes
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            let bytes: Vec<u8> = (0..size).map(|j| (i * 7 + j / 4093) as u8).collect();
            all.extend_from_slice(&bytes);
            dir.write(&format!("s{i:03}"), bytes)
        })
        .collect();
    (names, all)
}

#[test]
fn many_small_files_reach_a_pipe_a_file_and_a_stream_socket_whole_and_in_order() {
    let dir = Dir::new();
    let (names, all) = small_files(&dir);
    pipespeed_cat()
        .args(&names)
        .succeeds()
        .no_stderr()
        .stdout_is(&all);
    // A file written from an offset, and one that appends.
    let out_path = dir.path().join("out");
    fs::write(&out_path, b"0123456789").unwrap();
    let mut at_offset = File::options().write(true).open(&out_path).unwrap();
    io::Seek::seek(&mut at_offset, io::SeekFrom::Start(4)).unwrap();
    pipespeed_cat()
        .args(&names)
        .stdout_to(at_offset)
        .succeeds()
        .no_stderr();
    assert!(fs::read(&out_path).unwrap() == [&b"0123"[..], &all].concat());
    let appending = File::options().append(true).open(&out_path).unwrap();
    pipespeed_cat()
        .args(&names)
        .stdout_to(appending)
        .succeeds()
        .no_stderr();
    assert!(fs::read(&out_path).unwrap() == [&b"0123"[..], &all, &all].concat());
    // A stream socket, read by a thread of the test.
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let reader = thread::spawn(move || {
        let mut got = Vec::new();
        (&theirs).read_to_end(&mut got).unwrap();
        got
    });
    pipespeed_cat()
        .args(&names)
        .stdout_to(File::from(std::os::fd::OwnedFd::from(ours)))
        .succeeds()
        .no_stderr();
    assert!(
        reader.join().unwrap() == all,
        "the socket's reader got other bytes"
    );
}
