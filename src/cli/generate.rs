//! `pipespeed generate man DIR` and `pipespeed generate completions
//! SHELL`: manual pages and shell completions made from the command line's
//! own definition, so they never disagree with `--help`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::sys::replace::Target;
use anyhow::Context;
use clap::{Args, CommandFactory, Subcommand, ValueEnum};
use clap_complete::Shell;

use crate::cli::args::Cli;

/// `pipespeed generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// What to generate.
    #[command(subcommand)]
    pub what: What,
}

/// What `generate` makes.
#[derive(Debug, Subcommand)]
pub enum What {
    /// Write manual pages to DIR: pipespeed(1), pipespeed-SUBCOMMAND(1)
    /// for each subcommand (pipespeed-cat(1) and pipespeed-pv(1) also
    /// describe the binary called by the names cat and pv).
    Man {
        /// The directory to write the pages to (made if missing).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Print the completion script of SHELL on stdout.
    Completions {
        /// The shell.
        #[arg(value_enum, value_name = "SHELL")]
        shell: ShellArg,
    },
}

/// The shells clap_complete knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShellArg {
    /// GNU bash.
    Bash,
    /// Z shell.
    Zsh,
    /// fish.
    Fish,
    /// Elvish.
    Elvish,
    /// PowerShell.
    Powershell,
}

impl ShellArg {
    fn shell(self) -> Shell {
        match self {
            ShellArg::Bash => Shell::Bash,
            ShellArg::Zsh => Shell::Zsh,
            ShellArg::Fish => Shell::Fish,
            ShellArg::Elvish => Shell::Elvish,
            ShellArg::Powershell => Shell::PowerShell,
        }
    }
}

pub(super) fn run(args: GenerateArgs) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Man { dir } => {
            for page in man_pages(&dir)? {
                eprintln!("pipespeed: wrote {}", page.display());
            }
        }
        What::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell.shell(), &mut visible(), "pipespeed", &mut out);
            crate::cli::output::print(&out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes pipespeed.1 and a page per visible subcommand into `dir`, all
/// of them or none: each is made whole in a temporary file beside its
/// old page before the first takes its place (a full disk or `ulimit
/// -f` leaves the old pages as they were), and returns their paths.
/// A page is replaced as a result file is (its mode and owner kept,
/// `crate::sys::replace`); one that is not a regular file is refused.
fn man_pages(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let cannot = || format!("cannot write the manual pages in {}", dir.display());
    match fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => {
            return Err(io::Error::from_raw_os_error(libc::ENOTDIR)).with_context(cannot);
        }
        Ok(_) => {}
        Err(_) => {
            fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?
        }
    }
    let cli = visible();
    let mut pages = vec![render_page("pipespeed", cli.clone())?];
    for sub in cli.get_subcommands().filter(|s| shown(s)) {
        let name = format!("pipespeed-{}", sub.get_name());
        let page = sub
            .clone()
            .name(&name)
            .bin_name(format!("pipespeed {}", sub.get_name()))
            .version(env!("CARGO_PKG_VERSION"));
        pages.push(render_page(&name, page)?);
    }
    // Held until every page is in place: a signal's default action (no
    // handler here) would leave temporary files, or half the pages new.
    let _held = crate::sys::hold::hold_signals()?;
    let mut prepared = Vec::with_capacity(pages.len());
    let mut written = Vec::with_capacity(pages.len());
    for (name, bytes) in pages {
        let path = dir.join(format!("{name}.1"));
        let cannot = || format!("cannot write {}", path.display());
        let target = match Target::resolve(&path).with_context(cannot)? {
            Target::File(target) => target,
            Target::Descriptor(_) | Target::Special(_) => {
                anyhow::bail!("cannot write {}: not a regular file", path.display())
            }
        };
        prepared.push((target.prepare(bytes).with_context(cannot)?, path.clone()));
        written.push(path);
    }
    // Pages written in place first: their commit can fail, a rename
    // cannot once its file is made, so a failure leaves every page old.
    prepared.sort_by_key(|(page, _)| !page.in_place());
    for (page, path) in prepared {
        page.commit()
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(written)
}

/// Whether a subcommand is documented and completed: not the hidden
/// worker, not clap's `help`.
fn shown(sub: &clap::Command) -> bool {
    !sub.is_hide_set() && sub.get_name() != "help"
}

/// The command line without the subcommands users never type (the
/// hidden `worker`, which clap_complete would complete, and clap's
/// `help`).
fn visible() -> clap::Command {
    let mut cli = Cli::command();
    cli.build();
    let subcommands: Vec<clap::Command> = cli
        .get_subcommands()
        .filter(|s| shown(s))
        .cloned()
        .collect();
    clap::Command::new("pipespeed")
        .bin_name("pipespeed")
        .version(cli.get_version().unwrap_or_default().to_string())
        .about(cli.get_about().cloned().unwrap_or_default())
        .after_help(cli.get_after_help().cloned().unwrap_or_default())
        .disable_help_subcommand(true)
        .subcommands(subcommands)
}

/// The manual page of `command`, named `name`.
fn render_page(name: &str, command: clap::Command) -> anyhow::Result<(String, Vec<u8>)> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .date(env!("PIPESPEED_BUILD_DATE"))
        .manual("pipespeed manual")
        .source(concat!("pipespeed ", env!("CARGO_PKG_VERSION")))
        .render(&mut page)
        .with_context(|| format!("cannot render {name}(1)"))?;
    Ok((name.to_owned(), page))
}
