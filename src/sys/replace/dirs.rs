//! `mkdir -p` by the walk that resolves a result's path, so that a
//! directory made for results is reached as safely as the results are.

use super::*;

/// Makes the directory `path` and those missing on the way (as
/// `mkdir -p`), walked as [`Target::resolve`] walks a result's path, and
/// refusing a directory another user may have planted in a sticky
/// directory writable by all (`/tmp`), as a planted file is refused.
/// Returns its absolute path without links, as the walk found it (not
/// through `/proc`, which may be absent). On an error, the directories it
/// made are removed again (those still empty).
///
/// Errors: `ENOTDIR` for a component that is not a directory, `ELOOP`,
/// the refusal of a planted link or directory (`PermissionDenied`,
/// naming it), and mkdir(2)'s.
///
/// # References
///  - [mkdir(2)](https://man7.org/linux/man-pages/man2/mkdir.2.html), [proc_sys_fs(5)](https://man7.org/linux/man-pages/man5/proc_sys_fs.5.html)
pub(crate) fn make_dir_all(path: &Path) -> io::Result<PathBuf> {
    if path.as_os_str().is_empty() {
        return Err(Errno::NOENT.into());
    }
    // What it made: each directory's parent and name.
    let mut made: Vec<(OwnedFd, OsString)> = Vec::new();
    let walked = walk_making(path, &mut made);
    if walked.is_err() {
        // The last made first: a parent is empty once its child is gone.
        for (dir, name) in made.iter().rev() {
            let _ = rustix::fs::unlinkat(dir, &**name, AtFlags::REMOVEDIR);
        }
    }
    walked
}

/// [`make_dir_all`]'s walk, each directory it makes recorded in `made`.
fn walk_making(path: &Path, made: &mut Vec<(OwnedFd, OsString)>) -> io::Result<PathBuf> {
    let mut walk = Walk::start(path)?;
    while let Some(name) = walk.pending.pop_front() {
        if name == ".." {
            walk.dir = open_dir(&walk.dir, "..")?;
            walk.up();
            continue;
        }
        let stat = match rustix::fs::statat(&walk.dir, &*name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => {
                match rustix::fs::mkdirat(&walk.dir, &*name, Mode::from_raw_mode(0o777)) {
                    Ok(()) => made.push((walk.dir.try_clone()?, name.clone())),
                    Err(Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                // Looked at again: whatever is there now is walked.
                walk.pending.push_front(name);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Symlink => walk.follow(&name, &stat)?,
            FileType::Directory => {
                // Its owner as opened, not as first seen: what is used
                // is what is checked.
                let dir = open_dir(&walk.dir, &name)?;
                let owner = rustix::fs::fstat(&dir)?.st_uid;
                let parent = rustix::fs::fstat(&walk.dir)?;
                if planted(&parent, owner) {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "its directory {} belongs to another user (uid {owner}) in a sticky \
                             directory writable by all, who may have made it there; it is not \
                             used (see protected_regular in proc_sys_fs(5))",
                            walk.shown.join(&name).display(),
                        ),
                    ));
                }
                walk.dir = dir;
                walk.shown.push(&name);
            }
            _ => return Err(Errno::NOTDIR.into()),
        }
    }
    absolute(&walk.shown)
}

/// `walked`, a path without links (relative to the working directory
/// unless absolute), made absolute: `..` leading it is resolved against
/// the working directory's path, which has none either (getcwd(3)).
fn absolute(walked: &Path) -> io::Result<PathBuf> {
    if walked.is_absolute() {
        return Ok(walked.to_path_buf());
    }
    let mut path = std::env::current_dir()?;
    for component in walked.components() {
        match component {
            Component::ParentDir => {
                path.pop();
            }
            Component::Normal(name) => path.push(name),
            _ => {}
        }
    }
    Ok(path)
}
