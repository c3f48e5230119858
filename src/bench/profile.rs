//! What a rung costs the machine, and where its time goes: resource usage
//! per GiB from getrusage(2), and the top symbols of a `perf record`
//! profile (`bench --profile`).

use serde::{Deserialize, Serialize};

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
    /// The process that ran it (`comm`: `pipespeed`).
    pub comm: String,
}
