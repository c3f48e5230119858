//! JSON: the whole [`LadderResult`], for `compare` and other programs.

use std::io;

use super::Exporter;
use crate::bench::ladder::LadderResult;

/// Pretty-printed JSON of the whole result.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

impl Exporter for Json {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        document(result)
    }
}

/// Any result (ladder, scan, latency, contend) as the pretty-printed
/// document `--json` writes, ending in a newline.
pub fn document(result: &impl serde::Serialize) -> io::Result<Vec<u8>> {
    let mut out = serde_json::to_vec_pretty(result).map_err(io::Error::other)?;
    out.push(b'\n');
    Ok(out)
}
