//! What a watchdog reads of one task (a process, or a thread of ours) in
//! `/proc`: whether it still makes progress, and, once it does not, where
//! it sleeps. `wchan` and `syscall` need the right to ptrace the task
//! (ours are ours), `stack` needs root: a file that cannot be read is said
//! in the dump, never an error.
//!
//! # References
//!  - [proc_pid_stat(5)](https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html),
//!    [proc_pid_status(5)](https://man7.org/linux/man-pages/man5/proc_pid_status.5.html),
//!    [proc_pid_wchan(5)](https://man7.org/linux/man-pages/man5/proc_pid_wchan.5.html),
//!    [proc_pid_syscall(5)](https://man7.org/linux/man-pages/man5/proc_pid_syscall.5.html),
//!    [proc_pid_stack(5)](https://man7.org/linux/man-pages/man5/proc_pid_stack.5.html)
//!  - Documentation/scheduler/sched-stats.rst (`schedstat`: nanoseconds
//!    on the CPU first)

use std::fs;
use std::io;

use super::procfs::{Stat, field, parse_stat};

/// A task to read: a process, or one thread of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Task {
    /// The process.
    pub pid: u32,
    /// The thread (`None`: the process's main thread, `/proc/PID`).
    pub tid: Option<u32>,
}

impl Task {
    /// A process (a worker process).
    pub(crate) fn process(pid: u32) -> Task {
        Task { pid, tid: None }
    }

    /// Thread `tid` of this process (a worker thread).
    pub(crate) fn own_thread(tid: u32) -> Task {
        Task {
            pid: std::process::id(),
            tid: Some(tid),
        }
    }

    fn path(&self, file: &str) -> String {
        match self.tid {
            None => format!("/proc/{}/{file}", self.pid),
            Some(tid) => format!("/proc/{}/task/{tid}/{file}", self.pid),
        }
    }

    fn read(&self, file: &str) -> io::Result<String> {
        fs::read_to_string(self.path(file))
    }
}

/// What moves while a task makes progress: a task that runs, or sleeps
/// and wakes, changes one of them; one never woken (or stopped), neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Counters {
    /// Time on a CPU: `schedstat`'s first field in nanoseconds, else
    /// `stat`'s utime + stime in clock ticks (kernels without
    /// schedstats).
    pub cpu: u64,
    /// Voluntary plus involuntary context switches (`status`).
    pub switches: u64,
}

/// The task's progress counters, or `None` once it has ended (gone, or a
/// zombie: it will never run again, so it is not stalled either).
pub(crate) fn counters(task: Task) -> Option<Counters> {
    let stat = task.read("stat").ok()?;
    let Stat {
        state,
        cpu_ticks: ticks,
        ..
    } = parse_stat(&stat)?;
    if matches!(state, 'Z' | 'X' | 'x') {
        return None;
    }
    let cpu = task
        .read("schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(ticks);
    let status = task.read("status").ok()?;
    let switches = ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"]
        .iter()
        .filter_map(|key| field(&status, key)?.parse::<u64>().ok())
        .sum();
    Some(Counters { cpu, switches })
}

/// Where a task is, read once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Where {
    /// `status`'s state: `S (sleeping)`, `T (stopped)`, `D (disk
    /// sleep)`...; `None` once it has ended.
    pub state: Option<String>,
    /// The kernel function it sleeps in (`pipe_read`, `do_signal_stop`);
    /// `None` when running or not readable.
    pub wchan: Option<String>,
    /// The system call it is in, by name where known, with its first
    /// three arguments (`read(0x0, 0x7f3a..., 0x10000)`), or what the
    /// file says instead (`running`, `not in a system call`), or why it
    /// could not be read.
    pub syscall: String,
    /// Its kernel stack, a frame a line (`[<0>] pipe_read+0x2b0/0x4a0`).
    pub stack: Result<Vec<String>, String>,
}

/// Reads where `task` is now.
pub(crate) fn locate(task: Task) -> Where {
    let unreadable = |e: io::Error| format!("unreadable: {}", crate::quote::strerror(&e));
    let state = task
        .read("status")
        .ok()
        .and_then(|s| field(&s, "State:").map(str::to_string));
    let wchan = super::procfs::wchan(&task.path("wchan"));
    let syscall = match task.read("syscall") {
        Ok(text) => describe_syscall(text.trim()),
        Err(e) => unreadable(e),
    };
    let stack = task
        .read("stack")
        .map(|s| s.lines().map(|l| l.trim().to_string()).collect())
        .map_err(unreadable);
    Where {
        state,
        wchan,
        syscall,
        stack,
    }
}

/// `/proc/PID/syscall` in words: `NR ARG1 ... SP PC` while blocked in a
/// call, `-1 SP PC` while blocked outside one, `running` on a CPU.
fn describe_syscall(text: &str) -> String {
    let fields: Vec<&str> = text.split_whitespace().collect();
    match fields.first().map(|nr| nr.parse::<i64>()) {
        Some(Ok(-1)) => "not in a system call".to_string(),
        Some(Ok(nr)) => {
            let args = fields.get(1..4).unwrap_or_default().join(", ");
            match syscall_name(nr) {
                Some(name) => format!("{name}({args})"),
                None => format!("syscall {nr}({args})"),
            }
        }
        _ => text.to_string(),
    }
}

/// The name of the calls a pipe measurement sleeps in; the others go by
/// number (the numbers differ between architectures).
fn syscall_name(nr: i64) -> Option<&'static str> {
    use libc as c;
    let known = [
        (c::SYS_read, "read"),
        (c::SYS_write, "write"),
        (c::SYS_readv, "readv"),
        (c::SYS_writev, "writev"),
        (c::SYS_splice, "splice"),
        (c::SYS_vmsplice, "vmsplice"),
        (c::SYS_tee, "tee"),
        (c::SYS_ppoll, "ppoll"),
        (c::SYS_pselect6, "pselect6"),
        (c::SYS_epoll_pwait, "epoll_pwait"),
        (c::SYS_futex, "futex"),
        (c::SYS_wait4, "wait4"),
        (c::SYS_waitid, "waitid"),
        (c::SYS_clock_nanosleep, "clock_nanosleep"),
        (c::SYS_nanosleep, "nanosleep"),
        (c::SYS_sendmsg, "sendmsg"),
        (c::SYS_recvmsg, "recvmsg"),
        (c::SYS_sendto, "sendto"),
        (c::SYS_recvfrom, "recvfrom"),
        (c::SYS_mq_timedsend, "mq_timedsend"),
        (c::SYS_mq_timedreceive, "mq_timedreceive"),
        (c::SYS_io_uring_enter, "io_uring_enter"),
        (c::SYS_sendfile, "sendfile"),
        (c::SYS_copy_file_range, "copy_file_range"),
        #[cfg(target_arch = "x86_64")]
        (c::SYS_poll, "poll"),
        #[cfg(target_arch = "x86_64")]
        (c::SYS_select, "select"),
    ];
    // `c_long` is `i64` here, `i32` on 32-bit targets.
    #[allow(clippy::useless_conversion)]
    known
        .iter()
        .find(|&&(n, _)| i64::from(n) == nr)
        .map(|&(_, name)| name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_stat_line_gives_its_state_and_cpu_ticks_whatever_the_name() {
        let line = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 1 0 99 0 0";
        let state_and_ticks = |line| parse_stat(line).map(|s| (s.state, s.cpu_ticks));
        assert_eq!(state_and_ticks(line), Some(('S', 12)));
        assert_eq!(state_and_ticks("42 (cut"), None);
        assert_eq!(state_and_ticks("42 (x) S 1 2"), None);
    }

    #[test]
    fn a_syscall_line_is_said_in_words() {
        let nr = libc::SYS_read;
        let line = format!("{nr} 0x3 0x7f00 0x10000 0x0 0x0 0x0 0x7ffd 0x7f12");
        assert_eq!(describe_syscall(&line), "read(0x3, 0x7f00, 0x10000)");
        assert_eq!(describe_syscall("-1 0x7ffd 0x7f12"), "not in a system call");
        assert_eq!(describe_syscall("running"), "running");
        assert_eq!(
            describe_syscall("100000 0x1 0x2 0x3"),
            "syscall 100000(0x1, 0x2, 0x3)"
        );
    }

    #[test]
    fn this_thread_moves_and_a_process_that_ended_has_no_counters() {
        let me = Task::own_thread(rustix::thread::gettid().as_raw_nonzero().get() as u32);
        let before = counters(me).unwrap();
        // Work, then sleep: the CPU time or the switches move.
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_ne!(counters(me).unwrap(), before);
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert_eq!(counters(Task::process(pid)), None);
    }
}
