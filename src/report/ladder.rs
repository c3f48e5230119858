//! The ladder as the table printed on stdout, and as CSV: one row per
//! measured run, for spreadsheets and plotting scripts.

use std::fmt::Write;
use std::io;

use super::{Csv, Exporter, Text};
use crate::bench::ladder::{LadderResult, Rung, RungResult, Status};
use crate::bench::profile::{Profile, ProfileStatus};
use crate::units::Size;

fn rate(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.2}"))
        .unwrap_or_else(|| "-".to_string())
}

/// What the `copies` column means, under the table.
pub(super) const COPIES_NOTE: &str = "copies: bytes the CPU copies per byte piped. Rungs with 0 move page references, not bytes:\n\
     their GiB/s is not memory bandwidth and may exceed memcpy.";

/// A rung's five descriptive cells: rung, what it changes, copies, buffer
/// and pipe.
pub(super) fn cells(r: &RungResult) -> [String; 5] {
    [
        r.name.to_string(),
        r.changes.clone(),
        r.copies.to_string(),
        Size(r.buf_size as u64).to_string(),
        r.pipe_size
            .map_or_else(|| "default".into(), |p| Size(p as u64).to_string()),
    ]
}

/// A rung's figures as the table prints them (median, min, max GiB/s and
/// the speed-up over `write-read`), or the note saying why there are none.
pub(super) fn figures(r: &RungResult) -> Result<[String; 4], String> {
    match (r.status, &r.reason) {
        (Status::Unavailable, Some(reason)) => Err(format!("unavailable: {reason}")),
        (Status::Failed, Some(reason)) => Err(format!("failed: {reason}")),
        _ => Ok([
            rate(r.median_gib_s),
            rate(r.min_gib_s),
            rate(r.max_gib_s),
            r.speedup_vs_write_read
                .map_or_else(|| "-".into(), |x| format!("{x:.1}x")),
        ]),
    }
}

/// Five left-aligned cells, then four right-aligned numbers or a note
/// saying why there are none.
type Row = ([String; 5], Result<[String; 4], String>);

/// An aligned table: rung, what it changes, copies, median, min, max and
/// speed-up over `write-read`, then notes; with [`Text::explain`], a
/// paragraph per rung.
impl Exporter<LadderResult> for Text {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let s = &result.header.system;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "pipespeed {}: Linux {} on {} ({} CPUs online), THP {}, pipe-max-size {}",
            result.header.pipespeed_version,
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
            .map(|r| (cells(r), figures(r)))
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
        let _ = writeln!(out, "{COPIES_NOTE}");
        cost_table(result, &mut out);
        profiles(result, &mut out);
        if self.explain {
            for r in &result.rungs {
                let _ = writeln!(out, "\n{}: {}", r.name, r.name.explanation());
            }
        }
        Ok(out.into_bytes())
    }
}

/// A count per GiB: whole numbers, or one decimal below 10.
fn count(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// CPU seconds, context switches and page faults per GiB, one row per
/// rung with a cost (every measured rung), under the main table.
fn cost_table(result: &LadderResult, out: &mut String) {
    let rows: Vec<_> = result
        .rungs
        .iter()
        .filter_map(|r| r.cost.map(|c| (r.name, c)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let width = rows
        .iter()
        .map(|(name, _)| name.name().len())
        .max()
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "\ncost per GiB piped (getrusage of the writer and reader processes, start-up included,\n\
         over the measured runs; memcpy: its one thread):"
    );
    let _ = writeln!(
        out,
        "{:<width$}  {:>10}  {:>10}  {:>12}  {:>11}",
        "rung", "user CPU s", "sys CPU s", "ctx switches", "page faults"
    );
    for (name, c) in rows {
        let _ = writeln!(
            out,
            "{:<width$}  {:>10.3}  {:>10.3}  {:>12}  {:>11}",
            name.name(),
            c.user_s_per_gib,
            c.system_s_per_gib,
            count(c.context_switches_per_gib),
            count(c.page_faults_per_gib)
        );
    }
}

/// Each profiled rung's top symbols, as `perf report` prints them; one
/// line when no rung could be profiled, for the same reason.
fn profiles(result: &LadderResult, out: &mut String) {
    let profiled: Vec<(Rung, &Profile)> = result
        .rungs
        .iter()
        .filter_map(|r| r.profile.as_ref().map(|p| (r.name, p)))
        .collect();
    let Some((_, first)) = profiled.first() else {
        return;
    };
    if profiled
        .iter()
        .all(|(_, p)| p.status == ProfileStatus::Unavailable && p.reason == first.reason)
    {
        let why = first.reason.as_deref().unwrap_or("no reason given");
        let _ = writeln!(out, "\nno profiles: {why}");
        return;
    }
    let _ = writeln!(
        out,
        "\nwhere the time goes: perf record -e cpu-clock -g of each end, self time per symbol\n\
         as a share of both ends' samples ([k] kernel, [.] user space):"
    );
    for (name, p) in profiled {
        let why = p.reason.as_deref().unwrap_or("no reason given");
        match p.status {
            ProfileStatus::Recorded => {
                let _ = writeln!(out, "\n{name} ({} samples):", p.samples);
                let width = p.symbols.iter().map(|s| s.comm.len()).max().unwrap_or(0);
                for s in &p.symbols {
                    let _ = writeln!(
                        out,
                        "  {:>6.2}%  {:<width$}  [{}] {}",
                        s.percent,
                        s.comm,
                        if s.kernel { 'k' } else { '.' },
                        s.symbol
                    );
                }
            }
            ProfileStatus::Unavailable => {
                let _ = writeln!(out, "\n{name}: no profile: {why}");
            }
            ProfileStatus::Failed => {
                let _ = writeln!(out, "\n{name}: profile failed: {why}");
            }
        }
    }
}

/// One row per run: `rung,status,run,gib_s,bytes_per_run,buf_size,pipe_size,copies`,
/// then the rung's cost per GiB over all its measured runs (the same on
/// each of its rows; empty when not measured):
/// `user_s_per_gib,system_s_per_gib,context_switches_per_gib,page_faults_per_gib`.
/// A rung without runs has one row with an empty `run` and `gib_s`.
impl Exporter<LadderResult> for Csv {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let mut out = String::from(CSV_HEADER);
        out += &csv_rows(result)?;
        Ok(out.into_bytes())
    }
}

/// The first line of the ladder's CSV.
pub(super) const CSV_HEADER: &str = "rung,status,run,gib_s,bytes_per_run,buf_size,pipe_size,copies,\
     user_s_per_gib,system_s_per_gib,context_switches_per_gib,page_faults_per_gib\n";

/// The ladder's CSV rows, without the header.
pub(super) fn csv_rows(result: &LadderResult) -> io::Result<String> {
    let mut out = String::new();
    for r in &result.rungs {
        let status = serde_json::to_value(r.status).map_err(io::Error::other)?;
        let status = status.as_str().unwrap_or("");
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
            "{},{},{},{},{cost}",
            r.bytes_per_run, r.buf_size, pipe, r.copies
        );
        if r.runs_gib_s.is_empty() {
            out += &format!("{},{status},,,{tail}\n", r.name);
        }
        for (i, gib_s) in r.runs_gib_s.iter().enumerate() {
            out += &format!("{},{status},{},{gib_s:.4},{tail}\n", r.name, i + 1);
        }
    }
    Ok(out)
}
