//! What pv writes to, `-o FILE` and the `-U FILE` store, opened only once
//! it is known that neither is one of the inputs (nor the store the
//! output): a file is truncated after that check, never before, so a
//! refused run leaves every file as it was.
//!
//! pv 1.12 truncates first and checks after (`pv -q -o f f` says "input
//! file is also the output", exits 4 and leaves `f` empty; so does `-U f
//! f`): docs/pv.md says where this differs.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::sys::inherited::{self, Stdio};
use crate::sys::{FdInfo, FdKind, fd_info};

use super::{EXIT_ACCESS, EXIT_CONTROL, EXIT_SAME, Invocation};
use crate::cli::strerror;

/// pv 1.12's words for an input that is the output.
pub(super) const SAME: &str = "input file is also the output";

/// Where the bytes go: stdout, `-o FILE`, or nowhere (`-X`).
pub(super) enum Output {
    Stdout(io::Stdout),
    File(File),
}

impl Output {
    pub(super) fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Output::Stdout(stdout) => stdout.as_fd(),
            Output::File(file) => file.as_fd(),
        }
    }
}

/// The `-U` store: a regular file, read back from its start once every
/// input is in it.
pub(super) struct Store {
    /// Its name, for messages (`-` for an unnamed temporary file).
    pub name: PathBuf,
    /// Open for reading and writing.
    pub file: File,
}

/// Where the bytes go.
pub(super) struct Targets {
    /// `-o FILE`, `-X`'s /dev/null, or stdout.
    pub output: Output,
    /// `-U FILE`.
    pub store: Option<Store>,
}

impl Targets {
    /// Whether the file `id` (device, inode) is one of the `names` (the
    /// inputs), the output or the store.
    pub(super) fn holds(&self, id: (u64, u64), names: &[PathBuf]) -> bool {
        let out = fd_info(self.output.fd()).ok();
        let store = self.store.as_ref().and_then(|s| fd_info(&s.file).ok());
        let targets = [out, store]
            .into_iter()
            .flatten()
            .any(|info| (info.dev, info.ino) == id);
        targets || input_ids(names).iter().any(|(_, input)| *input == id)
    }
}

/// A file that can be an input and the output at once: a regular file or
/// a block device (written through), or a pipe (`pv -o /dev/stdin` on a
/// pipe, a FIFO named twice: pv would read back what it wrote, for
/// ever); `(dev, ino)`.
fn writable_id(kind: FdKind, dev: u64, ino: u64) -> Option<(u64, u64)> {
    matches!(kind, FdKind::Regular | FdKind::BlockDevice | FdKind::Pipe).then_some((dev, ino))
}

/// What `meta` (of a name, not an open descriptor) is, as far as
/// [`writable_id`] tells files apart.
fn kind_of(meta: &std::fs::Metadata) -> FdKind {
    let kind = meta.file_type();
    if kind.is_file() {
        FdKind::Regular
    } else if kind.is_block_device() {
        FdKind::BlockDevice
    } else if kind.is_fifo() {
        FdKind::Pipe
    } else {
        FdKind::Other
    }
}

/// Whether `-o path` names standard output: `-`, and the names Linux
/// gives descriptor 1. Written to as `-` is, never reopened: reopening
/// `/dev/stdout` (as pv 1.12 does) and emptying it would empty a file
/// that the shell opened with `>>`.
fn names_stdout(path: &Path) -> bool {
    ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]
        .iter()
        .any(|name| path.as_os_str() == *name)
}

/// Why `what` (the `-P` file, the `-U` store) cannot be the file `meta`
/// describes: a directory as pv 1.12 says it (its open fails with
/// `EISDIR`), anything else by what it must be.
pub(super) fn not_regular(meta: &std::fs::Metadata, what: &str) -> String {
    if meta.is_dir() {
        strerror(&std::io::Error::from_raw_os_error(libc::EISDIR))
    } else {
        format!("{what} must be a regular file")
    }
}

/// The `-P` file's identity if it is there: refused (as pv.rs's
/// `PidFile::write` would refuse it, but before any target is emptied)
/// if it is not a regular file; a symlink is not followed.
fn pidfile_id(path: &Path) -> Result<Option<(u64, u64)>, String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_file() => Err(format!(
            "{}: {}",
            path.display(),
            not_regular(&meta, "the pidfile (-P)")
        )),
        Ok(meta) => Ok(Some((meta.dev(), meta.ino()))),
        Err(_) => Ok(None),
    }
}

/// The identity of every input that is a regular file or block device,
/// known without opening it (opening a FIFO would wait for a writer):
/// `stat` of a name (following links: `/dev/stdin` is what stdin is), and
/// `fstat` of stdin for `-`.
fn input_ids(names: &[PathBuf]) -> Vec<(&Path, (u64, u64))> {
    names
        .iter()
        .filter_map(|name| {
            let id = if name.as_os_str() == "-" {
                if inherited::closed_at_start(Stdio::Stdin) {
                    return None;
                }
                let info = fd_info(io::stdin().as_fd()).ok()?;
                writable_id(info.kind, info.dev, info.ino)?
            } else {
                let meta = std::fs::metadata(name).ok()?;
                writable_id(kind_of(&meta), meta.dev(), meta.ino())?
            };
            Some((name.as_path(), id))
        })
        .collect()
}

/// A file opened for writing and not yet truncated, and whether this run
/// made it (removed again if the run is refused).
struct Opened {
    file: File,
    info: FdInfo,
    made: Option<PathBuf>,
}

impl Opened {
    /// Removes the file if this run made it.
    fn abandon(self) {
        if let Some(path) = self.made {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Opens `path` for writing (and reading, with `read`) without
/// truncating it: made new if missing (mode 0666 less the umask). A FIFO
/// opened for writing waits for a reader, as in pv: the caller runs this
/// where a signal can end the wait ([`super::signals::until_signalled`]).
/// `O_NONBLOCK` with `nonblocking`: opening a FIFO then does not wait.
fn open_untruncated(path: &Path, read: bool, nonblocking: bool) -> io::Result<Opened> {
    let mut options = OpenOptions::new();
    options.write(true).read(read);
    let mut flags = libc::O_NOCTTY;
    if nonblocking {
        flags |= libc::O_NONBLOCK;
    }
    options.custom_flags(flags);
    let (file, made) = match options.clone().create_new(true).open(path) {
        Ok(file) => (file, Some(path.to_owned())),
        // There already, or a symlink to a file that is not (which
        // O_EXCL refuses too): opened, made through the link if missing,
        // and not this run's to remove.
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            (options.create(true).open(path)?, None)
        }
        Err(err) => return Err(err),
    };
    let info = fd_info(&file)?;
    Ok(Opened { file, info, made })
}

/// `-U -`: an unnamed file in the temporary directory (`O_TMPFILE`, or
/// where the filesystem has none, a new file removed at once), gone with
/// the process whatever ends it.
fn temporary_store() -> io::Result<File> {
    use rustix::fs::{Mode, OFlags, open};
    let dir = std::env::temp_dir();
    let cannot = |err: io::Error| {
        io::Error::new(
            err.kind(),
            format!(
                "cannot make a temporary file in {}: {}",
                dir.display(),
                strerror(&err)
            ),
        )
    };
    let unnamed = open(
        &dir,
        OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    );
    match unnamed {
        Ok(fd) => return Ok(File::from(fd)),
        Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::ISDIR) => {}
        Err(err) => return Err(cannot(err.into())),
    }
    for attempt in 0..100u32 {
        let path = dir.join(format!(
            "pipespeed-pv-store-{}-{attempt}",
            std::process::id()
        ));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
        {
            Ok(file) => {
                std::fs::remove_file(&path).map_err(cannot)?;
                return Ok(file);
            }
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(cannot(err)),
        }
    }
    Err(cannot(io::ErrorKind::AlreadyExists.into()))
}

/// Opens the output and the store, refusing (with pv's message and
/// status bit) a target that is an input, a store that is the output,
/// and a store that is not a regular file, and (status 1) a `pidfile`
/// that is not a regular file or is an input, the output or the store;
/// only then truncates them. `-o /dev/stdout` is stdout ([`names_stdout`]).
pub(super) fn open(
    me: &Invocation,
    discard: bool,
    output: Option<&Path>,
    store: Option<&Path>,
    pidfile: Option<&Path>,
    names: &[PathBuf],
) -> Result<Targets, u8> {
    let inputs = input_ids(names);
    // `-o /dev/stdout` still refuses an input that stdout is, as `-o f`
    // does.
    let named_output = output.is_some_and(|p| p.as_os_str() != "-");
    let output = output.filter(|p| !names_stdout(p));
    // An output that is an input by name is refused before it is opened:
    // opening a FIFO for writing would wait for a reader first.
    if let Some(path) = output.filter(|_| !discard)
        && let Ok(meta) = std::fs::metadata(path)
    {
        let id = writable_id(kind_of(&meta), meta.dev(), meta.ino());
        let same: Vec<&Path> = inputs
            .iter()
            .filter(|(_, input)| Some(*input) == id)
            .map(|(name, _)| *name)
            .collect();
        if !same.is_empty() {
            for name in same {
                me.say(&format!("{}: {SAME}", name.display()));
            }
            return Err(EXIT_SAME);
        }
    }
    // The output, untruncated.
    let out = match output {
        _ if discard => None,
        Some(path) => match open_untruncated(path, false, false) {
            Ok(opened) => Some(opened),
            Err(err) => {
                me.say(&format!("{}: {}", path.display(), strerror(&err)));
                return Err(EXIT_ACCESS);
            }
        },
        _ => None,
    };
    let out_id = match &out {
        Some(opened) => writable_id(opened.info.kind, opened.info.dev, opened.info.ino),
        None if discard || inherited::closed_at_start(Stdio::Stdout) => None,
        None => fd_info(io::stdout().as_fd())
            .ok()
            .and_then(|info| writable_id(info.kind, info.dev, info.ino)),
    };
    // The store, untruncated, and a regular file.
    let stored = match store {
        None => None,
        Some(path) if path.as_os_str() == "-" => match temporary_store() {
            Ok(file) => Some((file, None)),
            Err(err) => {
                me.say(&strerror(&err));
                out.into_iter().for_each(Opened::abandon);
                return Err(EXIT_ACCESS);
            }
        },
        Some(path) => match open_store(path) {
            Ok(opened) => {
                let id = (opened.info.dev, opened.info.ino);
                Some((opened.file, Some((id, opened.made))))
            }
            Err(err) => {
                me.say(&format!("{}: {err}", path.display()));
                out.into_iter().for_each(Opened::abandon);
                return Err(EXIT_ACCESS);
            }
        },
    };
    let store_id = stored
        .as_ref()
        .and_then(|(_, named)| named.as_ref().map(|(id, _)| *id));
    // What may not be the same file: each input and the output (with -o,
    // or with -U, whose forward cannot skip an input), each input and the
    // store, the store and the output.
    let mut same: Vec<String> = Vec::new();
    for (name, id) in &inputs {
        let is_output = Some(*id) == out_id && (named_output || store.is_some());
        if is_output || Some(*id) == store_id {
            same.push(name.display().to_string());
        }
    }
    if let (Some(store), Some(id)) = (store, store_id)
        && Some(id) == out_id
    {
        same.push(store.display().to_string());
    }
    // The pidfile, which pv.rs writes after this, may be none of them.
    let refused_pidfile = pidfile.and_then(|path| match pidfile_id(path) {
        Err(err) => Some(err),
        Ok(Some(id))
            if Some(id) == out_id
                || Some(id) == store_id
                || inputs.iter().any(|(_, input)| *input == id) =>
        {
            Some(format!(
                "{}: the pidfile (-P) is also an input or the output",
                path.display()
            ))
        }
        Ok(_) => None,
    });
    if !same.is_empty() || refused_pidfile.is_some() {
        let status = if same.is_empty() {
            EXIT_CONTROL
        } else {
            EXIT_SAME
        };
        for name in same {
            me.say(&format!("{name}: {SAME}"));
        }
        if status == EXIT_CONTROL
            && let Some(err) = refused_pidfile
        {
            me.say(&err);
        }
        out.into_iter().for_each(Opened::abandon);
        if let Some((_, Some((_, Some(made))))) = stored {
            let _ = std::fs::remove_file(made);
        }
        return Err(status);
    }
    // Now, and only now, emptied.
    let output = match out {
        Some(opened) => {
            if opened.info.kind == FdKind::Regular
                && let Err(err) = opened.file.set_len(0)
            {
                me.say(&format!(
                    "{}: {}",
                    output.unwrap_or(Path::new("-")).display(),
                    strerror(&err)
                ));
                return Err(EXIT_ACCESS);
            }
            Output::File(opened.file)
        }
        None if discard => match File::options().write(true).open("/dev/null") {
            Ok(file) => Output::File(file),
            Err(err) => {
                me.say(&format!("/dev/null: {}", strerror(&err)));
                return Err(EXIT_ACCESS);
            }
        },
        None => Output::Stdout(io::stdout()),
    };
    let store = match (stored, store) {
        (Some((file, _)), Some(name)) => {
            if let Err(err) = file.set_len(0) {
                me.say(&format!("{}: {}", name.display(), strerror(&err)));
                return Err(EXIT_ACCESS);
            }
            Some(Store {
                name: name.to_owned(),
                file,
            })
        }
        _ => None,
    };
    Ok(Targets { output, store })
}

/// Opens the `-U` store: a regular file, or one to make. Anything else
/// (a device, a FIFO, a socket, a directory, `/dev/stdout` on a pipe) is
/// refused before it is opened where it can be told by name, and after
/// opening it without waiting otherwise: the store is read back from its
/// start, which only a regular file allows.
fn open_store(path: &Path) -> Result<Opened, String> {
    const STORE: &str = "the store (-U)";
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return Err(not_regular(&meta, STORE)),
        _ => {}
    }
    let opened = open_untruncated(path, true, true).map_err(|err| strerror(&err))?;
    if opened.info.kind != FdKind::Regular {
        opened.abandon();
        return Err(format!("{STORE} must be a regular file"));
    }
    Ok(opened)
}
