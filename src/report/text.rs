//! Words laid out in plain text and Markdown, for every kind's report:
//! paragraphs wrapped to a width, the verdict's hanging lines, a
//! Markdown cell.

use std::fmt::Write as _;
use std::os::fd::AsFd;

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
/// as deep as the line's own indent plus two.
pub(crate) fn wrap_paragraph(text: &str, width: usize) -> String {
    text.lines()
        .map(|line| {
            let indent = line.len() - line.trim_start().len();
            let pad = " ".repeat(indent);
            let body = wrap(line.trim_start(), width.saturating_sub(indent));
            format!("{pad}{}", body.replace('\n', &format!("\n{pad}  ")))
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
