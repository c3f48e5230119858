//! `-c`: several meters of one pipeline on a terminal, each on its own
//! line. The meters share the pipeline's process group; each takes the
//! next row from a counter in a file named after the group, under
//! `flock`, and draws `row` newlines below where the cursor was at the
//! start (scrolling keeps the rows lined up), then goes back up. The
//! last meter to finish moves the cursor below all rows and removes the
//! file.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{FlockOperation, flock};

/// This meter's row, and the file that hands rows out.
#[derive(Debug)]
pub(crate) struct Cursor {
    row: usize,
    path: PathBuf,
    /// Where the meters draw: the cursor is moved below them there.
    out: io::Stderr,
    /// Whether this meter has left the counter (once only).
    left: AtomicBool,
}

/// The shared counter: meters active, and rows handed out. `change`
/// updates it under the lock; when no meter is left active, the file is
/// removed before the lock goes, so a meter joining meanwhile starts a new
/// one.
fn update(path: &Path, change: impl FnOnce(&mut (usize, usize))) -> io::Result<(usize, usize)> {
    // Never through a link someone else planted, and only our own file.
    let mut file: File = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    if file.metadata()?.uid() != rustix::process::getuid().as_raw() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} belongs to another user", path.display()),
        ));
    }
    flock(&file, FlockOperation::LockExclusive)?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let mut numbers = text
        .split_whitespace()
        .map(|n| n.parse::<usize>().unwrap_or(0));
    let mut state = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    change(&mut state);
    if state.0 == 0 {
        std::fs::remove_file(path)?;
    } else {
        file.rewind()?;
        file.set_len(0)?;
        write!(file, "{} {}", state.0, state.1)?;
    }
    // Unlocked when `file` closes.
    Ok(state)
}

impl Cursor {
    /// Takes the next row of this process group's meters, which draw on
    /// `out`.
    pub(crate) fn join(out: io::Stderr) -> io::Result<Cursor> {
        let group = rustix::process::getpgrp().as_raw_nonzero();
        let user = rustix::process::getuid().as_raw();
        // The user's own runtime directory where there is one.
        let dir = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|dir| dir.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let path = dir.join(format!("pipespeed-pv-{user}-{group}"));
        let (_, rows) = update(&path, |(active, rows)| {
            if *active == 0 {
                *rows = 0; // a file left by a meter that was killed
            }
            *active += 1;
            *rows += 1;
        })?;
        Ok(Cursor {
            row: rows - 1,
            path,
            out,
            left: AtomicBool::new(false),
        })
    }

    /// What to write to draw `line` on this meter's row.
    pub(crate) fn place(&self, line: &str) -> String {
        match self.row {
            0 => format!("\r{line}"),
            row => format!("{}\r{line}\x1b[{row}A", "\n".repeat(row)),
        }
    }
}

impl Cursor {
    /// Gives this meter's row back (the last meter removes the counter):
    /// when it is dropped, or before, when pv is stopped by a signal while
    /// the display may still hold it. Once only.
    pub(crate) fn leave(&self) {
        if self.left.swap(true, Ordering::SeqCst) {
            return;
        }
        let leave = |(active, _): &mut (usize, usize)| *active = active.saturating_sub(1);
        let Ok((active, rows)) = update(&self.path, leave) else {
            return;
        };
        if active == 0 {
            // Below the last row, for whatever the terminal shows next.
            let _ = (&self.out).write_all("\n".repeat(rows).as_bytes());
        }
    }
}

impl Drop for Cursor {
    fn drop(&mut self) {
        self.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_handed_out_in_turn_and_drawn_below_the_first() {
        let a = Cursor::join(io::stderr()).unwrap();
        let b = Cursor::join(io::stderr()).unwrap();
        assert_eq!((a.row, b.row), (0, 1));
        assert_eq!(a.place("x"), "\rx");
        assert_eq!(b.place("y"), "\n\ry\x1b[1A");
        let path = a.path.clone();
        drop(b);
        assert!(path.exists());
        drop(a);
        assert!(!path.exists(), "the last meter removes the counter");
    }
}
