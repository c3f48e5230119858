//! `pipespeed write` and `pipespeed read`: the blog's two programs.

use std::io;
use std::os::fd::AsFd;
use std::process::ExitCode;

use anyhow::Context;
use pipespeed::bench::reader::{Input, ReadMethod, ReaderConfig, run_reader};
use pipespeed::bench::writer::{WriteMethod, WriterConfig, endless_hazard, run_writer};
use pipespeed::buf::{BufferOptions, MALLOC_OFFSET};
use pipespeed::double_buffer::Layout;
use pipespeed::report::ReadRun;
use pipespeed::report::{Csv, Exporter, Text};
use pipespeed::sys::inherited::Stdio;
use pipespeed::sys::{available_cpus, fd_info, pin_to_cpu};
use pipespeed::units::Size;
use pipespeed::wait::Wait;

use crate::UsageError;
use crate::args::{EndArgs, ReadArgs, WriteArgs};
use crate::output::{check_outputs, print_table, write_file};

/// Checks the options both ends share and pins the process. `offset` is
/// the buffer offset when `--buf-offset` is not given.
fn prepare(end: &EndArgs, offset: usize) -> anyhow::Result<BufferOptions> {
    if end.dont_touch_pages && end.check_huge_page {
        return Err(UsageError(
            "--dont-touch-pages and --check-huge-page exclude each other: untouched pages cannot be checked".into(),
        )
        .into());
    }
    if let Some(cpu) = end.cpu {
        pin_to_cpu(cpu)?;
    }
    Ok(BufferOptions {
        huge_pages: end.huge_page,
        lock: end.lock_memory,
        dont_touch: end.dont_touch_pages,
        offset: end.buf_offset.unwrap_or(offset),
    })
}

/// The most CPUs on which an unpinned busy-looping end says how to pin
/// the two: the blog's pair needs one CPU each, and on 2 the scheduler may
/// put both on one (another task on the other, or a wake-up placed beside
/// its waker), where each spins through the other's time slice. With 3 or
/// more, a CPU is left over for the rest of the machine.
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
            (None, list) => format!(
                "unpinned (CPUs {})",
                list.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
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

pub fn write(args: WriteArgs) -> anyhow::Result<ExitCode> {
    check_endless(args.bytes)?;
    // The blog mallocs its buffers; huge pages need 2 MiB alignment and
    // SPLICE_F_GIFT whole pages.
    let offset = if args.end.huge_page || args.end.gift {
        0
    } else {
        MALLOC_OFFSET
    };
    let buffer = prepare(&args.end, offset)?;
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
        buf_size: args.end.buf_size,
        pipe_size: args.end.pipe_size,
        buffer,
        check_huge_pages: args.end.check_huge_page,
        wait: Wait::from_flags(args.end.busy_loop, args.end.poll),
        gift: args.end.gift,
        layout: if args.same_buffer {
            Layout::Contiguous
        } else {
            Layout::Separate
        },
        unsafe_early_reuse: args.unsafe_early_reuse,
        verify: args.end.verify,
        bytes: args.bytes,
    };
    announce("write", &args.end, &config);
    let stdout = io::stdout();
    run_writer(stdout.as_fd(), &config).context("write")?;
    Ok(ExitCode::SUCCESS)
}

pub fn read(args: ReadArgs) -> anyhow::Result<ExitCode> {
    let buffer = prepare(&args.end, 0)?;
    let results = [&args.json, &args.csv];
    check_outputs(results)?;
    let config = ReaderConfig {
        method: if args.splice {
            ReadMethod::Splice
        } else {
            ReadMethod::Read
        },
        buf_size: args.end.buf_size,
        pipe_size: args.end.pipe_size,
        buffer,
        check_huge_pages: args.end.check_huge_page,
        wait: Wait::from_flags(args.end.busy_loop, args.end.poll),
        gift: args.end.gift,
        verify: args.end.verify,
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
