//! The ladder's configuration, and the job each rung runs on this
//! machine.
use crate::bench::core::harness::{self, Figure, Runner};
use crate::bench::core::{Phase, Placement, RunError};

use crate::buf::{BufferOptions, MALLOC_OFFSET};
use crate::sys::{ResourceUsage, RunNoise, SystemFacts};
use crate::units::MIB;
use crate::wait::Wait;

use super::super::reader::{ReadMethod, ReaderConfig};
use super::super::writer::{EndConfig, WriteMethod, WriterConfig};
use super::copies::CopyCheck;
use super::rung::Rung;

/// One run of a [`Job`].
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Bytes the rate was computed from.
    pub bytes: u64,
    /// Seconds they took.
    pub seconds: f64,
    /// The rate.
    pub gib_s: f64,
    /// What the run used (`None`: not measured).
    pub usage: Option<ResourceUsage>,
    /// What else the machine did meanwhile (`None`: not measured).
    pub noise: Option<RunNoise>,
    /// What the check of the job's vmsplice found (`None`: not checked).
    pub copy_check: Option<CopyCheck>,
}

impl Sample {
    /// What the schedule records of this run.
    pub fn scheduled(&self) -> crate::bench::core::Sample {
        crate::bench::core::Sample {
            value: self.gib_s,
            figure: Figure::GibPerS(self.gib_s),
            noise: self.noise,
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
    /// Runs a noisy rung may take, one more at a time (at most `runs`:
    /// none added).
    pub max_runs: usize,
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
    /// Where the rungs that block ([`Rung::blocks`]) run too, each
    /// reporting the faster of its two placements (`None`: only
    /// `placement`): on a VM a cross-CPU wake-up can cost more than the
    /// copy.
    pub alternative: Option<Placement>,
    /// Check every byte (slows every rung down).
    pub verify: bool,
    /// Seed of the run order shuffle.
    pub seed: u64,
    /// When a row's warm-up ends (`--warmup-runs`).
    pub warmup_rule: crate::bench::core::Warmup,
    /// Wanted duration of one run when `bytes` is `None`.
    pub target_seconds: f64,
    /// After the measured runs, run each measured rung once more (with
    /// the bytes of one measured run) for [`Runner::profile`].
    pub profile: bool,
}

impl LadderConfig {
    /// The steps a progress display counts: every rung's warm-up and
    /// measured runs, and its profile.
    pub fn steps(&self) -> usize {
        let per_rung = self.runs.saturating_add(1 + usize::from(self.profile));
        self.rows().saturating_mul(per_rung)
    }

    /// The rows measured: each rung, and the rungs that block once more
    /// in [`alternative`](Self::alternative).
    pub fn rows(&self) -> usize {
        let again = match self.alternative {
            Some(_) => self.rungs.iter().filter(|r| r.blocks()).count(),
            None => 0,
        };
        self.rungs.len().saturating_add(again)
    }

    /// The most runs a rung may take.
    pub fn max_runs(&self) -> usize {
        self.max_runs.max(self.runs)
    }
}

/// Bytes of the warm-up run, which also measures the rate used to size
/// the measured runs.
pub(crate) const WARMUP_BYTES: u64 = 256 * MIB;

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
    /// One thread vmsplicing halves of a `buf_size` buffer into a pipe of
    /// `pipe_size` and splicing them to `/dev/null`, `bytes` in all.
    SpliceLimit {
        /// The buffer size (two halves).
        buf_size: usize,
        /// The pipe size (one half).
        pipe_size: usize,
        /// Whether the buffer is on huge pages.
        huge_pages: bool,
        /// Bytes to move.
        bytes: u64,
        /// The CPU to run on.
        cpu: Option<usize>,
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
                        Some(writer.unsafe_early_reuse.unwrap_or(writer.end.buf_size / 2))
                    }
                    WriteMethod::Write => writer.end.pipe_size.or(reader.end.pipe_size),
                };
                (writer.end.buf_size, pipe)
            }
            Job::Memcpy { buf_size, .. } => (*buf_size, None),
            Job::SpliceLimit {
                buf_size,
                pipe_size,
                ..
            } => (*buf_size, Some(*pipe_size)),
        }
    }

    /// The bytes the job moves: the reader's, or the copy's.
    pub fn bytes(&self) -> u64 {
        match self {
            Job::Pipe { reader, .. } => reader.bytes,
            Job::Memcpy { bytes, .. } | Job::SpliceLimit { bytes, .. } => *bytes,
        }
    }

    pub(super) fn with_bytes(&self, bytes: u64) -> Job {
        let mut job = self.clone();
        match &mut job {
            Job::Pipe { reader, .. } => reader.bytes = bytes,
            Job::Memcpy { bytes: b, .. } | Job::SpliceLimit { bytes: b, .. } => *b = bytes,
        }
        job
    }
}

impl harness::Job for Job {
    type Output = Sample;
    type Error = RunError;
}

/// One run of `job` in `phase`: a warm-up moves at most [`WARMUP_BYTES`]
/// and sizes the measured runs from its rate, unless `config.bytes` does.
pub(crate) fn sized_run(
    runner: &mut dyn Runner<Job>,
    job: &mut Job,
    config: &LadderConfig,
    phase: Phase,
) -> Result<Sample, RunError> {
    match phase {
        Phase::Measure => runner.run(job),
        Phase::WarmUp => {
            let warmup = job.with_bytes(config.bytes.unwrap_or(WARMUP_BYTES).min(WARMUP_BYTES));
            let sample = runner.run(&warmup)?;
            let bytes = config
                .bytes
                .unwrap_or_else(|| bytes_for(sample.gib_s, config.target_seconds));
            *job = job.with_bytes(bytes);
            Ok(sample)
        }
    }
}

/// The job a rung runs, or why this machine cannot run it.
pub fn job_for(rung: Rung, config: &LadderConfig, facts: &SystemFacts) -> Result<Job, String> {
    let largest = facts.pipe_max_size_bytes.max(64 * 1024);
    if rung.uses_huge_pages()
        && !matches!(rung, Rung::Tuned | Rung::SpliceLimit)
        && !facts.thp.allows_madvise()
    {
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
    if rung == Rung::SpliceLimit {
        if config.verify {
            return Err(
                "a limit, not a transfer: no reader gets the bytes, so none can be verified"
                    .to_string(),
            );
        }
        return Ok(Job::SpliceLimit {
            buf_size: 2 * largest,
            pipe_size: largest,
            huge_pages: facts.thp.allows_madvise(),
            bytes,
            cpu: reader_cpu,
        });
    }
    let (buf_size, pipe_size) = match rung {
        Rung::Tuned => (2 * largest, Some(largest)),
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
    // What both ends are told; the writer adds its pipe and buffer.
    let end = EndConfig {
        buf_size,
        wait,
        verify: config.verify,
        ..EndConfig::default()
    };
    let writer = WriterConfig {
        method: if vmsplice {
            WriteMethod::Vmsplice
        } else {
            WriteMethod::Write
        },
        end: EndConfig {
            pipe_size: if vmsplice { None } else { pipe_size },
            buffer: BufferOptions {
                huge_pages: huge,
                // The blog mallocs its buffers (see `double_buffer` for why
                // the placement matters); huge pages must be 2 MiB aligned.
                offset: if huge { 0 } else { MALLOC_OFFSET },
                ..BufferOptions::default()
            },
            check_huge_pages: huge,
            ..end
        },
        ..WriterConfig::default()
    };
    let reader = ReaderConfig {
        method: if splice {
            ReadMethod::Splice
        } else {
            ReadMethod::Read
        },
        end: EndConfig {
            buf_size: if rung == Rung::Tuned {
                buf_size / 2
            } else {
                buf_size
            },
            ..end
        },
        bytes,
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
pub(crate) fn bytes_for(gib_s: f64, target_seconds: f64) -> u64 {
    let bytes = gib_s * target_seconds * (1u64 << 30) as f64;
    let clamped = bytes.clamp((64 * MIB) as f64, (64u64 << 30) as f64) as u64;
    clamped / MIB * MIB
}
