//! What a pipe meter shows, and how it limits a rate: pv's display items,
//! the [`Snapshot`] a display is drawn from (see `super::format`), `-n`'s
//! numbers, and a [`TokenBucket`]. No I/O here: the `pv` command feeds
//! these from a timer, and tests feed fixed data.

use std::time::Duration;

/// The widest line drawn (`-w`, and the rows of `-H`): pv 1.12 cuts its
/// line at 4095 bytes (and draws nothing past 32748 columns).
pub const MAX_COLUMNS: usize = 4095;

/// How a bar is drawn (`-u STYLE`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum BarStyle {
    /// `=====>    `: pv's bar of old, and the only one without UTF-8.
    #[default]
    Plain,
    /// Unicode full blocks `█`.
    Block,
    /// Full blocks and the eighths `▏▎▍▌▋▊▉` of the cell partly done.
    Granular,
    /// Full blocks, `▒` or `▓` for a cell a third or two thirds done, and
    /// `░` for the rest.
    Shaded,
}

impl BarStyle {
    /// The style drawn: a style of Unicode blocks falls back to plain
    /// when the locale's characters are not UTF-8 (as pv 1.12's do).
    pub fn drawn(self, utf8: bool) -> BarStyle {
        if utf8 { self } else { BarStyle::Plain }
    }
}

/// The display items of pv, each switched on by its letter.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Items {
    /// `-p`: a progress bar (a moving `<=>` when the size is unknown).
    pub progress: bool,
    /// `-t`: elapsed time.
    pub timer: bool,
    /// `-e`: estimated time left.
    pub eta: bool,
    /// `-I`: estimated local time of the end.
    pub fineta: bool,
    /// `-r`: the current rate.
    pub rate: bool,
    /// `-a`: the average rate since the start.
    pub average_rate: bool,
    /// `-b`: the count so far.
    pub bytes: bool,
    /// `-T`: how full the buffer towards the reader is.
    pub buffer_percent: bool,
    /// `-A NUM`: the last NUM bytes written (0: off).
    pub last_written: usize,
    /// `-N`: a name in front.
    pub name: Option<String>,
}

impl Items {
    /// pv's display when no item is asked for: `-p -t -e -r -b`.
    pub fn pv_default() -> Items {
        Items {
            progress: true,
            timer: true,
            eta: true,
            rate: true,
            bytes: true,
            ..Items::default()
        }
    }

    /// Whether no item is on (the name alone is not an item).
    pub fn is_empty(&self) -> bool {
        !(self.progress
            || self.timer
            || self.eta
            || self.fineta
            || self.rate
            || self.average_rate
            || self.bytes
            || self.buffer_percent
            || self.last_written > 0)
    }
}

/// The state of a transfer at one moment: all a display shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Bytes (or lines, in line mode) so far.
    pub count: u64,
    /// Seconds since the start.
    pub elapsed: f64,
    /// Rate over the last interval, per second.
    pub rate: f64,
    /// Rate over the averaging window (`-m`), per second: `-a` and the ETA.
    pub average: f64,
    /// The expected total, when known.
    pub size: Option<u64>,
    /// Whether counting lines rather than bytes.
    pub lines: bool,
    /// `-8`: bytes shown as bits.
    pub bits: bool,
    /// Whether the transfer has ended (the final line).
    pub done: bool,
    /// Moves the `<=>` of an unknown size: two steps an update with a rate.
    pub tick: u64,
    /// `-N`.
    pub name: Option<String>,
    /// `-T`: percent of the reader's buffer in use, `None` when it cannot
    /// be told.
    pub buffer_percent: Option<u64>,
    /// `-A`: the last bytes written.
    pub last_written: Vec<u8>,
    /// `-g`: the rate in percent of the highest seen, for a bar of an
    /// unknown size.
    pub gauge: Option<u64>,
    /// `-g`: the highest rate seen, per second.
    pub max_rate: f64,
    /// `-k`: amounts in powers of 1000 (`kB`), not 1024 (`KiB`).
    pub si: bool,
    /// `-u`: the style of `%p` and `%{progress-bar-only}`.
    pub bar_style: BarStyle,
    /// Whether the locale's characters are UTF-8 (else every bar is
    /// plain).
    pub utf8: bool,
    /// `%L`: the start of the last whole line written.
    pub previous_line: Vec<u8>,
    /// `-n`: numbers for a script (see `Format::render_numeric`).
    pub numeric: bool,
    /// `-M both`: the other side's count, for `%{ratio}`.
    pub other: Option<u64>,
}

impl Snapshot {
    /// Percentage done, when the size is known: past 100 when more came
    /// than the size said, as pv shows it.
    pub fn percent(&self) -> Option<u64> {
        self.size.filter(|&s| s > 0).map(|s| {
            u64::try_from(u128::from(self.count) * 100 / u128::from(s)).unwrap_or(u64::MAX)
        })
    }
}

/// Seconds as `H:MM:SS`.
pub fn format_duration(seconds: f64) -> String {
    let s = seconds.max(0.0) as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Seconds left at the average rate, when the size is known.
pub fn eta_seconds(snap: &Snapshot) -> Option<f64> {
    let size = snap.size?;
    (snap.average > 0.0).then(|| size.saturating_sub(snap.count) as f64 / snap.average)
}

/// `%L`'s memory of the lines written: the first bytes of the line being
/// written and of the last whole one. As pv 1.12's, it keeps nothing
/// until the display first asks ([`PreviousLine::last`]): a file copied
/// before the first frame leaves `%L` blank.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreviousLine {
    on: bool,
    current: Vec<u8>,
    last: Vec<u8>,
}

impl PreviousLine {
    /// The most bytes kept of a line: the widest line drawn.
    pub const KEEP: usize = MAX_COLUMNS;

    /// Takes in `bytes` written, whose lines end with `end`.
    pub fn feed(&mut self, bytes: &[u8], end: u8) {
        if !self.on {
            return;
        }
        let mut rest = bytes;
        while let Some(at) = rest.iter().position(|&b| b == end) {
            self.keep(&rest[..at]);
            std::mem::swap(&mut self.last, &mut self.current);
            self.current.clear();
            rest = &rest[at + 1..];
        }
        self.keep(rest);
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = Self::KEEP.saturating_sub(self.current.len());
        self.current
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// The first bytes of the last whole line (empty before one is
    /// seen); from this first call on, lines are kept.
    pub fn last(&mut self) -> Vec<u8> {
        self.on = true;
        self.last.clone()
    }
}

/// The number of `end` bytes (`\n`, or NUL with `-0`) in `bytes`, for
/// line mode.
///
/// Counted in runs of 255 bytes into a `u8`, which the compiler turns into
/// wide vector compares; `filter(..).count()` is not vectorized and made
/// line counting, not the copy, the bottleneck of `pv -l`.
pub fn count_lines(bytes: &[u8], end: u8) -> u64 {
    bytes
        .chunks(255)
        .map(|run| {
            let n = run
                .iter()
                .fold(0u8, |n, &b| n.wrapping_add(u8::from(b == end)));
            u64::from(n)
        })
        .sum()
}

/// A token bucket: at most `rate` bytes a second, with bursts capped at a
/// tenth of a second's worth, so a stalled reader cannot save up a flood.
/// It starts empty: even a transfer smaller than one burst is spread over
/// its time (100 bytes at 100 a second take a second, as with pv).
#[derive(Debug, Clone, PartialEq)]
pub struct TokenBucket {
    rate: f64,
    capacity: f64,
    tokens: f64,
    least: f64,
    /// The least it hands out: a hundredth of a second's worth (at least
    /// a unit), so a high rate is kept by sleeps of 10 ms and copies of
    /// that size, not by a spin of copies a few bytes long (which took a
    /// whole CPU at -L 50M).
    chunk: f64,
}

impl TokenBucket {
    /// An empty bucket for `rate` bytes a second.
    pub fn new(rate: u64) -> TokenBucket {
        let rate = rate.max(1) as f64;
        TokenBucket {
            rate,
            capacity: (rate / 10.0).max(1.0),
            tokens: 0.0,
            least: 1.0,
            chunk: (rate / 100.0).floor().max(1.0),
        }
    }

    /// The same bucket, giving bytes only `least` at a time (O_DIRECT
    /// reads must be whole blocks), its bursts at least that large.
    pub fn in_units_of(mut self, least: u64) -> TokenBucket {
        self.least = least.max(1) as f64;
        self.capacity = self.capacity.max(self.least);
        self.chunk = self.chunk.max(self.least);
        self
    }

    /// Adds the tokens earned over `elapsed`.
    pub fn refill(&mut self, elapsed: Duration) {
        self.tokens = (self.tokens + elapsed.as_secs_f64() * self.rate).min(self.capacity);
    }

    /// Takes up to `want` bytes' worth, in whole units: what may be sent
    /// now (0 when the bucket holds less than a hundredth of a second's
    /// worth, or a unit if more, see [`TokenBucket::wait`]).
    pub fn take(&mut self, want: u64) -> u64 {
        let least = self.least as u64;
        // A nanosecond's worth of slack: a wait is truncated to whole
        // nanoseconds, and one a hair short must not cost another sleep.
        if self.tokens + self.rate * 1e-9 < self.chunk.min(want as f64) {
            return 0;
        }
        let got = (self.tokens.floor() as u64).min(want) / least * least;
        self.tokens -= got as f64;
        got
    }

    /// How long until a chunk (see [`TokenBucket::take`]) may be sent.
    pub fn wait(&self) -> Duration {
        if self.tokens >= self.chunk {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((self.chunk - self.tokens) / self.rate)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_previous_line_is_the_last_whole_one_once_asked_for() {
        let mut lines = PreviousLine::default();
        lines.feed(b"before the display\n", b'\n');
        assert_eq!(lines.last(), b"");
        lines.feed(b"first line\nsec", b'\n');
        assert_eq!(lines.last(), b"first line");
        lines.feed(b"ond\nthi", b'\n');
        assert_eq!(lines.last(), b"second");
        lines.feed(b"rd\n\n", b'\n');
        assert_eq!(lines.last(), b"");
        lines.feed(b"a\nb\0c", 0);
        assert_eq!(lines.last(), b"a\nb");
        let long = vec![b'x'; PreviousLine::KEEP + 10];
        lines.feed(&long, b'\n');
        lines.feed(b"\n", b'\n');
        assert_eq!(lines.last().len(), PreviousLine::KEEP);
    }

    #[test]
    fn lines_are_counted_across_runs_of_every_length() {
        for len in [0, 1, 254, 255, 256, 511, 10_000] {
            let all = vec![b'\n'; len];
            assert_eq!(count_lines(&all, b'\n'), len as u64);
            let some: Vec<u8> = (0..len)
                .map(|i| if i % 7 == 0 { b'\n' } else { b'x' })
                .collect();
            assert_eq!(count_lines(&some, b'\n'), len.div_ceil(7) as u64);
        }
    }

    #[test]
    fn the_bucket_caps_bursts_and_refills_at_the_rate() {
        let mut b = TokenBucket::new(1000);
        assert_eq!(b.take(10_000), 0); // it starts empty
        b.refill(Duration::from_secs(1));
        assert_eq!(b.take(10_000), 100); // a tenth of a second's worth
        assert_eq!(b.take(1), 0);
        assert!(b.wait() > Duration::ZERO);
        b.refill(Duration::from_millis(50));
        assert_eq!(b.take(10_000), 50);
        b.refill(Duration::from_secs(60)); // a long stall saves up one burst only
        assert_eq!(b.take(10_000), 100);
    }

    #[test]
    fn a_high_rate_is_kept_by_chunks_not_by_a_spin_of_tiny_copies() {
        // 50 MiB/s: a microsecond earns 52 bytes. Handing those out made
        // -L spin through splices of a few bytes at 100% of a CPU.
        let rate = 50 << 20;
        let mut b = TokenBucket::new(rate);
        b.refill(Duration::from_micros(1));
        assert_eq!(
            b.take(u64::MAX),
            0,
            "less than a hundredth of a second's worth"
        );
        let wait = b.wait();
        assert!(wait >= Duration::from_millis(9), "{wait:?}");
        b.refill(wait);
        assert!(b.take(u64::MAX) >= rate / 100 - 1);
        // A slow rate still goes a byte at a time.
        let mut b = TokenBucket::new(10);
        b.refill(Duration::from_millis(100));
        assert_eq!(b.take(u64::MAX), 1);
    }

    #[test]
    fn a_bucket_in_units_gives_whole_units_only() {
        let mut b = TokenBucket::new(1000).in_units_of(4096);
        b.refill(Duration::from_secs(2));
        assert_eq!(b.take(u64::MAX), 0);
        assert!(b.wait() > Duration::from_secs(2));
        b.refill(Duration::from_secs(3));
        assert_eq!(b.take(u64::MAX), 4096);
    }
}
