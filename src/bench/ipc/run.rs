//! Running an `ipc` measurement on the one schedule
//! ([`crate::bench::core::schedule`]).
use crate::bench::core::{
    Cancel, Event, Figure, Phase, Plan, RunError, Runner, Sample, Slot, schedule,
};

use super::job::{IpcConfig, StreamJob, TripJob};
use super::result::{IpcResult, IpcRow, RoundTrips, SCHEMA, Throughput};
use crate::sys::SystemFacts;
use crate::units::{GIB, Size};

/// Bytes of a throughput warm-up for messages of `size`: a thousand
/// messages, from 256 KiB to 64 MiB.
pub(crate) fn warmup_bytes(size: usize) -> u64 {
    StreamJob::whole_messages(
        size,
        (size as u64)
            .saturating_mul(1024)
            .clamp(256 << 10, 64 << 20),
    )
}

/// Bytes of a measured run at `gib_s` lasting about `seconds`: at least
/// 16 messages, a whole number of them.
pub(crate) fn bytes_for(size: usize, gib_s: f64, seconds: f64) -> u64 {
    let bytes = (gib_s * seconds * GIB as f64).clamp(0.0, (64u64 << 30) as f64) as u64;
    StreamJob::whole_messages(size, bytes.max((size as u64).saturating_mul(16)))
}

/// Seconds of round trips before each latency run, not recorded.
pub(crate) const TRIP_WARMUP_S: f64 = 0.01;

/// Why a spinning mechanism is not run on one CPU.
pub const SPIN_ON_ONE_CPU: &str = "skipped on one CPU: a spinning end holds the CPU until \
                                   preempted, so the end it waits for cannot run (give two CPUs)";

/// The metric of a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    Throughput,
    Latency,
}

/// Runs every row of `config` with `runner` on the one schedule: a slot
/// per row and metric, a throughput warm-up per row to size its runs
/// (round trips warm up inside each run). Once `cancel` is set no run
/// starts, the run it cut short counts for nothing, and the result holds
/// the runs made before it, marked `interrupted`.
pub fn run_ipc<R>(
    config: &IpcConfig,
    facts: &SystemFacts,
    runner: &mut R,
    cancel: &Cancel,
    progress: &mut dyn FnMut(Event<'_>),
) -> IpcResult
where
    R: Runner<StreamJob> + Runner<TripJob> + ?Sized,
{
    let mut rows: Vec<IpcRow> = Vec::new();
    for &mechanism in &config.mechanisms {
        for &size in &config.sizes {
            rows.push(IpcRow {
                mechanism,
                size,
                copies: mechanism.copies(),
                cost: mechanism.cost().to_string(),
                throughput: config.throughput.then(Throughput::new),
                latency: config.latency.then(RoundTrips::new),
            });
        }
    }
    let ends = config.placement.ends(facts);
    let mut which: Vec<(usize, Metric)> = Vec::new();
    let mut slots: Vec<Slot> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let name = format!("{} {}", row.mechanism, Size(row.size as u64));
        let spin = (row.mechanism.spins() && ends.one_cpu).then_some(SPIN_ON_ONE_CPU);
        if row.throughput.is_some() {
            which.push((i, Metric::Throughput));
            slots.push(Slot {
                unavailable: spin.map(str::to_string),
                ..Slot::new(name.clone())
            });
        }
        if row.latency.is_some() {
            which.push((i, Metric::Latency));
            slots.push(Slot {
                unavailable: spin.or(row.mechanism.no_round_trip()).map(str::to_string),
                warm_up: false,
                ..Slot::new(name)
            });
        }
    }
    let plan = Plan {
        runs: config.runs,
        max_runs: config.max_runs,
        seed: config.seed,
        ends,
        warmup: config.warmup_rule,
    };
    let schedule = schedule(&slots, &plan, cancel, progress, &mut |k, phase| {
        let (i, metric) = which[k];
        let row = &mut rows[i];
        let (mechanism, size) = (row.mechanism, row.size);
        match (metric, &mut row.throughput, &mut row.latency) {
            (Metric::Throughput, Some(t), _) => {
                let bytes = match phase {
                    // No larger than the runs asked for.
                    Phase::WarmUp => warmup_bytes(size).min(
                        config
                            .bytes
                            .map_or(u64::MAX, |b| StreamJob::whole_messages(size, b)),
                    ),
                    Phase::Measure => t.bytes_per_run,
                };
                let job = StreamJob {
                    mechanism,
                    size,
                    bytes,
                    verify: config.verify,
                    placement: config.placement,
                    stall_timeout: config.stall_timeout,
                };
                let run = runner.run(&job)?;
                let sample = Sample {
                    value: run.gib_s,
                    figure: Figure::GibPerS(run.gib_s),
                    noise: run.noise,
                };
                match phase {
                    Phase::WarmUp => {
                        t.warmup_gib_s = Some(run.gib_s);
                        t.bytes_per_run = match config.bytes {
                            Some(bytes) => StreamJob::whole_messages(size, bytes),
                            None => bytes_for(size, run.gib_s, config.duration_s),
                        };
                    }
                    Phase::Measure => t.runs.push(run),
                }
                Ok(sample)
            }
            (Metric::Latency, _, Some(l)) => {
                let job = TripJob {
                    mechanism,
                    size,
                    seconds: config.duration_s,
                    warmup_seconds: TRIP_WARMUP_S,
                    verify: config.verify,
                    placement: config.placement,
                    stall_timeout: config.stall_timeout,
                };
                let run = runner.run(&job)?;
                let p50 = run.rtt_ns.p50 as f64;
                let sample = Sample {
                    value: p50,
                    figure: Figure::RoundTripNs(p50),
                    noise: run.noise,
                };
                if phase == Phase::Measure {
                    l.runs.push(run);
                }
                Ok(sample)
            }
            _ => Err(RunError::Failed("no such metric".into())),
        }
    });

    let header = schedule.header(SCHEMA, facts.clone());
    for (&(i, metric), outcome) in which.iter().zip(schedule.rows) {
        let row = &mut rows[i];
        match (metric, &mut row.throughput, &mut row.latency) {
            (Metric::Throughput, Some(t), _) => {
                (t.status, t.reason, t.gib_s) = (outcome.status, outcome.reason, outcome.series);
                t.stall = outcome.stall;
                t.summarize(row.size);
            }
            (Metric::Latency, _, Some(l)) => {
                (l.status, l.reason, l.p50_ns) = (outcome.status, outcome.reason, outcome.series);
                l.stall = outcome.stall;
                l.summarize();
            }
            _ => {}
        }
    }
    IpcResult {
        header,
        config: config.clone(),
        noise: schedule.noise,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::super::Mechanism;
    use super::super::record::{StreamRun, TripRun};
    use super::*;
    use crate::bench::core::{DEFAULT_STALL_TIMEOUT, Placement, Status, Warmup};
    use crate::bench::hist::LatencyNs;

    /// Makes every run at once, keeping the bytes asked for and counting
    /// the round trips; sets `stop` after `stop_after` runs.
    struct Counter {
        streams: Vec<u64>,
        trips: usize,
        stop: Arc<AtomicBool>,
        stop_after: usize,
    }

    impl Counter {
        fn new(stop: Arc<AtomicBool>, stop_after: usize) -> Counter {
            Counter {
                streams: Vec::new(),
                trips: 0,
                stop,
                stop_after,
            }
        }

        fn made(&mut self) {
            if self.streams.len() + self.trips >= self.stop_after {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
    }

    impl Runner<StreamJob> for Counter {
        fn run(&mut self, job: &StreamJob) -> Result<StreamRun, RunError> {
            self.streams.push(job.bytes);
            self.made();
            Ok(StreamRun {
                timed_bytes: job.bytes,
                seconds: 1.0,
                gib_s: 2.0,
                msgs_per_s: 1.0,
                cpu_s: None,
                bytes: job.bytes,
                noise: None,
            })
        }
    }

    impl Runner<TripJob> for Counter {
        fn run(&mut self, _: &TripJob) -> Result<TripRun, RunError> {
            self.trips += 1;
            self.made();
            Ok(TripRun {
                round_trips: 10,
                seconds: 1.0,
                round_trips_per_s: 10.0,
                rtt_ns: LatencyNs {
                    p50: 1000,
                    ..LatencyNs::default()
                },
                warmup_round_trips: 1,
                noise: None,
            })
        }
    }

    fn config() -> IpcConfig {
        IpcConfig {
            mechanisms: vec![Mechanism::Pipe, Mechanism::PipeSplice],
            sizes: vec![4096],
            throughput: true,
            latency: true,
            runs: 2,
            max_runs: 2,
            duration_s: 0.01,
            bytes: None,
            placement: Placement::Unpinned,
            verify: false,
            seed: 1,
            warmup_rule: Warmup::exactly(1),
            stall_timeout: DEFAULT_STALL_TIMEOUT,
        }
    }

    #[test]
    fn the_largest_byte_counts_still_measure() {
        for bytes in [u64::MAX, u64::MAX - 1, 1 << 63] {
            let config = IpcConfig {
                mechanisms: vec![Mechanism::Pipe],
                sizes: vec![64, 4096],
                latency: false,
                runs: 1,
                max_runs: 1,
                bytes: Some(bytes),
                ..config()
            };
            let mut runner = Counter::new(Arc::default(), usize::MAX);
            let facts = SystemFacts::collect();
            let result = run_ipc(&config, &facts, &mut runner, &Cancel::never(), &mut |_| {});
            let made = &runner.streams;
            assert!(made.iter().all(|&b| b > 0), "{bytes}: {made:?}");
            for row in &result.rows {
                let t = row.throughput.as_ref().map(|t| (t.status, t.runs.len()));
                assert_eq!(t, Some((Status::Ok, 1)), "{bytes} in {}", row.size);
            }
        }
    }

    #[test]
    fn throughput_warms_up_and_sizes_its_runs_round_trips_do_not_warm_up() {
        let mut runner = Counter::new(Arc::default(), usize::MAX);
        let facts = SystemFacts::collect();
        let r = run_ipc(
            &config(),
            &facts,
            &mut runner,
            &Cancel::never(),
            &mut |_| {},
        );
        // Two rows' throughput: a warm-up and 2 runs each; pipe's round
        // trips: 2 runs, no warm-up; pipe-splice has none (by design).
        assert_eq!((runner.streams.len(), runner.trips), (6, 2));
        let t = r.rows[0]
            .throughput
            .as_ref()
            .map(|t| (t.gib_s.runs.clone(), t.bytes_per_run));
        assert_eq!(t, Some((vec![2.0, 2.0], bytes_for(4096, 2.0, 0.01))));
        let l = r.rows[0].latency.as_ref().map(|l| l.p50_ns.runs.clone());
        assert_eq!(l, Some(vec![1000.0, 1000.0]));
        let splice = r.rows[1].latency.as_ref().map(|l| l.status);
        assert_eq!(splice, Some(Status::Unavailable));
        assert!(!r.header.interrupted);
        assert_eq!(r.header.schema, SCHEMA);
    }

    #[test]
    fn a_cancel_stops_the_runs_and_marks_the_result_interrupted() {
        let stop = Arc::new(AtomicBool::new(false));
        let mut runner = Counter::new(stop.clone(), 3);
        let facts = SystemFacts::collect();
        let cancel = Cancel::on_flag(stop);
        let r = run_ipc(&config(), &facts, &mut runner, &cancel, &mut |_| {});
        assert_eq!(runner.streams.len() + runner.trips, 3);
        assert!(r.header.interrupted);
        // The run cancel cut short counts for nothing; nothing is "failed".
        for row in &r.rows {
            let t = row.throughput.as_ref().map(|t| t.status);
            assert_ne!(t, Some(Status::Failed));
        }
    }
}
