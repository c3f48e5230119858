//! A scan's chart: each rung's median GiB/s against the value, on a log2
//! axis of sizes or an axis of named values.

use std::io;

use plotters::prelude::*;

use crate::bench::ladder::scan::{PLACEMENTS, ScanResult};
use crate::bench::ladder::{LadderResult, Rung};
use crate::report::svg::chart::{FONT, WIDTH, bounds, drawing, series};
use crate::report::svg::lines::{dotted_line, legend_below, legend_height};
use crate::units::Size;

/// The x axis: sizes in bytes on a log2 scale, or names at 1, 2, 3, ...
#[derive(Debug, Clone, Copy)]
enum Axis {
    Log2Sizes,
    Named(&'static [&'static str]),
}

impl Axis {
    fn x(self, value: u64) -> f64 {
        match self {
            Axis::Log2Sizes => (value as f64).log2(),
            Axis::Named(_) => value as f64,
        }
    }

    /// The label of a tick at `x`: whole powers of two, or the names;
    /// other ticks stay blank.
    fn label(self, x: f64) -> String {
        let k = x.round();
        if (x - k).abs() > 1e-6 {
            return String::new();
        }
        match self {
            Axis::Log2Sizes if (0.0..64.0).contains(&k) => Size(1u64 << k as u32).to_string(),
            Axis::Named(names) if k >= 1.0 => names
                .get(k as usize - 1)
                .map_or_else(String::new, |n| n.to_string()),
            _ => String::new(),
        }
    }
}

/// The plot's height, in pixels; the legend is under it.
const HEIGHT: u32 = 480;

/// A piece of line: (x of the value, median GiB/s) points, by value.
type Segment = Vec<(f64, f64)>;

/// Each rung's line, in pieces: a value where the rung has no median
/// breaks its line.
fn lines(points: &[(u64, &LadderResult)], axis: Axis) -> Vec<(Rung, Vec<Segment>)> {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.0);
    let mut rungs: Vec<Rung> = Vec::new();
    for r in sorted.iter().flat_map(|p| &p.1.rungs) {
        if !rungs.contains(&r.name) {
            rungs.push(r.name);
        }
    }
    rungs
        .into_iter()
        .map(|rung| {
            let mut segments: Vec<Segment> = vec![Vec::new()];
            for (value, result) in &sorted {
                let median = result
                    .rungs
                    .iter()
                    .find(|r| r.name == rung)
                    .and_then(|r| r.median());
                match (median, segments.last_mut()) {
                    (Some(m), Some(segment)) => segment.push((axis.x(*value), m)),
                    (None, Some(segment)) if !segment.is_empty() => segments.push(Vec::new()),
                    _ => {}
                }
            }
            segments.retain(|s| !s.is_empty());
            (rung, segments)
        })
        .collect()
}

/// A scan of sizes as an SVG document: a line per rung, a dot per value
/// of `param` on a log2 axis. Fails on no points or a value of 0.
pub fn scan_svg(param: &str, points: &[(u64, LadderResult)]) -> io::Result<String> {
    let points: Vec<(u64, &LadderResult)> = points.iter().map(|(v, r)| (*v, r)).collect();
    draw(param, Axis::Log2Sizes, &points, |rung| {
        rung.name().to_string()
    })
}

/// [`scan_svg`] of a [`ScanResult`]; a rung the setting does not affect
/// says so in the legend.
pub fn scan_result_svg(scan: &ScanResult) -> io::Result<String> {
    let points: Vec<(u64, &LadderResult)> =
        scan.points.iter().map(|p| (p.value, &p.result)).collect();
    let param = scan.param;
    let axis = if param.is_size() {
        Axis::Log2Sizes
    } else {
        Axis::Named(&PLACEMENTS)
    };
    draw(param.name(), axis, &points, |rung| {
        match param.affects(rung) {
            true => rung.name().to_string(),
            false => format!("{rung} (does not depend on {param})"),
        }
    })
}

fn draw(
    param: &str,
    axis: Axis,
    points: &[(u64, &LadderResult)],
    legend: impl Fn(Rung) -> String,
) -> io::Result<String> {
    let fail = drawing("scan");
    if points.is_empty() || points.iter().any(|p| p.0 == 0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot chart a scan of {param}: it needs values above 0, and has none"),
        ));
    }
    let lines = lines(points, axis);
    let xs = points.iter().map(|p| axis.x(p.0));
    let (x_lo, x_hi) = bounds(xs).unwrap_or((0.0, 1.0));
    let (x_lo, x_hi) = (x_lo.floor() - 0.5, x_hi.ceil() + 0.5);
    let ys = lines.iter().flat_map(|l| l.1.iter().flatten().map(|p| p.1));
    let y_hi = bounds(ys).map_or(1.0, |b| b.1 * 1.15).max(0.1);
    let mut svg = String::new();
    {
        let drawn = lines.iter().filter(|l| !l.1.is_empty()).count();
        let height = HEIGHT + legend_height(drawn);
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        let (plot, under) = root.split_vertically(HEIGHT);
        plot.fill(&WHITE).map_err(|e| fail(&e))?;
        let mut chart = ChartBuilder::on(&plot)
            .caption(
                format!("pipespeed bench --scan {param}: median GiB/s per rung"),
                (FONT, 17),
            )
            .margin(10)
            .margin_right(25)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(x_lo..x_hi, 0.0..y_hi)
            .map_err(|e| fail(&e))?;
        let x_desc = match axis {
            Axis::Log2Sizes => format!("{param} (log2 scale)"),
            Axis::Named(_) => param.to_string(),
        };
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .x_labels((x_hi - x_lo) as usize + 1)
            .x_label_formatter(&|v: &f64| axis.label(*v))
            .x_desc(x_desc)
            .y_desc("GiB/s (median of runs)")
            .label_style((FONT, 13))
            .draw()
            .map_err(|e| fail(&e))?;
        let mut entries = Vec::with_capacity(lines.len());
        for (rung, segments) in &lines {
            let index = Rung::ALL.iter().position(|r| r == rung).unwrap_or(0);
            for segment in segments {
                dotted_line(&mut chart, "scan", segment, series(index))?;
            }
            // One legend entry per rung drawn, however broken its line.
            if !segments.is_empty() {
                entries.push((legend(*rung), series(index)));
            }
        }
        legend_below(&under, "scan", &entries)?;
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(svg)
}

/// The chart, as `bench --scan --svg` writes it.
impl crate::report::Exporter<ScanResult> for crate::report::Svg {
    fn export(&self, result: &ScanResult) -> io::Result<Vec<u8>> {
        scan_result_svg(result).map(String::into_bytes)
    }
}
