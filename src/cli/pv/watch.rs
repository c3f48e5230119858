//! `-d PID[:FD]`: copy nothing, show how far another process has got
//! through its files, from `/proc/PID/fdinfo/FD` (`pos:`) and the size of
//! the file behind `/proc/PID/fd/FD`. Ends when every watched descriptor
//! is closed.

use std::fs;
use std::io;
use std::time::{Duration, Instant};

use pipespeed::meter::{Items, Snapshot, render, render_numeric};
use pipespeed::sys::clock::local_seconds_of_day;

use super::{rate, show, terminal_width};

/// One watched descriptor.
#[derive(Debug)]
struct Watched {
    fd: u32,
    name: String,
    size: Option<u64>,
    /// The position and time of the last update.
    last: (u64, f64),
}

/// Where process `pid` stands in descriptor `fd`, or `None` once it is
/// closed (or the process is gone).
fn position(pid: u32, fd: u32) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("pos:"))
        .and_then(|v| v.trim().parse().ok())
}

fn watch(pid: u32, fd: u32) -> io::Result<Watched> {
    let link = format!("/proc/{pid}/fd/{fd}");
    let meta = fs::metadata(&link)?;
    Ok(Watched {
        fd,
        name: fs::read_link(&link).map_or_else(|_| format!("fd {fd}"), |p| p.display().to_string()),
        size: meta.is_file().then_some(meta.len()),
        last: (position(pid, fd).unwrap_or(0), 0.0),
    })
}

/// The descriptors to watch: `fd`, or every regular file `pid` has open.
fn targets(pid: u32, fd: Option<u32>) -> anyhow::Result<Vec<Watched>> {
    if let Some(fd) = fd {
        let watched = watch(pid, fd)
            .map_err(|e| anyhow::anyhow!("cannot watch descriptor {fd} of process {pid}: {e}"))?;
        return Ok(vec![watched]);
    }
    let mut fds: Vec<u32> = fs::read_dir(format!("/proc/{pid}/fd"))
        .map_err(|e| anyhow::anyhow!("cannot watch process {pid}: {e}"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    fds.sort_unstable();
    let watched: Vec<Watched> = fds
        .into_iter()
        .filter_map(|fd| watch(pid, fd).ok())
        .filter(|w| w.size.is_some())
        .collect();
    if watched.is_empty() {
        anyhow::bail!("process {pid} has no regular file open to watch");
    }
    Ok(watched)
}

/// Every `interval`, draws `view` (the items, and whether numeric) of the
/// watched descriptors, or nothing without one, until all are closed.
pub fn run(
    pid: u32,
    fd: Option<u32>,
    view: Option<(&Items, bool)>,
    interval: Duration,
) -> anyhow::Result<()> {
    let mut watched = targets(pid, fd)?;
    let start = Instant::now();
    let width = terminal_width();
    let several = watched.len() > 1;
    let mut tick = 0;
    loop {
        std::thread::sleep(interval);
        let now = start.elapsed().as_secs_f64();
        let mut text = String::new();
        let numeric = view.is_some_and(|(_, numeric)| numeric);
        if tick > 0 && several && !numeric {
            // Back to the first line of the previous drawing.
            text.push_str(&format!("\x1b[{}A", watched.len() - 1));
        }
        let mut open = false;
        let count = watched.len();
        for (i, w) in watched.iter_mut().enumerate() {
            let at = position(pid, w.fd);
            open |= at.is_some();
            let pos = at.unwrap_or(w.last.0);
            let snap = Snapshot {
                count: pos,
                elapsed: now,
                rate: rate(pos.saturating_sub(w.last.0), now - w.last.1),
                size: w.size,
                lines: false,
                done: at.is_none(),
                tick,
                clock: local_seconds_of_day(),
            };
            w.last = (pos, now);
            let Some((items, numeric)) = view else {
                continue;
            };
            let mut items = items.clone();
            if several {
                items.name = Some(format!("{}:{}", w.fd, w.name));
            }
            if numeric {
                text.push_str(&render_numeric(&snap, &items));
                text.push('\n');
            } else {
                text.push('\r');
                text.push_str(&render(&snap, &items, width));
                if i + 1 < count {
                    text.push('\n');
                }
            }
        }
        if !open && view.is_some() && !numeric {
            text.push('\n');
        }
        let patience = if open {
            Duration::ZERO
        } else {
            Duration::from_secs(1)
        };
        show(&text, patience);
        if !open {
            return Ok(());
        }
        tick += 1;
    }
}
