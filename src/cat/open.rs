//! Opening cat's operands as GNU cat finds them, though the Rust runtime
//! has put /dev/null on the standard descriptors the parent closed
//! ([`crate::sys::inherited`]): a name that leads to one of them
//! (`/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`, a symbolic link to one)
//! does not exist, as it does not for GNU cat, instead of opening the
//! /dev/null that stands in for it and reading nothing with status 0.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{CWD, Mode, OFlags, fstat, openat, readlinkat, stat};

use crate::sys::inherited::{self, Stdio};

/// Symbolic links followed at most, as the kernel's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// Opens the file `name` for reading; `ENOENT` if the name leads to a
/// standard descriptor that was closed when the process started.
pub(crate) fn open_input(name: &OsStr) -> io::Result<File> {
    if inherited::closed().next().is_some() && names_closed_descriptor(Path::new(name)) {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    File::open(name)
}

/// Whether `path`, its symbolic links followed, ends in this process's
/// descriptor directory (`/proc/self/fd`) at a standard descriptor closed
/// at start. `false` when it cannot tell (opening the file then reports
/// what is wrong with the name).
fn names_closed_descriptor(path: &Path) -> bool {
    let fd_dirs: Vec<(u64, u64)> = ["/proc/self/fd", "/proc/thread-self/fd"]
        .iter()
        .filter_map(|dir| stat(*dir).ok())
        .map(|st| (st.st_dev, st.st_ino))
        .collect();
    let mut base: Option<OwnedFd> = None;
    let mut path: PathBuf = path.to_owned();
    for _ in 0..MAX_LINKS {
        let Some(file) = path.file_name() else {
            return false;
        };
        let parent = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let dir = match &base {
            Some(base) => openat(base, parent, flags, Mode::empty()),
            None => openat(CWD, parent, flags, Mode::empty()),
        };
        let Ok(dir) = dir else {
            return false;
        };
        if let Ok(st) = fstat(&dir)
            && fd_dirs.contains(&(st.st_dev, st.st_ino))
        {
            return closed_standard(file);
        }
        let Ok(target) = readlinkat(&dir, file, Vec::new()) else {
            return false; // not a symbolic link: a file of its own
        };
        path = PathBuf::from(OsStr::from_bytes(target.as_bytes()));
        base = Some(dir);
    }
    false
}

/// Whether `name`, an entry of a descriptor directory, is a standard
/// descriptor closed at start.
fn closed_standard(name: &OsStr) -> bool {
    let fd = match name.as_bytes() {
        b"0" => Stdio::Stdin,
        b"1" => Stdio::Stdout,
        b"2" => Stdio::Stderr,
        _ => return false,
    };
    inherited::closed_at_start(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_of_an_open_descriptor_is_not_a_closed_one() {
        // The test harness records nothing closed.
        for name in ["/dev/stdin", "/proc/self/fd/0", "/dev/null", "nosuch/x"] {
            assert!(!names_closed_descriptor(Path::new(name)), "{name}");
        }
        assert!(open_input(OsStr::new("/dev/null")).is_ok());
        let missing = open_input(OsStr::new("/nonexistent/x")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }
}
