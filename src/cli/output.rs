//! Where results go: files written whole or not at all (how is
//! `crate::sys::replace`'s: see [`write_whole`]), FIFOs and devices
//! written in place as streams, and standard output (`-`, `/dev/stdout`).

use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::report::text::width_of;
use crate::report::{Exporter, Text};
use crate::sys::inherited::{self, Stdio};
use crate::sys::process::{interrupted, signal_name};
use crate::sys::replace::{self, Entry, Target};
use anyhow::Context;

/// An error writing standard output. A broken pipe here means our reader
/// went away, which ends a command quietly, as GNU tools do; a broken pipe
/// anywhere else (a child's pipe, say) is a failure like any other.
///
/// The cause is said in the message, not chained as its source, so that
/// it is said once ("standard output: No space left on device").
#[derive(Debug, thiserror::Error)]
#[error("{}: {}", Stdio::Stdout.name(), crate::cli::strerror(.0))]
pub(super) struct StdoutError(pub io::Error);

/// A write that SIGINT, SIGTERM or SIGHUP ended: a reader that stopped reading a
/// FIFO, say. The command exits with 128 + the signal.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by {}", signal_name(*.0))]
pub(super) struct Interrupted(pub i32);

/// The signal that ended a write, if one did (an [`Interrupted`] in the
/// chain, or inside one of its `io::Error`s).
pub(super) fn interrupted_by(err: &anyhow::Error) -> Option<i32> {
    err.chain().find_map(|e| {
        let inner = match e.downcast_ref::<io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|i| i as &(dyn std::error::Error + 'static)),
            None => match e.downcast_ref::<StdoutError>() {
                Some(StdoutError(io)) => io.get_ref().map(|i| i as _),
                None => Some(e),
            },
        };
        inner?.downcast_ref::<Interrupted>().map(|i| i.0)
    })
}

/// Writes `bytes` to `fd` as a stream until done, or until a SIGINT or
/// SIGTERM comes that had not come when it started (after one, the
/// second kills: see `catch_interrupts`).
fn stream(fd: BorrowedFd<'_>, bytes: &[u8]) -> io::Result<()> {
    let before = interrupted();
    let stop = || before.is_none() && interrupted().is_some();
    replace::write_stream(fd, bytes, &stop).map_err(|err| match interrupted() {
        Some(signal) if err.kind() == io::ErrorKind::Interrupted => {
            io::Error::new(io::ErrorKind::Interrupted, Interrupted(signal))
        }
        _ => err,
    })
}

/// Writes `bytes` to standard output, all of them, straight to descriptor
/// 1, so that a reader that stops reading holds us only until a signal
/// says to stop. `std`'s `Stdout` takes `EBADF` for success: a standard
/// output closed when we started is checked here.
pub(super) fn print(bytes: &[u8]) -> Result<(), StdoutError> {
    if inherited::closed_at_start(Stdio::Stdout) {
        return Err(StdoutError(io::Error::from_raw_os_error(libc::EBADF)));
    }
    let out = io::stdout();
    let _ = out.lock().flush();
    stream(out.as_fd(), bytes).map_err(StdoutError)
}

/// Whether `path` is standard output: `-`, or a path that names our
/// descriptor 1 (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`), which is
/// written where it points, at its offset (`>> log` appends), never
/// reopened.
pub(super) fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
        || matches!(Target::resolve(path), Ok(Target::Descriptor(fd)) if fd.is_stdout())
}

/// Writes `render()` to `path`, when there is one, whole or not at all
/// (see [`write_whole`]), and says so on stderr; `-` is standard output.
pub(super) fn write_file(
    path: &Option<PathBuf>,
    render: impl FnOnce() -> io::Result<Vec<u8>>,
) -> anyhow::Result<()> {
    if let Some(path) = path {
        let bytes = render().with_context(|| format!("cannot write {}", path.display()))?;
        if is_stdout(path) {
            print(&bytes)?;
            return Ok(());
        }
        write_whole(path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("pipespeed: wrote {}", path.display());
    }
    Ok(())
}

/// A result file asked for, and the format it is written in.
pub(super) type ResultFile<'a, R> = (&'a Option<PathBuf>, &'a dyn Exporter<R>);

/// Writes a measurement's result `files`, when it `measured` something
/// (a run of a rung, a size, a cell or a row ended), then prints its
/// table as `text` renders it. A result that measured nothing (every run
/// failed, was unavailable or was cut short by a signal) writes none of
/// them, and says so on stderr: an older result stays as it was (a
/// night's failed run must not replace the last good result with a table
/// of failures). The one rule of every measuring command.
pub(super) fn deliver<R>(
    result: &R,
    measured: bool,
    files: &[ResultFile<'_, R>],
    text: Text,
) -> anyhow::Result<()>
where
    Text: Exporter<R>,
{
    if measured {
        for (path, format) in files {
            write_file(path, || format.export(result))?;
        }
    } else {
        let paths: Vec<String> = (files.iter())
            .filter_map(|(path, _)| path.as_ref())
            .map(|p| p.display().to_string())
            .collect();
        if !paths.is_empty() {
            eprintln!(
                "pipespeed: nothing was measured: {} not written",
                paths.join(", ")
            );
        }
    }
    let paths = || files.iter().map(|(path, _)| *path);
    let text = Text {
        width: table_width(paths()),
        ..text
    };
    print_table(&text.export(result)?, paths())
}

/// Whether a command's table goes to stderr: when one of its result
/// files (`paths`) goes to stdout (`-`, `/dev/stdout`), so as not to mix
/// the two.
fn table_on_stderr<'a>(paths: impl IntoIterator<Item = &'a Option<PathBuf>>) -> bool {
    paths.into_iter().flatten().any(|p| is_stdout(p))
}

/// The width of the terminal a command's table goes to (see
/// [`print_table`]).
pub(super) fn table_width<'a>(paths: impl IntoIterator<Item = &'a Option<PathBuf>>) -> usize {
    if table_on_stderr(paths) {
        width_of(io::stderr())
    } else {
        width_of(io::stdout())
    }
}

/// Prints a command's table: on stdout, or on stderr when one of its
/// result files (`paths`) goes to stdout (`-`, `/dev/stdout`), so as not
/// to mix the two.
pub(super) fn print_table<'a>(
    table: &[u8],
    paths: impl IntoIterator<Item = &'a Option<PathBuf>>,
) -> anyhow::Result<()> {
    if table_on_stderr(paths) {
        io::stderr()
            .write_all(table)
            .context("cannot write the table on stderr")?;
        return Ok(());
    }
    Ok(print(table)?)
}

/// FIFOs, terminals and devices opened by [`check_outputs`], kept open
/// until their result is written: a FIFO's reader then gets the result
/// and its end, not an end before it (closing after the check would
/// give it end-of-file at once).
static OPENED: Mutex<Vec<(PathBuf, OwnedFd)>> = Mutex::new(Vec::new());

/// How long the check waits for a process to open a FIFO for reading
/// (`cat ff & pipespeed ... --json ff` starts both at once) before it
/// says none does.
const FIFO_READER_WAIT: Duration = Duration::from_secs(2);

/// Checks, before measuring, that every output file asked for can be
/// written, without touching what is there: a path that cannot be written
/// is an error before the run, and a run that fails leaves an older result
/// as it was. At most one may be standard output (`-`, `/dev/stdout`).
/// FIFOs and devices are opened here, without blocking, and stay open
/// until written.
pub(super) fn check_outputs<'a>(
    paths: impl IntoIterator<Item = &'a Option<PathBuf>>,
) -> anyhow::Result<()> {
    let mut stdout = 0;
    let mut files: Vec<(&Path, FileKey)> = Vec::new();
    for path in paths.into_iter().flatten() {
        if is_stdout(path) {
            stdout += 1;
            if stdout > 1 {
                return Err(crate::cli::UsageError(
                    "only one result may go to standard output (-)".into(),
                )
                .into());
            }
            continue;
        }
        if let Some(key) = file_key(path) {
            if let Some((first, _)) = files.iter().find(|(_, k)| *k == key) {
                return Err(crate::cli::UsageError(format!(
                    "{} names the same file as {}: one file takes one result",
                    path.display(),
                    first.display()
                ))
                .into());
            }
            files.push((path, key));
        }
        check_writable(path).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Refuses, before anything is written, a result path that names a file
/// the command reads (`inputs`, however spelt: a hard link, `./`):
/// `compare BASE NEW --markdown BASE` would replace BASE with its own
/// comparison. Standard output, FIFOs and devices are never refused.
pub(super) fn check_not_inputs<'a>(
    inputs: &[&Path],
    outputs: impl IntoIterator<Item = &'a Option<PathBuf>>,
) -> anyhow::Result<()> {
    for path in outputs.into_iter().flatten() {
        if is_stdout(path) {
            continue;
        }
        let Some(key @ FileKey::File(..)) = file_key(path) else {
            continue;
        };
        if let Some(input) = inputs.iter().find(|i| file_key(i).as_ref() == Some(&key)) {
            return Err(crate::cli::UsageError(format!(
                "cannot write {}: it is the input {} (give the result another file)",
                path.display(),
                input.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// What makes two result paths one file: a regular file's device and
/// inode (hard links and other spellings included), or, for a file not
/// there yet, its directory's device and inode and its name. Devices and
/// FIFOs have none: two results may go to /dev/null.
#[derive(PartialEq, Eq)]
enum FileKey {
    File(u64, u64),
    New(u64, u64, std::ffi::OsString),
}

fn file_key(path: &Path) -> Option<FileKey> {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Some(FileKey::File(meta.dev(), meta.ino())),
        Ok(_) => None,
        Err(_) => {
            let name = path.file_name()?.to_owned();
            let dir = match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir,
                _ => Path::new("."),
            };
            let meta = std::fs::metadata(dir).ok()?;
            Some(FileKey::New(meta.dev(), meta.ino(), name))
        }
    }
}

fn check_writable(path: &Path) -> io::Result<()> {
    match Target::resolve(path)? {
        Target::Descriptor(fd) => replace::writable(fd.dup()?.as_fd()),
        Target::Special(entry) => {
            let fd = open_special(&entry)?;
            lock_opened().push((path.to_owned(), fd));
            Ok(())
        }
        Target::File(file) => file.check(),
    }
}

fn lock_opened() -> std::sync::MutexGuard<'static, Vec<(PathBuf, OwnedFd)>> {
    OPENED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Opens a FIFO, terminal or device without blocking; a FIFO that no
/// process reads is waited for up to [`FIFO_READER_WAIT`] (or until a
/// signal), then refused: never a wait without end.
fn open_special(entry: &Entry) -> io::Result<OwnedFd> {
    let start = Instant::now();
    loop {
        match entry.open_stream() {
            Err(err) if err.raw_os_error() == Some(libc::ENXIO) && entry.is_fifo() => {
                if start.elapsed() >= FIFO_READER_WAIT || interrupted().is_some() {
                    return Err(io::Error::new(
                        io::ErrorKind::NotConnected,
                        "no process has this FIFO open for reading (start its reader first)",
                    ));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// Writes `bytes` to `path`: a regular file whole or not at all (a
/// temporary file beside it, with the old one's mode and owner, synced,
/// renamed over it); a file with several hard links, a FIFO, a device or
/// a descriptor (`/dev/fd/N`) in place.
pub(super) fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let opened = {
        let mut opened = lock_opened();
        let at = opened.iter().position(|(p, _)| p == path);
        at.map(|i| opened.remove(i).1)
    };
    if let Some(fd) = opened {
        return stream(fd.as_fd(), bytes);
    }
    match Target::resolve(path)? {
        Target::Descriptor(fd) => stream(fd.dup()?.as_fd(), bytes),
        Target::Special(entry) => stream(open_special(&entry)?.as_fd(), bytes),
        Target::File(file) => {
            let _held = crate::sys::hold::hold_signals()?;
            file.prepare(bytes.to_vec())?.commit()
        }
    }
}

/// The FIFO reader tests/results.rs uses too.
#[cfg(test)]
#[path = "../../tests/common/fifo.rs"]
mod fifo;

#[cfg(test)]
mod tests {
    use super::fifo::read_fifo;
    use super::*;
    use std::fs;

    #[test]
    fn a_file_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        fs::write(&path, "old").unwrap();
        write_whole(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn a_symbolic_link_stays_and_its_target_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_whole(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
    }

    #[test]
    fn checking_leaves_an_old_result_and_no_file_behind() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.json");
        fs::write(&old, "{\"old\":1}").unwrap();
        let new = dir.path().join("new.json");
        check_outputs([&Some(old.clone()), &Some(new.clone())]).unwrap();
        assert_eq!(fs::read(&old).unwrap(), b"{\"old\":1}");
        assert!(!new.exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let missing = Some(dir.path().join("no/such/dir.json"));
        assert!(check_outputs([&missing]).is_err());
    }

    /// (device, inode, device number, type): what renaming a file over a
    /// path would change.
    fn identity(path: &Path) -> (u64, u64, u64, u32) {
        let st = rustix::fs::stat(path).unwrap();
        (st.st_dev, st.st_ino, st.st_rdev, st.st_mode & 0o170000)
    }

    #[test]
    fn a_device_is_written_in_place() {
        let null = Path::new("/dev/null");
        let before = identity(null);
        assert_eq!(before.3, 0o020000, "/dev/null is a character device");
        check_outputs([&Some(null.to_owned())]).unwrap();
        write_whole(null, b"x").unwrap();
        assert_eq!(identity(null), before, "/dev/null was replaced");
        // /dev/full takes nothing: the error is its own, not a rename's.
        let full = Path::new("/dev/full");
        let before = identity(full);
        let err = write_whole(full, b"x").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC), "{err}");
        assert_eq!(identity(full), before, "/dev/full was replaced");
    }

    #[test]
    fn a_fifo_is_written_in_place_as_a_stream() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("ff");
        super::fifo::mkfifo(&fifo);
        let before = identity(&fifo);
        let reader = read_fifo(&fifo);
        let bytes = vec![b'r'; 200_000];
        check_outputs([&Some(fifo.clone())]).unwrap();
        write_whole(&fifo, &bytes).unwrap();
        assert!(
            lock_opened().iter().all(|(p, _)| p != &fifo),
            "the FIFO stayed open"
        );
        assert_eq!(reader.join().unwrap(), bytes);
        assert_eq!(identity(&fifo), before, "the FIFO was replaced");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_long_name_that_is_not_utf8_is_replaced_whole() {
        use std::os::unix::ffi::OsStrExt;
        for len in [250, 255] {
            let dir = tempfile::tempdir().unwrap();
            // Latin-1 é: each byte is 3 once made "lossy" UTF-8.
            let path = dir
                .path()
                .join(std::ffi::OsStr::from_bytes(&vec![0xe9; len]));
            fs::write(&path, "old").unwrap();
            check_outputs([&Some(path.clone())]).unwrap();
            write_whole(&path, b"new").unwrap_or_else(|e| panic!("{len} bytes: {e}"));
            assert_eq!(fs::read(&path).unwrap(), b"new");
            assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        }
    }
}
