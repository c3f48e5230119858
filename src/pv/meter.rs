//! What a pipe meter shows, and how it limits a rate: pv's display items
//! rendered from a [`Snapshot`], and a [`TokenBucket`]. No I/O here: the
//! `pv` command feeds these from a timer, and tests feed fixed data.

use std::fmt::Write;
use std::time::Duration;

/// The display items of pv, each switched on by its letter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
            || self.bytes)
    }
}

/// The state of a transfer at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Snapshot {
    /// Bytes (or lines, in line mode) so far.
    pub count: u64,
    /// Seconds since the start.
    pub elapsed: f64,
    /// Rate over the last interval, per second.
    pub rate: f64,
    /// The expected total, when known.
    pub size: Option<u64>,
    /// Whether counting lines rather than bytes.
    pub lines: bool,
    /// Whether the transfer has ended (the final line).
    pub done: bool,
    /// Updates shown so far: moves the `<=>` of an unknown size.
    pub tick: u64,
    /// Local time of day, in seconds since midnight, for `-I`.
    pub clock: Option<u32>,
}

impl Snapshot {
    /// Average rate since the start, per second.
    pub fn average(&self) -> f64 {
        if self.elapsed > 0.0 {
            self.count as f64 / self.elapsed
        } else {
            0.0
        }
    }

    /// Percentage done, when the size is known.
    pub fn percent(&self) -> Option<f64> {
        self.size
            .filter(|&s| s > 0)
            .map(|s| (self.count as f64 * 100.0 / s as f64).min(100.0))
    }
}

/// A count as pv prints it: three significant digits in four columns and
/// a binary unit (`1.19KiB`, ` 103MiB`, `3.00 B`); counts of lines use the decimal
/// `k`, `M`, `G` and no unit.
pub fn format_count(value: f64, lines: bool) -> String {
    let (base, units): (f64, &[&str]) = if lines {
        (1000.0, &["", "k", "M", "G", "T", "P"])
    } else {
        (1024.0, &[" B", "KiB", "MiB", "GiB", "TiB", "PiB"])
    };
    let mut v = value;
    let mut i = 0;
    while v >= 999.5 && i + 1 < units.len() {
        v /= base;
        i += 1;
    }
    let digits = if v >= 99.95 {
        format!("{v:4.0}")
    } else if v >= 9.995 {
        format!("{v:4.1}")
    } else {
        format!("{v:4.2}")
    };
    let unit = units[i];
    if lines && unit.is_empty() {
        format!("{digits} ")
    } else {
        format!("{digits}{unit}")
    }
}

/// Seconds as `H:MM:SS`.
pub fn format_duration(seconds: f64) -> String {
    let s = seconds.max(0.0) as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The one-line display, `width` columns wide at most (the bar takes what
/// the other items leave).
pub fn render(snap: &Snapshot, items: &Items, width: usize) -> String {
    let mut head = String::new();
    if let Some(name) = &items.name {
        let _ = write!(head, "{name:>9}: ");
    }
    if items.bytes {
        let _ = write!(head, "{} ", format_count(snap.count as f64, snap.lines));
    }
    if items.timer {
        let _ = write!(head, "{} ", format_duration(snap.elapsed));
    }
    if items.rate {
        let _ = write!(head, "[{}/s] ", format_count(snap.rate, snap.lines));
    }
    if items.average_rate {
        let _ = write!(head, "[{}/s] ", format_count(snap.average(), snap.lines));
    }
    let mut tail = String::new();
    let percent = snap.percent();
    if items.progress
        && let Some(p) = percent
    {
        let _ = write!(tail, " {p:.0}%");
    }
    if items.eta && percent.is_some() {
        match eta_seconds(snap) {
            Some(left) if !snap.done => {
                // Rounded up, as pv does: 0:00:00 only when done.
                let _ = write!(tail, " ETA {}", format_duration(left.ceil()));
            }
            // pv blanks the field at the end rather than shrinking the line.
            _ => tail.push_str(&" ".repeat(12)),
        }
    }
    if items.fineta && percent.is_some() {
        match (eta_seconds(snap), snap.clock) {
            (Some(left), Some(clock)) if !snap.done => {
                let at = (f64::from(clock) + left.ceil()).rem_euclid(86_400.0) as u64;
                let _ = write!(
                    tail,
                    " FIN {:02}:{:02}:{:02}",
                    at / 3600,
                    at / 60 % 60,
                    at % 60
                );
            }
            _ => tail.push_str(&" ".repeat(13)),
        }
    }
    let mut line = head;
    if items.progress {
        let room = width.saturating_sub(line.chars().count() + tail.chars().count() + 2);
        line.push('[');
        line.push_str(&bar(percent, snap.tick, room.max(3)));
        line.push(']');
        line.push_str(&tail);
    } else {
        // Items are separated by one space; the first needs none.
        line.push_str(tail.strip_prefix(' ').unwrap_or(&tail));
    }
    // Trailing blanks stay: they wipe what a longer line left on the
    // terminal, as pv's do.
    if !items.progress && !items.eta && !items.fineta {
        line.truncate(line.trim_end().len());
    }
    line
}

fn bar(percent: Option<f64>, tick: u64, room: usize) -> String {
    match percent {
        Some(p) => {
            let filled = ((p / 100.0) * room as f64) as usize;
            let filled = filled.min(room);
            let mut s = "=".repeat(filled.saturating_sub(1));
            if filled > 0 {
                s.push('>');
            }
            s.push_str(&" ".repeat(room - filled));
            s
        }
        None => {
            // `<=>` bounces from one end to the other.
            let span = room.saturating_sub(3).max(1) as u64;
            let t = tick % (2 * span);
            let at = if t < span { t } else { 2 * span - t } as usize;
            let at = at.min(room.saturating_sub(3));
            format!(
                "{}<=>{}",
                " ".repeat(at),
                " ".repeat(room.saturating_sub(3 + at))
            )
        }
    }
}

/// Seconds left at the average rate so far.
pub fn eta_seconds(snap: &Snapshot) -> Option<f64> {
    let size = snap.size?;
    let avg = snap.average();
    (avg > 0.0).then(|| size.saturating_sub(snap.count) as f64 / avg)
}

/// pv's `-n` output: one line of numbers: elapsed seconds with `-t`, the
/// count with `-b`, else the percentage (0 when the size is unknown).
pub fn render_numeric(snap: &Snapshot, items: &Items) -> String {
    let mut fields = Vec::new();
    if items.timer {
        fields.push(format!("{:.4}", snap.elapsed));
    }
    if items.bytes {
        fields.push(snap.count.to_string());
    } else {
        fields.push(format!("{:.0}", snap.percent().unwrap_or(0.0).floor()));
    }
    fields.join(" ")
}

/// The number of `\n` bytes in `bytes`, for line mode.
///
/// Counted in runs of 255 bytes into a `u8`, which the compiler turns into
/// wide vector compares; `filter(..).count()` is not vectorized and made
/// line counting, not the copy, the bottleneck of `pv -l`.
pub fn count_lines(bytes: &[u8]) -> u64 {
    bytes
        .chunks(255)
        .map(|run| {
            let n = run
                .iter()
                .fold(0u8, |n, &b| n.wrapping_add(u8::from(b == b'\n')));
            u64::from(n)
        })
        .sum()
}

/// A token bucket: at most `rate` bytes a second, with bursts capped at a
/// tenth of a second's worth, so a stalled reader cannot save up a flood.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenBucket {
    rate: f64,
    capacity: f64,
    tokens: f64,
}

impl TokenBucket {
    /// A bucket for `rate` bytes a second, starting with one burst.
    pub fn new(rate: u64) -> TokenBucket {
        let rate = rate.max(1) as f64;
        let capacity = (rate / 10.0).max(1.0);
        TokenBucket {
            rate,
            capacity,
            tokens: capacity,
        }
    }

    /// Adds the tokens earned over `elapsed`.
    pub fn refill(&mut self, elapsed: Duration) {
        self.tokens = (self.tokens + elapsed.as_secs_f64() * self.rate).min(self.capacity);
    }

    /// Takes up to `want` bytes' worth: what may be sent now (0 when the
    /// bucket is empty, see [`TokenBucket::wait`]).
    pub fn take(&mut self, want: u64) -> u64 {
        let got = (self.tokens.floor() as u64).min(want);
        self.tokens -= got as f64;
        got
    }

    /// How long until at least one byte may be sent.
    pub fn wait(&self) -> Duration {
        if self.tokens >= 1.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((1.0 - self.tokens) / self.rate)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(count: u64, elapsed: f64, size: Option<u64>) -> Snapshot {
        Snapshot {
            count,
            elapsed,
            rate: count as f64 / elapsed,
            size,
            lines: false,
            done: false,
            tick: 0,
            clock: None,
        }
    }

    #[test]
    fn counts_read_like_pv() {
        assert_eq!(format_count(3.0, false), "3.00 B");
        assert_eq!(format_count(1218.0, false), "1.19KiB");
        assert_eq!(format_count(100.0 * 1048576.0, false), " 100MiB");
        assert_eq!(format_count(93.3 * 1048576.0, false), "93.3MiB");
        assert_eq!(format_count(2.0 * 1073741824.0, false), "2.00GiB");
        assert_eq!(format_count(24.0, true), "24.0 ");
        assert_eq!(format_count(80_800.0, true), "80.8k");
        assert_eq!(format_duration(3725.9), "1:02:05");
    }

    #[test]
    fn the_default_line_with_a_known_size() {
        let s = snap(100 << 20, 1.0, Some(300 << 20));
        let line = render(&s, &Items::pv_default(), 80);
        assert_eq!(line.len(), 80, "{line:?}");
        let (head, rest) = line.split_once('[').unwrap();
        assert_eq!(head, " 100MiB 0:00:01 ");
        let (rate, bar) = rest.split_once("] [").unwrap();
        assert_eq!(rate, " 100MiB/s");
        let (bar, tail) = bar.split_once(']').unwrap();
        assert_eq!(tail, " 33% ETA 0:00:02");
        let head_at = bar.find('>').unwrap() + 1;
        assert_eq!(head_at, bar.len() / 3, "{bar:?}");
        assert!(bar[..head_at - 1].bytes().all(|c| c == b'='));
        assert!(bar[head_at..].bytes().all(|c| c == b' '));
    }

    #[test]
    fn the_bar_fits_the_width_and_ends_full() {
        for width in [60, 80, 200] {
            let mut s = snap(300 << 20, 3.0, Some(300 << 20));
            s.done = true;
            let line = render(&s, &Items::pv_default(), width);
            assert_eq!(line.chars().count(), width, "{line:?}");
            // The ETA is blanked at the end.
            assert!(line.ends_with("=>] 100%            "), "{line:?}");
        }
    }

    #[test]
    fn the_finish_time_is_now_plus_the_eta() {
        let mut s = snap(100 << 20, 1.0, Some(300 << 20));
        s.clock = Some(23 * 3600 + 59 * 60 + 59);
        let items = Items {
            fineta: true,
            ..Items::default()
        };
        // 2 s left at 23:59:59: the end comes after midnight.
        assert_eq!(render(&s, &items, 80), "FIN 00:00:01");
        s.done = true;
        assert_eq!(render(&s, &items, 80), " ".repeat(12));
    }

    #[test]
    fn an_unknown_size_bounces() {
        let items = Items {
            progress: true,
            ..Items::default()
        };
        let mut s = snap(1, 1.0, None);
        let a = render(&s, &items, 20);
        s.tick = 3;
        let b = render(&s, &items, 20);
        assert_eq!(a, "[<=>               ]");
        assert_eq!(b, "[   <=>            ]");
    }

    #[test]
    fn lines_are_counted_across_runs_of_every_length() {
        for len in [0, 1, 254, 255, 256, 511, 10_000] {
            let all = vec![b'\n'; len];
            assert_eq!(count_lines(&all), len as u64);
            let some: Vec<u8> = (0..len)
                .map(|i| if i % 7 == 0 { b'\n' } else { b'x' })
                .collect();
            assert_eq!(count_lines(&some), len.div_ceil(7) as u64);
        }
    }

    #[test]
    fn numeric_output() {
        let s = snap(209_715_200, 1.0554, Some(314_572_800));
        let percent_only = Items::default();
        assert_eq!(render_numeric(&s, &percent_only), "66");
        let timed_bytes = Items {
            timer: true,
            bytes: true,
            ..Items::default()
        };
        assert_eq!(render_numeric(&s, &timed_bytes), "1.0554 209715200");
    }

    #[test]
    fn the_bucket_caps_bursts_and_refills_at_the_rate() {
        let mut b = TokenBucket::new(1000);
        assert_eq!(b.take(10_000), 100); // a tenth of a second's worth
        assert_eq!(b.take(1), 0);
        assert!(b.wait() > Duration::ZERO);
        b.refill(Duration::from_millis(50));
        assert_eq!(b.take(10_000), 50);
        b.refill(Duration::from_secs(60)); // a long stall saves up one burst only
        assert_eq!(b.take(10_000), 100);
    }
}
