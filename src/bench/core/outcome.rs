//! What became of a row, why a run gave nothing, and how a caller stops a
//! measurement.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::stall::Stall;
use crate::sys::process::interrupted;

/// Exit status of a command, or of a worker, when the machine cannot do
/// what was asked (huge pages not granted, vmsplice refused, io_uring
/// off): nothing was measured, and nothing failed.
pub const EXIT_UNSUPPORTED: i32 = 3;

/// What happened to a row (a rung, a size, a cell, a metric of a row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every run measured.
    Ok,
    /// The machine cannot do this; nothing was measured.
    Unavailable,
    /// A run failed; the runs before it are kept.
    Failed,
}

/// Why a run gave nothing. Workers send it to the process that runs them
/// as it is (serialized, `{"unavailable": "why"}`), not as an exit status
/// and a line of text to read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "lowercase")]
pub enum RunError {
    /// The machine cannot do this (huge pages not granted, vmsplice
    /// refused, a mechanism the kernel lacks).
    #[error("{0}")]
    Unavailable(String),
    /// Something went wrong (a crash, short data, a verify mismatch).
    #[error("{0}")]
    Failed(String),
    /// A task of the run made no progress for the stall timeout: the
    /// watchdog ended the run, and this is where every task was. A row
    /// it stops is failed, and keeps the dump.
    #[error("{0}")]
    Stalled(Box<Stall>),
}

/// What starts a worker's outcome line on its standard error.
const OUTCOME_LINE: &str = "pipespeed worker outcome: ";

impl RunError {
    /// The error of a failed call: [`Unavailable`](RunError::Unavailable)
    /// when the machine refuses (kind [`io::ErrorKind::Unsupported`], as
    /// the library's refusals are), [`Failed`](RunError::Failed) otherwise.
    pub fn from_io(err: &io::Error) -> RunError {
        let why = crate::quote::strerror(err);
        match err.kind() {
            io::ErrorKind::Unsupported => RunError::Unavailable(why),
            _ => RunError::Failed(why),
        }
    }

    /// The line a worker that failed writes on its standard error, last:
    /// this error as JSON, for [`RunError::from_worker`].
    pub fn to_line(&self) -> String {
        // A derived Serialize of a string enum cannot fail.
        format!(
            "{OUTCOME_LINE}{}",
            serde_json::to_string(self).unwrap_or_default()
        )
    }

    /// The error a worker reported on its standard error with
    /// [`RunError::to_line`] (its last such line), or `None`: it wrote
    /// none (it crashed, or was killed).
    pub fn from_worker(stderr: &str) -> Option<RunError> {
        stderr
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix(OUTCOME_LINE))
            .and_then(|json| serde_json::from_str(json).ok())
    }

    /// This error as an `io::Error` for a caller that speaks io: what the
    /// machine cannot do keeps its kind, [`io::ErrorKind::Unsupported`].
    pub fn into_io(self) -> io::Error {
        match self {
            RunError::Unavailable(why) => io::Error::new(io::ErrorKind::Unsupported, why),
            RunError::Failed(why) => io::Error::other(why),
            RunError::Stalled(stall) => io::Error::other(stall.to_string()),
        }
    }

    /// The status a row gets from this error, and the reason.
    pub fn status(&self) -> (Status, String) {
        match self {
            RunError::Unavailable(why) => (Status::Unavailable, why.clone()),
            RunError::Failed(why) => (Status::Failed, why.clone()),
            RunError::Stalled(stall) => (Status::Failed, stall.to_string()),
        }
    }
}

/// How a caller stops a measurement: no run starts once it is cancelled,
/// the run it cuts short counts for nothing, and the result holds the runs
/// made before it, marked `interrupted`.
///
/// Library code never reads a signal itself: a program that wants SIGINT,
/// SIGTERM and SIGHUP to stop a measurement calls
/// `catch_interrupts` and passes
/// [`Cancel::on_signals`]; any other caller passes its own flag.
#[derive(Debug, Clone, Default)]
pub struct Cancel {
    signals: bool,
    flag: Option<Arc<AtomicBool>>,
}

impl Cancel {
    /// Never cancelled.
    pub fn never() -> Cancel {
        Cancel::default()
    }

    /// Cancelled once a signal that
    /// `catch_interrupts` caught
    /// has arrived.
    pub fn on_signals() -> Cancel {
        Cancel {
            signals: true,
            flag: None,
        }
    }

    /// Cancelled once `flag` is set (by another thread, say).
    pub fn on_flag(flag: Arc<AtomicBool>) -> Cancel {
        Cancel {
            signals: false,
            flag: Some(flag),
        }
    }

    /// Whether the measurement should stop.
    pub fn is_cancelled(&self) -> bool {
        (self.signals && interrupted().is_some())
            || self
                .flag
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_error_travels_as_json_and_names_its_status() {
        let err = RunError::Unavailable("huge pages not granted".into());
        let json = serde_json::to_string(&err).unwrap_or_default();
        assert_eq!(json, r#"{"unavailable":"huge pages not granted"}"#);
        let back: Result<RunError, _> = serde_json::from_str(&json);
        assert_eq!(back.ok(), Some(err.clone()));
        assert_eq!(
            err.status(),
            (Status::Unavailable, "huge pages not granted".to_string())
        );
        assert_eq!(RunError::Failed("x".into()).status().0, Status::Failed);
    }

    #[test]
    fn a_worker_reports_its_error_typed_in_its_last_outcome_line() {
        let refused = io::Error::new(io::ErrorKind::Unsupported, "huge pages not granted");
        let err = RunError::from_io(&refused);
        assert_eq!(err, RunError::Unavailable("huge pages not granted".into()));
        let stderr = format!(
            "pipespeed: write: huge pages not granted\n{}\n",
            err.to_line()
        );
        assert_eq!(RunError::from_worker(&stderr), Some(err));
        let crashed = io::Error::other("short read");
        assert_eq!(
            RunError::from_io(&crashed),
            RunError::Failed("short read".into())
        );
        assert_eq!(RunError::from_worker("thread 'main' panicked\n"), None);
        assert_eq!(RunError::from_worker(""), None);
    }

    #[test]
    fn a_flag_cancels_and_never_does_not() {
        let flag = Arc::new(AtomicBool::new(false));
        let cancel = Cancel::on_flag(flag.clone());
        assert!(!cancel.is_cancelled());
        flag.store(true, Ordering::Relaxed);
        assert!(cancel.is_cancelled());
        assert!(!Cancel::never().is_cancelled());
    }
}
