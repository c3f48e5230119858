//! How the ladder reads: what every format shows of a rung here, the
//! text on stdout in `text`, the other formats beside it.
use crate::bench::core::harness::Header;
use crate::bench::core::{Placement, Status};

mod csv;
#[cfg(feature = "cli")]
mod html;
mod markdown;
#[cfg(feature = "cli")]
mod svg;
mod text;

pub(crate) use self::csv::{csv_header, csv_rows};
pub(crate) use self::text::table;
use crate::report::text::wrap;
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
    format!("{COPIES_NOTE} vs baseline: over {base}, its fastest placement.")
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

/// [`placement_text`] wrapped at 100 columns, as the Markdown and the
/// page have it.
pub(crate) fn placement_paragraph(result: &LadderResult, check: &PlacementCheck) -> String {
    wrap(&placement_text(result, check), 100)
}

/// How much placement alone changes the baseline, what a cross-CPU
/// wake-up costs, and the rungs that block in their other placement.
pub(crate) fn placement_text(result: &LadderResult, check: &PlacementCheck) -> String {
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
    text
}
