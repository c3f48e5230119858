//! pv's copy loop: every input to the output through the copy engine,
//! held to `-L` (a rate limit), stopped at `-S` (a size), counting bytes
//! or, with `-l`, lines for the display.
//!
//! The rate limit is a [`TokenBucket`]: before each stretch of copying the
//! loop takes what the bucket holds and lets the copy engine move that
//! much and no more, then sleeps until the bucket has a byte again.
//! Copying time earns tokens as much as sleeping does. The clock is a
//! [`Clock`], so tests can run a limit without waiting for it.

use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::meter::{TokenBucket, count_lines};
use crate::copy::{Copier, CopyError, CopyOptions};
use crate::sys::{FdInfo, FdKind};

/// Where time comes from and how the loop waits for it.
pub trait Clock: Send {
    /// Now.
    fn now(&mut self) -> Instant;
    /// Waits `duration`.
    fn sleep(&mut self, duration: Duration);
}

/// The real clock: [`Instant::now`] and [`std::thread::sleep`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

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
pub struct TransferOptions {
    /// How the copy engine moves bytes (`-C`, `-B`).
    pub copy: CopyOptions,
    /// `-L`: at most this many bytes a second.
    pub rate_limit: Option<u64>,
    /// `-S`: stop after this many bytes, over all inputs.
    pub stop_at: Option<u64>,
    /// `-l`: count lines instead of bytes.
    pub lines: bool,
}

/// Why [`Transfer::copy`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The input ended: go on with the next one.
    Input,
    /// The stop size was reached: copy nothing more.
    StopSize,
}

/// The copy loop of one pv run, over all its inputs.
pub struct Transfer {
    copier: Copier,
    count: Arc<AtomicU64>,
    stop_at: Option<u64>,
    /// The bucket, and when it was last filled.
    limit: Option<(TokenBucket, Instant)>,
    clock: Box<dyn Clock>,
}

impl std::fmt::Debug for Transfer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transfer")
            .field("copier", &self.copier)
            .field("count", &self.count)
            .field("stop_at", &self.stop_at)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl Transfer {
    /// A transfer on the real clock.
    pub fn new(options: TransferOptions) -> Transfer {
        Transfer::with_clock(options, Box::new(SystemClock))
    }

    /// A transfer whose rate limit keeps time by `clock`.
    pub fn with_clock(options: TransferOptions, mut clock: Box<dyn Clock>) -> Transfer {
        let mut copier = Copier::new(options.copy);
        let count = if options.lines {
            let lines = Arc::new(AtomicU64::new(0));
            let counter = Arc::clone(&lines);
            copier.set_inspector(Some(Box::new(move |bytes: &[u8]| {
                counter.fetch_add(count_lines(bytes), Ordering::Relaxed);
            })));
            lines
        } else {
            copier.progress()
        };
        let limit = options
            .rate_limit
            .map(|rate| (TokenBucket::new(rate), clock.now()));
        Transfer {
            copier,
            count,
            stop_at: options.stop_at,
            limit,
            clock,
        }
    }

    /// The count the display shows: bytes (or lines) copied so far, over
    /// all inputs.
    pub fn count(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.count)
    }

    /// Copies `input` to `output` until the input ends or the stop size
    /// is reached, keeping to the rate limit. An error says which side
    /// failed; what was copied before it stays counted.
    pub fn copy(&mut self, input: impl AsFd, output: impl AsFd) -> Result<Ended, CopyError> {
        let (input, output) = (input.as_fd(), output.as_fd());
        loop {
            // What may go now: all of it, or what the rate and the stop
            // size allow.
            let mut allowed = u64::MAX;
            if let Some((bucket, last)) = &mut self.limit {
                loop {
                    let now = self.clock.now();
                    bucket.refill(now.saturating_duration_since(*last));
                    *last = now;
                    let got = bucket.take(u64::MAX);
                    if got > 0 {
                        allowed = got;
                        break;
                    }
                    self.clock.sleep(bucket.wait());
                }
            }
            if let Some(stop) = self.stop_at {
                let so_far = self.count.load(Ordering::Relaxed);
                allowed = allowed.min(stop.saturating_sub(so_far));
                if allowed == 0 {
                    return Ok(Ended::StopSize);
                }
            }
            self.copier.options_mut().limit = (allowed != u64::MAX).then_some(allowed);
            let copied = self.copier.copy(input, output)?;
            // Short of the limit: this input has ended.
            if copied.bytes < allowed {
                return Ok(Ended::Input);
            }
        }
    }
}

/// pv's "input file is output file": the input is a regular file or a
/// block device, and the very file standard output writes to, wherever
/// either stands (pv is stricter than GNU cat, which lets a file be
/// rewritten in place).
pub fn input_is_output(input: &FdInfo, output: &FdInfo) -> bool {
    matches!(input.kind, FdKind::Regular | FdKind::BlockDevice) && input.same_file(output)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::fs::File;
    use std::io::{Read, Seek, Write};
    use std::sync::{Mutex, OnceLock};

    use super::*;

    /// What the fake clock saw: the time slept, the sleeps, and the count
    /// of the transfer at each sleep.
    #[derive(Default)]
    struct Seen {
        elapsed: Duration,
        counts: Vec<(Duration, u64)>,
    }

    /// A clock that moves only when the loop sleeps.
    struct FakeClock {
        start: Instant,
        seen: Arc<Mutex<Seen>>,
        count: Arc<OnceLock<Arc<AtomicU64>>>,
    }

    impl Clock for FakeClock {
        fn now(&mut self) -> Instant {
            self.start + self.seen.lock().unwrap().elapsed
        }

        fn sleep(&mut self, duration: Duration) {
            let mut seen = self.seen.lock().unwrap();
            seen.elapsed += duration;
            let count = self.count.get().map_or(0, |c| c.load(Ordering::Relaxed));
            let at = seen.elapsed;
            seen.counts.push((at, count));
        }
    }

    fn file_of(bytes: &[u8]) -> File {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(bytes).unwrap();
        file.rewind().unwrap();
        file
    }

    fn contents(mut file: File) -> Vec<u8> {
        file.rewind().unwrap();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap();
        bytes
    }

    fn data(n: u32) -> Vec<u8> {
        (0..n).map(|i| (i % 251) as u8).collect()
    }

    /// A transfer on a fake clock, and what the clock saw.
    fn faked(options: TransferOptions) -> (Transfer, Arc<Mutex<Seen>>) {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let count = Arc::new(OnceLock::new());
        let clock = FakeClock {
            start: Instant::now(),
            seen: Arc::clone(&seen),
            count: Arc::clone(&count),
        };
        let transfer = Transfer::with_clock(options, Box::new(clock));
        let _ = count.set(transfer.count());
        (transfer, seen)
    }

    #[test]
    fn a_rate_limit_holds_the_copy_to_the_rate_and_loses_nothing() {
        let bytes = data(100_000);
        let (input, out) = (file_of(&bytes), tempfile::tempfile().unwrap());
        let rate = 10_000u64;
        let (mut transfer, seen) = faked(TransferOptions {
            rate_limit: Some(rate),
            ..TransferOptions::default()
        });
        assert_eq!(transfer.copy(&input, &out).unwrap(), Ended::Input);
        assert_eq!(transfer.count().load(Ordering::Relaxed), 100_000);
        assert_eq!(contents(out), bytes);
        let seen = seen.lock().unwrap();
        // Never ahead of the rate: one burst (a tenth of a second's worth)
        // plus what the time so far earned.
        for &(at, count) in &seen.counts {
            let allowed = rate as f64 * (0.1 + at.as_secs_f64());
            assert!(count as f64 <= allowed + 1.0, "{count} bytes at {at:?}");
        }
        // And never slower: 100 000 bytes less the first burst of 1000 is
        // 9.9 s at 10 000 a second.
        let secs = seen.elapsed.as_secs_f64();
        assert!((9.8..=10.0).contains(&secs), "{secs} s");
        assert!(seen.counts.len() > 50, "{} sleeps", seen.counts.len());
    }

    #[test]
    fn the_stop_size_ends_the_copy_exactly_there_over_all_inputs() {
        let (first, second) = (data(3000), data(5000));
        let out = tempfile::tempfile().unwrap();
        let (mut transfer, _) = faked(TransferOptions {
            stop_at: Some(4000),
            ..TransferOptions::default()
        });
        assert_eq!(transfer.copy(file_of(&first), &out).unwrap(), Ended::Input);
        assert_eq!(
            transfer.copy(file_of(&second), &out).unwrap(),
            Ended::StopSize
        );
        assert_eq!(
            transfer.copy(file_of(&second), &out).unwrap(),
            Ended::StopSize
        );
        let expected = [&first[..], &second[..1000]].concat();
        assert_eq!(contents(out), expected);
    }

    #[test]
    fn a_stop_size_and_a_rate_limit_together() {
        let bytes = data(50_000);
        let out = tempfile::tempfile().unwrap();
        let (mut transfer, seen) = faked(TransferOptions {
            rate_limit: Some(10_000),
            stop_at: Some(20_000),
            ..TransferOptions::default()
        });
        assert_eq!(
            transfer.copy(file_of(&bytes), &out).unwrap(),
            Ended::StopSize
        );
        assert_eq!(contents(out), &bytes[..20_000]);
        let secs = seen.lock().unwrap().elapsed.as_secs_f64();
        assert!((1.8..=2.0).contains(&secs), "{secs} s");
    }

    #[test]
    fn line_mode_counts_lines_and_copies_every_byte() {
        let text = b"one\ntwo\n\nthree without end".repeat(1000);
        let out = tempfile::tempfile().unwrap();
        let mut transfer = Transfer::new(TransferOptions {
            lines: true,
            ..TransferOptions::default()
        });
        assert_eq!(transfer.copy(file_of(&text), &out).unwrap(), Ended::Input);
        assert_eq!(transfer.count().load(Ordering::Relaxed), 3000);
        assert_eq!(contents(out), text);
    }
}
