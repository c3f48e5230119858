//! An end of a run that is a thread of this process (the pinger of
//! `latency` and `ipc`), waited for until it ends or until SIGINT,
//! SIGTERM or SIGHUP comes, whichever is first.
//!
//! The signal handler kills the other end, a worker process
//! ([`crate::sys::process::kill_on_interrupt`]), but nothing wakes a
//! thread of ours that waits for it: a dead peer ends a pipe or a stream
//! socket (end of file, `EPIPE`), not a futex of a shared-memory ring, a
//! datagram socket or a message queue, whose waits last the ends'
//! silence timeout (30 s). So the runner does not join such a thread
//! once a signal came: it is left to end by itself, and the process,
//! which ends within a second, takes it along.

use std::io;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::sys::process::interrupted;

/// How often a wait for an end looks for a signal.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// A thread running one end of a run; see the module.
pub(crate) struct EndThread<T> {
    done: mpsc::Receiver<T>,
    thread: JoinHandle<()>,
}

impl<T: Send + 'static> EndThread<T> {
    /// Starts `work` on a thread called `name`.
    pub(crate) fn spawn(name: &str, work: impl FnOnce() -> T + Send + 'static) -> io::Result<Self> {
        let (tell, done) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                let _ = tell.send(work());
            })?;
        Ok(EndThread { done, thread })
    }

    /// What the end's work returned; `Ok(None)` when SIGINT, SIGTERM or
    /// SIGHUP came first (the thread is then left running: see the
    /// module), an error when the thread panicked.
    pub(crate) fn join(self) -> io::Result<Option<T>> {
        loop {
            match self.done.recv_timeout(SIGNAL_POLL) {
                Ok(value) => {
                    let _ = self.thread.join();
                    return Ok(Some(value));
                }
                Err(RecvTimeoutError::Timeout) if interrupted().is_some() => return Ok(None),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    let name = self.thread.thread().name().unwrap_or("end").to_string();
                    let _ = self.thread.join();
                    return Err(io::Error::other(format!("the {name} thread panicked")));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_end_s_value_comes_back_and_a_panic_is_an_error() {
        let end = EndThread::spawn("test end", || 7).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(end.join().ok().flatten(), Some(7));
        let end = EndThread::spawn("test end", || -> u8 { panic!("on purpose") })
            .unwrap_or_else(|e| panic!("{e}"));
        let err = end.join().err().map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("the test end thread panicked"));
    }
}
