//! `pipespeed pv`: a pipe meter on the copy engine. The bytes go by
//! splice where the kernel allows; a timer thread draws the display from
//! the engine's byte counter, so the data path never waits for it.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use clap::Args;
use pipespeed::buf::{Buffer, BufferOptions};
use pipespeed::copy::{CopyOptions, Mechanism, Side};
use pipespeed::pv::copy::{Ended, Transfer, TransferOptions, input_is_output};
use pipespeed::pv::cursor::Cursor;
use pipespeed::pv::display::{Display, draw};
use pipespeed::pv::meter::{Items, format_count};
use pipespeed::pv::watch;
use pipespeed::sys::inherited::{self, Stdio};
use pipespeed::sys::{FdKind, fd_info};

use crate::args::size;
use crate::{UsageError, strerror};

/// pv's exit status bits (pv(1), "EXIT STATUS").
const EXIT_ACCESS: u8 = 2;
const EXIT_SAME: u8 = 4;
const EXIT_TRANSFER: u8 = 16;
const EXIT_MEMORY: u8 = 64;

/// pv's `-i`: any positive number of seconds, as pv takes it (not the
/// range of the measuring commands' durations).
fn seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("'{text}' is not a positive number of seconds"))
}

/// `pipespeed pv`: pv's options, with pv's letters.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 success; 2 bad usage, or a file (or -d's process) could not \
    be opened, or -d's descriptor is not a regular file or block device; 4 an input was the \
    output, or standard output is closed; 16 a read or write failed; 64 the -B buffer could not \
    be allocated (bits combine, as pv's do). A reader that goes away ends pv quietly with 0."
)]
pub struct PvArgs {
    /// Files to copy to stdout, in order (default and `-`: stdin).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Show a progress bar (a moving <=> when the size is unknown).
    #[arg(short = 'p', long)]
    pub progress: bool,
    /// Show the elapsed time.
    #[arg(short = 't', long)]
    pub timer: bool,
    /// Show the estimated time left.
    #[arg(short = 'e', long)]
    pub eta: bool,
    /// Show the estimated local time of the end.
    #[arg(short = 'I', long)]
    pub fineta: bool,
    /// Show the current rate.
    #[arg(short = 'r', long)]
    pub rate: bool,
    /// Show the average rate.
    #[arg(short = 'a', long = "average-rate")]
    pub average_rate: bool,
    /// Show the count so far.
    #[arg(short = 'b', long)]
    pub bytes: bool,
    /// Numbers for scripts, one line per update: the percentage, or with -b
    /// the count; with -t the elapsed seconds first.
    #[arg(short = 'n', long)]
    pub numeric: bool,
    /// Show nothing, only copy.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Show the display even when stderr is not a terminal.
    #[arg(short = 'f', long)]
    pub force: bool,
    /// The expected total (bytes, or lines with -l), for the bar and the
    /// ETA; default (and 0): the sum of the files' sizes. Takes K, M, G.
    #[arg(short = 's', long, value_name = "SIZE", value_parser = size)]
    pub size: Option<u64>,
    /// Stop after the -s size (-s 0: copy everything, as pv).
    #[arg(short = 'S', long = "stop-at-size")]
    pub stop_at_size: bool,
    /// At most RATE bytes a second. Takes K, M, G.
    #[arg(short = 'L', long = "rate-limit", value_name = "RATE", value_parser = size)]
    pub rate_limit: Option<u64>,
    /// Count lines, not bytes.
    #[arg(short = 'l', long = "line-mode")]
    pub line_mode: bool,
    /// A name in front of the display.
    #[arg(short = 'N', long, value_name = "NAME")]
    pub name: Option<String>,
    /// Seconds between updates.
    #[arg(short = 'i', long, value_name = "SEC", default_value = "1", value_parser = seconds)]
    pub interval: Duration,
    /// Show nothing until the first byte has gone through.
    #[arg(short = 'W', long)]
    pub wait: bool,
    /// Never splice(2): copy every byte by read/write, at a cost in speed.
    ///
    /// Spliced, a file reaches the reader as references to its page-cache
    /// pages, not copies: a file overwritten in place after pv has finished
    /// but before the reader has read shows the reader the new bytes (pv
    /// 1.6 splices too). With -C the reader gets the bytes of when pv ran.
    #[arg(short = 'C', long = "no-splice")]
    pub no_splice: bool,
    /// Read/write buffer size. Takes K, M, G.
    #[arg(short = 'B', long = "buffer-size", value_name = "SIZE", value_parser = size)]
    pub buffer_size: Option<u64>,
    /// Several meters in one pipeline: each keeps its own line (cursor
    /// positioning, for a terminal).
    #[arg(short = 'c', long)]
    pub cursor: bool,
    /// Copy nothing: watch how far process PID has read file descriptor FD
    /// (every regular file it has open, without FD), from /proc.
    #[arg(short = 'd', long = "watchfd", value_name = "PID[:FD]", value_parser = watch_target, conflicts_with_all = ["files", "rate_limit", "stop_at_size", "line_mode"])]
    pub watchfd: Option<(u32, Option<u32>)>,
}

fn watch_target(text: &str) -> Result<(u32, Option<u32>), String> {
    let bad = || format!("'{text}' is not PID or PID:FD");
    let (pid, fd) = match text.split_once(':') {
        Some((pid, fd)) => (pid, Some(fd.parse().map_err(|_| bad())?)),
        None => (text, None),
    };
    Ok((pid.parse().map_err(|_| bad())?, fd))
}

/// `SIGPIPE` stays ignored (as the runtime set it), whatever the parent
/// left: pv 1.6 catches it itself, so a reader going away ends pv quietly
/// with 0 whether the parent ignored it or not (tests/pv/stdio.rs). cat
/// restores the inherited disposition instead, because GNU cat dies of it.
pub fn run(args: PvArgs) -> anyhow::Result<ExitCode> {
    let stderr = io::stderr();
    let show = !args.quiet && (args.force || rustix::termios::isatty(stderr.as_fd()));
    let mut items = Items {
        progress: args.progress,
        timer: args.timer,
        eta: args.eta,
        fineta: args.fineta,
        rate: args.rate,
        average_rate: args.average_rate,
        bytes: args.bytes,
        name: args.name.clone(),
    };
    if items.is_empty() && !args.numeric {
        items = Items {
            name: args.name.clone(),
            ..Items::pv_default()
        };
    }
    // Checked here, not by clap: its message for a missing -s runs over
    // several lines.
    if args.stop_at_size && args.size.is_none() {
        return Err(
            UsageError("-S (--stop-at-size) needs -s SIZE, the size to stop at".into()).into(),
        );
    }
    if args.stop_at_size && args.line_mode {
        return Err(UsageError("-S counts bytes; it does not go with -l".into()).into());
    }
    if let Some((pid, fd)) = args.watchfd {
        let view = show.then_some((&items, args.numeric));
        return Ok(match watch::run(pid, fd, view, args.interval, &stderr) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("pipespeed pv: {err}");
                ExitCode::from(EXIT_ACCESS)
            }
        });
    }
    // Without the shared row counter each meter still shows, on one line.
    let cursor = (show && args.cursor)
        .then(|| Cursor::join(io::stderr()))
        .transpose()
        .unwrap_or_default();
    let names: Vec<PathBuf> = if args.files.is_empty() {
        vec!["-".into()]
    } else {
        args.files.clone()
    };
    let mut status = 0u8;
    let stdin = io::stdin();
    let stdout = io::stdout();
    let out_info = fd_info(stdout.as_fd())
        .map_err(|err| anyhow::anyhow!("standard output: {}", strerror(&err)))?;
    // pv reads -s 0 as no size given.
    let given_size = args.size.filter(|&s| s > 0);
    // The total from the names (files are opened one at a time, later).
    let size = given_size.or_else(|| {
        // By name, not by opening: opening a FIFO would wait for a writer.
        let regular_size = |name: &PathBuf| {
            if name.as_os_str() == "-" {
                fd_info(stdin.as_fd())
                    .ok()
                    .filter(|info| info.kind == FdKind::Regular)
                    .map(|info| info.size)
            } else {
                std::fs::metadata(name)
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
            }
        };
        let total: u64 = names.iter().filter_map(regular_size).sum();
        (!args.line_mode && total > 0).then_some(total)
    });
    let display = Display {
        cursor,
        items,
        numeric: args.numeric,
        wait: args.wait,
        interval: args.interval,
        size,
        lines: args.line_mode,
    };

    let buf_size = match args.buffer_size {
        Some(bytes) => match allocate(bytes) {
            Ok(size) => size,
            Err(err) => {
                eprintln!(
                    "pipespeed pv: buffer allocation failed: -B {}: {}",
                    format_count(bytes as f64, false).trim_start(),
                    strerror(&err)
                );
                return Ok(ExitCode::from(EXIT_MEMORY));
            }
        },
        None => CopyOptions::default().buf_size,
    };
    let mut transfer = Transfer::new(TransferOptions {
        copy: CopyOptions {
            // Every input by read/write, pipes too: pv's -C never splices.
            force: args.no_splice.then_some(Mechanism::ReadWrite),
            page_references: !args.no_splice,
            buf_size,
            ..CopyOptions::default()
        },
        rate_limit: args.rate_limit,
        // Only a size given stops: one computed from the files would cut
        // a file that grows while it is copied.
        stop_at: given_size.filter(|_| args.stop_at_size),
        lines: args.line_mode,
    });
    let count = transfer.count();

    let start = Instant::now();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let drawer = show.then(|| {
            let count = Arc::clone(&count);
            let display = &display;
            let stderr = &stderr;
            scope.spawn(move || draw(display, &count, start, &done_rx, stderr))
        });
        let out = stdout.as_fd();
        'inputs: for name in &names {
            let file;
            let is_stdin = name.as_os_str() == "-";
            let fd = if is_stdin {
                if let Some(refused) = closed_stdin() {
                    status |= refused;
                    continue;
                }
                stdin.as_fd()
            } else {
                match File::open(name) {
                    Ok(opened) => {
                        file = opened;
                        file.as_fd()
                    }
                    Err(err) => {
                        eprintln!("pipespeed pv: {}: {}", name.display(), strerror(&err));
                        status |= EXIT_ACCESS;
                        continue;
                    }
                }
            };
            if let Some(refused) = closed_stdout(name, is_stdin) {
                status |= refused;
                continue;
            }
            if fd_info(fd).is_ok_and(|info| input_is_output(&info, &out_info)) {
                eprintln!(
                    "pipespeed pv: {}: input file is output file",
                    name.display()
                );
                status |= EXIT_SAME;
                continue;
            }
            match transfer.copy(fd, out) {
                Ok(Ended::Input) => {}
                Ok(Ended::StopSize) => break 'inputs,
                Err(err) if err.side == Side::Output => {
                    if err.source.kind() != io::ErrorKind::BrokenPipe {
                        eprintln!("pipespeed pv: write failed: {}", strerror(&err.source));
                        status |= EXIT_TRANSFER;
                    }
                    break 'inputs;
                }
                Err(err) => {
                    eprintln!(
                        "pipespeed pv: {}: read failed: {}",
                        name.display(),
                        strerror(&err.source)
                    );
                    status |= EXIT_TRANSFER;
                }
            }
        }
        drop(done_tx);
        if let Some(drawer) = drawer {
            let _ = drawer.join();
        }
    });
    Ok(ExitCode::from(status))
}

/// A read/write buffer of `bytes` (at least 1) can be had: tried now, so
/// that a size the system cannot give is refused before anything is
/// copied (pv: "buffer allocation failed", status 64), not met as a
/// failure in the middle of a copy, or not at all when every input goes
/// by splice. The copier makes its own buffer on first use.
fn allocate(bytes: u64) -> io::Result<usize> {
    let size =
        usize::try_from(bytes.max(1)).map_err(|_| io::Error::from_raw_os_error(libc::ENOMEM))?;
    let options = BufferOptions {
        dont_touch: true,
        ..BufferOptions::default()
    };
    Buffer::new(size, options).map(|_| size)
}

/// The message and status bit for reading a standard input that was
/// closed when pv started, as pv 1.6 words them, or `None` if it was open.
/// Without the check the read fails on the placeholder descriptor with a
/// transfer error (16), where pv says it cannot stat the input (2).
fn closed_stdin() -> Option<u8> {
    inherited::closed_at_start(Stdio::Stdin).then(|| {
        eprintln!("pipespeed pv: failed to stat file: -: {}", ebadf());
        EXIT_ACCESS
    })
}

/// The message and status bit for copying input `name` to a standard
/// output that was closed when pv started, or `None` if it was open.
///
/// pv 1.6 checks the output against each input: for standard input it
/// cannot stat the output (status 2); a named file it opens lands on the
/// free descriptor 1 and is refused as "input file is output file"
/// (status 4). The statuses are pv's; the message for a file says what is
/// really wrong. Nothing is copied either way: the bytes would be lost.
fn closed_stdout(name: &std::path::Path, is_stdin: bool) -> Option<u8> {
    if !inherited::closed_at_start(Stdio::Stdout) {
        return None;
    }
    Some(if is_stdin {
        eprintln!("pipespeed pv: failed to stat output file: {}", ebadf());
        EXIT_ACCESS
    } else {
        eprintln!(
            "pipespeed pv: {}: cannot copy to standard output: {}",
            name.display(),
            ebadf()
        );
        EXIT_SAME
    })
}

/// "Bad file descriptor": what a closed descriptor gives.
fn ebadf() -> String {
    strerror(&io::Error::from_raw_os_error(libc::EBADF))
}
