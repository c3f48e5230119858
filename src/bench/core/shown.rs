//! What every kind's table, CSV and notes say about a [`Series`], written
//! once: the spread cell, the noisy paragraph with its diagnosis, the
//! machine's noise in a sentence, a status word, and a series' CSV
//! fields.

use serde::Serialize;

use crate::bench::core::{Diagnosis, NoiseSummary, Series, Spread, Status};
use crate::sys::RunNoise;

/// A series' spread cell: `+-4.2%`, `+-14% noisy`, `-` with fewer than
/// two runs, and with two only whether they are noisy (`2 runs`, `2 runs
/// noisy`): Student's t for two runs is 12.7, an interval that says
/// nothing.
pub(crate) fn spread_cell(series: &Series) -> String {
    match series.spread {
        None => "-".into(),
        Some(s) if series.runs.len() < 3 => match s.noisy {
            true => format!("{} runs noisy", series.runs.len()),
            false => format!("{} runs", series.runs.len()),
        },
        Some(s) => s.cell(),
    }
}

/// The one paragraph on a measurement's noise, for the machine rather
/// than per row (`None` when no row is noisy): which rows are noisy, the
/// likely causes (each once, as the noisiest row's diagnosis words it),
/// what that does to the figures and what to do. Each row's own range
/// and diagnosis are in `--explain` and the exports.
pub(crate) fn noise_paragraph(rows: &[(String, &Series)]) -> Option<String> {
    let mut noisy: Vec<&(String, &Series)> = rows.iter().filter(|(_, s)| s.noisy()).collect();
    if noisy.is_empty() {
        return None;
    }
    let measured = rows.iter().filter(|(_, s)| s.spread.is_some()).count();
    let names: Vec<&str> = noisy.iter().map(|(n, _)| n.as_str()).collect();
    let which = match noisy.len() {
        1 if measured == 1 => format!("the one row ({})", names[0]),
        1 => format!("1 of {measured} rows ({})", names[0]),
        2 if measured == 2 => format!("both rows ({})", names.join(", ")),
        n if n == measured => format!("all {n} rows"),
        n if n <= 4 => format!("{n} of {measured} rows ({})", names.join(", ")),
        n => format!("{n} of {measured} rows"),
    };
    // The noisiest first: its words for a cause are the ones kept.
    let spread = |s: &Series| s.spread.map_or(0.0, |s| s.max_over_min);
    noisy.sort_by(|a, b| spread(b.1).total_cmp(&spread(a.1)));
    let mut causes: Vec<&str> = Vec::new();
    let mut advice: Vec<&str> = Vec::new();
    for (_, series) in &noisy {
        let Some(d) = &series.diagnosis else {
            continue;
        };
        for cause in &d.causes {
            let kind = cause.split(':').next().unwrap_or(cause);
            if !causes.iter().any(|c| c.split(':').next() == Some(kind)) {
                causes.push(cause);
            }
        }
        for a in d.advice.split("; ") {
            if !advice.contains(&a) {
                advice.push(a);
            }
        }
    }
    // "None seen" is no cause beside one that was seen (in another row).
    if causes.len() > 1 {
        causes.retain(|c| !c.starts_with("no steal"));
    }
    // Taking more runs comes last, after what removes the cause.
    advice.sort_by_key(|a| a.starts_with("take more runs"));
    let (spread, median, its) = match noisy.len() {
        1 => ("spreads", "its median", "its"),
        _ => ("spread", "their medians", "their"),
    };
    let mut text = format!(
        "noisy: {which} {spread} more than +-10% or 1.25x from slowest to fastest run: {median} \
         may be off by as much as {its} spread says (each row's runs and causes: --explain, and \
         the JSON)."
    );
    if !causes.is_empty() {
        text += &format!("\n  likely: {}.", causes.join("; "));
    }
    if !advice.is_empty() {
        text += &format!("\n  what to do: {}.", advice.join("; "));
    }
    Some(text)
}

/// The noisy paragraph of `series` (`None` when it is not noisy): `what`
/// spread over its runs, from its slowest to its fastest as `value`
/// writes them, then the likely causes and what to do.
pub(crate) fn noisy_series(
    what: &str,
    series: &Series,
    value: impl Fn(f64) -> String,
) -> Option<String> {
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
pub(crate) fn series_csv_header(prefix: &str) -> String {
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
pub(crate) fn series_csv(series: &Series) -> Vec<String> {
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

/// A run's noise as CSV columns,
/// `steal_s,other_cpu_s,load_avg_1m,involuntary_switches,cpu_mhz`
/// (all empty for a run without it).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct NoiseCells {
    steal_s: Option<String>,
    other_cpu_s: Option<String>,
    load_avg_1m: Option<String>,
    involuntary_switches: Option<u64>,
    cpu_mhz: Option<String>,
}

impl NoiseCells {
    pub(crate) fn of(noise: Option<&RunNoise>) -> Self {
        let Some(n) = noise else {
            return Self::default();
        };
        Self {
            steal_s: Some(format!("{:.3}", n.steal_s)),
            other_cpu_s: Some(format!("{:.3}", n.other_cpu_s)),
            load_avg_1m: Some(format!("{:.2}", n.load_avg_1m)),
            involuntary_switches: Some(n.involuntary_switches),
            cpu_mhz: n.cpu_mhz.map(|m| format!("{m:.0}")),
        }
    }
}

/// `n` in one line: steal, other load and the load average.
pub(crate) fn noise_sentence(n: NoiseSummary) -> String {
    format!(
        "during the runs: CPU steal {:.1}% of a CPU, other processes {:.2} CPUs, load average up to {:.2}",
        n.steal_share * 100.0,
        n.other_share,
        n.max_load_avg_1m
    )
}

/// One noisy row: `what` spread over `runs` runs `range` (`from 1.00 to
/// 2.00 GiB/s`) as `s` says, then the likely causes and what to do.
pub(crate) fn noisy_paragraph(
    what: &str,
    runs: usize,
    range: &str,
    s: &Spread,
    diagnosis: Option<&Diagnosis>,
) -> String {
    // Two runs give Student's t = 12.7: an interval that says nothing.
    let interval = match runs {
        0..3 => String::new(),
        _ => format!("; 95% interval +-{:.0}%", s.ci95_half_width * 100.0),
    };
    let mut text = format!(
        "noisy: {what} ({runs} runs {range}, {:.2}x{interval}).",
        s.max_over_min
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
pub(crate) fn status_word(status: Status) -> &'static str {
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
    fn a_run_s_noise_is_five_columns_empty_without_it() {
        let noise = RunNoise {
            steal_s: 0.125,
            other_cpu_s: 1.5,
            load_avg_1m: 0.25,
            involuntary_switches: 7,
            cpu_mhz: Some(2400.4),
            ..RunNoise::default()
        };
        let line = |n| crate::report::csv_lines("", [NoiseCells::of(n)]).unwrap();
        assert_eq!(line(Some(&noise)), b"0.125,1.500,0.25,7,2400\n");
        assert_eq!(line(None), b",,,,\n");
    }

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
        // Two runs: no interval (t = 12.7 made it +-605%), only the mark.
        assert_eq!(spread_cell(&Series::of(&[1.0, 1.1])), "2 runs");
        assert_eq!(spread_cell(&Series::of(&[1.0, 3.0])), "2 runs noisy");
        let two = noisy_series("x", &Series::of(&[1.0, 3.0]), |v| v.to_string());
        assert!(!two.unwrap_or_default().contains("interval"));
        assert!(spread_cell(&noisy).ends_with("noisy"));
    }

    #[test]
    fn the_noise_paragraph_names_the_noisy_rows_once_with_each_cause_once() {
        use crate::bench::core::Ends;
        use crate::sys::RunNoise;
        let loaded = |other: f64| RunNoise {
            wall_s: 1.0,
            other_cpu_s: other,
            ..RunNoise::default()
        };
        let mut a = Series::of(&[1.0, 5.0, 2.0]);
        a.noise = vec![loaded(1.5); 3];
        a.diagnose(Ends::default());
        let mut b = Series::of(&[1.0, 4.0, 2.0]);
        b.noise = vec![loaded(1.2); 3];
        b.diagnose(Ends::default());
        let quiet = Series::of(&[5.0, 5.0, 5.0]);
        let rows = [
            ("a".to_string(), &a),
            ("b".to_string(), &b),
            ("c".to_string(), &quiet),
        ];
        let text = noise_paragraph(&rows).unwrap_or_default();
        assert!(
            text.starts_with("noisy: 2 of 3 rows (a, b) spread"),
            "{text}"
        );
        assert_eq!(text.matches("other load").count(), 1, "{text}");
        assert!(
            text.contains("up to 1.50 CPUs"),
            "the noisiest row's words: {text}"
        );
        assert_eq!(text.matches("take more runs").count(), 1, "{text}");
        assert!(text.contains("idle machine"), "{text}");
        assert!(text.contains("their medians may be off"), "{text}");
        assert_eq!(noise_paragraph(&rows[2..]), None);
        // One noisy row in the singular: it once said "the one row (a)
        // ... their medians".
        let text = noise_paragraph(&rows[..1]).unwrap_or_default();
        assert!(
            text.starts_with("noisy: the one row (a) spreads more than")
                && text.contains("its median may be off by as much as its spread says"),
            "{text}"
        );
        // A row with no cause seen beside one with steal: the steal only.
        let mut unseen = Series::of(&[1.0, 5.0, 2.0]);
        unseen.noise = vec![loaded(0.0); 3];
        unseen.diagnose(Ends::default());
        let rows = [("a".to_string(), &a), ("u".to_string(), &unseen)];
        let text = noise_paragraph(&rows).unwrap_or_default();
        assert!(
            text.contains("other load") && !text.contains("no steal"),
            "{text}"
        );
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
