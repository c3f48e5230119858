//! What the machine is: the facts a pipe benchmark result depends on.

use std::fs;

use serde::{Deserialize, Serialize};

use super::{available_cpus, pipe_max_size};

pub(crate) mod virt;

const THP_ENABLED_PATH: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// The transparent huge page policy in
/// `/sys/kernel/mm/transparent_hugepage/enabled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThpMode {
    /// Every anonymous mapping may get huge pages.
    Always,
    /// Only mappings marked with `madvise(MADV_HUGEPAGE)` get huge pages.
    Madvise,
    /// No transparent huge pages.
    Never,
    /// The kernel has no transparent huge pages or the file is unreadable.
    Unknown,
}

impl ThpMode {
    /// Reads the policy from sysfs.
    pub fn current() -> ThpMode {
        fs::read_to_string(THP_ENABLED_PATH)
            .map(|text| ThpMode::parse(&text))
            .unwrap_or(ThpMode::Unknown)
    }

    /// Parses the sysfs text, where the active choice is in brackets:
    /// `always [madvise] never`.
    pub fn parse(text: &str) -> ThpMode {
        let chosen = text
            .split_whitespace()
            .find(|w| w.starts_with('[') && w.ends_with(']'))
            .map(|w| w.trim_matches(|c| c == '[' || c == ']'));
        match chosen {
            Some("always") => ThpMode::Always,
            Some("madvise") => ThpMode::Madvise,
            Some("never") => ThpMode::Never,
            _ => ThpMode::Unknown,
        }
    }

    /// Whether `madvise(MADV_HUGEPAGE)` can get huge pages under this
    /// policy.
    pub fn allows_madvise(self) -> bool {
        matches!(self, ThpMode::Always | ThpMode::Madvise)
    }
}

impl std::fmt::Display for ThpMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ThpMode::Always => "always",
            ThpMode::Madvise => "madvise",
            ThpMode::Never => "never",
            ThpMode::Unknown => "unknown",
        })
    }
}

/// The machine facts recorded with every result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemFacts {
    /// Kernel release, as `uname -r` prints it.
    pub kernel: String,
    /// Kernel build string, as `uname -v` prints it.
    pub kernel_version: String,
    /// Machine architecture, as `uname -m` prints it.
    pub arch: String,
    /// The first `model name` in `/proc/cpuinfo`, or `unknown`.
    pub cpu_model: String,
    /// CPUs online on the machine.
    pub cpus_online: usize,
    /// CPUs this process may run on (its affinity mask).
    pub cpus_allowed: Vec<usize>,
    /// Transparent huge page policy.
    pub thp: ThpMode,
    /// `/proc/sys/fs/pipe-max-size` in bytes (0 when unreadable).
    pub pipe_max_size_bytes: usize,
    /// The page size in bytes.
    pub page_size_bytes: usize,
    /// The hypervisor, as `systemd-detect-virt --vm` names it (`kvm`,
    /// `xen`, `microsoft`, ...), `none` on bare metal; `None` when nothing
    /// tells (see `virt`). Files written before this field load with
    /// `None`.
    #[serde(default)]
    pub virtualization: Option<String>,
}

impl SystemFacts {
    /// Gathers the facts of the running machine. Facts that cannot be read
    /// are recorded as `unknown` or 0 rather than failing.
    pub fn collect() -> SystemFacts {
        let uname = rustix::system::uname();
        let cpus_online = std::thread::available_parallelism().map_or(0, |n| n.get());
        SystemFacts {
            kernel: uname.release().to_string_lossy().into_owned(),
            kernel_version: uname.version().to_string_lossy().into_owned(),
            arch: uname.machine().to_string_lossy().into_owned(),
            cpu_model: cpu_model().unwrap_or_else(|| "unknown".to_string()),
            cpus_online: online_cpus().unwrap_or(cpus_online),
            cpus_allowed: available_cpus().unwrap_or_default(),
            thp: ThpMode::current(),
            pipe_max_size_bytes: pipe_max_size().unwrap_or(0),
            page_size_bytes: rustix::param::page_size(),
            virtualization: virt::detect(),
        }
    }
}

fn cpu_model() -> Option<String> {
    let text = fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| {
            l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model")
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// Counts the CPUs in `/sys/devices/system/cpu/online` (`0-1,4`).
fn online_cpus() -> Option<usize> {
    let text = fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    let mut count = 0;
    for part in text.trim().split(',') {
        count += match part.split_once('-') {
            Some((a, b)) => b.parse::<usize>().ok()? - a.parse::<usize>().ok()? + 1,
            None => {
                part.parse::<usize>().ok()?;
                1
            }
        };
    }
    Some(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_bracketed_thp_mode() {
        assert_eq!(ThpMode::parse("always [madvise] never\n"), ThpMode::Madvise);
        assert_eq!(ThpMode::parse("[always] madvise never"), ThpMode::Always);
        assert_eq!(ThpMode::parse("always madvise [never]"), ThpMode::Never);
        assert_eq!(ThpMode::parse(""), ThpMode::Unknown);
        assert!(!ThpMode::Never.allows_madvise());
    }

    #[test]
    fn a_system_object_without_virtualization_still_loads() {
        let old = r##"{"kernel": "6.1.0", "kernel_version": "#1", "arch": "x86_64",
            "cpu_model": "x", "cpus_online": 2, "cpus_allowed": [0, 1], "thp": "madvise",
            "pipe_max_size_bytes": 1048576, "page_size_bytes": 4096}"##;
        let facts: SystemFacts = serde_json::from_str(old).expect("an older system object");
        assert_eq!(facts.virtualization, None);
        let new = old.replace('}', r#", "virtualization": "kvm"}"#);
        let facts: SystemFacts = serde_json::from_str(&new).expect("a newer system object");
        assert_eq!(facts.virtualization.as_deref(), Some("kvm"));
    }

    #[test]
    fn collects_facts_of_this_machine() {
        let facts = SystemFacts::collect();
        assert!(!facts.kernel.is_empty());
        assert!(facts.cpus_online >= 1);
        assert!(!facts.cpus_allowed.is_empty());
        assert!(facts.page_size_bytes >= 4096);
    }
}
