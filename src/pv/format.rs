//! pv's display line from a format: `-F FORMAT`, or the one pv builds from
//! the item flags (`-p -t -e ...`). Every item keeps one width as its value
//! changes magnitude, so that a line drawn over the last one never leaves
//! part of it behind.

use std::fmt::Write;

use super::meter::{Items, Snapshot, eta_seconds, format_duration};

/// One piece of a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// Text shown as it is.
    Literal(String),
    /// `%N`: the name, right-aligned in 9 columns, and a colon.
    Name,
    /// `%b`: the count so far.
    Bytes,
    /// `%T`: how full the buffer between pv and its reader is.
    BufferPercent,
    /// `%t`: the elapsed time.
    Timer,
    /// `%r`: the current rate.
    Rate,
    /// `%a`: the average rate.
    AverageRate,
    /// `%p`: the bar and the percentage (a moving `<=>` when the size is
    /// unknown).
    Progress,
    /// `%{progress-bar-only}`: the bar without the percentage.
    BarOnly,
    /// `%{progress-amount-only}`: the percentage alone.
    AmountOnly,
    /// `%e`: the time left.
    Eta,
    /// `%I`: the local time of the end.
    FinEta,
    /// `%NUMA`: the last NUM bytes written, unprintable ones as `.`.
    LastWritten(usize),
    /// `%{ratio}`: the other side's count to this side's, with `-M both`
    /// (`-:-` without one, or while either is 0).
    Ratio,
}

/// The most bytes `%A` shows (pv's limit).
pub const MAX_LAST_WRITTEN: usize = 256;

/// A parsed format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format(Vec<Segment>);

impl Format {
    /// Parses pv's format language: `%p %t %e %I %r %a %b %T %N %%`, `%NUMA`,
    /// and the long forms `%{progress}`, `%{timer}` ... An unknown sequence
    /// is shown as it is.
    pub fn parse(text: &str) -> Format {
        let mut segments = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('%') {
            literal.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let num: usize = after[..digits].parse().unwrap_or(0);
            let spec = &after[digits..];
            let (segment, used) = match spec.chars().next() {
                Some('{') => match spec.find('}') {
                    Some(end) => (long_name(&spec[1..end], num), end + 1),
                    None => (None, 0),
                },
                Some(c) => (short_name(c, num), c.len_utf8()),
                None => (None, 0),
            };
            rest = match segment {
                Some(Segment::Literal(text)) => {
                    literal.push_str(&text);
                    &after[digits + used..]
                }
                Some(segment) => {
                    if !literal.is_empty() {
                        segments.push(Segment::Literal(std::mem::take(&mut literal)));
                    }
                    segments.push(segment);
                    &after[digits + used..]
                }
                // Unknown: the `%` and what follows stay text.
                None => {
                    literal.push('%');
                    after
                }
            };
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            segments.push(Segment::Literal(literal));
        }
        Format(segments)
    }

    /// The format pv builds from the item flags, in pv's order.
    pub fn from_items(items: &Items) -> Format {
        let mut text = Vec::new();
        let flags = [
            (items.name.is_some(), "%N"),
            (items.bytes, "%b"),
            (items.buffer_percent, "%T"),
            (items.timer, "%t"),
            (items.rate, "%r"),
            (items.average_rate, "%a"),
            (items.progress, "%p"),
            (items.eta, "%e"),
            (items.fineta, "%I"),
        ];
        for (on, spec) in flags {
            if on {
                text.push(spec.to_owned());
            }
        }
        if items.last_written > 0 {
            text.push(format!("%{}A", items.last_written));
        }
        Format::parse(&text.join(" "))
    }

    /// The segments.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// How many of the last bytes written the format shows (0: none).
    pub fn last_written(&self) -> usize {
        self.0
            .iter()
            .filter_map(|s| match s {
                Segment::LastWritten(n) => Some(*n),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// This format followed by `more`: `-M both` adds the ratio to the
    /// output side's line when no `-F` is given.
    pub fn followed_by(mut self, more: Format) -> Format {
        self.0.extend(more.0);
        self
    }

    /// Whether the format has `segment`.
    pub fn has(&self, segment: &Segment) -> bool {
        self.0.contains(segment)
    }

    /// The line for `snap`, at most `width` columns: the bar takes what
    /// the other items leave. `previous`: the length of the line drawn
    /// before, which a shorter line pads over (as pv does, by at most 15
    /// spaces).
    pub fn render(&self, snap: &Snapshot, width: usize, previous: usize) -> String {
        let texts: Vec<Option<String>> = self
            .0
            .iter()
            .map(|segment| fixed_text(segment, snap))
            .collect();
        let fixed: usize = texts.iter().flatten().map(|t| t.chars().count()).sum();
        let mut line = String::new();
        for (segment, text) in self.0.iter().zip(texts) {
            let text = match text {
                Some(text) => text,
                None => bar_text(segment, snap, width.saturating_sub(fixed)),
            };
            if line.chars().count() + text.chars().count() > width {
                break;
            }
            line.push_str(&text);
        }
        let length = line.chars().count();
        if length < previous {
            line.push_str(&" ".repeat((previous - length).min(15)));
        }
        line
    }
}

fn short_name(c: char, num: usize) -> Option<Segment> {
    Some(match c {
        'p' => Segment::Progress,
        't' => Segment::Timer,
        'e' => Segment::Eta,
        'I' => Segment::FinEta,
        'r' => Segment::Rate,
        'a' => Segment::AverageRate,
        'b' => Segment::Bytes,
        'T' => Segment::BufferPercent,
        'N' => Segment::Name,
        'A' => Segment::LastWritten(num.clamp(1, MAX_LAST_WRITTEN)),
        '%' => Segment::Literal("%".into()),
        _ => return None,
    })
}

fn long_name(name: &str, num: usize) -> Option<Segment> {
    Some(match name {
        "progress" => Segment::Progress,
        "progress-bar-only" => Segment::BarOnly,
        "progress-amount-only" => Segment::AmountOnly,
        "timer" => Segment::Timer,
        "eta" => Segment::Eta,
        "fineta" => Segment::FinEta,
        "rate" => Segment::Rate,
        "average-rate" => Segment::AverageRate,
        "bytes" | "transferred" => Segment::Bytes,
        "buffer-percent" => Segment::BufferPercent,
        "last-written" => Segment::LastWritten(num.clamp(1, MAX_LAST_WRITTEN)),
        "name" => Segment::Name,
        "ratio" => Segment::Ratio,
        _ => return None,
    })
}

/// The text of a segment whose width does not depend on the line's, or
/// `None` for the bar.
fn fixed_text(segment: &Segment, snap: &Snapshot) -> Option<String> {
    let per_second = if snap.lines { "/s" } else { "B/s" };
    Some(match segment {
        Segment::Literal(text) => text.clone(),
        Segment::Name => snap
            .name
            .as_deref()
            .map(|name| format!("{name:>9}:"))
            .unwrap_or_default(),
        Segment::Bytes => count_text(snap.count as f64, snap, "B", "b"),
        Segment::BufferPercent => match snap.buffer_percent {
            Some(percent) => format!("{{{percent:3}%}}"),
            None => "{----}".into(),
        },
        Segment::Timer => timer_text(snap.elapsed),
        Segment::Rate => format!("[{}]", rate_text(snap.rate, snap, per_second)),
        Segment::AverageRate => format!("[{}]", rate_text(snap.average, snap, per_second)),
        Segment::Eta => eta_text(snap),
        Segment::FinEta => fineta_text(snap),
        Segment::LastWritten(n) => {
            let bytes = &snap.last_written[snap.last_written.len().saturating_sub(*n)..];
            bytes
                .iter()
                .map(|&b| {
                    if b.is_ascii_graphic() || b == b' ' {
                        char::from(b)
                    } else {
                        '.'
                    }
                })
                .collect()
        }
        Segment::AmountOnly => amount_text(snap),
        Segment::Ratio => super::monitor::ratio_text(snap.other.unwrap_or(0), snap.count),
        Segment::Progress | Segment::BarOnly => return None,
    })
}

fn count_text(count: f64, snap: &Snapshot, bytes: &str, bits: &str) -> String {
    if snap.lines {
        size_text(count, "", false)
    } else if snap.bits {
        size_text(count * 8.0, bits, true)
    } else {
        size_text(count, bytes, true)
    }
}

fn rate_text(rate: f64, snap: &Snapshot, per_second: &str) -> String {
    if snap.bits && !snap.lines {
        size_text(rate * 8.0, "b/s", true)
    } else {
        size_text(rate, per_second, !snap.lines)
    }
}

/// The percentage as pv shows it: done over the size, past 100 when
/// more came than the size said.
fn amount_text(snap: &Snapshot) -> String {
    match snap.percent() {
        Some(p) => format!("{:2}%", p.clamp(0, 100_000)),
        None => String::new(),
    }
}

/// The bar, `room` columns for the whole segment.
fn bar_text(segment: &Segment, snap: &Snapshot, room: usize) -> String {
    let with_amount = *segment == Segment::Progress;
    match snap.percent() {
        Some(percent) => {
            let amount = if with_amount {
                format!(" {}", amount_text(snap))
            } else {
                String::new()
            };
            let inner = room.saturating_sub(2 + amount.len());
            let filled = (inner as u64 * percent.min(100) / 100) as usize;
            let mut bar = String::from("[");
            bar.push_str(&"=".repeat(filled.saturating_sub(1)));
            if inner > 0 && bar.len() < inner + 1 {
                bar.push('>');
            }
            while bar.len() < inner + 1 {
                bar.push(' ');
            }
            bar.push(']');
            bar.push_str(&amount);
            bar
        }
        None if snap.gauge.is_some() => {
            let percent = snap.gauge.unwrap_or(0).min(100);
            let amount = if with_amount {
                format!(" {percent:2}%")
            } else {
                String::new()
            };
            let inner = room.saturating_sub(2 + amount.len());
            let filled = inner * percent as usize / 100;
            format!(
                "[{}{}]{amount}",
                "=".repeat(filled),
                " ".repeat(inner - filled)
            )
        }
        None => {
            // `<=>` bounces from one end to the other, two steps an update
            // while bytes come.
            let inner = room.saturating_sub(2);
            let span = inner.saturating_sub(3);
            let step = (snap.tick % 200) as usize;
            let at = if step > 100 { 200 - step } else { step };
            let left = span * at / 100;
            format!(
                "[{}<=>{}]",
                " ".repeat(left),
                " ".repeat(span.saturating_sub(left))
            )
        }
    }
}

fn timer_text(elapsed: f64) -> String {
    let s = elapsed.clamp(0.0, 360_000_000.0) as u64;
    if s > 86_400 {
        format!(
            "{}:{:02}:{:02}:{:02}",
            s / 86_400,
            s / 3600 % 24,
            s / 60 % 60,
            s % 60
        )
    } else {
        format_duration(s as f64)
    }
}

/// `ETA H:MM:SS`, blank (of the same width) at the end; nothing when the
/// size is unknown.
fn eta_text(snap: &Snapshot) -> String {
    if snap.size.is_none() {
        return String::new();
    }
    let left = eta_seconds(snap).unwrap_or(0.0).clamp(0.0, 360_000_000.0) as u64;
    let text = format!("ETA {}", timer_text(left as f64));
    if snap.done {
        " ".repeat(text.len())
    } else {
        text
    }
}

/// `ETA HH:MM:SS` of the local clock (with the date when it is more than
/// six hours away); nothing when the size is unknown.
fn fineta_text(snap: &Snapshot) -> String {
    if snap.size.is_none() {
        return String::new();
    }
    let left = eta_seconds(snap).unwrap_or(0.0).clamp(0.0, 360_000_000.0) as i64;
    let with_date = left > 6 * 3600;
    let text = match crate::sys::clock::local_time_after(left) {
        Some(t) if with_date => format!(
            "ETA {:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            t.year, t.month, t.day, t.hour, t.minute, t.second
        ),
        Some(t) => format!("ETA {:02}:{:02}:{:02}", t.hour, t.minute, t.second),
        None => " ".repeat(12),
    };
    // Unlike `%e`, kept on the last line (as pv does).
    text
}

/// An amount as pv writes it, always 4 columns of digits, a 2-column
/// prefix (`Ki`, `Mi`... for bytes and bits; `k`, `M`... and a space for
/// lines) and `suffix`: ` 999KiB`, `1000KiB`, `1.46MiB`, `3.00  B`. The
/// prefix is chosen so the number is at least 1 and, from 0.97 of the next
/// power up, moves up (then back down if that made it less than 1).
pub fn size_text(amount: f64, suffix: &str, binary: bool) -> String {
    const PREFIXES: &[u8] = b"yzafpnum kMGTPEZY";
    const MIDDLE: usize = 8;
    let ratio = if binary { 1024.0 } else { 1000.0 };
    let mut value = amount;
    let mut at = MIDDLE;
    if value != 0.0 {
        while value > ratio * 0.97 && at + 1 < PREFIXES.len() {
            value /= ratio;
            at += 1;
        }
        while value < 1.0 && at > 0 {
            value *= ratio;
            at -= 1;
        }
    }
    let letter = match PREFIXES[at] {
        b'k' if binary => 'K',
        c => char::from(c),
    };
    let prefix = match (binary, letter) {
        (true, ' ') => "  ".to_owned(),
        (true, c) => format!("{c}i"),
        (false, c) => c.to_string(),
    };
    let value = value.min(100_000.0);
    let digits = if value > 99.9 {
        format!("{:4}", value as u64)
    } else {
        significant3(value)
    };
    let mut text = String::new();
    let _ = write!(text, "{digits}{prefix}{suffix}");
    text
}

/// `value` with three significant digits, trailing zeros kept, at least 4
/// columns: C's `%#4.3g` for 0 <= value < 100.
fn significant3(value: f64) -> String {
    let text = if value >= 9.995 {
        format!("{value:.1}")
    } else if value >= 0.9995 || value == 0.0 {
        format!("{value:.2}")
    } else {
        // Below 1 (only at the smallest prefix): three digits after the
        // leading zeros.
        let decimals = 2 - value.log10().floor() as i32;
        format!("{value:.*}", decimals.max(0) as usize)
    };
    format!("{text:>4}")
}

#[cfg(test)]
#[path = "format/tests.rs"]
mod tests;
