//! One measured quantity of one row: its runs, their median and range,
//! how they spread, and what the machine did meanwhile. Every result of
//! every kind is made of these.

use serde::{Deserialize, Serialize};

use super::noise::{Diagnosis, Ends, Spread};
use super::stats::{median, min_max};
use crate::sys::RunNoise;

/// The runs of one quantity (a rate, a round trip's median, writes per
/// second) and what they say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Every measured run's value, in the order made.
    pub runs: Vec<f64>,
    /// What else the machine did during each run that measured it, in the
    /// order made (empty: not measured).
    #[serde(default)]
    pub noise: Vec<RunNoise>,
    /// The median of the runs.
    pub median: Option<f64>,
    /// The smallest run.
    pub min: Option<f64>,
    /// The largest run.
    pub max: Option<f64>,
    /// How the runs spread, and whether that is too much to trust the
    /// median (`None`: fewer than 2 runs).
    pub spread: Option<Spread>,
    /// For a noisy series: the likely causes and what to do.
    pub diagnosis: Option<Diagnosis>,
}

impl Series {
    /// A series of no runs.
    pub fn new() -> Series {
        Series::default()
    }

    /// A series of `runs`, summarized (no noise recorded).
    pub fn of(runs: &[f64]) -> Series {
        let mut series = Series {
            runs: runs.to_vec(),
            ..Series::default()
        };
        series.summarize();
        series
    }

    /// Adds a run, and what the machine did during it.
    pub fn push(&mut self, value: f64, noise: Option<RunNoise>) {
        self.runs.push(value);
        self.noise.extend(noise);
    }

    /// Sets the median, the range and the spread from the runs.
    pub fn summarize(&mut self) {
        self.median = median(&self.runs);
        (self.min, self.max) = min_max(&self.runs).unzip();
        self.spread = Spread::of(&self.runs);
    }

    /// Whether the runs spread too much to trust the median.
    pub fn noisy(&self) -> bool {
        self.spread.is_some_and(|s| s.noisy)
    }

    /// Whether another run could narrow the interval: it is too wide and
    /// fewer than `max_runs` runs were made.
    pub fn wants_more(&self, max_runs: usize) -> bool {
        self.runs.len() < max_runs && self.spread.is_some_and(|s| s.wide())
    }

    /// Summarizes, and for a noisy series says why from the recorded
    /// noise of ends placed as `ends`.
    pub fn diagnose(&mut self, ends: Ends) {
        self.summarize();
        self.diagnosis = self.noisy().then(|| Diagnosis::of(&self.noise, ends));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_summarizes_its_runs() {
        let s = Series::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max), (Some(2.0), Some(1.0), Some(3.0)));
        assert!(s.noisy(), "3x apart: {:?}", s.spread);
        let tight = Series::of(&[10.0, 10.1, 9.9, 10.0]);
        assert!(!tight.noisy() && !tight.wants_more(10));
        assert_eq!(Series::new().median, None);
    }

    #[test]
    fn more_runs_are_wanted_while_the_interval_is_wide_up_to_the_cap() {
        let wide = Series::of(&[10.0, 20.0, 15.0]);
        assert!(wide.wants_more(4));
        assert!(!wide.wants_more(3));
    }

    #[test]
    fn a_noisy_series_gets_a_diagnosis_and_a_quiet_one_none() {
        let mut noisy = Series::of(&[10.0, 30.0, 20.0]);
        noisy.diagnose(Ends::default());
        assert!(noisy.diagnosis.is_some());
        let mut quiet = Series::of(&[10.0, 10.0, 10.1]);
        quiet.diagnose(Ends::default());
        assert_eq!(quiet.diagnosis, None);
    }
}
