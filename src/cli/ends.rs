//! `pipespeed write` and `pipespeed read`: the blog's two programs.

use std::io;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::bench::reader::ReadRun;
use crate::bench::reader::{Input, ReadMethod, ReaderConfig, run_reader};
use crate::bench::writer::{EndConfig, WriteMethod, WriterConfig, endless_hazard, run_writer};
use crate::buf::{BufferOptions, MALLOC_OFFSET};
use crate::double_buffer::Layout;
use crate::report::{Csv, Exporter, Text};
use crate::sys::inherited::Stdio;
use crate::sys::{available_cpus, fd_info, pin_to_cpu};
use crate::units::Size;
use crate::wait::Wait;
use anyhow::Context;
use clap::Args;

use crate::cli::UsageError;
use crate::cli::args::{
    buffer_offset, buffer_size, cpu, cpu_list, pipe_size, positive_size, run_bytes,
};
use crate::cli::output::{check_outputs, print_table, write_file};

/// Options both ends share (the blog's programs share one option parser).
#[derive(Debug, Args)]
pub struct EndArgs {
    /// Buffer size (vmsplice splits it into two halves). Takes K, M, G
    /// [range: 1-1G].
    #[arg(long = "buf-size", visible_alias = "buf", alias = "buf_size", value_name = "SIZE", default_value = "256K", value_parser = buffer_size)]
    pub buf_size: usize,
    /// Pipe size to set with F_SETPIPE_SZ (vmsplice: always half the
    /// buffer) [range: 1-1G].
    #[arg(long = "pipe-size", alias = "pipe_size", value_name = "SIZE", value_parser = pipe_size)]
    pub pipe_size: Option<usize>,
    /// Start the buffer BYTES past a page boundary, less than a page.
    /// Default: 16 for the writer (where malloc puts it, as in the blog),
    /// 0 with --huge-page or --gift and for the reader.
    #[arg(long = "buf-offset", value_name = "BYTES", value_parser = buffer_offset)]
    pub buf_offset: Option<usize>,
    /// Put the buffer on 2 MiB transparent huge pages (aligned + MADV_HUGEPAGE).
    #[arg(long = "huge-page", visible_alias = "huge", alias = "huge_page")]
    pub huge_page: bool,
    /// Fail (exit 3) unless the buffer really is on huge pages.
    #[arg(long = "check-huge-page", alias = "check_huge_page")]
    pub check_huge_page: bool,
    /// Non-blocking calls retried on EAGAIN instead of sleeping.
    ///
    /// A busy end spins on its CPU: the two ends need one each. Without
    /// --cpu, on at most 2 allowed CPUs (sched_getaffinity: the machine's,
    /// or taskset's), the end prints one line saying how to pin them,
    /// since the scheduler may put both on one CPU, where they spin against
    /// each other (docs/ends.md gives the blog's pair measured both ways on
    /// 2 vCPUs). With 3 or more, one is left over for the rest of the
    /// machine, and nothing is said.
    #[arg(long = "busy-loop", visible_alias = "busy", alias = "busy_loop")]
    pub busy_loop: bool,
    /// poll(2) before every call (with --busy-loop: poll with no timeout).
    #[arg(long)]
    pub poll: bool,
    /// SPLICE_F_GIFT on vmsplice; SPLICE_F_MOVE on the reader's splice.
    #[arg(long)]
    pub gift: bool,
    /// Lock the buffer in memory (mlock).
    #[arg(long = "lock-memory", alias = "lock_memory")]
    pub lock_memory: bool,
    /// Do not fault the buffer's pages in before piping.
    #[arg(long = "dont-touch-pages", alias = "dont_touch_pages")]
    pub dont_touch_pages: bool,
    /// Send (write) or check (read) a stream where every byte is checkable.
    #[arg(long)]
    pub verify: bool,
    /// Pin this process to CPU N [range: 0-1023].
    #[arg(long, value_name = "N", value_parser = cpu)]
    pub cpu: Option<usize>,
    /// Print the settings to stderr before starting, in one line of
    /// words: method, buffer, pipe, waiting, bytes, CPU.
    #[arg(long)]
    pub verbose: bool,
}

/// `pipespeed write`.
#[derive(Debug, Args)]
#[command(
    after_help = "Standard output must be a pipe, a FIFO, a socket or a character device other than a terminal (/dev/null): without --bytes the writer never stops, so a regular file (which it would fill), a terminal or a block device is refused (status 2) before anything is written; with --bytes they take exactly that.\n\nExit status: 0 the bytes asked for were sent, or the reader went away; 1 an error (a closed stdout included); 2 bad usage (an endless stream to a file or terminal included); 3 not possible on this machine (huge pages not granted, vmsplice refused)."
)]
pub struct WriteArgs {
    #[command(flatten)]
    pub end: EndArgs,
    /// vmsplice two alternating halves instead of write(2).
    #[arg(long, aliases = ["write_with_vmsplice", "write-with-vmsplice"])]
    pub vmsplice: bool,
    /// Make the two halves one contiguous mapping.
    #[arg(long = "same-buffer", alias = "same_buffer")]
    pub same_buffer: bool,
    /// UNSAFE, for showing the hazard: size the pipe to SIZE instead of half
    /// the buffer, so halves are refilled while still in the pipe. Not
    /// with --gift (gifted pages must not change in the pipe) [range:
    /// 1-1G].
    #[arg(long = "unsafe-early-reuse", value_name = "SIZE", value_parser = pipe_size, requires = "vmsplice", conflicts_with = "gift")]
    pub unsafe_early_reuse: Option<usize>,
    /// Stop after SIZE bytes (default: until the reader goes away, which
    /// needs a pipe, socket or character device as stdout) [at most
    /// 1024T].
    #[arg(long, aliases = ["bytes_to_pipe", "bytes-to-pipe"], value_name = "SIZE", value_parser = run_bytes)]
    pub bytes: Option<u64>,
}

/// `pipespeed read`.
#[derive(Debug, Args)]
#[command(
    after_help = "Standard input is meant to be a pipe: from anything else (a file, /dev/zero) the figure is still printed, as what was measured, but one line on stderr says what the input is, the line says \"read from a regular file, not a pipe\" instead of \"piped\", and the JSON's \"input\" and the CSV's last column name it.\n\nExit status: 0 the bytes asked for arrived; 1 an error, or the input ended before --bytes; 2 bad usage; 3 not possible on this machine (huge pages not granted)."
)]
pub struct ReadArgs {
    #[command(flatten)]
    pub end: EndArgs,
    /// splice(2) to /dev/null instead of read(2).
    #[arg(long, aliases = ["read_with_splice", "read-with-splice"])]
    pub splice: bool,
    /// Bytes to consume [range: 1-1024T]; fewer before the input ends is
    /// an error (status 1).
    #[arg(long, aliases = ["bytes_to_pipe", "bytes-to-pipe"], value_name = "SIZE", default_value = "10G", value_parser = positive_size)]
    pub bytes: u64,
    /// Write one CSV line to FILE (- or no FILE: standard output), the
    /// columns: gib_s, bytes, buf_size, pipe_size, busy_loop, poll,
    /// huge_page, check_huge_page, read_with_splice, gift, lock_memory,
    /// dont_touch_pages, seconds, input (pipe, file, char-device, ...).
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub csv: Option<PathBuf>,
    /// Write the measurement as one JSON object on one line to FILE (- or
    /// no FILE: standard output). With a result on standard output, the
    /// blog's line goes to stderr; with none, to stdout.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
}

/// Checks the options both ends share, pins the process and says what
/// they tell either end. `offset` is the buffer offset when
/// `--buf-offset` is not given.
fn prepare(end: &EndArgs, offset: usize) -> anyhow::Result<EndConfig> {
    if end.dont_touch_pages && end.check_huge_page {
        return Err(UsageError(
            "--dont-touch-pages and --check-huge-page exclude each other: untouched pages cannot be checked".into(),
        )
        .into());
    }
    if let Some(cpu) = end.cpu {
        pin_to_cpu(cpu)?;
    }
    Ok(EndConfig {
        buf_size: end.buf_size,
        pipe_size: end.pipe_size,
        buffer: BufferOptions {
            huge_pages: end.huge_page,
            lock: end.lock_memory,
            dont_touch: end.dont_touch_pages,
            offset: end.buf_offset.unwrap_or(offset),
        },
        check_huge_pages: end.check_huge_page,
        wait: Wait::from_flags(end.busy_loop, end.poll),
        gift: end.gift,
        verify: end.verify,
    })
}

/// The most CPUs on which an unpinned busy-looping end says how to pin
/// the two (why: `--busy-loop`'s help); the scheduler may put both on one
/// (another task on the other, or a wake-up placed beside its waker).
const BUSY_HINT_CPUS: usize = 2;

/// The line a busy-looping end without `--cpu` prints when it may run on
/// at most [`BUSY_HINT_CPUS`] CPUs (`cpus`, its affinity), or `None`.
/// A process cannot see the other end; this is the one it can judge.
fn busy_hint(end: &str, end_args: &EndArgs, cpus: &[usize]) -> Option<String> {
    if !end_args.busy_loop || end_args.cpu.is_some() || cpus.len() > BUSY_HINT_CPUS {
        return None;
    }
    Some(match cpus {
        [a, b] => format!(
            "pipespeed {end}: busy-looping unpinned on 2 CPUs: the two ends may share one and \
             spin against each other; pin them: pipespeed write --cpu {a} ... | pipespeed read \
             --cpu {b} ..."
        ),
        // One CPU: the machine's only one (both ends on it), or taskset's
        // for this end (the other may have its own): said both ways.
        [one] => format!(
            "pipespeed {end}: busy-looping unpinned on 1 CPU ({one}): if the other end runs \
             there too, the two spin against each other; give each its own: pipespeed write \
             --cpu A ... | pipespeed read --cpu B ..., or drop --busy-loop"
        ),
        _ => return None,
    })
}

/// `--verbose`'s line, and the busy-loop hint when it applies; called
/// after pinning, so the CPUs are those the process may really use.
fn announce(end: &str, args: &EndArgs, settings: &dyn std::fmt::Display) {
    let cpus = available_cpus().unwrap_or_default();
    if args.verbose {
        let placement = match (args.cpu, cpus.as_slice()) {
            (Some(cpu), _) => format!("pinned to CPU {cpu}"),
            (None, [one]) => format!("on CPU {one} only"),
            (None, list) => format!("unpinned (CPUs {})", cpu_list(list)),
        };
        eprintln!("pipespeed {end}: {settings}, {placement}");
    }
    if let Some(hint) = busy_hint(end, args, &cpus) {
        eprintln!("{hint}");
    }
}

/// Refuses an endless stream (no `--bytes`) to a standard output it would
/// fill or flood (see [`endless_hazard`]), before anything is written.
fn check_endless(bytes: Option<u64>) -> anyhow::Result<()> {
    if bytes.is_some() {
        return Ok(());
    }
    let kind = fd_info(io::stdout()).context("standard output")?.kind;
    match endless_hazard(kind) {
        None => Ok(()),
        Some((what, cause)) => Err(UsageError(format!(
            "write: {} is {what}: without --bytes the writer never stops and {cause}; \
             give --bytes SIZE, or pipe it: pipespeed write | pipespeed read",
            Stdio::Stdout.name()
        ))
        .into()),
    }
}

pub(super) fn write(args: WriteArgs) -> anyhow::Result<ExitCode> {
    check_endless(args.bytes)?;
    // The blog mallocs its buffers; huge pages need 2 MiB alignment and
    // SPLICE_F_GIFT whole pages.
    let offset = if args.end.huge_page || args.end.gift {
        0
    } else {
        MALLOC_OFFSET
    };
    let end = prepare(&args.end, offset)?;
    let page = rustix::param::page_size();
    let half = args.end.buf_size / 2;
    if args.vmsplice && (half == 0 || !half.is_multiple_of(page)) {
        return Err(UsageError(format!(
            "--vmsplice needs a --buf-size of two halves of whole pages (e.g. 8K or 256K), \
             and half of {} is {}",
            Size(args.end.buf_size as u64),
            Size(half as u64)
        ))
        .into());
    }
    if args.vmsplice && args.end.pipe_size.is_some() {
        return Err(UsageError(
            "--pipe-size does not go with --vmsplice: the pipe is sized to half of --buf-size"
                .into(),
        )
        .into());
    }
    let config = WriterConfig {
        method: if args.vmsplice {
            WriteMethod::Vmsplice
        } else {
            WriteMethod::Write
        },
        end,
        layout: if args.same_buffer {
            Layout::Contiguous
        } else {
            Layout::Separate
        },
        unsafe_early_reuse: args.unsafe_early_reuse,
        bytes: args.bytes,
    };
    announce("write", &args.end, &config);
    let stdout = io::stdout();
    run_writer(stdout.as_fd(), &config).context("write")?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn read(args: ReadArgs) -> anyhow::Result<ExitCode> {
    let end = prepare(&args.end, 0)?;
    let results = [&args.json, &args.csv];
    check_outputs(results)?;
    let config = ReaderConfig {
        method: if args.splice {
            ReadMethod::Splice
        } else {
            ReadMethod::Read
        },
        end,
        bytes: args.bytes,
    };
    announce("read", &args.end, &config);
    let stdin = io::stdin();
    let input = Input::of(stdin.as_fd()).context("standard input")?;
    if input != Input::Pipe {
        // The figure is still what was measured: said before it, once.
        eprintln!(
            "pipespeed read: {} is {}, not a pipe: the figure measures reading it, not a pipe",
            Stdio::Stdin.name(),
            input.described()
        );
    }
    let report = run_reader(stdin.as_fd(), &config).context("read")?;
    let run = ReadRun {
        config: &config,
        report: &report,
    };
    write_file(&args.json, || {
        // One line, as the reader always printed it (not pretty-printed).
        let mut line = serde_json::to_vec(&report).map_err(io::Error::other)?;
        line.push(b'\n');
        Ok(line)
    })?;
    write_file(&args.csv, || Csv.export(&run))?;
    print_table(&Text::default().export(&run)?, results)?;
    if let Some(mismatch) = &report.mismatch {
        anyhow::bail!("verify failed: {mismatch}");
    }
    if report.eof {
        // The measurement asked for did not happen: say so, fail.
        eprintln!(
            "pipespeed: read: input ended after {} bytes, before the {} asked for",
            report.bytes,
            Size(args.bytes)
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
