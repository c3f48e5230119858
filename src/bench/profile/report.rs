//! Reading `perf report --stdio` text: one line per (process, symbol)
//! with its share and sample count, as `perf::REPORT_ARGS` asks for:
//!
//! ```text
//! # Overhead       Samples  Command    Symbol
//! # ........  ............  .........  ...............
//! #
//!     41.38%           461  ps-writer  [k] _copy_from_iter
//!      2.87%            32  ps-writer  [.] main
//! ```

use std::collections::HashMap;

use super::SymbolShare;

/// One symbol line of a `perf report`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportLine {
    /// Percent of the report's samples, as perf printed it.
    pub percent: f64,
    /// Samples in this symbol.
    pub samples: u64,
    /// The process (`comm`).
    pub comm: String,
    /// The symbol, or a raw address when perf could not name it.
    pub symbol: String,
    /// `[k]`: kernel; `[.]`: user space (others: guest, hypervisor).
    pub kernel: bool,
}

/// The symbol lines of `perf report --stdio --no-children -n --sort
/// comm,sym` output. Comments (`#`), blank lines and anything else that
/// is not a symbol line are skipped.
pub(crate) fn parse_report(text: &str) -> Vec<ReportLine> {
    text.lines().filter_map(parse_line).collect()
}

/// `  41.38%   461  ps-writer  [k] _copy_from_iter`. The comm and the
/// symbol may hold spaces: the `[k]`/`[.]` marker separates them.
fn parse_line(line: &str) -> Option<ReportLine> {
    let line = line.trim();
    if line.starts_with('#') {
        return None;
    }
    let (percent, rest) = line.split_once(char::is_whitespace)?;
    let percent: f64 = percent.strip_suffix('%')?.parse().ok()?;
    let rest = rest.trim_start();
    let (samples, rest) = rest.split_once(char::is_whitespace)?;
    let samples: u64 = samples.parse().ok()?;
    let (at, marker) = find_marker(rest)?;
    let comm = rest[..at].trim();
    let symbol = rest[at + 3..].trim();
    if symbol.is_empty() {
        return None;
    }
    Some(ReportLine {
        percent,
        samples,
        comm: comm.to_string(),
        symbol: symbol.to_string(),
        kernel: marker == 'k',
    })
}

/// Where perf's privilege-level marker (`[k]`, `[.]`, `[g]`, `[u]`,
/// `[H]`) starts, and its letter. It is preceded by a space (or starts the
/// text when the comm is empty) and followed by one.
fn find_marker(text: &str) -> Option<(usize, char)> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(3)).find_map(|i| {
        let letter = bytes[i + 1];
        let is_marker = bytes[i] == b'['
            && b"k.guH".contains(&letter)
            && bytes[i + 2] == b']'
            && bytes[i + 3] == b' '
            && (i == 0 || bytes[i - 1] == b' ');
        is_marker.then_some((i, char::from(letter)))
    })
}

/// The `n` (process, symbol) pairs with the most samples over all
/// `reports` (perf writes one per end), each with its share of the
/// reports' samples together, largest first, and that total.
///
/// `--no-children` charges each sample to one line: their sum is the
/// number of samples.
pub(crate) fn top_symbols(reports: &[Vec<ReportLine>], n: usize) -> (u64, Vec<SymbolShare>) {
    let mut samples: HashMap<(&str, &str, bool), u64> = HashMap::new();
    for line in reports.iter().flatten() {
        *samples
            .entry((&line.comm, &line.symbol, line.kernel))
            .or_default() += line.samples;
    }
    let total: u64 = samples.values().sum();
    let mut ranked: Vec<_> = samples.into_iter().collect();
    ranked.sort_by(|(a, na), (b, nb)| nb.cmp(na).then(a.cmp(b)));
    let symbols = ranked
        .into_iter()
        .take(n)
        .map(|((comm, symbol, kernel), count)| SymbolShare {
            symbol: symbol.to_string(),
            percent: if total == 0 {
                0.0
            } else {
                count as f64 * 100.0 / total as f64
            },
            kernel,
            comm: comm.to_string(),
        })
        .collect();
    (total, symbols)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::profile::TOP_SYMBOLS;

    #[test]
    fn symbol_lines_are_read_and_the_rest_skipped() {
        let text = "\
# Samples: 1K of event 'cpu-clock'
#
# Overhead       Samples  Command    Symbol
#
    41.38%           461  ps-writer  [k] _copy_from_iter
     0.09%             1  ps writer  [.] <alloc::vec::Vec<T> as core::ops::Drop>::drop
     0.09%             1  perf-exec  [k] 0xffffffff8a2b1c4d
                          some call graph line
#
# (Tip: For hierarchical output, try: perf report --hierarchy)
";
        let lines = parse_report(text);
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            ReportLine {
                percent: 41.38,
                samples: 461,
                comm: "ps-writer".into(),
                symbol: "_copy_from_iter".into(),
                kernel: true,
            }
        );
        assert_eq!(lines[1].comm, "ps writer");
        assert_eq!(
            lines[1].symbol,
            "<alloc::vec::Vec<T> as core::ops::Drop>::drop"
        );
        assert!(!lines[1].kernel);
        assert_eq!(lines[2].symbol, "0xffffffff8a2b1c4d");
    }

    #[test]
    fn reports_are_merged_and_shares_are_of_all_their_samples() {
        let line = |samples, comm: &str, symbol: &str| ReportLine {
            percent: 0.0,
            samples,
            comm: comm.into(),
            symbol: symbol.into(),
            kernel: true,
        };
        let writer = vec![line(30, "ps-writer", "a"), line(10, "perf-exec", "x")];
        let reader = vec![line(50, "ps-reader", "b"), line(10, "perf-exec", "x")];
        let (total, top) = top_symbols(&[writer, reader], 2);
        assert_eq!(total, 100);
        let got: Vec<_> = top
            .iter()
            .map(|s| (s.comm.as_str(), s.symbol.as_str(), s.percent))
            .collect();
        assert_eq!(got, [("ps-reader", "b", 50.0), ("ps-writer", "a", 30.0)]);
        assert_eq!(top_symbols(&[], 8), (0, vec![]));
    }

    /// `perf report --stdio --no-children -n --sort comm,sym -g none` of the
    /// two ends of a 256 MiB write-read run, recorded as root on the
    /// project's VM (Linux 6.18, perf 6.1).
    const WRITER_REPORT: &str =
        include_str!("../../../tests/fixtures/perf-report-write-read-writer.txt");
    const READER_REPORT: &str =
        include_str!("../../../tests/fixtures/perf-report-write-read-reader.txt");

    #[test]
    fn a_recorded_perf_report_is_read_line_by_line() {
        let lines = parse_report(WRITER_REPORT);
        assert_eq!(lines.len(), 32);
        assert_eq!(
            lines[0],
            ReportLine {
                percent: 45.35,
                samples: 156,
                comm: "ps-writer".into(),
                symbol: "_copy_from_iter".into(),
                kernel: true,
            }
        );
        // The header says "# Samples: 344": every sample is on one line.
        assert_eq!(lines.iter().map(|l| l.samples).sum::<u64>(), 344);
        for l in &lines {
            let share = l.samples as f64 * 100.0 / 344.0;
            assert!((share - l.percent).abs() < 0.006, "{l:?}");
        }
        let user: Vec<_> = lines
            .iter()
            .filter(|l| !l.kernel)
            .map(|l| l.symbol.as_str())
            .collect();
        assert_eq!(
            user,
            ["_start", "clap_builder::builder::arg::Arg::value_parser"]
        );
        assert!(lines.iter().any(|l| l.symbol == "copy_page_from_iter"));
    }

    #[test]
    fn both_ends_reports_give_the_top_symbols_of_the_run() {
        let reports = [parse_report(WRITER_REPORT), parse_report(READER_REPORT)];
        let (samples, top) = top_symbols(&reports, TOP_SYMBOLS);
        assert_eq!(samples, 344 + 470);
        assert!(top.iter().all(|s| s.kernel), "{top:?}");
        let got: Vec<_> = top
            .iter()
            .map(|s| {
                (
                    s.comm.as_str(),
                    s.symbol.as_str(),
                    format!("{:.2}", s.percent),
                )
            })
            .collect();
        let want = [
            ("ps-reader", "_copy_to_iter", "20.15"),
            ("ps-writer", "_copy_from_iter", "19.16"),
            ("ps-reader", "_raw_spin_unlock_irqrestore", "9.21"),
            ("ps-writer", "_raw_spin_unlock_irqrestore", "8.85"),
            ("ps-reader", "anon_pipe_buf_release", "4.42"),
            ("ps-reader", "anon_pipe_read", "2.95"),
            ("ps-reader", "finish_task_switch.isra.0", "2.95"),
            ("ps-reader", "uncharge_folio", "2.95"),
        ];
        let want = want.map(|(c, s, p)| (c, s, p.to_string()));
        assert_eq!(got, want);
    }
}
