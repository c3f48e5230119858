//! The display thread: draws the meter from the copy's counter every
//! interval, on the standard error it is handed, never holding up the
//! copy.

use std::io::{self, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, poll};
use rustix::time::Timespec;

use super::cursor::Cursor;
use super::meter::{Items, Snapshot, render, render_numeric};
use crate::sys::clock::local_seconds_of_day;

/// Whether and how to draw.
#[derive(Debug)]
pub struct Display {
    /// `-c`: this meter's row among the pipeline's, or `None` to draw on
    /// the current line.
    pub cursor: Option<Cursor>,
    /// What to show.
    pub items: Items,
    /// `-n`: numbers, one line each, instead of a meter.
    pub numeric: bool,
    /// `-W`: nothing until the first byte.
    pub wait: bool,
    /// How often to draw.
    pub interval: Duration,
    /// The size the progress and ETA count towards.
    pub size: Option<u64>,
    /// `-l`: the count is lines.
    pub lines: bool,
}

/// Draws on `out` every `interval` until `done` closes, then once more,
/// finished.
pub fn draw(
    display: &Display,
    count: &AtomicU64,
    start: Instant,
    done: &mpsc::Receiver<()>,
    out: &io::Stderr,
) {
    let width = terminal_width(out);
    let (mut last_count, mut last_time, mut tick) = (0u64, 0.0f64, 0u64);
    loop {
        let finished = !matches!(
            done.recv_timeout(display.interval),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        let now = start.elapsed().as_secs_f64();
        let n = count.load(Ordering::Relaxed);
        let snap = Snapshot {
            count: n,
            elapsed: now,
            rate: rate(n - last_count, now - last_time),
            size: display.size,
            lines: display.lines,
            done: finished,
            tick,
            clock: local_seconds_of_day(),
        };
        (last_count, last_time, tick) = (n, now, tick + 1);
        if display.wait && n == 0 {
            // -W: nothing until the first byte, and nothing if none came.
            if finished {
                return;
            }
            continue;
        }
        let text = if display.numeric {
            render_numeric(&snap, &display.items) + "\n"
        } else {
            let line = render(&snap, &display.items, width);
            match &display.cursor {
                Some(cursor) => cursor.place(&line),
                None if finished => format!("\r{line}\n"),
                None => format!("\r{line}"),
            }
        };
        // The last frame may wait a little for room; the others are
        // dropped rather than wait (the next one replaces them).
        let patience = if finished {
            Duration::from_secs(1)
        } else {
            Duration::ZERO
        };
        show(out, &text, patience);
        if finished {
            return;
        }
    }
}

/// Writes `text` to `stderr` if it can take it within `patience`: a
/// reader of stderr that stops reading must not stall the display thread
/// (holding stderr's lock, which the copying thread needs for its
/// messages).
pub fn show(stderr: &io::Stderr, text: &str, patience: Duration) {
    let timeout = Timespec {
        tv_sec: patience.as_secs() as i64,
        tv_nsec: i64::from(patience.subsec_nanos()),
    };
    let mut fds = [PollFd::new(stderr, PollFlags::OUT)];
    if matches!(poll(&mut fds, Some(&timeout)), Ok(n) if n > 0) {
        let _ = stderr.lock().write_all(text.as_bytes());
    }
}

/// Per second, `count` over `seconds` (0 over no time).
pub fn rate(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// The width of the terminal on `out`, or 80 when it is not one.
pub fn terminal_width(out: impl AsFd) -> usize {
    rustix::termios::tcgetwinsize(out.as_fd())
        .ok()
        .map(|w| usize::from(w.ws_col))
        .filter(|&w| w > 0)
        .unwrap_or(80)
}
