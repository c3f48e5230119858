//! Running the ladder: its rungs as rows of [`schedule()`], the rungs that
//! block once more in the alternative placement, then the profiles, the
//! cost and the verdict.
use crate::bench::core::{Cancel, Phase, Placement, Plan, RunError, Slot, Status, schedule};

use crate::sys::{ResourceUsage, SystemFacts};

use super::super::core::harness::{Event, Runner};
use super::super::profile::Cost;
use super::copies::CopyCheck;
use super::job::{Job, LadderConfig, job_for, sized_run};
use super::result::{LadderResult, RungResult, SCHEMA};
use super::rung::Rung;

/// Runs the ladder. Once `cancel` is set no run starts, the run it cut
/// short counts for nothing, and the result holds the runs made before it,
/// marked `interrupted`.
pub fn run_ladder(
    config: &LadderConfig,
    facts: &SystemFacts,
    runner: &mut dyn Runner<Job>,
    cancel: &Cancel,
    progress: &mut dyn FnMut(Event<'_>),
) -> LadderResult {
    // A row per rung in `placement`, then one per rung that blocks in
    // `alternative`: (the rung's index, the row's placement).
    let mut rows: Vec<(usize, Placement)> = (0..config.rungs.len())
        .map(|i| (i, config.placement))
        .collect();
    if let Some(other) = config.alternative.filter(|p| *p != config.placement) {
        for (i, rung) in config.rungs.iter().enumerate() {
            if rung.blocks() {
                rows.push((i, other));
            }
        }
    }
    let mut results: Vec<RungResult> = Vec::new();
    let mut jobs: Vec<Option<Job>> = Vec::new();
    let mut configs: Vec<LadderConfig> = Vec::new();
    let mut slots = Vec::new();
    for &(i, placement) in &rows {
        let rung = config.rungs[i];
        let row_config = LadderConfig {
            placement,
            ..config.clone()
        };
        let job = job_for(rung, &row_config, facts);
        let (buf_size, pipe_size) = match &job {
            Ok(job) => job.sizes(),
            Err(_) => (config.buf_size, None),
        };
        let mut result = RungResult::new(rung, buf_size, pipe_size);
        result.placement = (!matches!(rung, Rung::Memcpy | Rung::SpliceLimit)).then_some(placement);
        results.push(result);
        let elsewhere = placement != config.placement;
        let name = match elsewhere {
            false => rung.name().to_string(),
            true => format!("{rung} {}", placement.kind()),
        };
        let (mut slot, job) = Slot::of(name, job);
        if elsewhere {
            // No runs added while wide: under load that would stretch the
            // ladder by a third, for a row only shown beside another.
            slot.max_runs = Some(config.runs);
        }
        slots.push(slot);
        jobs.push(job);
        configs.push(row_config);
    }
    let plan = Plan {
        runs: config.runs,
        max_runs: config.max_runs(),
        seed: config.seed,
        ends: config.placement.ends(facts),
        warmup: config.warmup_rule,
    };

    // What the measured runs of each row used, and the bytes they moved.
    let mut usage: Vec<Option<(ResourceUsage, u64)>> = vec![None; jobs.len()];
    let done = schedule(&slots, &plan, cancel, progress, &mut |i, phase| {
        let Some(job) = &mut jobs[i] else {
            return Err(RunError::Failed("no job".into()));
        };
        let sample = sized_run(runner, job, &configs[i], phase)?;
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
    let header = done.header(SCHEMA, facts.clone());
    for ((r, outcome), &(_, placement)) in results.iter_mut().zip(done.rows).zip(&rows) {
        r.status = outcome.status;
        r.reason = outcome.reason;
        r.stall = outcome.stall;
        r.warmup_gib_s = outcome.warmup;
        r.gib_s = outcome.series;
        if placement != config.placement {
            // The scheduler diagnosed every row as the ladder's placement.
            r.gib_s.diagnose(placement.ends(facts));
        }
    }
    for (r, used) in results.iter_mut().zip(usage) {
        r.cost = used.and_then(|(sum, bytes)| Cost::per_gib(&sum, bytes));
    }
    // Each rung in the faster of its placements, the other kept beside
    // it (and the faster's job is the one profiled).
    let n = config.rungs.len();
    let extra = results.split_off(n);
    let extra_jobs = jobs.split_off(n);
    for ((mut other, mut other_job), &(i, _)) in extra.into_iter().zip(extra_jobs).zip(&rows[n..]) {
        let faster = match (results[i].median(), other.median()) {
            (Some(main), Some(alternative)) => alternative > main,
            (None, Some(_)) => true,
            _ => false,
        };
        if faster {
            std::mem::swap(&mut results[i], &mut other);
            std::mem::swap(&mut jobs[i], &mut other_job);
        }
        results[i].other_placement = Some(other.placement_row(config.placement));
    }

    if config.profile && !done.interrupted {
        for (r, job) in results.iter_mut().zip(&jobs) {
            if let (Status::Ok, Some(job)) = (r.status, job) {
                progress(Event::Profiling { row: r.name.name() });
                r.profile = Some(runner.profile(job));
            }
        }
    }
    let mut result = LadderResult {
        header,
        placement: config.placement,
        runs: config.runs,
        max_runs: config.max_runs(),
        noise: done.noise,
        placement_check: None,
        verify: config.verify,
        seed: config.seed,
        rungs: results,
        baseline: None,
        verdict: None,
    };
    result.conclude();
    result
}
