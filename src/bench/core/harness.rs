//! What every measurement shares: a [`Job`] is one run's work, a
//! [`Runner`] makes it (in threads, in worker processes, or a mock in
//! tests), progress goes out as one [`Event`] type, and every result
//! document starts with one [`Header`].

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::bench::profile::Profile;
use crate::build_info::BuildInfo;
use crate::sys::SystemFacts;

/// The largest message `latency` and `contend` send, agreed between them:
/// latency's sides each hold two buffers of one message, contend maps one
/// per end, so 64 MiB already asks for gigabytes with many ends; larger
/// messages measure memory, not the pipe.
pub const MAX_MESSAGE: usize = 64 << 20;

/// The most measured runs any measurement makes of one row (a rung, a
/// size, a cell): the command line's bound on every `--runs`, which keeps
/// the counts of a progress display far from overflowing.
pub const MAX_RUNS: usize = 1000;

/// Whether the two sides (or all the ends) of a measurement are threads
/// of this process or processes of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Threads of one process.
    Threads,
    /// A process each (the pipespeed binary as a hidden
    /// worker).
    Processes,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Threads => "threads",
            Mode::Processes => "processes",
        })
    }
}

/// One run's work in one kind of measurement.
pub trait Job {
    /// What a run gives.
    type Output;
    /// Why a run gave nothing.
    type Error;
}

/// Makes runs of jobs of type `J`.
pub trait Runner<J: Job> {
    /// Makes one run of `job`.
    fn run(&mut self, job: &J) -> Result<J::Output, J::Error>;

    /// Runs `job` once more, not measured, to see where its time goes.
    /// Problems are in the returned profile, never an error: the
    /// measurement goes on.
    fn profile(&mut self, job: &J) -> Profile {
        let _ = job;
        Profile::unavailable("this runner does not profile")
    }
}

/// Runs jobs in threads of this process.
#[derive(Debug, Clone, Copy, Default)]
pub struct Threads;

/// Runs jobs in child processes: `exe`, the pipespeed binary, as hidden
/// workers.
#[derive(Debug, Clone)]
pub struct Processes {
    /// The pipespeed binary.
    pub exe: PathBuf,
}

impl Mode {
    /// The runner of this mode for jobs of type `J`; `exe` is the
    /// pipespeed binary the processes run.
    pub fn runner<J: Job>(self, exe: PathBuf) -> Box<dyn Runner<J>>
    where
        Threads: Runner<J>,
        Processes: Runner<J>,
    {
        match self {
            Mode::Threads => Box::new(Threads),
            Mode::Processes => Box::new(Processes { exe }),
        }
    }
}

/// A figure measured by one run, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// Throughput (the ladder).
    GibPerS(f64),
    /// The median round trip, in nanoseconds (latency).
    RoundTripNs(f64),
    /// Writes per second (contend).
    WritesPerS(f64),
}

impl Figure {
    /// The number, whatever it measures.
    pub(crate) fn value(self) -> f64 {
        match self {
            Figure::GibPerS(v) | Figure::RoundTripNs(v) | Figure::WritesPerS(v) => v,
        }
    }
}

/// Progress reported while a measurement runs. `row` names the row of
/// the result the event is about: a rung, a message size, a cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<'a> {
    /// Contend's memory hogs have written their memory once.
    PressureReady {
        /// Bytes the hogs hold together.
        bytes: u64,
        /// Seconds it took.
        seconds: f64,
    },
    /// A row is skipped, or stopped by a failed run.
    Skipped {
        /// The row.
        row: &'a str,
        /// Why.
        reason: &'a str,
    },
    /// A warm-up run finished.
    WarmedUp {
        /// The row.
        row: &'a str,
        /// What it measured.
        figure: Figure,
    },
    /// A row is about to be profiled.
    Profiling {
        /// The row.
        row: &'a str,
    },
    /// A measured run finished.
    Measured {
        /// The row.
        row: &'a str,
        /// Runs done so far, over all rows.
        index: usize,
        /// Runs to do, over all rows.
        total: usize,
        /// What it measured.
        figure: Figure,
    },
}

/// What every result document starts with: its format, the pipespeed
/// that wrote it and the machine it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The format of the document: `pipespeed.KIND/VERSION`.
    pub schema: String,
    /// The pipespeed version that measured it.
    pub pipespeed_version: String,
    /// The build that measured it: commit, compiler, target, C library
    /// and profile (`None` in files written before it was recorded).
    #[serde(default)]
    pub build: Option<BuildInfo>,
    /// The machine.
    pub system: SystemFacts,
    /// Whether SIGINT, SIGTERM or SIGHUP stopped the measurement: the document
    /// holds the runs made before it.
    #[serde(default)]
    pub interrupted: bool,
}

impl Header {
    /// The header of a `schema` document measured now on `system`.
    pub fn new(schema: &str, system: SystemFacts) -> Header {
        Header {
            schema: schema.to_string(),
            pipespeed_version: env!("CARGO_PKG_VERSION").to_string(),
            build: Some(BuildInfo::current()),
            system,
            interrupted: false,
        }
    }
}
