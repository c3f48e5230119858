//! The schedule on a mock runner: no timings, only what ran when.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;

fn plan(runs: usize, max_runs: usize) -> Plan {
    Plan {
        runs,
        max_runs,
        seed: 7,
        ends: Ends::default(),
        // The default's half second of warm-up is the one rule that
        // needs time to pass: none here, so that nothing depends on it.
        warmup: Warmup {
            min_seconds: 0.0,
            ..Warmup::default()
        },
    }
}

fn sample(value: f64) -> Result<Sample, RunError> {
    Ok(Sample {
        value,
        figure: Figure::GibPerS(value),
        noise: None,
    })
}

fn quietly(
    slots: &[Slot],
    plan: &Plan,
    run: &mut dyn FnMut(usize, Phase) -> Result<Sample, RunError>,
) -> Schedule {
    schedule(slots, plan, &Cancel::never(), &mut |_| {}, run)
}

fn slots(names: &[&str]) -> Vec<Slot> {
    names.iter().map(|n| Slot::new(*n)).collect()
}

#[test]
fn every_row_warms_up_then_runs_in_one_shuffled_order() {
    let mut calls = Vec::new();
    let done = quietly(&slots(&["a", "b", "c"]), &plan(4, 4), &mut |i, phase| {
        calls.push((i, phase));
        sample(10.0)
    });
    let warmups: Vec<usize> = calls
        .iter()
        .take_while(|c| c.1 == Phase::WarmUp)
        .map(|c| c.0)
        .collect();
    // Two each: the second agrees with the first.
    assert_eq!(warmups, [0, 0, 1, 1, 2, 2]);
    let measured: Vec<usize> = calls[6..].iter().map(|c| c.0).collect();
    assert!(calls[6..].iter().all(|c| c.1 == Phase::Measure));
    assert_eq!(measured.len(), 12);
    for i in 0..3 {
        assert_eq!(measured.iter().filter(|&&m| m == i).count(), 4);
    }
    let in_blocks = (0..12).map(|k| k / 4).collect::<Vec<_>>();
    let round_robin = (0..12).map(|k| k % 3).collect::<Vec<_>>();
    assert!(
        measured != in_blocks && measured != round_robin,
        "{measured:?}"
    );
    assert!(done.rows.iter().all(|r| r.status == Status::Ok
        && r.series.runs.len() == 4
        && r.series.median == Some(10.0)
        && r.warmup == Some(10.0)));
    assert!(!done.interrupted);
}

#[test]
fn the_order_follows_the_seed() {
    let order = |seed| {
        let mut measured = Vec::new();
        let mut p = plan(3, 3);
        p.seed = seed;
        quietly(&slots(&["a", "b", "c", "d"]), &p, &mut |i, phase| {
            if phase == Phase::Measure {
                measured.push(i);
            }
            sample(1.0)
        });
        measured
    };
    assert_eq!(order(1), order(1));
    assert_ne!(order(1), order(2));
}

#[test]
fn a_wide_row_gets_runs_added_up_to_max_runs_and_a_tight_one_none() {
    let (mut wide, mut tight) = (0.0, 0);
    let done = quietly(&slots(&["wide", "tight"]), &plan(3, 7), &mut |i, _| {
        if i == 0 {
            // 1, 3, 1, 3, ...: an interval that never narrows.
            wide = if wide == 1.0 { 3.0 } else { 1.0 };
            sample(wide)
        } else {
            tight += 1;
            sample(5.0)
        }
    });
    assert_eq!(done.rows[0].series.runs.len(), 7);
    assert_eq!(done.rows[1].series.runs.len(), 3);
    assert!(done.rows[0].series.noisy() && done.rows[0].series.diagnosis.is_some());
    assert!(!done.rows[1].series.noisy() && done.rows[1].series.diagnosis.is_none());
}

#[test]
fn a_row_with_its_own_max_runs_gets_no_more_than_that() {
    let mut all = slots(&["wide", "wide, capped"]);
    all[1].max_runs = Some(3);
    let mut last = [0.0; 2];
    let done = quietly(&all, &plan(3, 7), &mut |i, _| {
        last[i] = if last[i] == 1.0 { 3.0 } else { 1.0 };
        sample(last[i])
    });
    assert_eq!(done.rows[0].series.runs.len(), 7);
    assert_eq!(done.rows[1].series.runs.len(), 3);
    assert!(done.rows[1].series.noisy(), "still marked");
}

#[test]
fn unavailable_rows_never_run_and_a_failed_row_keeps_its_runs_and_stops() {
    let mut all = slots(&["gone", "fails", "fine"]);
    all[0].unavailable = Some("no huge pages".into());
    let mut runs_of = [0; 3];
    let mut skipped = Vec::new();
    let done = schedule(
        &all,
        &plan(4, 4),
        &Cancel::never(),
        &mut |e| {
            if let Event::Skipped { row, reason } = e {
                skipped.push(format!("{row}: {reason}"));
            }
        },
        &mut |i, phase| {
            runs_of[i] += 1;
            match (i, phase) {
                (1, Phase::Measure) if runs_of[1] > 4 => Err(RunError::Failed("crashed".into())),
                _ => sample(2.0),
            }
        },
    );
    assert_eq!(runs_of[0], 0);
    assert_eq!(done.rows[0].status, Status::Unavailable);
    assert_eq!(done.rows[1].status, Status::Failed);
    assert_eq!(done.rows[1].reason.as_deref(), Some("crashed"));
    // Two warm-ups (the second agrees) and two measured runs, then the
    // failure: nothing after.
    assert_eq!((runs_of[1], done.rows[1].series.runs.len()), (5, 2));
    assert_eq!(done.rows[2].series.runs.len(), 4);
    assert_eq!(skipped, ["gone: no huge pages", "fails: crashed"]);
}

#[test]
fn a_row_the_machine_refuses_at_warm_up_is_unavailable_and_never_measured() {
    let mut measured = 0;
    let done = quietly(
        &slots(&["refused"]),
        &plan(3, 3),
        &mut |_, phase| match phase {
            Phase::WarmUp => Err(RunError::Unavailable("vmsplice refused".into())),
            Phase::Measure => {
                measured += 1;
                sample(1.0)
            }
        },
    );
    assert_eq!(measured, 0);
    assert_eq!(done.rows[0].status, Status::Unavailable);
    assert_eq!(done.rows[0].reason.as_deref(), Some("vmsplice refused"));
}

#[test]
fn cancelling_stops_every_run_and_the_cut_run_counts_for_nothing() {
    let flag = Arc::new(AtomicBool::new(false));
    let cancel = Cancel::on_flag(flag.clone());
    let measured = Cell::new(0);
    let done = schedule(
        &slots(&["a", "b"]),
        &plan(5, 5),
        &cancel,
        &mut |_| {},
        &mut |_, phase| {
            if phase == Phase::WarmUp {
                return sample(1.0);
            }
            measured.set(measured.get() + 1);
            if measured.get() == 4 {
                // The signal arrives during the fourth run, which fails.
                flag.store(true, Ordering::Relaxed);
                return Err(RunError::Failed("killed".into()));
            }
            sample(1.0)
        },
    );
    assert!(done.interrupted);
    assert_eq!(measured.get(), 4);
    let kept: usize = done.rows.iter().map(|r| r.series.runs.len()).sum();
    assert_eq!(kept, 3);
    // Stopped, not failed; and not "no run was made" either.
    assert!(
        done.rows.iter().all(|r| r.status == Status::Ok),
        "{:?}",
        done.rows
    );
}

#[test]
fn a_row_with_no_run_is_failed_unless_cancelled() {
    let done = quietly(&slots(&["empty"]), &plan(0, 0), &mut |_, _| sample(1.0));
    assert_eq!(done.rows[0].status, Status::Failed);
    assert_eq!(done.rows[0].reason.as_deref(), Some("no run was made"));
}

#[test]
fn warm_up_repeats_until_two_runs_agree_within_its_cap() {
    let warmups = |values: Vec<f64>, max_runs| {
        let mut p = plan(1, 1);
        p.warmup = Warmup {
            min_seconds: 0.0,
            agree: 0.10,
            max_runs,
            max_seconds: f64::INFINITY,
        };
        let mut values = values.into_iter();
        let done = quietly(&slots(&["a"]), &p, &mut |_, phase| match phase {
            Phase::WarmUp => sample(values.next().unwrap_or(1.0)),
            Phase::Measure => sample(1.0),
        });
        (done.rows[0].warmup_runs, done.rows[0].warmup)
    };
    // Doubling, then steady: warm once 20 and 21 agree.
    assert_eq!(warmups(vec![10.0, 20.0, 21.0, 99.0], 5), (3, Some(21.0)));
    // Never agreeing: the cap.
    assert_eq!(warmups(vec![1.0, 2.0, 4.0, 8.0], 3), (3, Some(4.0)));
    assert_eq!(warmups(vec![1.0, 2.0], 1), (1, Some(1.0)));
}

#[test]
fn past_its_time_every_row_gets_its_one_warm_up_only() {
    let mut p = plan(1, 1);
    p.warmup.max_seconds = 0.0;
    let mut warmups = [0; 3];
    quietly(&slots(&["a", "b", "c"]), &p, &mut |i, phase| {
        warmups[i] += usize::from(phase == Phase::WarmUp);
        // Never agreeing: only the cap stops them.
        sample(if warmups[i] % 2 == 0 { 1.0 } else { 2.0 })
    });
    assert_eq!(warmups, [1, 1, 1]);
}

#[test]
fn exactly_n_warm_ups_are_made_whatever_they_measure() {
    let mut p = plan(1, 1);
    p.warmup = Warmup::exactly(3);
    let mut warmups = 0;
    quietly(&slots(&["a"]), &p, &mut |_, phase| {
        warmups += usize::from(phase == Phase::WarmUp);
        sample(1.0)
    });
    assert_eq!(warmups, 3);
    assert_eq!(Warmup::exactly(0).max_runs, 1);
}
