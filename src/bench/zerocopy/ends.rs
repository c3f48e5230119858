//! One measured run of a path: a writer thread and a reader thread. What
//! it spent is the process's `getrusage`, not the two threads': io_uring
//! splices from a file in a worker thread of the process (io-wq), which
//! `RUSAGE_THREAD` misses (0.024 CPU s/GiB, less than the reader's copy
//! alone). Each end drops its descriptors when it stops, so a failing end
//! ends the other rather than leaving it blocked.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::time::Instant;

use super::flow::{Reader, Writer};
use super::path::Path;
use super::scratch::{scratch_file, socket_pair};
use crate::bench::core::{Placement, pin};
use crate::buf::BufferOptions;
use crate::double_buffer::{DoubleBuffer, Layout, Reuse};
use crate::sys::uring::Uring;
use crate::sys::{PipePair, ResourceUsage, UsageOf, fcntl_setpipe_size, getrusage, pipe};

/// How a run moves its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Bytes a run moves.
    pub bytes: u64,
    /// Bytes per call.
    pub chunk: usize,
    /// The pipe size asked for (the vmsplice rows size theirs to one
    /// chunk).
    pub pipe_size: usize,
    /// Where the two ends run.
    pub placement: Placement,
}

/// What one run took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Run {
    /// From the first end's start to the last end's finish.
    pub seconds: f64,
    /// The process's CPU time over the run (user + system).
    pub cpu_seconds: f64,
    /// The process's usage over the run, for the run's noise.
    pub usage: ResourceUsage,
}

/// The most of a file a run reads or writes, then wraps around: its pages
/// stay in the page cache, and a run never waits for a disk.
const FILE_LEN: u64 = 16 << 20;

/// Moves `shape.bytes` through `path` once.
pub(crate) fn run(path: Path, shape: &Shape) -> io::Result<Run> {
    let file_len = FILE_LEN.min(shape.bytes).max(shape.chunk as u64);
    let (writer, reader): (Writer, Reader) = match path {
        Path::ReadWrite | Path::ReusedBuffer => {
            let p = sized_pipe(shape.pipe_size)?;
            (Writer::Write(p.write), Reader::Read(p.read))
        }
        Path::Vmsplice => {
            let p = pipe()?;
            (
                Writer::Vmsplice(vmsplice_buffer(&p.write, shape.chunk)?),
                Reader::Read(p.read),
            )
        }
        Path::FileToPipe | Path::UringSplice | Path::Tee => {
            let file = scratch_file(file_len as usize, b'z')?;
            let p = sized_pipe(shape.pipe_size)?;
            let writer = match path {
                Path::FileToPipe => Writer::SpliceFile(file, p.write),
                Path::UringSplice => Writer::UringFile(Uring::new()?, file, p.write),
                _ => {
                    let first = sized_pipe(shape.pipe_size)?;
                    let null = File::options().write(true).open("/dev/null")?;
                    Writer::Tee(file, first, p.write, null)
                }
            };
            (writer, Reader::Read(p.read))
        }
        Path::PipeToFile => {
            let p = sized_pipe(shape.pipe_size)?;
            let file = scratch_file(0, 0)?;
            (Writer::Write(p.write), Reader::SpliceFile(p.read, file))
        }
        Path::Sendfile => {
            let file = scratch_file(file_len as usize, b'z')?;
            let (near, far) = socket_pair()?;
            (Writer::Sendfile(file, near), Reader::Read(far))
        }
        Path::PipeToSocket => {
            let own = pipe()?;
            let buffer = vmsplice_buffer(&own.write, shape.chunk)?;
            let (near, far) = socket_pair()?;
            (Writer::VmspliceSocket(buffer, own, near), Reader::Read(far))
        }
    };
    let (writer_cpu, reader_cpu) = shape.placement.cpus();
    let (bytes, chunk) = (shape.bytes, shape.chunk);
    let before = getrusage(UsageOf::Process)?;
    let (w, r) = std::thread::scope(|s| {
        let w = s.spawn(move || {
            end(writer_cpu, "the writer", || {
                writer.run(bytes, chunk, file_len)
            })
        });
        let r = s.spawn(move || {
            end(reader_cpu, "the reader", || {
                reader.run(bytes, chunk, file_len)
            })
        });
        (joined(w), joined(r))
    });
    let (w, r) = match (w, r) {
        (Ok(w), Ok(r)) => (w, r),
        (Err(w), Err(r)) => return Err(cause(w, r)),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => return Err(e),
    };
    let usage = getrusage(UsageOf::Process)?.since(&before);
    Ok(Run {
        seconds: (w.end.max(r.end) - w.start.min(r.start)).as_secs_f64(),
        cpu_seconds: (usage.user + usage.system).as_secs_f64(),
        usage,
    })
}

/// Which of two failed ends' errors says why: the reader's when the writer
/// only saw it go (`EPIPE`), else the writer's (the reader then only saw
/// the stream end early).
fn cause(writer: io::Error, reader: io::Error) -> io::Error {
    match writer.kind() {
        io::ErrorKind::BrokenPipe => reader,
        _ => writer,
    }
}

/// A pipe of `size` bytes, or the most the kernel grants (an unprivileged
/// user past the pipe quota gets less: `EPERM` is not an error here).
fn sized_pipe(size: usize) -> io::Result<PipePair> {
    let p = pipe()?;
    match fcntl_setpipe_size(&p.write, size) {
        Ok(_) => {}
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => {}
        Err(e) => return Err(e),
    }
    Ok(p)
}

fn vmsplice_buffer(pipe: &OwnedFd, chunk: usize) -> io::Result<DoubleBuffer> {
    DoubleBuffer::new(
        pipe,
        chunk,
        BufferOptions::default(),
        Layout::Separate,
        Reuse::AfterConsumed,
        false,
    )
}

/// When one end started and finished.
struct Ended {
    start: Instant,
    end: Instant,
}

/// Runs one end's loop on `cpu`, timing it.
fn end(cpu: Option<usize>, who: &str, work: impl FnOnce() -> io::Result<()>) -> io::Result<Ended> {
    pin(cpu, who)?;
    let start = Instant::now();
    work()
        .map_err(|e| io::Error::new(e.kind(), format!("{who}: {}", crate::quote::strerror(&e))))?;
    Ok(Ended {
        start,
        end: Instant::now(),
    })
}

fn joined(handle: std::thread::ScopedJoinHandle<'_, io::Result<Ended>>) -> io::Result<Ended> {
    handle
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("an end of the run panicked")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn shape() -> Shape {
        Shape {
            bytes: 3 << 20,
            chunk: 64 << 10,
            pipe_size: 64 << 10,
            placement: Placement::Unpinned,
        }
    }

    #[test]
    fn every_measured_path_moves_its_bytes_and_counts_its_cpu() {
        for path in Path::ALL.into_iter().filter(|p| p.measured()) {
            let run = match run(path, &shape()) {
                Err(e) if path == Path::UringSplice && e.kind() == io::ErrorKind::Unsupported => {
                    continue;
                }
                r => r.unwrap_or_else(|e| panic!("{path}: {e}")),
            };
            assert!(run.seconds > 0.0, "{path}: {run:?}");
            assert!(run.cpu_seconds >= 0.0, "{path}: {run:?}");
        }
    }

    #[test]
    fn the_end_that_failed_first_is_the_one_named() {
        let epipe = || io::Error::new(io::ErrorKind::BrokenPipe, "the writer: Broken pipe");
        let short = || io::Error::new(io::ErrorKind::UnexpectedEof, "the reader: ended short");
        let refused = || io::Error::new(io::ErrorKind::InvalidInput, "the writer: refused");
        let bad = || io::Error::new(io::ErrorKind::InvalidInput, "the reader: refused");
        assert_eq!(cause(epipe(), bad()).to_string(), "the reader: refused");
        assert_eq!(cause(refused(), short()).to_string(), "the writer: refused");
    }

    #[test]
    fn a_run_of_less_than_a_chunk_moves_it() {
        let shape = Shape {
            bytes: 5000,
            ..shape()
        };
        for path in [
            Path::ReadWrite,
            Path::FileToPipe,
            Path::Tee,
            Path::PipeToFile,
            Path::Sendfile,
        ] {
            run(path, &shape).unwrap_or_else(|e| panic!("{path}: {e}"));
        }
    }
}
