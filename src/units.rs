//! Sizes as people type them (`256K`, `1M`, `10G`, `10GB`) and as the blog
//! prints them (`256KiB`, `12.7GiB/s`).
//!
//! The one rule of pipespeed's own size options is GNU's (`head -c`,
//! `dd`, `truncate`): `K`, `M`, `G`, `T` and `KiB`, `MiB`, `GiB`, `TiB`
//! are powers of 1024, `KB`, `MB`, `GB`, `TB` powers of 1000; see
//! [`parse_size`]. pv and cat keep their own tools' rules.

use std::fmt;

/// One kibibyte, the unit behind the `K` suffix.
pub const KIB: u64 = 1 << 10;
/// One mebibyte, the unit behind the `M` suffix.
pub const MIB: u64 = 1 << 20;
/// One gibibyte, the unit behind the `G` suffix.
pub const GIB: u64 = 1 << 30;

/// The largest buffer and the largest pipe the command line takes: 1 GiB.
/// The blog's buffers are 256 KiB and pipe-max-size is 1 MiB by default;
/// past a gigabyte a buffer measures the memory, and the kernel refuses
/// pipes past 2 GiB (`round_pipe_size`). Also the bound that keeps every
/// sum and product of buffer sizes far from overflowing.
pub const MAX_BUFFER: u64 = GIB;

/// The most bytes one run may be asked to move (`--bytes`): 1 PiB, about
/// a day (the longest run `--duration` allows) at 12 GiB/s, and small
/// enough that rounding it up to whole messages cannot overflow.
pub const MAX_RUN_BYTES: u64 = 1 << 50;

/// Why a size given on the command line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseSizeError {
    /// Nothing was given.
    #[error("empty size (give a number with an optional K, M, G or T suffix, e.g. 256K)")]
    Empty,
    /// The text does not start with a number.
    #[error("'{0}' is not a size (give a number with an optional K, M, G or T suffix, e.g. 256K)")]
    NotANumber(String),
    /// The number is followed by something that is not a known suffix.
    #[error(
        "unknown size suffix '{suffix}' in '{text}' (use K, M, G or T, or KiB, MiB, GiB or TiB, \
         for 1024^n, e.g. 256K, 1M; KB, MB, GB or TB for 1000^n, e.g. 10GB for 1000^3)"
    )]
    BadSuffix {
        /// The whole text.
        text: String,
        /// The part after the number.
        suffix: String,
    },
    /// The size does not fit in 64 bits.
    #[error("size '{0}' is too large")]
    Overflow(String),
}

/// Parses a byte count as GNU's tools do (`head -c`, `dd`): a decimal
/// number with an optional suffix, its letters in any case:
///
/// | suffix | factor |
/// | --- | --- |
/// | none, `B` | 1 |
/// | `K`, `M`, `G`, `T` | 1024, 1024^2, 1024^3, 1024^4 (the blog's and pv's `K`) |
/// | `KiB`, `MiB`, `GiB`, `TiB` | the same powers of 1024 |
/// | `KB`, `MB`, `GB`, `TB` | 1000, 1000^2, 1000^3, 1000^4 (SI, as GNU) |
///
/// So `256K` and `256KiB` are 262144 bytes, `10GB` 10^10, and what
/// [`Size`] prints (`256KiB`, `1000B`) reads back as the same number.
pub fn parse_size(text: &str) -> Result<u64, ParseSizeError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ParseSizeError::Empty);
    }
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    if digits_end == 0 {
        return Err(ParseSizeError::NotANumber(text.to_string()));
    }
    let number: u64 = trimmed[..digits_end]
        .parse()
        .map_err(|_| ParseSizeError::Overflow(text.to_string()))?;
    let suffix = &trimmed[digits_end..];
    let bad = || ParseSizeError::BadSuffix {
        text: text.to_string(),
        suffix: suffix.to_string(),
    };
    let upper = suffix.to_ascii_uppercase();
    let mut chars = upper.chars();
    let power = match chars.next() {
        None => return Ok(number),
        Some('B') if chars.as_str().is_empty() => return Ok(number),
        Some('K') => 1,
        Some('M') => 2,
        Some('G') => 3,
        Some('T') => 4,
        Some(_) => return Err(bad()),
    };
    let rest = chars.as_str();
    let base: u64 = match rest {
        "" | "IB" => 1024,
        "B" => 1000,
        _ => return Err(bad()),
    };
    number
        .checked_mul(base.pow(power))
        .ok_or_else(|| ParseSizeError::Overflow(text.to_string()))
}

/// A byte count shown the way the blog's programs show it: the largest
/// binary unit that divides it exactly (`256KiB`, `10GiB`, `1000B`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        let units = [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")];
        for (shift, unit) in units {
            if n != 0 && n.is_multiple_of(1 << shift) {
                return write!(f, "{}{unit}", n >> shift);
            }
        }
        write!(f, "{n}B")
    }
}

/// A duration in nanoseconds in the unit that keeps it readable:
/// `812 ns`, `23.46 us`, `2.50 ms`, `3.00 s`.
pub fn readable_ns(ns: f64) -> String {
    match ns {
        n if n < 1e3 => format!("{n:.0} ns"),
        n if n < 1e6 => format!("{:.2} us", n / 1e3),
        n if n < 1e9 => format!("{:.2} ms", n / 1e6),
        n => format!("{:.2} s", n / 1e9),
    }
}

/// A duration in nanoseconds as a table cell: `812ns`, `23.4us`,
/// `2.50ms`, `3.00s` (three digits or so, no space).
pub fn compact_ns(ns: f64) -> String {
    match ns {
        n if n < 1e3 => format!("{n:.0}ns"),
        n if n < 1e6 => format!("{:.1}us", n / 1e3),
        n if n < 1e9 => format!("{:.2}ms", n / 1e6),
        n => format!("{:.2}s", n / 1e9),
    }
}

/// Bytes per second expressed in GiB/s.
pub fn gib_per_s(bytes: u64, seconds: f64) -> f64 {
    if seconds <= 0.0 {
        return 0.0;
    }
    bytes as f64 / seconds / GIB as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_suffixed_sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("256K"), Ok(256 * KIB));
        assert_eq!(parse_size("256k"), Ok(256 * KIB));
        assert_eq!(parse_size("1M"), Ok(MIB));
        assert_eq!(parse_size("10G"), Ok(10 * GIB));
        assert_eq!(parse_size("10GiB"), Ok(10 * GIB));
        assert_eq!(parse_size("2T"), Ok(2 << 40));
        assert_eq!(parse_size("0"), Ok(0));
    }

    /// GNU's rule (`head -c`, `dd`): a bare letter and `iB` are powers
    /// of 1024, `B` after the letter powers of 1000.
    #[test]
    fn kb_is_a_thousand_bytes_and_k_and_kib_are_1024_as_gnu_s() {
        assert_eq!(parse_size("10GB"), Ok(10_000_000_000));
        assert_eq!(parse_size("10gb"), Ok(10_000_000_000));
        assert_eq!(parse_size("1KB"), Ok(1000));
        assert_eq!(parse_size("1kB"), Ok(1000));
        assert_eq!(parse_size("64KB"), Ok(64_000));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("2TB"), Ok(2_000_000_000_000));
        assert_eq!(parse_size("1KiB"), Ok(KIB));
        assert_eq!(parse_size("1K"), Ok(KIB));
        assert_eq!(parse_size("1MiB"), Ok(MIB));
        assert_eq!(parse_size("1000B"), Ok(1000));
        // What Size prints reads back as the same number.
        for n in [1, 1000, 4096, 256 * KIB, 3 * MIB / 2, 10 * GIB, 2 << 40] {
            assert_eq!(parse_size(&Size(n).to_string()), Ok(n));
        }
        assert_eq!(refusal("18446744073709552KB"), "overflow");
    }

    /// Which refusal `text` gets ("ok" for none).
    fn refusal(text: &str) -> &'static str {
        match parse_size(text) {
            Ok(_) => "ok",
            Err(ParseSizeError::Empty) => "empty",
            Err(ParseSizeError::NotANumber(_)) => "not a number",
            Err(ParseSizeError::BadSuffix { .. }) => "bad suffix",
            Err(ParseSizeError::Overflow(_)) => "overflow",
        }
    }

    #[test]
    fn rejects_bad_sizes_with_a_hint() {
        let err = parse_size("12Q").unwrap_err();
        assert!(matches!(err, ParseSizeError::BadSuffix { .. }));
        assert!(err.to_string().contains("'Q'"), "{err}");
        assert!(err.to_string().contains("GB for 1000^3"), "{err}");
        for (text, why) in [
            ("1\u{e9}", "bad suffix"),
            ("1K\u{e9}", "bad suffix"),
            ("1KBB", "bad suffix"),
            ("1KI", "bad suffix"),
            ("1BK", "bad suffix"),
            ("", "empty"),
            ("K", "not a number"),
            ("-1", "not a number"),
            ("99999999999T", "overflow"),
        ] {
            assert_eq!(refusal(text), why, "{text:?}");
        }
    }

    #[test]
    fn displays_like_the_blog() {
        assert_eq!(Size(256 * KIB).to_string(), "256KiB");
        assert_eq!(Size(10 * GIB).to_string(), "10GiB");
        assert_eq!(Size(3 * MIB / 2).to_string(), "1536KiB");
        assert_eq!(Size(1000).to_string(), "1000B");
        assert_eq!(Size(0).to_string(), "0B");
    }

    #[test]
    fn rate_in_gib_per_second() {
        assert_eq!(gib_per_s(2 * GIB, 1.0), 2.0);
        assert_eq!(gib_per_s(GIB, 0.0), 0.0);
    }
}
