//! `pipespeed generate`: manual pages that man renders cleanly, and
//! completion scripts that shells load and that complete what they should.

#![allow(clippy::unwrap_used)]

mod common;

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
            "pipespeed-latency.1",
            "pipespeed-pv.1",
            "pipespeed-read.1",
            "pipespeed-write.1",
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
        assert!(
            std::env::var_os("PIPESPEED_REQUIRE_MAN").is_none_or(|v| v != "1"),
            "man not found on PATH, and PIPESPEED_REQUIRE_MAN=1 requires the rendering check \
             (apt-get install man-db)"
        );
        eprintln!("man not found; skipped rendering the pages");
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
