//! What a run leaves when it dies without a chance to clean (SIGKILL, a
//! crash): its work directory, the initramfs being staged. Each is a
//! directory [`make`] names `PREFIX` and [`RANDOM`] random characters,
//! holding a lock file its run keeps flock(2)-locked for its whole life;
//! the next run removes those whose lock it can take ([`remove`]).
//!
//! A lock, not a process ID, says whether a run lives: a PID names a
//! process of this host and PID namespace only, while a `/tmp` shared
//! with a container or a home on NFS holds flock(2) locks too.
//!
//! # References
//!  - [flock(2)](https://man7.org/linux/man-pages/man2/flock.2.html)

use std::fs;
use std::io;
use std::path::Path;

use rustix::fs::FlockOperation;

/// How many random letters and digits follow a directory's prefix.
pub(crate) const RANDOM: usize = 12;

/// The lock file in each directory, held by its run.
const LOCK: &str = ".pipespeed-run.lock";

/// The lock file's name while it is made, before it is locked: a run
/// that finds it does not take the directory for a dead run's.
const LOCKING: &str = ".pipespeed-run.locking";

/// A directory of this run's that [`remove`] leaves while it lives:
/// removed, with what it holds, when dropped.
#[derive(Debug)]
pub(crate) struct Owned {
    // Dropped in this order: the directory goes while it is locked.
    dir: tempfile::TempDir,
    _lock: Option<fs::File>,
}

impl Owned {
    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Makes a new directory in `parent` named `prefix` and [`RANDOM`]
/// random letters and digits, locked by this process until the
/// [`Owned`] is dropped. Where locks cannot be taken (an NFS mounted
/// `nolock`) it has no lock file: [`remove`] never takes it for a dead
/// run's.
pub(crate) fn make(parent: &Path, prefix: &str) -> io::Result<Owned> {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .rand_bytes(RANDOM)
        .tempdir_in(parent)?;
    // Locked under another name, then named: the lock file is never
    // seen unlocked.
    let locking = dir.path().join(LOCKING);
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&locking)?;
    let lock = match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {
            fs::rename(&locking, dir.path().join(LOCK))?;
            Some(file)
        }
        Err(_) => {
            fs::remove_file(&locking)?;
            None
        }
    };
    Ok(Owned { dir, _lock: lock })
}

/// Removes the directories of `parent` that [`make`] made with `prefix`
/// (named so, holding the lock file), that are ours (in `/tmp` anyone
/// may make one: root must not remove another user's) and whose lock no
/// run holds. Anything else stays: a directory the user named so
/// (`pipespeed-kernels-2024-06-01`), a live run's, a file, a link.
pub(crate) fn remove(parent: &Path, prefix: &str) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    let euid = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(random) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
            continue;
        };
        if random.len() != RANDOM || !random.bytes().all(|b| b.is_ascii_alphanumeric()) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = path.symlink_metadata() else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != euid {
            continue;
        }
        // Held until the directory is gone.
        if let Some(_lock) = unheld_lock(&path.join(LOCK)) {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

/// The lock file `path`, locked by us, if it is a regular file that no
/// one else holds.
fn unheld_lock(path: &Path) -> Option<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory in `parent` as a run that died left it: made by
    /// [`make`], its lock released, not removed.
    fn dead(parent: &Path, prefix: &str) -> std::path::PathBuf {
        let owned = make(parent, prefix).unwrap();
        let path = owned.path().to_path_buf();
        let Owned { dir, _lock } = owned;
        let _ = dir.keep();
        path
    }

    #[test]
    fn a_dead_run_s_directory_is_removed_and_a_live_one_s_stays() {
        let parent = tempfile::tempdir().unwrap();
        let live = make(parent.path(), "work-").unwrap();
        std::fs::write(live.path().join("f"), b"x").unwrap();
        let gone = dead(parent.path(), "work-");
        std::fs::write(gone.join("f"), b"x").unwrap();
        // Another prefix's.
        let other = dead(parent.path(), "other-");
        remove(parent.path(), "work-");
        assert!(live.path().join("f").exists(), "a live run's is removed");
        assert!(!gone.exists(), "a dead run's stays");
        assert!(other.exists());
        drop(live);
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_lock_held_elsewhere_keeps_its_directory() {
        let parent = tempfile::tempdir().unwrap();
        let held = dead(parent.path(), "work-");
        // Another process, on another host, holds it.
        let lock = fs::File::open(held.join(LOCK)).unwrap();
        rustix::fs::flock(&lock, FlockOperation::LockShared).unwrap();
        remove(parent.path(), "work-");
        assert!(held.exists());
        drop(lock);
        remove(parent.path(), "work-");
        assert!(!held.exists());
    }

    #[test]
    fn what_make_did_not_make_stays() {
        let parent = tempfile::tempdir().unwrap();
        let p = parent.path();
        let random = "a".repeat(RANDOM);
        // The user's: named otherwise, or so but without the lock file.
        let dated = p.join("work-2024-06-01");
        let plain = p.join(format!("work-{random}"));
        let longer = p.join(format!("work-{random}b"));
        for d in [&dated, &plain, &longer] {
            fs::create_dir(d).unwrap();
        }
        fs::write(dated.join(LOCK), b"").unwrap();
        fs::write(longer.join(LOCK), b"").unwrap();
        fs::write(plain.join("result.json"), b"{}").unwrap();
        // A file and a link named so.
        let file = p.join(format!("work-{}", "b".repeat(RANDOM)));
        fs::write(&file, b"").unwrap();
        // A link to a dead run's directory, and a link as the lock file.
        let gone = p.join("elsewhere");
        fs::rename(dead(p, "work-"), &gone).unwrap();
        let link = p.join(format!("work-{}", "c".repeat(RANDOM)));
        std::os::unix::fs::symlink(&gone, &link).unwrap();
        let inner = p.join(format!("work-{}", "d".repeat(RANDOM)));
        fs::create_dir(&inner).unwrap();
        std::os::unix::fs::symlink(gone.join(LOCK), inner.join(LOCK)).unwrap();
        remove(p, "work-");
        for kept in [&dated, &plain, &longer, &file, &link, &inner, &gone] {
            assert!(
                kept.symlink_metadata().is_ok(),
                "{} removed",
                kept.display()
            );
        }
    }
}
