//! `pipespeed cat`: GNU cat (coreutils 9.1, with 9.6's rule for a file
//! that is both input and output, stricter where that rule destroys the
//! file: see [`input_is_output`](crate::copy::input_is_output)), byte
//! for byte, with the same messages and exit status, also when the binary
//! is called by the name `cat`. A read error names the file and cat goes
//! on; a write error ends it at once, as GNU's does.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::process::ExitCode;

use crate::cat::engine::{Engine, Failure, cat_file};
use crate::cat::format::FormatOptions;
use crate::quote::quote_file_name;
use crate::sys::fd_info;
use crate::sys::inherited::Stdio;
use crate::sys::signal::inherited_sigpipe;
use clap::Args;

use crate::cli::gnu::{
    HasArg, HelpVersion, Invocation, Tool, closed_error, help_command, multibyte_locale, no_splice,
    status,
};
use crate::cli::strerror;

/// The layout of `pipespeed cat --help`; the usage and the examples are
/// set at run time, with the name cat was called by.
const CAT_HELP: &str = "\
Usage: {usage}
{about}

With no FILE, or when FILE is -, read standard input.

{options}{after-help}";

/// `pipespeed cat`: GNU cat's command line, parsed as getopt_long does
/// (options anywhere before `--`, clustered short options, unambiguous
/// abbreviations of long ones, `-` as a file). No `-h`, no `-V`: GNU cat
/// has neither.
#[derive(Debug, Args)]
#[command(
    version,
    disable_help_flag = true,
    disable_version_flag = true,
    infer_long_args = true,
    args_override_self = true,
    help_template = CAT_HELP
)]
pub struct CatArgs {
    /// equivalent to -vET
    #[arg(short = 'A', long = "show-all")]
    pub show_all: bool,
    /// number nonempty output lines, overrides -n
    #[arg(short = 'b', long = "number-nonblank")]
    pub number_nonblank: bool,
    /// equivalent to -vE
    #[arg(short = 'e')]
    pub e: bool,
    /// display $ at end of each line
    #[arg(short = 'E', long = "show-ends")]
    pub show_ends: bool,
    /// number all output lines
    #[arg(short = 'n', long = "number")]
    pub number: bool,
    /// suppress repeated empty output lines
    #[arg(short = 's', long = "squeeze-blank")]
    pub squeeze_blank: bool,
    /// equivalent to -vT
    #[arg(short = 't')]
    pub t: bool,
    /// display TAB characters as ^I
    #[arg(short = 'T', long = "show-tabs")]
    pub show_tabs: bool,
    /// (ignored: output is never held back)
    #[arg(short = 'u')]
    pub u: bool,
    /// use ^ and M- notation, except for LFD and TAB
    #[arg(short = 'v', long = "show-nonprinting")]
    pub show_nonprinting: bool,
    #[command(flatten)]
    help: HelpVersion,
    /// Files to concatenate, - for standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<OsString>,
}

/// GNU cat: its getopt table (long options in the order of its table),
/// help and version.
pub(super) static CAT: Tool = Tool {
    name: "cat",
    long: &[
        ("number-nonblank", HasArg::No),
        ("number", HasArg::No),
        ("squeeze-blank", HasArg::No),
        ("show-nonprinting", HasArg::No),
        ("show-ends", HasArg::No),
        ("show-tabs", HasArg::No),
        ("show-all", HasArg::No),
    ],
    short: b"benstuvAET",
    help,
    version,
};

/// `--help`: the subcommand's help, with the name cat was called by.
fn help(program: &OsStr) -> String {
    let name = program.to_string_lossy();
    help_command::<CatArgs>("cat", program)
        .after_help(format!(
            "Examples:\n  {name} f - g  Output f's contents, then standard input, then g's contents.\n  \
             {name}        Copy standard input to standard output.\n\n{PAGE_REFERENCES}"
        ))
        .render_help()
        .to_string()
}

/// `--version`: which cat this is, in the form of GNU's first line.
fn version() -> String {
    format!(
        "cat (pipespeed) {}\nA drop-in for GNU cat (coreutils 9.1) on the pipespeed copy engine.\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The formatting GNU cat's options ask for (`-A` is `-vET`, `-e` is
/// `-vE`, `-t` is `-vT`; `-u` changes nothing).
fn format_options(args: &CatArgs) -> FormatOptions {
    FormatOptions {
        number: args.number,
        number_nonblank: args.number_nonblank,
        squeeze_blank: args.squeeze_blank,
        show_ends: args.show_ends || args.show_all || args.e,
        show_tabs: args.show_tabs || args.show_all || args.t,
        show_nonprinting: args.show_nonprinting || args.show_all || args.e || args.t,
    }
}

/// Runs cat: every file in turn to stdout.
pub(super) fn run(invocation: &Invocation, args: CatArgs) -> ExitCode {
    // GNU cat dies of SIGPIPE when its reader goes away, unless its parent
    // ignored SIGPIPE: then it is a write error, as it is here if the
    // default action could not be restored.
    let _ = inherited_sigpipe();
    let stdout = io::stdout();
    let out = stdout.as_fd();
    // GNU examines stdout first: closed, it is an error before any input.
    let out_info = match closed_error(Stdio::Stdout).map_or_else(|| fd_info(out), Err) {
        Ok(info) => info,
        Err(err) => {
            invocation.say(&[b"standard output: ", strerror(&err).as_bytes()]);
            return ExitCode::FAILURE;
        }
    };
    let mut engine = Engine::new(format_options(&args), !no_splice());
    let multibyte = multibyte_locale();
    let stdin = io::stdin();
    let dash = [OsString::from("-")];
    let names = if args.files.is_empty() {
        &dash[..]
    } else {
        &args.files[..]
    };
    let mut ok = true;
    let mut read_stdin = false;
    for name in names {
        read_stdin |= name == "-";
        let failure = match cat_file(name, stdin.as_fd(), out, &out_info, &mut engine) {
            Ok(()) => continue,
            Err(failure) => failure,
        };
        let quoted = quote_file_name(name.as_bytes(), multibyte);
        match failure {
            Failure::Read(err) => invocation.say(&[&quoted, b": ", strerror(&err).as_bytes()]),
            Failure::InputIsOutput => invocation.say(&[&quoted, b": input file is output file"]),
            Failure::Write(err) => return invocation.write_error(&err),
        }
        ok = false;
    }
    if let Err(err) = engine.finish(out) {
        return invocation.write_error(&err);
    }
    // GNU closes a stdin it read from, and reports a failure to.
    if let Some(err) = closed_error(Stdio::Stdin).filter(|_| read_stdin) {
        invocation.say(&[b"closing standard input: ", strerror(&err).as_bytes()]);
        ok = false;
    }
    status(ok)
}

/// What `--help` says of page references; docs/cat.md has the details.
const PAGE_REFERENCES: &str = "\
Files larger than 32 KiB, and smaller ones once 64 KiB have gone out, go into
pipes and stream sockets by splice(2): the reader gets references to the
file's page-cache pages, not copies, so a file overwritten in place after cat
has finished but before the reader has read it shows the reader the new
bytes. Set PIPESPEED_NO_SPLICE=1 to copy them instead (by read/write, as GNU
cat 9.1 does). Sockets that keep records
(SOCK_SEQPACKET, SOCK_DGRAM) are read a whole record at a time, and written
in records they take.

An input that is the output's file is refused (\"input file is output file\")
when the output stands past where it would be read, when both are one open
file (<>f >&0), and, with any option that changes the bytes, wherever the
two stand: only a plain copy rewrites a file in place.

Exit status: 0 if every file was copied, 1 otherwise (a file that cannot be
read or is the output, a write error, a closed standard input or output).
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::{CommandFactory, Parser};

    fn error_for(args: &[&str]) -> Option<String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        crate::cli::gnu::getopt_error(&args, &CAT).map(|line| String::from_utf8(line).unwrap())
    }

    #[test]
    fn the_getopt_table_is_the_parsers_option_set() {
        let cli = Cli::command();
        let cat = cli.find_subcommand("cat").unwrap();
        let mut longs: Vec<&str> = cat.get_arguments().filter_map(|a| a.get_long()).collect();
        let mut table: Vec<&str> = CAT.long_options().map(|(name, _)| *name).collect();
        longs.sort_unstable();
        table.sort_unstable();
        assert_eq!(longs, table);
        let mut shorts: Vec<u8> = cat
            .get_arguments()
            .filter_map(|a| a.get_short())
            .map(|c| c as u8)
            .collect();
        let mut table = CAT.short.to_vec();
        shorts.sort_unstable();
        table.sort_unstable();
        assert_eq!(shorts, table);
    }

    #[test]
    fn getopt_errors_read_as_glibcs() {
        assert_eq!(error_for(&["-n", "f", "--", "-z"]), None);
        assert_eq!(error_for(&["-nzq"]).unwrap(), "invalid option -- 'z'");
        assert_eq!(error_for(&["-n="]).unwrap(), "invalid option -- '='");
        assert_eq!(
            error_for(&["--foo=bar"]).unwrap(),
            "unrecognized option '--foo=bar'"
        );
        assert_eq!(
            error_for(&["--num=3"]).unwrap(),
            "option '--num=3' is ambiguous; possibilities: '--number-nonblank' '--number'"
        );
        assert_eq!(
            error_for(&["--number-n=1"]).unwrap(),
            "option '--number-nonblank' doesn't allow an argument"
        );
        assert_eq!(error_for(&["--number", "--show-a", "-", "f"]), None);
        assert!(
            error_for(&["--="])
                .unwrap()
                .ends_with("'--help' '--version'")
        );
    }

    #[test]
    fn strerror_drops_rusts_suffix() {
        let err = io::Error::from_raw_os_error(2);
        assert_eq!(strerror(&err), "No such file or directory");
        let err = io::Error::from(io::ErrorKind::WriteZero);
        assert_eq!(strerror(&err), err.to_string());
    }

    #[test]
    fn options_combine_as_gnus() {
        let cli = Cli::try_parse_from(["pipespeed", "cat", "-e", "f", "-t", "-bu"]).unwrap();
        let Some(crate::cli::Command::Cat(args)) = cli.command else {
            panic!("not cat");
        };
        let options = format_options(&args);
        assert!(options.show_ends && options.show_tabs && options.show_nonprinting);
        assert!(options.number_nonblank && !options.number);
        assert_eq!(args.files, ["f"]);
    }
}
