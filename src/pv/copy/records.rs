//! Copies to or from a socket that keeps message boundaries
//! (`SOCK_SEQPACKET`, `SOCK_DGRAM`, ...): a read of such a socket takes one
//! whole record, and discards what does not fit the buffer; a splice
//! takes what fits a pipe and drops the rest of the record (5000-byte
//! records lost 4464 bytes each through a 536-byte splice). So from such
//! a socket every record is first measured (`MSG_PEEK | MSG_TRUNC`), then
//! read whole into a buffer that fits it, and written whole, one write:
//! to a socket of the same kind, one record is one record.
//!
//! Into such a socket from a stream, the bytes go in pieces no larger
//! than the socket takes (a write larger than its send buffer fails with
//! `EMSGSIZE`: the piece is halved and tried again).
//!
//! Which sockets keep records is [`crate::sys::socket::keeps_records`]'s
//! answer (`SO_TYPE`), the copy engine's too.

use std::io;
use std::os::fd::BorrowedFd;

use rustix::event::{PollFd, PollFlags, poll};
use rustix::io::Errno;
use rustix::net::{RecvFlags, recv};

use crate::wait::{read, write_all};

pub use crate::sys::socket::keeps_records;

/// The size of the next record waiting on `fd`, waiting for one; `None`
/// at the end (the peer shut down or closed: a 0).
pub fn next_record_size(fd: BorrowedFd<'_>) -> io::Result<Option<usize>> {
    let mut probe = [0u8; 1];
    loop {
        match recv(fd, &mut probe, RecvFlags::PEEK | RecvFlags::TRUNC) {
            Ok((_, 0)) => return Ok(None),
            Ok((_, size)) => return Ok(Some(size)),
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => wait(fd, PollFlags::IN)?,
            Err(err) => return Err(err.into()),
        }
    }
}

/// Reads the next record, of `size` bytes as measured, into `buf` (grown
/// to fit); how many bytes it held.
pub fn read_record(fd: BorrowedFd<'_>, size: usize, buf: &mut Vec<u8>) -> io::Result<usize> {
    if buf.len() < size {
        buf.resize(size, 0);
    }
    loop {
        match recv(fd, &mut buf[..], RecvFlags::TRUNC) {
            // Larger than measured: only another reader of the same socket
            // can have changed the queue.
            Ok((_, total)) if total > buf.len() => {
                return Err(io::Error::other(format!(
                    "a record of {total} bytes came where {size} were measured (another reader?)"
                )));
            }
            Ok((n, _)) => return Ok(n),
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => wait(fd, PollFlags::IN)?,
            Err(err) => return Err(err.into()),
        }
    }
}

/// Writes `bytes` to a socket that keeps records, in pieces of at most
/// `*piece` bytes, halving `*piece` on `EMSGSIZE` (it stays halved for the
/// next call); `written` is told each piece.
pub fn write_pieces(
    fd: BorrowedFd<'_>,
    mut bytes: &[u8],
    piece: &mut usize,
    mut written: impl FnMut(usize),
) -> io::Result<()> {
    while !bytes.is_empty() {
        let now = bytes.len().min((*piece).max(1));
        match write_all(fd, &bytes[..now], &mut written) {
            Ok(()) => bytes = &bytes[now..],
            Err(err) if err.raw_os_error() == Some(libc::EMSGSIZE) && now > 1 => {
                *piece = now / 2;
            }
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// Reads a stretch of a stream for [`write_pieces`].
pub fn read_stream(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    read(fd, buf)
}

/// Waits until `fd` has `events` (a non-blocking descriptor whose reader
/// wants to wait).
fn wait(fd: BorrowedFd<'_>, events: PollFlags) -> io::Result<()> {
    let mut fds = [PollFd::new(&fd, events)];
    match poll(&mut fds, None) {
        Ok(_) | Err(Errno::INTR) => Ok(()),
        Err(err) => Err(err.into()),
    }
}
