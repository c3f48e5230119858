//! `pipespeed compare BASE NEW`: two results of the same command, row by
//! row, as benchstat compares Go benchmarks: both medians, their ratio, a
//! bootstrap interval of the ratio and a verdict.
//!
//! A change is called only by the rule `judge` states: mmtests' (the
//! means differ by more than their two 95% half-widths) with a floor for
//! the drift between separate invocations, judged on the runs with one
//! file a side and on the files' medians with several (a directory a
//! side, or `kernels`' boots). A noisy side, a side of one run, rows
//! measured in different placements and files from different machines
//! get no verdict. What is compared of a result is what its kind gives
//! (`Compared`, in `bench/K/compare.rs`).
//!
//! Library code: nothing here prints. Differences between the machines,
//! the builds, the noise and the settings come back as
//! [`Comparison::warnings`].

pub(crate) mod bootstrap;
pub(crate) mod conditions;
pub(crate) mod judge;
pub(crate) mod load;
pub(crate) mod placement;
pub(crate) mod pool;
pub(crate) mod render;

use std::path::Path;

use crate::bench::core::Spread;
use crate::bench::core::compared::{
    self as extract, EXPECTED_TO_DIFFER, Extract, Metric, NOT_RECORDED, Runs,
};
use crate::bench::core::stats::median;
pub use bootstrap::{Bootstrap, DEFAULT_SEED};
use bootstrap::{Interval, MeanTest, ratio_interval};
use conditions::Conditions;
pub use judge::{DRIFT, MIN_CHANGE};
pub use load::{CompareError, Document, Kind, load, load_pair, load_side};
pub use pool::{PooledMetric, PooledRow, pooled_rows};

/// Which of the two files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first, the reference.
    Base,
    /// The second, the one judged.
    New,
}

/// What the rule (docs/compare.md, "The rule") says about one metric of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A change past the noise and the floor, on the better side.
    Faster,
    /// A change past the noise and the floor, on the worse side.
    Slower,
    /// The means do not differ by more than their intervals, or (several
    /// files a side) by less than [`MIN_CHANGE`] (benchstat's `~`).
    NoChange,
    /// Fewer than two runs on a side: no interval (`?`).
    TooFewRuns,
    /// A side's runs (or files) spread too much to trust (`?`).
    Noisy,
    /// Past the noise of the runs, but not past the drift between two
    /// separate invocations ([`DRIFT`]): one file a side cannot tell
    /// them apart (`?`).
    WithinDrift,
    /// The files come from different machines (`?`).
    OtherMachine,
}

impl Verdict {
    /// Whether the rule called a change.
    pub fn called(self) -> bool {
        matches!(self, Verdict::Faster | Verdict::Slower)
    }

    /// Whether there is no verdict (`?`).
    pub fn unknown(self) -> bool {
        !matches!(self, Verdict::Faster | Verdict::Slower | Verdict::NoChange)
    }
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
    /// What the rule says.
    pub verdict: Verdict,
    /// mmtests' test on the samples the rule read (the runs, or the
    /// files' medians; `None`: a side has too few).
    pub means: Option<MeanTest>,
    /// The least change the rule calls for this row, as a share of base.
    pub floor: f64,
    /// Files in base and in new.
    pub files: (usize, usize),
    /// Whether the rule read the files' medians (several a side) rather
    /// than the runs.
    pub by_files: bool,
    /// Whether base's runs spread too much to trust its median, as the
    /// measuring command marks a row noisy ([`Spread::noisy`]).
    pub base_noisy: bool,
    /// Whether new's runs do.
    pub new_noisy: bool,
}

impl Change {
    /// Whether the means differ by more than their two 95% half-widths
    /// (mmtests' rule alone, before the floor and the noise).
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
    /// Measured in different placements of its ends: not compared (the
    /// ratio would be the placement's).
    Placements {
        /// Where base's ends ran.
        base: String,
        /// Where new's ends ran.
        new: String,
    },
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
    /// Files pooled in base and in new.
    pub files: (usize, usize),
    /// The facts that say the two files come from different machines
    /// (`cpu_model`, `arch`, ...): no row gets a verdict.
    pub other_machine: Vec<Pair>,
}

impl Comparison {
    /// One line per difference between the machines or the settings, per
    /// placement that keeps rows apart, and per note, for stderr, in
    /// plain words.
    pub fn warnings(&self) -> Vec<String> {
        let differ = |p: &Pair, what: &str| {
            format!(
                "{what} {} differs: {} in {}, {} in {}",
                p.name, p.base, self.base, p.new, self.new
            )
        };
        let machine = (!self.other_machine.is_empty()).then(|| {
            let facts: Vec<String> = (self.other_machine.iter())
                .map(|p| format!("{} {} -> {}", p.name, p.base, p.new))
                .collect();
            format!(
                "{} and {} come from different machines ({}): no row gets a verdict; compare \
                 results of one machine",
                self.base,
                self.new,
                facts.join("; ")
            )
        });
        let facts = (self.facts.iter()).filter(|p| {
            p.base != p.new
                && !EXPECTED_TO_DIFFER.contains(&p.name.as_str())
                && p.name != "placement"
                && !self.other_machine.contains(p)
        });
        let settings = (self.settings.iter()).filter(|p| !p.name.starts_with("placement of "));
        machine
            .into_iter()
            .chain(facts.map(|p| differ(p, "system fact")))
            .chain(placement::warnings(self))
            .chain(self.conditions.warning(&self.base, &self.new))
            .chain(settings.map(|p| differ(p, "setting")))
            .chain(self.notes.iter().cloned())
            .collect()
    }
}

/// Reads and compares two results; `base.1` and `new.1` are how they
/// are named in messages and output. A directory stands for every
/// `.json` file in it, pooled as one side ([`compare_pooled`]): several
/// invocations, whose spread between them the rule then reads.
pub fn compare_files(
    base: (&Path, &str),
    new: (&Path, &str),
    how: &Bootstrap,
) -> Result<Comparison, CompareError> {
    if !base.0.is_dir() && !new.0.is_dir() {
        let (b, n) = load_pair(base, new)?;
        return compare(&b, base.1, &n, new.1, how);
    }
    let (b, n) = (load_side(base.0, base.1)?, load_side(new.0, new.1)?);
    compare_pooled(&b, base.1, &n, new.1, how)
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
    let facts: Vec<Pair> = pairs(&b.facts, &n.facts)
        .into_iter()
        .filter(|p| !(p.base == NOT_RECORDED && p.new == NOT_RECORDED))
        .collect();
    let other_machine: Vec<Pair> = (facts.iter())
        .filter(|p| p.base != p.new && placement::MACHINE.contains(&p.name.as_str()))
        .filter(|p| p.base != NOT_RECORDED && p.new != NOT_RECORDED)
        .cloned()
        .collect();
    let sides = Sides {
        base: &b,
        new: &n,
        base_files: base.iter().map(|d| d.extract()).collect(),
        new_files: new.iter().map(|d| d.extract()).collect(),
        other_machine: !other_machine.is_empty(),
    };
    let tables = kind
        .metrics()
        .iter()
        .enumerate()
        .map(|(i, &metric)| Table {
            metric,
            lines: lines(&sides, i, metric, how),
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
        facts,
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
        files: (base.len(), new.len()),
        other_machine,
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

/// Both sides of a comparison: pooled, and file by file.
struct Sides<'a> {
    base: &'a Extract,
    new: &'a Extract,
    base_files: Vec<Extract>,
    new_files: Vec<Extract>,
    other_machine: bool,
}

/// Metric `i`'s lines: base's rows, then the rows only in new.
fn lines(s: &Sides, i: usize, metric: Metric, how: &Bootstrap) -> Vec<Line> {
    let (b, n) = (s.base, s.new);
    let find = |rows: &[extract::Row], name: &str| rows.iter().position(|r| r.name == name);
    let mut out: Vec<Line> = b
        .rows
        .iter()
        .map(|row| Line {
            row: row.name.clone(),
            outcome: match find(&n.rows, &row.name) {
                Some(j) => match placement::of_row(b, n, &row.name) {
                    Some((base, new)) => Outcome::Placements { base, new },
                    None => outcome(s, &row.name, (&row.runs, &n.rows[j].runs), i, metric, how),
                },
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

/// Per file of a side, the median of row `name`'s metric `i`, and
/// whether any file's runs of it are noisy.
///
/// Where a row's metrics are read from the same runs (a latency's p50,
/// p99 and rate), the runs are noisy for all of them when they are for
/// one: two default latencies of one binary on a quiet machine read
/// `1B slower +35.7%` on the p50 (+-5.1% and +-9.1%) while both files'
/// rates from those runs were noisy (`peers/noise-pairs.sh`, pair 5 of
/// 10, issue 38).
fn per_file(files: &[Extract], name: &str, i: usize) -> (Vec<f64>, bool) {
    let rows = (files.iter()).filter_map(|f| f.rows.iter().find(|r| r.name == name));
    let (mut medians, mut any_noisy) = (Vec::new(), false);
    for row in rows {
        let Ok(v) = values(&row.runs, i) else {
            continue;
        };
        medians.extend(median(v));
        any_noisy |= match &row.runs {
            Runs::Measured(per_metric) => per_metric.iter().any(|v| noisy(v)),
            _ => noisy(v),
        };
    }
    (medians, any_noisy)
}

fn outcome(
    s: &Sides,
    name: &str,
    (base, new): (&Runs, &Runs),
    i: usize,
    metric: Metric,
    how: &Bootstrap,
) -> Outcome {
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
    let (base_files, base_file_noisy) = per_file(&s.base_files, name, i);
    let (new_files, new_file_noisy) = per_file(&s.new_files, name, i);
    fn side<'a>(runs: &'a [f64], files: &'a [f64], file_noisy: bool) -> judge::Side<'a> {
        judge::Side {
            runs,
            // One file: its runs are the samples.
            files: if files.len() >= 2 { files } else { &[] },
            file_noisy,
        }
    }
    let judged = judge::judge(
        side(b, &base_files, base_file_noisy),
        side(n, &new_files, new_file_noisy),
        metric.better,
    );
    let verdict = match judged.verdict {
        // Another machine: no verdict, whatever the runs say.
        v if s.other_machine && v != Verdict::TooFewRuns => Verdict::OtherMachine,
        v => v,
    };
    Outcome::Compared(Change {
        base_median,
        new_median,
        base_runs: b.len(),
        new_runs: n.len(),
        ratio: new_median / base_median,
        interval: ratio_interval(b, n, how),
        verdict,
        means: judged.means,
        floor: judged.floor,
        files: (base_files.len(), new_files.len()),
        by_files: judged.by_files,
        base_noisy: judged.noisy.0,
        new_noisy: judged.noisy.1,
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
