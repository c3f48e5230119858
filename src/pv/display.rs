//! The display thread: draws the meter from the copy's counter every
//! interval, on the standard error it is handed, never holding up the
//! copy. What it shows can change while it runs (`pv -R`): it reads the
//! shared [`Settings`] at every frame.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, poll};
use rustix::time::Timespec;

use super::cursor::Cursor;
use super::format::{CONEMU_END, Format, Segment};
use super::meter::{BarStyle, Items, Snapshot};

/// The longest interval, `-D` delay or `-m` window, in seconds: about
/// 11.6 days, more than any display needs (pv 1.12 takes any number).
pub(crate) const MAX_SECONDS: f64 = 1_000_000.0;

/// The shortest interval between two frames: pv 1.12 draws at most ten
/// times a second, and takes a shorter interval (0 too) as this one; a
/// display drawn without pause would flood stderr.
pub(crate) const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// An interval in seconds held to [`MIN_INTERVAL`] and [`MAX_SECONDS`];
/// `None` if it is not a number of seconds (negative, NaN).
pub(crate) fn interval_of(seconds: f64) -> Option<Duration> {
    (seconds >= 0.0)
        .then(|| Duration::try_from_secs_f64(seconds.min(MAX_SECONDS)).ok())
        .flatten()
        .map(|d| d.max(MIN_INTERVAL))
}

/// What a meter shows and how: the part of pv's options that `pv -R` can
/// change while it runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    /// The items asked for by letter (the format when `-F` is not given,
    /// and what `-n` prints).
    pub items: Items,
    /// `-F`: the format, in place of the items.
    pub format: Option<String>,
    /// `-n`: numbers, one line each, instead of a meter.
    pub numeric: bool,
    /// How often to draw.
    pub interval: Duration,
    /// The size the percentage and ETA count towards.
    pub size: Option<u64>,
    /// `-8`: bits, not bytes.
    pub bits: bool,
    /// `-g`: with an unknown size, the bar shows the rate against the
    /// highest seen.
    pub gauge: bool,
    /// `-w`: the width, in place of the terminal's.
    pub width: Option<usize>,
    /// `-m`: seconds the average rate (and so the ETA) is taken over.
    pub average_window: f64,
    /// `-x`: also show the line in the terminal's window title.
    pub window_title: bool,
    /// `-x`: also show the count in the process's name.
    pub process_title: bool,
    /// `-k`: amounts shown in powers of 1000.
    pub si: bool,
    /// `-u`: the style of `%p` and `%{progress-bar-only}`.
    pub bar_style: BarStyle,
    /// `-9`: ConEmu's progress sequence at the end of every line.
    pub conemu: bool,
    /// Whether the locale's characters are UTF-8: bars of blocks drawn
    /// as plain ones when not (see [`crate::sys::locale::ctype_is_utf8`]).
    pub utf8: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            items: Items::pv_default(),
            format: None,
            numeric: false,
            interval: Duration::from_secs(1),
            size: None,
            bits: false,
            gauge: false,
            width: None,
            average_window: 30.0,
            window_title: false,
            process_title: false,
            si: false,
            bar_style: BarStyle::Plain,
            conemu: false,
            utf8: false,
        }
    }
}

impl Settings {
    /// The format drawn: `-F`'s, or the items' (`-n`'s numbers with
    /// `-n`), and ConEmu's sequence at its end with `-9`.
    pub(crate) fn format(&self) -> Format {
        let format = match &self.format {
            Some(text) => Format::parse(text),
            None if self.numeric => Format::numeric(&self.items),
            // pv 1.12 leaves the ETA out when the size is unknown: no
            // blank in its place (`pv -te` on a pipe shows `0:00:01`).
            None if self.size.is_none() => Format::from_items(&Items {
                eta: false,
                fineta: false,
                ..self.items.clone()
            }),
            None => Format::from_items(&self.items),
        };
        if self.conemu {
            format.with_conemu()
        } else {
            format
        }
    }
}

/// Whether and how to draw, for the life of a meter.
#[derive(Debug)]
pub(crate) struct Display {
    /// `-c`: this meter's row among the pipeline's, or `None` to draw on
    /// the current line.
    pub cursor: Option<Arc<Cursor>>,
    /// What to show; shared with the remote control.
    pub settings: Arc<Mutex<Settings>>,
    /// `-W`: nothing until the first byte.
    pub wait: bool,
    /// `-D`: nothing until this long after the start.
    pub delay: Duration,
    /// `-l`: the count is lines.
    pub lines: bool,
    /// `-v`: the rate's statistics at the end.
    pub stats: bool,
}

/// What a display needs from the transfer, besides its count.
pub(crate) trait Source: Sync {
    /// Bytes (or lines) so far.
    fn count(&self) -> u64;
    /// `-A`: the last bytes written (at most `n`).
    fn last_written(&self, _n: usize) -> Vec<u8> {
        Vec::new()
    }
    /// `-T`: percent of the buffer towards the reader in use, `None` if
    /// it cannot be told.
    fn buffer_percent(&self) -> Option<u64> {
        None
    }
    /// `%L`: the last whole line written (its first bytes).
    fn previous_line(&self) -> Vec<u8> {
        Vec::new()
    }
}

impl Source for AtomicU64 {
    fn count(&self) -> u64 {
        self.load(Ordering::Relaxed)
    }
}

/// The state a meter keeps from one frame to the next: the rate, the
/// averaging window, the bounce of an unknown size, the statistics.
#[derive(Debug, Default)]
pub(crate) struct Meter {
    last: (u64, f64),
    history: VecDeque<(f64, u64)>,
    tick: u64,
    max_rate: f64,
    rates: Vec<f64>,
    previous_length: usize,
}

impl Meter {
    /// The snapshot at `now` seconds with `count` so far.
    pub(crate) fn snapshot(
        &mut self,
        count: u64,
        now: f64,
        done: bool,
        settings: &Settings,
    ) -> Snapshot {
        let (last_count, last_time) = self.last;
        // The last line shows the rate of the whole transfer, as pv's does.
        let rate = if done {
            per_second(count, now)
        } else {
            per_second(count.saturating_sub(last_count), now - last_time)
        };
        self.last = (count, now);
        if !done && now > 0.0 {
            self.rates.push(rate);
            self.max_rate = self.max_rate.max(rate);
        }
        // The bounce of an unknown size moves while bytes flow (and on the
        // last line, whose rate is the whole transfer's), as pv's does.
        if rate > 0.0 {
            self.tick = self.tick.wrapping_add(2);
        }
        self.history.push_back((now, count));
        while self
            .history
            .front()
            .is_some_and(|&(t, _)| now - t > settings.average_window)
            && self.history.len() > 2
        {
            self.history.pop_front();
        }
        let average = match self.history.front() {
            Some(&(t, c)) if !done && now - t >= settings.average_window * 0.5 && now > t => {
                per_second(count.saturating_sub(c), now - t)
            }
            _ => per_second(count, now),
        };
        Snapshot {
            count,
            elapsed: now,
            rate,
            average,
            size: settings.size.filter(|&s| s > 0),
            bits: settings.bits,
            done,
            tick: self.tick,
            name: settings.items.name.clone(),
            gauge: settings.gauge.then(|| {
                if self.max_rate > 0.0 {
                    (rate * 100.0 / self.max_rate) as u64
                } else {
                    0
                }
            }),
            max_rate: self.max_rate,
            si: settings.si,
            bar_style: settings.bar_style,
            utf8: settings.utf8,
            ..Snapshot::default()
        }
    }

    /// The line for `snap` in `format`, padded over a longer last line.
    pub(crate) fn line(&mut self, format: &Format, snap: &Snapshot, width: usize) -> String {
        let (line, columns) = format.render_columns(snap, width, self.previous_length);
        self.previous_length = columns;
        line
    }

    /// `-v`'s line: the rate's minimum, mean, maximum and standard
    /// deviation over the updates of the transfer, in bytes (or lines) a
    /// second with 3 decimals and `b/s` with `-8`, as pv 1.12 writes it
    /// (the numbers are not made bits, nor scaled by `-k`); `rate not
    /// measured` before a first update.
    pub(crate) fn stats(&self, bits: bool) -> String {
        if self.rates.is_empty() {
            return "rate not measured".into();
        }
        let n = self.rates.len() as f64;
        let mean = self.rates.iter().sum::<f64>() / n;
        let deviation = (self.rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt();
        let min = self.rates.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.rates.iter().copied().fold(0.0, f64::max);
        let unit = if bits { "b/s" } else { "B/s" };
        format!("rate min/avg/max/mdev = {min:.3}/{mean:.3}/{max:.3}/{deviation:.3} {unit}")
    }
}

/// Draws on `out` every interval until `done` closes, then once more,
/// finished.
pub(crate) fn draw(
    display: &Display,
    source: &dyn Source,
    start: Instant,
    done: &mpsc::Receiver<()>,
    out: &io::Stderr,
) {
    let mut meter = Meter::default();
    loop {
        let interval = lock(&display.settings).interval;
        let finished = !matches!(
            done.recv_timeout(interval),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        let settings = lock(&display.settings).clone();
        let now = start.elapsed();
        let count = source.count();
        let mut snap = meter.snapshot(count, now.as_secs_f64(), finished, &settings);
        snap.lines = display.lines;
        let format = settings.format();
        if format.has(&Segment::BufferPercent) {
            // At the end the transfer holds nothing, whatever the reader
            // has yet to read: pv 1.12's last reading is 0% too.
            snap.buffer_percent = source
                .buffer_percent()
                .map(|p| if finished { 0 } else { p });
        }
        let n = format.last_written();
        if n > 0 {
            snap.last_written = source.last_written(n);
        }
        if format.previous_line().is_some() {
            snap.previous_line = source.previous_line();
        }
        // -W: nothing until the first byte; -D: nothing until the delay.
        if (display.wait && count == 0) || now < display.delay {
            if finished {
                return;
            }
            continue;
        }
        let width = settings.width.unwrap_or_else(|| terminal_width(out));
        let text = if settings.numeric {
            format.render_numeric(&snap, width) + "\n"
        } else {
            let line = meter.line(&format, &snap, width);
            titles(&settings, &line, count, out);
            match &display.cursor {
                Some(cursor) => cursor.place(&line),
                None if finished => format!("{line}\r\n"),
                None => format!("{line}\r"),
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
            // ConEmu's tab shows no progress once the meter is gone.
            if format.has(&Segment::Conemu) {
                show(out, CONEMU_END, patience);
            }
            if display.stats {
                show(out, &format!("{}\n", meter.stats(settings.bits)), patience);
            }
            return;
        }
    }
}

/// `-x`: the line in the window title (an xterm escape, on the terminal
/// the display draws on) and the count in the process's name.
fn titles(settings: &Settings, line: &str, count: u64, out: &io::Stderr) {
    if settings.window_title {
        show(out, &format!("\x1b]2;{}\x07", line.trim()), Duration::ZERO);
    }
    if settings.process_title {
        let name = format!("pv {count}");
        if let Ok(name) = std::ffi::CString::new(name) {
            let _ = rustix::thread::set_name(&name);
        }
    }
}

/// The settings, even if a thread panicked holding them.
pub(crate) fn lock(settings: &Mutex<Settings>) -> std::sync::MutexGuard<'_, Settings> {
    settings
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Writes `text` to `stderr` if it can take it within `patience`, and no
/// signal has stopped the meter: a reader of stderr that stops reading
/// must not stall the display thread (holding stderr's lock, which the
/// copying thread needs for its messages).
pub(crate) fn show(stderr: &io::Stderr, text: &str, patience: Duration) {
    let timeout = Timespec {
        tv_sec: patience.as_secs() as i64,
        tv_nsec: i64::from(patience.subsec_nanos()),
    };
    let mut fds = [PollFd::new(stderr, PollFlags::OUT)];
    if matches!(poll(&mut fds, Some(&timeout)), Ok(n) if n > 0) {
        let mut stderr = stderr.lock();
        // Once SIGINT, SIGTERM or SIGHUP came, the main thread says so on
        // the last line (under this lock): no line is drawn after it.
        if crate::sys::process::interrupted().is_none() {
            let _ = stderr.write_all(text.as_bytes());
        }
    }
}

/// Per second, `count` over `seconds` (0 over no time).
pub(crate) fn per_second(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// The width of the terminal on `out`, or 80 when it is not one.
pub(crate) fn terminal_width(out: impl AsFd) -> usize {
    rustix::termios::tcgetwinsize(out.as_fd())
        .ok()
        .map(|w| usize::from(w.ws_col))
        .filter(|&w| w > 0)
        .unwrap_or(80)
}

/// How full the pipe `fd` is, in percent of its size: the buffer between
/// a meter and its reader (`-T`). `None` if `fd` is not a pipe.
pub(crate) fn pipe_fill(fd: BorrowedFd<'_>) -> Option<u64> {
    let size = crate::sys::fcntl_getpipe_size(fd).ok()?;
    let queued = rustix::io::ioctl_fionread(fd).ok()?;
    (size > 0).then(|| queued * 100 / size as u64)
}
