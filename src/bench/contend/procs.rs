//! `--processes`: every writer and reader a process of its own (the
//! pipespeed binary again, as a hidden worker), and the memory hogs.
//!
//! A worker's pipe end is one of its standard streams and its other
//! standard stream is a Unix socket to the parent, its *control*:
//! - a writer writes messages to stdout; its control is stdin;
//! - a reader reads messages from stdin; its control is stdout;
//! - a memory hog writes one byte to stdout once its memory is written.
//!
//! On the control, the worker says `ready` once its buffer is mapped, the
//! parent answers `go STOP_NS` (when writers stop, in `CLOCK_MONOTONIC`
//! nanoseconds, the same clock in every process) once all are ready, and
//! the worker ends with its report as one JSON line. Readers stop at end
//! of file, when the last writer has exited.

use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Stdio;

use crate::bench::core::watchdog::watch_processes;
use crate::bench::core::worker::failure;
use crate::bench::core::{RoleSpec, RunError, Spawn};
use crate::child::Group;
use crate::sys::{PipePair, fcntl_setpipe_size, pipe};
use serde::{Deserialize, Serialize};

use super::ends::{EndSetup, ReaderEnd, WriterEnd, now_ns, prepare, read_messages, write_messages};
use super::job::{Cell, RawRun, RunSetup};

/// A contend writer, as a worker process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WriterSpec {
    /// Writer number (the id in its messages).
    pub index: usize,
    /// Message size and the rest.
    pub setup: EndSetup,
}

impl RoleSpec for WriterSpec {
    const ROLE: &'static str = "contend-writer";
}

/// A contend reader, as a worker process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ReaderSpec {
    /// Reader number.
    pub index: usize,
    /// Message size and the rest.
    pub setup: EndSetup,
}

impl RoleSpec for ReaderSpec {
    const ROLE: &'static str = "contend-reader";
}

/// A contend writer worker: `control` is its stdin, a Unix socket to
/// the parent; it writes messages into `data`, its stdout.
pub(crate) fn serve_writer(
    control: BorrowedFd<'_>,
    data: BorrowedFd<'_>,
    index: usize,
    setup: &EndSetup,
) -> io::Result<()> {
    serve_end(stream(control)?, data, Some(index), 0, setup)
}

/// A contend reader worker: `control` is its stdout, a Unix socket to
/// the parent; it reads messages from `data`, its stdin.
pub(crate) fn serve_reader(
    control: BorrowedFd<'_>,
    data: BorrowedFd<'_>,
    index: usize,
    setup: &EndSetup,
) -> io::Result<()> {
    serve_end(stream(control)?, data, None, index, setup)
}

fn stream(fd: BorrowedFd<'_>) -> io::Result<UnixStream> {
    fd.try_clone_to_owned().map(UnixStream::from)
}

fn serve_end(
    control: UnixStream,
    data: BorrowedFd<'_>,
    writer: Option<usize>,
    reader: usize,
    setup: &EndSetup,
) -> io::Result<()> {
    let prepared = prepare(setup, writer.is_some())?;
    (&control).write_all(b"ready\n")?;
    let mut line = String::new();
    BufReader::new(&control).read_line(&mut line)?;
    let stop_ns = line
        .strip_prefix("go ")
        .and_then(|t| t.trim().parse::<u64>().ok())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("expected 'go STOP_NS' from the parent, got {line:?}"),
            )
        })?;
    let mut report = match writer {
        Some(index) => serde_json::to_vec(&write_messages(data, index, setup, prepared, stop_ns)?)?,
        None => serde_json::to_vec(&read_messages(data, reader, setup, prepared)?)?,
    };
    report.push(b'\n');
    (&control).write_all(&report)
}

struct Running {
    index: usize,
    control: BufReader<UnixStream>,
    label: String,
}

impl Running {
    fn line(&mut self, group: &mut Group, doing: &str) -> Result<String, RunError> {
        let mut line = String::new();
        match self.control.read_line(&mut line) {
            Ok(n) if n > 0 && line.ends_with('\n') => Ok(line),
            _ => Err(failure(group, self.index, &self.label, doing)),
        }
    }
}

/// One run of `cell` with every end a process.
pub(super) fn run(cell: Cell, setup: &RunSetup, exe: &Path) -> Result<RawRun, RunError> {
    let io = |e: io::Error| RunError::from_io(&e);
    let PipePair { read, write } = pipe().map_err(io)?;
    fcntl_setpipe_size(&write, setup.pipe_size).map_err(io)?;
    let mut group = Group::new();
    let mut workers = Vec::new();
    for i in 0..cell.readers + cell.writers {
        let is_writer = i >= cell.readers;
        let (ours, theirs) = UnixStream::pair().map_err(io)?;
        let theirs = Stdio::from(OwnedFd::from(theirs));
        let (spec, label, data) = if is_writer {
            let index = i - cell.readers;
            let setup = setup.end(cell, true);
            let spec = Spawn::new(&WriterSpec { index, setup }, None);
            (spec, format!("writer {index}"), &write)
        } else {
            let setup = setup.end(cell, false);
            let spec = Spawn::new(&ReaderSpec { index: i, setup }, None);
            (spec, format!("reader {i}"), &read)
        };
        let data = Stdio::from(data.try_clone().map_err(io)?);
        let (stdin, stdout) = if is_writer {
            (theirs, data)
        } else {
            (data, theirs)
        };
        let mut cmd = spec.command(exe);
        cmd.stdin(stdin).stdout(stdout).stderr(Stdio::piped());
        let index = group.spawn(&mut cmd, label.clone()).map_err(io)?;
        workers.push(Running {
            index,
            control: BufReader::new(ours),
            label,
        });
    }
    // Only the workers hold the pipe now: readers see end of file when the
    // last writer exits, writers see EPIPE if every reader is gone.
    drop((read, write));
    // A worker that stops making progress is killed with the others, so
    // every read below ends; the stall is the run's error.
    let pids = workers
        .iter()
        .map(|w| (w.label.clone(), group.child(w.index).id()))
        .collect();
    let watch = watch_processes(pids, setup.stall_timeout).map_err(io)?;
    let talked = talk(&mut group, &mut workers, cell, setup);
    match watch.finish() {
        Some(stall) => Err(RunError::Stalled(Box::new(stall))),
        None => talked,
    }
}

/// The run's exchange with its started workers: `ready`, `go`, their
/// reports, their ends.
fn talk(
    group: &mut Group,
    workers: &mut [Running],
    cell: Cell,
    setup: &RunSetup,
) -> Result<RawRun, RunError> {
    let io = |e: io::Error| RunError::from_io(&e);
    for w in workers.iter_mut() {
        let line = w.line(group, "starting")?;
        if line != "ready\n" {
            return Err(RunError::Failed(format!(
                "{} said {line:?}, not ready",
                w.label
            )));
        }
    }
    let go = format!("go {}\n", now_ns() + setup.duration_ns);
    for w in workers.iter_mut() {
        if w.control.get_ref().write_all(go.as_bytes()).is_err() {
            return Err(failure(group, w.index, &w.label, "starting"));
        }
    }
    // Writers first: readers only finish once every writer has exited.
    let (readers, writers) = workers.split_at_mut(cell.readers);
    let mut raw = RawRun::default();
    for w in writers {
        let line = w.line(group, "writing")?;
        raw.writers.push(parse::<WriterEnd>(&line, &w.label)?);
    }
    for w in readers {
        let line = w.line(group, "reading")?;
        raw.readers.push(parse::<ReaderEnd>(&line, &w.label)?);
    }
    for w in workers.iter() {
        let status = group.wait(w.index).map_err(io)?;
        if !status.success() {
            return Err(failure(group, w.index, &w.label, "ending"));
        }
    }
    Ok(raw)
}

fn parse<T: serde::de::DeserializeOwned>(line: &str, label: &str) -> Result<T, RunError> {
    serde_json::from_str(line)
        .map_err(|e| RunError::Failed(format!("unreadable report from {label}: {e}")))
}
