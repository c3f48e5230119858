//! pv's copy loop: every input to the output through the copy engine,
//! held to `-L` (a rate limit), stopped at `-S` (a size), counting bytes
//! or, with `-l`, lines for the display.
//!
//! Before each stretch the loop takes what the [`TokenBucket`] holds and
//! lets the engine move that much, then sleeps until it has a byte again;
//! the [`Clock`] lets tests run a limit without waiting for it.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::meter::{PreviousLine, TokenBucket, count_lines};
use super::sparse::SparseWriter;
use crate::copy::{Copier, CopyError, CopyOptions, Side};
use crate::sys::socket::keeps_records;
use crate::sys::{FdInfo, FdKind};
use crate::wait::write_all;

/// Where time comes from and how the loop waits for it.
pub(crate) trait Clock: Send {
    /// Now.
    fn now(&mut self) -> Instant;
    /// Waits `duration`.
    fn sleep(&mut self, duration: Duration);
}

/// The real clock: [`Instant::now`] and [`std::thread::sleep`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn now(&mut self) -> Instant {
        Instant::now()
    }

    fn sleep(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// What a transfer is told.
#[derive(Debug, Clone, Default)]
pub(crate) struct TransferOptions {
    /// How the copy engine moves bytes (`-C`, `-B`).
    pub copy: CopyOptions,
    /// `-L`: at most this many bytes (lines, with `-l`) a second.
    pub rate_limit: Option<u64>,
    /// `-S`: stop after this many bytes, over all inputs.
    pub stop_at: Option<u64>,
    /// `-l`: count lines instead of bytes.
    pub lines: bool,
    /// `-0`: lines end with NUL, not newline.
    pub null: bool,
    /// `-A`: keep the last this many bytes written, for the display.
    pub last_written: usize,
    /// `%L`: keep the last whole line written, when the copy is made by
    /// read/write anyway (with splice pv 1.12's `%L` is blank).
    pub previous_line: bool,
    /// `-Y`: flush the output to its disk after every write.
    pub sync: bool,
    /// `-E`: skip read errors, writing zeros in place of what could not
    /// be read (given twice: report once per input).
    pub skip_errors: u8,
    /// `-Z`: skip this many bytes at each error instead of growing skips
    /// (any size: a skip stops at the input's end).
    pub error_skip_block: Option<u64>,
    /// `-K`: every read a whole number of these (O_DIRECT blocks); 0 or 1:
    /// any size.
    pub unit: u64,
    /// `-O`: seek over zeros written to a regular file, making holes
    /// ([`SparseWriter`]); by read/write.
    pub sparse: bool,
}

/// Why [`Transfer::copy`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The input ended: go on with the next one.
    Input,
    /// The stop size was reached: copy nothing more.
    StopSize,
}

/// A read error skipped by `-E`: bytes replaced by zeros in the output.
#[derive(Debug)]
pub(crate) struct Skipped {
    /// Where in the input.
    pub offset: u64,
    /// How many bytes.
    pub bytes: u64,
    /// The error.
    pub error: io::Error,
}

mod buffered;
mod kept;
pub(crate) use kept::{Lines, Tail};
use kept::{keep_lines, keep_tail};

/// The most zeros `-E` writes at once in place of a skipped stretch.
const ZERO_CHUNK: u64 = 64 * 1024;

/// Largest stretch written between two flushes with `-Y`.
const SYNC_STRETCH: u64 = 1 << 20;

/// The copy loop of one pv run, over all its inputs.
pub(crate) struct Transfer {
    copier: Copier,
    count: Arc<AtomicU64>,
    options: TransferOptions,
    /// `-L` as it is now (0: none): `pv -R` changes it while the copy runs.
    rate: Arc<AtomicU64>,
    /// The bucket, the rate it was made for, and when it was last filled.
    limit: Option<(TokenBucket, u64, Instant)>,
    tail: Option<Tail>,
    lines: Option<Lines>,
    clock: Box<dyn Clock>,
}

impl std::fmt::Debug for Transfer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transfer")
            .field("copier", &self.copier)
            .field("count", &self.count)
            .field("options", &self.options)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl Transfer {
    /// A transfer on the real clock.
    pub(crate) fn new(options: TransferOptions) -> Transfer {
        Transfer::with_clock(options, Box::new(SystemClock))
    }

    /// A transfer whose rate limit keeps time by `clock`.
    pub(crate) fn with_clock(options: TransferOptions, clock: Box<dyn Clock>) -> Transfer {
        let mut copier = Copier::new(options.copy);
        let tail = (options.last_written > 0)
            .then(|| Arc::new(Mutex::new(VecDeque::with_capacity(options.last_written))));
        let lines = options.lines.then(|| Arc::new(AtomicU64::new(0)));
        let read_write = lines.is_some()
            || tail.is_some()
            || options.copy.force == Some(crate::copy::Mechanism::ReadWrite);
        let previous = (options.previous_line && read_write)
            .then(|| Arc::new(Mutex::new(PreviousLine::default())));
        if lines.is_some() || tail.is_some() || previous.is_some() {
            let (lines, tail, previous) = (lines.clone(), tail.clone(), previous.clone());
            let keep = options.last_written;
            let end = if options.null { 0 } else { b'\n' };
            copier.set_inspector(Some(Box::new(move |bytes: &[u8]| {
                if let Some(lines) = &lines {
                    lines.fetch_add(count_lines(bytes, end), Ordering::Relaxed);
                }
                if let Some(tail) = &tail {
                    keep_tail(tail, bytes, keep);
                }
                keep_lines(previous.as_ref(), bytes, end);
            })));
        }
        let count = lines.unwrap_or_else(|| copier.progress());
        let rate = Arc::new(AtomicU64::new(options.rate_limit.unwrap_or(0)));
        Transfer {
            copier,
            count,
            options,
            rate,
            limit: None,
            tail,
            lines: previous,
            clock,
        }
    }

    /// The count the display shows: bytes (or lines) copied so far, over
    /// all inputs.
    pub(crate) fn count(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.count)
    }

    /// The rate limit, to change while the copy runs (0: none).
    pub(crate) fn rate_limit(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.rate)
    }

    /// The last bytes written, when `-A` asked to keep them.
    pub(crate) fn tail(&self) -> Option<Tail> {
        self.tail.clone()
    }

    /// The last whole line written, when `%L` asked for it.
    pub(crate) fn previous_line(&self) -> Option<Lines> {
        self.lines.clone()
    }

    /// What may go now under the rate limit: waits until the bucket has
    /// something, then takes all it has (`u64::MAX` without a limit).
    fn allowance(&mut self) -> u64 {
        let rate = self.rate.load(Ordering::Relaxed);
        if rate == 0 {
            self.limit = None;
            return u64::MAX;
        }
        let now = self.clock.now();
        // A new rate starts a new bucket.
        if self
            .limit
            .as_ref()
            .is_none_or(|(_, made_for, _)| *made_for != rate)
        {
            let bucket = TokenBucket::new(rate).in_units_of(self.options.unit);
            self.limit = Some((bucket, rate, now));
        }
        let clock = &mut self.clock;
        let Some((bucket, _, last)) = &mut self.limit else {
            return u64::MAX;
        };
        loop {
            let now = clock.now();
            bucket.refill(now.saturating_duration_since(*last));
            *last = now;
            let got = bucket.take(u64::MAX);
            if got > 0 {
                return got;
            }
            clock.sleep(bucket.wait());
        }
    }

    /// Copies `input` to `output` until the input ends or the stop size
    /// is reached, keeping to the rate limit. An error says which side
    /// failed; what was copied before it stays counted. With `-E`, read
    /// errors are skipped and each told to `skipped`.
    pub(crate) fn copy(
        &mut self,
        input: impl AsFd,
        output: impl AsFd,
        skipped: &mut dyn FnMut(Skipped),
    ) -> Result<Ended, CopyError> {
        let (input, output) = (input.as_fd(), output.as_fd());
        if keeps_records(input) || keeps_records(output) {
            return self.copy_records(input, output, None);
        }
        // (With -E, read errors are skipped by the loop below, whose
        // zeros are written, not seeked over.)
        if self.options.sparse
            && self.options.skip_errors == 0
            && let Some(mut sparse) = SparseWriter::for_output(output)
        {
            let ended = self.copy_records(input, output, Some(&mut sparse));
            let finished = sparse.finish(output).map_err(|source| CopyError {
                side: Side::Output,
                moved: 0,
                source,
            });
            return ended.and_then(|ended| finished.map(|()| ended));
        }
        // -l under -L or -S: a line at a time, cut where the count must
        // stop.
        if self.options.lines
            && (self.rate.load(Ordering::Relaxed) > 0 || self.options.stop_at.is_some())
        {
            return self.copy_lines(input, output);
        }
        let mut skip = Skip::default();
        loop {
            // What may go now: all of it, or what the rate, the stop size
            // and -Y allow.
            let mut allowed = self.allowance();
            if let Some(stop) = self.options.stop_at {
                let so_far = self.count.load(Ordering::Relaxed);
                allowed = allowed.min(stop.saturating_sub(so_far));
                if allowed == 0 {
                    return Ok(Ended::StopSize);
                }
            }
            if self.options.sync {
                allowed = allowed.min(SYNC_STRETCH);
            }
            self.copier.options_mut().limit = (allowed != u64::MAX).then_some(allowed);
            let copied = match self.copier.copy(input, output) {
                Ok(copied) => copied,
                // A directory fails every read (EISDIR): nothing there is
                // a damaged stretch to skip, and "skipping" it would write
                // zeros without end.
                Err(err)
                    if err.side == Side::Input
                        && self.options.skip_errors > 0
                        && err.source.raw_os_error() != Some(libc::EISDIR) =>
                {
                    let at = rustix::fs::seek(input, rustix::fs::SeekFrom::Current(0));
                    let Ok(offset) = at else { return Err(err) };
                    // Never past -S's size.
                    let asked = skip.next(self.options.error_skip_block).min(allowed);
                    let bytes = self.skip(input, output, offset, asked)?;
                    skipped(Skipped {
                        offset,
                        bytes,
                        error: err.source,
                    });
                    continue;
                }
                Err(err) => return Err(err),
            };
            skip = Skip::default();
            if self.options.sync {
                flush(output)?;
            }
            // Short of the limit: this input has ended.
            if copied.bytes < allowed {
                return Ok(Ended::Input);
            }
        }
    }

    /// `-E`: zeros in the output in place of `bytes` unreadable bytes at
    /// `offset` (fewer where the input ends first), and the input moved
    /// past them; how many.
    fn skip(
        &mut self,
        input: BorrowedFd<'_>,
        output: BorrowedFd<'_>,
        offset: u64,
        bytes: u64,
    ) -> Result<u64, CopyError> {
        let fail = |side, source| CopyError {
            side,
            moved: 0,
            source,
        };
        use rustix::fs::{SeekFrom, seek};
        // Never past the input's end: a -Z larger than what is left
        // stands for what is left, not for zeros the input never had.
        let end = seek(input, SeekFrom::End(0)).map_err(|e| fail(Side::Input, e.into()))?;
        let to = match offset.saturating_add(bytes) {
            to if end > offset => to.min(end),
            to => to,
        };
        seek(input, SeekFrom::Start(to)).map_err(|e| fail(Side::Input, e.into()))?;
        let mut left = to - offset;
        let zeros = vec![0u8; left.min(ZERO_CHUNK) as usize];
        while left > 0 {
            let now = left.min(ZERO_CHUNK) as usize;
            write_all(output, &zeros[..now], |n| {
                if !self.options.lines {
                    self.count.fetch_add(n as u64, Ordering::Relaxed);
                }
            })
            .map_err(|e| fail(Side::Output, e))?;
            left -= now as u64;
        }
        Ok(to - offset)
    }
}

/// The growing skips of `-E` without `-Z`: a byte, then doubling up to
/// 512 while errors follow each other.
#[derive(Debug, Default)]
struct Skip(u64);

impl Skip {
    fn next(&mut self, block: Option<u64>) -> u64 {
        if let Some(block) = block {
            return block.max(1);
        }
        self.0 = (self.0 * 2).clamp(1, 512);
        self.0
    }
}

/// `-Y`: what was written reaches the disk (a pipe or terminal has
/// nothing to flush).
fn flush(output: BorrowedFd<'_>) -> Result<(), CopyError> {
    match rustix::fs::fdatasync(output) {
        Ok(()) | Err(rustix::io::Errno::INVAL | rustix::io::Errno::ROFS) => Ok(()),
        Err(err) => Err(CopyError {
            side: Side::Output,
            moved: 0,
            source: err.into(),
        }),
    }
}

/// pv's "input file is also the output": the input is a regular file or
/// a block device, and the very file standard output writes to, wherever
/// either stands (pv is stricter than GNU cat, which lets a file be
/// rewritten in place); or a pipe that is also the output, whose bytes
/// would come back to be copied again for ever.
pub(crate) fn input_is_output(input: &FdInfo, output: &FdInfo) -> bool {
    matches!(
        input.kind,
        FdKind::Regular | FdKind::BlockDevice | FdKind::Pipe
    ) && input.same_file(output)
}

#[cfg(test)]
#[path = "copy/tests.rs"]
mod tests;
