//! `pv -M`: runs a command and meters its standard input, its standard
//! output, or both; each metered side is a pipe copied by its own
//! [`Transfer`] in its own thread, a side not metered is inherited.
//!
//! The input side ends at our input's end or when nobody reads the
//! command's input (`EPIPE`, not an error); the output side copies until
//! every holder of the pipe has closed it, as pv 1.12 does. A SIGINT,
//! SIGTERM or SIGHUP is sent on to the command's group once, and what is
//! left of it [`GRACE`] later is killed.
//!
//! The command gets a process group of its own unless we have a
//! controlling terminal: there it could not read the terminal (SIGTTIN)
//! and job control (`fg` after `&`) would leave it behind. The status is
//! the command's, as a shell gives it (128 + N for signal N).

#[path = "monitor/draw.rs"]
mod draw;

pub(crate) use draw::{Drawn, draw_pair};

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, poll};
use rustix::process::{Pid, Signal, kill_process, kill_process_group, pidfd_open};
use rustix::time::Timespec;

use super::copy::{Ended, Transfer};
use crate::copy::{CopyError, Side};

/// Which of the command's streams are metered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metered {
    /// Its standard input.
    Input,
    /// Its standard output.
    Output,
    /// Both: two meters.
    Both,
}

impl Metered {
    /// Whether the command's standard input is metered.
    pub(crate) fn input(self) -> bool {
        matches!(self, Metered::Input | Metered::Both)
    }

    /// Whether the command's standard output is metered.
    pub(crate) fn output(self) -> bool {
        matches!(self, Metered::Output | Metered::Both)
    }
}

/// A command that could not be started, and why.
#[derive(Debug)]
pub(crate) struct SpawnError {
    /// The program as given.
    pub program: OsString,
    /// What exec (or fork) said.
    pub error: io::Error,
}

impl SpawnError {
    /// The status a shell, env(1) or timeout(1) gives for it: 127 when the
    /// program is not found, 126 when it is there but cannot be run.
    pub(crate) fn status(&self) -> u8 {
        if self.error.kind() == io::ErrorKind::NotFound {
            127
        } else {
            126
        }
    }
}

/// Starts `command` (the program, then its arguments) with a pipe for
/// each metered side; the other streams are ours, inherited, but for an
/// unmetered standard output given as `stdout` (pv's `-o` or `-X`).
pub(crate) fn spawn(
    command: &[OsString],
    metered: Metered,
    stdout: Option<Stdio>,
) -> Result<Child, SpawnError> {
    let Some((program, args)) = command.split_first() else {
        return Err(SpawnError {
            program: OsString::new(),
            error: io::Error::from(io::ErrorKind::InvalidInput),
        });
    };
    let piped = |on: bool| if on { Stdio::piped() } else { Stdio::inherit() };
    let mut command = Command::new(program);
    if !has_terminal() {
        command.process_group(0);
    }
    command
        .args(args)
        .stdin(piped(metered.input()))
        .stdout(match stdout {
            Some(given) if !metered.output() => given,
            _ => piped(metered.output()),
        })
        .spawn()
        .map_err(|error| SpawnError {
            program: program.clone(),
            error,
        })
}

/// Whether this process has a controlling terminal: a command started
/// in a group of its own could not use it, and the shell's job control
/// (`fg` after `&`) would move and continue our group without it.
fn has_terminal() -> bool {
    use rustix::fs::{Mode, OFlags, open};
    let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::CLOEXEC | OFlags::NONBLOCK;
    // ENXIO: no controlling terminal.
    open("/dev/tty", flags, Mode::empty()).is_ok()
}

/// How long the command (and its group) has to end by itself after a
/// signal sent on to it, before it is killed.
pub(crate) const GRACE: Duration = Duration::from_millis(500);

/// A side's end, told to the display as it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// The input side has ended.
    InputEnded,
    /// The output side has ended.
    OutputEnded,
    /// The run is over: the command has exited and its sides have ended
    /// or were let go (an input side may still hold its sender, blocked
    /// reading an input that nobody will read).
    Finished,
}

/// The metered sides of a run: each a transfer, and where its bytes come
/// from (input side) or go (output side).
pub(crate) struct Sides {
    /// Our standard input to the command's, with this transfer.
    pub input: Option<(Transfer, Box<dyn AsFd + Send>)>,
    /// The command's standard output to this descriptor (stdout, `-o`,
    /// `/dev/null` for `-X`), with this transfer.
    pub output: Option<(Transfer, Box<dyn AsFd + Send>)>,
}

/// How a run ended.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The command's status: its exit code, or 128 + the signal that
    /// killed it.
    pub status: u8,
    /// The input side: `None` if not metered or left waiting for input
    /// nobody could read; an error other than the command not reading.
    pub input: Option<Result<(), CopyError>>,
    /// The output side: `None` if not metered; an error (a broken pipe
    /// on our side included: the command was cut off).
    pub output: Option<Result<(), CopyError>>,
}

/// How often the waiting thread looks for a caught signal and, once the
/// command has exited, for a reader of its standard input.
const POLL: Duration = Duration::from_millis(50);

/// Runs the metered sides of `child` until it has exited and its sides
/// have ended (see the module's doc), sending `events` as sides end and a
/// signal that `interrupted` reports on to the command.
pub(crate) fn run(
    mut child: Child,
    sides: Sides,
    interrupted: &dyn Fn() -> Option<i32>,
    events: &mpsc::Sender<Event>,
) -> io::Result<Outcome> {
    // The command's standard input, shared with the copying thread only
    // by a weak reference here: this thread must not keep it open.
    let mut stdin_pipe = None;
    let input = match (sides.input, child.stdin.take()) {
        (Some((mut transfer, from)), Some(pipe)) => {
            let pipe = Arc::new(OwnedFd::from(pipe));
            stdin_pipe = Some(Arc::downgrade(&pipe));
            let events = events.clone();
            Some(
                std::thread::Builder::new()
                    .name("pv-in".into())
                    .spawn(move || {
                        let copied = transfer.copy(&*from, &*pipe, &mut |_| {});
                        // Told before the command can see its end: the
                        // input side's last line comes before the output
                        // side's when the output ends with the input.
                        let _ = events.send(Event::InputEnded);
                        drop(pipe);
                        copied
                    })?,
            )
        }
        _ => None,
    };
    let output = match (sides.output, child.stdout.take()) {
        (Some((mut transfer, to)), Some(pipe)) => {
            let events = events.clone();
            Some(
                std::thread::Builder::new()
                    .name("pv-out".into())
                    .spawn(move || {
                        let copied = transfer.copy(&pipe, &*to, &mut |_| {});
                        // Closed at once: a command writing to a reader that
                        // went away is told so (EPIPE or SIGPIPE).
                        drop(pipe);
                        let _ = events.send(Event::OutputEnded);
                        copied
                    })?,
            )
        }
        _ => None,
    };
    let group = Group::of(&child);
    let (mut status, mut forwarded) = wait_forwarding(&mut child, group, interrupted)?;
    // The output side: to its end (a background child of the command may
    // still write), unless a signal comes: then what holds the pipe in
    // the command's group is signalled, killed [`GRACE`] later, and the
    // side is let go, the run ending as the signal says.
    let mut since = forwarded.map(|_| Instant::now());
    let output = match output {
        None => None,
        Some(thread) => loop {
            if thread.is_finished() {
                break Some(ended(thread.join(), Side::Output, false));
            }
            // (A signal sent on to the command already has its answer:
            // the command's status.)
            if forwarded.is_none()
                && let Some(signal) = interrupted()
            {
                forwarded = Some(signal);
                // The command is reaped: only a group of its own, which
                // what holds the pipe belongs to, is still its ID.
                if group.own {
                    group.signal(signal);
                }
                since = Some(Instant::now());
                // As a shell says a process killed by it.
                status = u8::try_from(128 + signal).unwrap_or(u8::MAX);
            }
            if since.is_some_and(|since| since.elapsed() >= GRACE) {
                if group.own {
                    group.signal(libc::SIGKILL);
                }
                break None;
            }
            std::thread::sleep(POLL);
        },
    };
    // The input side: waited for while someone can read what it copies,
    // and no signal came.
    let input = match (input, stdin_pipe) {
        (None, _) => None,
        (Some(thread), pipe) => loop {
            if thread.is_finished() {
                break Some(ended(thread.join(), Side::Input, true));
            }
            match pipe.as_ref().and_then(std::sync::Weak::upgrade) {
                // Let go by the thread: it is returning.
                None => break Some(ended(thread.join(), Side::Input, true)),
                Some(pipe) if !has_reader(&pipe) || interrupted().is_some() => break None,
                Some(_) => std::thread::sleep(POLL),
            }
        },
    };
    Ok(Outcome {
        status,
        input,
        output,
    })
}

/// Where a signal for the command goes: its process group when it has
/// one of its own, else the command alone.
#[derive(Debug, Clone, Copy)]
struct Group {
    pid: Option<Pid>,
    own: bool,
}

impl Group {
    fn of(child: &Child) -> Group {
        let pid = Pid::from_raw(child.id() as i32);
        let own = pid
            .is_some_and(|pid| rustix::process::getpgid(Some(pid)).is_ok_and(|pgid| pgid == pid));
        Group { pid, own }
    }

    /// Sends `signal`; call it only while the command is not reaped yet,
    /// or while its group still has a member (an ID still in use).
    fn signal(self, signal: i32) {
        let (Some(pid), Some(sig)) = (self.pid, Signal::from_named_raw(signal)) else {
            return;
        };
        let _ = if self.own {
            kill_process_group(pid, sig)
        } else {
            kill_process(pid, sig)
        };
    }
}

/// Waits for `child` to exit, sending its group the first signal
/// `interrupted` reports and killing the group [`GRACE`] later; its
/// status as a shell gives it, and the signal sent.
fn wait_forwarding(
    child: &mut Child,
    group: Group,
    interrupted: &dyn Fn() -> Option<i32>,
) -> io::Result<(u8, Option<i32>)> {
    // Readable once the command has exited: no sleeping past its end.
    let pidfd = group
        .pid
        .and_then(|pid| pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok());
    // A second signal ends pv at once: the command (and its group) goes
    // too. Unregistered before it is reaped.
    let mut second = pidfd.as_ref().and_then(|fd| {
        crate::sys::process::kill_on_second_interrupt(fd.as_fd(), group.pid.filter(|_| group.own))
            .ok()
    });
    let mut forwarded: Option<(i32, Instant)> = None;
    let mut killed = false;
    loop {
        // Exited, not reaped yet (only this thread reaps it): its ID, and
        // its group's, are still the command's.
        if crate::child::has_exited(child.id()) {
            if forwarded.is_some() {
                // What the command left behind in its group goes too.
                group.signal(libc::SIGKILL);
            }
            drop(second.take());
            let status = child.wait()?;
            return Ok(match forwarded {
                Some((signal, _)) if killed => {
                    (u8::try_from(128 + signal).unwrap_or(u8::MAX), Some(signal))
                }
                _ => (shell_status(status), forwarded.map(|(signal, _)| signal)),
            });
        }
        match forwarded {
            None => {
                if let Some(signal) = interrupted() {
                    group.signal(signal);
                    forwarded = Some((signal, Instant::now()));
                }
            }
            Some((_, at)) if !killed && at.elapsed() >= GRACE => {
                group.signal(libc::SIGKILL);
                killed = true;
            }
            Some(_) => {}
        }
        match &pidfd {
            Some(fd) => {
                let mut fds = [PollFd::new(fd, PollFlags::IN)];
                let timeout = Timespec {
                    tv_sec: 0,
                    tv_nsec: POLL.as_nanos() as i64,
                };
                // EINTR (a signal came): look again at once.
                let _ = poll(&mut fds, Some(&timeout));
            }
            None => std::thread::sleep(POLL),
        }
    }
}

/// A status as a shell gives it: the exit code, or 128 + the signal.
pub(crate) fn shell_status(status: ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => (code & 0xff) as u8,
        (None, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
        (None, None) => 255,
    }
}

/// Whether the pipe whose write end is `pipe` still has a reader: with
/// none, poll(2) says `POLLERR` at once.
fn has_reader(pipe: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(pipe, PollFlags::empty())];
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match poll(&mut fds, Some(&zero)) {
        Ok(_) => !fds[0].revents().contains(PollFlags::ERR),
        Err(_) => true,
    }
}

/// What a side's thread came to: the input side's broken pipe is the
/// command not reading, not an error.
fn ended(
    joined: std::thread::Result<Result<Ended, CopyError>>,
    side: Side,
    quiet_epipe: bool,
) -> Result<(), CopyError> {
    match joined {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(err))
            if quiet_epipe
                && err.side == Side::Output
                && err.source.kind() == io::ErrorKind::BrokenPipe =>
        {
            Ok(())
        }
        Ok(Err(err)) => Err(err),
        Err(_) => Err(CopyError {
            side,
            moved: 0,
            source: io::Error::other("the copying thread panicked"),
        }),
    }
}

#[cfg(test)]
#[path = "monitor/tests.rs"]
mod tests;
