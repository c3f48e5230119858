//! The ladder as the terminal shows it, laid out for [`Text::width`]:
//! a short header, the table a reader needs (rung, what it changes,
//! copies, GiB/s, spread, vs baseline), a line on the columns, and the
//! answer last, where the eye lands. `--explain` adds the machine, the
//! noise, the other columns (min, max, of limit, buffer, pipe, ends) in
//! as many tables as the width takes, the placement check, the costs and
//! a paragraph per rung; the files keep every figure whatever the width.

use std::fmt::Write as _;
use std::io;

use super::{
    copies_cell, ends_cell, explanation, figures, noise_line, noisy_lines, notes, placement_text,
    placement_words, rate, runs_words, verified,
};
use crate::bench::core::shown::{noise_paragraph, spread_cell};
use crate::bench::ladder::{LadderResult, Rung, RungResult};
use crate::bench::profile::{Profile, ProfileStatus};
use crate::report::table::{self, Align, Row};
use crate::report::text::{Column, packed, wrap, wrap_hanging, wrap_paragraph};
use crate::report::{Exporter, Text};
use crate::units::Size;

/// Where the answer's values start, under `baseline: `.
const ANSWER_INDENT: usize = 10;

/// The header, the table, the notes, then the answer; with
/// [`Text::explain`] the details between the notes and the answer.
impl Exporter<LadderResult> for Text {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let width = self.width;
        let mut out = String::new();
        for line in header(result, self.explain) {
            let _ = writeln!(out, "{}", wrap(&line, width));
        }
        if result.header.interrupted {
            let _ = writeln!(out, "{}", wrap(crate::report::INTERRUPTED, width));
        }
        let _ = writeln!(out);
        out += &table(result, width);
        if self.explain {
            for lines in detail_tables(result, width) {
                let _ = writeln!(out);
                for line in lines {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
        let _ = writeln!(out);
        let note = match self.explain {
            true => notes(result),
            false => "copies: CPU copies per byte piped; spread: the 95% interval; more: --explain"
                .to_string(),
        };
        let _ = writeln!(out, "{}", wrap(&note, width));
        if self.explain {
            explained(result, width, &mut out);
        }
        profiles(result, width, &mut out);
        if self.explain {
            for r in &result.rungs {
                let paragraph = format!("{}: {}", r.name, explanation(r));
                let _ = writeln!(out, "\n{}", wrap(&paragraph, width));
            }
        }
        if let Some(verdict) = &result.verdict {
            let _ = writeln!(out);
            for line in &verdict.lines {
                let _ = writeln!(out, "{}", wrap_hanging(line, width, ANSWER_INDENT));
            }
        }
        Ok(out.into_bytes())
    }
}

/// The header's paragraphs: the version, kernel and placement, and how
/// the runs went; with `explain`, the machine in full, the seed and the
/// machine's noise.
fn header(result: &LadderResult, explain: bool) -> Vec<String> {
    let h = &result.header;
    let s = &h.system;
    if !explain {
        let runs = match result.max_runs > result.runs {
            true => format!("{} to {} runs per rung", result.runs, result.max_runs),
            false => runs_words(result),
        };
        return vec![format!(
            "pipespeed {}, Linux {}: {}; {runs}{}",
            h.pipespeed_version,
            s.kernel,
            placement_words(result),
            verified(result)
        )];
    }
    let mut lines = vec![
        format!(
            "pipespeed {}: Linux {} on {} ({} CPUs online), THP {}, pipe-max-size {}",
            h.pipespeed_version,
            s.kernel,
            s.cpu_model,
            s.cpus_online,
            s.thp,
            Size(s.pipe_max_size_bytes as u64)
        ),
        placement_words(result),
        format!(
            "{} after a warm-up, shuffled (seed {}){}",
            runs_words(result),
            result.seed,
            verified(result)
        ),
    ];
    lines.extend(noise_line(result));
    lines
}

/// What the table's `what it changes` column holds: the rung's words,
/// a word or two, or nothing, whichever is the widest that fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Changes {
    Long,
    Short,
    Left,
}

/// The table a reader needs, one row per rung, in the first layout of
/// [`Changes`] whose lines all fit `width`; a rung without figures says
/// why across the figures' columns, wrapped under its start.
pub(crate) fn table(result: &LadderResult, width: usize) -> String {
    let mut lines = Vec::new();
    for changes in [Changes::Long, Changes::Short, Changes::Left] {
        lines = table_lines(result, changes, width);
        if lines.iter().all(|l| l.chars().count() <= width) {
            break;
        }
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The table's lines with `changes` as its second column.
fn table_lines(result: &LadderResult, changes: Changes, width: usize) -> Vec<String> {
    let what = |r: &RungResult| match changes {
        Changes::Long => Some(r.changes.clone()),
        Changes::Short => Some(r.name.changes_short().to_string()),
        Changes::Left => None,
    };
    // The short words get a short heading: the column is no wider.
    let what_heading = match changes {
        Changes::Long => "what it changes",
        _ => "changes",
    };
    let heading = [
        "rung",
        what_heading,
        "copies",
        "GiB/s",
        "spread",
        "vs baseline",
    ];
    let skip = usize::from(changes == Changes::Left);
    let text = 3 - skip;
    let mut rows = vec![Row::Cells(
        (heading.iter().enumerate())
            .filter(|(i, _)| *i != 1 || skip == 0)
            .map(|(_, h)| h.to_string())
            .collect(),
    )];
    for r in &result.rungs {
        let mut cells = vec![r.name.to_string()];
        cells.extend(what(r));
        cells.push(r.copies.to_string());
        rows.push(match figures(r) {
            Ok(_) => {
                cells.extend([
                    rate(r.gib_s.median),
                    spread_cell(&r.gib_s),
                    (r.speedup_vs_write_read).map_or_else(|| "-".into(), |x| format!("{x:.1}x")),
                ]);
                Row::Cells(cells)
            }
            Err(note) => Row::Span(cells, note),
        });
    }
    let widths = table::widths(&rows, 0);
    let align = |i| match i < text {
        true => Align::Left,
        false => Align::Right,
    };
    let lines = table::lines(&rows, &widths, align);
    // A sentence across the figures wraps under its own start.
    let start: usize = widths[..text].iter().sum::<usize>() + 2 * text;
    (rows.iter().zip(lines))
        .map(|(row, line)| match row {
            Row::Span(_, note) if line.chars().count() > width => {
                let prefix: String = line.chars().take(start).collect();
                let body = wrap(note, width.saturating_sub(start));
                format!(
                    "{prefix}{}",
                    body.replace('\n', &format!("\n{}", " ".repeat(start)))
                )
            }
            _ => line,
        })
        .flat_map(|l| l.lines().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// The columns `--explain` adds, each rung's row by its name again, in
/// as many tables as it takes to keep every line within `width`.
fn detail_tables(result: &LadderResult, width: usize) -> Vec<Vec<String>> {
    let rungs = &result.rungs;
    let figure = |i: usize| {
        rungs
            .iter()
            .map(move |r| figures(r).map_or_else(|_| "-".into(), |f| f[i].clone()))
    };
    let pipe = |r: &RungResult| {
        r.pipe_size
            .map_or_else(|| "default".into(), |p| Size(p as u64).to_string())
    };
    let columns = [
        Column::new("copies", Align::Left, rungs.iter().map(copies_cell)),
        Column::new(
            "buffer",
            Align::Left,
            rungs.iter().map(|r| Size(r.buf_size as u64).to_string()),
        ),
        Column::new("pipe", Align::Left, rungs.iter().map(pipe)),
        Column::new("ends", Align::Left, rungs.iter().map(ends_cell)),
        Column::new("min", Align::Right, figure(1)),
        Column::new("max", Align::Right, figure(2)),
        Column::new("of limit", Align::Right, figure(5)),
    ];
    let key = Column::new(
        "rung",
        Align::Left,
        rungs.iter().map(|r| r.name.to_string()),
    );
    packed(&key, &columns, width)
}

/// `--explain`'s paragraphs before the profiles: the noise, the
/// placement check, each noisy row and the costs.
fn explained(result: &LadderResult, width: usize, out: &mut String) {
    if let Some(paragraph) = noise_paragraph(&result.series()) {
        let _ = writeln!(out, "\n{}", wrap_paragraph(&paragraph, width));
    }
    if let Some(check) = &result.placement_check {
        let _ = writeln!(out, "\n{}", wrap(&placement_text(result, check), width));
    }
    for line in noisy_lines(result) {
        let _ = writeln!(out, "\n{}", wrap_paragraph(&line, width));
    }
    cost_table(result, width, out);
}

/// A count per GiB: whole numbers, or one decimal below 10.
fn count(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// The cost per GiB of every measured rung.
fn cost_table(result: &LadderResult, width: usize, out: &mut String) {
    let costs: Vec<_> = (result.rungs.iter())
        .filter_map(|r| r.cost.map(|c| (r.name, c)))
        .collect();
    if costs.is_empty() {
        return;
    }
    let heading = "cost per GiB piped (getrusage of the writer and reader processes, start-up \
                   included,\nover the measured runs; memcpy: its one thread):";
    let _ = writeln!(out, "\n{}", lines_within(heading, width));
    let name = costs.iter().map(|(n, _)| n.name().len()).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "{:<name$}  {:>10}  {:>10}  {:>12}  {:>11}",
        "rung", "user CPU s", "sys CPU s", "ctx switches", "page faults"
    );
    for (rung, c) in costs {
        let _ = writeln!(
            out,
            "{:<name$}  {:>10.3}  {:>10.3}  {:>12}  {:>11}",
            rung.name(),
            c.user_s_per_gib,
            c.system_s_per_gib,
            count(c.context_switches_per_gib),
            count(c.page_faults_per_gib)
        );
    }
}

/// Each profiled rung's top symbols; one line when no rung could be
/// profiled, for the same reason.
fn profiles(result: &LadderResult, width: usize, out: &mut String) {
    let profiled: Vec<(Rung, &Profile)> = (result.rungs.iter())
        .filter_map(|r| r.profile.as_ref().map(|p| (r.name, p)))
        .collect();
    let Some((_, first)) = profiled.first() else {
        return;
    };
    let said = |line: String| wrap(&line, width);
    if profiled
        .iter()
        .all(|(_, p)| p.status == ProfileStatus::Unavailable && p.reason == first.reason)
    {
        let why = first.reason.as_deref().unwrap_or("no reason given");
        let _ = writeln!(out, "\n{}", said(format!("no profiles: {why}")));
        return;
    }
    let heading = "where the time goes: perf record -e cpu-clock -g of each end, self time per \
                   symbol\nas a share of both ends' samples ([k] kernel, [.] user space):";
    let _ = writeln!(out, "\n{}", lines_within(heading, width));
    for (name, p) in profiled {
        let why = p.reason.as_deref().unwrap_or("no reason given");
        match p.status {
            ProfileStatus::Recorded => {
                let _ = writeln!(out, "\n{name} ({} samples):", p.samples);
                let comm = p.symbols.iter().map(|s| s.comm.len()).max().unwrap_or(0);
                for s in &p.symbols {
                    let _ = writeln!(
                        out,
                        "  {:>6.2}%  {:<comm$}  [{}] {}",
                        s.percent,
                        s.comm,
                        if s.kernel { 'k' } else { '.' },
                        s.symbol
                    );
                }
            }
            ProfileStatus::Unavailable => {
                let _ = writeln!(out, "\n{}", said(format!("{name}: no profile: {why}")));
            }
            ProfileStatus::Failed => {
                let _ = writeln!(out, "\n{}", said(format!("{name}: profile failed: {why}")));
            }
        }
    }
}

/// `text` as its lines break it when they fit `width` (a heading broken
/// where it reads best), else wrapped to `width` as one paragraph.
fn lines_within(text: &str, width: usize) -> String {
    match text.lines().all(|line| line.chars().count() <= width) {
        true => text.to_string(),
        false => wrap(&text.replace('\n', " "), width),
    }
}
