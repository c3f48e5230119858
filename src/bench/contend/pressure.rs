//! Did memory pressure really happen? The kernel's own accounts, read
//! before and after: pressure stall information (`/proc/pressure/memory`)
//! and the reclaim counters of `/proc/vmstat`.
//!
//! # References
//!  - [PSI](https://docs.kernel.org/accounting/psi.html)
//!  - [proc_vmstat(5)](https://man7.org/linux/man-pages/man5/proc_vmstat.5.html)

use std::fs;

use serde::{Deserialize, Serialize};

/// Where the kernel reports memory stalls.
pub(crate) const PSI_MEMORY_PATH: &str = "/proc/pressure/memory";
/// Where the kernel keeps its reclaim counters.
pub(crate) const VMSTAT_PATH: &str = "/proc/vmstat";

/// The `total=` stall microseconds of `/proc/pressure/memory`, and the
/// `some avg10` percentage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Psi {
    /// Microseconds during which at least one task stalled on memory.
    pub some_total_us: u64,
    /// Microseconds during which every non-idle task stalled on memory.
    pub full_total_us: u64,
    /// Share of the last 10 s with some task stalled, in percent.
    pub some_avg10: f64,
}

/// Reclaim counters from `/proc/vmstat` (pages, or events).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reclaim {
    /// Pages scanned for reclaim: `pgscan_kswapd` + `pgscan_direct` +
    /// `pgscan_khugepaged` + `pgscan_proactive` (not `pgscan_anon` and
    /// `pgscan_file`, which split the same scans by list).
    pub pgscan: u64,
    /// Pages reclaimed, counted the same way from `pgsteal_*`.
    pub pgsteal: u64,
    /// Allocations that had to reclaim themselves: the sum of
    /// `allocstall_*` over zones.
    pub allocstall: u64,
    /// Pages written to swap.
    pub pswpout: u64,
    /// Processes killed by the OOM killer.
    pub oom_kill: u64,
}

/// One reading of both.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sample {
    /// `None` when the kernel has no PSI (or it is disabled).
    pub psi: Option<Psi>,
    /// `None` when `/proc/vmstat` is unreadable.
    pub reclaim: Option<Reclaim>,
}

impl Sample {
    /// Reads the running kernel's accounts.
    pub fn read() -> Sample {
        Sample {
            psi: fs::read_to_string(PSI_MEMORY_PATH)
                .ok()
                .and_then(|t| parse_psi(&t)),
            reclaim: fs::read_to_string(VMSTAT_PATH)
                .ok()
                .map(|t| parse_vmstat(&t)),
        }
    }
}

/// Parses `/proc/pressure/memory`:
/// `some avg10=0.12 avg60=... avg300=... total=1234` then a `full` line.
pub(crate) fn parse_psi(text: &str) -> Option<Psi> {
    let field = |kind: &str, key: &str| -> Option<&str> {
        let line = text.lines().find(|l| l.starts_with(kind))?;
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
    };
    Some(Psi {
        some_total_us: field("some ", "total")?.parse().ok()?,
        full_total_us: field("full ", "total")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        some_avg10: field("some ", "avg10")?.parse().ok()?,
    })
}

/// Parses `/proc/vmstat` (`name value` lines) into the reclaim counters.
pub(crate) fn parse_vmstat(text: &str) -> Reclaim {
    let mut r = Reclaim::default();
    for line in text.lines() {
        let Some((name, value)) = line.split_once(' ') else {
            continue;
        };
        let Ok(value) = value.trim().parse::<u64>() else {
            continue;
        };
        let by_cause = |prefix: &str| {
            name.strip_prefix(prefix)
                .is_some_and(|cause| !matches!(cause, "anon" | "file"))
        };
        if by_cause("pgscan_") {
            r.pgscan += value;
        } else if by_cause("pgsteal_") {
            r.pgsteal += value;
        } else if name.starts_with("allocstall_") {
            r.allocstall += value;
        } else if name == "pswpout" {
            r.pswpout = value;
        } else if name == "oom_kill" {
            r.oom_kill = value;
        }
    }
    r
}

/// What the kernel saw between two samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Growth of PSI's `some total` (µs), `None` without PSI.
    pub psi_some_stall_us: Option<u64>,
    /// Growth of PSI's `full total` (µs), `None` without PSI.
    pub psi_full_stall_us: Option<u64>,
    /// PSI's `some avg10` at the end (percent), `None` without PSI.
    pub psi_some_avg10_end: Option<f64>,
    /// Growth of the reclaim counters, `None` without `/proc/vmstat`.
    pub reclaim: Option<Reclaim>,
    /// Whether the kernel stalled on memory or reclaimed: PSI stall time,
    /// pages scanned or direct-reclaim stalls grew.
    pub happened: bool,
}

impl Evidence {
    /// The difference `after - before` and its verdict.
    pub fn between(before: Sample, after: Sample) -> Evidence {
        let psi = before.psi.zip(after.psi);
        let reclaim = before.reclaim.zip(after.reclaim).map(|(b, a)| Reclaim {
            pgscan: a.pgscan.saturating_sub(b.pgscan),
            pgsteal: a.pgsteal.saturating_sub(b.pgsteal),
            allocstall: a.allocstall.saturating_sub(b.allocstall),
            pswpout: a.pswpout.saturating_sub(b.pswpout),
            oom_kill: a.oom_kill.saturating_sub(b.oom_kill),
        });
        let some = psi.map(|(b, a)| a.some_total_us.saturating_sub(b.some_total_us));
        let happened = some.is_some_and(|us| us > 0)
            || reclaim.is_some_and(|r| r.pgscan > 0 || r.allocstall > 0);
        Evidence {
            psi_some_stall_us: some,
            psi_full_stall_us: psi.map(|(b, a)| a.full_total_us.saturating_sub(b.full_total_us)),
            psi_some_avg10_end: after.psi.map(|p| p.some_avg10),
            reclaim,
            happened,
        }
    }
}

/// `MemAvailable` from `/proc/meminfo`, in bytes.
pub(crate) fn mem_available() -> Option<u64> {
    parse_mem_available(&fs::read_to_string("/proc/meminfo").ok()?)
}

/// Parses the `MemAvailable:   123456 kB` line.
pub(crate) fn parse_mem_available(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PSI: &str = "some avg10=1.50 avg60=0.30 avg300=0.06 total=5030362\n\
                       full avg10=0.00 avg60=0.00 avg300=0.00 total=3479806\n";

    #[test]
    fn reads_psi_totals() {
        let p = parse_psi(PSI).unwrap();
        assert_eq!((p.some_total_us, p.full_total_us), (5_030_362, 3_479_806));
        assert_eq!(p.some_avg10, 1.5);
        assert_eq!(parse_psi(""), None);
    }

    #[test]
    fn sums_reclaim_by_cause_not_by_list() {
        let text = "nr_free_pages 5\npgscan_kswapd 10\npgscan_direct 5\npgscan_anon 15\n\
                    pgscan_file 0\npgsteal_kswapd 7\npgsteal_file 7\nallocstall_dma32 1\n\
                    allocstall_normal 2\npswpout 0\noom_kill 1\n";
        let r = parse_vmstat(text);
        assert_eq!(r.pgscan, 15);
        assert_eq!(r.pgsteal, 7);
        assert_eq!(r.allocstall, 3);
        assert_eq!(r.oom_kill, 1);
    }

    #[test]
    fn evidence_is_the_growth() {
        let at = |us, scan| Sample {
            psi: Some(Psi {
                some_total_us: us,
                ..Psi::default()
            }),
            reclaim: Some(Reclaim {
                pgscan: scan,
                ..Reclaim::default()
            }),
        };
        let e = Evidence::between(at(100, 5), at(100, 5));
        assert!(!e.happened);
        let e = Evidence::between(at(100, 5), at(350, 9));
        assert!(e.happened);
        assert_eq!(e.psi_some_stall_us, Some(250));
        assert_eq!(e.reclaim.unwrap().pgscan, 4);
        let none = Evidence::between(Sample::default(), Sample::default());
        assert_eq!((none.psi_some_stall_us, none.happened), (None, false));
    }

    #[test]
    fn reads_cpu_time_past_a_tricky_command_name() {
        // The hogs' CPU time is read by `sys::procfs`, the one parser.
        use crate::sys::procfs::{parse_stat, stat};
        let line = "4242 (a) b (c) R 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 1 0 9";
        assert_eq!(parse_stat(line).map(|s| s.cpu_ticks), Some(325));
        assert_eq!(parse_stat("4242 (x) R 1"), None);
        assert!(stat(std::process::id()).is_some());
    }

    #[test]
    fn reads_mem_available() {
        let text = "MemTotal:       24683656 kB\nMemAvailable:   1024 kB\n";
        assert_eq!(parse_mem_available(text), Some(1 << 20));
        assert_eq!(parse_mem_available("MemTotal: 5 kB"), None);
    }
}
