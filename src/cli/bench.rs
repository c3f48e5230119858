//! `pipespeed bench` (and `pipespeed` alone): the ladder.
use crate::bench::core::{Cancel, Placement, Status};

use std::path::PathBuf;
use std::process::ExitCode;

use crate::bench::core::{MAX_RUNS, Mode, Runner};
use crate::bench::ladder::{
    LadderConfig, LadderResult, PlacementRow, ProcessExecutor, Rung, check_placements, run_ladder,
};
use crate::bench::latency::PingJob;
use crate::bench::scan::{Scan, ScanParam, ScanPoint, ScanResult};
use crate::bench::zerocopy::{self, Path, ZeroCopyConfig, run_zero_copy};
use crate::report::{Csv, Exporter, Html, Json, Markdown, Svg, Text};
use crate::sys::SystemFacts;
use crate::sys::process::{catch_interrupts, interrupted};
use anyhow::Context;
use clap::Args;

use crate::cli::UsageError;
use crate::cli::args::{
    PlacementArg, RunsArgs, RunsWords, StallArgs, WarmupArgs, buffer_size, clock_seed, count, cpu,
    pinned, pipe_size, positive_size, rung, seconds,
};
use crate::cli::output::{ResultFile, deliver};
use crate::cli::progress;

/// `pipespeed bench`.
#[derive(Debug, Args, Default)]
#[command(
    after_help = "Exit status: 0 every rung measured, or unable to run on this machine (said in the table); 1 a rung (or a --zero-copy path) failed (an end that made no progress for --stall-timeout: the error and the JSON say where both ends were; no result file is written when nothing was measured); 2 bad usage or a value outside its range; 3 every rung named with --rungs is unavailable here; 129, 130 or 143 interrupted by SIGHUP, SIGINT or SIGTERM (the part measured is printed and written, marked interrupted)."
)]
pub struct BenchArgs {
    /// Rungs to run, comma-separated (default: all).
    #[arg(long, value_delimiter = ',', value_name = "RUNGS", value_parser = rung(), hide_possible_values = true)]
    pub rungs: Vec<Rung>,
    #[command(flatten)]
    pub runs: RunsArgs<Rungs>,
    /// Bytes per run (default: about --run-seconds worth, from the
    /// warm-up) [range: 1-1024T].
    #[arg(long, value_name = "SIZE", value_parser = positive_size)]
    pub bytes: Option<u64>,
    /// Wanted seconds per run when --bytes is not given [range: 0.01-86400].
    #[arg(long, value_name = "SECS", default_value_t = 0.4, value_parser = seconds)]
    pub run_seconds: f64,
    /// Buffer size of every rung but tuned [range: 8K-1G].
    #[arg(long = "buf-size", alias = "buf_size", value_name = "SIZE", default_value = "256K", value_parser = buffer_size)]
    pub buf_size: usize,
    /// Pipe size of write-read (the vmsplice rungs use half the buffer)
    /// [range: 1-1G].
    #[arg(long = "pipe-size", alias = "pipe_size", value_name = "SIZE", value_parser = pipe_size)]
    pub pipe_size: Option<usize>,
    /// Writer and reader CPUs (default: the first two allowed CPUs)
    /// [range: 0-1023].
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "W,R",
        num_args = 1,
        value_parser = cpu,
        conflicts_with_all = ["no_pin", "placement"]
    )]
    pub cpus: Vec<usize>,
    /// Leave placement to the scheduler (--placement unpinned).
    #[arg(long, conflicts_with = "placement")]
    pub no_pin: bool,
    /// Where writer and reader run, every rung [default: with 2+ allowed
    /// CPUs, the rungs that block both on one CPU and on two, each shown
    /// in its faster, the others on two; with one, unpinned].
    #[arg(long, value_enum)]
    pub placement: Option<PlacementArg>,
    /// Runs of write-read in each placement the ladder did not run it in
    /// (unpinned; with --placement, the other two), with the cost of a
    /// cross-CPU wake-up, after the ladder: how much placement alone
    /// changes the baseline. 0: skip [at most 1000].
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = count(0, MAX_RUNS))]
    pub placement_runs: usize,
    /// Check every byte (slower; measures correctness, not speed).
    #[arg(long)]
    pub verify: bool,
    /// Add the details to the table: the machine, min, max, share of the
    /// limit, buffer, pipe, ends, the noise, the placement check, the costs
    /// and a paragraph per rung on why it is faster.
    #[arg(long)]
    pub explain: bool,
    /// Write the results as JSON to FILE (- for standard output; the
    /// table then goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per run to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Seed of the run order shuffle (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub warmups: WarmupArgs,
    #[command(flatten)]
    pub stall: StallArgs,
    /// Run each rung once more under `perf record -e cpu-clock -g` and
    /// print its top symbols (needs perf, and root or
    /// perf_event_paranoid <= 1).
    #[arg(long)]
    pub profile: bool,
    /// Write the chart (SVG) to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Write the table as GitHub-flavoured Markdown to FILE (- for
    /// standard output); with --scan, the medians by value and each
    /// value's ladder.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML report (facts, chart, table, why each
    /// rung is faster, profiles) to FILE (- for standard output); with
    /// --scan, the scan's chart, the medians by value and each value's
    /// ladder.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Run the ladder once per value of a setting and chart GiB/s against
    /// it: buf-size=64K,256K,1M, pipe-size=64K,256K,1M or
    /// placement=same-cpu,different-cpu,unpinned (sizes at most 1G). Rungs
    /// default to those the setting changes.
    #[arg(long, value_name = "SETTING=VALUES")]
    pub scan: Option<Scan>,
    /// Check which paths (splice, tee, sendfile...) pass page references
    /// on this kernel; time each against read/write.
    #[arg(long, conflicts_with_all = ["rungs", "scan", "svg", "html", "profile", "verify"])]
    pub zero_copy: bool,
}

/// bench's words: a row is a rung.
#[derive(Debug, Default)]
pub struct Rungs;

impl RunsWords for Rungs {
    const ROW: &'static str = "rung";
    const DEFAULT: (u64, u64) = (5, 10);
    const RUNS_VALUE: &'static str = "RUNS";
    const WARMUP: &'static str = "the warm-up";
    const SPREAD: &'static str = "its mean";
}

pub(super) fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let facts = SystemFacts::collect();
    let placement = placement(&args, &facts)?;
    if args.zero_copy {
        return zero_copy(&args, facts, placement);
    }
    check_buf_size(args.buf_size)?;
    let (min_runs, max_runs) = args.runs.resolve()?;
    let config = LadderConfig {
        rungs: rungs(&args)?,
        runs: min_runs,
        max_runs,
        bytes: args.bytes,
        buf_size: args.buf_size,
        pipe_size: args.pipe_size,
        placement,
        alternative: alternative(&args, &facts),
        verify: args.verify,
        seed: args.seed.unwrap_or_else(clock_seed),
        warmup_rule: args.warmups.rule(),
        target_seconds: args.run_seconds,
        profile: args.profile,
    };
    crate::cli::output::check_outputs(outputs(&args))?;
    // SIGINT, SIGTERM or SIGHUP: the children are killed at once, no run starts,
    // and what was measured is printed and written, marked interrupted.
    catch_interrupts()?;
    let exe = std::env::current_exe()
        .context("cannot find the pipespeed binary to run writer and reader")?;
    let mut executor = ProcessExecutor::new(exe.clone());
    executor.stall_timeout = args.stall.timeout();
    let Some(scan) = &args.scan else {
        let placements = args.placement_runs > 0 && config.rungs.contains(&Rung::WriteRead);
        // The check runs write-read in the placements the ladder did not.
        let unmeasured = 3 - usize::from(config.alternative.is_some()) * 2;
        let extra = if placements {
            unmeasured * (args.placement_runs + 1)
        } else {
            0
        };
        let bar = progress::bar(config.steps() + extra);
        let mut result = measure(&config, &facts, &mut executor, &bar);
        if placements && interrupted().is_none() {
            let mut pinger: Box<dyn Runner<PingJob>> = Mode::Processes.runner(exe);
            let measured = ladder_rows_of_write_read(&result);
            let check = check_placements(
                &config,
                &facts,
                args.placement_runs,
                &mut executor,
                pinger.as_mut(),
                &measured,
                &Cancel::on_signals(),
                &mut |event| progress::show(&bar, event),
            );
            result.header.interrupted = Cancel::on_signals().is_cancelled();
            result.placement_check = Some(check);
            result.conclude();
        }
        bar.finish_and_clear();
        deliver(
            &result,
            measured_anything(&[&result]),
            &files(&args),
            Text::new(args.explain),
        )?;
        return Ok(exit_status(&[&result], !args.rungs.is_empty()));
    };
    // Every value's configuration before the first run: a value this
    // machine cannot have is a usage error, not a failure half-way.
    let mut configs = Vec::with_capacity(scan.values.len());
    for &value in &scan.values {
        if scan.param == ScanParam::BufSize {
            check_buf_size(value as usize)?;
        }
        let label = scan.param.label(value);
        let Some(config) = scan.param.apply(&config, value, &facts) else {
            return Err(UsageError(format!(
                "--scan {}: {label} needs two CPUs, and this process may run on one",
                scan.param
            ))
            .into());
        };
        configs.push((value, label, config));
    }
    let bar = progress::bar(config.steps() * scan.values.len());
    let mut points = Vec::with_capacity(scan.values.len());
    for (value, label, config) in configs {
        if interrupted().is_some() {
            break;
        }
        let result = measure(&config, &facts, &mut executor, &bar);
        points.push(ScanPoint {
            value,
            label,
            result,
        });
    }
    bar.finish_and_clear();
    let mut result = ScanResult::new(facts, scan.param, points);
    result.header.interrupted = interrupted().is_some();
    let ladders: Vec<&LadderResult> = result.points.iter().map(|p| &p.result).collect();
    let text = Text::new(args.explain);
    deliver(&result, measured_anything(&ladders), &files(&args), text)?;
    Ok(exit_status(&ladders, !args.rungs.is_empty()))
}

/// `bench --zero-copy`: every path's check, then each timed path against
/// read/write; the ladder's options that apply are reused (`--bytes`,
/// `--buf-size` as the chunk, `--pipe-size`, the runs, the placement).
fn zero_copy(
    args: &BenchArgs,
    facts: SystemFacts,
    placement: Placement,
) -> anyhow::Result<ExitCode> {
    check_buf_size(args.buf_size)?;
    let (runs, max_runs) = args.runs.resolve_as((3, 5), "path")?;
    let config = ZeroCopyConfig {
        bytes: args.bytes.unwrap_or(zerocopy::DEFAULT_BYTES),
        chunk: args.buf_size,
        pipe_size: args
            .pipe_size
            .unwrap_or_else(|| zerocopy::default_pipe_size(&facts)),
        placement,
        runs,
        max_runs,
        seed: args.seed.unwrap_or_else(clock_seed),
        warmup: args.warmups.rule(),
    };
    crate::cli::output::check_outputs(outputs(args))?;
    // SIGINT, SIGTERM or SIGHUP: no run starts, and what was measured is
    // printed and written, marked interrupted. The scratch files have no
    // name and the sockets no address: nothing is left to remove.
    catch_interrupts()?;
    let timed = Path::ALL.iter().filter(|p| p.measured()).count();
    let bar = progress::bar(timed * (runs + 1));
    let result = run_zero_copy(&config, &facts, &Cancel::on_signals(), &mut |event| {
        progress::show(&bar, event)
    });
    bar.finish_and_clear();
    // --svg and --html do not go with --zero-copy (the parser says so).
    let files: [ResultFile<_>; 3] = [
        (&args.json, &Json),
        (&args.csv, &Csv),
        (&args.markdown, &Markdown),
    ];
    let text = Text::new(args.explain);
    deliver(&result, result.measured_anything(), &files, text)?;
    let runs: usize = result.paths.iter().map(|p| p.gib_s.runs.len()).sum();
    if let Some(status) = crate::cli::interrupted_status(runs, "run", "the measurement") {
        return Ok(status);
    }
    let failed = zerocopy::failed(&result);
    if !failed.is_empty() {
        eprintln!(
            "pipespeed: {} of {} paths failed: {} (the table says why)",
            failed.len(),
            result.paths.len(),
            failed.join(", ")
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether a rung of a ladder measured a run: else no result file is
/// written ([`deliver`]).
fn measured_anything(ladders: &[&LadderResult]) -> bool {
    ladders
        .iter()
        .flat_map(|l| &l.rungs)
        .any(|r| !r.gib_s.runs.is_empty())
}

/// The result files asked for.
fn outputs(args: &BenchArgs) -> [&Option<PathBuf>; 5] {
    files::<LadderResult>(args).map(|(path, _)| path)
}

/// The result files asked for, each with its format: a ladder's and a
/// scan's are the same five.
fn files<R>(args: &BenchArgs) -> [ResultFile<'_, R>; 5]
where
    Json: Exporter<R>,
    Csv: Exporter<R>,
    Svg: Exporter<R>,
    Html: Exporter<R>,
    Markdown: Exporter<R>,
{
    [
        (&args.json, &Json),
        (&args.csv, &Csv),
        (&args.svg, &Svg),
        (&args.html, &Html),
        (&args.markdown, &Markdown),
    ]
}

/// The status of a finished run, after its table and files: 1 if a rung
/// failed (said on stderr too: a table scrolled past must not pass for a
/// success), 3 if rungs were named with `--rungs` and none of them could
/// run on this machine, else 0. Rungs of the default ladder that this
/// machine cannot run (busy looping on one CPU, THP off) are only said in
/// the table: the rest is the answer asked for.
fn exit_status(ladders: &[&LadderResult], named: bool) -> ExitCode {
    let runs: usize = ladders
        .iter()
        .flat_map(|l| {
            let check = l.placement_check.iter().flat_map(|c| &c.rows);
            l.rungs
                .iter()
                .map(|r| r.gib_s.runs.len())
                .chain(check.map(|r| r.gib_s.runs.len()))
        })
        .sum();
    if let Some(status) = crate::cli::interrupted_status(runs, "run", "every child process") {
        return status;
    }
    let rungs = || ladders.iter().flat_map(|l| &l.rungs);
    let failed: Vec<String> = rungs()
        .filter(|r| r.status == Status::Failed)
        .map(|r| r.name.to_string())
        .collect();
    if !failed.is_empty() {
        eprintln!(
            "pipespeed: {} of {} rungs failed: {} (the table says why)",
            failed.len(),
            rungs().count(),
            failed.join(", ")
        );
        return ExitCode::FAILURE;
    }
    let unavailable = crate::cli::unavailable_status(rungs().map(|r| r.status));
    unavailable.filter(|_| named).unwrap_or(ExitCode::SUCCESS)
}

/// The rungs to run: those asked for, or all; with `--scan`, those the
/// setting changes, and asking for another is a usage error.
fn rungs(args: &BenchArgs) -> anyhow::Result<Vec<Rung>> {
    let Some(scan) = &args.scan else {
        return Ok(if args.rungs.is_empty() {
            Rung::ALL.to_vec()
        } else {
            args.rungs.clone()
        });
    };
    if let Some(rung) = args.rungs.iter().find(|r| !scan.param.affects(**r)) {
        return Err(UsageError(format!(
            "--scan {}: {rung} does not depend on {} (write-read takes --pipe-size, the \
             vmsplice rungs use half the buffer, tuned sizes both from pipe-max-size)",
            scan.param, scan.param
        ))
        .into());
    }
    Ok(if args.rungs.is_empty() {
        Rung::ALL
            .into_iter()
            .filter(|r| scan.param.affects(*r))
            .collect()
    } else {
        args.rungs.clone()
    })
}

/// The ladder's least buffer (the parser took care of the most, 1 GiB).
fn check_buf_size(buf_size: usize) -> anyhow::Result<()> {
    if buf_size < 2 * 4096 {
        return Err(UsageError(
            "--buf-size must be at least 8K: vmsplice needs two halves of whole pages".into(),
        )
        .into());
    }
    Ok(())
}

fn measure(
    config: &LadderConfig,
    facts: &SystemFacts,
    executor: &mut ProcessExecutor,
    bar: &progress::Progress,
) -> LadderResult {
    run_ladder(
        config,
        facts,
        executor,
        &Cancel::on_signals(),
        &mut |event| progress::show(bar, event),
    )
}

/// Where the rungs that block run too: both ends on one CPU, when the
/// placement is the default (two CPUs) rather than one the user chose.
/// On a VM a cross-CPU wake-up may cost more than the copy it wakes for,
/// so a blocking pair can be several times faster on one CPU; each such
/// rung then reports the faster of the two, and the other beside it.
/// A scan runs every rung in the one placement, so that its points
/// compare like with like (and a placement scan measures each placement).
fn alternative(args: &BenchArgs, facts: &SystemFacts) -> Option<Placement> {
    let chosen = args.no_pin || args.placement.is_some() || !args.cpus.is_empty();
    if args.scan.is_some() {
        return None;
    }
    match (chosen, Placement::default_for(facts)) {
        (false, Placement::Pinned { writer_cpu, .. }) => Some(pinned(writer_cpu, writer_cpu)),
        _ => None,
    }
}

/// The ladder's rows of write-read, in each placement it ran, as rows of
/// the placement check (which then does not run them again).
fn ladder_rows_of_write_read(result: &LadderResult) -> Vec<PlacementRow> {
    let Some(r) = result.rungs.iter().find(|r| r.name == Rung::WriteRead) else {
        return Vec::new();
    };
    let mut rows = vec![r.placement_row(result.placement)];
    rows.extend(r.other_placement.clone());
    rows
}

fn placement(args: &BenchArgs, facts: &SystemFacts) -> anyhow::Result<Placement> {
    let choice = match args.no_pin {
        true => Some(PlacementArg::Unpinned),
        false => args.placement,
    };
    crate::cli::args::placement(choice, &args.cpus, facts, "the writer's and the reader's")
}
