//! A scan as the table printed on stdout (each value's ladder, then a row
//! per rung and a column per value), and as CSV: every point's ladder rows
//! under one header.

use std::fmt::Write as _;
use std::io;

use super::ladder::{csv_header, csv_rows};
use super::{Csv, Exporter, Text};
use crate::bench::scan::ScanResult;

/// Each value's ladder table under a `== SETTING VALUE` line, then the
/// medians of every rung by value.
impl Exporter<ScanResult> for Text {
    fn export(&self, result: &ScanResult) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        for point in &result.points {
            out.extend(
                format!("== {} {}\n", result.param, result.param.label(point.value)).into_bytes(),
            );
            out.extend(self.export(&point.result)?);
            out.push(b'\n');
        }
        out.extend(table(result).into_bytes());
        Ok(out)
    }
}

/// Every point's ladder rows under one header (the rows carry `buf_size`
/// and `pipe_size`, so the value scanned is in each).
impl Exporter<ScanResult> for Csv {
    fn export(&self, result: &ScanResult) -> io::Result<Vec<u8>> {
        let mut out = csv_header();
        for point in &result.points {
            out += &csv_rows(&point.result)?;
        }
        Ok(out.into_bytes())
    }
}

/// The table printed on stdout: a row per rung, a column per value
/// (median GiB/s), the best value of each rung marked with `*`.
fn table(scan: &ScanResult) -> String {
    let mut out = String::new();
    let heads: Vec<String> = scan
        .points
        .iter()
        .map(|p| scan.param.label(p.value))
        .collect();
    let name_width = scan
        .rungs()
        .iter()
        .map(|r| r.name().len())
        .chain([4])
        .max()
        .unwrap_or(4);
    let cell = heads.iter().map(String::len).max().unwrap_or(0).max(8) + 1;
    let _ = writeln!(
        out,
        "median GiB/s by {}; * the best of each rung",
        scan.param
    );
    let _ = write!(out, "{:name_width$}", "rung");
    for h in &heads {
        let _ = write!(out, "  {h:>cell$}");
    }
    let _ = writeln!(out);
    for rung in scan.rungs() {
        let medians = scan.medians(rung);
        let best = medians
            .iter()
            .flatten()
            .copied()
            .fold(None, |b: Option<f64>, v| Some(b.map_or(v, |b| b.max(v))));
        let _ = write!(out, "{:name_width$}", rung.name());
        for m in medians {
            let text = match m {
                Some(v) if Some(v) == best => format!("{v:.2}*"),
                Some(v) => format!("{v:.2} "),
                None => "- ".to_string(),
            };
            let _ = write!(out, "  {text:>cell$}");
        }
        let _ = writeln!(out);
    }
    out
}
