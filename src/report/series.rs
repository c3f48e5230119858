//! What every kind's table, CSV and notes say about a [`Series`], written
//! once: the spread cell, the noisy paragraph with its diagnosis, the
//! machine's noise in a sentence, a status word, and a series' CSV
//! fields.

use crate::bench::core::{Diagnosis, NoiseSummary, Series, Spread, Status};

/// A series' spread cell: `+-4.2%`, `+-14% noisy`, or `-` with fewer than
/// two runs.
pub fn spread_cell(series: &Series) -> String {
    series.spread.map_or_else(|| "-".into(), |s| s.cell())
}

/// The noisy paragraph of `series` (`None` when it is not noisy): `what`
/// spread over its runs, from its slowest to its fastest as `value`
/// writes them, then the likely causes and what to do.
pub fn noisy_series(what: &str, series: &Series, value: impl Fn(f64) -> String) -> Option<String> {
    let s = series.spread.filter(|s| s.noisy)?;
    let range = format!("from {} to {}", value(series.min?), value(series.max?));
    Some(noisy_paragraph(
        what,
        series.runs.len(),
        &range,
        &s,
        series.diagnosis.as_ref(),
    ))
}

/// The CSV columns of a series' summary, after `prefix` (`gib_s_median`,
/// ...): median, slowest, fastest, the 95% interval's half-width as a
/// share of the mean, fastest over slowest, and whether it is noisy.
pub fn series_csv_header(prefix: &str) -> String {
    [
        "median",
        "min",
        "max",
        "ci95_half_width",
        "max_over_min",
        "noisy",
    ]
    .map(|c| format!("{prefix}_{c}"))
    .join(",")
}

/// The fields of [`series_csv_header`] for `series` (empty where it has
/// no such figure).
pub fn series_csv(series: &Series) -> Vec<String> {
    let num = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v}"));
    vec![
        num(series.median),
        num(series.min),
        num(series.max),
        num(series.spread.map(|s| s.ci95_half_width)),
        num(series.spread.map(|s| s.max_over_min)),
        series.noisy().to_string(),
    ]
}

/// `n` in one line: steal, other load and the load average.
pub fn noise_sentence(n: NoiseSummary) -> String {
    format!(
        "during the runs: CPU steal {:.1}% of a CPU, other processes {:.2} CPUs, load average up to {:.2}",
        n.steal_share * 100.0,
        n.other_share,
        n.max_load_avg_1m
    )
}

/// One noisy row: `what` spread over `runs` runs `range` (`from 1.00 to
/// 2.00 GiB/s`) as `s` says, then the likely causes and what to do.
pub fn noisy_paragraph(
    what: &str,
    runs: usize,
    range: &str,
    s: &Spread,
    diagnosis: Option<&Diagnosis>,
) -> String {
    let mut text = format!(
        "noisy: {what} ({runs} runs {range}, {:.2}x; 95% interval +-{:.0}%).",
        s.max_over_min,
        s.ci95_half_width * 100.0
    );
    if let Some(d) = diagnosis {
        text += &format!(
            "\n  likely: {}.\n  what to do: {}.",
            d.causes.join("; "),
            d.advice
        );
    }
    text
}

/// A status as the JSON and the CSV spell it.
pub fn status_word(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Unavailable => "unavailable",
        Status::Failed => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_noisy_series_says_how_and_a_quiet_one_nothing() {
        let noisy = Series::of(&[1.0, 2.0, 3.0]);
        let text = noisy_series("pipe 4KiB", &noisy, |v| format!("{v:.2} GiB/s"));
        let text = text.unwrap_or_default();
        assert!(
            text.starts_with("noisy: pipe 4KiB (3 runs from 1.00 GiB/s to 3.00 GiB/s, 3.00x"),
            "{text}"
        );
        assert_eq!(
            noisy_series("x", &Series::of(&[5.0, 5.0, 5.0]), |v| v.to_string()),
            None
        );
        assert_eq!(spread_cell(&Series::of(&[1.0])), "-");
        assert!(spread_cell(&noisy).ends_with("noisy"));
    }

    #[test]
    fn the_csv_fields_match_the_header() {
        let header = series_csv_header("gib_s");
        assert!(header.starts_with("gib_s_median,gib_s_min"));
        let fields = series_csv(&Series::of(&[2.0, 4.0]));
        assert_eq!(fields.len(), header.split(',').count());
        assert_eq!(&fields[..3], ["3", "2", "4"]);
        assert_eq!(series_csv(&Series::new())[0], "");
    }
}
