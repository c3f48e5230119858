//! The watchdog of every run: the tasks of a run (worker processes, or
//! worker threads) watched from `/proc` while it lasts; a task that
//! makes no progress for the stall timeout stops the run, and the run's
//! error says where every task sleeps ([`Stall`]), instead of a hang.
//!
//! Why: in 2025 a change to pipe_read's wake-ups made hackbench hang,
//! and the first thing the maintainer asked for was `/proc/PID/stack` of
//! the sleepers. A run on a kernel with such a bug (`pipespeed kernels`
//! boots test kernels and runs `contend` in them) must end with that
//! evidence and a failed row, not wait for ever.
//!
//! Progress is seen without changing the workers: a task progresses
//! when its time on a CPU or its context switches change
//! ([`crate::sys::task::counters`]); one that sleeps and is never woken,
//! or is stopped, changes neither. A task that has ended is not stalled.
//! The tasks are read every tenth of the timeout (at least every second,
//! at most every 10 ms), so a stall is seen within 1.1 timeouts.
//!
//! What then happens to the tasks is the runner's part (`on_stall`):
//! worker processes are killed (SIGKILL ends a stopped process too), so
//! the parent's reads end; worker threads are woken by a signal so that
//! their blocking call returns `EINTR`. A task in uninterruptible sleep
//! (`D`) cannot be woken by anything: a thread stuck there keeps its
//! process alive until the kernel lets it go, and only the report says
//! so.

use std::fmt;
use std::io;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::outcome::RunError;
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
    fn read(watched: &Watched, no_progress: Duration) -> StalledTask {
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

    /// The task that has gone longest without progress, if that is at
    /// least `timeout`.
    pub(crate) fn stalled(&self, now: Instant, timeout: Duration) -> Option<usize> {
        (0..self.tasks.len())
            .filter_map(|i| Some((i, self.idle(i, now)?)))
            .filter(|&(_, idle)| idle >= timeout)
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

/// Where every task still alive is: a stopped one (`T`) or one in
/// uninterruptible sleep (`D`) first, since the others, asleep, wait for
/// it (it may have stopped after they began to wait: a ponger stopped
/// while the pinger waited for its first answer); then by time without
/// progress, longest first.
fn dump(tasks: &[Watched], progress: &Progress, timeout: Duration, now: Instant) -> Stall {
    let mut read: Vec<(Duration, StalledTask)> = (0..tasks.len())
        .filter_map(|i| {
            let idle = progress.idle(i, now)?;
            Some((idle, StalledTask::read(&tasks[i], idle)))
        })
        .collect();
    let waits = |t: &StalledTask| {
        let state = t.state.as_deref().and_then(|s| s.chars().next());
        !matches!(state, Some('T' | 't' | 'D'))
    };
    read.sort_by_key(|(idle, t)| (waits(t), std::cmp::Reverse(*idle)));
    Stall {
        timeout_s: timeout.as_secs_f64(),
        tasks: read.into_iter().map(|(_, t)| t).collect(),
    }
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

/// A stall as the error of a runner whose errors are `io::Error`s (the
/// latency and ladder jobs'): [`Stall::of_io`] takes it back out.
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

/// The threads of one run, as they start: each end thread enlists
/// itself ([`Roster::enlist`]), and the run starts the watchdog on them
/// once all have ([`Roster::watch`]). See [`run_threads`].
pub(crate) struct Roster {
    timeout: Duration,
    tasks: Mutex<Vec<Watched>>,
    watch: Mutex<Option<Watch>>,
    on_stall: Arc<dyn Fn(&Stall) + Send + Sync>,
}

impl Roster {
    /// Enlists the calling thread as `label`.
    pub(crate) fn enlist(&self, label: String) {
        lock(&self.tasks).push(this_thread(&label));
    }

    /// Starts watching the threads enlisted so far.
    pub(crate) fn watch(&self) -> io::Result<()> {
        let tasks = lock(&self.tasks).clone();
        let on_stall = self.on_stall.clone();
        let watch = Watch::start(tasks, self.timeout, move |stall| on_stall(stall))?;
        *lock(&self.watch) = Some(watch);
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means an end thread panicked.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How a run in threads ended.
enum Ended<T> {
    Done(T),
    Stalled(Stall),
}

/// Runs `work`, a run whose ends are threads of this process, in a
/// thread of its own, so that a stall cannot hang the caller: once the
/// watchdog sees one of the enlisted threads make no progress for
/// `timeout`, this returns the stall at once. The run's threads are then
/// left behind, blocked where the dump says: a thread cannot be killed,
/// and one blocked in a system call returns only when the kernel wakes
/// it (never, in `D`, or when the wake-up was lost). They end with the
/// process; until then they hold their own descriptors and nothing of
/// the caller's.
pub(crate) fn run_threads<T: Send + 'static>(
    timeout: Duration,
    work: impl FnOnce(&Roster) -> T + Send + 'static,
) -> Result<T, RunError> {
    let (tx, ended) = mpsc::channel::<Ended<T>>();
    let stalled = Mutex::new(tx.clone());
    let roster = Roster {
        timeout,
        tasks: Mutex::new(Vec::new()),
        watch: Mutex::new(None),
        on_stall: Arc::new(move |stall: &Stall| {
            let _ = lock(&stalled).send(Ended::Stalled(stall.clone()));
        }),
    };
    std::thread::Builder::new()
        .name("run".into())
        .spawn(move || {
            let out = work(&roster);
            let watch = lock(&roster.watch).take();
            // A stall already went to the caller.
            if watch.and_then(Watch::finish).is_none() {
                let _ = tx.send(Ended::Done(out));
            }
        })
        .map_err(|e| RunError::from_io(&e))?;
    match ended.recv() {
        Ok(Ended::Done(out)) => Ok(out),
        Ok(Ended::Stalled(stall)) => Err(RunError::Stalled(Box::new(stall))),
        Err(_) => Err(RunError::Failed("the run's thread panicked".into())),
    }
}

#[cfg(test)]
mod tests;
