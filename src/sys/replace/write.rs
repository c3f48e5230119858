//! Writing a resolved [`FileTarget`]: the check before a run, the bytes
//! made ready beside the file (or the room reserved in it) and the commit
//! that puts them in place; how, the parent module says.

use super::*;

impl FileTarget {
    /// Checks, changing nothing that is there, that the file can be
    /// written: a temporary file is made beside it and removed, or, for
    /// one written in place, it is opened for writing.
    pub(crate) fn check(&self) -> io::Result<()> {
        if self.in_place {
            return self.entry.open().map(drop);
        }
        match Temp::create(&self.entry, Mode::from_raw_mode(0o600)) {
            Ok(_) => Ok(()),
            Err(err) if self.can_fall_back(&err) => {
                self.entry.check_not_planted()?;
                self.entry.open().map(drop)
            }
            Err(err) => Err(err),
        }
    }

    fn in_place_instead(self) -> FileTarget {
        FileTarget {
            in_place: true,
            ..self
        }
    }

    /// Whether a file whose temporary file could not be made (`err`) may
    /// be written in place instead: it is there, and the directory is
    /// closed to us (`EACCES`, `EPERM`; `EROFS`, whose file then gives
    /// its own error), as `cp` writes a file it may write in a directory
    /// it may not.
    fn can_fall_back(&self, err: &io::Error) -> bool {
        let closed = [libc::EACCES, libc::EPERM, libc::EROFS];
        self.entry.stat.is_some() && err.raw_os_error().is_some_and(|e| closed.contains(&e))
    }

    /// Makes the new file whole beside the old one, ready to take its
    /// place with [`Prepared::commit`]; dropped uncommitted, it is
    /// removed. A file written in place is only checked for room here
    /// and written by `commit`.
    ///
    /// Hold [`hold_signals`](crate::sys::hold::hold_signals) from before this
    /// until the commit: a signal's default action, or `ulimit -f`'s
    /// SIGXFSZ, would otherwise leave the temporary file behind.
    pub(crate) fn prepare(self, bytes: Vec<u8>) -> io::Result<Prepared> {
        if self.in_place {
            let fd = self.entry.open()?;
            reserve(&fd, bytes.len())?;
            return Ok(Prepared(How::InPlace(fd, bytes)));
        }
        // A new file gets what a new file gets (0666 less the umask);
        // one that replaces another is private until it has its mode.
        let mode = if self.entry.stat.is_some() {
            0o600
        } else {
            0o666
        };
        let mut temp = match Temp::create(&self.entry, Mode::from_raw_mode(mode)) {
            Ok(temp) => temp,
            Err(err) if self.can_fall_back(&err) => {
                self.entry.check_not_planted()?;
                return self.in_place_instead().prepare(bytes);
            }
            Err(err) => return Err(err),
        };
        if let Some(old) = self.entry.stat {
            let made = rustix::fs::fstat(&temp.fd)?;
            let uid = (made.st_uid != old.st_uid).then(|| rustix::fs::Uid::from_raw(old.st_uid));
            let gid = (made.st_gid != old.st_gid).then(|| rustix::fs::Gid::from_raw(old.st_gid));
            match rustix::fs::fchown(&temp.fd, uid, gid) {
                Ok(()) => {}
                // A group of the old file's that we are not in: the file
                // keeps its group only if written in place.
                Err(Errno::PERM) => {
                    drop(temp);
                    return self.in_place_instead().prepare(bytes);
                }
                Err(e) => return Err(e.into()),
            }
        }
        write_all_at(&temp.fd, &bytes)?;
        if let Some(old) = self.entry.stat {
            // After the write: a write by its owner clears set-user-ID.
            rustix::fs::fchmod(&temp.fd, Mode::from_raw_mode(old.st_mode & 0o7777))?;
        }
        rustix::fs::fsync(&temp.fd)?;
        temp.target = Some(self.entry.name);
        Ok(Prepared(How::Rename(temp)))
    }
}

/// A file made whole and waiting to take its place (see
/// [`FileTarget::prepare`]).
#[derive(Debug)]
pub(crate) struct Prepared(How);

#[derive(Debug)]
enum How {
    Rename(Temp),
    InPlace(OwnedFd, Vec<u8>),
}

impl Prepared {
    /// Whether [`commit`](Prepared::commit) writes the file in place,
    /// which can fail (an I/O error), rather than rename a finished one
    /// over it, which does not once the file is made: commit these first
    /// when several files must change all together.
    pub(crate) fn in_place(&self) -> bool {
        matches!(self.0, How::InPlace(..))
    }

    /// Puts the new file in place: renamed over the old one, or written
    /// over it, then cut to its length.
    pub(crate) fn commit(self) -> io::Result<()> {
        match self.0 {
            How::Rename(mut temp) => {
                let name = temp.target.take().unwrap_or_default();
                rustix::fs::renameat(&temp.dir, &*temp.name, &temp.dir, &*name)?;
                temp.renamed = true;
                Ok(())
            }
            How::InPlace(fd, bytes) => {
                write_all_at(&fd, &bytes)?;
                rustix::fs::ftruncate(&fd, bytes.len() as u64)?;
                Ok(rustix::fs::fsync(&fd)?)
            }
        }
    }
}

/// Checks that `len` bytes fit under `RLIMIT_FSIZE` and asks the file
/// system for the room (`fallocate` keeping the size; a file system that
/// cannot is not an error), before a byte of the file changes.
fn reserve(fd: impl AsFd, len: usize) -> io::Result<()> {
    let len = len as u64;
    let limit = rustix::process::getrlimit(rustix::process::Resource::Fsize);
    if limit.current.is_some_and(|max| len > max) {
        return Err(Errno::FBIG.into());
    }
    if len == 0 {
        return Ok(());
    }
    match rustix::fs::fallocate(fd, FallocateFlags::KEEP_SIZE, 0, len) {
        Ok(()) | Err(Errno::OPNOTSUPP | Errno::NOSYS | Errno::INVAL) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

fn write_all_at(fd: impl AsFd, bytes: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < bytes.len() {
        match rustix::io::pwrite(&fd, &bytes[done..], done as u64) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// A temporary file beside a target, removed on drop unless renamed.
#[derive(Debug)]
struct Temp {
    dir: OwnedFd,
    name: OsString,
    fd: OwnedFd,
    /// The name it takes on commit.
    target: Option<OsString>,
    renamed: bool,
}

impl Temp {
    /// `.NAME.PID.N.tmp` in the target's directory, made with `O_EXCL`
    /// and `O_NOFOLLOW`: never a file or link that was there.
    fn create(entry: &Entry, mode: Mode) -> io::Result<Temp> {
        // Before the file: made after it, a failure would leave it there.
        let dir = entry.dir.try_clone()?;
        for attempt in 0..100 {
            // Bytes, as the name is (not UTF-8 perhaps), its start cut
            // so that the whole stays within NAME_MAX.
            let tail = format!(".{}.{attempt}.tmp", std::process::id());
            let room = NAME_MAX - 1 - tail.len();
            let base = entry.name.as_bytes();
            let mut name = Vec::with_capacity(NAME_MAX);
            name.push(b'.');
            name.extend_from_slice(&base[..base.len().min(room)]);
            name.extend_from_slice(tail.as_bytes());
            let name = OsString::from_vec(name);
            match rustix::fs::openat(
                &entry.dir,
                &*name,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                mode,
            ) {
                Ok(fd) => {
                    return Ok(Temp {
                        dir,
                        name,
                        fd,
                        target: None,
                        renamed: false,
                    });
                }
                Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(Errno::EXIST.into())
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = rustix::fs::unlinkat(&self.dir, &*self.name, AtFlags::empty());
        }
    }
}
