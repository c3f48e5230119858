//! The result as people and spreadsheets read it: a table, and CSV with
//! one row per run per cell. Pure functions of a [`ContendResult`],
//! tested on fixed data.
#[cfg(feature = "cli")]
mod svg;
#[cfg(feature = "cli")]
pub use svg::contend_svg;

use crate::bench::core::Placement;

use std::fmt::Write as _;
use std::io;

use crate::bench::hist::LatencyNs;
use crate::units::{GIB, Size};

use crate::bench::contend::hogs::PressureReport;
use crate::bench::contend::pressure::Evidence;
use crate::bench::contend::tally::VerifyReport;
use crate::bench::contend::verdict::cell_name;
use crate::bench::contend::{ContendResult, PIPE_BUF, Row};
use crate::bench::core::shown::{
    noise_paragraph, noise_sentence, noisy_series, series_csv, series_csv_header, spread_cell,
    status_word,
};
use crate::bench::latency::report::{paragraph, verdict_at};
use crate::report::table::{self, Align};
use crate::report::{Csv, Exporter, Text};
use crate::units::compact_ns as ns;

fn placement(p: &Placement) -> String {
    match p.cpus() {
        (Some(writers), Some(readers)) => {
            format!("writers pinned to CPU {writers}, readers to CPU {readers}")
        }
        _ => "unpinned".to_string(),
    }
}

/// The header stating mode, message and pipe size, placement and memory
/// pressure; a table of a row per cell (the rate, its spread and the
/// p50 and p99 of both sides; with `explain`, the means, p99.9 and max
/// in a second table); a verify line per cell; the noise said once;
/// with `explain`, each noisy cell's runs and causes; then the verdict,
/// last, where the eye lands. Every line within `width` columns.
fn text(r: &ContendResult, explain: bool, width: usize) -> String {
    let mut out = String::new();
    let atomicity = if r.atomic {
        format!("<= PIPE_BUF {PIPE_BUF}: writes are atomic")
    } else {
        format!("> PIPE_BUF {PIPE_BUF}: writes of several writers may interleave")
    };
    let (granted, asked) = (Size(r.pipe_size as u64), Size(r.pipe_size_requested as u64));
    let pipe = if r.pipe_size_clamped {
        format!("pipe {granted} (default {asked} cut to pipe-max-size)")
    } else {
        format!("pipe {granted} (asked {asked})")
    };
    let mut head = format!(
        "contend: {}, {} messages ({atomicity}), {pipe}, {}\n",
        r.mode,
        Size(r.msg_size as u64),
        placement(&r.placement)
    );
    let runs = match r.max_runs_per_cell {
        Some(max) if max > r.runs_per_cell => format!("{} to {max} runs", r.runs_per_cell),
        _ if r.runs_per_cell == 1 => "1 run".to_string(),
        _ => format!("{} runs", r.runs_per_cell),
    };
    let warmup = if r.warmup_duration_s > 0.0 {
        // A third of --duration: to the millisecond, without trailing zeros.
        let secs = format!("{:.3}", r.warmup_duration_s);
        let secs = secs.trim_end_matches('0').trim_end_matches('.');
        format!(" after a warm-up run of {secs} s")
    } else {
        String::new()
    };
    let _ = writeln!(
        head,
        "{} s per run, {runs} per cell{warmup}; rates over the measured time (first write to \
         last); latencies per message written and per read call, each the runs' median",
        r.duration_s
    );
    if let Some(n) = r.noise {
        let _ = writeln!(head, "{}", noise_sentence(n));
    }
    if let Some(p) = &r.memory_pressure {
        head += &pressure_lines(p);
    }
    out += &paragraph(&head, width);
    let heading = |cells: [&str; 7], first: [&str; 2]| {
        let cells = first.into_iter().chain(cells).map(String::from).collect();
        table::Row::Cells(cells)
    };
    let mut rows = vec![heading(
        [
            "writes/s",
            "MiB/s",
            "spread",
            "write p50",
            "write p99",
            "read p50",
            "read p99",
        ],
        ["W", "R"],
    )];
    let measured = || r.rows.iter().filter(|row| !row.runs.is_empty());
    for row in &r.rows {
        let counts = vec![row.writers.to_string(), row.readers.to_string()];
        if row.runs.is_empty() {
            rows.push(table::Row::Span(
                counts,
                status_word(row.status).to_string(),
            ));
            continue;
        }
        let (w, rd) = (&row.write_latency_ns, &row.read_latency_ns);
        let mut cells = counts;
        cells.extend([
            format!("{:.0}", row.median_writes_per_s()),
            format!("{:.1}", row.mib_per_s),
            spread_cell(&row.writes_per_s),
        ]);
        cells.extend([w.p50, w.p99, rd.p50, rd.p99].map(|v| ns(v as f64)));
        rows.push(table::Row::Cells(cells));
    }
    out.push('\n');
    out += &aligned(&rows);
    if explain {
        let mut tails = vec![heading(
            [
                "write mean",
                "write p99.9",
                "write max",
                "read mean",
                "read p99.9",
                "read max",
                "",
            ],
            ["W", "R"],
        )];
        for row in measured() {
            let (w, rd) = (&row.write_latency_ns, &row.read_latency_ns);
            let mut cells = vec![row.writers.to_string(), row.readers.to_string()];
            let tails_ns = [w.mean, w.p999 as f64, w.max as f64];
            let read_ns = [rd.mean, rd.p999 as f64, rd.max as f64];
            cells.extend(tails_ns.into_iter().chain(read_ns).map(ns));
            tails.push(table::Row::Cells(cells));
        }
        out += "\nthe tails, each the runs' median\n";
        out += &aligned(&tails);
    }
    let mut notes = String::new();
    for row in &r.rows {
        if let Some(why) = &row.reason {
            let _ = writeln!(
                notes,
                "{}: {}: {why}",
                cell_name(row),
                status_word(row.status)
            );
        }
    }
    for row in &r.rows {
        if let Some(v) = &row.verify {
            let _ = writeln!(notes, "{}", verify_line(row, v));
        }
    }
    let series: Vec<(String, &crate::bench::core::Series)> = (r.rows.iter())
        .map(|row| (cell_name(row), &row.writes_per_s))
        .collect();
    if let Some(paragraph) = noise_paragraph(&series) {
        let _ = writeln!(notes, "{paragraph}");
    }
    if explain {
        for row in &r.rows {
            let what = format!("{} writes/s", cell_name(row));
            if let Some(text) = noisy_series(&what, &row.writes_per_s, |v| format!("{v:.0}")) {
                let _ = writeln!(notes, "{text}");
            }
        }
    }
    if !notes.is_empty() {
        out.push('\n');
        out += &paragraph(&notes, width);
    }
    out.push('\n');
    out += &verdict_at(&r.verdict().lines, width);
    out
}

/// `rows` aligned, the figures right, each line ending in a newline.
fn aligned(rows: &[table::Row]) -> String {
    (table::aligned(rows, |_| Align::Right).into_iter())
        .map(|l| l + "\n")
        .collect()
}

/// Three lines: the hogs, what the kernel saw during the runs, and while
/// the hogs first wrote their memory.
fn pressure_lines(p: &PressureReport) -> String {
    let gib = |b: u64| format!("{:.2} GiB", b as f64 / GIB as f64);
    let cpus = if p.seconds > 0.0 {
        p.hog_cpu_s / p.seconds
    } else {
        0.0
    };
    // Which made the pressure: stress-ng where it was on PATH, else ours.
    let by = match &p.command {
        Some(args) => format!(
            "{} {} (as pipe_bench), {} instances running at the end",
            p.by,
            args.join(" "),
            p.hogs_running_at_end
        ),
        None => format!(
            "{} pipespeed hogs x {} ({}% of MemAvailable {}{}; no stress-ng on PATH), ready after \
             {:.1} s, {} running at the end",
            p.workers,
            gib(p.bytes_per_worker),
            p.share_percent,
            gib(p.mem_available_bytes),
            if p.capped { ", capped" } else { "" },
            p.ready_s,
            p.hogs_running_at_end,
        ),
    };
    format!(
        "memory pressure: {by}, busy on {cpus:.2} CPUs during the runs\n  during the runs ({:.1} \
         s): {}\n  while filling: {}\n",
        p.seconds,
        evidence(&p.evidence),
        evidence(&p.while_filling),
    )
}

fn evidence(e: &Evidence) -> String {
    let mut facts = Vec::new();
    if let Some(us) = e.psi_some_stall_us {
        facts.push(format!(
            "PSI some stall {:.3} s, full {:.3} s",
            us as f64 / 1e6,
            e.psi_full_stall_us.unwrap_or(0) as f64 / 1e6
        ));
    }
    if let Some(c) = &e.reclaim {
        facts.push(format!(
            "pgscan {}, pgsteal {}, allocstall {}, pswpout {}, oom_kill {}",
            c.pgscan, c.pgsteal, c.allocstall, c.pswpout, c.oom_kill
        ));
    }
    if facts.is_empty() {
        facts.push("no PSI and no /proc/vmstat to tell".to_string());
    }
    let verdict = if e.happened {
        "pressure seen"
    } else {
        "NO pressure seen"
    };
    format!("{verdict}: {}", facts.join("; "))
}

fn verify_line(row: &Row, v: &VerifyReport) -> String {
    let cell = format!("verify {}x{}", row.writers, row.readers);
    if !v.ok {
        let mut why = format!(
            "{cell}: FAILED: {} of {} messages received exactly once; {} lost, {} duplicated, {} \
             unexpected, {} corrupt cells, {} stray bytes, {} reordered",
            v.messages_received,
            v.messages_sent,
            v.lost,
            v.duplicated,
            v.unexpected,
            v.bad_cells,
            v.stray_bytes,
            v.reordered
        );
        if v.atomic {
            let _ = write!(
                why,
                ", {} torn (messages <= PIPE_BUF must arrive whole)",
                v.torn()
            );
        }
        if v.interleavings > 0 && (v.atomic || row.writers == 1) {
            let _ = write!(why, ", {} interleavings (impossible here)", v.interleavings);
        }
        return why;
    }
    let mut line = format!(
        "{cell}: ok, {} messages, each received exactly once",
        v.messages_sent
    );
    if v.atomic {
        line += ", none torn";
    } else if row.writers > 1 {
        let _ = write!(
            line,
            "; messages larger than PIPE_BUF may interleave: {} interleavings seen, not corruption",
            v.interleavings
        );
        if row.readers > 1 {
            line += " (with several readers, a lower bound)";
        }
    }
    if !v.atomic && v.split_messages > 0 {
        let _ = write!(line, "; {} arrived in more than one read", v.split_messages);
    }
    line
}

/// One CSV row per run per cell (one with empty run fields for a cell
/// without a run), each ending with its cell's status and its writes/s
/// series: median, range, spread and the noisy mark.
fn csv(r: &ContendResult) -> String {
    let lat = ["mean", "p50", "p90", "p99", "p999", "max"];
    let mut out = String::from(
        "writers,readers,run,mode,msg_size,pipe_size,seconds,messages,bytes,writes_per_s,mib_per_s,",
    );
    for side in ["write", "read"] {
        for l in lat {
            let _ = write!(out, "{side}_{l}_ns,");
        }
    }
    let _ = writeln!(
        out,
        "read_calls,verify_ok,status,{}",
        series_csv_header("writes_per_s")
    );
    let values = |l: &LatencyNs| {
        format!(
            "{:.1},{},{},{},{},{}",
            l.mean, l.p50, l.p90, l.p99, l.p999, l.max
        )
    };
    // A cell without a run: seconds to verify_ok (19 fields) empty.
    let no_run = vec![""; 19].join(",");
    for row in &r.rows {
        let cell = format!(
            "{},{}",
            status_word(row.status),
            series_csv(&row.writes_per_s).join(",")
        );
        if row.runs.is_empty() {
            let _ = writeln!(
                out,
                "{},{},,{},{},{},{no_run},{cell}",
                row.writers, row.readers, r.mode, r.msg_size, r.pipe_size
            );
            continue;
        }
        for (i, run) in row.runs.iter().enumerate() {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{:.6},{},{},{:.1},{:.3},{},{},{},{},{cell}",
                row.writers,
                row.readers,
                i + 1,
                r.mode,
                r.msg_size,
                r.pipe_size,
                run.seconds,
                run.messages,
                run.bytes,
                run.writes_per_s,
                run.mib_per_s,
                values(&run.write_latency_ns),
                values(&run.read_latency_ns),
                run.read_calls,
                run.verify.map(|v| v.ok.to_string()).unwrap_or_default()
            );
        }
    }
    out
}

/// The table: a header stating mode, message and pipe size, placement and
/// memory pressure; the verdict; a row per cell; a verify line per cell;
/// the noise said once; with [`Text::explain`], each noisy cell's runs
/// and causes.
impl Exporter<ContendResult> for Text {
    fn export(&self, result: &ContendResult) -> io::Result<Vec<u8>> {
        let text = text(result, self.explain, self.width);
        Ok(crate::report::marked(result.header.interrupted, text).into_bytes())
    }
}

/// One row per run per cell.
impl Exporter<ContendResult> for Csv {
    fn export(&self, result: &ContendResult) -> io::Result<Vec<u8>> {
        Ok(csv(result).into_bytes())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::bench::contend::{Mode, RunResult};
    use crate::bench::core::harness::Header;
    use crate::bench::core::{Series, Status};
    use crate::report::fixtures::machine;
    use crate::sys::SystemFacts;

    fn lat(base: u64) -> LatencyNs {
        LatencyNs {
            mean: base as f64 * 1.2,
            p50: base,
            p90: base * 2,
            p99: base * 3,
            p999: base * 4,
            max: base * 50,
        }
    }

    fn fixture(verify: Option<VerifyReport>) -> ContendResult {
        let run = |w: f64| RunResult {
            seconds: 3.0,
            messages: (w * 3.0) as u64,
            bytes: (w * 3.0) as u64 * 65536,
            writes_per_s: w,
            mib_per_s: w / 16.0,
            write_latency_ns: lat(40_000),
            write_log2_ns: None,
            read_latency_ns: lat(900),
            read_calls: 10,
            bytes_read: 1,
            verify,
        };
        let row = Row {
            writers: 2,
            readers: 5,
            status: Status::Ok,
            reason: None,
            stall: None,
            warmup_writes_per_s: Some(18_000.0),
            writes_per_s: Series::of(&[19_000.0, 20_000.0, 21_000.0]),
            mib_per_s: 1250.0,
            seconds: 3.0,
            write_latency_ns: lat(40_000),
            read_latency_ns: lat(900),
            runs: vec![run(19_000.0), run(20_000.0), run(21_000.0)],
            verify,
        };
        ContendResult {
            header: Header {
                schema: "pipespeed.contend/1".into(),
                pipespeed_version: "0.1.0".into(),
                build: None,
                system: SystemFacts {
                    kernel: "6.18.0".into(),
                    cpu_model: "Test".into(),
                    ..machine()
                },
                interrupted: false,
            },
            mode: Mode::Threads,
            placement: Placement::Unpinned,
            pipe_size: 1 << 20,
            pipe_size_requested: 1 << 20,
            pipe_size_clamped: false,
            msg_size: 65536,
            atomic: false,
            duration_s: 3.0,
            warmup_duration_s: 1.0,
            runs_per_cell: 3,
            max_runs_per_cell: Some(6),
            seed: Some(1),
            noise: None,
            memory_pressure: None,
            rows: vec![row],
        }
    }

    #[test]
    fn latencies_read_in_sensible_units() {
        assert_eq!(ns(850.0), "850ns");
        assert_eq!(ns(40_000.0), "40.0us");
        assert_eq!(ns(2_500_000.0), "2.50ms");
        assert_eq!(ns(3e9), "3.00s");
    }

    #[test]
    fn the_table_states_mode_pipe_placement_and_each_row_and_the_verdict_comes_last() {
        let t = text(&fixture(None), false, 100);
        let lines: Vec<_> = t.lines().collect();
        assert_eq!(
            lines[..4],
            [
                "contend: threads, 64KiB messages (> PIPE_BUF 4096: writes of several writers may \
                 interleave), pipe",
                "  1MiB (asked 1MiB), unpinned",
                "3 s per run, 3 to 6 runs per cell after a warm-up run of 1 s; rates over the \
                 measured time (first",
                "  write to last); latencies per message written and per read call, each the \
                 runs' median",
            ],
            "{t}"
        );
        let table = [
            "",
            "W  R  writes/s   MiB/s       spread  write p50  write p99  read p50  read p99",
            "2  5     20000  1250.0  +-12% noisy     40.0us    120.0us     900ns     2.7us",
            "",
        ];
        assert_eq!(lines[4..8], table, "{t}");
        // The noise said once; each noisy cell's runs with --explain.
        assert!(
            lines[8].starts_with("noisy: the one row (2x5) spread"),
            "{t}"
        );
        // The verdict last, where the eye lands.
        assert_eq!(
            lines[lines.len() - 3..],
            [
                "",
                "rate:       2 writers x 5 readers: 20000 writes/s (1250.0 MiB/s)",
                "trust:      the one row noisy: figures within +-12% (2x5 the widest); take more \
                 runs (--max-runs 20)",
            ],
            "{t}"
        );
        let explained = text(&fixture(None), true, 100);
        assert!(
            explained.contains("\nnoisy: 2x5 writes/s (3 runs from 19000 to 21000, 1.11x"),
            "{explained}"
        );
        assert!(
            explained.contains(
                "\nW  R  write mean  write p99.9  write max  read mean  read p99.9  read max\n\
                 2  5      48.0us      160.0us     2.00ms      1.1us       3.6us    45.0us\n"
            ),
            "{explained}"
        );
    }

    #[test]
    fn every_line_fits_the_width_and_one_cell_reads_in_the_singular() {
        let mut one = fixture(None);
        (one.rows[0].writers, one.rows[0].readers) = (1, 1);
        for r in [fixture(None), one.clone()] {
            for (width, explain) in [(80, false), (120, false), (80, true), (120, true)] {
                let t = text(&r, explain, width);
                for line in t.lines() {
                    assert!(line.chars().count() <= width, "over {width}: {line}\n{t}");
                }
                let verdict = t.trim_end().rsplit("\n\n").next().unwrap();
                assert!(verdict.starts_with("rate: "), "{t}");
                assert!(verdict.lines().count() <= 6, "{t}");
            }
        }
        let t = text(&one, false, 80);
        assert!(
            t.contains("\nrate:       1 writer x 1 reader: 20000 writes/s"),
            "{t}"
        );
    }

    #[test]
    fn verify_lines_call_interleaving_by_its_name() {
        let ok = VerifyReport {
            ok: true,
            messages_sent: 60_000,
            messages_received: 60_000,
            interleavings: 12,
            split_messages: 30,
            ..VerifyReport::default()
        };
        // Whole here; the text wraps it at the width.
        let t = verify_line(&fixture(Some(ok)).rows[0], &ok);
        assert!(
            t.contains(
                "verify 2x5: ok, 60000 messages, each received exactly once; messages \
                            larger than PIPE_BUF may interleave: 12 interleavings seen, not \
                            corruption (with several readers, a lower bound); 30 arrived in \
                            more than one read"
            ),
            "{t}"
        );
        let bad = VerifyReport {
            ok: false,
            lost: 2,
            messages_received: 59_998,
            ..ok
        };
        let t = verify_line(&fixture(Some(bad)).rows[0], &bad);
        assert!(
            t.contains("verify 2x5: FAILED: 59998 of 60000 messages received exactly once; 2 lost"),
            "{t}"
        );
    }

    #[test]
    fn csv_has_one_row_per_run_and_a_constant_width() {
        let c = csv(&fixture(None));
        let lines: Vec<_> = c.lines().collect();
        assert_eq!(lines.len(), 4);
        let width = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == width), "{c}");
        assert!(
            lines[1].starts_with("2,5,1,threads,65536,1048576,3.000000,57000,"),
            "{}",
            lines[1]
        );
        assert!(
            lines[1]
                .ends_with(",10,,ok,20000,19000,21000,0.12421691041614799,1.105263157894737,true"),
            "{}",
            lines[1]
        );
        assert!(lines[0].ends_with(",status,writes_per_s_median,writes_per_s_min,writes_per_s_max,writes_per_s_ci95_half_width,writes_per_s_max_over_min,writes_per_s_noisy"), "{}", lines[0]);
        // A cell that failed before its first run keeps its line, and the
        // columns their places.
        let mut r = fixture(None);
        r.rows[0].runs.clear();
        r.rows[0].writes_per_s = Series::new();
        r.rows[0].status = Status::Failed;
        let c = csv(&r);
        let lines: Vec<_> = c.lines().collect();
        assert_eq!(lines.len(), 2, "{c}");
        assert_eq!(lines[1].split(',').count(), width, "{c}");
        assert!(lines[1].starts_with("2,5,,threads,65536,1048576,,"), "{c}");
        assert!(lines[1].ends_with(",failed,,,,,,false"), "{c}");
    }

    #[test]
    fn a_noisy_cell_is_marked_and_diagnosed_and_a_tight_one_is_not() {
        let mut r = fixture(None);
        r.rows[0].writes_per_s.noise = vec![
            crate::sys::RunNoise {
                wall_s: 3.0,
                steal_s: 1.5,
                ..Default::default()
            };
            3
        ];
        r.rows[0]
            .writes_per_s
            .diagnose(crate::bench::core::Ends::default());
        let t = text(&r, true, 100);
        assert!(t.contains("  +-12% noisy  "), "{t}");
        assert!(t.contains("\n  likely: "), "{t}");
        assert!(t.contains("\n  what to do: "), "{t}");
        r.rows[0].writes_per_s = Series::of(&[20_000.0, 20_100.0, 19_900.0]);
        r.rows[0]
            .writes_per_s
            .diagnose(crate::bench::core::Ends::default());
        let t = text(&r, false, 100);
        assert!(!t.contains("noisy"), "{t}");
        assert!(t.contains("  +-1.2%  "), "{t}");
        // A failed cell says so, and why.
        r.rows[0].status = Status::Failed;
        r.rows[0].reason = Some("writer 0 failed while writing: boom".into());
        let t = text(&r, false, 100);
        assert!(
            t.contains("2x5: failed: writer 0 failed while writing: boom"),
            "{t}"
        );
    }

    #[test]
    fn the_pressure_lines_say_whether_the_kernel_felt_it() {
        let seen = Evidence {
            psi_some_stall_us: Some(1_500_000),
            psi_full_stall_us: Some(250_000),
            psi_some_avg10_end: Some(3.0),
            reclaim: Some(crate::bench::contend::pressure::Reclaim {
                pgscan: 900,
                ..Default::default()
            }),
            happened: true,
        };
        let report = PressureReport {
            by: "pipespeed hogs".into(),
            command: None,
            workers: 4,
            share_percent: 80.0,
            mem_available_bytes: 20 * GIB,
            bytes_requested: 16 * GIB,
            bytes_total: 16 * GIB,
            bytes_per_worker: 4 * GIB,
            capped: false,
            method: "map, write, unmap".into(),
            ready_s: 12.5,
            seconds: 10.0,
            hogs_running_at_end: 4,
            hog_cpu_s: 15.0,
            evidence: Evidence::default(),
            while_filling: seen,
        };
        let mut r = fixture(None);
        r.memory_pressure = Some(report);
        let t = text(&r, false, 100);
        let lines: Vec<_> = t.lines().collect();
        assert_eq!(
            lines[4..9],
            [
                "memory pressure: 4 pipespeed hogs x 4.00 GiB (80% of MemAvailable 20.00 GiB; no \
                 stress-ng on PATH),",
                "  ready after 12.5 s, 4 running at the end, busy on 1.50 CPUs during the runs",
                "  during the runs (10.0 s): NO pressure seen: no PSI and no /proc/vmstat to tell",
                "  while filling: pressure seen: PSI some stall 1.500 s, full 0.250 s; pgscan 900, \
                 pgsteal 0,",
                "    allocstall 0, pswpout 0, oom_kill 0",
            ],
            "{t}"
        );
        let mut by_stress_ng = r.memory_pressure.clone().unwrap();
        by_stress_ng.by = "stress-ng 0.15.06".into();
        by_stress_ng.command = Some(
            ["--vm", "4", "--vm-bytes", "80%", "--vm-method", "all"]
                .map(String::from)
                .to_vec(),
        );
        r.memory_pressure = Some(by_stress_ng);
        let t = text(&r, false, 100);
        let lines: Vec<_> = t.lines().collect();
        assert_eq!(
            lines[4..6],
            [
                "memory pressure: stress-ng 0.15.06 --vm 4 --vm-bytes 80% --vm-method all (as \
                 pipe_bench), 4",
                "  instances running at the end, busy on 1.50 CPUs during the runs",
            ],
            "{t}"
        );
    }
}
