//! Threads (the default, as pipe_bench runs them): every writer and
//! reader a thread of this process, each with its own descriptor of the
//! one pipe.

use std::io;
use std::os::fd::AsFd;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread;

use crate::sys::{PipePair, fcntl_setpipe_size, pipe};

use crate::bench::core::RunError;
use crate::bench::core::watchdog::{Roster, run_threads};

use super::ends::{now_ns, prepare, read_messages, write_messages};
use super::job::{Cell, RawRun, RunSetup};

/// Where the threads wait until all are ready, then learn when to stop
/// (or that the run is off).
struct Gate {
    state: Mutex<(usize, Option<Option<u64>>)>,
    changed: Condvar,
}

impl Gate {
    fn lock(&self) -> MutexGuard<'_, (usize, Option<Option<u64>>)> {
        // A poisoned lock only means a thread panicked; the counts stay
        // meaningful.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Says "ready" and waits for the decision: `Some(stop_ns)` or `None`
    /// (the run is off).
    fn arrive(&self) -> Option<u64> {
        let mut s = self.lock();
        s.0 += 1;
        self.changed.notify_all();
        while s.1.is_none() {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.1.flatten()
    }

    fn wait_for(&self, count: usize) {
        let mut s = self.lock();
        while s.0 < count {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn decide(&self, stop_ns: Option<u64>) {
        self.lock().1 = Some(stop_ns);
        self.changed.notify_all();
    }
}

fn called_off() -> io::Error {
    io::Error::other("the run was called off before it started")
}

/// One run of `cell` with every end a thread, watched: a run whose end
/// stalls returns the stall at once (`core::watchdog::run_threads`).
pub(super) fn run(cell: Cell, setup: &RunSetup) -> Result<RawRun, RunError> {
    let owned = setup.clone();
    run_threads(setup.stall_timeout, move |roster| {
        ends(cell, &owned, roster)
    })?
    .map_err(|e| RunError::from_io(&e))
}

fn ends(cell: Cell, setup: &RunSetup, roster: &Roster) -> io::Result<RawRun> {
    let PipePair { read, write } = pipe()?;
    fcntl_setpipe_size(&write, setup.pipe_size)?;
    // Every end gets its own descriptor, made before any thread starts: a
    // writer's closes when it stops, so readers see end of file after the
    // last one.
    let read_ends = (0..cell.readers)
        .map(|_| read.try_clone())
        .collect::<io::Result<Vec<_>>>()?;
    let write_ends = (0..cell.writers)
        .map(|_| write.try_clone())
        .collect::<io::Result<Vec<_>>>()?;
    drop((read, write));
    let gate = Gate {
        state: Mutex::new((0, None)),
        changed: Condvar::new(),
    };
    let gate = &gate;
    thread::scope(|s| {
        let mut readers = Vec::new();
        let mut writers = Vec::new();
        let mut failed = None;
        for (i, fd) in read_ends.into_iter().enumerate() {
            let end = setup.end(cell, false);
            let spawned = thread::Builder::new()
                .name(format!("reader {i}"))
                .spawn_scoped(s, move || {
                    roster.enlist(format!("reader {i}"));
                    let prepared = prepare(&end, false);
                    let go = gate.arrive();
                    go.ok_or_else(called_off)?;
                    read_messages(fd.as_fd(), i, &end, prepared?)
                });
            match spawned {
                Ok(handle) => readers.push(handle),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        for (i, fd) in write_ends.into_iter().enumerate() {
            if failed.is_some() {
                break;
            }
            let end = setup.end(cell, true);
            let spawned = thread::Builder::new()
                .name(format!("writer {i}"))
                .spawn_scoped(s, move || {
                    roster.enlist(format!("writer {i}"));
                    let prepared = prepare(&end, true);
                    let stop_ns = gate.arrive().ok_or_else(called_off)?;
                    write_messages(fd.as_fd(), i, &end, prepared?, stop_ns)
                });
            match spawned {
                Ok(handle) => writers.push(handle),
                Err(e) => failed = Some(e),
            }
        }
        gate.wait_for(readers.len() + writers.len());
        if failed.is_none()
            && let Err(e) = roster.watch()
        {
            failed = Some(e);
        }
        gate.decide(match failed {
            None => Some(now_ns() + setup.duration_ns),
            Some(_) => None,
        });
        let panicked = |who: &str| io::Error::other(format!("a {who} thread panicked"));
        let writers: Vec<_> = writers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(panicked("writer"))))
            .collect();
        let readers: Vec<_> = readers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(panicked("reader"))))
            .collect();
        if let Some(e) = failed {
            return Err(io::Error::new(
                e.kind(),
                format!("cannot start a thread: {}", crate::quote::strerror(&e)),
            ));
        }
        Ok(RawRun {
            writers: writers.into_iter().collect::<io::Result<_>>()?,
            readers: readers.into_iter().collect::<io::Result<_>>()?,
        })
    })
}
