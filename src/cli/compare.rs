//! `pipespeed compare BASE NEW`: two results of one command, row by row,
//! with a bootstrap interval of each ratio; parse, call the library,
//! print.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use pipespeed::compare::{Bootstrap, DEFAULT_SEED};
use pipespeed::compare::{compare_files, render};

/// `pipespeed compare`.
#[derive(Debug, Args)]
#[command(
    after_help = "Reads what bench, latency, contend and ipc write with --json; both files must come \
                  from the same command and format version. Per row and metric: both medians, \
                  new/base ratio and delta, a bootstrap interval of the ratio over the runs, and \
                  a verdict: faster or slower (significant: the whole interval excludes 1), ~ (no \
                  significant change) or ? (fewer than 2 runs on a side: never significant); a \
                  row noisy in a file is marked (noisy: base|new|both). Differences between the \
                  machines, the builds (profile, compiler), the noise (steal, other load) or the \
                  settings are warned about on stderr.\n\nExit status: 0 compared (whatever the \
                  verdicts), 1 a file unreadable, invalid, larger than 16 MiB, with a row of more \
                  than 1000 runs, or not comparable, 2 bad usage."
)]
pub struct CompareArgs {
    /// The reference result (a --json file of bench, latency, contend or ipc).
    #[arg(value_name = "BASE")]
    pub base: PathBuf,
    /// The result judged against it, from the same command.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Print GitHub-flavoured Markdown, for a pull request or a mail.
    #[arg(long)]
    pub markdown: bool,
    /// Print the form kernel developers paste in a patch mail: the
    /// machines' facts, base -> patched (change) per row (contend as
    /// pipe_bench's writers x readers grid), the change written *+12%*
    /// where the means differ by more than their two 95% half-widths
    /// (mmtests' rule) and (+12%) where not, ! where a row is noisy, ?
    /// where a side has one run.
    #[arg(long, conflicts_with = "markdown")]
    pub lkml: bool,
    /// Confidence of the interval, between 0 and 1.
    #[arg(long, value_name = "C", default_value_t = 0.95, value_parser = confidence)]
    pub confidence: f64,
    /// Bootstrap resamples per interval.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(100..=10_000_000))]
    pub resamples: u32,
    /// Seed of the resampling: the same seed prints the same intervals.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
}

fn confidence(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(c) if c > 0.0 && c < 1.0 => Ok(c),
        _ => Err(format!(
            "'{text}' is not a confidence: give a fraction between 0 and 1, as 0.95"
        )),
    }
}

pub fn run(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let how = Bootstrap {
        resamples: args.resamples as usize,
        confidence: args.confidence,
        seed: args.seed,
    };
    // Messages and output name the files as the user did.
    let (base, new) = (
        args.base.display().to_string(),
        args.new.display().to_string(),
    );
    let comparison = compare_files((&args.base, &base), (&args.new, &new), &how)?;
    for warning in comparison.warnings() {
        eprintln!("pipespeed: warning: {warning}");
    }
    let out = match (args.lkml, args.markdown) {
        (true, _) => render::lkml(&comparison),
        (false, true) => render::markdown(&comparison),
        (false, false) => render::text(&comparison),
    };
    crate::output::print(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confidence_is_a_fraction_strictly_between_0_and_1() {
        assert_eq!(confidence("0.9"), Ok(0.9));
        for bad in ["0", "1", "95", "-0.5", "x", "NaN"] {
            let err = confidence(bad).unwrap_err();
            assert!(err.contains("between 0 and 1"), "{bad}: {err}");
        }
    }
}
