//! `pipespeed cat`: GNU cat (coreutils 9.1, with 9.6's rule for a file
//! that is both input and output, stricter where that rule destroys the
//! file: see [`input_is_output`](pipespeed::copy::input_is_output)), byte
//! for byte, with the same messages and exit status, also when the binary
//! is called by the name `cat`.
//!
//! Each file is opened, checked, and either handed to the copy engine (no
//! option changes the bytes) or read in chunks, run through the library's
//! [`Formatter`] and written out after each chunk. A read error names the
//! file and cat goes on; a write error ends it at once, as GNU's does.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, CommandFactory};
use pipespeed::cat::engine::{Engine, Failure, cat_file};
use pipespeed::cat::format::FormatOptions;
use pipespeed::quote::quote_file_name;
use pipespeed::sys::fd_info;
use pipespeed::sys::inherited::{self, Stdio};
use pipespeed::sys::signal::inherited_sigpipe;
use pipespeed::wait::write_all;

use crate::args::{CatArgs, Cli};
use crate::strerror;

/// GNU cat's long options in the order of its getopt table, which is the
/// order glibc lists the candidates of an ambiguous abbreviation in.
const LONG_OPTIONS: [&str; 9] = [
    "number-nonblank",
    "number",
    "squeeze-blank",
    "show-nonprinting",
    "show-ends",
    "show-tabs",
    "show-all",
    "help",
    "version",
];

/// GNU cat's short options.
const SHORT_OPTIONS: &[u8] = b"benstuvAET";

/// How the binary was asked to be cat: the name its messages start with.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// `pipespeed cat`, or argv\[0\] as given when the binary is called
    /// `cat` (GNU uses its argv\[0\] so).
    program: OsString,
}

impl Default for Invocation {
    fn default() -> Invocation {
        Invocation {
            program: "pipespeed cat".into(),
        }
    }
}

impl Invocation {
    /// Whether `argv` asks for cat: `pipespeed cat ...`, or any command
    /// line of a binary whose file name is `cat`, which is rewritten into
    /// `pipespeed cat ...` so that one parser serves both.
    ///
    /// With `POSIXLY_CORRECT` set, options end at the first operand, as
    /// getopt has them: a `--` is put in front of it.
    pub fn detect(argv: &mut Vec<OsString>) -> Option<Invocation> {
        let invocation = match argv.first() {
            Some(argv0) if Path::new(argv0).file_name() == Some(OsStr::new("cat")) => {
                let program = argv0.clone();
                argv[0] = "pipespeed".into();
                argv.insert(1, "cat".into());
                Invocation { program }
            }
            _ if argv.get(1).is_some_and(|arg| arg == "cat") => Invocation::default(),
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
    pub fn clap_error(&self, err: clap::Error, argv: &[OsString]) -> ExitCode {
        use clap::error::ErrorKind;
        sigpipe_kills();
        match err.kind() {
            ErrorKind::DisplayHelp => self.print(help(&self.program).as_bytes()),
            ErrorKind::DisplayVersion => self.print(version().as_bytes()),
            _ => {
                let line = getopt_error(argv.get(2..).unwrap_or_default()).unwrap_or_else(|| {
                    // Not something getopt would refuse: say what clap says.
                    let text = err.render().to_string();
                    let first = text.lines().next().unwrap_or("bad usage");
                    first.strip_prefix("error: ").unwrap_or(first).into()
                });
                self.say(&[&line]);
                let mut hint = b"Try '".to_vec();
                hint.extend_from_slice(self.program.as_bytes());
                hint.extend_from_slice(b" --help' for more information.\n");
                let _ = io::stderr().write_all(&hint);
                ExitCode::FAILURE
            }
        }
    }

    /// Writes `text` to stdout; a failure is GNU's write error.
    fn print(&self, text: &[u8]) -> ExitCode {
        match write_all(io::stdout().as_fd(), text, |_| {}) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => self.write_error(&err),
        }
    }

    /// One message on stderr: the program name, `: `, then `parts`.
    fn say(&self, parts: &[&[u8]]) {
        let mut line = self.program.as_bytes().to_vec();
        line.extend_from_slice(b": ");
        for part in parts {
            line.extend_from_slice(part);
        }
        line.push(b'\n');
        // As GNU's error(): a message that cannot be written is lost.
        let _ = io::stderr().write_all(&line);
    }

    fn write_error(&self, err: &io::Error) -> ExitCode {
        self.say(&[b"write error: ", strerror(err).as_bytes()]);
        ExitCode::FAILURE
    }
}

/// cat's command line (`argv` as [`Invocation::detect`] left it:
/// `pipespeed cat ARGS...`), parsed by cat's own options alone. The whole
/// command line's parser builds every subcommand's options and the build
/// description first, which made `pipespeed cat`'s start 0.3-0.5 ms slower
/// than uutils cat's, time a reader waiting for the first byte counts
/// (docs/cat.md).
pub fn parse(argv: &[OsString]) -> Result<CatArgs, clap::Error> {
    use clap::FromArgMatches;
    let command = CatArgs::augment_args(clap::Command::new("cat"));
    let mut matches = command.try_get_matches_from(argv.get(1..).unwrap_or_default())?;
    CatArgs::from_arg_matches_mut(&mut matches)
}

/// GNU cat dies of `SIGPIPE` when its reader goes away, silently; so must
/// a drop-in, unless its parent ignored `SIGPIPE`: then the reader going
/// away is a write error ("write error: Broken pipe", status 1), as in
/// GNU. Restoring the default action cannot fail for `SIGPIPE`, and if it
/// did, a reader going away would be reported as a write error.
fn sigpipe_kills() {
    let _ = inherited_sigpipe();
}

/// `--help`: the subcommand's help, with the name cat was called by.
fn help(program: &OsStr) -> String {
    let name = program.to_string_lossy();
    let mut cli = Cli::command();
    cli.build();
    let cat = cli
        .find_subcommand("cat")
        .cloned()
        .unwrap_or_else(|| CatArgs::augment_args(clap::Command::new("cat")));
    cat.override_usage(format!("{name} [OPTION]... [FILE]..."))
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

/// The message glibc's getopt_long prints for the first argument it
/// refuses, or `None` if it refuses none.
fn getopt_error(args: &[OsString]) -> Option<Vec<u8>> {
    let message = |parts: &[&[u8]]| Some(parts.concat());
    for arg in args {
        let arg = arg.as_bytes();
        if arg == b"--" {
            return None;
        }
        if let Some(long) = arg.strip_prefix(b"--") {
            let (name, value) = match long.iter().position(|&b| b == b'=') {
                Some(eq) => (&long[..eq], Some(&long[eq + 1..])),
                None => (long, None),
            };
            let exact = LONG_OPTIONS.iter().find(|option| option.as_bytes() == name);
            let candidates: Vec<&str> = match exact {
                Some(option) => vec![option],
                None => LONG_OPTIONS
                    .iter()
                    .filter(|option| option.as_bytes().starts_with(name))
                    .copied()
                    .collect(),
            };
            match candidates[..] {
                [] => return message(&[b"unrecognized option '", arg, b"'"]),
                [option] if value.is_some() => {
                    return message(&[
                        b"option '--",
                        option.as_bytes(),
                        b"' doesn't allow an argument",
                    ]);
                }
                [_] => {}
                _ => {
                    let mut line = [b"option '", arg, b"' is ambiguous; possibilities:"].concat();
                    for option in candidates {
                        line.extend_from_slice(b" '--");
                        line.extend_from_slice(option.as_bytes());
                        line.push(b'\'');
                    }
                    return Some(line);
                }
            }
        } else if let [b'-', cluster @ ..] = arg
            && let Some(&c) = cluster.iter().find(|c| !SHORT_OPTIONS.contains(c))
        {
            return message(&[b"invalid option -- '", &[c], b"'"]);
        }
    }
    None
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
pub fn run(invocation: &Invocation, args: CatArgs) -> ExitCode {
    sigpipe_kills();
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
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `EBADF` if `fd` was closed when we started (see
/// [`pipespeed::sys::inherited`]).
fn closed_error(fd: Stdio) -> Option<io::Error> {
    inherited::closed_at_start(fd).then(|| io::Error::from_raw_os_error(libc::EBADF))
}

/// The variable that asks cat to copy files rather than pass their pages
/// (see [`PAGE_REFERENCES`]): an environment variable, because every name
/// of a new option would change which abbreviations of GNU's long options
/// are ambiguous.
const NO_SPLICE: &str = "PIPESPEED_NO_SPLICE";

/// Whether [`NO_SPLICE`] is set to anything but empty or `0`.
fn no_splice() -> bool {
    std::env::var_os(NO_SPLICE).is_some_and(|value| !value.is_empty() && value != "0")
}

/// What `--help` says of page references; docs/cat.md has the details.
const PAGE_REFERENCES: &str = "\
Files larger than 32 KiB go into pipes and stream sockets by splice(2): the
reader gets references to the file's page-cache pages, not copies, so a file
overwritten in place after cat has finished but before the reader has read
it shows the reader the new bytes. Set PIPESPEED_NO_SPLICE=1 to copy them
instead (by read/write, as GNU cat 9.1 does). Sockets that keep records
(SOCK_SEQPACKET, SOCK_DGRAM) are read a whole record at a time, and written
in records they take.

An input that is the output's file is refused (\"input file is output file\")
when the output stands past where it would be read, when both are one open
file (<>f >&0), and, with any option that changes the bytes, wherever the
two stand: only a plain copy rewrites a file in place.

Exit status: 0 if every file was copied, 1 otherwise (a file that cannot be
read or is the output, a write error, a closed standard input or output).
";

/// Whether the locale's character set is UTF-8, as setlocale would find
/// from the environment (which decides how file names are quoted). A
/// locale named in the environment but not installed counts as UTF-8 here
/// when its name says so, where glibc would fall back to C.
fn multibyte_locale() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|var| std::env::var_os(var).filter(|value| !value.is_empty()))
        .is_some_and(|locale| {
            let locale = locale.to_string_lossy().to_ascii_lowercase();
            locale.contains("utf-8") || locale.contains("utf8")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn error_for(args: &[&str]) -> Option<String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        getopt_error(&args).map(|line| String::from_utf8(line).unwrap())
    }

    #[test]
    fn the_getopt_table_is_the_parsers_option_set() {
        let cli = Cli::command();
        let cat = cli.find_subcommand("cat").unwrap();
        let mut longs: Vec<&str> = cat.get_arguments().filter_map(|a| a.get_long()).collect();
        let mut table = LONG_OPTIONS.to_vec();
        longs.sort_unstable();
        table.sort_unstable();
        assert_eq!(longs, table);
        let mut shorts: Vec<u8> = cat
            .get_arguments()
            .filter_map(|a| a.get_short())
            .map(|c| c as u8)
            .collect();
        let mut table = SHORT_OPTIONS.to_vec();
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
        let Some(crate::args::Command::Cat(args)) = cli.command else {
            panic!("not cat");
        };
        let options = format_options(&args);
        assert!(options.show_ends && options.show_tabs && options.show_nonprinting);
        assert!(options.number_nonblank && !options.number);
        assert_eq!(args.files, ["f"]);
    }
}
