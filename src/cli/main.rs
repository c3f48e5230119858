//! The `pipespeed` binary: parse, call the library, render.

mod args;
mod bench;
mod cat;
mod compare;
mod contend;
mod ends;
mod latency;
mod pv;

use std::io;
use std::process::ExitCode;

use clap::Parser;

use args::{BenchArgs, Cli, Command};

/// Exit status for bad usage (as clap and GNU tools use).
const EXIT_USAGE: u8 = 2;

/// A usage error found after parsing (conflicting values).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

fn main() -> ExitCode {
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Called `cat` (a symlink), the binary is `pipespeed cat`.
    let cat = cat::Invocation::detect(&mut argv);
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(err) => {
            return match &cat {
                Some(cat) => cat.clap_error(err, &argv),
                None => clap_error(err),
            };
        }
    };
    let result = match cli.command {
        None => bench::run(BenchArgs {
            runs: 5,
            run_seconds: 0.4,
            buf_size: 256 * 1024,
            ..Default::default()
        }),
        Some(Command::Bench(args)) => bench::run(args),
        Some(Command::Write(args)) => ends::write(args),
        Some(Command::Read(args)) => ends::read(args),
        Some(Command::Pv(args)) => pv::run(args),
        Some(Command::Contend(args)) => contend::run(args),
        Some(Command::Latency(args)) => latency::run(args),
        Some(Command::Compare(args)) => compare::run(args),
        // GNU's messages and statuses, not ours.
        Some(Command::Cat(args)) => return cat::run(&cat.unwrap_or_default(), args),
    };
    match result {
        Ok(code) => code,
        Err(err) => report(&err),
    }
}

/// Help and version go to stdout with status 0; everything else is one
/// line on stderr and status 2.
fn clap_error(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            ExitCode::SUCCESS
        }
        _ => {
            let text = err.render().to_string();
            let first = text.lines().next().unwrap_or("bad usage");
            eprintln!(
                "pipespeed: {}",
                first.strip_prefix("error: ").unwrap_or(first)
            );
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// One line naming what failed and why; the status says what kind of
/// failure it was.
fn report(err: &anyhow::Error) -> ExitCode {
    if err.downcast_ref::<UsageError>().is_some() {
        eprintln!("pipespeed: {err}");
        return ExitCode::from(EXIT_USAGE);
    }
    let io_kind = err
        .chain()
        .find_map(|e| e.downcast_ref::<io::Error>())
        .map(io::Error::kind);
    if io_kind == Some(io::ErrorKind::BrokenPipe) {
        // Our reader went away: end quietly, as GNU tools do.
        return ExitCode::SUCCESS;
    }
    eprintln!("pipespeed: {err:#}");
    if io_kind == Some(io::ErrorKind::Unsupported) {
        return ExitCode::from(pipespeed::bench::process::EXIT_UNSUPPORTED as u8);
    }
    ExitCode::FAILURE
}

pub use pipespeed::quote::strerror;

/// Writes `render()` to `path`, when there is one.
pub fn write_file(
    path: &Option<std::path::PathBuf>,
    render: impl FnOnce() -> io::Result<Vec<u8>>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    if let Some(path) = path {
        std::fs::write(path, render()?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Opens (creates, empties) every output file asked for, so that a path
/// that cannot be written is an error before the measuring, not after.
pub fn open_outputs<'a>(
    paths: impl IntoIterator<Item = &'a Option<std::path::PathBuf>>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    for path in paths.into_iter().flatten() {
        std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
