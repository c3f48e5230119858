//! `pipespeed top`: watch a running pipeline from outside and name the
//! stage that limits it. Nothing is inserted in the pipeline: stages and
//! pipes are found through `/proc/PID/fd`, and several times a window a
//! probe reads each thread's `wchan` and each pipe's fill (FIONREAD).
//! [`judge`] turns a window into a verdict; [`rates`] estimates the bytes
//! of a stage that splices, which `/proc/PID/io` does not count.
//!
//! ```no_run
//! use std::time::Duration;
//! use pipespeed::bench::core::Cancel;
//! use pipespeed::top::{Scope, Target, Watcher};
//!
//! let mut watcher = Watcher::new(Scope::Targets(vec![Target::Name("gzip".into())]))?;
//! let sample = watcher.sample(Duration::from_secs(1), &Cancel::never());
//! for pipeline in &sample.pipelines {
//!     println!("{}", pipeline.verdict.why);
//! }
//! # Ok::<(), pipespeed::top::TopError>(())
//! ```

mod graph;
pub mod judge;
mod probe;
pub mod rates;
mod report;
mod watch;

use serde::Serialize;

pub use judge::Verdict;
pub use rates::Rate;
pub use watch::Watcher;

/// The JSON schema of every line `--json` writes.
pub const SCHEMA: &str = "pipespeed.top/1";

/// A process to start from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A PID of any stage.
    Pid(u32),
    /// Every process whose command name (or its program's file name) is
    /// this, as pv's `-d =NAME`.
    Name(String),
}

/// Which pipelines to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The pipelines these processes are stages of.
    Targets(Vec<Target>),
    /// The pipelines of processes on this process's controlling terminal.
    Session,
    /// The pipelines of the processes this one started (`--run`):
    /// the given PID and everything it starts.
    Tree(u32),
}

/// Why nothing can be watched.
#[derive(Debug, thiserror::Error)]
pub enum TopError {
    /// No process has that PID.
    #[error("no process {0}")]
    NoProcess(u32),
    /// No process has that name.
    #[error("no process named {0}")]
    NoName(String),
    /// `Scope::Session` without a controlling terminal.
    #[error("not run from a terminal: name a PID or =NAME to watch")]
    NoTerminal,
    /// `Scope::Session` found no process joined to another by a pipe.
    #[error("no pipeline on this terminal (start one with & first, or name a PID or =NAME)")]
    NoPipeline,
}

/// One window of every watched pipeline.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// `sample`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Seconds from the start of the watch to the window's end.
    pub time_s: f64,
    /// The window's length in seconds.
    pub window_s: f64,
    /// Probes taken in the window (the shares are of these).
    pub probes: u32,
    /// Every pipeline watched, in the order they were found.
    pub pipelines: Vec<PipelineSample>,
    /// What could not be seen, a line each.
    pub unseen: Vec<String>,
}

/// One pipeline over a window (or, in the summary, the whole watch).
#[derive(Debug, Clone, Serialize)]
pub struct PipelineSample {
    /// From the first writer to the last reader.
    pub stages: Vec<StageSample>,
    /// The pipes between its stages.
    pub pipes: Vec<PipeSample>,
    /// Which stage limits it, and why.
    pub verdict: Verdict,
}

/// One stage over a window. In JSON, the shares of probes are null when
/// the stage is not `visible` (the table's `?`).
#[derive(Debug, Clone, Serialize)]
#[serde(into = "StageJson")]
pub struct StageSample {
    /// Its process ID.
    pub pid: u32,
    /// The command name (`comm`).
    pub name: String,
    /// Its command line.
    pub command: String,
    /// `running`, or `exited` once gone.
    pub state: &'static str,
    /// Percent of one CPU it used.
    pub cpu_pct: f64,
    /// Percent of the window it waited on a run queue for a CPU.
    pub runq_pct: f64,
    /// Bytes per second read, where known.
    pub bytes_in: Option<Rate>,
    /// Bytes per second written, where known.
    pub bytes_out: Option<Rate>,
    /// Percent of probes that found it running or runnable.
    pub working_pct: f64,
    /// Percent of probes that found it blocked reading a pipe.
    pub input_wait_pct: f64,
    /// Percent of probes that found it blocked writing a pipe.
    pub output_wait_pct: f64,
    /// Percent of probes that found it asleep elsewhere (a timer, a disk,
    /// a socket).
    pub other_pct: f64,
    /// Whether its state, counters and pipes could be read (another
    /// user's process cannot be: its CPU and run-queue figures still
    /// are).
    pub visible: bool,
    /// Whether its counters moved: it reads and writes through user
    /// space rather than splicing.
    pub copies: bool,
}

/// A [`StageSample`] as JSON says it: what could not be probed is null.
#[derive(Serialize)]
struct StageJson {
    pid: u32,
    name: String,
    command: String,
    state: &'static str,
    cpu_pct: f64,
    runq_pct: f64,
    bytes_in: Option<Rate>,
    bytes_out: Option<Rate>,
    working_pct: Option<f64>,
    input_wait_pct: Option<f64>,
    output_wait_pct: Option<f64>,
    other_pct: Option<f64>,
    visible: bool,
    copies: bool,
}

impl From<StageSample> for StageJson {
    fn from(s: StageSample) -> StageJson {
        let seen = |share: f64| s.visible.then_some(share);
        StageJson {
            working_pct: seen(s.working_pct),
            input_wait_pct: seen(s.input_wait_pct),
            output_wait_pct: seen(s.output_wait_pct),
            other_pct: seen(s.other_pct),
            pid: s.pid,
            name: s.name,
            command: s.command,
            state: s.state,
            cpu_pct: s.cpu_pct,
            runq_pct: s.runq_pct,
            bytes_in: s.bytes_in,
            bytes_out: s.bytes_out,
            visible: s.visible,
            copies: s.copies,
        }
    }
}

/// One pipe over a window.
#[derive(Debug, Clone, Serialize)]
pub struct PipeSample {
    /// `pipe:[INODE]`, or a FIFO's path.
    pub name: String,
    /// The PIDs of the stages it joins (the writer...)
    pub from: u32,
    /// (...and the reader).
    pub to: u32,
    /// Its capacity in bytes, where it could be read.
    pub capacity: Option<u64>,
    /// Percent of its capacity in use: mean, lowest and highest probe.
    pub fill_pct: Option<FillPct>,
}

/// A pipe's fill over the probes of a window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FillPct {
    /// The mean over the probes.
    pub mean: f64,
    /// The lowest probe.
    pub min: f64,
    /// The highest probe.
    pub max: f64,
}

/// The whole watch, when the pipelines have ended (or the watch was
/// stopped).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// `summary`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Seconds watched.
    pub time_s: f64,
    /// Windows sampled.
    pub samples: u32,
    /// Each pipeline over the whole watch: its mean figures and the
    /// verdict on them.
    pub pipelines: Vec<PipelineSample>,
    /// How many windows named each stage the bottleneck: (command name,
    /// PID, windows), most often named first.
    pub named: Vec<Vec<Named>>,
}

/// A stage and how many windows named it the bottleneck.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Named {
    /// Its command name.
    pub name: String,
    /// Its process ID.
    pub pid: u32,
    /// How many windows named it.
    pub windows: u32,
}
