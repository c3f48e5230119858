//! The ladder: every step of the blog, measured on this machine.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::buf::{BufferOptions, MALLOC_OFFSET};
use crate::double_buffer::Layout;
use crate::sys::{ResourceUsage, SystemFacts};
use crate::units::MIB;
use crate::wait::Wait;

use super::profile::{Cost, Profile};
use super::reader::{ReadMethod, ReaderConfig};
pub use super::rung::Rung;
use super::stats::{Shuffler, median, min_max};
use super::writer::{WriteMethod, WriterConfig};

/// Where the two ends run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Placement {
    /// Writer and reader each pinned to a CPU.
    Pinned {
        /// The writer's CPU.
        writer_cpu: usize,
        /// The reader's CPU (and the memcpy rung's).
        reader_cpu: usize,
    },
    /// Left to the scheduler.
    Unpinned,
}

impl Placement {
    /// The default: the first two allowed CPUs, or unpinned on one CPU.
    pub fn default_for(facts: &SystemFacts) -> Placement {
        match facts.cpus_allowed[..] {
            [a, b, ..] => Placement::Pinned {
                writer_cpu: a,
                reader_cpu: b,
            },
            _ => Placement::Unpinned,
        }
    }

    fn distinct_cpus(self, facts: &SystemFacts) -> bool {
        match self {
            Placement::Pinned {
                writer_cpu,
                reader_cpu,
            } => writer_cpu != reader_cpu,
            Placement::Unpinned => facts.cpus_allowed.len() >= 2,
        }
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Placement::Pinned {
                writer_cpu,
                reader_cpu,
            } => {
                write!(f, "writer on CPU {writer_cpu}, reader on CPU {reader_cpu}")
            }
            Placement::Unpinned => f.write_str("unpinned (left to the scheduler)"),
        }
    }
}

/// What the ladder is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct LadderConfig {
    /// The rungs to run, in table order.
    pub rungs: Vec<Rung>,
    /// Measured runs per rung, after one warm-up run.
    pub runs: usize,
    /// Bytes per run; `None` sizes each rung so a run lasts about
    /// `target_seconds`, from its warm-up rate.
    pub bytes: Option<u64>,
    /// The buffer size of every rung but `tuned`.
    pub buf_size: usize,
    /// The pipe size of the `write` rungs (vmsplice rungs use half the
    /// buffer); `None` leaves the kernel's default.
    pub pipe_size: Option<usize>,
    /// Where writer and reader run.
    pub placement: Placement,
    /// Check every byte (slows every rung down).
    pub verify: bool,
    /// Seed of the run order shuffle.
    pub seed: u64,
    /// Wanted duration of one run when `bytes` is `None`.
    pub target_seconds: f64,
    /// After the measured runs, run each measured rung once more (with
    /// the bytes of one measured run) for [`Executor::profile`].
    pub profile: bool,
}

/// Bytes of the warm-up run, which also measures the rate used to size
/// the measured runs.
pub const WARMUP_BYTES: u64 = 256 * MIB;

/// One measurement to make.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    /// A writer process piping into a reader process.
    Pipe {
        /// The writer's settings.
        writer: WriterConfig,
        /// The reader's settings (`bytes` is the run's size).
        reader: ReaderConfig,
        /// Where they run.
        placement: Placement,
    },
    /// A memory copy of a `buf_size` buffer, `bytes` in all.
    Memcpy {
        /// The buffer size.
        buf_size: usize,
        /// Bytes to copy.
        bytes: u64,
        /// The CPU to copy on.
        cpu: Option<usize>,
    },
}

impl Job {
    /// The buffer size and the pipe size the job asks for.
    pub fn sizes(&self) -> (usize, Option<usize>) {
        match self {
            Job::Pipe { writer, reader, .. } => {
                let pipe = match writer.method {
                    WriteMethod::Vmsplice => {
                        Some(writer.unsafe_early_reuse.unwrap_or(writer.buf_size / 2))
                    }
                    WriteMethod::Write => writer.pipe_size.or(reader.pipe_size),
                };
                (writer.buf_size, pipe)
            }
            Job::Memcpy { buf_size, .. } => (*buf_size, None),
        }
    }

    /// The bytes the job moves: the reader's, or the copy's.
    pub fn bytes(&self) -> u64 {
        match self {
            Job::Pipe { reader, .. } => reader.bytes,
            Job::Memcpy { bytes, .. } => *bytes,
        }
    }

    fn with_bytes(&self, bytes: u64) -> Job {
        let mut job = self.clone();
        match &mut job {
            Job::Pipe { reader, .. } => reader.bytes = bytes,
            Job::Memcpy { bytes: b, .. } => *b = bytes,
        }
        job
    }
}

/// One measured run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Bytes the rate was computed from.
    pub bytes: u64,
    /// Seconds they took.
    pub seconds: f64,
    /// The rate.
    pub gib_s: f64,
    /// What the run used (both ends' processes, or the memcpy thread);
    /// `None`: not measured.
    pub usage: Option<ResourceUsage>,
}

/// Why a run produced no sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The machine cannot do this (huge pages not granted, vmsplice
    /// refused, ...).
    Unavailable(String),
    /// Something went wrong (a crash, short data, a verify mismatch).
    Failed(String),
}

/// Runs jobs. The real one starts processes; tests use a mock.
pub trait Executor {
    /// Makes one measurement.
    fn run(&mut self, job: &Job) -> Result<Sample, RunError>;

    /// Runs `job` once more, not measured, to see where its time goes.
    /// Problems are in the returned profile, never an error: the ladder
    /// goes on.
    fn profile(&mut self, job: &Job) -> Profile {
        let _ = job;
        Profile::unavailable("this executor does not profile")
    }
}

/// What happened to a rung.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every run measured.
    Ok,
    /// The machine cannot do this rung; nothing was measured.
    Unavailable,
    /// A run failed; the samples before it are kept.
    Failed,
}

/// One rung's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RungResult {
    /// The rung's name.
    pub name: Rung,
    /// What it changes.
    pub changes: String,
    /// Bytes copied by the CPU per byte piped (0: page references move).
    pub copies: u32,
    /// Whether it ran.
    pub status: Status,
    /// Why it did not run or failed.
    pub reason: Option<String>,
    /// The buffer size in bytes.
    pub buf_size: usize,
    /// The pipe size asked for, in bytes (`None`: the kernel default).
    pub pipe_size: Option<usize>,
    /// Bytes per measured run.
    pub bytes_per_run: u64,
    /// The rate of the warm-up run.
    pub warmup_gib_s: Option<f64>,
    /// Every measured run's rate, in the order run.
    pub runs_gib_s: Vec<f64>,
    /// The median rate.
    pub median_gib_s: Option<f64>,
    /// The slowest run.
    pub min_gib_s: Option<f64>,
    /// The fastest run.
    pub max_gib_s: Option<f64>,
    /// Median over the `write-read` median.
    pub speedup_vs_write_read: Option<f64>,
    /// What the measured runs cost, per GiB (`None`: not measured).
    #[serde(default)]
    pub cost: Option<Cost>,
    /// Where the time went, with `bench --profile`.
    #[serde(default)]
    pub profile: Option<Profile>,
}

impl RungResult {
    /// `rung` before its first run: `ok`, no runs and no figures yet.
    pub fn new(rung: Rung, buf_size: usize, pipe_size: Option<usize>) -> RungResult {
        RungResult {
            name: rung,
            changes: rung.changes().to_string(),
            copies: rung.copies(),
            status: Status::Ok,
            reason: None,
            buf_size,
            pipe_size,
            bytes_per_run: 0,
            warmup_gib_s: None,
            runs_gib_s: Vec::new(),
            median_gib_s: None,
            min_gib_s: None,
            max_gib_s: None,
            speedup_vs_write_read: None,
            cost: None,
            profile: None,
        }
    }

    /// Sets the median, the slowest and the fastest from `runs_gib_s`.
    pub fn summarize(&mut self) {
        self.median_gib_s = median(&self.runs_gib_s);
        let (lo, hi) = min_max(&self.runs_gib_s).unzip();
        self.min_gib_s = lo;
        self.max_gib_s = hi;
    }
}

/// The whole ladder's results: what `--json` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LadderResult {
    /// The format of this document.
    pub schema: String,
    /// The pipespeed version that measured it.
    pub pipespeed_version: String,
    /// The machine.
    pub system: SystemFacts,
    /// Where writer and reader ran.
    pub placement: Placement,
    /// Measured runs per rung.
    pub runs: usize,
    /// Whether every byte was checked.
    pub verify: bool,
    /// Seed of the run order.
    pub seed: u64,
    /// Per rung, in ladder order.
    pub rungs: Vec<RungResult>,
}

/// The schema name of [`LadderResult`].
pub const SCHEMA: &str = "pipespeed.bench/1";

/// Progress reported while the ladder runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<'a> {
    /// A rung was skipped or failed its warm-up.
    Skipped(Rung, &'a str),
    /// A warm-up finished.
    WarmedUp(Rung, f64),
    /// A measured rung is about to be profiled.
    Profiling(Rung),
    /// A measured run finished (`index` of `total`).
    Measured {
        /// The rung.
        rung: Rung,
        /// Runs done so far, over all rungs.
        index: usize,
        /// Runs to do, over all rungs.
        total: usize,
        /// The run's rate.
        gib_s: f64,
    },
}

/// The job a rung runs, or why this machine cannot run it.
pub fn job_for(rung: Rung, config: &LadderConfig, facts: &SystemFacts) -> Result<Job, String> {
    if rung.uses_huge_pages() && rung != Rung::Tuned && !facts.thp.allows_madvise() {
        return Err(format!("transparent huge pages are {} here", facts.thp));
    }
    if rung == Rung::VmspliceSpliceHugeBusy && !config.placement.distinct_cpus(facts) {
        return Err(
            "busy looping needs two CPUs: on one, each end spins away the other's time".to_string(),
        );
    }
    let reader_cpu = match config.placement {
        Placement::Pinned { reader_cpu, .. } => Some(reader_cpu),
        Placement::Unpinned => None,
    };
    let bytes = config.bytes.unwrap_or(WARMUP_BYTES);
    if rung == Rung::Memcpy {
        return Ok(Job::Memcpy {
            buf_size: config.buf_size,
            bytes,
            cpu: reader_cpu,
        });
    }
    let (buf_size, pipe_size) = match rung {
        Rung::Tuned => {
            let max = facts.pipe_max_size_bytes.max(64 * 1024);
            (2 * max, Some(max))
        }
        Rung::WriteRead => (config.buf_size, config.pipe_size),
        _ => (config.buf_size, Some(config.buf_size / 2)),
    };
    let huge = match rung {
        Rung::Tuned => facts.thp.allows_madvise(),
        _ => rung.uses_huge_pages(),
    };
    let wait = match rung {
        Rung::Tuned if !config.placement.distinct_cpus(facts) => Wait::Block,
        _ if rung.busy() => Wait::Busy,
        _ => Wait::Block,
    };
    let vmsplice = rung != Rung::WriteRead;
    let splice = !matches!(rung, Rung::WriteRead | Rung::VmspliceRead);
    let writer = WriterConfig {
        method: if vmsplice {
            WriteMethod::Vmsplice
        } else {
            WriteMethod::Write
        },
        buf_size,
        pipe_size: if vmsplice { None } else { pipe_size },
        buffer: BufferOptions {
            huge_pages: huge,
            // The blog mallocs its buffers (see `double_buffer` for why the
            // placement matters); huge pages must be 2 MiB aligned.
            offset: if huge { 0 } else { MALLOC_OFFSET },
            ..BufferOptions::default()
        },
        check_huge_pages: huge,
        wait,
        gift: false,
        layout: Layout::Separate,
        unsafe_early_reuse: None,
        verify: config.verify,
        bytes: None,
    };
    let reader = ReaderConfig {
        method: if splice {
            ReadMethod::Splice
        } else {
            ReadMethod::Read
        },
        buf_size: if rung == Rung::Tuned {
            buf_size / 2
        } else {
            buf_size
        },
        wait,
        verify: config.verify,
        bytes,
        ..ReaderConfig::default()
    };
    Ok(Job::Pipe {
        writer,
        reader,
        placement: config.placement,
    })
}

/// Bytes for a measured run of a rung that warmed up at `gib_s`: about
/// `target_seconds` worth, between 64 MiB and 64 GiB, a whole number of
/// MiB.
pub fn bytes_for(gib_s: f64, target_seconds: f64) -> u64 {
    let bytes = gib_s * target_seconds * (1u64 << 30) as f64;
    let clamped = bytes.clamp((64 * MIB) as f64, (64u64 << 30) as f64) as u64;
    clamped / MIB * MIB
}

/// Runs the ladder: a warm-up per rung, then `runs` runs of each in a
/// shuffled order, and the statistics.
pub fn run_ladder(
    config: &LadderConfig,
    facts: &SystemFacts,
    executor: &mut dyn Executor,
    progress: &mut dyn FnMut(Event<'_>),
) -> LadderResult {
    let mut results: Vec<RungResult> = Vec::new();
    let mut jobs: Vec<Option<Job>> = Vec::new();
    for &rung in &config.rungs {
        let job = job_for(rung, config, facts);
        let (buf_size, pipe_size) = match &job {
            Ok(job) => job.sizes(),
            Err(_) => (config.buf_size, None),
        };
        let mut result = RungResult::new(rung, buf_size, pipe_size);
        let job = match job {
            Ok(job) => {
                let warmup = job.with_bytes(config.bytes.unwrap_or(WARMUP_BYTES).min(WARMUP_BYTES));
                match executor.run(&warmup) {
                    Ok(sample) => {
                        progress(Event::WarmedUp(rung, sample.gib_s));
                        result.warmup_gib_s = Some(sample.gib_s);
                        result.bytes_per_run = config
                            .bytes
                            .unwrap_or_else(|| bytes_for(sample.gib_s, config.target_seconds));
                        Some(job.with_bytes(result.bytes_per_run))
                    }
                    Err(err) => {
                        mark(&mut result, err);
                        None
                    }
                }
            }
            Err(reason) => {
                result.status = Status::Unavailable;
                result.reason = Some(reason);
                None
            }
        };
        if let Some(reason) = &result.reason {
            progress(Event::Skipped(rung, reason));
        }
        results.push(result);
        jobs.push(job);
    }

    let mut order: Vec<usize> = (0..config.runs)
        .flat_map(|_| {
            jobs.iter()
                .enumerate()
                .filter(|(_, j)| j.is_some())
                .map(|(i, _)| i)
        })
        .collect();
    Shuffler::new(config.seed).shuffle(&mut order);
    let total = order.len();
    let mut usage: Vec<Option<(ResourceUsage, u64)>> = vec![None; jobs.len()];
    for (index, i) in order.into_iter().enumerate() {
        let Some(job) = &jobs[i] else { continue };
        match executor.run(job) {
            Ok(sample) => {
                results[i].runs_gib_s.push(sample.gib_s);
                if let Some(used) = sample.usage {
                    let (sum, bytes) = usage[i].get_or_insert_default();
                    *sum = *sum + used;
                    *bytes += job.bytes();
                }
                progress(Event::Measured {
                    rung: results[i].name,
                    index: index + 1,
                    total,
                    gib_s: sample.gib_s,
                });
            }
            Err(err) => {
                mark(&mut results[i], err);
                progress(Event::Skipped(
                    results[i].name,
                    results[i].reason.as_deref().unwrap_or(""),
                ));
                jobs[i] = None;
            }
        }
    }

    if config.profile {
        for (r, job) in results.iter_mut().zip(&jobs) {
            if let Some(job) = job {
                progress(Event::Profiling(r.name));
                r.profile = Some(executor.profile(job));
            }
        }
    }

    for (r, used) in results.iter_mut().zip(usage) {
        r.cost = used.and_then(|(sum, bytes)| Cost::per_gib(&sum, bytes));
        r.summarize();
    }
    let baseline = results
        .iter()
        .find(|r| r.name == Rung::WriteRead)
        .and_then(|r| r.median_gib_s);
    for r in &mut results {
        r.speedup_vs_write_read = match (r.median_gib_s, baseline) {
            // memcpy is a limit, not a way of piping.
            _ if r.name == Rung::Memcpy => None,
            (Some(m), Some(b)) if b > 0.0 => Some(m / b),
            _ => None,
        };
    }
    LadderResult {
        schema: SCHEMA.to_string(),
        pipespeed_version: env!("CARGO_PKG_VERSION").to_string(),
        system: facts.clone(),
        placement: config.placement,
        runs: config.runs,
        verify: config.verify,
        seed: config.seed,
        rungs: results,
    }
}

fn mark(result: &mut RungResult, err: RunError) {
    let (status, reason) = match err {
        RunError::Unavailable(reason) => (Status::Unavailable, reason),
        RunError::Failed(reason) => (Status::Failed, reason),
    };
    result.status = status;
    result.reason = Some(reason);
}
