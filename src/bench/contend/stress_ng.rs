//! `--memory-pressure` by stress-ng itself, where it is installed: the
//! command the kernel's pipe_bench starts for its `--memory-pressure`
//! (`stress-ng --vm 4 --vm-bytes 80% --vm-method all`), so a cell under
//! pressure here is a cell under the pressure the pipe patches were
//! judged with. Like pipe_bench it gives stress-ng a second to map its
//! memory before the measurement, and stops it with SIGTERM, then SIGKILL
//! if it lingers; here the whole process group, since stress-ng forks a
//! worker per instance and each worker a child that does the work.
//!
//! # References
//!  - [stress-ng(1)](https://manpages.debian.org/stress-ng)
//!  - pipe_bench: `tools/testing/selftests/pipe/pipe_bench.c`
//!    (`spawn_stress_ng`, `kill_stress_ng`), Linux 7.2

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::child::{Group, has_exited, interrupted_error};
use crate::sys::procfs;

/// The program looked for on `PATH`.
pub(crate) const PROGRAM: &str = "stress-ng";
/// How long stress-ng gets to map its memory before the measurement
/// (pipe_bench's `sleep(1)`).
pub(crate) const SETTLE: Duration = Duration::from_secs(1);
/// How long stress-ng gets to stop after SIGTERM before SIGKILL
/// (pipe_bench's 20 x 100 ms).
pub(crate) const GRACE: Duration = Duration::from_secs(2);
/// How long stress-ng may take to reap its killed workers and exit.
const GONE: Duration = Duration::from_secs(1);

/// stress-ng on `PATH`, if it is there.
pub(crate) fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    crate::sys::process::find_program(PROGRAM, &path)
}

/// stress-ng's arguments for `workers` instances taking `share_percent`
/// of memory: pipe_bench's, `--vm 4 --vm-bytes 80% --vm-method all`, with
/// the defaults.
pub(crate) fn arguments(workers: usize, share_percent: f64) -> Vec<String> {
    vec![
        "--vm".into(),
        workers.to_string(),
        "--vm-bytes".into(),
        format!("{share_percent}%"),
        "--vm-method".into(),
        "all".into(),
    ]
}

/// `stress-ng 0.15.06` from `stress-ng, version 0.15.06 (gcc ...)`.
pub(crate) fn parse_version(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    words.find(|w| *w == "version")?;
    let version = words.next()?;
    version
        .starts_with(|c: char| c.is_ascii_digit())
        .then(|| format!("{PROGRAM} {version}"))
}

/// Asks `program --version` what it is; `stress-ng` when it does not say.
fn version(program: &Path) -> String {
    let out = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    out.ok()
        .and_then(|o| parse_version(&String::from_utf8_lossy(&o.stdout)))
        .unwrap_or_else(|| PROGRAM.to_string())
}

/// A running stress-ng and its workers (one process group); dropping it
/// kills and reaps them.
pub(crate) struct StressNg {
    group: Group,
    pid: u32,
    /// `stress-ng 0.15.06`.
    pub by: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl StressNg {
    /// Starts `program` with [`arguments`] and waits [`SETTLE`]; an error
    /// if it ends meanwhile (with its last words) or an interrupt comes.
    pub(crate) fn start(program: &Path, workers: usize, share_percent: f64) -> io::Result<Self> {
        let by = version(program);
        let args = arguments(workers, share_percent);
        let mut cmd = Command::new(program);
        // stress-ng refuses to start where its temp-path (by default the
        // working directory) is not writable, as a repository is for
        // another user: it writes nothing there for --vm, so it runs in
        // the temporary directory.
        cmd.args(&args)
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // SIGKILLed, we take stress-ng along; its workers stop when it
        // goes (stress-ng asks for that itself).
        crate::sys::process::die_with_parent_on_exec(&mut cmd);
        let mut group = Group::new();
        let index = group.spawn(&mut cmd, by.clone())?;
        let pid = group.child(index).id();
        let started = Instant::now();
        while started.elapsed() < SETTLE {
            if let Some(err) = interrupted_error() {
                return Err(err);
            }
            if has_exited(pid) {
                let mut said = String::new();
                if let Some(mut err) = group.child(index).stderr.take() {
                    let _ = err.read_to_string(&mut said);
                }
                let status = group.wait(index)?;
                let why = crate::child::last_message(&said);
                let why = if why.is_empty() {
                    status.to_string()
                } else {
                    why.to_string()
                };
                return Err(io::Error::other(format!(
                    "{by} ({}) ended before the measurement: {why}",
                    args.join(" ")
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(StressNg {
            group,
            pid,
            by,
            args,
        })
    }

    /// The stress-ng process and every process below it.
    fn processes(&self) -> Vec<(u32, procfs::Stat)> {
        let all: Vec<(u32, procfs::Stat)> = procfs::processes()
            .into_iter()
            .filter_map(|p| Some((p, procfs::stat(p)?)))
            .collect();
        let mut tree = vec![self.pid];
        let mut i = 0;
        while let Some(&parent) = tree.get(i) {
            tree.extend(
                all.iter()
                    .filter(|(_, s)| s.ppid == parent)
                    .map(|(p, _)| *p),
            );
            i += 1;
        }
        all.into_iter().filter(|(p, _)| tree.contains(p)).collect()
    }

    /// CPU ticks stress-ng and its running workers have used so far.
    pub(crate) fn cpu_ticks(&self) -> u64 {
        self.processes().iter().map(|(_, s)| s.cpu_ticks).sum()
    }

    /// Its instances still running (its children that are not zombies):
    /// fewer than asked for when the OOM killer or a failure ended some.
    pub(crate) fn instances_running(&self) -> usize {
        procfs::processes()
            .into_iter()
            .filter_map(procfs::stat)
            .filter(|s| s.ppid == self.pid && s.state != 'Z')
            .count()
    }

    /// Stops stress-ng as pipe_bench does, SIGTERM then SIGKILL, with
    /// its workers reaped by their own parents, so that none is seen after
    /// the command: SIGTERM to the group; after [`GRACE`] SIGKILL to the
    /// processes at the bottom of its tree (a worker in the middle of
    /// `--vm-method all` takes seconds to see SIGTERM; killed together
    /// with their parents they would be left as zombies for init to
    /// reap, lazily); after [`GONE`] SIGKILL to the whole group; stress-ng
    /// reaped.
    pub(crate) fn stop(mut self) {
        use rustix::process::Signal;
        self.group.signal_group(Signal::TERM);
        if !self.exits_within(GRACE) {
            let tree = self.processes();
            for (pid, stat) in &tree {
                let leaf = !tree.iter().any(|(_, s)| s.ppid == *pid);
                if *pid != self.pid && leaf {
                    kill_if_same(*pid, stat);
                }
            }
            self.exits_within(GONE);
        }
        self.group.kill_all();
    }

    /// Whether stress-ng has exited (unreaped) within `within`.
    fn exits_within(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while !has_exited(self.pid) {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }
}

/// SIGKILL to `pid` if it is still the process `seen` (same parent and
/// start time), through a pidfd, so a PID reused meanwhile is spared.
fn kill_if_same(pid: u32, seen: &procfs::Stat) {
    use rustix::process::{Pid, PidfdFlags, Signal, pidfd_open, pidfd_send_signal};
    let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return;
    };
    let Ok(fd) = pidfd_open(raw, PidfdFlags::empty()) else {
        return;
    };
    // The pidfd names one process from here on: check it is the one seen.
    if procfs::stat(pid).is_some_and(|now| now.ppid == seen.ppid && now.start == seen.start) {
        let _ = pidfd_send_signal(&fd, Signal::KILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_arguments_are_pipe_bench_s() {
        assert_eq!(
            arguments(4, 80.0).join(" "),
            "--vm 4 --vm-bytes 80% --vm-method all"
        );
        assert_eq!(arguments(2, 0.5)[3], "0.5%");
    }

    #[test]
    fn reads_the_version_line() {
        let line = "stress-ng, version 0.15.06 (gcc 12.2.0, x86_64 Linux 6.18.44) \u{1f4bb}\n";
        assert_eq!(parse_version(line).as_deref(), Some("stress-ng 0.15.06"));
        assert_eq!(parse_version("stress-ng, version\n"), None);
        assert_eq!(parse_version("nothing"), None);
    }
}
