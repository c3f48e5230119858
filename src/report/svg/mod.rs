//! Charts as SVG, drawn with [plotters], each a pure function of a result
//! with a fixed size. Tests and scripts find bars and whiskers by their
//! colours ([`BAR_FILL`], [`LIMIT_FILL`], [`WHISKER_STROKE`]).

pub(crate) mod bars;
pub(crate) mod chart;
pub(crate) mod lines;

pub use chart::{BAR_FILL, LIMIT_FILL, LIMIT_STROKE, SERIES_STROKES, WHISKER_STROKE, WIDTH};
