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
mod contend;
mod ipc;
mod latency;
mod scan;

pub use self::contend::contend_svg;
pub use self::ipc::ipc_svg;
pub use self::latency::latency_svg;
pub use self::scan::{scan_result_svg, scan_svg};
pub use crate::bench::ladder::report::ladder_svg;

use super::{Exporter, Svg};
use crate::bench::contend::ContendResult;
use crate::bench::ipc::IpcResult;
use crate::bench::latency::LatencyResult;
use crate::bench::scan::ScanResult;

/// Each kind of result's chart, as `--svg` writes it.
macro_rules! svg_exporter {
    ($($result:ty => $chart:path),* $(,)?) => {$(
        impl Exporter<$result> for Svg {
            fn export(&self, result: &$result) -> std::io::Result<Vec<u8>> {
                $chart(result).map(String::into_bytes)
            }
        }
    )*};
}

svg_exporter! {
    LatencyResult => latency_svg,
    ContendResult => contend_svg,
    IpcResult => ipc_svg,
    ScanResult => scan_result_svg,
}
