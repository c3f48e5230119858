//! `pipespeed tee`: GNU tee (coreutils 9.10), with the same options,
//! messages and exit statuses, also when the binary is called by the name
//! `tee`, on the library's fan-out ([`crate::tee`]). Where GNU tee would
//! destroy a file it also reads (`tee f <f` truncates it, `tee -a f <f`
//! appends to it without end), that file is refused instead ("input file
//! is output file", as cat says), and the others are written.

use std::cell::Cell;
use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::process::ExitCode;

use crate::copy::{Rewrite, input_is_output};
use crate::quote::quote_file_name;
use crate::sys::inherited::Stdio;
use crate::sys::signal::{ignore_sigint, inherited_sigpipe};
use crate::sys::{FdInfo, FdKind, close, fd_info};
use crate::tee::{Ended, OnFailure, TeeOptions, fan_out};
use clap::{ArgAction, Args};

use crate::cli::gnu::{
    Getopt, HasArg, HelpVersion, Invocation, Tool, closed_error, getopt, help_command,
    multibyte_locale, no_splice, status,
};
use crate::cli::strerror;

/// The layout of `pipespeed tee --help`.
const TEE_HELP: &str = "\
Usage: {usage}
{about}

{options}{after-help}";

/// `pipespeed tee`: GNU tee's command line, parsed as getopt_long does.
#[derive(Debug, Args)]
#[command(
    version,
    disable_help_flag = true,
    disable_version_flag = true,
    infer_long_args = true,
    args_override_self = true,
    help_template = TEE_HELP
)]
pub struct TeeArgs {
    /// append to the given FILEs, do not overwrite
    #[arg(short = 'a', long = "append")]
    pub append: bool,
    /// ignore interrupt signals
    #[arg(short = 'i', long = "ignore-interrupts")]
    pub ignore_interrupts: bool,
    /// operate in a more appropriate MODE with pipes
    #[arg(short = 'p')]
    pub p: bool,
    /// set behavior on write error.  See MODE below
    #[arg(
        long = "output-error",
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "warn-nopipe",
        action = ArgAction::Append
    )]
    pub output_error: Vec<OsString>,
    #[command(flatten)]
    help: HelpVersion,
    /// Files to write to, as well as standard output (- is a file named -).
    #[arg(value_name = "FILE")]
    pub files: Vec<OsString>,
}

/// GNU tee: its getopt table, help and version.
pub(super) static TEE: Tool = Tool {
    name: "tee",
    long: &[
        ("append", HasArg::No),
        ("ignore-interrupts", HasArg::No),
        ("output-error", HasArg::Optional),
    ],
    short: b"aip",
    help,
    version,
};

/// What a write error does (`--output-error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// No option: a reader going away kills tee with SIGPIPE; other
    /// errors are said, and tee goes on with the other outputs.
    Sigpipe,
    /// Say every error, go on.
    Warn,
    /// Say every error but `EPIPE`, go on (`-p`).
    WarnNoPipe,
    /// Say the error, exit.
    Exit,
    /// Say the error and exit, but drop an output without a reader
    /// silently.
    ExitNoPipe,
}

/// `--output-error`'s values, in GNU's order.
const MODES: [(&str, Mode); 4] = [
    ("warn", Mode::Warn),
    ("warn-nopipe", Mode::WarnNoPipe),
    ("exit", Mode::Exit),
    ("exit-nopipe", Mode::ExitNoPipe),
];

impl Mode {
    /// Whether the "nopipe" rule holds: an output without a reader is
    /// dropped without a word.
    fn nopipe(self) -> bool {
        matches!(self, Mode::WarnNoPipe | Mode::ExitNoPipe)
    }

    /// Whether an error to say ends tee.
    fn exits(self) -> bool {
        matches!(self, Mode::Exit | Mode::ExitNoPipe)
    }

    /// Whether `err` on an output is said (and makes the status 1): all
    /// but `EPIPE`, which only `warn` and `exit` say.
    fn says(self, err: &io::Error) -> bool {
        err.raw_os_error() != Some(libc::EPIPE) || matches!(self, Mode::Warn | Mode::Exit)
    }
}

/// `--output-error=VALUE` as gnulib's argmatch reads it: the value, or a
/// unique abbreviation of one; `Err(true)` when ambiguous.
fn argmatch(value: &OsStr) -> Result<Mode, bool> {
    let value = value.as_bytes();
    if let Some(&(_, mode)) = MODES.iter().find(|(name, _)| name.as_bytes() == value) {
        return Ok(mode);
    }
    let mut found = MODES
        .iter()
        .filter(|(name, _)| name.as_bytes().starts_with(value));
    match (found.next(), found.next()) {
        (Some(&(_, mode)), None) => Ok(mode),
        (Some(_), Some(_)) => Err(true),
        (None, _) => Err(false),
    }
}

/// The mode asked for: the last of `-p` and `--output-error` on the
/// command line (GNU reads them in order), or [`Mode::Sigpipe`]. Every
/// `--output-error` is checked, in order, the first bad one refused (as
/// GNU's getopt loop refuses it), not only the last.
fn mode(args: &TeeArgs, argv: &[OsString]) -> Result<Mode, (OsString, bool)> {
    let mut output_error = None;
    for value in &args.output_error {
        output_error = Some(argmatch(value).map_err(|ambiguous| (value.clone(), ambiguous))?);
    }
    match (args.p, output_error) {
        (false, None) => Ok(Mode::Sigpipe),
        (true, None) => Ok(Mode::WarnNoPipe),
        (false, Some(mode)) => Ok(mode),
        (true, Some(mode)) => Ok(if p_comes_last(argv) {
            Mode::WarnNoPipe
        } else {
            mode
        }),
    }
}

/// Whether `-p` comes after the last `--output-error` among the options
/// of `argv` (those before `--`).
fn p_comes_last(argv: &[OsString]) -> bool {
    let mut p_last = false;
    for arg in argv.iter().map(|arg| arg.as_bytes()) {
        if arg == b"--" {
            break;
        }
        if let Some(long) = arg.strip_prefix(b"--") {
            let name = long.split(|&b| b == b'=').next().unwrap_or_default();
            if !name.is_empty() && b"output-error".starts_with(name) {
                p_last = false;
            }
        } else if arg.len() > 1 && arg[0] == b'-' && arg.contains(&b'p') {
            p_last = true;
        }
    }
    p_last
}

/// gnulib's argmatch failure: the value, the valid ones, the hint.
fn invalid_mode(invocation: &Invocation, value: &OsStr, ambiguous: bool) -> ExitCode {
    let (open, close): (&[u8], &[u8]) = if multibyte_locale() {
        ("\u{2018}".as_bytes(), "\u{2019}".as_bytes())
    } else {
        (b"'", b"'")
    };
    let what: &[u8] = if ambiguous {
        b"ambiguous argument "
    } else {
        b"invalid argument "
    };
    let quoted = |text: &[u8]| [open, text, close].concat();
    invocation.say(&[
        what,
        &quoted(value.as_bytes()),
        b" for ",
        &quoted(b"--output-error"),
    ]);
    let mut valid = b"Valid arguments are:\n".to_vec();
    for (name, _) in MODES {
        valid.extend_from_slice(&[b"  - ", &quoted(name.as_bytes())[..], b"\n"].concat());
    }
    let _ = io::Write::write_all(&mut io::stderr(), &valid);
    invocation.usage_hint()
}

/// A command line clap refused, or `--help` or `--version`: said as GNU's
/// getopt loop, meeting the arguments in order, says the first thing it
/// stops at, so a bad `--output-error` before a refused option (or
/// `--help`) is the one said.
pub(super) fn refused(invocation: &Invocation, err: clap::Error, argv: &[OsString]) -> ExitCode {
    let args = argv.get(2..).unwrap_or_default();
    for arg in getopt(args, &TEE) {
        match arg {
            Getopt::Refused(_) | Getopt::Long("help" | "version", _) => break,
            Getopt::Long("output-error", Some(value)) => {
                let value = OsStr::from_bytes(value);
                if let Err(ambiguous) = argmatch(value) {
                    return invalid_mode(invocation, value, ambiguous);
                }
            }
            _ => {}
        }
    }
    invocation.clap_error(err, argv)
}

/// `--help`: the subcommand's help, with the name tee was called by.
fn help(program: &OsStr) -> String {
    help_command::<TeeArgs>("tee", program)
        .about("Copy standard input to each FILE, and also to standard output.")
        .after_help(AFTER_HELP)
        .render_help()
        .to_string()
}

/// The rest of `--help`: GNU's modes, and what this tee does besides.
const AFTER_HELP: &str = "\
MODE determines behavior with write errors on the outputs:
  warn           diagnose errors writing to any output
  warn-nopipe    diagnose errors writing to any output not a pipe
  exit           exit on error writing to any output
  exit-nopipe    exit on error writing to any output not a pipe
The default MODE for the -p option is 'warn-nopipe'.
With \"nopipe\" MODEs, exit immediately if all outputs become broken pipes.
The default operation when --output-error is not specified, is to
exit immediately on error writing to a pipe, and diagnose errors
writing to non pipe outputs.

From a pipe, the bytes go to output pipes by tee(2) and to files and sockets
by splice(2): references to the pages, not copies (a file or socket gets a
pipe of its own, so that its errors are its own). A regular file as input is
spliced too (its page-cache pages: PIPESPEED_NO_SPLICE=1 reads it instead).
A FILE that is standard input's file is refused (\"input file is output
file\"), where GNU tee would truncate it or append to it without end.

Exit status: 0 on success, 1 if a FILE could not be opened or written (a
broken pipe counts only with --output-error=warn or exit), the input could
not be read or closed; 141 (SIGPIPE) when a reader goes away, without -p or
--output-error.
";

/// `--version`: which tee this is, in the form of GNU's first line.
fn version() -> String {
    format!(
        "tee (pipespeed) {}\nA drop-in for GNU tee (coreutils 9.10) on the pipespeed fan-out.\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// One output: its name in messages and its descriptor.
struct Output {
    name: Vec<u8>,
    file: Option<OwnedFd>,
}

/// Runs tee: standard input to standard output and every FILE.
/// `argv` is the command line clap parsed (`pipespeed tee ARGS...`, with
/// the `--` that `POSIXLY_CORRECT` puts in), for the order of `-p` and
/// `--output-error`.
pub(super) fn run(invocation: &Invocation, args: TeeArgs, argv: &[OsString]) -> ExitCode {
    let mode = match mode(&args, argv) {
        Ok(mode) => mode,
        Err((value, ambiguous)) => return invalid_mode(invocation, &value, ambiguous),
    };
    if mode == Mode::Sigpipe {
        // A reader going away kills tee silently, as GNU's, unless the
        // parent ignored SIGPIPE (then it is an EPIPE, dropped silently).
        let _ = inherited_sigpipe();
    }
    if args.ignore_interrupts {
        let _ = ignore_sigint();
    }
    let multibyte = multibyte_locale();
    let stdin = io::stdin();
    let input = stdin.as_fd();
    let input_info = fd_info(input).ok();
    let mut ok = true;
    let mut outputs = vec![Output {
        name: quote_file_name(b"standard output", multibyte),
        file: None,
    }];
    let say = |name: &[u8], err: &str| invocation.say(&[name, b": ", err.as_bytes()]);
    let stdout = io::stdout();
    if let Some(info) = &input_info
        && let Ok(out_info) = fd_info(stdout.as_fd())
        && input_is_output(input, info, stdout.as_fd(), &out_info, Rewrite::Verbatim)
    {
        say(&outputs[0].name, "input file is output file");
        if mode.exits() {
            return ExitCode::FAILURE;
        }
        outputs.clear();
        ok = false;
    }
    for name in &args.files {
        let quoted = quote_file_name(name.as_bytes(), multibyte);
        match open_output(name, args.append, input, input_info.as_ref()) {
            Ok(file) => outputs.push(Output {
                name: quoted,
                file: Some(file),
            }),
            Err(err) => {
                say(&quoted, &strerror(&err));
                if mode.exits() {
                    return ExitCode::FAILURE;
                }
                ok = false;
            }
        }
    }
    let fds: Vec<BorrowedFd<'_>> = outputs
        .iter()
        .map(|o| o.file.as_ref().map_or(stdout.as_fd(), |f| f.as_fd()))
        .collect();
    let options = TeeOptions {
        // gnulib's iopoll_input_ok: not for an input always ready.
        watch_pipes: mode.nopipe()
            && !input_info
                .as_ref()
                .is_some_and(|i| matches!(i.kind, FdKind::Regular | FdKind::BlockDevice)),
        page_references: !no_splice(),
        ..TeeOptions::default()
    };
    let failed = Cell::new(false);
    let names = &outputs;
    let result = fan_out(input, &fds, options, |i, err| {
        if mode.says(&err) {
            say(&names[i].name, &strerror(&err));
            failed.set(true);
            if mode.exits() {
                return OnFailure::Stop;
            }
        }
        OnFailure::Drop
    });
    ok &= !failed.get();
    match result {
        Ok(teed) if teed.ended == Ended::Stopped => return ExitCode::FAILURE,
        Ok(_) => {}
        Err(err) => {
            invocation.say(&[b"read error: ", strerror(&err.error).as_bytes()]);
            ok = false;
        }
    }
    drop(fds);
    // The files, not standard output, are closed, and a failure said.
    for output in outputs {
        if let Some(file) = output.file
            && let Err(err) = close(file)
        {
            say(&output.name, &strerror(&err));
            ok = false;
        }
    }
    if let Some(err) = closed_error(Stdio::Stdin) {
        invocation.say(&[b"standard input: ", strerror(&err).as_bytes()]);
        return ExitCode::FAILURE;
    }
    status(ok)
}

/// Opens `name` for writing as GNU tee does (created with mode 0666 less
/// the umask, truncated unless appending), refusing a file that is the
/// input's: truncating it, or appending to it while reading it, would
/// destroy it.
fn open_output(
    name: &OsStr,
    append: bool,
    input: BorrowedFd<'_>,
    input_info: Option<&FdInfo>,
) -> io::Result<OwnedFd> {
    let input_file = input_info.filter(|info| info.kind == FdKind::Regular);
    if !append
        && let Some(info) = input_file
        && let Ok(meta) = std::fs::metadata(name)
        && meta.dev() == info.dev
        && meta.ino() == info.ino
    {
        return Err(input_is_output_error());
    }
    let file: File = OpenOptions::new()
        .write(true)
        .create(true)
        .append(append)
        .truncate(!append)
        .open(name)?;
    if let Some(info) = input_info
        && let Ok(out_info) = fd_info(&file)
        && input_is_output(input, info, file.as_fd(), &out_info, Rewrite::Verbatim)
    {
        return Err(input_is_output_error());
    }
    Ok(file.into())
}

/// The error "input file is output file" (as cat words it).
fn input_is_output_error() -> io::Error {
    io::Error::other("input file is output file")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_error_values_match_as_argmatch_does() {
        let m = |v: &str| argmatch(OsStr::new(v));
        assert_eq!(m("warn"), Ok(Mode::Warn));
        assert_eq!(m("warn-"), Ok(Mode::WarnNoPipe));
        assert_eq!(m("exit-"), Ok(Mode::ExitNoPipe));
        assert_eq!(m("ex"), Err(true));
        assert_eq!(m("w"), Err(true));
        assert_eq!(m(""), Err(true));
        assert_eq!(m("foo"), Err(false));
        assert_eq!(m("warnx"), Err(false));
    }

    #[test]
    fn the_last_of_p_and_output_error_wins() {
        let argv = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(p_comes_last(&argv(&["tee", "--output-error=exit", "-ap"])));
        assert!(!p_comes_last(&argv(&["tee", "-p", "--output-e=exit", "f"])));
        assert!(!p_comes_last(&argv(&["tee", "--output-error", "--", "-p"])));
    }

    #[test]
    fn only_warn_and_exit_say_a_broken_pipe() {
        let epipe = io::Error::from_raw_os_error(libc::EPIPE);
        let eio = io::Error::from_raw_os_error(libc::EIO);
        for (mode, says_epipe) in [
            (Mode::Sigpipe, false),
            (Mode::Warn, true),
            (Mode::WarnNoPipe, false),
            (Mode::Exit, true),
            (Mode::ExitNoPipe, false),
        ] {
            assert_eq!(mode.says(&epipe), says_epipe, "{mode:?}");
            assert!(mode.says(&eio), "{mode:?}");
        }
    }
}
