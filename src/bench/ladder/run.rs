//! Running the ladder: a warm-up per rung, then every measured run in one
//! shuffled order, then the statistics.
use crate::bench::core::{Placement, RunError, Status};

use crate::bench::core::harness::Header;
use crate::bench::core::noise::{Diagnosis, Ends, NoiseSummary};
use crate::sys::process::interrupted;
use crate::sys::{ResourceUsage, RunNoise, SystemFacts};

use super::super::core::harness::{Event, Figure, Runner};
use super::super::core::stats::Shuffler;
use super::super::profile::Cost;
use super::copies::CopyCheck;
use super::job::{Job, LadderConfig, WARMUP_BYTES, bytes_for, job_for};
use super::result::{LadderResult, RungResult, SCHEMA};
use super::rung::Rung;

/// One measured run.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Bytes the rate was computed from.
    pub bytes: u64,
    /// Seconds they took.
    pub seconds: f64,
    /// The rate.
    pub gib_s: f64,
    /// What the run used (both ends' processes, or the memcpy thread);
    /// `None`: not measured.
    pub usage: Option<ResourceUsage>,
    /// What else the machine did meanwhile (`None`: not measured).
    pub noise: Option<RunNoise>,
    /// What the check of the job's vmsplice found on this kernel (`None`:
    /// the job does not vmsplice, or the runner does not check).
    pub copy_check: Option<CopyCheck>,
}

/// Runs the ladder: a warm-up per rung, then `runs` runs of each in a
/// shuffled order, and the statistics.
///
/// After SIGINT, SIGTERM or SIGHUP (see
/// [`catch_interrupts`](crate::sys::process::catch_interrupts)) no run
/// starts, the run it cut short counts for nothing, and the result holds
/// the runs made before it, marked `interrupted`.
pub fn run_ladder(
    config: &LadderConfig,
    facts: &SystemFacts,
    runner: &mut dyn Runner<Job>,
    progress: &mut dyn FnMut(Event<'_>),
) -> LadderResult {
    let mut results: Vec<RungResult> = Vec::new();
    let mut jobs: Vec<Option<Job>> = Vec::new();
    for &rung in &config.rungs {
        let job = job_for(rung, config, facts);
        let (buf_size, pipe_size) = match &job {
            Ok(job) => job.sizes(),
            Err(_) => (config.buf_size, None),
        };
        let mut result = RungResult::new(rung, buf_size, pipe_size);
        let job = match job {
            Ok(_) if interrupted().is_some() => None,
            Ok(job) => {
                let warmup = job.with_bytes(config.bytes.unwrap_or(WARMUP_BYTES).min(WARMUP_BYTES));
                match runner.run(&warmup) {
                    Ok(sample) => {
                        progress(Event::WarmedUp {
                            row: rung.name(),
                            figure: Figure::GibPerS(sample.gib_s),
                        });
                        result.warmup_gib_s = Some(sample.gib_s);
                        if sample.copy_check == Some(CopyCheck::Copies) {
                            result.copies = rung.copies() + 1;
                        }
                        result.copy_check = sample.copy_check;
                        result.bytes_per_run = config
                            .bytes
                            .unwrap_or_else(|| bytes_for(sample.gib_s, config.target_seconds));
                        Some(job.with_bytes(result.bytes_per_run))
                    }
                    Err(_) if interrupted().is_some() => None,
                    Err(err) => {
                        mark(&mut result, err);
                        None
                    }
                }
            }
            Err(reason) => {
                result.status = Status::Unavailable;
                result.reason = Some(reason);
                None
            }
        };
        if let Some(reason) = &result.reason {
            progress(Event::Skipped {
                row: rung.name(),
                reason,
            });
        }
        results.push(result);
        jobs.push(job);
    }

    let mut usage: Vec<Option<(ResourceUsage, u64)>> = vec![None; jobs.len()];
    let mut order: Vec<usize> = (0..config.runs)
        .flat_map(|_| {
            jobs.iter()
                .enumerate()
                .filter(|(_, j)| j.is_some())
                .map(|(i, _)| i)
        })
        .collect();
    let mut shuffler = Shuffler::new(config.seed);
    shuffler.shuffle(&mut order);
    let mut done = 0;
    let mut total = order.len();
    // Then, while the interval of some rungs is too wide, one more run of
    // each of them, in a shuffled order, until it narrows or they have
    // max_runs.
    while !order.is_empty() && interrupted().is_none() {
        for i in order {
            let Some(job) = &jobs[i] else { continue };
            if interrupted().is_some() {
                break;
            }
            done += 1;
            match runner.run(job) {
                Ok(sample) => {
                    results[i].runs_gib_s.push(sample.gib_s);
                    if let Some(noise) = sample.noise {
                        results[i].runs_noise.push(noise);
                    }
                    if let Some(used) = sample.usage {
                        let (sum, bytes) = usage[i].get_or_insert_default();
                        *sum = *sum + used;
                        *bytes += job.bytes();
                    }
                    progress(Event::Measured {
                        row: results[i].name.name(),
                        index: done,
                        total,
                        figure: Figure::GibPerS(sample.gib_s),
                    });
                }
                Err(_) if interrupted().is_some() => break,
                Err(err) => {
                    mark(&mut results[i], err);
                    progress(Event::Skipped {
                        row: results[i].name.name(),
                        reason: results[i].reason.as_deref().unwrap_or(""),
                    });
                    jobs[i] = None;
                }
            }
        }
        results.iter_mut().for_each(RungResult::summarize);
        order = (0..jobs.len())
            .filter(|&i| {
                jobs[i].is_some()
                    && results[i].runs_gib_s.len() < config.max_runs()
                    && results[i].spread.is_some_and(|s| s.wide())
            })
            .collect();
        shuffler.shuffle(&mut order);
        total += order.len();
    }

    if config.profile && interrupted().is_none() {
        for (r, job) in results.iter_mut().zip(&jobs) {
            if let Some(job) = job {
                progress(Event::Profiling { row: r.name.name() });
                r.profile = Some(runner.profile(job));
            }
        }
    }

    for (r, used) in results.iter_mut().zip(usage) {
        r.cost = used.and_then(|(sum, bytes)| Cost::per_gib(&sum, bytes));
        r.summarize();
        if r.noisy() {
            let ends = Ends {
                unpinned: config.placement == Placement::Unpinned,
                one_cpu: !config.placement.distinct_cpus(facts),
            };
            r.diagnosis = Some(Diagnosis::of(&r.runs_noise, ends));
        }
    }
    let baseline = results
        .iter()
        .find(|r| r.name == Rung::WriteRead)
        .and_then(|r| r.median_gib_s);
    let median_of = |rung: Rung| {
        results
            .iter()
            .find(|r| r.name == rung)
            .and_then(|r| r.median_gib_s)
    };
    let ceilings = [Rung::Memcpy, Rung::SpliceLimit].map(|r| (r, median_of(r)));
    for r in &mut results {
        let is_limit = matches!(r.name, Rung::Memcpy | Rung::SpliceLimit);
        r.speedup_vs_write_read = match (r.median_gib_s, baseline) {
            // memcpy and splice-limit are limits, not ways of piping.
            _ if is_limit => None,
            (Some(m), Some(b)) if b > 0.0 => Some(m / b),
            _ => None,
        };
        let ceiling = r.name.ceiling(r.copies);
        r.share_of_ceiling = match (r.median_gib_s, ceilings.iter().find(|(c, _)| *c == ceiling)) {
            _ if is_limit => None,
            (Some(m), Some((_, Some(c)))) if *c > 0.0 => Some(m / c),
            _ => None,
        };
    }
    let noise = NoiseSummary::of(results.iter().flat_map(|r| &r.runs_noise));
    let mut header = Header::new(SCHEMA, facts.clone());
    header.interrupted = interrupted().is_some();
    LadderResult {
        header,
        placement: config.placement,
        runs: config.runs,
        max_runs: config.max_runs(),
        noise: (noise.runs > 0).then_some(noise),
        placement_check: None,
        verify: config.verify,
        seed: config.seed,
        rungs: results,
    }
}

fn mark(result: &mut RungResult, err: RunError) {
    let (status, reason) = match err {
        RunError::Unavailable(reason) => (Status::Unavailable, reason),
        RunError::Failed(reason) => (Status::Failed, reason),
    };
    result.status = status;
    result.reason = Some(reason);
}
