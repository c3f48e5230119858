//! `pipespeed write` and `pipespeed read`: the blog's two programs.

use std::io;
use std::os::fd::AsFd;
use std::process::ExitCode;

use anyhow::Context;
use pipespeed::bench::reader::{ReadMethod, ReaderConfig, run_reader};
use pipespeed::bench::writer::{WriteMethod, WriterConfig, run_writer};
use pipespeed::buf::{BufferOptions, MALLOC_OFFSET};
use pipespeed::double_buffer::Layout;
use pipespeed::report::ReadRun;
use pipespeed::report::{Csv, Exporter, Text};
use pipespeed::sys::pin_to_cpu;
use pipespeed::units::Size;
use pipespeed::wait::Wait;

use crate::UsageError;
use crate::args::{EndArgs, ReadArgs, WriteArgs};

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

pub fn write(args: WriteArgs) -> anyhow::Result<ExitCode> {
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
    if args.end.verbose {
        eprintln!("pipespeed write: {config:?}");
    }
    let stdout = io::stdout();
    run_writer(stdout.as_fd(), &config).context("write")?;
    Ok(ExitCode::SUCCESS)
}

pub fn read(args: ReadArgs) -> anyhow::Result<ExitCode> {
    let buffer = prepare(&args.end, 0)?;
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
    if args.end.verbose {
        eprintln!("pipespeed read: {config:?}");
    }
    let stdin = io::stdin();
    let report = run_reader(stdin.as_fd(), &config).context("read")?;
    let run = ReadRun {
        config: &config,
        report: &report,
    };
    let line = if args.json {
        let mut line = serde_json::to_vec(&report)?;
        line.push(b'\n');
        line
    } else if args.csv {
        Csv.export(&run)?
    } else {
        Text::default().export(&run)?
    };
    crate::output::print(&line)?;
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
