//! `pipespeed ipc` as people read it, and the pieces the CSV, Markdown
//! and HTML forms share: pure functions of an [`IpcResult`].
#[cfg(feature = "cli")]
mod svg;
#[cfg(feature = "cli")]
pub use svg::ipc_svg;

use crate::bench::core::{Placement, Status};

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::io;

mod csv;
#[cfg(feature = "cli")]
mod html;
mod markdown;

use crate::bench::core::shown::{
    noise_paragraph, noise_sentence, noisy_paragraph, spread_cell, status_word,
};
use crate::bench::hist::LatencyNs;
use crate::bench::ipc::{IpcResult, IpcRow, Mechanism, RoundTrips, Throughput};
use crate::report::table::Align;
use crate::report::text::{Column, VERDICT_INDENT, packed, wrap_hanging, wrap_paragraph};
use crate::report::{Exporter, Text};
use crate::units::{Size, readable_ns};

/// The machine, the ends and runs, a table per message size (fastest
/// first), why cells are empty and the noise said once, then the verdict,
/// within [`Text::width`]; with [`Text::explain`], the columns the
/// default leaves out, what every column means, where each mechanism's
/// cost goes and each noisy row's runs and causes.
impl Exporter<IpcResult> for Text {
    fn export(&self, result: &IpcResult) -> io::Result<Vec<u8>> {
        Ok(text(result, self.explain, self.width).into_bytes())
    }
}

/// Which metrics have columns: the ones asked for, or found in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shown {
    /// Throughput: GiB/s, msgs/s, spread, CPU s/GiB and x pipe.
    pub throughput: bool,
    /// Round trips: p50, p99, p99.9 and their spread.
    pub latency: bool,
}

impl Shown {
    /// The metrics of `r`'s tables.
    pub(crate) fn of(r: &IpcResult) -> Shown {
        Shown {
            throughput: r.config.throughput || r.rows.iter().any(|row| row.throughput.is_some()),
            latency: r.config.latency || r.rows.iter().any(|row| row.latency.is_some()),
        }
    }

    /// The headings of the columns, in the order of [`cells`].
    pub(crate) fn headings(self) -> Vec<&'static str> {
        let mut out = vec!["mechanism"];
        if self.throughput {
            out.extend(["GiB/s", "msgs/s", "spread", "CPU s/GiB"]);
        }
        out.push("copies");
        if self.throughput {
            out.push("x pipe");
        }
        if self.latency {
            out.extend(["rtt p50", "rtt p99", "rtt p99.9", "rtt spread"]);
        }
        out
    }
}

/// The throughput of `row`, when it ran and has runs.
pub(crate) fn throughput(row: &IpcRow) -> Option<&Throughput> {
    (row.throughput.as_ref()).filter(|t| t.status == Status::Ok && !t.runs.is_empty())
}

/// The round trips of `row`, when they ran and have runs.
pub(crate) fn round_trips(row: &IpcRow) -> Option<&RoundTrips> {
    (row.latency.as_ref()).filter(|l| l.status == Status::Ok && !l.runs.is_empty())
}

pub(crate) use crate::bench::ipc::result::verdict::{gib_s_cell as gib_s, speed};

/// The round-trip summary the table shows for `row`.
pub(crate) fn rtt(row: &IpcRow) -> Option<LatencyNs> {
    round_trips(row)?.rtt_ns
}

/// `rows` ordered by `key`, smallest first, the rows without one after
/// in the order given.
pub(crate) fn ordered(
    mut rows: Vec<&IpcRow>,
    key: impl Fn(&IpcRow) -> Option<f64>,
) -> Vec<&IpcRow> {
    rows.sort_by(|a, b| match (key(a), key(b)) {
        (Some(a), Some(b)) => a.total_cmp(&b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    });
    rows
}

/// The message sizes of `r`, in the order they first appear.
pub(crate) fn sizes(r: &IpcResult) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for row in &r.rows {
        if !out.contains(&row.size) {
            out.push(row.size);
        }
    }
    out
}

/// One message size's table.
pub(crate) struct SizeTable<'a> {
    /// Bytes per message.
    pub size: usize,
    /// Its rows: fastest first, the rows without a rate after in the
    /// order measured; by round-trip p50 when no row has a rate.
    pub rows: Vec<&'a IpcRow>,
    /// Each row's cells, under [`Shown::headings`].
    pub cells: Vec<Vec<String>>,
    /// Why cells are empty: `mechanism: reason`, once each.
    pub notes: Vec<String>,
}

/// A table per message size, in the order measured.
pub(crate) fn tables(r: &IpcResult, shown: Shown) -> Vec<SizeTable<'_>> {
    sizes(r)
        .into_iter()
        .map(|size| {
            let rows: Vec<&IpcRow> = r.rows.iter().filter(|row| row.size == size).collect();
            let rows = if rows.iter().any(|row| speed(row).is_some()) {
                ordered(rows, |row| speed(row).map(|g| -g))
            } else {
                ordered(rows, |row| rtt(row).map(|l| l.p50 as f64))
            };
            let pipe = (rows.iter())
                .find(|row| row.mechanism == Mechanism::Pipe)
                .and_then(|row| speed(row));
            SizeTable {
                size,
                cells: rows.iter().map(|row| cells(row, pipe, shown)).collect(),
                notes: notes(&rows, shown),
                rows,
            }
        })
        .collect()
}

/// `row`'s cells: `-` where there is no figure; `pipe` is pipe's median
/// GiB/s at the same size.
fn cells(row: &IpcRow, pipe: Option<f64>, shown: Shown) -> Vec<String> {
    let cell = |v: Option<String>| v.unwrap_or_else(|| "-".to_string());
    let t = throughput(row);
    let mut out = vec![row.mechanism.to_string()];
    if shown.throughput {
        out.push(cell(speed(row).map(gib_s)));
        out.push(cell(
            t.and_then(|t| t.median_msgs_per_s)
                .map(|m| format!("{m:.0}")),
        ));
        out.push(t.map_or_else(|| "-".into(), |t| spread_cell(&t.gib_s)));
        out.push(cell(
            t.and_then(|t| t.cpu_s_per_gib).map(|c| format!("{c:.3}")),
        ));
    }
    out.push(row.copies.to_string());
    if shown.throughput {
        let ratio = speed(row).zip(pipe.filter(|p| *p > 0.0));
        out.push(cell(ratio.map(|(g, p)| format!("{:.2}x", g / p))));
    }
    if shown.latency {
        let l = rtt(row);
        for pick in [l.map(|l| l.p50), l.map(|l| l.p99), l.map(|l| l.p999)] {
            out.push(cell(pick.map(|ns| readable_ns(ns as f64))));
        }
        out.push(round_trips(row).map_or_else(|| "-".into(), |l| spread_cell(&l.p50_ns)));
    }
    out
}

/// What a metric that ran has when none of its runs was made.
const NO_RUNS: &str = "no runs";

/// What keeps a metric's cells empty: not running, or no runs.
fn trouble(status: Status, reason: Option<&str>, runs: usize) -> Option<String> {
    match status {
        Status::Ok if runs == 0 => Some(NO_RUNS.to_string()),
        Status::Ok => None,
        status => Some(format!(
            "{}: {}",
            status_word(status),
            reason.unwrap_or("no reason given")
        )),
    }
}

/// Why a row's cells are empty: `what` is the mechanism, with the metric
/// when only one of the two shown is empty; `why` its status and reason,
/// or [`NO_RUNS`].
#[derive(Debug, Clone, PartialEq)]
struct Trouble {
    /// `io-uring`, or `pipe-splice round trip`.
    what: String,
    /// `unavailable: io_uring_setup: ...`, or `no runs`.
    why: String,
    /// The round trip the mechanism has not by design
    /// ([`Mechanism::no_round_trip`]), not a limit of this machine.
    by_design: bool,
}

/// Why `rows`' empty cells are empty, each once, in the rows' order.
fn troubles(rows: &[&IpcRow], shown: Shown) -> Vec<Trouble> {
    let mut out: Vec<Trouble> = Vec::new();
    for row in rows {
        let t = (row.throughput.as_ref().filter(|_| shown.throughput))
            .and_then(|t| trouble(t.status, t.reason.as_deref(), t.runs.len()));
        let l = (row.latency.as_ref().filter(|_| shown.latency))
            .and_then(|l| trouble(l.status, l.reason.as_deref(), l.runs.len()));
        let m = row.mechanism;
        let design = |why: &str| (m.no_round_trip()).is_some_and(|reason| why.ends_with(reason));
        let found: Vec<Trouble> = match (t, l) {
            (Some(t), Some(l)) if t == l => vec![Trouble {
                what: m.to_string(),
                why: t,
                by_design: false,
            }],
            (t, l) if shown.throughput && shown.latency => [("throughput", t), ("round trip", l)]
                .into_iter()
                .filter_map(|(what, why)| {
                    let why = why?;
                    Some(Trouble {
                        what: format!("{m} {what}"),
                        by_design: what == "round trip" && design(&why),
                        why,
                    })
                })
                .collect(),
            (t, l) => (t.or(l).into_iter())
                .map(|why| Trouble {
                    what: m.to_string(),
                    by_design: shown.latency && !shown.throughput && design(&why),
                    why,
                })
                .collect(),
        };
        for trouble in found {
            if !out.contains(&trouble) {
                out.push(trouble);
            }
        }
    }
    out
}

/// Why `rows`' empty cells are empty, `mechanism: why` (naming the
/// metric when only one of two is empty), each once; then, in one line,
/// the metrics that simply have no runs yet (an interrupted measurement):
/// the notes under each table of the Markdown and the page.
fn notes(rows: &[&IpcRow], shown: Shown) -> Vec<String> {
    let troubles = troubles(rows, shown);
    let (unrun, others): (Vec<Trouble>, Vec<Trouble>) =
        troubles.into_iter().partition(|t| t.why == NO_RUNS);
    let mut out: Vec<String> = (others.iter())
        .map(|t| format!("{}: {}", t.what, t.why))
        .collect();
    if !unrun.is_empty() {
        let what: Vec<String> = unrun.into_iter().map(|t| t.what).collect();
        out.push(format!("{NO_RUNS}: {}", what.join(", ")));
    }
    out
}

/// The notes of every table said once, under the last: the rows that
/// share a reason in one note, naming the sizes when not every one
/// (`mqueue at 64KiB/1MiB: unavailable: a message is over ...`), the
/// metrics without runs last. Without `explain`, the round trips that
/// are missing by design in one short line, their reasons with it.
fn said_once(tables: &[SizeTable<'_>], shown: Shown, explain: bool) -> Vec<String> {
    // A reason, and the rows it holds for with their sizes.
    type Group = (String, Vec<(String, Vec<Size>)>);
    let mut groups: Vec<Group> = Vec::new();
    let mut by_design: Vec<String> = Vec::new();
    for table in tables {
        let size = Size(table.size as u64);
        for t in troubles(&table.rows, shown) {
            if t.by_design && !explain {
                let m = t.what.trim_end_matches(" round trip").to_string();
                if !by_design.contains(&m) {
                    by_design.push(m);
                }
                continue;
            }
            // A reason said at one size is not said again at the next.
            let why = t.why.replace(&format!("a {size} message"), "a message");
            let i = match groups.iter().position(|(w, _)| *w == why) {
                Some(i) => i,
                None => {
                    groups.push((why, Vec::new()));
                    groups.len() - 1
                }
            };
            let at = &mut groups[i].1;
            match at.iter_mut().find(|(what, _)| *what == t.what) {
                Some((_, sizes)) => sizes.push(size),
                None => at.push((t.what, vec![size])),
            }
        }
    }
    // The reasons first, the metrics without runs after.
    groups.sort_by_key(|(why, _)| why == NO_RUNS);
    let mut out = Vec::new();
    if !by_design.is_empty() {
        out.push(format!(
            "no round trip, by design: {} (why: --explain)",
            by_design.join(", ")
        ));
    }
    for (why, whats) in groups {
        let whats: Vec<String> = (whats.into_iter())
            .map(|(what, sizes)| match sizes.len() == tables.len() {
                true => what,
                false => {
                    let sizes: Vec<String> = sizes.iter().map(Size::to_string).collect();
                    format!("{what} at {}", sizes.join("/"))
                }
            })
            .collect();
        out.push(match why.as_str() {
            NO_RUNS => format!("{NO_RUNS}: {}", whats.join(", ")),
            _ => format!("{}: {why}", whats.join(", ")),
        });
    }
    out
}

/// Where the two ends ran, in the words of `ipc`.
pub(crate) fn ends(p: Placement) -> String {
    match p {
        Placement::Pinned {
            writer_cpu,
            reader_cpu,
        } if writer_cpu == reader_cpu => format!("sender and receiver both on CPU {writer_cpu}"),
        Placement::Pinned {
            writer_cpu,
            reader_cpu,
        } => format!("sender on CPU {writer_cpu}, receiver on CPU {reader_cpu}"),
        Placement::Unpinned => "sender and receiver unpinned".to_string(),
    }
}

/// How many runs, how long, in what order.
pub(crate) fn runs_words(r: &IpcResult) -> String {
    let c = &r.config;
    let runs = if c.max_runs > c.runs {
        format!(
            "{} to {} runs per row and metric (runs added while a row is noisy)",
            c.runs, c.max_runs
        )
    } else {
        let s = if c.runs == 1 { "" } else { "s" };
        format!("{} run{s} per row and metric", c.runs)
    };
    let each = match c.bytes {
        None => format!("about {} s each", c.duration_s),
        Some(b) if c.latency => format!(
            "{} per throughput run, {} s per round-trip run",
            Size(b),
            c.duration_s
        ),
        Some(b) => format!("{} per run", Size(b)),
    };
    format!(
        "{runs}, {each}, after a warm-up, in shuffled order (seed {}){}",
        c.seed,
        if c.verify {
            "; every byte verified"
        } else {
            ""
        }
    )
}

/// What the figures are, for the metrics shown.
pub(crate) fn measures(shown: Shown) -> String {
    let mut parts = Vec::new();
    if shown.throughput {
        parts.push("GiB/s: the receiver's rate, the median of the runs");
    }
    if shown.latency {
        parts.push(
            "rtt: a round trip, sender -> receiver -> sender, each percentile the median of the \
             runs'",
        );
    }
    parts.join("; ")
}

/// What the columns that are not figures mean: under the tables of the
/// Markdown and the page, and of the text with `--explain`.
pub(crate) fn columns_note(shown: Shown) -> String {
    let mut text = String::from("copies: bytes the CPU copies per byte moved, by design.");
    if shown.throughput {
        text += " x pipe: the median over pipe's at the same size. spread: the 95% interval of \
                 the mean of the runs. CPU s/GiB: both ends' CPU seconds, start-up included.";
    }
    if shown.latency {
        text += " rtt spread: the same, of the runs' p50.";
    }
    text
}

/// Each mechanism of `r` once, in the order measured, with its cost
/// sentence as the file has it.
pub(crate) fn costs(r: &IpcResult) -> Vec<(Mechanism, &str)> {
    let mut out: Vec<(Mechanism, &str)> = Vec::new();
    for row in &r.rows {
        if !out.iter().any(|(m, _)| *m == row.mechanism) {
            let cost = match row.cost.as_str() {
                "" => row.mechanism.cost(),
                cost => cost,
            };
            out.push((row.mechanism, cost));
        }
    }
    out
}

/// A paragraph per noisy metric of a row: how much it spread, the likely
/// causes and what to do, as the ladder says it.
pub(crate) fn noisy_lines(r: &IpcResult) -> Vec<String> {
    type Range = fn(f64, f64) -> String;
    let gib_s: Range = |lo, hi| format!("from {lo:.2} to {hi:.2} GiB/s");
    let p50: Range = |lo, hi| format!("with p50 from {} to {}", readable_ns(lo), readable_ns(hi));
    let mut out = Vec::new();
    for row in &r.rows {
        let metrics = [
            (row.throughput.as_ref()).map(|t| ("throughput", &t.gib_s, gib_s)),
            (row.latency.as_ref()).map(|l| ("round trip", &l.p50_ns, p50)),
        ];
        for (metric, series, range) in metrics.into_iter().flatten() {
            if let Some(s) = series.spread.filter(|s| s.noisy)
                && let (Some(lo), Some(hi)) = (series.min, series.max)
            {
                out.push(noisy_paragraph(
                    &format!("{} {} {metric}", row.mechanism, Size(row.size as u64)),
                    series.runs.len(),
                    &range(lo, hi),
                    &s,
                    series.diagnosis.as_ref(),
                ));
            }
        }
    }
    out
}

/// The machine in a line, with the CPUs this process may use.
pub(crate) fn machine_line(r: &IpcResult) -> String {
    let s = &r.header.system;
    let allowed: Vec<String> = s.cpus_allowed.iter().map(|c| c.to_string()).collect();
    format!(
        "pipespeed {} ipc: Linux {} on {} ({} CPUs online, allowed {}), THP {}, pipe-max-size {}",
        r.header.pipespeed_version,
        s.kernel,
        s.cpu_model,
        s.cpus_online,
        allowed.join(","),
        s.thp,
        Size(s.pipe_max_size_bytes as u64)
    )
}

/// The columns behind `--explain` (and in the files), so that the
/// default table fits 80 columns.
const DETAILS: [&str; 4] = ["msgs/s", "CPU s/GiB", "rtt p99", "rtt p99.9"];

/// What the default table's columns that are not figures mean, in a
/// line: the long form is `--explain`'s.
fn columns_line(shown: Shown) -> String {
    let mut parts = vec!["copies: CPU copies per byte moved"];
    if shown.throughput {
        parts.push("x pipe: GiB/s over pipe's");
        parts.push("spread: the 95% interval");
    }
    parts.push("more: --explain");
    parts.join("; ")
}

/// `text`'s lines wrapped to `width` at spaces, each continuation line
/// two deeper than its line's indent.
fn paragraph(text: &str, width: usize) -> String {
    text.lines()
        .map(|line| wrap_paragraph(line, width) + "\n")
        .collect()
}

/// The text, as its [`Exporter`] says: the settings, a table per size
/// (the columns that do not fit `width` in a second table, never cut),
/// the notes said once, then the verdict last, where the eye lands;
/// every line within `width` columns.
fn text(r: &IpcResult, explain: bool, width: usize) -> String {
    let shown = Shown::of(r);
    let mut head = String::new();
    let _ = writeln!(head, "{}", machine_line(r));
    let _ = writeln!(head, "{}; {}", ends(r.config.placement), runs_words(r));
    let _ = writeln!(head, "{}", measures(shown));
    if let Some(n) = r.noise {
        let _ = writeln!(head, "{}", noise_sentence(n));
    }
    if r.header.interrupted {
        let _ = writeln!(head, "{}", crate::report::INTERRUPTED);
    }
    let mut out = paragraph(&head, width);
    let tables = tables(r, shown);
    if tables.is_empty() {
        out += "\nno rows\n";
    }
    let headings = shown.headings();
    for table in &tables {
        let _ = writeln!(out, "\n{} messages", Size(table.size as u64));
        let mut columns: Vec<Column> = (headings.iter().enumerate())
            .filter(|(_, h)| explain || !DETAILS.contains(h))
            .map(|(i, h)| {
                let align = if i == 0 { Align::Left } else { Align::Right };
                Column::new(h, align, table.cells.iter().map(|row| row[i].clone()))
            })
            .collect();
        let key = columns.remove(0);
        for (n, lines) in packed(&key, &columns, width).into_iter().enumerate() {
            if n > 0 {
                out.push('\n');
            }
            for line in lines {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    let mut tail = String::new();
    for note in said_once(&tables, shown, explain) {
        let _ = writeln!(tail, "{note}");
    }
    match explain {
        true => {
            let _ = writeln!(tail, "{}", columns_note(shown));
            tail += "where the cost goes:\n";
            for (m, cost) in costs(r) {
                let _ = writeln!(tail, "{m}: {cost}");
            }
        }
        false => {
            let _ = writeln!(tail, "{}", columns_line(shown));
        }
    }
    if let Some(noise) = noise_paragraph(&r.named_series()) {
        let _ = writeln!(tail, "{noise}");
    }
    if explain {
        for line in noisy_lines(r) {
            let _ = writeln!(tail, "{line}");
        }
    }
    out.push('\n');
    out += &paragraph(&tail, width);
    out.push('\n');
    for line in &r.verdict().lines {
        let _ = writeln!(out, "{}", wrap_hanging(line, width, VERDICT_INDENT));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_rates_keep_three_significant_digits() {
        assert_eq!(gib_s(12.5), "12.50");
        assert_eq!(gib_s(1.0), "1.00");
        assert_eq!(gib_s(0.5), "0.500");
        assert_eq!(gib_s(0.0527), "0.0527");
        assert_eq!(gib_s(0.00271), "0.00271");
        assert_eq!(gib_s(0.0), "0.00");
    }

    #[test]
    fn a_trouble_names_its_status_or_the_missing_runs() {
        assert_eq!(trouble(Status::Ok, None, 3), None);
        assert_eq!(trouble(Status::Ok, None, 0).as_deref(), Some("no runs"));
        assert_eq!(
            trouble(Status::Failed, Some("EPIPE"), 2).as_deref(),
            Some("failed: EPIPE")
        );
        assert_eq!(
            trouble(Status::Unavailable, None, 0).as_deref(),
            Some("unavailable: no reason given")
        );
    }

    #[test]
    fn the_ends_are_the_sender_and_the_receiver() {
        let pinned = |w, r| Placement::Pinned {
            writer_cpu: w,
            reader_cpu: r,
        };
        assert_eq!(ends(pinned(0, 1)), "sender on CPU 0, receiver on CPU 1");
        assert_eq!(ends(pinned(2, 2)), "sender and receiver both on CPU 2");
        assert_eq!(ends(Placement::Unpinned), "sender and receiver unpinned");
    }
}
