//! The child processes of a measurement (what they are is
//! [`crate::bench::worker`]'s business): started in a process group of
//! their own, finished within a deadline, heard through their last
//! message, and killed with their group when the [`Group`] is dropped or,
//! through the interrupt handler, on SIGINT, SIGTERM or SIGHUP.

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Output};
use std::time::{Duration, Instant};

use crate::sys::process::{
    KillOnInterrupt, interrupted, kill_group, kill_on_interrupt, signal_name,
};

struct Member {
    child: Child,
    label: String,
    status: Option<ExitStatus>,
}

/// Children sharing one process group (the first child's PID).
#[derive(Default)]
pub(crate) struct Group {
    members: Vec<Member>,
    pgid: Option<u32>,
    registration: Option<KillOnInterrupt>,
}

/// How a child that had nothing left to do ended.
#[derive(Debug)]
pub(crate) struct Ended {
    /// Its exit status (`None`: it could not be waited for).
    pub status: Option<ExitStatus>,
    /// Whether it outlived the deadline and was killed.
    pub killed: bool,
    /// Everything it wrote on stderr, trimmed.
    pub stderr: String,
}

impl Ended {
    /// Whether it exited with status 0.
    pub(crate) fn success(&self) -> bool {
        !self.killed && self.status.is_some_and(|s| s.success())
    }

    /// `killed by SIGSEGV` when a signal it did not get from us ended it.
    pub(crate) fn died(&self) -> Option<String> {
        self.status.filter(|_| !self.killed).and_then(died)
    }
}

/// `killed by SIGSEGV` when `status` is a death by a signal: what a
/// child that crashed says, since it could not say it itself (the other
/// end only sees its pipe end, and would be blamed).
pub(crate) fn died(status: ExitStatus) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let signal = status.signal()?;
    let name = match signal {
        libc::SIGSEGV => "SIGSEGV".to_string(),
        libc::SIGBUS => "SIGBUS".to_string(),
        libc::SIGABRT => "SIGABRT".to_string(),
        libc::SIGILL => "SIGILL".to_string(),
        libc::SIGFPE => "SIGFPE".to_string(),
        libc::SIGKILL => "SIGKILL".to_string(),
        libc::SIGPIPE => "SIGPIPE".to_string(),
        libc::SIGHUP => "SIGHUP".to_string(),
        libc::SIGXFSZ => "SIGXFSZ".to_string(),
        libc::SIGXCPU => "SIGXCPU".to_string(),
        other => signal_name(other),
    };
    let core = if status.core_dumped() {
        " (core dumped)"
    } else {
        ""
    };
    Some(format!("killed by {name}{core}"))
}

/// A child's own words for why it failed: its last line that starts
/// with `pipespeed: `, without the prefix.
pub(crate) fn said(stderr: &str) -> Option<&str> {
    stderr
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("pipespeed: "))
}

/// What a child said last: [`said`], else its last line that is not
/// blank (a panic, a message of another program), else nothing.
pub(crate) fn last_message(stderr: &str) -> &str {
    said(stderr).unwrap_or_else(|| {
        stderr
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
    })
}

/// The error a run returns when SIGINT, SIGTERM or SIGHUP stopped it.
pub(crate) fn interrupted_error() -> Option<io::Error> {
    interrupted().map(|signal| {
        io::Error::new(
            io::ErrorKind::Interrupted,
            format!("interrupted by {}", signal_name(signal)),
        )
    })
}

impl Group {
    /// An empty group.
    pub(crate) fn new() -> Group {
        Group::default()
    }

    /// Starts `cmd` in the group; `label` names it in errors. Returns its
    /// index.
    pub(crate) fn spawn(&mut self, cmd: &mut Command, label: String) -> io::Result<usize> {
        cmd.process_group(self.pgid.map_or(0, |p| p as i32));
        let child = cmd.spawn().map_err(|e| {
            let why = crate::quote::strerror(&e);
            io::Error::new(e.kind(), format!("cannot start {label}: {why}"))
        })?;
        let pid = child.id();
        self.members.push(Member {
            child,
            label,
            status: None,
        });
        if self.pgid.is_none() {
            self.pgid = Some(pid);
            self.registration = Some(kill_on_interrupt(pid)?);
        }
        if let Some(err) = interrupted_error() {
            return Err(err);
        }
        Ok(self.members.len() - 1)
    }

    /// The child at `index`.
    pub(crate) fn child(&mut self, index: usize) -> &mut Child {
        &mut self.members[index].child
    }

    fn unreaped(&self) -> usize {
        self.members.iter().filter(|m| m.status.is_none()).count()
    }

    /// Notes that a member is about to be reaped: once none is left, the
    /// group ID may be reused, so the interrupt handler must forget it.
    fn before_reaping_one(&mut self) {
        if self.unreaped() <= 1 {
            self.registration = None;
        }
    }

    /// Waits for the child at `index` to end.
    pub(crate) fn wait(&mut self, index: usize) -> io::Result<ExitStatus> {
        if let Some(status) = self.members[index].status {
            return Ok(status);
        }
        self.before_reaping_one();
        let m = &mut self.members[index];
        let status = m.child.wait().map_err(|e| {
            let why = crate::quote::strerror(&e);
            io::Error::new(e.kind(), format!("cannot wait for {}: {why}", m.label))
        })?;
        m.status = Some(status);
        Ok(status)
    }

    /// The PIDs of the children not yet reaped.
    pub(crate) fn pids(&self) -> Vec<u32> {
        self.members
            .iter()
            .filter(|m| m.status.is_none())
            .map(|m| m.child.id())
            .collect()
    }

    /// How many children are still running. Nothing is reaped:
    /// `waitid(WNOWAIT)` only looks.
    pub(crate) fn running(&self) -> usize {
        self.members
            .iter()
            .filter(|m| m.status.is_none() && !has_exited(m.child.id()))
            .count()
    }

    /// Waits for the child at `index`, which has nothing left to do, to
    /// exit: killed if it has not within `within`. Reads its stderr.
    pub(crate) fn finish(&mut self, index: usize, within: Duration) -> Ended {
        let deadline = Instant::now() + within;
        let mut killed = false;
        // Checked after 1 ms, then ever less often, up to every 50 ms: a
        // parent waking a thousand times a second takes CPU time from the
        // measurement on a small machine.
        let mut pause = Duration::from_millis(1);
        let status = loop {
            match self.members[index].child.try_wait() {
                Ok(Some(_)) => break self.wait(index).ok(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(pause.min(deadline - Instant::now()));
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                _ => {
                    killed = true;
                    let _ = self.members[index].child.kill();
                    break self.wait(index).ok();
                }
            }
        };
        let mut stderr = String::new();
        if let Some(mut err) = self.members[index].child.stderr.take() {
            let _ = err.read_to_string(&mut stderr);
        }
        Ended {
            status,
            killed,
            stderr: stderr.trim().to_string(),
        }
    }

    /// Reads the stdout and stderr of the child at `index` to their ends,
    /// both at once, and waits for it, as [`Child::wait_with_output`]
    /// does.
    pub(crate) fn output(&mut self, index: usize) -> io::Result<Output> {
        let child = &mut self.members[index].child;
        let (out, err) = (child.stdout.take(), child.stderr.take());
        let read_all = |pipe: Option<&mut dyn Read>| {
            let mut bytes = Vec::new();
            if let Some(pipe) = pipe {
                pipe.read_to_end(&mut bytes)?;
            }
            io::Result::Ok(bytes)
        };
        let (stdout, stderr) = std::thread::scope(|s| {
            let mut err = err;
            let stderr = s.spawn(move || read_all(err.as_mut().map(|e| e as &mut dyn Read)));
            let mut out = out;
            let stdout = read_all(out.as_mut().map(|o| o as &mut dyn Read));
            let stderr = stderr
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("stderr reader panicked")));
            (stdout, stderr)
        });
        let status = self.wait(index)?;
        Ok(Output {
            status,
            stdout: stdout?,
            stderr: stderr?,
        })
    }

    /// Sends `signal` to the whole group (a program's own children
    /// too), while one of its members is unreaped.
    pub(crate) fn signal_group(&self, signal: rustix::process::Signal) {
        if self.unreaped() > 0
            && let Some(pid) = self
                .pgid
                .and_then(|p| i32::try_from(p).ok())
                .filter(|&p| p > 1)
                .and_then(rustix::process::Pid::from_raw)
        {
            // Some member is unreaped, so the group ID is still ours.
            let _ = rustix::process::kill_process_group(pid, signal);
        }
    }

    /// Kills every child still running and reaps them all.
    pub(crate) fn kill_all(&mut self) {
        let pgid = self.pgid;
        self.registration = None;
        if self.unreaped() > 0
            && let Some(pgid) = pgid
        {
            // Some member is unreaped, so the group ID is still ours.
            let _ = kill_group(pgid);
        }
        for m in &mut self.members {
            if m.status.is_none() {
                let _ = m.child.kill();
                m.status = m.child.wait().ok();
            }
        }
    }
}

/// Whether our child `pid` has ended (it stays waitable).
///
/// # References
///  - [waitid(2)](https://man7.org/linux/man-pages/man2/waitid.2.html)
pub(crate) fn has_exited(pid: u32) -> bool {
    use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return true;
    };
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    matches!(waitid(WaitId::Pid(pid), options), Ok(Some(_)) | Err(_))
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill_all();
    }
}
