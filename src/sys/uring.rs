//! The io_uring ends (`IORING_OP_WRITE`, `_READ` and `_SPLICE`), through
//! the `io-uring` crate. Each operation is one submission and one
//! completion, waited for with one `io_uring_enter(2)`: the counterpart of
//! one `write(2)` or `read(2)`, so that the rows compare with `pipe`.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use io_uring::{IoUring, opcode, squeue, types};

/// A ring with room for one operation at a time.
pub(crate) struct Uring {
    ring: IoUring,
    /// The `user_data` of the next operation, to match its completion.
    next: u64,
    /// An operation may still sit in the submission queue, naming a
    /// buffer that is gone: the ring takes no more.
    poisoned: bool,
}

/// Offset -1: the file's current position, the only one a pipe has.
const CURRENT: u64 = u64::MAX;

impl Uring {
    /// A new ring; the kernel may refuse it (io_uring disabled, seccomp):
    /// the error says so.
    pub(crate) fn new() -> io::Result<Uring> {
        let ring = IoUring::new(4).map_err(|e| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "io_uring_setup refused: {} (see /proc/sys/kernel/io_uring_disabled)",
                    crate::quote::strerror(&e)
                ),
            )
        })?;
        Ok(Uring {
            ring,
            next: 0,
            poisoned: false,
        })
    }

    /// Submits `entry` and waits for its completion; its result.
    ///
    /// # Safety
    ///
    /// The buffers `entry` points to must stay valid, and not be used
    /// otherwise, until this returns: it returns only once the kernel has
    /// completed the operation (its own completion, whatever other comes
    /// first), or when it never took it (the ring is then poisoned, so
    /// that the entry is never submitted later).
    unsafe fn run(&mut self, entry: squeue::Entry) -> io::Result<usize> {
        if self.poisoned {
            return Err(io::Error::other(
                "io_uring: the ring failed earlier and takes no more operations",
            ));
        }
        let tag = self.next;
        self.next = self.next.wrapping_add(1);
        // SAFETY: the caller keeps the entry's buffers valid until the
        // completion, which is waited for below before returning.
        unsafe { self.ring.submission().push(&entry.user_data(tag)) }
            .map_err(|_| io::Error::other("the io_uring submission queue is full"))?;
        let mut stray = None;
        loop {
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                    ) =>
                {
                    continue;
                }
                Err(e) if !self.ring.submission().is_empty() => {
                    // The kernel never took the entry.
                    self.poisoned = true;
                    return Err(e);
                }
                Err(_) => {
                    // Taken, and its completion cannot be waited for:
                    // returning would let the kernel use a buffer its
                    // owner may free. Nothing safe is left to do.
                    std::process::abort();
                }
            }
            // Only the own completion ends the wait: returning on another
            // would let the kernel write into a buffer whose borrow has
            // ended. Another (not expected) is reported after it.
            let mut own = None;
            for done in self.ring.completion() {
                if done.user_data() == tag {
                    own = Some(done.result());
                } else {
                    stray.get_or_insert(done.user_data());
                }
            }
            let Some(res) = own else { continue };
            if let Some(other) = stray {
                return Err(io::Error::other(format!(
                    "io_uring completed operation {other} while {tag} was waited for \
                     (which then gave {res})"
                )));
            }
            return if res < 0 {
                Err(io::Error::from_raw_os_error(-res))
            } else {
                Ok(res as usize)
            };
        }
    }

    /// `IORING_OP_WRITE` of `buf` into `fd`: the bytes written.
    pub(crate) fn write(&mut self, fd: &OwnedFd, buf: &[u8]) -> io::Result<usize> {
        let entry = opcode::Write::new(types::Fd(fd.as_raw_fd()), buf.as_ptr(), len32(buf.len()))
            .offset(CURRENT)
            .build();
        // SAFETY: `buf` is borrowed for the whole call, which waits for
        // the completion.
        unsafe { self.run(entry) }
    }

    /// `IORING_OP_READ` from `fd` into `buf`: the bytes read, 0 at the end.
    pub(crate) fn read(&mut self, fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
        let entry = opcode::Read::new(
            types::Fd(fd.as_raw_fd()),
            buf.as_mut_ptr(),
            len32(buf.len()),
        )
        .offset(CURRENT)
        .build();
        // SAFETY: `buf` is borrowed mutably for the whole call, which
        // waits for the completion.
        unsafe { self.run(entry) }
    }

    /// `IORING_OP_SPLICE` of up to `len` bytes from the pipe `from` into
    /// `to`, at `to_offset` (`None`: its position): the bytes moved.
    pub(crate) fn splice(
        &mut self,
        from: &OwnedFd,
        to: &OwnedFd,
        to_offset: Option<u64>,
        len: usize,
    ) -> io::Result<usize> {
        let entry = opcode::Splice::new(
            types::Fd(from.as_raw_fd()),
            -1,
            types::Fd(to.as_raw_fd()),
            to_offset.map_or(-1, |o| o as i64),
            len32(len),
        )
        .build();
        // SAFETY: a splice names no user memory.
        unsafe { self.run(entry) }
    }

    /// `IORING_OP_SPLICE` of up to `len` bytes from the file `from`, at
    /// `from_offset`, into the pipe `to`: the bytes moved (the file's
    /// position is left alone).
    pub(crate) fn splice_from_file(
        &mut self,
        from: BorrowedFd<'_>,
        from_offset: u64,
        to: BorrowedFd<'_>,
        len: usize,
    ) -> io::Result<usize> {
        let offset = i64::try_from(from_offset).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("io_uring splice: offset {from_offset} is past what a file holds"),
            )
        })?;
        let entry = opcode::Splice::new(
            types::Fd(from.as_raw_fd()),
            offset,
            types::Fd(to.as_raw_fd()),
            -1,
            len32(len),
        )
        .build();
        // SAFETY: a splice names no user memory.
        unsafe { self.run(entry) }
    }
}

/// A length for one operation (io_uring takes 32 bits).
fn len32(len: usize) -> u32 {
    len.min(u32::MAX as usize) as u32
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sys::pipe;

    #[test]
    fn a_write_and_a_read_through_the_ring() {
        let Some(mut ring) = crate::sys::available("io_uring", Uring::new()) else {
            return;
        };
        let p = pipe().unwrap();
        assert_eq!(ring.write(&p.write, b"hello").unwrap(), 5);
        let mut buf = [0u8; 16];
        assert_eq!(ring.read(&p.read, &mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], b"hello");
        drop(p.write);
        assert_eq!(ring.read(&p.read, &mut buf).unwrap(), 0);
    }

    /// A completion that is not the operation's own (none should come:
    /// one operation at a time) does not end the wait: the call returns
    /// only once the kernel is done with the caller's buffer.
    #[test]
    fn a_stray_completion_does_not_end_the_wait_for_the_own_one() {
        let Some(mut ring) = crate::sys::available("io_uring", Uring::new()) else {
            return;
        };
        // A no-op tagged as no operation of `run`, completed and left in
        // the completion queue.
        let nop = opcode::Nop::new().build().user_data(u64::MAX - 1);
        // SAFETY: a no-op names no memory.
        unsafe { ring.ring.submission().push(&nop) }.unwrap();
        ring.ring.submit_and_wait(1).unwrap();
        let p = pipe().unwrap();
        rustix::io::write(&p.write, b"hello").unwrap();
        let mut buf = [0u8; 16];
        let got = ring.read(&p.read, &mut buf);
        // Whatever the call says, its read is over: nothing is left in
        // the completion queue to write into `buf` later.
        assert!(
            ring.ring.completion().is_empty(),
            "returned before its own completion: {got:?}"
        );
        let err = got.unwrap_err();
        assert!(err.to_string().contains("completed operation"), "{err}");
        assert_eq!(&buf[..5], b"hello");
    }
}
