//! How much placement alone changes the answer: the baseline rung on one
//! CPU, on two and unpinned, and the cost of a cross-CPU wake-up. On a VM
//! such a wake-up (an IPI through the hypervisor) may cost tens of
//! microseconds, and `write-read` wakes the other end for every pipe-full:
//! on two CPUs it can be ten times slower than on one.
use crate::bench::core::{Cancel, Ends, Placement, Plan, RunError, Series, Slot, Status, schedule};

use serde::{Deserialize, Serialize};

use super::super::core::harness::{Event, Runner};
use super::super::ping::{Exchange, PingConfig, PingJob, Span};
use super::job::{Job, LadderConfig, job_for, sized_run};
use super::rung::Rung;
use super::v1::Loose;
use crate::sys::SystemFacts;
use crate::sys::process::interrupted;
use crate::wait::Wait;

/// The baseline rung in one placement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "PlacementRowV1")]
pub struct PlacementRow {
    /// Where the ends ran (`None`: nowhere, `different-cpu` on one CPU).
    pub placement: Option<Placement>,
    /// `same-cpu`, `different-cpu` or `unpinned`.
    pub kind: String,
    /// Whether it ran.
    pub status: Status,
    /// Why it did not, or failed.
    pub reason: Option<String>,
    /// Every measured run's rate in GiB/s, and their summary.
    pub gib_s: Series,
}

impl PlacementRow {
    /// The median rate (`None`: no runs).
    pub fn median(&self) -> Option<f64> {
        self.gib_s.median
    }
}

/// A placement row of either version: `gib_s` (`pipespeed.bench/2`) or
/// `runs_gib_s` and `median_gib_s` (/1).
#[derive(Deserialize)]
struct PlacementRowV1 {
    #[serde(default)]
    placement: Option<Placement>,
    kind: String,
    status: Status,
    reason: Option<String>,
    #[serde(default)]
    gib_s: Option<Series>,
    #[serde(flatten)]
    loose: Loose,
}

impl From<PlacementRowV1> for PlacementRow {
    fn from(r: PlacementRowV1) -> PlacementRow {
        PlacementRow {
            placement: r.placement,
            kind: r.kind,
            status: r.status,
            reason: r.reason,
            gib_s: r.gib_s.unwrap_or_else(|| r.loose.series()),
        }
    }
}

/// What a cross-CPU wake-up costs: the median round trip of a 1-byte
/// ping-pong on one CPU and across two.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Wakeup {
    /// Median round trip, both sides on one CPU, in ns.
    pub same_cpu_rtt_ns: u64,
    /// Median round trip, the sides on two CPUs, in ns.
    pub different_cpu_rtt_ns: u64,
    /// What each of a round trip's two wake-ups costs more across CPUs:
    /// half the difference, in ns (negative when crossing is cheaper).
    pub cross_cpu_wakeup_ns: f64,
}

/// The baseline rung in every placement, and the wake-up cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementCheck {
    /// The rung measured (the baseline, `write-read`).
    pub rung: Rung,
    /// Measured runs per placement, after a warm-up (at least; see
    /// `max_runs`).
    pub runs: usize,
    /// Runs a noisy placement may take, adding one at a time while its
    /// interval is wide (equal to `runs`: none added).
    #[serde(default)]
    pub max_runs: usize,
    /// One per placement.
    pub rows: Vec<PlacementRow>,
    /// The wake-up cost (`None`: see `wakeup_reason`).
    pub wakeup: Option<Wakeup>,
    /// Why there is no wake-up cost.
    pub wakeup_reason: Option<String>,
}

impl PlacementCheck {
    /// The measured row with the highest median.
    pub fn best(&self) -> Option<&PlacementRow> {
        self.measured().max_by(|a, b| by_median(a, b))
    }

    /// The measured row with the lowest median.
    pub fn worst(&self) -> Option<&PlacementRow> {
        self.measured().min_by(|a, b| by_median(a, b))
    }

    /// The row of `kind` (`same-cpu`, ...).
    pub fn row(&self, kind: &str) -> Option<&PlacementRow> {
        self.rows.iter().find(|r| r.kind == kind)
    }

    /// Best median over worst: how much placement alone changes the
    /// baseline (`None` with fewer than two placements measured).
    pub fn factor(&self) -> Option<f64> {
        let (best, worst) = (self.best()?.median()?, self.worst()?.median()?);
        (self.measured().count() >= 2 && worst > 0.0).then(|| best / worst)
    }

    fn measured(&self) -> impl Iterator<Item = &PlacementRow> {
        self.rows.iter().filter(|r| r.median().is_some())
    }
}

/// Measured rows in the order of their medians.
fn by_median(a: &PlacementRow, b: &PlacementRow) -> std::cmp::Ordering {
    let median = |r: &PlacementRow| r.median().unwrap_or(f64::NAN);
    median(a).total_cmp(&median(b))
}

/// The placements of this machine: both ends on its first allowed CPU,
/// on its first two, and unpinned; `None` for different CPUs on a
/// machine (or affinity mask) of one CPU.
pub(crate) fn placements(facts: &SystemFacts) -> [(&'static str, Option<Placement>); 3] {
    let first = facts.cpus_allowed.first().copied().unwrap_or(0);
    let second = facts.cpus_allowed.get(1).copied();
    [
        (
            "same-cpu",
            Some(Placement::Pinned {
                writer_cpu: first,
                reader_cpu: first,
            }),
        ),
        (
            "different-cpu",
            second.map(|second| Placement::Pinned {
                writer_cpu: first,
                reader_cpu: second,
            }),
        ),
        ("unpinned", Some(Placement::Unpinned)),
    ]
}

/// The wake-up measurement's warm-up and length, per placement.
const WAKEUP_WARMUP: Span = Span::RoundTrips(2_000);
const WAKEUP_MEASURE: Span = Span::Seconds(0.3);

/// Measures [`Rung::WriteRead`] in every placement of `facts` by
/// [`schedule()`], and the wake-up cost with `pinger`. A placement among
/// `measured` (the ladder's own write-read rows) is taken as it is. Once
/// `cancel` is set no run starts and the wake-up is not measured.
// The runners, the rows known, the cancel and the progress are each
// another caller's; a struct of them would only rename the arguments.
#[allow(clippy::too_many_arguments)]
pub fn check_placements(
    config: &LadderConfig,
    facts: &SystemFacts,
    runs: usize,
    runner: &mut dyn Runner<Job>,
    pinger: &mut dyn Runner<PingJob>,
    measured: &[PlacementRow],
    cancel: &Cancel,
    progress: &mut dyn FnMut(Event<'_>),
) -> PlacementCheck {
    let rung = Rung::WriteRead;
    let mut slots = Vec::new();
    let mut jobs = Vec::new();
    let mut configs = Vec::new();
    let known = |kind: &str| {
        measured
            .iter()
            .find(|r| r.kind == kind && r.status == Status::Ok)
    };
    for (kind, placement) in placements(facts) {
        let config = LadderConfig {
            placement: placement.unwrap_or(Placement::Unpinned),
            ..config.clone()
        };
        let job = match placement {
            None => Err("one CPU: this process may run on one CPU only".to_string()),
            Some(_) if known(kind).is_some() => Err("measured by the ladder".to_string()),
            Some(_) => job_for(rung, &config, facts),
        };
        let (slot, job) = Slot::of(format!("{rung} {kind}"), job);
        slots.push(slot);
        jobs.push(job);
        configs.push(config);
    }
    let plan = Plan {
        runs,
        max_runs: runs.max(config.max_runs()),
        seed: config.seed ^ 0x504C_4143,
        ends: Ends::default(),
        warmup: config.warmup_rule,
    };
    let done = schedule(&slots, &plan, cancel, progress, &mut |i, phase| {
        let Some(job) = &mut jobs[i] else {
            return Err(RunError::Failed("no job".into()));
        };
        Ok(sized_run(runner, job, &configs[i], phase)?.scheduled())
    });
    let rows = placements(facts)
        .into_iter()
        .zip(done.rows)
        .map(|((kind, placement), outcome)| {
            if let Some(row) = known(kind) {
                return row.clone();
            }
            let mut gib_s = outcome.series;
            // Each row's own ends: one CPU, two, or the scheduler's choice.
            let one_cpu = Ends {
                unpinned: false,
                one_cpu: true,
            };
            gib_s.diagnose(placement.map_or(one_cpu, |p| p.ends(facts)));
            PlacementRow {
                placement,
                kind: kind.to_string(),
                status: outcome.status,
                reason: outcome.reason,
                gib_s,
            }
        })
        .collect();
    let (wakeup, wakeup_reason) = match cancel.is_cancelled() {
        true => (None, Some("interrupted".into())),
        false => match wakeup(facts, pinger) {
            _ if cancel.is_cancelled() => (None, Some("interrupted".into())),
            Ok(w) => (Some(w), None),
            Err(why) => (None, Some(why)),
        },
    };
    PlacementCheck {
        rung,
        runs,
        max_runs: plan.max_runs,
        rows,
        wakeup,
        wakeup_reason,
    }
}

/// The median round trip of 1-byte messages on one CPU and across two.
fn wakeup(facts: &SystemFacts, pinger: &mut dyn Runner<PingJob>) -> Result<Wakeup, String> {
    if interrupted().is_some() {
        return Err("interrupted".into());
    }
    let [(_, Some(same)), (_, Some(different)), _] = placements(facts) else {
        return Err("one CPU: no cross-CPU wake-up to measure".into());
    };
    let mut rtt = |placement: Placement| -> Result<u64, String> {
        if placement == Placement::Unpinned {
            return Err("unpinned".into());
        }
        let job = PingJob {
            ping: PingConfig {
                exchange: Exchange {
                    size: 1,
                    wait: Wait::Block,
                    verify: false,
                },
                warmup: WAKEUP_WARMUP,
                measure: WAKEUP_MEASURE,
            },
            // The pinger writes first: it is the writer.
            placement,
            stall_timeout: crate::bench::core::DEFAULT_STALL_TIMEOUT,
        };
        pinger
            .run(&job)
            .map(|run| run.rtt_ns.p50)
            .map_err(|e| format!("round trips: {}", crate::quote::strerror(&e)))
    };
    let same_cpu_rtt_ns = rtt(same)?;
    let different_cpu_rtt_ns = rtt(different)?;
    Ok(Wakeup {
        same_cpu_rtt_ns,
        different_cpu_rtt_ns,
        cross_cpu_wakeup_ns: (different_cpu_rtt_ns as f64 - same_cpu_rtt_ns as f64) / 2.0,
    })
}
