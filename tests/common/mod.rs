//! What several test files need: the boundary sizes and a
//! pseudo-terminal.

#![allow(dead_code, clippy::unwrap_used)]

pub mod fifo;
pub mod records;

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The sizes at which copies go wrong if they do: empty, one byte, around
/// a page, around the default pipe size, and past the largest pipe.
pub const SIZES: [usize; 9] = [
    0,
    1,
    4095,
    4096,
    4097,
    64 * 1024 - 1,
    64 * 1024,
    64 * 1024 + 1,
    1024 * 1024 + 1,
];

/// `program` started with SIGINT, SIGTERM and SIGHUP at their default
/// action, whatever this test process inherited: a shell ignores SIGINT
/// for a command it starts with `&`, `nohup` ignores SIGHUP, and a
/// command keeps a signal its parent ignored, as every Unix tool does
/// (`sys::process::catch_interrupts`). The tests that send one want to see
/// it caught. GNU env's `--default-signal` (coreutils 8.31) execs
/// `program` in its own process, so the PID is the program's.
pub fn catchable(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new("env");
    cmd.arg("--default-signal=INT,TERM,HUP").arg(program);
    cmd
}

/// A pty pair, (controller, terminal): the terminal in raw mode (no line
/// editing, no newline translation) and 100 columns wide.
pub fn pty() -> (OwnedFd, File) {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    use rustix::termios::{OptionalActions, Winsize, tcgetattr, tcsetattr, tcsetwinsize};
    let controller = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&controller).unwrap();
    unlockpt(&controller).unwrap();
    let name = ptsname(&controller, Vec::new()).unwrap();
    let terminal = File::options()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    let mut t = tcgetattr(&terminal).unwrap();
    t.make_raw();
    tcsetattr(&terminal, OptionalActions::Now, &t).unwrap();
    let size = Winsize {
        ws_row: 24,
        ws_col: 100,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    tcsetwinsize(&terminal, size).unwrap();
    (controller, terminal)
}

/// Everything written to the terminal, read from the controller until
/// the terminal hangs up (EIO) when its last user closes it.
pub fn read_until_hangup(controller: impl AsFd) -> Vec<u8> {
    let mut screen = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = rustix::io::read(controller.as_fd(), &mut buf) {
        if n == 0 {
            break;
        }
        screen.extend_from_slice(&buf[..n]);
    }
    screen
}

/// Runs `script` under `sh -c` in `dir`, with `$P` the pipespeed binary:
/// the shell closes descriptors (`>&-`) and ignores signals (`trap ''
/// PIPE`) as a user's shell would, and `exec` keeps both.
pub fn sh(dir: &std::path::Path, script: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("P", env!("CARGO_BIN_EXE_pipespeed"))
        .current_dir(dir)
        .output()
        .unwrap()
}

/// A program's path that a shell script may hold as one plain word: the
/// path itself where it has nothing a shell splits or expands, else a
/// symbolic link to it in a directory of this value's own (removed with
/// it), as a checkout, and the references fetched into its `target/`,
/// may lie at a path holding spaces. Reads as the path (`{program}` in a
/// script, `Command::new(&program)`), for as long as it is kept.
#[derive(Debug)]
pub struct Word {
    path: String,
    _link: Option<tempfile::TempDir>,
}

impl Word {
    pub fn of(program: &Path) -> Word {
        let plain = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"/._-+,".contains(&b))
        };
        // Absolute: the scripts run in directories of their own.
        let program = std::path::absolute(program).unwrap();
        match program.to_str() {
            Some(s) if plain(s) => Word {
                path: s.to_owned(),
                _link: None,
            },
            _ => {
                let dir = tempfile::tempdir().unwrap();
                let name = program
                    .file_name()
                    .and_then(|n| n.to_str())
                    .filter(|n| plain(n));
                let link = dir.path().join(name.unwrap_or("program"));
                std::os::unix::fs::symlink(&program, &link).unwrap();
                let path = link.to_str().unwrap().to_owned();
                assert!(
                    plain(&path),
                    "{path}: TMPDIR holds a character a shell splits"
                );
                Word {
                    path,
                    _link: Some(dir),
                }
            }
        }
    }
}

impl std::ops::Deref for Word {
    type Target = str;
    fn deref(&self) -> &str {
        &self.path
    }
}

impl std::fmt::Display for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.path)
    }
}

// Borrowed only: a `Word` moved into `Command::new` would remove its
// link before the program runs.
impl AsRef<std::ffi::OsStr> for &Word {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_ref()
    }
}

impl AsRef<Path> for &Word {
    fn as_ref(&self) -> &Path {
        self.path.as_ref()
    }
}

/// `text` with each wrapped line joined again: the text layout goes on
/// a long line on the next under a two-space indent (`warnings`,
/// headers), which a test reads as one line, by meaning, whatever the
/// width or a path's length made it wrap.
pub fn unwrapped(text: &str) -> String {
    text.replace("\n  ", " ")
}

/// Says that the running test skipped a check, and why, where the test
/// run shows it: libtest captures `eprintln!` and drops it when the test
/// passes, but not what is written to the stderr handle itself, so this
/// line stands in `cargo test`'s output (and CI's log) between the results,
/// as `skipped: TEST: WHY`. With `PIPESPEED_REQUIRE_<WHAT>=1` (`what` in
/// capitals, as .ci/run sets where the facility is installed) the test
/// fails instead: a CI that has the facility must not skip its check.
pub fn skip(what: &str, why: &str) {
    use std::io::Write;
    let var = format!("PIPESPEED_REQUIRE_{}", what.to_uppercase());
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    assert!(
        std::env::var_os(&var).is_none_or(|v| v != "1"),
        "{test}: {why}, and {var}=1 requires the check"
    );
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
}

/// strace, if it is installed and may trace here (fault injection); else
/// `None`, said as a skip.
pub fn strace() -> Option<&'static str> {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let works = *WORKS.get_or_init(|| {
        Command::new("strace")
            .args(["-f", "-o", "/dev/null", "true"])
            .status()
            .is_ok_and(|status| status.success())
    });
    if !works {
        skip(
            "strace",
            "fault injection needs strace, which is missing or may not trace here",
        );
    }
    works.then_some("strace")
}

/// Whether the calling test runs in a process of its own: if not, runs
/// it again so (this test binary, that test alone) and says `false`, and
/// the caller returns. For a test that changes what the whole process
/// shares (a resource limit, the descriptor table it counts), which the
/// tests running beside it in one binary would see.
pub fn in_a_process_of_its_own() -> bool {
    use std::io::Write;
    const ALONE: &str = "PIPESPEED_TEST_ALONE";
    if std::env::var_os(ALONE).is_some() {
        return true;
    }
    let test = std::thread::current()
        .name()
        .expect("libtest names a test's thread after the test")
        .to_owned();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test.as_str(), "--exact", "--test-threads=1"])
        .env(ALONE, "1")
        .output()
        .unwrap();
    // Its skips, where the run shows them (see `skip`).
    let _ = std::io::stderr().write_all(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{test}, run alone: {}\n{stdout}",
        out.status
    );
    false
}

/// Asserts that no line of `text` is wider than `width` columns.
pub fn assert_fits(text: &str, width: usize) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= width,
            "over {width}: {line}\n{text}"
        );
    }
}

/// The numbers `pv -d PID:FD -n` printed on `err`, a line a frame, with
/// the descriptor's row blanked at the end once it closed (80 columns off
/// a terminal), as pv 1.12 leaves it.
pub fn watched_numbers(err: &str) -> Vec<u64> {
    let blank = format!("{}\r", " ".repeat(80));
    let lines = err
        .strip_suffix(&blank)
        .unwrap_or_else(|| panic!("no blank row at the end: {err:?}"));
    lines.lines().map(|l| l.parse().unwrap()).collect()
}

/// The kernel's pipe_bench (for a guest, static): `PIPESPEED_PIPE_BENCH` (a
/// binary), else built static into `dir` from `PIPESPEED_PIPE_BENCH_SRC`
/// (its `pipe_bench.c`) with `cc -static -O2 -pthread`; else the test
/// says it is skipped (`PIPESPEED_REQUIRE_PIPE_BENCH=1`: it fails).
pub fn pipe_bench(dir: &Path) -> Option<PathBuf> {
    if let Some(binary) = std::env::var_os("PIPESPEED_PIPE_BENCH").map(PathBuf::from) {
        if binary.is_file() {
            return Some(binary);
        }
        let why = format!("PIPESPEED_PIPE_BENCH={}: no such file", binary.display());
        skip("pipe_bench", &why);
        return None;
    }
    let Some(source) = std::env::var_os("PIPESPEED_PIPE_BENCH_SRC") else {
        let why = "neither PIPESPEED_PIPE_BENCH nor PIPESPEED_PIPE_BENCH_SRC names pipe_bench";
        skip("pipe_bench", why);
        return None;
    };
    let binary = dir.join("pipe_bench");
    let built = Command::new("cc")
        .args(["-static", "-O2", "-pthread", "-o"])
        .arg(&binary)
        .arg(&source)
        .output();
    match built {
        Ok(out) if out.status.success() => Some(binary),
        Ok(out) => {
            let why = format!(
                "cc -static cannot build pipe_bench: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            skip("pipe_bench", why.trim());
            None
        }
        Err(e) => {
            skip("pipe_bench", &format!("cannot run cc: {e}"));
            None
        }
    }
}
