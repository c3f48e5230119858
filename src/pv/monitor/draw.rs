//! `-M both`'s display: the input side's meter above the output side's,
//! each with its own [`Meter`] and settings. With `-c` each side has its
//! own [`Cursor`] row; on a terminal the two rows are redrawn in place;
//! elsewhere (`-f` to a file, `-n`) each line ends as pv 1.12 ends it.
//!
//! [`Cursor`]: crate::pv::cursor::Cursor

use std::io;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::Event;
use crate::pv::display::{Display, Meter, Source, lock, show, terminal_width};
use crate::pv::format::{Format, Segment, ratio_text, render_numeric};

/// One side of the display: how to draw it and what it counts.
pub(crate) struct Drawn<'a> {
    /// Its display settings (`-F` and `-N` of its own).
    pub display: &'a Display,
    /// Its count.
    pub source: &'a dyn Source,
}

/// Draws the input side (`sides[0]`) and the output side (`sides[1]`)
/// every interval until `events` closes, each side's last line when it
/// ends, then the remaining last lines. `ratio`: add the ratio to the
/// output side's line (no `-F` given).
pub(crate) fn draw_pair(
    sides: [Drawn<'_>; 2],
    ratio: bool,
    start: Instant,
    events: &Receiver<Event>,
    out: &io::Stderr,
) {
    let mut meters = [Meter::default(), Meter::default()];
    // What each side's row shows now, and whether its last line is drawn.
    let mut rows = [String::new(), String::new()];
    let mut ended = [false; 2];
    let rows_here = rustix::termios::isatty(out) && sides[0].display.cursor.is_none();
    loop {
        let interval = lock(&sides[0].display.settings).interval;
        let mut ending = [false; 2];
        let finished = match events.recv_timeout(interval) {
            Ok(Event::InputEnded) => {
                ending[0] = true;
                false
            }
            Ok(Event::OutputEnded) => {
                ending[1] = true;
                false
            }
            Err(RecvTimeoutError::Timeout) => false,
            Ok(Event::Finished) | Err(RecvTimeoutError::Disconnected) => true,
        };
        if finished {
            ending = [!ended[0], !ended[1]];
        }
        // A timer's frame draws every side still going; a side's end
        // draws that side's last line.
        let timer = !ending.contains(&true);
        let counts = [sides[0].source.count(), sides[1].source.count()];
        let now = start.elapsed();
        let mut text = String::new();
        for (i, side) in sides.iter().enumerate() {
            if ended[i] || !(timer || ending[i]) {
                continue;
            }
            let display = side.display;
            let done = ending[i];
            ended[i] |= done;
            let settings = lock(&display.settings).clone();
            let mut snap = meters[i].snapshot(counts[i], now.as_secs_f64(), done, &settings);
            snap.lines = display.lines;
            snap.other = Some(counts[1 - i]);
            let mut format = settings.format();
            if ratio && i == 1 {
                // pv 1.12's line leaves out the ETA of an unknown size
                // rather than a blank: "[<=>  ] 228.6:1".
                let mut items = settings.items.clone();
                if settings.size.is_none() {
                    (items.eta, items.fineta) = (false, false);
                }
                format = Format::from_items(&items).followed_by(Format::parse(" %{ratio}"));
            }
            if format.has(&Segment::BufferPercent) {
                snap.buffer_percent = side.source.buffer_percent();
            }
            let n = format.last_written();
            if n > 0 {
                snap.last_written = side.source.last_written(n);
            }
            // -W: nothing until the first byte; -D: until the delay.
            if (display.wait && counts[i] == 0) || now < display.delay {
                continue;
            }
            if settings.numeric {
                let mut line = render_numeric(&snap, &settings.items);
                if ratio && i == 1 {
                    line = format!("{line} {}", ratio_text(counts[0], counts[1]));
                }
                text.push_str(&line);
                text.push('\n');
                continue;
            }
            let width = settings.width.unwrap_or_else(|| terminal_width(out));
            let line = meters[i].line(&format, &snap, width);
            match &display.cursor {
                Some(cursor) => text.push_str(&cursor.place(&line)),
                None if rows_here => {}
                None if done => text.push_str(&format!("{line}\r\n")),
                None => text.push_str(&format!("{line}\r")),
            }
            rows[i] = line;
        }
        if rows_here && !lock(&sides[0].display.settings).numeric {
            text = match finished {
                true => format!("{}\r\n{}\r\n", rows[0], rows[1]),
                false if rows.iter().all(String::is_empty) => String::new(),
                false => format!("{}\r\n{}\r\x1b[A", rows[0], rows[1]),
            };
        }
        let patience = if finished {
            Duration::from_secs(1)
        } else {
            Duration::ZERO
        };
        if !text.is_empty() {
            show(out, &text, patience);
        }
        if finished {
            for (i, side) in sides.iter().enumerate() {
                let bits = lock(&side.display.settings).bits;
                if side.display.stats {
                    show(out, &format!("{}\n", meters[i].stats(bits)), patience);
                }
            }
            return;
        }
    }
}
