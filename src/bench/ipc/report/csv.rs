//! `ipc` as CSV: one row per measured run, throughput and round-trip
//! runs under one header, for spreadsheets and plotting scripts.
use crate::bench::core::Status;

use std::io;

use serde::Serialize;

use crate::bench::core::Series;
use crate::bench::core::shown::{NoiseCells, series_csv, status_word};
use crate::bench::ipc::{IpcResult, IpcRow, StreamRun, TripRun};
use crate::report::{Csv, Exporter, csv_lines};
use crate::sys::RunNoise;

/// The first line of `ipc`'s CSV.
pub(crate) const CSV_HEADER: &str = "mechanism,size,metric,status,reason,run,copies,\
     gib_s,msgs_per_s,timed_bytes,bytes,cpu_s,round_trips,round_trips_per_s,rtt_mean_ns,\
     rtt_p50_ns,rtt_p90_ns,rtt_p99_ns,rtt_p999_ns,rtt_max_ns,warmup_round_trips,seconds,noisy,\
     steal_s,other_cpu_s,load_avg_1m,involuntary_switches,cpu_mhz,sender_cpu,receiver_cpu,\
     metric_median,metric_min,metric_max,metric_ci95_half_width,metric_max_over_min,metric_noisy\n";

/// One row per run under `CSV_HEADER` (`metric` is `throughput` or
/// `round-trip`, the other metric's columns empty; the series is of GiB/s
/// or of the runs' p50 in nanoseconds). A metric without runs
/// (unavailable, failed before its first run, or interrupted) has one row
/// with its status and reason and no `run` or figures; a metric not
/// asked for has none.
impl Exporter<IpcResult> for Csv {
    fn export(&self, result: &IpcResult) -> io::Result<Vec<u8>> {
        csv_lines(CSV_HEADER, lines(result))
    }
}

/// One line of `ipc`'s CSV, in the header's order.
#[derive(Clone, Serialize)]
struct Line<'a> {
    mechanism: String,
    size: usize,
    metric: &'static str,
    status: &'static str,
    reason: &'a str,
    run: Option<usize>,
    copies: u32,
    stream: StreamCells,
    trip: TripCells,
    seconds: Option<String>,
    noisy: Option<bool>,
    noise: NoiseCells,
    sender_cpu: Option<usize>,
    receiver_cpu: Option<usize>,
    series: Vec<String>,
}

/// A throughput run's columns (empty on a round-trip run's line).
#[derive(Clone, Default, Serialize)]
struct StreamCells {
    gib_s: Option<String>,
    msgs_per_s: Option<String>,
    timed_bytes: Option<u64>,
    bytes: Option<u64>,
    cpu_s: Option<String>,
}

/// A run's columns (the other metric's empty), its seconds and its noise.
type RunCells<'a> = (StreamCells, TripCells, f64, Option<&'a RunNoise>);

impl StreamCells {
    fn of(run: &StreamRun) -> RunCells<'_> {
        let cells = Self {
            gib_s: Some(format!("{:.4}", run.gib_s)),
            msgs_per_s: Some(format!("{:.1}", run.msgs_per_s)),
            timed_bytes: Some(run.timed_bytes),
            bytes: Some(run.bytes),
            cpu_s: run.cpu_s.map(|s| format!("{s:.4}")),
        };
        (cells, TripCells::default(), run.seconds, run.noise.as_ref())
    }
}

/// A round-trip run's columns (empty on a throughput run's line).
#[derive(Clone, Default, Serialize)]
struct TripCells {
    round_trips: Option<u64>,
    round_trips_per_s: Option<String>,
    rtt_mean_ns: Option<String>,
    rtt_p50_ns: Option<u64>,
    rtt_p90_ns: Option<u64>,
    rtt_p99_ns: Option<u64>,
    rtt_p999_ns: Option<u64>,
    rtt_max_ns: Option<u64>,
    warmup_round_trips: Option<u64>,
}

impl TripCells {
    fn of(run: &TripRun) -> RunCells<'_> {
        let l = &run.rtt_ns;
        let cells = Self {
            round_trips: Some(run.round_trips),
            round_trips_per_s: Some(format!("{:.1}", run.round_trips_per_s)),
            rtt_mean_ns: Some(format!("{:.1}", l.mean)),
            rtt_p50_ns: Some(l.p50),
            rtt_p90_ns: Some(l.p90),
            rtt_p99_ns: Some(l.p99),
            rtt_p999_ns: Some(l.p999),
            rtt_max_ns: Some(l.max),
            warmup_round_trips: Some(run.warmup_round_trips),
        };
        (
            StreamCells::default(),
            cells,
            run.seconds,
            run.noise.as_ref(),
        )
    }
}

/// One metric of a row, as the CSV needs it.
struct Metric<'a> {
    name: &'static str,
    status: Status,
    reason: Option<&'a str>,
    series: &'a Series,
    runs: Vec<RunCells<'a>>,
}

/// The metrics `row` was asked for.
fn metrics(row: &IpcRow) -> Vec<Metric<'_>> {
    let t = row.throughput.as_ref().map(|t| Metric {
        name: "throughput",
        status: t.status,
        reason: t.reason.as_deref(),
        series: &t.gib_s,
        runs: t.runs.iter().map(StreamCells::of).collect(),
    });
    let l = row.latency.as_ref().map(|l| Metric {
        name: "round-trip",
        status: l.status,
        reason: l.reason.as_deref(),
        series: &l.p50_ns,
        runs: l.runs.iter().map(TripCells::of).collect(),
    });
    t.into_iter().chain(l).collect()
}

fn lines(r: &IpcResult) -> Vec<Line<'_>> {
    let (sender_cpu, receiver_cpu) = r.config.placement.cpus();
    let mut out = Vec::new();
    for row in &r.rows {
        for m in metrics(row) {
            let line = Line {
                mechanism: row.mechanism.to_string(),
                size: row.size,
                metric: m.name,
                status: status_word(m.status),
                reason: m.reason.unwrap_or(""),
                run: None,
                copies: row.copies,
                stream: StreamCells::default(),
                trip: TripCells::default(),
                seconds: None,
                noisy: None,
                noise: NoiseCells::default(),
                sender_cpu,
                receiver_cpu,
                series: series_csv(m.series),
            };
            if m.runs.is_empty() {
                out.push(line.clone());
            }
            for (i, (stream, trip, seconds, noise)) in m.runs.into_iter().enumerate() {
                out.push(Line {
                    run: Some(i + 1),
                    stream,
                    trip,
                    seconds: Some(format!("{seconds:.6}")),
                    noisy: Some(m.series.noisy()),
                    noise: NoiseCells::of(noise),
                    ..line.clone()
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_has_every_part_s_columns() {
        let columns = CSV_HEADER.trim_end().split(',').count();
        // lead 7, a throughput run's 5, a round-trip run's 9, seconds,
        // noisy, the noise's 5, the CPUs and the series.
        assert_eq!(columns, 7 + 5 + 9 + 2 + 5 + 2 + 6);
        let series = crate::bench::core::shown::series_csv_header("metric");
        assert!(CSV_HEADER.ends_with(&format!(",receiver_cpu,{series}\n")));
    }
}
