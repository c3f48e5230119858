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
use crate::report::text::{verdict_lines, wrap_paragraph};
use crate::report::{Csv, Exporter, Text};
use crate::units::compact_ns as ns;

fn latency_cells(l: &LatencyNs) -> String {
    [
        l.mean,
        l.p50 as f64,
        l.p99 as f64,
        l.p999 as f64,
        l.max as f64,
    ]
    .iter()
    .map(|&v| format!("{:>8}", ns(v)))
    .collect::<Vec<_>>()
    .join(" ")
}

fn placement(p: &Placement) -> String {
    match p.cpus() {
        (Some(writers), Some(readers)) => {
            format!("writers pinned to CPU {writers}, readers to CPU {readers}")
        }
        _ => "unpinned".to_string(),
    }
}

/// The table: a header stating mode, message and pipe size, placement and
/// memory pressure; the verdict; a row per cell; a verify line per cell;
/// the noise said once; with `explain`, each noisy cell's runs and causes.
fn text(r: &ContendResult, explain: bool) -> String {
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
    let _ = writeln!(
        out,
        "contend: {}, {} messages ({atomicity}), {pipe}, {}",
        r.mode,
        Size(r.msg_size as u64),
        placement(&r.placement)
    );
    let runs = match r.max_runs_per_cell {
        Some(max) if max > r.runs_per_cell => format!("{} to {max} runs", r.runs_per_cell),
        _ => format!("{} run(s)", r.runs_per_cell),
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
        out,
        "{} s per run, {runs} per cell{warmup}; rates over the measured time (first write to last)",
        r.duration_s
    );
    if let Some(n) = r.noise {
        let _ = writeln!(out, "{}", noise_sentence(n));
    }
    if let Some(p) = &r.memory_pressure {
        out += &pressure_lines(p);
    }
    let _ = write!(out, "\n{}", verdict_lines(&r.verdict().lines));
    let labels = ["mean", "p50", "p99", "p99.9", "max"]
        .map(|l| format!("{l:>8}"))
        .join(" ");
    let _ = writeln!(
        out,
        "\n{:42} | {:<44} | read latency (per read call)",
        "", "write latency (per message)"
    );
    let _ = writeln!(
        out,
        "{:>3} {:>3} {:>11} {:>9} {:>12} | {labels} | {labels}",
        "W", "R", "writes/s", "MiB/s", "spread"
    );
    for row in &r.rows {
        if row.runs.is_empty() {
            let _ = writeln!(
                out,
                "{:>3} {:>3} {:>11} {:>9} {:>12} | {}",
                row.writers,
                row.readers,
                "-",
                "-",
                "-",
                status_word(row.status)
            );
            continue;
        }
        let _ = writeln!(
            out,
            "{:>3} {:>3} {:>11.0} {:>9.1} {:>12} | {} | {}",
            row.writers,
            row.readers,
            row.median_writes_per_s(),
            row.mib_per_s,
            spread_cell(&row.writes_per_s),
            latency_cells(&row.write_latency_ns),
            latency_cells(&row.read_latency_ns),
        );
    }
    for row in &r.rows {
        if let Some(why) = &row.reason {
            let _ = writeln!(
                out,
                "{}: {}: {why}",
                cell_name(row),
                status_word(row.status)
            );
        }
    }
    for row in &r.rows {
        if let Some(v) = &row.verify {
            let _ = writeln!(out, "{}", verify_line(row, v));
        }
    }
    let rows: Vec<(String, &crate::bench::core::Series)> = (r.rows.iter())
        .map(|row| (cell_name(row), &row.writes_per_s))
        .collect();
    if let Some(paragraph) = noise_paragraph(&rows) {
        let _ = writeln!(out, "\n{}", wrap_paragraph(&paragraph, 100));
    }
    if explain {
        for row in &r.rows {
            let what = format!("{} writes/s", cell_name(row));
            if let Some(text) = noisy_series(&what, &row.writes_per_s, |v| format!("{v:.0}")) {
                let _ = writeln!(out, "{text}");
            }
        }
    }
    out
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
    format!(
        "memory pressure: {} hogs x {} ({}% of MemAvailable {}{}), ready after {:.1} s, {} \
         running at the end, busy on {cpus:.2} CPUs during the runs\n  during the runs ({:.1} \
         s): {}\n  while filling: {}\n",
        p.workers,
        gib(p.bytes_per_worker),
        p.share_percent,
        gib(p.mem_available_bytes),
        if p.capped { ", capped" } else { "" },
        p.ready_s,
        p.hogs_running_at_end,
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
        Ok(
            crate::report::marked(result.header.interrupted, text(result, self.explain))
                .into_bytes(),
        )
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
    fn the_table_states_mode_pipe_placement_and_each_row() {
        let t = text(&fixture(None), false);
        let lines: Vec<_> = t.lines().collect();
        assert_eq!(
            lines[0],
            "contend: threads, 64KiB messages (> PIPE_BUF 4096: writes of several writers may \
             interleave), pipe 1MiB (asked 1MiB), unpinned"
        );
        // The verdict, between the header and the table.
        assert_eq!(
            lines[2..5],
            [
                "",
                "rate:       2 writers x 5 readers: 20000 writes/s (1250.0 MiB/s)",
                "trust:      the one row noisy: figures within +-12% (2x5 the widest); take more \
                 runs (--max-runs 20)",
            ],
            "{t}"
        );
        let table = &lines[3..];
        assert!(table[3].contains("write latency (per message)"), "{t}");
        assert!(table[4].contains("writes/s"), "{t}");
        let row = table[5];
        assert!(
            row.starts_with("  2   5       20000    1250.0  +-12% noisy |"),
            "{row}"
        );
        assert!(
            row.contains("48.0us   40.0us  120.0us  160.0us   2.00ms |"),
            "{row}"
        );
        assert_eq!(
            lines[1],
            "3 s per run, 3 to 6 runs per cell after a warm-up run of 1 s; rates over the \
             measured time (first write to last)"
        );
        // The noise said once; each noisy cell's runs with --explain.
        assert_eq!(table[6], "", "{t}");
        assert!(
            table[7].starts_with("noisy: the one row (2x5) spread"),
            "{t}"
        );
        assert_eq!(table.len(), 9, "{t}");
        let explained = text(&fixture(None), true);
        assert!(
            explained.contains("\nnoisy: 2x5 writes/s (3 runs from 19000 to 21000, 1.11x"),
            "{explained}"
        );
        // Labels sit over their values.
        let end_of = |line: &str, what: &str| line.find(what).map(|i| i + what.len());
        assert_eq!(end_of(table[4], "p99.9"), end_of(row, "160.0us"), "{t}");
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
        let t = text(&fixture(Some(ok)), false);
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
        let t = text(&fixture(Some(bad)), false);
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
        let t = text(&r, true);
        assert!(t.contains("+-12% noisy |"), "{t}");
        assert!(t.contains("\n  likely: "), "{t}");
        assert!(t.contains("\n  what to do: "), "{t}");
        r.rows[0].writes_per_s = Series::of(&[20_000.0, 20_100.0, 19_900.0]);
        r.rows[0]
            .writes_per_s
            .diagnose(crate::bench::core::Ends::default());
        let t = text(&r, false);
        assert!(!t.contains("noisy"), "{t}");
        assert!(t.contains("  +-1.2% |"), "{t}");
        // A failed cell says so, and why.
        r.rows[0].status = Status::Failed;
        r.rows[0].reason = Some("writer 0 failed while writing: boom".into());
        let t = text(&r, false);
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
        let t = text(&r, false);
        let lines: Vec<_> = t.lines().collect();
        assert_eq!(
            lines[2],
            "memory pressure: 4 hogs x 4.00 GiB (80% of MemAvailable 20.00 GiB), ready after 12.5 \
             s, 4 running at the end, busy on 1.50 CPUs during the runs"
        );
        assert_eq!(
            lines[3],
            "  during the runs (10.0 s): NO pressure seen: no PSI and no /proc/vmstat to tell"
        );
        assert_eq!(
            lines[4],
            "  while filling: pressure seen: PSI some stall 1.500 s, full 0.250 s; pgscan 900, \
             pgsteal 0, allocstall 0, pswpout 0, oom_kill 0"
        );
    }
}
