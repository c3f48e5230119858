//! `pipespeed read`'s one line: the blog's words, or the CSV line of the
//! C reference (`pipe_ref read --csv`), for scripts that collect runs.

use std::io;

use super::{Input, ReadMethod, ReadReport, ReaderConfig};
use crate::report::{Csv, Exporter, Text};
use crate::units::Size;
use crate::wait::Wait;

/// One run of the reader: how it read, and what it measured.
#[derive(Debug, Clone, Copy)]
pub struct ReadRun<'a> {
    /// How it read.
    pub config: &'a ReaderConfig,
    /// What it measured.
    pub report: &'a ReadReport,
}

/// `12.3GiB/s, 256KiB buffer, 40960 iterations (10GiB piped)`, as the
/// blog's program prints it; from an input that is not a pipe, `(1MiB
/// read from a regular file, not a pipe)`.
impl Exporter<ReadRun<'_>> for Text {
    fn export(&self, run: &ReadRun<'_>) -> io::Result<Vec<u8>> {
        let (c, r) = (run.config, run.report);
        let how = match r.input {
            Input::Pipe => "piped".to_owned(),
            other => format!("read from {}, not a pipe", other.described()),
        };
        Ok(format!(
            "{:.1}GiB/s, {} buffer, {} iterations ({} {how})\n",
            r.gib_s,
            Size(c.end.buf_size as u64),
            r.bytes / c.end.buf_size.max(1) as u64,
            Size(r.bytes)
        )
        .into_bytes())
    }
}

/// `gib_s,bytes,buf_size,pipe_size,busy_loop,poll,huge_page,
/// check_huge_page,read_with_splice,gift,lock_memory,dont_touch_pages,
/// seconds,input`, without a header: the C reference's 13 columns, then
/// what stdin was (`pipe`, `file`, `char-device`, ... as in the JSON).
impl Exporter<ReadRun<'_>> for Csv {
    fn export(&self, run: &ReadRun<'_>) -> io::Result<Vec<u8>> {
        let (c, r) = (run.config, run.report);
        let b = |v: bool| u8::from(v);
        let (busy, poll) = match c.end.wait {
            Wait::Block => (false, false),
            Wait::Poll => (false, true),
            Wait::Busy => (true, false),
            Wait::BusyPoll => (true, true),
        };
        Ok(format!(
            "{:.6},{},{},{},{},{},{},{},{},{},{},{},{:.6},{}\n",
            r.gib_s,
            r.bytes,
            c.end.buf_size,
            c.end.pipe_size.unwrap_or(0),
            b(busy),
            b(poll),
            b(c.end.buffer.huge_pages),
            b(c.end.check_huge_pages),
            b(c.method == ReadMethod::Splice),
            b(c.end.gift),
            b(c.end.buffer.lock),
            b(c.end.buffer.dont_touch),
            r.seconds,
            r.input.name()
        )
        .into_bytes())
    }
}
