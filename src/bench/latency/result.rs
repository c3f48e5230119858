//! What a latency measurement found: a row per message size, as
//! `latency --json` writes it, and the `/1` documents it still reads.

use serde::{Deserialize, Deserializer, Serialize};

use super::super::core::noise::{Diagnosis, Ends, NoiseSummary};
use super::super::core::{Series, Stall, Status};
use super::super::hist::LatencyNs;
use super::super::hist::TripRun;
use super::job::LatencyConfig;
use crate::bench::core::harness::Header;

/// The `schema` of [`LatencyResult`] documents.
pub const SCHEMA: &str = "pipespeed.latency/2";

/// The schema of the documents before the rows were made of series
/// (`spread` as ranges, no status, no noise); they still load.
pub const SCHEMA_V1: &str = "pipespeed.latency/1";

/// The result of one message size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyRow {
    /// Bytes per message.
    pub size: usize,
    /// Whether every run measured (`failed`: a run failed, the runs
    /// before it are kept).
    pub status: Status,
    /// Why a run failed.
    pub reason: Option<String>,
    /// Each run's median round trip, in ns, with its spread, the
    /// machine's noise during each run and, when noisy, the diagnosis:
    /// the series the runs were scheduled by (more runs while it is wide).
    pub rtt_p50_ns: Series,
    /// Each run's round trips per second, with its spread.
    pub round_trips_per_s: Series,
    /// Field by field, the median over runs of the round-trip summaries
    /// (zeros without a run).
    pub rtt_ns: LatencyNs,
    /// Every run, in the order made.
    pub runs: Vec<TripRun>,
    /// Where both sides were when the watchdog failed the size's run:
    /// one made no progress for `--stall-timeout` (`None`: no stall).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<Stall>,
}

impl LatencyRow {
    /// The row of `size` summarising `runs`, all of which measured (no
    /// noise recorded).
    pub fn summarize(size: usize, runs: Vec<TripRun>) -> LatencyRow {
        let p50s: Vec<f64> = runs.iter().map(|r| r.rtt_ns.p50 as f64).collect();
        LatencyRow::of(
            size,
            Status::Ok,
            None,
            Series::of(&p50s),
            runs,
            Ends::default(),
        )
    }

    /// The row of `size` whose runs `runs` gave the series `rtt_p50_ns`
    /// (with their noise); the rate's series is diagnosed from the same
    /// noise, for ends placed as `ends`.
    pub fn of(
        size: usize,
        status: Status,
        reason: Option<String>,
        mut rtt_p50_ns: Series,
        runs: Vec<TripRun>,
        ends: Ends,
    ) -> LatencyRow {
        rtt_p50_ns.diagnose(ends);
        let rates: Vec<f64> = runs.iter().map(|r| r.round_trips_per_s).collect();
        let mut round_trips_per_s = Series::of(&rates);
        round_trips_per_s.diagnosis = round_trips_per_s
            .noisy()
            .then(|| Diagnosis::of(&rtt_p50_ns.noise, ends));
        let summaries: Vec<LatencyNs> = runs.iter().map(|r| r.rtt_ns).collect();
        LatencyRow {
            size,
            status,
            reason,
            rtt_p50_ns,
            round_trips_per_s,
            rtt_ns: LatencyNs::median_of(&summaries),
            runs,
            stall: None,
        }
    }

    /// Whether either series spread too much to trust its median.
    pub fn noisy(&self) -> bool {
        self.rtt_p50_ns.noisy() || self.round_trips_per_s.noisy()
    }
}

/// Everything a latency measurement found, with what it was asked. Its
/// document also has a `verdict` ([`Verdict`](super::Verdict), worked out from the rows
/// as it is written; a document read back gets it worked out again).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LatencyResult {
    /// The format, the pipespeed that measured and the machine.
    #[serde(flatten)]
    pub header: Header,
    /// What was asked (its fields are the document's).
    #[serde(flatten)]
    pub config: LatencyConfig,
    /// One per size, in the order asked.
    pub rows: Vec<LatencyRow>,
}

impl LatencyResult {
    /// Steal and other load over every measured run (`None`: not
    /// measured, as in a `/1` document).
    pub fn noise(&self) -> Option<NoiseSummary> {
        let noise = NoiseSummary::of(self.rows.iter().flat_map(|r| &r.rtt_p50_ns.noise));
        (noise.runs > 0).then_some(noise)
    }
}

/// A row of either version: `/1` rows (a rate and ranges, every run
/// measured) become rows of series without noise.
impl<'de> Deserialize<'de> for LatencyRow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LatencyRow, D::Error> {
        #[derive(Deserialize)]
        struct Now {
            size: usize,
            status: Status,
            reason: Option<String>,
            rtt_p50_ns: Series,
            round_trips_per_s: Series,
            rtt_ns: LatencyNs,
            runs: Vec<TripRun>,
            #[serde(default)]
            stall: Option<Stall>,
        }
        /// A `/1` row: its `round_trips_per_s` a number, its `spread` the
        /// ranges, which the runs give again.
        #[derive(Deserialize)]
        struct V1 {
            size: usize,
            rtt_ns: LatencyNs,
            runs: Vec<TripRun>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Any {
            Now(Box<Now>),
            V1(V1),
        }
        Ok(match Any::deserialize(d)? {
            Any::Now(r) => LatencyRow {
                size: r.size,
                status: r.status,
                reason: r.reason,
                rtt_p50_ns: r.rtt_p50_ns,
                round_trips_per_s: r.round_trips_per_s,
                rtt_ns: r.rtt_ns,
                runs: r.runs,
                stall: r.stall,
            },
            Any::V1(r) => LatencyRow {
                rtt_ns: r.rtt_ns,
                ..LatencyRow::summarize(r.size, r.runs)
            },
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn run(rate: f64, p50: u64) -> TripRun {
        TripRun {
            round_trips: 100,
            seconds: 100.0 / rate,
            round_trips_per_s: rate,
            rtt_ns: LatencyNs {
                mean: p50 as f64,
                p50,
                p90: p50 * 2,
                p99: p50 * 3,
                p999: p50 * 4,
                max: p50 * 5,
            },
            warmup_round_trips: 10,
            noise: None,
        }
    }

    #[test]
    fn rows_take_medians_and_spreads_of_runs() {
        let row = LatencyRow::summarize(64, vec![run(300.0, 10), run(100.0, 30), run(200.0, 20)]);
        assert_eq!(row.round_trips_per_s.median, Some(200.0));
        assert_eq!((row.rtt_ns.p50, row.rtt_ns.max), (20, 100));
        let p50 = &row.rtt_p50_ns;
        assert_eq!((p50.min, p50.max), (Some(10.0), Some(30.0)));
        let rate = &row.round_trips_per_s;
        assert_eq!((rate.min, rate.max), (Some(100.0), Some(300.0)));
        assert_eq!(row.runs.len(), 3);
        assert_eq!(row.status, Status::Ok);
    }

    #[test]
    fn an_injected_spread_is_noisy_and_diagnosed_a_tight_one_not() {
        let noisy = LatencyRow::summarize(1, vec![run(9000.0, 20_000), run(4000.0, 48_000)]);
        assert!(noisy.noisy() && noisy.rtt_p50_ns.noisy());
        assert!(noisy.rtt_p50_ns.diagnosis.is_some(), "{noisy:?}");
        assert!(noisy.round_trips_per_s.diagnosis.is_some(), "{noisy:?}");
        let tight = LatencyRow::summarize(
            1,
            vec![
                run(9000.0, 20_000),
                run(9050.0, 20_100),
                run(8990.0, 19_950),
            ],
        );
        assert!(!tight.noisy(), "{tight:?}");
        assert_eq!(tight.rtt_p50_ns.diagnosis, None);
    }

    #[test]
    fn a_row_reads_back_as_written() {
        let row = LatencyRow::summarize(4096, vec![run(300.0, 10), run(100.0, 30)]);
        let json = serde_json::to_string(&row).unwrap();
        let back: LatencyRow = serde_json::from_str(&json).unwrap();
        assert_eq!(back, row);
    }
}
