//! `-d PID[:FD]`: copy nothing, show how far another process has got
//! through its files, from `/proc/PID/fdinfo/FD` (`pos:`) and the size of
//! the file behind `/proc/PID/fd/FD`. Ends when every watched descriptor
//! is closed and every process watched whole (`-d PID`, whose files are
//! looked for again every frame, as pv 1.12 does) has ended. As pv, only
//! regular files and block devices can be watched.

use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::time::{Duration, Instant};

use super::display::{Meter, Settings, show, terminal_width};
use super::format::render_numeric;
use crate::quote::strerror;
use crate::sys::procfs;

/// One watched descriptor.
#[derive(Debug)]
struct Watched {
    pid: u32,
    fd: u32,
    name: String,
    /// The file's device and inode: a descriptor closed and reused for
    /// another file counts as closed.
    id: (u64, u64),
    size: Option<u64>,
    /// The last position seen.
    last: u64,
    /// The rate and bounce from one frame to the next.
    meter: Meter,
    /// Found as one of the files of a process watched whole: dropped
    /// once closed.
    whole: bool,
    /// Closed (or reused for another file) at the last look.
    closed: bool,
    /// Its process, watched whole, has ended.
    ended: bool,
}

/// Where process `pid` stands in descriptor `fd`, or `None` once it is
/// closed (or the process is gone).
fn position(pid: u32, fd: u32) -> Option<u64> {
    procfs::fdinfo(pid, fd).map(|(_flags, pos)| pos)
}

/// Why a descriptor cannot be watched.
enum Refused {
    /// It cannot be looked at (no such process or descriptor, no right).
    Unreadable(io::Error),
    /// It is not a regular file or block device: the name it links to.
    NotAFile(String),
}

/// The device and inode of the file behind `fd` of `pid`.
fn file_id(pid: u32, fd: u32) -> Option<(u64, u64)> {
    let meta = fs::metadata(format!("/proc/{pid}/fd/{fd}")).ok()?;
    Some((meta.dev(), meta.ino()))
}

fn watch(pid: u32, fd: u32) -> Result<Watched, Refused> {
    let link = format!("/proc/{pid}/fd/{fd}");
    let meta = fs::metadata(&link).map_err(|err| {
        // /proc/PID/fd/FD is missing for a missing process too: say which.
        let gone = !fs::exists(format!("/proc/{pid}")).unwrap_or(true);
        Refused::Unreadable(if gone {
            io::Error::from_raw_os_error(libc::ESRCH)
        } else {
            err
        })
    })?;
    // A file under the current directory by its relative name, as pv
    // 1.12 shows it.
    let here = std::env::current_dir().unwrap_or_default();
    let name = fs::read_link(&link).map_or_else(
        |_| format!("fd {fd}"),
        |p| {
            p.strip_prefix(&here)
                .ok()
                .filter(|rest| !rest.as_os_str().is_empty())
                .unwrap_or(&p)
                .display()
                .to_string()
        },
    );
    let size = if meta.is_file() {
        Some(meta.len())
    } else if meta.file_type().is_block_device() {
        // A block device's size is where its end is.
        File::open(&link)
            .and_then(|mut f| f.seek(SeekFrom::End(0)))
            .ok()
    } else {
        return Err(Refused::NotAFile(name));
    };
    Ok(Watched {
        pid,
        fd,
        name,
        id: (meta.dev(), meta.ino()),
        size,
        last: position(pid, fd).unwrap_or(0),
        meter: Meter::default(),
        whole: false,
        closed: false,
        ended: false,
    })
}

/// Whether process `pid` runs: there, and not a zombie (one that has
/// ended, its parent not having waited for it yet, keeps `/proc/PID`).
fn runs(pid: u32) -> bool {
    procfs::stat(pid).is_some_and(|stat| !matches!(stat.state, 'Z' | 'X'))
}

/// `ESRCH` where `/proc/PID` is missing, else `err`: a missing process
/// makes its descriptors missing too.
fn unless_gone(pid: u32, err: io::Error) -> io::Error {
    if fs::exists(format!("/proc/{pid}")).unwrap_or(true) {
        err
    } else {
        io::Error::from_raw_os_error(libc::ESRCH)
    }
}

/// The descriptor `fd` of `pid`, which must be a regular file or block
/// device.
fn one(pid: u32, fd: u32) -> io::Result<Watched> {
    match watch(pid, fd) {
        Ok(watched) => Ok(watched),
        // pv 1.12's words for a process that is not there.
        Err(Refused::Unreadable(err)) if err.raw_os_error() == Some(libc::ESRCH) => Err(
            io::Error::new(err.kind(), format!("pid {pid}: {}", strerror(&err))),
        ),
        Err(Refused::Unreadable(err)) => Err(io::Error::new(
            err.kind(),
            format!("pid {pid}: fd {fd}: {}", strerror(&err)),
        )),
        Err(Refused::NotAFile(name)) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("pid {pid}: fd {fd}: {name}: not a regular file or block device"),
        )),
    }
}

/// The descriptors `pid` has open now, in order; `Err` when the process
/// cannot be looked at (gone, or not ours to read).
fn open_fds(pid: u32) -> io::Result<Vec<u32>> {
    let mut fds: Vec<u32> = fs::read_dir(format!("/proc/{pid}/fd"))
        .map_err(|err| unless_gone(pid, err))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    fds.sort_unstable();
    Ok(fds)
}

/// What the watch looks at: the fixed descriptors (`PID:FD`), and the
/// processes watched whole (`PID`), whose files are found again every
/// frame: pv 1.12 shows "all regular files and block devices it opens",
/// those opened later too, and drops those closed, until it exits.
#[derive(Debug, Default)]
struct Watch {
    watched: Vec<Watched>,
    processes: Vec<u32>,
}

impl Watch {
    fn new(targets_asked: &[(u32, Option<u32>)]) -> io::Result<Watch> {
        let mut watch = Watch::default();
        for &(pid, fd) in targets_asked {
            match fd {
                Some(fd) => watch.watched.push(one(pid, fd)?),
                None => {
                    open_fds(pid).map_err(|err| {
                        io::Error::new(err.kind(), format!("pid {pid}: {}", strerror(&err)))
                    })?;
                    watch.processes.push(pid);
                }
            }
        }
        watch.rescan();
        Ok(watch)
    }

    /// Adds the files the whole processes have opened since the last look.
    fn rescan(&mut self) {
        for &pid in &self.processes {
            for fd in open_fds(pid).unwrap_or_default() {
                let id = file_id(pid, fd);
                let known = self
                    .watched
                    .iter()
                    .any(|w| w.pid == pid && w.fd == fd && Some(w.id) == id);
                if known {
                    continue;
                }
                if let Ok(mut watched) = watch(pid, fd) {
                    watched.whole = true;
                    let at = self
                        .watched
                        .iter()
                        .position(|w| (w.pid, w.fd) > (pid, fd))
                        .unwrap_or(self.watched.len());
                    self.watched.insert(at, watched);
                }
            }
        }
    }

    /// Whether a watched whole process still runs.
    fn processes_run(&self) -> bool {
        self.processes.iter().any(|&pid| runs(pid))
    }
}

/// Every interval, draws on `out` (when `show` is true) the meters of
/// the watched descriptors of every `(pid, fd)` target (every regular
/// file of `pid` without `fd`, those it opens later too), until every
/// descriptor is closed and every process watched whole has ended.
pub(crate) fn run(
    targets_asked: &[(u32, Option<u32>)],
    settings: &Settings,
    visible: bool,
    out: &io::Stderr,
) -> io::Result<()> {
    let mut watch = Watch::new(targets_asked)?;
    let start = Instant::now();
    let width = settings.width.unwrap_or_else(|| terminal_width(out));
    let format = settings.format();
    // How many lines the last frame drew (the cursor is on its last).
    let mut drawn = 0;
    loop {
        std::thread::sleep(settings.interval);
        watch.rescan();
        let now = start.elapsed().as_secs_f64();
        let several = watch.watched.len() > 1 || !watch.processes.is_empty();
        let mut lines = Vec::new();
        let mut open = false;
        for w in &mut watch.watched {
            // Closed, or closed and reused for another file: the last
            // position seen is the last said.
            let at = position(w.pid, w.fd).filter(|_| file_id(w.pid, w.fd) == Some(w.id));
            open |= at.is_some() && !w.whole;
            // A process watched whole that has ended: its files keep
            // their last line, as pv 1.12 leaves them.
            let ended = w.whole && !runs(w.pid);
            w.closed = at.is_none() && !ended;
            w.ended = ended;
            let pos = at.unwrap_or(w.last);
            w.last = pos;
            let mut own = settings.clone();
            own.size = w.size;
            if several {
                own.items.name = Some(format!("{:>4}:{}", w.fd, w.name));
            }
            let snap = w.meter.snapshot(pos, now, at.is_none(), &own);
            if settings.numeric {
                lines.push(render_numeric(&snap, &own.items));
            } else if !w.closed {
                let format = if several {
                    own.format()
                } else {
                    format.clone()
                };
                lines.push(w.meter.line(&format, &snap, width));
            }
        }
        // A file closed is shown no more (its line blanked, as pv 1.12
        // does; -n has said its last position).
        watch.watched.retain(|w| !w.closed && !w.ended);
        open |= watch.processes_run();
        let mut text = String::new();
        if visible {
            text = frame(&lines, drawn, settings.numeric, width);
            if !settings.numeric {
                drawn = lines.len();
                if !open && drawn > 0 {
                    text.push('\n');
                }
            }
        }
        let patience = if open {
            Duration::ZERO
        } else {
            Duration::from_secs(1)
        };
        show(out, &text, patience);
        if !open {
            return Ok(());
        }
    }
}

/// One frame: `lines` over the `drawn` lines of the last one (a line
/// each, the cursor left on the last), blanking those no longer drawn;
/// with `numeric`, one line each, below the last.
fn frame(lines: &[String], drawn: usize, numeric: bool, width: usize) -> String {
    let mut text = String::new();
    if numeric {
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        return text;
    }
    if drawn > 1 {
        // Back to the first line of the last frame.
        text.push_str(&"\x1b[A".repeat(drawn - 1));
    }
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(line);
        text.push('\r');
    }
    let gone = drawn.saturating_sub(lines.len());
    for i in 0..gone {
        if i > 0 || !lines.is_empty() {
            text.push('\n');
        }
        text.push_str(&" ".repeat(width));
        text.push('\r');
    }
    // Back to the last line drawn (the first, blank, when none is).
    let back = if lines.is_empty() {
        gone.saturating_sub(1)
    } else {
        gone
    };
    if back > 0 {
        text.push_str(&"\x1b[A".repeat(back));
    }
    text
}
