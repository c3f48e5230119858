//! Signals held while a file of ours is half made: a temporary file that
//! a signal's default action kills us beside would stay there for ever.
#![allow(unsafe_code)]

use std::io;

/// The signals [`hold_signals`] blocks.
const HELD: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread and ignores
/// SIGXFSZ (so a write past `RLIMIT_FSIZE` fails with `EFBIG`) until the
/// guard is dropped, which puts both back; a signal that came meanwhile
/// is then delivered. Hold it only around work that ends by itself, never
/// around a wait, and from one thread at a time (SIGXFSZ's disposition is
/// the process's).
///
/// # References
///  - [pthread_sigmask(3)](https://man7.org/linux/man-pages/man3/pthread_sigmask.3.html)
///  - [setrlimit(2)](https://man7.org/linux/man-pages/man2/setrlimit.2.html) (`RLIMIT_FSIZE`)
#[doc(alias = "pthread_sigmask")]
pub(crate) fn hold_signals() -> io::Result<HeldSignals> {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it below.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, owned sigset_t.
    unsafe { libc::sigemptyset(&mut set) };
    for signal in HELD {
        // SAFETY: as above; `signal` is a valid signal number.
        unsafe { libc::sigaddset(&mut set, signal) };
    }
    // SAFETY: plain data, filled by pthread_sigmask.
    let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to valid sigset_t values of ours.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut mask) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    // SAFETY: SIG_IGN installs no handler of ours; `signal` takes no
    // pointers.
    let xfsz = unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    Ok(HeldSignals { mask, xfsz })
}

/// What [`hold_signals`] changed, put back on drop.
#[must_use = "the signals are released when this is dropped"]
pub(crate) struct HeldSignals {
    mask: libc::sigset_t,
    xfsz: libc::sighandler_t,
}

impl Drop for HeldSignals {
    fn drop(&mut self) {
        if self.xfsz != libc::SIG_ERR {
            // SAFETY: puts back the disposition `signal` returned, which
            // was valid when it was installed.
            unsafe { libc::signal(libc::SIGXFSZ, self.xfsz) };
        }
        // SAFETY: `mask` is the thread's own earlier mask, a valid
        // sigset_t; a null old-mask pointer is allowed.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.mask, std::ptr::null_mut()) };
    }
}

impl std::fmt::Debug for HeldSignals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HeldSignals")
    }
}
