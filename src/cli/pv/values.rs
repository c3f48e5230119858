//! The values pv's options take, read by pv 1.12's rules, and why one is
//! refused: in pv 1.12's words (as `pv`) and in ours (as `pipespeed pv`).

use std::time::Duration;

use crate::pv::display::{MAX_SECONDS, MIN_INTERVAL};
use crate::pv::meter::MAX_COLUMNS;

/// Why a value is refused: pv 1.12's words for the cause (said `pv: -s:
/// x: numeric value not understood` when called `pv`), and ours, which
/// say how to fix it (as `pipespeed pv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    /// The cause, in pv 1.12's words where pv refuses the value too.
    pub pv: String,
    /// The whole reason, in pipespeed's words.
    pub ours: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.ours)
    }
}

impl std::error::Error for Refused {}

pub(super) fn refused(pv: &str, ours: String) -> Refused {
    Refused {
        pv: pv.into(),
        ours,
    }
}

/// pv 1.12's words for a size (`-s`, `-L`, `-B`, `-Z`, `-J`) it cannot read.
pub(super) const PV_SIZE: &str = "numeric value not understood";
/// pv 1.12's words for a number of seconds (`-i`, `-D`) it cannot read.
pub(super) const PV_DECIMAL: &str = "numeric argument expected";
/// pv 1.12's words for a whole number (`-m`, `-w`, `-H`, `-A`, `-R`, `-Q`).
pub(super) const PV_INTEGER: &str = "integer argument expected";
/// pv 1.12's words for a `-d` it cannot read.
pub(crate) const PV_WATCH: &str = "process ID or pid:fd pair expected";
/// pv 1.12's words for process 0 given to `-d`.
pub(super) const PV_PID: &str = "invalid process ID";

/// The length of the run of ASCII digits `s` starts with.
pub(super) fn digits(s: &str) -> usize {
    s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len())
}

/// pv 1.12's sizes (`-s`, `-L`, `-B`, `-Z`, `-J`), by its rule
/// (`pv_getnum_check` and `pv_getnum_size` in its src/pv/number.c), not
/// by pipespeed's: spaces or tabs, digits, an optional fraction after
/// `.` or `,` (its first four digits count), then optionally spaces or
/// tabs and one letter `K`, `M`, `G` or `T` in either case, a power of
/// `unit` (1024; 1000 after `-k`). `1.5K` is 1536; `1KB`, `1KiB`, `1e3`
/// are refused, as pv 1.12 refuses them ("numeric value not understood").
/// At most [`MAX_SIZE`] (pv 1.12 wraps a larger one silently).
pub(crate) fn size_in(text: &str, unit: u64) -> Result<u64, Refused> {
    let not_understood = || {
        refused(
            PV_SIZE,
            format!(
                "'{text}' is not a size as pv 1.12 takes it: a number, a fraction allowed \
                 (1.5K), with an optional K, M, G or T (powers of 1024, of 1000 after -k; no KB \
                 or KiB)"
            ),
        )
    };
    let too_large = || {
        refused(
            &format!("too large (at most {MAX_SIZE})"),
            format!("'{text}' is too large (at most {MAX_SIZE})"),
        )
    };
    let rest = text.trim_start_matches([' ', '\t']);
    let whole_end = digits(rest);
    if whole_end == 0 {
        return Err(not_understood());
    }
    let (whole, rest) = rest.split_at(whole_end);
    let (fraction, rest) = match rest.strip_prefix(['.', ',']) {
        Some(after) => after.split_at(digits(after)),
        None => ("", rest),
    };
    let power = match rest.trim_start_matches([' ', '\t']) {
        _ if rest.is_empty() => 0,
        "k" | "K" => 1,
        "m" | "M" => 2,
        "g" | "G" => 3,
        "t" | "T" => 4,
        _ => return Err(not_understood()),
    };
    let multiplier = unit.pow(power);
    let whole: u64 = whole.parse().map_err(|_| too_large())?;
    // pv counts four digits of the fraction and drops the rest.
    let fraction = &fraction[..fraction.len().min(4)];
    let divisor = 10u64.pow(fraction.len() as u32);
    let fraction: u64 = fraction.parse().unwrap_or(0);
    let scaled = |n: u64| n.checked_mul(multiplier).ok_or_else(too_large);
    scaled(whole)?
        .checked_add(scaled(fraction)? / divisor)
        .ok_or_else(too_large)
}

/// The largest size any option takes, 2^64 - 1: every use of a size is
/// checked arithmetic (pv 1.12 takes larger ones and wraps them).
pub(super) const MAX_SIZE: u64 = u64::MAX;

/// A size in powers of 1024; [`super::settle`] reads it again in powers of 1000
/// when `-k` came before it.
pub(super) fn size(text: &str) -> Result<u64, Refused> {
    size_in(text, 1024)
}

/// pv 1.12's whole numbers: spaces or tabs, then digits and nothing else
/// (`+5`, `5 `, `0x10` refused, as pv refuses them); `None` for a number
/// past `u64` (which the caller clamps or refuses).
pub(super) fn integer(text: &str) -> Result<Option<u64>, Refused> {
    let rest = text.trim_start_matches([' ', '\t']);
    if rest.is_empty() || digits(rest) != rest.len() {
        return Err(refused(
            PV_INTEGER,
            format!("'{text}' is not a whole number"),
        ));
    }
    Ok(rest.parse().ok())
}

/// pv's `-D`, `-i`: a number of seconds from 0 to [`MAX_SECONDS`] as pv
/// 1.12 writes it: spaces or tabs, digits, and a fraction after `.` or `,`
/// (no exponent, sign, `inf` or `nan`, which pv refuses too).
pub(super) fn seconds(text: &str) -> Result<Duration, Refused> {
    let bad = || {
        refused(
            PV_DECIMAL,
            format!("'{text}' is not a number of seconds from 0 to {MAX_SECONDS}"),
        )
    };
    let rest = text.trim_start_matches([' ', '\t']);
    let whole = digits(rest);
    let fraction = match rest[whole..].strip_prefix(['.', ',']) {
        Some(after) if digits(after) == after.len() => after,
        Some(_) => return Err(bad()),
        None if whole == rest.len() => "",
        None => return Err(bad()),
    };
    if whole == 0 {
        return Err(bad());
    }
    let value: f64 = format!("{}.{fraction}0", &rest[..whole])
        .parse()
        .map_err(|_| bad())?;
    if value > MAX_SECONDS {
        return Err(refused(
            &format!("too large (at most {MAX_SECONDS})"),
            format!("'{text}' is not a number of seconds from 0 to {MAX_SECONDS}"),
        ));
    }
    Duration::try_from_secs_f64(value).map_err(|_| bad())
}

/// pv's `-m`: a whole number of seconds, 0 to [`MAX_SECONDS`].
pub(super) fn window(text: &str) -> Result<Duration, Refused> {
    match integer(text)? {
        Some(n) if n as f64 <= MAX_SECONDS => Ok(Duration::from_secs(n)),
        _ => Err(refused(
            &format!("too large (at most {MAX_SECONDS})"),
            format!("'{text}' is not a whole number of seconds from 0 to {MAX_SECONDS}"),
        )),
    }
}

/// pv's `-i`: [`seconds`], and below [`MIN_INTERVAL`] that interval, as
/// pv 1.12 does (a display drawn without pause would flood stderr).
pub(super) fn interval(text: &str) -> Result<Duration, Refused> {
    seconds(text).map(|d| d.max(MIN_INTERVAL))
}

/// `-w`, `-H`: a whole number of columns (rows); 0 is the terminal's, as
/// in pv, and more than [`MAX_COLUMNS`] is [`MAX_COLUMNS`].
pub(super) fn columns(text: &str) -> Result<usize, Refused> {
    let n = integer(text).map_err(|r| Refused {
        ours: format!(
            "'{text}' is not a whole number (0 for the terminal's, at most {MAX_COLUMNS} used)"
        ),
        ..r
    })?;
    Ok(n.and_then(|n| usize::try_from(n).ok())
        .unwrap_or(MAX_COLUMNS)
        .min(MAX_COLUMNS))
}
