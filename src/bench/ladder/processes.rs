//! The ladder's real [`Runner`]: the writer and the reader as worker
//! processes, under `perf record` for `bench --profile`.
use crate::bench::core::{Placement, RunError};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::buf::{Buffer, BufferOptions};
use crate::double_buffer::{DoubleBuffer, Layout, Reuse};
use crate::sys::process::interrupted;
use crate::sys::{NoiseProbe, ResourceUsage, SpliceFlags, UsageOf, getrusage, pin_to_cpu, splice};
use crate::units::gib_per_s;
use crate::wait::Wait;

use super::super::core::harness::Runner;
use super::super::profile::perf::{Perf, PerfAccess, Scratch, command_line};
use super::super::profile::report::top_symbols;
use super::super::profile::{Profile, ProfileStatus, TOP_SYMBOLS};
use super::super::reader::ReaderConfig;
use super::super::writer::{WriteMethod, WriterConfig, vmsplice_refusal};
use super::copies::{CopyCheck, check_vmsplice};
use super::job::{Job, Sample};
use super::pipe::pipe;
use crate::bench::core::Spawn;

/// Why the memcpy rung has no profile.
pub const MEMCPY_NOT_PROFILED: &str =
    "memcpy runs in a thread of pipespeed bench, not as a command perf could start";

/// Why the splice-limit rung has no profile.
pub(crate) const SPLICE_LIMIT_NOT_PROFILED: &str =
    "splice-limit runs in a thread of pipespeed bench, not as a command perf could start";

/// The process names of the ends in a profile run (see [`name_link`]).
pub(crate) const PROFILE_NAMES: [&str; 2] = ["ps-writer", "ps-reader"];

/// Runs pipe jobs as `EXE worker WRITER | EXE worker READER`, and memcpy
/// and splice-limit in a pinned thread. A run's [`Sample::usage`] is the
/// two processes' whole lives (`RUSAGE_CHILDREN` after less before), or
/// the thread's.
#[derive(Debug, Clone)]
pub struct ProcessExecutor {
    /// The `pipespeed` binary.
    pub exe: PathBuf,
    /// perf for [`Runner::profile`], or why there is none; `None`: look
    /// for it on `PATH` at the first profile.
    pub perf: Option<Result<Perf, String>>,
    /// How long an end may go without progress before the watchdog fails
    /// its run (not under `perf record`).
    pub stall_timeout: Duration,
    /// What [`check_vmsplice`] found, for buffers on small pages and on
    /// huge pages: checked once per run of the ladder.
    copy_checks: [Option<CopyCheck>; 2],
}

impl ProcessExecutor {
    /// Runs the ends of `exe`; perf is looked for when first needed.
    pub fn new(exe: PathBuf) -> ProcessExecutor {
        ProcessExecutor {
            exe,
            perf: None,
            stall_timeout: crate::bench::core::DEFAULT_STALL_TIMEOUT,
            copy_checks: [None, None],
        }
    }

    /// What this kernel's vmsplice does with buffers like `options`'s,
    /// checked at the first call.
    fn copy_check(&mut self, options: BufferOptions) -> CopyCheck {
        self.copy_checks[usize::from(options.huge_pages)]
            .get_or_insert_with(|| check_vmsplice(options))
            .clone()
    }
}

impl Runner<Job> for ProcessExecutor {
    fn run(&mut self, job: &Job) -> Result<Sample, RunError> {
        match job {
            Job::Pipe {
                writer,
                reader,
                placement,
            } => {
                let check = (writer.method == WriteMethod::Vmsplice)
                    .then(|| self.copy_check(writer.end.buffer));
                let mut sample = self.run_pipe(writer, reader, *placement)?;
                sample.copy_check = check;
                Ok(sample)
            }
            Job::Memcpy {
                buf_size,
                bytes,
                cpu,
            } => memcpy(*buf_size, *bytes, *cpu),
            Job::SpliceLimit {
                buf_size,
                pipe_size,
                huge_pages,
                bytes,
                cpu,
            } => {
                let options = BufferOptions {
                    huge_pages: *huge_pages,
                    ..BufferOptions::default()
                };
                let check = self.copy_check(options);
                debug_assert_eq!(*pipe_size, *buf_size / 2);
                let mut sample = splice_limit(*buf_size / 2, options, *bytes, *cpu)?;
                sample.copy_check = Some(check);
                Ok(sample)
            }
        }
    }

    /// Runs a pipe job once more with each end under its own `perf record`
    /// and keeps the top [`TOP_SYMBOLS`] (process, symbol) pairs of both.
    /// One perf per end (not one over a shell) keeps each end's streams
    /// and exit status, so the run is checked as a measured run is.
    fn profile(&mut self, job: &Job) -> Profile {
        let perf = self
            .perf
            .get_or_insert_with(|| Perf::locate(None, &PerfAccess::of_this_process()));
        let perf = match perf {
            Ok(perf) => perf.clone(),
            Err(why) => return Profile::unavailable(why.clone()),
        };
        match job {
            Job::Pipe {
                writer,
                reader,
                placement,
            } => self.profile_pipe(&perf, writer, reader, *placement),
            Job::Memcpy { .. } => Profile::unavailable(MEMCPY_NOT_PROFILED),
            Job::SpliceLimit { .. } => Profile::unavailable(SPLICE_LIMIT_NOT_PROFILED),
        }
    }
}

/// The writer and the reader of a pipe job, as worker processes.
fn ends(w: &WriterConfig, r: &ReaderConfig, placement: Placement) -> (Spawn, Spawn) {
    let (writer_cpu, reader_cpu) = placement.cpus();
    (Spawn::new(w, writer_cpu), Spawn::new(r, reader_cpu))
}

impl ProcessExecutor {
    fn run_pipe(
        &self,
        w: &WriterConfig,
        r: &ReaderConfig,
        placement: Placement,
    ) -> Result<Sample, RunError> {
        let (writer, reader) = ends(w, r, placement);
        let cpus: Vec<usize> = [writer.cpu, reader.cpu].into_iter().flatten().collect();
        let writer = writer.command(&self.exe);
        let reader = reader.command(&self.exe);
        let probe = NoiseProbe::start();
        let before = getrusage(UsageOf::Children).ok();
        let report = pipe(writer, reader, Some(self.stall_timeout))?;
        let usage = usage_since(before, UsageOf::Children);
        Ok(Sample {
            bytes: report.timed_bytes,
            seconds: report.seconds,
            gib_s: report.gib_s,
            usage,
            noise: Some(noise_of(probe, usage, &cpus)),
            copy_check: None,
        })
    }

    fn profile_pipe(
        &self,
        perf: &Perf,
        w: &WriterConfig,
        r: &ReaderConfig,
        placement: Placement,
    ) -> Profile {
        let scratch = match Scratch::new() {
            Ok(scratch) => scratch,
            Err(e) => {
                return Profile::failed(
                    format!(
                        "cannot make a directory for perf's data: {}",
                        crate::quote::strerror(&e)
                    ),
                    None,
                );
            }
        };
        let dir = scratch.path();
        let data = [dir.join("writer.data"), dir.join("reader.data")];
        let (mut writer_end, mut reader_end) = ends(w, r, placement);
        // perf record is their parent: they die with it, and it with us.
        (writer_end.parent, reader_end.parent) = (None, None);
        let mut writer = perf.record(&data[0], &name_link(&self.exe, dir, PROFILE_NAMES[0]));
        writer.args(writer_end.args());
        let mut reader = perf.record(&data[1], &name_link(&self.exe, dir, PROFILE_NAMES[1]));
        reader.args(reader_end.args());
        let command = format!("{} | {}", command_line(&writer), command_line(&reader));
        // No watchdog: perf waits for its end, making no progress itself.
        if let Err(err) = pipe(writer, reader, None) {
            return Profile::failed(err.status().1, Some(command));
        }
        let mut reports = Vec::new();
        for file in &data {
            match perf.report(file) {
                Ok(lines) => reports.push(lines),
                Err(why) => return Profile::failed(why, Some(command)),
            }
        }
        let (samples, symbols) = top_symbols(&reports, TOP_SYMBOLS);
        if samples == 0 {
            return Profile::failed(
                "perf recorded no samples: the run was too short",
                Some(command),
            );
        }
        Profile {
            status: ProfileStatus::Recorded,
            reason: None,
            command: Some(command),
            samples,
            symbols,
        }
    }
}

/// `DIR/NAME`, a symbolic link to `exe`. The kernel names a process after
/// the file it executes, so an end started through the link is called
/// NAME in perf's reports; `exe` itself if the link cannot be made.
///
/// # References
///  - [proc_pid_comm(5)](https://man7.org/linux/man-pages/man5/proc_pid_comm.5.html)
pub(crate) fn name_link(exe: &Path, dir: &Path, name: &str) -> PathBuf {
    let link = dir.join(name);
    match std::os::unix::fs::symlink(exe, &link) {
        Ok(()) => link,
        Err(_) => exe.to_path_buf(),
    }
}

/// Copies a `buf_size` buffer into another until `bytes` are copied, in a
/// thread pinned to `cpu`.
pub(crate) fn memcpy(buf_size: usize, bytes: u64, cpu: Option<usize>) -> Result<Sample, RunError> {
    in_pinned_thread("memcpy", cpu, || {
        let failed = |e: std::io::Error| {
            RunError::Failed(format!(
                "cannot map memcpy buffers: {}",
                crate::quote::strerror(&e)
            ))
        };
        let src = Buffer::new(buf_size, BufferOptions::default()).map_err(failed)?;
        let mut dst = Buffer::new(buf_size, BufferOptions::default()).map_err(failed)?;
        dst.copy_from_slice(&src);
        let rounds = bytes.div_ceil(buf_size.max(1) as u64).max(1);
        let start = Instant::now();
        for _ in 0..rounds {
            if interrupted().is_some() {
                return Err(RunError::Failed("interrupted".into()));
            }
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&mut dst);
        }
        // rounds * buf_size < bytes + buf_size: no overflow for the
        // command line's bytes (1 PiB) and buffers (1 GiB).
        Ok((rounds.saturating_mul(buf_size as u64), start))
    })
}

/// Runs `work` in a thread pinned to `cpu`; `work` gives the bytes it
/// moved and when its timing started. The usage and the noise are the
/// thread's from its start, set-up included.
fn in_pinned_thread(
    what: &str,
    cpu: Option<usize>,
    work: impl FnOnce() -> Result<(u64, Instant), RunError> + Send,
) -> Result<Sample, RunError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let probe = NoiseProbe::start();
            let before = getrusage(UsageOf::Thread).ok();
            if let Some(cpu) = cpu {
                pin_to_cpu(cpu).map_err(|e| RunError::Failed(e.to_string()))?;
            }
            let (bytes, start) = work()?;
            let seconds = start.elapsed().as_secs_f64();
            let usage = usage_since(before, UsageOf::Thread);
            Ok(Sample {
                bytes,
                seconds,
                gib_s: gib_per_s(bytes, seconds),
                usage,
                noise: Some(noise_of(probe, usage, &Vec::from_iter(cpu))),
                copy_check: None,
            })
        })
        .join()
        .unwrap_or_else(|_| Err(RunError::Failed(format!("{what} thread panicked"))))
    })
}

/// What `who` used since `before`.
fn usage_since(before: Option<ResourceUsage>, who: UsageOf) -> Option<ResourceUsage> {
    Some(getrusage(who).ok()?.since(&before?))
}

/// The noise of a run that started at `probe` and used `usage`.
fn noise_of(
    probe: NoiseProbe,
    usage: Option<ResourceUsage>,
    cpus: &[usize],
) -> crate::sys::RunNoise {
    let usage = usage.unwrap_or_default();
    probe.finish(usage.user + usage.system, usage.involuntary_switches, cpus)
}

/// The splice-limit rung: in a thread pinned to `cpu`, vmsplices halves
/// of `half` bytes into a pipe of one half and splices each to
/// `/dev/null`, until `bytes` have moved.
pub(crate) fn splice_limit(
    half: usize,
    options: BufferOptions,
    bytes: u64,
    cpu: Option<usize>,
) -> Result<Sample, RunError> {
    in_pinned_thread("splice-limit", cpu, || {
        let failed = |what: &str, e: std::io::Error| {
            let why = format!("{what}: {}", crate::quote::strerror(&e));
            if e.kind() == std::io::ErrorKind::Unsupported {
                RunError::Unavailable(why)
            } else {
                RunError::Failed(why)
            }
        };
        let devnull = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .map_err(|e| failed("cannot open /dev/null", e))?;
        let pipe = crate::sys::pipe().map_err(|e| failed("cannot make a pipe", e))?;
        let mut db = DoubleBuffer::new(
            &pipe.write,
            half,
            options,
            Layout::Separate,
            Reuse::AfterConsumed,
            false,
        )
        .map_err(|e| failed("cannot set up the buffer", e))?;
        let start = Instant::now();
        let mut moved = 0u64;
        while moved < bytes {
            if interrupted().is_some() {
                return Err(RunError::Failed("interrupted".into()));
            }
            db.splice_next(half, Wait::Block)
                .map_err(|e| failed("vmsplice", vmsplice_refusal(e)))?;
            let mut drained = 0;
            while drained < half {
                let n = splice(
                    &pipe.read,
                    None,
                    &devnull,
                    None,
                    half - drained,
                    SpliceFlags::empty(),
                )
                .map_err(|e| failed("splice", e))?;
                if n == 0 {
                    return Err(RunError::Failed("splice: the pipe was empty".into()));
                }
                drained += n;
            }
            moved += half as u64;
        }
        Ok((moved, start))
    })
}
