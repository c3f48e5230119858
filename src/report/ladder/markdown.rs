//! The ladder as GitHub-flavoured Markdown: `bench --markdown`.

use std::fmt::Write;
use std::io;

use super::super::{Exporter, Markdown};
use super::{
    FIGURE_HEADINGS, FIGURES, cells, figures, noise_line, noisy_lines, placement_paragraph,
    runs_words,
};
use crate::bench::ladder::LadderResult;
use crate::units::Size;

/// `|` and line breaks escaped for a Markdown table cell.
pub(in crate::report) fn md_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The machine in a line, the table with the same columns as the text
/// (a rung without figures says why across them), and the notes on noisy
/// rungs and placement, as Markdown.
impl Exporter<LadderResult> for Markdown {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let s = &result.header.system;
        let mut out = format!(
            "pipespeed {} on Linux {}, {} ({} CPUs), THP {}, pipe-max-size {}: {}; {}.\n\n",
            result.header.pipespeed_version,
            s.kernel,
            s.cpu_model,
            s.cpus_online,
            s.thp,
            Size(s.pipe_max_size_bytes as u64),
            result.placement,
            runs_words(result)
        );
        if result.header.interrupted {
            let _ = writeln!(out, "**{}**\n", super::super::INTERRUPTED);
        }
        let heads = ["rung", "what it changes", "copies", "buffer", "pipe"];
        let _ = writeln!(
            out,
            "| {} | {} |",
            heads.join(" | "),
            FIGURE_HEADINGS.join(" | ")
        );
        let _ = writeln!(out, "|{}{}", ":---|".repeat(5), "---:|".repeat(FIGURES));
        for r in &result.rungs {
            let cells = cells(r).map(|c| md_cell(&c));
            let tail = match figures(r) {
                Ok(numbers) => numbers.map(|n| md_cell(&n)).join(" | "),
                Err(note) => {
                    let mut tail = vec![String::new(); FIGURES];
                    tail[0] = md_cell(&note);
                    tail.join(" | ")
                }
            };
            let _ = writeln!(out, "| {} | {tail} |", cells.join(" | "));
        }
        if let Some(line) = noise_line(result) {
            let _ = writeln!(out, "\n{}.", md_cell(&line));
        }
        for line in noisy_lines(result) {
            let _ = writeln!(out, "\n{}", line.replace("\n  ", "<br>"));
        }
        if let Some(check) = &result.placement_check {
            let _ = writeln!(
                out,
                "\n{}",
                placement_paragraph(result, check).replace('\n', " ")
            );
        }
        Ok(out.into_bytes())
    }
}
