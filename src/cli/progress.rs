//! The progress bar every measurement shows on stderr, fed by the
//! library's one [`Event`] type. Its total is fixed when the measurement
//! starts: the warm-up and the runs every row is planned to get. Runs
//! beyond the plan (a noisy row's extra runs, a warm-up repeated until
//! its rate settles) never move the bar back or make it longer: the bar
//! then says that extra runs are going on instead of a time left.
//! indicatif draws it only where stderr is a terminal, cut to its width.

use std::cell::RefCell;
use std::collections::HashSet;

use crate::bench::core::{Event, Figure};
use crate::units::{GIB, readable_ns};
use indicatif::{ProgressBar, ProgressStyle};

/// The bar while the planned runs go on: the time left is indicatif's
/// estimate from the steps done so far.
const PLANNED: &str = "{spinner} {elapsed} {bar:24} {pos}/{len}, about {eta} left: {wide_msg}";
/// The bar once every planned step is done and rows still run.
const EXTRA: &str = "{spinner} {elapsed} extra runs for noisy rows: {wide_msg}";

/// A measurement's bar, and which rows have had their first warm-up.
pub(super) struct Progress {
    bar: ProgressBar,
    warmed: RefCell<HashSet<String>>,
}

/// A bar of `len` planned steps (each row's first warm-up, its planned
/// runs and profiles).
pub(super) fn bar(len: usize) -> Progress {
    Progress {
        bar: steps(len),
        warmed: RefCell::new(HashSet::new()),
    }
}

/// A bar of `len` steps the caller moves itself (`kernels`' boots).
pub(super) fn steps(len: usize) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    bar.set_style(style(PLANNED));
    bar
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl Progress {
    /// Says `message` beside the bar, without a step.
    pub(super) fn set_message(&self, message: impl Into<String>) {
        self.bar.set_message(message.into());
    }

    /// Removes the bar: the measurement is over.
    pub(super) fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
    }

    /// One step on where `event` was planned: a row's first warm-up, or
    /// a run while the planned steps are not all done. A run after them
    /// turns the bar into the extra runs' line.
    fn step(&self, event: &Event<'_>) {
        let first = match event {
            Event::WarmedUp { row, .. } => self.warmed.borrow_mut().insert(row.to_string()),
            _ => true,
        };
        let done = self
            .bar
            .length()
            .is_some_and(|len| self.bar.position() >= len);
        if !done && first {
            self.bar.inc(1);
        } else if done {
            self.bar.set_style(style(EXTRA));
        }
    }
}

/// Moves `progress` on by `event` and says what happened.
pub(super) fn show(progress: &Progress, event: Event<'_>) {
    let message = match event {
        Event::PressureReady { bytes, seconds } => {
            progress.set_message(format!(
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
    progress.step(&event);
    progress.set_message(message);
}

fn words(figure: Figure) -> String {
    match figure {
        Figure::GibPerS(gib_s) => format!("{gib_s:.2} GiB/s"),
        Figure::RoundTripNs(ns) => format!("p50 {}", readable_ns(ns)),
        Figure::WritesPerS(n) => format!("{n:.0} writes/s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warm(row: &str) -> Event<'_> {
        Event::WarmedUp {
            row,
            figure: Figure::GibPerS(1.0),
        }
    }

    fn run(row: &str) -> Event<'_> {
        Event::Measured {
            row,
            index: 0,
            total: 0,
            figure: Figure::GibPerS(1.0),
        }
    }

    #[test]
    fn the_total_stays_what_was_planned_whatever_runs_come() {
        // Two rows, a warm-up and two runs each.
        let progress = bar(6);
        let at = |p: &Progress| (p.bar.position(), p.bar.length());
        show(&progress, warm("a"));
        show(&progress, warm("a"));
        show(&progress, warm("b"));
        assert_eq!(at(&progress), (2, Some(6)), "a repeated warm-up is no step");
        for _ in 0..4 {
            show(&progress, run("a"));
        }
        assert_eq!(at(&progress), (6, Some(6)));
        show(&progress, run("b"));
        show(&progress, warm("c"));
        assert_eq!(
            at(&progress),
            (6, Some(6)),
            "extra runs: the bar stays full"
        );
    }
}
