//! The ladder's chart: a bar per rung with its whisker and figures, the
//! limits' bars in grey, and `memcpy`'s median as a dashed line.

use std::io;

use super::figures;
use crate::bench::ladder::{LadderResult, Rung, RungResult};
use crate::report::svg::bars::{Bar, Bars, draw};
use crate::report::svg::chart::{LIMIT, clip};

/// The ladder as an SVG document, 900 pixels wide and 80 + 40 per rung
/// high. A rung without runs is an empty row saying why.
pub fn ladder_svg(result: &LadderResult) -> io::Result<String> {
    let memcpy = result
        .rungs
        .iter()
        .find(|r| r.name == Rung::Memcpy)
        .and_then(RungResult::median);
    let s = &result.header.system;
    // The speed-ups are over the baseline in its fastest placement.
    let x_desc = match &result.baseline {
        Some(b) => format!(
            "GiB/s: median of runs, whisker slowest to fastest; × over write-read {}",
            b.placement
        ),
        None => "GiB/s: median of runs; whisker from the slowest run to the fastest".into(),
    };
    draw(&Bars {
        chart: "ladder",
        title: clip(
            &format!(
                "pipespeed {}: {} ({} CPUs), Linux {}",
                result.header.pipespeed_version, s.cpu_model, s.cpus_online, s.kernel
            ),
            90,
        ),
        x_desc: &x_desc,
        rows: result.rungs.iter().map(row).collect(),
        limit: memcpy.map(|m| (m, format!("memcpy {m:.2} GiB/s: the limit of copying"))),
        row_px: 40,
        ticks: |v| format!("{v:.0}"),
    })
}

fn row(r: &RungResult) -> Bar {
    // Why the rung has no figures, as the table says it.
    let trouble = figures(r).err();
    let label = r.name.to_string();
    let Some(median) = r.median() else {
        return Bar::empty(label, clip(&trouble.unwrap_or("no runs".into()), 75));
    };
    let mut bar = Bar::measured(label, median, r.gib_s.min, r.gib_s.max);
    let mut note = format!("{median:.2} GiB/s");
    if let Some(x) = r.speedup_vs_write_read {
        note += &format!(", {x:.1}× write-read");
    }
    if let Some(share) = r.share_of_ceiling {
        note += &format!(", {:.0}% of {}", share * 100.0, r.name.ceiling(r.copies));
    }
    if r.noisy() {
        note += ", noisy";
    }
    if matches!(r.name, Rung::Memcpy | Rung::SpliceLimit) {
        bar.fill = LIMIT;
    }
    if let Some(trouble) = trouble {
        note += &format!(" ({trouble})");
    }
    bar.note = clip(&note, 60);
    bar
}

/// The ladder's chart, as `bench --svg` writes it.
impl crate::report::Exporter<LadderResult> for crate::report::Svg {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        ladder_svg(result).map(String::into_bytes)
    }
}
