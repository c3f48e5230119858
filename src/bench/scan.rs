//! `bench --scan`: the ladder once per value of one setting (buffer size
//! or pipe size), to find the best value for this machine.

use crate::bench::harness::Header;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::ladder::{LadderConfig, LadderResult, Rung};
use crate::sys::SystemFacts;
use crate::units::parse_size;

/// The setting a scan varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScanParam {
    /// `--buf-size`: every rung's buffer but tuned's.
    BufSize,
    /// `--pipe-size`: the pipe of `write-read` (the vmsplice rungs size
    /// their pipe to half the buffer, tuned to pipe-max-size).
    PipeSize,
}

impl ScanParam {
    /// The option's name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ScanParam::BufSize => "buf-size",
            ScanParam::PipeSize => "pipe-size",
        }
    }

    /// Whether `rung`'s measurement depends on this setting.
    pub fn affects(self, rung: Rung) -> bool {
        match self {
            ScanParam::BufSize => rung != Rung::Tuned,
            ScanParam::PipeSize => rung == Rung::WriteRead,
        }
    }

    /// `config` with this setting at `value`.
    pub fn apply(self, config: &LadderConfig, value: u64) -> LadderConfig {
        let mut config = config.clone();
        // Values come from `Scan::from_str`, which keeps them in usize.
        let value = usize::try_from(value).unwrap_or(usize::MAX);
        match self {
            ScanParam::BufSize => config.buf_size = value,
            ScanParam::PipeSize => config.pipe_size = Some(value),
        }
        config
    }
}

impl fmt::Display for ScanParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scan as asked on the command line: `buf-size=64K,256K,1M`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// The setting.
    pub param: ScanParam,
    /// Its values, in the order given.
    pub values: Vec<u64>,
}

impl FromStr for Scan {
    type Err = String;

    fn from_str(text: &str) -> Result<Scan, String> {
        let (name, list) = text
            .split_once('=')
            .ok_or_else(|| format!("'{text}' is not SETTING=VALUES (e.g. buf-size=64K,256K,1M)"))?;
        let param = match name {
            "buf-size" => ScanParam::BufSize,
            "pipe-size" => ScanParam::PipeSize,
            _ => {
                return Err(format!(
                    "cannot scan '{name}': the settings are buf-size and pipe-size"
                ));
            }
        };
        let values = list
            .split(',')
            .map(|v| {
                let n = parse_size(v).map_err(|e| e.to_string())?;
                if n == 0 {
                    return Err(format!("{name}: '{v}' is not a size to measure (0 bytes)"));
                }
                usize::try_from(n)
                    .map(|_| n)
                    .map_err(|_| format!("size '{v}' is too large"))
            })
            .collect::<Result<Vec<u64>, String>>()?;
        if values.len() < 2 {
            return Err(format!("{name}: a scan needs at least two values"));
        }
        Ok(Scan { param, values })
    }
}

/// One value of a scan and the ladder measured with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanPoint {
    /// The setting's value, in bytes.
    pub value: u64,
    /// The ladder run with it.
    pub result: LadderResult,
}

/// Everything a scan measured: what `bench --scan --json` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanResult {
    /// The format, the pipespeed that measured and the machine.
    #[serde(flatten)]
    pub header: Header,
    /// The setting varied.
    pub param: ScanParam,
    /// One per value, in the order given.
    pub points: Vec<ScanPoint>,
}

/// The schema name of [`ScanResult`].
pub const SCHEMA: &str = "pipespeed.scan/1";

impl ScanResult {
    /// A result with the points measured.
    pub fn new(system: SystemFacts, param: ScanParam, points: Vec<ScanPoint>) -> ScanResult {
        ScanResult {
            header: Header::new(SCHEMA, system),
            param,
            points,
        }
    }

    /// The rungs measured, in ladder order.
    pub fn rungs(&self) -> Vec<Rung> {
        let mut rungs: Vec<Rung> = Vec::new();
        for rung in self
            .points
            .iter()
            .flat_map(|p| p.result.rungs.iter().map(|r| r.name))
        {
            if !rungs.contains(&rung) {
                rungs.push(rung);
            }
        }
        rungs.sort_by_key(|r| Rung::ALL.iter().position(|a| a == r));
        rungs
    }

    /// The median GiB/s of `rung` at every point (`None` where it has none).
    pub fn medians(&self, rung: Rung) -> Vec<Option<f64>> {
        self.points
            .iter()
            .map(|p| {
                p.result
                    .rungs
                    .iter()
                    .find(|r| r.name == rung)
                    .and_then(|r| r.median_gib_s)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_setting_and_its_sizes() {
        let scan: Scan = "buf-size=64K,256K,1M"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(scan.param, ScanParam::BufSize);
        assert_eq!(scan.values, vec![64 << 10, 256 << 10, 1 << 20]);
        let scan: Scan = "pipe-size=4096,65536"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(scan.param, ScanParam::PipeSize);
    }

    #[test]
    fn refuses_what_it_cannot_scan() {
        let err = |t: &str| t.parse::<Scan>().err().unwrap_or_default();
        assert!(err("buf-size").contains("SETTING=VALUES"));
        assert!(err("runs=1,2").contains("cannot scan 'runs'"));
        assert!(err("buf-size=64K").contains("at least two values"));
        assert!(err("buf-size=64K,lots").contains("lots"));
        assert!(err("pipe-size=0,64K").contains("0 bytes"));
    }

    #[test]
    fn pipe_size_affects_only_write_read() {
        let affected: Vec<Rung> = Rung::ALL
            .into_iter()
            .filter(|r| ScanParam::PipeSize.affects(*r))
            .collect();
        assert_eq!(affected, vec![Rung::WriteRead]);
        assert!(!ScanParam::BufSize.affects(Rung::Tuned));
        assert!(ScanParam::BufSize.affects(Rung::Memcpy));
    }
}
