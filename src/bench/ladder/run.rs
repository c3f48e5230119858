//! Running the ladder: a warm-up per rung, then every measured run in one
//! shuffled order, then the statistics.

use crate::bench::harness::Header;
use crate::sys::{ResourceUsage, SystemFacts};

use super::super::harness::{Event, Figure, Runner};
use super::super::profile::Cost;
use super::super::stats::Shuffler;
use super::job::{Job, LadderConfig, WARMUP_BYTES, bytes_for, job_for};
use super::result::{LadderResult, RungResult, SCHEMA, Status};
use super::rung::Rung;

/// One measured run.
#[derive(Debug, Clone, Copy, PartialEq)]
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
}

/// Why a run produced no sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The machine cannot do this (huge pages not granted, vmsplice
    /// refused, ...).
    Unavailable(String),
    /// Something went wrong (a crash, short data, a verify mismatch).
    Failed(String),
}

/// Runs the ladder: a warm-up per rung, then `runs` runs of each in a
/// shuffled order, and the statistics.
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
            Ok(job) => {
                let warmup = job.with_bytes(config.bytes.unwrap_or(WARMUP_BYTES).min(WARMUP_BYTES));
                match runner.run(&warmup) {
                    Ok(sample) => {
                        progress(Event::WarmedUp {
                            row: rung.name(),
                            figure: Figure::GibPerS(sample.gib_s),
                        });
                        result.warmup_gib_s = Some(sample.gib_s);
                        result.bytes_per_run = config
                            .bytes
                            .unwrap_or_else(|| bytes_for(sample.gib_s, config.target_seconds));
                        Some(job.with_bytes(result.bytes_per_run))
                    }
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

    let mut order: Vec<usize> = (0..config.runs)
        .flat_map(|_| {
            jobs.iter()
                .enumerate()
                .filter(|(_, j)| j.is_some())
                .map(|(i, _)| i)
        })
        .collect();
    Shuffler::new(config.seed).shuffle(&mut order);
    let total = order.len();
    let mut usage: Vec<Option<(ResourceUsage, u64)>> = vec![None; jobs.len()];
    for (index, i) in order.into_iter().enumerate() {
        let Some(job) = &jobs[i] else { continue };
        match runner.run(job) {
            Ok(sample) => {
                results[i].runs_gib_s.push(sample.gib_s);
                if let Some(used) = sample.usage {
                    let (sum, bytes) = usage[i].get_or_insert_default();
                    *sum = *sum + used;
                    *bytes += job.bytes();
                }
                progress(Event::Measured {
                    row: results[i].name.name(),
                    index: index + 1,
                    total,
                    figure: Figure::GibPerS(sample.gib_s),
                });
            }
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

    if config.profile {
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
    }
    let baseline = results
        .iter()
        .find(|r| r.name == Rung::WriteRead)
        .and_then(|r| r.median_gib_s);
    for r in &mut results {
        r.speedup_vs_write_read = match (r.median_gib_s, baseline) {
            // memcpy is a limit, not a way of piping.
            _ if r.name == Rung::Memcpy => None,
            (Some(m), Some(b)) if b > 0.0 => Some(m / b),
            _ => None,
        };
    }
    LadderResult {
        header: Header::new(SCHEMA, facts.clone()),
        placement: config.placement,
        runs: config.runs,
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
