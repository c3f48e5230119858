//! `-R PID` and `-Q PID`: change or ask a running meter.
//!
//! Every meter listens on a Unix socket named after its process ID in a
//! directory only its user can enter ([`directory`]). A client sends one
//! JSON [`Request`] line and reads one line back; `SO_PEERCRED` lets only
//! the same user (or root) be heard. (pv uses a SysV message queue; a
//! socket needs no key file and goes away with the meter.)

use std::fs;
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::display::{Meter, Settings, interval_of, lock};
use super::meter::Items;

/// What `pv -R` changes; `None` (or no items) leaves a setting as it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Changes {
    /// The display items, replacing the running ones (and any format).
    pub items: Option<Items>,
    /// `-F`.
    pub format: Option<String>,
    /// `-N`.
    pub name: Option<String>,
    /// `-i`, in seconds.
    pub interval: Option<f64>,
    /// `-s`.
    pub size: Option<u64>,
    /// `-L` (0: no limit).
    pub rate_limit: Option<u64>,
    /// pv 1.12's rule, which `pv -R` follows: `items`, `format` and
    /// `name` replace the running display as a whole, `None` standing for
    /// none, rather than each only when given.
    #[serde(default)]
    pub whole_display: bool,
}

/// One message to a meter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Request {
    /// `-R`: apply these.
    Change(Changes),
    /// `-Q`: say where you are.
    Query,
}

/// A meter's answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Reply {
    /// `None` when done; else what went wrong.
    pub error: Option<String>,
    /// For a query: the meter's line, in its own format.
    pub line: Option<String>,
}

impl Reply {
    /// A request refused, and why.
    fn refused(why: String) -> Reply {
        Reply {
            error: Some(why),
            line: None,
        }
    }
}

/// The directory of the meters' sockets, made (0700) if missing: the
/// first of `$XDG_RUNTIME_DIR/pipespeed-pv` and `/tmp/pipespeed-pv-UID`
/// that is a private directory of this user (a runtime directory
/// inherited from another user, as under `runuser`, is passed over).
pub(crate) fn directory() -> io::Result<PathBuf> {
    let uid = rustix::process::getuid().as_raw();
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(&d).join("pipespeed-pv"));
    let fallback = std::env::temp_dir().join(format!("pipespeed-pv-{uid}"));
    let mut last = None;
    for dir in runtime.into_iter().chain([fallback]) {
        match private_directory(&dir, uid) {
            Ok(()) => return Ok(dir),
            Err(err) => last = Some(err),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::NotFound)))
}

/// Makes `dir` if missing; an error unless it is a directory of `uid`
/// that no one else may enter.
fn private_directory(dir: &Path, uid: u32) -> io::Result<()> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(err),
    }
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a private directory of this user", dir.display()),
        ));
    }
    Ok(())
}

/// The socket of the meter of process `pid`.
pub(crate) fn socket_path(pid: u32) -> io::Result<PathBuf> {
    Ok(directory()?.join(format!("{pid}.sock")))
}

/// What the listener changes and reads.
#[derive(Debug, Clone)]
pub(crate) struct Controls {
    /// The display's settings.
    pub settings: Arc<Mutex<Settings>>,
    /// The transfer's rate limit (0: none).
    pub rate_limit: Arc<AtomicU64>,
    /// The count so far, for queries.
    pub count: Arc<AtomicU64>,
    /// When the meter started.
    pub start: Instant,
    /// Whether the count is lines.
    pub lines: bool,
}

/// A meter's listening socket: removed when dropped, and its thread
/// stopped and joined.
#[derive(Debug)]
pub(crate) struct Listener {
    path: PathBuf,
    /// Removed by a second signal too, which ends pv before `drop`.
    _on_second_signal: Option<crate::sys::process::RemoveOnSecondInterrupt>,
    stop: Arc<AtomicBool>,
    socket: Option<UnixListener>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How long dropping a [`Listener`] waits for its thread (busy with a
/// client, it may take up to that client's 2 s read timeout): past it,
/// the thread is left to end with the process.
const STOP_WAIT: Duration = Duration::from_millis(200);

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = fs::remove_file(&self.path);
        // Wakes the thread's accept(2) (Linux: EINVAL on a listening
        // socket shut down), so that it sees `stop` and returns.
        if let Some(socket) = &self.socket {
            let _ = rustix::net::shutdown(socket, rustix::net::Shutdown::Read);
        }
        let Some(thread) = self.thread.take() else {
            return;
        };
        let start = Instant::now();
        while !thread.is_finished() && start.elapsed() < STOP_WAIT {
            std::thread::sleep(Duration::from_millis(1));
        }
        // Joined: a thread running at exit is memory valgrind calls
        // "possibly lost" (pv's memory-safety tests).
        if thread.is_finished() {
            let _ = thread.join();
        }
    }
}

/// Listens for requests to this process's meter, in a thread of its own
/// that only ever blocks in `accept` (or serving a client), until the
/// [`Listener`] is dropped.
pub(crate) fn listen(controls: Controls) -> io::Result<Listener> {
    let path = socket_path(std::process::id())?;
    // A socket left by a dead process of the same ID, and those of other
    // meters that died without removing theirs (SIGKILL).
    let _ = fs::remove_file(&path);
    if let Some(dir) = path.parent() {
        remove_stale(dir);
    }
    // Registered before it exists: a second signal right after the bind
    // still removes it (the path is this meter's own).
    let on_second_signal = crate::sys::process::remove_on_second_interrupt(&path).ok();
    let listener = UnixListener::bind(&path)?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let socket = listener.try_clone().ok();
    let thread = std::thread::Builder::new()
        .name("pv-remote".into())
        .spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::Relaxed) {
                    return;
                }
                if let Ok(stream) = stream {
                    let _ = serve(stream, &controls);
                }
            }
        })?;
    Ok(Listener {
        _on_second_signal: on_second_signal,
        path,
        stop,
        socket,
        thread: Some(thread),
    })
}

/// Removes from the meters' directory `dir` every socket `PID.sock` whose
/// process no longer exists. A socket whose process ID was taken by
/// another process stays: it is replaced when that process is a meter.
pub(crate) fn remove_stale(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".sock"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if !process_exists(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` exists (a zombie counts: it has not been reaped).
fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Answers one client: only one of this user (or root).
fn serve(stream: UnixStream, controls: &Controls) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    let peer = rustix::net::sockopt::socket_peercred(&stream)?;
    let me = rustix::process::getuid();
    let mut writer = stream.try_clone()?;
    let reply = if peer.uid != me && !peer.uid.is_root() {
        Reply::refused("permission denied: another user's meter".into())
    } else {
        let mut text = String::new();
        BufReader::new(&stream).read_line(&mut text)?;
        match serde_json::from_str::<Request>(&text) {
            Ok(request) => answer(request, controls),
            Err(err) => Reply::refused(format!("bad request: {err}")),
        }
    };
    let mut text = serde_json::to_string(&reply).map_err(io::Error::other)?;
    text.push('\n');
    writer.write_all(text.as_bytes())
}

fn answer(request: Request, controls: &Controls) -> Reply {
    match request {
        Request::Change(changes) => {
            let mut settings = lock(&controls.settings);
            apply(&mut settings, &changes);
            if let Some(rate) = changes.rate_limit {
                controls.rate_limit.store(rate, Ordering::Relaxed);
            }
            Reply::default()
        }
        Request::Query => {
            let settings = lock(&controls.settings).clone();
            let now = controls.start.elapsed().as_secs_f64();
            let count = controls.count.load(Ordering::Relaxed);
            let mut meter = Meter::default();
            let mut snap = meter.snapshot(count, now, true, &settings);
            snap.lines = controls.lines;
            snap.done = false;
            let line = meter.line(&settings.format(), &snap, settings.width.unwrap_or(80));
            Reply {
                line: Some(line.trim_end().to_owned()),
                ..Reply::default()
            }
        }
    }
}

/// Applies `changes` to `settings`.
pub(crate) fn apply(settings: &mut Settings, changes: &Changes) {
    if changes.whole_display {
        settings.items = Items {
            name: changes.name.clone(),
            ..changes.items.clone().unwrap_or_default()
        };
        settings.format = changes.format.clone();
    } else if let Some(items) = &changes.items {
        let name = settings.items.name.take();
        settings.items = Items {
            name,
            ..items.clone()
        };
        settings.format = None;
    }
    if !changes.whole_display {
        if let Some(format) = &changes.format {
            settings.format = Some(format.clone());
        }
        if let Some(name) = &changes.name {
            settings.items.name = Some(name.clone());
        }
    }
    // Held to the range the command line allows: a request is any JSON.
    if let Some(interval) = changes.interval.and_then(interval_of) {
        settings.interval = interval;
    }
    if let Some(size) = changes.size {
        settings.size = Some(size);
    }
}

/// Sends `request` to the meter of process `pid` and returns its reply.
pub(crate) fn send(pid: u32, request: &Request) -> io::Result<Reply> {
    let path = socket_path(pid)?;
    let mut stream = UnixStream::connect(&path).map_err(|err| {
        let alive = process_exists(pid);
        if !alive {
            // A dead meter's socket: gone for the next client.
            let _ = fs::remove_file(&path);
            return io::Error::from_raw_os_error(libc::ESRCH);
        }
        let why = if err.kind() == io::ErrorKind::NotFound {
            "not a meter of this user".to_owned()
        } else {
            crate::quote::strerror(&err)
        };
        io::Error::new(err.kind(), why)
    })?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut text = serde_json::to_string(request).map_err(io::Error::other)?;
    text.push('\n');
    stream.write_all(text.as_bytes())?;
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer)?;
    serde_json::from_str(&answer).map_err(|err| io::Error::other(format!("bad reply: {err}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn sockets_of_dead_processes_are_removed_and_others_kept() {
        let dir = tempfile::tempdir().unwrap();
        // A child that has been waited for is gone; this process is not.
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let dead = dir.path().join(format!("{}.sock", gone.id()));
        let alive = dir.path().join(format!("{}.sock", std::process::id()));
        let other = dir.path().join("notes.txt");
        for path in [&dead, &alive, &other] {
            fs::write(path, "").unwrap();
        }
        remove_stale(dir.path());
        assert!(!dead.exists());
        assert!(alive.exists() && other.exists());
    }

    #[test]
    fn requests_go_through_json_and_back() {
        let change = Request::Change(Changes {
            items: Some(Items {
                rate: true,
                ..Items::default()
            }),
            name: Some("n".into()),
            interval: Some(0.5),
            size: Some(10),
            rate_limit: Some(0),
            format: None,
            whole_display: true,
        });
        for request in [change, Request::Query] {
            let text = serde_json::to_string(&request).unwrap();
            assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), request);
        }
    }

    #[test]
    fn new_items_replace_the_display_and_keep_the_name() {
        let mut settings = Settings {
            format: Some("%b".into()),
            ..Settings::default()
        };
        settings.items.name = Some("before".into());
        apply(
            &mut settings,
            &Changes {
                items: Some(Items {
                    eta: true,
                    ..Items::default()
                }),
                size: Some(5),
                interval: Some(-1.0),
                ..Changes::default()
            },
        );
        assert_eq!(settings.format, None);
        assert!(settings.items.eta && !settings.items.progress);
        assert_eq!(settings.items.name.as_deref(), Some("before"));
        assert_eq!(settings.size, Some(5));
        assert_eq!(settings.interval, Duration::from_secs(1));
    }

    #[test]
    fn a_requested_interval_is_held_to_the_command_lines_range() {
        let mut settings = Settings::default();
        for (asked, got) in [(1e-9, 0.1), (0.0, 0.1), (1e300, 1_000_000.0), (2.5, 2.5)] {
            let changes = Changes {
                interval: Some(asked),
                ..Changes::default()
            };
            apply(&mut settings, &changes);
            assert_eq!(settings.interval.as_secs_f64(), got, "{asked}");
        }
        for bad in [f64::NAN, -1.0, f64::NEG_INFINITY] {
            let changes = Changes {
                interval: Some(bad),
                ..Changes::default()
            };
            apply(&mut settings, &changes);
            assert_eq!(settings.interval.as_secs_f64(), 2.5, "{bad}");
        }
    }
}
