//! The copy loops that read into a buffer and write it out: to and from
//! sockets that keep records, `-O`'s holes, and `-l` under `-L` or `-S`.

use std::os::fd::BorrowedFd;
use std::sync::atomic::Ordering;

use super::{Ended, Transfer, flush, keep_lines, keep_tail};
use crate::copy::{CopyError, RecordWriter, Side, next_record_len, recv_measured};
use crate::pv::meter::count_lines;
use crate::pv::sparse::SparseWriter;
use crate::sys::socket::keeps_records;
use crate::wait::{read, write_all};

impl Transfer {
    /// To or from a socket that keeps records ([`records`]): a record is
    /// read whole and written whole, never split; `-L` waits for the
    /// tokens of a whole record (lines with `-l`), and `-S` leaves unread a
    /// record that would pass the stop size. With `sparse` (`-O`), a
    /// stream read and written through it.
    pub(super) fn copy_records(
        &mut self,
        input: BorrowedFd<'_>,
        output: BorrowedFd<'_>,
        mut sparse: Option<&mut SparseWriter>,
    ) -> Result<Ended, CopyError> {
        let fail = |side, source| CopyError {
            side,
            moved: 0,
            source,
        };
        let from_records = keeps_records(input);
        let end = if self.options.null { 0 } else { b'\n' };
        // A stream is read into `-B` bytes: zeroed by the allocator
        // (calloc: a large one is fresh pages, left untouched until a read
        // fills them), never by writing zeros over the whole of it. A
        // record socket's buffer grows to the records that come.
        let mut buf = if from_records {
            Vec::new()
        } else {
            vec![0u8; self.options.copy.buf_size.max(1)]
        };
        let mut writer = RecordWriter::default();
        loop {
            let so_far = self.count.load(Ordering::Relaxed);
            let left = self.options.stop_at.map(|stop| stop.saturating_sub(so_far));
            if left == Some(0) {
                return Ok(Ended::StopSize);
            }
            // Tokens of the rate limit taken so far for this stretch.
            let mut allowed = 0u64;
            let n = if from_records {
                let size = next_record_len(input).map_err(|e| fail(Side::Input, e))?;
                if size == 0 {
                    return Ok(Ended::Input);
                }
                if left.is_some_and(|left| size as u64 > left) {
                    return Ok(Ended::StopSize);
                }
                recv_measured(input, size, &mut buf).map_err(|e| fail(Side::Input, e))?
            } else {
                let mut want = left.map_or(buf.len(), |left| {
                    usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()))
                });
                // A stream of bytes is read no faster than -L allows: a
                // whole buffer read at once would be held back, not
                // written, until the rate allowed all of it.
                if !self.options.lines {
                    allowed = self.allowance();
                    want = want.min(usize::try_from(allowed).unwrap_or(usize::MAX));
                }
                let n = read(input, &mut buf[..want]).map_err(|e| fail(Side::Input, e))?;
                if n == 0 {
                    return Ok(Ended::Input);
                }
                n
            };
            let bytes = &buf[..n];
            let lines = count_lines(bytes, end);
            let units = if self.options.lines { lines } else { n as u64 };
            while allowed < units {
                allowed = allowed.saturating_add(self.allowance());
            }
            // One record stays one record where the output takes it; a
            // stream goes in the largest records the output takes.
            match sparse.as_deref_mut() {
                Some(sparse) => sparse.write_all(output, bytes, |_| {}),
                None => writer.write_all(output, bytes, |_| {}),
            }
            .map_err(|e| fail(Side::Output, e))?;
            self.count.fetch_add(units, Ordering::Relaxed);
            if let Some(tail) = &self.tail {
                keep_tail(tail, bytes, self.options.last_written);
            }
            let end = if self.options.null { 0 } else { b'\n' };
            keep_lines(self.lines.as_ref(), bytes, end);
            if self.options.sync {
                flush(output)?;
            }
        }
    }

    /// `-l` with `-L`: the limit counts lines, so the bytes are written a
    /// line at a time as the bucket allows.
    pub(super) fn copy_lines(
        &mut self,
        input: BorrowedFd<'_>,
        output: BorrowedFd<'_>,
    ) -> Result<Ended, CopyError> {
        let end = if self.options.null { 0 } else { b'\n' };
        let fail = |side, source| CopyError {
            side,
            moved: 0,
            source,
        };
        let mut buf = vec![0u8; self.options.copy.buf_size.max(1)];
        loop {
            let so_far = self.count.load(Ordering::Relaxed);
            if self.options.stop_at.is_some_and(|stop| so_far >= stop) {
                return Ok(Ended::StopSize);
            }
            let n = read(input, &mut buf).map_err(|e| fail(Side::Input, e))?;
            if n == 0 {
                return Ok(Ended::Input);
            }
            let mut chunk = &buf[..n];
            while !chunk.is_empty() {
                let mut lines = self.allowance();
                // -S: no line past the stop size.
                if let Some(stop) = self.options.stop_at {
                    let left = stop.saturating_sub(self.count.load(Ordering::Relaxed));
                    if left == 0 {
                        return Ok(Ended::StopSize);
                    }
                    lines = lines.min(left);
                }
                // Up to the end of the allowed line, or all that is left.
                let mut cut = chunk.len();
                let mut seen = 0u64;
                for (i, &b) in chunk.iter().enumerate() {
                    if b == end {
                        seen += 1;
                        if seen == lines {
                            cut = i + 1;
                            break;
                        }
                    }
                }
                let (now, rest) = chunk.split_at(cut);
                write_all(output, now, |_| {}).map_err(|e| fail(Side::Output, e))?;
                self.count
                    .fetch_add(count_lines(now, end), Ordering::Relaxed);
                if let Some(tail) = &self.tail {
                    keep_tail(tail, now, self.options.last_written);
                }
                keep_lines(self.lines.as_ref(), now, end);
                chunk = rest;
            }
        }
    }
}
