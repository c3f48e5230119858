//! The ladder's scheduling and statistics, with a mock executor: no
//! processes, no timings; and how the process executor words an end's
//! crash.

#![allow(clippy::unwrap_used)]
use pipespeed::bench::core::{Placement, RunError, Status};

use std::collections::HashMap;

use pipespeed::bench::core::Cancel;
use pipespeed::bench::core::{Event, Runner};
use pipespeed::bench::ladder::{
    CopyCheck, Job, LadderConfig, Rung, Sample, check_placements, job_for, run_ladder,
};
use pipespeed::bench::latency::{PingJob, TripRun};
use pipespeed::bench::reader::ReadMethod;
use pipespeed::bench::writer::WriteMethod;
use pipespeed::sys::{RunNoise, SystemFacts, ThpMode};
use pipespeed::wait::Wait;

fn facts(cpus: &[usize], thp: ThpMode) -> SystemFacts {
    SystemFacts {
        kernel: "6.18.0-test".into(),
        kernel_version: "#1".into(),
        arch: "x86_64".into(),
        cpu_model: "Test CPU".into(),
        cpus_online: cpus.len(),
        cpus_allowed: cpus.to_vec(),
        thp,
        pipe_max_size_bytes: 1 << 20,
        page_size_bytes: 4096,
        virtualization: None,
    }
}

fn config(rungs: &[Rung], facts: &SystemFacts) -> LadderConfig {
    LadderConfig {
        rungs: rungs.to_vec(),
        runs: 3,
        max_runs: 3,
        bytes: None,
        buf_size: 256 * 1024,
        pipe_size: None,
        placement: Placement::default_for(facts),
        alternative: None,
        verify: false,
        seed: 7,
        target_seconds: 0.5,
        profile: false,
        warmup_rule: pipespeed::bench::core::Warmup::exactly(1),
    }
}

/// Answers each rung with a fixed rate per call, in order, and records
/// the jobs it was given; says `copy_check` of every vmsplice job and
/// `noise` of every run.
#[derive(Default)]
struct Mock {
    rates: HashMap<&'static str, Vec<Result<f64, RunError>>>,
    jobs: Vec<Job>,
    copy_check: Option<CopyCheck>,
    noise: Option<RunNoise>,
}

impl Mock {
    fn rung_of(job: &Job) -> &'static str {
        match job {
            Job::Memcpy { .. } => "memcpy",
            Job::SpliceLimit { .. } => "splice-limit",
            Job::Pipe { writer, reader, .. } => {
                match (writer.method, reader.method, writer.end.buffer.huge_pages) {
                    (WriteMethod::Write, _, _) => "write-read",
                    (WriteMethod::Vmsplice, ReadMethod::Read, _) => "vmsplice-read",
                    (WriteMethod::Vmsplice, ReadMethod::Splice, false) => "vmsplice-splice",
                    (WriteMethod::Vmsplice, ReadMethod::Splice, true) => "huge",
                }
            }
        }
    }
}

impl Runner<Job> for Mock {
    fn run(&mut self, job: &Job) -> Result<Sample, RunError> {
        self.jobs.push(job.clone());
        let queue = self
            .rates
            .get_mut(Mock::rung_of(job))
            .expect("rung has rates");
        let rate = queue.remove(0)?;
        Ok(Sample {
            bytes: 1 << 30,
            seconds: 1.0 / rate,
            gib_s: rate,
            usage: None,
            noise: self.noise,
            copy_check: match job {
                Job::Pipe { writer, .. } if writer.method == WriteMethod::Vmsplice => {
                    self.copy_check.clone()
                }
                _ => None,
            },
        })
    }
}

#[test]
fn medians_and_speedups_come_from_the_measured_runs_only() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut mock = Mock {
        rates: HashMap::from([
            // warm-up first, then three runs
            ("write-read", vec![Ok(100.0), Ok(1.0), Ok(3.0), Ok(2.0)]),
            ("vmsplice-read", vec![Ok(100.0), Ok(6.0), Ok(8.0), Ok(7.0)]),
        ]),
        jobs: vec![],
        ..Mock::default()
    };
    let mut events = 0;
    let result = run_ladder(
        &config(&[Rung::WriteRead, Rung::VmspliceRead], &f),
        &f,
        &mut mock,
        &Cancel::never(),
        &mut |_| events += 1,
    );
    assert_eq!(events, 8);
    let wr = &result.rungs[0];
    assert_eq!(wr.name, Rung::WriteRead);
    assert_eq!(wr.status, Status::Ok);
    assert_eq!(wr.warmup_gib_s, Some(100.0));
    assert_eq!(wr.gib_s.median, Some(2.0));
    assert_eq!((wr.gib_s.min, wr.gib_s.max), (Some(1.0), Some(3.0)));
    assert_eq!(wr.speedup_vs_write_read, Some(1.0));
    assert_eq!(result.rungs[1].gib_s.median, Some(7.0));
    assert_eq!(result.rungs[1].speedup_vs_write_read, Some(3.5));
    assert_eq!(result.header.schema, "pipespeed.bench/3");
}

#[test]
fn runs_are_sized_from_the_warmup_rate() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut mock = Mock {
        rates: HashMap::from([("write-read", vec![Ok(2.0), Ok(2.0), Ok(2.0), Ok(2.0)])]),
        jobs: vec![],
        ..Mock::default()
    };
    let result = run_ladder(
        &config(&[Rung::WriteRead], &f),
        &f,
        &mut mock,
        &Cancel::never(),
        &mut |_| {},
    );
    // 2 GiB/s for 0.5 s
    assert_eq!(result.rungs[0].bytes_per_run, 1 << 30);
    let Job::Pipe { reader, .. } = &mock.jobs[1] else {
        panic!("pipe job expected")
    };
    assert_eq!(reader.bytes, 1 << 30);
}

#[test]
fn run_order_is_shuffled_across_rungs() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut cfg = config(&[Rung::WriteRead, Rung::VmspliceRead], &f);
    cfg.runs = 8;
    let mut mock = Mock {
        rates: HashMap::from([
            ("write-read", vec![Ok(1.0); 9]),
            ("vmsplice-read", vec![Ok(2.0); 9]),
        ]),
        jobs: vec![],
        ..Mock::default()
    };
    let result = run_ladder(&cfg, &f, &mut mock, &Cancel::never(), &mut |_| {});
    let order: Vec<&str> = mock.jobs[2..].iter().map(Mock::rung_of).collect();
    assert_eq!(order.len(), 16);
    let sorted_halves = order[..8].iter().all(|&r| r == "write-read")
        || order[..8].iter().all(|&r| r == "vmsplice-read");
    assert!(!sorted_halves, "runs were not interleaved: {order:?}");
    assert_eq!(result.rungs[0].gib_s.runs.len(), 8);
}

#[test]
fn a_rung_the_machine_cannot_do_is_reported_and_the_others_run() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut mock = Mock {
        rates: HashMap::from([
            ("write-read", vec![Ok(1.0); 4]),
            (
                "huge",
                vec![Err(RunError::Unavailable("huge pages not obtained".into()))],
            ),
        ]),
        jobs: vec![],
        ..Mock::default()
    };
    let mut skipped = vec![];
    let result = run_ladder(
        &config(&[Rung::WriteRead, Rung::VmspliceSpliceHuge], &f),
        &f,
        &mut mock,
        &Cancel::never(),
        &mut |e| {
            if let Event::Skipped { row, reason } = e {
                skipped.push((row.parse::<Rung>().unwrap(), reason.to_string()));
            }
        },
    );
    assert_eq!(
        skipped,
        vec![(
            Rung::VmspliceSpliceHuge,
            "huge pages not obtained".to_string()
        )]
    );
    let huge = &result.rungs[1];
    assert_eq!(huge.status, Status::Unavailable);
    assert!(huge.gib_s.runs.is_empty());
    assert_eq!(huge.gib_s.median, None);
    assert_eq!(result.rungs[0].status, Status::Ok);
}

#[test]
fn a_failed_run_keeps_earlier_samples_and_stops_the_rung() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut cfg = config(&[Rung::WriteRead], &f);
    cfg.bytes = Some(1 << 20);
    let mut mock = Mock {
        rates: HashMap::from([(
            "write-read",
            vec![
                Ok(1.0),
                Ok(1.5),
                Err(RunError::Failed("reader crashed".into())),
            ],
        )]),
        jobs: vec![],
        ..Mock::default()
    };
    let result = run_ladder(&cfg, &f, &mut mock, &Cancel::never(), &mut |_| {});
    let r = &result.rungs[0];
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.reason.as_deref(), Some("reader crashed"));
    assert_eq!(r.gib_s.runs, vec![1.5]);
    assert_eq!(r.bytes_per_run, 1 << 20, "--bytes is used as given");
    assert_eq!(mock.jobs.len(), 3, "no more runs after the failure");
}

#[test]
fn busy_loop_needs_two_cpus_and_huge_rungs_need_thp() {
    let one = facts(&[0], ThpMode::Madvise);
    let err = job_for(Rung::VmspliceSpliceHugeBusy, &config(&[], &one), &one).unwrap_err();
    assert!(err.contains("two CPUs"), "{err}");
    let never = facts(&[0, 1], ThpMode::Never);
    let err = job_for(Rung::VmspliceSpliceHuge, &config(&[], &never), &never).unwrap_err();
    assert!(err.contains("never"), "{err}");
    // tuned does what the machine allows instead: no huge pages, no spinning.
    let Ok(Job::Pipe { writer, reader, .. }) = job_for(
        Rung::Tuned,
        &config(&[], &one),
        &facts(&[0], ThpMode::Never),
    ) else {
        panic!("tuned should run everywhere")
    };
    assert!(!writer.end.buffer.huge_pages);
    assert_eq!(writer.end.wait, Wait::Block);
    assert_eq!(reader.end.buf_size, 1 << 20);
}

#[test]
fn rungs_configure_the_blog_programs() {
    let f = facts(&[2, 3], ThpMode::Madvise);
    let cfg = config(&[], &f);
    assert_eq!(
        cfg.placement,
        Placement::Pinned {
            writer_cpu: 2,
            reader_cpu: 3
        }
    );
    let Ok(Job::Pipe { writer, reader, .. }) = job_for(Rung::VmspliceSpliceHugeBusy, &cfg, &f)
    else {
        panic!()
    };
    assert_eq!(writer.method, WriteMethod::Vmsplice);
    assert!(writer.end.buffer.huge_pages && writer.end.check_huge_pages);
    assert_eq!((writer.end.wait, reader.end.wait), (Wait::Busy, Wait::Busy));
    assert_eq!(reader.method, ReadMethod::Splice);
    let Ok(Job::Pipe { writer, .. }) = job_for(Rung::Tuned, &cfg, &f) else {
        panic!()
    };
    assert_eq!(writer.end.buf_size, 2 << 20, "two halves of pipe-max-size");
    let Ok(job) = job_for(Rung::VmspliceRead, &cfg, &f) else {
        panic!()
    };
    assert_eq!(job.sizes(), (256 * 1024, Some(128 * 1024)));
    assert!(
        "nope"
            .parse::<Rung>()
            .unwrap_err()
            .contains("vmsplice-splice-huge-busy")
    );
}

#[test]
fn a_noisy_rung_gets_runs_until_it_settles_or_reaches_the_maximum() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut cfg = config(&[Rung::WriteRead, Rung::VmspliceRead], &f);
    (cfg.runs, cfg.max_runs) = (3, 8);
    // write-read is tight; vmsplice-read spreads 2x and never settles.
    let wild = [5.0, 10.0, 5.0, 10.0, 5.0, 10.0, 5.0, 10.0, 5.0];
    let mut mock = Mock {
        rates: HashMap::from([
            ("write-read", vec![Ok(1.0); 20]),
            ("vmsplice-read", wild.iter().map(|&r| Ok(r)).collect()),
        ]),
        noise: Some(RunNoise {
            wall_s: 1.0,
            steal_s: 0.2,
            ..RunNoise::default()
        }),
        ..Mock::default()
    };
    let result = run_ladder(&cfg, &f, &mut mock, &Cancel::never(), &mut |_| {});
    let (tight, noisy) = (&result.rungs[0], &result.rungs[1]);
    assert_eq!(tight.gib_s.runs.len(), 3);
    assert!(!tight.noisy() && tight.gib_s.diagnosis.is_none());
    assert_eq!(noisy.gib_s.runs.len(), 8);
    assert_eq!(noisy.gib_s.noise.len(), 8);
    assert!(noisy.noisy());
    let diagnosis = noisy.gib_s.diagnosis.as_ref().unwrap();
    assert!(diagnosis.causes[0].starts_with("steal: "), "{diagnosis:?}");
    assert_eq!(result.max_runs, 8);
    assert_eq!(result.noise.unwrap().runs, 11);
}

#[test]
fn a_rung_that_settles_after_added_runs_stops_getting_them() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut cfg = config(&[Rung::WriteRead], &f);
    (cfg.runs, cfg.max_runs) = (3, 20);
    // One run at 1.5x the slowest: agreeing runs added narrow the
    // interval, so they stop before the maximum; the range still marks
    // the rung noisy (more runs cannot undo an outlier).
    let mut rates = vec![Ok(1.0), Ok(10.0), Ok(15.0), Ok(10.0)];
    rates.extend(std::iter::repeat_with(|| Ok(10.0)).take(30));
    let mut mock = Mock {
        rates: HashMap::from([("write-read", rates)]),
        ..Mock::default()
    };
    let result = run_ladder(&cfg, &f, &mut mock, &Cancel::never(), &mut |_| {});
    let r = &result.rungs[0];
    assert!(
        r.gib_s.runs.len() > 3 && r.gib_s.runs.len() < 20,
        "{:?}",
        r.gib_s.runs
    );
    assert!(r.noisy() && !r.gib_s.spread.unwrap().wide());

    // Without the outlier the added runs narrow the interval below +-10%:
    // 10, 12, 10 is noisy at n = 3 (t = 4.3), quiet from n = 4 on.
    let mut rates = vec![Ok(1.0), Ok(10.0), Ok(12.0), Ok(10.0)];
    rates.extend(std::iter::repeat_with(|| Ok(11.0)).take(30));
    let mut mock = Mock {
        rates: HashMap::from([("write-read", rates)]),
        ..Mock::default()
    };
    let result = run_ladder(&cfg, &f, &mut mock, &Cancel::never(), &mut |_| {});
    let r = &result.rungs[0];
    assert!(
        r.gib_s.runs.len() > 3 && r.gib_s.runs.len() < 20,
        "{:?}",
        r.gib_s.runs
    );
    assert!(!r.noisy());
}

#[test]
fn a_kernel_whose_vmsplice_copies_gets_one_copy_more_per_vmsplice_rung() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let rungs = [Rung::WriteRead, Rung::VmspliceRead, Rung::VmspliceSplice];
    let mut mock = Mock {
        rates: HashMap::from([
            ("write-read", vec![Ok(1.0); 4]),
            ("vmsplice-read", vec![Ok(2.0); 4]),
            ("vmsplice-splice", vec![Ok(3.0); 4]),
        ]),
        copy_check: Some(CopyCheck::Copies),
        ..Mock::default()
    };
    let result = run_ladder(
        &config(&rungs, &f),
        &f,
        &mut mock,
        &Cancel::never(),
        &mut |_| {},
    );
    let copies: Vec<(u32, Option<CopyCheck>)> = result
        .rungs
        .iter()
        .map(|r| (r.copies, r.copy_check.clone()))
        .collect();
    assert_eq!(
        copies,
        [
            (2, None),
            (2, Some(CopyCheck::Copies)),
            (1, Some(CopyCheck::Copies))
        ]
    );
    // vmsplice-splice copies now: its limit is memcpy, not splice-limit.
    assert_eq!(Rung::VmspliceSplice.ceiling(1), Rung::Memcpy);
}

#[test]
fn shares_of_the_limits_follow_what_each_rung_copies() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let rungs = [
        Rung::Memcpy,
        Rung::VmspliceRead,
        Rung::Tuned,
        Rung::SpliceLimit,
    ];
    let mut mock = Mock {
        rates: HashMap::from([
            ("memcpy", vec![Ok(10.0); 4]),
            ("vmsplice-read", vec![Ok(5.0); 4]),
            ("huge", vec![Ok(40.0); 4]),
            ("splice-limit", vec![Ok(80.0); 4]),
        ]),
        copy_check: Some(CopyCheck::References),
        ..Mock::default()
    };
    let result = run_ladder(
        &config(&rungs, &f),
        &f,
        &mut mock,
        &Cancel::never(),
        &mut |_| {},
    );
    let shares: Vec<Option<f64>> = result.rungs.iter().map(|r| r.share_of_ceiling).collect();
    assert_eq!(shares, [None, Some(0.5), Some(0.5), None]);
}

/// Answers round trips: 2 us on one CPU, 50 us across two.
struct Pinger;

impl Runner<PingJob> for Pinger {
    fn run(&mut self, job: &PingJob) -> std::io::Result<TripRun> {
        let (a, b) = job.placement.cpus();
        let ns = if a == b { 2_000 } else { 50_000 };
        let mut run: TripRun = serde_json::from_value(serde_json::json!({
            "round_trips": 1000, "seconds": 1.0, "round_trips_per_s": 1000.0,
            "rtt_ns": {"mean": 0.0, "p50": 0, "p90": 0, "p99": 0, "p999": 0, "max": 0},
            "warmup_round_trips": 10
        }))
        .unwrap();
        run.rtt_ns.p50 = ns;
        Ok(run)
    }
}

#[test]
fn the_baseline_is_measured_in_every_placement_with_the_wakeup_cost() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut mock = Mock {
        rates: HashMap::from([("write-read", vec![Ok(5.0); 12])]),
        ..Mock::default()
    };
    let cfg = config(&[Rung::WriteRead], &f);
    let check = check_placements(
        &cfg,
        &f,
        3,
        &mut mock,
        &mut Pinger,
        &[],
        &Cancel::never(),
        &mut |_| {},
    );
    let placements: Vec<Placement> = mock
        .jobs
        .iter()
        .map(|j| match j {
            Job::Pipe { placement, .. } => *placement,
            _ => panic!("pipe jobs only"),
        })
        .collect();
    let same = Placement::Pinned {
        writer_cpu: 0,
        reader_cpu: 0,
    };
    assert_eq!(placements.iter().filter(|p| **p == same).count(), 4);
    assert_eq!(
        placements
            .iter()
            .filter(|p| **p == Placement::Unpinned)
            .count(),
        4
    );
    let kinds: Vec<&str> = check.rows.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, ["same-cpu", "different-cpu", "unpinned"]);
    assert!(check.rows.iter().all(|r| r.gib_s.runs.len() == 3));
    assert_eq!(check.factor(), Some(1.0));
    let w = check.wakeup.unwrap();
    assert_eq!((w.same_cpu_rtt_ns, w.different_cpu_rtt_ns), (2_000, 50_000));
    assert_eq!(w.cross_cpu_wakeup_ns, 24_000.0);
}

#[test]
fn on_one_cpu_the_check_says_what_it_cannot_measure() {
    let f = facts(&[0], ThpMode::Madvise);
    let mut mock = Mock {
        rates: HashMap::from([("write-read", vec![Ok(5.0); 8])]),
        ..Mock::default()
    };
    let cfg = config(&[Rung::WriteRead], &f);
    let check = check_placements(
        &cfg,
        &f,
        3,
        &mut mock,
        &mut Pinger,
        &[],
        &Cancel::never(),
        &mut |_| {},
    );
    let different = check.row("different-cpu").unwrap();
    assert_eq!(different.status, Status::Unavailable);
    assert!(different.reason.as_deref().unwrap().contains("one CPU"));
    assert!(check.wakeup.is_none());
    assert!(check.wakeup_reason.as_deref().unwrap().contains("one CPU"));
}

/// Waits until the script just written at `exe` can be run: another
/// test's child, forked while it was open for writing, holds that
/// descriptor until it execs, and until then running the script fails
/// with ETXTBSY ("Text file busy": a test failed so once).
fn wait_until_runnable(exe: &std::path::Path) {
    for _ in 0..200 {
        match std::process::Command::new(exe).arg("--version").output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            _ => return,
        }
    }
}

/// A writer that crashes is named, with its signal, rather than the
/// reader blamed for the end of its input (a writer's SIGSEGV was
/// reported as "reader: read: Invalid argument").
#[test]
fn an_end_killed_by_a_signal_is_named_with_it() {
    use pipespeed::bench::ladder::ProcessExecutor;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("crashing-writer");
    // The writer's spec names its role; the reader is the real one.
    let script = format!(
        "#!/bin/sh\ncase \"$2\" in *'\"role\":\"writer\"'*) kill -SEGV $$ ;; esac\nexec {} \"$@\"\n",
        env!("CARGO_BIN_EXE_pipespeed")
    );
    std::fs::write(&exe, script).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    wait_until_runnable(&exe);
    let facts = SystemFacts::collect();
    let mut config = config(&[Rung::WriteRead], &facts);
    config.bytes = Some(1 << 20);
    config.placement = Placement::Unpinned;
    let job = job_for(Rung::WriteRead, &config, &facts).unwrap();
    let mut executor = ProcessExecutor::new(exe);
    match executor.run(&job) {
        Err(RunError::Failed(why)) => {
            assert!(why.starts_with("writer: killed by SIGSEGV"), "{why}")
        }
        other => panic!("{other:?}"),
    }
}

/// A worker says what it could not do typed, on its standard error
/// (`RunError::to_line`), whatever its exit status: the run is
/// unavailable for that reason, not failed because its reader saw the
/// input end early.
#[test]
fn an_end_that_reports_unavailable_typed_makes_the_run_unavailable() {
    use pipespeed::bench::ladder::ProcessExecutor;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("refusing-writer");
    let line = RunError::Unavailable("huge pages not granted".into()).to_line();
    // Exit status 1, not 3: the outcome line alone says "unavailable".
    let script = format!(
        "#!/bin/sh\ncase \"$2\" in *'\"role\":\"writer\"'*) \
         echo 'pipespeed: huge pages not granted' >&2; echo '{line}' >&2; exit 1 ;; esac\n\
         exec {} \"$@\"\n",
        env!("CARGO_BIN_EXE_pipespeed")
    );
    std::fs::write(&exe, script).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    wait_until_runnable(&exe);
    let facts = SystemFacts::collect();
    let mut config = config(&[Rung::WriteRead], &facts);
    config.bytes = Some(1 << 20);
    config.placement = Placement::Unpinned;
    let job = job_for(Rung::WriteRead, &config, &facts).unwrap();
    let mut executor = ProcessExecutor::new(exe);
    assert_eq!(
        executor.run(&job).err(),
        Some(RunError::Unavailable("huge pages not granted".into()))
    );
}

/// A `pipespeed.bench/1` file (written by the pipespeed before the
/// series, `bench --runs 2 --bytes 16M`) loads into the /2 types, its
/// recorded figures kept, and writes back as /2.
#[test]
fn a_bench_1_file_loads_into_series() {
    use pipespeed::bench::ladder::LadderResult;
    let text = include_str!("fixtures/bench-v1.json");
    let old: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(old["schema"], "pipespeed.bench/1");
    let result: LadderResult = serde_json::from_str(text).unwrap();
    for (r, o) in result.rungs.iter().zip(old["rungs"].as_array().unwrap()) {
        let runs: Vec<f64> = serde_json::from_value(o["runs_gib_s"].clone()).unwrap();
        assert_eq!(r.gib_s.runs, runs, "{}", r.name);
        assert_eq!(r.gib_s.median, o["median_gib_s"].as_f64(), "{}", r.name);
        assert_eq!(r.gib_s.min, o["min_gib_s"].as_f64(), "{}", r.name);
        assert_eq!(
            r.gib_s.noise.len(),
            o["runs_noise"].as_array().unwrap().len()
        );
        assert_eq!(r.gib_s.spread.is_some(), !o["spread"].is_null());
    }
    let check = result.placement_check.as_ref().unwrap();
    let old_rows = old["placement_check"]["rows"].as_array().unwrap();
    for (row, o) in check.rows.iter().zip(old_rows) {
        assert_eq!(row.gib_s.median, o["median_gib_s"].as_f64(), "{}", row.kind);
        assert_eq!(
            row.gib_s.runs.len(),
            o["runs_gib_s"].as_array().unwrap().len()
        );
    }
    // Written again, it is a /2 document of series, and reads back equal.
    let again = serde_json::to_value(&result).unwrap();
    assert!(again["rungs"][0].get("runs_gib_s").is_none());
    assert!(again["rungs"][0]["gib_s"]["runs"].is_array());
    let back: LadderResult = serde_json::from_value(again).unwrap();
    assert_eq!(back, result);
}

/// The placement check is scheduled as the ladder is: a placement whose
/// runs spread gets runs added up to `--max-runs`, is marked noisy and
/// diagnosed for its own placement; a tight one keeps its runs.
#[test]
fn a_noisy_placement_gets_added_runs_a_spread_and_a_diagnosis() {
    /// 5 and 10 GiB/s in turn, in each placement.
    #[derive(Default)]
    struct Wild(HashMap<String, usize>);
    impl Runner<Job> for Wild {
        fn run(&mut self, job: &Job) -> Result<Sample, RunError> {
            let Job::Pipe { placement, .. } = job else {
                panic!("pipe jobs only")
            };
            let n = self.0.entry(format!("{placement:?}")).or_default();
            *n += 1;
            let rate = if n.is_multiple_of(2) { 10.0 } else { 5.0 };
            Ok(Sample {
                bytes: 1 << 30,
                seconds: 1.0 / rate,
                gib_s: rate,
                usage: None,
                noise: Some(RunNoise {
                    wall_s: 1.0,
                    ..RunNoise::default()
                }),
                copy_check: None,
            })
        }
    }
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut cfg = config(&[Rung::WriteRead], &f);
    cfg.max_runs = 6;
    let check = check_placements(
        &cfg,
        &f,
        3,
        &mut Wild::default(),
        &mut Pinger,
        &[],
        &Cancel::never(),
        &mut |_| {},
    );
    assert_eq!(check.max_runs, 6);
    for row in &check.rows {
        assert_eq!(row.gib_s.runs.len(), 6, "{}", row.kind);
        assert!(row.gib_s.noisy(), "{}", row.kind);
        assert!(row.gib_s.diagnosis.is_some(), "{}", row.kind);
    }
    // Each row is diagnosed for its own ends: only the unpinned one has
    // the scheduler's choice of CPUs as a cause.
    let placed = |kind: &str| {
        let causes = &check
            .row(kind)
            .unwrap()
            .gib_s
            .diagnosis
            .as_ref()
            .unwrap()
            .causes;
        causes.iter().any(|c| c.starts_with("placement: "))
    };
    assert!(placed("unpinned"));
    assert!(!placed("same-cpu") && !placed("different-cpu"));
}

/// Cancelled before it starts, the ladder and the placement check run
/// nothing, fail nothing, and say they were interrupted.
#[test]
fn a_cancelled_ladder_runs_nothing_and_says_so() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut mock = Mock {
        rates: HashMap::from([("write-read", vec![Ok(1.0); 10])]),
        ..Mock::default()
    };
    let cancel = Cancel::on_flag(Arc::new(AtomicBool::new(true)));
    let cfg = config(&[Rung::WriteRead], &f);
    let result = run_ladder(&cfg, &f, &mut mock, &cancel, &mut |_| {});
    assert!(result.header.interrupted);
    assert_eq!(result.rungs[0].status, Status::Ok);
    assert!(result.rungs[0].gib_s.runs.is_empty());
    let check = check_placements(
        &cfg,
        &f,
        3,
        &mut mock,
        &mut Pinger,
        &[],
        &cancel,
        &mut |_| {},
    );
    assert!(
        check
            .rows
            .iter()
            .all(|r| r.status == Status::Ok && r.gib_s.runs.is_empty())
    );
    assert_eq!(check.wakeup_reason.as_deref(), Some("interrupted"));
    assert!(mock.jobs.is_empty());
}

/// Rates by rung and placement: write-read 4 on one CPU and 1 on two,
/// vmsplice-read 2 and 5 (faster on two), tuned 50 on two; each wide
/// (a run at x0.5 then x1.5 by turns) where `wide` says.
struct ByPlacement {
    runs: Vec<(&'static str, &'static str)>,
    turn: HashMap<(&'static str, &'static str), usize>,
    wide: &'static str,
}

impl Runner<Job> for ByPlacement {
    fn run(&mut self, job: &Job) -> Result<Sample, RunError> {
        let rung = Mock::rung_of(job);
        let kind = match job {
            Job::Pipe { placement, .. } => placement.kind(),
            _ => "one thread",
        };
        self.runs.push((rung, kind));
        let base = match (rung, kind) {
            ("write-read", "same-cpu") => 4.0,
            ("write-read", _) => 1.0,
            ("vmsplice-read", "same-cpu") => 2.0,
            ("vmsplice-read", _) => 5.0,
            ("memcpy", _) => 10.0,
            _ => 50.0,
        };
        let turn = self.turn.entry((rung, kind)).or_default();
        *turn += 1;
        let rate = match rung == self.wide && kind == "same-cpu" {
            true if turn.is_multiple_of(2) => base * 1.5,
            true => base * 0.5,
            false => base,
        };
        Ok(Sample {
            bytes: 1 << 30,
            seconds: 1.0 / rate,
            gib_s: rate,
            usage: None,
            noise: None,
            copy_check: None,
        })
    }
}

#[test]
fn the_rungs_that_block_run_in_both_placements_and_show_the_faster() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut cfg = config(
        &[
            Rung::Memcpy,
            Rung::WriteRead,
            Rung::VmspliceRead,
            Rung::Tuned,
        ],
        &f,
    );
    cfg.max_runs = 6;
    cfg.alternative = Some(Placement::Pinned {
        writer_cpu: 0,
        reader_cpu: 0,
    });
    let mut runner = ByPlacement {
        runs: Vec::new(),
        turn: HashMap::new(),
        wide: "vmsplice-read",
    };
    let result = run_ladder(&cfg, &f, &mut runner, &Cancel::never(), &mut |_| {});
    let rung = |name: Rung| result.rungs.iter().find(|r| r.name == name).unwrap();
    // write-read: faster on one CPU, its two-CPU figure beside it.
    let wr = rung(Rung::WriteRead);
    assert_eq!(wr.placement.unwrap().kind(), "same-cpu");
    assert_eq!(wr.median(), Some(4.0));
    let other = wr.other_placement.as_ref().unwrap();
    assert_eq!(
        (other.kind.as_str(), other.median()),
        ("different-cpu", Some(1.0))
    );
    // vmsplice-read: faster on two; its one-CPU row, wide, got no runs added.
    let vr = rung(Rung::VmspliceRead);
    assert_eq!(vr.placement.unwrap().kind(), "different-cpu");
    let other = vr.other_placement.as_ref().unwrap();
    assert_eq!(other.kind, "same-cpu");
    assert!(other.gib_s.noisy(), "{other:?}");
    assert_eq!(
        other.gib_s.runs.len(),
        3,
        "no runs added to the other placement"
    );
    // tuned busy-loops: two CPUs only; memcpy is one thread.
    let tuned = rung(Rung::Tuned);
    assert!(tuned.other_placement.is_none());
    assert!(!runner.runs.contains(&("tuned", "same-cpu")));
    assert_eq!(rung(Rung::Memcpy).placement, None);
    // The speed-ups are over write-read on one CPU, its fastest.
    let baseline = result.baseline.as_ref().unwrap();
    assert_eq!(
        (baseline.placement.as_str(), baseline.gib_s),
        ("same-cpu", 4.0)
    );
    assert_eq!(tuned.speedup_vs_write_read, Some(50.0 / 4.0));
    assert_eq!(vr.speedup_vs_write_read, Some(5.0 / 4.0));
    assert!(result.verdict.is_some());
}
