//! Working out what a ladder's figures say.

use super::copies::CopyCheck;
use super::result::{LadderResult, RungResult};
use super::rung::Rung;
use super::verdict::{Baseline, Step, Verdict};
use crate::bench::core::{Series, Status, Trust};

impl LadderResult {
    /// Works out the baseline (`write-read` in the fastest placement
    /// measured, by the ladder or its placement check), each rung's
    /// speed-up over it and share of its limit, and the [`Verdict`]; again
    /// by whoever adds a placement check.
    pub fn conclude(&mut self) {
        self.baseline = baseline(self);
        let median_of = |rungs: &[RungResult], rung: Rung| {
            rungs
                .iter()
                .find(|r| r.name == rung)
                .and_then(RungResult::median)
        };
        let base = self.baseline.as_ref().map(|b| b.gib_s);
        let ceilings = [Rung::Memcpy, Rung::SpliceLimit].map(|r| (r, median_of(&self.rungs, r)));
        for r in &mut self.rungs {
            // memcpy and splice-limit are limits, not ways of piping.
            if matches!(r.name, Rung::Memcpy | Rung::SpliceLimit) {
                (r.speedup_vs_write_read, r.share_of_ceiling) = (None, None);
                continue;
            }
            r.speedup_vs_write_read = match (r.median(), base) {
                (Some(m), Some(b)) if b > 0.0 => Some(m / b),
                _ => None,
            };
            let ceiling = r.name.ceiling(r.copies);
            r.share_of_ceiling = match (r.median(), ceilings.iter().find(|(c, _)| *c == ceiling)) {
                (Some(m), Some((_, Some(c)))) if *c > 0.0 => Some(m / c),
                _ => None,
            };
        }
        self.verdict = Some(verdict(self));
    }

    /// Every series of the ladder, named: each rung's, and each rung's in
    /// its other placement (not the placement check's: they are context).
    pub fn series(&self) -> Vec<(String, &Series)> {
        let mut rows = Vec::new();
        for r in &self.rungs {
            rows.push((r.name.to_string(), &r.gib_s));
            if let Some(o) = &r.other_placement {
                rows.push((format!("{} {}", r.name, o.kind), &o.gib_s));
            }
        }
        rows
    }
}

/// `write-read`'s fastest placement among those measured.
fn baseline(result: &LadderResult) -> Option<Baseline> {
    placements_of_baseline(result)
        .into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(placement, gib_s)| Baseline {
            rung: Rung::WriteRead,
            placement,
            gib_s,
        })
}

/// Every placement `write-read` was measured in, with its median: the
/// ladder's own rows first, then the placement check's others.
fn placements_of_baseline(result: &LadderResult) -> Vec<(String, f64)> {
    let mut found: Vec<(String, f64)> = Vec::new();
    let mut add = |kind: &str, median: Option<f64>| {
        if let Some(m) = median
            && !found.iter().any(|(k, _)| k == kind)
        {
            found.push((kind.to_string(), m));
        }
    };
    if let Some(r) = result.rungs.iter().find(|r| r.name == Rung::WriteRead) {
        add(r.placement.unwrap_or(result.placement).kind(), r.median());
        if let Some(o) = &r.other_placement {
            add(&o.kind, o.median());
        }
    }
    for row in result.placement_check.iter().flat_map(|c| &c.rows) {
        add(&row.kind, row.median());
    }
    found
}

/// `on one CPU`, as the verdict says where the baseline's ends ran;
/// unpinned with one CPU allowed is on that CPU too.
fn where_words(kind: &str, cpus_allowed: usize) -> &'static str {
    match kind {
        "same-cpu" => "on one CPU",
        "different-cpu" => "on two CPUs",
        _ if cpus_allowed == 1 => "unpinned, on the one CPU allowed",
        _ => "unpinned",
    }
}

fn verdict(result: &LadderResult) -> Verdict {
    let pipes = || {
        result
            .rungs
            .iter()
            .filter(|r| !matches!(r.name, Rung::Memcpy | Rung::SpliceLimit))
    };
    let step = |r: &RungResult| {
        r.median().map(|gib_s| Step {
            rung: r.name,
            gib_s,
            speedup: r.speedup_vs_write_read,
            share_of_limit: r.share_of_ceiling,
        })
    };
    let steps: Vec<Step> = pipes().filter_map(step).collect();
    let fastest = steps
        .iter()
        .max_by(|a, b| a.gib_s.total_cmp(&b.gib_s))
        .cloned();
    // Only the rows the table shows: a rung's other placement is context
    // (`--explain`), and counting it said "3 of 4 rows noisy" beside two.
    let shown = (result.rungs.iter()).map(|r| (r.name.to_string(), &r.gib_s));
    let trust = Trust::of(shown, result.noise);
    let mut lines = Vec::new();
    match &result.baseline {
        Some(b) => {
            let others: Vec<String> = placements_of_baseline(result)
                .into_iter()
                .filter(|(kind, _)| *kind != b.placement)
                .map(|(kind, m)| format!("{m:.2} {}", kind_short(&kind)))
                .collect();
            let others = match others.is_empty() {
                true => String::new(),
                false => format!(" ({})", others.join(", ")),
            };
            lines.push(format!(
                "baseline: write-read {:.2} GiB/s {}{others}",
                b.gib_s,
                where_words(&b.placement, result.header.system.cpus_allowed.len())
            ));
        }
        None => lines.push("baseline: write-read was not measured".to_string()),
    }
    if let Some(f) = &fastest {
        let mut line = format!("fastest:  {} {:.2} GiB/s", f.rung, f.gib_s);
        if let Some(x) = f.speedup {
            line += &format!(", {x:.1}x the baseline");
        }
        let limit = result
            .rungs
            .iter()
            .find(|r| r.name == f.rung)
            .map(|r| r.name.ceiling(r.copies));
        if let (Some(share), Some(limit)) = (f.share_of_limit, limit) {
            line += &format!(", {:.0}% of {limit}", share * 100.0);
        }
        lines.push(line);
    }
    // Each step over the one before it (the first over the baseline), so
    // that a step that loses says so: over the baseline, "huge 4.7x,
    // huge-busy 1.6x" read as a gain and was a 3x loss. Named by what it
    // changes, as the table's column, so that the line fits two lines of
    // an 80-column terminal (the rungs' names took three).
    let mut before = result.baseline.as_ref().map(|b| b.gib_s);
    let mut gains: Vec<String> = Vec::new();
    for s in steps.iter().filter(|s| s.rung != Rung::WriteRead) {
        if let Some(b) = before.filter(|b| *b > 0.0) {
            let change = s.rung.changes_short();
            gains.push(format!("{change} {}", gain_words(s.gib_s / b)));
        }
        before = Some(s.gib_s);
    }
    if !gains.is_empty() {
        lines.push(format!(
            "steps:    {}, each over the rung before",
            gains.join(", ")
        ));
    }
    if pipes().any(|r| r.copy_check == Some(CopyCheck::Copies)) {
        lines.push(
            "kernel:   vmsplice copies here (seen at start-up): its rungs copy once, and memcpy \
             bounds them"
                .to_string(),
        );
    }
    let missing: Vec<String> = result
        .rungs
        .iter()
        .filter(|r| r.status != Status::Ok && r.median().is_none())
        .map(|r| r.name.to_string())
        .collect();
    if !missing.is_empty() {
        lines.push(format!(
            "missing:  {} (the table says why)",
            missing.join(", ")
        ));
    }
    lines.push(format!("trust:    {}", trust.line));
    Verdict {
        fastest,
        steps,
        trust,
        lines,
    }
}

/// `on one CPU`, as the baseline's other placements are listed.
fn kind_short(kind: &str) -> &'static str {
    match kind {
        "same-cpu" => "on one CPU",
        "different-cpu" => "on two",
        _ => "unpinned",
    }
}

/// A step's gain in words: `3.2x`, or `2.9x slower` for a loss, so that
/// no loss reads as a gain.
fn gain_words(ratio: f64) -> String {
    if ratio < 1.0 && 1.0 / ratio >= 1.05 {
        format!("{:.1}x slower", 1.0 / ratio)
    } else {
        format!("{ratio:.1}x")
    }
}
