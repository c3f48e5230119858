//! `-P FILE`, the meter's process ID, written once the targets are open
//! and checked against them, removed at the end.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{EXIT_CONTROL, Invocation, targets};
use crate::cli::strerror;

/// `-P FILE`: holds this process's ID while it runs; removed at the end
/// if it is still the file written (not one put in its place meanwhile).
pub(super) struct PidFile {
    path: PathBuf,
    id: (u64, u64),
    /// Removed by a second signal too, which ends pv before `drop`.
    _on_second_signal: Option<crate::sys::process::RemoveOnSecondInterrupt>,
}

impl PidFile {
    /// [`PidFile::write`] of `-P`'s `path`, if given; a refusal is said,
    /// and is pv's status 1.
    pub(super) fn write_asked(
        me: &Invocation,
        path: Option<&Path>,
        names: &[PathBuf],
        targets: Option<&targets::Targets>,
    ) -> Result<Option<PidFile>, ExitCode> {
        let Some(path) = path else {
            return Ok(None);
        };
        PidFile::write(path, names, targets)
            .map(Some)
            .map_err(|err| {
                me.say(&err);
                ExitCode::from(EXIT_CONTROL)
            })
    }

    /// Replaces `path`'s contents with this process's ID. Refused: a path
    /// that is something else than a regular file (a symlink, /dev/stdout,
    /// a device: writing the ID there, then removing it at the end, would
    /// send the ID into the data or delete a device node as root), and a
    /// file that is an input, the output or the store: told by `fstat` of
    /// what was opened, which is emptied only then.
    fn write(
        path: &Path,
        names: &[PathBuf],
        targets: Option<&targets::Targets>,
    ) -> Result<PidFile, String> {
        use std::io::Write;
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let named = path.display();
        let failed = |err: std::io::Error| format!("{named}: {}", strerror(&err));
        // Not opened at all if it can be told by name (opening a device
        // can do things).
        if let Some(meta) = std::fs::symlink_metadata(path)
            .ok()
            .filter(|meta| !meta.is_file())
        {
            return Err(format!(
                "{named}: {}",
                targets::not_regular(&meta, "the pidfile (-P)")
            ));
        }
        let mut file = File::options()
            .write(true)
            .create(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NOCTTY | libc::O_NONBLOCK)
            .open(path)
            .map_err(failed)?;
        let meta = file.metadata().map_err(failed)?;
        let id = (meta.dev(), meta.ino());
        if !meta.is_file() {
            return Err(format!("{named}: the pidfile (-P) must be a regular file"));
        }
        if targets.is_some_and(|targets| targets.holds(id, names)) {
            return Err(format!(
                "{named}: the pidfile (-P) is also an input or the output"
            ));
        }
        file.set_len(0).map_err(failed)?;
        let pidfile = PidFile {
            path: path.to_owned(),
            id,
            _on_second_signal: crate::sys::process::remove_on_second_interrupt(path).ok(),
        };
        writeln!(file, "{}", std::process::id()).map_err(failed)?;
        Ok(pidfile)
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        use std::os::unix::fs::MetadataExt;
        let ours = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|meta| (meta.dev(), meta.ino()) == self.id);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
