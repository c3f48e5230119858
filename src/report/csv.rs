//! CSV: one row per measured run, for spreadsheets and plotting scripts.

use std::io;

use super::Exporter;
use crate::bench::ladder::LadderResult;

/// One row per run: `rung,status,run,gib_s,bytes_per_run,buf_size,pipe_size,copies`,
/// then the rung's cost per GiB over all its measured runs (the same on
/// each of its rows; empty when not measured):
/// `user_s_per_gib,system_s_per_gib,context_switches_per_gib,page_faults_per_gib`.
/// A rung without runs has one row with an empty `run` and `gib_s`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Csv;

impl Exporter for Csv {
    fn export(&self, result: &LadderResult) -> io::Result<Vec<u8>> {
        let mut out = String::from(
            "rung,status,run,gib_s,bytes_per_run,buf_size,pipe_size,copies,\
             user_s_per_gib,system_s_per_gib,context_switches_per_gib,page_faults_per_gib\n",
        );
        for r in &result.rungs {
            let status = serde_json::to_value(r.status).map_err(io::Error::other)?;
            let status = status.as_str().unwrap_or("");
            let pipe = r.pipe_size.map(|p| p.to_string()).unwrap_or_default();
            let cost = r.cost.map_or_else(
                || ",,,".to_string(),
                |c| {
                    format!(
                        "{:.4},{:.4},{:.1},{:.1}",
                        c.user_s_per_gib,
                        c.system_s_per_gib,
                        c.context_switches_per_gib,
                        c.page_faults_per_gib
                    )
                },
            );
            let tail = format!(
                "{},{},{},{},{cost}",
                r.bytes_per_run, r.buf_size, pipe, r.copies
            );
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
