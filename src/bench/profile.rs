//! What a rung costs the machine ([`Cost`], from getrusage(2)), and where
//! its time goes: the top symbols of a `perf record` profile
//! (`bench --profile`).

pub(crate) mod perf;
pub(crate) mod report;

pub use perf::{NOT_INSTALLED, Perf, PerfAccess};

use serde::{Deserialize, Serialize};

use crate::sys::ResourceUsage;
use crate::units::GIB;

/// Symbols a profile keeps by default.
pub const TOP_SYMBOLS: usize = 8;

/// What the writer and reader of a rung's measured runs used, summed over
/// both processes and all measured runs, per GiB piped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// User CPU seconds per GiB.
    pub user_s_per_gib: f64,
    /// System (kernel) CPU seconds per GiB.
    pub system_s_per_gib: f64,
    /// Voluntary and involuntary context switches per GiB.
    pub context_switches_per_gib: f64,
    /// Minor and major page faults per GiB.
    pub page_faults_per_gib: f64,
}

impl Cost {
    /// `usage` spread over `bytes` piped; `None` for 0 bytes.
    pub fn per_gib(usage: &ResourceUsage, bytes: u64) -> Option<Cost> {
        if bytes == 0 {
            return None;
        }
        let gib = bytes as f64 / GIB as f64;
        Some(Cost {
            user_s_per_gib: usage.user.as_secs_f64() / gib,
            system_s_per_gib: usage.system.as_secs_f64() / gib,
            context_switches_per_gib: usage.context_switches() as f64 / gib,
            page_faults_per_gib: usage.page_faults() as f64 / gib,
        })
    }
}

/// One rung's profile, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Whether perf recorded.
    pub status: ProfileStatus,
    /// Why not, in one line (perf not installed, the
    /// `perf_event_paranoid` value, not root, ...).
    pub reason: Option<String>,
    /// The perf command that was run.
    pub command: Option<String>,
    /// `cpu-clock` samples recorded.
    pub samples: u64,
    /// The symbols with the largest shares, largest first.
    pub symbols: Vec<SymbolShare>,
}

impl Profile {
    /// No profile: perf is missing, not permitted, or cannot start the
    /// rung.
    pub fn unavailable(reason: impl Into<String>) -> Profile {
        Profile {
            status: ProfileStatus::Unavailable,
            ..Profile::failed(reason, None)
        }
    }

    /// No profile: perf (or the run under it) failed with `reason`.
    pub fn failed(reason: impl Into<String>, command: Option<String>) -> Profile {
        Profile {
            status: ProfileStatus::Failed,
            reason: Some(reason.into()),
            command,
            samples: 0,
            symbols: Vec::new(),
        }
    }
}

/// Whether a profile was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProfileStatus {
    /// perf ran and its report was read.
    Recorded,
    /// perf is missing or not permitted; `reason` says which.
    Unavailable,
    /// perf ran and failed; `reason` has its message.
    Failed,
}

/// One symbol's share of a profile's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SymbolShare {
    /// The symbol, as perf names it (`copy_page_from_iter`, ...).
    pub symbol: String,
    /// Percent of all samples (self time, not children).
    pub percent: f64,
    /// Whether it is a kernel symbol (`[k]` in perf report).
    pub kernel: bool,
    /// The process that ran it, as perf names it (`comm`): `ps-writer`
    /// or `ps-reader` for the ends of a `bench --profile` run.
    pub comm: String,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn cost_is_usage_per_gib() {
        let usage = ResourceUsage {
            user: Duration::from_millis(500),
            system: Duration::from_secs(3),
            minor_faults: 1000,
            major_faults: 24,
            voluntary_switches: 4000,
            involuntary_switches: 96,
        };
        let cost = Cost::per_gib(&usage, 2 * GIB).unwrap();
        assert_eq!(
            cost,
            Cost {
                user_s_per_gib: 0.25,
                system_s_per_gib: 1.5,
                context_switches_per_gib: 2048.0,
                page_faults_per_gib: 512.0,
            }
        );
        assert_eq!(Cost::per_gib(&usage, 0), None);
    }
}
