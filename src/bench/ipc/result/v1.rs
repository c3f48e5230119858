//! The rows of a `pipespeed.ipc/1` document, read into today's types:
//! each metric's flat fields (`runs_gib_s`, `median_gib_s`, `spread`,
//! ...) become its series.

use serde::Deserialize;

use super::super::super::core::Status;
use super::super::super::core::noise::{Diagnosis, Spread};
use super::super::super::core::series::Series;
use super::super::super::hist::LatencyNs;
use super::super::mechanism::Mechanism;
use super::{IpcRow, RoundTrips, StreamRun, Throughput, TripRun};

/// A row as `/1` wrote it.
#[derive(Deserialize)]
pub(super) struct Row {
    mechanism: Mechanism,
    size: usize,
    copies: u32,
    cost: String,
    throughput: Option<ThroughputV1>,
    latency: Option<RoundTripsV1>,
}

#[derive(Deserialize)]
struct ThroughputV1 {
    status: Status,
    reason: Option<String>,
    bytes_per_run: u64,
    warmup_gib_s: Option<f64>,
    runs_gib_s: Vec<f64>,
    runs: Vec<StreamRun>,
    median_gib_s: Option<f64>,
    median_msgs_per_s: Option<f64>,
    min_gib_s: Option<f64>,
    max_gib_s: Option<f64>,
    spread: Option<Spread>,
    diagnosis: Option<Diagnosis>,
    cpu_s_per_gib: Option<f64>,
}

#[derive(Deserialize)]
struct RoundTripsV1 {
    status: Status,
    reason: Option<String>,
    runs: Vec<TripRun>,
    rtt_ns: Option<LatencyNs>,
    round_trips_per_s: Option<f64>,
    spread: Option<Spread>,
    diagnosis: Option<Diagnosis>,
}

impl From<Row> for IpcRow {
    fn from(r: Row) -> IpcRow {
        IpcRow {
            mechanism: r.mechanism,
            size: r.size,
            copies: r.copies,
            cost: r.cost,
            throughput: r.throughput.map(|t| Throughput {
                status: t.status,
                reason: t.reason,
                stall: None,
                bytes_per_run: t.bytes_per_run,
                warmup_gib_s: t.warmup_gib_s,
                gib_s: Series {
                    noise: t.runs.iter().filter_map(|r| r.noise).collect(),
                    runs: t.runs_gib_s,
                    median: t.median_gib_s,
                    min: t.min_gib_s,
                    max: t.max_gib_s,
                    spread: t.spread,
                    diagnosis: t.diagnosis,
                },
                runs: t.runs,
                median_msgs_per_s: t.median_msgs_per_s,
                cpu_s_per_gib: t.cpu_s_per_gib,
            }),
            latency: r.latency.map(|l| {
                // `/1` kept the p50s' spread, not their median or range.
                let p50s: Vec<f64> = l.runs.iter().map(|r| r.rtt_ns.p50 as f64).collect();
                let mut p50_ns = Series::of(&p50s);
                p50_ns.noise = l.runs.iter().filter_map(|r| r.noise).collect();
                p50_ns.spread = l.spread;
                p50_ns.diagnosis = l.diagnosis;
                RoundTrips {
                    status: l.status,
                    reason: l.reason,
                    stall: None,
                    p50_ns,
                    runs: l.runs,
                    rtt_ns: l.rtt_ns,
                    round_trips_per_s: l.round_trips_per_s,
                }
            }),
        }
    }
}
