//! pv's options, with pv's letters and long names (pv 1.8, and what later
//! versions added).

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args};

use pipespeed::pv::display::{MAX_COLUMNS, MAX_SECONDS, MIN_INTERVAL};
use pipespeed::pv::format::MAX_LAST_WRITTEN;

/// pv's sizes (`-s`, `-L`, `-B`, `-Z`, `-J`), by pv 1.12's rule
/// (`pv_getnum_check` and `pv_getnum_size` in its src/pv/number.c), not
/// by pipespeed's: spaces or tabs, digits, an optional fraction after
/// `.` or `,` (its first four digits count), then optionally spaces or
/// tabs and one letter `K`, `M`, `G` or `T` in either case, a power of
/// `unit` (1024; 1000 after `-k`). `1.5K` is 1536; `1KB`, `1KiB`, `1e3`
/// are refused, as pv 1.12 refuses them ("numeric value not understood").
/// At most [`MAX_SIZE`].
pub fn size_in(text: &str, unit: u64) -> Result<u64, String> {
    let refused = || {
        format!(
            "'{text}' is not a size as pv 1.12 takes it: a number, a fraction allowed (1.5K), \
             with an optional K, M, G or T (powers of 1024, of 1000 after -k; no KB or KiB)"
        )
    };
    let too_large = || format!("'{text}' is too large (at most {MAX_SIZE})");
    let rest = text.trim_start_matches([' ', '\t']);
    let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let whole_end = digits(rest);
    if whole_end == 0 {
        return Err(refused());
    }
    let (whole, rest) = rest.split_at(whole_end);
    let (fraction, rest) = match rest.strip_prefix(['.', ',']) {
        Some(after) => after.split_at(digits(after)),
        None => ("", rest),
    };
    let power = match rest.trim_start_matches([' ', '\t']) {
        _ if rest.is_empty() => 0,
        "k" | "K" => 1,
        "m" | "M" => 2,
        "g" | "G" => 3,
        "t" | "T" => 4,
        _ => return Err(refused()),
    };
    let multiplier = unit.pow(power);
    let whole: u64 = whole.parse().map_err(|_| too_large())?;
    // pv counts four digits of the fraction and drops the rest.
    let fraction = &fraction[..fraction.len().min(4)];
    let divisor = 10u64.pow(fraction.len() as u32);
    let fraction: u64 = fraction.parse().unwrap_or(0);
    let scaled = |n: u64| n.checked_mul(multiplier).ok_or_else(too_large);
    scaled(whole)?
        .checked_add(scaled(fraction)? / divisor)
        .ok_or_else(too_large)
}

/// The largest size any option takes, 2^64 - 1: every use of a size is
/// checked arithmetic (pv 1.12 takes larger ones and wraps them).
pub const MAX_SIZE: u64 = u64::MAX;

/// A size in powers of 1024; [`settle`] reads it again in powers of 1000
/// when `-k` came before it.
fn size(text: &str) -> Result<u64, String> {
    size_in(text, 1024)
}

/// pv's `-D`, `-m`: a number of seconds from 0 to [`MAX_SECONDS`], as pv
/// takes it (not the range of the measuring commands' durations).
fn seconds(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| (0.0..=MAX_SECONDS).contains(s))
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("'{text}' is not a number of seconds from 0 to {MAX_SECONDS}"))
}

/// pv's `-i`: [`seconds`], and below [`MIN_INTERVAL`] that interval, as
/// pv 1.12 does (a display drawn without pause would flood stderr).
fn interval(text: &str) -> Result<Duration, String> {
    seconds(text).map(|d| d.max(MIN_INTERVAL))
}

/// `-w`, `-H`: a whole number of columns (rows); 0 is the terminal's, as
/// in pv, and more than [`MAX_COLUMNS`] is [`MAX_COLUMNS`].
fn columns(text: &str) -> Result<usize, String> {
    match text.parse::<u64>() {
        Ok(n) => Ok(usize::try_from(n).unwrap_or(MAX_COLUMNS).min(MAX_COLUMNS)),
        Err(_) => Err(format!(
            "'{text}' is not a whole number (0 for the terminal's, at most {MAX_COLUMNS} used)"
        )),
    }
}

/// `-s`: a size, or `@FILE` for the size of that file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeSpec {
    /// A number of bytes (or lines).
    Bytes(u64),
    /// The size of this file.
    Of(PathBuf),
}

fn size_spec(text: &str) -> Result<SizeSpec, String> {
    match text.strip_prefix('@') {
        Some(path) if !path.is_empty() => Ok(SizeSpec::Of(path.into())),
        _ => size(text).map(SizeSpec::Bytes),
    }
}

/// `-A`: how many bytes, 0 (none) or more; more than [`MAX_LAST_WRITTEN`]
/// (pv's limit) show [`MAX_LAST_WRITTEN`].
fn count_of(text: &str) -> Result<usize, String> {
    match text.parse::<u64>() {
        Ok(n) => Ok(usize::try_from(n)
            .unwrap_or(MAX_LAST_WRITTEN)
            .min(MAX_LAST_WRITTEN)),
        Err(_) => Err(format!("'{text}' is not a whole number")),
    }
}

/// `-d PID[:FD]`.
/// A process or descriptor number past what Linux has (`PID_MAX_LIMIT`
/// is 4194304) is still a number: "no such process" says the rest.
fn watch_target(text: &str) -> Result<(u32, Option<u32>), String> {
    let bad = || format!("'{text}' is not PID or PID:FD");
    let (pid_text, fd) = match text.split_once(':') {
        Some((pid, fd)) => (pid, Some(fd.parse().map_err(|_| bad())?)),
        None => (text, None),
    };
    Ok((pid(pid_text).map_err(|_| bad())?, fd))
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
pub fn watch_spec(text: &str) -> Result<WatchSpec, String> {
    if let Some(name) = text.strip_prefix('=') {
        return match name {
            "" => Err("'=' names no process".into()),
            name => Ok(WatchSpec::Name(name.into())),
        };
    }
    if let Some(list) = text.strip_prefix('@') {
        return match list {
            "" => Err("'@' names no list file".into()),
            list => Ok(WatchSpec::List(list.into())),
        };
    }
    watch_target(text)
        .map(|(pid, fd)| WatchSpec::Process(pid, fd))
        .map_err(|_| format!("'{text}' is not PID, PID:FD, =NAME or @LISTFILE"))
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

fn side(text: &str) -> Result<Side, String> {
    match text {
        "in" | "0" => Ok(Side::In),
        "out" | "1" => Ok(Side::Out),
        "both" | "2" => Ok(Side::Both),
        _ => Err(format!("'{text}' is not in, out or both (0, 1, 2)")),
    }
}

/// `-u`: how the bar is drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum BarStyle {
    /// `[====>   ]`
    #[default]
    Plain,
    /// Unicode full blocks.
    Block,
    /// Full blocks and eighths.
    Granular,
    /// Full blocks and shades.
    Shaded,
}

/// `-R`, `-Q`, `-d`: a process ID, 1 to 2^32 - 1.
fn pid(text: &str) -> Result<u32, String> {
    text.parse::<u32>()
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| format!("'{text}' is not a process ID"))
}

/// `-x`: where else to show the meter.
fn extra(text: &str) -> Result<(bool, bool), String> {
    let (mut window, mut process) = (false, false);
    for part in text.split(',') {
        match part.trim() {
            "windowtitle" | "window" => window = true,
            "processtitle" | "process" => process = true,
            other => {
                return Err(format!("'{other}' is not windowtitle or processtitle"));
            }
        }
    }
    Ok((window, process))
}

/// `pipespeed pv`: pv's options, with pv's letters.
#[derive(Debug, Default, Args)]
#[command(
    args_override_self = true,
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
    #[arg(short = 'm', long = "average-rate-window", value_name = "SEC", value_parser = seconds, help_heading = "Display")]
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
    #[arg(short = 'A', long = "last-written", value_name = "NUM", value_parser = count_of, help_heading = "Display")]
    pub last_written: Option<usize>,
    /// Show FORMAT: %p %t %e %I %r %a %b %T %NUMA %N %%, or %{progress} ...
    /// (with -M both, a second -F is the output side's).
    #[arg(short = 'F', long = "format", id = "format", value_name = "FORMAT", action = ArgAction::Append, help_heading = "Display")]
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
    #[arg(short = 'x', long = "extra-display", value_name = "SPEC", value_parser = extra, help_heading = "Display")]
    pub extra_display: Option<(bool, bool)>,
    /// With an unknown size, the bar shows the rate against the highest.
    #[arg(short = 'g', long, help_heading = "Display")]
    pub gauge: bool,
    /// Show nothing until the first byte has gone through.
    #[arg(short = 'W', long, help_heading = "Display")]
    pub wait: bool,
    /// Show nothing until SEC seconds have passed (0 to 1000000).
    #[arg(short = 'D', long = "delay-start", value_name = "SEC", value_parser = seconds, help_heading = "Display")]
    pub delay_start: Option<Duration>,
    /// The expected total (bytes, or lines with -l), or @FILE for that
    /// file's size; default: the sum of the files' sizes. Takes K, M, G.
    #[arg(short = 's', long, value_name = "SIZE", value_parser = size_spec, help_heading = "Display")]
    pub size: Option<SizeSpec>,
    /// Count lines, not bytes.
    #[arg(short = 'l', long = "line-mode", help_heading = "Display")]
    pub line_mode: bool,
    /// Lines end with NUL, not newline (with -l).
    #[arg(short = '0', long, help_heading = "Display")]
    pub null: bool,
    /// Seconds between updates (default 1; 0.1 to 1000000, a shorter one
    /// is 0.1 as in pv 1.12).
    #[arg(short = 'i', long, value_name = "SEC", value_parser = interval, help_heading = "Display")]
    pub interval: Option<Duration>,
    /// Assume the terminal is WIDTH columns wide (0: the terminal's; at
    /// most 4095 are drawn, as pv 1.12).
    #[arg(short = 'w', long, value_name = "WIDTH", value_parser = columns, help_heading = "Display")]
    pub width: Option<usize>,
    /// Assume the terminal is HEIGHT rows high (0: the terminal's; at most
    /// 4095).
    #[arg(short = 'H', long, value_name = "HEIGHT", value_parser = columns, help_heading = "Display")]
    pub height: Option<usize>,
    /// A name in front of the display (with -M both, a second -N is the
    /// output side's).
    #[arg(short = 'N', long = "name", id = "name", value_name = "NAME", action = ArgAction::Append, help_heading = "Display")]
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
    #[arg(short = 'L', long = "rate-limit", value_name = "RATE", value_parser = size, help_heading = "Transfer")]
    pub rate_limit: Option<u64>,
    /// Read/write buffer size, at most 1T (status 64 past it, or past
    /// what the system gives). Takes K, M, G.
    #[arg(short = 'B', long = "buffer-size", value_name = "SIZE", value_parser = size, help_heading = "Transfer")]
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
    #[arg(short = 'Z', long = "error-skip-block", value_name = "SIZE", value_parser = size, help_heading = "Transfer")]
    pub error_skip_block: Option<u64>,
    /// Stop after the -s size (-s 0: copy everything, as pv).
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
    #[arg(short = 'o', long, value_name = "FILE", help_heading = "Transfer")]
    pub output: Option<PathBuf>,
    /// Set the output pipe's size (and an intermediate pipe's) to SIZE
    /// where the system allows it, silently not where it does not.
    #[arg(short = 'J', long = "pipe-buffer-size", value_name = "SIZE", value_parser = size, help_heading = "Transfer")]
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
    #[arg(short = 'd', long = "watchfd", value_name = "PID[:FD]|=NAME|@LISTFILE", value_parser = watch_spec, conflicts_with_all = ["rate_limit", "stop_at_size", "line_mode", "monitor", "store_and_forward"], help_heading = "Transfer")]
    pub watchfd: Vec<WatchSpec>,
    /// Run the command the operands name (after `--` if it has options)
    /// and meter its standard input (in, 0), output (out, 1) or both (2).
    #[arg(short = 'M', long, value_name = "SIDE", value_parser = side, conflicts_with = "store_and_forward", help_heading = "Transfer")]
    pub monitor: Option<Side>,

    // Control.
    /// Change -L, -s, -N, -i and the display of the meter of process PID.
    #[arg(short = 'R', long, value_name = "PID", value_parser = pid, conflicts_with = "query", help_heading = "Control")]
    pub remote: Option<u32>,
    /// Print the state of the meter of process PID.
    #[arg(short = 'Q', long, value_name = "PID", value_parser = pid, help_heading = "Control")]
    pub query: Option<u32>,
    /// Write this process's ID to FILE while it runs (a regular file that
    /// is no input or output, else refused with status 1 before anything
    /// is emptied; removed at the end).
    #[arg(short = 'P', long, value_name = "FILE", help_heading = "Control")]
    pub pidfile: Option<PathBuf>,
    /// Print the version and exit.
    #[arg(short = 'V', long, help_heading = "Control")]
    pub version: bool,
}

/// What parsing leaves to do, with the matches at hand: `-F` and `-N` are
/// the last given (pv takes the last of every option; `-M both` reads the
/// first and the last), and a size given after `-k` is read again in
/// powers of 1000 (pv 1.12: `-k` counts for the options after it).
pub fn settle(matches: &clap::ArgMatches, args: &mut PvArgs) -> Result<(), String> {
    args.format = args.formats.last().cloned();
    args.name = args.names.last().cloned();
    let Some(si_at) = matches.indices_of("si").and_then(Iterator::min) else {
        return Ok(());
    };
    let after_si = |id: &str| -> Result<Option<u64>, String> {
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
            _ => size_in(text, 1000).map(Some),
        }
    };
    if let Some(n) = after_si("size")? {
        args.size = Some(SizeSpec::Bytes(n));
    }
    for (id, field) in [
        ("rate_limit", &mut args.rate_limit),
        ("buffer_size", &mut args.buffer_size),
        ("error_skip_block", &mut args.error_skip_block),
        ("pipe_buffer_size", &mut args.pipe_buffer_size),
    ] {
        if let Some(n) = after_si(id)? {
            *field = Some(n);
        }
    }
    Ok(())
}
