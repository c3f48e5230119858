//! What `compare` reads from an ipc result: a row per mechanism and
//! message size, its GiB/s and its round trip's p50, each measured apart.

use super::IpcResult;
use crate::bench::core::compared::{Compared, Extract, Metric, Row, Runs, facts};
use crate::bench::core::{Placement, Status};
use crate::report::text::serde_name;
use crate::units::Size;

/// A row's name: the mechanism and the message size, `pipe 64KiB`.
fn row_name(mechanism: &str, size: usize) -> String {
    format!("{mechanism} {}", Size(size as u64))
}

impl Compared for IpcResult {
    fn metrics() -> &'static [Metric] {
        &[Metric::GIB_S, Metric::RTT_P50]
    }

    fn row_label() -> &'static str {
        "mechanism size"
    }

    fn extract(&self) -> Extract {
        let c = &self.config;
        let mut notes = Vec::new();
        // A metric's runs, or why it has none; a metric that stopped after
        // some runs is compared on them, with a note.
        let mut metric =
            |row: &str, what: &str, status: Status, reason: Option<&str>, runs: Vec<f64>| {
                let why = format!(
                    "{}: {}",
                    serde_name(status),
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
        for row in &self.rows {
            let name = row_name(row.mechanism.name(), row.size);
            let measured = [
                (row.throughput.as_ref()).map(|t| ("throughput", t.status, &t.reason, &t.gib_s)),
                (row.latency.as_ref()).map(|l| ("round trip", l.status, &l.reason, &l.p50_ns)),
            ];
            let runs = measured.map(|m| match m {
                Some((what, status, reason, series)) => {
                    metric(&name, what, status, reason.as_deref(), series.runs.clone())
                }
                None => Err("not measured".to_string()),
            });
            rows.push(Row {
                name,
                runs: Runs::Each(runs.into()),
            });
        }
        let placement = match c.placement {
            Placement::Pinned {
                writer_cpu,
                reader_cpu,
            } => format!("sender on CPU {writer_cpu}, receiver on CPU {reader_cpu}"),
            Placement::Unpinned => "unpinned".into(),
        };
        Extract {
            rows,
            facts: facts(&self.header, placement),
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
}
