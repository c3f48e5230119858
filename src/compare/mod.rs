//! `pipespeed compare BASE NEW`: two results of the same command, row by
//! row, as benchstat compares Go benchmarks: both medians, their ratio, a
//! bootstrap interval of the ratio and a verdict.
//!
//! A change is marked only when it is significant: by the bootstrap
//! interval of the ratio (`bootstrap`), and in `--lkml` by mmtests' rule;
//! a side with one run has neither. What is compared of a result is what
//! its kind gives (`Compared`, in `bench/K/compare.rs`).
//!
//! Library code: nothing here prints. Differences between the machines,
//! the builds, the noise and the settings come back as
//! [`Comparison::warnings`].

pub(crate) mod bootstrap;
pub(crate) mod conditions;
pub(crate) mod load;
pub(crate) mod pool;
pub(crate) mod render;

use std::path::Path;

use crate::bench::core::Spread;
use crate::bench::core::compared::{
    self as extract, Better, EXPECTED_TO_DIFFER, Extract, Metric, NOT_RECORDED, Runs,
};
use crate::bench::core::stats::median;
pub use bootstrap::{Bootstrap, DEFAULT_SEED};
use bootstrap::{Interval, MeanTest, Shift, ratio_interval};
use conditions::Conditions;
pub use load::{CompareError, Document, Kind, load, load_pair};
pub use pool::{PooledMetric, PooledRow, pooled_rows};

/// Which of the two files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first, the reference.
    Base,
    /// The second, the one judged.
    New,
}

/// What the interval says about one metric of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The whole interval is on the better side of 1.
    Faster,
    /// The whole interval is on the worse side of 1.
    Slower,
    /// The interval contains 1 (benchstat's `~`).
    NoChange,
    /// Fewer than two runs on a side: no interval (`?`).
    TooFewRuns,
}

/// A metric of a row measured in both files.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// Median of the base runs.
    pub base_median: f64,
    /// Median of the new runs.
    pub new_median: f64,
    /// Runs in base.
    pub base_runs: usize,
    /// Runs in new.
    pub new_runs: usize,
    /// `new_median / base_median`.
    pub ratio: f64,
    /// The bootstrap interval of the ratio (`None`: too few runs).
    pub interval: Option<Interval>,
    /// What the interval says.
    pub verdict: Verdict,
    /// mmtests' rule, for `--lkml` (`None`: a side has one run).
    pub means: Option<MeanTest>,
    /// Whether base's runs spread too much to trust its median, as the
    /// measuring command marks a row noisy ([`Spread::noisy`]).
    pub base_noisy: bool,
    /// Whether new's runs do.
    pub new_noisy: bool,
}

impl Change {
    /// Whether `--lkml` marks the change significant (`*+12.3%*`).
    pub fn mmtests_significant(&self) -> bool {
        self.means.is_some_and(|m| m.significant())
    }

    /// Which files' runs of the row are noisy: `None`, or `base`, `new`,
    /// `both`.
    pub fn noisy_in(&self) -> Option<&'static str> {
        match (self.base_noisy, self.new_noisy) {
            (false, false) => None,
            (true, false) => Some("base"),
            (false, true) => Some("new"),
            (true, true) => Some("both"),
        }
    }
}

/// One row of one metric's table.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Measured in both: compared.
    Compared(Change),
    /// The row is in one file only.
    OnlyIn(Side),
    /// In both files, but at least one has no runs; the reasons, per side
    /// that has none.
    NoRuns {
        /// Why base has none.
        base: Option<String>,
        /// Why new has none.
        new: Option<String>,
    },
    /// Runs whose values cannot make a ratio (zero, negative, not a
    /// number), and which side has them.
    BadValues(Side),
}

/// A row's outcome in one metric's table.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The rung, the message size or the cell.
    pub row: String,
    /// What was found.
    pub outcome: Outcome,
}

/// One metric, every row.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The metric.
    pub metric: Metric,
    /// Base's rows in order, then the rows only new has.
    pub lines: Vec<Line>,
}

/// A fact or a setting as it is in each file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// Its name (a JSON field name for the machine's facts).
    pub name: String,
    /// In base.
    pub base: String,
    /// In new.
    pub new: String,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Which command wrote both files.
    pub kind: Kind,
    /// The format they were written in (`A and B` when the two differ).
    pub schema: String,
    /// How base is named.
    pub base: String,
    /// How new is named.
    pub new: String,
    /// How the intervals were drawn.
    pub bootstrap: Bootstrap,
    /// One table per metric of the kind.
    pub tables: Vec<Table>,
    /// The machines' facts, side by side.
    pub facts: Vec<Pair>,
    /// The settings that differ.
    pub settings: Vec<Pair>,
    /// Things to say about one file alone (`file: note`).
    pub notes: Vec<String>,
    /// What else each machine did during the runs.
    pub conditions: Conditions,
    /// The command that printed it, where it was not `compare` (as
    /// `kernels`, which pools boots): the forms end with it.
    pub command: Option<String>,
}

impl Comparison {
    /// One line per difference between the machines or the settings, and
    /// per note, for stderr.
    pub fn warnings(&self) -> Vec<String> {
        let differ = |p: &Pair, what: &str| {
            format!(
                "{what} {} differs: {} in {}, {} in {}",
                p.name, p.base, self.base, p.new, self.new
            )
        };
        let facts = (self.facts.iter())
            .filter(|p| p.base != p.new && !EXPECTED_TO_DIFFER.contains(&p.name.as_str()));
        facts
            .map(|p| differ(p, "system fact"))
            .chain(self.conditions.warning(&self.base, &self.new))
            .chain(self.settings.iter().map(|p| differ(p, "setting")))
            .chain(self.notes.iter().cloned())
            .collect()
    }
}

/// Reads and compares two result files; `base.1` and `new.1` are how
/// they are named in messages and output.
pub fn compare_files(
    base: (&Path, &str),
    new: (&Path, &str),
    how: &Bootstrap,
) -> Result<Comparison, CompareError> {
    let (b, n) = load_pair(base, new)?;
    compare(&b, base.1, &n, new.1, how)
}

/// Compares two parsed results, refusing two different kinds.
pub fn compare(
    base: &Document,
    base_name: &str,
    new: &Document,
    new_name: &str,
    how: &Bootstrap,
) -> Result<Comparison, CompareError> {
    compare_pooled(
        std::slice::from_ref(base),
        base_name,
        std::slice::from_ref(new),
        new_name,
        how,
    )
}

/// Compares two sets of results of one command, each set pooled as one
/// result: a row's runs are the runs of that row in every document of
/// its set, in order (`pipespeed kernels`: every boot of a kernel). The
/// facts and settings are the first document's of each set (a setting
/// that differs in a later one gets a note, as does a row missing from
/// some); the noise is the noisiest document's. An empty set is
/// refused as [`CompareError::Empty`].
pub fn compare_pooled(
    base: &[Document],
    base_name: &str,
    new: &[Document],
    new_name: &str,
    how: &Bootstrap,
) -> Result<Comparison, CompareError> {
    let (Some(first_base), Some(first_new)) = (base.first(), new.first()) else {
        let file = if base.is_empty() { base_name } else { new_name };
        return Err(CompareError::Empty { file: file.into() });
    };
    let kind = first_base.kind();
    for (set, name) in [(base, base_name), (new, new_name)] {
        if let Some(other) = set.iter().find(|d| d.kind() != kind) {
            return Err(CompareError::Kinds {
                base: base_name.into(),
                base_kind: kind.name().into(),
                new: name.into(),
                new_kind: other.kind().name().into(),
            });
        }
    }
    let (b, n) = (pool::pool(base), pool::pool(new));
    too_many_runs(&b, base_name, how)?;
    too_many_runs(&n, new_name, how)?;
    let tables = kind
        .metrics()
        .iter()
        .enumerate()
        .map(|(i, &metric)| Table {
            metric,
            lines: lines(&b, &n, i, metric, how),
        })
        .collect();
    let notes = (b.notes.iter().map(|note| format!("{base_name}: {note}")))
        .chain(n.notes.iter().map(|note| format!("{new_name}: {note}")))
        .collect();
    let schema = match (first_base.schema(), first_new.schema()) {
        (b, n) if b == n => b.to_string(),
        (b, n) => format!("{b} and {n}"),
    };
    Ok(Comparison {
        kind,
        schema,
        base: base_name.into(),
        new: new_name.into(),
        bootstrap: *how,
        tables,
        facts: pairs(&b.facts, &n.facts)
            .into_iter()
            .filter(|p| !(p.base == NOT_RECORDED && p.new == NOT_RECORDED))
            .collect(),
        settings: pairs(&b.settings, &n.settings)
            .into_iter()
            .filter(|p| p.base != p.new)
            .collect(),
        notes,
        conditions: Conditions {
            base: pooled_noise(base),
            new: pooled_noise(new),
        },
        command: None,
    })
}

/// The noise of a pool: its noisiest result's steal, other load and load
/// average (each the worst of the pool), over all its runs; `None` when
/// a result records none.
fn pooled_noise(set: &[Document]) -> Option<crate::bench::core::NoiseSummary> {
    let all: Option<Vec<_>> = set.iter().map(|doc| doc.noise()).collect();
    all?.into_iter()
        .reduce(|a, b| crate::bench::core::NoiseSummary {
            runs: a.runs + b.runs,
            steal_share: a.steal_share.max(b.steal_share),
            other_share: a.other_share.max(b.other_share),
            max_load_avg_1m: a.max_load_avg_1m.max(b.max_load_avg_1m),
        })
}

/// The most runs a row may have. The bootstrap resamples every run of a
/// row once per resample (10000 by default), so its time grows with the
/// runs: a file of 2 million runs took 99 s before this bound. Real
/// results have a few to a few hundred runs; two ladders of 4 measured
/// rungs with 1000 runs each are compared in 1.95 s (`peers/compare-runs.py`,
/// docs/compare.md).
pub const MAX_RUNS: usize = 1_000;

/// Refuses a result with a row of more than [`MAX_RUNS`] runs.
fn too_many_runs(extract: &Extract, file: &str, how: &Bootstrap) -> Result<(), CompareError> {
    for row in &extract.rows {
        let runs = match &row.runs {
            Runs::Measured(per_metric) => per_metric.iter().map(Vec::len).max(),
            Runs::Each(per_metric) => (per_metric.iter())
                .map(|runs| runs.as_ref().map_or(0, Vec::len))
                .max(),
            Runs::None(_) => None,
        };
        let runs = runs.unwrap_or(0);
        if runs > MAX_RUNS {
            return Err(CompareError::TooManyRuns {
                file: file.into(),
                row: row.name.clone(),
                runs,
                max: MAX_RUNS,
                resamples: how.resamples,
            });
        }
    }
    Ok(())
}

/// The names in both lists, with both values, in base's order.
fn pairs(base: &[(String, String)], new: &[(String, String)]) -> Vec<Pair> {
    base.iter()
        .filter_map(|(name, b)| {
            let (_, n) = new.iter().find(|(k, _)| k == name)?;
            Some(Pair {
                name: name.clone(),
                base: b.clone(),
                new: n.clone(),
            })
        })
        .collect()
}

/// Metric `i`'s lines: base's rows, then the rows only in new.
fn lines(b: &Extract, n: &Extract, i: usize, metric: Metric, how: &Bootstrap) -> Vec<Line> {
    let find = |rows: &[extract::Row], name: &str| rows.iter().position(|r| r.name == name);
    let mut out: Vec<Line> = b
        .rows
        .iter()
        .map(|row| Line {
            row: row.name.clone(),
            outcome: match find(&n.rows, &row.name) {
                Some(j) => outcome(&row.runs, &n.rows[j].runs, i, metric, how),
                None => Outcome::OnlyIn(Side::Base),
            },
        })
        .collect();
    out.extend(
        n.rows
            .iter()
            .filter(|row| find(&b.rows, &row.name).is_none())
            .map(|row| Line {
                row: row.name.clone(),
                outcome: Outcome::OnlyIn(Side::New),
            }),
    );
    out
}

fn outcome(base: &Runs, new: &Runs, i: usize, metric: Metric, how: &Bootstrap) -> Outcome {
    let (b, n) = match (values(base, i), values(new, i)) {
        (Ok(b), Ok(n)) => (b, n),
        (b, n) => {
            return Outcome::NoRuns {
                base: b.err(),
                new: n.err(),
            };
        }
    };
    let usable = |v: &[f64]| v.iter().all(|x| x.is_finite() && *x > 0.0);
    if !usable(b) {
        return Outcome::BadValues(Side::Base);
    }
    if !usable(n) {
        return Outcome::BadValues(Side::New);
    }
    let (Some(base_median), Some(new_median)) = (median(b), median(n)) else {
        return Outcome::NoRuns {
            base: None,
            new: None,
        };
    };
    let interval = ratio_interval(b, n, how);
    let verdict = match (interval.map(Interval::shift), metric.better) {
        (None, _) => Verdict::TooFewRuns,
        (Some(Shift::None), _) => Verdict::NoChange,
        (Some(Shift::Up), Better::Higher) | (Some(Shift::Down), Better::Lower) => Verdict::Faster,
        (Some(Shift::Up), Better::Lower) | (Some(Shift::Down), Better::Higher) => Verdict::Slower,
    };
    Outcome::Compared(Change {
        base_median,
        new_median,
        base_runs: b.len(),
        new_runs: n.len(),
        ratio: new_median / base_median,
        interval,
        verdict,
        means: MeanTest::of(b, n),
        base_noisy: noisy(b),
        new_noisy: noisy(n),
    })
}

/// Whether `runs` spread as a row the measuring command marks noisy.
fn noisy(runs: &[f64]) -> bool {
    Spread::of(runs).is_some_and(|s| s.noisy)
}

/// Metric `i`'s values, or why there are none.
fn values(runs: &Runs, i: usize) -> Result<&[f64], String> {
    match runs {
        Runs::Measured(per_metric) => match per_metric.get(i) {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err("no runs".into()),
        },
        Runs::Each(per_metric) => match per_metric.get(i) {
            Some(Ok(v)) if !v.is_empty() => Ok(v),
            Some(Err(why)) => Err(why.clone()),
            _ => Err("no runs".into()),
        },
        Runs::None(why) => Err(why.clone()),
    }
}

#[cfg(test)]
mod tests;
