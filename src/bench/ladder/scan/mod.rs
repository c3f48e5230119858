//! `bench --scan`: the ladder once per value of one setting, to find the
//! best value for this machine.

pub(crate) mod report;
#[cfg(feature = "cli")]
pub use report::{scan_result_svg, scan_svg};

use crate::bench::core::harness::Header;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::placement::placements;
use super::{LadderConfig, LadderResult, Rung};
use crate::sys::SystemFacts;
use crate::units::{MAX_BUFFER, Size, parse_size};

/// The setting a scan varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScanParam {
    /// `--buf-size`: every rung's buffer but tuned's.
    BufSize,
    /// `--pipe-size`: the pipe of `write-read` (the vmsplice rungs size
    /// their pipe to half the buffer, tuned to pipe-max-size).
    PipeSize,
    /// `--placement`: where writer and reader run. Values are the indices
    /// of [`PLACEMENTS`] plus one.
    Placement,
}

/// The placements a scan of `placement` takes, in the order of their
/// values (1, 2, 3).
pub const PLACEMENTS: [&str; 3] = ["same-cpu", "different-cpu", "unpinned"];

impl ScanParam {
    /// The option's name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ScanParam::BufSize => "buf-size",
            ScanParam::PipeSize => "pipe-size",
            ScanParam::Placement => "placement",
        }
    }

    /// Whether the values are sizes in bytes (else placements).
    pub fn is_size(self) -> bool {
        self != ScanParam::Placement
    }

    /// A value as the table and the chart name it: `64 KiB`, `same-cpu`.
    pub fn label(self, value: u64) -> String {
        match self {
            ScanParam::Placement => (value as usize)
                .checked_sub(1)
                .and_then(|i| PLACEMENTS.get(i))
                .map_or_else(|| value.to_string(), |p| p.to_string()),
            _ => Size(value).to_string(),
        }
    }

    /// Whether `rung`'s measurement depends on this setting.
    pub fn affects(self, rung: Rung) -> bool {
        match self {
            ScanParam::BufSize => !matches!(rung, Rung::Tuned | Rung::SpliceLimit),
            ScanParam::PipeSize => rung == Rung::WriteRead,
            ScanParam::Placement => !matches!(rung, Rung::Memcpy | Rung::SpliceLimit),
        }
    }

    /// `config` with this setting at `value`, on the machine of `facts`;
    /// `None` for a placement this machine cannot have (different CPUs
    /// with one CPU).
    pub fn apply(
        self,
        config: &LadderConfig,
        value: u64,
        facts: &SystemFacts,
    ) -> Option<LadderConfig> {
        let mut config = config.clone();
        // Values come from `Scan::from_str`, which keeps them at most
        // MAX_BUFFER (1 GiB).
        let value = usize::try_from(value).unwrap_or(usize::MAX);
        match self {
            ScanParam::BufSize => config.buf_size = value,
            ScanParam::PipeSize => config.pipe_size = Some(value),
            ScanParam::Placement => {
                let kind = PLACEMENTS.get(value.checked_sub(1)?)?;
                config.placement = placements(facts).into_iter().find(|(k, _)| k == kind)?.1?;
            }
        }
        Some(config)
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
            "placement" => ScanParam::Placement,
            _ => {
                return Err(format!(
                    "cannot scan '{name}': the settings are buf-size, pipe-size and placement"
                ));
            }
        };
        let values = list
            .split(',')
            .map(|v| match param {
                ScanParam::Placement => match PLACEMENTS.iter().position(|p| *p == v) {
                    Some(i) => Ok(i as u64 + 1),
                    None => Err(format!(
                        "placement: '{v}' is not a placement ({})",
                        PLACEMENTS.join(", ")
                    )),
                },
                _ => size_value(name, v),
            })
            .collect::<Result<Vec<u64>, String>>()?;
        if values.len() < 2 {
            return Err(format!("{name}: a scan needs at least two values"));
        }
        Ok(Scan { param, values })
    }
}

/// A size to scan, at most MAX_BUFFER like --buf-size and --pipe-size.
fn size_value(name: &str, v: &str) -> Result<u64, String> {
    let n = parse_size(v).map_err(|e| e.to_string())?;
    if n == 0 {
        return Err(format!("{name}: '{v}' is not a size to measure (0 bytes)"));
    }
    if n > MAX_BUFFER {
        return Err(format!(
            "{name}: '{v}' is too large: at most {} ({MAX_BUFFER} bytes)",
            Size(MAX_BUFFER)
        ));
    }
    Ok(n)
}

/// One value of a scan and the ladder measured with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanPoint {
    /// The setting's value: bytes, or a placement's number (see `label`).
    pub value: u64,
    /// The value as the table names it (`64 KiB`, `same-cpu`).
    #[serde(default)]
    pub label: String,
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
                    .and_then(|r| r.median())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Scan {
        text.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn parses_a_setting_and_its_sizes() {
        let scan_of_sizes = scan("buf-size=64K,256K,1M");
        assert_eq!(scan_of_sizes.param, ScanParam::BufSize);
        assert_eq!(scan_of_sizes.values, vec![64 << 10, 256 << 10, 1 << 20]);
        assert_eq!(scan("pipe-size=4096,65536").param, ScanParam::PipeSize);
    }

    #[test]
    fn placements_are_scanned_by_name() {
        let scan = scan("placement=unpinned,same-cpu");
        assert_eq!(scan.param, ScanParam::Placement);
        assert_eq!(scan.values, vec![3, 1]);
        assert_eq!(ScanParam::Placement.label(1), "same-cpu");
        assert!(!ScanParam::Placement.affects(Rung::Memcpy));
        assert!(ScanParam::Placement.affects(Rung::WriteRead));
        let err = "placement=same-cpu,far"
            .parse::<Scan>()
            .err()
            .unwrap_or_default();
        assert!(err.contains("'far' is not a placement (same-cpu, different-cpu, unpinned)"));
    }

    #[test]
    fn refuses_what_it_cannot_scan() {
        let err = |t: &str| t.parse::<Scan>().err().unwrap_or_default();
        assert!(err("buf-size").contains("SETTING=VALUES"));
        assert!(err("runs=1,2").contains("cannot scan 'runs'"));
        assert!(err("buf-size=64K").contains("at least two values"));
        assert!(err("buf-size=64K,lots").contains("lots"));
        assert!(err("pipe-size=0,64K").contains("0 bytes"));
        assert!(err("buf-size=4K,1025M").contains("at most 1GiB"));
        assert!(err("pipe-size=18446744073709551615,4K").contains("at most 1GiB"));
        assert!(err("pipe-size=18446744073709551616,4K").contains("too large"));
        assert!("buf-size=4K,1G".parse::<Scan>().is_ok());
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
