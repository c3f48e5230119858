//! What else the machine did during a measured run (stolen time, other
//! processes' CPU time, load, CPU frequency), read before and after. The
//! counters of `/proc/stat` are whole ticks (10 ms at `USER_HZ` 100) over
//! all CPUs: a run of 0.4 s on two CPUs reads them to about 2.5%.
//!
//! # References
//!  - [proc_stat(5)](https://man7.org/linux/man-pages/man5/proc_stat.5.html)
//!  - [proc_loadavg(5)](https://man7.org/linux/man-pages/man5/proc_loadavg.5.html)
//!  - [cpufreq sysfs](https://docs.kernel.org/admin-guide/pm/cpufreq.html)

use std::fs;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The all-CPU line of `/proc/stat`, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CpuTimes {
    /// Time spent running tasks, user and kernel, interrupts included
    /// (`user nice system irq softirq`).
    pub busy: f64,
    /// Time the hypervisor ran something else while a CPU of this
    /// machine wanted to run (`steal`).
    pub steal: f64,
}

impl CpuTimes {
    /// Parses the first line of `/proc/stat` (`cpu  user nice system idle
    /// iowait irq softirq steal ...`, in ticks of `ticks_per_s`).
    pub(crate) fn parse(stat: &str, ticks_per_s: f64) -> Option<CpuTimes> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let fields: Vec<f64> = line
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse::<f64>())
            .collect::<Result<_, _>>()
            .ok()?;
        let at = |i: usize| fields.get(i).copied().unwrap_or(0.0) / ticks_per_s;
        // user nice system idle iowait irq softirq steal
        Some(CpuTimes {
            busy: at(0) + at(1) + at(2) + at(5) + at(6),
            steal: at(7),
        })
    }

    /// Stolen seconds, and the busy seconds of everything but `own_cpu`
    /// (the run's), since `before`; never below 0 (the counters are whole
    /// ticks, the run's usage is not).
    pub(crate) fn since(&self, before: &CpuTimes, own_cpu: Duration) -> (f64, f64) {
        (
            (self.steal - before.steal).max(0.0),
            (self.busy - before.busy - own_cpu.as_secs_f64()).max(0.0),
        )
    }

    /// The machine's counters now, `None` when `/proc/stat` is unreadable.
    pub(crate) fn now() -> Option<CpuTimes> {
        let ticks = rustix::param::clock_ticks_per_second() as f64;
        CpuTimes::parse(&fs::read_to_string("/proc/stat").ok()?, ticks.max(1.0))
    }
}

/// A reading before a run, to subtract from one after it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NoiseProbe {
    at: Instant,
    cpu: Option<CpuTimes>,
}

impl NoiseProbe {
    /// Reads the counters now.
    pub(crate) fn start() -> NoiseProbe {
        NoiseProbe {
            at: Instant::now(),
            cpu: CpuTimes::now(),
        }
    }

    /// What happened since [`start`](NoiseProbe::start): `own_cpu` is the
    /// CPU time of the run itself (both ends), subtracted from the busy
    /// time of the whole machine to leave the other processes';
    /// `involuntary_switches` are the run's own; `cpus` the CPUs it ran on
    /// (for their frequency; empty: every CPU).
    pub(crate) fn finish(
        self,
        own_cpu: Duration,
        involuntary_switches: u64,
        cpus: &[usize],
    ) -> RunNoise {
        let wall_s = self.at.elapsed().as_secs_f64();
        let (steal_s, other_cpu_s) = match (self.cpu, CpuTimes::now()) {
            (Some(before), Some(after)) => after.since(&before, own_cpu),
            _ => (0.0, 0.0),
        };
        RunNoise {
            wall_s,
            steal_s,
            other_cpu_s,
            load_avg_1m: load_average(),
            involuntary_switches,
            cpu_mhz: cpu_mhz(cpus),
        }
    }
}

/// What else the machine did during one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RunNoise {
    /// Seconds from the first reading to the last.
    pub wall_s: f64,
    /// CPU seconds the hypervisor stole, over all CPUs.
    pub steal_s: f64,
    /// CPU seconds of every other process (and of the kernel's own work
    /// not charged to the run), over all CPUs.
    pub other_cpu_s: f64,
    /// The 1-minute load average at the end (the run's own ends count).
    pub load_avg_1m: f64,
    /// Times the scheduler preempted the run's ends.
    pub involuntary_switches: u64,
    /// The mean current frequency of the run's CPUs in MHz, where the
    /// kernel exposes it (`None` on most VMs).
    pub cpu_mhz: Option<f64>,
}

impl RunNoise {
    /// Stolen time as a share of the run's wall time on one CPU.
    pub fn steal_share(&self) -> f64 {
        share(self.steal_s, self.wall_s)
    }

    /// Other processes' CPU time as a share of one CPU over the run.
    pub fn other_share(&self) -> f64 {
        share(self.other_cpu_s, self.wall_s)
    }

    /// Involuntary context switches per second of the run.
    pub fn preemptions_per_s(&self) -> f64 {
        share(self.involuntary_switches as f64, self.wall_s)
    }
}

fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { part / whole } else { 0.0 }
}

/// The 1-minute load average (0 when unreadable).
pub(crate) fn load_average() -> f64 {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// The mean of `scaling_cur_freq` over `cpus` (every CPU when empty), in
/// MHz; `None` when no CPU exposes it.
pub(crate) fn cpu_mhz(cpus: &[usize]) -> Option<f64> {
    let all: Vec<usize>;
    let cpus = if cpus.is_empty() {
        all = crate::sys::available_cpus().unwrap_or_default();
        &all
    } else {
        cpus
    };
    let khz: Vec<f64> = cpus
        .iter()
        .filter_map(|cpu| {
            fs::read_to_string(format!(
                "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_cur_freq"
            ))
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
        })
        .collect();
    (!khz.is_empty()).then(|| khz.iter().sum::<f64>() / khz.len() as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_all_cpu_line_gives_busy_and_steal_seconds() {
        let stat = "cpu  100 20 30 4000 50 6 4 15 0 0\ncpu0 50 10 15 2000 25 3 2 8 0 0\n";
        let t = CpuTimes::parse(stat, 100.0).unwrap_or_default();
        assert!((t.busy - 1.6).abs() < 1e-9, "{t:?}");
        assert!((t.steal - 0.15).abs() < 1e-9, "{t:?}");
    }

    #[test]
    fn old_kernels_without_steal_and_garbage() {
        let t = CpuTimes::parse("cpu  100 0 100 500\n", 100.0).unwrap_or_default();
        assert_eq!(
            t,
            CpuTimes {
                busy: 2.0,
                steal: 0.0
            }
        );
        assert_eq!(CpuTimes::parse("cpu  1 x 3\n", 100.0), None);
        assert_eq!(CpuTimes::parse("intr 1 2\n", 100.0), None);
    }

    #[test]
    fn shares_are_per_second_of_one_cpu() {
        let n = RunNoise {
            wall_s: 2.0,
            steal_s: 0.1,
            other_cpu_s: 1.0,
            involuntary_switches: 400,
            ..RunNoise::default()
        };
        assert!((n.steal_share() - 0.05).abs() < 1e-9);
        assert!((n.other_share() - 0.5).abs() < 1e-9);
        assert!((n.preemptions_per_s() - 200.0).abs() < 1e-9);
        assert_eq!(RunNoise::default().steal_share(), 0.0);
    }

    #[test]
    fn the_run_s_own_time_is_taken_out_of_the_machine_s() {
        let before = CpuTimes {
            busy: 10.0,
            steal: 1.0,
        };
        let after = CpuTimes {
            busy: 12.0,
            steal: 1.5,
        };
        let (steal, other) = after.since(&before, Duration::from_millis(1500));
        assert!((steal - 0.5).abs() < 1e-9 && (other - 0.5).abs() < 1e-9);
        // A run charged more than the ticks counted: no negative load.
        assert_eq!(after.since(&before, Duration::from_secs(3)).1, 0.0);
    }

    #[test]
    fn a_probe_of_this_machine_reads_its_counters() {
        let probe = NoiseProbe::start();
        std::thread::sleep(Duration::from_millis(20));
        let n = probe.finish(Duration::ZERO, 7, &[]);
        assert!(n.wall_s >= 0.02, "{n:?}");
        assert_eq!(n.involuntary_switches, 7);
        assert!(CpuTimes::now().is_some_and(|t| t.busy > 0.0));
    }
}
