//! `pipespeed yes`: GNU yes (coreutils 9.12), byte for byte, with the
//! same help, messages and exit statuses, also when the binary is called
//! by the name `yes`, on the library's engine ([`crate::yes`]): pages of
//! lines vmspliced into a pipe, written elsewhere.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::process::ExitCode;

use clap::Args;

use crate::cli::gnu::{Getopt, Invocation, Tool, closed_error, getopt, no_splice};
use crate::cli::strerror;
use crate::sys::inherited::Stdio;
use crate::sys::signal::inherited_sigpipe;

/// `pipespeed yes [STRING]...`: for the command line's help, manual page
/// and completions only; the arguments are read as GNU yes reads them
/// ([`run`]), before the command line's parser sees them.
#[derive(Debug, Args)]
#[command(disable_help_flag = true, disable_version_flag = true)]
pub struct YesArgs {
    /// The words of the line (`y` without any); --help and --version
    /// before a `--` are GNU's options.
    #[arg(
        value_name = "STRING",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub strings: Vec<OsString>,
}

/// GNU yes: no options but `--help` and `--version` (gnulib's
/// `parse_gnu_standard_options_only`), help and version.
pub(super) static YES: Tool = Tool {
    name: "yes",
    long: &[],
    short: b"",
    help,
    version,
};

/// `--help`, as GNU yes 9.12 prints it, with the name yes was called by.
fn help(program: &OsStr) -> String {
    let name = program.to_string_lossy();
    format!(
        "Usage: {name} [STRING]...\n  or:  {name} OPTION\n\
         Repeatedly output a line with all specified STRING(s), or 'y'.\n\n\
         {}{}\n\
         Report bugs to: <bug-coreutils@gnu.org>.\n\
         GNU coreutils home page: <https://www.gnu.org/software/coreutils/>\n\
         General help using GNU software: <https://www.gnu.org/gethelp/>\n\
         Full documentation <https://www.gnu.org/software/coreutils/yes>\n\
         or available locally via: info '(coreutils) yes invocation'\n",
        option_line("--help", "display this help and exit"),
        option_line("--version", "output version information and exit"),
    )
}

/// One option of the help, as coreutils' `oputs` prints it: with a
/// terminal hyperlink to its manual and in bold unless `TERM` is unset,
/// empty or `dumb` (whether stdout is a terminal does not matter: the
/// markup is meant for `less` and `grep` too).
fn option_line(option: &str, description: &str) -> String {
    let plain = std::env::var_os("TERM").is_none_or(|term| term.is_empty() || term == "dumb");
    if plain {
        return format!("      {option}\n         {description}\n");
    }
    format!(
        "      \x1b]8;;https://www.gnu.org/software/coreutils/yes#yes{option}\x1b\\\
         \x1b[1m{option}\x1b[0m\x1b]8;;\x1b\\\n         {description}\n"
    )
}

/// `--version`: which yes this is, in the form of GNU's first line.
fn version() -> String {
    format!(
        "yes (pipespeed) {}\nA drop-in for GNU yes (coreutils 9.12) on pipespeed's vmsplice of pages never written again.\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// Runs yes with `args` (the arguments after the program's name, as
/// given): help, version or a refused option at the first option getopt
/// meets, as GNU's single getopt_long call; otherwise the operands, the
/// first `--` left out, repeated until the output fails.
pub(super) fn run(invocation: &Invocation, args: &[OsString]) -> ExitCode {
    // GNU yes dies of SIGPIPE when its reader goes away, unless its parent
    // ignored SIGPIPE: then it is a write error.
    let _ = inherited_sigpipe();
    for arg in getopt(args, &YES) {
        match arg {
            Getopt::Other => {}
            Getopt::Long("help", _) => {
                return invocation.print((YES.help)(&invocation.program).as_bytes());
            }
            Getopt::Long(_, _) => return invocation.print((YES.version)().as_bytes()),
            Getopt::Refused(message) => {
                invocation.say(&[&message]);
                return invocation.usage_hint();
            }
        }
    }
    let mut operands: Vec<&[u8]> = args.iter().map(|arg| arg.as_bytes()).collect();
    if let Some(end) = operands.iter().position(|&arg| arg == b"--") {
        operands.remove(end);
    }
    let line = crate::yes::line(&operands);
    let stdout = io::stdout();
    let err = closed_error(Stdio::Stdout)
        .unwrap_or_else(|| crate::yes::repeat(&line, stdout.as_fd(), !no_splice()));
    invocation.say(&[b"standard output: ", strerror(&err).as_bytes()]);
    ExitCode::FAILURE
}
