//! How a pipe endpoint waits when the pipe is full (writer) or empty
//! (reader): the blog's `--busy_loop` and `--poll`.

use std::io;
use std::os::fd::AsFd;

use rustix::event::{PollFd, PollFlags, poll};
use rustix::time::Timespec;

use crate::sys::{SpliceFlags, set_nonblocking};

/// The waiting strategy of one end of the pipe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Wait {
    /// Sleep in the system call until the pipe is ready (the default).
    #[default]
    Block,
    /// `poll` (sleeping) before every call, then a blocking call.
    Poll,
    /// Non-blocking calls retried at once on `EAGAIN`: the caller's CPU
    /// spins, and no one sleeps or has to be woken (the blog's
    /// `--busy_loop`).
    Busy,
    /// `poll` with a zero timeout in a loop before every non-blocking call
    /// (the blog's `--busy_loop --poll`).
    BusyPoll,
}

/// Which way data goes through the descriptor being waited on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The caller reads from it.
    In,
    /// The caller writes to it.
    Out,
}

impl Wait {
    /// From the blog's two switches.
    pub fn from_flags(busy_loop: bool, poll: bool) -> Wait {
        match (busy_loop, poll) {
            (false, false) => Wait::Block,
            (false, true) => Wait::Poll,
            (true, false) => Wait::Busy,
            (true, true) => Wait::BusyPoll,
        }
    }

    /// Whether calls are made non-blocking.
    pub fn is_busy(self) -> bool {
        matches!(self, Wait::Busy | Wait::BusyPoll)
    }

    /// Puts `fd` in the mode this strategy needs (`O_NONBLOCK` when busy).
    pub fn prepare(self, fd: impl AsFd) -> io::Result<()> {
        if self.is_busy() {
            set_nonblocking(fd, true)?;
        }
        Ok(())
    }

    /// The splice flags this strategy adds (`SPLICE_F_NONBLOCK` when busy).
    pub fn splice_flags(self) -> SpliceFlags {
        if self.is_busy() {
            SpliceFlags::NONBLOCK
        } else {
            SpliceFlags::empty()
        }
    }

    /// Called before each transfer: polls when the strategy says so.
    pub fn before_call(self, fd: impl AsFd, direction: Direction) -> io::Result<()> {
        let events = match direction {
            Direction::In => PollFlags::IN,
            Direction::Out => PollFlags::OUT,
        };
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let timeout = match self {
            Wait::Block | Wait::Busy => return Ok(()),
            Wait::Poll => None,
            Wait::BusyPoll => Some(&zero),
        };
        loop {
            let mut fds = [PollFd::new(&fd, events)];
            match poll(&mut fds, timeout) {
                Ok(0) => continue,
                Ok(_) => return Ok(()),
                Err(rustix::io::Errno::INTR) => continue,
                Err(err) => return Err(err.into()),
            }
        }
    }
}

/// What to do with the result of one non-blocking-aware system call.
///
/// `EINTR` and `EAGAIN` mean "nothing happened, call again" (after a poll
/// for blocking descriptors); everything else is final.
pub fn is_retryable(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
    )
}

/// Waits (sleeping) until `fd` is ready for `direction`; used when a
/// descriptor that should block turns out to be non-blocking.
pub fn wait_ready(fd: impl AsFd, direction: Direction) -> io::Result<()> {
    Wait::Poll.before_call(fd, direction)
}

/// `read(2)`, retried on `EINTR`, waiting with `poll` on `EAGAIN` (a
/// descriptor that is non-blocking though its reader wants to wait).
pub fn read(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    let fd = fd.as_fd();
    loop {
        match rustix::io::read(fd, &mut *buf) {
            Ok(n) => return Ok(n),
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => wait_ready(fd, Direction::In)?,
            Err(errno) => return Err(errno.into()),
        }
    }
}

/// Writes all of `buf`, retried on `EINTR`, waiting with `poll` on
/// `EAGAIN`, and tells `written` how many bytes each call got through (to
/// count progress as it happens).
pub fn write_all(fd: impl AsFd, mut buf: &[u8], mut written: impl FnMut(usize)) -> io::Result<()> {
    let fd = fd.as_fd();
    while !buf.is_empty() {
        match rustix::io::write(fd, buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                written(n);
                buf = &buf[n..];
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => wait_ready(fd, Direction::Out)?,
            Err(errno) => return Err(errno.into()),
        }
    }
    Ok(())
}
