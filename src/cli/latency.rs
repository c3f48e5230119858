//! `pipespeed latency`: ping-pong round trips over two pipes, as threads or
//! as processes (the ponger is this binary run as `latency --pong`).

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use pipespeed::bench::latency::{
    Exchange, LatencyConfig, LatencyResult, LatencyRun, Mode, PingConfig, Placement, Runner, Span,
    ThreadRunner, pin, ping, pong, run_latency,
};
use pipespeed::sys::{FdKind, SystemFacts, fd_info, pin_to_cpu, pipe};
use pipespeed::units::{MIB, Size, parse_size};
use pipespeed::wait::Wait;

use crate::UsageError;

/// The largest message: both sides hold two buffers of it.
const MAX_MESSAGE: u64 = 64 * MIB;

/// How long a ponger may take to exit once the pinger is done.
const PONGER_EXIT_TIMEOUT: Duration = Duration::from_secs(10);

/// `pipespeed latency`.
#[derive(Debug, Args)]
#[command(
    after_help = "Times are ROUND TRIPS (there and back); one way is about half. What perf bench \
                  sched pipe (-T for threads) and lmbench lat_pipe measure, with percentiles."
)]
pub struct LatencyArgs {
    /// Message sizes, comma-separated, one row each. Take K and M (1,64,4K,64K).
    #[arg(long, value_delimiter = ',', value_name = "SIZES", default_value = "1", value_parser = message_size)]
    pub sizes: Vec<usize>,
    /// Round trips per run (instead of --duration).
    #[arg(long = "round-trips", value_name = "N", conflicts_with = "duration", value_parser = clap::value_parser!(u64).range(1..))]
    pub round_trips: Option<u64>,
    /// Seconds per run [default: 1].
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub duration: Option<f64>,
    /// Before each run, N round trips or, with an s suffix, seconds (0.2s),
    /// not recorded.
    #[arg(long, value_name = "N|SECSs", default_value = "0.1s", value_parser = warmup)]
    pub warmup: Span,
    /// How both sides wait for their pipe: sleep in read/write, poll(2)
    /// first, or spin on EAGAIN (needs two CPUs).
    #[arg(long, value_enum, default_value_t = WaitArg::Block)]
    pub wait: WaitArg,
    /// Pin the pinger and the ponger to these CPUs.
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1,
        value_name = "PINGER,PONGER",
        conflicts_with = "placement"
    )]
    pub cpus: Vec<usize>,
    /// Where the two sides run [default: different-cpu with 2+ allowed
    /// CPUs, else same-cpu].
    #[arg(long, value_enum)]
    pub placement: Option<PlacementArg>,
    /// Pinger and ponger as two threads of one process.
    #[arg(long, conflicts_with = "processes")]
    pub threads: bool,
    /// Pinger and ponger as two processes (the default).
    #[arg(long)]
    pub processes: bool,
    /// Measured runs per size (medians and spread over them).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: u64,
    /// Check every byte of every message (first and last are always checked).
    #[arg(long)]
    pub verify: bool,
    /// Write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per run and size to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Internal: be the ponger, between stdin and stdout.
    #[arg(long, hide = true)]
    pub pong: bool,
    /// Internal: the ponger's CPU.
    #[arg(long = "pong-cpu", hide = true, requires = "pong")]
    pub pong_cpu: Option<usize>,
}

/// `--wait`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WaitArg {
    /// Blocking read and write.
    Block,
    /// poll(2), then read or write.
    Poll,
    /// O_NONBLOCK, retried at once on EAGAIN.
    Busy,
}

impl WaitArg {
    fn wait(self) -> Wait {
        match self {
            WaitArg::Block => Wait::Block,
            WaitArg::Poll => Wait::Poll,
            WaitArg::Busy => Wait::Busy,
        }
    }
}

/// The name `value` has in the JSON document (`"busy"`, `"threads"`).
fn name(value: impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

/// `--placement`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlacementArg {
    /// Both on the first allowed CPU.
    SameCpu,
    /// On the first two allowed CPUs.
    DifferentCpu,
    /// Left to the scheduler.
    Unpinned,
}

fn message_size(text: &str) -> Result<usize, String> {
    match parse_size(text).map_err(|e| e.to_string())? {
        0 => Err("a message must be at least 1 byte".into()),
        n if n > MAX_MESSAGE => Err(format!("{text} is too large (at most 64M)")),
        n => usize::try_from(n).map_err(|_| format!("{text} is too large")),
    }
}

fn seconds(text: &str) -> Result<f64, String> {
    match text.strip_suffix('s').unwrap_or(text).parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        _ => Err(format!(
            "'{text}' is not a duration (give seconds above 0, e.g. 2 or 0.5)"
        )),
    }
}

fn warmup(text: &str) -> Result<Span, String> {
    let bad = || format!("'{text}' is not a warm-up (give round trips, 1000, or seconds, 0.2s)");
    match text.strip_suffix('s') {
        Some(secs) => match secs.parse::<f64>() {
            Ok(s) if s.is_finite() && s >= 0.0 => Ok(Span::Seconds(s)),
            _ => Err(bad()),
        },
        None => text.parse().map(Span::RoundTrips).map_err(|_| bad()),
    }
}

/// The placement asked for, checked against the CPUs this process may use.
fn placement(
    cpus: &[usize],
    choice: Option<PlacementArg>,
    allowed: &[usize],
) -> Result<Placement, UsageError> {
    let pinned = |pinger_cpu, ponger_cpu| Placement::Pinned {
        pinger_cpu,
        ponger_cpu,
    };
    let list = || {
        let cpus: Vec<String> = allowed.iter().map(|c| c.to_string()).collect();
        cpus.join(",")
    };
    match (cpus, choice, allowed) {
        ([a, b], _, _) => match [a, b].into_iter().find(|c| !allowed.contains(c)) {
            Some(cpu) => Err(UsageError(format!(
                "--cpus: CPU {cpu} is not one this process may use (allowed: {})",
                list()
            ))),
            None => Ok(pinned(*a, *b)),
        },
        ([_, ..], _, _) => Err(UsageError(
            "--cpus takes two CPUs, the pinger's and the ponger's (e.g. --cpus 0,1)".into(),
        )),
        (_, _, []) => Err(UsageError("this process may run on no CPU at all".into())),
        (_, Some(PlacementArg::Unpinned), _) => Ok(Placement::Unpinned),
        (_, Some(PlacementArg::SameCpu), [a, ..]) | (_, None, [a]) => Ok(pinned(*a, *a)),
        (_, Some(PlacementArg::DifferentCpu) | None, [a, b, ..]) => Ok(pinned(*a, *b)),
        (_, Some(PlacementArg::DifferentCpu), [a]) => Err(UsageError(format!(
            "--placement different-cpu needs two CPUs, but this process may only run on CPU {a} \
             (its affinity mask, as set by taskset or a cpuset)"
        ))),
    }
}

/// Refuses busy waiting where both sides share one CPU: the spinning side
/// holds it until preempted, and the side it waits for cannot run.
fn check_wait(wait: Wait, placement: Placement, allowed: &[usize]) -> Result<(), UsageError> {
    let shared = match placement {
        Placement::Pinned {
            pinger_cpu,
            ponger_cpu,
        } => (pinger_cpu == ponger_cpu).then_some(pinger_cpu),
        Placement::Unpinned => (allowed.len() < 2).then(|| allowed.first().copied().unwrap_or(0)),
    };
    match shared {
        Some(cpu) if wait.is_busy() => Err(UsageError(format!(
            "--wait busy with pinger and ponger on CPU {cpu} only would starve the side that is \
             not running (it spins until preempted): give two CPUs or use --wait block or poll"
        ))),
        _ => Ok(()),
    }
}

fn config(args: &LatencyArgs, allowed: &[usize]) -> Result<LatencyConfig, UsageError> {
    let placement = placement(&args.cpus, args.placement, allowed)?;
    check_wait(args.wait.wait(), placement, allowed)?;
    Ok(LatencyConfig {
        sizes: args.sizes.clone(),
        runs: args.runs as usize,
        warmup: args.warmup,
        measure: match (args.round_trips, args.duration) {
            (Some(n), _) => Span::RoundTrips(n),
            (None, secs) => Span::Seconds(secs.unwrap_or(1.0)),
        },
        wait: args.wait.wait(),
        verify: args.verify,
        mode: if args.threads {
            Mode::Threads
        } else {
            Mode::Processes
        },
        placement,
    })
}

pub fn run(args: LatencyArgs) -> anyhow::Result<ExitCode> {
    if args.pong {
        return be_the_ponger(&args);
    }
    let facts = SystemFacts::collect();
    let config = config(&args, &facts.cpus_allowed)?;
    let mut runner: Box<dyn Runner> = match config.mode {
        Mode::Threads => Box::new(ThreadRunner),
        Mode::Processes => Box::new(ProcessRunner {
            exe: std::env::current_exe().context("cannot find the pipespeed binary")?,
        }),
    };
    let bar = ProgressBar::new((config.sizes.len() * config.runs) as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed}] {bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let result = run_latency(&config, facts, runner.as_mut(), &mut |size, run| {
        bar.inc(1);
        bar.set_message(format!(
            "{}: p50 {}",
            Size(size as u64),
            ns(run.rtt_ns.p50 as f64)
        ));
    });
    bar.finish_and_clear();
    // A message, not an io::Error: a broken pipe here is a failure, not a
    // reader going away.
    let result = result.map_err(|e| anyhow!("{e}"))?;
    if let Some(path) = &args.json {
        let mut text = serde_json::to_vec_pretty(&result)?;
        text.push(b'\n');
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.csv {
        std::fs::write(path, csv(&result))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    io::stdout().write_all(text(&result).as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The ponger side of `--processes`: stdin and stdout are the pipes.
fn be_the_ponger(args: &LatencyArgs) -> anyhow::Result<ExitCode> {
    let (stdin, stdout) = (io::stdin(), io::stdout());
    for (name, fd) in [("stdin", stdin.as_fd()), ("stdout", stdout.as_fd())] {
        if fd_info(fd).map(|i| i.kind).ok() != Some(FdKind::Pipe) {
            return Err(UsageError(format!(
                "--pong is pipespeed's own ponger: its {name} must be a pipe"
            ))
            .into());
        }
    }
    let [size] = args.sizes[..] else {
        return Err(UsageError("--pong takes one size".into()).into());
    };
    if let Some(cpu) = args.pong_cpu {
        pin_to_cpu(cpu).map_err(|e| anyhow!("ponger: {e}"))?;
    }
    let exchange = Exchange {
        size,
        wait: args.wait.wait(),
        verify: args.verify,
    };
    pong(stdin.as_fd(), stdout.as_fd(), &exchange).map_err(|e| anyhow!("{e}"))?;
    Ok(ExitCode::SUCCESS)
}

/// Pinger in a thread of this process, ponger in a child process.
struct ProcessRunner {
    exe: PathBuf,
}

impl Runner for ProcessRunner {
    fn run(&mut self, config: &PingConfig, placement: Placement) -> io::Result<LatencyRun> {
        let (a_to_b, b_to_a) = (pipe()?, pipe()?);
        let (pinger_cpu, ponger_cpu) = placement.cpus();
        let ex = config.exchange;
        let mut cmd = Command::new(&self.exe);
        let (size, wait) = (ex.size.to_string(), name(ex.wait));
        cmd.args(["latency", "--pong", "--sizes", &size, "--wait", &wait]);
        if ex.verify {
            cmd.arg("--verify");
        }
        if let Some(cpu) = ponger_cpu {
            cmd.args(["--pong-cpu", &cpu.to_string()]);
        }
        // Our pipes are close-on-exec; dup2 onto stdin and stdout clears
        // that, so the child holds exactly its two ends.
        cmd.stdin(Stdio::from(a_to_b.read))
            .stdout(Stdio::from(b_to_a.write))
            .stderr(Stdio::piped());
        let child = cmd.spawn().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot start the ponger {}: {e}", self.exe.display()),
            )
        })?;
        // Close our copies of the child's ends, so that each side sees the
        // other one go.
        drop(cmd);
        let pinged = std::thread::scope(|s| {
            s.spawn(move || {
                pin(pinger_cpu, "pinger")?;
                ping(a_to_b.write, b_to_a.read, config)
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the pinger thread panicked")))
        });
        match finish(child) {
            // The ponger's error is the cause when both failed.
            Err(ponger) => Err(io::Error::other(ponger)),
            Ok(()) => pinged,
        }
    }
}

/// Waits for a ponger whose pinger is done (it exits on end of file), and
/// says why it failed if it did.
fn finish(mut child: Child) -> Result<(), String> {
    let deadline = Instant::now() + PONGER_EXIT_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("the ponger did not exit after the pinger finished; killed".into());
            }
            Err(e) => return Err(format!("cannot wait for the ponger: {e}")),
        }
    };
    let mut err = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut err);
    }
    let line = err.lines().last().unwrap_or("").trim();
    let line = line.strip_prefix("pipespeed: ").unwrap_or(line);
    match (status.success(), line) {
        (true, _) => Ok(()),
        (false, "") => Err(format!("the ponger failed ({status})")),
        (false, why) => Err(why.to_string()),
    }
}

/// A duration in ns, in the unit that keeps it readable.
fn ns(ns: f64) -> String {
    match ns {
        n if n < 1e3 => format!("{n:.0} ns"),
        n if n < 1e6 => format!("{:.2} us", n / 1e3),
        n if n < 1e9 => format!("{:.2} ms", n / 1e6),
        n => format!("{:.2} s", n / 1e9),
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
    let (s, c) = (&r.system, &r.config);
    let allowed: Vec<String> = s.cpus_allowed.iter().map(|c| c.to_string()).collect();
    let mut out = format!(
        "pipespeed {} latency: Linux {} on {} ({} CPUs online, allowed {})\n",
        r.pipespeed_version,
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
    use pipespeed::bench::hist::LatencyNs;
    use pipespeed::bench::latency::LatencyRow;
    use pipespeed::sys::ThpMode;

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
            schema: "pipespeed.latency/1".into(),
            pipespeed_version: "0.1.0".into(),
            system,
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
