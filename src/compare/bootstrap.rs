//! The statistics of `compare` (docs/compare.md, "The statistics"): the
//! ratio of two medians, its bootstrap percentile interval (Efron and
//! Tibshirani, ch. 13), the verdict the interval gives, and mmtests' rule
//! for `--lkml` ([`MeanTest`]). With a handful of runs the interval is
//! wide, and honestly so: five runs a side cannot show a 1% change.

use crate::bench::core::stats::{Shuffler, mean_interval_95};

/// How the interval is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    /// Resamples drawn (each: one resample of each side).
    pub resamples: usize,
    /// The share of resampled ratios inside the interval, in (0, 1).
    pub confidence: f64,
    /// Seed of the resampling: the same seed gives the same interval.
    pub seed: u64,
}

/// The default seed, so that two runs of `compare` print the same thing.
pub const DEFAULT_SEED: u64 = 1;

impl Default for Bootstrap {
    /// 10000 resamples, 95%, [`DEFAULT_SEED`].
    fn default() -> Bootstrap {
        Bootstrap {
            resamples: 10_000,
            confidence: 0.95,
            seed: DEFAULT_SEED,
        }
    }
}

/// An interval of the new/base ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// Which way the new runs moved, in the ratio's terms, before the
/// metric's direction says whether that is faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shift {
    /// The whole interval is above 1: new is larger.
    Up,
    /// The whole interval is below 1: new is smaller.
    Down,
    /// The interval contains 1: no significant change.
    None,
}

impl Interval {
    /// Where the interval lies relative to 1.
    pub fn shift(self) -> Shift {
        if self.low > 1.0 {
            Shift::Up
        } else if self.high < 1.0 {
            Shift::Down
        } else {
            Shift::None
        }
    }
}

/// The fewest runs a side needs for an interval: one run resamples to
/// itself and says nothing about spread.
pub(crate) const MIN_RUNS: usize = 2;

/// mmtests' rule for one metric of one row: the means of both sides and
/// the half-widths of their 95% intervals (Student's t over the runs,
/// [`mean_interval_95`]: the interval the measuring commands print as
/// `+-4.2%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanTest {
    /// Mean of the base runs.
    pub base_mean: f64,
    /// Half-width of its 95% interval, in the metric's unit.
    pub base_half_width: f64,
    /// Mean of the new runs.
    pub new_mean: f64,
    /// Half-width of its 95% interval, in the metric's unit.
    pub new_half_width: f64,
}

impl MeanTest {
    /// The test of `base` against `new`, or `None` when a side has fewer
    /// than [`MIN_RUNS`] runs: one run has no interval, so a change
    /// against it is never significant.
    pub fn of(base: &[f64], new: &[f64]) -> Option<MeanTest> {
        let (base_mean, base_half_width) = mean_interval_95(base)?;
        let (new_mean, new_half_width) = mean_interval_95(new)?;
        Some(MeanTest {
            base_mean,
            base_half_width,
            new_mean,
            new_half_width,
        })
    }

    /// Whether the means differ by more than the two half-widths
    /// together: the two intervals do not even touch.
    pub fn significant(&self) -> bool {
        (self.new_mean - self.base_mean).abs() > self.base_half_width + self.new_half_width
    }
}

/// The bootstrap percentile interval of `median(new) / median(base)`,
/// or `None` when a side has fewer than [`MIN_RUNS`] runs. The values
/// must be finite and positive (the caller checks), so that every
/// resampled ratio is finite.
pub(crate) fn ratio_interval(base: &[f64], new: &[f64], how: &Bootstrap) -> Option<Interval> {
    if base.len() < MIN_RUNS || new.len() < MIN_RUNS {
        return None;
    }
    let mut rng = Shuffler::new(how.seed);
    let (mut b, mut n) = (vec![0.0; base.len()], vec![0.0; new.len()]);
    let mut ratios: Vec<f64> = (0..how.resamples.max(1))
        .map(|_| {
            let mb = resampled_median(base, &mut b, &mut rng);
            let mn = resampled_median(new, &mut n, &mut rng);
            mn / mb
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - how.confidence.clamp(0.0, 1.0)) / 2.0;
    Some(Interval {
        low: quantile(&ratios, tail),
        high: quantile(&ratios, 1.0 - tail),
    })
}

/// The median of a resample of `values` drawn into `scratch` (its length),
/// found by selection rather than a sort: linear in the runs, not n log n,
/// and the same value [`median_of_sorted`] gives.
///
/// [`median_of_sorted`]: crate::bench::core::stats::median_of_sorted
fn resampled_median(values: &[f64], scratch: &mut [f64], rng: &mut Shuffler) -> f64 {
    for slot in scratch.iter_mut() {
        *slot = values[rng.below(values.len())];
    }
    median_by_selection(scratch)
}

/// The median of `values` (reordered), as `median_of_sorted` of them
/// sorted would give it; NaN when empty.
fn median_by_selection(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    let (below, &mut mid, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return mid;
    }
    // The other middle value is the largest of the lower half.
    let lower = below.iter().copied().max_by(f64::total_cmp).unwrap_or(mid);
    (lower + mid) / 2.0
}

/// The `q` quantile of `sorted` (not empty), interpolating linearly
/// between neighbours (Hyndman and Fan's type 7, R's default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::core::stats::median_of_sorted;

    const BASE: [f64; 7] = [10.0, 10.4, 9.7, 10.1, 9.9, 10.3, 9.8];

    #[test]
    fn a_doubling_gives_an_interval_above_one() {
        let new: Vec<f64> = BASE.iter().map(|v| v * 2.0).collect();
        let i = ratio_interval(&BASE, &new, &Bootstrap::default()).unwrap();
        assert!(i.low > 1.0 && i.low <= 2.0 && i.high >= 2.0, "{i:?}");
        assert_eq!(i.shift(), Shift::Up);
        let halved: Vec<f64> = BASE.iter().map(|v| v / 2.0).collect();
        let i = ratio_interval(&BASE, &halved, &Bootstrap::default()).unwrap();
        assert_eq!(i.shift(), Shift::Down);
    }

    #[test]
    fn identical_constant_samples_give_exactly_one() {
        let runs = [3.0; 5];
        let i = ratio_interval(&runs, &runs, &Bootstrap::default()).unwrap();
        assert_eq!(
            i,
            Interval {
                low: 1.0,
                high: 1.0
            }
        );
        assert_eq!(i.shift(), Shift::None);
    }

    #[test]
    fn the_same_runs_in_another_order_contain_one() {
        let mut new = BASE;
        new.reverse();
        let i = ratio_interval(&BASE, &new, &Bootstrap::default()).unwrap();
        assert!(i.low < 1.0 && i.high > 1.0, "{i:?}");
        assert_eq!(i.shift(), Shift::None);
    }

    #[test]
    fn a_seed_repeats_and_another_seed_differs() {
        // Forty distinct runs a side: resampled medians take many values,
        // so two seeds are all but sure to give two intervals.
        let base: Vec<f64> = (0..40)
            .map(|i| 10.0 + f64::from(i * 7 % 40) / 100.0)
            .collect();
        let new: Vec<f64> = (0..40)
            .map(|i| 10.1 + f64::from(i * 11 % 40) / 90.0)
            .collect();
        let how = Bootstrap::default();
        let a = ratio_interval(&base, &new, &how).unwrap();
        assert_eq!(ratio_interval(&base, &new, &how), Some(a));
        let other = Bootstrap { seed: 99, ..how };
        assert_ne!(ratio_interval(&base, &new, &other), Some(a));
    }

    #[test]
    fn a_wider_confidence_gives_a_wider_interval() {
        let new = [10.5, 9.6, 10.9, 10.2, 9.9];
        let narrow = Bootstrap {
            confidence: 0.5,
            ..Bootstrap::default()
        };
        let n = ratio_interval(&BASE, &new, &narrow).unwrap();
        let w = ratio_interval(&BASE, &new, &Bootstrap::default()).unwrap();
        assert!(w.low <= n.low && w.high >= n.high, "{w:?} vs {n:?}");
    }

    #[test]
    fn fewer_than_two_runs_give_no_interval() {
        let how = Bootstrap::default();
        assert_eq!(ratio_interval(&[1.0], &BASE, &how), None);
        assert_eq!(ratio_interval(&BASE, &[], &how), None);
    }

    #[test]
    fn an_interval_must_exclude_one_to_shift() {
        let i = |low, high| Interval { low, high }.shift();
        assert_eq!(i(1.0, 1.2), Shift::None);
        assert_eq!(i(0.8, 1.0), Shift::None);
        assert_eq!(i(1.0 + 1e-9, 1.2), Shift::Up);
        assert_eq!(i(0.8, 1.0 - 1e-9), Shift::Down);
    }

    #[test]
    fn the_mmtests_rule_marks_a_difference_wider_than_both_half_widths() {
        // BASE: mean 10.029, s 0.256, half-width 2.447 * 0.256 / sqrt(7).
        let t = |by: f64| MeanTest::of(&BASE, &BASE.map(|v| v + by)).unwrap();
        let half = t(0.0).base_half_width;
        assert!((half - 0.2371).abs() < 1e-3, "{half}");
        assert!(!t(0.0).significant());
        // Shifted by less than 2 half-widths: inside; by more: outside.
        assert!(!t(1.9 * half).significant());
        assert!(t(2.1 * half).significant());
        assert!(t(-2.1 * half).significant());
        // One run a side: no interval, never significant.
        assert_eq!(MeanTest::of(&[1.0], &[100.0, 101.0]), None);
        assert_eq!(MeanTest::of(&BASE, &[100.0]), None);
    }

    #[test]
    fn selection_gives_the_median_a_sort_gives() {
        let mut rng = Shuffler::new(7);
        for n in [1, 2, 3, 4, 5, 10, 11, 100, 101] {
            let values: Vec<f64> = (0..n).map(|_| rng.below(50) as f64).collect();
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let mut scratch = values.clone();
            assert_eq!(
                median_by_selection(&mut scratch),
                median_of_sorted(&sorted).unwrap(),
                "{values:?}"
            );
        }
        assert!(median_by_selection(&mut []).is_nan());
    }

    #[test]
    fn quantiles_interpolate_between_neighbours() {
        let sorted = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&sorted, 0.0), 1.0);
        assert_eq!(quantile(&sorted, 0.5), 3.0);
        assert_eq!(quantile(&sorted, 1.0), 5.0);
        assert_eq!(quantile(&sorted, 0.125), 1.5);
        assert_eq!(quantile(&[7.0], 0.025), 7.0);
    }
}
