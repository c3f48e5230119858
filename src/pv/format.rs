//! pv's display line from a format: `-F FORMAT`, or the one pv builds from
//! the item flags (`-p -t -e ...`). Every item keeps one width as its value
//! changes magnitude, so that a line drawn over the last one never leaves
//! part of it behind.

mod bar;
mod items;
mod numeric;
mod sgr;
mod units;

use items::{fixed_text, growing_text};

pub(crate) use items::ratio_text;
pub(crate) use units::size_text;

use super::meter::{BarStyle, Items, MAX_COLUMNS, Snapshot};

/// One piece of a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// Text shown as it is.
    Literal(String),
    /// `%N`: the name, right-aligned in 9 columns, and a colon.
    Name,
    /// `%b`, `%{transferred}`: the count so far.
    Bytes,
    /// `%T`: how full the buffer between pv and its reader is.
    BufferPercent,
    /// `%t`: the elapsed time.
    Timer,
    /// `%r`: the current rate.
    Rate,
    /// `%a`: the average rate.
    AverageRate,
    /// `%p`, `%{progress-bar-only}`, `%{bar-plain}`...: a bar.
    Bar(Bar),
    /// `%{progress-amount-only}`: the percentage alone.
    AmountOnly,
    /// `%e`: the time left.
    Eta,
    /// `%I`: the local time of the end.
    FinEta,
    /// `%NUMA`: the last NUM bytes written, unprintable ones as `.`
    /// (nothing without NUM, as pv 1.12).
    LastWritten(usize),
    /// `%NUML`, `%{previous-line}`: the first NUM bytes of the last whole
    /// line written (0: as many as the line has room for).
    PreviousLine(usize),
    /// `%{progress-conemu}` (and `-9`): the percentage for the terminal's
    /// tab, as ConEmu's `OSC 9;4` sequence. Takes no column.
    Conemu,
    /// `%{sgr:colour,...}`: these ECMA-48 SGR codes. Take no column.
    Sgr(Vec<u8>),
    /// `%{ratio}`: the other side's count to this side's, with `-M both`
    /// (`-:-` without one, or while either is 0).
    Ratio,
}

/// A bar: which, and how wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bar {
    /// Which bar.
    pub kind: BarKind,
    /// Its columns, sides and percentage included; 0: what the other
    /// items leave (shared with the other bars of 0).
    pub width: usize,
}

/// The bars of pv 1.12's formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BarKind {
    /// `%p`, `%{progress}`: `[bar]` and the percentage, in `-u`'s style.
    Progress,
    /// `%{progress-bar-only}`: the bar alone, in `-u`'s style.
    Only,
    /// `%{bar-plain}`, `%{bar-block}`...: the bar alone, in this style.
    Styled(BarStyle),
}

/// `ConEmu`'s sequence that ends a display: no progress state.
pub(crate) const CONEMU_END: &str = "\x1b]9;4;0;0\x1b\\";

/// The most bytes `%A` shows (pv's limit).
pub(crate) const MAX_LAST_WRITTEN: usize = 256;

/// The most bytes `%L` shows: the widest line drawn.
pub(crate) const MAX_PREVIOUS_LINE: usize = MAX_COLUMNS;

/// pv's `-n` output without `-F`: one line of numbers: elapsed seconds
/// with `-t`, the count with `-b` (in bits with `-8`), the rate with
/// `-r`, else the percentage.
pub(crate) fn render_numeric(snap: &Snapshot, items: &Items) -> String {
    Format::numeric(items).render_numeric(snap, 80)
}

/// A parsed format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Format(Vec<Segment>);

impl Format {
    /// Parses pv's format language: `%p %t %e %I %r %a %b %T %N %%`, `%NUMA`,
    /// `%NUML`, and the long forms `%{progress}`, `%{timer}`, `%{bar-block}`,
    /// `%{sgr:red,bold}` ... A number before a bar is its width. An
    /// unknown sequence is shown as it is.
    pub(crate) fn parse(text: &str) -> Format {
        let mut segments = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('%') {
            literal.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let num: usize = after[..digits].parse().unwrap_or(0);
            let spec = &after[digits..];
            let (segment, used) = match spec.chars().next() {
                Some('{') => match spec.find('}') {
                    Some(end) => (long_name(&spec[1..end], num), end + 1),
                    // pv 1.12 takes an `sgr` left open to the end.
                    None if spec.starts_with("{sgr:") => {
                        (Some(Segment::Sgr(sgr::codes(&spec[5..]))), spec.len())
                    }
                    None => (None, 0),
                },
                Some(c) => (short_name(c, num), c.len_utf8()),
                None => (None, 0),
            };
            rest = match segment {
                Some(Segment::Literal(text)) => {
                    literal.push_str(&text);
                    &after[digits + used..]
                }
                Some(segment) => {
                    if !literal.is_empty() {
                        segments.push(Segment::Literal(std::mem::take(&mut literal)));
                    }
                    segments.push(segment);
                    &after[digits + used..]
                }
                // Unknown: the `%` and what follows stay text.
                None => {
                    literal.push('%');
                    after
                }
            };
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            segments.push(Segment::Literal(literal));
        }
        Format(segments)
    }

    /// The format pv builds from the item flags, in pv's order.
    pub(crate) fn from_items(items: &Items) -> Format {
        let flags = [
            (items.name.is_some(), "%N"),
            (items.bytes, "%b"),
            (items.buffer_percent, "%T"),
            (items.timer, "%t"),
            (items.rate, "%r"),
            (items.average_rate, "%a"),
            (items.progress, "%p"),
            (items.eta, "%e"),
            (items.fineta, "%I"),
        ];
        let mut text: Vec<String> = flags
            .into_iter()
            .filter(|&(on, _)| on)
            .map(|(_, spec)| spec.to_owned())
            .collect();
        if items.last_written > 0 {
            text.push(format!("%{}A", items.last_written));
        }
        Format::parse(&text.join(" "))
    }

    /// The segments (what the tests check a format parsed into).
    #[cfg(test)]
    pub(crate) fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// How many of the last bytes written the format shows (0: none).
    pub(crate) fn last_written(&self) -> usize {
        self.0
            .iter()
            .filter_map(|s| match s {
                Segment::LastWritten(n) => Some(*n),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// This format followed by `more`: `-M both` adds the ratio to the
    /// output side's line when no `-F` is given.
    pub(crate) fn followed_by(mut self, more: Format) -> Format {
        self.0.extend(more.0);
        self
    }

    /// Whether the format has `segment`.
    pub(crate) fn has(&self, segment: &Segment) -> bool {
        self.0.contains(segment)
    }

    /// The line for `snap` in `width` columns: the bars take what the
    /// other items leave, in equal shares (nothing when they leave
    /// nothing: the other items are never cut, a line wider than `width`
    /// is drawn whole, as pv 1.12 draws it). `previous`: the columns of
    /// the line drawn before, which a shorter line pads over (as pv does,
    /// by at most 15 spaces).
    pub(crate) fn render(&self, snap: &Snapshot, width: usize, previous: usize) -> String {
        self.render_columns(snap, width, previous).0
    }

    /// [`Format::render`]'s line, and the columns it takes (its escape
    /// sequences take none).
    pub(crate) fn render_columns(
        &self,
        snap: &Snapshot,
        width: usize,
        previous: usize,
    ) -> (String, usize) {
        let texts: Vec<Option<String>> = self
            .0
            .iter()
            .map(|segment| fixed_text(segment, snap))
            .collect();
        let fixed: usize = self
            .0
            .iter()
            .zip(&texts)
            .filter_map(|(segment, text)| text.as_ref().map(|t| columns(segment, t)))
            .sum();
        let growing = texts.iter().filter(|t| t.is_none()).count();
        let room = width.saturating_sub(fixed) / growing.max(1);
        let mut line = String::new();
        let mut used = 0;
        let mut last_code = None;
        for (segment, text) in self.0.iter().zip(texts) {
            let text = match text {
                Some(text) => text,
                None => growing_text(segment, snap, room),
            };
            if let Segment::Sgr(codes) = segment {
                last_code = codes.last().copied().or(last_code);
            }
            used += columns(segment, &text);
            line.push_str(&text);
        }
        line.push_str(sgr::closing(last_code));
        let padding = previous.saturating_sub(used).min(15);
        line.push_str(&" ".repeat(padding));
        (line, used + padding)
    }

    /// `-n`'s line in `width` columns: the numbers of `%t %b %r %a` and
    /// the percentage in plain decimal (for scripts), the other items as
    /// drawn.
    pub(crate) fn render_numeric(&self, snap: &Snapshot, width: usize) -> String {
        let snap = Snapshot {
            numeric: true,
            ..snap.clone()
        };
        self.render(&snap, width, 0)
    }

    /// `-n`'s format without `-F`: `%t %b %r %{progress-amount-only}`,
    /// each as its flag says, the percentage only without `-b` and `-r`.
    pub(crate) fn numeric(items: &Items) -> Format {
        numeric::from_items(items)
    }

    /// The format with `%{progress-conemu}` at its end, unless it has one
    /// (`-9`).
    pub(crate) fn with_conemu(mut self) -> Format {
        if !self.has(&Segment::Conemu) {
            self.0.push(Segment::Conemu);
        }
        self
    }

    /// How many bytes of the last line written the format shows: `Some(0)`
    /// for as many as there is room for, `None` without `%L`.
    pub(crate) fn previous_line(&self) -> Option<usize> {
        self.0
            .iter()
            .filter_map(|s| match s {
                Segment::PreviousLine(n) => Some(*n),
                _ => None,
            })
            .reduce(|a, b| if a == 0 || b == 0 { 0 } else { a.max(b) })
    }
}

/// The columns `text` takes on the line: none for an escape sequence.
fn columns(segment: &Segment, text: &str) -> usize {
    match segment {
        Segment::Sgr(_) | Segment::Conemu => 0,
        _ => text.chars().count(),
    }
}

fn short_name(c: char, num: usize) -> Option<Segment> {
    Some(match c {
        'p' => bar(BarKind::Progress, num),
        'L' => Segment::PreviousLine(num.min(MAX_PREVIOUS_LINE)),
        't' => Segment::Timer,
        'e' => Segment::Eta,
        'I' => Segment::FinEta,
        'r' => Segment::Rate,
        'a' => Segment::AverageRate,
        'b' => Segment::Bytes,
        'T' => Segment::BufferPercent,
        'N' => Segment::Name,
        'A' => Segment::LastWritten(num.min(MAX_LAST_WRITTEN)),
        '%' => Segment::Literal("%".into()),
        _ => return None,
    })
}

fn long_name(name: &str, num: usize) -> Option<Segment> {
    Some(match name {
        "progress" => bar(BarKind::Progress, num),
        "progress-bar-only" => bar(BarKind::Only, num),
        "bar-plain" => bar(BarKind::Styled(BarStyle::Plain), num),
        "bar-block" => bar(BarKind::Styled(BarStyle::Block), num),
        "bar-granular" => bar(BarKind::Styled(BarStyle::Granular), num),
        "bar-shaded" => bar(BarKind::Styled(BarStyle::Shaded), num),
        "progress-conemu" => Segment::Conemu,
        "previous-line" => Segment::PreviousLine(num.min(MAX_PREVIOUS_LINE)),
        "progress-amount-only" => Segment::AmountOnly,
        "timer" => Segment::Timer,
        "eta" => Segment::Eta,
        "fineta" => Segment::FinEta,
        "rate" => Segment::Rate,
        "average-rate" => Segment::AverageRate,
        "bytes" | "transferred" => Segment::Bytes,
        "buffer-percent" => Segment::BufferPercent,
        "last-written" => Segment::LastWritten(num.min(MAX_LAST_WRITTEN)),
        "name" => Segment::Name,
        "ratio" => Segment::Ratio,
        _ => match name.strip_prefix("sgr:") {
            Some(list) => Segment::Sgr(sgr::codes(list)),
            None => return None,
        },
    })
}

/// A bar of `width` columns (0: what the line leaves), at most the widest
/// line drawn.
fn bar(kind: BarKind, width: usize) -> Segment {
    Segment::Bar(Bar {
        kind,
        width: width.min(MAX_COLUMNS),
    })
}

#[cfg(test)]
#[path = "format/tests.rs"]
mod tests;
