//! Round-trip latency: for each message size, a line through its
//! percentiles, on a log scale.

use std::io;

use plotters::prelude::*;

use crate::bench::core::shown::spread_cell;
use crate::bench::hist::LatencyNs;
use crate::bench::latency::{LatencyResult, describe};
use crate::report::svg::chart::{FONT, WIDTH, bounds, drawing, series};
use crate::report::svg::lines::{dotted_line, legend_below, legend_height};
use crate::units::Size;

/// The plot's height, in pixels; the legend is under it.
const HEIGHT: u32 = 480;

/// The percentiles along the x axis, in order.
const PERCENTILES: [&str; 5] = ["p50", "p90", "p99", "p99.9", "max"];

fn values(l: &LatencyNs) -> [u64; 5] {
    [l.p50, l.p90, l.p99, l.p999, l.max]
}

/// `latency`'s result as an SVG document, 900 pixels wide, a 480-pixel
/// plot and the legend under it (20 pixels a row of two sizes): a line
/// per message size through its round-trip p50, p90, p99, p99.9 and max,
/// in microseconds on a log scale; the legend gives each size the spread
/// of its runs' p50 (marked noisy when it is).
pub fn latency_svg(result: &LatencyResult) -> io::Result<String> {
    let fail = drawing("latency");
    // In microseconds; an empty histogram's 0 shows as 1 ns.
    let us = |ns: u64| ns.max(1) as f64 / 1e3;
    let all = result.rows.iter().flat_map(|r| values(&r.rtt_ns)).map(us);
    let (lo, hi) = bounds(all).unwrap_or((1.0, 10.0));
    let (lo, hi) = (lo / 2.0, hi * 2.0);
    let mut svg = String::new();
    {
        let height = HEIGHT + legend_height(result.rows.len());
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        let (plot, under) = root.split_vertically(HEIGHT);
        plot.fill(&WHITE).map_err(|e| fail(&e))?;
        let mut chart = ChartBuilder::on(&plot)
            .caption(
                format!(
                    "pipespeed latency: round trips, {}",
                    describe(result.config.placement)
                ),
                (FONT, 17),
            )
            .margin(10)
            .margin_right(25)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..4.5, (lo..hi).log_scale())
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .x_labels(PERCENTILES.len())
            .x_label_formatter(&|v: &f64| {
                let i = v.round();
                match PERCENTILES.get(i as usize) {
                    Some(name) if (v - i).abs() < 1e-6 && i >= 0.0 => name.to_string(),
                    _ => String::new(),
                }
            })
            .y_label_formatter(&|v: &f64| match *v {
                v if v >= 10.0 => format!("{v:.0}"),
                v if v >= 1.0 => format!("{v:.1}"),
                v => format!("{v:.2}"),
            })
            .x_desc("percentile of the round trips (median over runs)")
            .y_desc("round trip, µs (log scale)")
            .label_style((FONT, 13))
            .draw()
            .map_err(|e| fail(&e))?;
        let mut entries = Vec::with_capacity(result.rows.len());
        for (i, row) in result.rows.iter().enumerate() {
            let points: Vec<(f64, f64)> = values(&row.rtt_ns)
                .into_iter()
                .enumerate()
                .map(|(x, ns)| (x as f64, us(ns)))
                .collect();
            // The spread of the runs' p50, and the noisy mark.
            let label = format!(
                "{} messages, p50 {}",
                Size(row.size as u64),
                spread_cell(&row.rtt_p50_ns)
            );
            dotted_line(&mut chart, "latency", &points, series(i))?;
            entries.push((label, series(i)));
        }
        legend_below(&under, "latency", &entries)?;
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(svg)
}

/// The chart, as `latency --svg` writes it.
impl crate::report::Exporter<LatencyResult> for crate::report::Svg {
    fn export(&self, result: &LatencyResult) -> io::Result<Vec<u8>> {
        latency_svg(result).map(String::into_bytes)
    }
}
