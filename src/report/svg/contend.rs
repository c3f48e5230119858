//! contend's cells: a bar per writers x readers cell, its median writes
//! per second with a whisker over its runs.

use std::io;

use super::bars::{Bar, Bars, draw};
use super::si;
use crate::bench::contend::{ContendResult, Row};
use crate::units::Size;

/// `contend`'s result as an SVG document, 900 pixels wide and 80 + 40 per
/// cell high: writes per second per cell, with MiB/s in the note.
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
        ticks: |v| si(*v),
    })
}

fn row(r: &Row) -> Bar {
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let label = format!(
        "{}, {}",
        plural(r.writers, "writer"),
        plural(r.readers, "reader")
    );
    let spread = (r.runs.len() > 1).then_some((r.writes_per_s_min, r.writes_per_s_max));
    let mut bar = Bar::measured(
        label,
        r.writes_per_s,
        spread.map(|s| s.0),
        spread.map(|s| s.1),
    );
    bar.note = format!("{} writes/s, {:.1} MiB/s", si(r.writes_per_s), r.mib_per_s);
    bar
}
