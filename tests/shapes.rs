//! One shape for options (issue 25, item 6): `pipespeed` alone takes
//! bench's options; every result option of every measuring command takes
//! a file or `-`, and two results to `-` are one line and status 2.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

/// A ladder of one short rung: a second or so.
const SHORT_BENCH: [&str; 9] = [
    "--rungs",
    "write-read",
    "--runs",
    "1",
    "--bytes",
    "1M",
    "--placement-runs",
    "0",
    "--warmup-runs=1",
];

fn pipespeed(args: &[&str]) -> Output {
    Command::new(EXE).args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_one_line_usage_error(out: &Output, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
    assert!(err.starts_with("pipespeed: "), "{err}");
    for needle in needles {
        assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    }
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(out)))
}

#[test]
fn pipespeed_alone_takes_bench_s_options() {
    let mut args = vec!["--json", "-"];
    args.extend(SHORT_BENCH);
    let alone = json(&pipespeed(&args));
    let mut with_bench = vec!["bench"];
    with_bench.extend(&args);
    let bench = json(&pipespeed(&with_bench));
    for result in [&alone, &bench] {
        assert_eq!(result["schema"], "pipespeed.bench/3");
        let rungs: Vec<&serde_json::Value> = result["rungs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["name"])
            .collect();
        assert_eq!(rungs, ["write-read"]);
        assert_eq!(result["runs"], 1);
    }
}

#[test]
fn bench_s_options_and_a_command_together_are_one_line_naming_both() {
    let out = pipespeed(&["--json", "x.json", "latency"]);
    assert_one_line_usage_error(&out, &["latency", "--json"]);
    assert!(!std::path::Path::new("x.json").exists());
    // What is neither stays an error with clap's tip.
    assert_one_line_usage_error(&pipespeed(&["--bogus"]), &["--bogus"]);
    let out = pipespeed(&["bnech"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("'bench'"), "{}", stderr(&out));
}

#[test]
fn the_top_level_help_lists_the_commands_and_says_where_bench_s_options_are() {
    let out = pipespeed(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("  latency "), "{help}");
    assert!(help.contains("pipespeed bench --help"), "{help}");
    assert!(
        !help.contains("--rungs"),
        "bench's options fill the top help: {help}"
    );
}

/// Each measuring command, made short, and the result options it has.
const COMMANDS: [(&str, &[&str], &[&str]); 4] = [
    (
        "bench",
        &SHORT_BENCH,
        &["json", "csv", "svg", "markdown", "html"],
    ),
    (
        "latency",
        &[
            "--sizes",
            "64",
            "--round-trips",
            "100",
            "--runs",
            "1",
            "--warmup-runs=1",
        ],
        &["json", "csv", "svg"],
    ),
    (
        "contend",
        &["--duration", "0.05", "--runs", "1", "--warmup-runs=1"],
        &["json", "csv", "svg"],
    ),
    (
        "ipc",
        &[
            "--mechanisms",
            "pipe",
            "--sizes",
            "64K",
            "--runs",
            "1",
            "--warmup-runs=1",
            "--duration",
            "0.05",
        ],
        &["json", "csv", "svg", "html", "markdown"],
    ),
];

/// Whether `text` looks like the `form` asked for.
fn is_form(form: &str, text: &str) -> bool {
    match form {
        "json" => serde_json::from_str::<serde_json::Value>(text).is_ok(),
        "csv" => text
            .lines()
            .next()
            .is_some_and(|l| l.split(',').count() > 3),
        "svg" => text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
        "html" => text.starts_with("<!DOCTYPE html>"),
        "markdown" => text.lines().any(|l| l.starts_with("| ")),
        _ => false,
    }
}

/// The audit of item 6: `--FORM -` puts the form, whole, on standard
/// output and the table on stderr; no file named `-` appears; two
/// results to standard output (`-` or `/dev/stdout`) are one line and
/// status 2, before anything runs.
#[test]
fn every_result_option_takes_a_dash_and_two_dashes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(EXE)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    for (command, short, forms) in COMMANDS {
        for form in forms {
            let option = format!("--{form}");
            let mut args = vec![command, &option, "-"];
            args.extend(short);
            let out = run(&args);
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(is_form(form, &text), "{args:?} printed {text:.300}");
            assert!(!stderr(&out).is_empty(), "{args:?}: no table on stderr");
            assert!(
                !dir.path().join("-").exists(),
                "{args:?} wrote a file named -"
            );
        }
        let last = format!("--{}", forms[forms.len() - 1]);
        for stdout in ["-", "/dev/stdout"] {
            let mut args = vec![command, "--json", "-", &last, stdout];
            args.extend(short);
            let out = run(&args);
            assert_one_line_usage_error(&out, &["standard output"]);
            assert!(out.stdout.is_empty(), "{args:?} ran");
        }
    }
}

/// The commands `pipespeed --help` lists, but `help`.
fn commands() -> Vec<String> {
    let out = pipespeed(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let commands: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect();
    assert!(commands.iter().any(|c| c == "contend"), "{help}");
    commands
}

/// A help text cut where an option (a line whose text starts with `-`),
/// a heading (`Options:`) or an unindented paragraph starts: one
/// option's words (its indented lines, blank lines between them too),
/// or one paragraph, each.
fn help_items(help: &str) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    let mut new = true;
    for line in help.lines() {
        let text = line.trim();
        let indented = line.starts_with(' ');
        if text.is_empty() {
            new |= !items.last().is_some_and(|i| i.starts_with('-'));
            continue;
        }
        if !indented && text.ends_with(':') {
            new = true;
            continue;
        }
        let option = items.last().is_some_and(|i| i.starts_with('-'));
        let goes_on = if indented {
            option || !new
        } else {
            !new && !option
        };
        match items.last_mut() {
            Some(item) if goes_on && !text.starts_with('-') => {
                item.push(' ');
                item.push_str(text);
            }
            _ => items.push(text.to_owned()),
        }
        new = false;
    }
    items
}

/// The signals one clause (cut at `;` and `. `) names more than once.
fn signals_named_twice(item: &str) -> Vec<String> {
    let mut twice = Vec::new();
    for clause in item.split([';', '\n']).flat_map(|c| c.split(". ")) {
        let signals: Vec<&str> = clause
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.starts_with("SIG") && w.len() > 3)
            .collect();
        for (i, s) in signals.iter().enumerate() {
            if signals[..i].contains(s) && !twice.iter().any(|t| t == s) {
                twice.push((*s).to_owned());
            }
        }
    }
    twice
}

/// Issue 38: `contend --help` said `[default: 60]` twice for
/// --stall-timeout (its doc comment's and clap's), `bench --help`
/// "SIGHUP, SIGINT, SIGTERM or SIGHUP". No command's help says either
/// kind of thing twice.
#[test]
fn no_help_says_an_option_s_default_or_a_signal_twice() {
    assert_eq!(
        signals_named_twice("129, 130 or 143 interrupted by SIGHUP, SIGINT, SIGTERM or SIGHUP"),
        ["SIGHUP"]
    );
    for command in commands() {
        let out = pipespeed(&[&command, "--help"]);
        assert!(out.status.success(), "{command}: {}", stderr(&out));
        let help = String::from_utf8_lossy(&out.stdout).into_owned();
        for item in help_items(&help) {
            assert!(
                item.matches("[default:").count() <= 1,
                "{command} --help says a default twice: {item}"
            );
            let twice = signals_named_twice(&item);
            assert!(
                twice.is_empty(),
                "{command} --help names {twice:?} twice in one list: {item}"
            );
        }
    }
}
