//! Running the ladder: its rungs as rows of the one [`schedule()`] (a
//! warm-up per rung that sizes its runs, every measured run in one
//! shuffled order, runs added while a rung is wide, the diagnosis of a
//! noisy one), then the profiles, the cost and the speed-ups.
use crate::bench::core::{Cancel, Ends, Phase, Placement, Plan, RunError, Slot, Status, schedule};

use crate::bench::core::harness::Header;
use crate::sys::{ResourceUsage, SystemFacts};

use super::super::core::harness::{Event, Runner};
use super::super::profile::Cost;
use super::copies::CopyCheck;
use super::job::{Job, LadderConfig, job_for, sized_run};
use super::result::{LadderResult, RungResult, SCHEMA};
use super::rung::Rung;

/// Runs the ladder: a warm-up per rung, then `runs` runs of each in a
/// shuffled order, more of a rung whose interval is wide, and the
/// statistics.
///
/// Once `cancel` is set (see [`Cancel::on_signals`]) no run starts, the
/// run it cut short counts for nothing, and the result holds the runs
/// made before it, marked `interrupted`.
pub fn run_ladder(
    config: &LadderConfig,
    facts: &SystemFacts,
    runner: &mut dyn Runner<Job>,
    cancel: &Cancel,
    progress: &mut dyn FnMut(Event<'_>),
) -> LadderResult {
    let mut results: Vec<RungResult> = Vec::new();
    let mut jobs: Vec<Option<Job>> = Vec::new();
    let mut slots = Vec::new();
    for &rung in &config.rungs {
        let job = job_for(rung, config, facts);
        let (buf_size, pipe_size) = match &job {
            Ok(job) => job.sizes(),
            Err(_) => (config.buf_size, None),
        };
        results.push(RungResult::new(rung, buf_size, pipe_size));
        let (slot, job) = Slot::of(rung.name(), job);
        slots.push(slot);
        jobs.push(job);
    }
    let plan = Plan {
        runs: config.runs,
        max_runs: config.max_runs(),
        seed: config.seed,
        ends: Ends {
            unpinned: config.placement == Placement::Unpinned,
            one_cpu: !config.placement.distinct_cpus(facts),
        },
        warmup: config.warmup_rule,
    };

    // What the measured runs of each rung used, and the bytes they moved.
    let mut usage: Vec<Option<(ResourceUsage, u64)>> = vec![None; jobs.len()];
    let done = schedule(&slots, &plan, cancel, progress, &mut |i, phase| {
        let Some(job) = &mut jobs[i] else {
            return Err(RunError::Failed("no job".into()));
        };
        let sample = sized_run(runner, job, config, phase)?;
        let r = &mut results[i];
        match phase {
            Phase::WarmUp => {
                r.copies =
                    r.name.copies() + u32::from(sample.copy_check == Some(CopyCheck::Copies));
                r.copy_check = sample.copy_check.clone();
                r.bytes_per_run = job.bytes();
            }
            Phase::Measure => {
                if let Some(used) = sample.usage {
                    let (sum, bytes) = usage[i].get_or_insert_default();
                    *sum = *sum + used;
                    *bytes += job.bytes();
                }
            }
        }
        Ok(sample.scheduled())
    });
    for (r, outcome) in results.iter_mut().zip(done.rows) {
        r.status = outcome.status;
        r.reason = outcome.reason;
        r.warmup_gib_s = outcome.warmup;
        r.gib_s = outcome.series;
    }

    if config.profile && !done.interrupted {
        for (r, job) in results.iter_mut().zip(&jobs) {
            if let (Status::Ok, Some(job)) = (r.status, job) {
                progress(Event::Profiling { row: r.name.name() });
                r.profile = Some(runner.profile(job));
            }
        }
    }
    for (r, used) in results.iter_mut().zip(usage) {
        r.cost = used.and_then(|(sum, bytes)| Cost::per_gib(&sum, bytes));
    }
    speedups(&mut results);
    let mut header = Header::new(SCHEMA, facts.clone());
    header.interrupted = done.interrupted;
    LadderResult {
        header,
        placement: config.placement,
        runs: config.runs,
        max_runs: config.max_runs(),
        noise: done.noise,
        placement_check: None,
        verify: config.verify,
        seed: config.seed,
        rungs: results,
    }
}

/// Each rung's speed-up over `write-read` and share of its ceiling.
fn speedups(results: &mut [RungResult]) {
    let median_of = |rung: Rung| {
        results
            .iter()
            .find(|r| r.name == rung)
            .and_then(RungResult::median)
    };
    let baseline = median_of(Rung::WriteRead);
    let ceilings = [Rung::Memcpy, Rung::SpliceLimit].map(|r| (r, median_of(r)));
    for r in results {
        let is_limit = matches!(r.name, Rung::Memcpy | Rung::SpliceLimit);
        r.speedup_vs_write_read = match (r.median(), baseline) {
            // memcpy and splice-limit are limits, not ways of piping.
            _ if is_limit => None,
            (Some(m), Some(b)) if b > 0.0 => Some(m / b),
            _ => None,
        };
        let ceiling = r.name.ceiling(r.copies);
        r.share_of_ceiling = match (r.median(), ceilings.iter().find(|(c, _)| *c == ceiling)) {
            _ if is_limit => None,
            (Some(m), Some((_, Some(c)))) if *c > 0.0 => Some(m / c),
            _ => None,
        };
    }
}
