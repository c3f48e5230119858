//! Writing results out: one [`Exporter`] trait and one unit struct per
//! format. A format a kind of result does not have is not implemented for
//! it, so asking for it does not compile. `Svg` and `Html` need the `cli`
//! feature (plotters). Every exporter is a pure function of the result.

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(feature = "cli")]
pub mod html;
#[cfg(feature = "cli")]
pub(crate) mod page;
#[cfg(feature = "cli")]
pub mod svg;
pub(crate) mod table;
pub(crate) mod text;

use std::io;

/// What every export of an interrupted result says, in a line.
pub const INTERRUPTED: &str = "interrupted: only the runs made before the signal are here";

/// `text` with the [`INTERRUPTED`] line in front when `interrupted`.
pub(crate) fn marked(interrupted: bool, text: String) -> String {
    if interrupted {
        format!("{INTERRUPTED}\n{text}")
    } else {
        text
    }
}

/// A format results of type `R` can be written in.
pub trait Exporter<R: ?Sized> {
    /// The whole document for `result`.
    fn export(&self, result: &R) -> io::Result<Vec<u8>>;
}

/// The table printed on stdout.
#[derive(Debug, Clone, Copy)]
pub struct Text {
    /// Add a paragraph per rung on why it is faster (the ladder's table).
    pub explain: bool,
    /// The columns no line may pass: the terminal's (`COLUMNS`, else
    /// the terminal's own width), 100 by default.
    pub width: usize,
}

impl Text {
    /// The table at the width of text that does not go to a terminal,
    /// with `--explain`'s details or without.
    pub fn new(explain: bool) -> Text {
        Text {
            explain,
            width: text::DEFAULT_WIDTH,
        }
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::new(false)
    }
}

/// Pretty-printed JSON of the whole result, ending in a newline: what
/// `--json` writes and `compare` reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

/// CSV: one row per measured run, for spreadsheets and plotting scripts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Csv;

/// `head` (the header line, or nothing) and then each of `rows` as one
/// CSV line: a row is a serde struct whose fields are its columns in
/// order, a nested struct or sequence standing for its own columns. A
/// field is quoted only where it must be (RFC 4180).
pub(crate) fn csv_lines<R: serde::Serialize>(
    head: &str,
    rows: impl IntoIterator<Item = R>,
) -> io::Result<Vec<u8>> {
    // The header is written as given: csv cannot name the columns of a
    // nested struct, and several kinds' headers have per-series columns.
    let mut out = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(head.as_bytes().to_vec());
    for row in rows {
        out.serialize(row)?;
    }
    out.into_inner().map_err(|e| e.into_error())
}

/// A chart (SVG).
#[cfg(feature = "cli")]
#[derive(Debug, Clone, Copy, Default)]
pub struct Svg;

/// A self-contained HTML page.
#[cfg(feature = "cli")]
#[derive(Debug, Clone, Copy, Default)]
pub struct Html;

/// GitHub-flavoured Markdown: the table, for a pull request, an issue or
/// a mail (as hyperfine's `--export-markdown`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

impl<R: serde::Serialize> Exporter<R> for Json {
    fn export(&self, result: &R) -> io::Result<Vec<u8>> {
        let mut out = serde_json::to_vec_pretty(result).map_err(io::Error::other)?;
        out.push(b'\n');
        Ok(out)
    }
}

/// `c`, or U+FFFD where `c` is a control character XML does not allow
/// (a terminal escape in an end's stderr, say), for the SVG and HTML.
#[cfg(feature = "cli")]
pub(crate) fn xml_char(c: char) -> char {
    match c {
        '\t' | '\n' | '\r' => c,
        c if c.is_control() => char::REPLACEMENT_CHARACTER,
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` as `csv_lines` writes it in a line of its own.
    fn field(text: &str) -> String {
        let line = csv_lines("", [(text, "")]).unwrap();
        let line = String::from_utf8(line).unwrap();
        line.strip_suffix(",\n").unwrap().to_string()
    }

    #[test]
    fn a_field_is_quoted_only_when_it_must_be() {
        assert_eq!(field("plain words"), "plain words");
        assert_eq!(field("a, b"), "\"a, b\"");
        assert_eq!(field("say \"no\""), "\"say \"\"no\"\"\"");
    }
}
