//! What `/proc` says about a process, read without changing anything.
//! `stat`, `status` and `schedstat` anyone may read; `io`, `fd/`, `fdinfo/`
//! and `wchan` need the right to ptrace-read the process (proc(5)): a
//! refused read comes back as `None`, and the caller says what it could
//! not see.
//!
//! # References
//!  - [proc_pid_stat(5)](https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html),
//!    [proc_pid_io(5)](https://man7.org/linux/man-pages/man5/proc_pid_io.5.html),
//!    [proc_pid_fdinfo(5)](https://man7.org/linux/man-pages/man5/proc_pid_fdinfo.5.html)

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};

/// The fields of `/proc/PID/stat` this module uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stat {
    /// The command name (at most 15 bytes, as the kernel keeps it).
    pub comm: String,
    /// `R` running or runnable, `S` sleeping, `D` in uninterruptible
    /// sleep, `T` stopped, `Z` a zombie...
    pub state: char,
    pub ppid: u32,
    pub session: u32,
    /// The controlling terminal's device number (0: none).
    pub tty: i64,
    /// User and system time, in clock ticks.
    pub cpu_ticks: u64,
    /// When it started, in clock ticks after boot: with the PID, it names
    /// one process even when the PID is reused.
    pub start: u64,
}

/// Parses a `stat` line; the command name is between the first `(` and
/// the last `)`, since it may contain both and spaces.
pub(crate) fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); field N is rest[N - 3].
    let field = |n: usize| rest.get(n - 3).copied();
    let num = |n: usize| field(n)?.parse::<u64>().ok();
    Some(Stat {
        comm: printable(&comm),
        state: field(3)?.chars().next()?,
        ppid: field(4)?.parse().ok()?,
        session: field(6)?.parse().ok()?,
        tty: field(7)?.parse().ok()?,
        cpu_ticks: num(14)?.saturating_add(num(15)?),
        start: num(22)?,
    })
}

/// `text` with its control characters as `?`, as ps shows a command: a
/// name another user chose must not move the cursor of our terminal.
pub(crate) fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// `/proc/PID/stat`, or `None` once the process is gone.
pub(crate) fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The threads of a process (`/proc/PID/task`), in no order.
pub(crate) fn tasks(pid: u32) -> Vec<u32> {
    numeric_entries(&format!("/proc/{pid}/task"))
}

/// Every process this user can see in `/proc`.
pub(crate) fn processes() -> Vec<u32> {
    numeric_entries("/proc")
}

fn numeric_entries(dir: &str) -> Vec<u32> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// What one thread is doing at this instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskState {
    pub state: char,
    /// The kernel function it sleeps in (`anon_pipe_read`...); `None`
    /// when running, or when the file cannot be read.
    pub wchan: Option<String>,
}

/// The state of thread `tid` of process `pid`, or `None` once it is gone.
pub(crate) fn task_state(pid: u32, tid: u32) -> Option<TaskState> {
    let stat = parse_stat(&fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?)?;
    Some(TaskState {
        state: stat.state,
        wchan: wchan(&format!("/proc/{pid}/task/{tid}/wchan")),
    })
}

/// The kernel function named in the `wchan` file at `path`; `None` when
/// running or not readable.
pub(crate) fn wchan(path: &str) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let name = text.trim();
    (!name.is_empty() && name != "0").then(|| name.to_string())
}

/// A thread's time on a CPU and waiting for one, in nanoseconds
/// (`/proc/PID/task/TID/schedstat`).
pub(crate) fn schedstat(pid: u32, tid: u32) -> Option<(u64, u64)> {
    let text = fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok()?;
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some((fields.next()??, fields.next()??))
}

/// `rchar` and `wchar` of `/proc/PID/io`: the bytes read and written by
/// read(2), write(2) and their kin, sendfile and copy_file_range; **not**
/// splice or vmsplice. `None` when the file cannot be read (another
/// user's process).
pub(crate) fn io_counters(pid: u32) -> Option<(u64, u64)> {
    let text = fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    let value = |key: &str| field(&text, key)?.parse::<u64>().ok();
    Some((value("rchar:")?, value("wchar:")?))
}

/// The command line's words (argv, each made printable); the command
/// name in brackets, one word, for a kernel thread or a zombie (as ps
/// shows them). Kept as words: a program's path may hold spaces.
pub(crate) fn command_line(pid: u32, comm: &str) -> Vec<String> {
    match fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(bytes) if !bytes.is_empty() => bytes
            .split(|b| *b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| printable(&String::from_utf8_lossy(w)))
            .collect(),
        _ => vec![format!("[{comm}]")],
    }
}

/// The file name of the program a process runs (its argv\[0\]'s last
/// component), as ps -C matches it.
pub(crate) fn program(pid: u32) -> String {
    let Ok(bytes) = fs::read(format!("/proc/{pid}/cmdline")) else {
        return String::new();
    };
    let first = bytes.split(|c| *c == 0).next().unwrap_or_default();
    let name = first.rsplit(|c| *c == b'/').next().unwrap_or_default();
    String::from_utf8_lossy(name).into_owned()
}

/// A pipe, anonymous or named: the identity both ends share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum PipeId {
    /// `pipe:[INODE]`.
    Anonymous(u64),
    /// A FIFO in a filesystem: its device and inode.
    Named { dev: u64, ino: u64 },
}

/// Which way a descriptor was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
    ReadWrite,
}

/// What a descriptor points at, as far as a pipeline is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Object {
    Pipe {
        id: PipeId,
        path: Option<String>,
    },
    /// A regular file, whose position (`pos:` in fdinfo) moves under
    /// splice as under read: a splicing stage's rate can be read there.
    File {
        path: String,
    },
    Other,
}

/// One open descriptor of a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Descriptor {
    pub fd: u32,
    pub object: Object,
    pub access: Access,
    pub pos: u64,
}

/// The descriptors of process `pid` that are pipes, FIFOs or regular
/// files; `Err` when they cannot be listed (another user's process, or
/// gone). A descriptor closed while it is read is left out.
pub(crate) fn descriptors(pid: u32) -> io::Result<Vec<Descriptor>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(format!("/proc/{pid}/fd"))? {
        let Some(fd) = entry
            .ok()
            .and_then(|e| e.file_name().to_str()?.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(link) = fs::read_link(format!("/proc/{pid}/fd/{fd}")) else {
            continue;
        };
        let link = link.to_string_lossy().into_owned();
        let object = if let Some(ino) = link
            .strip_prefix("pipe:[")
            .and_then(|r| r.strip_suffix(']'))
            .and_then(|n| n.parse().ok())
        {
            Object::Pipe {
                id: PipeId::Anonymous(ino),
                path: None,
            }
        } else if link.starts_with('/') {
            // The link is a path: what it names, through the descriptor
            // (the path may be gone or another file by now), without
            // asking a network filesystem's server (which may not answer).
            use rustix::fs::{AtFlags, CWD, FileType, StatxFlags, statx};
            let what = StatxFlags::TYPE | StatxFlags::INO;
            match statx(
                CWD,
                format!("/proc/{pid}/fd/{fd}"),
                AtFlags::STATX_DONT_SYNC,
                what,
            ) {
                Ok(st) => match FileType::from_raw_mode(u32::from(st.stx_mode)) {
                    FileType::Fifo => Object::Pipe {
                        id: PipeId::Named {
                            dev: libc::makedev(st.stx_dev_major, st.stx_dev_minor),
                            ino: st.stx_ino,
                        },
                        path: Some(printable(&link)),
                    },
                    FileType::RegularFile => Object::File { path: link },
                    _ => Object::Other,
                },
                Err(_) => Object::Other,
            }
        } else {
            Object::Other
        };
        if object == Object::Other {
            continue;
        }
        let Some((flags, pos)) = fdinfo(pid, fd) else {
            continue;
        };
        let access = match flags & libc::O_ACCMODE as u32 {
            0 => Access::Read,
            1 => Access::Write,
            _ => Access::ReadWrite,
        };
        found.push(Descriptor {
            fd,
            object,
            access,
            pos,
        });
    }
    found.sort_by_key(|d| d.fd);
    Ok(found)
}

/// `flags:` (octal) and `pos:` of `/proc/PID/fdinfo/FD`.
pub(crate) fn fdinfo(pid: u32, fd: u32) -> Option<(u32, u64)> {
    let text = fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).ok()?;
    let value = |key: &str| field(&text, key);
    let flags = u32::from_str_radix(value("flags:")?, 8).ok()?;
    let pos = value("pos:")?.parse().ok()?;
    Some((flags, pos))
}

/// The value after `key` (`pos:`, `State:`) in a file of `key value`
/// lines such as `status` and `fdinfo/FD`.
pub(crate) fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .map(str::trim)
}

/// How full a pipe is: the bytes in it and its capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fill {
    pub bytes: u64,
    pub capacity: u64,
}

/// The fill of the pipe behind descriptor `fd` of `pid`, which must be
/// `id` (checked on the open descriptor, so one reused since the listing
/// is not measured).
///
/// The pipe is opened through `/proc` for reading (a writer of ours would
/// hold its reader's end of file back), without blocking, and closed at
/// once. The caller opens only pipes it has seen a reader of: opening a
/// FIFO that has none would let a writer blocked in open(2) through.
///
/// # References
///  - [pipe(7)](https://man7.org/linux/man-pages/man7/pipe.7.html):
///    FIONREAD, F_GETPIPE_SZ
pub(crate) fn pipe_fill(pid: u32, fd: u32, id: PipeId) -> Option<Fill> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(format!("/proc/{pid}/fd/{fd}"))
        .ok()?;
    let meta = file.metadata().ok()?;
    let same = match id {
        PipeId::Anonymous(ino) => meta.ino() == ino,
        PipeId::Named { dev, ino } => meta.dev() == dev && meta.ino() == ino,
    };
    if !same || !meta.file_type().is_fifo() {
        return None;
    }
    let bytes = rustix::io::ioctl_fionread(&file).ok()?;
    let capacity = crate::sys::fcntl_getpipe_size(&file).ok()? as u64;
    Some(Fill { bytes, capacity })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_name_with_spaces_and_parentheses_is_read_whole() {
        let line = "42 (a (b) c) S 1 42 42 34816 42 4194304 0 0 0 0 7 3 0 0 20 0 1 0 \
                    12345 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let stat = parse_stat(line).unwrap();
        assert_eq!(stat.comm, "a (b) c");
        assert_eq!(stat.state, 'S');
        assert_eq!(stat.ppid, 1);
        assert_eq!(stat.session, 42);
        assert_eq!(stat.tty, 34816);
        assert_eq!(stat.cpu_ticks, 10);
        assert_eq!(stat.start, 12345);
    }

    #[test]
    fn a_truncated_stat_line_is_none_not_a_panic() {
        assert_eq!(parse_stat("42 (x) S 1"), None);
        assert_eq!(parse_stat(""), None);
        assert_eq!(parse_stat("42 x) S"), None);
    }

    #[test]
    fn our_own_pipe_is_found_with_its_ends_and_its_fill() {
        use std::io::Write;
        let pair = crate::sys::pipe().unwrap();
        let mut w = fs::File::from(pair.write);
        w.write_all(&[7; 1000]).unwrap();
        let me = std::process::id();
        let fds = descriptors(me).unwrap();
        let ends: Vec<&Descriptor> = fds
            .iter()
            .filter(|d| matches!(d.object, Object::Pipe { .. }))
            .collect();
        use std::os::fd::AsRawFd;
        let read = ends
            .iter()
            .find(|d| d.fd == pair.read.as_raw_fd() as u32)
            .unwrap();
        let write = ends.iter().find(|d| d.fd == w.as_raw_fd() as u32).unwrap();
        assert_eq!(read.access, Access::Read);
        assert_eq!(write.access, Access::Write);
        assert_eq!(read.object, write.object);
        let Object::Pipe { id, .. } = read.object else {
            unreachable!()
        };
        let fill = pipe_fill(me, read.fd, id).unwrap();
        assert_eq!(fill.bytes, 1000);
        assert!(fill.capacity >= 4096, "{fill:?}");
        // Another pipe's identity is not measured through this descriptor.
        assert_eq!(pipe_fill(me, read.fd, PipeId::Anonymous(1)), None);
        // Measuring took nothing out.
        assert_eq!(pipe_fill(me, write.fd, id).unwrap().bytes, 1000);
    }
}
