//! The one schedule every measurement runs by: warm-up runs per row, then
//! every measured run of every row in one seeded, shuffled order (a drift
//! of the machine falls on all rows alike), then more runs of a row whose
//! 95% interval stays wider than +-10%. A kind says what a row is and
//! makes its runs through one closure; the schedule decides when.

use super::harness::{Event, Figure, Header};
use std::time::Instant;

use super::noise::{Ends, NoiseSummary, RunProbe};
use super::outcome::{Cancel, RunError, Status};
use super::series::Series;
use super::stall::Stall;
use super::stats::Shuffler;
use crate::sys::{RunNoise, SystemFacts};

/// A row of a schedule (a rung, a size, a cell; or one metric of a row,
/// for a kind that measures several).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// Its name in progress events.
    pub name: String,
    /// Why it cannot run on this machine (`None`: it can).
    pub unavailable: Option<String>,
    /// Whether warm-up runs precede its measured runs.
    pub warm_up: bool,
    /// The most measured runs of this row, when fewer than the plan's
    /// `max_runs` (`None`: the plan's): a row that only gives context
    /// (the ladder's rungs in their other placement) gets no runs added.
    pub max_runs: Option<usize>,
}

impl Slot {
    /// A row named `name` that runs, after a warm-up.
    pub fn new(name: impl Into<String>) -> Slot {
        Slot {
            name: name.into(),
            unavailable: None,
            warm_up: true,
            max_runs: None,
        }
    }

    /// The row named `name` of a job this machine can make, or of why it
    /// cannot (an unavailable row), and the job.
    pub fn of<J>(name: impl Into<String>, job: Result<J, String>) -> (Slot, Option<J>) {
        let mut slot = Slot::new(name);
        match job {
            Ok(job) => (slot, Some(job)),
            Err(why) => {
                slot.unavailable = Some(why);
                (slot, None)
            }
        }
    }
}

/// When warm-up ends. Every row gets one warm-up run (it sizes the
/// row's runs and finds what the machine cannot do); then more, until
/// the warm-ups have lasted `min_seconds` in all and the row's last two
/// agree within `agree`; a row stops after `max_runs`, and every row
/// after its first once the warm-ups have lasted `max_seconds`.
///
/// Both conditions are needed: a program reading the result from a pipe
/// spends its start-up on the ends' CPUs, which agreement alone does not
/// see and a fixed time alone does not see later on (docs/ipc.md).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Warmup {
    /// Seconds of warm-up, over all rows, before any row is warm.
    pub min_seconds: f64,
    /// How close a row's last two warm-up runs must be.
    pub agree: f64,
    /// The most warm-up runs of one row once `min_seconds` have passed
    /// (at least 1).
    pub max_runs: usize,
    /// Seconds of warm-up, over all rows, after which each row gets its
    /// one warm-up run only.
    pub max_seconds: f64,
}

impl Default for Warmup {
    /// Half a second, then agreement within 10%; at most 10 runs a row
    /// and 3 s in all.
    fn default() -> Warmup {
        Warmup {
            min_seconds: 0.5,
            agree: 0.10,
            max_runs: 10,
            max_seconds: 3.0,
        }
    }
}

impl Warmup {
    /// Exactly `runs` warm-up runs of every row (at least 1), whatever
    /// they measure and however long they take: `--warmup-runs N`.
    pub fn exactly(runs: usize) -> Warmup {
        Warmup {
            min_seconds: 0.0,
            // No two runs agree within a negative margin.
            agree: -1.0,
            max_runs: runs.max(1),
            // Finite, for JSON: no warm-up lasts 10^308 s.
            max_seconds: f64::MAX,
        }
    }
}

/// How many runs, in which order, and what a diagnosis may assume.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Measured runs of every row.
    pub runs: usize,
    /// The most measured runs of a row whose interval stays wide (at most
    /// `runs`: none added).
    pub max_runs: usize,
    /// Seed of the order.
    pub seed: u64,
    /// Where the ends ran, for the diagnosis of a noisy row.
    pub ends: Ends,
    /// When a row is warm.
    pub warmup: Warmup,
}

/// Which run the closure is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A warm-up run: not recorded; the kind may size the row's runs from it.
    WarmUp,
    /// A measured run.
    Measure,
}

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The value the row's series records.
    pub value: f64,
    /// The same, for a progress display.
    pub figure: Figure,
    /// What else the machine did meanwhile (`None`: not measured).
    pub noise: Option<RunNoise>,
}

/// What became of one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Whether it ran.
    pub status: Status,
    /// Why it did not, or failed.
    pub reason: Option<String>,
    /// Where the run's tasks were when the watchdog stopped the row's
    /// run (`None`: no stall).
    pub stall: Option<Stall>,
    /// The last warm-up run's value (`None`: none made).
    pub warmup: Option<f64>,
    /// Warm-up runs made.
    pub warmup_runs: usize,
    /// Its measured runs, summarized, diagnosed when noisy.
    pub series: Series,
}

/// What a schedule measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// One per slot, in the slots' order.
    pub rows: Vec<Outcome>,
    /// Whether the caller cancelled it: the rows hold the runs made before.
    pub interrupted: bool,
    /// Steal and other load over every measured run (`None`: not measured).
    pub noise: Option<NoiseSummary>,
}

impl Schedule {
    /// The header of a `schema` document this schedule measured on
    /// `system`: interrupted if it was.
    pub fn header(&self, schema: &str, system: SystemFacts) -> Header {
        let mut header = Header::new(schema, system);
        header.interrupted = self.interrupted;
        header
    }
}

impl Outcome {
    fn new(slot: &Slot) -> Outcome {
        let (status, reason) = match &slot.unavailable {
            Some(why) => (Status::Unavailable, Some(why.clone())),
            None => (Status::Ok, None),
        };
        Outcome {
            status,
            reason,
            stall: None,
            warmup: None,
            warmup_runs: 0,
            series: Series::new(),
        }
    }

    /// Whether the schedule got to this row: not when it was
    /// `interrupted` before the row's first measured run (a row still
    /// `ok` with none), which then was never measured.
    pub fn reached(&self, interrupted: bool) -> bool {
        !(interrupted && self.status == Status::Ok && self.series.runs.is_empty())
    }

    fn live(&self) -> bool {
        self.status == Status::Ok
    }

    fn stop(&mut self, err: RunError) {
        let (status, why) = err.status();
        self.status = status;
        self.reason = Some(why);
        if let RunError::Stalled(stall) = err {
            self.stall = Some(*stall);
        }
    }
}

/// Runs `slots` by `plan`: `run(i, phase)` makes one run of slot `i`.
///
/// A run that fails stops its row (the runs before are kept); an
/// unavailable row is never run. Once `cancel` is set no run starts, and
/// the run it cut short counts for nothing. A row still `ok` without a
/// run when nothing cancelled the schedule is marked failed ("no run was
/// made"): an empty row never passes for a measured one.
///
/// A kind of measurement in a few lines: two rows, the second
/// unavailable on this machine, and a run that measures nothing (a real
/// kind starts its ends here, through a [`Runner`](super::Runner)):
///
/// ```
/// use pipespeed::bench::core::{
///     Cancel, Figure, Phase, Plan, Sample, Slot, Status, Warmup, schedule,
/// };
///
/// let mut slow = Slot::new("write -> read");
/// slow.warm_up = false;
/// let mut huge = Slot::new("huge pages");
/// huge.unavailable = Some("no huge pages on this machine".to_string());
/// let plan = Plan {
///     runs: 3,
///     max_runs: 3,
///     seed: 1,
///     ends: Default::default(),
///     warmup: Warmup::default(),
/// };
/// let mut asked = Vec::new();
/// let result = schedule(
///     &[slow, huge],
///     &plan,
///     &Cancel::never(),
///     &mut |_event| {},
///     &mut |row, phase| {
///         asked.push((row, phase));
///         let value = 1.0 + asked.len() as f64; // a different figure per run
///         Ok(Sample { value, figure: Figure::GibPerS(value), noise: None })
///     },
/// );
/// assert_eq!(asked, vec![(0, Phase::Measure); 3]);
/// assert_eq!(result.rows[0].status, Status::Ok);
/// assert_eq!(result.rows[0].series.runs, vec![2.0, 3.0, 4.0]);
/// assert_eq!(result.rows[0].series.median, Some(3.0));
/// assert_eq!(result.rows[1].status, Status::Unavailable);
/// assert!(!result.interrupted);
/// ```
pub fn schedule(
    slots: &[Slot],
    plan: &Plan,
    cancel: &Cancel,
    progress: &mut dyn FnMut(Event<'_>),
    run: &mut dyn FnMut(usize, Phase) -> Result<Sample, RunError>,
) -> Schedule {
    let mut rows: Vec<Outcome> = slots.iter().map(Outcome::new).collect();
    for (slot, row) in slots.iter().zip(&rows) {
        if let Some(reason) = &row.reason {
            progress(Event::Skipped {
                row: &slot.name,
                reason,
            });
        }
    }

    // Warm-ups, row by row.
    let (rule, started) = (plan.warmup, Instant::now());
    for (i, slot) in slots.iter().enumerate() {
        if !slot.warm_up || !rows[i].live() {
            continue;
        }
        let mut last: Option<f64> = None;
        while !cancel.is_cancelled() {
            match run(i, Phase::WarmUp) {
                Ok(sample) => {
                    progress(Event::WarmedUp {
                        row: &slot.name,
                        figure: sample.figure,
                    });
                    rows[i].warmup_runs += 1;
                    rows[i].warmup = Some(sample.value);
                    let agreed = last.is_some_and(|l| agree(l, sample.value, rule.agree));
                    last = Some(sample.value);
                    let spent = started.elapsed().as_secs_f64();
                    let warm = spent >= rule.min_seconds
                        && (agreed || rows[i].warmup_runs >= rule.max_runs.max(1));
                    if warm || spent >= rule.max_seconds {
                        break;
                    }
                }
                Err(_) if cancel.is_cancelled() => break,
                Err(err) => {
                    rows[i].stop(err);
                    skipped(&slot.name, &rows[i], progress);
                    break;
                }
            }
        }
    }

    let mut order: Vec<usize> = (0..plan.runs)
        .flat_map(|_| (0..rows.len()).filter(|&i| rows[i].live()))
        .collect();
    let mut shuffler = Shuffler::new(plan.seed);
    shuffler.shuffle(&mut order);
    let (mut done, mut total) = (0, order.len());
    'rounds: while !order.is_empty() && !cancel.is_cancelled() {
        for i in order {
            if !rows[i].live() {
                continue;
            }
            if cancel.is_cancelled() {
                break 'rounds;
            }
            done += 1;
            match run(i, Phase::Measure) {
                Ok(sample) => {
                    rows[i].series.push(sample.value, sample.noise);
                    progress(Event::Measured {
                        row: &slots[i].name,
                        index: done,
                        total,
                        figure: sample.figure,
                    });
                }
                Err(_) if cancel.is_cancelled() => break 'rounds,
                Err(err) => {
                    rows[i].stop(err);
                    skipped(&slots[i].name, &rows[i], progress);
                }
            }
        }
        rows.iter_mut().for_each(|r| r.series.summarize());
        // One more run of each live row whose interval is too wide.
        order = (0..rows.len())
            .filter(|&i| {
                let most = slots[i]
                    .max_runs
                    .map_or(plan.max_runs, |m| m.min(plan.max_runs));
                rows[i].live() && rows[i].series.wants_more(most)
            })
            .collect();
        shuffler.shuffle(&mut order);
        total += order.len();
    }

    let interrupted = cancel.is_cancelled();
    for (slot, row) in slots.iter().zip(&mut rows) {
        if !interrupted && row.live() && row.series.runs.is_empty() {
            row.stop(RunError::Failed("no run was made".to_string()));
            skipped(&slot.name, row, progress);
        }
        row.series.diagnose(plan.ends);
    }
    let noise = NoiseSummary::of(rows.iter().flat_map(|r| &r.series.noise));
    Schedule {
        rows,
        interrupted,
        noise: (noise.runs > 0).then_some(noise),
    }
}

/// What [`measure`] made of a schedule: the schedule, and what the kind
/// kept of each row's measured runs, in the order made.
pub(crate) struct Measured<T> {
    /// The rows, whether they were interrupted, and the noise.
    pub(crate) schedule: Schedule,
    /// Per slot, what the kind kept of each measured run.
    pub(crate) kept: Vec<Vec<T>>,
}

impl<T> Measured<T> {
    /// Each row the schedule reached ([`Outcome::reached`]: interrupted,
    /// a row never measured is left out), with its slot's index and what
    /// was kept of its runs.
    pub(crate) fn reached(self) -> impl Iterator<Item = (usize, Outcome, Vec<T>)> {
        let interrupted = self.schedule.interrupted;
        (self.schedule.rows.into_iter().zip(self.kept).enumerate())
            .filter(move |(_, (outcome, _))| outcome.reached(interrupted))
            .map(|(i, (outcome, kept))| (i, outcome, kept))
    }
}

/// Runs `slots` by `plan` through [`schedule()`], reading the machine's
/// noise around every measured run of ends on `cpus`: `run(i, phase)`
/// makes one run of slot `i` and gives its figure and what the kind
/// keeps of it when measured.
pub(crate) fn measure<T>(
    slots: &[Slot],
    plan: &Plan,
    cpus: &[usize],
    cancel: &Cancel,
    progress: &mut dyn FnMut(Event<'_>),
    run: &mut dyn FnMut(usize, Phase) -> Result<(Figure, T), RunError>,
) -> Measured<T> {
    let mut kept: Vec<Vec<T>> = slots.iter().map(|_| Vec::new()).collect();
    let schedule = schedule(slots, plan, cancel, progress, &mut |i, phase| {
        let probe = RunProbe::start();
        let (figure, record) = run(i, phase)?;
        let measured = phase == Phase::Measure;
        let noise = measured.then(|| probe.finish(cpus));
        if measured {
            kept[i].push(record);
        }
        Ok(Sample {
            value: figure.value(),
            figure,
            noise,
        })
    });
    Measured { schedule, kept }
}

/// Whether `a` and `b` are within `within` of each other (the larger over
/// the smaller, minus one).
fn agree(a: f64, b: f64, within: f64) -> bool {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    lo > 0.0 && hi / lo - 1.0 <= within
}

fn skipped(name: &str, row: &Outcome, progress: &mut dyn FnMut(Event<'_>)) {
    progress(Event::Skipped {
        row: name,
        reason: row.reason.as_deref().unwrap_or(""),
    });
}

#[cfg(test)]
mod tests;
