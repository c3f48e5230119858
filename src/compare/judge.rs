//! The verdict on one metric of one row (docs/compare.md, "The rule"):
//! mmtests' rule, as compare-kernels marks a change, with a floor for
//! the drift between separate invocations.
//!
//! Two default ladders of one binary, run one after the other on a
//! quiet machine, read `splice-limit +20.8% faster` under the bootstrap
//! interval alone, and `+22.4%` with a busy loop beside the second
//! (issue 38): the runs inside one file were tight, the machine's state
//! drifted between the two invocations, and an interval built from one
//! file's runs cannot see that. So:
//!
//! - **One file a side**: the samples are the runs. The means must differ
//!   by more than the half-widths of their two 95% intervals together
//!   (mmtests' rule), and the change of the medians must pass [`DRIFT`]:
//!   the floor is the larger of the drift and both sides' noise. A
//!   change past the noise but under the drift is `?`, "within the drift
//!   of separate invocations".
//! - **Several files a side** (a directory each, or `kernels`' boots):
//!   the samples are the files' medians, so the spread between
//!   invocations is measured rather than assumed; the rule is mmtests'
//!   on them, with an effect floor of [`MIN_CHANGE`].
//! - A side that is noisy (its runs, or its files' medians, spread as
//!   the measuring commands mark a row noisy) gets no verdict, `?`,
//!   unless the two sides lie apart: [`APART_RUNS`] samples a side or
//!   more, every one of one side beyond every one of the other
//!   (Mann-Whitney's U is 0), and the change past the floor. With a 4 KiB
//!   pipe write-read runs at about a quarter of its speed with the
//!   kernel's default pipe, its runs +-17% (noisy): noise that leaves the
//!   sides apart cannot explain it.

use super::Verdict;
use super::bootstrap::{MIN_RUNS, MeanTest};
use crate::bench::core::Spread;
use crate::bench::core::compared::Better;
use crate::bench::core::stats::median;

/// The least change called with one file a side, as a share of base.
/// Two invocations of the same binary, minutes apart, drifted by 20.8%
/// and 22.4% with tight runs inside each file (issue 38); 25% stays
/// above both.
pub const DRIFT: f64 = 0.25;

/// The least change called with several files a side: the effect floor
/// benchstat-like tools keep so that a real but negligible shift is not
/// reported.
pub const MIN_CHANGE: f64 = 0.05;

/// The least samples a side for the sides' lying apart to overrule their
/// noise: with five a side, two sets of one distribution lie apart by
/// chance once in 126 (Mann-Whitney's U = 0, two-sided p = 0.008).
pub const APART_RUNS: usize = 5;

/// One side of one metric of one row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side<'a> {
    /// Every run, of every file, in order.
    pub runs: &'a [f64],
    /// Each file's median, where the side has several files.
    pub files: &'a [f64],
    /// Whether any one file's runs are noisy.
    pub file_noisy: bool,
}

impl Side<'_> {
    /// Whether the side is judged by its files (two or more).
    fn by_files(&self) -> bool {
        self.files.len() >= 2
    }

    /// The samples the rule reads: the files' medians or the runs.
    fn samples(&self, by_files: bool) -> &[f64] {
        if by_files { self.files } else { self.runs }
    }

    /// Whether the side spreads too much to trust: a noisy file, or
    /// (judged by files) files whose medians spread as a noisy row.
    fn noisy(&self, by_files: bool) -> bool {
        let spread = |v: &[f64]| Spread::of(v).is_some_and(|s| s.noisy);
        self.file_noisy || (by_files && spread(self.files))
    }
}

/// What the rule found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Judged {
    /// The verdict.
    pub verdict: Verdict,
    /// mmtests' test on the samples (`None`: a side has too few).
    pub means: Option<MeanTest>,
    /// Whether each side is noisy.
    pub noisy: (bool, bool),
    /// The least change the rule calls for this row, as a share.
    pub floor: f64,
    /// Whether the samples were the files' medians.
    pub by_files: bool,
}

/// Judges `new` against `base` for a metric whose better side is
/// `better`.
pub(crate) fn judge(base: Side, new: Side, better: Better) -> Judged {
    let by_files = base.by_files() && new.by_files();
    let (b, n) = (base.samples(by_files), new.samples(by_files));
    let noisy = (base.noisy(by_files), new.noisy(by_files));
    let means = MeanTest::of(b, n);
    let floor = if by_files { MIN_CHANGE } else { DRIFT };
    let judged = |verdict| Judged {
        verdict,
        means,
        noisy,
        floor,
        by_files,
    };
    if b.len() < MIN_RUNS || n.len() < MIN_RUNS {
        return judged(Verdict::TooFewRuns);
    }
    let noisy_side = noisy.0 || noisy.1;
    if noisy_side && !apart(b, n) {
        return judged(Verdict::Noisy);
    }
    let (Some(m), Some(mb), Some(mn)) = (means, median(base.runs), median(new.runs)) else {
        return judged(Verdict::TooFewRuns);
    };
    let ratio = mn / mb;
    let up = m.new_mean > m.base_mean;
    let past_floor = (ratio - 1.0).abs() >= floor;
    if noisy_side && !past_floor {
        return judged(Verdict::Noisy);
    }
    // The means and the medians must agree on the direction; sides apart
    // pass mmtests' test whatever their spread.
    let significant = m.significant() || noisy_side;
    if !significant || up != (ratio > 1.0) {
        return judged(Verdict::NoChange);
    }
    if !past_floor {
        return judged(if by_files {
            Verdict::NoChange
        } else {
            Verdict::WithinDrift
        });
    }
    judged(match (up, better) {
        (true, Better::Higher) | (false, Better::Lower) => Verdict::Faster,
        _ => Verdict::Slower,
    })
}

/// Whether `a` and `b` have [`APART_RUNS`] samples or more each and
/// every one of one is beyond every one of the other.
fn apart(a: &[f64], b: &[f64]) -> bool {
    let range = |v: &[f64]| {
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (min, max)
    };
    let ((a_min, a_max), (b_min, b_max)) = (range(a), range(b));
    a.len() >= APART_RUNS && b.len() >= APART_RUNS && (a_max < b_min || b_max < a_min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(runs: &[f64]) -> Side<'_> {
        Side {
            runs,
            files: &[],
            file_noisy: Spread::of(runs).is_some_and(|s| s.noisy),
        }
    }

    const TIGHT: [f64; 7] = [20.0, 20.2, 19.9, 20.1, 19.8, 20.3, 20.0];

    fn times(k: f64) -> Vec<f64> {
        TIGHT.iter().map(|v| v * k).collect()
    }

    #[test]
    fn one_file_a_side_calls_a_change_past_the_drift_only() {
        let j = |k: f64| judge(one(&TIGHT), one(&times(k)), Better::Higher).verdict;
        assert_eq!(j(3.0), Verdict::Faster);
        assert_eq!(j(1.0 / 3.0), Verdict::Slower);
        assert_eq!(j(1.3), Verdict::Faster);
        // Significant by mmtests' rule, but within the drift.
        assert_eq!(j(1.2), Verdict::WithinDrift);
        assert_eq!(j(0.85), Verdict::WithinDrift);
        assert_eq!(j(1.0), Verdict::NoChange);
        // A latency: lower is faster.
        let lat = judge(one(&TIGHT), one(&times(0.5)), Better::Lower);
        assert_eq!(lat.verdict, Verdict::Faster);
        assert_eq!(lat.floor, DRIFT);
    }

    #[test]
    fn a_change_past_the_drift_but_within_the_noise_is_not_called() {
        // 2 runs 5% apart, not noisy (too few for an interval to mark
        // them): their 95% half-widths, t = 12.7 with one degree of
        // freedom, hold a 30% change of the medians.
        let base = [20.0, 21.0];
        let new: Vec<f64> = base.iter().map(|v| v * 1.3).collect();
        let j = judge(one(&base), one(&new), Better::Higher);
        assert_eq!(j.verdict, Verdict::NoChange, "{j:?}");
        // The same change with tight runs is past both.
        let j = judge(one(&TIGHT), one(&times(1.3)), Better::Higher);
        assert_eq!((j.floor, j.verdict), (DRIFT, Verdict::Faster));
    }

    #[test]
    fn a_noisy_side_or_too_few_runs_give_no_verdict() {
        let noisy = [10.0, 20.0, 12.0, 30.0, 11.0];
        let j = judge(one(&TIGHT), one(&noisy), Better::Higher);
        assert_eq!((j.verdict, j.noisy), (Verdict::Noisy, (false, true)));
        // Noisy, apart from the other side, but within the drift.
        let near = [22.0, 28.0, 23.0, 24.0, 22.5];
        let j = judge(one(&TIGHT), one(&near), Better::Higher);
        assert_eq!((j.verdict, j.noisy), (Verdict::Noisy, (false, true)));
        // Noisy and far, but four runs: apart by chance once in 35.
        let few = [60.0, 80.0, 62.0, 90.0];
        let j = judge(one(&TIGHT), one(&few), Better::Higher);
        assert_eq!(j.verdict, Verdict::Noisy);
        let j = judge(one(&[20.0]), one(&[60.0]), Better::Higher);
        assert_eq!(j.verdict, Verdict::TooFewRuns);
    }

    #[test]
    fn a_noisy_side_apart_from_the_other_past_the_floor_is_called() {
        // write-read with a 4 KiB pipe against the kernel's default pipe:
        // runs +-17%, noisy, every one below every run of the default.
        let default = [2.45, 2.51, 2.60, 2.39, 2.55, 2.48];
        let small = [0.55, 0.65, 0.80, 0.60, 0.70, 0.62];
        let j = judge(one(&default), one(&small), Better::Higher);
        assert_eq!((j.verdict, j.noisy), (Verdict::Slower, (false, true)));
        // One run of the noisy side reaching into the other: no verdict.
        let reaching = [0.55, 0.65, 2.50, 0.60, 0.70, 0.62];
        let j = judge(one(&default), one(&reaching), Better::Higher);
        assert_eq!(j.verdict, Verdict::Noisy);
    }

    #[test]
    fn several_files_a_side_are_judged_by_their_medians() {
        let side = |files: &'static [f64]| Side {
            runs: &TIGHT,
            files,
            file_noisy: false,
        };
        let j = judge(
            side(&[20.0, 20.3, 19.8]),
            Side {
                runs: &[24.0, 24.1, 23.9],
                ..side(&[24.0, 24.2, 23.8])
            },
            Better::Higher,
        );
        assert!(j.by_files && j.floor == MIN_CHANGE, "{j:?}");
        assert_eq!(j.verdict, Verdict::Faster);
        // Files that drift among themselves: noisy, no verdict.
        let j = judge(
            side(&[20.0, 24.0, 20.5]),
            side(&[24.0, 20.2, 23.8]),
            Better::Higher,
        );
        assert_eq!(j.verdict, Verdict::Noisy);
        // One side of one file: judged by the runs, with the drift floor.
        let j = judge(side(&[20.0, 20.3, 19.8]), one(&times(1.2)), Better::Higher);
        assert!(!j.by_files);
        assert_eq!(j.verdict, Verdict::WithinDrift);
    }
}
