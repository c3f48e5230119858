//! `ipc`: one chart per metric, stacked in one document, each a bar per
//! mechanism and message size, grouped by size: the median GiB/s with a
//! whisker from the slowest run to the fastest; the round trip's median
//! (p50) with a whisker to its p99; the CPU seconds per GiB.
use crate::bench::core::Status;

use std::io;

use plotters::prelude::*;

use super::bars::{Bar, Bars, draw_on, height};
use super::{WIDTH, clip, drawing};
use crate::bench::ipc::{IpcResult, IpcRow};
use crate::report::ipc::{self, Shown, ordered, round_trips, rtt, sizes, speed, throughput};
use crate::report::series::status_word;
use crate::units::{Size, readable_ns};

/// `ipc`'s result as one SVG document, 900 pixels wide: the throughput
/// chart, the round-trip chart and the CPU chart, one under the other,
/// each 80 pixels and 40 per bar high. A chart is there when its metric
/// was asked for (the CPU chart when a row has its cost); a row whose
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

/// The charts of `result`'s metrics; the throughput chart alone, empty,
/// when it has none.
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
    let title = |first: bool, metric: &str| match first {
        true => clip(&format!("{machine}: {metric}"), 100),
        false => metric.to_string(),
    };
    let with_cost = result
        .rows
        .iter()
        .any(|r| throughput(r).is_some_and(|t| t.cpu_s_per_gib.is_some()));
    let mut out = Vec::new();
    if shown.throughput || !shown.latency {
        out.push(Bars {
            chart: "ipc throughput",
            title: title(out.is_empty(), "throughput"),
            x_desc: "GiB/s: median of runs; whisker from the slowest run to the fastest",
            rows: rows(
                result,
                |r| r.throughput.is_some(),
                |r| speed(r).map(|g| -g),
                gib_s,
            ),
            limit: None,
            ticks: tick,
        });
    }
    if shown.latency {
        out.push(Bars {
            chart: "ipc round trip",
            title: title(out.is_empty(), "round trip"),
            x_desc: "round trip, µs: median of the runs' p50; whisker to their p99",
            rows: rows(
                result,
                |r| r.latency.is_some(),
                |r| rtt(r).map(|l| l.p50 as f64),
                round_trip,
            ),
            limit: None,
            ticks: tick,
        });
    }
    if with_cost {
        out.push(Bars {
            chart: "ipc CPU",
            title: title(out.is_empty(), "CPU cost per GiB"),
            x_desc: "CPU seconds of both ends per GiB moved (start-up included); fewer is cheaper",
            rows: rows(
                result,
                |r| r.throughput.is_some(),
                |r| throughput(r)?.cpu_s_per_gib,
                cpu,
            ),
            limit: None,
            ticks: tick,
        });
    }
    out
}

/// A bar per row that `has` the metric, grouped by size, ordered within
/// a size by `key` (smallest first), drawn by `bar`.
fn rows(
    result: &IpcResult,
    has: fn(&IpcRow) -> bool,
    key: fn(&IpcRow) -> Option<f64>,
    bar: fn(&IpcRow, String) -> Bar,
) -> Vec<Bar> {
    let mut out = Vec::new();
    for size in sizes(result) {
        let rows: Vec<&IpcRow> = (result.rows.iter())
            .filter(|r| r.size == size && has(r))
            .collect();
        for row in ordered(rows, key) {
            let label = format!("{}, {}", row.mechanism, Size(size as u64));
            out.push(bar(row, label));
        }
    }
    out
}

/// Why a row's metric (its status and reason) has no bar, as the
/// table's notes say it.
fn missing(metric: Option<(Status, Option<&str>)>) -> Bar {
    let text = match metric {
        None => "not measured".to_string(),
        Some((Status::Ok, _)) => "no runs".to_string(),
        Some((status, reason)) => format!(
            "{}: {}",
            status_word(status),
            reason.unwrap_or("no reason given")
        ),
    };
    Bar::empty(String::new(), clip(&text, 75))
}

/// `bar` with `label`.
fn labelled(mut bar: Bar, label: String) -> Bar {
    bar.label = label;
    bar
}

fn gib_s(row: &IpcRow, label: String) -> Bar {
    let (Some(t), Some(median)) = (throughput(row), speed(row)) else {
        let t = row.throughput.as_ref();
        return labelled(missing(t.map(|t| (t.status, t.reason.as_deref()))), label);
    };
    let mut bar = Bar::measured(label, median, t.gib_s.min, t.gib_s.max);
    bar.note = format!("{} GiB/s", ipc::gib_s(median));
    if t.gib_s.noisy() {
        bar.note += ", noisy";
    }
    bar
}

fn round_trip(row: &IpcRow, label: String) -> Bar {
    let (Some(trips), Some(l)) = (round_trips(row), rtt(row)) else {
        let l = row.latency.as_ref();
        return labelled(missing(l.map(|l| (l.status, l.reason.as_deref()))), label);
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
        Some(None) => labelled(missing(None), label),
        None => {
            let t = row.throughput.as_ref();
            labelled(missing(t.map(|t| (t.status, t.reason.as_deref()))), label)
        }
    }
}

/// An axis tick: at most two decimals, none when whole.
fn tick(v: &f64) -> String {
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
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
