//! `pipespeed contend`: N writers and M readers on one pipe, as the
//! kernel's pipe_bench runs them; parse, call the library, render.
use crate::bench::core::{Cancel, Placement, Status};

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::bench::contend::pipe_bench::PipeBenchFormat;
use crate::bench::contend::{
    Cell, ContendConfig, ContendResult, DEFAULT_MSG_SIZE, MAX_ENDS, Mode, resolve_pipe_size,
    run_contend,
};
use crate::bench::contend::{DEFAULT_SHARE_PERCENT, DEFAULT_WORKERS, MAX_HOGS, PressureConfig};
use crate::sys::SystemFacts;
use crate::sys::process::catch_interrupts;
use anyhow::{Context, anyhow};
use clap::Args;

use crate::cli::UsageError;
use crate::cli::args::{
    ReportArgs, ReportWords, RunsArgs, RunsWords, WarmupArgs, count, message_size, seconds,
};
use crate::cli::output::ResultFile;
use crate::cli::progress;

/// `pipespeed contend`.
#[derive(Debug, Args)]
#[command(
    after_help = "Rates are over the measured time (first write started to last write \
                        returned). Write latency: per message, partial writes included. Read \
                        latency: per read(2) that returned data, waiting included. See \
                        docs/contend.md.\n\nExit status: 0 measured, 1 an error (a worker \
                        died: the other cells are still printed and written, and the error names \
                        the cell; a worker that made no progress for --stall-timeout, the error \
                        and the JSON say where every worker was; with --verify a lost, duplicated or torn message; no result file is written when no cell was measured), 2 bad usage or \
                        a value outside its range, 3 no cell can run on this machine (said in the \
                        table), 129/130/143 stopped by SIGHUP/SIGINT/SIGTERM (helpers \
                        reaped first; the cells measured are printed and written, marked \
                        interrupted)."
)]
pub struct ContendArgs {
    /// Writers on the pipe.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = count(1, MAX_ENDS))]
    pub writers: usize,
    /// Readers on the pipe.
    #[arg(long, value_name = "M", default_value_t = 1, value_parser = count(1, MAX_ENDS))]
    pub readers: usize,
    /// Bytes per message, as K and M [default: 64K, pipe_bench's] [range:
    /// 1-64M].
    #[arg(long = "msg-size", value_name = "SIZE", value_parser = message_size)]
    pub msg_size: Option<usize>,
    /// Pipe size to ask for [default: 1M, pipe_bench's, cut to
    /// /proc/sys/fs/pipe-max-size] [range: 1-1G].
    #[arg(long = "pipe-size", value_name = "SIZE", value_parser = crate::cli::args::pipe_size)]
    pub pipe_size: Option<usize>,
    /// Seconds the writers write, per run [range: 0.01-86400].
    #[arg(long, value_name = "SECS", default_value = "3", value_parser = seconds)]
    pub duration: f64,
    /// One process per writer and reader, instead of threads.
    #[arg(long)]
    pub processes: bool,
    /// pipe_bench's grid: writers 1,2,5 x readers 1,5,10, a row each,
    /// with pipe_bench's 64 KiB writes and 1 MiB pipe unless --msg-size or
    /// --pipe-size say otherwise.
    #[arg(long, conflicts_with_all = ["writers", "readers"])]
    pub sweep: bool,
    #[command(flatten)]
    pub runs: RunsArgs<Cells>,
    /// Seed of the run order shuffle (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub warmups: WarmupArgs,
    /// Writers on CPU W, readers on CPU R [default: unpinned, as pipe_bench;
    /// range: 0-1023].
    #[arg(long, value_delimiter = ',', value_name = "W,R", num_args = 1, value_parser = crate::cli::args::cpu)]
    pub cpus: Vec<usize>,
    /// Check that no message is lost, duplicated or torn (slower: this
    /// measures correctness, not speed).
    #[arg(long)]
    pub verify: bool,
    /// Run stress-ng --vm 4 --vm-bytes 80% --vm-method all for the whole
    /// measurement, as pipe_bench does, where stress-ng is on PATH; else
    /// memory hogs of pipespeed's own that do what it does.
    #[arg(long = "memory-pressure")]
    pub memory_pressure: bool,
    /// Memory hog processes (stress-ng's --vm) [default: 4].
    #[arg(long = "pressure-workers", value_name = "N", value_parser = count(1, MAX_HOGS))]
    pub pressure_workers: Option<usize>,
    /// What the hogs take together, in percent of MemAvailable (stress-ng's
    /// --vm-bytes; pipespeed's hogs never take more than 80% of it, and
    /// leave 1 GiB) [default: 80].
    #[arg(long = "pressure-share", value_name = "PERCENT", value_parser = percent)]
    pub pressure_share: Option<f64>,
    #[command(flatten)]
    pub report: ReportArgs<Cells>,
    /// Write the result in the kernel's pipe_bench format to FILE (- for
    /// standard output): its block per cell, the figures the medians of
    /// the cell's runs, its log2-bucket percentiles and then pipespeed's
    /// exact ones; needs a whole --duration (docs/contend.md).
    #[arg(long = "pipe-bench", value_name = "FILE")]
    pub pipe_bench: Option<PathBuf>,
    #[command(flatten)]
    pub stall: crate::cli::args::StallArgs,
}

/// contend's words: a row is a cell.
#[derive(Debug, Default)]
pub struct Cells;

impl RunsWords for Cells {
    const ROW: &'static str = "cell";
    const DEFAULT: (u64, u64) = (3, 6);
    const RUNS_VALUE: &'static str = "N";
    const WARMUP: &'static str = "the warm-up";
    const SPREAD: &'static str = "its mean";
}

impl ReportWords for Cells {
    const ROW: &'static str = "cell";
    const JSON: &'static str = "Write the result as JSON to FILE (- for standard output)";
    const CSV: &'static str = "Write one CSV row per run per cell to FILE (- for standard output)";
    const SVG: &'static str =
        "Write a chart of writes/s per cell to FILE (SVG; - for standard output)";
}

fn percent(text: &str) -> Result<f64, String> {
    match text.strip_suffix('%').unwrap_or(text).parse::<f64>() {
        Ok(p) if p.is_finite() && p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!(
            "'{text}' is not a share (give a percentage above 0, up to 100)"
        )),
    }
}

/// The result files asked for: --json, --csv, --svg and --pipe-bench.
fn result_files(args: &ContendArgs) -> Vec<ResultFile<'_, ContendResult>> {
    let mut files = args.report.files().to_vec();
    files.push((&args.pipe_bench, &PipeBenchFormat));
    files
}

/// Checks what clap cannot and builds the library's configuration.
fn config(args: &ContendArgs, facts: &SystemFacts) -> anyhow::Result<ContendConfig> {
    let usage = |text: String| anyhow::Error::from(UsageError(text));
    // pipe_bench's sizes, for one cell as for its grid (--sweep).
    let msg_size = args.msg_size.unwrap_or(DEFAULT_MSG_SIZE);
    if args.verify && !msg_size.is_multiple_of(16) {
        return Err(usage(format!(
            "--verify needs a --msg-size that is a multiple of 16 bytes (got {msg_size})"
        )));
    }
    if !args.memory_pressure
        && let Some(flag) = [
            (args.pressure_workers.is_some(), "--pressure-workers"),
            (args.pressure_share.is_some(), "--pressure-share"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    {
        return Err(usage(format!("{flag} only applies with --memory-pressure")));
    }
    // pipe_bench prints `duration=%d`.
    if args.pipe_bench.is_some() && (args.duration < 1.0 || args.duration.fract() != 0.0) {
        return Err(usage(format!(
            "--pipe-bench needs a whole --duration of at least 1 s, as pipe_bench's duration= \
             (got {})",
            args.duration
        )));
    }
    let placement = if args.cpus.is_empty() {
        Placement::Unpinned
    } else {
        let ends = "the writers' and the readers'";
        crate::cli::args::cpu_pair(&args.cpus, &facts.cpus_allowed, ends)?
    };
    let pipe_size =
        resolve_pipe_size(args.pipe_size).map_err(|e| usage(format!("--pipe-size: {e}")))?;
    let (min_runs, max_runs) = args.runs.resolve()?;
    Ok(ContendConfig {
        cells: if args.sweep {
            Cell::sweep()
        } else {
            vec![Cell {
                writers: args.writers,
                readers: args.readers,
            }]
        },
        msg_size,
        pipe_size,
        duration: Duration::from_secs_f64(args.duration),
        runs: min_runs,
        max_runs,
        seed: args.seed.unwrap_or_else(crate::cli::args::clock_seed),
        warmup_rule: args.warmups.rule(),
        mode: if args.processes {
            Mode::Processes
        } else {
            Mode::Threads
        },
        placement,
        verify: args.verify,
        pressure: args.memory_pressure.then_some(PressureConfig {
            workers: args.pressure_workers.unwrap_or(DEFAULT_WORKERS),
            share_percent: args.pressure_share.unwrap_or(DEFAULT_SHARE_PERCENT),
        }),
        stall_timeout: args.stall.timeout(),
        exe: std::env::current_exe()
            .context("cannot find the pipespeed binary to start workers and hogs")?,
    })
}

pub(super) fn run(args: ContendArgs) -> anyhow::Result<ExitCode> {
    let facts = SystemFacts::collect();
    let config = config(&args, &facts)?;
    let files = result_files(&args);
    crate::cli::output::check_outputs(files.iter().map(|(path, _)| *path))?;
    catch_interrupts()?;
    // A warm-up and the measured runs per cell (noisy cells get more).
    // validate() bounds runs and the cells are few: saturate, never wrap.
    let bar = progress::bar(
        config
            .runs
            .saturating_add(1)
            .saturating_mul(config.cells.len()),
    );
    if config.pressure.is_some() {
        bar.set_message("memory hogs are writing their memory");
    }
    let outcome = run_contend(&config, facts, &Cancel::on_signals(), &mut |event| {
        progress::show(&bar, event)
    });
    bar.finish_and_clear();
    let result = match outcome {
        // Stopped before the first run (the hogs were starting).
        Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {
            let status = crate::cli::interrupted_status(0, "cell", "every worker and memory hog");
            return Ok(status.unwrap_or(ExitCode::from(130)));
        }
        other => other.context("contend")?,
    };
    let measured = result.rows.iter().any(|r| !r.runs.is_empty());
    crate::cli::output::deliver(&result, measured, &files, args.report.text())?;
    let cells = result.rows.len();
    if let Some(status) =
        crate::cli::interrupted_status(cells, "cell", "every worker and memory hog")
    {
        return Ok(status);
    }
    // A cell whose run failed: the others were measured, printed and
    // written; the command still fails, naming the cell.
    if let Some(row) = result.rows.iter().find(|r| r.status == Status::Failed) {
        return Err(anyhow!(
            "contend: {}: {}",
            crate::bench::contend::job::ends(row.writers, row.readers),
            row.reason.as_deref().unwrap_or("failed")
        ));
    }
    if let Some(status) = crate::cli::unavailable_status(result.rows.iter().map(|r| r.status)) {
        return Ok(status);
    }
    let failed = result
        .rows
        .iter()
        .filter(|r| r.verify.is_some_and(|v| !v.ok))
        .count();
    if failed > 0 {
        return Err(anyhow!(
            "contend --verify: {failed} of {} cells failed the check (see above)",
            result.rows.len()
        ));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use crate::bench::contend::DEFAULT_PIPE_SIZE;
    use crate::sys::pipe_max_size;
    use clap::Parser;

    use super::*;
    use crate::cli::args::{Cli, Command};

    fn config_of(argv: &[&str]) -> ContendConfig {
        let argv = ["pipespeed", "contend"].iter().chain(argv);
        let Some(Command::Contend(args)) = Cli::try_parse_from(argv).unwrap().command else {
            panic!("not contend")
        };
        config(&args, &SystemFacts::collect()).unwrap()
    }

    #[test]
    fn sweep_defaults_are_pipe_bench_s() {
        let c = config_of(&["--sweep"]);
        // The grid itself, pipe-bench's, is asserted beside `Cell::sweep`
        // (bench/contend/tests.rs).
        assert_eq!(c.cells, Cell::sweep());
        assert_eq!(c.msg_size, 64 * 1024);
        assert_eq!(c.pipe_size.requested, 1 << 20);
        // Granted as asked, or cut to the kernel's limit below 1 MiB.
        let max = pipe_max_size().unwrap();
        if max >= 1 << 20 {
            assert_eq!((c.pipe_size.granted, c.pipe_size.clamped), (1 << 20, false));
        } else {
            assert!(c.pipe_size.clamped && c.pipe_size.granted <= max);
        }
        // One cell has the same sizes.
        let one = config_of(&[]);
        assert_eq!((one.msg_size, one.pipe_size), (c.msg_size, c.pipe_size));
        assert_eq!(DEFAULT_PIPE_SIZE, 1 << 20);
    }

    #[test]
    fn the_stall_timeout_is_checked_against_its_range_and_defaults_to_a_minute() {
        assert_eq!(config_of(&[]).stall_timeout, Duration::from_secs(60));
        let c = config_of(&["--stall-timeout", "0.1"]);
        assert_eq!(c.stall_timeout, Duration::from_millis(100));
        assert_eq!(
            config_of(&["--stall-timeout", "86400"])
                .stall_timeout
                .as_secs(),
            86400
        );
        for bad in ["0", "0.09", "86401", "-1", "nan", "inf", "x"] {
            let flag = format!("--stall-timeout={bad}");
            let argv = ["pipespeed", "contend", flag.as_str()];
            let err = Cli::try_parse_from(argv).unwrap_err().to_string();
            assert!(
                err.contains(&format!(
                    "'{bad}' is not a stall timeout: give seconds from 0.1 to 86400"
                )),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn sizes_given_with_sweep_are_kept() {
        let c = config_of(&["--sweep", "--msg-size", "4K", "--pipe-size", "64K"]);
        assert_eq!(c.cells.len(), 9);
        assert_eq!(c.msg_size, 4096);
        assert_eq!(c.pipe_size.requested, 64 * 1024);
        assert!(!c.pipe_size.clamped);
    }
}
