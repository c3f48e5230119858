//! How the binary was asked to be pv: `pipespeed pv ...`, or called `pv`
//! (a symlink), with pv's words: messages start `pv:`, `-h` lists the
//! options in pv's layout, bad usage exits 64.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::process::ExitCode;

use crate::pv::remote::{self, Request};
use crate::wait::write_all;
use clap::Args;

use super::args::Refused;
use super::{EXIT_CONTROL, PvArgs};
use crate::cli::strerror;

/// pv's status for bad usage (pv 1.6: an unknown option or a bad value).
const EXIT_PV_USAGE: u8 = 64;
/// pipespeed's status for bad usage.
const EXIT_USAGE: u8 = 2;

/// The name messages start with, and whether the binary is called `pv`.
#[derive(Debug, Clone)]
pub(crate) struct Invocation {
    program: String,
    called_pv: bool,
    /// The command line's arguments after the program's name, to say a
    /// missing value as getopt says it (`-s` or `--size`).
    args: Vec<OsString>,
}

impl Default for Invocation {
    fn default() -> Invocation {
        Invocation {
            program: "pipespeed pv".into(),
            called_pv: false,
            args: Vec::new(),
        }
    }
}

impl Invocation {
    /// Whether `argv` asks for pv: `pipespeed pv ...`, or any command line
    /// of a binary whose file name is `pv`, rewritten into `pipespeed pv
    /// ...` so that one parser serves both.
    pub(crate) fn detect(argv: &mut Vec<OsString>) -> Option<Invocation> {
        match argv.first() {
            Some(argv0) if Path::new(argv0).file_name() == Some(OsStr::new("pv")) => {
                let args = argv[1..].to_vec();
                argv[0] = "pipespeed".into();
                argv.insert(1, "pv".into());
                Some(Invocation {
                    program: "pv".into(),
                    called_pv: true,
                    args,
                })
            }
            _ if argv.get(1).is_some_and(|arg| arg == "pv") => Some(Invocation::default()),
            _ => None,
        }
    }

    /// Help (pv's layout when called `pv`), or a usage error on one line
    /// (pipespeed's, as `pipespeed pv`).
    pub(crate) fn clap_error(&self, err: clap::Error) -> ExitCode {
        use clap::error::ErrorKind;
        if !self.called_pv {
            return crate::cli::clap_error(err);
        }
        match err.kind() {
            ErrorKind::DisplayHelp => self.print(&help()),
            ErrorKind::DisplayVersion => self.print(&version()),
            _ => {
                match self.pv_words(&err) {
                    Some(words) => self.say(&words),
                    None => {
                        let text = err.render().to_string();
                        let first = text.lines().next().unwrap_or("bad usage");
                        self.say(first.strip_prefix("error: ").unwrap_or(first));
                    }
                }
                ExitCode::from(EXIT_PV_USAGE)
            }
        }
    }

    /// What pv 1.12 says for the usage error `err`: getopt's two lines
    /// for an unknown option or a missing value, `-s: x: numeric value
    /// not understood` for a value it cannot read. `None` for the errors
    /// pv has no words for (clap's first line is said then).
    fn pv_words(&self, err: &clap::Error) -> Option<String> {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        let context = |kind| match err.get(kind) {
            Some(ContextValue::String(text)) => Some(text.as_str()),
            _ => None,
        };
        let try_help = "\nTry `pv --help' for more information.";
        match err.kind() {
            ErrorKind::UnknownArgument => {
                let arg = context(ContextKind::InvalidArg)?;
                Some(match arg.strip_prefix("--") {
                    Some(_) => {
                        // getopt says the argument whole, `=VALUE` too.
                        let given = self
                            .args
                            .iter()
                            .filter_map(|a| a.to_str())
                            .find(|a| a.split('=').next() == Some(arg))
                            .unwrap_or(arg);
                        let prefix = arg.trim_start_matches('-');
                        let command = PvArgs::augment_args(clap::Command::new("pv"));
                        let mut possible: Vec<&str> = command
                            .get_arguments()
                            .filter_map(|a| a.get_long())
                            .filter(|long| long.starts_with(prefix))
                            .collect();
                        if possible.len() < 2 {
                            possible.clear();
                        }
                        let words =
                            crate::cli::gnu::long_option_refused(given.as_bytes(), &possible);
                        format!("{}{try_help}", String::from_utf8_lossy(&words))
                    }
                    None => {
                        let letter = arg.strip_prefix('-')?.chars().next()?;
                        format!("invalid option -- '{letter}'{try_help}")
                    }
                })
            }
            ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
                let (short, long) = option_of(context(ContextKind::InvalidArg)?)?;
                let value = context(ContextKind::InvalidValue).unwrap_or_default();
                let given = self.args.last().and_then(|a| a.to_str());
                if err.kind() == ErrorKind::InvalidValue && value.is_empty() {
                    // No value at all: the option ended the command line.
                    return Some(match given {
                        Some(given) if given.starts_with("--") => {
                            format!("option '--{long}' requires an argument{try_help}")
                        }
                        _ => format!("option requires an argument -- '{short}'{try_help}"),
                    });
                }
                let cause = std::error::Error::source(err)
                    .and_then(|source| source.downcast_ref::<Refused>())
                    .map(|why| why.pv.clone())?;
                // pv 1.12 names no value for -d.
                Some(match short {
                    'd' => format!("-d: {cause}"),
                    _ => format!("-{short}: {value}: {cause}"),
                })
            }
            ErrorKind::ArgumentConflict => {
                let with = |id: &str| {
                    [ContextKind::InvalidArg, ContextKind::PriorArg]
                        .into_iter()
                        .any(|kind| match err.get(kind) {
                            Some(ContextValue::String(arg)) => arg.starts_with(id),
                            Some(ContextValue::Strings(args)) => {
                                args.iter().any(|arg| arg.starts_with(id))
                            }
                            _ => false,
                        })
                };
                if with("--watchfd") {
                    // pv 1.12 names -o; -U and -M are named as well.
                    Some(if with("--output") {
                        "-o: cannot transfer files when watching file descriptors".into()
                    } else if with("--store-and-forward") {
                        "-U: cannot transfer files when watching file descriptors".into()
                    } else if with("--monitor") {
                        "-M: cannot run a command when watching file descriptors".into()
                    } else {
                        "cannot use line mode or transfer modifier options when watching file \
                         descriptors"
                            .into()
                    })
                } else if with("--remote") && with("--query") {
                    Some("cannot use remote control and remote query together".into())
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Writes `text` to stdout.
    pub(crate) fn print(&self, text: &str) -> ExitCode {
        match write_all(io::stdout().as_fd(), text.as_bytes(), |_| {}) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                self.say(&format!("write error: {}", strerror(&err)));
                ExitCode::FAILURE
            }
        }
    }

    /// One message on stderr, after the program's name.
    pub(crate) fn say(&self, message: &str) {
        let _ = writeln!(io::stderr(), "{}: {message}", self.program);
    }

    /// Bad usage found after parsing: the message and pv's status (64), or
    /// pipespeed's (2).
    pub(crate) fn usage(&self, message: &str) -> ExitCode {
        self.say(message);
        ExitCode::from(if self.called_pv {
            EXIT_PV_USAGE
        } else {
            EXIT_USAGE
        })
    }

    /// `-R` or `-Q`: sends `request` to the meter of `pid`; a query's
    /// answer is printed.
    pub(crate) fn control(&self, pid: u32, request: &Request) -> ExitCode {
        let verb = match request {
            Request::Change(_) => "-R",
            Request::Query => "-Q",
        };
        match remote::send(pid, request) {
            Ok(reply) => match (reply.error, reply.line) {
                (Some(err), _) => {
                    self.say(&format!("{verb} {pid}: {err}"));
                    ExitCode::from(EXIT_CONTROL)
                }
                (None, Some(line)) => self.print(&format!("{line}\n")),
                (None, None) => ExitCode::SUCCESS,
            },
            // pv 1.12's words for a process that is not there.
            Err(err) if err.raw_os_error() == Some(libc::ESRCH) => {
                self.say(&format!("pid {pid}: {}", strerror(&err)));
                ExitCode::from(EXIT_CONTROL)
            }
            Err(err) => {
                self.say(&format!("{verb} {pid}: {}", strerror(&err)));
                ExitCode::from(EXIT_CONTROL)
            }
        }
    }
}

/// The short and long names of the option clap calls `--size <SIZE>`.
fn option_of(named: &str) -> Option<(char, String)> {
    let long = named.strip_prefix("--")?.split([' ', '=']).next()?;
    let command = PvArgs::augment_args(clap::Command::new("pv"));
    let arg = command
        .get_arguments()
        .find(|arg| arg.get_long() == Some(long))?;
    Some((arg.get_short()?, long.to_owned()))
}

/// `pv --version`.
pub(super) fn version() -> String {
    format!(
        "pv (pipespeed) {}\nA drop-in for pv (Andrew Wood's Pipe Viewer) on the pipespeed copy engine.\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// pv's `--help`: usage, then one option a line, `  -R, --remote PID`
/// padded to a column, and its help's first sentence.
pub(super) fn help() -> String {
    let mut pv = PvArgs::augment_args(clap::Command::new("pv"));
    pv.build();
    let mut text = String::from(
        "Usage: pv [OPTION] [FILE]...\nCopy each FILE (standard input without one) to standard output,\nshowing how the copy goes.\n",
    );
    let mut heading = None;
    for arg in pv.get_arguments() {
        let (Some(short), Some(long)) = (arg.get_short(), arg.get_long()) else {
            continue;
        };
        if arg.get_help_heading() != heading {
            heading = arg.get_help_heading();
            text.push('\n');
        }
        let value = arg
            .get_value_names()
            .and_then(|names| names.first())
            .filter(|_| arg.get_action().takes_values())
            .map(|name| format!(" {name}"))
            .unwrap_or_default();
        let left = format!("  -{short}, --{long}{value}");
        let about = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let about = about.lines().next().unwrap_or_default();
        if left.len() > 25 {
            // Too long for the column: the help goes on the next line.
            text.push_str(&format!("{left}\n{:27}{about}\n", ""));
        } else {
            text.push_str(&format!("{left:<27}{about}\n"));
        }
    }
    text.push_str("  -h, --help               print this help and exit\n");
    text
}
