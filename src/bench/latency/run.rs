//! Running a latency measurement: a slot per size in the one schedule,
//! each run by a runner that places pinger and ponger in threads or
//! processes.

use std::io;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use super::super::core::harness::{Event, Figure, Processes, Runner, Threads};
use super::super::core::schedule::measure;
use super::super::core::{Cancel, Phase, Plan, RunError, Slot, Spawn, pin};
use super::super::hist::TripRun;
use super::super::ping::{ping, pong};
use super::job::{Exchange, LatencyConfig, PingConfig, PingJob, Span};
use super::result::{LatencyResult, LatencyRow, SCHEMA};
use crate::bench::core::Stall;
use crate::bench::core::end_thread::EndThread;
use crate::bench::core::watchdog::{Roster, Watched, run_threads, this_thread, watch_run};
use crate::bench::core::worker::Told;
use crate::child::Group;
use crate::sys::task::Task;
use crate::sys::{SystemFacts, pipe};
use crate::units::Size;

/// Pinger and ponger as two threads of this process, watched: a run
/// whose side stalls returns the stall at once
/// (`core::watchdog::run_threads`).
impl Runner<PingJob> for Threads {
    fn run(&mut self, job: &PingJob) -> io::Result<TripRun> {
        let job = *job;
        match run_threads(job.stall_timeout, move |roster| in_threads(&job, roster)) {
            Ok(ran) => ran,
            Err(RunError::Stalled(stall)) => Err(stall.into_io()),
            Err(e) => Err(io::Error::other(e.to_string())),
        }
    }
}

fn in_threads(job: &PingJob, roster: &Roster) -> io::Result<TripRun> {
    let (a_to_b, b_to_a) = (pipe()?, pipe()?);
    let (pinger_cpu, ponger_cpu) = job.placement.cpus();
    let (config, exchange) = (&job.ping, job.ping.exchange);
    // The watchdog starts once both sides have enlisted (or ended: a
    // side's sender is dropped with it, so this never waits for ever).
    let (enlisted, both) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        // Each side owns its ends, so they close when it returns: a
        // side that fails ends the other one instead of hanging it.
        let told = enlisted.clone();
        let ponger = s.spawn(move || {
            roster.enlist("the ponger".into());
            let _ = told.send(());
            pin(ponger_cpu, "ponger")?;
            pong(a_to_b.read, b_to_a.write, &exchange)
        });
        let pinger = s.spawn(move || {
            roster.enlist("the pinger".into());
            let _ = enlisted.send(());
            pin(pinger_cpu, "pinger")?;
            ping(a_to_b.write, b_to_a.read, config)
        });
        let _ = (both.recv(), both.recv());
        let watching = roster.watch();
        let panicked = |who: &str| io::Error::other(format!("the {who} thread panicked"));
        let pinged = pinger.join().map_err(|_| panicked("pinger"))?;
        let served = ponger.join().map_err(|_| panicked("ponger"))?;
        watching?;
        // The ponger's error is the cause when both failed.
        let (run, served) = (pinged?, served?);
        let sent = run.warmup_round_trips + run.round_trips;
        if served != sent {
            return Err(io::Error::other(format!(
                "the ponger served {served} round trips, the pinger made {sent}"
            )));
        }
        Ok(run)
    })
}

/// How long a ponger may take to exit once the pinger is done.
const PONGER_EXIT_TIMEOUT: Duration = Duration::from_secs(10);

/// Pinger in a thread of this process, ponger in a child process: the
/// pipespeed binary run as a ponger worker, its stdin and
/// stdout the two pipes.
impl Runner<PingJob> for Processes {
    fn run(&mut self, job: &PingJob) -> io::Result<TripRun> {
        let (a_to_b, b_to_a) = (pipe()?, pipe()?);
        let (pinger_cpu, ponger_cpu) = job.placement.cpus();
        let config = &job.ping;
        let ponger = Spawn::new(&config.exchange, ponger_cpu);
        let mut cmd = ponger.command(&self.exe);
        // Our pipes are close-on-exec; dup2 onto stdin and stdout clears
        // that, so the child holds exactly its two ends.
        cmd.stdin(Stdio::from(a_to_b.read))
            .stdout(Stdio::from(b_to_a.write))
            .stderr(Stdio::piped());
        let mut group = Group::new();
        let child = group.spawn(&mut cmd, "the ponger".into())?;
        // Close our copies of the child's ends, so that each side sees the
        // other one go.
        drop(cmd);
        let ponger = Watched {
            label: "the ponger".into(),
            task: Task::process(group.child(child).id()),
        };
        let (pinger_is, pinger_tid) = mpsc::channel();
        let config = *config;
        let pinger = EndThread::spawn("pinger", move || {
            let _ = pinger_is.send(this_thread("the pinger"));
            pin(pinger_cpu, "pinger")?;
            ping(a_to_b.write, b_to_a.read, &config)
        })?;
        // A stalled side: the ponger is killed, and the pinger's next
        // read or write fails. A signal kills the ponger too; the run
        // ends without waiting for the pinger (see `EndThread`).
        let tasks = [Some(ponger), pinger_tid.recv().ok()];
        let watch = watch_run(tasks.into_iter().flatten().collect(), job.stall_timeout);
        let pinged = match pinger.join() {
            Ok(Some(pinged)) => pinged,
            Ok(None) => {
                return Err(crate::child::interrupted_error()
                    .unwrap_or_else(|| io::Error::from(io::ErrorKind::Interrupted)));
            }
            Err(e) => Err(e),
        };
        if let Some(stall) = watch?.finish() {
            return Err(stall.into_io());
        }
        // It exits on end of file; the ponger's error is the cause when
        // both failed.
        let ended = group.finish(child, PONGER_EXIT_TIMEOUT);
        if ended.killed {
            return Err(io::Error::other(
                "the ponger did not exit after the pinger finished; killed",
            ));
        }
        if ended.success() {
            return pinged;
        }
        // What the ponger said it could not do, typed; else its last words
        // (a crash), else its status.
        match Told::of(&ended.stderr) {
            Told::Outcome(err) => Err(err.into_io()),
            Told::Nothing => Err(io::Error::other(match ended.status {
                Some(status) => format!("the ponger failed ({status})"),
                None => "cannot wait for the ponger".to_string(),
            })),
            Told::Words(why) => Err(io::Error::other(why.to_string())),
        }
    }
}

/// A warm-up run lasts a tenth of a measured one (at least 1 round trip
/// or 10 ms): it wakes the CPUs and the caches up, and finds a size this
/// machine cannot run before any measured run.
fn short(span: Span) -> Span {
    match span {
        Span::RoundTrips(n) => Span::RoundTrips((n / 10).max(1)),
        Span::Seconds(s) => Span::Seconds((s / 10.0).max(0.01)),
    }
}

/// Measures every size of `config` with `runner` by the one
/// [`schedule()`](super::super::core::schedule()), a short warm-up run
/// first. A run that fails stops its size (`failed`, the runs before
/// kept); the other sizes go on. Once `cancel` is set the result holds the
/// runs made before, marked `interrupted`.
pub fn run_latency(
    config: &LatencyConfig,
    system: SystemFacts,
    runner: &mut dyn Runner<PingJob>,
    cancel: &Cancel,
    progress: &mut dyn FnMut(Event<'_>),
) -> LatencyResult {
    let ends = config.placement.ends(&system);
    let plan = Plan {
        runs: config.runs,
        max_runs: config.max_runs(),
        seed: config.seed,
        ends,
        warmup: config.warmup_rule,
    };
    let slots: Vec<Slot> = (config.sizes.iter())
        .map(|&size| Slot::new(Size(size as u64).to_string()))
        .collect();
    let on = config.placement.cpu_list();
    let done = measure(&slots, &plan, &on, cancel, progress, &mut |i, phase| {
        let size = config.sizes[i];
        let job = PingJob {
            ping: PingConfig {
                exchange: Exchange {
                    size,
                    wait: config.wait,
                    verify: config.verify,
                },
                warmup: config.warmup,
                measure: match phase {
                    Phase::WarmUp => short(config.measure),
                    Phase::Measure => config.measure,
                },
            },
            placement: config.placement,
            stall_timeout: config.stall_timeout,
        };
        let run = runner.run(&job).map_err(|e| {
            if let Some(stall) = Stall::of_io(&e) {
                return RunError::Stalled(Box::new(stall.clone()));
            }
            let err = RunError::from_io(&e);
            let (_, why) = err.status();
            let why = format!("{size}-byte messages: {why}");
            match err {
                RunError::Unavailable(_) => RunError::Unavailable(why),
                RunError::Failed(_) | RunError::Stalled(_) => RunError::Failed(why),
            }
        })?;
        Ok((Figure::RoundTripNs(run.rtt_ns.p50 as f64), run))
    });
    let header = done.schedule.header(SCHEMA, system);
    let rows = (done.reached())
        .map(|(i, outcome, mut runs)| {
            // Each measured run's noise, as the schedule recorded it.
            for (run, noise) in runs.iter_mut().zip(&outcome.series.noise) {
                run.noise = Some(*noise);
            }
            let mut row = LatencyRow::of(
                config.sizes[i],
                outcome.status,
                outcome.reason,
                outcome.series,
                runs,
                ends,
            );
            row.stall = outcome.stall;
            row
        })
        .collect();
    LatencyResult {
        header,
        config: config.clone(),
        rows,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use crate::bench::core::{Placement, Status};
    use crate::bench::hist::LatencyNs;
    use crate::report::fixtures::machine as facts;
    use crate::wait::Wait;

    /// Answers each job at once: size `s`'s runs take the p50s of
    /// `p50s[s]` in turn (the last repeated); a p50 of 0 fails the run.
    /// Records every job; sets `cancel_after` once that many jobs ran.
    #[derive(Default)]
    struct Mock {
        p50s: HashMap<usize, Vec<u64>>,
        made: HashMap<usize, usize>,
        jobs: Vec<PingJob>,
        cancel_after: Option<(usize, Arc<AtomicBool>)>,
    }

    impl Runner<PingJob> for Mock {
        fn run(&mut self, job: &PingJob) -> io::Result<TripRun> {
            self.jobs.push(*job);
            if let Some((n, flag)) = &self.cancel_after
                && self.jobs.len() >= *n
            {
                flag.store(true, Ordering::Relaxed);
            }
            let size = job.ping.exchange.size;
            let made = self.made.entry(size).or_default();
            let p50s = &self.p50s[&size];
            let p50 = p50s[(*made).min(p50s.len() - 1)];
            *made += 1;
            if p50 == 0 {
                return Err(io::Error::other("the ponger died"));
            }
            Ok(TripRun {
                round_trips: 100,
                seconds: p50 as f64 * 100.0 / 1e9,
                round_trips_per_s: 1e9 / p50 as f64,
                rtt_ns: LatencyNs {
                    p50,
                    ..LatencyNs::default()
                },
                warmup_round_trips: 10,
                noise: None,
            })
        }
    }

    fn config(sizes: &[usize], runs: usize, max_runs: usize) -> LatencyConfig {
        LatencyConfig {
            sizes: sizes.to_vec(),
            runs,
            max_runs,
            seed: 7,
            warmup: Span::RoundTrips(10),
            measure: Span::RoundTrips(100),
            wait: Wait::Block,
            verify: false,
            mode: crate::bench::core::Mode::Threads,
            placement: Placement::Pinned {
                writer_cpu: 0,
                reader_cpu: 1,
            },
            stall_timeout: crate::bench::core::DEFAULT_STALL_TIMEOUT,
            warmup_rule: crate::bench::core::Warmup::exactly(1),
        }
    }

    #[test]
    fn every_size_is_warmed_up_short_then_measured_shuffled() {
        let mut mock = Mock {
            p50s: HashMap::from([(1, vec![20_000]), (4096, vec![30_000])]),
            ..Mock::default()
        };
        let cfg = config(&[1, 4096], 4, 4);
        let r = run_latency(&cfg, facts(), &mut mock, &Cancel::never(), &mut |_| {});
        // A warm-up run per size first, a tenth as long, then 8 measured.
        let spans: Vec<(usize, Span)> = (mock.jobs.iter())
            .map(|j| (j.ping.exchange.size, j.ping.measure))
            .collect();
        assert_eq!(
            spans[..2],
            [(1, Span::RoundTrips(10)), (4096, Span::RoundTrips(10))]
        );
        assert_eq!(spans.len(), 10);
        assert!(spans[2..].iter().all(|s| s.1 == Span::RoundTrips(100)));
        let sizes: Vec<usize> = spans[2..].iter().map(|s| s.0).collect();
        assert_ne!(sizes, [1, 1, 1, 1, 4096, 4096, 4096, 4096], "not shuffled");
        assert!(mock.jobs.iter().all(|j| j.placement == cfg.placement));
        // Rows in the sizes' order, each of its runs, summarized.
        assert_eq!(r.header.schema, SCHEMA);
        assert!(!r.header.interrupted);
        let rows: Vec<(usize, Status, usize)> = (r.rows.iter())
            .map(|r| (r.size, r.status, r.runs.len()))
            .collect();
        assert_eq!(rows, [(1, Status::Ok, 4), (4096, Status::Ok, 4)]);
        assert_eq!(r.rows[1].rtt_p50_ns.median, Some(30_000.0));
        assert_eq!(r.rows[1].rtt_ns.p50, 30_000);
        assert!(!r.rows[0].noisy());
        // The machine's noise around every measured run, not the warm-ups.
        assert_eq!(r.rows[0].rtt_p50_ns.noise.len(), 4);
        assert!(r.noise().is_some());
    }

    #[test]
    fn a_spreading_size_gets_more_runs_and_a_diagnosis() {
        let mut mock = Mock {
            p50s: HashMap::from([
                (1, vec![20_000]),
                // The warm-up, then runs 2x apart.
                (64, vec![20_000, 20_000, 40_000]),
            ]),
            ..Mock::default()
        };
        let cfg = config(&[1, 64], 3, 6);
        let r = run_latency(&cfg, facts(), &mut mock, &Cancel::never(), &mut |_| {});
        let runs: Vec<usize> = r.rows.iter().map(|r| r.runs.len()).collect();
        assert_eq!(runs, [3, 6], "runs added to the noisy size only");
        let noisy = &r.rows[1];
        assert!(noisy.noisy() && noisy.rtt_p50_ns.diagnosis.is_some());
        assert!(noisy.round_trips_per_s.diagnosis.is_some());
        assert_eq!(r.rows[0].rtt_p50_ns.diagnosis, None);
    }

    #[test]
    fn a_failing_size_is_failed_with_its_reason_and_the_others_go_on() {
        let mut mock = Mock {
            // The warm-up and one run, then the ponger dies.
            p50s: HashMap::from([(1, vec![20_000, 20_000, 0]), (64, vec![25_000])]),
            ..Mock::default()
        };
        let cfg = config(&[1, 64], 3, 3);
        let r = run_latency(&cfg, facts(), &mut mock, &Cancel::never(), &mut |_| {});
        let failed = &r.rows[0];
        assert_eq!((failed.status, failed.runs.len()), (Status::Failed, 1));
        assert_eq!(
            failed.reason.as_deref(),
            Some("1-byte messages: the ponger died")
        );
        assert_eq!((r.rows[1].status, r.rows[1].runs.len()), (Status::Ok, 3));
    }

    #[test]
    fn cancelled_it_keeps_the_sizes_measured_and_says_so() {
        let flag = Arc::new(AtomicBool::new(false));
        let mut mock = Mock {
            p50s: HashMap::from([(1, vec![20_000]), (64, vec![25_000]), (4096, vec![9])]),
            // Three warm-ups and one measured run.
            cancel_after: Some((4, flag.clone())),
            ..Mock::default()
        };
        let cfg = config(&[1, 64, 4096], 5, 5);
        let r = run_latency(
            &cfg,
            facts(),
            &mut mock,
            &Cancel::on_flag(flag),
            &mut |_| {},
        );
        assert!(r.header.interrupted);
        assert_eq!(mock.jobs.len(), 4);
        assert_eq!(r.rows.len(), 1, "only the size measured: {:?}", r.rows);
        assert_eq!(r.rows[0].runs.len(), 1);
    }
}
