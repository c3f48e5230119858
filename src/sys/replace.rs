//! Writing the file a user named: a regular file replaced whole or not at
//! all, keeping its mode and owner; anything else written in place.
//!
//! A path is walked one component at a time from a directory descriptor
//! (`openat2`'s `RESOLVE_` flags, by hand), each symbolic link checked,
//! read and walked in its turn. What the walk ends on (a [`Target`]) is:
//! - one of our own descriptors (`/dev/stdout`, `/dev/fd/N`): written
//!   there, at its offset, so a shell's `>>` appends;
//! - a FIFO, a terminal, a device: written in place as a stream;
//! - a regular file, or none yet: a temporary file made beside it
//!   (`O_EXCL|O_NOFOLLOW`), given the old file's owner and mode, written,
//!   synced and renamed over it, as `sed -i` and `install` do;
//! - a file with several hard links, one whose owner we cannot give a new
//!   file, or one in a directory we may not write: written in place, as
//!   `cp` does, after reserving the room (`RLIMIT_FSIZE`, `fallocate`) so
//!   that a full disk fails before its first byte changes.
//!
//! Whatever `fs.protected_symlinks` and `fs.protected_hardlinks` say (off
//! on this project's VMs), their rules hold here: in a sticky directory
//! writable by all (`/tmp`), where anyone may plant a link, a symbolic
//! link is followed only if we or the directory's owner made it, and a
//! file with several links is refused.
//!
//! # References
//!  - [openat2(2)](https://man7.org/linux/man-pages/man2/openat2.2.html), [rename(2)](https://man7.org/linux/man-pages/man2/rename.2.html)
//!  - [proc_sys_fs(5)](https://man7.org/linux/man-pages/man5/proc_sys_fs.5.html) (`protected_symlinks`, `protected_hardlinks`, `protected_regular`)

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use rustix::fs::{AtFlags, CWD, FallocateFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

mod dirs;
mod write;

pub(crate) use dirs::make_dir_all;

/// How many symbolic links one path may go through (the kernel's
/// `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The longest name of a directory entry, in bytes (`NAME_MAX`).
const NAME_MAX: usize = 255;

/// How long a stream is waited on before the caller's `stop` is asked.
const POLL_SLICE: Duration = Duration::from_millis(100);

/// Where the bytes for a path go, found before they exist.
///
/// A descriptor of the process is reached only through a path that names
/// it: safe code cannot make a `Target` of any number,
/// ```compile_fail,E0308
/// let _ = pipespeed::sys::replace::Target::Descriptor(3);
/// ```
/// nor duplicate any descriptor by number.
/// ```compile_fail,E0603
/// let _ = pipespeed::sys::replace::dup_descriptor(3);
/// ```
#[derive(Debug)]
pub(crate) enum Target {
    /// One of our descriptors, named by path (`/dev/stdout` is 1).
    Descriptor(Descriptor),
    /// Not a regular file: a FIFO, a terminal, a device.
    Special(Entry),
    /// A regular file, or none yet.
    File(FileTarget),
}

/// One of our descriptors that a path named (`/dev/fd/3`): made only by
/// [`Target::resolve`], from a path in our own `/proc/self/fd`, so that
/// safe code reaches no descriptor by number that no path asked for.
#[derive(Debug)]
pub(crate) struct Descriptor(RawFd);

impl Descriptor {
    /// Whether it is standard output (descriptor 1: `/dev/stdout`).
    pub(crate) fn is_stdout(&self) -> bool {
        self.0 == 1
    }

    /// A duplicate of it, sharing its offset and flags (`>>` appends);
    /// closing the duplicate leaves it open. One closed since the path
    /// was walked is `EBADF`.
    pub(crate) fn dup(&self) -> io::Result<OwnedFd> {
        dup_descriptor(self.0)
    }
}

/// A directory entry the walk ended on: `name` in `dir`.
#[derive(Debug)]
pub(crate) struct Entry {
    dir: OwnedFd,
    name: OsString,
    /// What it was when the walk reached it (`None`: nothing yet).
    stat: Option<Stat>,
}

/// A regular file to write (or to make), and how.
#[derive(Debug)]
pub(crate) struct FileTarget {
    entry: Entry,
    /// Written in place rather than replaced (see the module's doc).
    in_place: bool,
}

impl Target {
    /// Walks `path` without opening or changing what it ends on.
    ///
    /// Errors: `EISDIR` for a directory or a path ending in `/`,
    /// `ENOTDIR`, `ELOOP`, `ENOENT` for a missing directory, a protected
    /// symbolic link (`PermissionDenied`, naming it), and a socket.
    pub(crate) fn resolve(path: &Path) -> io::Result<Target> {
        let bytes = path.as_os_str().as_bytes();
        if bytes.is_empty() {
            return Err(Errno::NOENT.into());
        }
        if bytes.ends_with(b"/") {
            return Err(Errno::ISDIR.into());
        }
        let mut walk = Walk::start(path)?;
        while let Some(name) = walk.pending.pop_front() {
            let last = walk.pending.is_empty();
            if name == ".." {
                walk.dir = open_dir(&walk.dir, "..")?;
                walk.up();
                continue;
            }
            if last && let Some(fd) = walk.descriptor(&name)? {
                return Ok(Target::Descriptor(Descriptor(fd)));
            }
            let stat = match rustix::fs::statat(&walk.dir, &*name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => stat,
                Err(Errno::NOENT) if last => {
                    return Ok(Target::File(FileTarget {
                        entry: Entry {
                            dir: walk.dir,
                            name,
                            stat: None,
                        },
                        in_place: false,
                    }));
                }
                Err(e) => return Err(e.into()),
            };
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Symlink => walk.follow(&name, &stat)?,
                FileType::Directory if !last => {
                    walk.dir = open_dir(&walk.dir, &name)?;
                    walk.shown.push(&name);
                }
                _ if !last => return Err(Errno::NOTDIR.into()),
                FileType::Directory => return Err(Errno::ISDIR.into()),
                FileType::Socket => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "it is a socket, which cannot be opened",
                    ));
                }
                FileType::RegularFile => {
                    let in_place = stat.st_nlink > 1 || !can_give(&stat);
                    let entry = Entry {
                        dir: walk.dir,
                        name,
                        stat: Some(stat),
                    };
                    if in_place {
                        entry.check_not_planted()?;
                    }
                    return Ok(Target::File(FileTarget { entry, in_place }));
                }
                _ => {
                    return Ok(Target::Special(Entry {
                        dir: walk.dir,
                        name,
                        stat: Some(stat),
                    }));
                }
            }
        }
        // "/", "." or "a/..": a directory.
        Err(Errno::ISDIR.into())
    }
}

/// Whether we can give a new file `old`'s owner: root can, anyone else
/// only their own (the group is tried when it comes to it).
fn can_give(old: &Stat) -> bool {
    let euid = rustix::process::geteuid();
    euid.is_root() || euid.as_raw() == old.st_uid
}

/// A path being walked: the directory reached, what is left, and a
/// printable name for messages.
struct Walk {
    dir: OwnedFd,
    pending: VecDeque<OsString>,
    shown: PathBuf,
    links: usize,
}

impl Walk {
    fn start(path: &Path) -> io::Result<Walk> {
        let mut walk = Walk {
            dir: open_dir(CWD, ".")?,
            pending: VecDeque::new(),
            shown: PathBuf::new(),
            links: 0,
        };
        walk.prepend(path)?;
        Ok(walk)
    }

    /// Notes that the walk went to the parent directory: its shown path
    /// loses its last name, or gains a `..` when it has none to lose (a
    /// relative path above the working directory).
    fn up(&mut self) {
        let relative_top = self.shown.as_os_str().is_empty()
            || self.shown.components().next_back() == Some(Component::ParentDir);
        if relative_top {
            self.shown.push("..");
        } else {
            self.shown.pop();
        }
    }

    /// Puts the components of `path` in front of what is left; an
    /// absolute one restarts the walk at `/`.
    fn prepend(&mut self, path: &Path) -> io::Result<()> {
        let mut names = Vec::new();
        for component in path.components() {
            match component {
                Component::RootDir => {
                    self.dir = open_dir(CWD, "/")?;
                    self.shown = PathBuf::from("/");
                }
                Component::CurDir | Component::Prefix(_) => {}
                Component::ParentDir => names.push(OsString::from("..")),
                Component::Normal(name) => names.push(name.to_owned()),
            }
        }
        for name in names.into_iter().rev() {
            self.pending.push_front(name);
        }
        Ok(())
    }

    /// Reads the symbolic link `name` and walks on through what it holds,
    /// unless `fs.protected_symlinks` would refuse to follow it.
    fn follow(&mut self, name: &OsStr, link: &Stat) -> io::Result<()> {
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(Errno::LOOP.into());
        }
        let dir = rustix::fs::fstat(&self.dir)?;
        if planted(&dir, link.st_uid) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "it goes through a symbolic link of uid {} in the sticky directory {}, \
                     which is not followed (see protected_symlinks in proc_sys_fs(5))",
                    link.st_uid,
                    match self.shown.as_os_str().is_empty() {
                        true => Path::new("."),
                        false => &self.shown,
                    }
                    .display(),
                ),
            ));
        }
        let target = rustix::fs::readlinkat(&self.dir, name, Vec::new())?;
        let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
        self.prepend(&target)
    }

    /// The descriptor `name` names if the walk is in our own
    /// `/proc/self/fd` (or `/proc/thread-self/fd`): a number there is one
    /// of our descriptors, not a file to open again.
    fn descriptor(&self, name: &OsStr) -> io::Result<Option<RawFd>> {
        let Some(fd) = name.to_str().and_then(|n| n.parse::<RawFd>().ok()) else {
            return Ok(None);
        };
        let here = rustix::fs::fstat(&self.dir)?;
        let ours = ["/proc/self/fd", "/proc/thread-self/fd"]
            .iter()
            .filter_map(|dir| rustix::fs::stat(*dir).ok())
            .any(|st| st.st_dev == here.st_dev && st.st_ino == here.st_ino);
        Ok(ours.then_some(fd))
    }
}

/// Whether a file of `owner` in the directory `dir` is one another user
/// may have planted there: the directory is sticky and writable by all,
/// and neither we nor the directory's owner own it.
fn planted(dir: &Stat, owner: u32) -> bool {
    let euid = rustix::process::geteuid().as_raw();
    sticky_and_open(dir) && owner != euid && owner != dir.st_uid
}

/// Whether `dir` is sticky and writable by all (`/tmp`).
fn sticky_and_open(dir: &Stat) -> bool {
    dir.st_mode & 0o1002 == 0o1002
}

fn open_dir(dir: impl AsFd, name: impl rustix::path::Arg) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

impl Entry {
    /// `fs.protected_regular`'s rule for a file written in place: in a
    /// sticky directory writable by all, another user's file (not the
    /// directory owner's) is refused; and one with several links whoever
    /// owns it (its owner says nothing of who made the link).
    fn check_not_planted(&self) -> io::Result<()> {
        let owner = self.stat.map_or(0, |s| s.st_uid);
        let dir = rustix::fs::fstat(&self.dir)?;
        let links = self.stat.map_or(0, |s| s.st_nlink);
        if sticky_and_open(&dir) && links > 1 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "it has {links} hard links and is in a sticky directory writable by \
                     all, where anyone may have made one; it is not written in place (see \
                     protected_hardlinks in proc_sys_fs(5))"
                ),
            ));
        }
        if planted(&dir, owner) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "it belongs to another user (uid {owner}) in a sticky directory and \
                     would be written in place; it is not (see protected_regular in \
                     proc_sys_fs(5))"
                ),
            ));
        }
        Ok(())
    }

    /// Opens the entry for writing, without blocking, following no link,
    /// and checks it is still what the walk found.
    fn open(&self) -> io::Result<OwnedFd> {
        let fd = rustix::fs::openat(
            &self.dir,
            &*self.name,
            OFlags::WRONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let now = rustix::fs::fstat(&fd)?;
        if let Some(then) = self.stat
            && (now.st_dev, now.st_ino) != (then.st_dev, then.st_ino)
        {
            return Err(io::Error::other(
                "it was replaced by another file meanwhile",
            ));
        }
        Ok(fd)
    }

    /// Opens a FIFO, a terminal or a device for writing in place, without
    /// blocking: a FIFO no process reads is `ENXIO` at once, never a wait.
    pub(crate) fn open_stream(&self) -> io::Result<OwnedFd> {
        self.check_not_planted()?;
        self.open()
    }

    /// Whether the entry is a FIFO.
    pub(crate) fn is_fifo(&self) -> bool {
        self.stat
            .is_some_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Fifo)
    }
}

/// Writes all of `bytes` to `fd` as a stream, blocking or not (a full
/// non-blocking one is polled in slices of 100 ms). Between slices, and
/// after `EINTR`, `stop` is asked; when it says so the write ends with
/// [`io::ErrorKind::Interrupted`]: a reader that never reads holds the
/// writer only until it is told to stop.
///
/// # References
///  - [poll(2)](https://man7.org/linux/man-pages/man2/poll.2.html), [pipe(7)](https://man7.org/linux/man-pages/man7/pipe.7.html) (`O_NONBLOCK`)
pub(crate) fn write_stream(
    fd: BorrowedFd<'_>,
    bytes: &[u8],
    stop: &dyn Fn() -> bool,
) -> io::Result<()> {
    use rustix::event::{PollFd, PollFlags, poll};
    let slice = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: POLL_SLICE.as_nanos() as i64,
    };
    let mut rest = bytes;
    while !rest.is_empty() {
        if stop() {
            return Err(io::ErrorKind::Interrupted.into());
        }
        match rustix::io::write(fd, rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => rest = &rest[n..],
            Err(Errno::AGAIN) => {
                let mut fds = [PollFd::new(&fd, PollFlags::OUT)];
                match poll(&mut fds, Some(&slice)) {
                    Ok(_) | Err(Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Whether `fd` is open for writing.
pub(crate) fn writable(fd: BorrowedFd<'_>) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(fd)?;
    if flags.contains(OFlags::WRONLY) || flags.contains(OFlags::RDWR) {
        Ok(())
    } else {
        Err(Errno::BADF.into())
    }
}

/// A duplicate of our descriptor `fd` that a path named (`/dev/fd/3`);
/// a number that is not open is `EBADF`.
///
/// # References
///  - [fcntl(2)](https://man7.org/linux/man-pages/man2/fcntl.2.html) (`F_DUPFD_CLOEXEC`)
#[allow(unsafe_code)]
fn dup_descriptor(fd: RawFd) -> io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: F_DUPFD_CLOEXEC takes no pointer and changes nothing about
    // `fd` (a number that is not open gives EBADF); the new descriptor,
    // 3 or above, is a fresh entry of the table that nothing else owns.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` was just made by the kernel for us alone.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}
