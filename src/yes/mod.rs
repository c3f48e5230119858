//! A line, repeated to an output until the output fails: `pipespeed
//! yes`'s engine.
//!
//! [`repeat`] writes the line once with `write(2)` (a closed or full
//! output fails at the least cost, as GNU yes checks it), then fills a
//! buffer of whole copies of the line once and never writes it again
//! ([`FrozenPages`]: the pages are made read-only). Into a pipe it
//! `vmsplice(2)`s that buffer over and over, each call ending on a line
//! boundary, a short call continued from where it stopped: the pipe holds
//! references to the same pages many times, and every one of them shows
//! the bytes as they were filled. Anywhere else (a file, `/dev/null`, a
//! socket, a terminal) it `write(2)`s the whole buffer, a syscall per
//! [`WRITE_BUFFER`]. docs/yes.md gives the figures behind both sizes.

use std::convert::Infallible;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use crate::sys::frozen::FrozenPages;
use crate::sys::{FdKind, fcntl_getpipe_size, fcntl_setpipe_size, fd_info, pipe_max_size};
use crate::wait::{Direction, wait_ready, write_all};

/// The buffer written with `write(2)` where the output is not a pipe:
/// fewer calls per byte, and still a small part of the page cache a file
/// output goes through.
pub(crate) const WRITE_BUFFER: usize = 1 << 20;

/// How the buffer's bytes leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mechanism {
    /// References to the buffer's pages put in the pipe (`vmsplice(2)`).
    Vmsplice,
    /// Copies of them (`write(2)`).
    Write,
}

impl Mechanism {
    /// The mechanism for an output of `kind`: vmsplice into a pipe
    /// (unless `splice` is false), write elsewhere.
    pub(crate) fn for_output(kind: FdKind, splice: bool) -> Mechanism {
        match kind {
            FdKind::Pipe if splice => Mechanism::Vmsplice,
            _ => Mechanism::Write,
        }
    }
}

/// The line GNU yes repeats: the operands joined by spaces and a newline,
/// or `y` and a newline when there are none.
pub(crate) fn line<S: AsRef<[u8]>>(operands: &[S]) -> Vec<u8> {
    if operands.is_empty() {
        return b"y\n".to_vec();
    }
    let mut line = Vec::new();
    for operand in operands {
        line.extend_from_slice(operand.as_ref());
        line.push(b' ');
    }
    if let Some(last) = line.last_mut() {
        *last = b'\n';
    }
    line
}

/// Writes `line` to `out` again and again until a write fails, and
/// returns that failure (`EPIPE` once the reader has gone, if `SIGPIPE`
/// did not end the process first). `splice: false` writes into a pipe
/// too (`PIPESPEED_NO_SPLICE`).
pub(crate) fn repeat(line: &[u8], out: BorrowedFd<'_>, splice: bool) -> io::Error {
    if line.is_empty() {
        return io::Error::new(io::ErrorKind::InvalidInput, "an empty line");
    }
    // One copy first, as GNU yes does: a closed or full output fails here.
    if let Err(err) = write_all(out, line, |_| {}) {
        return err;
    }
    let kind = match fd_info(out) {
        Ok(info) => info.kind,
        Err(err) => return err,
    };
    let result = match Mechanism::for_output(kind, splice) {
        Mechanism::Vmsplice => vmsplice_forever(line, out),
        Mechanism::Write => {
            let len = buffer_len(line.len(), WRITE_BUFFER, 1);
            FrozenPages::new(len, |b| fill(b, line)).and_then(|pages| write_forever(&pages, 0, out))
        }
    };
    match result {
        Ok(never) => match never {},
        Err(err) => err,
    }
}

/// Grows the pipe `out`, then vmsplices a buffer of lines into it without
/// end; falls back to `write(2)` if the kernel refuses vmsplice.
fn vmsplice_forever(line: &[u8], out: BorrowedFd<'_>) -> io::Result<Infallible> {
    let capacity = grow_pipe(out)?;
    let page = rustix::param::page_size();
    let len = buffer_len(line.len(), capacity / CHUNKS_PER_PIPE, page);
    let pages = FrozenPages::new(len, |b| fill(b, line))?;
    let mut at = 0;
    loop {
        match pages.vmsplice(out, at..len) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => at = (at + n) % len,
            Err(err) => match err.raw_os_error() {
                Some(libc::EINTR) => {}
                Some(libc::EAGAIN) => wait_ready(out, Direction::Out)?,
                // A kernel or sandbox without vmsplice on this pipe: the
                // same bytes, copied, from where the splice stopped.
                Some(libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP) => {
                    return write_forever(&pages, at, out);
                }
                _ => return Err(err),
            },
        }
    }
}

/// How many vmsplice calls fill the pipe: each moves a quarter of its
/// capacity, as GNU yes 9.12's ("the empirical sweet spot"); see
/// docs/yes.md for the sizes measured here.
const CHUNKS_PER_PIPE: usize = 4;

/// The capacity yes grows its pipe to, as GNU yes 9.12 does: a 1 MiB pipe
/// (256 KiB calls) was faster into a splicing reader but slower into one
/// that reads (docs/yes.md), 512 KiB (128 KiB calls) at least GNU's speed
/// into both.
pub(crate) const PIPE_TARGET: usize = 512 * 1024;

/// Grows the pipe `out` to [`PIPE_TARGET`] (or `/proc/sys/fs/pipe-max-size`
/// if that is lower) if it is smaller, and returns its capacity: a pipe
/// already larger is left as it is. A refusal (`EPERM`: the user's pipe
/// budget spent) leaves the capacity as it was.
pub(crate) fn grow_pipe(out: BorrowedFd<'_>) -> io::Result<usize> {
    let capacity = fcntl_getpipe_size(out)?;
    let target = pipe_max_size().map_or(PIPE_TARGET, |max| max.min(PIPE_TARGET));
    if target > capacity {
        return Ok(fcntl_setpipe_size(out, target).unwrap_or(capacity));
    }
    Ok(capacity)
}

/// Writes `pages` from byte `at`, then all of them, without end.
fn write_forever(pages: &FrozenPages, at: usize, out: impl AsFd) -> io::Result<Infallible> {
    let bytes = pages.as_slice();
    write_all(&out, &bytes[at..], |_| {})?;
    loop {
        write_all(&out, bytes, |_| {})?;
    }
}

/// The length of a buffer of whole copies of a line of `line` bytes, near
/// `target` (at least one line): a multiple of `page` too where one fits,
/// so that every page it spans is full.
pub(crate) fn buffer_len(line: usize, target: usize, page: usize) -> usize {
    let whole_pages = page
        .checked_div(gcd(line, page))
        .and_then(|n| n.checked_mul(line))
        .filter(|&unit| unit <= target);
    let unit = whole_pages.unwrap_or(line).max(1);
    (target / unit * unit).max(unit)
}

/// The greatest common divisor (`gcd(n, 0) == n`).
fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Fills `buf` with copies of `line` (a multiple of its length), doubling
/// the copied part each step, as GNU yes's `repeat_pattern`.
pub(crate) fn fill(buf: &mut [u8], line: &[u8]) {
    let first = line.len().min(buf.len());
    buf[..first].copy_from_slice(&line[..first]);
    let mut filled = first;
    while filled < buf.len() && filled > 0 {
        let chunk = filled.min(buf.len() - filled);
        buf.copy_within(..chunk, filled);
        filled += chunk;
    }
}

#[cfg(test)]
mod tests;
