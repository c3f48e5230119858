//! How much placement alone changes the answer: the baseline rung with
//! both ends on one CPU, on two CPUs and left to the scheduler, and the
//! cost of a cross-CPU wake-up measured the `latency` way.
//!
//! On a VM a wake-up across CPUs may cost tens of microseconds (an
//! inter-processor interrupt through the hypervisor), and `write-read`
//! wakes the other end for every pipe-full: pinned to different CPUs it
//! can be ten times slower than on one CPU. A ladder measured one way only
//! then mostly measures where the processes sat, so the ladder measures
//! its baseline every way and says so.
use crate::bench::core::{Placement, RunError, Status};

use serde::{Deserialize, Serialize};

use super::super::core::harness::{Event, Figure, Runner};
use super::super::core::stats::{Shuffler, median};
use super::super::latency::{self, Exchange, PingConfig, PingJob, Span};
use super::job::{Job, LadderConfig, WARMUP_BYTES, bytes_for, job_for};
use super::rung::Rung;
use crate::sys::SystemFacts;
use crate::sys::process::interrupted;
use crate::wait::Wait;

/// The baseline rung in one placement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementRow {
    /// Where the ends ran (`None`: nowhere, `different-cpu` on one CPU).
    #[serde(default)]
    pub placement: Option<Placement>,
    /// `same-cpu`, `different-cpu` or `unpinned`.
    pub kind: String,
    /// Whether it ran.
    pub status: Status,
    /// Why it did not, or failed.
    pub reason: Option<String>,
    /// Every measured run's rate.
    pub runs_gib_s: Vec<f64>,
    /// Their median.
    pub median_gib_s: Option<f64>,
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
    /// Measured runs per placement, after a warm-up.
    pub runs: usize,
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
        self.measured()
            .max_by(|a, b| a.median_gib_s.total_cmp(&b.median_gib_s))
    }

    /// The measured row with the lowest median.
    pub fn worst(&self) -> Option<&PlacementRow> {
        self.measured()
            .min_by(|a, b| a.median_gib_s.total_cmp(&b.median_gib_s))
    }

    /// The row of `kind` (`same-cpu`, ...).
    pub fn row(&self, kind: &str) -> Option<&PlacementRow> {
        self.rows.iter().find(|r| r.kind == kind)
    }

    /// Best median over worst: how much placement alone changes the
    /// baseline (`None` with fewer than two placements measured).
    pub fn factor(&self) -> Option<f64> {
        let (best, worst) = (self.best()?.median_gib_s?, self.worst()?.median_gib_s?);
        (self.measured().count() >= 2 && worst > 0.0).then(|| best / worst)
    }

    fn measured(&self) -> impl Iterator<Item = &PlacementRow> {
        self.rows.iter().filter(|r| r.median_gib_s.is_some())
    }
}

/// `a.total_cmp(b)` for the medians of measured rows.
trait TotalCmp {
    fn total_cmp(&self, other: &Self) -> std::cmp::Ordering;
}

impl TotalCmp for Option<f64> {
    fn total_cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.unwrap_or(f64::NAN)
            .total_cmp(&other.unwrap_or(f64::NAN))
    }
}

/// The placements of this machine: both ends on its first allowed CPU,
/// on its first two, and unpinned; `None` for different CPUs on a
/// machine (or affinity mask) of one CPU.
pub fn placements(facts: &SystemFacts) -> [(&'static str, Option<Placement>); 3] {
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

/// Round trips of the wake-up measurement: made before measuring, then
/// seconds of measuring, per placement.
const WAKEUP_WARMUP: Span = Span::RoundTrips(2_000);
const WAKEUP_MEASURE: Span = Span::Seconds(0.3);

/// Measures [`Rung::WriteRead`] with `config`'s settings in every
/// placement of `facts` (a warm-up each, then `runs` runs of each in one
/// shuffled order), and the wake-up cost with `pinger`.
pub fn check_placements(
    config: &LadderConfig,
    facts: &SystemFacts,
    runs: usize,
    runner: &mut dyn Runner<Job>,
    pinger: &mut dyn Runner<PingJob>,
    progress: &mut dyn FnMut(Event<'_>),
) -> PlacementCheck {
    let rung = Rung::WriteRead;
    let mut rows = Vec::new();
    let mut jobs = Vec::new();
    let mut names = Vec::new();
    for (kind, placement) in placements(facts) {
        let name = format!("{rung} {kind}");
        let mut row = PlacementRow {
            placement,
            kind: kind.to_string(),
            status: Status::Ok,
            reason: None,
            runs_gib_s: Vec::new(),
            median_gib_s: None,
        };
        let job = match placement {
            // Stopped: no row is measured, none is failed.
            _ if interrupted().is_some() => Ok(None),
            None => Err(RunError::Unavailable(
                "one CPU: this process may run on one CPU only".into(),
            )),
            Some(placement) => {
                let config = LadderConfig {
                    placement,
                    ..config.clone()
                };
                match job_for(rung, &config, facts) {
                    Err(why) => Err(RunError::Unavailable(why)),
                    Ok(job) => {
                        let warmup =
                            job.with_bytes(config.bytes.unwrap_or(WARMUP_BYTES).min(WARMUP_BYTES));
                        match runner.run(&warmup) {
                            Err(_) if interrupted().is_some() => Ok(None),
                            Err(err) => Err(err),
                            Ok(sample) => {
                                progress(Event::WarmedUp {
                                    row: &name,
                                    figure: Figure::GibPerS(sample.gib_s),
                                });
                                let bytes = config.bytes.unwrap_or_else(|| {
                                    bytes_for(sample.gib_s, config.target_seconds)
                                });
                                Ok(Some(job.with_bytes(bytes)))
                            }
                        }
                    }
                }
            }
        };
        let job = match job {
            Ok(job) => job,
            Err(err) => {
                mark(&mut row, err);
                None
            }
        };
        rows.push(row);
        jobs.push(job);
        names.push(name);
    }
    let mut order: Vec<usize> = (0..runs)
        .flat_map(|_| (0..jobs.len()).filter(|&i| jobs[i].is_some()))
        .collect();
    Shuffler::new(config.seed ^ 0x504C_4143).shuffle(&mut order);
    let total = order.len();
    for (index, i) in order.into_iter().enumerate() {
        let Some(job) = &jobs[i] else { continue };
        if interrupted().is_some() {
            break;
        }
        match runner.run(job) {
            Ok(sample) => {
                rows[i].runs_gib_s.push(sample.gib_s);
                progress(Event::Measured {
                    row: &names[i],
                    index: index + 1,
                    total,
                    figure: Figure::GibPerS(sample.gib_s),
                });
            }
            // The run the signal cut short counts for nothing.
            Err(_) if interrupted().is_some() => break,
            Err(err) => {
                mark(&mut rows[i], err);
                jobs[i] = None;
            }
        }
    }
    for row in &mut rows {
        row.median_gib_s = median(&row.runs_gib_s);
    }
    let (wakeup, wakeup_reason) = match wakeup(facts, pinger) {
        _ if interrupted().is_some() => (None, Some("interrupted".into())),
        Ok(w) => (Some(w), None),
        Err(why) => (None, Some(why)),
    };
    PlacementCheck {
        rung,
        runs,
        rows,
        wakeup,
        wakeup_reason,
    }
}

/// Records why `row` has no (more) runs.
fn mark(row: &mut PlacementRow, err: RunError) {
    (row.status, row.reason) = match err {
        RunError::Unavailable(why) => (Status::Unavailable, Some(why)),
        RunError::Failed(why) => (Status::Failed, Some(why)),
    };
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
        let job = latency::PingJob {
            ping: PingConfig {
                exchange: Exchange {
                    size: 1,
                    wait: Wait::Block,
                    verify: false,
                },
                warmup: WAKEUP_WARMUP,
                measure: WAKEUP_MEASURE,
            },
            // The pinger writes first: it is the writer, the ponger the
            // reader.
            placement,
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
