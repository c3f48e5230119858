//! `pipespeed generate`: manual pages that man renders cleanly, and
//! completion scripts that shells load and that complete what they should.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::process::{Command, Output};

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

fn pipespeed(args: &[&str]) -> Output {
    Command::new(EXE).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What man printed, without its overstrikes (`N\bN` for a bold N).
fn plain(bytes: &[u8]) -> String {
    let mut out: Vec<char> = Vec::new();
    for c in text(bytes).chars() {
        if c == '\u{8}' {
            out.pop();
            continue;
        }
        out.push(c);
    }
    out.into_iter().collect()
}

#[test]
fn every_manual_page_renders_without_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let out = pipespeed(&["generate", "man", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut pages: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    assert_eq!(
        pages,
        [
            "pipespeed-bench.1",
            "pipespeed-cat.1",
            "pipespeed-compare.1",
            "pipespeed-contend.1",
            "pipespeed-generate.1",
            "pipespeed-ipc.1",
            "pipespeed-kernels.1",
            "pipespeed-latency.1",
            "pipespeed-pv.1",
            "pipespeed-read.1",
            "pipespeed-tee.1",
            "pipespeed-top.1",
            "pipespeed-write.1",
            "pipespeed-yes.1",
            "pipespeed.1",
        ]
    );
    // Each written file is named on stderr.
    assert_eq!(
        text(&out.stderr).matches("pipespeed: wrote ").count(),
        pages.len()
    );
    let have_man = Command::new("man").arg("--version").output().is_ok();
    if !have_man {
        common::skip(
            "man",
            "man not found on PATH, so the pages were not rendered (apt-get install man-db)",
        );
        return;
    }
    for page in &pages {
        let rendered = Command::new("man")
            .args(["--warnings=all", "-E", "UTF-8", "-l"])
            .arg(dir.path().join(page))
            .env("MANWIDTH", "80")
            .env("MAN_KEEP_FORMATTING", "0")
            .output()
            .unwrap();
        let (stdout, stderr) = (plain(&rendered.stdout), text(&rendered.stderr));
        assert!(
            rendered.status.success() && stderr.is_empty(),
            "{page}: {stderr}"
        );
        let name = page.trim_end_matches(".1");
        assert!(
            stdout.contains("NAME") && stdout.contains(name),
            "{page}: {stdout}"
        );
    }
    let bench = std::fs::read_to_string(dir.path().join("pipespeed-bench.1")).unwrap();
    assert!(bench.contains("placement"), "{bench}");
}

/// The bash completion for the words of `line` (the last one being
/// completed), as bash's programmable completion computes it.
fn bash_complete(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let words: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}' && complete -p pipespeed >/dev/null && COMP_WORDS=({}) && \
         COMP_CWORD={} && COMP_LINE=\"${{COMP_WORDS[*]}}\" && COMP_POINT=${{#COMP_LINE}} && \
         _pipespeed pipespeed \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\" && \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words.join(" "),
        words.len() - 1
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).lines().map(String::from).collect()
}

#[test]
fn the_bash_completion_loads_and_completes_subcommands_and_rungs() {
    let out = pipespeed(&["generate", "completions", "bash"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("pipespeed.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let subcommands = bash_complete(&script, &["pipespeed", "b"]);
    assert_eq!(subcommands, ["bench"]);
    let all = bash_complete(&script, &["pipespeed", ""]);
    for sub in [
        "bench", "cat", "pv", "latency", "contend", "compare", "generate",
    ] {
        assert!(all.iter().any(|s| s == sub), "{sub} in {all:?}");
    }
    assert!(!all.iter().any(|s| s == "worker"), "{all:?}");
    let rungs = bash_complete(&script, &["pipespeed", "bench", "--rungs", ""]);
    assert!(rungs.iter().any(|r| r == "splice-limit"), "{rungs:?}");
    assert_eq!(rungs.len(), 8, "{rungs:?}");
    let placement = bash_complete(&script, &["pipespeed", "bench", "--placement", ""]);
    assert_eq!(placement, ["same-cpu", "different-cpu", "unpinned"]);
}

#[test]
fn every_shell_gets_a_script_and_an_unknown_one_is_refused() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = pipespeed(&["generate", "completions", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("pipespeed"), "{shell}");
    }
    let out = pipespeed(&["generate", "completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("pipespeed: invalid value 'tcsh'"),
        "{stderr}"
    );
    assert!(stderr.contains("[possible values: bash, zsh, fish, elvish, powershell]"));
}

/// `pipespeed --help` on a terminal: in colour, unless NO_COLOR is set.
fn help_on_a_terminal(no_color: bool) -> Vec<u8> {
    let (controller, terminal) = common::pty();
    let mut cmd = Command::new(EXE);
    cmd.arg("--help")
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .stdout(terminal.try_clone().unwrap())
        .stderr(terminal.try_clone().unwrap());
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let status = cmd.status().unwrap();
    assert!(status.success());
    // The terminal hangs up when no one holds it: not the command's
    // copies, not ours.
    drop(cmd);
    drop(terminal);
    common::read_until_hangup(&controller)
}

#[test]
fn no_color_takes_the_colour_out_of_what_a_terminal_gets() {
    let escape = |screen: &[u8]| screen.contains(&0x1b);
    assert!(escape(&help_on_a_terminal(false)), "no colour to take out");
    let plain = help_on_a_terminal(true);
    assert!(!escape(&plain), "{}", text(&plain));
    assert!(text(&plain).contains("Usage: pipespeed"));
}

/// The pages in `dir`, by name, with their bytes and mode.
fn pages_in(dir: &std::path::Path) -> Vec<(String, Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut pages: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let mode = e.metadata().unwrap().permissions().mode();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap(), mode)
        })
        .collect();
    pages.sort();
    pages
}

#[test]
fn the_pages_are_written_all_or_none_under_a_file_size_limit() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man");
    let out = pipespeed(&["generate", "man", man.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Older pages, one of them private: a new version must not cut them.
    for (name, _, _) in pages_in(&man) {
        std::fs::write(man.join(&name), format!("old {name}\n")).unwrap();
    }
    let private = man.join("pipespeed.1");
    std::fs::set_permissions(&private, PermissionsExt::from_mode(0o600)).unwrap();
    let before = pages_in(&man);
    // 4 or 8 KiB (blocks of 512 bytes or 1 KiB, as the shell counts
    // them): pipespeed.1 (the first, over 2 KiB since yes joined it)
    // fits, pv's page (over 9 KiB) does not.
    let out = common::sh(dir.path(), "ulimit -f 8; exec \"$P\" generate man man");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("pipespeed: cannot write man/pipespeed-")
            && err.ends_with(".1: File too large\n")
            && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(pages_in(&man), before, "a page changed, or a file was left");
    // Without the limit every page is new, and the private one stays so.
    let out = pipespeed(&["generate", "man", man.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let after = pages_in(&man);
    assert_eq!(after.len(), before.len());
    for ((name, bytes, mode), (_, old, old_mode)) in after.iter().zip(&before) {
        assert_ne!(bytes, old, "{name} not written");
        assert_eq!(mode, old_mode, "{name}");
    }
    assert_eq!(after[after.len() - 1].2 & 0o7777, 0o600, "pipespeed.1");
}

#[test]
fn errors_say_their_cause_once() {
    let out = pipespeed(&["generate", "man", "/dev/full"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "pipespeed: cannot write the manual pages in /dev/full: Not a directory\n"
    );
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(EXE)
        .args(["generate", "completions", "bash"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "pipespeed: standard output: No space left on device\n"
    );
}

#[test]
fn a_page_that_is_not_a_regular_file_is_refused_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man");
    std::fs::create_dir(&man).unwrap();
    common::fifo::mkfifo(man.join("pipespeed-pv.1"));
    // Bounded: opening a FIFO no one reads for writing would block.
    let mut child = Command::new(EXE)
        .args(["generate", "man", "man"])
        .current_dir(dir.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("generate man hung on a FIFO named as a page");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "pipespeed: cannot write man/pipespeed-pv.1: not a regular file\n"
    );
    let names: Vec<String> = std::fs::read_dir(&man)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["pipespeed-pv.1"]);
}

/// The strace to watch system calls with: `PIPESPEED_STRACE`, or strace on
/// the PATH.
fn strace() -> Option<std::ffi::OsString> {
    let program = std::env::var_os("PIPESPEED_STRACE").unwrap_or_else(|| "strace".into());
    match Command::new(&program).arg("-V").output() {
        Ok(out) if out.status.success() => Some(program),
        _ => {
            common::skip("strace", "no strace to run (PIPESPEED_STRACE, or on PATH)");
            None
        }
    }
}

#[test]
fn a_hard_linked_page_is_written_before_any_page_is_renamed() {
    let Some(strace) = strace() else { return };
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man");
    std::fs::create_dir(&man).unwrap();
    let page = man.join("pipespeed-pv.1");
    std::fs::write(&page, "old").unwrap();
    std::fs::hard_link(&page, dir.path().join("other-name")).unwrap();
    let log = dir.path().join("strace.log");
    let out = Command::new(strace)
        .args([
            "-f",
            "-y",
            "-e",
            "trace=pwrite64,rename,renameat,renameat2",
            "-o",
        ])
        .arg(&log)
        .args([EXE, "generate", "man"])
        .arg(&man)
        .output()
        .unwrap();
    if !out.status.success() && text(&out.stderr).contains("ptrace") {
        common::skip(
            "strace",
            &format!("strace cannot trace: {}", text(&out.stderr)),
        );
        return;
    }
    assert!(out.status.success(), "{}", text(&out.stderr));
    let log = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    // The page with two names is written in place (its commit can fail);
    // the others are renamed (theirs cannot, once made): the one that can
    // fail goes first, so a failure leaves every old page.
    let in_place = lines
        .iter()
        .position(|l| l.contains("pwrite64(") && l.contains("/pipespeed-pv.1>"))
        .unwrap_or_else(|| panic!("no write in place: {log}"));
    let first_rename = lines
        .iter()
        .position(|l| l.contains("rename"))
        .unwrap_or_else(|| panic!("no rename: {log}"));
    assert!(in_place < first_rename, "{log}");
    assert!(
        std::fs::read_to_string(dir.path().join("other-name"))
            .unwrap()
            .contains(".TH")
    );
}
