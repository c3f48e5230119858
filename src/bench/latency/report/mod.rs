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
use crate::bench::latency::{LatencyConfig, LatencyResult, Span, describe};
use crate::report::text::{serde_name as name, verdict_lines, wrap_paragraph};
use crate::report::{Csv, Exporter, Text};
use crate::units::Size;
use crate::units::readable_ns as ns;

/// The verdict, the table, what failed, the noise said once and the
/// machine's; with [`Text::explain`], each noisy size's runs and causes.
impl Exporter<LatencyResult> for Text {
    fn export(&self, result: &LatencyResult) -> io::Result<Vec<u8>> {
        Ok(
            crate::report::marked(result.header.interrupted, text(result, self.explain))
                .into_bytes(),
        )
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

/// The verdict and the table on stdout, then what failed, the noise said
/// once and the machine's; with `explain`, each noisy size's runs and
/// causes.
fn text(r: &LatencyResult, explain: bool) -> String {
    let (s, c) = (&r.header.system, &r.config);
    let allowed: Vec<String> = s.cpus_allowed.iter().map(|c| c.to_string()).collect();
    let mut out = format!(
        "pipespeed {} latency: Linux {} on {} ({} CPUs online, allowed {})\n",
        r.header.pipespeed_version,
        s.kernel,
        s.cpu_model,
        s.cpus_online,
        allowed.join(",")
    );
    let _ = writeln!(
        out,
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
    let _ = writeln!(out, "\n{}", verdict_lines(&r.verdict().lines));
    out += "ROUND-TRIP times (pinger -> ponger -> pinger; one way is about half): medians \
            of the runs, the range of the runs' p50 and its 95% interval, and the range of \
            round trips/s\n\n";
    let _ = writeln!(
        out,
        "{:<8} {:>13} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {:>21}  {:>11}  {:>25}",
        "size",
        "round trips/s",
        "mean",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
        "p50 range",
        "p50 spread",
        "round trips/s range"
    );
    let range = |s: &Series, show: &dyn Fn(f64) -> String| match (s.min, s.max) {
        (Some(lo), Some(hi)) => format!("{} - {}", show(lo), show(hi)),
        _ => "-".into(),
    };
    let rate = |v: f64| format!("{v:.0}");
    let time = |v: f64| ns(v);
    for row in &r.rows {
        let l = &row.rtt_ns;
        let size = Size(row.size as u64).to_string();
        if row.runs.is_empty() {
            let _ = writeln!(out, "{size:<8} {:>13}", "-");
            continue;
        }
        let _ = writeln!(
            out,
            "{:<8} {:>13} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {:>21}  {:>11}  {:>25}",
            size,
            row.round_trips_per_s.median.map_or("-".into(), rate),
            ns(l.mean),
            ns(l.p50 as f64),
            ns(l.p90 as f64),
            ns(l.p99 as f64),
            ns(l.p999 as f64),
            ns(l.max as f64),
            range(&row.rtt_p50_ns, &time),
            spread_cell(&row.rtt_p50_ns),
            // The rate's noisy mark: its spread is in the notes below.
            match row.round_trips_per_s.noisy() {
                true => format!("{} noisy", range(&row.round_trips_per_s, &rate)),
                false => range(&row.round_trips_per_s, &rate),
            },
        );
    }
    let mut notes = Vec::new();
    for row in &r.rows {
        let size = Size(row.size as u64);
        if row.status != Status::Ok {
            notes.push(format!(
                "{}: {size}: {}",
                status_word(row.status),
                row.reason.as_deref().unwrap_or("no reason given")
            ));
        }
    }
    notes.extend(noise_paragraph(&r.named_series()).map(|p| wrap_paragraph(&p, 100)));
    notes.extend(r.noise().map(noise_sentence));
    if explain {
        for row in &r.rows {
            let size = Size(row.size as u64);
            let p50 = noisy_series(&format!("{size} median round trip"), &row.rtt_p50_ns, time);
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
            let _ = writeln!(out, "{note}");
        }
    }
    out
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
    fn the_table_says_round_trip_placement_wait_and_mode() {
        let t = text(&result(), false);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[..2],
            [
                "pipespeed 0.1.0 latency: Linux 6.18.0-test on Test CPU (2 CPUs online, allowed 0,1)",
                "two threads, pinger on CPU 0, ponger on CPU 1, wait busy; 2 runs of 1000 round trips \
                 after 0.1 s of warm-up",
            ]
        );
        // The verdict, between the header and the table.
        assert_eq!(
            lines[2..6],
            [
                "",
                "round trip: 1B p50 21.25 us (p99 26.25 us), 64KiB p50 107.00 us (p99 112.00 us)",
                "ends:       CPUs 0 and 1: a cross-CPU wake-up each way (--placement same-cpu has \
                 none)",
                "trust:      no noise recorded: too few runs for an interval",
            ],
            "{t}"
        );
        assert_eq!(lines[6], "", "{t}");
        assert!(lines[7].starts_with("ROUND-TRIP times"), "{t}");
        let table = [
            "size     round trips/s       mean        p50        p90        p99      p99.9        \
             max              p50 range   p50 spread        round trips/s range",
            "1B               45000   23.38 us   21.25 us   22.25 us   26.25 us   61.25 us    \
             2.50 ms    19.00 us - 23.50 us       2 runs              40000 - 50000",
            "64KiB             9250  117.70 us  107.00 us  108.00 us  112.00 us  147.00 us    \
             2.50 ms  104.00 us - 110.00 us       2 runs                9000 - 9500",
        ];
        assert_eq!(lines[9..], table);
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
        let short = text(&r, false);
        assert_eq!(short.matches("\nnoisy: ").count(), 1, "{short}");
        assert!(
            short.contains("\nnoisy: 1 of 2 rows (1B) spread"),
            "{short}"
        );
        // ...each noisy size's runs and causes with --explain.
        let t = text(&r, true);
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
        let t = text(&r, false);
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
