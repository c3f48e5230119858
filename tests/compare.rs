//! `pipespeed compare` through the binary and the library, on synthetic
//! results built from the real types (and on the committed synthetic
//! fixtures the documentation shows): verdicts, refusals, warnings.

#![allow(clippy::unwrap_used)]

use crate::fixtures;
use pipespeed::bench::core::Placement;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pipespeed::bench::core::Header;
use pipespeed::bench::core::NoiseSummary;
use pipespeed::bench::core::Shuffler;
use pipespeed::bench::ladder::{LadderResult, Rung, RungResult, SCHEMA};
use pipespeed::compare::Bootstrap;
use pipespeed::compare::{Outcome, Verdict, compare_files};
use pipespeed::sys::{SystemFacts, ThpMode};
use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/compare");

/// Runs pipespeed in the project's directory, a file in it named by its
/// path from there: what the output says of the committed fixtures is
/// then the same wherever the checkout lies (its path may be long
/// enough to wrap a header, or hold spaces).
fn pipespeed(args: &[&str]) -> Output {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    Command::new(EXE)
        .args(args.iter().map(|a| a.strip_prefix(root).unwrap_or(a)))
        .current_dir(root)
        .output()
        .expect("run pipespeed")
}

fn compare(base: &Path, new: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["compare", base.to_str().unwrap(), new.to_str().unwrap()];
    args.extend_from_slice(extra);
    pipespeed(&args)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The warnings on stderr, each on one line again: they are wrapped to the
/// width, under a two-space indent.
fn warnings(out: &Output) -> String {
    crate::common::unwrapped(&stderr(out))
}

/// Asserts a one-line error, with the given status, mentioning each needle.
fn assert_one_line_error(out: &Output, code: i32, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
    assert!(err.starts_with("pipespeed: "), "{err}");
    for needle in needles {
        assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty(), "{}", stdout(out));
}

/// `n` draws spread uniformly over `mean` +- 3%, from `seed`.
fn draws(seed: u64, mean: f64, n: usize) -> Vec<f64> {
    let mut rng = Shuffler::new(seed);
    let unit = |rng: &mut Shuffler| (rng.below(2001) as f64 - 1000.0) / 1000.0;
    (0..n)
        .map(|_| mean * (1.0 + 0.03 * unit(&mut rng)))
        .collect()
}

fn rung(name: Rung, runs: Vec<f64>) -> RungResult {
    let mut r = RungResult::new(name, 256 * 1024, None);
    r.bytes_per_run = 1 << 30;
    r.gib_s = pipespeed::bench::core::Series::of(&runs);
    r
}

fn ladder(rungs: Vec<RungResult>) -> LadderResult {
    LadderResult {
        header: Header {
            schema: SCHEMA.into(),
            pipespeed_version: "0.1.0".into(),
            build: None,
            system: SystemFacts {
                kernel: "6.1.0".into(),
                kernel_version: "#1".into(),
                arch: "x86_64".into(),
                cpu_model: "Test CPU".into(),
                cpus_online: 2,
                cpus_allowed: vec![0, 1],
                thp: ThpMode::Madvise,
                pipe_max_size_bytes: 1 << 20,
                page_size_bytes: 4096,
                virtualization: None,
            },
            interrupted: false,
        },
        placement: Placement::Pinned {
            writer_cpu: 0,
            reader_cpu: 1,
        },
        runs: 7,
        max_runs: 7,
        noise: None,
        placement_check: None,
        verify: false,
        seed: 1,
        rungs,
        baseline: None,
        verdict: None,
    }
}

fn write(dir: &Path, name: &str, doc: &impl serde::Serialize) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(doc).unwrap()).unwrap();
    path
}

/// The line of `row` in the first table of the text output.
fn row<'a>(text: &'a str, row: &str) -> &'a str {
    let prefix = format!("{row} ");
    text.lines().find(|l| l.starts_with(&prefix)).unwrap()
}

/// The interval's ends printed on a line: `[low, high]`.
fn interval(line: &str) -> (f64, f64) {
    let inside = line.split('[').nth(1).unwrap().split(']').next().unwrap();
    let (low, high) = inside.split_once(", ").unwrap();
    (low.parse().unwrap(), high.parse().unwrap())
}

#[test]
fn a_known_doubling_says_faster_with_an_interval_excluding_one() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(
        dir.path(),
        "base.json",
        &ladder(vec![rung(Rung::VmspliceSplice, draws(1, 20.0, 7))]),
    );
    let new = write(
        dir.path(),
        "new.json",
        &ladder(vec![rung(Rung::VmspliceSplice, draws(2, 40.0, 7))]),
    );
    let out = compare(&base, &new, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let text = stdout(&out);
    let line = row(&text, "vmsplice-splice");
    assert!(line.ends_with(" faster"), "{line}");
    let (low, high) = interval(line);
    assert!(low > 1.0 && low < 2.0 && high > 2.0, "{line}");
    // The library says the same.
    let c = compare_files((&base, "b"), (&new, "n"), &Bootstrap::default()).unwrap();
    let Outcome::Compared(change) = &c.tables[0].lines[0].outcome else {
        panic!("{c:?}")
    };
    assert_eq!(change.verdict, Verdict::Faster);
    assert!(change.interval.unwrap().low > 1.0);
}

#[test]
fn two_draws_of_one_distribution_say_no_significant_change() {
    let dir = tempfile::tempdir().unwrap();
    let side = |seed: u64| {
        ladder(vec![
            rung(Rung::WriteRead, draws(seed, 3.0, 7)),
            rung(Rung::VmspliceSplice, draws(seed + 10, 20.0, 7)),
            rung(Rung::Tuned, draws(seed + 20, 30.0, 7)),
        ])
    };
    let base = write(dir.path(), "base.json", &side(1));
    let new = write(dir.path(), "new.json", &side(2));
    let text = stdout(&compare(&base, &new, &[]));
    for name in ["write-read", "vmsplice-splice", "tuned"] {
        let line = row(&text, name);
        assert!(line.ends_with(" ~"), "{line}");
        let (low, high) = interval(line);
        assert!(low <= 1.0 && high >= 1.0, "{line}");
    }
    assert!(text.contains("~: no change it can call"), "{text}");
}

#[test]
fn the_same_seed_prints_the_same_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(
        dir.path(),
        "base.json",
        &ladder(vec![rung(Rung::Tuned, draws(5, 30.0, 40))]),
    );
    let new = write(
        dir.path(),
        "new.json",
        &ladder(vec![rung(Rung::Tuned, draws(6, 30.0, 40))]),
    );
    let first = stdout(&compare(&base, &new, &[]));
    assert_eq!(stdout(&compare(&base, &new, &[])), first);
    let seeded = stdout(&compare(&base, &new, &["--seed", "7"]));
    assert!(seeded.contains("(seed 7)"), "{seeded}");
    assert_ne!(
        interval(row(&seeded, "tuned")),
        interval(row(&first, "tuned"))
    );
}

#[test]
fn one_run_a_side_gives_no_interval_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(
        dir.path(),
        "base.json",
        &ladder(vec![rung(Rung::Tuned, vec![30.0])]),
    );
    let new = write(
        dir.path(),
        "new.json",
        &ladder(vec![rung(Rung::Tuned, vec![60.0])]),
    );
    let text = stdout(&compare(&base, &new, &[]));
    let line = row(&text, "tuned");
    assert!(line.contains("1/1") && line.contains("+100.0%"), "{line}");
    assert!(line.ends_with("  -       ? 1 run"), "{line}");
    assert!(
        text.contains("? 1 run: fewer than 2 runs on a side"),
        "{text}"
    );
    assert!(text.contains("for a verdict: more runs"), "{text}");
}

/// Another machine: no row gets a verdict, and the warning says so in
/// plain words; another kernel on the same machine is what `kernels`
/// and `--lkml` compare, warned about and judged.
#[test]
fn another_machine_gets_no_verdict_and_another_placement_no_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(
        dir.path(),
        "base.json",
        &ladder(vec![rung(Rung::Tuned, draws(1, 30.0, 5))]),
    );
    let mut other = ladder(vec![rung(Rung::Tuned, draws(2, 90.0, 5))]);
    other.header.system.kernel = "6.6.0".into();
    other.header.system.cpu_model = "Other CPU".into();
    let new = write(dir.path(), "new.json", &other);
    let out = compare(&base, &new, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (b, n) = (base.display(), new.display());
    assert_eq!(
        warnings(&out),
        format!(
            "pipespeed: warning: {b} and {n} come from different machines (cpu_model Test CPU -> \
             Other CPU): no row gets a verdict; compare results of one machine\n\
             pipespeed: warning: system fact kernel differs: 6.1.0 in {b}, 6.6.0 in {n}\n"
        )
    );
    assert!(row(&stdout(&out), "tuned").ends_with("? machine"));
    assert_eq!(only_verdict(&base, &new), Verdict::OtherMachine);
    // The same machine, another kernel: a 3x change is called.
    other.header.system.cpu_model = "Test CPU".into();
    let kernel = write(dir.path(), "kernel.json", &other);
    assert_eq!(only_verdict(&base, &kernel), Verdict::Faster);
    // The ends placed elsewhere: the row is not compared.
    other.placement = Placement::Unpinned;
    let unpinned = write(dir.path(), "unpinned.json", &other);
    let out = compare(&base, &unpinned, &[]);
    let u = unpinned.display();
    assert!(
        warnings(&out).contains(&format!(
            "pipespeed: warning: {b} ran the ends on two CPUs (writer on CPU 0, reader on CPU 1), \
             {u} left to the scheduler: row tuned is not compared; rerun {u} with --placement \
             different-cpu\n"
        )),
        "{}",
        warnings(&out)
    );
    let text = stdout(&out);
    assert!(
        row(&text, "tuned").contains("not compared: ends placed writer on CPU 0"),
        "{text}"
    );
    assert!(
        text.contains("answer: no change called (1 row not compared: placements differ).\n"),
        "{text}"
    );
}

#[test]
fn files_of_two_kinds_are_refused_naming_both() {
    let base = Path::new(FIXTURES).join("bench-base.json");
    let new = Path::new(FIXTURES).join("latency-new.json");
    let out = compare(&base, &new, &[]);
    // Named as given: from the project's directory (`pipespeed`).
    let expected = "tests/fixtures/compare/bench-base.json is a bench result, \
                    tests/fixtures/compare/latency-new.json a latency result: cannot compare";
    assert_one_line_error(&out, 1, &[expected]);
}

#[test]
fn two_versions_of_a_format_are_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let base = Path::new(FIXTURES).join("bench-base.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&base).unwrap()).unwrap();
    doc["schema"] = "pipespeed.bench/99".into();
    let new = write(dir.path(), "v99.json", &doc);
    let out = compare(&base, &new, &[]);
    assert_one_line_error(
        &out,
        1,
        &["pipespeed.bench/1", "pipespeed.bench/99", "v99.json"],
    );
    // Both in a version this build does not read: refused, naming it.
    let out = compare(&new, &new, &[]);
    assert_one_line_error(&out, 1, &["v99.json", "pipespeed.bench/99", "cannot read"]);
}

#[test]
fn unreadable_and_foreign_files_are_one_line_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = Path::new(FIXTURES).join("bench-base.json");
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not json\n").unwrap();
    let other = write(dir.path(), "other.json", &serde_json::json!({"name": "x"}));
    let foreign = write(
        dir.path(),
        "foreign.json",
        &serde_json::json!({"schema": "hyperfine/1"}),
    );
    let broken = write(
        dir.path(),
        "broken.json",
        &serde_json::json!({"schema": SCHEMA, "rungs": 3}),
    );
    let missing = dir.path().join("missing.json");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let cases: [(&Path, &[&str]); 6] = [
        (
            &missing,
            &["cannot read", "missing.json", "No such file or directory"],
        ),
        // A directory is a side of several results: none is refused.
        (&empty, &["empty", "no results to compare"]),
        (&text, &["notes.txt is not JSON"]),
        (
            &other,
            &[
                "other.json is not a pipespeed result",
                "no \"schema\" field",
            ],
        ),
        (
            &foreign,
            &["foreign.json is not a pipespeed result", "hyperfine/1"],
        ),
        (
            &broken,
            &["broken.json is not a valid pipespeed.bench/3 result"],
        ),
    ];
    for (bad, needles) in cases {
        assert_one_line_error(&compare(&good, bad, &[]), 1, needles);
        assert_one_line_error(&compare(bad, &good, &[]), 1, needles);
    }
}

#[test]
fn bad_usage_exits_2() {
    let good = Path::new(FIXTURES).join("bench-base.json");
    let good = good.to_str().unwrap();
    for args in [
        &["compare", good][..],
        &["compare", good, good, "--confidence", "1.5"],
        &["compare", good, good, "--confidence", "95"],
        &["compare", good, good, "--resamples", "0"],
        &["compare", good, good, "--seed", "x"],
        &["compare", good, good, "--lkml", "--markdown"],
        &["compare", "--markdown", good, good, "--lkml"],
    ] {
        let out = pipespeed(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out).lines().count(),
            1,
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn markdown_is_a_table_per_metric_with_a_line_of_facts() {
    let base = Path::new(FIXTURES).join("latency-base.json");
    let new = Path::new(FIXTURES).join("latency-new.json");
    let out = compare(&base, &new, &["--markdown"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = stdout(&out);
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| size ")).count(),
        3,
        "{md}"
    );
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| :--")).count(),
        3,
        "{md}"
    );
    assert!(
        md.contains("**round trip p99 (lower is better: a lower new is faster)**"),
        "{md}"
    );
    let facts: Vec<&str> = md.lines().filter(|l| l.starts_with("System: ")).collect();
    assert_eq!(facts.len(), 1, "{md}");
    assert!(facts[0].contains("kernel 6.1.0-synthetic;"), "{md}");
    for line in md.lines().filter(|l| l.starts_with("| 1B ")) {
        assert!(line.ends_with("| faster  |"), "{line}");
    }
    for line in md.lines().filter(|l| l.starts_with("| 64KiB ")) {
        assert!(line.ends_with("| ~       |"), "{line}");
    }
}

/// docs/compare.md shows the output of these commands on the committed
/// synthetic fixtures: it must be what the binary prints.
#[test]
fn the_documented_example_is_what_the_command_prints() {
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/compare.md")).unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    for (kind, extra) in [
        ("bench", &[][..]),
        ("latency", &["--markdown"][..]),
        ("ipc", &[][..]),
    ] {
        let mut args = vec![
            "compare".to_string(),
            format!("tests/fixtures/compare/{kind}-base.json"),
            format!("tests/fixtures/compare/{kind}-new.json"),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let run = |columns: &str| {
            let out = Command::new(EXE)
                .args(&args)
                .current_dir(root)
                .env("COLUMNS", columns)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            stdout(&out)
        };
        // The text fits the terminal: every line at 80 and at 120
        // columns (the Markdown is for a pull request, not a terminal).
        for columns in [80, 120] {
            let printed = run(&columns.to_string());
            for line in printed.lines().filter(|_| extra.is_empty()) {
                assert!(line.chars().count() <= columns, "{columns}: {line:?}");
            }
        }
        // The docs show it at 80 columns.
        let printed = run("80");
        assert!(
            docs.contains(&printed),
            "docs/compare.md lacks the output of `pipespeed {}`:\n{printed}",
            args.join(" ")
        );
    }
}

#[test]
fn an_endless_or_huge_input_is_refused_with_its_bound() {
    let good = Path::new(FIXTURES).join("bench-base.json");
    let zero = Path::new("/dev/zero");
    let start = std::time::Instant::now();
    let out = compare(&good, zero, &[]);
    assert_one_line_error(&out, 1, &["/dev/zero", "larger than 16 MiB"]);
    // Refused after reading the bound, not after filling memory: a
    // generous limit, only to tell the two apart.
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn more_runs_per_row_than_the_bound_are_refused_naming_the_row() {
    use pipespeed::compare::MAX_RUNS;
    let dir = tempfile::tempdir().unwrap();
    let base = write(
        dir.path(),
        "base.json",
        &ladder(vec![rung(Rung::WriteRead, draws(1, 2.0, 7))]),
    );
    let huge = write(
        dir.path(),
        "huge.json",
        &ladder(vec![rung(Rung::WriteRead, draws(2, 2.0, MAX_RUNS + 1))]),
    );
    let start = std::time::Instant::now();
    let out = compare(&base, &huge, &[]);
    assert_one_line_error(
        &out,
        1,
        &[
            "huge.json",
            "write-read",
            &format!("{} runs", MAX_RUNS + 1),
            &MAX_RUNS.to_string(),
        ],
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
    // At the bound, compared.
    let most = write(
        dir.path(),
        "most.json",
        &ladder(vec![rung(Rung::WriteRead, draws(3, 2.0, MAX_RUNS))]),
    );
    let out = compare(&base, &most, &["--resamples", "100"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `compare --lkml` in the project's directory on the committed
/// fixtures, as the documentation runs it.
fn lkml(kind: &str) -> Output {
    Command::new(EXE)
        .args([
            "compare",
            "--lkml",
            &format!("tests/fixtures/compare/{kind}-base.json"),
            &format!("tests/fixtures/compare/{kind}-new.json"),
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

#[test]
fn lkml_prints_the_contend_grid_as_its_snapshot() {
    let out = lkml("contend");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    fixtures::snapshot("compare-lkml-contend.txt", &text);
    // The differing kernel once, as base -> patched; the shared facts once.
    assert!(
        text.contains("\nkernel          6.1.0-synthetic -> 6.6.0-synthetic\n"),
        "{text}"
    );
    assert!(text.contains("\nvirtualization  kvm\n"), "{text}");
    // pipe_bench's grid: writers as rows, readers as columns.
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("1 ")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    // Each cell `base -> patched (change)`, the change between stars
    // where the rule calls it. 1x1 was drawn 1.25 times faster and 1x10
    // 0.9 times as fast: past mmtests' rule, but with one file a side
    // within the drift between invocations (25%): `?`, not starred.
    assert!(rows[0].contains(" 45.3k -> 55.8k  (+23%)? "), "{}", rows[0]);
    // 1x5 was drawn twice from one distribution.
    assert!(rows[0].contains(" 45.8k -> 45.9k (+0.3%) "), "{}", rows[0]);
    assert!(rows[0].ends_with(" 34.1k -> 30.8k (-9.7%)?"), "{}", rows[0]);
    let lines = text.lines().collect::<Vec<_>>();
    assert!(text.contains("\n*+12%*: called: "), "{text}");
    assert!(text.contains("mmtests' rule"), "{text}");
    assert_eq!(
        lines[lines.len() - 1],
        "pipespeed compare --lkml tests/fixtures/compare/contend-base.json \
         tests/fixtures/compare/contend-new.json"
    );
    // Where the numbers allow, a mail's 78 columns.
    for line in &lines[..lines.len() - 1] {
        assert!(line.chars().count() <= 78, "{line:?}");
    }
    // The library agrees with the marks.
    let c = compare_files(
        (&Path::new(FIXTURES).join("contend-base.json"), "b"),
        (&Path::new(FIXTURES).join("contend-new.json"), "n"),
        &Bootstrap::default(),
    )
    .unwrap();
    let verdict = |row: &str| match &c.tables[0]
        .lines
        .iter()
        .find(|l| l.row == row)
        .unwrap()
        .outcome
    {
        Outcome::Compared(change) => change.verdict,
        other => panic!("{other:?}"),
    };
    assert_eq!(verdict("1x1"), Verdict::WithinDrift);
    assert_eq!(verdict("1x10"), Verdict::WithinDrift);
    assert_eq!(verdict("1x5"), Verdict::NoChange);
    assert_eq!(verdict("5x1"), Verdict::TooFewRuns);
}

#[test]
fn lkml_reads_files_written_before_virtualization_was_recorded() {
    for kind in ["bench", "latency"] {
        let out = lkml(kind);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("\nvirtualization  not recorded\n"), "{text}");
    }
    let text = stdout(&lkml("latency"));
    assert!(text.contains("\nsize   p50 "), "{text}");
    assert!(
        text.contains("\n64KiB  29.71 us -> 30.07 us (+1.2%)  "),
        "{text}"
    );
}

/// The committed synthetic ipc results, as `compare` reads them.
fn ipc_fixtures() -> (PathBuf, PathBuf) {
    let dir = Path::new(FIXTURES);
    (dir.join("ipc-base.json"), dir.join("ipc-new.json"))
}

#[test]
fn ipc_results_compare_the_rate_and_the_round_trip_per_mechanism_and_size() {
    let (base, new) = ipc_fixtures();
    let out = compare(&base, &new, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("\nGiB/s (higher is better)\nmechanism size "),
        "{text}"
    );
    assert!(
        text.contains("\nround trip p50 (lower is better: a lower new is faster)\n"),
        "{text}"
    );
    // pipe at 64 KiB was drawn 1.25 times faster; shm's 64-byte round trip
    // 0.8 times as long; the rest from the same distributions. With one
    // file a side, +24.9% and -20.5% are within the drift between two
    // invocations (25%): `? drift`, no verdict.
    assert!(row(&text, "pipe 64KiB").ends_with(" ? drift"), "{text}");
    assert!(row(&text, "pipe 64B").ends_with(" ~"), "{text}");
    let c = compare_files((&base, "b"), (&new, "n"), &Bootstrap::default()).unwrap();
    assert_eq!(c.kind.name(), "ipc");
    let outcome = |table: usize, name: &str| {
        let line = c.tables[table].lines.iter().find(|l| l.row == name);
        line.unwrap().outcome.clone()
    };
    let verdict = |table: usize, name: &str| match outcome(table, name) {
        Outcome::Compared(change) => change.verdict,
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(verdict(0, "pipe 64KiB"), Verdict::WithinDrift);
    assert_eq!(verdict(1, "shm 64B"), Verdict::WithinDrift);
    assert_eq!(verdict(1, "pipe 64KiB"), Verdict::NoChange);
    for table in 0..2 {
        for name in [
            "pipe 64B",
            "unix-stream 64B",
            "unix-stream 64KiB",
            "shm 64KiB",
        ] {
            assert_eq!(verdict(table, name), Verdict::NoChange, "{name}");
        }
    }
    // A metric that did not run keeps its own reason; the other is compared.
    assert_eq!(verdict(0, "pipe-splice 64KiB"), Verdict::NoChange);
    let Outcome::NoRuns { base: b, new: n } = outcome(1, "pipe-splice 64KiB") else {
        panic!("{c:?}")
    };
    assert!(b.unwrap().starts_with("unavailable: a spliced message"));
    assert!(n.unwrap().starts_with("unavailable: a spliced message"));
    assert_eq!(
        outcome(0, "io-uring 64KiB"),
        Outcome::NoRuns {
            base: None,
            new: Some(
                "unavailable: io_uring_setup: Operation not permitted \
                 (kernel.io_uring_disabled is 2; synthetic)"
                    .into()
            ),
        }
    );
    assert_eq!(
        outcome(0, "mqueue 64B"),
        Outcome::OnlyIn(pipespeed::compare::Side::New)
    );
    // The kernels differ, and stderr says so.
    assert!(
        warnings(&out)
            .starts_with("pipespeed: warning: system fact kernel differs: 6.1.0-synthetic"),
        "{}",
        warnings(&out)
    );
}

#[test]
fn an_ipc_metric_that_failed_after_some_runs_is_compared_on_them_with_a_note() {
    let (base, new) = ipc_fixtures();
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&new).unwrap()).unwrap();
    let rows = doc["rows"].as_array_mut().unwrap();
    let shm = rows
        .iter_mut()
        .find(|r| r["mechanism"] == "shm" && r["size"] == 65536)
        .unwrap();
    shm["latency"]["status"] = "failed".into();
    shm["latency"]["reason"] = "the ponger exited with status 1".into();
    let dir = tempfile::tempdir().unwrap();
    let failed = write(dir.path(), "failed.json", &doc);
    let out = compare(&base, &failed, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = warnings(&out);
    assert!(
        err.contains(&format!(
            "warning: {}: shm 64KiB round trip failed: the ponger exited with status 1 after 5 \
             runs; those runs are compared",
            failed.display()
        )),
        "{err}"
    );
    let text = stdout(&out);
    let round_trips = &text[text.find("round trip p50").unwrap()..];
    assert!(row(round_trips, "shm 64KiB").ends_with(" ~"), "{text}");
}

#[test]
fn ipc_and_another_kind_are_refused_and_lkml_lists_each_row() {
    let (base, _) = ipc_fixtures();
    let latency = Path::new(FIXTURES).join("latency-base.json");
    let out = compare(&base, &latency, &[]);
    assert_one_line_error(
        &out,
        1,
        &["is an ipc result", "a latency result: cannot compare"],
    );
    let out = lkml("ipc");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("pipespeed ipc: base -> patched (change)"),
        "{text}"
    );
    assert!(
        text.contains("\nplacement       sender on CPU 0, receiver on CPU 1\n"),
        "{text}"
    );
    assert!(text.contains("\nruns per row    5\n"), "{text}");
    assert!(text.contains("\nGiB/s (higher is better):\n"), "{text}");
    assert!(
        text.contains("\nround trip p50 (lower is better):\n"),
        "{text}"
    );
    // Drawn 1.25 times faster: +24.9%, within the drift of one file a
    // side.
    let pipe = text.lines().find(|l| l.starts_with("pipe 64KiB ")).unwrap();
    assert!(pipe.ends_with("(+25%)?"), "{pipe}");
    assert!(
        text.contains("\nmqueue 64B         patched only\n"),
        "{text}"
    );
}

#[test]
fn a_file_compared_with_itself_marks_nothing_in_any_form() {
    for kind in ["bench", "latency", "contend", "ipc"] {
        let file = Path::new(FIXTURES).join(format!("{kind}-new.json"));
        for form in [&[][..], &["--markdown"], &["--lkml"]] {
            let out = compare(&file, &file, form);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            assert_eq!(stderr(&out), "", "{kind} {form:?}");
            let text = stdout(&out);
            let rows = text.lines().filter(|l| l.contains('%'));
            for line in rows.filter(|l| !l.starts_with("faster, slower: ")) {
                let marked = (line.split([' ', '|'])).any(|w| w == "faster" || w == "slower");
                let starred = line.contains(" -> ") && line.contains('*');
                assert!(!marked && !starred, "{kind} {form:?}: {line}");
            }
        }
    }
}

#[test]
fn a_doubling_is_starred_in_lkml_and_faster_in_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(
        dir.path(),
        "base.json",
        &ladder(vec![rung(Rung::VmspliceSplice, draws(1, 20.0, 7))]),
    );
    let new = write(
        dir.path(),
        "new.json",
        &ladder(vec![rung(Rung::VmspliceSplice, draws(2, 40.0, 7))]),
    );
    let table = stdout(&compare(&base, &new, &[]));
    assert!(
        row(&table, "vmsplice-splice").ends_with(" faster"),
        "{table}"
    );
    let text = stdout(&compare(&base, &new, &["--lkml"]));
    let line = row(&text, "vmsplice-splice");
    let star = line.split_whitespace().last().unwrap();
    assert!(star.starts_with("*+") && star.ends_with("%*"), "{line}");
}

#[test]
fn a_quiet_and_a_loaded_file_of_the_same_runs_warn_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let noise = |other_share: f64| NoiseSummary {
        runs: 7,
        steal_share: 0.001,
        other_share,
        max_load_avg_1m: 2.0,
    };
    let mut quiet = ladder(vec![rung(Rung::Tuned, draws(1, 30.0, 7))]);
    quiet.noise = Some(noise(0.02));
    let mut loaded = quiet.clone();
    loaded.noise = Some(noise(1.3));
    let base = write(dir.path(), "quiet.json", &quiet);
    let new = write(dir.path(), "loaded.json", &loaded);
    for form in [&[][..], &["--lkml"]] {
        let out = compare(&base, &new, form);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(
            warnings(&out),
            format!(
                "pipespeed: warning: measured under different noise: {}: quiet (steal 0.1%, \
                 other load 0.02 CPUs, load average 2.00); {}: loaded (steal 0.1%, other load \
                 1.30 CPUs, load average 2.00): a difference may be the machine's\n",
                base.display(),
                new.display()
            )
        );
    }
    // The warning fits the terminal: it took one line of 200 columns.
    let out = Command::new(EXE)
        .args(["compare", base.to_str().unwrap(), new.to_str().unwrap()])
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(err.lines().count() > 1, "{err}");
    crate::common::assert_fits(&err, 80);
    // Two quiet files: nothing to say.
    let out = compare(&base, &base, &[]);
    assert_eq!(stderr(&out), "");
}

#[test]
fn files_of_an_older_format_are_still_compared_with_themselves_and_with_new_ones() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for v1 in [
        "bench-v1.json",
        "bench-v2.json",
        "latency/v1.json",
        "contend-v1.json",
        "ipc/v1.json",
    ] {
        let v1 = fixtures.join(v1);
        let out = compare(&v1, &v1, &[]);
        assert_eq!(out.status.code(), Some(0), "{v1:?}: {}", stderr(&out));
        // The header may wrap: up to the rule, its lines joined again.
        let text = stdout(&out);
        let header = crate::common::unwrapped(text.split("\nrule: ").next().unwrap_or_default());
        let version = if v1.ends_with("bench-v2.json") {
            "/2"
        } else {
            "/1"
        };
        assert!(header.ends_with(version), "{header}");
    }
    // Across versions: both load into the same types.
    let (v1, v2) = (
        fixtures.join("ipc/v1.json"),
        Path::new(FIXTURES).join("ipc-base.json"),
    );
    let out = compare(&v1, &v2, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let header = crate::common::unwrapped(text.split("\nrule: ").next().unwrap_or_default());
    assert!(
        header.ends_with("pipespeed.ipc/1 and pipespeed.ipc/2"),
        "{header}"
    );
}

/// `--markdown [FILE]` and `--lkml [FILE]`: with a FILE the form goes
/// there (whole, as every result file) and the text table to stdout;
/// with `-` or no value, the form to stdout as before; the spellings
/// with the option before BASE NEW keep their meaning.
#[test]
fn markdown_and_lkml_take_a_file_or_standard_output() {
    let base = Path::new(FIXTURES).join("latency-base.json");
    let new = Path::new(FIXTURES).join("latency-new.json");
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let text = stdout(&compare(&base, &new, &[]));
    for form in ["--markdown", "--lkml"] {
        let printed = compare(&base, &new, &[form]);
        assert!(printed.status.success(), "{form}: {}", stderr(&printed));
        let form_text = stdout(&printed);
        assert_ne!(form_text, text, "{form}");
        for args in [
            &["compare", b, n, form, "-"][..],
            &["compare", form, b, n],
            &["compare", b, form, n],
            &["compare", form, "-", b, n],
        ] {
            let out = pipespeed(args);
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            assert_eq!(stdout(&out), form_text, "{args:?}");
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out");
        let f = file.to_str().unwrap();
        for args in [&["compare", b, n, form, f][..], &["compare", form, f, b, n]] {
            let out = pipespeed(args);
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            assert_eq!(std::fs::read_to_string(&file).unwrap(), form_text);
            assert_eq!(stdout(&out), text, "{args:?}: the table goes to stdout");
            assert!(
                stderr(&out).contains(&format!("wrote {f}")),
                "{}",
                stderr(&out)
            );
            std::fs::remove_file(&file).unwrap();
        }
    }
}

/// Both forms at once: each to its own file, or one of them to stdout;
/// never two to stdout, never a file compare reads, and nothing written
/// when the command is refused.
#[test]
fn two_forms_go_to_two_places_and_an_input_is_never_an_output() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.json");
    let new = dir.path().join("new.json");
    std::fs::copy(Path::new(FIXTURES).join("bench-base.json"), &base).unwrap();
    std::fs::copy(Path::new(FIXTURES).join("bench-new.json"), &new).unwrap();
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let md = dir.path().join("c.md");
    let out = pipespeed(&[
        "compare",
        b,
        n,
        "--markdown",
        md.to_str().unwrap(),
        "--lkml",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("pipespeed compare --lkml"),
        "{}",
        stdout(&out)
    );
    let printed = stdout(&pipespeed(&["compare", b, n, "--markdown"]));
    assert_eq!(std::fs::read_to_string(&md).unwrap(), printed);
    std::fs::remove_file(&md).unwrap();
    let before = std::fs::read(&base).unwrap();
    let link = dir.path().join("link.json");
    std::fs::hard_link(&base, &link).unwrap();
    for (args, needles) in [
        (
            vec!["compare", b, n, "--markdown", "--lkml"],
            &["standard output"][..],
        ),
        (
            vec!["compare", b, n, "--markdown", "-", "--lkml", "/dev/stdout"],
            &["standard output"],
        ),
        (vec!["compare", b, n, "--markdown", b], &[b, "input"]),
        (vec!["compare", b, n, "--lkml", n], &[n, "input"]),
        (
            vec!["compare", b, n, "--lkml", link.to_str().unwrap()],
            &["link.json", "input"],
        ),
        (
            vec!["compare", "--markdown", "a.md", "--lkml", "b.txt", b],
            &["NEW"],
        ),
    ] {
        assert_one_line_error(&pipespeed(&args), 2, needles);
    }
    assert_eq!(
        std::fs::read(&base).unwrap(),
        before,
        "an input was written"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        3,
        "only base, new and the link"
    );
    // A comparison that fails (a file that is no result) leaves an older
    // result file as it was.
    let old = dir.path().join("old.md");
    std::fs::write(&old, "old").unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "not json").unwrap();
    let out = pipespeed(&[
        "compare",
        b,
        bad.to_str().unwrap(),
        "--markdown",
        old.to_str().unwrap(),
    ]);
    assert_one_line_error(&out, 1, &["bad.json"]);
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "old");
}

/// Text from a result file is shown with its control characters
/// escaped, wherever compare shows it (the table, its notes, the
/// warnings, Markdown): a kernel named `ESC[2J ESC[31m` would clear the
/// terminal and colour what follows.
#[test]
fn control_characters_from_a_result_file_are_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let edit = |name: &str, edit: &dyn Fn(&mut Value)| {
        let text = std::fs::read(Path::new(FIXTURES).join(name)).unwrap();
        let mut doc: Value = serde_json::from_slice(&text).unwrap();
        edit(&mut doc);
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        path
    };
    let base = edit("ipc-base.json", &|doc| {
        doc["system"]["kernel"] = "\u{1b}[2J\u{1b}[31mpwn".into();
    });
    let new = edit("ipc-new.json", &|doc| {
        for row in doc["rows"].as_array_mut().unwrap() {
            if row["mechanism"] == "io-uring" {
                row["throughput"]["reason"] = "gone\r\u{7}\u{9b}2J\u{202e}".into();
            }
        }
    });
    for extra in [&[][..], &["--markdown"][..]] {
        let out = compare(&base, &new, extra);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let shown = format!("{}{}", stdout(&out), stderr(&out));
        let raw: Vec<char> = (shown.chars())
            .filter(|&c| (c.is_control() && c != '\n') || c == '\u{202e}')
            .collect();
        assert!(raw.is_empty(), "{extra:?}: {raw:?} shown raw: {shown}");
        assert!(shown.contains("\\x1b[2J\\x1b[31mpwn"), "{extra:?}: {shown}");
        if extra.is_empty() {
            assert!(shown.contains("gone\\r\\x07\\u{9b}2J\\u{202e}"), "{shown}");
        }
    }
}

/// A directory `name` holding one ladder per median in `medians`, each
/// of 7 tight runs (+-3%) of one rung: several invocations of one side.
fn invocations(dir: &Path, name: &str, seed: u64, medians: &[f64]) -> PathBuf {
    let side = dir.join(name);
    std::fs::create_dir(&side).unwrap();
    for (i, &m) in medians.iter().enumerate() {
        let doc = ladder(vec![rung(Rung::SpliceLimit, draws(seed + i as u64, m, 7))]);
        write(&side, &format!("run{i}.json"), &doc);
    }
    side
}

/// The verdict of the only row of the first table.
fn only_verdict(base: &Path, new: &Path) -> Verdict {
    let c = compare_files((base, "b"), (new, "n"), &Bootstrap::default()).unwrap();
    match &c.tables[0].lines[0].outcome {
        Outcome::Compared(change) => change.verdict,
        other => panic!("{other:?}"),
    }
}

/// Issue 38: two default ladders of one binary, one after the other,
/// read "splice-limit +20.8% faster": the runs inside each file were
/// tight, the machine drifted between the two invocations. One file a
/// side cannot tell that drift from a change of 20%.
#[test]
fn a_twenty_percent_drift_between_single_files_is_not_called() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(
        dir.path(),
        "a.json",
        &ladder(vec![rung(Rung::SpliceLimit, draws(1, 20.0, 7))]),
    );
    let new = write(
        dir.path(),
        "b.json",
        &ladder(vec![rung(Rung::SpliceLimit, draws(2, 24.0, 7))]),
    );
    let verdict = only_verdict(&base, &new);
    assert!(
        !matches!(verdict, Verdict::Faster | Verdict::Slower),
        "{verdict:?}"
    );
    let out = compare(&base, &new, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let line = row(&text, "splice-limit");
    assert!(
        !line.contains("faster") && !line.contains("slower"),
        "{line}"
    );
    // Told how to get a verdict.
    assert!(text.contains("several files"), "{text}");
}

/// A real change is still called from one file a side: 3x with tight
/// runs is far beyond any drift between invocations.
#[test]
fn a_threefold_change_with_tight_runs_is_called_from_one_file_a_side() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(
        dir.path(),
        "a.json",
        &ladder(vec![rung(Rung::SpliceLimit, draws(1, 20.0, 7))]),
    );
    let new = write(
        dir.path(),
        "b.json",
        &ladder(vec![rung(Rung::SpliceLimit, draws(2, 60.0, 7))]),
    );
    assert_eq!(only_verdict(&base, &new), Verdict::Faster);
    assert_eq!(only_verdict(&new, &base), Verdict::Slower);
}

/// Several files a side: the spread between the invocations is measured,
/// so a 20% change that every invocation shows is called, and one that
/// the invocations' own spread explains is not.
#[test]
fn several_files_a_side_judge_by_the_spread_between_them() {
    let dir = tempfile::tempdir().unwrap();
    let base = invocations(dir.path(), "base", 1, &[20.0, 20.3, 19.8, 20.1]);
    let new = invocations(dir.path(), "new", 11, &[24.0, 23.7, 24.2, 24.1]);
    assert_eq!(only_verdict(&base, &new), Verdict::Faster);
    // Invocations that drift by 20% among themselves: no verdict.
    let wide_base = invocations(dir.path(), "wide-base", 21, &[20.0, 24.0, 20.5, 23.5]);
    let wide_new = invocations(dir.path(), "wide-new", 31, &[24.0, 20.2, 23.8, 21.0]);
    let verdict = only_verdict(&wide_base, &wide_new);
    assert!(
        !matches!(verdict, Verdict::Faster | Verdict::Slower),
        "{verdict:?}"
    );
    let out = compare(&base, &new, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(row(&stdout(&out), "splice-limit").contains("faster"));
}

const PIPE_BENCH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pipe_bench");

/// Every compared line's verdict, of every table (metric), by row.
fn verdicts(c: &pipespeed::compare::Comparison) -> Vec<(String, Option<Verdict>)> {
    (c.tables.iter())
        .flat_map(|t| t.lines.iter())
        .map(|l| match &l.outcome {
            Outcome::Compared(change) => (l.row.clone(), Some(change.verdict)),
            _ => (l.row.clone(), None),
        })
        .collect()
}

/// Copies of the real pipe_bench logs `names` into `dir/side`, a side
/// of several logs.
fn pipe_bench_side(dir: &Path, side: &str, logs: &[String]) -> PathBuf {
    let path = dir.join(side);
    std::fs::create_dir(&path).unwrap();
    for (i, text) in logs.iter().enumerate() {
        std::fs::write(path.join(format!("run{i}.log")), text).unwrap();
    }
    path
}

fn pipe_bench_log(name: &str) -> String {
    std::fs::read_to_string(Path::new(PIPE_BENCH).join(name)).unwrap()
}

/// `log` with every cell's writes (total, rate and MiB/s) times
/// `factor`, the rest as it was.
fn scaled(log: &str, factor: f64) -> String {
    let times = |v: &str| ((v.parse::<f64>().unwrap() * factor).round() as u64).to_string();
    (log.lines())
        .map(|line| {
            if let Some(rest) = line.strip_prefix("writes: total=") {
                let (total, rate) = rest.split_once(" rate=").unwrap();
                let rate = rate.strip_suffix("/s").unwrap();
                format!("writes: total={} rate={}/s\n", times(total), times(rate))
            } else if let Some(v) = line.strip_prefix("throughput_MBps: ") {
                let mib = v.parse::<f64>().unwrap() * factor;
                format!("throughput_MBps: {mib:.2}\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect()
}

/// Six real 1 s sweeps of pipe_bench on one kernel (the committed
/// fixtures), three a side: their runs spread far past 1.25x, and no
/// cell is called; one log a side has one run a cell, and none is
/// judged either.
#[test]
fn pipe_bench_logs_of_one_kernel_are_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let logs: Vec<String> = (1..=6)
        .map(|i| pipe_bench_log(&format!("sweep-d1-{i}.log")))
        .collect();
    let base = pipe_bench_side(dir.path(), "a", &logs[..3]);
    let new = pipe_bench_side(dir.path(), "b", &logs[3..]);
    let c = compare_files((&base, "a"), (&new, "b"), &Bootstrap::default()).unwrap();
    assert_eq!(c.kind.name(), "contend");
    let got = verdicts(&c);
    // pipe_bench's grid, both metrics.
    assert_eq!(got.len(), 18, "{got:?}");
    for (row, verdict) in &got {
        assert!(
            !matches!(verdict, Some(Verdict::Faster | Verdict::Slower)),
            "{row}: {verdict:?}"
        );
    }
    let one = |i: usize| Path::new(PIPE_BENCH).join(format!("sweep-d1-{i}.log"));
    let c = compare_files((&one(1), "a"), (&one(2), "b"), &Bootstrap::default()).unwrap();
    for (row, verdict) in verdicts(&c) {
        assert_eq!(verdict, Some(Verdict::TooFewRuns), "{row}");
    }
    // The text says so, within 80 columns, and names no system it was
    // not told.
    let run = |lkml: &[&str]| {
        Command::new(EXE)
            .arg("compare")
            .args(lkml)
            .args([&base, &new])
            .env("COLUMNS", "80")
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("answer: no change called"), "{text}");
    assert!(text.contains("for a verdict: more logs a side"), "{text}");
    assert!(
        !text.contains("kernel ;") && !text.contains("commit"),
        "{text}"
    );
    assert!(text.contains(" (new),\n  pipe_bench output\n"), "{text}");
    crate::common::assert_fits(&text, 80);
    // The mail's form names the tool that measured.
    let mail = stdout(&run(&["--lkml", "-"]));
    assert!(
        mail.starts_with("pipe_bench output: base -> patched (change)"),
        "{mail}"
    );
}

/// A 2x change between two sides of five pipe_bench logs each, derived
/// from one real sweep: the base its rates times 0.98 to 1.02, the new
/// the same halved. Every cell's writes/s is called slower, and its
/// latency (unchanged) is not called.
#[test]
fn a_halved_pipe_bench_rate_is_called_slower() {
    let dir = tempfile::tempdir().unwrap();
    let real = pipe_bench_log("sweep-d1-1.log");
    let jitter = [1.0, 0.98, 1.02, 0.99, 1.01];
    let base: Vec<String> = jitter.iter().map(|f| scaled(&real, *f)).collect();
    let new: Vec<String> = jitter.iter().map(|f| scaled(&real, f * 0.5)).collect();
    let base = pipe_bench_side(dir.path(), "before", &base);
    let new = pipe_bench_side(dir.path(), "after", &new);
    let c = compare_files((&base, "before"), (&new, "after"), &Bootstrap::default()).unwrap();
    let writes = &c.tables[0];
    assert_eq!(writes.lines.len(), 9);
    for line in &writes.lines {
        let Outcome::Compared(change) = &line.outcome else {
            panic!("{}: {:?}", line.row, line.outcome)
        };
        assert_eq!(change.verdict, Verdict::Slower, "{}", line.row);
    }
    for line in &c.tables[1].lines {
        let Outcome::Compared(change) = &line.outcome else {
            panic!("{}: {:?}", line.row, line.outcome)
        };
        assert_ne!(change.verdict, Verdict::Slower, "{}", line.row);
        assert_ne!(change.verdict, Verdict::Faster, "{}", line.row);
    }
    // A pipe_bench log and pipespeed's JSON of another kind: refused.
    let other = Path::new(FIXTURES).join("bench-base.json");
    let err = compare_files(
        (&base.join("run0.log"), "a.log"),
        (&other, "b.json"),
        &Bootstrap::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("a.log is a contend result"), "{err}");
}

/// A text that starts as pipe_bench's and then is not: its line named.
#[test]
fn a_broken_pipe_bench_log_is_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.log");
    let real = pipe_bench_log("w1r1.log");
    std::fs::write(&path, real.replace("lat_avg_ns", "lat_avg")).unwrap();
    let out = compare(&path, &path, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("cut.log is not pipe_bench output: line 4"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
