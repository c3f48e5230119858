//! The real [`Executor`]: the writer and the reader as separate processes,
//! `pipespeed write | pipespeed read`, as in the blog.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::buf::{Buffer, BufferOptions};
use crate::sys::pin_to_cpu;
use crate::units::gib_per_s;
use crate::wait::Wait;

use super::ladder::{Executor, Job, Placement, RunError, Sample};
use super::reader::{ReadMethod, ReadReport, ReaderConfig};
use super::writer::{WriteMethod, WriterConfig};

/// Exit status of `pipespeed write`/`read` when the machine cannot do what
/// was asked (huge pages not granted, vmsplice refused).
pub const EXIT_UNSUPPORTED: i32 = 3;

/// Runs pipe jobs as `EXE write ... | EXE read ... --json`, where `EXE` is
/// the `pipespeed` binary, and memcpy jobs in a pinned thread.
#[derive(Debug, Clone)]
pub struct ProcessExecutor {
    /// The `pipespeed` binary.
    pub exe: PathBuf,
}

impl Executor for ProcessExecutor {
    fn run(&mut self, job: &Job) -> Result<Sample, RunError> {
        match job {
            Job::Pipe {
                writer,
                reader,
                placement,
            } => self.run_pipe(writer, reader, *placement),
            Job::Memcpy {
                buf_size,
                bytes,
                cpu,
            } => memcpy(*buf_size, *bytes, *cpu),
        }
    }
}

impl ProcessExecutor {
    fn run_pipe(
        &self,
        w: &WriterConfig,
        r: &ReaderConfig,
        placement: Placement,
    ) -> Result<Sample, RunError> {
        let (writer_cpu, reader_cpu) = match placement {
            Placement::Pinned {
                writer_cpu,
                reader_cpu,
            } => (Some(writer_cpu), Some(reader_cpu)),
            Placement::Unpinned => (None, None),
        };
        let spawn_failed = |what: &str, e: std::io::Error| {
            RunError::Failed(format!("cannot start {} {what}: {e}", self.exe.display()))
        };
        let mut writer = Command::new(&self.exe)
            .arg("write")
            .args(writer_args(w, writer_cpu))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| spawn_failed("write", e))?;
        let Some(pipe) = writer.stdout.take() else {
            return Err(RunError::Failed("writer has no stdout pipe".to_string()));
        };
        let reader = Command::new(&self.exe)
            .arg("read")
            .args(reader_args(r, reader_cpu))
            .arg("--json")
            .stdin(Stdio::from(pipe))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let reader = match reader {
            Ok(reader) => reader,
            Err(e) => {
                let _ = writer.kill();
                let _ = writer.wait();
                return Err(spawn_failed("read", e));
            }
        };
        let out = reader
            .wait_with_output()
            .map_err(|e| RunError::Failed(format!("reader: {e}")))?;
        let (writer_status, writer_err) = finish(writer);
        let reader_err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if writer_status == Some(EXIT_UNSUPPORTED) {
            return Err(RunError::Unavailable(strip_prefix(&writer_err)));
        }
        if out.status.code() == Some(EXIT_UNSUPPORTED) {
            return Err(RunError::Unavailable(strip_prefix(&reader_err)));
        }
        if !out.status.success() {
            return Err(RunError::Failed(format!(
                "reader: {}",
                strip_prefix(&reader_err)
            )));
        }
        let report: ReadReport = serde_json::from_slice(&out.stdout)
            .map_err(|e| RunError::Failed(format!("unreadable reader report: {e}")))?;
        if report.eof {
            let why = if writer_err.is_empty() {
                "no message".to_string()
            } else {
                strip_prefix(&writer_err)
            };
            return Err(RunError::Failed(format!(
                "writer stopped after {} bytes: {why}",
                report.bytes
            )));
        }
        Ok(Sample {
            bytes: report.timed_bytes,
            seconds: report.seconds,
            gib_s: report.gib_s,
        })
    }
}

/// Waits for a writer whose reader is done: it should see EPIPE and exit at
/// once; one that does not within 10 s is killed.
fn finish(mut writer: Child) -> (Option<i32>, String) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match writer.try_wait() {
            Ok(Some(status)) => break status.code(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            _ => {
                let _ = writer.kill();
                break writer.wait().ok().and_then(|s| s.code());
            }
        }
    };
    let mut err = String::new();
    if let Some(mut stderr) = writer.stderr.take() {
        let _ = stderr.read_to_string(&mut err);
    }
    (status, err.trim().to_string())
}

fn strip_prefix(msg: &str) -> String {
    let line = msg.lines().last().unwrap_or("");
    line.strip_prefix("pipespeed: ").unwrap_or(line).to_string()
}

fn wait_args(wait: Wait, args: &mut Vec<String>) {
    match wait {
        Wait::Block => {}
        Wait::Poll => args.push("--poll".into()),
        Wait::Busy => args.push("--busy-loop".into()),
        Wait::BusyPoll => args.extend(["--busy-loop".into(), "--poll".into()]),
    }
}

fn buffer_args(b: BufferOptions, check: bool, args: &mut Vec<String>) {
    args.extend(["--buf-offset".into(), b.offset.to_string()]);
    for (on, flag) in [
        (b.huge_pages, "--huge-page"),
        (check, "--check-huge-page"),
        (b.lock, "--lock-memory"),
        (b.dont_touch, "--dont-touch-pages"),
    ] {
        if on {
            args.push(flag.into());
        }
    }
}

/// The `pipespeed write` arguments for `w`.
pub fn writer_args(w: &WriterConfig, cpu: Option<usize>) -> Vec<String> {
    let mut args = vec!["--buf-size".to_string(), w.buf_size.to_string()];
    if let Some(size) = w.pipe_size {
        args.extend(["--pipe-size".into(), size.to_string()]);
    }
    if w.method == WriteMethod::Vmsplice {
        args.push("--vmsplice".into());
    }
    buffer_args(w.buffer, w.check_huge_pages, &mut args);
    wait_args(w.wait, &mut args);
    if w.gift {
        args.push("--gift".into());
    }
    if w.layout == crate::double_buffer::Layout::Contiguous {
        args.push("--same-buffer".into());
    }
    if let Some(size) = w.unsafe_early_reuse {
        args.extend(["--unsafe-early-reuse".into(), size.to_string()]);
    }
    if w.verify {
        args.push("--verify".into());
    }
    if let Some(bytes) = w.bytes {
        args.extend(["--bytes".into(), bytes.to_string()]);
    }
    if let Some(cpu) = cpu {
        args.extend(["--cpu".into(), cpu.to_string()]);
    }
    args
}

/// The `pipespeed read` arguments for `r`.
pub fn reader_args(r: &ReaderConfig, cpu: Option<usize>) -> Vec<String> {
    let mut args = vec![
        "--buf-size".to_string(),
        r.buf_size.to_string(),
        "--bytes".into(),
        r.bytes.to_string(),
    ];
    if let Some(size) = r.pipe_size {
        args.extend(["--pipe-size".into(), size.to_string()]);
    }
    if r.method == ReadMethod::Splice {
        args.push("--splice".into());
    }
    buffer_args(r.buffer, r.check_huge_pages, &mut args);
    wait_args(r.wait, &mut args);
    if r.gift {
        args.push("--gift".into());
    }
    if r.verify {
        args.push("--verify".into());
    }
    if let Some(cpu) = cpu {
        args.extend(["--cpu".into(), cpu.to_string()]);
    }
    args
}

/// Copies a `buf_size` buffer into another until `bytes` are copied, in a
/// thread pinned to `cpu`, and times it.
pub fn memcpy(buf_size: usize, bytes: u64, cpu: Option<usize>) -> Result<Sample, RunError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            if let Some(cpu) = cpu {
                pin_to_cpu(cpu).map_err(|e| RunError::Failed(e.to_string()))?;
            }
            let failed =
                |e: std::io::Error| RunError::Failed(format!("cannot map memcpy buffers: {e}"));
            let src = Buffer::new(buf_size, BufferOptions::default()).map_err(failed)?;
            let mut dst = Buffer::new(buf_size, BufferOptions::default()).map_err(failed)?;
            dst.copy_from_slice(&src);
            let rounds = bytes.div_ceil(buf_size.max(1) as u64).max(1);
            let start = Instant::now();
            for _ in 0..rounds {
                dst.copy_from_slice(std::hint::black_box(&src));
                std::hint::black_box(&mut dst);
            }
            let seconds = start.elapsed().as_secs_f64();
            let copied = rounds * buf_size as u64;
            Ok(Sample {
                bytes: copied,
                seconds,
                gib_s: gib_per_s(copied, seconds),
            })
        })
        .join()
        .unwrap_or_else(|_| Err(RunError::Failed("memcpy thread panicked".to_string())))
    })
}
