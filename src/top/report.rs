//! `pipespeed top`'s screen: a window's table per pipeline, each stage a
//! line and each pipe a line under its writer, then the verdict; and the
//! summary when the pipelines end.

use std::fmt::Write as _;
use std::io;

use crate::report::{Exporter, Text};
use crate::top::{PipeSample, PipelineSample, Rate, Sample, StageSample, Summary, Verdict};

const HEADER: &str = "    PID  STAGE             CPU  RUNQ         IN/s        OUT/s  WORK  \
                      IN-WAIT  OUT-WAIT  OTHER";

/// The table without RUNQ and OTHER (in the JSON), for a terminal
/// narrower than [`HEADER`]: 79 columns.
const NARROW: &str =
    "    PID  STAGE             CPU        IN/s       OUT/s  WORK  IN-WAIT  OUT-WAIT";

/// `text` wrapped at `width` at spaces, its continuation lines indented
/// by `indent`, ending in a newline: a word is never cut by the
/// terminal ("C\nPU-bound" at 120 columns).
fn wrapped(out: &mut String, text: &str, width: usize, indent: usize) {
    let _ = writeln!(
        out,
        "{}",
        crate::report::text::wrap_hanging(text, width, indent)
    );
}

/// A pipeline's table and its verdict, of one window or of the whole
/// run (`whole`).
fn pipeline(out: &mut String, p: &PipelineSample, whole: bool, width: usize) {
    out.push('\n');
    table(out, p, whole, width);
    let label = if whole {
        "over the whole run"
    } else {
        "bottleneck"
    };
    verdict(out, &p.verdict, label, width);
}

impl Exporter<Sample> for Text {
    fn export(&self, sample: &Sample) -> io::Result<Vec<u8>> {
        let mut out = format!(
            "pipespeed top: {:.1} s, a window of {:.2} s ({} probes)\n",
            sample.time_s, sample.window_s, sample.probes
        );
        for p in &sample.pipelines {
            pipeline(&mut out, p, false, self.width);
        }
        for line in &sample.unseen {
            wrapped(&mut out, &format!("note: {line}"), self.width, 2);
        }
        Ok(out.into_bytes())
    }
}

impl Exporter<Summary> for Text {
    fn export(&self, summary: &Summary) -> io::Result<Vec<u8>> {
        let mut out = format!(
            "pipespeed top: summary of {:.1} s ({} windows)\n",
            summary.time_s, summary.samples
        );
        for (p, named) in summary.pipelines.iter().zip(&summary.named) {
            pipeline(&mut out, p, true, self.width);
            if !named.is_empty() {
                let list: Vec<String> = named
                    .iter()
                    .map(|n| format!("{} (PID {}) in {}", n.name, n.pid, n.windows))
                    .collect();
                let named = format!(
                    "named the bottleneck: {} of {} windows",
                    list.join(", "),
                    summary.samples
                );
                wrapped(&mut out, &named, self.width, 2);
            }
        }
        Ok(out.into_bytes())
    }
}

/// The stages, each pipe under its writer; without RUNQ and OTHER when
/// the full table is wider than `width`.
fn table(out: &mut String, p: &PipelineSample, whole: bool, width: usize) {
    let narrow = width < HEADER.len();
    let _ = writeln!(out, "{}", if narrow { NARROW } else { HEADER });
    for s in &p.stages {
        stage(out, s, whole, narrow);
        for pipe in p.pipes.iter().filter(|pipe| pipe.from == s.pid) {
            pipe_line(out, pipe, width);
        }
    }
}

fn stage(out: &mut String, s: &StageSample, whole: bool, narrow: bool) {
    let mut name = s.name.clone();
    if s.state == "exited" && !whole {
        name.push_str(" (exited)");
    }
    if s.state == "exited" && !whole {
        let _ = writeln!(out, "{:>7}  {:<15} {:>5}", s.pid, name, "-");
        return;
    }
    let pct = |v: f64| {
        if s.visible {
            format!("{v:.0}%")
        } else {
            "?".to_string()
        }
    };
    // The narrow table leaves out RUNQ and OTHER and its rates are a
    // column narrower (see NARROW).
    let cpu = format!("{:.0}%", s.cpu_pct);
    let mut line = format!("{:>7}  {:<15} {cpu:>5}", s.pid, name);
    if !narrow {
        let _ = write!(line, " {:>5}", format!("{:.0}%", s.runq_pct));
    }
    let rates = if narrow { 11 } else { 12 };
    let _ = write!(
        line,
        " {:>rates$} {:>rates$} {:>5} {:>8} {:>9}",
        rate(s.bytes_in),
        rate(s.bytes_out),
        pct(s.working_pct),
        pct(s.input_wait_pct),
        pct(s.output_wait_pct),
    );
    if !narrow {
        let _ = write!(line, " {:>6}", pct(s.other_pct));
    }
    let _ = writeln!(out, "{line}");
}

fn pipe_line(out: &mut String, p: &PipeSample, width: usize) {
    let fill = match (p.fill_pct, p.capacity) {
        (Some(f), Some(c)) => format!(
            "{:.0}% full (lowest {:.0}%, highest {:.0}%) of {}",
            f.mean,
            f.min,
            f.max,
            crate::units::Size(c)
        ),
        _ => "fill cannot be read".to_string(),
    };
    // Under the writer's name, nine columns in.
    let line = format!("{} -> {}: {} {fill}", p.from, p.to, p.name);
    let line = crate::report::text::wrap_hanging(&line, width.saturating_sub(9), 2);
    for part in line.lines() {
        let _ = writeln!(out, "         {part}");
    }
}

/// The verdict and its advice, wrapped at `width` under their words.
fn verdict(out: &mut String, v: &Verdict, label: &str, width: usize) {
    wrapped(out, &format!("{label}: {}", v.why), width, 2);
    for a in &v.advice {
        wrapped(out, &format!("advice: {a}"), width, 2);
    }
}

/// A rate as a table cell: `1.20 GiB/s`, `~312 MiB/s` where estimated,
/// `?` where unknown.
pub(crate) fn rate(r: Option<Rate>) -> String {
    let Some(r) = r else {
        return "?".to_string();
    };
    let mark = if r.estimated && r.bytes_per_s > 0.0 {
        "~"
    } else {
        ""
    };
    let units = ["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"];
    let mut v = r.bytes_per_s;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < units.len() {
        v /= 1024.0;
        unit += 1;
    }
    let digits = if unit == 0 || v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{mark}{v:.digits$} {}", units[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::{FillPct, Named, SCHEMA};

    fn stage(pid: u32, name: &str, cpu: f64, inp: Option<Rate>, out: Option<Rate>) -> StageSample {
        StageSample {
            pid,
            name: name.to_string(),
            command: name.to_string(),
            state: "running",
            cpu_pct: cpu,
            runq_pct: 1.0,
            bytes_in: inp,
            bytes_out: out,
            working_pct: cpu,
            input_wait_pct: 0.0,
            output_wait_pct: 100.0 - cpu,
            other_pct: 0.0,
            visible: true,
            copies: true,
        }
    }

    fn rate_of(bytes_per_s: f64, estimated: bool) -> Option<Rate> {
        Some(Rate {
            bytes_per_s,
            estimated,
        })
    }

    fn pipeline() -> PipelineSample {
        PipelineSample {
            stages: vec![
                stage(
                    10,
                    "yes",
                    5.0,
                    rate_of(0.0, false),
                    rate_of(1.5 * 1024.0 * 1024.0 * 1024.0, false),
                ),
                stage(11, "gzip", 98.0, rate_of(12e6, true), None),
            ],
            pipes: vec![PipeSample {
                name: "pipe:[7]".to_string(),
                from: 10,
                to: 11,
                capacity: Some(65536),
                fill_pct: Some(FillPct {
                    mean: 95.0,
                    min: 80.0,
                    max: 100.0,
                }),
            }],
            verdict: Verdict {
                bottleneck: Some(11),
                stage: Some("gzip".to_string()),
                why: "gzip (PID 11): input pipe full 95%, 98% CPU: CPU-bound".to_string(),
                rules: "fill and waits".to_string(),
                advice: vec!["the pipes are not the bottleneck: gzip is".to_string()],
            },
        }
    }

    #[test]
    fn a_sample_reads_as_a_table_with_its_pipes_and_verdict() {
        let sample = Sample {
            schema: SCHEMA,
            kind: "sample",
            time_s: 3.0,
            window_s: 1.0,
            probes: 20,
            pipelines: vec![pipeline()],
            unseen: vec!["x (PID 3) is another user's process".to_string()],
        };
        let text = String::from_utf8(Text::default().export(&sample).unwrap()).unwrap();
        let expected = "\
pipespeed top: 3.0 s, a window of 1.00 s (20 probes)

    PID  STAGE             CPU  RUNQ         IN/s        OUT/s  WORK  IN-WAIT  OUT-WAIT  OTHER
     10  yes                5%    1%        0 B/s   1.50 GiB/s    5%       0%       95%     0%
         10 -> 11: pipe:[7] 95% full (lowest 80%, highest 100%) of 64KiB
     11  gzip              98%    1%  ~11.4 MiB/s            ?   98%       0%        2%     0%
bottleneck: gzip (PID 11): input pipe full 95%, 98% CPU: CPU-bound
advice: the pipes are not the bottleneck: gzip is
note: x (PID 3) is another user's process
";
        assert_eq!(text, expected);
        assert!(text.lines().all(|l| l.len() <= 100), "{text}");
    }

    #[test]
    fn a_narrow_terminal_gets_the_table_without_runq_and_other_and_whole_words() {
        let mut p = pipeline();
        p.verdict.why = "gzip (PID 11): input pipe full (87%), output pipe empty (0%), 55% CPU, \
                         blocked on its pipes 5%: CPU-bound, and waiting for a CPU 38% of the time"
            .to_string();
        let sample = Sample {
            schema: SCHEMA,
            kind: "sample",
            time_s: 3.0,
            window_s: 1.0,
            probes: 20,
            pipelines: vec![p],
            unseen: vec![],
        };
        let at = |width| {
            let text = Text {
                explain: false,
                width,
            };
            String::from_utf8(text.export(&sample).unwrap()).unwrap()
        };
        let narrow = at(80);
        assert!(narrow.contains(&format!("\n{NARROW}\n")), "{narrow}");
        assert!(
            narrow.contains("\n     11  gzip              98% ~11.4 MiB/s           ?   98%"),
            "{narrow}"
        );
        for (width, text) in [(80, narrow), (120, at(120))] {
            assert!(text.lines().all(|l| l.chars().count() <= width), "{text}");
            // Every word whole: the verdict unwrapped is the verdict.
            let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                flat.contains(" CPU-bound, and waiting for a CPU 38% "),
                "{text}"
            );
        }
        assert!(at(120).contains(&format!("\n{HEADER}\n")));
    }

    #[test]
    fn the_summary_says_how_often_each_stage_was_named() {
        let summary = Summary {
            schema: SCHEMA,
            kind: "summary",
            time_s: 12.0,
            samples: 12,
            pipelines: vec![pipeline()],
            named: vec![vec![Named {
                name: "gzip".to_string(),
                pid: 11,
                windows: 11,
            }]],
        };
        let text = String::from_utf8(Text::default().export(&summary).unwrap()).unwrap();
        assert!(
            text.starts_with("pipespeed top: summary of 12.0 s (12 windows)\n"),
            "{text}"
        );
        assert!(
            text.contains("\nover the whole run: gzip (PID 11): input pipe full 95%"),
            "{text}"
        );
        assert!(
            text.ends_with("named the bottleneck: gzip (PID 11) in 11 of 12 windows\n"),
            "{text}"
        );
    }

    #[test]
    fn rates_keep_three_digits_and_mark_estimates() {
        assert_eq!(rate(None), "?");
        assert_eq!(rate(rate_of(0.0, true)), "0 B/s");
        assert_eq!(rate(rate_of(1023.0, false)), "1023 B/s");
        assert_eq!(rate(rate_of(1536.0, true)), "~1.50 KiB/s");
        assert_eq!(rate(rate_of(300.0 * 1024.0 * 1024.0, false)), "300 MiB/s");
    }
}
