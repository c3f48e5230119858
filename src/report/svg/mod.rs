//! Charts as SVG, drawn with [plotters]: the ladder, latency percentiles,
//! contend's cells, a scan of the ladder over one parameter, and ipc's
//! mechanisms, a chart per metric in one document.
//!
//! Every chart is a pure function of a result and has a fixed size, so the
//! same result always gives the same bytes. Text is measured with
//! plotters' built-in estimate (no font file, no system font): the viewer
//! draws it with its own sans-serif font.
//!
//! Bars are rectangles filled with [`BAR_FILL`] ([`LIMIT_FILL`] for the
//! `memcpy` limit), whiskers are polylines stroked with [`WHISKER_STROKE`]:
//! tests and scripts find them by those colours.

pub(crate) mod bars;
pub(crate) mod chart;
pub(crate) mod lines;

pub use chart::{BAR_FILL, LIMIT_FILL, LIMIT_STROKE, SERIES_STROKES, WHISKER_STROKE, WIDTH};
