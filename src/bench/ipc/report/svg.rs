//! `ipc`'s chart: per metric, a panel per message size, each on its own
//! linear axis. 64-byte messages move about a thousandth of 1 MiB ones'
//! GiB/s, so on one axis their bars would be under a pixel, and on a log
//! axis a bar's length means nothing; within a size is where mechanisms
//! are compared.
use crate::bench::core::Status;

use std::io;

use plotters::prelude::*;

use super::{Shown, ordered, round_trips, rtt, sizes, speed, throughput};
use crate::bench::ipc::{IpcResult, IpcRow};
use crate::report::svg::bars::{Bar, Bars, draw_on, height};
use crate::report::svg::chart::{WIDTH, clip, drawing};
use crate::units::{Size, readable_ns};

/// Pixels per bar in a panel.
const ROW_PX: u32 = 28;

/// `ipc`'s result as one SVG document: the throughput, round-trip and
/// CPU panels one under the other, a panel per message size; a row whose
/// metric did not run is an empty bar saying why.
pub fn ipc_svg(result: &IpcResult) -> io::Result<String> {
    let fail = drawing("ipc");
    let charts = charts(result);
    let heights: Vec<u32> = charts.iter().map(height).collect();
    let mut svg = String::new();
    {
        let total = heights.iter().sum();
        let root = SVGBackend::with_string(&mut svg, (WIDTH, total)).into_drawing_area();
        let mut at = 0;
        let breaks: Vec<i32> = (heights.iter())
            .map(|h| {
                at += *h as i32;
                at
            })
            .collect();
        let areas = root
            .split_by_breakpoints::<i32, i32, _, _>([], &breaks[..breaks.len().saturating_sub(1)]);
        for (area, chart) in areas.iter().zip(&charts) {
            draw_on(area, chart)?;
        }
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(svg)
}

/// The panels of `result`'s metrics, a panel per metric and message
/// size; the throughput panel alone, empty, when there is none.
fn charts(result: &IpcResult) -> Vec<Bars<'static>> {
    let shown = Shown::of(result);
    let s = &result.header.system;
    let machine = clip(
        &format!(
            "pipespeed {} ipc{}: {} ({} CPUs), Linux {}",
            result.header.pipespeed_version,
            if result.header.interrupted {
                " (interrupted)"
            } else {
                ""
            },
            s.cpu_model,
            s.cpus_online,
            s.kernel
        ),
        90,
    );
    let with_cost = result
        .rows
        .iter()
        .any(|r| throughput(r).is_some_and(|t| t.cpu_s_per_gib.is_some()));
    let rates = Metric {
        chart: "ipc throughput",
        name: "throughput",
        x_desc: "GiB/s: median of runs; whisker from the slowest run to the fastest",
        has: |r| r.throughput.is_some(),
        key: |r| speed(r).map(|g| -g),
        bar: gib_s,
    };
    let mut metrics: Vec<Metric> = Vec::new();
    if shown.throughput || !shown.latency {
        metrics.push(rates);
    }
    if shown.latency {
        metrics.push(Metric {
            chart: "ipc round trip",
            name: "round trip",
            x_desc: "round trip, µs: median of the runs' p50; whisker to their p99",
            has: |r| r.latency.is_some(),
            key: |r| rtt(r).map(|l| l.p50 as f64),
            bar: round_trip,
        });
    }
    if with_cost {
        metrics.push(Metric {
            chart: "ipc CPU",
            name: "CPU cost per GiB",
            x_desc: "CPU seconds of both ends per GiB moved (start-up included); fewer is cheaper",
            has: |r| r.throughput.is_some(),
            key: |r| throughput(r)?.cpu_s_per_gib,
            bar: cpu,
        });
    }
    let panel = |metric: &Metric, title: String, rows| Bars {
        chart: metric.chart,
        title,
        x_desc: metric.x_desc,
        rows,
        limit: None,
        ticks: tick,
        row_px: ROW_PX,
    };
    let mut out = Vec::new();
    for metric in &metrics {
        for size in sizes(result) {
            let rows = rows(result, size, metric);
            if rows.is_empty() {
                continue;
            }
            let title = format!("{}, {} messages", metric.name, Size(size as u64));
            let title = match out.is_empty() {
                true => clip(&format!("{machine}: {title}"), 100),
                false => title,
            };
            out.push(panel(metric, title, rows));
        }
    }
    if out.is_empty() {
        let title = clip(&format!("{machine}: throughput"), 100);
        out.push(panel(&rates, title, Vec::new()));
    }
    out
}

/// One metric's panels: what they are called, which rows have it, the
/// order of its bars (smallest `key` first) and how a bar is drawn.
#[derive(Clone, Copy)]
struct Metric {
    chart: &'static str,
    name: &'static str,
    x_desc: &'static str,
    has: fn(&IpcRow) -> bool,
    key: fn(&IpcRow) -> Option<f64>,
    bar: fn(&IpcRow, String) -> Bar,
}

/// A bar per row of `size` that has `metric`, in its order.
fn rows(result: &IpcResult, size: usize, metric: &Metric) -> Vec<Bar> {
    let rows: Vec<&IpcRow> = (result.rows.iter())
        .filter(|r| r.size == size && (metric.has)(r))
        .collect();
    ordered(rows, metric.key)
        .into_iter()
        .map(|row| (metric.bar)(row, format!("{}, {}", row.mechanism, Size(size as u64))))
        .collect()
}

/// An empty bar saying why a row's metric (its status and reason) has
/// none, as the table's notes say it.
fn missing(label: String, metric: Option<(Status, Option<&str>)>) -> Bar {
    let text = match metric {
        None => "not measured".to_string(),
        Some((status, reason)) => super::trouble(status, reason, 0).unwrap_or_default(),
    };
    Bar::empty(label, clip(&text, 75))
}

/// The empty bar of a row whose throughput has none.
fn no_throughput(row: &IpcRow, label: String) -> Bar {
    let t = row.throughput.as_ref();
    missing(label, t.map(|t| (t.status, t.reason.as_deref())))
}

fn gib_s(row: &IpcRow, label: String) -> Bar {
    let (Some(t), Some(median)) = (throughput(row), speed(row)) else {
        return no_throughput(row, label);
    };
    let mut bar = Bar::measured(label, median, t.gib_s.min, t.gib_s.max);
    bar.note = format!("{} GiB/s", super::gib_s(median));
    if t.gib_s.noisy() {
        bar.note += ", noisy";
    }
    bar
}

fn round_trip(row: &IpcRow, label: String) -> Bar {
    let (Some(trips), Some(l)) = (round_trips(row), rtt(row)) else {
        let l = row.latency.as_ref();
        return missing(label, l.map(|l| (l.status, l.reason.as_deref())));
    };
    let us = |ns: u64| ns as f64 / 1e3;
    let mut bar = Bar::measured(label, us(l.p50), Some(us(l.p50)), Some(us(l.p99)));
    bar.note = format!(
        "p50 {}, p99 {}",
        readable_ns(l.p50 as f64),
        readable_ns(l.p99 as f64)
    );
    if trips.p50_ns.noisy() {
        bar.note += ", noisy";
    }
    bar
}

fn cpu(row: &IpcRow, label: String) -> Bar {
    match throughput(row).map(|t| t.cpu_s_per_gib) {
        Some(Some(c)) => {
            let mut bar = Bar::measured(label, c, None, None);
            bar.note = format!("{c:.3} s/GiB, {} copies", row.copies);
            bar
        }
        Some(None) => missing(label, None),
        None => no_throughput(row, label),
    }
}

/// An axis tick: at most two decimals, none when whole.
fn tick(v: &f64) -> String {
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}

/// The chart, as `ipc --svg` writes it.
impl crate::report::Exporter<IpcResult> for crate::report::Svg {
    fn export(&self, result: &IpcResult) -> io::Result<Vec<u8>> {
        ipc_svg(result).map(String::into_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::tick;

    #[test]
    fn ticks_drop_needless_decimals() {
        assert_eq!(tick(&5.0), "5");
        assert_eq!(tick(&0.5), "0.5");
        assert_eq!(tick(&0.25), "0.25");
        assert_eq!(tick(&12.0), "12");
    }
}
