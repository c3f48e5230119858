//! What a stalled run leaves: where every task of the run was when one
//! of them stopped making progress ([`Stall`]), in the row's JSON, in
//! the run's error ([`RunError::Stalled`](super::RunError::Stalled)) and,
//! in one line, in its message. The watchdog (`watchdog`) fills it in.

use std::fmt;
use std::io;

use serde::{Deserialize, Serialize};

/// What a stalled run leaves: where every task of the run was when one
/// of them had made no progress for the timeout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stall {
    /// The stall timeout, in seconds.
    pub timeout_s: f64,
    /// Every task of the run still alive: a stopped one (`T`) or one in
    /// `D` first, then the longest without progress; the first is the
    /// one named as stalled.
    pub tasks: Vec<StalledTask>,
}

/// One task of a stalled run, as `/proc` showed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StalledTask {
    /// Its name (`writer 0`).
    pub label: String,
    /// Its process.
    pub pid: u32,
    /// Its thread, for a worker thread (`None`: a worker process).
    pub tid: Option<u32>,
    /// Seconds since its CPU time or context switches last changed.
    pub no_progress_s: f64,
    /// `status`'s state: `T (stopped)`, `S (sleeping)`, `D (disk sleep)`
    /// (`None`: it ended while being read).
    pub state: Option<String>,
    /// The kernel function it sleeps in (`None`: running, or unreadable).
    pub wchan: Option<String>,
    /// The system call it is in, with its first three arguments, or what
    /// `/proc/PID/syscall` says instead, or why it could not be read.
    pub syscall: String,
    /// Its kernel stack (`/proc/PID/stack`), a frame a line; empty when
    /// unreadable.
    pub stack: Vec<String>,
    /// Why the stack could not be read (`unreadable: Permission denied`
    /// without root); `None` when it was.
    pub stack_unreadable: Option<String>,
}

impl StalledTask {
    /// `state T (stopped), wchan do_signal_stop, syscall read(...)`.
    fn place(&self) -> String {
        format!(
            "state {}, wchan {}, syscall {}",
            self.state.as_deref().unwrap_or("gone"),
            self.wchan.as_deref().unwrap_or("none"),
            self.syscall
        )
    }

    /// The stack's functions, innermost first, on one line.
    fn frames(&self) -> String {
        if let Some(why) = &self.stack_unreadable {
            return why.clone();
        }
        let names: Vec<&str> = self
            .stack
            .iter()
            .map(|l| {
                // `[<0>] pipe_read+0x2b0/0x4a0`: the function.
                let l = l.split_once("] ").map_or(l.as_str(), |(_, f)| f);
                l.split('+').next().unwrap_or(l)
            })
            .take(MESSAGE_FRAMES)
            .collect();
        match names.len() {
            0 => "empty".to_string(),
            n if n < self.stack.len() => format!("{} <- ...", names.join(" <- ")),
            _ => names.join(" <- "),
        }
    }
}

/// Frames of a stack the one-line message shows (the JSON has them all).
const MESSAGE_FRAMES: usize = 6;

impl fmt::Display for Stall {
    /// One line: `writer 0 stalled: no progress for 2.0 s: state T
    /// (stopped), wchan do_signal_stop, syscall ...; stack: ...`, then
    /// where the others were.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some((first, others)) = self.tasks.split_first() else {
            return write!(f, "stalled: no progress for {} s", self.timeout_s);
        };
        write!(
            f,
            "{} stalled: no progress for {:.1} s (--stall-timeout {}): {}; stack: {}",
            first.label,
            first.no_progress_s,
            self.timeout_s,
            first.place(),
            first.frames()
        )?;
        for t in others {
            write!(
                f,
                "; {} (no progress for {:.1} s): {}",
                t.label,
                t.no_progress_s,
                t.place()
            )?;
        }
        Ok(())
    }
}

/// A stall as the error of a runner whose errors are `io::Error`s (the
/// latency jobs'): `Stall::of_io` takes it back out.
impl std::error::Error for Stall {}

impl Stall {
    /// The stall as an `io::Error`, for a runner that returns those.
    pub(crate) fn into_io(self) -> io::Error {
        io::Error::other(self)
    }

    /// The stall an `io::Error` carries, if it is one.
    pub(crate) fn of_io(err: &io::Error) -> Option<&Stall> {
        err.get_ref()?.downcast_ref::<Stall>()
    }
}
