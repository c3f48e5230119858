//! `-n`: the display as numbers for a script, one line a frame, with or
//! without `-F` (pv 1.12's `pv --numeric --format '{"bytes":%b}'` makes
//! JSON lines).

use super::{Format, Segment};
use crate::pv::meter::{Items, Snapshot};

/// pv 1.12's `-n` format: `%t %b %r %{progress-amount-only}`, each item
/// there when its flag is given, the percentage only when neither `-b`
/// nor `-r` is.
pub(super) fn from_items(items: &Items) -> Format {
    let parts = [
        (items.timer, "%t"),
        (items.bytes, "%b"),
        (items.rate, "%r"),
        (!items.bytes && !items.rate, "%{progress-amount-only}"),
    ];
    let text: Vec<&str> = parts
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, spec)| *spec)
        .collect();
    Format::parse(&text.join(" "))
}

/// The largest percentage `-n` writes, as pv 1.12.
const MAX_PERCENT: f64 = 100_000.0;

/// The numbers as pv 1.12 writes them: seconds and rates with 4
/// decimals, the count whole (in bits with `-8`, lines too), the
/// percentage rounded (without a size, where the moving bar is); `None`
/// for the other items, drawn as without `-n`.
pub(super) fn text(segment: &Segment, snap: &Snapshot) -> Option<String> {
    let scale = if snap.bits { 8 } else { 1 };
    Some(match segment {
        Segment::Timer => format!("{:.4}", snap.elapsed),
        Segment::Bytes => snap.count.saturating_mul(scale).to_string(),
        Segment::Rate => format!("{:.4}", snap.rate * scale as f64),
        Segment::AverageRate => format!("{:.4}", snap.average * scale as f64),
        Segment::AmountOnly => {
            let percent = match snap.size.filter(|&s| s > 0) {
                // pv 1.12 caps it at 100000 (a count 1000 times the size).
                Some(size) => (snap.count as f64 * 100.0 / size as f64).min(MAX_PERCENT),
                // pv 1.12: where the bar of an unknown size is.
                None => super::bar::bounce(snap.tick) as f64,
            };
            format!("{percent:.0}")
        }
        _ => return None,
    })
}
