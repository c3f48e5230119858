//! `pipespeed pv` (and the binary called `pv`): a pipe meter on the copy
//! engine. The bytes go by splice where the kernel allows; a timer thread
//! draws the display from the engine's byte counter, so the data path
//! never waits for it.

mod args;
mod buffer;
mod inputs;
mod monitor;
mod name;
mod pidfile;
mod signals;
mod targets;
mod watched;

use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::pv::copy::{Lines, Tail, Transfer};
use crate::pv::cursor::Cursor;
use crate::pv::display::{Display, Settings, Source, pipe_fill};
use crate::pv::meter::Items;
use crate::pv::remote::{self, Changes, Controls, Request};
use crate::pv::watch;
use crate::sys::{FdKind, fd_info, process};

pub(super) use args::{PvArgs, SizeSpec, settle};
pub(super) use name::Invocation;

use buffer::buffer_size;
use inputs::{Meter, transfer_options};
use pidfile::PidFile;
use signals::until_signalled;
use targets::Output;

use crate::cli::strerror;

/// pv's exit status bits (pv(1), "EXIT STATUS").
const EXIT_CONTROL: u8 = 1;
const EXIT_ACCESS: u8 = 2;
const EXIT_SAME: u8 = 4;
const EXIT_TRANSFER: u8 = 16;
const EXIT_SIGNAL: u8 = 32;
const EXIT_MEMORY: u8 = 64;

/// The items asked for by letter, and whether any was.
fn items(args: &PvArgs) -> Items {
    Items {
        progress: args.progress,
        timer: args.timer,
        eta: args.eta,
        fineta: args.fineta,
        rate: args.rate,
        average_rate: args.average_rate,
        // pv 1.12: -8 shows the count (`pv -8 -t` draws it and the timer).
        bytes: args.bytes || args.bits,
        buffer_percent: args.buffer_percent,
        last_written: args.last_written.unwrap_or(0),
        name: args.name.clone(),
    }
}

/// [`items`], or pv's default ones (`-p -t -e -r -b`) when none is named,
/// `-n` is not given and `default` holds.
fn items_or_default(args: &PvArgs, default: bool) -> Items {
    let items = items(args);
    if items.is_empty() && !args.numeric && default {
        return Items {
            name: args.name.clone(),
            ..Items::pv_default()
        };
    }
    items
}

/// `SIGPIPE` stays ignored (as the runtime set it), whatever the parent
/// left: pv 1.6 catches it itself, so a reader going away ends pv quietly
/// with 0 whether the parent ignored it or not (tests/pv/stdio.rs). cat
/// restores the inherited disposition instead, because GNU cat dies of it.
pub(super) fn run(args: PvArgs, me: &Invocation) -> ExitCode {
    if args.version {
        return me.print(&name::version());
    }
    if let Some(pid) = args.remote {
        return me.control(pid, &Request::Change(changes(&args)));
    }
    if let Some(pid) = args.query {
        return me.control(pid, &Request::Query);
    }
    // A meter makes files (-P, its control socket, -c's counter) that go
    // when it is stopped: SIGINT, SIGTERM and SIGHUP set a flag the main
    // thread looks at. A second one ends pv at once (a clean-up that
    // blocks, on a FIFO or a full stderr, cannot hold it), removing the
    // pidfile and the socket and killing -M's command first.
    if let Err(err) = process::catch_interrupts() {
        me.say(&strerror(&err));
        return ExitCode::from(EXIT_CONTROL);
    }
    // (-M ends as its command would: 128 + N.)
    process::second_interrupt_status(args.monitor.is_none().then_some(EXIT_SIGNAL));
    // Checked here, not by clap: its message for a missing -s runs over
    // several lines.
    if args.stop_at_size && args.size.is_none() {
        return me.usage("-S (--stop-at-size) needs -s SIZE, the size to stop at");
    }
    let given_size = match &args.size {
        None => None,
        Some(SizeSpec::Bytes(n)) => Some(*n),
        Some(SizeSpec::Of(path)) => match std::fs::metadata(path) {
            Ok(meta) => Some(meta.len()),
            Err(err) => {
                return me.usage(&format!("-s @{}: {}", path.display(), strerror(&err)));
            }
        },
    };
    let stderr = io::stderr();
    // -n writes numbers for scripts: to a file too, as pv's does.
    let show =
        !args.quiet && (args.force || args.numeric || rustix::termios::isatty(stderr.as_fd()));
    let items = items_or_default(&args, args.format.is_none());
    let (window_title, process_title) = args.extra_display.unwrap_or_default();
    let mut settings = Settings {
        items,
        format: args.format.clone(),
        numeric: args.numeric,
        interval: args.interval.unwrap_or(Duration::from_secs(1)),
        size: None,
        bits: args.bits,
        gauge: args.gauge,
        width: args.width.filter(|&w| w > 0),
        average_window: args.average_window.map_or(30.0, |d| d.as_secs_f64()),
        window_title,
        process_title,
        si: args.si,
        bar_style: args.bar_style.unwrap_or_default(),
        conemu: args.conemu,
        utf8: crate::sys::locale::ctype_is_utf8(),
    };
    if let Some(side) = args.monitor {
        return monitor::run(
            &args,
            me,
            side,
            settings,
            given_size.filter(|&s| s > 0),
            show,
        );
    }
    if !args.watchfd.is_empty() {
        settings.size = given_size;
        // Resolved before the pidfile is made: a bad list leaves nothing.
        let watched = match watched::resolve(&args.watchfd, &args.files) {
            Ok(watched) => watched,
            Err(err) => return me.usage(&err),
        };
        // -d copies nothing: the pidfile has no file of a copy to be.
        let _pidfile = match PidFile::write_asked(me, args.pidfile.as_deref(), &[], None) {
            Ok(pidfile) => pidfile,
            Err(status) => return status,
        };
        // pv 1.12: a name no process has watches nothing, and ends at once.
        if watched.is_empty() {
            return ExitCode::SUCCESS;
        }
        let said = me.clone();
        let status = until_signalled(
            me,
            || {},
            move || match watch::run(&watched, &settings, show, &io::stderr()) {
                Ok(()) => 0,
                Err(err) => {
                    said.say(&err.to_string());
                    EXIT_ACCESS
                }
            },
        );
        return ExitCode::from(status.unwrap_or_else(|status| status));
    }
    // Checked before any target is opened: a refused buffer leaves the
    // output, the store and the pidfile as they were.
    let buf_size = match buffer_size(&args, me) {
        Ok(size) => size,
        Err(code) => return code,
    };
    let names: Vec<PathBuf> = if args.files.is_empty() {
        vec!["-".into()]
    } else {
        args.files.clone()
    };
    // pv reads -s 0 as no size given; else the total of the named files
    // (by name, not by opening: opening a FIFO would wait for a writer),
    // or with -l their lines, counted first as pv 1.12 does (in the
    // transfer's thread: a signal ends a long count at once).
    let given_size = given_size.filter(|&s| s > 0);
    settings.size = match given_size {
        Some(size) => Some(size),
        None if args.line_mode => {
            let (counted, end) = (names.clone(), if args.null { 0 } else { b'\n' });
            match until_signalled(me, || {}, move || inputs::line_total(&counted, end)) {
                Ok(total) => total,
                Err(status) => return ExitCode::from(status),
            }
        }
        None => {
            let total: u64 = names.iter().filter_map(|n| regular_size(n)).sum();
            (total > 0).then_some(total)
        }
    };
    // In a thread of its own: opening a FIFO waits for its reader.
    let (said, discard, output, store, pidfile, named) = (
        me.clone(),
        args.discard,
        args.output.clone(),
        args.store_and_forward.clone(),
        args.pidfile.clone(),
        names.clone(),
    );
    let opened = until_signalled(
        me,
        || {},
        move || {
            let (output, store, pidfile) =
                (output.as_deref(), store.as_deref(), pidfile.as_deref());
            targets::open(&said, discard, output, store, pidfile, &named)
        },
    );
    let targets = match opened {
        Ok(Ok(targets)) => targets,
        Ok(Err(status)) | Err(status) => return ExitCode::from(status),
    };
    let format = settings.format();
    let transfer = Transfer::new(transfer_options(
        &args,
        buf_size,
        given_size,
        format.last_written(),
        format.previous_line().is_some(),
    ));
    let settings = Arc::new(Mutex::new(settings));
    let start = Instant::now();
    let _listener = remote::listen(Controls {
        settings: Arc::clone(&settings),
        rate_limit: transfer.rate_limit(),
        count: transfer.count(),
        start,
        lines: args.line_mode,
    })
    .ok();
    // Written once the targets are open and the control socket listens
    // (a script that waits for the pidfile may send -R at once): a
    // pidfile that is one of the files copied, or not a regular file,
    // was refused by targets::open before any target was emptied, and is
    // checked again here on what is opened.
    let _pidfile = match PidFile::write_asked(me, args.pidfile.as_deref(), &names, Some(&targets)) {
        Ok(pidfile) => pidfile,
        Err(status) => return status,
    };
    let display = display(&args, show, settings);
    let cursor = display.cursor.clone();
    let meter = Meter {
        me: me.clone(),
        names,
        direct_io: args.direct_io,
        store: targets.store,
        show,
        skip_errors: args.skip_errors,
        to_stdout: matches!(targets.output, Output::Stdout(_)),
    };
    let output = targets.output;
    // Stopped, the meter gives its row back before the words are said:
    // they go below its line, not after it.
    let leave = || cursor.iter().for_each(|cursor| cursor.leave());
    let status = until_signalled(me, leave, move || {
        meter.run(transfer, &display, output, start)
    });
    if status.is_err() {
        leave();
    }
    ExitCode::from(status.unwrap_or_else(|status| status))
}

/// What `pv -R` sends: as pv 1.12's, the whole display, pv's default
/// (`-p -t -e -r -b`) when no item is named, whatever else is changed.
fn changes(args: &PvArgs) -> Changes {
    Changes {
        items: Some(items_or_default(args, !args.quiet)),
        whole_display: true,
        format: args.format.clone(),
        name: args.name.clone(),
        interval: args.interval.map(|d| d.as_secs_f64()),
        size: match &args.size {
            Some(SizeSpec::Bytes(n)) => Some(*n),
            Some(SizeSpec::Of(path)) => std::fs::metadata(path).ok().map(|m| m.len()),
            None => None,
        },
        rate_limit: args.rate_limit,
    }
}

/// A meter's display, with its own row among the pipeline's meters when
/// `-c` asks and it is shown (without the shared row counter it still
/// shows, on one line).
fn display(args: &PvArgs, show: bool, settings: Arc<Mutex<Settings>>) -> Display {
    Display {
        cursor: (show && args.cursor)
            .then(|| Cursor::join(io::stderr()).ok().map(Arc::new))
            .flatten(),
        settings,
        wait: args.wait,
        delay: args.delay_start.unwrap_or_default(),
        lines: args.line_mode,
        stats: args.stats,
    }
}

/// The size of a named input that is a regular file (`-`: stdin).
fn regular_size(name: &Path) -> Option<u64> {
    if name.as_os_str() == "-" {
        fd_info(io::stdin().as_fd())
            .ok()
            .filter(|info| info.kind == FdKind::Regular)
            .map(|info| info.size)
    } else {
        std::fs::metadata(name)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
    }
}

/// The meter's reading of the transfer, for the display.
struct Reading {
    count: Arc<AtomicU64>,
    tail: Option<Tail>,
    /// Whether the display asked for the tail yet: pv 1.12 keeps the
    /// bytes written from its first frame on.
    asked: std::sync::atomic::AtomicBool,
    lines: Option<Lines>,
    out: Option<std::os::fd::OwnedFd>,
}

impl Reading {
    /// The reading of `transfer`; `out` is where its bytes go, for `-T`'s
    /// fill (`None`: none shown).
    fn of(transfer: &Transfer, out: Option<std::os::fd::BorrowedFd<'_>>) -> Reading {
        Reading {
            count: transfer.count(),
            tail: transfer.tail(),
            asked: Default::default(),
            lines: transfer.previous_line(),
            out: out.and_then(|fd| fd.try_clone_to_owned().ok()),
        }
    }
}

impl Source for Reading {
    fn count(&self) -> u64 {
        self.count.count()
    }

    fn previous_line(&self) -> Vec<u8> {
        self.lines.as_ref().map_or_else(Vec::new, |lines| {
            lines
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .last()
        })
    }

    fn last_written(&self, n: usize) -> Vec<u8> {
        let Some(tail) = &self.tail else {
            return Vec::new();
        };
        let mut tail = tail
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !self.asked.swap(true, std::sync::atomic::Ordering::Relaxed) {
            tail.clear();
        }
        tail.iter()
            .skip(tail.len().saturating_sub(n))
            .copied()
            .collect()
    }

    /// A pipe's fill; 0 for any other output (a file, a device,
    /// /dev/null with `-X`), where nothing written waits for a reader, as
    /// pv 1.12 reads its own empty buffer there.
    fn buffer_percent(&self) -> Option<u64> {
        let out = self.out.as_ref()?;
        Some(pipe_fill(out.as_fd()).unwrap_or(0))
    }
}

/// "Bad file descriptor": what a closed descriptor gives.
fn ebadf() -> String {
    strerror(&io::Error::from_raw_os_error(libc::EBADF))
}
