//! The ladder's verdict on fixed results (never on live timings): a quiet
//! machine, a loaded one, a machine of one CPU and a kernel whose vmsplice
//! copies, each compared with its snapshot in tests/snapshots/, and the
//! default text of a noisy run kept to one screen.

#![allow(clippy::unwrap_used)]

use crate::fixtures;

use fixtures::{rung, snapshot, system};
use pipespeed::bench::core::{Ends, Header, NoiseSummary, Placement, Series, Status};
use pipespeed::bench::ladder::{
    CopyCheck, LadderResult, PlacementCheck, PlacementRow, Rung, RungResult, SCHEMA, Wakeup,
};
use pipespeed::report::{Exporter, Json, Text};
use pipespeed::sys::RunNoise;

const TWO: Placement = Placement::Pinned {
    writer_cpu: 0,
    reader_cpu: 1,
};
const ONE: Placement = Placement::Pinned {
    writer_cpu: 0,
    reader_cpu: 0,
};

/// Five runs around `median`, `spread` apart from each other (as a share),
/// each made while other processes used `other` CPUs; diagnosed.
fn series(median: f64, spread: f64, other: f64) -> Series {
    let runs = [
        1.0 - 2.0 * spread,
        1.0 - spread,
        1.0,
        1.0 + spread,
        1.0 + 2.0 * spread,
    ];
    let mut s = Series::of(&runs.map(|x| x * median));
    // Under load, as this VM is with stress-ng beside it: the hypervisor
    // steals too and the ends are preempted.
    let loaded = other > 0.5;
    s.noise = vec![
        RunNoise {
            wall_s: 0.4,
            other_cpu_s: 0.4 * other,
            steal_s: if loaded { 0.4 * 0.06 } else { 0.0 },
            involuntary_switches: if loaded { 600 } else { 0 },
            ..RunNoise::default()
        };
        5
    ];
    s.diagnose(Ends::default());
    s
}

fn measured(name: Rung, median: f64, spread: f64, other: f64, placement: Placement) -> RungResult {
    let mut r = rung(name, &[], None);
    r.gib_s = series(median, spread, other);
    r.placement = (!matches!(name, Rung::Memcpy | Rung::SpliceLimit)).then_some(placement);
    if name.vmsplices() {
        r.copy_check = Some(CopyCheck::References);
    }
    r
}

fn other(placement: Placement, median: f64, spread: f64, load: f64) -> Option<PlacementRow> {
    Some(PlacementRow {
        placement: Some(placement),
        kind: placement.kind().into(),
        status: Status::Ok,
        reason: None,
        gib_s: series(median, spread, load),
    })
}

/// This VM's ladder as the default run measures it: the rungs that block
/// faster on one CPU (their two-CPU figures beside them), the busy ones on
/// two; `spread` and `load` as given.
fn ladder(spread: f64, load: f64) -> LadderResult {
    let m = |name, median, placement| measured(name, median, spread, load, placement);
    let mut rungs = vec![
        m(Rung::Memcpy, 36.0, TWO),
        m(Rung::WriteRead, 3.3, ONE),
        m(Rung::VmspliceRead, 10.5, ONE),
        m(Rung::VmspliceSplice, 13.5, ONE),
        m(Rung::VmspliceSpliceHuge, 15.4, ONE),
        m(Rung::VmspliceSpliceHugeBusy, 50.0, TWO),
        m(Rung::Tuned, 76.0, TWO),
        m(Rung::SpliceLimit, 71.5, TWO),
    ];
    for (r, slower) in rungs
        .iter_mut()
        .zip([0.0, 1.94, 6.1, 8.0, 9.1, 0.0, 0.0, 0.0])
    {
        if slower > 0.0 {
            r.other_placement = other(TWO, slower, spread, load);
        }
    }
    for r in &mut rungs {
        r.copies = r.name.copies();
    }
    let mut result = LadderResult {
        header: Header {
            schema: SCHEMA.into(),
            pipespeed_version: "0.1.0".into(),
            build: None,
            system: system(),
            interrupted: false,
        },
        placement: TWO,
        runs: 5,
        max_runs: 10,
        noise: Some(NoiseSummary {
            runs: 60,
            steal_share: 0.002,
            other_share: load,
            max_load_avg_1m: 2.0 + load,
        }),
        placement_check: None,
        verify: false,
        // As long as a seed from the clock: the header's lines must fit.
        seed: 1_795_629_536_063_174_828,
        rungs,
        baseline: None,
        verdict: None,
    };
    let wr = result.rungs[1].clone();
    let wr_other = wr.other_placement.clone().unwrap();
    result.placement_check = Some(PlacementCheck {
        rung: Rung::WriteRead,
        runs: 3,
        max_runs: 10,
        rows: vec![
            PlacementRow {
                placement: wr.placement,
                kind: "same-cpu".into(),
                status: Status::Ok,
                reason: None,
                gib_s: wr.gib_s,
            },
            wr_other,
            other(Placement::Unpinned, 1.9, spread, load).unwrap(),
        ],
        wakeup: Some(Wakeup {
            same_cpu_rtt_ns: 6_160,
            different_cpu_rtt_ns: 11_210,
            cross_cpu_wakeup_ns: 2_525.0,
        }),
        wakeup_reason: None,
    });
    result.conclude();
    result
}

fn quiet() -> LadderResult {
    ladder(0.01, 0.02)
}

fn loaded() -> LadderResult {
    ladder(0.3, 1.2)
}

/// One CPU: unpinned (all there is), no alternative, busy looping
/// unavailable, tuned blocking.
fn one_cpu() -> LadderResult {
    let mut result = quiet();
    result.header.system.cpus_allowed = vec![0];
    result.header.system.cpus_online = 1;
    result.placement = Placement::Unpinned;
    result.placement_check = None;
    for r in &mut result.rungs {
        r.other_placement = None;
        if r.placement.is_some() {
            r.placement = Some(Placement::Unpinned);
        }
        if r.name == Rung::VmspliceSpliceHugeBusy {
            *r = rung(r.name, &[], None);
            r.status = Status::Unavailable;
            r.reason = Some(
                "busy looping needs two CPUs: on one, each end spins away the other's time".into(),
            );
        }
        if r.name == Rung::Tuned {
            r.gib_s = series(21.0, 0.01, 0.02);
        }
    }
    result.conclude();
    result
}

/// A kernel whose vmsplice copies (the start-up check saw it): every
/// vmsplice rung copies once more, and memcpy is their limit.
fn copying_kernel() -> LadderResult {
    let mut result = quiet();
    for r in &mut result.rungs {
        if r.name.vmsplices() && r.name != Rung::SpliceLimit {
            r.copy_check = Some(CopyCheck::Copies);
            r.copies += 1;
        }
    }
    result.conclude();
    result
}

fn verdict(result: &LadderResult) -> String {
    let mut lines = result.verdict.as_ref().unwrap().lines.join("\n");
    lines.push('\n');
    lines
}

fn text(result: &LadderResult, explain: bool) -> String {
    String::from_utf8(Text::new(explain).export(result).unwrap()).unwrap()
}

/// The default text of `result` laid out for `width` columns.
fn text_at(result: &LadderResult, width: usize) -> String {
    let text = Text {
        explain: false,
        width,
    };
    String::from_utf8(text.export(result).unwrap()).unwrap()
}

#[test]
fn the_verdicts_match_their_snapshots() {
    snapshot("verdict-quiet.txt", &verdict(&quiet()));
    snapshot("verdict-loaded.txt", &verdict(&loaded()));
    snapshot("verdict-one-cpu.txt", &verdict(&one_cpu()));
    snapshot("verdict-copying-kernel.txt", &verdict(&copying_kernel()));
    snapshot("ladder-loaded.txt", &text(&loaded(), false));
}

#[test]
fn the_baseline_is_write_read_in_its_fastest_placement_and_the_steps_are_against_it() {
    let result = quiet();
    let baseline = result.baseline.as_ref().unwrap();
    assert_eq!(
        (baseline.placement.as_str(), baseline.gib_s),
        ("same-cpu", 3.3)
    );
    let tuned = result.rungs.iter().find(|r| r.name == Rung::Tuned).unwrap();
    let x = tuned.speedup_vs_write_read.unwrap();
    assert!((x - 76.0 / 3.3).abs() < 1e-9, "{x}");
    let lines = &result.verdict.as_ref().unwrap().lines;
    assert!(lines[0].starts_with("baseline: write-read 3.30 GiB/s on one CPU (1.94 on two"));
    assert!(
        lines[1]
            .starts_with("fastest:  tuned 76.00 GiB/s, 23.0x the baseline, 106% of splice-limit")
    );
    // The table and the verdict say the same.
    let text = text(&result, false);
    let row = text.lines().find(|l| l.starts_with("tuned ")).unwrap();
    assert!(row.ends_with(" 23.0x"), "{row}");
    assert!(!text.contains("(not "), "no second set of figures: {text}");
}

#[test]
fn the_trust_line_says_quiet_or_loaded_with_the_figures() {
    let quiet = quiet();
    let line = &quiet.verdict.as_ref().unwrap().trust.line;
    assert!(line.starts_with("quiet: figures within +-"), "{line}");
    let loaded = loaded();
    let trust = &loaded.verdict.as_ref().unwrap().trust;
    assert!(trust.under_load && trust.noisy_rows > 0, "{trust:?}");
    assert!(
        trust
            .line
            .starts_with("measured under load (other processes used 1.20 CPUs)"),
        "{}",
        trust.line
    );
    assert!(
        trust.line.ends_with("rerun on an idle machine"),
        "{}",
        trust.line
    );
}

/// Under load, the default text still fits 30 lines of 80 or 120
/// columns, and says its noise once: in the trust line, at the end (the
/// rows are marked noisy in the table); the paragraphs on each noisy
/// row's causes are in --explain.
#[test]
fn a_noisy_default_run_fits_one_screen_and_says_its_noise_once() {
    for width in [80, 100, 120] {
        let text = text_at(&loaded(), width);
        let lines = text.lines().count();
        assert!(lines <= 30, "{lines} lines at {width}:\n{text}");
        assert!(
            text.lines().all(|l| l.chars().count() <= width),
            "{width}:\n{text}"
        );
        // Once, wherever the answer's wrapping breaks the words.
        let unwrapped = text.replace("\n          ", " ");
        assert_eq!(unwrapped.matches("rows noisy").count(), 1, "{text}");
        assert_eq!(text.matches("noisy: ").count(), 0, "{text}");
        assert_eq!(text.matches("\ntrust:    ").count(), 1, "{text}");
        let last = text
            .lines()
            .rev()
            .take_while(|l| l.starts_with(' '))
            .count();
        let trust = text.lines().rev().nth(last).unwrap_or_default();
        assert!(trust.starts_with("trust:    "), "{text}");
        // The steps: each over the one before, none below 1x unsaid.
        let steps = text.replace("\n          ", " ");
        let steps = steps.lines().find(|l| l.starts_with("steps:")).unwrap();
        assert_eq!(
            steps,
            "steps:    vmsplice 3.2x, splice out 1.3x, huge pages 1.1x, ends spin 3.2x, \
             max pipe 1.5x, each over the rung before"
        );
    }
    // The detail stays, under --explain.
    let explained = self::text(&loaded(), true);
    assert!(explained.matches("noisy: ").count() > 8, "{explained}");
    assert!(explained.matches("what to do: ").count() > 8, "{explained}");
}

/// A step slower than the one before says so: a loss never reads as a
/// gain.
#[test]
fn a_step_that_loses_says_slower() {
    let mut result = loaded();
    let busy = (result.rungs.iter_mut())
        .find(|r| r.name == Rung::VmspliceSpliceHugeBusy)
        .unwrap();
    busy.gib_s = series(5.0, 0.01, 0.0);
    result.conclude();
    let lines = &result.verdict.as_ref().unwrap().lines;
    let steps = lines.iter().find(|l| l.starts_with("steps:")).unwrap();
    assert!(
        steps.contains("huge pages 1.1x, ends spin 3.1x slower, max pipe 15.2x,"),
        "{steps}"
    );
}

#[test]
fn the_json_has_the_verdict_and_the_baseline() {
    let value: serde_json::Value = serde_json::from_slice(&Json.export(&quiet()).unwrap()).unwrap();
    assert_eq!(value["baseline"]["placement"], "same-cpu");
    assert_eq!(value["verdict"]["fastest"]["rung"], "tuned");
    assert!(value["verdict"]["lines"].as_array().unwrap().len() <= 6);
    assert_eq!(value["rungs"][1]["placement"]["kind"], "pinned");
    assert_eq!(
        value["rungs"][1]["other_placement"]["kind"],
        "different-cpu"
    );
    // And it reads back as it was written.
    let back: LadderResult = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), value);
}

#[test]
fn every_verdict_is_three_to_six_lines() {
    for result in [quiet(), loaded(), one_cpu(), copying_kernel()] {
        let n = result.verdict.as_ref().unwrap().lines.len();
        assert!((3..=6).contains(&n), "{n}: {}", verdict(&result));
    }
}

#[test]
fn the_markdown_leads_with_the_verdict_and_says_its_noise_once() {
    use pipespeed::report::Markdown;
    let md = String::from_utf8(Markdown.export(&loaded()).unwrap()).unwrap();
    assert!(
        md.contains("\n- **baseline:** write-read 3.30 GiB/s on one CPU"),
        "{md}"
    );
    assert!(md.contains("\n- **trust:** measured under load"), "{md}");
    assert!(md.find("- **baseline:**") < md.find("| rung |"), "{md}");
    assert!(md.contains("| pipe | ends | median GiB/s |"), "{md}");
    assert!(md.contains("| same-cpu |"), "{md}");
    assert_eq!(md.matches("noisy: ").count(), 1, "{md}");
}

#[test]
fn the_page_opens_with_the_verdict_and_its_table_has_the_ends_column() {
    let page = pipespeed::bench::ladder::html_report(&loaded()).unwrap();
    let verdict = page
        .find("<section id=\"verdict\">")
        .expect("a verdict section");
    assert!(verdict < page.find("id=\"system\"").unwrap(), "{page}");
    assert!(
        page.contains("<li><strong>baseline:</strong> write-read 3.30 GiB/s on one CPU"),
        "{page}"
    );
    assert!(page.contains("<th>ends</th>"), "{page}");
    assert!(page.contains("<td>same-cpu</td>"), "{page}");
}

/// A `pipespeed.bench/2` file (written by 8927823's debug build: `bench
/// --rungs write-read,vmsplice-read --runs 2 --bytes 16M
/// --placement-runs 2 --warmup-runs 1 --seed 2`) still loads: without a
/// placement per rung, a baseline or a verdict, its speed-ups as written;
/// concluded again, it gets a verdict from its own figures.
#[test]
fn a_bench_2_file_loads_and_can_be_concluded() {
    let text = include_str!("fixtures/bench-v2.json");
    let mut result: LadderResult = serde_json::from_str(text).unwrap();
    assert_eq!(result.header.schema, "pipespeed.bench/2");
    assert!(result.baseline.is_none() && result.verdict.is_none());
    assert!(result.rungs.iter().all(|r| r.placement.is_none()));
    let old: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        result.rungs[1].speedup_vs_write_read,
        old["rungs"][1]["speedup_vs_write_read"].as_f64()
    );
    result.conclude();
    let verdict = result.verdict.as_ref().unwrap();
    assert!(
        verdict.lines[0].starts_with("baseline: write-read "),
        "{verdict:?}"
    );
    let best = result.placement_check.as_ref().unwrap().best().unwrap();
    assert!(result.baseline.as_ref().unwrap().gib_s >= best.median().unwrap());
}

/// Every ladder's text, default and --explain, fits 80 and 120 columns;
/// a quiet default run fits 24 lines, its answer the last six or fewer.
#[test]
fn every_ladder_text_fits_the_width_and_a_quiet_one_a_screen() {
    let ladders = [
        quiet(),
        loaded(),
        one_cpu(),
        copying_kernel(),
        fixtures::ladder_checked(),
        fixtures::ladder_profiled(),
    ]
    .map(|mut r| {
        r.conclude();
        r
    });
    for width in [80, 120] {
        for (i, result) in ladders.iter().enumerate() {
            for explain in [false, true] {
                let text = Text { explain, width }.export(result).unwrap();
                let text = String::from_utf8(text).unwrap();
                for line in text.lines() {
                    assert!(
                        line.chars().count() <= width,
                        "ladder {i} at {width}, explain {explain}: {line:?}\n{text}"
                    );
                }
                let answer = text.lines().rev().take_while(|l| !l.is_empty()).count();
                assert!(
                    text.lines()
                        .rev()
                        .nth(answer - 1)
                        .unwrap()
                        .starts_with("baseline: "),
                    "the answer last: {text}"
                );
            }
        }
        let text = text_at(&quiet(), width);
        assert!(text.lines().count() <= 24, "{text}");
        let answer = text.lines().rev().take_while(|l| !l.is_empty()).count();
        assert!(answer <= 6, "{answer} lines of answer at {width}:\n{text}");
    }
}
