//! The ladder as CSV: one row per measured run, for spreadsheets and
//! plotting scripts.

use std::io;

use super::super::{Csv, Exporter};
use super::status_word;
use crate::bench::ladder::LadderResult;

/// One row per run: `rung,status,run,gib_s,bytes_per_run,buf_size,pipe_size,copies`,
/// then the rung's cost per GiB over all its measured runs (the same on
/// each of its rows; empty when not measured):
/// `user_s_per_gib,system_s_per_gib,context_switches_per_gib,page_faults_per_gib`,
/// then `part` (`ladder`, or `placement-check` for the runs of the
/// baseline in each placement), `placement` (`same-cpu`,
/// `different-cpu`, `unpinned`), `noisy` (the rung's, `true`/`false`) and
/// the run's noise: `steal_s,other_cpu_s,load_avg_1m,involuntary_switches,cpu_mhz`.
/// A rung without runs has one row with an empty `run` and `gib_s`.
impl Exporter<LadderResult> for Csv {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let mut out = String::from(CSV_HEADER);
        out += &csv_rows(result)?;
        Ok(out.into_bytes())
    }
}

/// The first line of the ladder's CSV.
pub(in crate::report) const CSV_HEADER: &str = "rung,status,run,gib_s,bytes_per_run,buf_size,pipe_size,copies,\
     user_s_per_gib,system_s_per_gib,context_switches_per_gib,page_faults_per_gib,\
     part,placement,noisy,steal_s,other_cpu_s,load_avg_1m,involuntary_switches,cpu_mhz\n";

/// The ladder's CSV rows, without the header.
pub(in crate::report) fn csv_rows(result: &LadderResult) -> io::Result<String> {
    let mut out = String::new();
    let placement = result.placement.kind();
    for r in &result.rungs {
        let status = status_word(r.status);
        let pipe = r.pipe_size.map(|p| p.to_string()).unwrap_or_default();
        let cost = r.cost.map_or_else(
            || ",,,".to_string(),
            |c| {
                format!(
                    "{:.4},{:.4},{:.1},{:.1}",
                    c.user_s_per_gib,
                    c.system_s_per_gib,
                    c.context_switches_per_gib,
                    c.page_faults_per_gib
                )
            },
        );
        let tail = format!(
            "{},{},{},{},{cost},ladder,{placement},{}",
            r.bytes_per_run,
            r.buf_size,
            pipe,
            r.copies,
            r.noisy()
        );
        if r.runs_gib_s.is_empty() {
            out += &format!("{},{status},,,{tail},,,,,\n", r.name);
        }
        for (i, gib_s) in r.runs_gib_s.iter().enumerate() {
            let noise = r.runs_noise.get(i).map_or_else(
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
            );
            out += &format!("{},{status},{},{gib_s:.4},{tail},{noise}\n", r.name, i + 1);
        }
    }
    if let Some(check) = &result.placement_check {
        for row in &check.rows {
            let status = status_word(row.status);
            let tail = format!(",,,,,,,,,placement-check,{},,,,,,", row.kind);
            if row.runs_gib_s.is_empty() {
                out += &format!("{},{status},,{tail}\n", check.rung);
            }
            for (i, gib_s) in row.runs_gib_s.iter().enumerate() {
                out += &format!("{},{status},{},{gib_s:.4}{tail}\n", check.rung, i + 1);
            }
        }
    }
    Ok(out)
}
