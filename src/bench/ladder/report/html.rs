//! The ladder as one self-contained HTML page, on
//! [`crate::report::page`]'s frame.

use std::fmt::Write as _;
use std::io;

use super::svg::ladder_svg;
use super::{
    COPIES_NOTE, FIGURE_HEADINGS, TEXT_HEADINGS, explanation, figures, noise_line, noisy_lines,
    placement_paragraph, placement_words, runs_words, text_cells, verified,
};
use crate::bench::ladder::{LadderResult, Rung, RungResult};
use crate::bench::profile::{Cost, Profile, ProfileStatus};
use crate::report::page::{answer, escape, head, interrupted, machine, noisy_paragraphs};
use crate::report::{Exporter, Html};

/// The ladder's verdict as the page's first section (nothing when there
/// is none).
fn verdict_section(result: &LadderResult) -> String {
    match &result.verdict {
        Some(verdict) => answer(&verdict.lines),
        None => String::new(),
    }
}

/// The ladder's page, as [`html_report`] writes it.
impl Exporter<LadderResult> for Html {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        html_report(result).map(String::into_bytes)
    }
}

/// The whole page for `result`. Fails only if the chart cannot be drawn.
pub fn html_report(result: &LadderResult) -> io::Result<String> {
    let svg = ladder_svg(result)?;
    let mut out = head(
        &format!(
            "pipespeed {}: Linux pipes on {}",
            result.header.pipespeed_version, result.header.system.cpu_model
        ),
        "How fast are Linux pipes on this machine?",
        "",
    );
    out += &verdict_section(result);
    out += &machine(&result.header.system, &result.header.pipespeed_version);
    let _ = writeln!(
        out,
        "<h2 id=\"placement\">Placement and runs</h2>\n<p>{}; {} after a warm-up, in shuffled \
         order (seed {}){}.</p>",
        escape(&placement_words(result)),
        runs_words(result),
        result.seed,
        verified(result)
    );
    interrupted(&mut out, result.header.interrupted);
    if let Some(line) = noise_line(result) {
        let _ = writeln!(out, "<p id=\"noise\">{}.</p>", escape(&line));
    }
    if let Some(check) = &result.placement_check {
        let _ = writeln!(
            out,
            "<p id=\"placement-check\">{}</p>",
            escape(&placement_paragraph(result, check).replace('\n', " "))
        );
    }
    let has_memcpy = result
        .rungs
        .iter()
        .any(|r| r.name == Rung::Memcpy && r.median().is_some());
    let _ = writeln!(
        out,
        "<h2 id=\"chart\">Chart</h2>\n<figure>\n{svg}<figcaption>Median GiB/s per rung; the \
         whisker runs from the slowest run to the fastest{}.</figcaption>\n</figure>",
        if has_memcpy {
            "; the dashed line is memcpy's median, the limit of the rungs that copy"
        } else {
            ""
        }
    );
    out += "<h2 id=\"results\">Results</h2>\n";
    ladder_table(&mut out, "ladder", &result.rungs);
    let _ = writeln!(
        out,
        "<p class=\"small\">{}</p>",
        escape(&COPIES_NOTE.replace('\n', " "))
    );
    noisy_paragraphs(&mut out, &noisy_lines(result));
    out += "<h2 id=\"rungs\">What each rung changes, and why it is faster</h2>\n";
    for r in &result.rungs {
        let _ = writeln!(
            out,
            "<h3 id=\"rung-{name}\">{name}</h3>\n<p class=\"rung\"><strong>{}.</strong> {}</p>",
            escape(r.name.changes()),
            escape(&explanation(r)),
            name = escape(r.name.name()),
        );
    }
    if result.rungs.iter().any(|r| r.profile.is_some()) {
        out += "<h2 id=\"profile\">Where the time goes</h2>\n";
        for r in &result.rungs {
            if let Some(p) = &r.profile {
                profile(&mut out, r, p);
            }
        }
    }
    out += "</body>\n</html>\n";
    Ok(out)
}

/// The ladder's table with the HTML id `id`: the text table's columns,
/// then the cost per GiB when measured.
pub(crate) fn ladder_table(out: &mut String, id: &str, rungs: &[RungResult]) {
    let with_cost = rungs.iter().any(|r| r.cost.is_some());
    let mut header = TEXT_HEADINGS.to_vec();
    header.extend(FIGURE_HEADINGS);
    if with_cost {
        header.extend(["user s/GiB", "system s/GiB", "switches/GiB", "faults/GiB"]);
    }
    let _ = write!(out, "<table id=\"{}\">\n<thead><tr>", escape(id));
    for h in &header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    *out += "</tr></thead>\n<tbody>\n";
    for r in rungs {
        *out += if r.noisy() {
            "<tr class=\"noisy\">"
        } else {
            "<tr>"
        };
        for cell in text_cells(r) {
            let _ = write!(out, "<td>{}</td>", escape(&cell));
        }
        match figures(r) {
            Ok(numbers) => {
                for n in numbers {
                    let _ = write!(out, "<td class=\"num\">{}</td>", escape(&n));
                }
                if with_cost {
                    cost_cells(out, r.cost.as_ref());
                }
            }
            Err(note) => {
                let span = header.len() - 6;
                let _ = write!(
                    out,
                    "<td class=\"note\" colspan=\"{span}\">{}</td>",
                    escape(&note)
                );
            }
        }
        *out += "</tr>\n";
    }
    *out += "</tbody>\n</table>\n";
}

fn cost_cells(out: &mut String, cost: Option<&Cost>) {
    let numbers = match cost {
        Some(c) => [
            format!("{:.3}", c.user_s_per_gib),
            format!("{:.3}", c.system_s_per_gib),
            format!("{:.0}", c.context_switches_per_gib),
            format!("{:.0}", c.page_faults_per_gib),
        ],
        None => ["-", "-", "-", "-"].map(String::from),
    };
    for n in numbers {
        let _ = write!(out, "<td class=\"num\">{n}</td>");
    }
}

/// One rung's profile: its top symbols, or why there are none.
fn profile(out: &mut String, r: &RungResult, p: &Profile) {
    let name = escape(r.name.name());
    let _ = writeln!(out, "<h3 id=\"profile-{name}\">{name}</h3>");
    let status = match p.status {
        ProfileStatus::Recorded => None,
        ProfileStatus::Unavailable => Some("unavailable"),
        ProfileStatus::Failed => Some("failed"),
    };
    if let Some(status) = status {
        let why = p.reason.as_deref().unwrap_or("no reason given");
        let _ = writeln!(out, "<p>No profile: {status}: {}.</p>", escape(why));
        return;
    }
    let (command, folded) = match &p.command {
        Some(c) => (
            format!(", from {}", command_summary(c)),
            format!(
                "<details class=\"command\"><summary>the whole command line</summary>\
                 <pre>{}</pre></details>\n",
                escape(c)
            ),
        ),
        None => (String::new(), String::new()),
    };
    let _ = writeln!(
        out,
        "<p>{} cpu-clock samples{command}; each symbol's share is its own time, not its \
         callees'.</p>",
        p.samples
    );
    *out += &folded;
    if p.symbols.is_empty() {
        *out += "<p>No symbol was sampled.</p>\n";
        return;
    }
    *out += "<table class=\"profile\">\n<thead><tr><th>share</th><th>symbol</th><th>where</th>\
             <th>process</th></tr></thead>\n<tbody>\n";
    for sym in &p.symbols {
        let _ = writeln!(
            out,
            "<tr><td class=\"num\">{:.1}%</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            sym.percent,
            escape(&sym.symbol),
            if sym.kernel { "kernel" } else { "user" },
            escape(&sym.comm)
        );
    }
    *out += "</tbody>\n</table>\n";
}

/// A profile's command line as a reader needs it, escaped:
/// `<code>perf record -e cpu-clock -g</code> around the writer (CPU 0) and
/// the reader (CPU 1)`; a line not of that shape whole, in `<code>`.
fn command_summary(command: &str) -> String {
    summary(command).unwrap_or_else(|| format!("<code>{}</code>", escape(command)))
}

/// [`command_summary`] of a command line of the shape perf's are.
fn summary(command: &str) -> Option<String> {
    let mut perf = None;
    let mut ends = Vec::new();
    for side in command.split(" | ") {
        let (record, program) = side.split_once(" -- ")?;
        // perf's own options, without its output file and binary's path.
        let mut words = record.split_whitespace();
        let mut options = Vec::new();
        let binary = words.next()?;
        let binary = binary.rsplit('/').next().unwrap_or(binary);
        while let Some(word) = words.next() {
            match word {
                "-o" => {
                    words.next();
                }
                "-N" => {}
                w => options.push(w),
            }
        }
        let options = format!("{binary} {}", options.join(" "));
        if perf.as_ref().is_some_and(|p| *p != options) {
            return None;
        }
        perf = Some(options);
        let (_, spec) = program.split_once(" worker ")?;
        let spec = serde_json::from_str::<serde_json::Value>(spec).ok()?;
        let role = spec.get("role").and_then(|r| r.as_str())?;
        ends.push(match spec.get("cpu").and_then(|c| c.as_u64()) {
            Some(cpu) => format!("the {} (CPU {cpu})", escape(role)),
            None => format!("the {} (unpinned)", escape(role)),
        });
    }
    Some(format!(
        "<code>{}</code> around {}",
        escape(&perf?),
        ends.join(" and ")
    ))
}

#[cfg(test)]
mod tests {
    use super::command_summary;

    #[test]
    fn a_command_not_of_perfs_shape_is_given_whole() {
        assert_eq!(
            command_summary("perf record -e cpu-clock -g -p 4242"),
            "<code>perf record -e cpu-clock -g -p 4242</code>"
        );
        assert_eq!(
            command_summary("perf record -- x worker {not json}"),
            "<code>perf record -- x worker {not json}</code>"
        );
        assert_eq!(
            command_summary(
                "/usr/bin/perf record -g -o a -- /t/w worker {\"role\":\"writer\",\"cpu\":null}"
            ),
            "<code>perf record -g</code> around the writer (unpinned)"
        );
    }
}
