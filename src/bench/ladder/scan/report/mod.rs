//! How a scan reads: text, CSV, Markdown and the HTML page, each with the
//! medians by value first, then each value's ladder.

#[cfg(feature = "cli")]
mod svg;
#[cfg(feature = "cli")]
pub use svg::{scan_result_svg, scan_svg};

use std::fmt::Write as _;
use std::io;

use crate::bench::core::shown::noise_paragraph;
use crate::bench::core::{NoiseSummary, Series, Trust};
use crate::bench::ladder::Rung;
use crate::bench::ladder::report::{csv_header, csv_rows, machine_words, table as ladder_table};
use crate::bench::ladder::scan::ScanResult;
use crate::report::table::Align;
use crate::report::text::{Column, packed, wrap, wrap_hanging, wrap_paragraph};
use crate::report::{Csv, Exporter, Markdown, Text, csv_lines};

/// The medians by value, how far to trust them and the noise, then each
/// value's ladder table; with [`Text::explain`], each value's whole
/// ladder text first.
impl Exporter<ScanResult> for Text {
    fn export(&self, result: &ScanResult) -> io::Result<Vec<u8>> {
        if self.explain {
            let mut out = Vec::new();
            for point in &result.points {
                out.extend(
                    format!("== {} {}\n", result.param, result.param.label(point.value))
                        .into_bytes(),
                );
                out.extend(self.export(&point.result)?);
                out.push(b'\n');
            }
            out.extend(table(result, self.width).into_bytes());
            return Ok(out);
        }
        let mut out = format!("{}\n", wrap(&facts(result), self.width));
        if result.header.interrupted {
            let _ = writeln!(out, "{}", crate::report::INTERRUPTED);
        }
        let _ = writeln!(out);
        out += &table(result, self.width);
        // Every point's rows, named by their value.
        let rows: Vec<(String, &Series)> = (result.points.iter())
            .flat_map(|p| {
                let label = result.param.label(p.value);
                p.result
                    .series()
                    .into_iter()
                    .map(move |(name, series)| (format!("{name} at {label}"), series))
            })
            .collect();
        let trust = Trust::of(
            rows.iter().map(|(n, s)| (n.clone(), *s)),
            worst_noise(result),
        );
        let trust = wrap_hanging(&format!("trust: {}", trust.line), self.width, 7);
        let _ = writeln!(out, "\n{trust}");
        if let Some(paragraph) = noise_paragraph(&rows) {
            let _ = writeln!(out, "\n{}", wrap_paragraph(&paragraph, self.width));
        }
        for point in &result.points {
            let title = format!(
                "== {} {}: {}",
                result.param,
                result.param.label(point.value),
                point.result.placement
            );
            let _ = writeln!(out, "\n{}", wrap(&title, self.width));
            out += &ladder_table(&point.result, self.width);
        }
        Ok(out.into_bytes())
    }
}

/// The noisiest machine any point saw.
fn worst_noise(scan: &ScanResult) -> Option<NoiseSummary> {
    scan.points
        .iter()
        .filter_map(|p| p.result.noise)
        .reduce(|a, b| NoiseSummary {
            runs: a.runs + b.runs,
            steal_share: a.steal_share.max(b.steal_share),
            other_share: a.other_share.max(b.other_share),
            max_load_avg_1m: a.max_load_avg_1m.max(b.max_load_avg_1m),
        })
}

/// Every point's ladder rows under one header (the rows carry `buf_size`
/// and `pipe_size`, so the value scanned is in each).
impl Exporter<ScanResult> for Csv {
    fn export(&self, result: &ScanResult) -> io::Result<Vec<u8>> {
        let rows = result.points.iter().flat_map(|p| csv_rows(&p.result));
        csv_lines(&csv_header(), rows)
    }
}

/// A rung's median GiB/s at one value, and whether it is the rung's
/// best; `None` where it has none.
type Median = Option<(f64, bool)>;

/// A row per rung: its name and its [`Median`] at each value.
fn medians(scan: &ScanResult) -> Vec<(Rung, Vec<Median>)> {
    scan.rungs()
        .into_iter()
        .map(|rung| {
            let medians = scan.medians(rung);
            let best = (medians.iter().flatten().copied())
                .fold(None, |b: Option<f64>, v| Some(b.map_or(v, |b| b.max(v))));
            let cells = medians
                .into_iter()
                .map(|m| m.map(|v| (v, Some(v) == best)))
                .collect();
            (rung, cells)
        })
        .collect()
}

/// The values' labels, in the order measured.
fn heads(scan: &ScanResult) -> Vec<String> {
    (scan.points.iter())
        .map(|p| scan.param.label(p.value))
        .collect()
}

/// The machine and what was scanned, in a sentence.
fn facts(scan: &ScanResult) -> String {
    format!(
        "{}: the ladder once per value of {}: {}",
        machine_words(&scan.header),
        scan.param,
        heads(scan).join(", ")
    )
}

/// The facts, the medians by value (the best of each rung in bold), then
/// each value's ladder as `bench --markdown` writes it, under a heading.
impl Exporter<ScanResult> for Markdown {
    fn export(&self, scan: &ScanResult) -> io::Result<Vec<u8>> {
        let mut out = format!("{}.\n\n", facts(scan));
        if scan.header.interrupted {
            let _ = writeln!(out, "**{}**\n", crate::report::INTERRUPTED);
        }
        let heads = heads(scan);
        let _ = writeln!(
            out,
            "## Median GiB/s by {} (bold: the best of each rung)\n",
            scan.param
        );
        let _ = writeln!(out, "| rung | {} |", heads.join(" | "));
        let _ = writeln!(out, "|:---|{}", "---:|".repeat(heads.len()));
        for (rung, cells) in medians(scan) {
            let cells: Vec<String> = cells
                .into_iter()
                .map(|c| match c {
                    Some((v, true)) => format!("**{v:.2}**"),
                    Some((v, false)) => format!("{v:.2}"),
                    None => "-".into(),
                })
                .collect();
            let _ = writeln!(out, "| {} | {} |", rung.name(), cells.join(" | "));
        }
        for (point, head) in scan.points.iter().zip(&heads) {
            let _ = writeln!(out, "\n## {} {head}\n", scan.param);
            out += &String::from_utf8_lossy(&Markdown.export(&point.result)?);
        }
        Ok(out.into_bytes())
    }
}

/// The scan's page, on `report::page`'s frame as the ladder's.
#[cfg(feature = "cli")]
impl Exporter<ScanResult> for crate::report::Html {
    fn export(&self, scan: &ScanResult) -> io::Result<Vec<u8>> {
        page(scan).map(String::into_bytes)
    }
}

#[cfg(feature = "cli")]
fn page(scan: &ScanResult) -> io::Result<String> {
    use crate::bench::ladder::report::ladder_table;
    use crate::bench::ladder::report::{noise_line, noisy_lines, runs_words};
    use crate::report::page::{escape, head, interrupted, machine, noisy_paragraphs};
    let svg = svg::scan_result_svg(scan)?;
    let heads = heads(scan);
    let mut out = head(
        &format!(
            "pipespeed {}: Linux pipes by {} on {}",
            scan.header.pipespeed_version, scan.param, scan.header.system.cpu_model
        ),
        &format!(
            "How does {} change Linux pipes on this machine?",
            scan.param
        ),
        "",
    );
    out += &machine(&scan.header.system, &scan.header.pipespeed_version);
    let _ = writeln!(
        out,
        "<h2 id=\"scan\">What was scanned</h2>\n<p>The ladder once per value of {}: {}.</p>",
        escape(scan.param.name()),
        escape(&heads.join(", "))
    );
    interrupted(&mut out, scan.header.interrupted);
    let _ = writeln!(
        out,
        "<h2 id=\"chart\">Chart</h2>\n<figure>\n{svg}<figcaption>Each rung's median GiB/s at \
         each value of {}; a value where a rung has no median breaks its line.</figcaption>\n\
         </figure>",
        escape(scan.param.name())
    );
    let _ = write!(
        out,
        "<h2 id=\"medians\">Median GiB/s by {}</h2>\n<table id=\"medians\">\n<thead><tr>\
         <th>rung</th>",
        escape(scan.param.name())
    );
    for h in &heads {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out += "</tr></thead>\n<tbody>\n";
    for (rung, cells) in medians(scan) {
        let _ = write!(out, "<tr><td>{}</td>", escape(rung.name()));
        for cell in cells {
            let _ = match cell {
                Some((v, true)) => write!(out, "<td class=\"num\"><strong>{v:.2}</strong></td>"),
                Some((v, false)) => write!(out, "<td class=\"num\">{v:.2}</td>"),
                None => write!(out, "<td class=\"num\">-</td>"),
            };
        }
        out += "</tr>\n";
    }
    out += "</tbody>\n</table>\n<p class=\"small\">In bold, the best value of each rung.</p>\n";
    for (i, (point, head)) in scan.points.iter().zip(&heads).enumerate() {
        let r = &point.result;
        let _ = writeln!(
            out,
            "<h2 id=\"value-{}\">{} {}</h2>\n<p>{}; {}.</p>",
            i + 1,
            escape(scan.param.name()),
            escape(head),
            escape(&r.placement.to_string()),
            escape(&runs_words(r))
        );
        if let Some(line) = noise_line(r) {
            let _ = writeln!(out, "<p class=\"noise\">{}.</p>", escape(&line));
        }
        ladder_table(&mut out, &format!("ladder-{}", i + 1), &r.rungs);
        noisy_paragraphs(&mut out, &noisy_lines(r));
    }
    out += "</body>\n</html>\n";
    Ok(out)
}

/// The table printed on stdout: a row per rung, a column per value
/// (median GiB/s), the best value of each rung marked with `*`; in as
/// many tables as it takes to fit `width` when the values are many.
fn table(scan: &ScanResult, width: usize) -> String {
    let mut out = format!("median GiB/s by {}; * the best of each rung\n", scan.param);
    let medians = medians(scan);
    let cell = |m: &Median| match m {
        Some((v, true)) => format!("{v:.2}*"),
        Some((v, false)) => format!("{v:.2} "),
        None => "- ".to_string(),
    };
    let key = Column::new(
        "rung",
        Align::Left,
        medians.iter().map(|(rung, _)| rung.name().to_string()),
    );
    // At least 9 wide, the figures' points in line under the headings.
    let heads = heads(scan);
    let pad = heads.iter().map(String::len).max().unwrap_or(0).max(8) + 1;
    let columns: Vec<Column> = (heads.iter().enumerate())
        .map(|(i, h)| {
            let cells = medians
                .iter()
                .map(|(_, m)| format!("{:>pad$}", cell(&m[i])));
            Column::new(&format!("{h:>pad$}"), Align::Right, cells)
        })
        .collect();
    for (i, table) in packed(&key, &columns, width).into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for line in table {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}
