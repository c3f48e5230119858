//! The kernel's pipe_bench in its own words: its output parsed into
//! cells, and a cell written back as pipe_bench writes it.
//!
//! pipe_bench (`tools/testing/selftests/pipe/pipe_bench.c`, upstream
//! since Linux 7.2) runs N writer and M reader threads on one pipe once
//! per cell and prints a block per cell; in its sweep (no `-w`/`-r`) a
//! `---` line comes before every block:
//!
//! ```text
//! ---
//! config: writers=1 readers=1 msgsize=65536 duration=3 pipe_size=1048576 memory_pressure=no
//! writes: total=89186 rate=29729/s
//! throughput_MBps: 1858.04
//! lat_avg_ns: 33607
//! lat_p50_ns_upper: 32767
//! lat_p99_ns_upper: 262143
//! lat_max_ns: 14885162
//! ```
//!
//! `rate` and `throughput_MBps` are over the nominal duration
//! (`throughput_MBps` in MiB/s); the percentiles are the inclusive upper
//! bounds (`2^(b+1) - 1` ns) of the log2 bucket `b` where the running
//! count of writes first reaches 50% (99%) of them ([`Log2Histogram`]).
//!
//! `pipespeed contend --pipe-bench FILE` writes the same block with the
//! medians of its runs and, after `lat_max_ns`, lines of its own in the
//! same `key: value` form ([`Exact`]): the number of runs and the exact
//! percentiles. [`parse`] reads both, by the same code. It also passes
//! over what pipe_bench writes to stderr (`pid=N`, `F_SETPIPE_SZ
//! (continuing): ...`), so a log captured with `2>&1` reads too, and
//! over blank lines and `#` comments; anything else is an error naming
//! the line.

use std::fmt;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

mod convert;
pub use convert::{LOG_FORMAT, PipeBenchFormat, log_of, result_of, system_of};

/// The number of log2 buckets pipe_bench keeps (`HIST_BUCKETS`): bucket
/// `b` holds latencies of `2^b` to `2^(b+1) - 1` ns, the last one
/// everything longer.
pub const LOG2_BUCKETS: usize = 32;

/// One block: one cell of writers and readers, as pipe_bench printed it.
#[derive(Debug, Clone, PartialEq)]
pub struct PipeBenchCell {
    /// Writer threads (`config: writers=`).
    pub writers: usize,
    /// Reader threads (`readers=`).
    pub readers: usize,
    /// Bytes per `write(2)` (`msgsize=`).
    pub msg_size: u64,
    /// Nominal seconds the writers wrote (`duration=`).
    pub duration_s: u64,
    /// Pipe size asked for, in bytes (`pipe_size=`; pipe_bench prints
    /// what it asked, even when `F_SETPIPE_SZ` failed).
    pub pipe_size: u64,
    /// Whether stress-ng ran beside it (`memory_pressure=yes`).
    pub memory_pressure: bool,
    /// Writes that returned data, all writers (`writes: total=`).
    pub writes_total: u64,
    /// Writes per second over the nominal duration (`rate=N/s`).
    pub writes_per_s: u64,
    /// MiB per second over the nominal duration (`throughput_MBps`).
    pub throughput_mib_s: f64,
    /// Mean write latency, ns (`lat_avg_ns`).
    pub lat_avg_ns: u64,
    /// Upper bound of the median's log2 bucket, ns (`lat_p50_ns_upper`).
    pub lat_p50_ns_upper: u64,
    /// Upper bound of the 99th percentile's log2 bucket, ns
    /// (`lat_p99_ns_upper`).
    pub lat_p99_ns_upper: u64,
    /// Longest write, ns (`lat_max_ns`).
    pub lat_max_ns: u64,
    /// pipespeed's own lines (`None` in pipe_bench's output).
    pub exact: Option<Exact>,
    /// What pipe_bench wrote to stderr about this cell, when captured
    /// with its stdout (`F_SETPIPE_SZ (continuing): Operation not
    /// permitted`: the pipe kept its size).
    pub notes: Vec<String>,
}

/// The lines pipespeed adds after `lat_max_ns`: the figures above them
/// are medians of `runs` runs, and these are its exact percentiles
/// (medians over the runs too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exact {
    /// Measured runs the block's figures are the medians of (`runs:`).
    pub runs: u64,
    /// Median write latency, ns, to 3 significant digits
    /// (`lat_p50_ns_exact`).
    pub lat_p50_ns: u64,
    /// 99th percentile write latency, ns (`lat_p99_ns_exact`).
    pub lat_p99_ns: u64,
}

/// A whole log: its cells in the order printed.
#[derive(Debug, Clone, PartialEq)]
pub struct PipeBenchLog {
    /// One per block.
    pub cells: Vec<PipeBenchCell>,
    /// Whether every block came after a `---` line, as pipe_bench's
    /// sweep prints them (a single `-w`/`-r` cell has none).
    pub separated: bool,
}

/// Why a text is not pipe_bench output: the line (from 1) and the cause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {cause}")]
pub struct ParseError {
    /// The line, counted from 1.
    pub line: usize,
    /// What is wrong with it.
    pub cause: String,
}

/// The keys of a block, in pipe_bench's order after `config:`.
const KEYS: [&str; 6] = [
    "writes",
    "throughput_MBps",
    "lat_avg_ns",
    "lat_p50_ns_upper",
    "lat_p99_ns_upper",
    "lat_max_ns",
];

/// pipespeed's keys after them, in this order.
const EXACT_KEYS: [&str; 3] = ["runs", "lat_p50_ns_exact", "lat_p99_ns_exact"];

/// The key/value pairs of the `config:` line, in pipe_bench's order.
const CONFIG_KEYS: [&str; 6] = [
    "writers",
    "readers",
    "msgsize",
    "duration",
    "pipe_size",
    "memory_pressure",
];

/// What pipe_bench writes to stderr before a cell's block (perror).
const SETPIPE_NOTE: &str = "F_SETPIPE_SZ (continuing): ";

/// Whether `text` looks like pipe_bench output (its first line that is
/// not blank or a comment is one pipe_bench prints first), before
/// [`parse`] says whether it is.
pub fn looks_like(text: &str) -> bool {
    let first = text
        .lines()
        .map(str::trim_end)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    first.is_some_and(|l| {
        l == "---"
            || l.starts_with("config: ")
            || l.starts_with("pid=")
            || l.starts_with(SETPIPE_NOTE)
    })
}

/// Parses pipe_bench's output (or pipespeed's in its format): every
/// block whole, in pipe_bench's order, or the first line that is not.
/// A text without a block is an error too.
pub fn parse(text: &str) -> Result<PipeBenchLog, ParseError> {
    let mut cells = Vec::new();
    let mut separated = true;
    let mut after_separator = false;
    let mut notes = Vec::new();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).peekable();
    let mut last = 0;
    while let Some((n, line)) = lines.next() {
        last = n;
        let config_line = n;
        let err = |cause: String| ParseError { line: n, cause };
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line == "---" {
            if after_separator {
                return Err(err("two \"---\" lines without a block between".into()));
            }
            after_separator = true;
            continue;
        }
        if let Some(pid) = line.strip_prefix("pid=") {
            number(pid, "pid").map_err(err)?;
            continue;
        }
        if line.starts_with(SETPIPE_NOTE) {
            notes.push(line.to_string());
            continue;
        }
        let Some(config) = line.strip_prefix("config: ") else {
            return Err(err(format!(
                "expected a block's \"config: writers=...\" line, found {:?}",
                shorten(line)
            )));
        };
        separated &= after_separator;
        after_separator = false;
        let mut cell = parse_config(config).map_err(err)?;
        cell.notes = std::mem::take(&mut notes);
        for key in KEYS {
            let Some((n, line)) = lines.next() else {
                return Err(ParseError {
                    line: last + 1,
                    cause: format!("the block of line {config_line} ends before its {key:?} line"),
                });
            };
            last = n;
            let value = value_of(line, key).map_err(|cause| ParseError { line: n, cause })?;
            let err = |cause: String| ParseError { line: n, cause };
            match key {
                "writes" => {
                    let (total, rate) = parse_writes(value).map_err(err)?;
                    cell.writes_total = total;
                    cell.writes_per_s = rate;
                }
                "throughput_MBps" => cell.throughput_mib_s = decimal(value, key).map_err(err)?,
                "lat_avg_ns" => cell.lat_avg_ns = number(value, key).map_err(err)?,
                "lat_p50_ns_upper" => cell.lat_p50_ns_upper = number(value, key).map_err(err)?,
                "lat_p99_ns_upper" => cell.lat_p99_ns_upper = number(value, key).map_err(err)?,
                _ => cell.lat_max_ns = number(value, key).map_err(err)?,
            }
        }
        // pipespeed's lines: all three, in order, or none.
        if lines
            .peek()
            .is_some_and(|(_, l)| l.starts_with(&format!("{}: ", EXACT_KEYS[0])))
        {
            let mut values = [0u64; 3];
            let runs_line = last + 1;
            for (key, value) in EXACT_KEYS.iter().zip(&mut values) {
                let Some((n, line)) = lines.next() else {
                    return Err(ParseError {
                        line: last + 1,
                        cause: format!(
                            "the block of line {config_line} ends before its {key:?} line"
                        ),
                    });
                };
                last = n;
                let err = |cause: String| ParseError { line: n, cause };
                *value = number(value_of(line, key).map_err(err)?, key).map_err(err)?;
            }
            if values[0] == 0 {
                return Err(ParseError {
                    line: runs_line,
                    cause: "runs: must be at least 1".into(),
                });
            }
            cell.exact = Some(Exact {
                runs: values[0],
                lat_p50_ns: values[1],
                lat_p99_ns: values[2],
            });
        }
        cells.push(cell);
    }
    if cells.is_empty() {
        return Err(ParseError {
            line: last.max(1),
            cause: "no pipe_bench block (one starts with \"config: writers=\")".into(),
        });
    }
    if after_separator {
        return Err(ParseError {
            line: last,
            cause: "a \"---\" line with no block after it (pipe_bench stopped?)".into(),
        });
    }
    Ok(PipeBenchLog { cells, separated })
}

/// The cell of a `config:` line (the rest of the block zero).
fn parse_config(config: &str) -> Result<PipeBenchCell, String> {
    let mut words = config.split(' ');
    let mut values = [""; 6];
    for (key, value) in CONFIG_KEYS.iter().zip(&mut values) {
        let word = words
            .next()
            .ok_or_else(|| format!("config: ends before {key}="))?;
        *value = word
            .strip_prefix(key)
            .and_then(|w| w.strip_prefix('='))
            .ok_or_else(|| format!("config: expected {key}=..., found {:?}", shorten(word)))?;
    }
    if let Some(extra) = words.next() {
        return Err(format!(
            "config: unexpected {:?} after memory_pressure=",
            shorten(extra)
        ));
    }
    let ends = |v: &str, key: &str| -> Result<usize, String> {
        let n = number(v, key)?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("{key}={v}: must be at least 1"))
    };
    let memory_pressure = match values[5] {
        "yes" => true,
        "no" => false,
        other => {
            return Err(format!(
                "memory_pressure={}: must be yes or no",
                shorten(other)
            ));
        }
    };
    Ok(PipeBenchCell {
        writers: ends(values[0], "writers")?,
        readers: ends(values[1], "readers")?,
        msg_size: number(values[2], "msgsize")?,
        duration_s: number(values[3], "duration")?,
        pipe_size: number(values[4], "pipe_size")?,
        memory_pressure,
        writes_total: 0,
        writes_per_s: 0,
        throughput_mib_s: 0.0,
        lat_avg_ns: 0,
        lat_p50_ns_upper: 0,
        lat_p99_ns_upper: 0,
        lat_max_ns: 0,
        exact: None,
        notes: Vec::new(),
    })
}

/// The value of a `key: value` line with this key.
fn value_of<'a>(line: &'a str, key: &str) -> Result<&'a str, String> {
    line.strip_prefix(key)
        .and_then(|rest| rest.strip_prefix(": "))
        .ok_or_else(|| format!("expected \"{key}: ...\", found {:?}", shorten(line)))
}

/// `total=N rate=N/s`.
fn parse_writes(value: &str) -> Result<(u64, u64), String> {
    let bad = || {
        format!(
            "writes: expected \"total=N rate=N/s\", found {:?}",
            shorten(value)
        )
    };
    let (total, rate) = value.split_once(' ').ok_or_else(bad)?;
    let total = total.strip_prefix("total=").ok_or_else(bad)?;
    let rate = (rate
        .strip_prefix("rate=")
        .and_then(|r| r.strip_suffix("/s")))
    .ok_or_else(bad)?;
    Ok((number(total, "total")?, number(rate, "rate")?))
}

/// A decimal integer, digits only, that fits in 64 bits.
fn number(v: &str, key: &str) -> Result<u64, String> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{key}: {:?} is not a whole number", shorten(v)));
    }
    v.parse()
        .map_err(|_| format!("{key}: {v} is larger than 2^64 - 1"))
}

/// A decimal number as `%.2f` prints one (digits, then `.` and digits).
fn decimal(v: &str, key: &str) -> Result<f64, String> {
    let (whole, frac) = v.split_once('.').unwrap_or((v, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(frac) {
        return Err(format!("{key}: {:?} is not a number", shorten(v)));
    }
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("{key}: {:?} is not a finite number", shorten(v)))
}

/// `text` cut to 60 characters for a message, control characters
/// escaped (a log is anyone's text).
fn shorten(text: &str) -> String {
    let mut out: String = text.chars().take(60).collect();
    if out.len() < text.len() {
        out.push_str("...");
    }
    crate::quote::escape_controls(&out).into_owned()
}

impl fmt::Display for PipeBenchCell {
    /// The block as pipe_bench prints it (`print_summary`), then
    /// pipespeed's lines if any; no `---` before it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "config: writers={} readers={} msgsize={} duration={} pipe_size={} memory_pressure={}",
            self.writers,
            self.readers,
            self.msg_size,
            self.duration_s,
            self.pipe_size,
            if self.memory_pressure { "yes" } else { "no" }
        )?;
        writeln!(
            f,
            "writes: total={} rate={}/s",
            self.writes_total, self.writes_per_s
        )?;
        writeln!(f, "throughput_MBps: {:.2}", self.throughput_mib_s)?;
        writeln!(f, "lat_avg_ns: {}", self.lat_avg_ns)?;
        writeln!(f, "lat_p50_ns_upper: {}", self.lat_p50_ns_upper)?;
        writeln!(f, "lat_p99_ns_upper: {}", self.lat_p99_ns_upper)?;
        writeln!(f, "lat_max_ns: {}", self.lat_max_ns)?;
        if let Some(e) = &self.exact {
            writeln!(f, "runs: {}", e.runs)?;
            writeln!(f, "lat_p50_ns_exact: {}", e.lat_p50_ns)?;
            writeln!(f, "lat_p99_ns_exact: {}", e.lat_p99_ns)?;
        }
        Ok(())
    }
}

impl fmt::Display for PipeBenchLog {
    /// The blocks, each after a `---` line if [`separated`](Self::separated)
    /// (pipe_bench's stdout; its stderr lines are not written).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for cell in &self.cells {
            if self.separated {
                writeln!(f, "---")?;
            }
            write!(f, "{cell}")?;
        }
        Ok(())
    }
}

/// Write latencies counted in pipe_bench's log2 buckets, and its
/// percentiles of them (`log2_bucket`, `bucket_at`, `compute_p50_p99`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Log2Histogram {
    /// Writes per bucket: bucket `b` holds `2^b ..= 2^(b+1) - 1` ns
    /// (bucket 0 also 0 ns; the last one everything longer).
    pub counts: [u64; LOG2_BUCKETS],
}

impl Log2Histogram {
    /// pipe_bench's bucket of `ns`: `floor(log2(ns))`, 0 for 0, at most
    /// the last.
    pub fn bucket(ns: u64) -> usize {
        (ns.checked_ilog2().unwrap_or(0) as usize).min(LOG2_BUCKETS - 1)
    }

    /// The inclusive upper bound of bucket `b`, in ns: `2^(b+1) - 1`.
    pub fn upper(b: usize) -> u64 {
        (1u64 << (b.min(LOG2_BUCKETS - 1) + 1)) - 1
    }

    /// Counts `count` writes of `ns` nanoseconds (saturating).
    pub fn record_n(&mut self, ns: u64, count: u64) {
        let slot = &mut self.counts[Self::bucket(ns)];
        *slot = slot.saturating_add(count);
    }

    /// Writes counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &c| a.saturating_add(c))
    }

    /// pipe_bench's percentile `percent` (50 or 99): the upper bound of
    /// the bucket where the running count first reaches
    /// `total * percent / 100` (at least 1); 0 without a write.
    pub fn percentile_upper(&self, percent: u64) -> u64 {
        let total = self.total();
        if total == 0 {
            return 0;
        }
        // pipe_bench multiplies in 64 bits first; u128 keeps the same
        // figure for any count that did not overflow there.
        let target = ((u128::from(total) * u128::from(percent.min(100)) / 100) as u64).max(1);
        let mut cum = 0u64;
        for (b, &c) in self.counts.iter().enumerate() {
            cum = cum.saturating_add(c);
            if cum >= target {
                return Self::upper(b);
            }
        }
        0
    }
}

/// pipe_bench's two percentiles of one run's writes: upper bounds of
/// log2 buckets, in ns ([`Log2Histogram::percentile_upper`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Log2Percentiles {
    /// `lat_p50_ns_upper`.
    pub p50_upper: u64,
    /// `lat_p99_ns_upper`.
    pub p99_upper: u64,
}

impl Log2Histogram {
    /// The writes of an HDR histogram (pipespeed's) in pipe_bench's
    /// buckets. Exact: an HDR bucket spans `2^k` values aligned to
    /// `2^k`, so it never straddles a power of two.
    pub fn of_hdr(h: &Histogram<u64>) -> Log2Histogram {
        let mut out = Log2Histogram::default();
        for v in h.iter_recorded() {
            out.record_n(
                h.lowest_equivalent(v.value_iterated_to()),
                v.count_at_value(),
            );
        }
        out
    }

    /// pipe_bench's p50 and p99.
    pub fn percentiles(&self) -> Log2Percentiles {
        Log2Percentiles {
            p50_upper: self.percentile_upper(50),
            p99_upper: self.percentile_upper(99),
        }
    }
}

#[cfg(test)]
mod tests;
