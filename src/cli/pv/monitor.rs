//! `pv -M SIDE -- COMMAND...`: runs the command with the metered sides
//! piped through us ([`crate::pv::monitor`]), draws one meter a side,
//! and exits with the command's status (pv 1.12 exits 0 whatever the
//! command did: docs/pv.md, "-M: metering a command").

use std::ffi::OsString;
use std::io;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use crate::copy::{CopyError, Side as CopySide};
use crate::pv::copy::Transfer;
use crate::pv::display::{Display, Settings, draw, lock};
use crate::pv::monitor::{self, Drawn, Event, Metered, Sides};
use crate::sys::process;

use super::args::Side;
use super::pidfile::PidFile;
use super::targets::Output;
use super::{EXIT_TRANSFER, Invocation, PvArgs, Reading, regular_size, targets};
use crate::cli::strerror;

/// Runs `-M`: `settings` as `run` made them from the options (without
/// a size), `size` the one `-s` gave, `show` whether to draw.
pub(super) fn run(
    args: &PvArgs,
    me: &Invocation,
    side: Side,
    settings: Settings,
    size: Option<u64>,
    show: bool,
) -> ExitCode {
    let metered = match side {
        Side::In => Metered::Input,
        Side::Out => Metered::Output,
        Side::Both => Metered::Both,
    };
    let command: Vec<OsString> = args.files.iter().map(|p| p.clone().into()).collect();
    if command.is_empty() {
        return me.usage("-M: a command to run must be specified");
    }
    // Checked before any target is opened: a refused buffer leaves the
    // output and the pidfile as they were.
    let buf_size = match super::buffer::buffer_size(args, me) {
        Ok(size) => size,
        Err(code) => return code,
    };
    let stdin: [PathBuf; 1] = ["-".into()];
    let targets = match targets::open(
        me,
        args.discard,
        args.output.as_deref(),
        None,
        args.pidfile.as_deref(),
        &stdin,
    ) {
        Ok(targets) => targets,
        Err(status) => return ExitCode::from(status),
    };
    let _pidfile = match PidFile::write_asked(me, args.pidfile.as_deref(), &stdin, Some(&targets)) {
        Ok(pidfile) => pidfile,
        Err(status) => return status,
    };
    // An unmetered standard output is pv's output all the same (`-o`,
    // `-X`), as pv 1.12 has it.
    let child_stdout = match (&targets.output, metered.output()) {
        (Output::File(file), false) => match file.try_clone() {
            Ok(file) => Some(Stdio::from(file)),
            Err(err) => {
                me.say(&format!("cannot pass the output on: {}", strerror(&err)));
                return ExitCode::from(super::EXIT_ACCESS);
            }
        },
        _ => None,
    };
    let child = match monitor::spawn(&command, metered, child_stdout) {
        Ok(child) => child,
        Err(err) => {
            me.say(&format!(
                "cannot run {}: {}",
                err.program.to_string_lossy(),
                strerror(&err.error)
            ));
            return ExitCode::from(err.status());
        }
    };
    // The input side's size: -s, or standard input's when it is a file.
    let in_size = size.or_else(|| regular_size("-".as_ref()).filter(|_| !args.line_mode));
    let displays = [(in_size, 0), (size, 1)].map(|(size, at)| {
        let mut settings = settings.clone();
        settings.size = size;
        // One -F or -N for both sides; given twice, the first is the
        // input side's, the last the output side's.
        let pick = |given: &[String]| match at {
            0 => given.first().cloned(),
            _ => given.last().cloned(),
        };
        settings.format = pick(&args.formats);
        settings.items.name = pick(&args.names);
        super::display(args, show, Arc::new(Mutex::new(settings)))
    });
    let transfer = |display: &Display| {
        let format = lock(&display.settings).format();
        Transfer::new(super::inputs::transfer_options(
            args,
            buf_size,
            size,
            format.last_written(),
            format.previous_line().is_some(),
        ))
    };
    let (input, output) = (transfer(&displays[0]), transfer(&displays[1]));
    let readings = [
        Reading::of(&input, None),
        Reading::of(&output, Some(targets.output.fd())),
    ];
    let sides = Sides {
        input: metered
            .input()
            .then(|| (input, Box::new(io::stdin()) as Box<dyn AsFd + Send>)),
        output: metered.output().then(|| (output, sink(targets.output))),
    };
    let start = Instant::now();
    let (events, happened) = mpsc::channel::<Event>();
    // The one-side meter ends when this closes.
    let (done_tx, done) = mpsc::channel::<()>();
    let ran = std::thread::scope(|scope| {
        let drawer = show.then(|| {
            let (readings, displays) = (&readings, &displays);
            scope.spawn(move || match metered {
                Metered::Both => {
                    let sides = [0, 1].map(|i| Drawn {
                        display: &displays[i],
                        source: &readings[i],
                    });
                    let ratio = args.formats.is_empty();
                    monitor::draw_pair(sides, ratio, start, &happened, &io::stderr());
                }
                // One side: the meter of a plain pv, done when the run is.
                _ => {
                    let i = usize::from(metered == Metered::Output);
                    draw(&displays[i], &readings[i], start, &done, &io::stderr());
                }
            })
        });
        let ran = monitor::run(child, sides, &process::interrupted, &events);
        // The drawer ends on this, not on the channel's end: an input
        // side let go may still hold a sender.
        let _ = events.send(Event::Finished);
        drop((events, done_tx));
        if let Some(drawer) = drawer {
            let _ = drawer.join();
        }
        ran
    });
    for cursor in displays.iter().filter_map(|d| d.cursor.as_ref()) {
        cursor.leave();
    }
    let outcome = match ran {
        Ok(outcome) => outcome,
        Err(err) => {
            me.say(&format!("cannot run the command: {}", strerror(&err)));
            return ExitCode::from(EXIT_TRANSFER);
        }
    };
    let mut failed = false;
    for (side, ended) in [("input", outcome.input), ("output", outcome.output)] {
        if let Some(Err(err)) = ended {
            failed |= say_failure(me, side, &err);
        }
    }
    // The command's status; a command that succeeded while its bytes
    // could not all be moved is no success (pv's 16).
    ExitCode::from(match outcome.status {
        0 if failed => EXIT_TRANSFER,
        status => status,
    })
}

/// Where the output side's bytes go.
fn sink(output: Output) -> Box<dyn AsFd + Send> {
    match output {
        Output::Stdout(stdout) => Box::new(stdout),
        Output::File(file) => Box::new(file),
    }
}

/// Says what failed on a side; whether it counts as a failure (our own
/// reader going away on the output side does not: the command was told).
fn say_failure(me: &Invocation, side: &str, err: &CopyError) -> bool {
    let what = match (side, err.side) {
        (_, CopySide::Output) if err.source.kind() == io::ErrorKind::BrokenPipe => return false,
        ("input", CopySide::Input) => "-: read failed",
        ("input", CopySide::Output) => "the command's standard input: write failed",
        (_, CopySide::Input) => "the command's standard output: read failed",
        (_, CopySide::Output) => "write failed",
    };
    me.say(&format!("{what}: {}", strerror(&err.source)));
    true
}
