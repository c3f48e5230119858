//! Pooling results of one command into one: a row's runs are that row's
//! runs in every result, in order. `pipespeed kernels` pools each
//! kernel's boots so that the runs of every boot count, and the spread
//! between boots is in the figures a verdict is drawn from.

use super::load::Document;
use crate::bench::core::compared::{Extract, Row, Runs};

/// `docs` as one result: rows matched by name, in the order they first
/// appear; per metric, the runs of every document in order. The facts and
/// settings are the first document's; a setting that differs in a later
/// one, and a row missing from some documents or without runs in them,
/// get a note each.
pub(crate) fn pool(docs: &[Document]) -> Extract {
    let mut extracts = docs.iter().map(Document::extract);
    let Some(mut out) = extracts.next() else {
        return Extract::default();
    };
    // Per row of `out`, the results (numbered from 1) without its runs,
    // and why where it was there without them.
    let mut gaps: Vec<Vec<(usize, Option<String>)>> = out
        .rows
        .iter()
        .map(|row| match &row.runs {
            Runs::None(why) => vec![(1, Some(why.clone()))],
            _ => Vec::new(),
        })
        .collect();
    for (i, next) in extracts.enumerate() {
        let number = i + 2;
        for (name, value) in &next.settings {
            let first = out.settings.iter().find(|(n, _)| n == name);
            if first.is_some_and(|(_, v)| v != value) {
                out.notes.push(format!(
                    "setting {name} is {value} in result {number} of the pool, {} in the first",
                    first.map_or("", |(_, v)| v.as_str())
                ));
            }
        }
        out.notes.extend(next.notes);
        let mut seen = vec![false; out.rows.len()];
        for row in next.rows {
            let gap = match &row.runs {
                Runs::None(why) => Some((number, Some(why.clone()))),
                _ => None,
            };
            match out.rows.iter().position(|r| r.name == row.name) {
                Some(j) => {
                    seen[j] = true;
                    out.rows[j].runs = join(&out.rows[j].runs, &row.runs);
                    gaps[j].extend(gap);
                }
                None => {
                    gaps.push((1..number).map(|n| (n, None)).chain(gap).collect());
                    out.rows.push(row);
                }
            }
        }
        for (j, seen) in seen.into_iter().enumerate() {
            if !seen {
                gaps[j].push((number, None));
            }
        }
    }
    let total = docs.len();
    for (row, gaps) in out.rows.iter().zip(gaps) {
        for (number, why) in gaps {
            // One result alone needs no note: the row says why it has none.
            if total > 1 {
                out.notes.push(match why {
                    None => format!(
                        "row {} is missing from result {number} of {total}; the others' runs are compared",
                        row.name
                    ),
                    Some(why) => format!(
                        "row {} has no runs in result {number} of {total} ({why}); the others' runs are compared",
                        row.name
                    ),
                });
            }
        }
    }
    out
}

/// Metric by metric, `a`'s runs then `b`'s; a metric without runs on one
/// side keeps the other's.
fn join(a: &Runs, b: &Runs) -> Runs {
    let metrics = per_metric(a).len().max(per_metric(b).len());
    let (a, b) = (per_metric(a), per_metric(b));
    let each: Vec<Result<Vec<f64>, String>> = (0..metrics)
        .map(|i| match (a.get(i), b.get(i)) {
            (Some(Ok(x)), Some(Ok(y))) => Ok(x.iter().chain(y).copied().collect()),
            (Some(Ok(x)), _) | (_, Some(Ok(x))) => Ok(x.clone()),
            (Some(Err(why)), _) | (_, Some(Err(why))) => Err(why.clone()),
            (None, None) => Err("no runs".into()),
        })
        .collect();
    if each.iter().all(Result::is_ok) {
        Runs::Measured(each.into_iter().flatten().collect())
    } else if each.iter().all(Result::is_err) {
        match each.into_iter().next() {
            Some(Err(why)) => Runs::None(why),
            _ => Runs::None("no runs".into()),
        }
    } else {
        Runs::Each(each)
    }
}

/// A row's runs as one entry per metric; a row measured nowhere is one
/// entry saying why.
fn per_metric(runs: &Runs) -> Vec<Result<Vec<f64>, String>> {
    match runs {
        Runs::Measured(m) => m.iter().cloned().map(Ok).collect(),
        Runs::Each(m) => m.clone(),
        Runs::None(why) => vec![Err(why.clone())],
    }
}

/// One row of a pooled result, as a result file holds it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PooledRow {
    /// The rung, the message size, the cell (`5x5`), the mechanism.
    pub name: String,
    /// Each metric of the kind, in its order.
    pub metrics: Vec<PooledMetric>,
}

/// One metric of a pooled row.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PooledMetric {
    /// Its name, as `compare` prints it (`writes/s`).
    pub metric: &'static str,
    /// Every run's value, result after result.
    pub runs: Vec<f64>,
    /// Why it has no runs, where it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// The rows of `docs` pooled as [`compare_pooled`](super::compare_pooled)
/// pools them (all of one kind).
pub fn pooled_rows(docs: &[Document]) -> Vec<PooledRow> {
    let Some(kind) = docs.first().map(Document::kind) else {
        return Vec::new();
    };
    let metrics = kind.metrics();
    pool(docs)
        .rows
        .iter()
        .map(|row: &Row| {
            let each = per_metric(&row.runs);
            PooledRow {
                name: row.name.clone(),
                metrics: (metrics.iter().enumerate())
                    .map(|(i, m)| {
                        // A row measured nowhere says why once, for
                        // every metric.
                        let entry = (each.get(i)).or_else(|| each.first().filter(|e| e.is_err()));
                        let (runs, missing) = match entry {
                            Some(Ok(runs)) => (runs.clone(), None),
                            Some(Err(why)) => (Vec::new(), Some(why.clone())),
                            None => (Vec::new(), Some("no runs".to_string())),
                        };
                        PooledMetric {
                            metric: m.name,
                            runs,
                            missing,
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_joined_metric_by_metric_and_a_missing_side_keeps_the_other() {
        let a = Runs::Measured(vec![vec![1.0, 2.0], vec![10.0, 20.0]]);
        let b = Runs::Measured(vec![vec![3.0], vec![30.0]]);
        assert_eq!(
            join(&a, &b),
            Runs::Measured(vec![vec![1.0, 2.0, 3.0], vec![10.0, 20.0, 30.0]])
        );
        let none = Runs::None("failed: stalled".into());
        assert_eq!(join(&a, &none), a);
        assert_eq!(join(&none, &b), b);
        assert_eq!(join(&none, &none), none);
        let each = Runs::Each(vec![Ok(vec![4.0]), Err("no round trip".into())]);
        // A metric measured in one result only keeps its runs; one
        // measured in both is joined.
        assert_eq!(
            join(&each, &Runs::Each(vec![Ok(vec![5.0]), Ok(vec![6.0])])),
            Runs::Measured(vec![vec![4.0, 5.0], vec![6.0]])
        );
    }
}
