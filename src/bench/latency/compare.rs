//! What `compare` reads from a latency result: a row per message size,
//! its round trip's p50 and p99 and its round trips per second.

use super::report::span;
use super::{LatencyResult, describe};
use crate::bench::core::Status;
use crate::bench::core::compared::{
    Better, Compared, Extract, Metric, Row, Runs, Unit, facts, size,
};
use crate::bench::hist::LatencyNs;
use crate::report::text::serde_name;

/// The tail of the round trip, beside [`Metric::RTT_P50`].
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

impl Compared for LatencyResult {
    fn metrics() -> &'static [Metric] {
        &[Metric::RTT_P50, RTT_P99, ROUND_TRIPS_S]
    }

    fn row_label() -> &'static str {
        "size"
    }

    fn extract(&self) -> Extract {
        let c = &self.config;
        let mut notes = Vec::new();
        let rows = self.rows.iter().map(|row| {
            let pick =
                |f: fn(&LatencyNs) -> u64| row.runs.iter().map(move |run| f(&run.rtt_ns) as f64);
            let name = size(row.size);
            let reason = row.reason.as_deref().unwrap_or("no reason given");
            let status = serde_name(row.status);
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
            facts: facts(&self.header, describe(c.placement)),
            settings: vec![
                ("mode".into(), serde_name(c.mode)),
                ("wait".into(), serde_name(c.wait)),
                ("verify".into(), c.verify.to_string()),
                ("measure".into(), span(c.measure)),
                ("warmup".into(), span(c.warmup)),
            ],
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_and_the_rate_go_opposite_ways() {
        let metrics = LatencyResult::metrics();
        assert!(metrics.iter().any(|m| m.better == Better::Lower));
        assert!(metrics.iter().any(|m| m.better == Better::Higher));
    }

    #[test]
    fn names_read_as_on_the_command_line() {
        assert_eq!(serde_name(crate::wait::Wait::BusyPoll), "busy-poll");
        assert_eq!(span(super::super::Span::RoundTrips(5)), "5 round trips");
        assert_eq!(span(super::super::Span::Seconds(0.5)), "0.5 s");
    }
}
