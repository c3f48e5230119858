//! What `compare` reads from a contend result: a row per cell of
//! writers and readers, its writes per second and p99 write latency.

use super::ContendResult;
use super::verdict::cell_name;
use crate::bench::core::compared::{
    Better, Compared, Extract, Metric, Row, Runs, Unit, ends_placement, facts, size,
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

impl Compared for ContendResult {
    fn metrics() -> &'static [Metric] {
        &[WRITES_S, WRITE_P99]
    }

    fn row_label() -> &'static str {
        "writers x readers"
    }

    fn extract(&self) -> Extract {
        let r = self;
        let rows = r.rows.iter().map(|row| Row {
            name: cell_name(row),
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
            Some(p) => match &p.command {
                Some(args) => format!("stress-ng {}", args.join(" ")),
                None => format!("{} hogs, {}% of MemAvailable", p.workers, p.share_percent),
            },
            None => "none".into(),
        };
        Extract {
            rows: rows.collect(),
            facts: facts(&self.header, ends_placement(&r.placement, "s")),
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
}

#[cfg(test)]
mod tests {
    use super::super::Cell;
    use super::super::run::cell_name;
    use crate::bench::core::compared::parse_cell_name;

    #[test]
    fn a_cell_name_reads_back() {
        let name = cell_name(Cell {
            writers: 5,
            readers: 10,
        });
        assert_eq!(name, "5x10");
        assert_eq!(parse_cell_name(&name), Some((5, 10)));
    }
}
