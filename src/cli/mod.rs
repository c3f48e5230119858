//! The `pipespeed` command line: parse, call the library, render. Only
//! `src/main.rs` uses it: nothing here is part of the library's API.

mod args;
mod bench;
mod cat;
mod compare;
mod contend;
mod ends;
mod generate;
mod gnu;
mod ipc;
mod kernels;
mod latency;
mod output;
mod progress;
mod pv;
mod tee;
mod top;
mod yes;

use std::io;
use std::process::ExitCode;

use crate::bench::core::{EXIT_UNSUPPORTED, RunError, Status};
use crate::sys::inherited::{self, Stdio};

use clap::{Args, Parser, Subcommand};

/// The whole command line (its about is the package's description).
#[derive(Debug, Parser)]
#[command(
    name = "pipespeed",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("PIPESPEED_GIT_COMMIT"), ")"),
    about,
    long_about = None,
    args_conflicts_with_subcommands = true,
    override_usage = "pipespeed [BENCH OPTIONS]\n       pipespeed <COMMAND>"
)]
#[command(
    after_help = "With no command, runs bench, taking its options (`pipespeed bench --help`).\n\n\
                  Sizes: K, M, G, T, KiB, MiB... are powers of 1024; KB, MB, GB, TB of 1000 \
                  (GNU's rule; pv keeps pv's).\n\nExit status: 0 success, 1 error, 2 bad usage, 3 \
                  not possible on this machine (huge pages not granted, vmsplice refused)."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// bench's options, for `pipespeed` with no command (hidden from the
    /// top-level help by `main::cli_command`: `bench --help` has them).
    #[command(flatten)]
    pub bench: bench::BenchArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the ladder: every step of the blog, measured on this machine.
    Bench(bench::BenchArgs),
    /// The blog's writer: push a buffer into stdout (a pipe) forever.
    Write(ends::WriteArgs),
    /// The blog's reader: consume --bytes from stdin and print the rate.
    Read(ends::ReadArgs),
    /// Concatenate FILEs to standard output, byte for byte as GNU cat does.
    ///
    /// The binary is also `pipespeed cat` when it is called by the name
    /// cat (a symbolic link named cat, for example).
    Cat(cat::CatArgs),
    /// Copy stdin to stdout and to each FILE, as GNU tee does.
    ///
    /// The binary is also `pipespeed tee` when it is called by the name
    /// tee (a symbolic link named tee, for example).
    Tee(tee::TeeArgs),
    /// Output a line again and again, byte for byte as GNU yes does.
    ///
    /// The binary is also `pipespeed yes` when it is called by the name
    /// yes (a symbolic link named yes, for example).
    Yes(yes::YesArgs),
    /// Copy inputs to stdout showing progress, as pv does, at the speed
    /// of the pipe.
    Pv(pv::PvArgs),
    /// N writers and M readers on one pipe, as the kernel's pipe_bench.
    Contend(contend::ContendArgs),
    /// Round-trip latency over two pipes, with percentiles.
    Latency(latency::LatencyArgs),
    /// Pipes beside sockets, queues, shared memory and io_uring.
    Ipc(ipc::IpcArgs),
    /// Compare two --json results, row by row.
    Compare(compare::CompareArgs),
    /// Boot two kernels, measure, print the LKML table.
    Kernels(kernels::KernelsArgs),
    /// Watch a pipeline, name the stage that limits it.
    Top(top::TopArgs),
    /// Write manual pages, or print a completion script.
    Generate(generate::GenerateArgs),
    /// Internal: a child process of a measurement (see
    /// `crate::bench::worker`).
    #[command(hide = true)]
    Worker(WorkerArgs),
}

/// `pipespeed worker SPEC`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// What to be: one `crate::bench::worker::Worker` as JSON.
    pub spec: String,
}

/// Exit status for bad usage (as clap and GNU tools use).
const EXIT_USAGE: u8 = 2;

/// A usage error found after parsing (conflicting values).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

/// The `pipespeed` binary's `main`: what it does called by any name
/// (`pipespeed`, or a symlink `cat`, `tee`, `yes` or `pv`).
pub fn main() -> ExitCode {
    // A descriptor closed at start stays unusable: reads and writes on it
    // fail with EBADF instead of going to /dev/null.
    if let Err(err) = inherited::keep_closed() {
        eprintln!(
            "pipespeed: cannot keep a closed standard descriptor closed: {}",
            strerror(&err)
        );
        return ExitCode::FAILURE;
    }
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Called `cat`, `tee`, `yes` or `pv` (a symlink), the binary is
    // `pipespeed cat`, `pipespeed tee`, `pipespeed yes` or `pipespeed pv`.
    // cat and tee parse their own options alone (see `gnu::parse`), yes as
    // GNU's getopt call does (`yes::run`), and they speak as GNU's.
    if let Some(cat) = gnu::Invocation::detect(&mut argv, &cat::CAT) {
        return match gnu::parse(&argv) {
            Ok(args) => cat::run(&cat, args),
            Err(err) => cat.clap_error(err, &argv),
        };
    }
    if let Some(tee) = gnu::Invocation::detect(&mut argv, &tee::TEE) {
        return match gnu::parse(&argv) {
            Ok(args) => tee::run(&tee, args, &argv),
            Err(err) => tee::refused(&tee, err, &argv),
        };
    }
    if let Some(yes) = gnu::Invocation::detect(&mut argv, &yes::YES) {
        return yes::run(&yes, argv.get(2..).unwrap_or_default());
    }
    // Every other command reports a write past `ulimit -f` (EFBIG) with
    // its own status; cat and tee die of SIGXFSZ, as GNU's do.
    if let Err(err) = crate::sys::signal::sigxfsz_as_efbig() {
        eprintln!(
            "pipespeed: cannot catch SIGXFSZ (sigaction): {}",
            strerror(&err)
        );
        return ExitCode::FAILURE;
    }
    let pv = pv::Invocation::detect(&mut argv);
    let cli = match parse(&argv) {
        Ok(cli) => cli,
        Err(err) => {
            return match &pv {
                Some(pv) => pv.clap_error(err),
                None => clap_error(err),
            };
        }
    };
    if let Some(code) = closed_stdio(&cli.command) {
        return code;
    }
    let result = match cli.command {
        None => bench::run(cli.bench),
        Some(Command::Bench(args)) => bench::run(args),
        Some(Command::Write(args)) => ends::write(args),
        Some(Command::Read(args)) => ends::read(args),
        // pv's messages and statuses.
        Some(Command::Pv(args)) => return pv::run(args, &pv.unwrap_or_default()),
        Some(Command::Contend(args)) => contend::run(args),
        Some(Command::Latency(args)) => latency::run(args),
        Some(Command::Ipc(args)) => ipc::run(args),
        Some(Command::Compare(args)) => compare::run(args),
        Some(Command::Kernels(args)) => kernels::run(args),
        Some(Command::Top(args)) => top::run(args),
        Some(Command::Worker(args)) => worker(&args.spec),
        Some(Command::Generate(args)) => generate::run(args),
        // GNU's messages and statuses, not ours.
        // (Found above by their name; here for completeness.)
        Some(Command::Cat(args)) => return cat::run(&gnu::Invocation::subcommand(&cat::CAT), args),
        Some(Command::Tee(args)) => {
            return tee::run(&gnu::Invocation::subcommand(&tee::TEE), args, &argv);
        }
        Some(Command::Yes(args)) => {
            return yes::run(&gnu::Invocation::subcommand(&yes::YES), &args.strings);
        }
    };
    match result {
        Ok(code) => code,
        Err(err) => report(&err),
    }
}

/// The command line, parsed; `--version` (long) names the build, `-V`
/// prints one line.
fn parse(argv: &[std::ffi::OsString]) -> Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    let info = crate::build_info::BuildInfo::current();
    let long = format!(
        "{}
{}",
        info.version,
        info.lines().trim_end()
    );
    let mut matches = cli_command()
        .long_version(long)
        .try_get_matches_from(argv)?;
    let compare = matches.subcommand_matches("compare").cloned();
    let pv = matches.subcommand_matches("pv").cloned();
    let mut cli = Cli::from_arg_matches_mut(&mut matches)?;
    if let (Some(m), Some(Command::Compare(args))) = (compare, &mut cli.command) {
        compare::settle(&m, args)
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::MissingRequiredArgument, e))?;
    }
    if let (Some(m), Some(Command::Pv(args))) = (pv, &mut cli.command) {
        pv::settle(&m, args)
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, e + "\n"))?;
    }
    Ok(cli)
}

/// The command line's definition: [`Cli`], with bench's options, which
/// `pipespeed` alone takes, out of the top-level help (a page of them
/// under the commands; `pipespeed bench --help` lists them, and the help
/// says so).
fn cli_command() -> clap::Command {
    use clap::CommandFactory;
    Cli::command().mut_args(|arg| match arg.get_id().as_str() {
        "help" | "version" => arg,
        _ => arg.hide(true),
    })
}

/// `pipespeed worker SPEC`: a child process of one of our measurements.
/// What it could not do goes to its parent typed, as
/// [`RunError::to_line`] writes it.
fn worker(spec: &str) -> anyhow::Result<ExitCode> {
    use std::os::fd::AsFd;
    let worker =
        crate::bench::worker::Worker::from_json(spec).map_err(|e| UsageError(e.to_string()))?;
    match worker.serve(io::stdin().as_fd(), io::stdout().as_fd()) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            // The human message, then the same typed for the parent
            // (`RunError::from_worker`); the status says it again.
            let outcome = RunError::from_io(&e);
            eprintln!("pipespeed: {}", strerror(&e));
            eprintln!("{}", outcome.to_line());
            Ok(ExitCode::from(match outcome {
                RunError::Unavailable(_) => EXIT_UNSUPPORTED as u8,
                RunError::Failed(_) | RunError::Stalled(_) => 1,
            }))
        }
    }
}

/// The error status when a command needs a standard descriptor that was
/// closed when we started: `pipespeed write >&-` would otherwise write its
/// stream into nothing and exit 0. cat and pv check for themselves, in
/// their own words.
fn closed_stdio(command: &Option<Command>) -> Option<ExitCode> {
    let needs = |fd| match command {
        Some(Command::Cat(_) | Command::Tee(_) | Command::Pv(_) | Command::Yes(_)) => false,
        Some(Command::Read(_)) => matches!(fd, Stdio::Stdin | Stdio::Stdout),
        // Every other command writes its result to stdout.
        _ => fd == Stdio::Stdout,
    };
    let fd = inherited::closed().find(|&fd| needs(fd))?;
    eprintln!(
        "pipespeed: {}: {}",
        fd.name(),
        strerror(&io::Error::from_raw_os_error(libc::EBADF))
    );
    Some(ExitCode::FAILURE)
}

/// Help and version go to stdout with status 0; everything else is one
/// line on stderr and status 2.
pub fn clap_error(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // Help in colour on a terminal, as clap would print it, unless
            // NO_COLOR is set (https://no-color.org).
            let text = if colour(&io::stdout()) {
                err.render().ansi().to_string()
            } else {
                err.render().to_string()
            };
            match output::print(text.as_bytes()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("pipespeed: {err}");
                    ExitCode::FAILURE
                }
            }
        }
        _ => {
            let text = err.render().to_string();
            eprintln!("pipespeed: {}", first_paragraph(&text));
            // clap's "did you mean": a second line, worth its place.
            for tip in tips(&text) {
                eprintln!("pipespeed: {tip}");
            }
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// After a measurement: if SIGINT, SIGTERM or SIGHUP stopped it, says on stderr
/// what the table and files hold (`count` of `what`, made or measured
/// before it) and who was stopped, and returns the status 128 + the
/// signal, as a shell reports a command killed by it.
pub fn interrupted_status(count: usize, what: &str, stopped: &str) -> Option<ExitCode> {
    use crate::sys::process::{interrupted, signal_name};
    let signal = interrupted()?;
    let held = match count {
        0 => "nothing was measured, no file written".to_string(),
        1 => format!("the table and the files hold the 1 {what} measured before it"),
        n => format!("the table and the files hold the {n} {what}s measured before it"),
    };
    eprintln!(
        "pipespeed: interrupted by {}: {held}; {stopped} was stopped",
        signal_name(signal)
    );
    Some(signal_status(signal))
}

/// Status 3 when every row asked for (a rung, a cell, a row's metric)
/// is one this machine cannot run, as the table says; `None` when there
/// is no row or one of them could run.
pub fn unavailable_status(statuses: impl IntoIterator<Item = Status>) -> Option<ExitCode> {
    let mut statuses = statuses.into_iter().peekable();
    let any = statuses.peek().is_some();
    (any && statuses.all(|s| s == Status::Unavailable))
        .then(|| ExitCode::from(EXIT_UNSUPPORTED as u8))
}

/// The status of a command that signal `signal` stopped: 128 + N, as a
/// shell reports it.
pub fn signal_status(signal: i32) -> ExitCode {
    ExitCode::from((128 + signal).clamp(0, 255) as u8)
}

/// Whether to colour what goes to `stream`: a terminal, and no NO_COLOR
/// (set and not empty).
fn colour(stream: &impl std::io::IsTerminal) -> bool {
    stream.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The `tip: ...` lines of a clap error (a similar subcommand, value or
/// option), trimmed; not the generic "to pass '-x' as a value" advice.
fn tips(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("tip: a similar") || l.starts_with("tip: some similar"))
        .collect()
}

/// clap's message on one line: its first paragraph, whose first line
/// may end in a colon and continue with indented lines (the required
/// arguments missing, say), without the `error: ` in front.
fn first_paragraph(text: &str) -> String {
    let mut line = String::new();
    for part in text.lines().take_while(|l| !l.trim().is_empty()) {
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(part.trim());
    }
    match line.strip_prefix("error: ") {
        Some(rest) => rest.to_owned(),
        None if line.is_empty() => "bad usage".to_owned(),
        None => line,
    }
}

/// The error and its causes, `: ` between them, as anyhow's `{:#}` has
/// them, but with the system's words for an `io::Error` (no "(os error
/// N)").
fn message(err: &anyhow::Error) -> String {
    err.chain()
        .map(|e| match e.downcast_ref::<io::Error>() {
            Some(io) => strerror(io),
            None => e.to_string(),
        })
        .collect::<Vec<_>>()
        .join(": ")
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
    let stdout_broken = err
        .chain()
        .find_map(|e| e.downcast_ref::<output::StdoutError>())
        .is_some_and(|e| e.0.kind() == io::ErrorKind::BrokenPipe);
    if stdout_broken {
        // Our reader went away (see `output::StdoutError`).
        return ExitCode::SUCCESS;
    }
    eprintln!("pipespeed: {}", message(err));
    if let Some(signal) = output::interrupted_by(err) {
        // A write that SIGINT or SIGTERM ended (a FIFO nobody read).
        return signal_status(signal);
    }
    if io_kind == Some(io::ErrorKind::Unsupported) {
        return ExitCode::from(EXIT_UNSUPPORTED as u8);
    }
    ExitCode::FAILURE
}

pub use crate::quote::strerror;

#[cfg(test)]
mod tests {
    use super::*;

    fn broken_pipe() -> io::Error {
        io::Error::from_raw_os_error(libc::EPIPE)
    }

    #[test]
    fn a_misspelt_subcommand_keeps_clap_s_tip() {
        let err = parse(&["pipespeed".into(), "bnech".into()])
            .err()
            .unwrap_or_else(|| panic!());
        let text = err.render().to_string();
        assert_eq!(first_paragraph(&text), "unrecognized subcommand 'bnech'");
        assert_eq!(tips(&text), ["tip: a similar subcommand exists: 'bench'"]);
    }

    #[test]
    fn pipespeed_alone_is_bench_with_its_defaults() {
        let parsed = |args: &[&str]| parse(&args.iter().map(Into::into).collect::<Vec<_>>());
        let Ok(Cli {
            command: None,
            bench: args,
        }) = parsed(&["pipespeed"])
        else {
            panic!("`pipespeed` parses as no command")
        };
        assert_eq!(
            (args.runs.runs, args.runs.min_runs, args.runs.max_runs),
            (None, None, None)
        );
        assert_eq!(args.placement_runs, 3);
        assert_eq!(args.buf_size, 256 * 1024);
        assert!((args.run_seconds - 0.4).abs() < 1e-9);
        let Ok(Cli {
            command: Some(Command::Bench(bench)),
            ..
        }) = parsed(&["pipespeed", "bench"])
        else {
            panic!("`pipespeed bench` parses")
        };
        assert_eq!(format!("{args:?}"), format!("{bench:?}"));
    }

    #[test]
    fn messages_have_the_systems_words_and_one_line() {
        let err = anyhow::Error::new(io::Error::from_raw_os_error(libc::EMFILE)).context("read");
        assert_eq!(message(&err), "read: Too many open files");
        let clap = "error: the following required arguments were not provided:\n  --vmsplice\n\nUsage: x\n";
        assert_eq!(
            first_paragraph(clap),
            "the following required arguments were not provided: --vmsplice"
        );
        assert_eq!(
            first_paragraph("error: unexpected argument '-q' found\n\nUsage"),
            "unexpected argument '-q' found"
        );
    }

    #[test]
    fn only_a_broken_standard_output_ends_quietly() {
        let stdout =
            anyhow::Error::new(output::StdoutError(broken_pipe())).context("print the table");
        assert_eq!(report(&stdout), ExitCode::SUCCESS);
        // A reader process of ours that died: a failure, said.
        let child = anyhow::Error::new(broken_pipe()).context("contend: a writer's pipe");
        assert_eq!(report(&child), ExitCode::FAILURE);
        let other = anyhow::Error::new(output::StdoutError(io::Error::from_raw_os_error(
            libc::ENOSPC,
        )));
        assert_eq!(report(&other), ExitCode::FAILURE);
    }
}
