//! Horizontal bars, one row each, with a min-max whisker and a note: the
//! shape of the ladder and of contend's cells.

use std::io;
use std::iter::once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::chart::{BAR, FONT, LIMIT_LINE, MUTED, WHISKER, WIDTH, drawing, text_width};

/// Pixels left of the plot for the row labels.
const LABELS: u32 = 210;
/// Pixels of the plot's margins, left and right (`ChartBuilder::margin`).
const MARGINS: (u32, u32) = (10, 25);
/// The size of the labels and notes, in plotters' points.
const POINTS: f64 = 13.0;
/// Pixels between a bar (or its whisker) and its note.
const NOTE_GAP: f64 = 8.0;

/// One row.
pub(crate) struct Bar {
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
    pub(crate) fn measured(label: String, median: f64, min: Option<f64>, max: Option<f64>) -> Bar {
        Bar {
            label,
            value: Some((median, min.zip(max))),
            note: String::new(),
            fill: BAR,
        }
    }

    /// Where the bar or its whisker ends, and its note starts.
    fn end(&self) -> Option<f64> {
        let (median, spread) = self.value?;
        Some(spread.map_or(median, |s| median.max(s.1)))
    }

    /// A row with nothing to draw but `note`.
    pub(crate) fn empty(label: String, note: String) -> Bar {
        Bar {
            label,
            value: None,
            note,
            fill: BAR,
        }
    }
}

/// A whole chart of bars.
pub(crate) struct Bars<'a> {
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
    /// Pixels per row (40 for the ladder and contend).
    pub row_px: u32,
}

/// The height of `bars`' chart: 80 pixels and [`Bars::row_px`] per row.
pub(crate) fn height(bars: &Bars<'_>) -> u32 {
    80 + bars.row_px * bars.rows.len().max(1) as u32
}

/// The right end of the x axis: past every bar, whisker and limit, with
/// room for each note and the limit's label inside the plot.
fn axis_end(bars: &Bars<'_>, plot_px: f64) -> f64 {
    // The value `v` whose right `gap + text` pixels must fit: x_max such
    // that v / x_max * plot_px + gap + width <= plot_px - 4.
    let room = |v: f64, gap: f64, text: &str| {
        let free = (plot_px - 4.0 - gap - text_width(text, POINTS)).max(plot_px * 0.25);
        v * plot_px / free
    };
    let mut x_max = (bars.rows.iter()).fold(0.0_f64, |x_max, row| match row.end() {
        Some(end) => x_max.max(end * 1.05).max(room(end, NOTE_GAP, &row.note)),
        None => x_max,
    });
    if let Some((at, label)) = &bars.limit {
        x_max = x_max.max(at * 1.05);
        // Right of the line if it fits there, else left if it fits, else
        // right with the axis stretched.
        let right = at / x_max * plot_px + 4.0 + text_width(label, POINTS) <= plot_px - 4.0;
        let left = at / x_max * plot_px - 4.0 - text_width(label, POINTS) >= 4.0;
        if !right && !left {
            x_max = room(*at, 4.0, label);
        }
    }
    if x_max > 0.0 && x_max.is_finite() {
        x_max
    } else {
        1.0
    }
}

/// The SVG of `bars`: 900 pixels wide, [`height`] high.
pub(crate) fn draw(bars: &Bars<'_>) -> io::Result<String> {
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
pub(crate) fn draw_on(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    bars: &Bars<'_>,
) -> io::Result<()> {
    let fail = drawing(bars.chart);
    let n = bars.rows.len().max(1);
    let plot_px = f64::from(root.dim_in_pixel().0) - f64::from(MARGINS.0 + MARGINS.1 + LABELS);
    let x_max = axis_end(bars, plot_px);
    let px = |v: f64| v / x_max * plot_px;
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
            .margin(MARGINS.0)
            .margin_right(MARGINS.1)
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
        // Under the bars, and broken where a note crosses it: no label
        // is drawn over it.
        if let Some((at, label)) = &bars.limit {
            let mut crossed: Vec<f64> = (bars.rows.iter().enumerate())
                .filter(|(_, row)| {
                    let start = row.end().map_or(6.0, |end| px(end) + NOTE_GAP);
                    let end = start + text_width(&row.note, POINTS);
                    (start - 4.0..=end + 4.0).contains(&px(*at))
                })
                .map(|(i, _)| (n - i) as f64 - 0.5)
                .collect();
            // From the axis up.
            crossed.reverse();
            let mut from = 0.0;
            for centre in crossed.iter().chain(once(&f64::INFINITY)) {
                let to = (centre - 0.3).min(n as f64 + 0.25);
                // Dashes of 6 pixels every 10, cut at `to` (plotters'
                // dashed path may draw its last dash past its end).
                let unit = f64::from(chart.plotting_area().dim_in_pixel().1) / y_max;
                let mut y = from;
                while y < to {
                    let end = (y + 6.0 / unit).min(to);
                    chart
                        .draw_series(once(PathElement::new(
                            [(*at, y), (*at, end)],
                            LIMIT_LINE.stroke_width(2),
                        )))
                        .map_err(|e| fail(&e))?;
                    y += 10.0 / unit;
                }
                from = centre + 0.3;
            }
            // The label right of the line where it fits (see axis_end).
            let right = px(*at) + 4.0 + text_width(label, POINTS) <= plot_px - 4.0;
            let (dx, side) = match right {
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
            }
            chart
                .draw_series(once(
                    EmptyElement::at((row.end().unwrap_or(median), centre))
                        + Text::new(
                            row.note.clone(),
                            (NOTE_GAP as i32, 0),
                            label_style(&BLACK, HPos::Left),
                        ),
                ))
                .map_err(|e| fail(&e))?;
        }
    }
    Ok(())
}
