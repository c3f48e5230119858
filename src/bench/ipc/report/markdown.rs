//! `ipc` as GitHub-flavoured Markdown: the text's tables and notes, for a
//! pull request, an issue or a mail.

use std::fmt::Write as _;
use std::io;

use super::{Shown, columns_note, costs, ends, machine_line, measures, noisy_lines, runs_words};
use crate::bench::core::shown::noise_sentence;
use crate::bench::ipc::IpcResult;
use crate::report::text::md_cell;
use crate::report::{Exporter, INTERRUPTED, Markdown};
use crate::units::Size;

/// The machine and the runs in a paragraph, the verdict as the text
/// prints it (in a fenced block, its columns kept), a table per message size
/// with the reasons for its empty cells as a list, what the columns
/// mean, a list of where each mechanism's cost goes, and the noisy rows.
impl Exporter<IpcResult> for Markdown {
    fn export(&self, result: &IpcResult) -> io::Result<Vec<u8>> {
        Ok(markdown(result).into_bytes())
    }
}

fn markdown(r: &IpcResult) -> String {
    let shown = Shown::of(r);
    let mut out = format!(
        "{}: {}; {}.\n\n{}.\n",
        machine_line(r),
        ends(r.config.placement),
        runs_words(r),
        measures(shown)
    );
    if let Some(n) = r.noise {
        let _ = writeln!(out, "\n{}.", md_cell(&noise_sentence(n)));
    }
    if r.header.interrupted {
        let _ = writeln!(out, "\n**{INTERRUPTED}**");
    }
    let verdict = crate::report::text::verdict_lines(&r.verdict().lines);
    let _ = write!(out, "\n```text\n{verdict}```\n");
    let headings = shown.headings();
    for table in super::tables(r, shown) {
        let _ = writeln!(out, "\n**{} messages**\n", Size(table.size as u64));
        let _ = writeln!(out, "| {} |", headings.join(" | "));
        let _ = writeln!(out, "|:---|{}", "---:|".repeat(headings.len() - 1));
        for cells in &table.cells {
            let cells: Vec<String> = cells.iter().map(|c| md_cell(c)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if !table.notes.is_empty() {
            out.push('\n');
        }
        for note in &table.notes {
            let _ = writeln!(out, "- {}", md_cell(note));
        }
    }
    let _ = writeln!(out, "\n{}", columns_note(shown));
    let costs = costs(r);
    if !costs.is_empty() {
        out += "\n**Where the cost goes**\n\n";
    }
    for (m, cost) in costs {
        let _ = writeln!(out, "- **{m}**: {}", md_cell(cost));
    }
    for line in noisy_lines(r) {
        let _ = writeln!(out, "\n{}", line.replace("\n  ", "<br>"));
    }
    out
}
