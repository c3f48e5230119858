//! The progress bar every measurement shows on stderr, fed by the
//! library's one [`Event`] type.

use crate::bench::core::{Event, Figure};
use crate::units::{GIB, readable_ns};
use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps (runs, warm-ups and profiles).
pub(super) fn bar(len: usize) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed}] {bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Moves `bar` on by `event` and says what happened.
pub(super) fn show(bar: &ProgressBar, event: Event<'_>) {
    let message = match event {
        Event::PressureReady { bytes, seconds } => {
            bar.set_message(format!(
                "memory hogs hold {:.1} GiB (ready in {seconds:.1} s)",
                bytes as f64 / GIB as f64
            ));
            return;
        }
        Event::Skipped { row, reason } => format!("{row}: {reason}"),
        Event::WarmedUp { row, figure } => format!("{row} warm-up {}", words(figure)),
        Event::Profiling { row } => format!("{row} under perf record"),
        Event::Measured { row, figure, .. } => format!("{row}: {}", words(figure)),
    };
    // Noisy rows get runs the bar did not count on.
    if bar.length().is_some_and(|len| bar.position() >= len) {
        bar.inc_length(1);
    }
    bar.inc(1);
    bar.set_message(message);
}

fn words(figure: Figure) -> String {
    match figure {
        Figure::GibPerS(gib_s) => format!("{gib_s:.2} GiB/s"),
        Figure::RoundTripNs(ns) => format!("p50 {}", readable_ns(ns)),
        Figure::WritesPerS(n) => format!("{n:.0} writes/s"),
    }
}
