//! `pipespeed top`: watch a running pipeline and name the stage that
//! limits it.

use std::io::{IsTerminal, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ExitCode, ExitStatus, Stdio};
use std::time::Duration;

use crate::bench::core::Cancel;
use crate::report::{Exporter, Text};
use crate::sys::process::{catch_interrupts, interrupted, kill_on_interrupt};
use crate::top::{Scope, Target, Watcher};
use anyhow::Context;
use clap::Args;

use crate::cli::output;

/// The longest window `--interval` takes, in seconds.
const MAX_INTERVAL: f64 = 3600.0;
/// The shortest: twenty probes 5 ms apart.
const MIN_INTERVAL: f64 = 0.1;

/// `pipespeed top`.
#[derive(Debug, Args)]
#[command(
    after_help = "Every window, each stage's CPU, run-queue wait, bytes in and out (~: estimated, \
                  the stage splices and /proc/PID/io does not count splice), and the share of \
                  20 probes that found it working, blocked on its input pipe, on its output pipe \
                  or asleep elsewhere; each pipe's fill; then the stage that limits the pipeline \
                  and why, or why no single one does. Read-only: pipes are opened through /proc \
                  for reading, without blocking, and closed at once; nothing is written there.\n\n\
                  Exit status: 0 watched until the pipelines ended (or --once); with --run, the \
                  pipeline's own status (128+N when a signal N ended it); 1 nothing to watch \
                  (no such process, no pipeline on this terminal) or an error; 2 bad usage; \
                  129/130/143 interrupted by SIGHUP/SIGINT/SIGTERM (the summary is printed, and \
                  the pipeline --run started is killed)."
)]
pub struct TopArgs {
    /// A PID of any stage of the pipeline, or =NAME for every process
    /// with that command name [default: the pipelines on this terminal].
    #[arg(value_name = "TARGET", value_parser = target, conflicts_with = "run")]
    pub targets: Vec<Target>,
    /// Run CMD with sh -c and watch it to its end (its standard output
    /// and error are this command's, and its input too unless that is a
    /// terminal: then /dev/null, as the pipeline runs in a process group
    /// of its own).
    #[arg(long, value_name = "CMD")]
    pub run: Option<String>,
    /// Seconds a window lasts: the screen is refreshed every window
    /// [range: 0.1-3600].
    #[arg(long, value_name = "SECS", default_value_t = 1.0, value_parser = interval)]
    pub interval: f64,
    /// Watch one window, print it and exit.
    #[arg(long, conflicts_with = "run")]
    pub once: bool,
    /// Write a JSON object per window and the summary, a line each, to
    /// FILE (- for standard output; the screen then goes to standard
    /// error).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

fn target(text: &str) -> Result<Target, String> {
    if let Some(name) = text.strip_prefix('=') {
        return match name {
            "" => Err("=NAME needs a command name after =".to_string()),
            name => Ok(Target::Name(name.to_string())),
        };
    }
    match text.parse::<u32>() {
        Ok(pid) if pid > 0 && pid <= 4_194_304 => Ok(Target::Pid(pid)),
        _ => Err(format!(
            "'{text}' is not a target: give a process ID (1 to 4194304) or =NAME"
        )),
    }
}

fn interval(text: &str) -> Result<f64, String> {
    match text.strip_suffix('s').unwrap_or(text).parse::<f64>() {
        Ok(s) if (MIN_INTERVAL..=MAX_INTERVAL).contains(&s) => Ok(s),
        _ => Err(format!(
            "'{text}' is not an interval: give seconds from {MIN_INTERVAL} to {MAX_INTERVAL}, \
             e.g. 1 or 0.5"
        )),
    }
}

/// Where the screen goes and how.
struct Screen {
    to_stdout: bool,
    redraw: bool,
    notes: Vec<String>,
}

impl Screen {
    fn show(&mut self, text: &[u8]) -> anyhow::Result<()> {
        let mut bytes = Vec::new();
        if self.redraw {
            // Home, then clear: the window replaces the last one.
            bytes.extend_from_slice(b"\x1b[H\x1b[2J");
        }
        bytes.extend_from_slice(text);
        if !self.redraw {
            bytes.push(b'\n');
        }
        if self.to_stdout {
            output::print(&bytes)?;
        } else {
            let _ = std::io::stderr().write_all(&bytes);
        }
        Ok(())
    }
}

pub(super) fn run(args: TopArgs) -> anyhow::Result<ExitCode> {
    catch_interrupts().context("cannot catch interrupts")?;
    let json_to_stdout = args.json.as_deref().is_some_and(output::is_stdout);
    output::check_outputs([&args.json])?;
    let to_stdout = !json_to_stdout;
    let redraw = if to_stdout {
        std::io::stdout().is_terminal()
    } else {
        std::io::stderr().is_terminal()
    } && !args.once;
    let mut screen = Screen {
        to_stdout,
        redraw,
        notes: Vec::new(),
    };
    // The screen's width where it goes, so that no line is cut mid-word.
    let text = Text {
        explain: false,
        width: match to_stdout {
            true => crate::report::text::width_of(std::io::stdout()),
            false => crate::report::text::width_of(std::io::stderr()),
        },
    };
    let mut started = match &args.run {
        Some(cmd) => Some(Started::spawn(cmd)?),
        None => None,
    };
    let scope = match (&started, args.targets.is_empty()) {
        (Some(s), _) => Scope::Tree(s.child.id()),
        (None, true) => Scope::Session,
        (None, false) => Scope::Targets(args.targets.clone()),
    };
    // On the way out, dropping `started` kills the pipeline.
    let mut watcher = Watcher::new(scope).map_err(|e| NothingToWatch(e.to_string()))?;
    let window = Duration::from_secs_f64(args.interval);
    let cancel = Cancel::on_signals();
    let mut lines: Vec<u8> = Vec::new();
    loop {
        let counted = watcher.windows();
        let sample = watcher.sample(window, &cancel);
        let over = match &mut started {
            Some(s) => s.ended()?,
            None => watcher.ended(),
        };
        if over && watcher.windows() == counted {
            // The window the pipeline ended in: its stages' last figures
            // went with them; the summary follows.
            break;
        }
        let mut shown = sample.clone();
        if !screen.redraw {
            // Plain lines say what cannot be seen once, not every window.
            if shown.unseen == screen.notes {
                shown.unseen.clear();
            } else {
                screen.notes = shown.unseen.clone();
            }
        }
        if interrupted().is_none() || sample.probes > 0 {
            screen.show(&text.export(&shown)?)?;
            json_line(&mut lines, &sample, json_to_stdout)?;
        }
        if args.once || interrupted().is_some() || over {
            break;
        }
    }
    if !args.once {
        let summary = watcher.summary();
        screen.redraw = false;
        screen.show(&text.export(&summary)?)?;
        json_line(&mut lines, &summary, json_to_stdout)?;
    }
    if let Some(path) = args.json.as_ref().filter(|_| !json_to_stdout) {
        output::write_file(&Some(path.clone()), || Ok(lines))?;
    }
    if let Some(signal) = interrupted() {
        return Ok(crate::cli::signal_status(signal));
    }
    match &mut started {
        Some(s) => {
            let status = s.finish().context("cannot wait for the pipeline")?;
            let code = status
                .code()
                .or_else(|| status.signal().map(|n| 128 + n))
                .unwrap_or(1);
            Ok(ExitCode::from(code.clamp(0, 255) as u8))
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

/// Nothing could be watched: status 1 with the reason.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(super) struct NothingToWatch(String);

fn json_line<T: serde::Serialize>(
    lines: &mut Vec<u8>,
    value: &T,
    stdout: bool,
) -> anyhow::Result<()> {
    let mut line = serde_json::to_vec(value).context("cannot write the JSON")?;
    line.push(b'\n');
    if stdout {
        output::print(&line)?;
    } else {
        lines.extend_from_slice(&line);
    }
    Ok(())
}

/// The pipeline `--run` started, in a process group of its own that a
/// SIGINT, SIGTERM or SIGHUP to us kills, and that is killed when this
/// is dropped before the shell was reaped (an error on the way out).
struct Started {
    child: Child,
    guard: Option<crate::sys::process::KillOnInterrupt>,
    status: Option<ExitStatus>,
}

impl Started {
    fn spawn(cmd: &str) -> anyhow::Result<Started> {
        let mut command = std::process::Command::new("sh");
        command.args(["-c", cmd]).process_group(0);
        if std::io::stdin().is_terminal() {
            // A background group reading the terminal would be stopped
            // (SIGTTIN) and the watch never end.
            command.stdin(Stdio::null());
        }
        let child = command.spawn().context("cannot start sh")?;
        let guard = kill_on_interrupt(child.id()).ok();
        // The shell starts its stages: give it a moment, so that the first
        // window sees them rather than the shell alone.
        std::thread::sleep(Duration::from_millis(50));
        Ok(Started {
            child,
            guard,
            status: None,
        })
    }

    /// Whether the shell has exited, without reaping it: until it is
    /// reaped its process group cannot be anyone else's.
    fn ended(&mut self) -> std::io::Result<bool> {
        use rustix::process::{Pid, WaitIdOptions, waitid};
        if self.status.is_some() {
            return Ok(true);
        }
        let Some(pid) = Pid::from_raw(self.child.id() as i32) else {
            return Ok(true);
        };
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        Ok(waitid(rustix::process::WaitId::Pid(pid), options)?.is_some())
    }

    /// Reaps the shell, taking its group off the interrupt handler's list
    /// first.
    fn finish(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        self.guard = None;
        let status = self.child.wait()?;
        self.status = Some(status);
        Ok(status)
    }

    /// Kills the group, unless the shell was reaped already.
    fn kill(&mut self) {
        if self.status.is_none() {
            let _ = crate::sys::process::kill_group(self.child.id());
            let _ = self.finish();
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        self.kill();
    }
}
