//! The command line, parsed by clap into plain data; the subcommand files
//! turn it into library configurations.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use pipespeed::bench::core::MAX_RUNS;
use pipespeed::bench::ladder::Rung;
use pipespeed::bench::scan::Scan;

/// How fast are Linux pipes on this machine? The fast-pipes ladder,
/// measured honestly.
///
/// With no command, runs `pipespeed bench` with its defaults.
#[derive(Debug, Parser)]
#[command(
    name = "pipespeed",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("PIPESPEED_GIT_COMMIT"), ")"),
    about,
    long_about = None,
    args_conflicts_with_subcommands = true,
    override_usage = "pipespeed [BENCH OPTIONS]\n       pipespeed <COMMAND>"
)]
#[command(
    after_help = "With no command, runs bench, taking its options (`pipespeed bench --help`).\n\n\
                  Sizes: K, M, G, T, KiB, MiB... are powers of 1024; KB, MB, GB, TB of 1000 \
                  (GNU's rule; pv keeps pv's).\n\nExit status: 0 success, 1 error, 2 bad usage, 3 \
                  not possible on this machine (huge pages not granted, vmsplice refused)."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// bench's options, for `pipespeed` with no command (hidden from the
    /// top-level help by `main::cli_command`: `bench --help` has them).
    #[command(flatten)]
    pub bench: BenchArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the ladder: every step of the blog, measured on this machine.
    Bench(BenchArgs),
    /// The blog's writer: push a buffer into stdout (a pipe) forever.
    Write(WriteArgs),
    /// The blog's reader: consume --bytes from stdin and print the rate.
    Read(ReadArgs),
    /// Concatenate FILEs to standard output, byte for byte as GNU cat does.
    ///
    /// The binary is also `pipespeed cat` when it is called by the name
    /// cat (a symbolic link named cat, for example).
    Cat(CatArgs),
    /// Copy stdin to stdout and to each FILE, as GNU tee does.
    ///
    /// The binary is also `pipespeed tee` when it is called by the name
    /// tee (a symbolic link named tee, for example).
    Tee(TeeArgs),
    /// Copy inputs to stdout showing progress, as pv does, at the speed
    /// of the pipe.
    Pv(crate::pv::PvArgs),
    /// N writers and M readers on one pipe, as the kernel's pipe_bench.
    Contend(crate::contend::ContendArgs),
    /// Round-trip latency over two pipes, with percentiles.
    Latency(crate::latency::LatencyArgs),
    /// Pipes beside sockets, queues, shared memory and io_uring.
    Ipc(crate::ipc::IpcArgs),
    /// Compare two --json results, row by row.
    Compare(crate::compare::CompareArgs),
    /// Boot two kernels, measure, print the LKML table.
    Kernels(crate::kernels::KernelsArgs),
    /// Watch a pipeline, name the stage that limits it.
    Top(crate::top::TopArgs),
    /// Write manual pages, or print a completion script.
    Generate(crate::generate::GenerateArgs),
    /// Internal: a child process of a measurement (see
    /// `pipespeed::bench::worker`).
    #[command(hide = true)]
    Worker(WorkerArgs),
}

/// `pipespeed worker SPEC`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// What to be: one `pipespeed::bench::worker::Worker` as JSON.
    pub spec: String,
}

/// `--stall-timeout`, the watchdog of every measurement (contend,
/// latency, ipc, bench): one rule and one wording for all.
#[derive(Debug, Clone, Copy, Args)]
pub struct StallArgs {
    /// Fail a run none of whose workers (threads or processes) makes
    /// progress, no CPU time and no context switch, for SECS seconds:
    /// their state, wchan, system call and kernel stack (root) go into the
    /// message and the JSON, instead of a hang [default: 60] [range:
    /// 0.1-86400].
    #[arg(long = "stall-timeout", value_name = "SECS", default_value = "60", value_parser = stall_timeout)]
    pub stall_timeout: f64,
}

impl Default for StallArgs {
    fn default() -> StallArgs {
        StallArgs {
            stall_timeout: pipespeed::bench::core::DEFAULT_STALL_TIMEOUT.as_secs_f64(),
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
    use pipespeed::bench::core::{MAX_STALL_TIMEOUT_S as MAX, MIN_STALL_TIMEOUT_S as MIN};
    match text.strip_suffix('s').unwrap_or(text).parse::<f64>() {
        Ok(s) if (MIN..=MAX).contains(&s) => Ok(s),
        _ => Err(format!(
            "'{text}' is not a stall timeout: give seconds from {MIN} to {MAX}, e.g. 60"
        )),
    }
}

mod ends;
mod values;

pub use ends::*;
pub use values::*;

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

/// `pipespeed bench`.
#[derive(Debug, Args, Default)]
#[command(
    after_help = "Exit status: 0 every rung measured, or unable to run on this machine (said in the table); 1 a rung (or a --zero-copy path) failed (an end that made no progress for --stall-timeout: the error and the JSON say where both ends were; no result file is written when nothing was measured); 2 bad usage or a value outside its range; 3 every rung named with --rungs is unavailable here; 129, 130 or 143 interrupted by SIGHUP, SIGINT, SIGTERM or SIGHUP (the part measured is printed and written, marked interrupted)."
)]
pub struct BenchArgs {
    /// Rungs to run, comma-separated (default: all).
    #[arg(long, value_delimiter = ',', value_name = "RUNGS", value_parser = rung(), hide_possible_values = true)]
    pub rungs: Vec<Rung>,
    /// Measured runs per rung (after the warm-up); sets both
    /// --min-runs and --max-runs.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000), conflicts_with_all = ["min_runs", "max_runs"])]
    pub runs: Option<u64>,
    /// Runs every rung gets [default: 5; at most 1000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub min_runs: Option<u64>,
    /// Runs a rung may get: one more at a time while the 95% interval of
    /// its mean is wider than +-10% [default: 10, or --min-runs if more; at
    /// most 1000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_runs: Option<u64>,
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
    /// Print a paragraph per rung on why it is faster.
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
    /// Warm-up runs of every row: exactly N [default: warm-ups for half a
    /// second over all rows, then until a row's last two agree within
    /// 10%; at most 10 a row and 3 s in all; N at most 1000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub warmup_runs: Option<u64>,
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

/// The layout of `pipespeed cat --help`; the usage and the examples are
/// set at run time, with the name cat was called by.
const CAT_HELP: &str = "\
Usage: {usage}
{about}

With no FILE, or when FILE is -, read standard input.

{options}{after-help}";

/// `pipespeed cat`: GNU cat's command line, parsed as getopt_long does
/// (options anywhere before `--`, clustered short options, unambiguous
/// abbreviations of long ones, `-` as a file). No `-h`, no `-V`: GNU cat
/// has neither.
#[derive(Debug, Args)]
#[command(
    version,
    disable_help_flag = true,
    disable_version_flag = true,
    infer_long_args = true,
    args_override_self = true,
    help_template = CAT_HELP
)]
pub struct CatArgs {
    /// equivalent to -vET
    #[arg(short = 'A', long = "show-all")]
    pub show_all: bool,
    /// number nonempty output lines, overrides -n
    #[arg(short = 'b', long = "number-nonblank")]
    pub number_nonblank: bool,
    /// equivalent to -vE
    #[arg(short = 'e')]
    pub e: bool,
    /// display $ at end of each line
    #[arg(short = 'E', long = "show-ends")]
    pub show_ends: bool,
    /// number all output lines
    #[arg(short = 'n', long = "number")]
    pub number: bool,
    /// suppress repeated empty output lines
    #[arg(short = 's', long = "squeeze-blank")]
    pub squeeze_blank: bool,
    /// equivalent to -vT
    #[arg(short = 't')]
    pub t: bool,
    /// display TAB characters as ^I
    #[arg(short = 'T', long = "show-tabs")]
    pub show_tabs: bool,
    /// (ignored: output is never held back)
    #[arg(short = 'u')]
    pub u: bool,
    /// use ^ and M- notation, except for LFD and TAB
    #[arg(short = 'v', long = "show-nonprinting")]
    pub show_nonprinting: bool,
    /// display this help and exit
    #[arg(long, action = ArgAction::Help)]
    help: Option<bool>,
    /// output version information and exit
    #[arg(long, action = ArgAction::Version)]
    version: Option<bool>,
    /// Files to concatenate, - for standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<OsString>,
}

/// The layout of `pipespeed tee --help`.
const TEE_HELP: &str = "\
Usage: {usage}
{about}

{options}{after-help}";

/// `pipespeed tee`: GNU tee's command line, parsed as getopt_long does.
#[derive(Debug, Args)]
#[command(
    version,
    disable_help_flag = true,
    disable_version_flag = true,
    infer_long_args = true,
    args_override_self = true,
    help_template = TEE_HELP
)]
pub struct TeeArgs {
    /// append to the given FILEs, do not overwrite
    #[arg(short = 'a', long = "append")]
    pub append: bool,
    /// ignore interrupt signals
    #[arg(short = 'i', long = "ignore-interrupts")]
    pub ignore_interrupts: bool,
    /// operate in a more appropriate MODE with pipes
    #[arg(short = 'p')]
    pub p: bool,
    /// set behavior on write error.  See MODE below
    #[arg(
        long = "output-error",
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "warn-nopipe",
        action = ArgAction::Append
    )]
    pub output_error: Vec<OsString>,
    /// display this help and exit
    #[arg(long, action = ArgAction::Help)]
    help: Option<bool>,
    /// output version information and exit
    #[arg(long, action = ArgAction::Version)]
    version: Option<bool>,
    /// Files to write to, as well as standard output (- is a file named -).
    #[arg(value_name = "FILE")]
    pub files: Vec<OsString>,
}
