//! Running an `ipc` measurement: a throughput warm-up per row to size its
//! runs, then every measured run of every row and metric in one shuffled
//! order, more runs of the rows whose interval is too wide, and the
//! statistics, as the ladder does.
use crate::bench::core::{Placement, RunError, Status};

use super::super::core::harness::{Event, Figure, Header, Runner};
use super::super::core::noise::{Diagnosis, Ends, NoiseSummary};
use super::super::core::stats::Shuffler;
use super::job::{IpcConfig, StreamJob, TripJob, one_cpu};
use super::result::{IpcResult, IpcRow, RoundTrips, SCHEMA, Throughput};
use crate::sys::SystemFacts;
use crate::sys::process::interrupted;
use crate::units::{GIB, Size};

/// Bytes of a throughput warm-up for messages of `size`: a thousand
/// messages, from 256 KiB to 64 MiB.
pub fn warmup_bytes(size: usize) -> u64 {
    StreamJob::whole_messages(
        size,
        (size as u64)
            .saturating_mul(1024)
            .clamp(256 << 10, 64 << 20),
    )
}

/// Bytes of a measured run at `gib_s` lasting about `seconds`: at least
/// 16 messages, a whole number of them.
pub fn bytes_for(size: usize, gib_s: f64, seconds: f64) -> u64 {
    let bytes = (gib_s * seconds * GIB as f64).clamp(0.0, (64u64 << 30) as f64) as u64;
    StreamJob::whole_messages(size, bytes.max((size as u64).saturating_mul(16)))
}

/// Seconds of round trips before each latency run, not recorded.
pub const TRIP_WARMUP_S: f64 = 0.01;

/// Why a spinning mechanism is not run on one CPU.
pub const SPIN_ON_ONE_CPU: &str = "skipped on one CPU: a spinning end holds the CPU until \
                                   preempted, so the end it waits for cannot run (give two CPUs)";

/// The metric of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    Throughput,
    Latency,
}

/// Runs every row of `config` with `runner` and summarises.
///
/// After SIGINT, SIGTERM or SIGHUP no run starts, the run it cut short counts for
/// nothing, and the result holds the runs made before it, marked
/// `interrupted`.
pub fn run_ipc<R>(
    config: &IpcConfig,
    facts: &SystemFacts,
    runner: &mut R,
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
    let names: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {}", r.mechanism, Size(r.size as u64)))
        .collect();
    let shared = one_cpu(config.placement, &facts.cpus_allowed);
    for (row, name) in rows.iter_mut().zip(&names) {
        let spin = (row.mechanism.spins() && shared).then_some(SPIN_ON_ONE_CPU);
        if let Some(t) = &mut row.throughput
            && let Some(why) = spin
        {
            unavailable(&mut t.status, &mut t.reason, why, name, progress);
        }
        if let Some(l) = &mut row.latency
            && let Some(why) = spin.or(row.mechanism.no_round_trip())
        {
            unavailable(&mut l.status, &mut l.reason, why, name, progress);
        }
    }

    // Throughput warm-ups: they size the runs, and find what is
    // unavailable before the measured runs start.
    for (row, name) in rows.iter_mut().zip(&names) {
        let (mechanism, size) = (row.mechanism, row.size);
        let Some(t) = row.throughput.as_mut().filter(|t| t.status == Status::Ok) else {
            continue;
        };
        if interrupted().is_some() {
            break;
        }
        let job = StreamJob {
            mechanism,
            size,
            // No larger than the runs asked for.
            bytes: warmup_bytes(size).min(
                config
                    .bytes
                    .map_or(u64::MAX, |b| StreamJob::whole_messages(size, b)),
            ),
            verify: config.verify,
            placement: config.placement,
        };
        match runner.run(&job) {
            Ok(run) => {
                progress(Event::WarmedUp {
                    row: name,
                    figure: Figure::GibPerS(run.gib_s),
                });
                t.warmup_gib_s = Some(run.gib_s);
                t.bytes_per_run = match config.bytes {
                    Some(bytes) => StreamJob::whole_messages(size, bytes),
                    None => bytes_for(size, run.gib_s, config.duration_s),
                };
            }
            Err(_) if interrupted().is_some() => break,
            Err(err) => mark(&mut t.status, &mut t.reason, err, name, progress),
        }
    }

    let live = |rows: &[IpcRow], i: usize, metric: Metric| match metric {
        Metric::Throughput => rows[i]
            .throughput
            .as_ref()
            .is_some_and(|t| t.status == Status::Ok && t.bytes_per_run > 0),
        Metric::Latency => rows[i]
            .latency
            .as_ref()
            .is_some_and(|l| l.status == Status::Ok),
    };
    let mut order: Vec<(usize, Metric)> = (0..config.runs)
        .flat_map(|_| (0..rows.len()).flat_map(|i| [(i, Metric::Throughput), (i, Metric::Latency)]))
        .filter(|&(i, m)| live(&rows, i, m))
        .collect();
    let mut shuffler = Shuffler::new(config.seed);
    shuffler.shuffle(&mut order);
    let (mut done, mut total) = (0, order.len());
    while !order.is_empty() && interrupted().is_none() {
        for (i, metric) in order {
            if !live(&rows, i, metric) {
                continue;
            }
            if interrupted().is_some() {
                break;
            }
            done += 1;
            let (name, row) = (&names[i], &mut rows[i]);
            // One run of the row's metric: what it measured, and where
            // the metric says why it stopped.
            let (made, status, reason) = match (metric, &mut row.throughput, &mut row.latency) {
                (Metric::Throughput, Some(t), _) => {
                    let job = StreamJob {
                        mechanism: row.mechanism,
                        size: row.size,
                        bytes: t.bytes_per_run,
                        verify: config.verify,
                        placement: config.placement,
                    };
                    let made = runner.run(&job).map(|run| {
                        let figure = Figure::GibPerS(run.gib_s);
                        t.runs.push(run);
                        figure
                    });
                    (made, &mut t.status, &mut t.reason)
                }
                (Metric::Latency, _, Some(l)) => {
                    let job = TripJob {
                        mechanism: row.mechanism,
                        size: row.size,
                        seconds: config.duration_s,
                        warmup_seconds: TRIP_WARMUP_S,
                        verify: config.verify,
                        placement: config.placement,
                    };
                    let made = runner.run(&job).map(|run| {
                        let figure = Figure::RoundTripNs(run.rtt_ns.p50 as f64);
                        l.runs.push(run);
                        figure
                    });
                    (made, &mut l.status, &mut l.reason)
                }
                _ => continue,
            };
            match made {
                Ok(figure) => progress(Event::Measured {
                    row: name,
                    index: done,
                    total,
                    figure,
                }),
                Err(_) if interrupted().is_some() => break,
                Err(err) => mark(status, reason, err, name, progress),
            }
        }
        for row in &mut rows {
            summarize(row);
        }
        // One more run of each row and metric whose interval is too wide.
        order = (0..rows.len())
            .flat_map(|i| [(i, Metric::Throughput), (i, Metric::Latency)])
            .filter(|&(i, metric)| {
                let (runs, spread) = match metric {
                    Metric::Throughput => rows[i]
                        .throughput
                        .as_ref()
                        .map_or((0, None), |t| (t.runs.len(), t.spread)),
                    Metric::Latency => rows[i]
                        .latency
                        .as_ref()
                        .map_or((0, None), |l| (l.runs.len(), l.spread)),
                };
                live(&rows, i, metric) && runs < config.max_runs && spread.is_some_and(|s| s.wide())
            })
            .collect();
        shuffler.shuffle(&mut order);
        total += order.len();
    }

    // A metric left "ok" without a single run, when no signal stopped the
    // measurement, measured nothing: say so rather than "ok" (runs sized
    // to 0 bytes once made `ipc` exit 0 with every row empty).
    if interrupted().is_none() {
        for (row, name) in rows.iter_mut().zip(&names) {
            if let Some(t) = &mut row.throughput
                && t.status == Status::Ok
                && t.runs.is_empty()
            {
                let why = RunError::Failed(format!(
                    "no run was made (runs of {} bytes)",
                    t.bytes_per_run
                ));
                mark(&mut t.status, &mut t.reason, why, name, progress);
            }
            if let Some(l) = &mut row.latency
                && l.status == Status::Ok
                && l.runs.is_empty()
            {
                let why = RunError::Failed("no run was made".to_string());
                mark(&mut l.status, &mut l.reason, why, name, progress);
            }
        }
    }

    let ends = Ends {
        unpinned: config.placement == Placement::Unpinned,
        one_cpu: shared,
    };
    for row in &mut rows {
        summarize(row);
        if let Some(t) = &mut row.throughput
            && t.spread.is_some_and(|s| s.noisy)
        {
            let noise: Vec<_> = t.runs.iter().filter_map(|r| r.noise).collect();
            t.diagnosis = Some(Diagnosis::of(&noise, ends));
        }
        if let Some(l) = &mut row.latency
            && l.spread.is_some_and(|s| s.noisy)
        {
            let noise: Vec<_> = l.runs.iter().filter_map(|r| r.noise).collect();
            l.diagnosis = Some(Diagnosis::of(&noise, ends));
        }
    }
    let all_noise: Vec<_> = rows
        .iter()
        .flat_map(|r| {
            let t = r
                .throughput
                .iter()
                .flat_map(|t| &t.runs)
                .filter_map(|r| r.noise);
            let l = r
                .latency
                .iter()
                .flat_map(|l| &l.runs)
                .filter_map(|r| r.noise);
            t.chain(l)
        })
        .collect();
    let noise = NoiseSummary::of(&all_noise);
    let mut header = Header::new(SCHEMA, facts.clone());
    header.interrupted = interrupted().is_some();
    IpcResult {
        header,
        config: config.clone(),
        noise: (noise.runs > 0).then_some(noise),
        rows,
    }
}

fn summarize(row: &mut IpcRow) {
    if let Some(t) = &mut row.throughput {
        t.summarize(row.size);
    }
    if let Some(l) = &mut row.latency {
        l.summarize();
    }
}

fn unavailable(
    status: &mut Status,
    reason: &mut Option<String>,
    why: &str,
    row: &str,
    progress: &mut dyn FnMut(Event<'_>),
) {
    *status = Status::Unavailable;
    *reason = Some(why.to_string());
    progress(Event::Skipped { row, reason: why });
}

fn mark(
    status: &mut Status,
    reason: &mut Option<String>,
    err: RunError,
    row: &str,
    progress: &mut dyn FnMut(Event<'_>),
) {
    let (s, why) = match err {
        RunError::Unavailable(why) => (Status::Unavailable, why),
        RunError::Failed(why) => (Status::Failed, why),
    };
    *status = s;
    progress(Event::Skipped { row, reason: &why });
    *reason = Some(why);
}

#[cfg(test)]
mod tests {
    use super::super::result::StreamRun;
    use super::*;

    /// Makes every throughput run at once, keeping the bytes asked for.
    struct Mock {
        bytes: Vec<u64>,
    }

    impl Runner<StreamJob> for Mock {
        fn run(&mut self, job: &StreamJob) -> Result<StreamRun, RunError> {
            self.bytes.push(job.bytes);
            Ok(StreamRun {
                timed_bytes: job.bytes,
                seconds: 1.0,
                gib_s: 1.0,
                msgs_per_s: 1.0,
                cpu_s: None,
                bytes: job.bytes,
                noise: None,
            })
        }
    }

    impl Runner<TripJob> for Mock {
        fn run(&mut self, _: &TripJob) -> Result<super::super::result::TripRun, RunError> {
            Err(RunError::Failed("not here".into()))
        }
    }

    #[test]
    fn the_largest_byte_counts_still_measure() {
        for bytes in [u64::MAX, u64::MAX - 1, 1 << 63] {
            let config = IpcConfig {
                mechanisms: vec![super::super::Mechanism::Pipe],
                sizes: vec![64, 4096],
                throughput: true,
                latency: false,
                runs: 1,
                max_runs: 1,
                duration_s: 0.01,
                bytes: Some(bytes),
                placement: Placement::Unpinned,
                verify: false,
                seed: 1,
            };
            let mut mock = Mock { bytes: Vec::new() };
            let result = run_ipc(&config, &SystemFacts::collect(), &mut mock, &mut |_| {});
            assert!(
                mock.bytes.iter().all(|&b| b > 0),
                "{bytes}: {:?}",
                mock.bytes
            );
            for row in &result.rows {
                let t = row.throughput.as_ref().map(|t| (t.status, t.runs.len()));
                assert_eq!(t, Some((Status::Ok, 1)), "{bytes} in {}", row.size);
            }
        }
    }
}
