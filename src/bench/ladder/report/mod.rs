//! How the ladder reads: the table printed on stdout here, the other
//! formats beside it.
use crate::bench::core::harness::Header;
use crate::bench::core::{Placement, Status};

use std::fmt::Write;
use std::io;

mod csv;
#[cfg(feature = "cli")]
mod html;
mod markdown;
#[cfg(feature = "cli")]
mod svg;

pub(crate) use self::csv::{csv_header, csv_rows};
use crate::report::text::{wrap, wrap_hanging, wrap_paragraph};
#[cfg(feature = "cli")]
pub use html::html_report;
#[cfg(feature = "cli")]
pub(crate) use html::ladder_table;
#[cfg(feature = "cli")]
pub use svg::ladder_svg;

use crate::bench::core::shown::{
    noise_paragraph, noise_sentence, noisy_series, spread_cell, status_word,
};
use crate::bench::ladder::placement::PlacementCheck;
use crate::bench::ladder::{CopyCheck, LadderResult, Rung, RungResult};
use crate::bench::profile::{Profile, ProfileStatus};
use crate::report::table::{self, Align, Row};
use crate::report::{Exporter, Text};
use crate::units::Size;

fn rate(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.2}"))
        .unwrap_or_else(|| "-".to_string())
}

/// What the `copies` column means, under the table.
pub(crate) const COPIES_NOTE: &str = "copies: bytes the CPU copies per byte piped; (checked): vmsplice \
     was seen moving page references at start-up, and a rung with 0 moves references, so its GiB/s \
     is not memory bandwidth. of limit: the share of memcpy's median (rungs that copy) or of \
     splice-limit's. spread: the 95% interval of the mean.";

/// The `copies` cell: the count, and what the start-up check found.
pub(crate) fn copies_cell(r: &RungResult) -> String {
    match &r.copy_check {
        None => r.copies.to_string(),
        Some(CopyCheck::References) => format!("{} (checked)", r.copies),
        Some(CopyCheck::Copies) => format!("{} (this kernel copies)", r.copies),
        Some(CopyCheck::Unknown { .. }) => format!("{} (unchecked)", r.copies),
    }
}

/// Why the rung is faster, and what the copy check found when it found
/// that this kernel's vmsplice copies.
pub(crate) fn explanation(r: &RungResult) -> String {
    match (&r.copy_check, r.name.explanation_when_vmsplice_copies()) {
        (Some(CopyCheck::Copies), Some(found)) => format!("{} {found}", r.name.explanation()),
        _ => r.name.explanation().to_string(),
    }
}

/// A rung's figures as the table prints them, or the note saying why
/// there are none.
pub(crate) fn figures(r: &RungResult) -> Result<[String; FIGURES], String> {
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
pub(crate) const FIGURES: usize = 6;

/// The headings of [`figures`].
pub(crate) const FIGURE_HEADINGS: [&str; FIGURES] = [
    "median GiB/s",
    "min",
    "max",
    "spread",
    "vs write-read",
    "of limit",
];

/// The verdict, the table, the notes, the noise and the placement; with
/// [`Text::explain`], the noisy rows, the cost and a paragraph per rung.
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
        let _ = writeln!(out, "{}", wrap(&placement_words(result), 100));
        let how = format!(
            "{} after a warm-up, shuffled (seed {}){}",
            runs_words(result),
            result.seed,
            verified(result)
        );
        let _ = writeln!(out, "{}", wrap(&how, 100));
        if let Some(line) = noise_line(result) {
            let _ = writeln!(out, "{line}");
        }
        if result.header.interrupted {
            let _ = writeln!(out, "{}", crate::report::INTERRUPTED);
        }
        if let Some(verdict) = &result.verdict {
            let _ = writeln!(out);
            for line in &verdict.lines {
                let _ = writeln!(out, "{}", wrap_hanging(line, 100, 10));
            }
        }
        let _ = writeln!(out);
        out += &table(result);
        let _ = writeln!(out);
        let _ = writeln!(out, "{}", wrap(&notes(result), 100));
        if let Some(paragraph) = noise_paragraph(&result.series()) {
            let _ = writeln!(out, "\n{}", wrap_paragraph(&paragraph, 100));
        }
        if let Some(check) = &result.placement_check {
            let _ = writeln!(out, "\n{}", placement_paragraph(result, check));
        }
        if self.explain {
            for line in noisy_lines(result) {
                let _ = writeln!(out, "\n{line}");
            }
            cost_table(result, &mut out);
        }
        profiles(result, &mut out);
        if self.explain {
            for r in &result.rungs {
                let _ = writeln!(out, "\n{}: {}", r.name, explanation(r));
            }
        }
        Ok(out.into_bytes())
    }
}

/// The ladder's table alone: a header and a row per rung.
pub(crate) fn table(result: &LadderResult) -> String {
    let header = TEXT_HEADINGS.iter().chain(&FIGURE_HEADINGS);
    let mut rows = vec![Row::Cells(header.map(|h| h.to_string()).collect())];
    rows.extend(result.rungs.iter().map(|r| match figures(r) {
        Ok(numbers) => Row::Cells(text_cells(r).into_iter().chain(numbers).collect()),
        Err(note) => Row::Span(text_cells(r).to_vec(), note),
    }));
    let right = |i| match i < TEXT_CELLS {
        true => Align::Left,
        false => Align::Right,
    };
    let mut out = String::new();
    for line in table::aligned(&rows, right) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The headings of [`text_cells`].
pub(crate) const TEXT_HEADINGS: [&str; TEXT_CELLS] = [
    "rung",
    "what it changes",
    "copies",
    "buffer",
    "pipe",
    "ends",
];

/// The table's descriptive cells.
const TEXT_CELLS: usize = 6;

/// A rung's descriptive cells, under [`TEXT_HEADINGS`].
pub(crate) fn text_cells(r: &RungResult) -> [String; TEXT_CELLS] {
    [
        r.name.to_string(),
        r.changes.clone(),
        copies_cell(r),
        Size(r.buf_size as u64).to_string(),
        r.pipe_size
            .map_or_else(|| "default".into(), |p| Size(p as u64).to_string()),
        ends_cell(r),
    ]
}

/// Where a rung's figures were measured, as `--placement` names it;
/// `1 thread` for memcpy and splice-limit.
pub(crate) fn ends_cell(r: &RungResult) -> String {
    match (r.placement, r.name) {
        (_, Rung::Memcpy | Rung::SpliceLimit) => "1 thread".into(),
        (Some(p), _) => p.kind().into(),
        (None, _) => "-".into(),
    }
}

/// Where the ends ran: the ladder's placement, and the one the rungs that
/// block ran in too.
pub(crate) fn placement_words(result: &LadderResult) -> String {
    let other = result
        .rungs
        .iter()
        .find_map(|r| r.other_placement.as_ref())
        .and_then(|o| o.placement);
    let alternative = result
        .rungs
        .iter()
        .filter(|r| r.other_placement.is_some())
        .find_map(|r| r.placement.filter(|p| *p != result.placement))
        .or(other);
    match alternative {
        Some(alternative) => format!(
            "{}; the rungs that block also {} (the faster shown)",
            result.placement,
            match alternative {
                Placement::Pinned {
                    writer_cpu,
                    reader_cpu,
                } if writer_cpu == reader_cpu => format!("both on CPU {writer_cpu}"),
                other => other.to_string(),
            }
        ),
        None => result.placement.to_string(),
    }
}

/// The machine in words, as the Markdown and the scan begin.
pub(crate) fn machine_words(header: &Header) -> String {
    let s = &header.system;
    format!(
        "pipespeed {} on Linux {}, {} ({} CPUs), THP {}, pipe-max-size {}",
        header.pipespeed_version,
        s.kernel,
        s.cpu_model,
        s.cpus_online,
        s.thp,
        Size(s.pipe_max_size_bytes as u64)
    )
}

/// The notes under the table: what the columns mean.
pub(crate) fn notes(result: &LadderResult) -> String {
    let base = match &result.baseline {
        Some(b) => format!("write-read {} ({:.2} GiB/s)", b.placement, b.gib_s),
        None => "write-read".into(),
    };
    format!("{COPIES_NOTE} vs write-read: over {base}, its fastest placement.")
}

/// `; every byte verified`, when it was.
pub(crate) fn verified(result: &LadderResult) -> &'static str {
    if result.verify {
        "; every byte verified"
    } else {
        ""
    }
}

/// `5 runs per rung`, or `5 to 10 runs per rung (more while noisy)`.
pub(crate) fn runs_words(result: &LadderResult) -> String {
    if result.max_runs > result.runs {
        format!(
            "{} to {} runs per rung (more while noisy)",
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
pub(crate) fn noise_line(result: &LadderResult) -> Option<String> {
    result.noise.map(noise_sentence)
}

/// A paragraph per noisy rung, and per noisy placement of the check.
pub(crate) fn noisy_lines(result: &LadderResult) -> Vec<String> {
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

/// How much placement alone changes the baseline, what a cross-CPU
/// wake-up costs, and the rungs that block in their other placement.
pub(crate) fn placement_paragraph(result: &LadderResult, check: &PlacementCheck) -> String {
    let mut text = format!("placement: {} ", check.rung);
    let rows: Vec<String> = (check.rows.iter())
        .map(|row| match (row.median(), &row.reason) {
            (Some(m), _) => format!("{} {m:.2} GiB/s ({})", row.kind, spread_cell(&row.gib_s)),
            (None, Some(why)) => format!("{} {}: {why}", row.kind, status_word(row.status)),
            (None, None) => format!("{} no runs", row.kind),
        })
        .collect();
    text += &rows.join(", ");
    match (check.factor(), check.best(), check.worst()) {
        (Some(factor), Some(best), Some(worst)) => {
            text += &format!(
                "; placement alone changes it {factor:.1}x ({} best, {} worst).",
                best.kind, worst.kind
            );
        }
        _ => text.push('.'),
    }
    match (&check.wakeup, &check.wakeup_reason) {
        (Some(w), _) => {
            text += &format!(
                " A cross-CPU wake-up costs {} here (a 1-byte round trip takes {} on one CPU, {} \
                 across two).",
                crate::units::readable_ns(w.cross_cpu_wakeup_ns.max(0.0)),
                crate::units::readable_ns(w.same_cpu_rtt_ns as f64),
                crate::units::readable_ns(w.different_cpu_rtt_ns as f64),
            );
        }
        (None, Some(why)) => text += &format!(" No wake-up cost: {why}."),
        (None, None) => {}
    }
    let others: Vec<String> = result
        .rungs
        .iter()
        .filter(|r| r.name != Rung::WriteRead)
        .filter_map(|r| {
            let o = r.other_placement.as_ref()?;
            Some(match o.median() {
                Some(m) => format!("{} {m:.2}", r.name),
                None => format!("{} {}", r.name, status_word(o.status)),
            })
        })
        .collect();
    let kinds: Vec<&str> = result
        .rungs
        .iter()
        .filter_map(|r| r.other_placement.as_ref().map(|o| o.kind.as_str()))
        .collect();
    if !others.is_empty() {
        let kind = match kinds.iter().all(|k| *k == kinds[0]) {
            true => kinds[0],
            false => "in their slower placement",
        };
        let others = others.join(", ");
        text += &format!(" The other rungs that block, {kind}: {others} GiB/s.");
    }
    wrap(&text, 100)
}

/// A count per GiB: whole numbers, or one decimal below 10.
fn count(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// The cost per GiB of every measured rung, under the main table.
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

/// Each profiled rung's top symbols; one line when no rung could be
/// profiled, for the same reason.
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
