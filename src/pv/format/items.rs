//! The text of each item of a format for one snapshot.

use super::units::{rate_text, size_text};
use super::{Bar, Segment, bar, numeric, sgr};
use crate::pv::meter::{Snapshot, eta_seconds, format_duration};

/// The text of a segment whose width does not depend on the line's, or
/// `None` for a bar or a line that takes what the others leave.
pub(super) fn fixed_text(segment: &Segment, snap: &Snapshot) -> Option<String> {
    if snap.numeric
        && let Some(number) = numeric::text(segment, snap)
    {
        return Some(number);
    }
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
        Segment::AverageRate => format!("({})", rate_text(snap.average, snap, per_second)),
        Segment::Eta => eta_text(snap),
        Segment::FinEta => fineta_text(snap),
        // Dots for bytes not written yet (pv 1.12: `..abcdef`).
        Segment::LastWritten(n) => {
            let bytes = &snap.last_written[snap.last_written.len().saturating_sub(*n)..];
            format!("{:.>n$}", printable(bytes, '.'))
        }
        Segment::PreviousLine(0) => return None,
        Segment::PreviousLine(n) => previous_line_text(snap, *n),
        Segment::AmountOnly => bar::amount_text(snap),
        Segment::Conemu => bar::conemu(snap),
        Segment::Sgr(codes) => sgr::escape(codes),
        Segment::Bar(Bar { width: 0, .. }) => return None,
        Segment::Bar(Bar { kind, width }) => bar::text(*kind, snap, *width),
        Segment::Ratio => ratio_text(snap.other.unwrap_or(0), snap.count),
    })
}

/// The text of a segment that takes `room` columns: a bar, or `%L`.
pub(super) fn growing_text(segment: &Segment, snap: &Snapshot, room: usize) -> String {
    match segment {
        Segment::Bar(bar) => bar::text(bar.kind, snap, room),
        Segment::PreviousLine(_) => previous_line_text(snap, room),
        _ => String::new(),
    }
}

/// Bytes as pv shows them: printable ASCII as it is, the rest as
/// `other` (`.` for `%A`, a space for `%L`).
pub(super) fn printable(bytes: &[u8], other: char) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                char::from(b)
            } else {
                other
            }
        })
        .collect()
}

/// `%L`: the first `n` bytes of the last whole line, padded with spaces
/// to `n` (all spaces before a line is seen, and when the copy does not
/// pass through pv's buffer).
pub(super) fn previous_line_text(snap: &Snapshot, n: usize) -> String {
    let line = &snap.previous_line[..snap.previous_line.len().min(n)];
    format!("{:<n$}", printable(line, ' '))
}

pub(super) fn count_text(count: f64, snap: &Snapshot, bytes: &str, bits: &str) -> String {
    if snap.lines {
        size_text(count, "", false)
    } else if snap.bits {
        size_text(count * 8.0, bits, !snap.si)
    } else {
        size_text(count, bytes, !snap.si)
    }
}

pub(super) fn timer_text(elapsed: f64) -> String {
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
pub(super) fn eta_text(snap: &Snapshot) -> String {
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
pub(super) fn fineta_text(snap: &Snapshot) -> String {
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

/// pv 1.12's `%{ratio}`: `other:1` or `1:this` (the larger side over the
/// smaller, C's `%.4g`: `228.6:1`, `1:1.5`, `1.429e+05:1`), `-:-` while
/// either count is 0. Found by running pv 1.12 on counts chosen for it
/// (tests/pv/monitor.rs compares).
pub(crate) fn ratio_text(other: u64, this: u64) -> String {
    if other == 0 || this == 0 {
        return "-:-".into();
    }
    if other >= this {
        format!("{}:1", general4(other as f64 / this as f64))
    } else {
        format!("1:{}", general4(this as f64 / other as f64))
    }
}

/// C's `%.4g` for a positive finite `value`: four significant digits,
/// trailing zeros dropped, an exponent from 1e4 on.
fn general4(value: f64) -> String {
    // Rounded to four digits first: the exponent is the rounded one's.
    let sci = format!("{value:.3e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |text: String| {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            text
        }
    };
    if !(-4..4).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            trim(mantissa.to_owned()),
            exponent.unsigned_abs()
        )
    } else {
        let decimals = (3 - exponent).max(0) as usize;
        trim(format!("{value:.decimals$}"))
    }
}
