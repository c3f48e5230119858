//! The verdicts of latency, contend and ipc on fixed results (never on
//! live timings), quiet and loaded, each compared with its snapshot in
//! tests/snapshots/ (`PIPESPEED_UPDATE_SNAPSHOTS=1 cargo test --test
//! kinds_verdict` rewrites them); the noise said once in each default
//! text, each noisy row's paragraph under --explain; the JSON's
//! `verdict`, the same lines; a noisy ipc run's default text a fraction
//! of its --explain.

#![allow(clippy::unwrap_used)]

use crate::fixtures;

use fixtures::snapshot;
use pipespeed::bench::contend::ContendResult;
use pipespeed::bench::core::Status;
use pipespeed::bench::ipc::{IpcResult, Mechanism};
use pipespeed::bench::latency::LatencyResult;
use pipespeed::report::{Exporter, Json, Text};

fn text<R>(result: &R, explain: bool) -> String
where
    Text: Exporter<R>,
{
    String::from_utf8(Text::new(explain).export(result).unwrap()).unwrap()
}

/// The verdict's lines as the JSON has them, unwrapped, one a line.
fn verdict_of(text: &str) -> String {
    unwrapped(&printed_verdict(text)).join("\n") + "\n"
}

/// The verdict as the text prints it: the block between blank lines
/// that holds the trust line (last, where the eye lands).
fn printed_verdict(text: &str) -> String {
    let block: Vec<&str> = (text.trim_end().split("\n\n"))
        .find(|block| block.contains("\ntrust:      ") || block.starts_with("trust:      "))
        .unwrap_or_default()
        .lines()
        .collect();
    block.join("\n") + "\n"
}

/// Every line of the verdict fits 100 columns, and the verdict is 3 to 6
/// lines long as printed.
fn fits(verdict: &str) {
    let lines: Vec<&str> = verdict.lines().collect();
    assert!((2..=7).contains(&lines.len()), "{verdict}");
    for line in &lines {
        assert!(line.chars().count() <= 100, "over 100 columns: {line}");
    }
}

/// The JSON's `verdict.lines`, and that the document reads back as the
/// same result.
fn json_lines<R>(result: &R) -> Vec<String>
where
    Json: Exporter<R>,
    R: serde::de::DeserializeOwned,
{
    let bytes = Json.export(result).unwrap();
    // Read back, it gives the same verdict (the figures may differ in
    // their last digit: serde_json's floats).
    let back: R = serde_json::from_slice(&bytes).unwrap();
    let again: serde_json::Value = serde_json::from_slice(&Json.export(&back).unwrap()).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(again["verdict"]["lines"], doc["verdict"]["lines"]);
    let trust = &doc["verdict"]["trust"]["line"];
    assert!(trust.is_string(), "{doc}");
    serde_json::from_value(doc["verdict"]["lines"].clone()).unwrap()
}

/// The verdict's lines joined as the text wraps them (a continuation
/// line starts with the label's indent), unwrapped again.
fn unwrapped(verdict: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in verdict.lines() {
        match (line.strip_prefix("            "), out.last_mut()) {
            (Some(rest), Some(last)) => {
                last.push(' ');
                last.push_str(rest);
            }
            _ => out.push(line.to_string()),
        }
    }
    out
}

fn check_verdict<R>(name: &str, result: &R) -> String
where
    Text: Exporter<R>,
    Json: Exporter<R>,
    R: serde::de::DeserializeOwned,
{
    let t = text(result, false);
    let verdict = printed_verdict(&t);
    snapshot(name, &verdict);
    fits(&verdict);
    assert_eq!(json_lines(result), unwrapped(&verdict), "{t}");
    t
}

#[test]
fn latency_quiet_says_each_size_its_placement_and_quiet() {
    let t = check_verdict("verdict-latency-quiet.txt", &fixtures::latency_quiet());
    let v = verdict_of(&t);
    assert!(
        v.starts_with("round trip: 1B p50 6.20 us (p99 18.60 us), 64KiB p50 30.10 us"),
        "{v}"
    );
    assert!(v.contains("both on CPU 0"), "{v}");
    assert!(v.contains("trust:      quiet: figures within +-"), "{v}");
    // The figures are the table's.
    assert!(
        t.contains("   6.20 us  ") && t.contains("  30.10 us  "),
        "{t}"
    );
    assert!(!t.contains("\nnoisy: "), "{t}");
}

#[test]
fn latency_loaded_says_load_what_is_missing_and_to_rerun() {
    let r = fixtures::latency_loaded();
    let t = check_verdict("verdict-latency-loaded.txt", &r);
    let v = verdict_of(&t);
    assert!(v.contains("missing:    1MiB"), "{v}");
    assert!(
        v.contains("measured under load (other processes used 1.20 CPUs)"),
        "{v}"
    );
    assert!(v.contains("rerun on an idle machine"), "{v}");
    // The noise said once; each noisy size's paragraph under --explain.
    assert_eq!(t.matches("\nnoisy: ").count(), 1, "{t}");
    assert!(t.contains("\nnoisy: 2 of 3 rows (1B, 4KiB) spread"), "{t}");
    assert_eq!(t.matches("likely: ").count(), 1, "{t}");
    let explained = text(&r, true);
    assert!(
        explained.contains("\nnoisy: 1B median round trip (5 runs from 21.00 us to 62.00 us"),
        "{explained}"
    );
    assert!(
        explained.contains("\nnoisy: 4KiB median round trip"),
        "{explained}"
    );
    // The JSON keeps every size's diagnosis.
    let doc: serde_json::Value = serde_json::from_slice(&Json.export(&r).unwrap()).unwrap();
    for size in 0..2 {
        assert!(
            doc["rows"][size]["rtt_p50_ns"]["diagnosis"]["causes"].is_array(),
            "{doc}"
        );
    }
}

#[test]
fn contend_quiet_says_the_best_and_worst_cell_and_how_it_scales() {
    let t = check_verdict("verdict-contend-quiet.txt", &fixtures::contend_quiet());
    let v = verdict_of(&t);
    assert!(
        v.starts_with("best:       1x1 40000 writes/s (2500.0 MiB/s)"),
        "{v}"
    );
    assert!(v.contains("worst:      5x10 "), "{v}");
    assert!(
        v.contains("scaling:    writes/s 1 -> 5 writers (1 reader): 0.50x; 1 -> 10 readers (1 writer): 0.69x"),
        "{v}"
    );
    assert!(!v.contains("verify"), "not asked: {v}");
    // The table's figures.
    let cells = |l: &str| l.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
    assert!(t.lines().any(|l| cells(l) == "1 1 40000 2500.0"), "{t}");
    assert!(!t.contains("\nnoisy: "), "{t}");
}

#[test]
fn contend_verify_names_the_cell_that_failed() {
    let r = fixtures::contend_verified();
    snapshot(
        "verdict-contend-verify.txt",
        &printed_verdict(&text(&r, false)),
    );
    let v = verdict_of(&text(&r, false));
    assert!(
        v.contains("verify:     FAILED in 1 of 9 cells (5x10)"),
        "{v}"
    );
    let mut ok = r.clone();
    ok.rows.retain(|row| (row.writers, row.readers) != (5, 10));
    let v = verdict_of(&text(&ok, false));
    assert!(
        v.contains("verify:     every message received exactly once in all 8 cells"),
        "{v}"
    );
}

#[test]
fn contend_loaded_says_its_noise_once() {
    let r: ContendResult = fixtures::contend_loaded();
    let t = check_verdict("verdict-contend-loaded.txt", &r);
    assert!(verdict_of(&t).contains("measured under load"), "{t}");
    assert_eq!(t.matches("\nnoisy: ").count(), 1, "{t}");
    assert!(t.contains("\nnoisy: all 9 rows spread"), "{t}");
    let explained = text(&r, true);
    assert_eq!(
        explained.matches(" writes/s (5 runs from ").count(),
        9,
        "{explained}"
    );
}

#[test]
fn ipc_quiet_says_the_fastest_per_size_and_pipes_place() {
    let r: IpcResult = fixtures::ipc_quiet();
    let t = check_verdict("verdict-ipc-quiet.txt", &r);
    let v = verdict_of(&t);
    assert!(
        v.starts_with("throughput: fastest shm at 64B/64KiB; pipe 3rd of 5\n"),
        "{v}"
    );
    assert!(
        v.contains("round trip: fastest shm at 64B/64KiB; pipe 2nd of 4\n"),
        "{v}"
    );
    // The figures are the tables' (the verdict names, the tables say how
    // fast): shm first at each size, 2.40x pipe at 64 KiB.
    let first = |size: &str| {
        let start = t.find(&format!("\n{size} messages\n")).unwrap();
        t[start..].lines().nth(3).unwrap().to_string()
    };
    let cells = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(cells(&first("64B"))[..2], ["shm", "1.20"], "{t}");
    assert_eq!(cells(&first("64KiB"))[..2], ["shm", "48.00"], "{t}");
    assert!(cells(&first("64KiB")).contains(&"2.40x".to_string()), "{t}");
    assert!(t.contains("  3.75 us ") && t.contains("  10.00 us "), "{t}");
    // What cannot run here is said with its reason above the verdict.
    assert!(
        t.contains("\nio-uring: unavailable: io_uring_setup: Operation not permitted\n"),
        "{t}"
    );
    assert!(!v.contains("io-uring"), "{v}");
    assert!(!v.contains("pipe-splice"), "no round trip by design: {v}");
    assert!(
        t.contains("\nno round trip, by design: pipe-splice (why: --explain)\n"),
        "{t}"
    );
    // A mechanism unavailable at some sizes only is named with them.
    let mut some = r.clone();
    for row in &mut some.rows {
        if row.mechanism == Mechanism::UnixDgram && row.size == 65536 {
            row.throughput.as_mut().unwrap().status = Status::Unavailable;
        }
    }
    let t = text(&some, false);
    assert!(
        t.contains("\nunix-dgram throughput at 64KiB: unavailable: "),
        "{t}"
    );
    assert!(t.contains("\nio-uring: unavailable: "), "{t}");
    // A row that failed is in the answer.
    for row in &mut some.rows {
        if row.mechanism == Mechanism::UnixDgram && row.size == 65536 {
            row.throughput.as_mut().unwrap().status = Status::Failed;
        }
    }
    let v = verdict_of(&text(&some, false));
    assert!(
        v.contains("\nfailed:     unix-dgram 64KiB (the notes say why)\n"),
        "{v}"
    );
}

#[test]
fn a_noisy_ipc_run_says_its_noise_once_and_is_far_shorter_than_with_explain() {
    let r: IpcResult = fixtures::ipc_loaded();
    let t = check_verdict("verdict-ipc-loaded.txt", &r);
    assert_eq!(t.matches("\nnoisy: ").count(), 1, "{t}");
    assert_eq!(t.matches("what to do: ").count(), 1, "{t}");
    let explained = text(&r, true);
    let paragraphs = explained.matches("\nnoisy: ").count();
    // 11 mechanisms that ran, 4 sizes, throughput and (but for
    // pipe-splice and tcp-zerocopy) round trips: every one noisy.
    assert_eq!(paragraphs, 1 + 11 * 4 + 9 * 4, "{explained}");
    let (short, long) = (t.lines().count(), explained.lines().count());
    assert!(
        short * 3 < long,
        "{short} lines against {long} with --explain"
    );
    assert!(short < 120, "{short} lines:\n{t}");
}

#[test]
fn a_result_without_rows_says_so_in_its_verdict() {
    let mut l: LatencyResult = fixtures::latency();
    l.rows.clear();
    assert!(
        verdict_of(&text(&l, false)).starts_with("round trip: no size was measured"),
        "{}",
        text(&l, false)
    );
    let mut c = fixtures::contend();
    c.rows.clear();
    assert!(verdict_of(&text(&c, false)).starts_with("rate:       no cell was measured"));
    let mut i = fixtures::ipc_quiet();
    i.rows.clear();
    assert!(verdict_of(&text(&i, false)).starts_with("fastest:    no mechanism was measured"));
}

#[test]
fn the_ipc_page_opens_with_the_verdict() {
    use pipespeed::report::{Exporter, Html};
    let r: IpcResult = fixtures::ipc_quiet();
    let page = String::from_utf8(Html.export(&r).unwrap()).unwrap();
    let answer = page
        .find("<section id=\"verdict\">")
        .expect("a verdict section");
    assert!(answer < page.find("id=\"system\"").unwrap(), "{page}");
    for line in r.verdict().lines {
        let (head, _) = line.split_once(':').unwrap();
        assert!(
            page.contains(&format!("<li><strong>{head}:</strong> ")),
            "{head}: {page}"
        );
    }
}
