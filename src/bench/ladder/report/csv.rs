//! The ladder as CSV: one row per measured run, for spreadsheets and
//! plotting scripts.

use std::io;

use serde::Serialize;

use super::status_word;
use crate::bench::core::Series;
use crate::bench::core::shown::{NoiseCells, series_csv, series_csv_header};
use crate::bench::ladder::LadderResult;
use crate::bench::profile::Cost;
use crate::report::{Csv, Exporter, csv_lines};

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
        csv_lines(&csv_header(), csv_rows(result))
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

/// One line of the ladder's CSV, in the header's order.
#[derive(Clone, Serialize)]
pub(crate) struct Line {
    rung: String,
    status: &'static str,
    run: Option<usize>,
    gib_s: Option<String>,
    setup: Setup,
    part: &'static str,
    placement: String,
    noisy: bool,
    noise: NoiseCells,
    series: Vec<String>,
}

/// What a rung is and what its runs cost: empty for the placement check.
#[derive(Clone, Default, Serialize)]
struct Setup {
    bytes_per_run: Option<u64>,
    buf_size: Option<usize>,
    pipe_size: Option<usize>,
    copies: Option<u32>,
    user_s_per_gib: Option<String>,
    system_s_per_gib: Option<String>,
    context_switches_per_gib: Option<String>,
    page_faults_per_gib: Option<String>,
}

/// The lines of one row (a rung, or the baseline in one placement): one
/// per run, or one without a run when it has none; `line` is the row's
/// line without a run.
fn series_lines(out: &mut Vec<Line>, line: Line, gib_s: &Series) {
    if gib_s.runs.is_empty() {
        out.push(line);
        return;
    }
    for (i, rate) in gib_s.runs.iter().enumerate() {
        out.push(Line {
            run: Some(i + 1),
            gib_s: Some(format!("{rate:.4}")),
            noise: NoiseCells::of(gib_s.noise.get(i)),
            ..line.clone()
        });
    }
}

/// The ladder's CSV lines, without the header.
pub(crate) fn csv_rows(result: &LadderResult) -> Vec<Line> {
    let mut out = Vec::new();
    let placement = result.placement.kind();
    for r in &result.rungs {
        let cost = |f: fn(&Cost) -> String| r.cost.as_ref().map(f);
        let setup = Setup {
            bytes_per_run: Some(r.bytes_per_run),
            buf_size: Some(r.buf_size),
            pipe_size: r.pipe_size,
            copies: Some(r.copies),
            user_s_per_gib: cost(|c| format!("{:.4}", c.user_s_per_gib)),
            system_s_per_gib: cost(|c| format!("{:.4}", c.system_s_per_gib)),
            context_switches_per_gib: cost(|c| format!("{:.1}", c.context_switches_per_gib)),
            page_faults_per_gib: cost(|c| format!("{:.1}", c.page_faults_per_gib)),
        };
        let line = Line {
            rung: r.name.to_string(),
            status: status_word(r.status),
            run: None,
            gib_s: None,
            setup,
            part: "ladder",
            placement: placement.to_string(),
            noisy: r.noisy(),
            noise: NoiseCells::default(),
            series: series_csv(&r.gib_s),
        };
        series_lines(&mut out, line, &r.gib_s);
    }
    if let Some(check) = &result.placement_check {
        for row in &check.rows {
            let line = Line {
                rung: check.rung.to_string(),
                status: status_word(row.status),
                run: None,
                gib_s: None,
                setup: Setup::default(),
                part: "placement-check",
                placement: row.kind.to_string(),
                noisy: row.gib_s.noisy(),
                noise: NoiseCells::default(),
                series: series_csv(&row.gib_s),
            };
            series_lines(&mut out, line, &row.gib_s);
        }
    }
    out
}
