//! Latency distributions: HDR histograms of nanoseconds, summarised as the
//! percentiles that `latency` and `contend` report.

use std::time::Instant;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::core::stats::median;

/// The longest latency a histogram records exactly (60 s); longer ones
/// are clamped to it and show as the maximum.
pub const MAX_RECORDED_NS: u64 = 60_000_000_000;

/// A histogram of nanoseconds from 1 ns to [`MAX_RECORDED_NS`], with 3
/// significant digits (every recorded value is within 0.1% of its bucket).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_RECORDED_NS, 3).expect("bounds and precision are valid")
}

/// Records `ns` into `h`, clamped to the histogram's range.
pub fn record(h: &mut Histogram<u64>, ns: u64) {
    h.saturating_record(ns.clamp(1, MAX_RECORDED_NS));
}

/// A latency distribution in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyNs {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
}

impl LatencyNs {
    /// The summary of `h` (all zero when it is empty).
    pub fn of(h: &Histogram<u64>) -> LatencyNs {
        if h.is_empty() {
            return LatencyNs::default();
        }
        LatencyNs {
            mean: h.mean(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }
    }

    /// Field by field, the median of several runs' summaries (each
    /// percentile's median over runs, not a percentile of the pooled
    /// samples).
    pub fn median_of(runs: &[LatencyNs]) -> LatencyNs {
        let field = |f: fn(&LatencyNs) -> f64| {
            median(&runs.iter().map(f).collect::<Vec<_>>()).unwrap_or(0.0)
        };
        LatencyNs {
            mean: field(|r| r.mean),
            p50: field(|r| r.p50 as f64) as u64,
            p90: field(|r| r.p90 as f64) as u64,
            p99: field(|r| r.p99 as f64) as u64,
            p999: field(|r| r.p999 as f64) as u64,
            max: field(|r| r.max as f64) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = new_histogram();
        for ns in 1..=1000 {
            record(&mut h, ns * 1000);
        }
        let s = LatencyNs::of(&h);
        let near = |got: u64, want: u64| got.abs_diff(want) <= want / 500;
        assert!(near(s.p50, 500_000), "{s:?}");
        assert!(near(s.p90, 900_000), "{s:?}");
        assert!(near(s.p99, 990_000), "{s:?}");
        assert!(near(s.p999, 999_000), "{s:?}");
        assert!(near(s.max, 1_000_000), "{s:?}");
        assert!((s.mean - 500_500.0).abs() < 1000.0, "{s:?}");
    }

    #[test]
    fn out_of_range_values_are_clamped_not_lost() {
        let mut h = new_histogram();
        record(&mut h, 0);
        record(&mut h, u64::MAX);
        assert_eq!(h.len(), 2);
        assert!(LatencyNs::of(&h).max >= MAX_RECORDED_NS);
        assert_eq!(LatencyNs::of(&new_histogram()), LatencyNs::default());
    }

    #[test]
    fn the_median_of_runs_is_taken_per_field() {
        let run = |p50, max| LatencyNs {
            p50,
            max,
            ..LatencyNs::default()
        };
        let m = LatencyNs::median_of(&[run(10, 900), run(30, 100), run(20, 500)]);
        assert_eq!((m.p50, m.max), (20, 500));
    }
}

/// One measured run of round trips, `latency`'s and `ipc`'s alike.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TripRun {
    /// Round trips measured (warm-up excluded).
    pub round_trips: u64,
    /// Seconds from the first measured round trip's start to the last
    /// one's end.
    pub seconds: f64,
    /// `round_trips / seconds`.
    pub round_trips_per_s: f64,
    /// The round-trip times.
    pub rtt_ns: LatencyNs,
    /// Round trips made before measuring.
    pub warmup_round_trips: u64,
    /// What else the machine did meanwhile (`None`: not measured, or
    /// recorded with the row's series instead).
    #[serde(default)]
    pub noise: Option<crate::sys::RunNoise>,
}

/// A pinger's measured round trips as they are made: what `latency`'s
/// and `ipc`'s ping loops share, which differ in how they send and when
/// they stop. Recording allocates nothing.
pub(crate) struct Trips {
    histogram: Histogram<u64>,
    first: Option<Instant>,
    end: Instant,
    count: u64,
}

impl Trips {
    /// None yet, measuring from `begin`.
    pub(crate) fn new(begin: Instant) -> Trips {
        Trips {
            histogram: new_histogram(),
            first: None,
            end: begin,
            count: 0,
        }
    }

    /// A round trip that started at `start` and ended at `stop`.
    pub(crate) fn record(&mut self, start: Instant, stop: Instant) {
        self.first.get_or_insert(start);
        self.end = stop;
        let ns = u64::try_from((stop - start).as_nanos()).unwrap_or(u64::MAX);
        record(&mut self.histogram, ns);
        self.count += 1;
    }

    /// Round trips recorded.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// When the last one ended (the beginning, before the first).
    pub(crate) fn end(&self) -> Instant {
        self.end
    }

    /// The run: from the first round trip's start to the last one's end.
    pub(crate) fn finish(self, warmup_round_trips: u64) -> TripRun {
        let seconds = (self.end - self.first.unwrap_or(self.end)).as_secs_f64();
        TripRun {
            round_trips: self.count,
            seconds,
            round_trips_per_s: if seconds > 0.0 {
                self.count as f64 / seconds
            } else {
                0.0
            },
            rtt_ns: LatencyNs::of(&self.histogram),
            warmup_round_trips,
            noise: None,
        }
    }
}
