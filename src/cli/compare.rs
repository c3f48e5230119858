//! `pipespeed compare BASE NEW`: two results of one command, row by row,
//! with a bootstrap interval of each ratio; parse, call the library,
//! print.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::compare::{Bootstrap, DEFAULT_SEED};
use crate::compare::{compare_files, render};
use clap::Args;

use crate::cli::{UsageError, output};

/// `pipespeed compare`.
#[derive(Debug, Args)]
#[command(
    override_usage = "pipespeed compare [OPTIONS] <BASE> <NEW>",
    after_help = "Reads what bench, latency, contend and ipc write with --json; both files must come \
                  from the same command and format version. It reads the kernel's pipe_bench \
                  output (pipe_bench's own, or contend --pipe-bench's) as a contend result: a \
                  block a run of its cell. BASE or NEW may be a directory: its .json results \
                  (and pipe_bench .log files) are several invocations of one side. Per row and metric: both \
                  medians, new/base ratio and delta, a bootstrap interval of the ratio, and a \
                  verdict by mmtests' rule (the means differ by more than their two 95% \
                  half-widths) with a floor for the drift between invocations (25% with one file \
                  a side; 5% with several, judged on each file's median): faster, slower, ~ (no \
                  change called) or ? with why (1 run, noisy, drift, machine); a noisy side is \
                  judged only where the two sides' runs lie apart (5 or more a side, none \
                  overlapping). Rows measured in \
                  different placements are not compared. Differences between the machines, the \
                  builds (profile, compiler), the noise (steal, other load) or the settings are \
                  warned about on stderr.\n\n--markdown and --lkml write their form to FILE \
                  and print the text table, or with - (or no FILE) print their form in its place; \
                  both may be given, to two places. A FILE given before BASE NEW is taken as a \
                  file to write only when BASE and NEW follow it: `compare --markdown base.json \
                  new.json` prints Markdown, as it always did. A result never replaces BASE or NEW \
                  (refused, status 2).\n\nExit status: 0 compared (whatever the \
                  verdicts), 1 a file unreadable, invalid, larger than 16 MiB, with a row of more \
                  than 1000 runs, or not comparable, 2 bad usage."
)]
pub struct CompareArgs {
    /// The reference result (a --json file of bench, latency, contend or
    /// ipc, or the kernel's pipe_bench output).
    #[arg(value_name = "BASE")]
    pub base: PathBuf,
    // Optional to clap only: a value of --markdown or --lkml may be it
    // (`settle`); `run` refuses a comparison without it.
    /// The result judged against it, from the same command.
    #[arg(value_name = "NEW")]
    pub new: Option<PathBuf>,
    /// Write the comparison as GitHub-flavoured Markdown, for a pull
    /// request or a mail, to FILE (- or no FILE: standard output, in place
    /// of the text table).
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub markdown: Option<PathBuf>,
    /// Write the form kernel developers paste in a patch mail to FILE (-
    /// or no FILE: standard output, in place of the text table): the
    /// machines' facts, base -> patched (change) per row (contend as
    /// pipe_bench's writers x readers grid), the change written *+12%*
    /// where the means differ by more than their two 95% half-widths
    /// (mmtests' rule) and (+12%) where not, ! where a row is noisy, ?
    /// where a side has one run.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub lkml: Option<PathBuf>,
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

/// Gives NEW its file when clap gave it to an option: `--markdown` and
/// `--lkml` take an optional FILE, so `compare --markdown BASE NEW`
/// (their spelling before they took one) parses as `--markdown BASE`
/// and NEW missing. With exactly one such value and NEW missing, that
/// value was one of the two files, BASE or NEW by its place on the
/// command line, and the form goes to standard output as it did.
pub(super) fn settle(matches: &clap::ArgMatches, args: &mut CompareArgs) -> Result<(), String> {
    if args.new.is_some() {
        return Ok(());
    }
    let given = |path: &Option<PathBuf>| path.as_ref().is_some_and(|p| p.as_os_str() != "-");
    let (slot, id) = match (given(&args.markdown), given(&args.lkml)) {
        (true, false) => (&mut args.markdown, "markdown"),
        (false, true) => (&mut args.lkml, "lkml"),
        _ => return Err("compare takes two files, BASE and NEW: NEW is missing".into()),
    };
    let file = slot.replace(PathBuf::from("-")).unwrap_or_default();
    let before_base = matches.index_of(id) < matches.index_of("base");
    args.new = Some(if before_base {
        std::mem::replace(&mut args.base, file)
    } else {
        file
    });
    Ok(())
}

pub(super) fn run(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let how = Bootstrap {
        resamples: args.resamples as usize,
        confidence: args.confidence,
        seed: args.seed,
    };
    let Some(new_path) = &args.new else {
        return Err(
            UsageError("compare takes two files, BASE and NEW: NEW is missing".into()).into(),
        );
    };
    let forms = [&args.markdown, &args.lkml];
    // Nothing is written, or a FIFO opened, before every destination is
    // known to be writable and none is a file compared.
    output::check_not_inputs(&[&args.base, new_path], forms)?;
    output::check_outputs(forms)?;
    // Messages and output name the files as the user did.
    let (base, new) = (
        args.base.display().to_string(),
        new_path.display().to_string(),
    );
    let comparison = compare_files((&args.base, &base), (new_path, &new), &how)?;
    // Warnings at the terminal's width too: a file's noise took 200
    // columns on one line.
    let err_width = crate::report::text::width_of(std::io::stderr());
    for warning in comparison.warnings() {
        let line = format!("pipespeed: warning: {warning}");
        eprintln!("{}", crate::report::text::wrap_hanging(&line, err_width, 2));
    }
    output::write_file(&args.markdown, || {
        Ok(render::markdown(&comparison).into_bytes())
    })?;
    output::write_file(&args.lkml, || Ok(render::lkml(&comparison).into_bytes()))?;
    // The text table, unless a form took standard output.
    if !forms.into_iter().flatten().any(|p| output::is_stdout(p)) {
        let width = crate::report::text::width_of(std::io::stdout());
        output::print(render::text(&comparison, width).as_bytes())?;
    }
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
