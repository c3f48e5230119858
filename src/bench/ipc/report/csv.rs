//! `ipc` as CSV: one row per measured run, throughput and round-trip
//! runs under one header, for spreadsheets and plotting scripts.
use crate::bench::core::{Placement, Status};

use std::io;

use crate::bench::core::Series;
use crate::bench::core::shown::{series_csv, status_word};
use crate::bench::ipc::{IpcResult, IpcRow, StreamRun, TripRun};
use crate::report::{Csv, Exporter};
use crate::sys::RunNoise;

/// The first line of `ipc`'s CSV.
pub(crate) const CSV_HEADER: &str = "mechanism,size,metric,status,reason,run,copies,\
     gib_s,msgs_per_s,timed_bytes,bytes,cpu_s,round_trips,round_trips_per_s,rtt_mean_ns,\
     rtt_p50_ns,rtt_p90_ns,rtt_p99_ns,rtt_p999_ns,rtt_max_ns,warmup_round_trips,seconds,noisy,\
     steal_s,other_cpu_s,load_avg_1m,involuntary_switches,cpu_mhz,sender_cpu,receiver_cpu,\
     metric_median,metric_min,metric_max,metric_ci95_half_width,metric_max_over_min,metric_noisy\n";

/// One row per run: `mechanism,size,metric,status,reason,run,copies`
/// (`metric` is `throughput` or `round-trip`), then a throughput run's
/// `gib_s,msgs_per_s,timed_bytes,bytes,cpu_s` or a round-trip run's
/// `round_trips,round_trips_per_s,rtt_mean_ns,...,rtt_max_ns,warmup_round_trips`
/// (the other metric's columns empty), the run's `seconds`, the metric's
/// `noisy`, the run's noise, the CPUs of the ends, and the metric's
/// series (GiB/s, or the runs' p50 in nanoseconds) as `series_csv`
/// writes it (`metric_median`, ..., `metric_noisy`). A metric without
/// runs (unavailable, failed before its first run, or interrupted) has
/// one row with its status and reason and no `run` or figures; a metric
/// not asked for has none.
impl Exporter<IpcResult> for Csv {
    fn export(&self, result: &IpcResult) -> io::Result<Vec<u8>> {
        Ok(csv(result).into_bytes())
    }
}

/// Columns of a throughput run.
const STREAM: usize = 5;
/// Columns of a round-trip run.
const TRIP: usize = 9;
/// Columns of a run's noise.
const NOISE: usize = 5;

/// One metric of a row, as the CSV needs it.
struct Metric<'a> {
    name: &'static str,
    status: Status,
    reason: Option<&'a str>,
    series: &'a Series,
    /// Per run: the throughput and round-trip columns, the seconds and
    /// the noise.
    runs: Vec<(Vec<String>, f64, Option<&'a RunNoise>)>,
}

/// The metrics `row` was asked for.
fn metrics(row: &IpcRow) -> Vec<Metric<'_>> {
    let t = row.throughput.as_ref().map(|t| Metric {
        name: "throughput",
        status: t.status,
        reason: t.reason.as_deref(),
        series: &t.gib_s,
        runs: (t.runs.iter())
            .map(|run| {
                (
                    [stream(run), empty(TRIP)].concat(),
                    run.seconds,
                    run.noise.as_ref(),
                )
            })
            .collect(),
    });
    let l = row.latency.as_ref().map(|l| Metric {
        name: "round-trip",
        status: l.status,
        reason: l.reason.as_deref(),
        series: &l.p50_ns,
        runs: (l.runs.iter())
            .map(|run| {
                (
                    [empty(STREAM), trip(run)].concat(),
                    run.seconds,
                    run.noise.as_ref(),
                )
            })
            .collect(),
    });
    t.into_iter().chain(l).collect()
}

fn csv(r: &IpcResult) -> String {
    let cpus = match r.config.placement {
        Placement::Pinned {
            writer_cpu,
            reader_cpu,
        } => [writer_cpu.to_string(), reader_cpu.to_string()],
        Placement::Unpinned => Default::default(),
    };
    let mut out = String::from(CSV_HEADER);
    for row in &r.rows {
        for m in metrics(row) {
            let lead = |run: String| lead(row, m.name, m.status, m.reason, run);
            let mut lines = Vec::new();
            if m.runs.is_empty() {
                let blank = empty(STREAM + TRIP + 2 + NOISE);
                let series = series_csv(m.series);
                lines.push([lead(String::new()), blank, cpus.to_vec(), series].concat());
            }
            for (i, (figures, seconds, n)) in m.runs.iter().enumerate() {
                let tail = vec![format!("{seconds:.6}"), m.series.noisy().to_string()];
                let run = lead((i + 1).to_string());
                let (noise, series) = (noise(*n), series_csv(m.series));
                lines.push([run, figures.clone(), tail, noise, cpus.to_vec(), series].concat());
            }
            for fields in lines {
                out += &fields.join(",");
                out.push('\n');
            }
        }
    }
    out
}

/// `n` empty fields.
fn empty(n: usize) -> Vec<String> {
    vec![String::new(); n]
}

/// `mechanism,size,metric,status,reason,run,copies`.
fn lead(
    row: &IpcRow,
    metric: &str,
    status: Status,
    reason: Option<&str>,
    run: String,
) -> Vec<String> {
    vec![
        row.mechanism.to_string(),
        row.size.to_string(),
        metric.to_string(),
        status_word(status).to_string(),
        field(reason.unwrap_or("")),
        run,
        row.copies.to_string(),
    ]
}

fn stream(run: &StreamRun) -> Vec<String> {
    vec![
        format!("{:.4}", run.gib_s),
        format!("{:.1}", run.msgs_per_s),
        run.timed_bytes.to_string(),
        run.bytes.to_string(),
        run.cpu_s.map(|s| format!("{s:.4}")).unwrap_or_default(),
    ]
}

fn trip(run: &TripRun) -> Vec<String> {
    let l = &run.rtt_ns;
    vec![
        run.round_trips.to_string(),
        format!("{:.1}", run.round_trips_per_s),
        format!("{:.1}", l.mean),
        l.p50.to_string(),
        l.p90.to_string(),
        l.p99.to_string(),
        l.p999.to_string(),
        l.max.to_string(),
        run.warmup_round_trips.to_string(),
    ]
}

/// `steal_s,other_cpu_s,load_avg_1m,involuntary_switches,cpu_mhz`, as
/// the ladder's CSV writes them.
fn noise(n: Option<&RunNoise>) -> Vec<String> {
    let Some(n) = n else {
        return empty(NOISE);
    };
    vec![
        format!("{:.3}", n.steal_s),
        format!("{:.3}", n.other_cpu_s),
        format!("{:.2}", n.load_avg_1m),
        n.involuntary_switches.to_string(),
        n.cpu_mhz.map(|m| format!("{m:.0}")).unwrap_or_default(),
    ]
}

/// `text` as one CSV field: quoted (and its quotes doubled) when it
/// holds a comma, a quote or a line break (RFC 4180).
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_is_quoted_only_when_it_must_be() {
        assert_eq!(field("plain words"), "plain words");
        assert_eq!(field("a, b"), "\"a, b\"");
        assert_eq!(field("say \"no\""), "\"say \"\"no\"\"\"");
    }

    #[test]
    fn the_header_has_every_part_s_columns() {
        let columns = CSV_HEADER.trim_end().split(',').count();
        // lead 7, then seconds, noisy, the CPUs and the series.
        assert_eq!(columns, 7 + STREAM + TRIP + 2 + NOISE + 2 + 6);
        let series = crate::bench::core::shown::series_csv_header("metric");
        assert!(CSV_HEADER.ends_with(&format!(",receiver_cpu,{series}\n")));
    }
}
