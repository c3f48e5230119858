//! `pipespeed ipc`: pipes beside sockets, message queues, shared memory
//! and io_uring, every end a process of its own, on the ladder's harness.
use crate::bench::core::{Cancel, Status};

use std::path::PathBuf;
use std::process::ExitCode;

use crate::bench::core::Processes;
use crate::bench::ipc::{IpcConfig, IpcResult, Mechanism, run_ipc};
use crate::report::{Html, Markdown};
use crate::sys::SystemFacts;
use crate::sys::process::catch_interrupts;
use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::cli::UsageError;
use crate::cli::args::{
    PlacementArgs, PlacementWords, ReportArgs, ReportWords, WarmupArgs, message_size,
    positive_size, seconds,
};
use crate::cli::output::{ResultFile, check_outputs, deliver};
use crate::cli::progress;

/// `pipespeed ipc`.
#[derive(Debug, Args)]
#[command(
    after_help = "Throughput: a sender process moves each run's bytes in messages of the size to \
                  a receiver process, which times them from its first receive to its last. \
                  Latency: ROUND TRIPS of one message (there and back) between a pinger and a \
                  ponger process, with percentiles. CPU s/GiB is both ends' user and system \
                  time per GiB moved.\n\n\
                  Exit status: 0 measured (rows this machine cannot run say why in the table), \
                  1 a run failed (bytes lost, an end died or made no progress for \
                  --stall-timeout: the table says which; no result file is written when no run was measured), 2 bad usage, \
                  3 nothing asked for could run here, 129/130/143 interrupted by SIGHUP/SIGINT/SIGTERM \
                  (the runs made are printed and written, marked interrupted)."
)]
pub struct IpcArgs {
    /// The mechanisms, comma-separated [default: all]: pipe, pipe-splice,
    /// fifo, unix-stream, unix-seqpacket, unix-dgram, tcp, tcp-zerocopy,
    /// mqueue, shm, shm-spin, io-uring, io-uring-splice.
    #[arg(long, value_delimiter = ',', value_name = "NAMES", value_parser = mechanism)]
    pub mechanisms: Vec<Mechanism>,
    /// Message sizes, comma-separated, a row each. Take K and M [range:
    /// 1-64M].
    #[arg(long, value_delimiter = ',', value_name = "SIZES", default_value = "64,4K,64K,1M", value_parser = message_size)]
    pub sizes: Vec<usize>,
    /// What to measure, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "throughput,latency"
    )]
    pub metrics: Vec<MetricArg>,
    /// Measured runs per row and metric, at least [at most 1000].
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub runs: u64,
    /// Runs a noisy row may take, one more at a time while the 95%
    /// interval of its mean is wider than +-10% [default: 6, or --runs; at
    /// most 1000].
    #[arg(long = "max-runs", value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_runs: Option<u64>,
    /// Seconds per measured run, about [range: 0.01-86400].
    #[arg(long, value_name = "SECS", default_value = "0.05", value_parser = seconds)]
    pub duration: f64,
    /// Bytes per measured throughput run, instead of --duration's worth
    /// (rounded up to whole messages). Takes K, M, G, T [range: 1-1024T].
    #[arg(long, value_name = "SIZE", value_parser = positive_size)]
    pub bytes: Option<u64>,
    #[command(flatten)]
    pub ends: PlacementArgs<Rows>,
    /// Check every byte of every message of every mechanism.
    #[arg(long)]
    pub verify: bool,
    /// Seed of the shuffled run order [default: from the clock].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub warmups: WarmupArgs,
    #[command(flatten)]
    pub report: ReportArgs<Rows>,
    /// Write a self-contained HTML report to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the tables as Markdown to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    #[command(flatten)]
    pub stall: crate::cli::args::StallArgs,
}

/// ipc's words: a row is a mechanism and a size.
#[derive(Debug)]
pub struct Rows;

impl ReportWords for Rows {
    const ROW: &'static str = "row";
    const JSON: &'static str = "Write the results as JSON to FILE (- for standard output)";
    const CSV: &'static str = "Write one CSV row per run to FILE (- for standard output)";
    const SVG: &'static str =
        "Write the charts, one per metric, to FILE (SVG; - for standard output)";
}

impl PlacementWords for Rows {
    const CPUS_VALUE: &'static str = "SENDER,RECEIVER";
    const CPUS: &'static str =
        "Pin the sender (pinger) and the receiver (ponger) to these CPUs [range: 0-1023]";
    const PLACEMENT: &'static str =
        "Where the two ends run [default: different-cpu with 2+ allowed CPUs, else unpinned]";
}

/// `--metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetricArg {
    /// GiB/s and messages/s, and CPU seconds per GiB.
    Throughput,
    /// Round-trip percentiles.
    Latency,
}

/// A mechanism's name; a wrong one is answered with the valid ones.
fn mechanism(text: &str) -> Result<Mechanism, String> {
    text.parse()
        .map_err(|e: crate::bench::ipc::UnknownMechanism| e.to_string())
}

fn config(args: &IpcArgs, facts: &SystemFacts) -> anyhow::Result<IpcConfig> {
    let placement = crate::cli::args::placement(
        args.ends.placement,
        &args.ends.cpus,
        facts,
        "the sender's and the receiver's",
    )?;
    let runs = args.runs as usize;
    let max_runs = match args.max_runs {
        Some(max) if (max as usize) < runs => {
            return Err(UsageError(format!(
                "--max-runs {max} is below --runs {runs}: give at least as many"
            ))
            .into());
        }
        Some(max) => max as usize,
        None => runs.max(6),
    };
    // Each once, in the order first named.
    let mut mechanisms: Vec<Mechanism> = Vec::new();
    for &m in &args.mechanisms {
        if !mechanisms.contains(&m) {
            mechanisms.push(m);
        }
    }
    if mechanisms.is_empty() {
        mechanisms = Mechanism::ALL.to_vec();
    }
    Ok(IpcConfig {
        mechanisms,
        sizes: args.sizes.clone(),
        throughput: args.metrics.contains(&MetricArg::Throughput),
        latency: args.metrics.contains(&MetricArg::Latency),
        runs,
        max_runs,
        duration_s: args.duration,
        bytes: args.bytes,
        placement,
        verify: args.verify,
        seed: args.seed.unwrap_or_else(crate::cli::args::clock_seed),
        warmup_rule: args.warmups.rule(),
        stall_timeout: args.stall.timeout(),
    })
}

/// The result files asked for, each with its format.
fn files(args: &IpcArgs) -> [ResultFile<'_, IpcResult>; 5] {
    let [json, csv, svg] = args.report.files();
    [
        json,
        csv,
        svg,
        (&args.html, &Html),
        (&args.markdown, &Markdown),
    ]
}

pub(super) fn run(args: IpcArgs) -> anyhow::Result<ExitCode> {
    let facts = SystemFacts::collect();
    let config = config(&args, &facts)?;
    check_outputs(files(&args).map(|(path, _)| path))?;
    catch_interrupts()?;
    let exe = std::env::current_exe().context("cannot find the pipespeed binary")?;
    let metrics = usize::from(config.throughput) + usize::from(config.latency);
    let rows = config.mechanisms.len() * config.sizes.len();
    let bar = progress::bar(rows * (config.runs * metrics + usize::from(config.throughput)));
    let result = run_ipc(
        &config,
        &facts,
        &mut Processes { exe },
        &Cancel::on_signals(),
        &mut |event| progress::show(&bar, event),
    );
    bar.finish_and_clear();
    let runs = runs(&result);
    deliver(&result, runs > 0, &files(&args), args.report.text())?;
    Ok(exit_status(&result, runs))
}

/// Measured runs over every row and metric.
fn runs(result: &IpcResult) -> usize {
    result
        .rows
        .iter()
        .map(|r| {
            r.throughput.as_ref().map_or(0, |t| t.runs.len())
                + r.latency.as_ref().map_or(0, |l| l.runs.len())
        })
        .sum()
}

/// 1 if a row failed (said on stderr too), 3 if nothing could run, else
/// 0; interrupted: 128 + the signal.
fn exit_status(result: &IpcResult, runs: usize) -> ExitCode {
    if let Some(status) = crate::cli::interrupted_status(runs, "run", "every child process") {
        return status;
    }
    let statuses = result.rows.iter().flat_map(|r| {
        let t = r.throughput.as_ref().map(|t| (r, "throughput", t.status));
        let l = r.latency.as_ref().map(|l| (r, "latency", l.status));
        t.into_iter().chain(l)
    });
    let failed: Vec<String> = statuses
        .clone()
        .filter(|(_, _, s)| *s == Status::Failed)
        .map(|(r, metric, _)| {
            format!(
                "{} {} {metric}",
                r.mechanism,
                crate::units::Size(r.size as u64)
            )
        })
        .collect();
    if !failed.is_empty() {
        eprintln!(
            "pipespeed: {} failed: {} (the table says why)",
            if failed.len() == 1 { "a row" } else { "rows" },
            failed.join(", ")
        );
        return ExitCode::FAILURE;
    }
    crate::cli::unavailable_status(statuses.map(|(_, _, s)| s)).unwrap_or(ExitCode::SUCCESS)
}
