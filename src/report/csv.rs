//! CSV: one row per measured run, for spreadsheets and plotting scripts.

use std::io;

use super::Exporter;
use crate::bench::ladder::LadderResult;

/// One row per run: `rung,status,run,gib_s,bytes_per_run,buf_size,pipe_size,copies`.
/// A rung without runs has one row with an empty `run` and `gib_s`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Csv;

impl Exporter for Csv {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let mut out =
            String::from("rung,status,run,gib_s,bytes_per_run,buf_size,pipe_size,copies\n");
        for r in &result.rungs {
            let status = serde_json::to_value(r.status).map_err(io::Error::other)?;
            let status = status.as_str().unwrap_or("");
            let pipe = r.pipe_size.map(|p| p.to_string()).unwrap_or_default();
            let tail = format!("{},{},{},{}", r.bytes_per_run, r.buf_size, pipe, r.copies);
            if r.runs_gib_s.is_empty() {
                out += &format!("{},{status},,,{tail}\n", r.name);
            }
            for (i, gib_s) in r.runs_gib_s.iter().enumerate() {
                out += &format!("{},{status},{},{gib_s:.4},{tail}\n", r.name, i + 1);
            }
        }
        Ok(out.into_bytes())
    }
}
