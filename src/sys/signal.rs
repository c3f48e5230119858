//! Signal dispositions.
#![allow(unsafe_code)]

use std::io;

/// Restores the default action of `SIGPIPE` (terminate), which the Rust
/// runtime sets to "ignore" before `main`.
///
/// GNU tools die of `SIGPIPE` when their reader goes away: the shell then
/// sees status 141 and prints nothing. A drop-in replacement must too.
/// With the default action, a write (or splice) to a pipe without readers
/// kills the process instead of returning `EPIPE`.
///
/// # References
///  - [signal(7)](https://man7.org/linux/man-pages/man7/signal.7.html)
pub fn default_sigpipe() -> io::Result<()> {
    // SAFETY: `signal` takes no pointers, and SIG_DFL installs no handler
    // of ours, so no code of ours ever runs in signal context.
    let previous = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    if previous == libc::SIG_ERR {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Gives `SIGPIPE` back the action the parent left it with, which the Rust
/// runtime replaced by "ignore" before `main`: the default (terminate),
/// unless the parent ignored it ([`inherited::sigpipe_ignored_at_start`],
/// as systemd's `IgnoreSIGPIPE=` and `trap '' PIPE` do). Then it stays
/// ignored, and a reader going away is an `EPIPE` to report as a write
/// error, as GNU cat and pv do.
///
/// [`inherited::sigpipe_ignored_at_start`]: super::inherited::sigpipe_ignored_at_start
pub fn inherited_sigpipe() -> io::Result<()> {
    if super::inherited::sigpipe_ignored_at_start() {
        return Ok(());
    }
    default_sigpipe()
}

/// Ignores `SIGINT` (`tee -i`).
///
/// # References
///  - [signal(7)](https://man7.org/linux/man-pages/man7/signal.7.html)
pub fn ignore_sigint() -> io::Result<()> {
    // SAFETY: `signal` takes no pointers, and SIG_IGN installs no handler
    // of ours.
    let previous = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    if previous == libc::SIG_ERR {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
