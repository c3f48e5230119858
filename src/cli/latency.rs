//! `pipespeed latency`: ping-pong round trips over two pipes, as threads or
//! as processes (the ponger is this binary run as a hidden worker).

use std::process::ExitCode;

use crate::bench::core::{Cancel, Status};
use crate::bench::latency::{
    LatencyConfig, LatencyResult, MAX_ROUND_TRIPS, Mode, Placement, Span, run_latency,
};
use crate::sys::SystemFacts;
use crate::sys::process::catch_interrupts;
use crate::wait::Wait;
use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::cli::UsageError;
use crate::cli::args::{
    PlacementArg, PlacementArgs, PlacementWords, ReportArgs, ReportWords, RunsArgs, RunsWords,
    WarmupArgs, cpu_pair, message_size, pinned, seconds,
};
use crate::cli::progress;

/// `pipespeed latency`.
#[derive(Debug, Args)]
#[command(
    after_help = "Times are ROUND TRIPS (there and back); one way is about half. What perf bench \
                  sched pipe (-T for threads) and lmbench lat_pipe measure, with percentiles.\n\n\
                  Every size gets a short warm-up run, then its runs in one shuffled order with \
                  the other sizes', and more runs while its median round trip spreads; a size \
                  whose runs still spread is marked noisy, with the likely cause.\n\n\
                  Exit status: 0 measured, 1 an error (a size failed: the ponger died, or a \
                  side made no progress for --stall-timeout; a closed stdout; no result file is written when no size was measured), 2 bad usage or a value outside its range, 129/130/143 interrupted by SIGHUP/SIGINT/SIGTERM (the \
                  sizes measured are printed and written, marked interrupted)."
)]
pub struct LatencyArgs {
    /// Message sizes, comma-separated, one row each. Take K and M
    /// (1,64,4K,64K) [range: 1-64M].
    #[arg(long, value_delimiter = ',', value_name = "SIZES", default_value = "1", value_parser = message_size)]
    pub sizes: Vec<usize>,
    /// Round trips per run (instead of --duration) [range:
    /// 1-1000000000].
    #[arg(long = "round-trips", value_name = "N", conflicts_with = "duration", value_parser = round_trips)]
    pub round_trips: Option<u64>,
    /// Seconds per run [default: 1] [range: 0.01-86400].
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub duration: Option<f64>,
    /// Before each run, N round trips (at most 1000000000) or, with an s
    /// suffix, seconds (0.2s, at most 86400), not recorded.
    #[arg(long, value_name = "N|SECSs", default_value = "0.1s", value_parser = warmup)]
    pub warmup: Span,
    /// How both sides wait for their pipe: sleep in read/write, poll(2)
    /// first, or spin on EAGAIN (needs two CPUs).
    #[arg(long, value_enum, default_value_t = WaitArg::Block)]
    pub wait: WaitArg,
    #[command(flatten)]
    pub ends: PlacementArgs<Sizes>,
    /// Pinger and ponger as two threads of one process.
    #[arg(long, conflicts_with = "processes")]
    pub threads: bool,
    /// Pinger and ponger as two processes (the default).
    #[arg(long)]
    pub processes: bool,
    #[command(flatten)]
    pub runs: RunsArgs<Sizes>,
    /// Check every byte of every message (first and last are always checked).
    #[arg(long)]
    pub verify: bool,
    #[command(flatten)]
    pub report: ReportArgs<Sizes>,
    #[command(flatten)]
    pub warmups: WarmupArgs,
    #[command(flatten)]
    pub stall: crate::cli::args::StallArgs,
}

/// latency's words: a row is a message size.
#[derive(Debug, Default)]
pub struct Sizes;

impl RunsWords for Sizes {
    const ROW: &'static str = "size";
    const DEFAULT: (u64, u64) = (3, 10);
    const RUNS_VALUE: &'static str = "RUNS";
    const WARMUP: &'static str = "one short warm-up run";
    const SPREAD: &'static str = "its runs' median round trip";
}

impl ReportWords for Sizes {
    const ROW: &'static str = "size";
    const JSON: &'static str = "Write the results as JSON to FILE (- for standard output)";
    const CSV: &'static str = "Write one CSV row per run and size to FILE (- for standard output)";
    const SVG: &'static str =
        "Write a chart of the percentiles per size to FILE (SVG; - for standard output)";
}

impl PlacementWords for Sizes {
    const CPUS_VALUE: &'static str = "PINGER,PONGER";
    const CPUS: &'static str = "Pin the pinger and the ponger to these CPUs [range: 0-1023]";
    const PLACEMENT: &'static str =
        "Where the two sides run [default: different-cpu with 2+ allowed CPUs, else same-cpu]";
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

/// `--round-trips`: 1 to [`MAX_ROUND_TRIPS`].
fn round_trips(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if (1..=MAX_ROUND_TRIPS).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{text}' is not a count of round trips from 1 to {MAX_ROUND_TRIPS}"
        )),
    }
}

fn warmup(text: &str) -> Result<Span, String> {
    let max_s = crate::cli::args::SECONDS_RANGE.1;
    let bad = || {
        format!(
            "'{text}' is not a warm-up (give round trips, 0 to {MAX_ROUND_TRIPS}, or seconds, \
             0s to {max_s}s)"
        )
    };
    match text.strip_suffix('s') {
        Some(secs) => match secs.parse::<f64>() {
            Ok(s) if (0.0..=max_s).contains(&s) => Ok(Span::Seconds(s)),
            _ => Err(bad()),
        },
        None => match text.parse::<u64>() {
            Ok(n) if n <= MAX_ROUND_TRIPS => Ok(Span::RoundTrips(n)),
            _ => Err(bad()),
        },
    }
}

/// The placement asked for, checked against the CPUs this process may use.
fn placement(
    cpus: &[usize],
    choice: Option<PlacementArg>,
    allowed: &[usize],
) -> Result<Placement, UsageError> {
    // The pinger writes first: it is the writer, the ponger the reader.
    if !cpus.is_empty() {
        return cpu_pair(cpus, allowed, "the pinger's and the ponger's");
    }
    match (cpus, choice, allowed) {
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
            writer_cpu,
            reader_cpu,
        } => (writer_cpu == reader_cpu).then_some(writer_cpu),
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
    let placement = placement(&args.ends.cpus, args.ends.placement, allowed)?;
    check_wait(args.wait.wait(), placement, allowed)?;
    let (runs, max_runs) = args.runs.resolve()?;
    Ok(LatencyConfig {
        sizes: args.sizes.clone(),
        runs,
        max_runs,
        seed: crate::cli::args::clock_seed(),
        warmup_rule: args.warmups.rule(),
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
        stall_timeout: args.stall.timeout(),
    })
}

/// 1 when a size failed (said on stderr too: a table scrolled past must
/// not pass for a measurement), else 0; interrupted: 128 + the signal.
fn exit_status(result: &LatencyResult) -> ExitCode {
    let measured = result.rows.iter().filter(|r| !r.runs.is_empty()).count();
    if let Some(status) = crate::cli::interrupted_status(measured, "size", "every child process") {
        return status;
    }
    let failed: Vec<String> = (result.rows.iter())
        .filter(|r| r.status != Status::Ok)
        .map(|r| {
            let why = r.reason.as_deref().unwrap_or("no reason given");
            format!("{}: {why}", crate::units::Size(r.size as u64))
        })
        .collect();
    if failed.is_empty() {
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "pipespeed: {} of {} sizes failed: {}",
        failed.len(),
        result.rows.len(),
        failed.join("; ")
    );
    ExitCode::FAILURE
}

pub(super) fn run(args: LatencyArgs) -> anyhow::Result<ExitCode> {
    let facts = SystemFacts::collect();
    let config = config(&args, &facts.cpus_allowed)?;
    crate::cli::output::check_outputs(args.report.files::<LatencyResult>().map(|(path, _)| path))?;
    catch_interrupts()?;
    let exe = std::env::current_exe().context("cannot find the pipespeed binary")?;
    let mut runner = config.mode.runner(exe);
    // Runs at most MAX_RUNS (1000) and a warm-up, sizes as many as the
    // command line holds: no overflow. Added runs lengthen the bar.
    let bar = progress::bar(config.sizes.len() * (config.runs + 1));
    let result = run_latency(
        &config,
        facts,
        runner.as_mut(),
        &Cancel::on_signals(),
        &mut |event| progress::show(&bar, event),
    );
    bar.finish_and_clear();
    let measured = result.rows.iter().any(|r| !r.runs.is_empty());
    let files = args.report.files();
    crate::cli::output::deliver(&result, measured, &files, args.report.text())?;
    Ok(exit_status(&result))
}
