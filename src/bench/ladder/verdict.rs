//! The answer at a glance, as the result records it (`conclude` works it
//! out).

use serde::{Deserialize, Serialize};

use super::rung::Rung;
use crate::bench::core::Trust;

/// The ladder's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The fastest rung that pipes (not a limit), its median, and its
    /// speed-up over the baseline.
    pub fastest: Option<Step>,
    /// Each rung that pipes, its speed-up over the baseline, in ladder
    /// order.
    pub steps: Vec<Step>,
    /// How far to trust the figures.
    pub trust: Trust,
    /// The answer as the text report prints it, a line each.
    pub lines: Vec<String>,
}

/// A rung's figure in the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The rung.
    pub rung: Rung,
    /// Its median, GiB/s.
    pub gib_s: f64,
    /// Over the baseline's median.
    pub speedup: Option<f64>,
    /// Its share of its limit (memcpy or splice-limit).
    pub share_of_limit: Option<f64>,
}

/// The baseline of the speed-ups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// `write-read`.
    pub rung: Rung,
    /// The placement it was fastest in: `same-cpu`, `different-cpu` or
    /// `unpinned`.
    pub placement: String,
    /// Its median there.
    pub gib_s: f64,
}
