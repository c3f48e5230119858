//! `pipespeed latency`'s table and CSV, tested on fixed data.

use std::fmt::Write as _;
use std::io;

use super::{Csv, Exporter, Text};
use crate::bench::latency::{LatencyResult, Span};
use crate::units::Size;
use crate::units::readable_ns as ns;

/// The name `value` has in the JSON document (`"busy"`, `"threads"`).
fn name(value: impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

/// The table on stdout.
impl Exporter<LatencyResult> for Text {
    fn export(&self, result: &LatencyResult) -> io::Result<Vec<u8>> {
        Ok(super::marked(result.header.interrupted, text(result)).into_bytes())
    }
}

/// One row per run and size.
impl Exporter<LatencyResult> for Csv {
    fn export(&self, result: &LatencyResult) -> io::Result<Vec<u8>> {
        Ok(csv(result).into_bytes())
    }
}

fn span(s: Span) -> String {
    match s {
        Span::RoundTrips(n) => format!("{n} round trips"),
        Span::Seconds(s) => format!("{s} s"),
    }
}

/// The table on stdout.
fn text(r: &LatencyResult) -> String {
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
        "two {}, {}, wait {}; {} runs of {} after {} of warm-up{}",
        name(c.mode),
        c.placement,
        name(c.wait),
        c.runs,
        span(c.measure),
        span(c.warmup),
        if c.verify {
            "; every byte verified"
        } else {
            ""
        }
    );
    out += "ROUND-TRIP times (pinger -> ponger -> pinger; one way is about half): medians \
            of the runs, and the range of the runs' p50 and round trips/s\n\n";
    let _ = writeln!(
        out,
        "{:<8} {:>13} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {:>21}  {:>19}",
        "size",
        "round trips/s",
        "mean",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
        "p50 range",
        "round trips/s range"
    );
    for row in &r.rows {
        let (l, sp) = (&row.rtt_ns, &row.spread);
        let _ = writeln!(
            out,
            "{:<8} {:>13.0} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {:>21}  {:>19}",
            Size(row.size as u64).to_string(),
            row.round_trips_per_s,
            ns(l.mean),
            ns(l.p50 as f64),
            ns(l.p90 as f64),
            ns(l.p99 as f64),
            ns(l.p999 as f64),
            ns(l.max as f64),
            format!(
                "{} - {}",
                ns(sp.p50_ns_min as f64),
                ns(sp.p50_ns_max as f64)
            ),
            format!(
                "{:.0} - {:.0}",
                sp.round_trips_per_s_min, sp.round_trips_per_s_max
            ),
        );
    }
    out
}

/// One row per run and size: the run's fields, flattened, then the setting.
fn csv(r: &LatencyResult) -> String {
    let mut out = String::from(
        "size,run,round_trips,seconds,round_trips_per_s,rtt_mean_ns,rtt_p50_ns,rtt_p90_ns,\
         rtt_p99_ns,rtt_p999_ns,rtt_max_ns,warmup_round_trips,mode,wait,pinger_cpu,ponger_cpu\n",
    );
    let (mode, wait) = (name(r.config.mode), name(r.config.wait));
    let (pinger, ponger) = r.config.placement.cpus();
    let cpu = |c: Option<usize>| c.map(|c| c.to_string()).unwrap_or_default();
    for row in &r.rows {
        for (i, run) in row.runs.iter().enumerate() {
            let l = &run.rtt_ns;
            let _ = writeln!(
                out,
                "{},{},{},{:.6},{:.1},{:.1},{},{},{},{},{},{},{mode},{wait},{},{}",
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
                cpu(pinger),
                cpu(ponger)
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
    use crate::bench::latency::{LatencyConfig, LatencyRow, LatencyRun, Mode, Placement};
    use crate::sys::{SystemFacts, ThpMode};
    use crate::wait::Wait;

    /// Two sizes, two runs each, threads pinned to CPUs 0 and 1.
    fn result() -> LatencyResult {
        let run = |rate: f64, p50: u64| LatencyRun {
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
        };
        let system = SystemFacts {
            kernel: "6.18.0-test".into(),
            kernel_version: "#1".into(),
            arch: "x86_64".into(),
            cpu_model: "Test CPU".into(),
            cpus_online: 2,
            cpus_allowed: vec![0, 1],
            thp: ThpMode::Madvise,
            pipe_max_size_bytes: 1 << 20,
            page_size_bytes: 4096,
            virtualization: None,
        };
        let config = LatencyConfig {
            sizes: vec![1, 65536],
            runs: 2,
            warmup: Span::Seconds(0.1),
            measure: Span::RoundTrips(1000),
            wait: Wait::Busy,
            verify: false,
            mode: Mode::Threads,
            placement: Placement::Pinned {
                pinger_cpu: 0,
                ponger_cpu: 1,
            },
        };
        let rows = vec![
            LatencyRow::summarize(1, vec![run(50_000.0, 19_000), run(40_000.0, 23_500)]),
            LatencyRow::summarize(65536, vec![run(9000.0, 110_000), run(9500.0, 104_000)]),
        ];
        LatencyResult {
            header: Header {
                schema: "pipespeed.latency/1".into(),
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
        let t = text(&result());
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[..2],
            [
                "pipespeed 0.1.0 latency: Linux 6.18.0-test on Test CPU (2 CPUs online, allowed 0,1)",
                "two threads, pinger on CPU 0, ponger on CPU 1, wait busy; 2 runs of 1000 round trips \
                 after 0.1 s of warm-up",
            ]
        );
        assert!(lines[2].starts_with("ROUND-TRIP times"), "{t}");
        let table = [
            "size     round trips/s       mean        p50        p90        p99      p99.9        \
             max              p50 range  round trips/s range",
            "1B               45000   23.38 us   21.25 us   22.25 us   26.25 us   61.25 us    \
             2.50 ms    19.00 us - 23.50 us        40000 - 50000",
            "64KiB             9250  117.70 us  107.00 us  108.00 us  112.00 us  147.00 us    \
             2.50 ms  104.00 us - 110.00 us          9000 - 9500",
        ];
        assert_eq!(lines[4..], table);
    }

    #[test]
    fn csv_has_one_row_per_run_and_size() {
        let c = csv(&result());
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
        assert_eq!(
            lines[1],
            "1,1,1000,0.020000,50000.0,20900.0,19000,20000,24000,59000,2500000,50,threads,busy,0,1"
        );
        assert!(lines[4].starts_with("65536,2,1000,"), "{c}");
    }

    #[test]
    fn durations_keep_a_readable_unit() {
        assert_eq!(ns(812.0), "812 ns");
        assert_eq!(ns(23_456.0), "23.46 us");
        assert_eq!(ns(2_500_000.0), "2.50 ms");
        assert_eq!(ns(3e9), "3.00 s");
    }
}
