//! The transfer in a thread of its own, so that SIGINT, SIGTERM or
//! SIGHUP ends pv at once (status 32) even while the transfer is held in
//! an open, a read or a write.

use std::sync::Arc;
use std::time::Duration;

use crate::sys::process;

use super::{EXIT_MEMORY, EXIT_SIGNAL, EXIT_TRANSFER, Invocation};
use crate::cli::strerror;

/// Runs `work` (opening the targets, the copy, or -d's watch) in a thread
/// of its own, and returns what it returns, or `Err` with pv's status 32
/// as soon as SIGINT, SIGTERM or SIGHUP comes (said on stderr, as pv 1.12
/// says it, after `before_saying` has run): the caller then returns from
/// `main`, removing the pidfile and the control socket, while the thread
/// may still be blocked in an open, a read or a write.
pub(super) fn until_signalled<T: Send + 'static>(
    me: &Invocation,
    before_saying: impl FnOnce(),
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, u8> {
    use rustix::event::{EventfdFlags, PollFd, PollFlags, eventfd, poll};
    let cannot_start = |err: std::io::Error| {
        me.say(&format!("cannot start the transfer: {}", strerror(&err)));
        EXIT_MEMORY
    };
    // Told through an eventfd, not a channel: a blocking receive would
    // give the main thread a `Thread` handle that valgrind, at exit,
    // calls "possibly lost" (pv's memory-safety tests).
    let finished = Arc::new(eventfd(0, EventfdFlags::CLOEXEC).map_err(|e| cannot_start(e.into()))?);
    let tell = Arc::clone(&finished);
    let worker = std::thread::Builder::new()
        .name("pv-transfer".into())
        .spawn(move || {
            let done = work();
            let _ = rustix::io::write(&*tell, &1u64.to_ne_bytes());
            done
        })
        .map_err(cannot_start)?;
    let timeout = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: SIGNAL_POLL.as_nanos() as i64,
    };
    loop {
        // Joined once it is done (or has panicked): a thread left running
        // at exit is memory valgrind calls "possibly lost".
        if worker.is_finished() {
            // A panic: nothing came.
            return worker.join().map_err(|_| EXIT_TRANSFER);
        }
        if let Some(signal) = process::interrupted() {
            before_saying();
            me.say(&format!("interrupted by a signal: {}", signal_text(signal)));
            return Err(EXIT_SIGNAL);
        }
        let mut fds = [PollFd::new(&*finished, PollFlags::IN)];
        // EINTR: a signal came, looked at above at once.
        if poll(&mut fds, Some(&timeout)).is_ok_and(|n| n > 0) {
            // Told: the thread is returning its value.
            return worker.join().map_err(|_| EXIT_TRANSFER);
        }
    }
}

/// How often the main thread looks for a caught signal while the
/// transfer runs: the signal handler only sets a flag.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// strsignal(3)'s words for the signals pv stops on, as pv 1.12 says them.
fn signal_text(signal: i32) -> String {
    match signal {
        libc::SIGINT => "Interrupt".into(),
        libc::SIGTERM => "Terminated".into(),
        libc::SIGHUP => "Hangup".into(),
        other => process::signal_name(other),
    }
}
