//! Amounts as pv writes them: four columns of digits, a prefix and a
//! unit, in powers of 1024 (`KiB`) or, with `-k`, of 1000 (`kB`), and
//! rates in the unit a snapshot counts in.

use std::fmt::Write;

use crate::pv::meter::Snapshot;

/// An amount as pv writes it, always 4 columns of digits, a 2-column
/// prefix (`Ki`, `Mi`... for bytes and bits; `k`, `M`... and a space for
/// lines) and `suffix`: ` 999KiB`, `1000KiB`, `1.46MiB`, `3.00  B`. The
/// prefix is chosen so the number is at least 1 and, from 0.97 of the next
/// power up, moves up (then back down if that made it less than 1).
pub(crate) fn size_text(amount: f64, suffix: &str, binary: bool) -> String {
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

/// A rate as pv writes it: in bits with `-8`, in lines (decimal) with
/// `-l`, else in bytes.
pub(super) fn rate_text(rate: f64, snap: &Snapshot, per_second: &str) -> String {
    if snap.bits && !snap.lines {
        size_text(rate * 8.0, "b/s", !snap.si)
    } else {
        size_text(rate, per_second, !snap.lines && !snap.si)
    }
}
