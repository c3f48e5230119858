//! A run whose ends are threads of this process, watched: it runs in a
//! thread of its own, so that a stall returns to the caller at once,
//! whatever the stalled threads do.

use std::io;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::super::outcome::RunError;
use super::{Stall, Watch, Watched, this_thread};

/// The threads of one run, as they start: each end thread enlists
/// itself ([`Roster::enlist`]), and the run starts the watchdog on them
/// once all have ([`Roster::watch`]). See [`run_threads`].
pub(crate) struct Roster {
    timeout: Duration,
    pub(super) tasks: Mutex<Vec<Watched>>,
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

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
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
/// watchdog sees the enlisted threads make no progress for `timeout`,
/// this returns the stall at once and leaves them where they sleep (a
/// thread cannot be killed); they hold only their own descriptors.
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
