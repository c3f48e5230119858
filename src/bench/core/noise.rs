//! Is a row's answer trustworthy? How its runs spread, whether that is
//! too much ([`Spread::noisy`]), and what the machine was doing meanwhile
//! ([`Diagnosis`]): the likely cause and what to do about it.
//!
//! A row is noisy when its fastest run is more than [`MAX_OVER_MIN`]
//! times its slowest, or when (from 3 runs on) the 95% interval of its
//! mean (Student's t) is wider than +-[`MAX_HALF_WIDTH`] of the mean.
//! Those are the two ways a median can mislead: one run far off, or all
//! of them scattered. More runs can narrow the interval but never the
//! range, so only a wide interval asks for more runs ([`Spread::wide`]).

use serde::{Deserialize, Serialize};

use super::stats::{mean_interval_95, min_max};
use crate::sys::{NoiseProbe, ResourceUsage, RunNoise, UsageOf, getrusage};

/// Fastest over slowest run above which a row is noisy.
pub(crate) const MAX_OVER_MIN: f64 = 1.25;
/// Half-width of the 95% interval of the mean, as a share of the mean,
/// above which a row is noisy.
pub(crate) const MAX_HALF_WIDTH: f64 = 0.10;

/// Stolen time, as a share of one CPU, above which steal is a cause.
pub(crate) const STEAL: f64 = 0.02;
/// Other processes' CPU time, as a share of one CPU, above which other
/// load is a cause.
pub(crate) const OTHER: f64 = 0.10;
/// Preemptions of the ends per second above which they are a cause.
const PREEMPTIONS_PER_S: f64 = 500.0;
/// Fastest over slowest CPU frequency above which it is a cause.
const FREQUENCY: f64 = 1.05;

/// How a row's runs spread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The fastest run over the slowest.
    pub max_over_min: f64,
    /// Half-width of the 95% interval of the mean, as a share of the mean.
    pub ci95_half_width: f64,
    /// Whether either exceeds its threshold.
    pub noisy: bool,
}

impl Spread {
    /// The spread of `values`; `None` with fewer than 2 runs, or a run of
    /// 0 (a ratio to it is meaningless, and JSON has no infinity).
    pub fn of(values: &[f64]) -> Option<Spread> {
        let (lo, hi) = min_max(values)?;
        let (mean, half) = mean_interval_95(values)?;
        if lo <= 0.0 || mean <= 0.0 || !hi.is_finite() {
            return None;
        }
        let (max_over_min, ci95_half_width) = (hi / lo, half / mean);
        // Two runs give t = 12.7: an interval that says nothing.
        let wide = values.len() >= 3 && ci95_half_width > MAX_HALF_WIDTH;
        Some(Spread {
            max_over_min,
            ci95_half_width,
            noisy: max_over_min > MAX_OVER_MIN || wide,
        })
    }

    /// Whether the interval is too wide: what more runs can fix.
    pub fn wide(&self) -> bool {
        self.ci95_half_width > MAX_HALF_WIDTH
    }

    /// `+-4.2%`, or `+-14% noisy`.
    pub fn cell(&self) -> String {
        let pct = format!("+-{}", percent(self.ci95_half_width));
        if self.noisy {
            format!("{pct} noisy")
        } else {
            pct
        }
    }
}

/// `4.2%` below 10%, `14%` from there.
pub(crate) fn percent(share: f64) -> String {
    let pct = share * 100.0;
    if pct < 10.0 {
        format!("{pct:.1}%")
    } else {
        format!("{pct:.0}%")
    }
}

/// Why a noisy row is noisy, as far as the machine shows it, and what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// The likely causes, one sentence each; never empty.
    pub causes: Vec<String>,
    /// What to do, one sentence.
    pub advice: String,
}

/// Where a row's ends ran, as far as a diagnosis cares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ends {
    /// Left to the scheduler.
    pub unpinned: bool,
    /// On one CPU (pinned to the same one, or only one allowed): every
    /// wake-up then preempts the other end, which is no noise.
    pub one_cpu: bool,
}

impl Diagnosis {
    /// What `noise` (one per run) says about a noisy row whose ends ran
    /// as `ends` say.
    pub fn of(noise: &[RunNoise], ends: Ends) -> Diagnosis {
        let most = |f: fn(&RunNoise) -> f64| noise.iter().map(f).fold(0.0, f64::max);
        let mut causes = Vec::new();
        let mut advice = Vec::new();
        // A share is a cause from STEAL on, and from two clock ticks: one
        // tick over a short run is already 2.5%.
        let tick = 1.0 / (rustix::param::clock_ticks_per_second() as f64).max(1.0);
        let steal = noise
            .iter()
            .filter(|n| n.steal_s >= 2.0 * tick)
            .map(RunNoise::steal_share)
            .fold(0.0, f64::max);
        if steal > STEAL {
            causes.push(format!(
                "steal: the hypervisor took up to {:.0}% of a CPU during a run",
                steal * 100.0
            ));
        }
        let other = most(RunNoise::other_share);
        if other > OTHER {
            causes.push(format!(
                "other load: other processes used up to {other:.2} CPUs during a run"
            ));
        }
        if steal > STEAL || other > OTHER {
            advice.push("run on an idle machine (or a VM whose CPUs are dedicated)");
        }
        let preempted = most(RunNoise::preemptions_per_s);
        if preempted > PREEMPTIONS_PER_S && !ends.one_cpu {
            causes.push(format!(
                "preemption: the ends were preempted up to {preempted:.0} times/s"
            ));
        }
        let mhz: Vec<f64> = noise.iter().filter_map(|n| n.cpu_mhz).collect();
        if let Some((lo, hi)) = min_max(&mhz)
            && lo > 0.0
            && hi / lo > FREQUENCY
        {
            causes.push(format!(
                "frequency: the CPUs ran between {lo:.0} and {hi:.0} MHz"
            ));
            advice.push("fix the CPU frequency (cpupower frequency-set -g performance)");
        }
        if ends.unpinned && !ends.one_cpu {
            causes.push(
                "placement: the ends were unpinned, so the scheduler chose (and changed) their CPUs"
                    .to_string(),
            );
            advice.push("pin the ends with --cpus W,R");
        }
        if causes.is_empty() {
            causes.push(
                "no steal, other load, preemption or frequency change seen: likely the \
                 hypervisor's scheduling of this VM's CPUs (cross-CPU wake-ups vary) or caches"
                    .to_string(),
            );
        }
        advice.push("take more runs (--max-runs 20) and compare medians");
        Diagnosis {
            causes,
            advice: advice.join("; "),
        }
    }
}

/// The whole measurement's noise: steal and other load over every run,
/// for the header of a table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct NoiseSummary {
    /// Runs summed.
    pub runs: usize,
    /// Stolen CPU seconds over wall seconds, summed over the runs.
    pub steal_share: f64,
    /// Other processes' CPU seconds over wall seconds.
    pub other_share: f64,
    /// The highest 1-minute load average seen at the end of a run.
    pub max_load_avg_1m: f64,
}

impl NoiseSummary {
    /// The summary of every run's noise.
    pub fn of<'a>(noise: impl IntoIterator<Item = &'a RunNoise>) -> NoiseSummary {
        let (mut wall, mut steal, mut other, mut load, mut runs) = (0.0, 0.0, 0.0, 0.0f64, 0);
        for n in noise {
            wall += n.wall_s;
            steal += n.steal_s;
            other += n.other_cpu_s;
            load = load.max(n.load_avg_1m);
            runs += 1;
        }
        let share = |x: f64| if wall > 0.0 { x / wall } else { 0.0 };
        NoiseSummary {
            runs,
            steal_share: share(steal),
            other_share: share(other),
            max_load_avg_1m: load,
        }
    }
}

/// The noise around one run whose ends are threads of this process or
/// children it reaps: what else the machine did meanwhile, the run's own
/// CPU time (both ends) taken out.
pub(crate) struct RunProbe {
    probe: NoiseProbe,
    before: Option<ResourceUsage>,
}

impl RunProbe {
    /// Starts watching, before the run.
    pub(crate) fn start() -> RunProbe {
        RunProbe {
            probe: NoiseProbe::start(),
            before: usage(),
        }
    }

    /// What the machine did since [`RunProbe::start`], the ends on `cpus`.
    pub(crate) fn finish(self, cpus: &[usize]) -> RunNoise {
        let used = match (self.before, usage()) {
            (Some(before), Some(after)) => after.since(&before),
            _ => ResourceUsage::default(),
        };
        (self.probe).finish(used.user + used.system, used.involuntary_switches, cpus)
    }
}

/// The CPU time this process and its reaped children have used so far.
fn usage() -> Option<ResourceUsage> {
    Some(getrusage(UsageOf::Process).ok()? + getrusage(UsageOf::Children).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(wall_s: f64) -> RunNoise {
        RunNoise {
            wall_s,
            ..RunNoise::default()
        }
    }

    #[test]
    fn a_tight_row_is_not_noisy_and_a_spread_one_is() {
        let tight = Spread::of(&[10.0, 10.2, 9.9, 10.1, 10.0]).unwrap_or_else(|| panic!());
        assert!(!tight.noisy, "{tight:?}");
        assert_eq!(tight.cell(), "+-1.4%");
        // The ladder's tuned rung on a busy VM: 20 to 85 GiB/s.
        let wide = Spread::of(&[76.0, 50.0, 81.0, 20.0, 85.0]).unwrap_or_else(|| panic!());
        assert!(wide.noisy && wide.max_over_min > 4.0, "{wide:?}");
        assert!(wide.cell().ends_with("% noisy"), "{}", wide.cell());
    }

    #[test]
    fn either_threshold_alone_makes_a_row_noisy() {
        // One run far off, the interval still under +-10% with many runs.
        let mut values = vec![10.0; 19];
        values.push(13.0);
        let one_off = Spread::of(&values).unwrap_or_else(|| panic!());
        assert!(one_off.ci95_half_width < MAX_HALF_WIDTH && one_off.noisy);
        // Scattered within 1.25x, but only three runs: a wide interval.
        let scattered = Spread::of(&[10.0, 11.0, 12.2]).unwrap_or_else(|| panic!());
        assert!(scattered.max_over_min < MAX_OVER_MIN && scattered.noisy);
        assert_eq!(Spread::of(&[10.0]), None);
    }

    #[test]
    fn steal_and_other_load_are_named_with_what_to_do() {
        let runs = [
            quiet(1.0),
            RunNoise {
                steal_s: 0.3,
                other_cpu_s: 0.5,
                ..quiet(1.0)
            },
        ];
        let d = Diagnosis::of(&runs, Ends::default());
        assert!(
            d.causes[0].starts_with("steal: ") && d.causes[0].contains("30%"),
            "{d:?}"
        );
        assert!(d.causes[1].starts_with("other load: "), "{d:?}");
        assert!(d.advice.contains("idle machine") && d.advice.contains("--max-runs"));
    }

    #[test]
    fn unpinned_ends_and_frequency_are_causes_and_silence_says_so() {
        let runs = [
            RunNoise {
                cpu_mhz: Some(2000.0),
                ..quiet(1.0)
            },
            RunNoise {
                cpu_mhz: Some(3000.0),
                ..quiet(1.0)
            },
        ];
        let unpinned = Ends {
            unpinned: true,
            one_cpu: false,
        };
        let d = Diagnosis::of(&runs, unpinned);
        assert!(
            d.causes.iter().any(|c| c.starts_with("frequency: ")),
            "{d:?}"
        );
        assert!(
            d.causes.iter().any(|c| c.starts_with("placement: ")),
            "{d:?}"
        );
        assert!(d.advice.contains("--cpus"));
        let d = Diagnosis::of(&[quiet(1.0)], Ends::default());
        assert!(d.causes[0].starts_with("no steal"), "{d:?}");
        assert!(!d.advice.contains("idle machine"));
    }

    #[test]
    fn one_tick_of_steal_and_preemption_on_one_cpu_are_no_causes() {
        let tick = 1.0 / rustix::param::clock_ticks_per_second() as f64;
        // One tick over 0.4 s is 2.5%: under the resolution, not a cause.
        let one_tick = RunNoise {
            steal_s: tick,
            ..quiet(0.4)
        };
        let d = Diagnosis::of(&[one_tick], Ends::default());
        assert!(d.causes[0].starts_with("no steal"), "{d:?}");
        let two_ticks = RunNoise {
            steal_s: 2.0 * tick,
            ..quiet(0.4)
        };
        let d = Diagnosis::of(&[two_ticks], Ends::default());
        assert!(d.causes[0].starts_with("steal: "), "{d:?}");
        // Ends sharing a CPU preempt each other at every wake-up.
        let busy = RunNoise {
            involuntary_switches: 50_000,
            ..quiet(1.0)
        };
        let shared = Ends {
            unpinned: true,
            one_cpu: true,
        };
        let d = Diagnosis::of(&[busy], shared);
        assert!(d.causes[0].starts_with("no steal"), "{d:?}");
        assert!(!d.advice.contains("--cpus"), "{d:?}");
        let d = Diagnosis::of(&[busy], Ends::default());
        assert!(d.causes[0].starts_with("preemption: "), "{d:?}");
    }

    #[test]
    fn a_run_of_zero_has_no_spread_and_two_runs_no_interval_rule() {
        assert_eq!(Spread::of(&[0.0, 1.0]), None);
        assert_eq!(Spread::of(&[0.0, 0.0]), None);
        let two = Spread::of(&[10.0, 10.3]).unwrap_or_else(|| panic!());
        assert!(two.wide() && !two.noisy, "{two:?}");
        let two = Spread::of(&[10.0, 13.0]).unwrap_or_else(|| panic!());
        assert!(two.noisy, "{two:?}");
    }

    #[test]
    fn the_summary_weighs_runs_by_their_length() {
        let runs = [
            RunNoise {
                steal_s: 0.1,
                other_cpu_s: 0.3,
                load_avg_1m: 2.5,
                ..quiet(1.0)
            },
            RunNoise {
                load_avg_1m: 1.0,
                ..quiet(3.0)
            },
        ];
        let s = NoiseSummary::of(&runs);
        assert_eq!(s.runs, 2);
        assert!((s.steal_share - 0.025).abs() < 1e-9);
        assert!((s.other_share - 0.075).abs() < 1e-9);
        assert_eq!(s.max_load_avg_1m, 2.5);
    }
}
