//! The ladder as GitHub-flavoured Markdown: `bench --markdown`.

use std::fmt::Write;
use std::io;

use super::{
    FIGURE_HEADINGS, FIGURES, TEXT_HEADINGS, figures, machine_words, noise_line, noise_paragraph,
    placement_paragraph, placement_words, runs_words, text_cells,
};
use crate::bench::ladder::LadderResult;
use crate::report::text::md_cell;
use crate::report::{Exporter, Markdown};

/// The machine in a line, the verdict, the text's table, the noise and
/// the placement.
impl Exporter<LadderResult> for Markdown {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let mut out = format!(
            "{}: {}; {}.\n\n",
            machine_words(&result.header),
            placement_words(result),
            runs_words(result)
        );
        if let Some(verdict) = &result.verdict {
            for line in &verdict.lines {
                let (head, rest) = line.split_once(':').unwrap_or(("", line));
                let _ = writeln!(out, "- **{head}:** {}", md_cell(rest.trim_start()));
            }
            out.push('\n');
        }
        if result.header.interrupted {
            let _ = writeln!(out, "**{}**\n", crate::report::INTERRUPTED);
        }
        let heads = TEXT_HEADINGS;
        let _ = writeln!(
            out,
            "| {} | {} |",
            heads.join(" | "),
            FIGURE_HEADINGS.join(" | ")
        );
        let _ = writeln!(
            out,
            "|{}{}",
            ":---|".repeat(heads.len()),
            "---:|".repeat(FIGURES)
        );
        for r in &result.rungs {
            let cells = text_cells(r).map(|c| md_cell(&c));
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
        if let Some(paragraph) = noise_paragraph(&result.series()) {
            let _ = writeln!(out, "\n{}", paragraph.replace("\n  ", "<br>"));
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
