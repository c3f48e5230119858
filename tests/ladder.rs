//! The ladder's scheduling and statistics, with a mock executor: no
//! processes, no timings.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use pipespeed::bench::harness::{Event, Runner};
use pipespeed::bench::ladder::{
    Job, LadderConfig, Placement, RunError, Rung, Sample, Status, job_for, run_ladder,
};
use pipespeed::bench::reader::ReadMethod;
use pipespeed::bench::writer::WriteMethod;
use pipespeed::sys::{SystemFacts, ThpMode};
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
        bytes: None,
        buf_size: 256 * 1024,
        pipe_size: None,
        placement: Placement::default_for(facts),
        verify: false,
        seed: 7,
        target_seconds: 0.5,
        profile: false,
    }
}

/// Answers each rung with a fixed rate per call, in order, and records
/// the jobs it was given.
struct Mock {
    rates: HashMap<&'static str, Vec<Result<f64, RunError>>>,
    jobs: Vec<Job>,
}

impl Mock {
    fn rung_of(job: &Job) -> &'static str {
        match job {
            Job::Memcpy { .. } => "memcpy",
            Job::Pipe { writer, reader, .. } => {
                match (writer.method, reader.method, writer.buffer.huge_pages) {
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
    };
    let mut events = 0;
    let result = run_ladder(
        &config(&[Rung::WriteRead, Rung::VmspliceRead], &f),
        &f,
        &mut mock,
        &mut |_| events += 1,
    );
    assert_eq!(events, 8);
    let wr = &result.rungs[0];
    assert_eq!(wr.name, Rung::WriteRead);
    assert_eq!(wr.status, Status::Ok);
    assert_eq!(wr.warmup_gib_s, Some(100.0));
    assert_eq!(wr.median_gib_s, Some(2.0));
    assert_eq!((wr.min_gib_s, wr.max_gib_s), (Some(1.0), Some(3.0)));
    assert_eq!(wr.speedup_vs_write_read, Some(1.0));
    assert_eq!(result.rungs[1].median_gib_s, Some(7.0));
    assert_eq!(result.rungs[1].speedup_vs_write_read, Some(3.5));
    assert_eq!(result.header.schema, "pipespeed.bench/1");
}

#[test]
fn runs_are_sized_from_the_warmup_rate() {
    let f = facts(&[0, 1], ThpMode::Madvise);
    let mut mock = Mock {
        rates: HashMap::from([("write-read", vec![Ok(2.0), Ok(2.0), Ok(2.0), Ok(2.0)])]),
        jobs: vec![],
    };
    let result = run_ladder(&config(&[Rung::WriteRead], &f), &f, &mut mock, &mut |_| {});
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
    };
    let result = run_ladder(&cfg, &f, &mut mock, &mut |_| {});
    let order: Vec<&str> = mock.jobs[2..].iter().map(Mock::rung_of).collect();
    assert_eq!(order.len(), 16);
    let sorted_halves = order[..8].iter().all(|&r| r == "write-read")
        || order[..8].iter().all(|&r| r == "vmsplice-read");
    assert!(!sorted_halves, "runs were not interleaved: {order:?}");
    assert_eq!(result.rungs[0].runs_gib_s.len(), 8);
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
    };
    let mut skipped = vec![];
    let result = run_ladder(
        &config(&[Rung::WriteRead, Rung::VmspliceSpliceHuge], &f),
        &f,
        &mut mock,
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
    assert!(huge.runs_gib_s.is_empty());
    assert_eq!(huge.median_gib_s, None);
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
    };
    let result = run_ladder(&cfg, &f, &mut mock, &mut |_| {});
    let r = &result.rungs[0];
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.reason.as_deref(), Some("reader crashed"));
    assert_eq!(r.runs_gib_s, vec![1.5]);
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
    assert!(!writer.buffer.huge_pages);
    assert_eq!(writer.wait, Wait::Block);
    assert_eq!(reader.buf_size, 1 << 20);
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
    assert!(writer.buffer.huge_pages && writer.check_huge_pages);
    assert_eq!((writer.wait, reader.wait), (Wait::Busy, Wait::Busy));
    assert_eq!(reader.method, ReadMethod::Splice);
    let Ok(Job::Pipe { writer, .. }) = job_for(Rung::Tuned, &cfg, &f) else {
        panic!()
    };
    assert_eq!(writer.buf_size, 2 << 20, "two halves of pipe-max-size");
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
