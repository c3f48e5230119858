//! Lines with a dot per point and a legend: the shape of the latency
//! and scan charts.

use std::io;
use std::iter::once;

use plotters::chart::ChartContext;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;

use super::{FONT, drawing};

/// A chart whose axes both take `f64`s (linear or log).
pub(super) type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

/// A line through `points` with a dot on each, named `label` in the
/// legend when there is one.
pub(super) fn dotted_line<X, Y>(
    chart: &mut Chart<'_, '_, X, Y>,
    name: &str,
    points: &[(f64, f64)],
    colour: RGBColor,
    label: Option<String>,
) -> io::Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let fail = drawing(name);
    let style = colour.stroke_width(2);
    let drawn = chart
        .draw_series(once(PathElement::new(points.to_vec(), style)))
        .map_err(|e| fail(&e))?;
    if let Some(label) = label {
        drawn
            .label(label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
    }
    chart
        .draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled())))
        .map_err(|e| fail(&e))?;
    Ok(())
}

/// The legend of the labelled lines, boxed, top left.
pub(super) fn legend<'a, 'b: 'a, X, Y>(
    chart: &mut Chart<'a, 'b, X, Y>,
    name: &str,
) -> io::Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 13))
        .draw()
        .map_err(|e| drawing(name)(&e))
}
