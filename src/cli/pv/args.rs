//! pv's options, with pv's letters and long names (pv 1.8, and what later
//! versions added).

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args};

use crate::pv::format::MAX_LAST_WRITTEN;
use crate::pv::meter::BarStyle;

#[path = "values.rs"]
mod values;
use values::{PV_PID, columns, integer, interval, refused, seconds, size, window};
pub(super) use values::{PV_WATCH, Refused, size_in};

/// `-s`: a size, or `@FILE` for the size of that file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeSpec {
    /// A number of bytes (or lines).
    Bytes(u64),
    /// The size of this file.
    Of(PathBuf),
}

fn size_spec(text: &str) -> Result<SizeSpec, Refused> {
    match text.strip_prefix('@') {
        Some(path) if !path.is_empty() => Ok(SizeSpec::Of(path.into())),
        _ => size(text).map(SizeSpec::Bytes),
    }
}

/// `-A`: how many bytes, 0 (none) or more; more than [`MAX_LAST_WRITTEN`]
/// (pv's limit) show [`MAX_LAST_WRITTEN`].
fn count_of(text: &str) -> Result<usize, Refused> {
    Ok(integer(text)?
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(MAX_LAST_WRITTEN)
        .min(MAX_LAST_WRITTEN))
}

/// `-d PID[:FD]`: a process ID (spaces or tabs before it, as pv 1.12
/// allows) and a descriptor, each digits only: pv 1.12 reads `5x` as 5
/// and `1:x` as all of process 1's files, a typo watching another thing.
/// A process or descriptor number past what Linux has (`PID_MAX_LIMIT`
/// is 4194304) is still a number: "no such process" says the rest.
fn watch_target(text: &str) -> Result<(u32, Option<u32>), Refused> {
    let bad = || {
        refused(
            PV_WATCH,
            format!("'{text}' is not PID, PID:FD, =NAME or @LISTFILE"),
        )
    };
    let number = |s: &str| {
        integer(s)
            .ok()
            .flatten()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(bad)
    };
    let (pid_text, fd) = match text.split_once(':') {
        Some((pid, fd)) if !fd.starts_with([' ', '\t']) => (pid, Some(number(fd)?)),
        Some(_) => return Err(bad()),
        None => (text, None),
    };
    match number(pid_text)? {
        0 => Err(refused(PV_PID, format!("'{text}': 0 is no process ID"))),
        pid => Ok((pid, fd)),
    }
}

/// What `-d` watches: `PID[:FD]`, `=NAME` (the processes of that name),
/// or `@LISTFILE` (more of these, one a line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchSpec {
    /// A process, and one of its descriptors or all its files.
    Process(u32, Option<u32>),
    /// Every process of this name, as pgrep(1) finds them.
    Name(String),
    /// A file of more specs, one a line.
    List(PathBuf),
}

/// `-d PID[:FD]|=NAME|@LISTFILE`.
pub(super) fn watch_spec(text: &str) -> Result<WatchSpec, Refused> {
    if let Some(name) = text.strip_prefix('=') {
        return match name {
            "" => Err(refused(PV_WATCH, "'=' names no process".into())),
            name => Ok(WatchSpec::Name(name.into())),
        };
    }
    if let Some(list) = text.strip_prefix('@') {
        return match list {
            "" => Err(refused(PV_WATCH, "'@' names no list file".into())),
            list => Ok(WatchSpec::List(list.into())),
        };
    }
    watch_target(text).map(|(pid, fd)| WatchSpec::Process(pid, fd))
}

/// `-M`: which of the command's standard streams pv meters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Its standard input (`in`, `0`).
    In,
    /// Its standard output (`out`, `1`).
    Out,
    /// Both (`both`, `2`): two meters, the second with the ratio.
    Both,
}

fn side(text: &str) -> Result<Side, Refused> {
    match text {
        "in" | "0" => Ok(Side::In),
        "out" | "1" => Ok(Side::Out),
        "both" | "2" => Ok(Side::Both),
        _ => Err(refused(
            "invalid side specification",
            format!("'{text}' is not in, out or both (0, 1, 2)"),
        )),
    }
}

/// `-R`, `-Q`: a process ID, 1 to 2^32 - 1. pv 1.12 takes 0 and signals
/// its own process group with it (SIGUSR2 or SIGUSR1, ending every
/// process of the pipeline): refused here.
fn pid(text: &str) -> Result<u32, Refused> {
    match integer(text)?.and_then(|n| u32::try_from(n).ok()) {
        Some(0) => Err(refused(
            PV_PID,
            "0 is no process ID (pv 1.12 would signal its own process group)".into(),
        )),
        Some(pid) => Ok(pid),
        None => Err(refused(
            PV_PID,
            format!("'{text}' is past every process ID"),
        )),
    }
}

/// `-x`: where else to show the meter.
fn extra(text: &str) -> Result<(bool, bool), Refused> {
    let (mut window, mut process) = (false, false);
    for part in text.split(',') {
        match part.trim() {
            "windowtitle" | "window" => window = true,
            "processtitle" | "process" => process = true,
            other => {
                let why = format!("'{other}' is not windowtitle or processtitle");
                return Err(refused(&why, why.clone()));
            }
        }
    }
    Ok((window, process))
}

/// `pipespeed pv`: pv's options, with pv's letters.
#[derive(Debug, Default, Args)]
#[command(
    args_override_self = true,
    // getopt_long takes a unique prefix of a long option (`--siz 3`).
    infer_long_args = true,
    after_help = "Exit status: 0 success; bits, combined as pv's: 1 a -R, -Q or -P problem, 2 a \
    file (or -d's process) could not be opened or the -U store is not a regular file, 4 an \
    input was the output, 16 a read or write \
    failed, 32 stopped by SIGINT, SIGTERM or SIGHUP (the -P file and control socket removed), 64 the -B \
    buffer could not be had. Bad usage: 64 when called as pv (a symbolic link), pv 1.12's \
    status, for scripts written for pv; 2 as `pipespeed pv`, as every pipespeed command. A \
    reader that goes away ends pv quietly with 0.\n\nSizes (-s, -L, -B, -Z) by pv 1.12's rule: \
    a number, a fraction allowed (1.5K), and K, M, G or T, powers of 1024; no KB or KiB."
)]
pub struct PvArgs {
    /// Files to copy to stdout, in order (default and `-`: stdin).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    // Display.
    /// Show a progress bar (a moving <=> when the size is unknown).
    #[arg(short = 'p', long, help_heading = "Display")]
    pub progress: bool,
    /// Show the elapsed time.
    #[arg(short = 't', long, help_heading = "Display")]
    pub timer: bool,
    /// Show the estimated time left.
    #[arg(short = 'e', long, help_heading = "Display")]
    pub eta: bool,
    /// Show the estimated local time of the end.
    #[arg(short = 'I', long, help_heading = "Display")]
    pub fineta: bool,
    /// Show the current rate.
    #[arg(short = 'r', long, help_heading = "Display")]
    pub rate: bool,
    /// Show the average rate.
    #[arg(short = 'a', long = "average-rate", help_heading = "Display")]
    pub average_rate: bool,
    /// Seconds the average rate and the ETA are taken over (default 30; 0
    /// to 1000000).
    #[arg(allow_hyphen_values = true, short = 'm', long = "average-rate-window", value_name = "SEC", value_parser = window, help_heading = "Display")]
    pub average_window: Option<Duration>,
    /// Show the count so far.
    #[arg(short = 'b', long, help_heading = "Display")]
    pub bytes: bool,
    /// Show bits, not bytes.
    #[arg(short = '8', long, help_heading = "Display")]
    pub bits: bool,
    /// Show how full the pipe to the reader is.
    #[arg(short = 'T', long = "buffer-percent", help_heading = "Display")]
    pub buffer_percent: bool,
    /// Show the last NUM bytes written (at most 256, pv's limit).
    #[arg(allow_hyphen_values = true, short = 'A', long = "last-written", value_name = "NUM", value_parser = count_of, help_heading = "Display")]
    pub last_written: Option<usize>,
    /// Show FORMAT: %p %t %e %I %r %a %b %T %NUMA %N %%, or %{progress} ...
    /// (with -M both, a second -F is the output side's).
    #[arg(allow_hyphen_values = true, short = 'F', long = "format", id = "format", value_name = "FORMAT", action = ArgAction::Append, help_heading = "Display")]
    pub formats: Vec<String>,
    /// The last -F (settled after parsing).
    #[arg(skip)]
    pub format: Option<String>,
    /// Numbers for scripts, one line per update: the percentage, or with -b
    /// the count; with -t the elapsed seconds first.
    #[arg(short = 'n', long, help_heading = "Display")]
    pub numeric: bool,
    /// Show nothing, only copy.
    #[arg(short = 'q', long, help_heading = "Display")]
    pub quiet: bool,
    /// At the end, show the rate's minimum, mean, maximum and deviation.
    #[arg(short = 'v', long, help_heading = "Display")]
    pub stats: bool,
    /// Also show the meter in the window title or process name
    /// (windowtitle,processtitle).
    #[arg(allow_hyphen_values = true, short = 'x', long = "extra-display", value_name = "SPEC", value_parser = extra, help_heading = "Display")]
    pub extra_display: Option<(bool, bool)>,
    /// With an unknown size, the bar shows the rate against the highest.
    #[arg(short = 'g', long, help_heading = "Display")]
    pub gauge: bool,
    /// Show nothing until the first byte has gone through.
    #[arg(short = 'W', long, help_heading = "Display")]
    pub wait: bool,
    /// Show nothing until SEC seconds have passed (0 to 1000000).
    #[arg(allow_hyphen_values = true, short = 'D', long = "delay-start", value_name = "SEC", value_parser = seconds, help_heading = "Display")]
    pub delay_start: Option<Duration>,
    /// The expected total (bytes, or lines with -l), or @FILE for that
    /// file's size; default: the sum of the files' sizes. Takes K, M, G.
    #[arg(allow_hyphen_values = true, short = 's', long, value_name = "SIZE", value_parser = size_spec, help_heading = "Display")]
    pub size: Option<SizeSpec>,
    /// Count lines, not bytes.
    #[arg(short = 'l', long = "line-mode", help_heading = "Display")]
    pub line_mode: bool,
    /// Lines end with NUL, not newline (with -l).
    #[arg(short = '0', long, help_heading = "Display")]
    pub null: bool,
    /// Seconds between updates (default 1; 0.1 to 1000000, a shorter one
    /// is 0.1 as in pv 1.12).
    #[arg(allow_hyphen_values = true, short = 'i', long, value_name = "SEC", value_parser = interval, help_heading = "Display")]
    pub interval: Option<Duration>,
    /// Assume the terminal is WIDTH columns wide (0: the terminal's; at
    /// most 4095 are drawn, as pv 1.12).
    #[arg(allow_hyphen_values = true, short = 'w', long, value_name = "WIDTH", value_parser = columns, help_heading = "Display")]
    pub width: Option<usize>,
    /// Assume the terminal is HEIGHT rows high (0: the terminal's; at most
    /// 4095).
    #[arg(allow_hyphen_values = true, short = 'H', long, value_name = "HEIGHT", value_parser = columns, help_heading = "Display")]
    pub height: Option<usize>,
    /// A name in front of the display (with -M both, a second -N is the
    /// output side's).
    #[arg(allow_hyphen_values = true, short = 'N', long = "name", id = "name", value_name = "NAME", action = ArgAction::Append, help_heading = "Display")]
    pub names: Vec<String>,
    /// The last -N (settled after parsing).
    #[arg(skip)]
    pub name: Option<String>,
    /// Sizes after this option (and the display) in powers of 1000, not
    /// 1024.
    #[arg(short = 'k', long, help_heading = "Display")]
    pub si: bool,
    /// How the bar is drawn (block, granular and shaded need a UTF-8
    /// locale, else plain).
    #[arg(
        allow_hyphen_values = true,
        short = 'u',
        long = "bar-style",
        value_name = "STYLE",
        value_enum,
        help_heading = "Display"
    )]
    pub bar_style: Option<BarStyle>,
    /// Also set the terminal's progress state (OSC 9;4, ConEmu).
    #[arg(short = '9', long, help_heading = "Display")]
    pub conemu: bool,
    /// Show the display even when stderr is not a terminal.
    #[arg(short = 'f', long, help_heading = "Display")]
    pub force: bool,
    /// Several meters in one pipeline: each keeps its own line (cursor
    /// positioning, for a terminal).
    #[arg(short = 'c', long, help_heading = "Display")]
    pub cursor: bool,

    // Transfer.
    /// At most RATE bytes (lines, with -l) a second. Takes K, M, G.
    #[arg(allow_hyphen_values = true, short = 'L', long = "rate-limit", value_name = "RATE", value_parser = size, help_heading = "Transfer")]
    pub rate_limit: Option<u64>,
    /// Read/write buffer size, at most 1T (status 64 past it, or past
    /// what the system gives). Takes K, M, G.
    #[arg(allow_hyphen_values = true, short = 'B', long = "buffer-size", value_name = "SIZE", value_parser = size, help_heading = "Transfer")]
    pub buffer_size: Option<u64>,
    /// Never splice(2): copy every byte by read/write, at a cost in speed.
    ///
    /// Spliced, a file reaches the reader as references to its page-cache
    /// pages, not copies: a file overwritten in place after pv has finished
    /// but before the reader has read shows the reader the new bytes (pv
    /// 1.6 splices too). With -C the reader gets the bytes of when pv ran.
    #[arg(short = 'C', long = "no-splice", help_heading = "Transfer")]
    pub no_splice: bool,
    /// Skip read errors, writing zeros for what could not be read (twice:
    /// one warning per file).
    #[arg(short = 'E', long = "skip-errors", action = ArgAction::Count, help_heading = "Transfer")]
    pub skip_errors: u8,
    /// With -E, skip SIZE bytes at each error (never past the input's
    /// end). Takes K, M, G.
    #[arg(allow_hyphen_values = true, short = 'Z', long = "error-skip-block", value_name = "SIZE", value_parser = size, help_heading = "Transfer")]
    pub error_skip_block: Option<u64>,
    /// Stop after the -s size, bytes or (with -l) lines (-s 0: copy
    /// everything, as pv).
    #[arg(short = 'S', long = "stop-at-size", help_heading = "Transfer")]
    pub stop_at_size: bool,
    /// Flush the output to its disk after every write (fdatasync).
    #[arg(short = 'Y', long, help_heading = "Transfer")]
    pub sync: bool,
    /// Read regular files with O_DIRECT, around the page cache.
    #[arg(short = 'K', long = "direct-io", help_heading = "Transfer")]
    pub direct_io: bool,
    /// Write to FILE instead of stdout (`-`: stdout).
    ///
    /// FILE is emptied only once it is known to be none of the inputs: an
    /// input that is FILE (by name, hard link, /dev/stdin or `<`) is
    /// refused with status 4 and every file left as it was. `-`,
    /// /dev/stdout, /dev/fd/1 and /proc/self/fd/1 are stdout, written as
    /// it is, never reopened (so a `>>` file is appended to).
    #[arg(
        allow_hyphen_values = true,
        short = 'o',
        long,
        value_name = "FILE",
        help_heading = "Transfer"
    )]
    pub output: Option<PathBuf>,
    /// Set the output pipe's size (and an intermediate pipe's) to SIZE
    /// where the system allows it, silently not where it does not.
    #[arg(allow_hyphen_values = true, short = 'J', long = "pipe-buffer-size", value_name = "SIZE", value_parser = size, help_heading = "Transfer")]
    pub pipe_buffer_size: Option<u64>,
    /// Seek over zeros instead of writing them, making a sparse output
    /// file (copies by read/write; only past the output file's end, and
    /// not with O_APPEND: existing bytes are always written over).
    #[arg(short = 'O', long, help_heading = "Transfer")]
    pub sparse: bool,
    /// Write nothing: read, count and drop (as to /dev/null).
    #[arg(
        short = 'X',
        long,
        conflicts_with = "output",
        help_heading = "Transfer"
    )]
    pub discard: bool,
    /// Read all input into FILE first, then send FILE on.
    ///
    /// FILE must be a regular file (it is read back from its start), none
    /// of the inputs and not the output; `-` stores in an unnamed
    /// temporary file. A write to FILE that fails ends the run with status
    /// 16 and nothing forwarded.
    #[arg(
        allow_hyphen_values = true,
        short = 'U',
        long = "store-and-forward",
        value_name = "FILE",
        help_heading = "Transfer"
    )]
    pub store_and_forward: Option<PathBuf>,
    /// Copy nothing: watch how far process PID has read file descriptor FD
    /// (every regular file it has open, without FD), from /proc; =NAME:
    /// the processes pgrep(1) finds by that name; @LISTFILE: one of these
    /// a line. May be given more than once; the FILE operands are more.
    #[arg(allow_hyphen_values = true, short = 'd', long = "watchfd", value_name = "PID[:FD]|=NAME|@LISTFILE", value_parser = watch_spec, conflicts_with_all = ["rate_limit", "stop_at_size", "line_mode", "monitor", "store_and_forward", "output"], help_heading = "Transfer")]
    pub watchfd: Vec<WatchSpec>,
    /// Run the command the operands name (after `--` if it has options)
    /// and meter its standard input (in, 0), output (out, 1) or both (2).
    #[arg(allow_hyphen_values = true, short = 'M', long, value_name = "SIDE", value_parser = side, conflicts_with = "store_and_forward", help_heading = "Transfer")]
    pub monitor: Option<Side>,

    // Control.
    /// Change -L, -s, -N, -i and the display of the meter of process PID.
    #[arg(allow_hyphen_values = true, short = 'R', long, value_name = "PID", value_parser = pid, conflicts_with = "query", help_heading = "Control")]
    pub remote: Option<u32>,
    /// Print the state of the meter of process PID.
    #[arg(allow_hyphen_values = true, short = 'Q', long, value_name = "PID", value_parser = pid, help_heading = "Control")]
    pub query: Option<u32>,
    /// Write this process's ID to FILE while it runs (a regular file that
    /// is no input or output, else refused with status 1 before anything
    /// is emptied; removed at the end).
    #[arg(
        allow_hyphen_values = true,
        short = 'P',
        long,
        value_name = "FILE",
        help_heading = "Control"
    )]
    pub pidfile: Option<PathBuf>,
    /// Print the version and exit.
    #[arg(short = 'V', long, help_heading = "Control")]
    pub version: bool,
}

/// What parsing leaves to do, with the matches at hand: `-F` and `-N` are
/// the last given (pv takes the last of every option; `-M both` reads the
/// first and the last), and a size given after `-k` is read again in
/// powers of 1000 (pv 1.12: `-k` counts for the options after it).
pub(crate) fn settle(matches: &clap::ArgMatches, args: &mut PvArgs) -> Result<(), String> {
    args.format = args.formats.last().cloned();
    // pv 1.12: -0 implies -l.
    args.line_mode |= args.null;
    args.name = args.names.last().cloned();
    let Some(si_at) = matches.indices_of("si").and_then(Iterator::min) else {
        return Ok(());
    };
    // Only a size past MAX_SIZE in powers of 1000 and not of 1024 fails:
    // said as pv's other words about values are, `-s: TEXT: cause`.
    let after_si = |id: &str, letter: char| -> Result<Option<u64>, String> {
        let (Some(at), Some(raw)) = (
            matches.indices_of(id).and_then(Iterator::max),
            matches.get_raw(id).and_then(Iterator::last),
        ) else {
            return Ok(None);
        };
        if at < si_at {
            return Ok(None);
        }
        let text = raw
            .to_str()
            .ok_or_else(|| format!("'{}' is not a size", raw.to_string_lossy()))?;
        match text.strip_prefix('@') {
            Some(_) if id == "size" => Ok(None),
            _ => size_in(text, 1000)
                .map(Some)
                .map_err(|why| format!("-{letter}: {text}: {}", why.pv)),
        }
    };
    if let Some(n) = after_si("size", 's')? {
        args.size = Some(SizeSpec::Bytes(n));
    }
    for (id, letter, field) in [
        ("rate_limit", 'L', &mut args.rate_limit),
        ("buffer_size", 'B', &mut args.buffer_size),
        ("error_skip_block", 'Z', &mut args.error_skip_block),
        ("pipe_buffer_size", 'J', &mut args.pipe_buffer_size),
    ] {
        if let Some(n) = after_si(id, letter)? {
            *field = Some(n);
        }
    }
    Ok(())
}
