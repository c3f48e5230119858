//! Writing results out: one small module per format, and the charts
//! ([`svg`]) and the self-contained report ([`html`]).

mod csv;
pub mod html;
mod json;
pub mod svg;
mod text;

use std::io;

use crate::bench::ladder::LadderResult;

pub use self::csv::Csv;
pub use self::json::{Json, document as json_document};
pub use self::text::Text;

/// `c`, or U+FFFD where `c` is a control character XML does not allow
/// (a terminal escape in an end's stderr, say), for the SVG and HTML.
fn xml_char(c: char) -> char {
    match c {
        '\t' | '\n' | '\r' => c,
        c if c.is_control() => char::REPLACEMENT_CHARACTER,
        c => c,
    }
}

/// A format ladder results can be written in.
pub trait Exporter {
    /// The whole document for `result`.
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>>;
}
