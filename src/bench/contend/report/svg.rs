//! contend's cells: a bar per writers x readers cell, its median writes
//! per second with a whisker over its runs, and its spread in the note
//! (marked noisy where the runs spread too much to trust the median).

use std::io;

use crate::bench::contend::{ContendResult, Row};
use crate::bench::core::shown::{spread_cell, status_word};
use crate::report::svg::bars::{Bar, Bars, draw};
use crate::report::svg::chart::si;
use crate::units::Size;

/// `contend`'s result as an SVG document, 900 pixels wide and 80 + 40 per
/// cell high: writes per second per cell, with MiB/s and the spread in
/// the note.
pub fn contend_svg(result: &ContendResult) -> io::Result<String> {
    draw(&Bars {
        chart: "contend",
        title: format!(
            "pipespeed contend: {} messages, pipe {}, {}",
            Size(result.msg_size as u64),
            Size(result.pipe_size as u64),
            result.mode
        ),
        x_desc: "writes/s: median of runs; whisker from the slowest run to the fastest",
        rows: result.rows.iter().map(row).collect(),
        limit: None,
        row_px: 40,
        ticks: |v| si(*v),
    })
}

fn row(r: &Row) -> Bar {
    use crate::bench::contend::job::counted;
    let label = format!(
        "{}, {}",
        counted(r.writers, "writer"),
        counted(r.readers, "reader")
    );
    let w = &r.writes_per_s;
    if w.runs.is_empty() {
        let why = r.reason.as_deref().unwrap_or("no run was made");
        return Bar::empty(label, format!("{}: {why}", status_word(r.status)));
    }
    let spread = (w.runs.len() > 1).then_some((w.min, w.max));
    let mut bar = Bar::measured(
        label,
        r.median_writes_per_s(),
        spread.and_then(|s| s.0),
        spread.and_then(|s| s.1),
    );
    bar.note = format!(
        "{} writes/s, {:.1} MiB/s, spread {}",
        si(r.median_writes_per_s()),
        r.mib_per_s,
        spread_cell(w)
    );
    bar
}

/// The chart, as `contend --svg` writes it.
impl crate::report::Exporter<ContendResult> for crate::report::Svg {
    fn export(&self, result: &ContendResult) -> io::Result<Vec<u8>> {
        contend_svg(result).map(String::into_bytes)
    }
}
