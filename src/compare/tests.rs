//! Comparisons of results built from the real types, and the builders
//! the renderers' tests share.
use crate::bench::core::{NoiseSummary, Placement, Status};

use super::*;
use crate::bench::contend::{self, ContendResult, RunResult};
use crate::bench::core::harness::Header;
use crate::bench::hist::LatencyNs;
use crate::bench::ladder::{self, LadderResult, Rung, RungResult};
use crate::bench::latency::{self, LatencyConfig, LatencyResult, LatencyRow, Span, TripRun};
use crate::build_info::BuildInfo;
use crate::report::fixtures::machine;
use crate::sys::SystemFacts;
use crate::wait::Wait;

pub(super) fn facts() -> SystemFacts {
    SystemFacts {
        kernel: "6.1.0".into(),
        ..machine()
    }
}

fn header(schema: &str) -> Header {
    Header {
        schema: schema.into(),
        pipespeed_version: "0.1.0".into(),
        build: None,
        system: facts(),
        interrupted: false,
    }
}

pub(super) fn rung(name: Rung, runs: &[f64]) -> RungResult {
    let mut r = RungResult::new(name, 256 * 1024, None);
    r.bytes_per_run = 1 << 30;
    r.gib_s = crate::bench::core::Series::of(runs);
    r
}

pub(super) fn bench(rungs: Vec<RungResult>) -> Document {
    Document::Bench(Box::new(LadderResult {
        header: header(ladder::SCHEMA),
        placement: Placement::Pinned {
            writer_cpu: 0,
            reader_cpu: 1,
        },
        runs: 5,
        max_runs: 5,
        noise: None,
        placement_check: None,
        verify: false,
        seed: 1,
        rungs,
        baseline: None,
        verdict: None,
    }))
}

/// Per run of a latency row: (p50 ns, p99 ns, round trips/s).
pub(super) type RttRuns<'a> = &'a [(u64, u64, f64)];
/// Per run of a contend cell: (writes/s, p99 write latency ns).
pub(super) type WriteRuns<'a> = &'a [(f64, u64)];

/// A latency result: per message size, its runs.
pub(super) fn latency(rows: &[(usize, RttRuns)]) -> Document {
    let run = |&(p50, p99, rate): &(u64, u64, f64)| TripRun {
        round_trips: 1000,
        seconds: 1000.0 / rate,
        round_trips_per_s: rate,
        rtt_ns: LatencyNs {
            p50,
            p99,
            ..LatencyNs::default()
        },
        warmup_round_trips: 10,
        noise: None,
    };
    Document::Latency(Box::new(LatencyResult {
        header: header(latency::SCHEMA),
        config: LatencyConfig {
            sizes: rows.iter().map(|r| r.0).collect(),
            runs: 3,
            max_runs: 3,
            seed: 0,
            warmup: Span::RoundTrips(10),
            measure: Span::RoundTrips(1000),
            wait: Wait::Block,
            verify: false,
            mode: latency::Mode::Processes,
            placement: latency::Placement::Unpinned,
            stall_timeout: crate::bench::core::DEFAULT_STALL_TIMEOUT,
            warmup_rule: crate::bench::core::Warmup::exactly(1),
        },
        rows: (rows.iter())
            .map(|(size, runs)| LatencyRow::summarize(*size, runs.iter().map(run).collect()))
            .collect(),
    }))
}

/// A contend result: per cell (writers, readers), its runs.
pub(super) fn contend(msg_size: usize, cells: &[((usize, usize), WriteRuns)]) -> Document {
    let run = |&(w, p99): &(f64, u64)| RunResult {
        seconds: 1.0,
        messages: w as u64,
        bytes: w as u64 * msg_size as u64,
        writes_per_s: w,
        mib_per_s: w * msg_size as f64 / (1 << 20) as f64,
        write_latency_ns: LatencyNs {
            p99,
            ..LatencyNs::default()
        },
        write_log2_ns: None,
        read_latency_ns: LatencyNs::default(),
        read_calls: 1,
        bytes_read: w as u64 * msg_size as u64,
        verify: None,
    };
    let row = |&((writers, readers), runs): &((usize, usize), WriteRuns)| {
        let cell = contend::Cell { writers, readers };
        contend::summarise_row(cell, runs.iter().map(run).collect())
    };
    Document::Contend(Box::new(ContendResult {
        header: header(contend::SCHEMA),
        mode: contend::Mode::Threads,
        placement: Placement::Unpinned,
        pipe_size: 1 << 20,
        pipe_size_requested: 1 << 20,
        pipe_size_clamped: false,
        msg_size,
        atomic: msg_size <= contend::PIPE_BUF,
        duration_s: 1.0,
        warmup_duration_s: 0.0,
        runs_per_cell: 3,
        max_runs_per_cell: None,
        seed: None,
        noise: None,
        memory_pressure: None,
        rows: cells.iter().map(row).collect(),
    }))
}

/// `a` against `b`, one 64-byte size whose round trips `b` halved.
pub(super) fn faster_latency() -> Comparison {
    let slow: RttRuns = &[(5000, 9000, 2e5), (5100, 9100, 1.9e5)];
    let fast: RttRuns = &[(2500, 4500, 4e5), (2550, 4550, 3.8e5)];
    let (a, b) = (latency(&[(64, slow)]), latency(&[(64, fast)]));
    compare(&a, "a", &b, "b", &Bootstrap::default()).unwrap()
}

pub(super) const RUNS: [f64; 5] = [10.0, 10.3, 9.8, 10.1, 9.9];

pub(super) fn scaled(by: f64) -> Vec<f64> {
    RUNS.iter().map(|v| v * by).collect()
}

/// `doc`, a ladder, changed by `f`.
pub(super) fn with(doc: &Document, f: impl FnOnce(&mut LadderResult)) -> Document {
    let Document::Bench(mut r) = doc.clone() else {
        unreachable!()
    };
    f(&mut r);
    Document::Bench(r)
}

fn run(base: &Document, new: &Document) -> Comparison {
    compare(base, "a.json", new, "b.json", &Bootstrap::default()).unwrap()
}

pub(super) fn change(c: &Comparison, table: usize, row: &str) -> Change {
    let line = c.tables[table].lines.iter().find(|l| l.row == row).unwrap();
    match &line.outcome {
        Outcome::Compared(change) => *change,
        other => panic!("{row}: {other:?}"),
    }
}

#[test]
fn a_doubled_rate_is_faster_and_the_same_runs_are_no_change() {
    let base = bench(vec![rung(Rung::WriteRead, &RUNS), rung(Rung::Tuned, &RUNS)]);
    let new = bench(vec![
        rung(Rung::WriteRead, &scaled(2.0)),
        rung(Rung::Tuned, &[9.9, 10.1, 10.0, 10.3, 9.8]),
    ]);
    let c = run(&base, &new);
    let doubled = change(&c, 0, "write-read");
    assert_eq!(doubled.verdict, Verdict::Faster);
    assert_eq!(doubled.ratio, 2.0);
    assert!(doubled.interval.unwrap().low > 1.0);
    assert_eq!(change(&c, 0, "tuned").verdict, Verdict::NoChange);
    assert_eq!(change(&c, 0, "tuned").ratio, 1.0);
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
}

#[test]
fn lower_latency_is_faster_and_fewer_writes_slower() {
    // Runs within 1%: a noisy side would get no verdict.
    let fast: &[(u64, u64, f64)] = &[
        (5000, 9000, 2e5),
        (5050, 9050, 1.98e5),
        (4950, 8950, 2.02e5),
    ];
    let slow: &[(u64, u64, f64)] = &[
        (10000, 18000, 1e5),
        (10100, 18100, 0.99e5),
        (9900, 17900, 1.01e5),
    ];
    let c = run(&latency(&[(1, slow)]), &latency(&[(1, fast)]));
    assert_eq!(c.tables.len(), 3);
    for table in 0..3 {
        assert_eq!(change(&c, table, "1B").verdict, Verdict::Faster, "{table}");
    }
    assert_eq!(change(&c, 0, "1B").ratio, 0.5);
    let many: &[(f64, u64)] = &[(1e6, 4000), (1.01e6, 4040), (0.99e6, 3960)];
    let few: &[(f64, u64)] = &[(5e5, 8000), (5.05e5, 8080), (4.95e5, 7920)];
    let c = run(
        &contend(64, &[((1, 1), many)]),
        &contend(64, &[((1, 1), few)]),
    );
    assert_eq!(change(&c, 0, "1x1").verdict, Verdict::Slower);
    assert_eq!(change(&c, 1, "1x1").verdict, Verdict::Slower);
}

#[test]
fn a_metric_read_from_noisy_runs_gets_no_verdict_though_its_own_spread_is_tight() {
    // Two default latencies of one binary, quiet machine (issue 38's
    // pairs, pair 5): p50 +35.7% with its own spread +-5.1% and +-9.1%,
    // but the rates of the same runs spread over 1.25x in both files.
    let a: RttRuns = &[
        (14400, 37000, 66e3),
        (14300, 36000, 50e3),
        (14600, 38000, 68e3),
    ];
    let b: RttRuns = &[
        (19500, 50000, 47e3),
        (19200, 49000, 36e3),
        (19900, 52000, 49e3),
        (19600, 51000, 48e3),
    ];
    let c = run(&latency(&[(1, a)]), &latency(&[(1, b)]));
    let p50 = change(&c, 0, "1B");
    assert_eq!(p50.verdict, Verdict::Noisy, "{p50:?}");
    assert!(p50.base_noisy && p50.new_noisy, "{p50:?}");
}

#[test]
fn rows_in_one_file_and_rows_without_runs_are_listed_not_dropped() {
    let mut huge = rung(Rung::VmspliceSpliceHuge, &[]);
    huge.status = Status::Unavailable;
    huge.reason = Some("no huge pages".into());
    let base = bench(vec![
        rung(Rung::WriteRead, &RUNS),
        huge.clone(),
        rung(Rung::Tuned, &RUNS),
    ]);
    let new = bench(vec![
        rung(Rung::Memcpy, &RUNS),
        rung(Rung::WriteRead, &RUNS),
        huge,
    ]);
    let c = run(&base, &new);
    let outcomes: Vec<(&str, &Outcome)> = (c.tables[0].lines.iter())
        .map(|l| (l.row.as_str(), &l.outcome))
        .collect();
    let why = Some("unavailable: no huge pages".to_string());
    assert_eq!(outcomes.len(), 4);
    assert!(matches!(outcomes[0], ("write-read", Outcome::Compared(_))));
    assert_eq!(
        outcomes[1],
        (
            "vmsplice-splice-huge",
            &Outcome::NoRuns {
                base: why.clone(),
                new: why
            }
        )
    );
    assert_eq!(outcomes[2], ("tuned", &Outcome::OnlyIn(Side::Base)));
    assert_eq!(outcomes[3], ("memcpy", &Outcome::OnlyIn(Side::New)));
}

#[test]
fn one_run_gives_no_interval_and_zero_cannot_make_a_ratio() {
    let base = bench(vec![
        rung(Rung::WriteRead, &[10.0]),
        rung(Rung::Tuned, &RUNS),
    ]);
    let new = bench(vec![
        rung(Rung::WriteRead, &RUNS),
        rung(Rung::Tuned, &[0.0, 1.0]),
    ]);
    let c = run(&base, &new);
    let one = change(&c, 0, "write-read");
    assert_eq!((one.verdict, one.interval), (Verdict::TooFewRuns, None));
    assert_eq!(c.tables[0].lines[1].outcome, Outcome::BadValues(Side::New));
}

#[test]
fn differing_facts_settings_and_failed_rungs_are_warned_about() {
    let base = bench(vec![rung(Rung::WriteRead, &RUNS)]);
    let mut failed = rung(Rung::WriteRead, &RUNS[..2]);
    failed.status = Status::Failed;
    failed.reason = Some("writer died".into());
    failed.buf_size = 64 * 1024;
    let new = with(&bench(vec![failed]), |r| {
        r.header.system.kernel = "6.6.0".into();
        r.placement = Placement::Unpinned;
    });
    let c = run(&base, &new);
    let warnings = c.warnings();
    assert_eq!(
        warnings,
        [
            "system fact kernel differs: 6.1.0 in a.json, 6.6.0 in b.json",
            "a.json ran the ends on two CPUs (writer on CPU 0, reader on CPU 1), b.json left to \
             the scheduler: row write-read is not compared; rerun b.json with --placement \
             different-cpu",
            "setting buf_size of write-read differs: 256KiB in a.json, 64KiB in b.json",
            "b.json: rung write-read failed after 2 runs (writer died); those runs are compared",
        ]
    );
}

/// A rung that ran in a placement of its own (the rungs that block, on
/// one CPU where that is faster) against one that ran in the ladder's:
/// its ratio is placement, not code, and the warnings say so.
#[test]
fn a_rung_measured_in_another_placement_is_warned_about() {
    let base = bench(vec![rung(Rung::WriteRead, &RUNS)]);
    let mut one_cpu = rung(Rung::WriteRead, &scaled(4.0));
    one_cpu.placement = Some(Placement::Pinned {
        writer_cpu: 0,
        reader_cpu: 0,
    });
    let c = run(&base, &bench(vec![one_cpu]));
    // Issue 38: "setting placement of vmsplice-splice differs: writer
    // on CPU 0, reader on CPU 0 in a.json, the ladder's in a2.json", and
    // the row compared: now the row is not, and the warning says where
    // each file's ends ran and how to measure them alike.
    assert_eq!(
        c.warnings(),
        [
            "a.json ran the ends on two CPUs (writer on CPU 0, reader on CPU 1), b.json on one \
             CPU (writer on CPU 0, reader on CPU 0): row write-read is not compared; rerun \
             b.json with --placement different-cpu"
        ]
    );
    assert_eq!(
        c.tables[0].lines[0].outcome,
        Outcome::Placements {
            base: "writer on CPU 0, reader on CPU 1".into(),
            new: "writer on CPU 0, reader on CPU 0".into(),
        }
    );
    let text = render::text(&c, 80);
    assert!(
        text.contains("write-read  not compared: ends placed writer on CPU 0, reader on CPU 1"),
        "{text}"
    );
    // The same placement recorded in both says nothing.
    let mut same = rung(Rung::WriteRead, &RUNS);
    same.placement = Some(Placement::Pinned {
        writer_cpu: 0,
        reader_cpu: 1,
    });
    assert!(run(&base, &bench(vec![same])).warnings().is_empty());
}

#[test]
fn an_interrupted_result_is_said_to_be_partial() {
    let base = bench(vec![rung(Rung::WriteRead, &RUNS)]);
    let new = with(&bench(vec![rung(Rung::WriteRead, &RUNS[..2])]), |r| {
        r.header.interrupted = true;
    });
    let warnings = run(&base, &new).warnings();
    assert_eq!(
        warnings,
        ["b.json: interrupted by SIGINT, SIGTERM or SIGHUP: it holds only the runs made before"]
    );
}

#[test]
fn contend_settings_that_differ_are_named() {
    let runs: &[(f64, u64)] = &[(1e6, 4000), (1.1e6, 4100)];
    let c = run(
        &contend(64, &[((1, 1), runs)]),
        &contend(4096, &[((1, 1), runs)]),
    );
    assert_eq!(
        c.warnings(),
        ["setting msg_size differs: 64B in a.json, 4KiB in b.json"]
    );
}

#[test]
fn two_kinds_are_refused() {
    let err = compare(
        &bench(vec![]),
        "a.json",
        &latency(&[]),
        "b.json",
        &Bootstrap::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "a.json is a bench result, b.json a latency result: cannot compare"
    );
}

#[test]
fn virtualization_is_compared_when_a_file_records_it() {
    let virt = |doc: &Document, v: Option<&str>| {
        with(doc, |r| {
            r.header.system.virtualization = v.map(String::from)
        })
    };
    let doc = bench(vec![rung(Rung::WriteRead, &RUNS)]);
    let fact = |c: &Comparison| {
        (c.facts.iter())
            .find(|p| p.name == "virtualization")
            .map(|p| (p.base.clone(), p.new.clone()))
    };
    // Neither file records it (both written before the field): left out.
    let c = run(&virt(&doc, None), &virt(&doc, None));
    assert_eq!(fact(&c), None);
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
    let c = run(&virt(&doc, Some("kvm")), &virt(&doc, Some("kvm")));
    assert_eq!(fact(&c), Some(("kvm".into(), "kvm".into())));
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
    let c = run(&virt(&doc, None), &virt(&doc, Some("none")));
    assert_eq!(fact(&c), Some(("not recorded".into(), "none".into())));
    assert_eq!(
        c.warnings(),
        ["system fact virtualization differs: not recorded in a.json, none in b.json"]
    );
}

mod judged;

mod pooled {
    use super::*;
    use crate::compare::compare_pooled;

    /// One contend result of one 1x1 run per boot, `writes` writes/s.
    fn boot(writes: f64) -> Document {
        contend(65536, &[((1, 1), &[(writes, 1000)])])
    }

    fn pooled(base: &[f64], new: &[f64]) -> Comparison {
        let base: Vec<Document> = base.iter().map(|&w| boot(w)).collect();
        let new: Vec<Document> = new.iter().map(|&w| boot(w)).collect();
        compare_pooled(&base, "A", &new, "B", &Bootstrap::default()).unwrap()
    }

    #[test]
    fn every_boot_s_run_is_pooled_and_a_clear_shift_is_significant() {
        // Three boots a side, B clearly faster: significant by mmtests'
        // rule and by the bootstrap.
        let c = pooled(&[100.0, 104.0, 98.0], &[150.0, 153.0, 148.0]);
        let ch = change(&c, 0, "1x1");
        assert_eq!((ch.base_runs, ch.new_runs), (3, 3));
        assert!(ch.mmtests_significant(), "{ch:?}");
        assert_eq!(ch.verdict, Verdict::Faster);
        // The same spread around one level: not significant.
        let c = pooled(&[100.0, 130.0, 80.0], &[120.0, 90.0, 105.0]);
        assert!(!change(&c, 0, "1x1").mmtests_significant());
        // One boot a side pools to one run: never significant.
        let c = pooled(&[100.0], &[200.0]);
        assert_eq!(change(&c, 0, "1x1").verdict, Verdict::TooFewRuns);
    }

    #[test]
    fn a_row_missing_from_some_boots_is_said_and_an_empty_pool_refused() {
        let two_cells = contend(
            65536,
            &[((1, 1), &[(100.0, 1000)]), ((2, 2), &[(50.0, 900)])],
        );
        let new = [two_cells.clone(), two_cells.clone(), two_cells.clone()];
        let base = [two_cells.clone(), boot(101.0), two_cells];
        let c = compare_pooled(&base, "A", &new, "B", &Bootstrap::default()).unwrap();
        assert_eq!(change(&c, 0, "2x2").base_runs, 2);
        assert!(
            c.notes
                .iter()
                .any(|n| n
                    == "A: row 2x2 is missing from result 2 of 3; the others' runs are compared"),
            "{:?}",
            c.notes
        );
        let err = compare_pooled(&[], "A", &new, "B", &Bootstrap::default()).unwrap_err();
        assert_eq!(err.to_string(), "A: no results to compare");
    }
}
