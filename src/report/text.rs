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
    v.map(|v| format!("{v:.2}"))
        .unwrap_or_else(|| "-".to_string())
}

/// Five left-aligned cells, then four right-aligned numbers or a note
/// saying why there are none.
type Row = ([String; 5], Result<[String; 4], String>);

impl Exporter for Text {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let s = &result.system;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "pipespeed {}: Linux {} on {} ({} CPUs online), THP {}, pipe-max-size {}",
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
            if result.verify {
                "; every byte verified"
            } else {
                ""
            }
        );
        let _ = writeln!(out);
        let header = ["rung", "what it changes", "copies", "buffer", "pipe"];
        let number_header = ["median GiB/s", "min", "max", "vs write-read"];
        let rows: Vec<Row> = result
            .rungs
            .iter()
            .map(|r| {
                let cells = [
                    r.name.to_string(),
                    r.changes.clone(),
                    r.copies.to_string(),
                    Size(r.buf_size as u64).to_string(),
                    r.pipe_size
                        .map_or_else(|| "default".into(), |p| Size(p as u64).to_string()),
                ];
                let tail = match (r.status, &r.reason) {
                    (Status::Unavailable, Some(reason)) => Err(format!("unavailable: {reason}")),
                    (Status::Failed, Some(reason)) => Err(format!("failed: {reason}")),
                    _ => Ok([
                        rate(r.median_gib_s),
                        rate(r.min_gib_s),
                        rate(r.max_gib_s),
                        r.speedup_vs_write_read
                            .map_or_else(|| "-".into(), |x| format!("{x:.1}x")),
                    ]),
                };
                (cells, tail)
            })
            .collect();
        let mut widths: Vec<usize> = header
            .iter()
            .chain(&number_header)
            .map(|h| h.len())
            .collect();
        for (cells, tail) in &rows {
            let numbers = tail.as_ref().map(|n| &n[..]).unwrap_or(&[]);
            for (i, cell) in cells.iter().chain(numbers).enumerate() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut line = |cells: &[String], tail: Result<&[String], &str>| {
            let mut text = String::new();
            for (cell, w) in cells.iter().zip(&widths) {
                let _ = write!(text, "{cell:<w$}  ");
            }
            match tail {
                Ok(numbers) => {
                    for (cell, w) in numbers.iter().zip(&widths[5..]) {
                        let _ = write!(text, "{cell:>w$}  ");
                    }
                }
                Err(note) => text.push_str(note),
            }
            let _ = writeln!(out, "{}", text.trim_end());
        };
        line(
            &header.map(String::from),
            Ok(&number_header.map(String::from)),
        );
        for (cells, tail) in &rows {
            line(cells, tail.as_ref().map(|n| &n[..]).map_err(|s| s.as_str()));
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
