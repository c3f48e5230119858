//! `bench --zero-copy`'s table, Markdown and CSV: one row per path, then
//! the verdict (first in the Markdown, last in the terminal, where the
//! eye lands); with `--explain`, how each path is checked and why its
//! answer matters.

use std::fmt::Write as _;
use std::io;

use serde::Serialize;

use crate::bench::core::shown::{
    noise_paragraph, noise_sentence, series_csv, series_csv_header, spread_cell, status_word,
};
use crate::bench::core::{CopyCheck, Status};
use crate::bench::zerocopy::{PathResult, ZeroCopyResult};
use crate::report::table::Align;
use crate::report::text::{Column, packed, wrap, wrap_hanging, wrap_paragraph};
use crate::report::{Csv, Exporter, Markdown, Text, csv_lines};
use crate::units::Size;

impl Exporter<ZeroCopyResult> for Text {
    fn export(&self, result: &ZeroCopyResult) -> io::Result<Vec<u8>> {
        Ok(crate::report::marked(result.header.interrupted, text(result, *self)).into_bytes())
    }
}

/// The verdict and the table as GitHub-flavoured Markdown.
impl Exporter<ZeroCopyResult> for Markdown {
    fn export(&self, result: &ZeroCopyResult) -> io::Result<Vec<u8>> {
        let mut out = String::new();
        for line in &result.verdict {
            let _ = writeln!(out, "- {line}");
        }
        let _ = writeln!(out, "\n{}\n", setting(result));
        out += "| path | moves | GiB/s | CPU s/GiB | x vs read/write |\n";
        out += "| --- | --- | ---: | ---: | ---: |\n";
        for p in &result.paths {
            let [name, moves, rate, _, cpu, x] = cells(p);
            let _ = writeln!(out, "| {name} | {moves} | {rate} | {cpu} | {x} |");
        }
        Ok(crate::report::marked(result.header.interrupted, out).into_bytes())
    }
}

/// One row per measured run of every path.
impl Exporter<ZeroCopyResult> for Csv {
    fn export(&self, result: &ZeroCopyResult) -> io::Result<Vec<u8>> {
        let head = format!(
            "path,found,status,run,gib_s,cpu_s_per_gib,{}\n",
            series_csv_header("gib_s")
        );
        let lines = result.paths.iter().flat_map(|p| {
            let runs = p.gib_s.runs.iter().zip(&p.cpu_s_per_gib.runs);
            runs.enumerate().map(|(i, (rate, cpu))| Line {
                path: &p.name,
                found: found_word(p.found.as_ref()),
                status: status_word(p.status),
                run: i + 1,
                gib_s: rate.to_string(),
                cpu_s_per_gib: cpu.to_string(),
                series: series_csv(&p.gib_s),
            })
        });
        csv_lines(&head, lines)
    }
}

/// One line of the CSV, in the header's order.
#[derive(Serialize)]
struct Line<'a> {
    path: &'a str,
    found: &'static str,
    status: &'static str,
    run: usize,
    // As Rust writes an f64 (`2`, not csv's `2.0`).
    gib_s: String,
    cpu_s_per_gib: String,
    series: Vec<String>,
}

/// What a check found, in a word.
fn found_word(found: Option<&CopyCheck>) -> &'static str {
    match found {
        None => "copies (plain)",
        Some(CopyCheck::References) => "references",
        Some(CopyCheck::Copies) => "copies",
        Some(CopyCheck::Unknown { .. }) => "unknown",
    }
}

/// What a check found, with why it could not tell.
fn found_words(found: Option<&CopyCheck>) -> String {
    match found {
        Some(CopyCheck::Unknown { why }) => format!("unknown ({why})"),
        found => found_word(found).to_string(),
    }
}

/// How the runs were made, in a line.
fn setting(r: &ZeroCopyResult) -> String {
    let c = &r.config;
    let runs = match c.max_runs {
        max if max > c.runs => format!("{}-{max} runs", c.runs),
        1 => "1 run".to_string(),
        _ => format!("{} runs", c.runs),
    };
    format!(
        "{} a run in {} calls, pipes of {} (vmsplice rows: one call), {}; {runs} a path",
        Size(c.bytes),
        Size(c.chunk as u64),
        Size(c.pipe_size as u64),
        c.placement
    )
}

/// A row's cells: path, moves, GiB/s, its spread, CPU s/GiB, ratio.
fn cells(p: &PathResult) -> [String; 6] {
    let num =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    let (rate, spread, cpu, x) = match p.status {
        Status::Ok => (
            num(p.gib_s.median, 2),
            spread_cell(&p.gib_s),
            num(p.cpu_s_per_gib.median, 3),
            p.vs_read_write.map_or("-".into(), |x| format!("{x:.2}x")),
        ),
        Status::Unavailable => ("-".into(), String::new(), "-".into(), "-".into()),
        Status::Failed => ("failed".into(), String::new(), "-".into(), "-".into()),
    };
    [
        p.name.clone(),
        found_word(p.found.as_ref()).to_string(),
        rate,
        spread,
        cpu,
        x,
    ]
}

/// `line` after `label`, wrapped to `width` columns, every line of it
/// under the first's text (the verdict's continuation lines, label or
/// not).
fn labelled(label: &str, line: &str, width: usize) -> String {
    const INDENT: usize = "verdict: ".len();
    // A stand-in for the label, without spaces (`wrap_hanging` breaks at
    // spaces), as long as the indent; then the label in its place.
    let wrapped = wrap_hanging(&format!("{}{line}", "_".repeat(INDENT)), width, INDENT);
    format!("{label:<INDENT$}{}", &wrapped[INDENT..])
}

/// The table's columns, the path's name aside, in the order they are
/// given up when the table is wider than the terminal: the spread, then
/// the CPU cost (both then in `--explain`'s second table).
const HEADINGS: [(&str, Align); 5] = [
    ("moves", Align::Left),
    ("GiB/s", Align::Right),
    ("spread", Align::Right),
    ("CPU s/GiB", Align::Right),
    ("x vs read/write", Align::Right),
];

/// The paths' table, as wide as `width` takes: every column that fits
/// (see [`HEADINGS`]); with `explain`, the others in a second table.
fn table(r: &ZeroCopyResult, explain: bool, width: usize) -> Vec<Vec<String>> {
    let rows: Vec<[String; 6]> = r.paths.iter().map(cells).collect();
    let key = Column::new("path", Align::Left, rows.iter().map(|c| c[0].clone()));
    let column = |i: usize| {
        let (heading, align) = HEADINGS[i - 1];
        Column::new(heading, align, rows.iter().map(|c| c[i].clone()))
    };
    // Given up first to last: spread (3), CPU s/GiB (4).
    let mut shown: Vec<usize> = vec![1, 2, 3, 4, 5];
    let mut left = Vec::new();
    for drop in [3, 4] {
        let columns: Vec<Column> = shown.iter().map(|&i| column(i)).collect();
        if packed(&key, &columns, width).len() == 1 {
            break;
        }
        shown.retain(|&i| i != drop);
        left.push(drop);
    }
    let columns: Vec<Column> = shown.iter().map(|&i| column(i)).collect();
    let mut tables = vec![packed(&key, &columns, usize::MAX).remove(0)];
    if explain && !left.is_empty() {
        left.sort_unstable();
        let columns: Vec<Column> = left.iter().map(|&i| column(i)).collect();
        tables.extend(packed(&key, &columns, width));
    }
    tables
}

fn text(r: &ZeroCopyResult, how: Text) -> String {
    let (explain, width) = (how.explain, how.width);
    let s = &r.header.system;
    let allowed: Vec<String> = s.cpus_allowed.iter().map(|c| c.to_string()).collect();
    let machine = format!(
        "pipespeed {} bench --zero-copy: Linux {} on {} ({} CPUs online, allowed {})",
        r.header.pipespeed_version,
        s.kernel,
        s.cpu_model,
        s.cpus_online,
        allowed.join(","),
    );
    let mut out = format!(
        "{}\n{}\n\n",
        wrap(&machine, width),
        wrap(&setting(r), width)
    );
    for (i, table) in table(r, explain, width).into_iter().enumerate() {
        if i > 0 {
            let _ = writeln!(out);
        }
        for line in table {
            let _ = writeln!(out, "{line}");
        }
    }
    let mut notes = Vec::new();
    for p in &r.paths {
        if let Some(CopyCheck::Unknown { why }) = &p.found {
            notes.push(format!("{}: could not tell: {why}", p.name));
        }
        let said = |why: &str| match &p.found {
            Some(CopyCheck::Unknown { why: told }) => told.contains(why),
            _ => false,
        };
        match (p.status, &p.reason) {
            (Status::Failed, Some(why)) => notes.push(format!("{}: failed: {why}", p.name)),
            (Status::Unavailable, Some(why)) if !said(why) => {
                notes.push(format!("{}: {why}", p.name))
            }
            _ => {}
        }
    }
    let rows: Vec<(String, &crate::bench::core::Series)> =
        r.paths.iter().map(|p| (p.name.clone(), &p.gib_s)).collect();
    notes.extend(noise_paragraph(&rows));
    notes.extend(r.noise.map(noise_sentence));
    notes.push(
        "moves: what the path's check found (change the source after the call, see what the \
         other end gets); GiB/s and CPU s/GiB (user + system of both ends, io_uring's \
         workers included): medians of the runs; x: the median rate over read/write's. The machine's load moves \
         the figures: compare rows of one run."
            .into(),
    );
    out.push('\n');
    for note in notes {
        let _ = writeln!(out, "{}", wrap_paragraph(&note, width));
    }
    if explain {
        for p in &r.paths {
            let why = p.path.why();
            let _ = writeln!(
                out,
                "\n{}\n{}",
                p.name,
                wrap_paragraph(
                    &format!(
                        "  found: {}. {why}\n  how: {}.",
                        found_words(p.found.as_ref()),
                        p.method
                    ),
                    width
                )
            );
        }
    }
    // The answer last, where the eye lands when the run ends.
    out.push('\n');
    for (i, line) in r.verdict.iter().enumerate() {
        let label = if i == 0 { "verdict: " } else { "" };
        let _ = writeln!(out, "{}", labelled(label, line, width));
    }
    out
}

#[cfg(test)]
mod tests;
