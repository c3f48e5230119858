//! `ipc` as CSV: one row per measured run, throughput and round-trip
//! runs under one header, for spreadsheets and plotting scripts.

use std::fmt::Write as _;
use std::io;

use super::super::ladder::status_word;
use super::super::{Csv, Exporter};
use crate::bench::ipc::{IpcResult, IpcRow, StreamRun, TripRun};
use crate::bench::ladder::{Placement, Status};
use crate::bench::noise::Spread;
use crate::sys::RunNoise;

/// The first line of `ipc`'s CSV.
pub(in crate::report) const CSV_HEADER: &str = "mechanism,size,metric,status,reason,run,copies,\
     gib_s,msgs_per_s,timed_bytes,bytes,cpu_s,round_trips,round_trips_per_s,rtt_mean_ns,\
     rtt_p50_ns,rtt_p90_ns,rtt_p99_ns,rtt_p999_ns,rtt_max_ns,warmup_round_trips,seconds,noisy,\
     steal_s,other_cpu_s,load_avg_1m,involuntary_switches,cpu_mhz,sender_cpu,receiver_cpu\n";

/// One row per run: `mechanism,size,metric,status,reason,run,copies`
/// (`metric` is `throughput` or `round-trip`), then a throughput run's
/// `gib_s,msgs_per_s,timed_bytes,bytes,cpu_s` or a round-trip run's
/// `round_trips,round_trips_per_s,rtt_mean_ns,...,rtt_max_ns,warmup_round_trips`
/// (the other metric's columns empty), the run's `seconds`, the metric's
/// `noisy`, the run's noise and the CPUs of the ends. A metric without
/// runs (unavailable, failed before its first run, or interrupted) has
/// one row with its status and reason and no `run` or figures; a metric
/// not asked for has none.
impl Exporter<IpcResult> for Csv {
    fn export(&self, result: &IpcResult) -> io::Result<Vec<u8>> {
        Ok(csv(result).into_bytes())
    }
}

/// Throughput's columns, empty.
const NO_STREAM: &str = ",,,,";
/// Round trips' columns, empty.
const NO_TRIP: &str = ",,,,,,,,,";

fn csv(r: &IpcResult) -> String {
    let mut out = String::from(CSV_HEADER);
    let cpus = match r.config.placement {
        Placement::Pinned {
            writer_cpu,
            reader_cpu,
        } => format!("{writer_cpu},{reader_cpu}"),
        Placement::Unpinned => ",".to_string(),
    };
    for row in &r.rows {
        if let Some(t) = &row.throughput {
            let lead = |run: String| lead(row, "throughput", t.status, t.reason.as_deref(), run);
            let noisy = noisy(t.spread);
            if t.runs.is_empty() {
                let _ = writeln!(
                    out,
                    "{},{NO_STREAM},{NO_TRIP},,,,,,,{cpus}",
                    lead(String::new())
                );
            }
            for (i, run) in t.runs.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "{},{},{NO_TRIP},{:.6},{noisy},{},{cpus}",
                    lead((i + 1).to_string()),
                    stream(run),
                    run.seconds,
                    noise(run.noise.as_ref())
                );
            }
        }
        if let Some(l) = &row.latency {
            let lead = |run: String| lead(row, "round-trip", l.status, l.reason.as_deref(), run);
            let noisy = noisy(l.spread);
            if l.runs.is_empty() {
                let _ = writeln!(
                    out,
                    "{},{NO_STREAM},{NO_TRIP},,,,,,,{cpus}",
                    lead(String::new())
                );
            }
            for (i, run) in l.runs.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "{},{NO_STREAM},{},{:.6},{noisy},{},{cpus}",
                    lead((i + 1).to_string()),
                    trip(run),
                    run.seconds,
                    noise(run.noise.as_ref())
                );
            }
        }
    }
    out
}

/// `mechanism,size,metric,status,reason,run,copies`.
fn lead(row: &IpcRow, metric: &str, status: Status, reason: Option<&str>, run: String) -> String {
    format!(
        "{},{},{metric},{},{},{run},{}",
        row.mechanism,
        row.size,
        status_word(status),
        field(reason.unwrap_or("")),
        row.copies
    )
}

fn stream(run: &StreamRun) -> String {
    format!(
        "{:.4},{:.1},{},{},{}",
        run.gib_s,
        run.msgs_per_s,
        run.timed_bytes,
        run.bytes,
        run.cpu_s.map(|s| format!("{s:.4}")).unwrap_or_default()
    )
}

fn trip(run: &TripRun) -> String {
    let l = &run.rtt_ns;
    format!(
        "{},{:.1},{:.1},{},{},{},{},{},{}",
        run.round_trips,
        run.round_trips_per_s,
        l.mean,
        l.p50,
        l.p90,
        l.p99,
        l.p999,
        l.max,
        run.warmup_round_trips
    )
}

fn noisy(spread: Option<Spread>) -> bool {
    spread.is_some_and(|s| s.noisy)
}

/// `steal_s,other_cpu_s,load_avg_1m,involuntary_switches,cpu_mhz`, as
/// the ladder's CSV writes them.
fn noise(n: Option<&RunNoise>) -> String {
    n.map_or_else(
        || ",,,,".to_string(),
        |n| {
            format!(
                "{:.3},{:.3},{:.2},{},{}",
                n.steal_s,
                n.other_cpu_s,
                n.load_avg_1m,
                n.involuntary_switches,
                n.cpu_mhz.map(|m| format!("{m:.0}")).unwrap_or_default()
            )
        },
    )
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
    fn every_row_has_the_header_s_columns() {
        let columns = CSV_HEADER.trim_end().split(',').count();
        assert_eq!(1 + NO_STREAM.matches(',').count(), 5);
        assert_eq!(1 + NO_TRIP.matches(',').count(), 10);
        // lead 7, stream 5, trip 10, seconds, noisy, noise 5, cpus 2.
        assert_eq!(columns, 7 + 5 + 10 + 2 + 5 + 2);
    }
}
