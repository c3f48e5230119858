//! The ladder as the table printed on stdout, and as CSV: one row per
//! measured run, for spreadsheets and plotting scripts.
use crate::bench::core::Status;

use std::fmt::Write;
use std::io;

mod csv;
mod markdown;

pub(super) use csv::{csv_header, csv_rows};
pub(super) use markdown::md_cell;

pub(super) use super::series::{noise_sentence, noisy_series, spread_cell, status_word};
use super::{Exporter, Text};
use crate::bench::ladder::placement::PlacementCheck;
use crate::bench::ladder::{CopyCheck, LadderResult, Rung, RungResult};
use crate::bench::profile::{Profile, ProfileStatus};
use crate::units::Size;

fn rate(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.2}"))
        .unwrap_or_else(|| "-".to_string())
}

/// What the `copies` column means, under the table.
pub(super) const COPIES_NOTE: &str = "copies: bytes the CPU copies per byte piped; (checked): vmsplice was seen to hand over page\n\
     references on this kernel at start-up. Rungs with 0 move page references, not bytes: their GiB/s\n\
     is not memory bandwidth and may exceed memcpy. of limit: the median's share of memcpy's (rungs\n\
     that copy) or of splice-limit's (rungs that do not). spread: the 95% interval of the mean.";

/// The `copies` cell: the count, and what the start-up check found.
pub(super) fn copies_cell(r: &RungResult) -> String {
    match &r.copy_check {
        None => r.copies.to_string(),
        Some(CopyCheck::References) => format!("{} (checked)", r.copies),
        Some(CopyCheck::Copies) => format!("{} (this kernel copies)", r.copies),
        Some(CopyCheck::Unknown { .. }) => format!("{} (unchecked)", r.copies),
    }
}

/// Why the rung is faster, and what the copy check found when it found
/// that this kernel's vmsplice copies.
pub(super) fn explanation(r: &RungResult) -> String {
    match (&r.copy_check, r.name.explanation_when_vmsplice_copies()) {
        (Some(CopyCheck::Copies), Some(found)) => format!("{} {found}", r.name.explanation()),
        _ => r.name.explanation().to_string(),
    }
}

/// A rung's five descriptive cells: rung, what it changes, copies, buffer
/// and pipe.
pub(super) fn cells(r: &RungResult) -> [String; 5] {
    [
        r.name.to_string(),
        r.changes.clone(),
        copies_cell(r),
        Size(r.buf_size as u64).to_string(),
        r.pipe_size
            .map_or_else(|| "default".into(), |p| Size(p as u64).to_string()),
    ]
}

/// A rung's figures as the table prints them (median, min, max GiB/s,
/// the spread, the speed-up over `write-read` and the share of the
/// rung's limit), or the note saying why there are none.
pub(super) fn figures(r: &RungResult) -> Result<[String; FIGURES], String> {
    match (r.status, &r.reason) {
        (Status::Unavailable, Some(reason)) => Err(format!("unavailable: {reason}")),
        (Status::Failed, Some(reason)) => Err(format!("failed: {reason}")),
        _ => Ok([
            rate(r.gib_s.median),
            rate(r.gib_s.min),
            rate(r.gib_s.max),
            spread_cell(&r.gib_s),
            r.speedup_vs_write_read
                .map_or_else(|| "-".into(), |x| format!("{x:.1}x")),
            r.share_of_ceiling
                .map_or_else(|| "-".into(), |x| format!("{:.0}%", x * 100.0)),
        ]),
    }
}

/// The figures of a row of the table.
pub(super) const FIGURES: usize = 6;

/// The headings of [`figures`].
pub(super) const FIGURE_HEADINGS: [&str; FIGURES] = [
    "median GiB/s",
    "min",
    "max",
    "spread",
    "vs write-read",
    "of limit",
];

/// Five left-aligned cells, then the right-aligned numbers or a note
/// saying why there are none.
type Row = ([String; 5], Result<[String; FIGURES], String>);

/// An aligned table: rung, what it changes, copies, median, min, max and
/// speed-up over `write-read`, then notes; with [`Text::explain`], a
/// paragraph per rung.
impl Exporter<LadderResult> for Text {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let s = &result.header.system;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "pipespeed {}: Linux {} on {} ({} CPUs online), THP {}, pipe-max-size {}",
            result.header.pipespeed_version,
            s.kernel,
            s.cpu_model,
            s.cpus_online,
            s.thp,
            Size(s.pipe_max_size_bytes as u64)
        );
        let _ = writeln!(
            out,
            "{}; {} after a warm-up, in shuffled order (seed {}){}",
            result.placement,
            runs_words(result),
            result.seed,
            if result.verify {
                "; every byte verified"
            } else {
                ""
            }
        );
        if let Some(line) = noise_line(result) {
            let _ = writeln!(out, "{line}");
        }
        if result.header.interrupted {
            let _ = writeln!(out, "{}", super::INTERRUPTED);
        }
        let _ = writeln!(out);
        let header = ["rung", "what it changes", "copies", "buffer", "pipe"];
        let number_header = FIGURE_HEADINGS;
        let rows: Vec<Row> = result
            .rungs
            .iter()
            .map(|r| (cells(r), figures(r)))
            .collect();
        let mut widths: Vec<usize> = header
            .iter()
            .chain(&number_header)
            .map(|h| h.len())
            .collect();
        for (cells, tail) in &rows {
            let numbers = tail.as_ref().map(|n| &n[..]).unwrap_or(&[]);
            for (i, cell) in cells.iter().chain(numbers).enumerate() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut line = |cells: &[String], tail: Result<&[String], &str>| {
            let mut text = String::new();
            for (cell, w) in cells.iter().zip(&widths) {
                let _ = write!(text, "{cell:<w$}  ");
            }
            match tail {
                Ok(numbers) => {
                    for (cell, w) in numbers.iter().zip(&widths[5..]) {
                        let _ = write!(text, "{cell:>w$}  ");
                    }
                }
                Err(note) => text.push_str(note),
            }
            let _ = writeln!(out, "{}", text.trim_end());
        };
        line(
            &header.map(String::from),
            Ok(&number_header.map(String::from)),
        );
        for (cells, tail) in &rows {
            line(cells, tail.as_ref().map(|n| &n[..]).map_err(|s| s.as_str()));
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "{COPIES_NOTE}");
        for line in noisy_lines(result) {
            let _ = writeln!(out, "\n{line}");
        }
        if let Some(check) = &result.placement_check {
            let _ = writeln!(out, "\n{}", placement_paragraph(result, check));
        }
        cost_table(result, &mut out);
        profiles(result, &mut out);
        if self.explain {
            for r in &result.rungs {
                let _ = writeln!(out, "\n{}: {}", r.name, explanation(r));
            }
        }
        Ok(out.into_bytes())
    }
}

/// `5 runs per rung`, or `5 to 10 runs per rung (more while noisy)`.
pub(super) fn runs_words(result: &LadderResult) -> String {
    if result.max_runs > result.runs {
        format!(
            "{} to {} runs per rung (runs added while a rung is noisy)",
            result.runs, result.max_runs
        )
    } else {
        format!(
            "{} run{} per rung",
            result.runs,
            if result.runs == 1 { "" } else { "s" }
        )
    }
}

/// The machine's noise over the measured runs, in one line.
pub(super) fn noise_line(result: &LadderResult) -> Option<String> {
    result.noise.map(noise_sentence)
}

/// A paragraph per noisy rung, and per noisy placement of the placement
/// check: how much it spread, the likely causes and what to do.
pub(super) fn noisy_lines(result: &LadderResult) -> Vec<String> {
    let gib_s = |v: f64| format!("{v:.2} GiB/s");
    let rungs = result
        .rungs
        .iter()
        .filter_map(|r| noisy_series(r.name.name(), &r.gib_s, gib_s));
    let check = result.placement_check.iter().flat_map(|c| {
        c.rows.iter().filter_map(move |row| {
            noisy_series(&format!("{} {}", c.rung, row.kind), &row.gib_s, gib_s)
        })
    });
    rungs.chain(check).collect()
}

/// How much placement alone changes the baseline, the wake-up cost, and
/// the ladder's speed-ups against the baseline's best placement.
pub(super) fn placement_paragraph(result: &LadderResult, check: &PlacementCheck) -> String {
    let mut text = format!(
        "placement: {} alone ({} run{} each, after a warm-up):",
        check.rung,
        check.runs,
        if check.runs == 1 { "" } else { "s" }
    );
    for row in &check.rows {
        let runs = row.gib_s.runs.len();
        let spread = match row.gib_s.spread {
            Some(s) => format!(" {}", s.cell()),
            None => String::new(),
        };
        text += &match (row.median(), &row.reason) {
            (Some(m), _) if runs != check.runs => format!(
                " {} {m:.2} GiB/s{spread} (from {runs} run{});",
                row.kind,
                if runs == 1 { "" } else { "s" }
            ),
            (Some(m), _) => format!(" {} {m:.2} GiB/s{spread};", row.kind),
            (None, Some(why)) => format!(" {} {}: {why};", row.kind, status_word(row.status)),
            (None, None) => format!(" {} no runs;", row.kind),
        };
    }
    text.pop();
    text.push('.');
    if let (Some(factor), Some(best), Some(worst)) = (check.factor(), check.best(), check.worst()) {
        text += &format!(
            " Placement alone changes it {factor:.1}x ({} is best, {} worst).",
            best.kind, worst.kind
        );
    }
    match (&check.wakeup, &check.wakeup_reason) {
        (Some(w), _) => {
            text += &format!(
                " A 1-byte round trip (latency's ping-pong) takes {} on one CPU and {} across two: \
                 a cross-CPU wake-up costs {} more here.",
                crate::units::readable_ns(w.same_cpu_rtt_ns as f64),
                crate::units::readable_ns(w.different_cpu_rtt_ns as f64),
                crate::units::readable_ns(w.cross_cpu_wakeup_ns.max(0.0)),
            );
        }
        (None, Some(why)) => text += &format!(" No wake-up cost: {why}."),
        (None, None) => {}
    }
    let main = check.row(result.placement.kind()).and_then(|r| r.median());
    let has_steps = result
        .rungs
        .iter()
        .any(|r| r.speedup_vs_write_read.is_some() && r.name != Rung::WriteRead);
    if let (Some(best), Some(main)) = (check.best(), main)
        && has_steps
        && best.kind != result.placement.kind()
        && let Some(best_median) = best.median()
        && best_median > 0.0
    {
        let tops: Vec<String> = result
            .rungs
            .iter()
            .filter(|r| r.speedup_vs_write_read.is_some() && r.name != Rung::WriteRead)
            .filter_map(|r| {
                let m = r.median()?;
                Some(format!(
                    "{} {:.1}x (not {:.1}x)",
                    r.name,
                    m / best_median,
                    r.speedup_vs_write_read?
                ))
            })
            .collect();
        text += &format!(
            " The ladder ran {}, where write-read made {main:.2} GiB/s in this check; against \
             write-read {} ({best_median:.2} GiB/s), the steps are: {}.",
            result.placement.kind(),
            best.kind,
            tops.join(", ")
        );
    }
    wrap(&text, 100)
}

/// `text` broken into lines of at most `width` characters, at spaces.
pub(super) fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split(' ') {
        if line > 0 && line + 1 + word.chars().count() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out += word;
        line += word.chars().count();
    }
    out
}

/// A count per GiB: whole numbers, or one decimal below 10.
fn count(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// CPU seconds, context switches and page faults per GiB, one row per
/// rung with a cost (every measured rung), under the main table.
fn cost_table(result: &LadderResult, out: &mut String) {
    let rows: Vec<_> = result
        .rungs
        .iter()
        .filter_map(|r| r.cost.map(|c| (r.name, c)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let width = rows
        .iter()
        .map(|(name, _)| name.name().len())
        .max()
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "\ncost per GiB piped (getrusage of the writer and reader processes, start-up included,\n\
         over the measured runs; memcpy: its one thread):"
    );
    let _ = writeln!(
        out,
        "{:<width$}  {:>10}  {:>10}  {:>12}  {:>11}",
        "rung", "user CPU s", "sys CPU s", "ctx switches", "page faults"
    );
    for (name, c) in rows {
        let _ = writeln!(
            out,
            "{:<width$}  {:>10.3}  {:>10.3}  {:>12}  {:>11}",
            name.name(),
            c.user_s_per_gib,
            c.system_s_per_gib,
            count(c.context_switches_per_gib),
            count(c.page_faults_per_gib)
        );
    }
}

/// Each profiled rung's top symbols, as `perf report` prints them; one
/// line when no rung could be profiled, for the same reason.
fn profiles(result: &LadderResult, out: &mut String) {
    let profiled: Vec<(Rung, &Profile)> = result
        .rungs
        .iter()
        .filter_map(|r| r.profile.as_ref().map(|p| (r.name, p)))
        .collect();
    let Some((_, first)) = profiled.first() else {
        return;
    };
    if profiled
        .iter()
        .all(|(_, p)| p.status == ProfileStatus::Unavailable && p.reason == first.reason)
    {
        let why = first.reason.as_deref().unwrap_or("no reason given");
        let _ = writeln!(out, "\nno profiles: {why}");
        return;
    }
    let _ = writeln!(
        out,
        "\nwhere the time goes: perf record -e cpu-clock -g of each end, self time per symbol\n\
         as a share of both ends' samples ([k] kernel, [.] user space):"
    );
    for (name, p) in profiled {
        let why = p.reason.as_deref().unwrap_or("no reason given");
        match p.status {
            ProfileStatus::Recorded => {
                let _ = writeln!(out, "\n{name} ({} samples):", p.samples);
                let width = p.symbols.iter().map(|s| s.comm.len()).max().unwrap_or(0);
                for s in &p.symbols {
                    let _ = writeln!(
                        out,
                        "  {:>6.2}%  {:<width$}  [{}] {}",
                        s.percent,
                        s.comm,
                        if s.kernel { 'k' } else { '.' },
                        s.symbol
                    );
                }
            }
            ProfileStatus::Unavailable => {
                let _ = writeln!(out, "\n{name}: no profile: {why}");
            }
            ProfileStatus::Failed => {
                let _ = writeln!(out, "\n{name}: profile failed: {why}");
            }
        }
    }
}
