//! Lines with a dot per point (the latency and scan charts), and their
//! legend below the x axis, where it cannot cover a point.

use std::io;
use std::iter::once;

use plotters::chart::ChartContext;
use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::chart::{FONT, WIDTH, clip, drawing};

/// A chart whose axes both take `f64`s (linear or log).
pub(crate) type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

/// A line through `points` with a dot on each.
pub(crate) fn dotted_line<X, Y>(
    chart: &mut Chart<'_, '_, X, Y>,
    name: &str,
    points: &[(f64, f64)],
    colour: RGBColor,
) -> io::Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let fail = drawing(name);
    let style = colour.stroke_width(2);
    chart
        .draw_series(once(PathElement::new(points.to_vec(), style)))
        .map_err(|e| fail(&e))?;
    chart
        .draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled())))
        .map_err(|e| fail(&e))?;
    Ok(())
}

/// Legend entries per row, each in a column of half the chart's width.
const COLUMNS: usize = 2;
/// Pixels per row of the legend.
const ROW: u32 = 20;
/// Characters an entry keeps: about 65 fit in a column at the legend's
/// font (13 points, drawn 10.5 px; see `text_width`).
const ENTRY_CHARS: usize = 64;

/// The height of the legend of `entries` lines: a row per two, and room
/// above and below.
pub(crate) fn legend_height(entries: usize) -> u32 {
    let rows = entries.div_ceil(COLUMNS).max(1) as u32;
    10 + rows * ROW + 6
}

/// The legend under a chart, on `area` ([`WIDTH`] by [`legend_height`]):
/// a square of each line's colour (unlike a data mark) and its name.
pub(crate) fn legend_below(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    name: &str,
    entries: &[(String, RGBColor)],
) -> io::Result<()> {
    let fail = drawing(name);
    area.fill(&WHITE).map_err(|e| fail(&e))?;
    let column = (WIDTH as i32 - 80) / COLUMNS as i32;
    let style = (FONT, 13)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (label, colour)) in entries.iter().enumerate() {
        let x = 70 + column * (i % COLUMNS) as i32;
        let y = 10 + (ROW * (i / COLUMNS) as u32) as i32 + ROW as i32 / 2;
        area.draw(&Rectangle::new(
            [(x, y - 5), (x + 14, y + 5)],
            colour.filled(),
        ))
        .map_err(|e| fail(&e))?;
        area.draw(&Text::new(
            clip(label, ENTRY_CHARS),
            (x + 20, y),
            style.clone(),
        ))
        .map_err(|e| fail(&e))?;
    }
    Ok(())
}
