//! The bar of pv 1.12 in its four styles (`-u`, `%{bar-plain}`...): how
//! far a known size is done, or a marker bouncing from end to end when
//! the size is unknown ([`filled`], [`moving`]), with `%p`'s sides and
//! percentage ([`text`]), and ConEmu's `OSC 9;4` ([`conemu`]). Every
//! rule here was read off pv 1.12's output (the differential tests in
//! tests/pv/display.rs hold us to it).

use super::BarKind;
use super::units::rate_text;
use crate::pv::meter::{BarStyle, Snapshot};

/// The eighths of a cell, `▏` (1/8) to `▉` (7/8).
const EIGHTHS: [char; 7] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/// The fill of a bar `width` columns wide for `done` out of `total`
/// (past the end when `done` is more). pv 1.12 counts the columns from
/// the exact fraction, not the rounded percentage: at 995 of 1000 a bar
/// of 300 has 298 full columns, not 297.
pub(super) fn filled(style: BarStyle, done: u64, total: u64, width: usize) -> String {
    let total = u128::from(total.max(1));
    // The columns (or eighths, or thirds of them) done, held to a little
    // past the width so the arithmetic stays small.
    let part = |per_column: u128| -> usize {
        let units = u128::from(done) * width as u128 * per_column / total;
        usize::try_from(units.min((width as u128 + 1) * per_column)).unwrap_or(usize::MAX)
    };
    let mut bar = String::new();
    match style {
        BarStyle::Plain => {
            // `=` up to the column before the last one done, then `>`:
            // a lone `>` at 0, no `>` once past the end.
            let columns = part(1);
            bar.push_str(&"=".repeat(columns.saturating_sub(1).min(width)));
            if columns <= width {
                bar.push('>');
            }
            pad(&mut bar, ' ', width);
        }
        BarStyle::Block => {
            bar.push_str(&"█".repeat(part(1).min(width)));
            pad(&mut bar, ' ', width);
        }
        BarStyle::Granular => {
            let eighths = part(8);
            let full = (eighths / 8).min(width);
            bar.push_str(&"█".repeat(full));
            if full < width && eighths % 8 > 0 {
                bar.push(EIGHTHS[eighths % 8 - 1]);
            }
            pad(&mut bar, ' ', width);
        }
        BarStyle::Shaded => {
            let thirds = part(3);
            let full = (thirds / 3).min(width);
            bar.push_str(&"█".repeat(full));
            if full < width {
                match thirds % 3 {
                    1 => bar.push('▒'),
                    2 => bar.push('▓'),
                    _ => {}
                }
            }
            pad(&mut bar, '░', width);
        }
    }
    // `>` at a full bar of width 0 is cut.
    bar.chars().take(width).collect()
}

/// The bar of an unknown size, `width` columns wide, its marker `at`
/// percent of the way from the left end to the right one.
pub(super) fn moving(style: BarStyle, at: u64, width: usize) -> String {
    let (marker, background) = match style {
        BarStyle::Plain => ("<=>", ' '),
        BarStyle::Block | BarStyle::Granular => ("◀▶", ' '),
        BarStyle::Shaded => ("▒▓▒", '░'),
    };
    let span = width.saturating_sub(marker.chars().count());
    let left = span * at.min(100) as usize / 100;
    let mut bar = String::new();
    pad(&mut bar, background, left);
    bar.push_str(marker);
    pad(&mut bar, background, width);
    bar.chars().take(width).collect()
}

/// Where the marker of an unknown size is, in percent from the left:
/// `tick` goes up two an update while bytes flow, and the marker goes
/// from 0 to 100 and back over 200 ticks.
pub(super) fn bounce(tick: u64) -> u64 {
    let step = tick % 200;
    if step > 100 { 200 - step } else { step }
}

/// `bar` padded with `fill` to `width` characters.
fn pad(bar: &mut String, fill: char, width: usize) {
    let have = bar.chars().count();
    bar.extend(std::iter::repeat_n(fill, width.saturating_sub(have)));
}

/// `OSC 9;4`: state 1 and the percentage (rounded, past 100 too) with a
/// size; state 3 (busy) and where the bar of an unknown size is, without.
pub(super) fn conemu(snap: &Snapshot) -> String {
    let (state, value) = match snap.size.filter(|&s| s > 0) {
        Some(size) => (1, snap.count as f64 * 100.0 / size as f64),
        None => (3, bounce(snap.tick) as f64),
    };
    format!("\x1b]9;4;{state};{value:.0}\x1b\\")
}

/// A bar of `room` columns, sides and percentage included: `[`, the
/// fill, `]` and ` NNN%` for `%p` with a size (nothing if that leaves
/// no room), `]/RATE` with `-g`; the fill alone for the others.
pub(super) fn text(kind: BarKind, snap: &Snapshot, room: usize) -> String {
    let style = match kind {
        BarKind::Styled(style) => style,
        BarKind::Progress | BarKind::Only => snap.bar_style,
    }
    .drawn(snap.utf8);
    let sides = kind == BarKind::Progress;
    let (fill, amount): (&dyn Fn(usize) -> String, String) =
        match (snap.size.filter(|&s| s > 0), snap.gauge) {
            (Some(size), _) => (
                &move |w| filled(style, snap.count, size, w),
                format!(" {}", amount_text(snap)),
            ),
            (None, Some(percent)) => (
                &move |w| filled(style, percent, 100, w),
                format!("/{}", max_rate_text(snap)),
            ),
            (None, None) => (&move |w| moving(style, bounce(snap.tick), w), String::new()),
        };
    if !sides {
        return fill(room);
    }
    let around = 2 + amount.chars().count();
    if room < around {
        return String::new();
    }
    format!("[{}]{amount}", fill(room - around))
}

/// The percentage as pv shows it, in 3 columns and `%`: done over the
/// size, cut down to a whole number, past 100 when more came than the
/// size said. With `-g` and no size, the highest rate seen.
pub(super) fn amount_text(snap: &Snapshot) -> String {
    match snap.percent() {
        Some(p) => format!("{:3}%", p.clamp(0, 100_000)),
        None if snap.gauge.is_some() => max_rate_text(snap),
        None => String::new(),
    }
}

/// `-g`'s highest rate, as a rate is shown.
pub(super) fn max_rate_text(snap: &Snapshot) -> String {
    let per_second = if snap.lines { "/s" } else { "B/s" };
    rate_text(snap.max_rate, snap, per_second)
}
