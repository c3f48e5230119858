//! `ipc` as one self-contained HTML page, on the ladder page's machinery
//! ([`crate::report::page`]).

use std::fmt::Write as _;
use std::io;

use super::svg::ipc_svg;
use super::{Shown, columns_note, costs, ends, measures, noisy_lines, runs_words};
use crate::bench::core::shown::noise_sentence;
use crate::bench::ipc::{IpcResult, IpcRow};
use crate::report::page::{answer, escape, head, machine, noisy_paragraphs};
use crate::report::{Exporter, Html, INTERRUPTED};
use crate::units::Size;

/// The tables scroll sideways on a narrow screen; their second column
/// holds numbers, not the ladder's sentences.
const STYLE: &str =
    "table.ipc{display:block;overflow-x:auto}table.ipc td:nth-child(2){min-width:0}";

/// The verdict, the machine, the ends and runs, the charts inline, a
/// table per message size, where each mechanism's cost goes and the
/// noisy rows.
impl Exporter<IpcResult> for Html {
    fn export(&self, result: &IpcResult) -> io::Result<Vec<u8>> {
        page(result).map(String::into_bytes)
    }
}

/// The page; fails only if the charts cannot be drawn.
fn page(r: &IpcResult) -> io::Result<String> {
    let svg = ipc_svg(r)?;
    let shown = Shown::of(r);
    let mut out = head(
        &format!(
            "pipespeed {} ipc: pipes and the other ways processes talk, on {}",
            r.header.pipespeed_version, r.header.system.cpu_model
        ),
        "Linux pipes beside sockets, message queues, shared memory and io_uring",
        STYLE,
    );
    out += &answer(&r.verdict().lines);
    out += &machine(&r.header.system, &r.header.pipespeed_version);
    let _ = writeln!(
        out,
        "<h2 id=\"placement\">Placement and runs</h2>\n<p>{}; {}.</p>\n<p>{}.</p>",
        escape(&ends(r.config.placement)),
        escape(&runs_words(r)),
        escape(&measures(shown))
    );
    if r.header.interrupted {
        let _ = writeln!(
            out,
            "<p id=\"interrupted\"><strong>{}.</strong></p>",
            escape(INTERRUPTED)
        );
    }
    if let Some(n) = r.noise {
        let _ = writeln!(out, "<p id=\"noise\">{}.</p>", escape(&noise_sentence(n)));
    }
    let _ = writeln!(
        out,
        "<h2 id=\"chart\">Charts</h2>\n<figure>\n{svg}<figcaption>Per metric, a panel per \
         message size on its own axis (compare the bars within a panel; its axis gives the \
         scale), a bar per mechanism, fastest first: the median GiB/s with a whisker from the slowest run to the fastest; the median round trip (p50) with a \
         whisker to p99; the CPU seconds both ends spent per GiB.</figcaption>\n</figure>"
    );
    out += "<h2 id=\"results\">Results</h2>\n";
    let headings = shown.headings();
    for table in super::tables(r, shown) {
        let size = Size(table.size as u64);
        let _ = write!(
            out,
            "<h3 id=\"size-{}\">{size} messages</h3>\n<table class=\"ipc\">\n<thead><tr>",
            table.size
        );
        for h in &headings {
            let _ = write!(out, "<th>{}</th>", escape(h));
        }
        out += "</tr></thead>\n<tbody>\n";
        for (row, cells) in table.rows.iter().zip(&table.cells) {
            out += if noisy(row) {
                "<tr class=\"noisy\">"
            } else {
                "<tr>"
            };
            for (i, cell) in cells.iter().enumerate() {
                let class = if i == 0 { "" } else { " class=\"num\"" };
                let _ = write!(out, "<td{class}>{}</td>", escape(cell));
            }
            out += "</tr>\n";
        }
        out += "</tbody>\n</table>\n";
        if !table.notes.is_empty() {
            out += "<ul class=\"notes\">\n";
            for note in &table.notes {
                let _ = writeln!(out, "<li>{}</li>", escape(note));
            }
            out += "</ul>\n";
        }
    }
    let _ = writeln!(
        out,
        "<p class=\"small\">{}</p>",
        escape(&columns_note(shown))
    );
    noisy_paragraphs(&mut out, &noisy_lines(r));
    out += "<h2 id=\"costs\">Where the cost goes</h2>\n";
    for (m, cost) in costs(r) {
        let _ = writeln!(
            out,
            "<h3 id=\"mechanism-{name}\">{name}</h3>\n<p class=\"cost\">{}</p>",
            escape(cost),
            name = escape(m.name()),
        );
    }
    out += "</body>\n</html>\n";
    Ok(out)
}

/// Whether either of `row`'s metrics is noisy.
fn noisy(row: &IpcRow) -> bool {
    let t = row.throughput.as_ref().is_some_and(|t| t.gib_s.noisy());
    let l = row.latency.as_ref().is_some_and(|l| l.p50_ns.noisy());
    t || l
}
