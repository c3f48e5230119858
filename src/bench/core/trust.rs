//! How far to trust a whole measurement, in one line: whether the machine
//! was quiet, the widest interval among its rows, and what to do. Every
//! kind ends its verdict with it, and its noise paragraph says the same
//! once for the machine instead of once per row.

use serde::{Deserialize, Serialize};

use super::noise::{NoiseSummary, OTHER, STEAL, percent};
use super::series::Series;

/// How far a measurement's figures can be trusted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trust {
    /// Whether the machine was busy: other processes or the hypervisor
    /// took more than the diagnosis's thresholds over all the runs.
    pub under_load: bool,
    /// Rows whose runs spread too much to trust their median.
    pub noisy_rows: usize,
    /// Rows with at least two runs.
    pub rows: usize,
    /// The widest 95% interval of a row's mean, as a share of it, among
    /// rows of three runs or more (`None`: no such row).
    pub widest: Option<f64>,
    /// The row it belongs to.
    pub widest_row: Option<String>,
    /// The line a reader gets, e.g. `quiet: figures within +-4%`.
    pub line: String,
}

impl Trust {
    /// The trust of `rows` (a name and a series each) measured while the
    /// machine did what `noise` says.
    pub fn of<'a>(
        rows: impl IntoIterator<Item = (String, &'a Series)>,
        noise: Option<NoiseSummary>,
    ) -> Trust {
        let mut counted = 0;
        let mut noisy_rows = 0;
        let mut widest: Option<(f64, String)> = None;
        for (name, series) in rows {
            let Some(spread) = series.spread else {
                continue;
            };
            counted += 1;
            noisy_rows += usize::from(spread.noisy);
            // Two runs give Student's t = 12.7: an interval that says nothing.
            if series.runs.len() >= 3
                && widest
                    .as_ref()
                    .is_none_or(|(w, _)| spread.ci95_half_width > *w)
            {
                widest = Some((spread.ci95_half_width, name));
            }
        }
        let under_load = noise.is_some_and(|n| n.steal_share > STEAL || n.other_share > OTHER);
        let (widest, widest_row) = widest.map_or((None, None), |(w, r)| (Some(w), Some(r)));
        let within = match (widest, &widest_row) {
            (Some(w), Some(row)) => format!("figures within +-{} ({row} the widest)", percent(w)),
            _ => "too few runs for an interval".to_string(),
        };
        // Under load the load is the cause, not a row: the widest row's
        // name (in `widest_row` and the noise paragraph) is left out so
        // that the line keeps to two lines of an 80-column terminal
        // (with it, three: the ladder's answer took seven lines).
        let within_load = match widest {
            Some(w) => format!("figures within +-{}", percent(w)),
            None => "too few runs for an interval".to_string(),
        };
        let load = noise.map(|n| {
            let mut what = Vec::new();
            if n.other_share > OTHER {
                what.push(format!("other processes used {:.2} CPUs", n.other_share));
            }
            if n.steal_share > STEAL {
                what.push(format!(
                    "the hypervisor stole {:.0}% of a CPU",
                    n.steal_share * 100.0
                ));
            }
            what.join(", ")
        });
        let noisy = noisy_words(noisy_rows, counted);
        let line = match (under_load, noisy_rows) {
            (true, _) => format!(
                "measured under load ({}): {within_load}, {noisy}; rerun on an idle machine",
                load.unwrap_or_default()
            ),
            (false, 0) if noise.is_some() => format!("quiet: {within}"),
            (false, 0) => format!("no noise recorded: {within}"),
            (false, _) if noise.is_none() => {
                format!("{noisy}: {within}; take more runs (--max-runs 20)")
            }
            (false, _) => {
                format!("no load seen, but {noisy}: {within}; take more runs (--max-runs 20)")
            }
        };
        Trust {
            under_load,
            noisy_rows,
            rows: counted,
            widest,
            widest_row,
            line,
        }
    }
}

/// `2 of 5 rows noisy`; `the one row noisy` (or `not noisy`) when there
/// is one.
fn noisy_words(noisy: usize, rows: usize) -> String {
    match (noisy, rows) {
        (0, 1) => "the one row not noisy".to_string(),
        (_, 1) => "the one row noisy".to_string(),
        (n, rows) => format!("{n} of {rows} rows noisy"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet() -> NoiseSummary {
        NoiseSummary {
            runs: 10,
            steal_share: 0.001,
            other_share: 0.02,
            max_load_avg_1m: 0.3,
        }
    }

    #[test]
    fn a_quiet_tight_measurement_says_quiet_and_its_widest_interval() {
        let a = Series::of(&[10.0, 10.1, 9.9, 10.0, 10.2]);
        let b = Series::of(&[5.0, 5.3, 4.8, 5.1, 5.0]);
        let t = Trust::of([("a".into(), &a), ("b".into(), &b)], Some(quiet()));
        assert!(!t.under_load && t.noisy_rows == 0, "{t:?}");
        assert_eq!(t.widest_row.as_deref(), Some("b"));
        assert!(t.line.starts_with("quiet: figures within +-"), "{}", t.line);
        assert!(t.line.ends_with("(b the widest)"), "{}", t.line);
    }

    #[test]
    fn load_is_named_with_its_figure_and_the_advice() {
        let noisy = Series::of(&[10.0, 3.0, 9.0, 1.0, 8.0]);
        let busy = NoiseSummary {
            other_share: 1.18,
            ..quiet()
        };
        let t = Trust::of([("tuned".into(), &noisy)], Some(busy));
        assert!(t.under_load && t.noisy_rows == 1, "{t:?}");
        assert!(
            t.line.starts_with(
                "measured under load (other processes used 1.18 CPUs): figures within +-"
            ),
            "{}",
            t.line
        );
        assert!(t.line.ends_with("rerun on an idle machine"), "{}", t.line);
        assert!(!t.line.contains("the widest"), "{}", t.line);
        assert_eq!(t.widest_row.as_deref(), Some("tuned"));
        // Two lines at 80 columns under an answer's label, as the ladder
        // prints it: the hypervisor's steal and other load both named.
        let both = NoiseSummary {
            other_share: 1.34,
            steal_share: 0.02,
            ..quiet()
        };
        let eight: Vec<(String, &Series)> = (0..8)
            .map(|i| (format!("vmsplice-splice-huge-bus{i}"), &noisy))
            .collect();
        let t = Trust::of(eight, Some(both));
        let line = format!("trust:    {}", t.line);
        let wrapped = crate::report::text::wrap_hanging(&line, 80, 10);
        assert_eq!(wrapped.lines().count(), 2, "{wrapped}");
    }

    #[test]
    fn one_row_is_counted_in_the_singular() {
        let noisy = Series::of(&[1.0, 3.0, 9.0]);
        let t = Trust::of([("only".into(), &noisy)], None);
        assert!(t.line.starts_with("the one row noisy: "), "{}", t.line);
        let other = Series::of(&[5.0, 5.0, 5.0]);
        let t = Trust::of([("a".into(), &noisy), ("b".into(), &other)], None);
        assert!(t.line.starts_with("1 of 2 rows noisy: "), "{}", t.line);
    }

    #[test]
    fn two_runs_give_no_interval_to_quote() {
        let two = Series::of(&[1.0, 7.0]);
        let t = Trust::of([("x".into(), &two)], Some(quiet()));
        assert_eq!(t.widest, None);
        assert!(
            t.line.contains("too few runs for an interval"),
            "{}",
            t.line
        );
        assert!(!t.line.contains("605"), "{}", t.line);
    }
}
