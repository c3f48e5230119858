//! The two ends' loops: what each path's writer and reader call, a
//! chunk at a time, until a run's bytes have moved. A file is read or
//! written from its start again after `file_len` bytes, so its pages stay
//! cached.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use crate::double_buffer::DoubleBuffer;
use crate::sys::uring::Uring;
use crate::sys::{PipePair, SpliceFlags, sendfile, splice, tee};
use crate::wait::Wait;

/// The writing end of a path.
pub(super) enum Writer {
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
pub(super) enum Reader {
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
    /// Moves `bytes` in, a chunk at a time.
    pub(super) fn run(mut self, bytes: u64, chunk: usize, file_len: u64) -> io::Result<()> {
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
    /// Takes `bytes` out, a chunk at a time.
    pub(super) fn run(self, bytes: u64, chunk: usize, file_len: u64) -> io::Result<()> {
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
