//! Child processes in a process group of their own, killed and reaped
//! when the group is dropped: on success, on error and, through the
//! interrupt handler, on SIGINT or SIGTERM.

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};

use crate::sys::process::{
    KillOnInterrupt, interrupted, kill_group, kill_on_interrupt, signal_name,
};

struct Member {
    child: Child,
    label: String,
    status: Option<ExitStatus>,
}

/// Children sharing one process group (the first child's PID).
pub struct Group {
    members: Vec<Member>,
    pgid: Option<u32>,
    registration: Option<KillOnInterrupt>,
}

/// The error a run returns when SIGINT or SIGTERM stopped it.
pub fn interrupted_error() -> Option<io::Error> {
    interrupted().map(|signal| {
        io::Error::new(
            io::ErrorKind::Interrupted,
            format!("interrupted by {}", signal_name(signal)),
        )
    })
}

impl Group {
    /// An empty group.
    pub fn new() -> Group {
        Group {
            members: Vec::new(),
            pgid: None,
            registration: None,
        }
    }

    /// Starts `cmd` in the group; `label` names it in errors. Returns its
    /// index.
    pub fn spawn(&mut self, cmd: &mut Command, label: String) -> io::Result<usize> {
        cmd.process_group(self.pgid.map_or(0, |p| p as i32));
        let child = cmd.spawn().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot start {label}: {}", crate::quote::strerror(&e)),
            )
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
    pub fn child(&mut self, index: usize) -> &mut Child {
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
    pub fn wait(&mut self, index: usize) -> io::Result<ExitStatus> {
        if let Some(status) = self.members[index].status {
            return Ok(status);
        }
        self.before_reaping_one();
        let m = &mut self.members[index];
        let status = m.child.wait().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot wait for {}: {}",
                    m.label,
                    crate::quote::strerror(&e)
                ),
            )
        })?;
        m.status = Some(status);
        Ok(status)
    }

    /// The PIDs of the children not yet reaped.
    pub fn pids(&self) -> Vec<u32> {
        self.members
            .iter()
            .filter(|m| m.status.is_none())
            .map(|m| m.child.id())
            .collect()
    }

    /// How many children are still running. Nothing is reaped:
    /// `waitid(WNOWAIT)` only looks.
    pub fn running(&self) -> usize {
        self.members
            .iter()
            .filter(|m| m.status.is_none() && !has_exited(m.child.id()))
            .count()
    }

    /// Why the child at `index` stopped early: the interrupt if there was
    /// one, else its last line on stderr, or its exit status.
    pub fn failure(&mut self, index: usize, doing: &str) -> io::Error {
        if let Some(err) = interrupted_error() {
            return err;
        }
        let m = &mut self.members[index];
        if m.status.is_none() && !has_exited(m.child.id()) {
            // It broke the protocol but runs on: stop it, or its stderr
            // would never end.
            let _ = m.child.kill();
        }
        let mut text = String::new();
        if let Some(mut stderr) = self.members[index].child.stderr.take() {
            let _ = stderr.read_to_string(&mut text);
        }
        let status = self.wait(index);
        let label = &self.members[index].label;
        let line = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let why = match (line.strip_prefix("pipespeed: ").unwrap_or(line), status) {
            ("", Ok(status)) => format!("it ended ({status}) without a word"),
            ("", Err(e)) => e.to_string(),
            (said, _) => said.to_string(),
        };
        io::Error::other(format!("{label} failed while {doing}: {why}"))
    }

    /// Kills every child still running and reaps them all.
    pub fn kill_all(&mut self) {
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
fn has_exited(pid: u32) -> bool {
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
