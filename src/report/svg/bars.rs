//! Horizontal bars, one row each, with a min-max whisker and a note: the
//! shape of the ladder and of contend's cells.

use std::io;
use std::iter::once;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{BAR, FONT, LIMIT_LINE, MUTED, WHISKER, WIDTH, bounds, drawing};

/// Pixels left of the plot for the row labels.
const LABELS: u32 = 210;

/// One row.
pub(super) struct Bar {
    /// Left of the axis: what the row is.
    pub label: String,
    /// The bar's length, and the whisker's ends when there were runs;
    /// `None` leaves the row empty.
    pub value: Option<(f64, Option<(f64, f64)>)>,
    /// Right of the bar (or in the empty row): the figures or why none.
    pub note: String,
    /// The bar's colour.
    pub fill: RGBColor,
}

impl Bar {
    /// A row measured `median`, spread from `min` to `max` when both are
    /// known.
    pub fn measured(label: String, median: f64, min: Option<f64>, max: Option<f64>) -> Bar {
        Bar {
            label,
            value: Some((median, min.zip(max))),
            note: String::new(),
            fill: BAR,
        }
    }

    /// A row with nothing to draw but `note`.
    pub fn empty(label: String, note: String) -> Bar {
        Bar {
            label,
            value: None,
            note,
            fill: BAR,
        }
    }
}

/// A whole chart of bars.
pub(super) struct Bars<'a> {
    /// Which chart, for error messages.
    pub chart: &'a str,
    /// Above the plot.
    pub title: String,
    /// Under the axis.
    pub x_desc: &'a str,
    /// Top to bottom.
    pub rows: Vec<Bar>,
    /// A dashed vertical line at this value, with its label at the top.
    pub limit: Option<(f64, String)>,
    /// The axis' tick labels.
    pub ticks: fn(&f64) -> String,
}

/// The height of `bars`' chart: 80 pixels and 40 per row.
pub(super) fn height(bars: &Bars<'_>) -> u32 {
    80 + 40 * bars.rows.len().max(1) as u32
}

/// The SVG of `bars`: 900 pixels wide, [`height`] high.
pub(super) fn draw(bars: &Bars<'_>) -> io::Result<String> {
    let fail = drawing(bars.chart);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height(bars))).into_drawing_area();
        draw_on(&root, bars)?;
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(svg)
}

/// Draws `bars` on `root`, which is [`WIDTH`] by [`height`] pixels: the
/// whole document, or one of several charts stacked in one.
pub(super) fn draw_on(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    bars: &Bars<'_>,
) -> io::Result<()> {
    let fail = drawing(bars.chart);
    let n = bars.rows.len().max(1);
    let ends = bars
        .rows
        .iter()
        .filter_map(|r| r.value)
        .flat_map(|(median, spread)| [Some(median), spread.map(|s| s.1)])
        .flatten()
        .chain(bars.limit.as_ref().map(|l| l.0));
    let largest = bounds(ends).map_or(0.0, |b| b.1);
    // Room right of the longest bar for its note.
    let x_max = if largest > 0.0 { largest * 1.45 } else { 1.0 };
    // Half a row on top for the limit's label.
    let y_max = n as f64 + 0.5;
    let label_style = |colour: &RGBColor, h: HPos| {
        (FONT, 13)
            .into_font()
            .color(colour)
            .pos(Pos::new(h, VPos::Center))
    };
    // The row labels are drawn on `root`, whose coordinates start at its
    // own corner, from the chart's, which are the document's.
    let origin = root.get_base_pixel();
    {
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let mut chart = ChartBuilder::on(root)
            .caption(&bars.title, (FONT, 17))
            .margin(10)
            .margin_right(25)
            .x_label_area_size(40)
            .y_label_area_size(LABELS)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(TRANSPARENT)
            .y_labels(0)
            .x_label_formatter(&bars.ticks)
            .x_desc(bars.x_desc)
            .label_style((FONT, 13))
            .draw()
            .map_err(|e| fail(&e))?;
        // Under the bars and their notes.
        if let Some((at, label)) = &bars.limit {
            chart
                .draw_series(once(DashedPathElement::new(
                    [(*at, 0.0), (*at, n as f64 + 0.25)],
                    6,
                    4,
                    LIMIT_LINE.stroke_width(2),
                )))
                .map_err(|e| fail(&e))?;
            // The label on the side of the line with more room.
            let (dx, side) = match *at < x_max / 2.0 {
                true => (4, HPos::Left),
                false => (-4, HPos::Right),
            };
            chart
                .draw_series(once(
                    EmptyElement::at((*at, n as f64 + 0.25))
                        + Text::new(label.clone(), (dx, 0), label_style(&LIMIT_LINE, side)),
                ))
                .map_err(|e| fail(&e))?;
        }
        for (i, row) in bars.rows.iter().enumerate() {
            // Row i spans [n-i-1, n-i], first row on top.
            let (top, bottom) = ((n - i) as f64, (n - i - 1) as f64);
            let centre = top - 0.5;
            let (x, y) = chart.backend_coord(&(0.0, centre));
            root.draw(&Text::new(
                row.label.as_str(),
                (x - 8 - origin.0, y - origin.1),
                label_style(&BLACK, HPos::Right),
            ))
            .map_err(|e| fail(&e))?;
            let Some((median, spread)) = row.value else {
                chart
                    .draw_series(once(
                        EmptyElement::at((0.0, centre))
                            + Text::new(row.note.clone(), (6, 0), label_style(&MUTED, HPos::Left)),
                    ))
                    .map_err(|e| fail(&e))?;
                continue;
            };
            chart
                .draw_series(once(Rectangle::new(
                    [(0.0, top - 0.2), (median, bottom + 0.2)],
                    row.fill.filled(),
                )))
                .map_err(|e| fail(&e))?;
            let mut note_at = median;
            if let Some((lo, hi)) = spread {
                let style = WHISKER.stroke_width(2);
                let cap = |x: f64| {
                    EmptyElement::at((x, centre)) + PathElement::new([(0, -7), (0, 7)], style)
                };
                chart
                    .draw_series(once(PathElement::new([(lo, centre), (hi, centre)], style)))
                    .map_err(|e| fail(&e))?;
                chart
                    .draw_series([cap(lo), cap(hi)])
                    .map_err(|e| fail(&e))?;
                note_at = note_at.max(hi);
            }
            chart
                .draw_series(once(
                    EmptyElement::at((note_at, centre))
                        + Text::new(row.note.clone(), (8, 0), label_style(&BLACK, HPos::Left)),
                ))
                .map_err(|e| fail(&e))?;
        }
    }
    Ok(())
}
