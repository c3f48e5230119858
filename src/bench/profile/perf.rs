//! The real perf tool for `bench --profile`. Pipes spend their time in the
//! kernel, so when perf would only see user space the profile is reported
//! unavailable with the setting to change, rather than recorded blind.
//!
//! # References
//!  - [perf-record(1)](https://man7.org/linux/man-pages/man1/perf-record.1.html),
//!    [perf-report(1)](https://man7.org/linux/man-pages/man1/perf-report.1.html)
//!  - [perf-security](https://www.kernel.org/doc/html/latest/admin-guide/perf-security.html):
//!    `perf_event_paranoid` and `kptr_restrict`

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use super::report::{ReportLine, parse_report};

/// What `perf record` samples: the `cpu-clock` software event (a VM
/// has no hardware counters), with call chains (`-g`) as the blog did;
/// `-N`: no copy of the binaries into the user's `~/.debug` cache.
pub(crate) const RECORD_ARGS: [&str; 5] = ["-e", "cpu-clock", "-g", "-N", "-o"];

/// How `perf report` is asked for the symbols: self time only
/// (`--no-children`), sample counts (`-n`), one line per process and
/// symbol, no call graphs.
pub(crate) const REPORT_ARGS: [&str; 8] = [
    "--stdio",
    "--no-children",
    "-n",
    "--sort",
    "comm,sym",
    "-g",
    "none",
    "-i",
];

/// Why there is no perf, when it is not on `PATH`.
pub const NOT_INSTALLED: &str = "perf is not installed (apt-get install linux-perf)";

/// The system settings that decide whether perf may profile the kernel
/// side of our own child processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfAccess {
    /// `/proc/sys/kernel/perf_event_paranoid` (`None`: the file is
    /// missing, the kernel has no perf events).
    pub paranoid: Option<i64>,
    /// `/proc/sys/kernel/kptr_restrict` (`None`: missing).
    pub kptr_restrict: Option<i64>,
    /// Whether we run as root (capabilities such as `CAP_PERFMON` are not
    /// examined).
    pub root: bool,
}

impl PerfAccess {
    /// The settings of this machine and process.
    pub fn of_this_process() -> PerfAccess {
        let read = |path: &str| {
            fs::read_to_string(path)
                .ok()
                .and_then(|text| text.trim().parse().ok())
        };
        PerfAccess {
            paranoid: read("/proc/sys/kernel/perf_event_paranoid"),
            kptr_restrict: read("/proc/sys/kernel/kptr_restrict"),
            root: rustix::process::geteuid().is_root(),
        }
    }

    /// `Ok` if `perf record -e cpu-clock` of a child process would record
    /// its kernel samples and `perf report` could name kernel symbols;
    /// else why not, in one line.
    pub fn check(&self) -> Result<(), String> {
        const FIX: &str = "run as root, or: sysctl kernel.perf_event_paranoid=1";
        let Some(paranoid) = self.paranoid else {
            return Err(
                "this kernel has no perf events (/proc/sys/kernel/perf_event_paranoid is missing)"
                    .to_string(),
            );
        };
        if !self.root && paranoid >= 3 {
            return Err(format!(
                "perf_event_paranoid is {paranoid} and this is not root: perf may record \
                 no events at all ({FIX})"
            ));
        }
        if !self.root && paranoid == 2 {
            return Err(format!(
                "perf_event_paranoid is 2 and this is not root: perf would see user space \
                 only, not the kernel where pipes spend their time ({FIX})"
            ));
        }
        match self.kptr_restrict {
            Some(k) if k >= 2 => Err(format!(
                "kptr_restrict is {k}: /proc/kallsyms hides kernel addresses even from root, \
                 so perf could not name kernel symbols (sysctl kernel.kptr_restrict=0)"
            )),
            Some(1) if !self.root => Err(
                "kptr_restrict is 1 and this is not root: perf could not name kernel symbols \
                 (run as root, or: sysctl kernel.kptr_restrict=0)"
                    .to_string(),
            ),
            _ => Ok(()),
        }
    }
}

/// The perf program, found and permitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Perf {
    /// Its path.
    pub program: PathBuf,
}

impl Perf {
    /// perf from `path` (a `PATH`-style list; `None`: the `PATH` of this
    /// process), if `access` lets it profile the kernel; else why not.
    pub fn locate(path: Option<&OsStr>, access: &PerfAccess) -> Result<Perf, String> {
        let inherited = std::env::var_os("PATH");
        let path = path.or(inherited.as_deref()).unwrap_or_default();
        let program = crate::sys::process::find_program("perf", path)
            .ok_or_else(|| NOT_INSTALLED.to_string())?;
        access.check()?;
        Ok(Perf { program })
    }

    /// `perf record -e cpu-clock -g -N -o DATA -- PROGRAM`; the caller adds
    /// PROGRAM's arguments.
    pub fn record(&self, data: &Path, program: &Path) -> Command {
        let mut command = Command::new(&self.program);
        command
            .arg("record")
            .args(RECORD_ARGS)
            .arg(data)
            .arg("--")
            .arg(program);
        command
    }

    /// Runs `perf report --stdio --no-children -n --sort comm,sym -g none
    /// -i DATA` and reads its symbol lines. A recording without samples
    /// has none; perf's other failures are the first useful line of its
    /// messages.
    pub fn report(&self, data: &Path) -> Result<Vec<ReportLine>, String> {
        let out = Command::new(&self.program)
            .arg("report")
            .args(REPORT_ARGS)
            .arg(data)
            .output()
            .map_err(|e| format!("cannot run {} report: {e}", self.program.display()))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("has no samples") {
            return Ok(Vec::new());
        }
        if !out.status.success() {
            return Err(format!("perf report: {}", first_useful_line(&stderr)));
        }
        Ok(parse_report(&String::from_utf8_lossy(&out.stdout)))
    }
}

/// `command` as a shell line: the program and its arguments, separated
/// by spaces (none of ours holds a space or a quote).
pub(crate) fn command_line(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The first line of perf's messages that says something: not blank, not
/// a bare `Error:`, not one of perf record's `[ perf record: ... ]`
/// progress notes.
pub(crate) fn first_useful_line(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .find(|l| {
            !l.is_empty() && !l.eq_ignore_ascii_case("error:") && !l.starts_with("[ perf record:")
        })
        .unwrap_or("no message")
        .to_string()
}

/// A private directory for perf's data, removed with everything in it
/// when dropped. A process killed by a signal it does not catch leaves it
/// behind, so each new one first removes the stale ones.
#[derive(Debug)]
pub(crate) struct Scratch {
    path: PathBuf,
}

/// The name's start of every [`Scratch`] directory.
const SCRATCH_PREFIX: &str = "pipespeed-profile-";

impl Scratch {
    /// `$TMPDIR/pipespeed-profile-PID-N`, mode 0700.
    pub(crate) fn new() -> io::Result<Scratch> {
        Scratch::new_in(&std::env::temp_dir())
    }

    /// `BASE/pipespeed-profile-PID-N`, mode 0700, after removing the
    /// stale ones in `base`.
    pub(crate) fn new_in(base: &Path) -> io::Result<Scratch> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        remove_stale(base);
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("{SCRATCH_PREFIX}{}-{n}", std::process::id()));
            match fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(Scratch { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => continue,
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot create {}: {e}", path.display()),
                    ));
                }
            }
        }
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Removes from `base` the [`Scratch`] directories (not links) of this
/// user named after a PID no process has now. `remove_dir_all` does not
/// follow links inside them.
fn remove_stale(base: &Path) {
    use rustix::process::{Pid, test_kill_process};
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    let me = rustix::process::geteuid().as_raw();
    let own = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(SCRATCH_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .filter(|(_, n)| n.parse::<u32>().is_ok())
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let Some(pid) = Pid::from_raw(pid).filter(|p| p.as_raw_pid() as u32 != own) else {
            continue;
        };
        let ours = entry.metadata().is_ok_and(|m| m.is_dir() && m.uid() == me);
        // ESRCH: no such process. EPERM: alive, another user's.
        if ours && test_kill_process(pid) == Err(rustix::io::Errno::SRCH) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn stale_scratch_directories_of_dead_processes_are_removed() {
        let base = tempfile::tempdir().unwrap();
        // A PID that was alive and is no more (reaped).
        let mut child = Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let dir = |name: &str| base.path().join(name);
        let stale = dir(&format!("{SCRATCH_PREFIX}{dead}-0"));
        fs::create_dir(&stale).unwrap();
        fs::write(stale.join("writer.data"), b"perf").unwrap();
        std::os::unix::fs::symlink("/", stale.join("ps-writer")).unwrap();
        let kept = [
            // Alive: init, and this process.
            dir(&format!("{SCRATCH_PREFIX}1-0")),
            dir(&format!("{SCRATCH_PREFIX}{}-900", std::process::id())),
            // Not a name of ours.
            dir(&format!("{SCRATCH_PREFIX}{dead}")),
            dir(&format!("{SCRATCH_PREFIX}{dead}-x")),
        ];
        for keep in &kept {
            fs::create_dir(keep).unwrap();
        }
        // A link of the right name is not followed nor removed.
        let target = tempfile::tempdir().unwrap();
        let link = dir(&format!("{SCRATCH_PREFIX}{dead}-1"));
        std::os::unix::fs::symlink(target.path(), &link).unwrap();
        let scratch = Scratch::new_in(base.path()).unwrap();
        assert!(!stale.exists(), "the dead process's directory stays");
        for keep in &kept {
            assert!(keep.exists(), "{} was removed", keep.display());
        }
        assert!(fs::symlink_metadata(&link).is_ok() && target.path().exists());
        assert!(scratch.path().is_dir());
    }

    fn access(paranoid: Option<i64>, kptr_restrict: i64, root: bool) -> Result<(), String> {
        PerfAccess {
            paranoid,
            kptr_restrict: Some(kptr_restrict),
            root,
        }
        .check()
    }

    #[test]
    fn root_may_profile_whatever_perf_event_paranoid_says() {
        for paranoid in [-1, 0, 1, 2, 3, 4] {
            assert_eq!(access(Some(paranoid), 1, true), Ok(()), "{paranoid}");
        }
    }

    #[test]
    fn others_may_profile_the_kernel_up_to_paranoid_1() {
        for paranoid in [-1, 0, 1] {
            assert_eq!(access(Some(paranoid), 0, false), Ok(()), "{paranoid}");
        }
        let two = access(Some(2), 0, false).unwrap_err();
        assert!(two.contains("sysctl kernel.perf_event_paranoid=1"), "{two}");
    }

    #[test]
    fn each_refusal_names_its_setting() {
        for (paranoid, kptr_restrict, root, start) in [
            (
                Some(2),
                0,
                false,
                "perf_event_paranoid is 2 and this is not root: perf would see user space only",
            ),
            (
                Some(3),
                0,
                false,
                "perf_event_paranoid is 3 and this is not root",
            ),
            (Some(1), 1, false, "kptr_restrict is 1 and this is not root"),
            (Some(-1), 2, true, "kptr_restrict is 2"),
            (None, 0, true, "this kernel has no perf events"),
        ] {
            let why = access(paranoid, kptr_restrict, root).unwrap_err();
            assert!(
                why.starts_with(start),
                "{paranoid:?} {kptr_restrict} {root}: {why}"
            );
        }
    }

    #[test]
    fn perf_is_not_installed_where_path_has_none() {
        let dir = std::env::temp_dir().join(format!("pipespeed-no-perf-{}", std::process::id()));
        let ok = PerfAccess {
            paranoid: Some(-1),
            kptr_restrict: Some(0),
            root: true,
        };
        assert_eq!(
            Perf::locate(Some(dir.as_os_str()), &ok),
            Err(NOT_INSTALLED.to_string())
        );
        assert_eq!(
            Perf::locate(Some(OsStr::new("")), &ok),
            Err(NOT_INSTALLED.to_string())
        );
    }

    #[test]
    fn perf_messages_are_cut_to_the_line_that_says_why() {
        let refused = "Error:\nThe sys_perf_event_open() syscall returned with 13 (Permission denied) for event (cpu-clock).\n/bin/dmesg | grep -i perf may provide additional information.\n";
        assert_eq!(
            first_useful_line(refused),
            "The sys_perf_event_open() syscall returned with 13 (Permission denied) for event (cpu-clock)."
        );
        assert_eq!(
            first_useful_line("[ perf record: Woken up 1 times to write data ]\n\nboom\n"),
            "boom"
        );
        assert_eq!(first_useful_line(""), "no message");
    }

    #[test]
    fn the_record_command_wraps_the_program() {
        let perf = Perf {
            program: "/usr/bin/perf".into(),
        };
        let mut command = perf.record(Path::new("/tmp/w.data"), Path::new("/tmp/ps-writer"));
        command.arg("write");
        assert_eq!(
            command_line(&command),
            "/usr/bin/perf record -e cpu-clock -g -N -o /tmp/w.data -- /tmp/ps-writer write"
        );
    }

    #[test]
    fn scratch_directories_are_private_and_removed() {
        let scratch = Scratch::new().unwrap();
        let path = scratch.path().to_path_buf();
        fs::write(path.join("f"), b"x").unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        drop(scratch);
        assert!(!path.exists());
    }
}
