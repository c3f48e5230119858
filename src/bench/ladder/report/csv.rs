//! The ladder as CSV: one row per measured run, for spreadsheets and
//! plotting scripts.

use std::io;

use super::status_word;
use crate::bench::core::Series;
use crate::bench::core::shown::{series_csv, series_csv_header};
use crate::bench::ladder::LadderResult;
use crate::report::{Csv, Exporter};

/// One row per run: `rung,status,run,gib_s,bytes_per_run,buf_size,pipe_size,copies`,
/// then the rung's cost per GiB over all its measured runs (the same on
/// each of its rows; empty when not measured):
/// `user_s_per_gib,system_s_per_gib,context_switches_per_gib,page_faults_per_gib`,
/// then `part` (`ladder`, or `placement-check` for the runs of the
/// baseline in each placement), `placement` (`same-cpu`,
/// `different-cpu`, `unpinned`), `noisy` (the row's, `true`/`false`),
/// the run's noise: `steal_s,other_cpu_s,load_avg_1m,involuntary_switches,cpu_mhz`,
/// and the row's series, the same on each of its rows:
/// `gib_s_median,gib_s_min,gib_s_max,gib_s_ci95_half_width,gib_s_max_over_min,gib_s_noisy`.
/// A row without runs has one line with an empty `run` and `gib_s`.
impl Exporter<LadderResult> for Csv {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let mut out = csv_header();
        out += &csv_rows(result)?;
        Ok(out.into_bytes())
    }
}

/// The first line of the ladder's CSV.
pub(crate) fn csv_header() -> String {
    format!(
        "rung,status,run,gib_s,bytes_per_run,buf_size,pipe_size,copies,\
         user_s_per_gib,system_s_per_gib,context_switches_per_gib,page_faults_per_gib,\
         part,placement,noisy,steal_s,other_cpu_s,load_avg_1m,involuntary_switches,cpu_mhz,{}\n",
        series_csv_header("gib_s")
    )
}

/// The lines of one row (a rung, or the baseline in one placement): one
/// per run, `head` before its run number, `tail` between its rate and its
/// noise, its series last.
fn series_lines(out: &mut String, head: &str, tail: &str, gib_s: &Series) {
    let series = series_csv(gib_s).join(",");
    if gib_s.runs.is_empty() {
        out.push_str(&format!("{head},,,{tail},,,,,,{series}\n"));
    }
    for (i, rate) in gib_s.runs.iter().enumerate() {
        let noise = gib_s.noise.get(i).map_or_else(
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
        out.push_str(&format!(
            "{head},{},{rate:.4},{tail},{noise},{series}\n",
            i + 1
        ));
    }
}

/// The ladder's CSV rows, without the header.
pub(crate) fn csv_rows(result: &LadderResult) -> io::Result<String> {
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
        series_lines(&mut out, &format!("{},{status}", r.name), &tail, &r.gib_s);
    }
    if let Some(check) = &result.placement_check {
        for row in &check.rows {
            let status = status_word(row.status);
            let tail = format!(",,,,,,,,placement-check,{},{}", row.kind, row.gib_s.noisy());
            series_lines(
                &mut out,
                &format!("{},{status}", check.rung),
                &tail,
                &row.gib_s,
            );
        }
    }
    Ok(out)
}
