//! `pipespeed latency`'s table and CSV, tested on fixed data.

#[cfg(feature = "cli")]
mod svg;
#[cfg(feature = "cli")]
pub use svg::latency_svg;

use std::fmt::Write as _;
use std::io;

use crate::bench::core::shown::{
    noise_paragraph, noise_sentence, noisy_series, series_csv, series_csv_header, spread_cell,
    status_word,
};
use crate::bench::core::{Series, Status};
use crate::bench::latency::{LatencyConfig, LatencyResult, LatencyRow, Span, describe};
use crate::report::table::{self, Align};
use crate::report::text::{VERDICT_INDENT, serde_name as name, wrap_hanging};
use crate::report::{Csv, Exporter, Text};
use crate::units::Size;
use crate::units::readable_ns as ns;

/// The table, what failed, the noise said once and the machine's, then
/// the verdict, within [`Text::width`]; with [`Text::explain`], the tails
/// and ranges of the runs and each noisy size's runs and causes.
impl Exporter<LatencyResult> for Text {
    fn export(&self, result: &LatencyResult) -> io::Result<Vec<u8>> {
        let text = text(result, self.explain, self.width);
        Ok(crate::report::marked(result.header.interrupted, text).into_bytes())
    }
}

/// One row per run and size.
impl Exporter<LatencyResult> for Csv {
    fn export(&self, result: &LatencyResult) -> io::Result<Vec<u8>> {
        Ok(csv(result).into_bytes())
    }
}

/// A span as the settings say it: `1000 round trips`, `0.5 s`.
pub(crate) fn span(s: Span) -> String {
    match s {
        Span::RoundTrips(n) => format!("{n} round trips"),
        Span::Seconds(s) => format!("{s} s"),
    }
}

/// `runs of` as the setting says: `3 runs`, or `3-10 runs` when a noisy
/// size may get more.
fn runs(c: &LatencyConfig) -> String {
    match c.max_runs() {
        max if max > c.runs => format!("{}-{max} runs", c.runs),
        _ => format!("{} runs", c.runs),
    }
}

/// The settings, the table, what failed and the noise said once, then
/// the verdict last, where the eye lands; every line within `width`
/// columns. With `explain`, the tails and the ranges of the runs in two
/// more tables and each noisy size's runs and causes.
fn text(r: &LatencyResult, explain: bool, width: usize) -> String {
    let (s, c) = (&r.header.system, &r.config);
    let allowed: Vec<String> = s.cpus_allowed.iter().map(|c| c.to_string()).collect();
    let machine = format!(
        "pipespeed {} latency: Linux {} on {} ({} CPUs online, allowed {})",
        r.header.pipespeed_version,
        s.kernel,
        s.cpu_model,
        s.cpus_online,
        allowed.join(",")
    );
    let settings = format!(
        "two {}, {}, wait {}; {} of {} after {} of warm-up{}",
        name(c.mode),
        describe(c.placement),
        name(c.wait),
        runs(c),
        span(c.measure),
        span(c.warmup),
        if c.verify {
            "; every byte verified"
        } else {
            ""
        }
    );
    let mut out = String::new();
    for line in [
        machine.as_str(),
        &settings,
        "round trips, pinger -> ponger -> pinger (one way is about half), each figure the \
         runs' median",
    ] {
        out += &paragraph(line, width);
    }
    let cell = |row: &LatencyRow, v: &dyn Fn(&LatencyRow) -> String| match row.runs.is_empty() {
        true => "-".to_string(),
        false => v(row),
    };
    let size = |row: &LatencyRow| Size(row.size as u64).to_string();
    // The table a reader needs; the rate's noisy mark beside it (its
    // spread is in the notes and the files).
    let mut table = vec![["size", "round trips/s", "p50", "p99", "p50 spread"].map(String::from)];
    table.extend(r.rows.iter().map(|row| {
        [
            size(row),
            cell(row, &|row| {
                let rate = row
                    .round_trips_per_s
                    .median
                    .map_or("-".into(), |v| format!("{v:.0}"));
                match row.round_trips_per_s.noisy() {
                    true => format!("{rate} noisy"),
                    false => rate,
                }
            }),
            cell(row, &|row| ns(row.rtt_ns.p50 as f64)),
            cell(row, &|row| ns(row.rtt_ns.p99 as f64)),
            cell(row, &|row| spread_cell(&row.rtt_p50_ns)),
        ]
    }));
    out.push('\n');
    out += &aligned(&table);
    if explain {
        let range = |s: &Series, show: &dyn Fn(f64) -> String| match (s.min, s.max) {
            (Some(lo), Some(hi)) => format!("{} - {}", show(lo), show(hi)),
            _ => "-".into(),
        };
        let mut tails = vec![["size", "mean", "p90", "p99.9", "max"].map(String::from)];
        tails.extend(r.rows.iter().map(|row| {
            [
                size(row),
                cell(row, &|row| ns(row.rtt_ns.mean)),
                cell(row, &|row| ns(row.rtt_ns.p90 as f64)),
                cell(row, &|row| ns(row.rtt_ns.p999 as f64)),
                cell(row, &|row| ns(row.rtt_ns.max as f64)),
            ]
        }));
        let mut ranges = vec![["size", "p50 range", "round trips/s range"].map(String::from)];
        ranges.extend(r.rows.iter().map(|row| {
            [
                size(row),
                cell(row, &|row| range(&row.rtt_p50_ns, &|v| ns(v))),
                cell(row, &|row| {
                    range(&row.round_trips_per_s, &|v| format!("{v:.0}"))
                }),
            ]
        }));
        out += "\nthe tails, each the runs' median\n";
        out += &aligned(&tails);
        out += "\nthe ranges of the runs\n";
        out += &aligned(&ranges);
    }
    let mut notes = Vec::new();
    for row in &r.rows {
        if row.status != Status::Ok {
            notes.push(format!(
                "{}: {}: {}",
                status_word(row.status),
                size(row),
                row.reason.as_deref().unwrap_or("no reason given")
            ));
        }
    }
    notes.extend(noise_paragraph(&r.named_series()));
    notes.extend(r.noise().map(noise_sentence));
    if explain {
        for row in &r.rows {
            let size = size(row);
            let p50 = noisy_series(&format!("{size} median round trip"), &row.rtt_p50_ns, ns);
            let rates = || {
                noisy_series(
                    &format!("{size} round trips/s"),
                    &row.round_trips_per_s,
                    |v| format!("{v:.0}/s"),
                )
            };
            notes.extend(p50.or_else(rates));
        }
    }
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            out += &paragraph(&note, width);
        }
    }
    out.push('\n');
    out += &verdict_at(&r.verdict().lines, width);
    out
}

/// Each line of `text` wrapped to `width` at spaces, its continuation
/// lines two deeper than the line's own indent: `wrap_paragraph` of
/// `report::text` indents them past `width` (by two), so the kinds that
/// must fit the terminal (latency, contend, ipc, top) use this one.
pub(crate) fn paragraph(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let body = line.trim_start();
        let pad = " ".repeat(line.len() - body.len());
        let wrapped = wrap_hanging(body, width.saturating_sub(pad.len()), 2);
        let _ = writeln!(out, "{pad}{}", wrapped.replace('\n', &format!("\n{pad}")));
    }
    out
}

/// The verdict's lines, each wrapped to `width` under its value (as
/// `report::text::verdict_lines` does at 100 columns).
pub(crate) fn verdict_at(lines: &[String], width: usize) -> String {
    let mut out = String::new();
    for line in lines {
        let _ = writeln!(out, "{}", wrap_hanging(line, width, VERDICT_INDENT));
    }
    out
}

/// `rows` as aligned lines, the size left and the figures right, each
/// ending in a newline.
fn aligned<const N: usize>(rows: &[[String; N]]) -> String {
    let rows: Vec<table::Row> = rows.iter().map(|r| table::Row::Cells(r.to_vec())).collect();
    let lines = table::aligned(&rows, |i| match i {
        0 => Align::Left,
        _ => Align::Right,
    });
    lines.into_iter().map(|l| l + "\n").collect()
}

/// One row per run and size: the run's fields, flattened, then the
/// setting, the size's status and its two series (the same on every run
/// of the size). A size without a run gets one row, its run fields empty.
fn csv(r: &LatencyResult) -> String {
    let mut out = format!(
        "size,run,round_trips,seconds,round_trips_per_s,rtt_mean_ns,rtt_p50_ns,rtt_p90_ns,\
         rtt_p99_ns,rtt_p999_ns,rtt_max_ns,warmup_round_trips,mode,wait,pinger_cpu,ponger_cpu,\
         status,{},{}\n",
        series_csv_header("rtt_p50_ns"),
        series_csv_header("round_trips_per_s"),
    );
    let (mode, wait) = (name(r.config.mode), name(r.config.wait));
    let (pinger, ponger) = r.config.placement.cpus();
    let cpu = |c: Option<usize>| c.map(|c| c.to_string()).unwrap_or_default();
    for row in &r.rows {
        let size = [
            status_word(row.status).to_string(),
            series_csv(&row.rtt_p50_ns).join(","),
            series_csv(&row.round_trips_per_s).join(","),
        ]
        .join(",");
        let setting = format!("{mode},{wait},{},{}", cpu(pinger), cpu(ponger));
        if row.runs.is_empty() {
            let _ = writeln!(out, "{},,,,,,,,,,,,{setting},{size}", row.size);
        }
        for (i, run) in row.runs.iter().enumerate() {
            let l = &run.rtt_ns;
            let _ = writeln!(
                out,
                "{},{},{},{:.6},{:.1},{:.1},{},{},{},{},{},{},{setting},{size}",
                row.size,
                i + 1,
                run.round_trips,
                run.seconds,
                run.round_trips_per_s,
                l.mean,
                l.p50,
                l.p90,
                l.p99,
                l.p999,
                l.max,
                run.warmup_round_trips,
            );
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::bench::core::harness::Header;
    use crate::bench::hist::LatencyNs;
    use crate::bench::latency::{LatencyConfig, LatencyRow, Mode, Placement, TripRun};
    use crate::report::fixtures::machine;
    use crate::wait::Wait;

    /// Two sizes, two runs each, threads pinned to CPUs 0 and 1.
    fn result() -> LatencyResult {
        let run = |rate: f64, p50: u64| TripRun {
            round_trips: 1000,
            seconds: 1000.0 / rate,
            round_trips_per_s: rate,
            rtt_ns: LatencyNs {
                mean: p50 as f64 * 1.1,
                p50,
                p90: p50 + 1000,
                p99: p50 + 5000,
                p999: p50 + 40_000,
                max: 2_500_000,
            },
            warmup_round_trips: 50,
            noise: None,
        };
        let system = machine();
        let config = LatencyConfig {
            sizes: vec![1, 65536],
            runs: 2,
            max_runs: 2,
            seed: 1,
            warmup: Span::Seconds(0.1),
            measure: Span::RoundTrips(1000),
            wait: Wait::Busy,
            verify: false,
            mode: Mode::Threads,
            placement: Placement::Pinned {
                writer_cpu: 0,
                reader_cpu: 1,
            },
            stall_timeout: crate::bench::core::DEFAULT_STALL_TIMEOUT,
            warmup_rule: crate::bench::core::Warmup::exactly(1),
        };
        let rows = vec![
            LatencyRow::summarize(1, vec![run(50_000.0, 19_000), run(40_000.0, 23_500)]),
            LatencyRow::summarize(65536, vec![run(9000.0, 110_000), run(9500.0, 104_000)]),
        ];
        LatencyResult {
            header: Header {
                schema: "pipespeed.latency/2".into(),
                pipespeed_version: "0.1.0".into(),
                build: None,
                system,
                interrupted: false,
            },
            config,
            rows,
        }
    }

    #[test]
    fn the_table_says_round_trip_placement_wait_and_mode_and_the_verdict_comes_last() {
        let t = text(&result(), false, 100);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[..5],
            [
                "pipespeed 0.1.0 latency: Linux 6.18.0-test on Test CPU (2 CPUs online, allowed 0,1)",
                "two threads, pinger on CPU 0, ponger on CPU 1, wait busy; 2 runs of 1000 round trips \
                 after 0.1 s of",
                "  warm-up",
                "round trips, pinger -> ponger -> pinger (one way is about half), each figure the \
                 runs' median",
                "",
            ],
            "{t}"
        );
        let table = [
            "size   round trips/s        p50        p99  p50 spread",
            "1B             45000   21.25 us   26.25 us      2 runs",
            "64KiB           9250  107.00 us  112.00 us      2 runs",
            "",
        ];
        assert_eq!(lines[5..9], table, "{t}");
        // The verdict last, where the eye lands.
        assert_eq!(
            lines[9..],
            [
                "round trip: 1B p50 21.25 us (p99 26.25 us), 64KiB p50 107.00 us (p99 112.00 us)",
                "ends:       CPUs 0 and 1: two cross-CPU wake-ups (--placement same-cpu: none)",
                "trust:      no noise recorded: too few runs for an interval",
            ],
            "{t}"
        );
        // The tails and the ranges with --explain, in tables of their own.
        let t = text(&result(), true, 100);
        assert!(
            t.contains(
                "\nthe tails, each the runs' median\n\
                 size        mean        p90      p99.9      max\n\
                 1B      23.38 us   22.25 us   61.25 us  2.50 ms\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("\n64KiB  104.00 us - 110.00 us          9000 - 9500\n"),
            "{t}"
        );
    }

    #[test]
    fn every_line_fits_the_width_and_the_verdict_is_at_most_six_lines() {
        for r in [result(), spread_result()] {
            for (width, explain) in [(80, false), (120, false), (80, true), (120, true)] {
                let t = text(&r, explain, width);
                for line in t.lines() {
                    assert!(line.chars().count() <= width, "over {width}: {line}\n{t}");
                }
                let verdict = t.trim_end().rsplit("\n\n").next().unwrap();
                assert!(verdict.starts_with("round trip: "), "{t}");
                assert!(verdict.lines().count() <= 6, "{t}");
            }
        }
    }

    #[test]
    fn the_trust_line_counts_a_size_once() {
        // 1B's rate is noisy and its p50 not: one row, named by its rate.
        let mut r = result();
        r.rows.truncate(1);
        let mut rates = r.rows[0].runs.clone();
        for (run, rate) in rates.iter_mut().zip([10_000.0, 50_000.0]) {
            run.round_trips_per_s = rate;
            run.rtt_ns.p50 = 20_000;
        }
        r.rows[0] = LatencyRow::summarize(1, rates);
        assert!(r.rows[0].round_trips_per_s.noisy() && !r.rows[0].rtt_p50_ns.noisy());
        let t = text(&r, false, 100);
        assert!(t.contains("trust:      the one row noisy"), "{t}");
        assert!(t.contains("noisy: the one row (1B round trips/s)"), "{t}");
        assert!(t.contains("\n1B      30000 noisy  20.00 us"), "{t}");
    }

    #[test]
    fn csv_has_one_row_per_run_and_size() {
        let c = csv(&result());
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
        assert_eq!(
            lines[1],
            "1,1,1000,0.020000,50000.0,20900.0,19000,20000,24000,59000,2500000,50,threads,busy,0,1,\
             ok,21250,19000,23500,1.3453411764705878,1.236842105263158,false,\
             45000,40000,50000,1.4117777777777776,1.25,false"
        );
        let header: Vec<&str> = lines[0].split(',').collect();
        assert_eq!(
            header[16..19],
            ["status", "rtt_p50_ns_median", "rtt_p50_ns_min"]
        );
        assert!(lines[0].ends_with(",round_trips_per_s_noisy"), "{c}");
        assert!(lines[4].starts_with("65536,2,1000,"), "{c}");
    }

    /// `result()` with a third run of each size: 1 byte's runs spread
    /// 2x, 64 KiB's within 1%.
    fn spread_result() -> LatencyResult {
        let mut r = result();
        let runs = |rows: &LatencyRow, rate: f64, p50: u64| {
            let mut runs = rows.runs.clone();
            let mut run = runs[0].clone();
            (run.round_trips_per_s, run.rtt_ns.p50) = (rate, p50);
            runs.push(run);
            runs
        };
        r.rows[0] = LatencyRow::summarize(1, runs(&r.rows[0], 20_000.0, 47_000));
        let tight = |rate: f64, p50: u64| {
            let mut run = r.rows[1].runs[0].clone();
            (run.round_trips_per_s, run.rtt_ns.p50) = (rate, p50);
            run
        };
        let tight = vec![
            tight(9000.0, 110_000),
            tight(9050.0, 109_500),
            tight(8990.0, 110_300),
        ];
        r.rows[1] = LatencyRow::summarize(65536, tight);
        r
    }

    #[test]
    fn a_noisy_size_is_marked_and_diagnosed_in_every_export_a_tight_one_not() {
        let r = spread_result();
        // By default the noise said once, for the machine...
        let short = text(&r, false, 100);
        assert_eq!(short.matches("\nnoisy: ").count(), 1, "{short}");
        assert!(
            short.contains("\nnoisy: 1 of 2 rows (1B) spread"),
            "{short}"
        );
        // ...each noisy size's runs and causes with --explain.
        let t = text(&r, true, 100);
        let one = t.lines().find(|l| l.starts_with("1B ")).unwrap();
        assert!(one.contains(" noisy ") && one.ends_with(" noisy"), "{t}");
        let big = t.lines().find(|l| l.starts_with("64KiB ")).unwrap();
        assert!(!big.contains("noisy"), "{t}");
        assert!(
            t.contains("\nnoisy: 1B median round trip (3 runs from 19.00 us to 47.00 us"),
            "{t}"
        );
        assert!(
            t.contains("\n  likely: ") && t.contains("\n  what to do: "),
            "{t}"
        );
        assert!(!t.contains("noisy: 64KiB"), "{t}");
        let c = csv(&r);
        let noisy: Vec<&str> = (c.lines().skip(1))
            .map(|l| l.split(',').nth(22).unwrap())
            .collect();
        assert_eq!(
            noisy,
            ["true", "true", "true", "false", "false", "false"],
            "{c}"
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["rows"][0]["rtt_p50_ns"]["spread"]["noisy"], true);
        assert!(json["rows"][0]["rtt_p50_ns"]["diagnosis"]["causes"].is_array());
        assert_eq!(json["rows"][1]["rtt_p50_ns"]["spread"]["noisy"], false);
        #[cfg(feature = "cli")]
        {
            let svg = super::latency_svg(&r).unwrap();
            assert!(svg.contains("noisy"), "the legend marks the noisy size");
        }
    }

    #[test]
    fn a_failed_size_says_why_and_keeps_its_runs() {
        let mut r = result();
        r.rows[1].status = Status::Failed;
        r.rows[1].reason = Some("65536-byte messages: the ponger died".into());
        r.rows.push(LatencyRow {
            status: Status::Failed,
            reason: Some("4096-byte messages: cannot start".into()),
            ..LatencyRow::summarize(4096, Vec::new())
        });
        let t = text(&r, false, 100);
        assert!(
            t.contains("\nfailed: 64KiB: 65536-byte messages: the ponger died\n"),
            "{t}"
        );
        assert!(
            t.contains("\nfailed: 4KiB: 4096-byte messages: cannot start\n"),
            "{t}"
        );
        assert!(
            t.lines()
                .any(|l| l.starts_with("4KiB ") && l.trim_end().ends_with('-')),
            "{t}"
        );
        let c = csv(&r);
        let last = c.lines().last().unwrap();
        assert!(last.starts_with("4096,,,"), "{c}");
        assert!(last.contains(",failed,"), "{c}");
        assert_eq!(
            last.split(',').count(),
            c.lines().next().unwrap().split(',').count()
        );
    }

    #[test]
    fn durations_keep_a_readable_unit() {
        assert_eq!(ns(812.0), "812 ns");
        assert_eq!(ns(23_456.0), "23.46 us");
        assert_eq!(ns(2_500_000.0), "2.50 ms");
        assert_eq!(ns(3e9), "3.00 s");
    }
}
