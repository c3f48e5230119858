//! One measured run of a path: a writer thread and a reader thread, each
//! pinned where the placement says, moving `bytes` through the path's
//! calls. What the run spent is the process's `getrusage` over the run,
//! not the two threads' own: io_uring runs a splice from a file in a
//! worker thread of the process (io-wq), which `RUSAGE_THREAD` of the
//! writer would not count (0.02 CPU s/GiB instead of the kernel's real
//! work). The process does nothing else meanwhile: its main thread waits
//! for the two ends.
//!
//! Each end owns its descriptors and drops them when it stops, so a
//! failing end ends the other (end of file, or `EPIPE`: the Rust runtime
//! ignores SIGPIPE) rather than leaving it blocked.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Instant;

use super::path::Path;
use super::scratch::{scratch_file, socket_pair};
use crate::bench::core::{Placement, pin};
use crate::buf::BufferOptions;
use crate::double_buffer::{DoubleBuffer, Layout, Reuse};
use crate::sys::uring::Uring;
use crate::sys::{
    PipePair, ResourceUsage, SpliceFlags, UsageOf, fcntl_setpipe_size, getrusage, pipe, sendfile,
    splice, tee,
};
use crate::wait::Wait;

/// How a run moves its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Bytes a run moves.
    pub bytes: u64,
    /// Bytes per call.
    pub chunk: usize,
    /// The pipe size asked for (the vmsplice rows size theirs to one
    /// chunk: the double buffer's discipline).
    pub pipe_size: usize,
    /// Where the two ends run.
    pub placement: Placement,
}

/// What one run took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    /// From the first end's start to the last end's finish.
    pub seconds: f64,
    /// The process's CPU time over the run (user + system): the writer's,
    /// the reader's, and any kernel worker's of the process (io_uring).
    pub cpu_seconds: f64,
    /// The process's usage over the run, for the run's noise.
    pub usage: ResourceUsage,
}

/// The most of a file a run reads or writes, then wraps around: its pages
/// stay in the page cache, and a run never waits for a disk.
const FILE_LEN: u64 = 16 << 20;

/// Moves `shape.bytes` through `path` once.
pub fn run(path: Path, shape: &Shape) -> io::Result<Run> {
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
        // The reader's error is the cause when the writer only saw it go.
        (Err(_), Err(e)) | (Ok(_), Err(e)) => return Err(e),
        (Err(e), Ok(_)) => return Err(e),
        (Ok(w), Ok(r)) => (w, r),
    };
    let usage = getrusage(UsageOf::Process)?.since(&before);
    Ok(Run {
        seconds: (w.end.max(r.end) - w.start.min(r.start)).as_secs_f64(),
        cpu_seconds: (usage.user + usage.system).as_secs_f64(),
        usage,
    })
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

/// The writing end of a path.
enum Writer {
    /// `write(2)` of a buffer.
    Write(OwnedFd),
    /// `vmsplice(2)` of a double buffer (which holds its own duplicate of
    /// the pipe's write end, the only one left: the pipe closes with it).
    Vmsplice(DoubleBuffer),
    /// `splice(2)` of a file into the pipe.
    SpliceFile(File, OwnedFd),
    /// `IORING_OP_SPLICE` of a file into the pipe.
    UringFile(Uring, File, OwnedFd),
    /// splice of a file into a first pipe, tee of it into the reader's,
    /// the first drained into /dev/null.
    Tee(File, PipePair, OwnedFd, File),
    /// `sendfile(2)` of a file into a socket.
    Sendfile(File, OwnedFd),
    /// vmsplice of a double buffer into a private pipe, spliced into a
    /// socket.
    VmspliceSocket(DoubleBuffer, PipePair, OwnedFd),
}

/// The reading end of a path.
enum Reader {
    /// `read(2)` into a buffer.
    Read(OwnedFd),
    /// `splice(2)` of the pipe into a file.
    SpliceFile(OwnedFd, File),
}

/// The next call's length: at most a chunk, what is left, and what is
/// left of the file before it wraps.
fn next(left: u64, chunk: usize, room: u64) -> usize {
    left.min(chunk as u64).min(room) as usize
}

impl Writer {
    fn run(mut self, bytes: u64, chunk: usize, file_len: u64) -> io::Result<()> {
        let buf = match &self {
            Writer::Write(_) => vec![b'w'; chunk],
            _ => Vec::new(),
        };
        let (mut left, mut at) = (bytes, 0u64);
        while left > 0 {
            let len = next(left, chunk, file_len - at);
            let n = match &mut self {
                Writer::Write(p) => rustix::io::write(&*p, &buf[..len])?,
                Writer::Vmsplice(b) => {
                    b.splice_next(len, Wait::Block)?;
                    len
                }
                Writer::SpliceFile(f, p) => {
                    let mut off = at;
                    splice(&*f, Some(&mut off), &*p, None, len, SpliceFlags::empty())?
                }
                Writer::UringFile(ring, f, p) => {
                    ring.splice_from_file(f.as_fd(), at, p.as_fd(), len)?
                }
                Writer::Tee(f, first, to, null) => {
                    let mut off = at;
                    let n = splice(
                        &*f,
                        Some(&mut off),
                        &first.write,
                        None,
                        len,
                        SpliceFlags::empty(),
                    )?;
                    tee_all(&first.read, to.as_fd(), null, n)?;
                    n
                }
                Writer::Sendfile(f, s) => {
                    let mut off = at;
                    sendfile(&*s, &*f, Some(&mut off), len)?
                }
                Writer::VmspliceSocket(b, own, s) => {
                    b.splice_next(len, Wait::Block)?;
                    move_all(&own.read, s.as_fd(), len)?;
                    len
                }
            };
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "a call moved no bytes",
                ));
            }
            left -= n as u64;
            at = (at + n as u64) % file_len;
        }
        Ok(())
    }
}

/// Tees `len` bytes from the pipe `from` into `to`, consuming each part
/// from `from` into `null` once it is duplicated (tee does not consume,
/// and always starts at the front of the pipe).
fn tee_all(from: &OwnedFd, to: BorrowedFd<'_>, null: &File, len: usize) -> io::Result<()> {
    let mut done = 0;
    while done < len {
        let n = tee(from, to, len - done, SpliceFlags::empty())?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "tee moved no bytes",
            ));
        }
        move_all(from, null.as_fd(), n)?;
        done += n;
    }
    Ok(())
}

/// Splices exactly `len` bytes from the pipe `from` into `to`.
fn move_all(from: &OwnedFd, to: BorrowedFd<'_>, len: usize) -> io::Result<()> {
    let mut done = 0;
    while done < len {
        match splice(from, None, to, None, len - done, SpliceFlags::empty())? {
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the pipe ran dry",
                ));
            }
            n => done += n,
        }
    }
    Ok(())
}

impl Reader {
    fn run(self, bytes: u64, chunk: usize, file_len: u64) -> io::Result<()> {
        let mut buf = match &self {
            Reader::Read(_) => vec![0u8; chunk],
            Reader::SpliceFile(..) => Vec::new(),
        };
        let (mut left, mut at) = (bytes, 0u64);
        while left > 0 {
            let len = next(left, chunk, file_len - at);
            let n = match &self {
                Reader::Read(fd) => rustix::io::read(fd, &mut buf[..len])?,
                Reader::SpliceFile(p, f) => {
                    let mut off = at;
                    splice(p, None, f, Some(&mut off), len, SpliceFlags::empty())?
                }
            };
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the stream ended {left} bytes short of {bytes}"),
                ));
            }
            left -= n as u64;
            at = (at + n as u64) % file_len;
        }
        Ok(())
    }
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
