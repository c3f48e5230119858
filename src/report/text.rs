//! Words laid out in plain text and Markdown, for every kind's report:
//! paragraphs wrapped to a width, the verdict's hanging lines, columns
//! packed into tables that fit a width, a Markdown cell.

use std::fmt::Write as _;
use std::os::fd::AsFd;

use crate::report::table::{Align, Row, aligned};

/// The width of text that goes to a file or a pipe, where no terminal
/// says how wide it is.
pub const DEFAULT_WIDTH: usize = 100;

/// The narrowest width text is laid out for: below it, tables and
/// labels could not fit whatever the wrapping.
pub const MIN_WIDTH: usize = 40;

/// The columns text printed on `fd` may take: `COLUMNS` where it holds a
/// number (as `ls` and `hyperfine` read it, so that a script can ask for
/// a width), else the terminal's width where `fd` is one, else
/// [`DEFAULT_WIDTH`]; never less than [`MIN_WIDTH`].
pub fn width_of(fd: impl AsFd) -> usize {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0);
    let terminal = || {
        rustix::termios::tcgetwinsize(fd.as_fd())
            .ok()
            .map(|size| usize::from(size.ws_col))
            .filter(|&n| n > 0)
    };
    columns
        .or_else(terminal)
        .unwrap_or(DEFAULT_WIDTH)
        .max(MIN_WIDTH)
}

/// Where the verdict's values start: under the `round trip: ` label.
pub(crate) const VERDICT_INDENT: usize = 12;

/// The verdict's lines, each wrapped to 100 columns under its value.
pub(crate) fn verdict_lines(lines: &[String]) -> String {
    let mut out = String::new();
    for line in lines {
        let _ = writeln!(out, "{}", wrap_hanging(line, 100, VERDICT_INDENT));
    }
    out
}

/// Each line of `text` wrapped to `width`, continuation lines indented
/// as deep as the line's own indent plus two (and no wider than `width`
/// for it).
pub(crate) fn wrap_paragraph(text: &str, width: usize) -> String {
    text.lines()
        .map(|line| {
            let indent = line.len() - line.trim_start().len();
            let pad = " ".repeat(indent);
            let body = wrap_hanging(line.trim_start(), width.saturating_sub(indent), 2);
            format!("{pad}{}", body.replace('\n', &format!("\n{pad}")))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` in lines of at most `width` characters, its continuation lines
/// indented by `indent` spaces (under the verdict's values).
pub(crate) fn wrap_hanging(text: &str, width: usize, indent: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split(' ') {
        let len = word.chars().count();
        if line > indent && line + 1 + len > width {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            line = indent;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out += word;
        line += len;
    }
    out
}

/// `text` broken into lines of at most `width` characters, at spaces.
pub(crate) fn wrap(text: &str, width: usize) -> String {
    wrap_hanging(text, width, 0)
}

/// A column of a table that [`packed`] lays out: its heading and cells
/// (one per row, in the rows' order) and how they are padded.
pub(crate) struct Column {
    /// The heading, then a cell per row.
    pub(crate) cells: Vec<String>,
    /// Padded on the right (text) or the left (figures).
    pub(crate) align: Align,
}

impl Column {
    /// A column of `heading` and `cells`.
    pub(crate) fn new(
        heading: &str,
        align: Align,
        cells: impl IntoIterator<Item = String>,
    ) -> Self {
        let cells = std::iter::once(heading.to_string()).chain(cells).collect();
        Column { cells, align }
    }

    fn width(&self) -> usize {
        self.cells
            .iter()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0)
    }
}

/// `columns` beside `key` (the rows' names, heading first), in as many
/// tables as it takes for every line to fit `width`, each table opening
/// with `key` again; each table as its lines. A column joins the table
/// before it while the line still fits (never cut, never wrapped: a
/// column wider than `width` beside `key` gets a table of its own).
pub(crate) fn packed(key: &Column, columns: &[Column], width: usize) -> Vec<Vec<String>> {
    let mut groups: Vec<Vec<&Column>> = Vec::new();
    let mut used = 0;
    for column in columns {
        let w = 2 + column.width();
        match groups.last_mut() {
            Some(group) if used + w <= width => group.push(column),
            _ => {
                groups.push(vec![column]);
                used = key.width();
            }
        }
        used += w;
    }
    groups
        .into_iter()
        .map(|group| {
            let all: Vec<&Column> = std::iter::once(key).chain(group).collect();
            let rows: Vec<Row> = (0..key.cells.len())
                .map(|i| Row::Cells(all.iter().map(|c| c.cells[i].clone()).collect()))
                .collect();
            aligned(&rows, |i| all[i].align)
        })
        .collect()
}

/// `|` and line breaks escaped for a Markdown table cell.
pub(crate) fn md_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The name serde gives `value` in the JSON document (`"busy"`,
/// `"threads"`, `"busy-poll"`).
pub(crate) fn serde_name(value: impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_pack_into_tables_that_fit_each_opening_with_the_key() {
        let key = Column::new("rung", Align::Left, ["a".to_string(), "bb".into()]);
        let column = |h: &str| Column::new(h, Align::Right, ["1".to_string(), "22".into()]);
        let columns = [column("first"), column("second"), column("third")];
        // "rung  first  second" is 19 wide: the third goes to a second table.
        let tables = packed(&key, &columns, 20);
        assert_eq!(
            tables,
            [
                vec![
                    "rung  first  second",
                    "a         1       1",
                    "bb       22      22"
                ],
                vec!["rung  third", "a         1", "bb       22"],
            ]
        );
        // Wide enough: one table; too narrow for any two: a table each.
        assert_eq!(packed(&key, &columns, 80).len(), 1);
        assert_eq!(packed(&key, &columns, 5).len(), 3);
    }

    #[test]
    fn wrapping_breaks_at_spaces_within_the_width_and_hangs() {
        let text = "steps:    vmsplice-read 3.2x, vmsplice-splice 1.3x, tuned 2.0x slower";
        assert_eq!(
            wrap_hanging(text, 40, 10),
            "steps:    vmsplice-read 3.2x,\n          vmsplice-splice 1.3x, tuned\n          2.0x slower"
        );
        assert_eq!(wrap("one two three", 7), "one two\nthree");
        // A paragraph's continuation lines hang two deeper, within the width.
        let text = wrap_paragraph("noisy: aaaa bbbb cccc\n  likely: dddd eeee ffff", 16);
        assert_eq!(
            text,
            "noisy: aaaa bbbb\n  cccc\n  likely: dddd\n    eeee ffff"
        );
    }
}
