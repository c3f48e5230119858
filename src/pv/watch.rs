//! `-d PID[:FD]`: copy nothing, show how far another process has got
//! through its files, from `/proc/PID/fdinfo/FD` (`pos:`) and the size of
//! the file behind `/proc/PID/fd/FD`. Ends when every watched descriptor
//! is closed. As pv, only regular files and block devices can be watched:
//! a pipe, socket or character device has no position to follow.

use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::time::{Duration, Instant};

use super::display::{Meter, Settings, show, terminal_width};
use super::meter::render_numeric;
use crate::quote::strerror;

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
}

/// Where process `pid` stands in descriptor `fd`, or `None` once it is
/// closed (or the process is gone).
fn position(pid: u32, fd: u32) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("pos:"))
        .and_then(|v| v.trim().parse().ok())
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
    let name =
        fs::read_link(&link).map_or_else(|_| format!("fd {fd}"), |p| p.display().to_string());
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
    })
}

/// The descriptors to watch: `fd`, or every regular file `pid` has open.
fn targets(pid: u32, fd: Option<u32>) -> io::Result<Vec<Watched>> {
    if let Some(fd) = fd {
        return match watch(pid, fd) {
            Ok(watched) => Ok(vec![watched]),
            Err(Refused::Unreadable(err)) => Err(io::Error::new(
                err.kind(),
                format!(
                    "cannot watch descriptor {fd} of process {pid}: {}",
                    strerror(&err)
                ),
            )),
            Err(Refused::NotAFile(name)) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "cannot watch descriptor {fd} of process {pid} ({name}): not a regular file \
                     or block device"
                ),
            )),
        };
    }
    let mut fds: Vec<u32> = fs::read_dir(format!("/proc/{pid}/fd"))
        .map_err(|err| {
            let err = if fs::exists(format!("/proc/{pid}")).unwrap_or(true) {
                err
            } else {
                io::Error::from_raw_os_error(libc::ESRCH)
            };
            io::Error::new(
                err.kind(),
                format!("cannot watch process {pid}: {}", strerror(&err)),
            )
        })?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    fds.sort_unstable();
    let watched: Vec<Watched> = fds
        .into_iter()
        .filter_map(|fd| watch(pid, fd).ok())
        .collect();
    if watched.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("process {pid} has no regular file or block device open to watch"),
        ));
    }
    Ok(watched)
}

/// Every interval, draws on `out` (when `show` is true) the meters of
/// the watched descriptors of every `(pid, fd)` target (every regular
/// file of `pid` without `fd`), until all are closed.
pub fn run(
    targets_asked: &[(u32, Option<u32>)],
    settings: &Settings,
    visible: bool,
    out: &io::Stderr,
) -> io::Result<()> {
    let mut watched = Vec::new();
    for &(pid, fd) in targets_asked {
        watched.extend(targets(pid, fd)?);
    }
    let start = Instant::now();
    let width = settings.width.unwrap_or_else(|| terminal_width(out));
    let several = watched.len() > 1;
    let format = settings.format();
    let mut first = true;
    loop {
        std::thread::sleep(settings.interval);
        let now = start.elapsed().as_secs_f64();
        let mut text = String::new();
        if !first && several && !settings.numeric {
            // Back to the first line of the previous drawing.
            text.push_str(&format!("\x1b[{}A", watched.len() - 1));
        }
        first = false;
        let mut open = false;
        let count = watched.len();
        for (i, w) in watched.iter_mut().enumerate() {
            // Closed, or closed and reused for another file: the last
            // position seen stands.
            let at = position(w.pid, w.fd).filter(|_| file_id(w.pid, w.fd) == Some(w.id));
            open |= at.is_some();
            let pos = at.unwrap_or(w.last);
            w.last = pos;
            let mut own = settings.clone();
            own.size = w.size;
            if several {
                own.items.name = Some(format!("{}:{}", w.fd, w.name));
            }
            let snap = w.meter.snapshot(pos, now, at.is_none(), &own);
            if !visible {
                continue;
            }
            if settings.numeric {
                text.push_str(&render_numeric(&snap, &own.items));
                text.push('\n');
            } else {
                let format = if several {
                    own.format()
                } else {
                    format.clone()
                };
                text.push_str(&w.meter.line(&format, &snap, width));
                text.push('\r');
                if i + 1 < count {
                    text.push('\n');
                }
            }
        }
        if !open && visible && !settings.numeric {
            text.push('\n');
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
