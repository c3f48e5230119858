//! What an `ipc` measurement found, as `ipc --json` writes it.
use crate::bench::core::{Stall, Status};

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::super::core::noise::NoiseSummary;
use super::super::core::series::Series;
use super::super::core::stats::median;
use super::super::hist::LatencyNs;
use super::job::IpcConfig;
use super::mechanism::Mechanism;
pub use super::record::{StreamRun, TripRun};
use crate::bench::core::document::Document;
use crate::bench::core::harness::Header;
use crate::units::GIB;

/// The `schema` of [`IpcResult`] documents.
pub const SCHEMA: &str = "pipespeed.ipc/2";

/// The schema before each metric was a [`Series`] (flat `runs_gib_s`,
/// `median_gib_s`, ... fields): still read.
pub const SCHEMA_V1: &str = "pipespeed.ipc/1";

mod v1;
pub(crate) mod verdict;

pub use verdict::Verdict;

/// Throughput of one mechanism at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Whether it ran.
    pub status: Status,
    /// Why it did not run, or failed.
    pub reason: Option<String>,
    /// Where both ends were when one stalled (`None`: no stall).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<Stall>,
    /// Bytes per measured run.
    pub bytes_per_run: u64,
    /// The warm-up run's rate, in GiB/s.
    pub warmup_gib_s: Option<f64>,
    /// Every measured run's rate in GiB/s, in the order run, and their
    /// statistics.
    pub gib_s: Series,
    /// Every measured run, in the order run.
    pub runs: Vec<StreamRun>,
    /// Messages per second at the median rate.
    pub median_msgs_per_s: Option<f64>,
    /// CPU seconds of both ends per GiB moved, over all measured runs.
    pub cpu_s_per_gib: Option<f64>,
}

/// Round trips of one mechanism at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundTrips {
    /// Whether it ran.
    pub status: Status,
    /// Why it did not run, or failed.
    pub reason: Option<String>,
    /// Where both ends were when one stalled (`None`: no stall).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<Stall>,
    /// Every measured run's median round trip (p50) in nanoseconds, in
    /// the order run, and their statistics.
    pub p50_ns: Series,
    /// Every measured run, in the order run.
    pub runs: Vec<TripRun>,
    /// Field by field, the median over runs of the round-trip summaries.
    pub rtt_ns: Option<LatencyNs>,
    /// The median over runs of round trips per second.
    pub round_trips_per_s: Option<f64>,
}

/// One mechanism at one message size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpcRow {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// Bytes per message.
    pub size: usize,
    /// Bytes the CPU copies per byte moved, by design.
    pub copies: u32,
    /// Where its cost goes, in one sentence.
    pub cost: String,
    /// Throughput (`None`: not asked for).
    pub throughput: Option<Throughput>,
    /// Round trips (`None`: not asked for).
    pub latency: Option<RoundTrips>,
}

/// Everything an `ipc` measurement found, with what it was asked; read
/// from documents of [`SCHEMA`] and of [`SCHEMA_V1`]. Its document also
/// has the [`Verdict`] of its rows, worked out again when read back.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Value")]
pub struct IpcResult {
    /// The format, the pipespeed that measured and the machine.
    #[serde(flatten)]
    pub header: Header,
    /// What was asked (its fields are the document's).
    #[serde(flatten)]
    pub config: IpcConfig,
    /// Steal and other load over all the measured runs.
    pub noise: Option<NoiseSummary>,
    /// One per mechanism and size, in the order asked.
    pub rows: Vec<IpcRow>,
}

/// The fields, then the verdict the rows give.
impl Serialize for IpcResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Document::new(&self.header, &self.config, &self.rows, self.verdict())
            .noise(self.noise)
            .serialize(s)
    }
}

impl Throughput {
    /// A row that has not run yet.
    pub fn new() -> Throughput {
        Throughput {
            status: Status::Ok,
            reason: None,
            stall: None,
            bytes_per_run: 0,
            warmup_gib_s: None,
            gib_s: Series::new(),
            runs: Vec::new(),
            median_msgs_per_s: None,
            cpu_s_per_gib: None,
        }
    }

    /// Sets the rate series (its diagnosis kept), the message rate and
    /// the CPU cost from the runs of messages of `size` bytes.
    pub fn summarize(&mut self, size: usize) {
        self.gib_s.runs = self.runs.iter().map(|r| r.gib_s).collect();
        self.gib_s.noise = self.runs.iter().filter_map(|r| r.noise).collect();
        self.gib_s.summarize();
        self.median_msgs_per_s = (self.gib_s.median).map(|g| g * GIB as f64 / size.max(1) as f64);
        let measured: Vec<(f64, u64)> = self
            .runs
            .iter()
            .filter_map(|r| r.cpu_s.map(|s| (s, r.bytes)))
            .collect();
        let bytes: u64 = measured.iter().map(|(_, b)| b).sum();
        let cpu: f64 = measured.iter().map(|(s, _)| s).sum();
        self.cpu_s_per_gib = (bytes > 0).then(|| cpu / (bytes as f64 / GIB as f64));
    }
}

impl Default for Throughput {
    fn default() -> Throughput {
        Throughput::new()
    }
}

impl RoundTrips {
    /// A row that has not run yet.
    pub fn new() -> RoundTrips {
        RoundTrips {
            status: Status::Ok,
            reason: None,
            stall: None,
            p50_ns: Series::new(),
            runs: Vec::new(),
            rtt_ns: None,
            round_trips_per_s: None,
        }
    }

    /// Sets the p50 series (its diagnosis kept) and the medians from the
    /// runs.
    pub fn summarize(&mut self) {
        self.p50_ns.runs = self.runs.iter().map(|r| r.rtt_ns.p50 as f64).collect();
        self.p50_ns.noise = self.runs.iter().filter_map(|r| r.noise).collect();
        self.p50_ns.summarize();
        let rates: Vec<f64> = self.runs.iter().map(|r| r.round_trips_per_s).collect();
        let summaries: Vec<LatencyNs> = self.runs.iter().map(|r| r.rtt_ns).collect();
        self.rtt_ns = (!summaries.is_empty()).then(|| LatencyNs::median_of(&summaries));
        self.round_trips_per_s = median(&rates);
    }
}

impl Default for RoundTrips {
    fn default() -> RoundTrips {
        RoundTrips::new()
    }
}

impl TryFrom<Value> for IpcResult {
    type Error = serde_json::Error;

    /// A document of this schema, or of [`SCHEMA_V1`].
    fn try_from(doc: Value) -> Result<IpcResult, serde_json::Error> {
        use serde::de::Error;
        let header: Header = serde_json::from_value(doc.clone())?;
        let config: IpcConfig = serde_json::from_value(doc.clone())?;
        let field = |name: &'static str| {
            doc.get(name)
                .cloned()
                .ok_or_else(|| serde_json::Error::missing_field(name))
        };
        let noise = serde_json::from_value(field("noise")?)?;
        let rows = if header.schema == SCHEMA_V1 {
            let rows: Vec<v1::Row> = serde_json::from_value(field("rows")?)?;
            rows.into_iter().map(IpcRow::from).collect()
        } else {
            serde_json::from_value(field("rows")?)?
        };
        Ok(IpcResult {
            header,
            config,
            noise,
            rows,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(gib_s: f64, cpu_s: Option<f64>) -> StreamRun {
        StreamRun {
            timed_bytes: GIB,
            seconds: 1.0 / gib_s,
            gib_s,
            msgs_per_s: 0.0,
            cpu_s,
            bytes: GIB,
            noise: None,
        }
    }

    #[test]
    fn throughput_takes_the_median_and_the_cpu_of_the_runs_that_measured_it() {
        let mut t = Throughput::new();
        t.runs = vec![
            stream(2.0, Some(1.0)),
            stream(4.0, None),
            stream(3.0, Some(0.5)),
        ];
        t.summarize(64 << 10);
        assert_eq!(t.gib_s.median, Some(3.0));
        assert_eq!((t.gib_s.min, t.gib_s.max), (Some(2.0), Some(4.0)));
        assert_eq!(t.gib_s.runs, vec![2.0, 4.0, 3.0]);
        // 3 GiB/s of 64 KiB messages: 3 * 16384 messages a second.
        assert_eq!(t.median_msgs_per_s, Some(3.0 * 16384.0));
        // 1.5 CPU seconds over the 2 GiB of the runs that measured it.
        assert_eq!(t.cpu_s_per_gib, Some(0.75));
        assert!(t.gib_s.spread.is_some());
    }

    #[test]
    fn round_trips_take_medians_of_the_runs() {
        let run = |p50: u64, rate: f64| TripRun {
            round_trips: 10,
            seconds: 10.0 / rate,
            round_trips_per_s: rate,
            rtt_ns: LatencyNs {
                p50,
                p99: 2 * p50,
                ..LatencyNs::default()
            },
            warmup_round_trips: 1,
            noise: None,
        };
        let mut r = RoundTrips::new();
        r.summarize();
        assert_eq!((r.rtt_ns, r.round_trips_per_s), (None, None));
        r.runs = vec![run(10, 100.0), run(30, 30.0), run(20, 50.0)];
        r.summarize();
        assert_eq!(r.rtt_ns.map(|l| (l.p50, l.p99)), Some((20, 40)));
        assert_eq!(r.round_trips_per_s, Some(50.0));
        assert_eq!(r.p50_ns.runs, vec![10.0, 30.0, 20.0]);
        assert_eq!(r.p50_ns.median, Some(20.0));
    }
}
