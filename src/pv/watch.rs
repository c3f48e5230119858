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
use super::format::{Format, Segment};
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
    /// The last line drawn.
    drawn: String,
    /// The rate and bounce from one frame to the next.
    meter: Meter,
    /// Found as one of the files of a process watched whole: dropped
    /// once closed.
    whole: bool,
    /// Found closed (or reused for another file) at the last frame,
    /// which showed it once more: its row goes at the next.
    closed: bool,
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
        drawn: String::new(),
        meter: Meter::default(),
        whole: false,
        closed: false,
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
                // A descriptor known by its number is looked at by the
                // frame: closed or reused, it is shown once more, and
                // found again as new at the frame after.
                let known = self.watched.iter().any(|w| w.pid == pid && w.fd == fd);
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
///
/// As pv 1.12 (seen with strace): a descriptor found closed, or reused
/// for another file, is shown once more as it was last (so the file a
/// process held at the start is shown in the first frame even if it was
/// replaced since), and its row goes at the next frame, the rows below
/// moving up and the last one blanked. The watch of a whole process
/// ends, once the process has, with the last frame left as it was.
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
    // How many rows the last frame drew (the cursor is on its first).
    let mut drawn = 0;
    loop {
        std::thread::sleep(settings.interval);
        let before = watch.watched.len();
        watch.watched.retain(|w| !w.closed);
        let removed = before - watch.watched.len();
        let running = watch.processes_run();
        if !running && watch.watched.iter().all(|w| w.whole) {
            // The end: the last frame stays where the processes watched
            // whole have ended; the rows of the descriptors closed are
            // blanked.
            let mut text = String::new();
            if visible && watch.processes.is_empty() && removed > 0 {
                text = frame(&[], drawn, settings.numeric, width);
                drawn = 0;
            }
            if visible && !settings.numeric {
                // Below the rows left, from the first.
                text.push_str(&"\n".repeat(drawn));
            }
            show(out, &text, Duration::from_secs(1));
            return Ok(());
        }
        watch.rescan();
        let now = start.elapsed().as_secs_f64();
        let several = watch.watched.len() > 1 || !watch.processes.is_empty();
        let mut lines = Vec::new();
        for w in &mut watch.watched {
            // A process watched whole that has ended (beside descriptors
            // still watched): its files keep their last line.
            if w.whole && !runs(w.pid) {
                lines.push(w.drawn.clone());
                continue;
            }
            let at = position(w.pid, w.fd).filter(|_| file_id(w.pid, w.fd) == Some(w.id));
            w.closed = at.is_none();
            if w.closed && !w.drawn.is_empty() {
                lines.push(w.drawn.clone());
                continue;
            }
            let pos = at.unwrap_or(w.last);
            w.last = pos;
            let mut own = settings.clone();
            own.size = w.size;
            let mut snap = w.meter.snapshot(pos, now, false, &own);
            // pv 1.12 names every line by its descriptor and file, in
            // place of -N's name.
            snap.name = Some(format!("{:>4}:{}", w.fd, w.name));
            let format = if several {
                line_format(&own)
            } else {
                format.clone()
            };
            w.drawn = if settings.numeric {
                format.render_numeric(&snap, width)
            } else {
                w.meter.line(&format, &snap, width)
            };
            lines.push(w.drawn.clone());
        }
        if visible {
            let text = frame(&lines, drawn, settings.numeric, width);
            drawn = lines.len();
            show(out, &text, Duration::ZERO);
        }
    }
}

/// The format of one descriptor's line among several (or of a process
/// watched whole): it starts with its name (`%N`, the descriptor and its
/// file), before `-F`'s format or `-n`'s numbers too, as pv 1.12 does
/// (`      3:b: 0` with `-n`). Alone, a line has `%N` only where `-N`
/// or `-F` asks for it.
fn line_format(settings: &Settings) -> Format {
    let format = settings.format();
    if format.has(&Segment::Name) {
        return format;
    }
    Format::parse("%N ").followed_by(format)
}

/// One frame, as pv 1.12 draws it: a row for each of `lines` (ended by
/// `\r`, by `\n` with `numeric`), a blank row for each of the `drawn`
/// rows of the last frame no longer used, a newline between rows, and
/// the cursor back on the first row.
fn frame(lines: &[String], drawn: usize, numeric: bool, width: usize) -> String {
    let rows = lines.len().max(drawn);
    let mut text = String::new();
    for row in 0..rows {
        if row > 0 {
            text.push('\n');
        }
        match lines.get(row) {
            Some(line) => {
                text.push_str(line);
                text.push(if numeric { '\n' } else { '\r' });
            }
            None => {
                text.push_str(&" ".repeat(width));
                text.push('\r');
            }
        }
    }
    text.push_str(&"\x1b[A".repeat(rows.saturating_sub(1)));
    text
}

#[cfg(test)]
mod tests {
    use super::frame;

    /// pv 1.12's bytes (`pv -d PID` of a process holding `3<b 5<a 6<in`
    /// that closes 5, under strace): rows ended by `\r` (`\n` with -n),
    /// a newline between rows, the cursor back on the first row, a row
    /// no longer used blanked over the terminal's width.
    #[test]
    fn frames_are_drawn_as_pv_1_12_draws_them() {
        let rows = ["r3".to_string(), "r5".to_string(), "r6".to_string()];
        assert_eq!(frame(&rows, 0, false, 4), "r3\r\nr5\r\nr6\r\x1b[A\x1b[A");
        assert_eq!(
            frame(&[rows[0].clone(), rows[2].clone()], 3, false, 4),
            "r3\r\nr6\r\n    \r\x1b[A\x1b[A"
        );
        assert_eq!(frame(&rows[..2], 0, true, 4), "r3\n\nr5\n\x1b[A");
        assert_eq!(frame(&rows[..1], 0, true, 4), "r3\n");
        assert_eq!(frame(&[], 2, true, 4), "    \r\n    \r\x1b[A");
        assert_eq!(frame(&[], 0, false, 4), "");
    }
}
