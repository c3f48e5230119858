//! The option groups and value rules the commands share; each command's
//! own options are in its file, which turns them into the library's
//! configuration. Nothing here names a command.

use std::marker::PhantomData;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::bench::core::{MAX_RUNS, Warmup};
use crate::report::{Csv, Exporter, Json, Svg, Text};
use clap::{Args, ValueEnum};

use crate::cli::UsageError;
use crate::cli::output::ResultFile;

/// `--stall-timeout`, the watchdog of every measurement (contend,
/// latency, ipc, bench): one rule and one wording for all.
#[derive(Debug, Clone, Copy, Args)]
pub struct StallArgs {
    /// Fail a run none of whose workers (threads or processes) makes
    /// progress, no CPU time and no context switch, for SECS seconds:
    /// their state, wchan, system call and kernel stack (root) go into the
    /// message and the JSON, instead of a hang [range: 0.1-86400].
    #[arg(long = "stall-timeout", value_name = "SECS", default_value = "60", value_parser = stall_timeout)]
    pub stall_timeout: f64,
}

impl Default for StallArgs {
    fn default() -> StallArgs {
        StallArgs {
            stall_timeout: crate::bench::core::DEFAULT_STALL_TIMEOUT.as_secs_f64(),
        }
    }
}

impl StallArgs {
    /// The timeout, checked by the parser.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.stall_timeout)
    }
}

fn stall_timeout(text: &str) -> Result<f64, String> {
    use crate::bench::core::{MAX_STALL_TIMEOUT_S as MAX, MIN_STALL_TIMEOUT_S as MIN};
    match text.strip_suffix('s').unwrap_or(text).parse::<f64>() {
        Ok(s) if (MIN..=MAX).contains(&s) => Ok(s),
        _ => Err(format!(
            "'{text}' is not a stall timeout: give seconds from {MIN} to {MAX}, e.g. 60"
        )),
    }
}

/// How a command words `--runs`, `--min-runs` and `--max-runs`: what
/// one of its rows is and the runs a row gets by default, which the help
/// gives.
pub trait RunsWords {
    /// One row: `rung`, `cell`, `size`.
    const ROW: &'static str;
    /// The runs every row gets and the runs a noisy one may get, unless
    /// the options say otherwise.
    const DEFAULT: (u64, u64);
    /// `--runs`'s value name.
    const RUNS_VALUE: &'static str;
    /// The warm-up the measured runs come after: `the warm-up`.
    const WARMUP: &'static str;
    /// What a noisy row's 95% interval is of: `its mean`.
    const SPREAD: &'static str;
}

// The help of each, without a final period: clap's derive drops it from a
// one-line doc comment, and these read as the other options' do.
fn runs_help<W: RunsWords>() -> String {
    let (row, warmup) = (W::ROW, W::WARMUP);
    format!("Measured runs per {row} (after {warmup}); sets both --min-runs and --max-runs")
}

fn min_runs_help<W: RunsWords>() -> String {
    let (row, (min, _)) = (W::ROW, W::DEFAULT);
    format!("Runs every {row} gets [default: {min}; at most {MAX_RUNS}]")
}

fn max_runs_help<W: RunsWords>() -> String {
    let (row, spread, (_, max)) = (W::ROW, W::SPREAD, W::DEFAULT);
    format!(
        "Runs a {row} may get: one more at a time while the 95% interval of {spread} is wider \
         than +-10% [default: {max}, or --min-runs if more; at most {MAX_RUNS}]"
    )
}

/// `--runs`, `--min-runs` and `--max-runs` of bench, contend and latency,
/// in the words of `W`.
#[derive(Debug, Default, Args)]
pub struct RunsArgs<W: RunsWords + Send + Sync + 'static> {
    #[arg(
        long,
        value_name = W::RUNS_VALUE,
        help = runs_help::<W>(),
        value_parser = clap::value_parser!(u64).range(1..=MAX_RUNS as u64),
        conflicts_with_all = ["min_runs", "max_runs"]
    )]
    pub runs: Option<u64>,
    #[arg(long, value_name = "N", help = min_runs_help::<W>(), value_parser = clap::value_parser!(u64).range(1..=MAX_RUNS as u64))]
    pub min_runs: Option<u64>,
    #[arg(long, value_name = "N", help = max_runs_help::<W>(), value_parser = clap::value_parser!(u64).range(1..=MAX_RUNS as u64))]
    pub max_runs: Option<u64>,
    #[arg(skip)]
    words: PhantomData<W>,
}

impl<W: RunsWords + Send + Sync + 'static> RunsArgs<W> {
    /// The runs every row gets and the runs a noisy one may get.
    pub fn resolve(&self) -> Result<(usize, usize), UsageError> {
        self.resolve_as(W::DEFAULT, W::ROW)
    }

    /// [`resolve`](Self::resolve) for rows of another kind (`bench
    /// --zero-copy`'s paths), with their defaults.
    pub fn resolve_as(
        &self,
        (default_min, default_max): (u64, u64),
        row: &str,
    ) -> Result<(usize, usize), UsageError> {
        let (min, max) = match self.runs {
            Some(n) => (n, n),
            None => {
                let min = self.min_runs.unwrap_or(default_min);
                (min, self.max_runs.unwrap_or(min.max(default_max)))
            }
        };
        if max < min {
            return Err(UsageError(format!(
                "--max-runs {max} is below --min-runs {min}: a {row} cannot take fewer runs than it \
                 must"
            )));
        }
        // The parser bounds each to MAX_RUNS.
        Ok((min as usize, max as usize))
    }
}

/// How a command words `--explain` and its result files.
pub trait ReportWords {
    /// One row, as `--explain` names it: `cell`, `size`, `row`.
    const ROW: &'static str;
    /// `--json`'s help (without a final period, as [`runs_help`]'s).
    const JSON: &'static str;
    /// `--csv`'s help.
    const CSV: &'static str;
    /// `--svg`'s help.
    const SVG: &'static str;
}

/// `--explain`, `--json`, `--csv` and `--svg` of contend, latency and
/// ipc, in the words of `W`.
#[derive(Debug, Args)]
pub struct ReportArgs<W: ReportWords + Send + Sync + 'static> {
    #[arg(long, help = explain_help(W::ROW))]
    pub explain: bool,
    #[arg(long, value_name = "FILE", help = W::JSON)]
    pub json: Option<PathBuf>,
    #[arg(long, value_name = "FILE", help = W::CSV)]
    pub csv: Option<PathBuf>,
    #[arg(long, value_name = "FILE", help = W::SVG)]
    pub svg: Option<PathBuf>,
    #[arg(skip)]
    words: PhantomData<W>,
}

fn explain_help(row: &str) -> String {
    format!(
        "Under the table, each noisy {row}'s runs, range and likely causes (by default the noise \
         is said once, for the whole measurement; the JSON has every {row}'s diagnosis either \
         way)"
    )
}

impl<W: ReportWords + Send + Sync + 'static> ReportArgs<W> {
    /// The table, with each noisy row explained when `--explain` asks.
    pub fn text(&self) -> Text {
        Text::new(self.explain)
    }

    /// The result files asked for, each with its format.
    pub fn files<R>(&self) -> [ResultFile<'_, R>; 3]
    where
        Json: Exporter<R>,
        Csv: Exporter<R>,
        Svg: Exporter<R>,
    {
        [(&self.json, &Json), (&self.csv, &Csv), (&self.svg, &Svg)]
    }
}

/// How a command words `--cpus` and `--placement`.
pub trait PlacementWords {
    /// `--cpus`'s value name, the two ends: `PINGER,PONGER`.
    const CPUS_VALUE: &'static str;
    /// `--cpus`'s help (without a final period, as [`runs_help`]'s).
    const CPUS: &'static str;
    /// `--placement`'s help.
    const PLACEMENT: &'static str;
}

/// `--cpus` and `--placement` of latency and ipc, in the words of `W`:
/// where the two ends run.
#[derive(Debug, Args)]
pub struct PlacementArgs<W: PlacementWords + Send + Sync + 'static> {
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1,
        value_name = W::CPUS_VALUE,
        help = W::CPUS,
        value_parser = cpu,
        conflicts_with = "placement"
    )]
    pub cpus: Vec<usize>,
    #[arg(long, value_enum, help = W::PLACEMENT)]
    pub placement: Option<PlacementArg>,
    #[arg(skip)]
    words: PhantomData<W>,
}

/// `--warmup-runs` of every measurement.
#[derive(Debug, Default, Clone, Copy, Args)]
pub struct WarmupArgs {
    /// Warm-up runs of every row: exactly N [default: warm-ups for half a
    /// second over all rows, then until a row's last two agree within
    /// 10%; at most 10 a row and 3 s in all; N at most 1000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=MAX_RUNS as u64))]
    pub warmup_runs: Option<u64>,
}

impl WarmupArgs {
    /// The warm-up rule: exactly N (the parser bounds it to 1000), or the
    /// adaptive default.
    pub fn rule(&self) -> Warmup {
        self.warmup_runs.map_or_else(Warmup::default, |n| {
            Warmup::exactly(usize::try_from(n).unwrap_or(usize::MAX))
        })
    }
}

/// A seed from the clock, for a run order nobody asked to repeat.
pub(super) fn clock_seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

mod values;

pub(super) use values::*;

// pv's help and kernels' tests parse a whole command line.
pub(super) use crate::cli::Cli;
#[cfg(test)]
pub use crate::cli::Command;

/// `--placement` of bench and latency: where the two ends run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlacementArg {
    /// Both on the first allowed CPU.
    SameCpu,
    /// On the first two allowed CPUs.
    DifferentCpu,
    /// Left to the scheduler.
    Unpinned,
}
