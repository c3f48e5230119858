//! The table printed on stdout.

use std::fmt::Write;
use std::io;

use super::Exporter;
use crate::bench::ladder::{LadderResult, Status};
use crate::units::Size;

/// An aligned table: rung, what it changes, copies, median, min, max and
/// speed-up over `write-read`, then notes; with `explain`, a paragraph per
/// rung.
#[derive(Debug, Clone, Copy, Default)]
pub struct Text {
    /// Add a paragraph per rung on why it is faster.
    pub explain: bool,
}

fn rate(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".to_string())
}

impl Exporter for Text {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let s = &result.system;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "pipespeed {}: Linux {} on {} ({} CPUs online), THP {:?}, pipe-max-size {}",
            result.pipespeed_version,
            s.kernel,
            s.cpu_model,
            s.cpus_online,
            s.thp,
            Size(s.pipe_max_size_bytes as u64)
        );
        let _ = writeln!(
            out,
            "{}; {} runs per rung after a warm-up, in shuffled order (seed {}){}",
            result.placement,
            result.runs,
            result.seed,
            if result.verify { "; every byte verified" } else { "" }
        );
        let _ = writeln!(out);
        let header = ["rung", "what it changes", "copies", "buffer", "pipe", "median GiB/s", "min", "max", "vs write-read"];
        let mut rows: Vec<Vec<String>> = Vec::new();
        for r in &result.rungs {
            let mut row = vec![
                r.name.to_string(),
                r.changes.clone(),
                r.copies.to_string(),
                Size(r.buf_size as u64).to_string(),
                r.pipe_size.map(|p| Size(p as u64).to_string()).unwrap_or_else(|| "default".into()),
            ];
            match (r.status, &r.reason) {
                (Status::Ok, _) | (Status::Failed, None) => {}
                (Status::Unavailable, Some(reason)) => {
                    row.push(format!("unavailable: {reason}"));
                    rows.push(row);
                    continue;
                }
                (_, Some(reason)) => {
                    row.push(format!("failed: {reason}"));
                    rows.push(row);
                    continue;
                }
                (Status::Unavailable, None) => {}
            }
            row.extend([
                rate(r.median_gib_s),
                rate(r.min_gib_s),
                rate(r.max_gib_s),
                r.speedup_vs_write_read.map(|x| format!("{x:.1}x")).unwrap_or_else(|| "-".into()),
            ]);
            rows.push(row);
        }
        let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
        for row in &rows {
            // A row that says why it did not run spans the numeric columns.
            for (i, cell) in row.iter().enumerate().take(if row.len() < header.len() { 5 } else { header.len() }) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let line = |cells: &[String], out: &mut String| {
            let mut text = String::new();
            for (i, cell) in cells.iter().enumerate() {
                let w = widths.get(i).copied().unwrap_or(0);
                if i >= 2 && i != 3 && i != 4 && cells.len() == header.len() {
                    let _ = write!(text, "{cell:>w$}  ");
                } else if i == cells.len() - 1 {
                    text.push_str(cell);
                } else {
                    let _ = write!(text, "{cell:<w$}  ");
                }
            }
            let _ = writeln!(out, "{}", text.trim_end());
        };
        line(&header.map(String::from), &mut out);
        for row in &rows {
            line(row, &mut out);
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "copies: bytes the CPU copies per byte piped. Rungs with 0 move page references, not bytes:\n\
             their GiB/s is not memory bandwidth and may exceed memcpy."
        );
        if self.explain {
            for r in &result.rungs {
                let _ = writeln!(out, "\n{}: {}", r.name, r.name.explanation());
            }
        }
        Ok(out.into_bytes())
    }
}
