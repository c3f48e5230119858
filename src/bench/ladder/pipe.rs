//! One run of a pipe rung, `EXE worker WRITER | EXE worker READER`, watched,
//! and what the ends' outcomes say.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::bench::core::RunError;
use crate::bench::core::watchdog::{Watch, watch_processes};
use crate::child::{Group, died, said};

use super::super::profile::perf::first_useful_line;
use super::super::reader::ReadReport;

/// Runs `writer | reader`, the reader printing its report as JSON, and
/// checks the run: what an end says it could not do
/// ([`RunError::from_worker`]) is the run's error, else a reader that
/// failed or saw its input end early fails it. With a `stall_timeout`,
/// an end that makes no progress for that long stops both.
pub(super) fn pipe(
    writer: Command,
    reader: Command,
    stall_timeout: Option<Duration>,
) -> Result<ReadReport, RunError> {
    let mut group = Group::new();
    let (w, r) = start(&mut group, writer, reader)?;
    let watch = match stall_timeout {
        Some(timeout) => {
            let (writer, reader) = (group.child(w).id(), group.child(r).id());
            let ends = vec![("the writer".into(), writer), ("the reader".into(), reader)];
            Some(watch_processes(ends, timeout).map_err(|e| RunError::from_io(&e))?)
        }
        None => None,
    };
    let checked = check(&mut group, w, r);
    match watch.and_then(Watch::finish) {
        Some(stall) => Err(RunError::Stalled(Box::new(stall))),
        None => checked,
    }
}

/// Starts `writer | reader` in `group`: their indexes.
fn start(
    group: &mut Group,
    mut writer: Command,
    mut reader: Command,
) -> Result<(usize, usize), RunError> {
    let failed = |e: std::io::Error| RunError::Failed(crate::quote::strerror(&e));
    writer
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let w = group
        .spawn(&mut writer, "the writer".into())
        .map_err(failed)?;
    let Some(stdout) = group.child(w).stdout.take() else {
        return Err(RunError::Failed("writer has no stdout pipe".to_string()));
    };
    reader
        .stdin(Stdio::from(stdout))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let r = group
        .spawn(&mut reader, "the reader".into())
        .map_err(failed)?;
    // The reader's command holds our copy of the pipe's read end: closed
    // now, the writer sees EPIPE once the reader is done.
    drop(reader);
    Ok((w, r))
}

/// The run of the writer `w` and the reader `r` of `group`, checked.
fn check(group: &mut Group, w: usize, r: usize) -> Result<ReadReport, RunError> {
    let out = group.output(r);
    let writer = group.finish(w, WRITER_EXIT_TIMEOUT);
    let out =
        out.map_err(|e| RunError::Failed(format!("reader: {}", crate::quote::strerror(&e))))?;
    // An end killed by a signal (a crash) is the cause, whatever the
    // other end then said of its pipe.
    let deaths: Vec<String> = [("writer", writer.died()), ("reader", died(out.status))]
        .into_iter()
        .filter_map(|(end, death)| Some(format!("{end}: {}", death?)))
        .collect();
    if !deaths.is_empty() && crate::sys::process::interrupted().is_none() {
        return Err(RunError::Failed(deaths.join("; ")));
    }
    let reader_err = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let (writer_said, reader_said) = (
        RunError::from_worker(&writer.stderr),
        RunError::from_worker(&reader_err),
    );
    // What the machine cannot do, from either end, is the answer.
    for said in [&writer_said, &reader_said] {
        if let Some(RunError::Unavailable(why)) = said {
            return Err(RunError::Unavailable(why.clone()));
        }
    }
    // A reader whose input ended early prints its report: the writer's
    // words say why.
    let report = serde_json::from_slice::<ReadReport>(&out.stdout);
    if !out.status.success() {
        let why = match reader_said {
            Some(RunError::Failed(why)) => why,
            _ => message(&reader_err),
        };
        return Err(RunError::Failed(format!("reader: {why}")));
    }
    let report = report.map_err(|e| RunError::Failed(format!("unreadable reader report: {e}")))?;
    if report.eof {
        let why = match writer_said {
            Some(RunError::Failed(why)) => why,
            _ if writer.stderr.is_empty() => "no message".to_string(),
            _ => message(&writer.stderr),
        };
        return Err(RunError::Failed(format!(
            "writer stopped after {} bytes: {why}",
            report.bytes
        )));
    }
    Ok(report)
}

/// How long a writer whose reader is done may take to exit: it should see
/// EPIPE at once (under perf, once perf has written its data).
const WRITER_EXIT_TIMEOUT: Duration = Duration::from_secs(30);

/// What an end said untyped: its last `pipespeed: ` line without the
/// prefix; else (perf, a panic) the first line that says something.
fn message(stderr: &str) -> String {
    match said(stderr) {
        Some(line) => line.to_string(),
        None => first_useful_line(stderr),
    }
}
