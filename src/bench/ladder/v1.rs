//! A series as `pipespeed.bench/1` wrote it, in loose fields, which /2
//! nests as one [`Series`]: read only, so that old files still load.

use serde::Deserialize;

use super::super::core::Series;
use super::super::core::noise::{Diagnosis, Spread};
use crate::sys::RunNoise;

/// A series as /1 wrote it, field by field.
#[derive(Deserialize, Default)]
pub(super) struct Loose {
    #[serde(default)]
    runs_gib_s: Vec<f64>,
    #[serde(default)]
    median_gib_s: Option<f64>,
    #[serde(default)]
    min_gib_s: Option<f64>,
    #[serde(default)]
    max_gib_s: Option<f64>,
    #[serde(default)]
    runs_noise: Vec<RunNoise>,
    #[serde(default)]
    spread: Option<Spread>,
    #[serde(default)]
    diagnosis: Option<Diagnosis>,
}

impl Loose {
    /// The series the fields describe; figures /1 did not record
    /// (a placement row's range and spread) computed from the runs.
    pub(super) fn series(self) -> Series {
        let computed = Series::of(&self.runs_gib_s);
        Series {
            median: self.median_gib_s.or(computed.median),
            min: self.min_gib_s.or(computed.min),
            max: self.max_gib_s.or(computed.max),
            spread: self.spread.or(computed.spread),
            runs: self.runs_gib_s,
            noise: self.runs_noise,
            diagnosis: self.diagnosis,
        }
    }
}
