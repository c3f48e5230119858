//! What `compare` compares in each kind of result: its rows, the metrics
//! of a row with each run's value, the machine's facts and the
//! measurement's settings.
//!
//! The metrics are the ones each command leads with: the ladder's rate
//! per rung; the round trip's median and tail (p50, p99) and round trips
//! per second per message size; writes per second and the p99 write
//! latency per cell of writers and readers; the rate and the round
//! trip's median per mechanism and message size of `ipc`.
use crate::bench::core::{NoiseSummary, Status};

use serde::Serialize;

use crate::build_info::BuildInfo;

use crate::bench::contend::ContendResult;
use crate::bench::hist::LatencyNs;
use crate::bench::ipc::IpcResult;
use crate::bench::ladder::LadderResult;
use crate::bench::latency::{LatencyResult, Span, describe};
use crate::sys::SystemFacts;
use crate::units::Size;

use super::load::{Document, Kind};

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// A rate: more is faster.
    Higher,
    /// A latency: less is faster.
    Lower,
}

/// What a metric's values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// GiB (2^30 bytes) per second.
    GibPerS,
    /// Nanoseconds.
    Nanoseconds,
    /// Events (round trips, writes) per second.
    PerSecond,
}

/// One thing measured per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// Its name in the output.
    pub name: &'static str,
    /// What its values are.
    pub unit: Unit,
    /// Which way is faster.
    pub better: Better,
}

const GIB_S: Metric = Metric {
    name: "GiB/s",
    unit: Unit::GibPerS,
    better: Better::Higher,
};
const RTT_P50: Metric = Metric {
    name: "round trip p50",
    unit: Unit::Nanoseconds,
    better: Better::Lower,
};
const RTT_P99: Metric = Metric {
    name: "round trip p99",
    unit: Unit::Nanoseconds,
    better: Better::Lower,
};
const ROUND_TRIPS_S: Metric = Metric {
    name: "round trips/s",
    unit: Unit::PerSecond,
    better: Better::Higher,
};
const WRITES_S: Metric = Metric {
    name: "writes/s",
    unit: Unit::PerSecond,
    better: Better::Higher,
};
const WRITE_P99: Metric = Metric {
    name: "write latency p99",
    unit: Unit::Nanoseconds,
    better: Better::Lower,
};

impl Kind {
    /// The metrics compared, in the order shown.
    pub fn metrics(self) -> &'static [Metric] {
        match self {
            Kind::Bench => &[GIB_S],
            Kind::Latency => &[RTT_P50, RTT_P99, ROUND_TRIPS_S],
            Kind::Contend => &[WRITES_S, WRITE_P99],
            Kind::Ipc => &[GIB_S, RTT_P50],
        }
    }

    /// What a row is, as a column heading.
    pub fn row_label(self) -> &'static str {
        match self {
            Kind::Bench => "rung",
            Kind::Latency => "size",
            Kind::Contend => "writers x readers",
            Kind::Ipc => "mechanism size",
        }
    }
}

/// A row's runs: per metric of its kind, each run's value, or why it has
/// none.
#[derive(Debug, Clone, PartialEq)]
pub enum Runs {
    /// One vector per metric, one value per run.
    Measured(Vec<Vec<f64>>),
    /// Nothing was measured, and why.
    None(String),
    /// Per metric, its runs or why it has none: a row whose metrics ran
    /// apart (`ipc`'s throughput and round trips).
    Each(Vec<Result<Vec<f64>, String>>),
}

/// One row of a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The rung, the message size or the cell.
    pub name: String,
    /// Its runs.
    pub runs: Runs,
}

/// Everything `compare` takes from one result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Extract {
    /// The rows, in the file's order.
    pub rows: Vec<Row>,
    /// The machine's facts (and the placement, and the version), by name.
    pub facts: Vec<(String, String)>,
    /// The measurement's settings, by name.
    pub settings: Vec<(String, String)>,
    /// Things to warn about in this file alone.
    pub notes: Vec<String>,
}

/// The rows, facts, settings and notes of `doc`.
pub fn extract(doc: &Document) -> Extract {
    let (mut out, header) = match doc {
        Document::Bench(r) => (bench(r), &r.header),
        Document::Latency(r) => (latency(r), &r.header),
        Document::Contend(r) => (contend(r), &r.header),
        Document::Ipc(r) => (ipc(r), &r.header),
    };
    let interrupted = header.interrupted;
    out.facts.extend(build_facts(header.build.as_ref()));
    if interrupted {
        out.notes.push(
            "interrupted by SIGINT, SIGTERM or SIGHUP: it holds only the runs made before"
                .to_string(),
        );
    }
    out
}

fn bench(r: &LadderResult) -> Extract {
    let mut out = Extract {
        facts: facts(
            &r.header.pipespeed_version,
            &r.header.system,
            ladder_placement(&r.placement, ""),
        ),
        settings: vec![("verify".into(), r.verify.to_string())],
        ..Extract::default()
    };
    for rung in &r.rungs {
        let name = rung.name.name().to_string();
        let reason = rung.reason.as_deref().unwrap_or("no reason given");
        let status = name_of(rung.status);
        let runs = if rung.gib_s.runs.is_empty() {
            Runs::None(format!("{status}: {reason}"))
        } else {
            if rung.status != Status::Ok {
                out.notes.push(format!(
                    "rung {name} {status} after {} runs ({reason}); those runs are compared",
                    rung.gib_s.runs.len()
                ));
            }
            Runs::Measured(vec![rung.gib_s.runs.clone()])
        };
        let pipe = rung.pipe_size.map_or("kernel default".into(), size);
        out.settings
            .push((format!("buf_size of {name}"), size(rung.buf_size)));
        out.settings.push((format!("pipe_size of {name}"), pipe));
        // A rung measured in a placement of its own (bench/3: the rungs
        // that block, where one CPU was faster): against one measured in
        // the ladder's, its ratio is the placement's.
        let own = match rung.placement {
            Some(p) if p != r.placement => ladder_placement(&p, ""),
            _ => "the ladder's".to_string(),
        };
        out.settings.push((format!("placement of {name}"), own));
        out.rows.push(Row { name, runs });
    }
    out
}

fn latency(r: &LatencyResult) -> Extract {
    let c = &r.config;
    let mut notes = Vec::new();
    let rows = r.rows.iter().map(|row| {
        let pick = |f: fn(&LatencyNs) -> u64| row.runs.iter().map(move |run| f(&run.rtt_ns) as f64);
        let name = size(row.size);
        let reason = row.reason.as_deref().unwrap_or("no reason given");
        let status = name_of(row.status);
        let runs = if row.runs.is_empty() {
            Runs::None(match row.status {
                Status::Ok => "no runs".into(),
                _ => format!("{status}: {reason}"),
            })
        } else {
            if row.status != Status::Ok {
                notes.push(format!(
                    "size {name} {status} after {} runs ({reason}); those runs are compared",
                    row.runs.len()
                ));
            }
            Runs::Measured(vec![
                pick(|l| l.p50).collect(),
                pick(|l| l.p99).collect(),
                row.runs.iter().map(|run| run.round_trips_per_s).collect(),
            ])
        };
        Row { name, runs }
    });
    let rows = rows.collect();
    Extract {
        rows,
        facts: facts(
            &r.header.pipespeed_version,
            &r.header.system,
            describe(c.placement),
        ),
        settings: vec![
            ("mode".into(), name_of(c.mode)),
            ("wait".into(), name_of(c.wait)),
            ("verify".into(), c.verify.to_string()),
            ("measure".into(), span(c.measure)),
            ("warmup".into(), span(c.warmup)),
        ],
        notes,
    }
}

/// A contend row's name: `WxR`, writers by readers.
pub fn cell_name(writers: usize, readers: usize) -> String {
    format!("{writers}x{readers}")
}

/// The writers and readers of a contend row's name (`WxR`), or `None`
/// for a name [`cell_name`] does not make.
pub fn parse_cell_name(name: &str) -> Option<(usize, usize)> {
    let (writers, readers) = name.split_once('x')?;
    Some((writers.parse().ok()?, readers.parse().ok()?))
}

fn contend(r: &ContendResult) -> Extract {
    let rows = r.rows.iter().map(|row| Row {
        name: cell_name(row.writers, row.readers),
        runs: if row.runs.is_empty() {
            Runs::None(row.reason.clone().unwrap_or_else(|| "no runs".into()))
        } else {
            Runs::Measured(vec![
                row.runs.iter().map(|run| run.writes_per_s).collect(),
                row.runs
                    .iter()
                    .map(|run| run.write_latency_ns.p99 as f64)
                    .collect(),
            ])
        },
    });
    let verify = r.rows.iter().any(|row| row.verify.is_some());
    let pressure = match &r.memory_pressure {
        Some(p) => format!("{} hogs, {}% of MemAvailable", p.workers, p.share_percent),
        None => "none".into(),
    };
    Extract {
        rows: rows.collect(),
        facts: facts(
            &r.header.pipespeed_version,
            &r.header.system,
            ladder_placement(&r.placement, "s"),
        ),
        settings: vec![
            ("mode".into(), r.mode.to_string()),
            ("msg_size".into(), size(r.msg_size)),
            ("pipe_size".into(), size(r.pipe_size)),
            ("duration_s".into(), r.duration_s.to_string()),
            ("verify".into(), verify.to_string()),
            ("memory pressure".into(), pressure),
        ],
        notes: Vec::new(),
    }
}

/// An `ipc` row's name: the mechanism and the message size, `pipe 64KiB`.
fn ipc_row_name(mechanism: &str, size: usize) -> String {
    format!("{mechanism} {}", Size(size as u64))
}

fn ipc(r: &IpcResult) -> Extract {
    let c = &r.config;
    let mut notes = Vec::new();
    // A metric's runs, or why it has none; a metric that stopped after
    // some runs is compared on them, with a note.
    let mut metric =
        |row: &str, what: &str, status: Status, reason: Option<&str>, runs: Vec<f64>| {
            let why = format!(
                "{}: {}",
                name_of(status),
                reason.unwrap_or("no reason given")
            );
            match (status, runs.is_empty()) {
                (Status::Ok, true) => Err("no runs".to_string()),
                (Status::Ok, false) => Ok(runs),
                (_, true) => Err(why),
                (_, false) => {
                    notes.push(format!(
                        "{row} {what} {why} after {} runs; those runs are compared",
                        runs.len()
                    ));
                    Ok(runs)
                }
            }
        };
    let mut rows = Vec::new();
    for row in &r.rows {
        let name = ipc_row_name(row.mechanism.name(), row.size);
        let throughput = match &row.throughput {
            Some(t) => metric(
                &name,
                "throughput",
                t.status,
                t.reason.as_deref(),
                t.gib_s.runs.clone(),
            ),
            None => Err("not measured".to_string()),
        };
        let latency = match &row.latency {
            Some(l) => metric(
                &name,
                "round trip",
                l.status,
                l.reason.as_deref(),
                l.p50_ns.runs.clone(),
            ),
            None => Err("not measured".to_string()),
        };
        rows.push(Row {
            name,
            runs: Runs::Each(vec![throughput, latency]),
        });
    }
    let placement = match c.placement {
        crate::bench::core::Placement::Pinned {
            writer_cpu,
            reader_cpu,
        } => format!("sender on CPU {writer_cpu}, receiver on CPU {reader_cpu}"),
        crate::bench::core::Placement::Unpinned => "unpinned".into(),
    };
    Extract {
        rows,
        facts: facts(&r.header.pipespeed_version, &r.header.system, placement),
        settings: vec![
            ("verify".into(), c.verify.to_string()),
            ("duration_s".into(), c.duration_s.to_string()),
            (
                "bytes".into(),
                c.bytes
                    .map_or("from duration_s".into(), |b| Size(b).to_string()),
            ),
        ],
        notes,
    }
}

/// What else the machine did during `doc`'s runs, where it records it.
///
/// A function beside [`extract`] rather than a field of [`Extract`], so
/// that the kinds' extractors stay as they are.
pub fn noise(doc: &Document) -> Option<NoiseSummary> {
    match doc {
        Document::Bench(r) => r.noise,
        Document::Ipc(r) => r.noise,
        Document::Latency(r) => r.noise(),
        Document::Contend(r) => r.noise,
    }
}

/// The build facts that differ only between two builds worth telling
/// apart: the commit (expected to differ, shown not warned about), the
/// profile and the compiler (a debug build or another rustc explains a
/// difference on its own). [`NOT_RECORDED`] in files written before the
/// build was recorded.
fn build_facts(build: Option<&BuildInfo>) -> Vec<(String, String)> {
    let field = |f: fn(&BuildInfo) -> &str| build.map_or(NOT_RECORDED.to_string(), |b| f(b).into());
    vec![
        ("commit".into(), field(|b| &b.commit)),
        ("profile".into(), field(|b| &b.profile)),
        ("compiler".into(), field(|b| &b.rustc)),
    ]
}

/// The facts expected to differ between base and patched: shown, not
/// warned about.
pub const EXPECTED_TO_DIFFER: [&str; 1] = ["commit"];

/// The value of a fact the file does not record: `virtualization` in
/// files written before it was measured. A fact neither file records is
/// left out of the comparison.
pub const NOT_RECORDED: &str = "not recorded";

/// The facts every result carries, in a fixed order.
fn facts(version: &str, s: &SystemFacts, placement: String) -> Vec<(String, String)> {
    let allowed: Vec<String> = s.cpus_allowed.iter().map(|c| c.to_string()).collect();
    [
        ("pipespeed_version", version.to_string()),
        ("kernel", s.kernel.clone()),
        ("arch", s.arch.clone()),
        ("cpu_model", s.cpu_model.clone()),
        ("cpus_online", s.cpus_online.to_string()),
        ("cpus_allowed", allowed.join(",")),
        (
            "virtualization",
            (s.virtualization.as_deref().unwrap_or(NOT_RECORDED)).to_string(),
        ),
        ("thp", s.thp.to_string()),
        ("pipe_max_size_bytes", s.pipe_max_size_bytes.to_string()),
        ("page_size_bytes", s.page_size_bytes.to_string()),
        ("placement", placement),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The ladder's placement; `plural` is `"s"` for contend's many ends.
fn ladder_placement(p: &crate::bench::core::Placement, plural: &str) -> String {
    match p {
        crate::bench::core::Placement::Pinned {
            writer_cpu,
            reader_cpu,
        } => format!("writer{plural} on CPU {writer_cpu}, reader{plural} on CPU {reader_cpu}"),
        crate::bench::core::Placement::Unpinned => "unpinned".into(),
    }
}

fn size(bytes: usize) -> String {
    Size(bytes as u64).to_string()
}

fn span(s: Span) -> String {
    match s {
        Span::RoundTrips(n) => format!("{n} round trips"),
        Span::Seconds(s) => format!("{s} s"),
    }
}

/// The name serde gives a unit variant (`threads`, `busy-poll`).
fn name_of(value: impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_metrics_in_both_directions_or_one() {
        assert_eq!(Kind::Bench.metrics(), &[GIB_S]);
        let latency = Kind::Latency.metrics();
        assert!(latency.iter().any(|m| m.better == Better::Lower));
        assert!(latency.iter().any(|m| m.better == Better::Higher));
        assert_eq!(Kind::Contend.metrics().len(), 2);
        assert_eq!(Kind::Ipc.metrics(), &[GIB_S, RTT_P50]);
    }

    #[test]
    fn names_read_as_on_the_command_line() {
        assert_eq!(name_of(crate::wait::Wait::BusyPoll), "busy-poll");
        assert_eq!(span(Span::RoundTrips(5)), "5 round trips");
        assert_eq!(span(Span::Seconds(0.5)), "0.5 s");
        assert_eq!(size(65536), "64KiB");
        let pinned = crate::bench::core::Placement::Pinned {
            writer_cpu: 0,
            reader_cpu: 1,
        };
        assert_eq!(
            ladder_placement(&pinned, "s"),
            "writers on CPU 0, readers on CPU 1"
        );
    }

    #[test]
    fn a_cell_name_reads_back() {
        assert_eq!(cell_name(5, 10), "5x10");
        assert_eq!(parse_cell_name(&cell_name(5, 10)), Some((5, 10)));
        for bad in ["5", "x10", "5x", "axb", "5x10x1", ""] {
            assert_eq!(parse_cell_name(bad), None, "{bad}");
        }
    }
}
