//! What every chart is drawn with: width, font, colours, small helpers.

use std::fmt::Display;
use std::io;

use plotters::style::RGBColor;

/// The fill of a measured bar, as the SVG writes it.
pub const BAR_FILL: &str = "#4C72B0";
/// The fill of the `memcpy` bar: the limit of the rungs that copy.
pub const LIMIT_FILL: &str = "#8C8C8C";
/// The stroke of a min-max whisker.
pub const WHISKER_STROKE: &str = "#333333";
/// The stroke of the dashed line at `memcpy`'s median.
pub const LIMIT_STROKE: &str = "#C44E52";
/// The strokes (and dots' fills) of the latency and scan charts' lines,
/// in the order series are coloured.
pub const SERIES_STROKES: [&str; 10] = [
    "#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2", "#7F7F7F",
    "#9A9B1A", "#17BECF",
];

pub(crate) const BAR: RGBColor = RGBColor(0x4C, 0x72, 0xB0);
pub(crate) const LIMIT: RGBColor = RGBColor(0x8C, 0x8C, 0x8C);
pub(crate) const WHISKER: RGBColor = RGBColor(0x33, 0x33, 0x33);
pub(crate) const LIMIT_LINE: RGBColor = RGBColor(0xC4, 0x4E, 0x52);
/// Text that says why there is no bar.
pub(crate) const MUTED: RGBColor = RGBColor(0x77, 0x77, 0x77);

/// Line colours, one per series (Tableau's ten, the yellow darkened).
pub(crate) const SERIES: [RGBColor; 10] = [
    RGBColor(0x1F, 0x77, 0xB4),
    RGBColor(0xFF, 0x7F, 0x0E),
    RGBColor(0x2C, 0xA0, 0x2C),
    RGBColor(0xD6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xBD),
    RGBColor(0x8C, 0x56, 0x4B),
    RGBColor(0xE3, 0x77, 0xC2),
    RGBColor(0x7F, 0x7F, 0x7F),
    RGBColor(0x9A, 0x9B, 0x1A),
    RGBColor(0x17, 0xBE, 0xCF),
];

/// The colour of series `i`.
pub(crate) fn series(i: usize) -> RGBColor {
    SERIES[i % SERIES.len()]
}

/// `v` with three significant digits or so and a k, M or G suffix.
pub(crate) fn si(v: f64) -> String {
    match v.abs() {
        a if a >= 1e9 => format!("{:.2}G", v / 1e9),
        a if a >= 1e6 => format!("{:.2}M", v / 1e6),
        a if a >= 1e3 => format!("{:.1}k", v / 1e3),
        _ => format!("{v:.0}"),
    }
}

/// Width of every chart, in pixels.
pub const WIDTH: u32 = 900;

/// The font of every label; the viewer picks the face.
pub(crate) const FONT: &str = "sans-serif";

/// An estimate of the pixels `text` takes at `points` (plotters writes
/// `points / 1.24` px as the font-size), at 0.6 em a character: the
/// viewer picks the font. tests/fixtures/browser.rs uses the same.
pub(crate) fn text_width(text: &str, points: f64) -> f64 {
    text.chars().count() as f64 * points / 1.24 * 0.6
}

/// A drawing error as an `io::Error` naming the chart.
pub(crate) fn drawing(chart: &str) -> impl Fn(&dyn Display) -> io::Error + '_ {
    move |e| io::Error::other(format!("cannot draw the {chart} chart: {e}"))
}

/// `text` cut to `max` characters, with an ellipsis if cut, and with
/// control characters replaced (see `xml_char`).
pub(crate) fn clip(text: &str, max: usize) -> String {
    let text: String = text.chars().map(crate::report::xml_char).collect();
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// The smallest and largest of `values`, ignoring non-finite ones.
pub(crate) fn bounds(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_on_characters() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "abc…");
        assert_eq!(clip("××××", 2), "××…");
    }

    #[test]
    fn si_suffixes() {
        assert_eq!(si(950.0), "950");
        assert_eq!(si(12_345.0), "12.3k");
        assert_eq!(si(1_234_567.0), "1.23M");
        assert_eq!(si(2.5e9), "2.50G");
    }

    #[test]
    fn bounds_skip_what_is_not_finite() {
        assert_eq!(bounds([2.0, f64::NAN, 1.0, 5.0]), Some((1.0, 5.0)));
        assert_eq!(bounds([f64::INFINITY]), None);
    }

    #[test]
    fn the_public_colours_are_the_drawn_ones() {
        let hex = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        assert_eq!(hex(BAR), BAR_FILL);
        assert_eq!(hex(LIMIT), LIMIT_FILL);
        assert_eq!(hex(WHISKER), WHISKER_STROKE);
        assert_eq!(hex(LIMIT_LINE), LIMIT_STROKE);
        assert_eq!(SERIES.map(hex), SERIES_STROKES);
    }
}
