//! Writing ladder results out: one small module per format.

mod csv;
mod json;
mod text;

use std::io;

use crate::bench::ladder::LadderResult;

pub use self::csv::Csv;
pub use self::json::Json;
pub use self::text::Text;

/// A format ladder results can be written in.
pub trait Exporter {
    /// The whole document for `result`.
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>>;
}
