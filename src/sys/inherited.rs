//! What the process inherited from its parent, read before Rust's runtime
//! opens `/dev/null` on a closed descriptor 0, 1 or 2 and ignores
//! `SIGPIPE` (FACTS.md). GNU cat and pv see both: a closed standard output
//! is an error, and an ignored `SIGPIPE` makes a reader going away a write
//! error (`EPIPE`) instead of death by signal.
//!
//! [`record`] reads both; a binary calls it from its `.init_array`, which
//! the C library runs before the Rust runtime's own start-up:
//!
//! ```ignore
//! #[used]
//! #[unsafe(link_section = ".init_array")]
//! static RECORD: extern "C" fn() = pipespeed::sys::inherited::record;
//! ```
//!
//! In a program that never calls it (a test harness, another binary), the
//! queries answer as if nothing was closed or ignored.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU8, Ordering};

/// Bit `fd` (0, 1, 2): that descriptor was closed.
const CLOSED_MASK: u8 = 0b111;
/// `SIGPIPE` was ignored.
const SIGPIPE_IGNORED: u8 = 1 << 3;
/// [`record`] ran.
const RECORDED: u8 = 1 << 4;

static STATE: AtomicU8 = AtomicU8::new(0);

/// The standard descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdio {
    /// Descriptor 0.
    Stdin = 0,
    /// Descriptor 1.
    Stdout = 1,
    /// Descriptor 2.
    Stderr = 2,
}

impl Stdio {
    /// The name GNU tools give it in messages (`standard output`).
    pub fn name(self) -> &'static str {
        match self {
            Stdio::Stdin => "standard input",
            Stdio::Stdout => "standard output",
            Stdio::Stderr => "standard error",
        }
    }
}

/// Reads which of the descriptors 0-2 are closed and whether `SIGPIPE` is
/// ignored, for [`closed_at_start`] and [`sigpipe_ignored_at_start`].
///
/// Meant to run from `.init_array`, before anything else in the process:
/// it only makes two kinds of system call and stores one byte.
pub extern "C" fn record() {
    let mut state = RECORDED;
    for fd in 0..3 {
        // SAFETY: F_GETFD takes no argument and touches no memory; on a
        // descriptor that is not open it fails with EBADF.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF) {
            state |= 1 << fd;
        }
    }
    // SAFETY: an all-zero `sigaction` is a valid value of the C struct
    // (no handler, empty mask); it is only written by the kernel here.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only queries; `old` is valid for writes.
    let queried = unsafe { libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) };
    if queried == 0 && old.sa_sigaction == libc::SIG_IGN {
        state |= SIGPIPE_IGNORED;
    }
    STATE.store(state, Ordering::Relaxed);
}

/// Whether [`record`] ran in this process.
pub fn recorded() -> bool {
    STATE.load(Ordering::Relaxed) & RECORDED != 0
}

/// Whether `fd` was closed when the process started.
pub fn closed_at_start(fd: Stdio) -> bool {
    STATE.load(Ordering::Relaxed) & CLOSED_MASK & (1 << fd as u8) != 0
}

/// The standard descriptors that were closed when the process started.
pub fn closed() -> impl Iterator<Item = Stdio> {
    [Stdio::Stdin, Stdio::Stdout, Stdio::Stderr]
        .into_iter()
        .filter(|&fd| closed_at_start(fd))
}

/// Whether the parent left `SIGPIPE` ignored.
pub fn sigpipe_ignored_at_start() -> bool {
    STATE.load(Ordering::Relaxed) & SIGPIPE_IGNORED != 0
}

/// Points each descriptor that was closed at start at `/dev/null` opened
/// the wrong way round (stdin write-only, stdout and stderr read-only):
/// using it then fails with `EBADF`, as on the closed descriptor, while it
/// stays occupied, so no file opened later is taken for standard output.
///
/// Note that `std`'s own `Stdout` and `Stderr` treat `EBADF` as success:
/// a caller that writes through them checks [`closed_at_start`] first.
pub fn keep_closed() -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags, open};
    for fd in closed() {
        let flags = match fd {
            Stdio::Stdin => OFlags::WRONLY,
            Stdio::Stdout | Stdio::Stderr => OFlags::RDONLY,
        };
        let null = open("/dev/null", flags | OFlags::CLOEXEC, Mode::empty())?;
        match fd {
            Stdio::Stdin => rustix::stdio::dup2_stdin(&null)?,
            Stdio::Stdout => rustix::stdio::dup2_stdout(&null)?,
            Stdio::Stderr => rustix::stdio::dup2_stderr(&null)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_closed_or_ignored_unless_recorded() {
        // The test harness does not register `record`.
        assert!(!recorded());
        assert_eq!(closed().count(), 0);
        assert!(!sigpipe_ignored_at_start());
    }
}
