//! Child processes that must not outlive us. A measurement's workers are
//! stopped by the group that started them (kill, then wait); on SIGINT,
//! SIGTERM or SIGHUP by [`catch_interrupts`]'s handler, which kills every
//! group registered with [`kill_on_interrupt`] and sets [`interrupted`]
//! for the runner to unwind; and if we die without unwinding (SIGKILL), by
//! the kernel: each child calls [`die_with_parent`] first thing.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, Ordering};

use rustix::process::{Pid, Signal};

use super::failed;

/// The signal that interrupted us (0: none yet).
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// How many process groups can be registered at once.
const GROUP_SLOTS: usize = 8;

/// Process groups the interrupt handler kills (0: free slot).
static GROUPS: [AtomicI32; GROUP_SLOTS] = [const { AtomicI32::new(0) }; GROUP_SLOTS];

/// Pidfds of processes a second interrupt kills ([`kill_on_second_interrupt`]);
/// -1: free.
static PIDFDS: [AtomicI32; GROUP_SLOTS] = [const { AtomicI32::new(-1) }; GROUP_SLOTS];

/// The process groups led by those processes, killed with them (0: none).
static PIDFD_GROUPS: [AtomicI32; GROUP_SLOTS] = [const { AtomicI32::new(0) }; GROUP_SLOTS];

/// Files a second interrupt removes ([`remove_on_second_interrupt`]), as
/// C strings owned by their guards; null: free.
static PATHS: [AtomicPtr<libc::c_char>; GROUP_SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; GROUP_SLOTS];

/// The status a second interrupt ends the process with (-1: 128 + the
/// signal's number); [`second_interrupt_status`] sets it.
static SECOND_STATUS: AtomicI32 = AtomicI32::new(-1);

/// How many handlers are reading [`PATHS`] (each then ends the process):
/// a guard frees its path only when none is.
static READING_PATHS: AtomicU32 = AtomicU32::new(0);

/// `prctl(PR_SET_PDEATHSIG, SIGKILL)`, then, given a `parent`, a check
/// that it is still our parent: the calling process is killed when the
/// *thread* that started it exits, and fails here if that already
/// happened. Without one (a worker under `perf record`), the signal is
/// tied to whatever process started us.
///
/// # References
///  - [prctl(2)](https://man7.org/linux/man-pages/man2/prctl.2.html) (`PR_SET_PDEATHSIG`)
#[doc(alias = "prctl")]
#[doc(alias = "PR_SET_PDEATHSIG")]
pub(crate) fn die_with_parent(parent: Option<u32>) -> io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL)).map_err(|e| {
        failed(
            "cannot ask to die with the parent (prctl PR_SET_PDEATHSIG)",
            e,
        )
    })?;
    let Some(parent) = parent else {
        return Ok(());
    };
    let now = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get() as u32);
    if now != parent {
        return Err(io::Error::new(
            io::ErrorKind::NotConnected,
            format!("parent process {parent} is gone (parent is now {now})"),
        ));
    }
    Ok(())
}

/// Has the program `cmd` starts die with us (as [`die_with_parent`],
/// between fork and exec; exec keeps it): a SIGKILL of ours, which no
/// handler sees, so takes qemu along at once. Call `spawn` from a thread
/// that lives as long as the child should.
///
/// # References
///  - [prctl(2)](https://man7.org/linux/man-pages/man2/prctl.2.html) (`PR_SET_PDEATHSIG`)
#[doc(alias = "PR_SET_PDEATHSIG")]
pub(crate) fn die_with_parent_on_exec(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = rustix::process::getpid();
    // SAFETY: the hook runs in the forked child before exec and only
    // makes two system calls through rustix, which neither allocates nor
    // takes a lock (async-signal-safe, as such a hook must be); its error
    // is a raw OS error, which allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
            if rustix::process::getppid() != Some(parent) {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// `kill(-pgid, SIGKILL)`: kills every process of the group `pgid`. A
/// group that no longer exists is not an error.
///
/// Only call this while at least one member of the group is known not to
/// be reaped: a group ID is free for reuse once all its members are.
///
/// # References
///  - [kill(2)](https://man7.org/linux/man-pages/man2/kill.2.html)
#[doc(alias = "kill")]
pub(crate) fn kill_group(pgid: u32) -> io::Result<()> {
    let pid = group_pid(pgid)?;
    match rustix::process::kill_process_group(pid, Signal::KILL) {
        Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
        Err(e) => Err(failed(format_args!("cannot kill process group {pgid}"), e)),
    }
}

/// A process group ID we may signal: never 0 (our own group) or 1
/// (`kill(-1)` means every process we may signal).
fn group_pid(pgid: u32) -> io::Result<Pid> {
    i32::try_from(pgid)
        .ok()
        .filter(|&raw| raw > 1)
        .and_then(Pid::from_raw)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{pgid} is not a process group to kill"),
            )
        })
}

/// Catches SIGINT, SIGTERM and SIGHUP for the rest of the process's life:
/// the first one sets [`interrupted`] and kills the registered groups; a
/// second one kills them again and exits at once with status 128 + the
/// signal number (so a stuck clean-up can still be interrupted).
///
/// A signal the parent left ignored stays ignored (`&` in a script,
/// `nohup`). Without `SA_RESTART`, a
/// blocking call in the thread that takes the signal returns `EINTR`, so
/// loops that check [`interrupted`] then notice at once.
///
/// # References
///  - [sigaction(2)](https://man7.org/linux/man-pages/man2/sigaction.2.html)
///  - [signal-safety(7)](https://man7.org/linux/man-pages/man7/signal-safety.7.html)
#[doc(alias = "sigaction")]
pub(crate) fn catch_interrupts() -> io::Result<()> {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only does async-signal-safe things (atomic
        // loads and stores, kill(2), _exit(2)).
        unsafe { super::signal::catch_unless_ignored(signal, on_interrupt, 0) }
            .map_err(|e| failed(format_args!("cannot catch signal {signal} (sigaction)"), e))?;
    }
    Ok(())
}

extern "C" fn on_interrupt(signal: libc::c_int) {
    let first = SIGNALLED
        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok();
    for slot in &GROUPS {
        let pgid = slot.load(Ordering::SeqCst);
        if pgid > 1
            && let Some(pid) = Pid::from_raw(pgid)
        {
            // rustix makes the system call directly: async-signal-safe.
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        }
    }
    if !first {
        for (slot, group) in PIDFDS.iter().zip(&PIDFD_GROUPS) {
            let fd = slot.load(Ordering::SeqCst);
            if fd >= 0 {
                // SAFETY: pidfd_send_signal(2) is a plain system call
                // (async-signal-safe); `fd` is a pidfd kept open while it
                // is registered (the guard borrows it), and the null info
                // pointer is allowed.
                let _ = unsafe {
                    libc::syscall(
                        libc::SYS_pidfd_send_signal,
                        fd,
                        libc::SIGKILL,
                        std::ptr::null::<libc::siginfo_t>(),
                        0,
                    )
                };
                // Its leader not reaped yet (the guard lives until then),
                // the group's ID is still its own.
                if let Some(pgid) = Pid::from_raw(group.load(Ordering::SeqCst)) {
                    let _ = rustix::process::kill_process_group(pgid, Signal::KILL);
                }
            }
        }
        READING_PATHS.fetch_add(1, Ordering::SeqCst);
        for slot in &PATHS {
            let path = slot.load(Ordering::SeqCst);
            if !path.is_null() {
                // SAFETY: unlink(2) is async-signal-safe; `path` is a C
                // string its guard frees only once no handler reads
                // `PATHS` (READING_PATHS, never decremented here: this
                // handler ends the process).
                let _ = unsafe { libc::unlink(path) };
            }
        }
        let status = match SECOND_STATUS.load(Ordering::SeqCst) {
            -1 => 128 + signal,
            status => status,
        };
        // SAFETY: _exit is async-signal-safe and ends the process without
        // running any of our code.
        unsafe { libc::_exit(status) };
    }
}

/// Has a second interrupt end the process with `status` instead of 128 +
/// the signal's number (`None`, the default): a command whose statuses
/// say an interruption their own way (pv's 32, whatever the signals).
pub(crate) fn second_interrupt_status(status: Option<u8>) {
    SECOND_STATUS.store(status.map_or(-1, i32::from), Ordering::SeqCst);
}

/// A file registered with [`remove_on_second_interrupt`]; dropping it
/// takes the file off the list (it does not remove it).
#[derive(Debug)]
#[must_use = "the file is unregistered when this is dropped"]
pub(crate) struct RemoveOnSecondInterrupt {
    slot: usize,
}

/// Has the second interrupt of [`catch_interrupts`] remove `path` first,
/// so that a file removed at the command's end (pv's pidfile and control
/// socket) is not left behind when a blocked clean-up is cut short.
pub(crate) fn remove_on_second_interrupt(path: &Path) -> io::Result<RemoveOnSecondInterrupt> {
    let path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))?
        .into_raw();
    let null = std::ptr::null_mut();
    if let Some(slot) = PATHS.iter().position(|entry| {
        let taken = entry.compare_exchange(null, path, Ordering::SeqCst, Ordering::SeqCst);
        taken.is_ok()
    }) {
        return Ok(RemoveOnSecondInterrupt { slot });
    }
    // SAFETY: `path` came from `CString::into_raw` above and was shared
    // with nobody.
    drop(unsafe { CString::from_raw(path) });
    Err(io::Error::other(format!(
        "cannot register a file: {GROUP_SLOTS} are registered already"
    )))
}

impl Drop for RemoveOnSecondInterrupt {
    fn drop(&mut self) {
        let path = PATHS[self.slot].swap(std::ptr::null_mut(), Ordering::SeqCst);
        // A handler that loaded it before the swap is ending the process:
        // the path stays valid until then.
        while READING_PATHS.load(Ordering::SeqCst) > 0 {
            std::thread::yield_now();
        }
        if !path.is_null() {
            // SAFETY: it came from `CString::into_raw` in
            // `remove_on_second_interrupt`, and no handler reads it now.
            drop(unsafe { CString::from_raw(path) });
        }
    }
}

/// A process registered with [`kill_on_second_interrupt`]; dropping it
/// takes the process off the list.
#[derive(Debug)]
#[must_use = "the process is unregistered when this is dropped"]
pub(crate) struct KillOnSecondInterrupt<'fd> {
    slot: usize,
    _pidfd: std::marker::PhantomData<BorrowedFd<'fd>>,
}

/// Has the second interrupt of [`catch_interrupts`] kill the process
/// behind `pidfd` first (a pidfd never names a process that reuses the
/// ID), so that a child the first one was only passed on to (`pv -M`'s
/// command) does not outlive us. With `group` (the process leads its own
/// group), the group is killed too: call it only while it is not reaped.
pub(crate) fn kill_on_second_interrupt(
    pidfd: BorrowedFd<'_>,
    group: Option<Pid>,
) -> io::Result<KillOnSecondInterrupt<'_>> {
    let slot = take_slot(&PIDFDS, -1, pidfd.as_raw_fd()).ok_or_else(|| {
        io::Error::other(format!(
            "cannot register a process: {GROUP_SLOTS} are registered already"
        ))
    })?;
    let group = group.map_or(0, |pid| pid.as_raw_nonzero().get());
    PIDFD_GROUPS[slot].store(group, Ordering::SeqCst);
    Ok(KillOnSecondInterrupt {
        slot,
        _pidfd: std::marker::PhantomData,
    })
}

impl Drop for KillOnSecondInterrupt<'_> {
    fn drop(&mut self) {
        PIDFD_GROUPS[self.slot].store(0, Ordering::SeqCst);
        PIDFDS[self.slot].store(-1, Ordering::SeqCst);
    }
}

/// The signal number of the SIGINT, SIGTERM or SIGHUP caught by
/// [`catch_interrupts`], if one came.
pub(crate) fn interrupted() -> Option<i32> {
    match SIGNALLED.load(Ordering::Relaxed) {
        0 => None,
        signal => Some(signal),
    }
}

/// The name of a signal [`interrupted`] returns.
pub(crate) fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".to_string(),
        libc::SIGTERM => "SIGTERM".to_string(),
        libc::SIGHUP => "SIGHUP".to_string(),
        other => format!("signal {other}"),
    }
}

/// A process group registered with [`kill_on_interrupt`]; dropping it
/// takes the group off the list.
#[derive(Debug)]
#[must_use = "the group is unregistered when this is dropped"]
pub(crate) struct KillOnInterrupt {
    slot: usize,
}

/// Has the interrupt handler kill the process group `pgid` too. Drop the
/// returned value before the group's last member is reaped, so a reused
/// group ID is never killed.
pub(crate) fn kill_on_interrupt(pgid: u32) -> io::Result<KillOnInterrupt> {
    let raw = group_pid(pgid)?.as_raw_nonzero().get();
    let slot = take_slot(&GROUPS, 0, raw).ok_or_else(|| {
        io::Error::other(format!(
            "cannot register process group {pgid}: {GROUP_SLOTS} groups are registered already"
        ))
    })?;
    Ok(KillOnInterrupt { slot })
}

/// The first of `slots` that held `free`, now holding `value`.
fn take_slot(slots: &[AtomicI32], free: i32, value: i32) -> Option<usize> {
    slots.iter().position(|slot| {
        slot.compare_exchange(free, value, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })
}

impl Drop for KillOnInterrupt {
    fn drop(&mut self) {
        GROUPS[self.slot].store(0, Ordering::SeqCst);
    }
}

/// The first executable file called `name` in the directories of `path`
/// (a `PATH`).
pub(crate) fn find_program(name: &str, path: &std::ffi::OsStr) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The C library this process runs with, as it names itself (`glibc
/// 2.36`); `None` where it cannot say (not glibc).
pub(crate) fn libc_version() -> Option<String> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: gnu_get_libc_version takes nothing and returns a pointer
        // to a static, NUL-terminated string that lives as long as the
        // process.
        let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
        Some(format!("glibc {}", version.to_string_lossy()))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_zero_and_one_are_never_killed() {
        assert!(kill_group(0).is_err());
        assert!(kill_group(1).is_err());
        assert!(kill_on_interrupt(1).is_err());
    }

    #[test]
    fn a_missing_group_is_not_an_error() {
        // Group IDs near the top of the PID range are practically unused.
        assert!(kill_group(4_194_000).is_ok());
    }

    #[test]
    fn registration_takes_and_frees_a_slot() {
        let taken = kill_on_interrupt(4_194_001).unwrap();
        assert!(GROUPS.iter().any(|g| g.load(Ordering::SeqCst) == 4_194_001));
        drop(taken);
        assert!(!GROUPS.iter().any(|g| g.load(Ordering::SeqCst) == 4_194_001));
    }

    #[test]
    fn dying_with_a_parent_that_is_not_ours_fails() {
        let err = die_with_parent(Some(u32::MAX)).unwrap_err();
        // Take back the death signal the call set on the test process.
        rustix::process::set_parent_process_death_signal(None).unwrap();
        assert!(err.to_string().contains("is gone"), "{err}");
        assert_eq!(signal_name(libc::SIGINT), "SIGINT");
    }
}
