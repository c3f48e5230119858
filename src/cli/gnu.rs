//! What the GNU drop-ins (`cat`, `tee`, `yes`) share: being called by the
//! tool's name, glibc getopt's messages for a refused option, GNU's way of
//! saying an error, and the locale's quoting.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::ExitCode;

use crate::wait::write_all;

use crate::cli::{Cli, strerror};
use clap::CommandFactory;

/// Whether a long option takes an argument (as getopt's `has_arg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HasArg {
    /// `no_argument`.
    No,
    /// `optional_argument`: only as `--name=VALUE`.
    Optional,
}

/// One GNU tool: its name, getopt table, help and version.
pub(super) struct Tool {
    /// The subcommand, and the name a symbolic link to the binary has.
    pub name: &'static str,
    /// The long options, in the order of its getopt table (the order glibc
    /// lists the candidates of an ambiguous abbreviation in), but the
    /// `--help` and `--version` every table ends with ([`Tool::long_options`]).
    pub long: &'static [(&'static str, HasArg)],
    /// The short options (none takes an argument).
    pub short: &'static [u8],
    /// `--help`, given the name the tool was called by.
    pub help: fn(&OsStr) -> String,
    /// `--version`.
    pub version: fn() -> String,
}

/// The options that end every coreutils getopt table
/// (`GETOPT_HELP_OPTION_DECL`, `GETOPT_VERSION_OPTION_DECL` in its
/// system.h).
const HELP_VERSION: &[(&str, HasArg)] = &[("help", HasArg::No), ("version", HasArg::No)];

impl Tool {
    /// The whole getopt table, in order: the tool's long options, then
    /// `--help` and `--version`.
    pub(super) fn long_options(&self) -> impl Iterator<Item = &(&'static str, HasArg)> {
        self.long.iter().chain(HELP_VERSION)
    }
}

/// How the binary was asked to be a GNU tool: the name its messages
/// start with.
#[derive(Clone)]
pub(super) struct Invocation {
    /// `pipespeed NAME`, or argv\[0\] as given when the binary is called
    /// by the tool's name (GNU uses its argv\[0\] so).
    pub program: OsString,
    pub tool: &'static Tool,
}

impl Invocation {
    /// The invocation as `pipespeed NAME`.
    pub(super) fn subcommand(tool: &'static Tool) -> Invocation {
        Invocation {
            program: format!("pipespeed {}", tool.name).into(),
            tool,
        }
    }

    /// Whether `argv` asks for `tool`: `pipespeed NAME ...`, or any
    /// command line of a binary whose file name is NAME, which is
    /// rewritten into `pipespeed NAME ...` so that one parser serves
    /// both.
    ///
    /// With `POSIXLY_CORRECT` set, options end at the first operand, as
    /// getopt has them: a `--` is put in front of it.
    pub(super) fn detect(argv: &mut Vec<OsString>, tool: &'static Tool) -> Option<Invocation> {
        let invocation = match argv.first() {
            Some(argv0) if Path::new(argv0).file_name() == Some(OsStr::new(tool.name)) => {
                let program = argv0.clone();
                argv[0] = "pipespeed".into();
                argv.insert(1, tool.name.into());
                Invocation { program, tool }
            }
            _ if argv.get(1).is_some_and(|arg| arg == tool.name) => Invocation::subcommand(tool),
            _ => return None,
        };
        if std::env::var_os("POSIXLY_CORRECT").is_some() {
            let operand = argv[2..].iter().position(|arg| {
                let arg = arg.as_bytes();
                arg == b"--" || arg == b"-" || arg.first() != Some(&b'-')
            });
            if let Some(i) = operand.filter(|&i| argv[2 + i] != "--") {
                argv.insert(2 + i, "--".into());
            }
        }
        Some(invocation)
    }

    /// Help, version, or a usage error in GNU's words (`invalid option --
    /// 'z'`, ...) and its hint, with status 1.
    pub(super) fn clap_error(&self, err: clap::Error, argv: &[OsString]) -> ExitCode {
        use clap::error::ErrorKind;
        // Help cut short by its reader going away dies of SIGPIPE, as GNU's.
        let _ = crate::sys::signal::inherited_sigpipe();
        match err.kind() {
            ErrorKind::DisplayHelp => self.print((self.tool.help)(&self.program).as_bytes()),
            ErrorKind::DisplayVersion => self.print((self.tool.version)().as_bytes()),
            _ => {
                let args = argv.get(2..).unwrap_or_default();
                let line = getopt_error(args, self.tool).unwrap_or_else(|| {
                    // Not something getopt would refuse: say what clap says.
                    let text = err.render().to_string();
                    let first = text.lines().next().unwrap_or("bad usage");
                    first.strip_prefix("error: ").unwrap_or(first).into()
                });
                self.say(&[&line]);
                self.usage_hint()
            }
        }
    }

    /// `Try 'NAME --help' for more information.`, and status 1.
    pub(super) fn usage_hint(&self) -> ExitCode {
        let mut hint = b"Try '".to_vec();
        hint.extend_from_slice(self.program.as_bytes());
        hint.extend_from_slice(b" --help' for more information.\n");
        let _ = io::stderr().write_all(&hint);
        ExitCode::FAILURE
    }

    /// Writes `text` to stdout; a failure is GNU's write error.
    pub(super) fn print(&self, text: &[u8]) -> ExitCode {
        match write_all(io::stdout().as_fd(), text, |_| {}) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => self.write_error(&err),
        }
    }

    /// One message on stderr: the program name, `: `, then `parts`.
    pub(super) fn say(&self, parts: &[&[u8]]) {
        let mut line = self.program.as_bytes().to_vec();
        line.extend_from_slice(b": ");
        for part in parts {
            line.extend_from_slice(part);
        }
        line.push(b'\n');
        // As GNU's error(): a message that cannot be written is lost.
        let _ = io::stderr().write_all(&line);
    }

    /// `NAME: write error: ERROR`, status 1.
    pub(super) fn write_error(&self, err: &io::Error) -> ExitCode {
        self.say(&[b"write error: ", strerror(err).as_bytes()]);
        ExitCode::FAILURE
    }
}

/// A tool's command line (`argv` as [`Invocation::detect`] left it:
/// `pipespeed NAME ARGS...`), parsed by the tool's own options alone: the
/// whole command line's parser would build every subcommand first, 0.3-0.5
/// ms a reader waiting for the first byte counts (docs/cat.md).
pub(super) fn parse<A: clap::Args + clap::FromArgMatches>(
    argv: &[OsString],
) -> Result<A, clap::Error> {
    let name = argv.get(1).cloned().unwrap_or_default();
    let command = A::augment_args(clap::Command::new(name.to_string_lossy().into_owned()));
    let mut matches = command.try_get_matches_from(argv.get(1..).unwrap_or_default())?;
    A::from_arg_matches_mut(&mut matches)
}

/// The subcommand `name` of the whole command line, for its `--help`:
/// its usage line names `program`, the name the tool was called by, as
/// GNU's does.
pub(super) fn help_command<A: clap::Args>(name: &'static str, program: &OsStr) -> clap::Command {
    let mut cli = Cli::command();
    cli.build();
    let command = cli
        .find_subcommand(name)
        .cloned()
        .unwrap_or_else(|| A::augment_args(clap::Command::new(name)));
    command.override_usage(format!(
        "{} [OPTION]... [FILE]...",
        program.to_string_lossy()
    ))
}

/// `--help` and `--version` in GNU's words, for a tool whose clap flags
/// are off (GNU cat and tee have no `-h` and no `-V`).
#[derive(Debug, clap::Args)]
pub(super) struct HelpVersion {
    /// display this help and exit
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
    /// output version information and exit
    #[arg(long, action = clap::ArgAction::Version)]
    version: Option<bool>,
}

/// One argument as glibc's getopt_long takes it, given a tool's table.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Getopt<'a> {
    /// An operand, or short options the tool has.
    Other,
    /// A long option of the tool, by its name or a prefix of its name
    /// alone, and what follows `=`.
    Long(&'static str, Option<&'a [u8]>),
    /// An argument getopt refuses: its message.
    Refused(Vec<u8>),
}

/// The arguments of `args` as getopt_long meets them, given `tool`'s
/// table, in order, up to `--` (the end of the options). One pass: a
/// caller stops at the first [`Getopt::Refused`], as getopt does.
pub(super) fn getopt<'a>(args: &'a [OsString], tool: &Tool) -> impl Iterator<Item = Getopt<'a>> {
    args.iter()
        .map(|arg| arg.as_bytes())
        .take_while(|&arg| arg != b"--")
        .map(|arg| getopt_one(arg, tool))
}

/// What getopt_long makes of `arg`, given `tool`'s table.
fn getopt_one<'a>(arg: &'a [u8], tool: &Tool) -> Getopt<'a> {
    if let Some(long) = arg.strip_prefix(b"--") {
        let (name, value) = match long.iter().position(|&b| b == b'=') {
            Some(eq) => (&long[..eq], Some(&long[eq + 1..])),
            None => (long, None),
        };
        let exact = tool
            .long_options()
            .find(|(option, _)| option.as_bytes() == name);
        let candidates: Vec<(&'static str, HasArg)> = match exact {
            Some(&option) => vec![option],
            None => tool
                .long_options()
                .filter(|(option, _)| option.as_bytes().starts_with(name))
                .copied()
                .collect(),
        };
        match candidates[..] {
            [] => Getopt::Refused(long_option_refused(arg, &[])),
            [(option, HasArg::No)] if value.is_some() => Getopt::Refused(
                [
                    b"option '--",
                    option.as_bytes(),
                    b"' doesn't allow an argument",
                ]
                .concat(),
            ),
            [(option, _)] => Getopt::Long(option, value),
            _ => {
                let names: Vec<&str> = candidates.iter().map(|(option, _)| *option).collect();
                Getopt::Refused(long_option_refused(arg, &names))
            }
        }
    } else if let [b'-', cluster @ ..] = arg
        && let Some(&c) = cluster.iter().find(|c| !tool.short.contains(c))
    {
        Getopt::Refused([b"invalid option -- '", &[c][..], b"'"].concat())
    } else {
        Getopt::Other
    }
}

/// The message glibc's getopt_long prints for the first argument it
/// refuses in `args`, given `tool`'s table, or `None` if it refuses none.
pub(super) fn getopt_error(args: &[OsString], tool: &Tool) -> Option<Vec<u8>> {
    getopt(args, tool).find_map(|arg| match arg {
        Getopt::Refused(message) => Some(message),
        _ => None,
    })
}

/// getopt_long's words for the long option `arg` (as given, `=VALUE`
/// too) that is no option's name or prefix (`candidates` empty), or the
/// prefix of several (`candidates`, in the table's order).
pub(super) fn long_option_refused(arg: &[u8], candidates: &[&str]) -> Vec<u8> {
    if candidates.is_empty() {
        return [b"unrecognized option '", arg, b"'"].concat();
    }
    let mut line = [b"option '", arg, b"' is ambiguous; possibilities:"].concat();
    for option in candidates {
        line.extend_from_slice(b" '--");
        line.extend_from_slice(option.as_bytes());
        line.push(b'\'');
    }
    line
}

/// `EBADF` if `fd` was closed when we started (see
/// [`crate::sys::inherited`]).
pub(super) fn closed_error(fd: crate::sys::inherited::Stdio) -> Option<io::Error> {
    crate::sys::inherited::closed_at_start(fd).then(|| io::Error::from_raw_os_error(libc::EBADF))
}

/// GNU's status: 0 if all went well, else 1.
pub(super) fn status(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Whether the locale's character set is UTF-8, as setlocale would find
/// from the environment (which decides how file names are quoted). A
/// locale named in the environment but not installed counts as UTF-8 here
/// when its name says so, where glibc would fall back to C.
pub(super) fn multibyte_locale() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|var| std::env::var_os(var).filter(|value| !value.is_empty()))
        .is_some_and(|locale| {
            let locale = locale.to_string_lossy().to_ascii_lowercase();
            locale.contains("utf-8") || locale.contains("utf8")
        })
}

/// The variable that asks cat and tee to copy files rather than pass their pages
/// (see [`PAGE_REFERENCES`]): an environment variable, because every name
/// of a new option would change which abbreviations of GNU's long options
/// are ambiguous.
pub(super) const NO_SPLICE: &str = "PIPESPEED_NO_SPLICE";

/// Whether [`NO_SPLICE`] is set to anything but empty or `0`.
pub(super) fn no_splice() -> bool {
    std::env::var_os(NO_SPLICE).is_some_and(|value| !value.is_empty() && value != "0")
}
