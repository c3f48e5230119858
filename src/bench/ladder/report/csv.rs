//! The ladder as CSV: one row per measured run, for spreadsheets and
//! plotting scripts.

use std::io;

use serde::Serialize;

use super::status_word;
use crate::bench::core::shown::{NoiseCells, series_csv, series_csv_header};
use crate::bench::core::{Series, Status};
use crate::bench::ladder::LadderResult;
use crate::bench::profile::Cost;
use crate::report::{Csv, Exporter, csv_lines};

/// One line per run, in the columns of `csv_header`: a rung's cost per
/// GiB and its series are the same on each of its lines, `part` is
/// `ladder` or `placement-check`. A row without runs has one line with an
/// empty `run` and `gib_s`.
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
/// per run, or one without a run when it has none.
fn series_lines(
    out: &mut Vec<Line>,
    (rung, status, part, placement): (String, Status, &'static str, String),
    setup: Setup,
    gib_s: &Series,
) {
    let line = Line {
        rung,
        status: status_word(status),
        run: None,
        gib_s: None,
        setup,
        part,
        placement,
        noisy: gib_s.noisy(),
        noise: NoiseCells::default(),
        series: series_csv(gib_s),
    };
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
        let row = (
            r.name.to_string(),
            r.status,
            "ladder",
            placement.to_string(),
        );
        series_lines(&mut out, row, setup, &r.gib_s);
    }
    if let Some(check) = &result.placement_check {
        for row in &check.rows {
            let name = check.rung.to_string();
            let line = (name, row.status, "placement-check", row.kind.clone());
            series_lines(&mut out, line, Setup::default(), &row.gib_s);
        }
    }
    out
}
