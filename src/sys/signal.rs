//! Signal dispositions.
#![allow(unsafe_code)]

use std::io;

/// Restores the default action of `SIGPIPE` (terminate), which the Rust
/// runtime sets to "ignore" before `main`: GNU tools die of it when their
/// reader goes away (status 141, nothing printed), and so must a drop-in
/// replacement.
///
/// # References
///  - [signal(7)](https://man7.org/linux/man-pages/man7/signal.7.html)
pub(crate) fn default_sigpipe() -> io::Result<()> {
    // SAFETY: `signal` takes no pointers, and SIG_DFL installs no handler
    // of ours, so no code of ours ever runs in signal context.
    let previous = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    if previous == libc::SIG_ERR {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Gives `SIGPIPE` back the action the parent left it with: the default,
/// unless the parent ignored it ([`inherited::sigpipe_ignored_at_start`],
/// `trap '' PIPE`); then a reader going away is an `EPIPE` to report.
///
/// [`inherited::sigpipe_ignored_at_start`]: super::inherited::sigpipe_ignored_at_start
pub(crate) fn inherited_sigpipe() -> io::Result<()> {
    if super::inherited::sigpipe_ignored_at_start() {
        return Ok(());
    }
    default_sigpipe()
}

/// Ignores `SIGINT` (`tee -i`).
///
/// # References
///  - [signal(7)](https://man7.org/linux/man-pages/man7/signal.7.html)
pub(crate) fn ignore_sigint() -> io::Result<()> {
    // SAFETY: `signal` takes no pointers, and SIG_IGN installs no handler
    // of ours.
    let previous = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    if previous == libc::SIG_ERR {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes a write past the file size limit (`ulimit -f`, `RLIMIT_FSIZE`)
/// fail with `EFBIG` instead of killing the process with SIGXFSZ (status
/// 153, nothing said, no result): the command then reports the write.
///
/// SIGXFSZ gets a handler that does nothing rather than `SIG_IGN`: a
/// caught signal goes back to its default action at `execve`, an ignored
/// one would stay ignored in every program we run (`pv -M`'s command,
/// `top --run`'s pipeline, qemu). `SA_RESTART`: the signal comes only to
/// the thread whose write failed, which returns `EFBIG` whatever the flag.
///
/// # References
///  - [setrlimit(2)](https://man7.org/linux/man-pages/man2/setrlimit.2.html) (`RLIMIT_FSIZE`)
///  - [signal(7)](https://man7.org/linux/man-pages/man7/signal.7.html)
pub(crate) fn sigxfsz_as_efbig() -> io::Result<()> {
    // SAFETY: the handler does nothing, trivially async-signal-safe.
    unsafe { catch_unless_ignored(libc::SIGXFSZ, on_sigxfsz, libc::SA_RESTART) }
}

/// Has `handler` catch `signal` (with `flags` and an empty mask), unless
/// the parent left it ignored: then it stays ignored, as in every
/// well-behaved Unix tool.
///
/// # Safety
///
/// `handler` must do only async-signal-safe things (signal-safety(7)).
///
/// # References
///  - [sigaction(2)](https://man7.org/linux/man-pages/man2/sigaction.2.html)
pub(crate) unsafe fn catch_unless_ignored(
    signal: libc::c_int,
    handler: extern "C" fn(libc::c_int),
    flags: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `sigaction` is plain data; all-zero is a valid value (no
    // flags, an empty mask on Linux).
    let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only queries; `current` is valid.
    if unsafe { libc::sigaction(signal, std::ptr::null(), &mut current) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if current.sa_sigaction == libc::SIG_IGN {
        return Ok(());
    }
    // SAFETY: as above.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = handler as libc::sighandler_t;
    action.sa_flags = flags;
    // SAFETY: the pointer is to our own, valid mask.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: the handler is async-signal-safe (the caller's contract),
    // and `action` is valid for the call.
    if unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// SIGXFSZ's handler: nothing to do, the write that passed the limit
/// fails with `EFBIG` (see [`sigxfsz_as_efbig`]).
extern "C" fn on_sigxfsz(_: libc::c_int) {}
