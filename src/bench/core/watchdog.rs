//! The watchdog of every run: its tasks (worker processes or threads)
//! are watched from `/proc`; a run none of whose live tasks makes progress
//! (CPU time or context switches, [`crate::sys::task::counters`]) for the
//! stall timeout is stopped, and its error says where every task sleeps
//! ([`Stall`]) rather than hanging: a pipe_read wake-up bug that hangs a
//! test kernel (`pipespeed kernels`) must end in that evidence and a
//! failed row. The rule in full: docs/contend.md, "The watchdog".
//!
//! What then happens is the runner's part (`on_stall`): worker processes
//! are killed, so the parent's reads end; threads cannot be killed, so
//! the run, in a thread of its own (`threads`), returns the stall at once
//! and leaves them where they sleep (a `D` sleeper keeps the process
//! alive until the kernel lets it go).

use std::io;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub(crate) use super::stall::{Stall, StalledTask};
use crate::sys::task::{self, Counters, Task};

/// The stall timeout when none is given: a minute. A healthy run makes
/// progress every few milliseconds, even under qemu's TCG emulation (28
/// to 235 times slower than the host): a minute without any is a hang.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The shortest stall timeout, in seconds: below it the polling itself
/// would be the load.
pub const MIN_STALL_TIMEOUT_S: f64 = 0.1;
/// The longest stall timeout, in seconds (a day).
pub const MAX_STALL_TIMEOUT_S: f64 = 86_400.0;

/// A task of a run, as the watchdog watches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Watched {
    /// Its name in messages (`writer 0`, `reader 2`, `ponger`).
    pub(crate) label: String,
    /// Where `/proc` has it.
    pub(crate) task: Task,
}

/// Where `watched` is now, `no_progress` after its last progress.
fn read_task(watched: &Watched, no_progress: Duration) -> StalledTask {
    let at = task::locate(watched.task);
    let (stack, stack_unreadable) = match at.stack {
        Ok(frames) => (frames, None),
        Err(why) => (Vec::new(), Some(why)),
    };
    StalledTask {
        label: watched.label.clone(),
        pid: watched.task.pid,
        tid: watched.task.tid,
        no_progress_s: no_progress.as_secs_f64(),
        state: at.state,
        wchan: at.wchan,
        syscall: at.syscall,
        stack,
        stack_unreadable,
    }
}

/// The progress rule on its own: each task's counters and when they last
/// changed.
#[derive(Debug)]
pub(crate) struct Progress {
    tasks: Vec<Seen>,
}

#[derive(Debug, Clone, Copy)]
enum Seen {
    /// Its counters, and when they last changed.
    Alive(Counters, Instant),
    /// It has ended: never stalled.
    Ended,
}

impl Progress {
    /// Tasks first seen at `now` with `counters` (`None`: already ended).
    pub(crate) fn new(counters: &[Option<Counters>], now: Instant) -> Progress {
        Progress {
            tasks: counters
                .iter()
                .map(|c| c.map_or(Seen::Ended, |c| Seen::Alive(c, now)))
                .collect(),
        }
    }

    /// Task `i` read at `now`: changed counters are progress; `None` is
    /// its end.
    pub(crate) fn observe(&mut self, i: usize, counters: Option<Counters>, now: Instant) {
        self.tasks[i] = match (self.tasks[i], counters) {
            (Seen::Alive(old, since), Some(new)) if old == new => Seen::Alive(old, since),
            (Seen::Alive(..), Some(new)) => Seen::Alive(new, now),
            _ => Seen::Ended,
        };
    }

    /// How long task `i` has gone without progress (`None`: ended).
    pub(crate) fn idle(&self, i: usize, now: Instant) -> Option<Duration> {
        match self.tasks[i] {
            Seen::Alive(_, since) => Some(now.saturating_duration_since(since)),
            Seen::Ended => None,
        }
    }

    /// Whether the run is stalled: no task still alive has made progress
    /// for `timeout` (one waiting while another works is not); then the
    /// task that has gone longest without progress.
    pub(crate) fn stalled(&self, now: Instant, timeout: Duration) -> Option<usize> {
        let idle: Vec<(usize, Duration)> = (0..self.tasks.len())
            .filter_map(|i| Some((i, self.idle(i, now)?)))
            .collect();
        if idle.iter().any(|&(_, idle)| idle < timeout) {
            return None;
        }
        idle.into_iter()
            .max_by_key(|&(_, idle)| idle)
            .map(|(i, _)| i)
    }
}

/// A watchdog watching the tasks of one run, in a thread of its own.
/// Dropping it stops the watching.
#[derive(Debug)]
pub(crate) struct Watch {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<Option<Stall>>>,
}

impl Watch {
    /// Watches `tasks` until [`Watch::finish`]: once one has made no
    /// progress for `timeout`, reads where every task still alive is,
    /// calls `on_stall` with it (the runner ends the run there: kills its
    /// processes, wakes its threads) and stops watching.
    pub(crate) fn start(
        tasks: Vec<Watched>,
        timeout: Duration,
        on_stall: impl FnOnce(&Stall) + Send + 'static,
    ) -> io::Result<Watch> {
        let (stop, stopped) = mpsc::channel::<()>();
        let poll = (timeout / 10).clamp(Duration::from_millis(10), Duration::from_secs(1));
        let thread = std::thread::Builder::new()
            .name("watchdog".into())
            .spawn(move || {
                let read = |tasks: &[Watched]| -> Vec<Option<Counters>> {
                    tasks.iter().map(|w| task::counters(w.task)).collect()
                };
                let mut progress = Progress::new(&read(&tasks), Instant::now());
                loop {
                    match stopped.recv_timeout(poll) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return None,
                    }
                    let now = Instant::now();
                    for (i, c) in read(&tasks).into_iter().enumerate() {
                        progress.observe(i, c, now);
                    }
                    if progress.stalled(now, timeout).is_some() {
                        let stall = dump(&tasks, &progress, timeout, now);
                        on_stall(&stall);
                        return Some(stall);
                    }
                }
            })
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "cannot start the watchdog thread: {}",
                        crate::quote::strerror(&e)
                    ),
                )
            })?;
        Ok(Watch {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Stops watching; the stall, if one was seen.
    pub(crate) fn finish(mut self) -> Option<Stall> {
        self.end()
    }

    fn end(&mut self) -> Option<Stall> {
        drop(self.stop.take());
        self.thread.take().and_then(|t| t.join().ok().flatten())
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.end();
    }
}

/// Where every task still alive is, in [`order`].
fn dump(tasks: &[Watched], progress: &Progress, timeout: Duration, now: Instant) -> Stall {
    let mut read: Vec<StalledTask> = (0..tasks.len())
        .filter_map(|i| {
            let idle = progress.idle(i, now)?;
            Some(read_task(&tasks[i], idle))
        })
        .collect();
    order(&mut read);
    Stall {
        timeout_s: timeout.as_secs_f64(),
        tasks: read,
    }
}

/// A stopped task (`T`, `t`) or one in uninterruptible sleep (`D`)
/// first, since the others wait for it (even when it stopped after they
/// began to wait), then the longest without progress.
fn order(tasks: &mut [StalledTask]) {
    let waits = |t: &StalledTask| {
        let state = t.state.as_deref().and_then(|s| s.chars().next());
        !matches!(state, Some('T' | 't' | 'D'))
    };
    tasks.sort_by(|a, b| {
        (waits(a), b.no_progress_s)
            .partial_cmp(&(waits(b), a.no_progress_s))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
}

/// Watches worker processes `workers` (with their labels); on a stall,
/// kills them all: see [`watch_run`].
pub(crate) fn watch_processes(workers: Vec<(String, u32)>, timeout: Duration) -> io::Result<Watch> {
    let tasks = workers
        .into_iter()
        .map(|(label, pid)| Watched {
            label,
            task: Task::process(pid),
        })
        .collect();
    watch_run(tasks, timeout)
}

/// Watches the tasks of a run (worker processes, and threads of this
/// process that talk to them); on a stall, kills every worker process
/// with SIGKILL (a stopped one too), so that every read of their pipes
/// and sockets ends, and with it the run's threads here. Each is killed
/// through a pidfd opened now, while it is surely ours and unreaped:
/// never a process that reused the PID of one reaped meanwhile. A kernel
/// without `pidfd_open` (before 5.3) gets the plain PID.
pub(crate) fn watch_run(tasks: Vec<Watched>, timeout: Duration) -> io::Result<Watch> {
    use rustix::process::{Pid, PidfdFlags, Signal, kill_process, pidfd_open, pidfd_send_signal};
    let handles: Vec<(u32, Option<std::os::fd::OwnedFd>)> = tasks
        .iter()
        .filter(|w| w.task.tid.is_none())
        .map(|w| {
            let pid = w.task.pid;
            let fd =
                Pid::from_raw(pid as i32).and_then(|p| pidfd_open(p, PidfdFlags::empty()).ok());
            (pid, fd)
        })
        .collect();
    Watch::start(tasks, timeout, move |_| {
        for (pid, fd) in &handles {
            let _ = match (fd, Pid::from_raw(*pid as i32)) {
                (Some(fd), _) => pidfd_send_signal(fd, Signal::KILL),
                (None, Some(pid)) => kill_process(pid, Signal::KILL),
                (None, None) => Ok(()),
            };
        }
    })
}

/// The calling thread, as the watchdog watches it.
pub(crate) fn this_thread(label: &str) -> Watched {
    let tid = rustix::thread::gettid().as_raw_nonzero().get() as u32;
    Watched {
        label: label.to_string(),
        task: Task::own_thread(tid),
    }
}

mod threads;
pub(crate) use threads::{Roster, run_threads};

#[cfg(test)]
mod tests;
