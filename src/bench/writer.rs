//! The writing end: the blog's `write` program as a function.

use std::fmt;
use std::io;
use std::os::fd::AsFd;

use serde::{Deserialize, Serialize};

use crate::buf::{Buffer, BufferOptions, HugePages};
use crate::double_buffer::{DoubleBuffer, Layout, Reuse};
use crate::sys::{FdKind, fcntl_setpipe_size};
use crate::units::Size;
use crate::verify::fill_pattern;
use crate::wait::{Direction, Wait, is_retryable, wait_ready};

/// How the writer puts its buffer into the pipe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteMethod {
    /// `write(2)`: the kernel copies the buffer into pipe pages.
    #[default]
    Write,
    /// `vmsplice(2)` of two alternating halves into a pipe sized to one
    /// half ([`DoubleBuffer`]): the pipe references the writer's pages.
    Vmsplice,
}

/// What the writer and the reader are both told (the blog's two programs
/// share one option parser), embedded in [`WriterConfig`] and
/// [`ReaderConfig`](super::reader::ReaderConfig).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndConfig {
    /// Buffer size: the writer's, written whole by `write` or split into
    /// two halves for `vmsplice`; the bytes the reader asks for per call.
    pub buf_size: usize,
    /// Pipe size to set from this end (the writer's `write` only:
    /// vmsplice sizes the pipe to a half).
    pub pipe_size: Option<usize>,
    /// How the buffer is allocated (the reader's: `read` only).
    pub buffer: BufferOptions,
    /// Fail unless the buffer really is on huge pages.
    pub check_huge_pages: bool,
    /// How to wait for room (the writer) or data (the reader).
    pub wait: Wait,
    /// `SPLICE_F_GIFT` on the writer's vmsplice, `SPLICE_F_MOVE` on the
    /// reader's splice (the blog pairs them).
    pub gift: bool,
    /// The checkable stream of `crate::verify`: the writer sends it
    /// instead of `X`s, the reader checks every byte against it.
    pub verify: bool,
}

impl Default for EndConfig {
    fn default() -> EndConfig {
        EndConfig {
            buf_size: 256 * 1024,
            pipe_size: None,
            buffer: BufferOptions::default(),
            check_huge_pages: false,
            wait: Wait::Block,
            gift: false,
            verify: false,
        }
    }
}

/// Everything the writer can be told.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriterConfig {
    /// How bytes go into the pipe.
    pub method: WriteMethod,
    /// What the reader is told too.
    #[serde(flatten)]
    pub end: EndConfig,
    /// Where the two halves live.
    pub layout: Layout,
    /// Size the pipe to this instead of one half, breaking the double
    /// buffer discipline on purpose (with `--verify`, shows the hazard).
    /// Refused with `gift`.
    pub unsafe_early_reuse: Option<usize>,
    /// Stop after this many bytes (`None`: the blog's writer never stops).
    pub bytes: Option<u64>,
}

/// What an endless writer (no [`WriterConfig::bytes`]) would do to an
/// output of this kind, as `(what it is, what the stream would do)`;
/// `None` for those made to be streamed to: a pipe or FIFO, a socket, a
/// character device other than a terminal.
pub fn endless_hazard(kind: FdKind) -> Option<(&'static str, &'static str)> {
    match kind {
        FdKind::Pipe | FdKind::Socket | FdKind::CharDevice => None,
        FdKind::Regular => Some(("a regular file", "would fill the disk")),
        FdKind::Tty => Some(("a terminal", "would print without end")),
        FdKind::BlockDevice => Some(("a block device", "would overwrite it to its end")),
        FdKind::Directory | FdKind::Other => Some((
            "neither a pipe, a socket nor a character device",
            "only those take an endless stream",
        )),
    }
}

/// A ladder rung's writer, as a worker process.
impl crate::bench::core::RoleSpec for WriterConfig {
    const ROLE: &'static str = "writer";
}

/// The settings in words, as `--verbose` prints them: `vmsplice, buffer
/// 256KiB (2 halves of 128KiB in separate mappings, at offset 0, huge
/// pages), pipe 128KiB (one half), busy loop, until the reader goes away`.
impl fmt::Display for WriterConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let end = &self.end;
        let size = Size(end.buf_size as u64);
        let half = Size((end.buf_size / 2) as u64);
        let buffer = buffer_words(&end.buffer, end.check_huge_pages);
        match self.method {
            WriteMethod::Write => {
                write!(f, "write(2), buffer {size} ({buffer})")?;
                match end.pipe_size {
                    Some(pipe) => write!(f, ", pipe {}", Size(pipe as u64))?,
                    None => write!(f, ", pipe as the kernel made it")?,
                }
            }
            WriteMethod::Vmsplice => {
                let gift = if end.gift { " with SPLICE_F_GIFT" } else { "" };
                let layout = match self.layout {
                    Layout::Separate => "in separate mappings",
                    Layout::Contiguous => "in one mapping",
                };
                write!(
                    f,
                    "vmsplice{gift}, buffer {size} (2 halves of {half} {layout}, {buffer})"
                )?;
                match self.unsafe_early_reuse {
                    Some(pipe) => write!(
                        f,
                        ", pipe {} (UNSAFE: halves refilled while the pipe holds them)",
                        Size(pipe as u64)
                    )?,
                    None => write!(f, ", pipe {half} (one half)")?,
                }
            }
        }
        if end.verify {
            write!(f, ", a checkable stream")?;
        }
        write!(f, ", {}", wait_words(end.wait))?;
        match self.bytes {
            Some(bytes) => write!(f, ", stop after {}", Size(bytes)),
            None => write!(f, ", until the reader goes away"),
        }
    }
}

/// Where a buffer starts and how it is held, in words: `at offset 16`,
/// `at offset 0, huge pages (checked), locked`.
pub(crate) fn buffer_words(buffer: &BufferOptions, check_huge_pages: bool) -> String {
    let mut words = format!("at offset {}", buffer.offset);
    if buffer.huge_pages {
        words.push_str(", huge pages");
    }
    if check_huge_pages {
        words.push_str(" (checked)");
    }
    if buffer.lock {
        words.push_str(", locked");
    }
    if buffer.dont_touch {
        words.push_str(", pages not touched before");
    }
    words
}

/// How an end waits, in words.
pub(crate) fn wait_words(wait: Wait) -> &'static str {
    match wait {
        Wait::Block => "blocking",
        Wait::Poll => "poll(2) before every call",
        Wait::Busy => "busy loop",
        Wait::BusyPoll => "busy loop with poll(2)",
    }
}

/// Why the writer stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriterEnd {
    /// The reader closed the pipe (the normal end of the blog's writer).
    ReaderGone {
        /// Bytes the kernel accepted.
        sent: u64,
    },
    /// `bytes` were sent.
    Done {
        /// Bytes the kernel accepted.
        sent: u64,
    },
}

/// Pushes the buffer into `out` until the reader goes away or
/// `config.bytes` are sent. [`io::ErrorKind::Unsupported`]: this machine
/// cannot do what was asked; `gift` with `unsafe_early_reuse` is refused
/// before anything is done ([`Reuse::allows_gift`]).
pub fn run_writer(out: impl AsFd, config: &WriterConfig) -> io::Result<WriterEnd> {
    let out = out.as_fd();
    if config.method == WriteMethod::Vmsplice {
        config.reuse().allows_gift(config.end.gift)?;
    }
    config.end.wait.prepare(out)?;
    let limit = config.bytes.unwrap_or(u64::MAX);
    let result = match config.method {
        WriteMethod::Write => write_loop(out, &config.end, limit),
        WriteMethod::Vmsplice => vmsplice_loop(out, config, limit),
    };
    match result {
        Ok(sent) => Ok(WriterEnd::Done { sent }),
        Err((sent, err)) if err.kind() == io::ErrorKind::BrokenPipe => {
            Ok(WriterEnd::ReaderGone { sent })
        }
        Err((_, err)) => Err(err),
    }
}

type Sent<T> = Result<T, (u64, io::Error)>;

fn write_loop(out: std::os::fd::BorrowedFd<'_>, end: &EndConfig, limit: u64) -> Sent<u64> {
    if let Some(size) = end.pipe_size {
        fcntl_setpipe_size(out, size).map_err(|e| (0, e))?;
    }
    let mut buf = Buffer::new(end.buf_size, end.buffer).map_err(|e| (0, e))?;
    if end.check_huge_pages {
        check_huge_pages(&[&buf]).map_err(|e| (0, e))?;
    }
    let mut sent = 0u64;
    while sent < limit {
        let len = (limit - sent).min(buf.len() as u64) as usize;
        if end.verify {
            fill_pattern(&mut buf[..len], sent);
        }
        let mut done = 0;
        while done < len {
            end.wait
                .before_call(out, Direction::Out)
                .map_err(|e| (sent, e))?;
            match rustix::io::write(out, &buf[done..len]) {
                Ok(n) => {
                    done += n;
                    sent += n as u64;
                }
                Err(errno) => {
                    let err = io::Error::from(errno);
                    if !is_retryable(&err) {
                        return Err((sent, err));
                    }
                    if !end.wait.is_busy() && err.kind() == io::ErrorKind::WouldBlock {
                        wait_ready(out, Direction::Out).map_err(|e| (sent, e))?;
                    }
                }
            }
        }
    }
    Ok(sent)
}

impl WriterConfig {
    /// How vmsplice may reuse a half.
    fn reuse(&self) -> Reuse {
        match self.unsafe_early_reuse {
            Some(pipe_size) => Reuse::Early { pipe_size },
            None => Reuse::AfterConsumed,
        }
    }
}

fn vmsplice_loop(out: std::os::fd::BorrowedFd<'_>, config: &WriterConfig, limit: u64) -> Sent<u64> {
    let end = &config.end;
    let half = end.buf_size / 2;
    let reuse = config.reuse();
    let mut db = DoubleBuffer::new(out, half, end.buffer, config.layout, reuse, end.gift)
        .map_err(|e| (0, e))?;
    if end.check_huge_pages {
        check_huge_pages(&db.buffers()).map_err(|e| (0, e))?;
    }
    let mut sent = 0u64;
    while sent < limit {
        let len = (limit - sent).min(half as u64) as usize;
        if end.verify {
            fill_pattern(&mut db.next_half()[..len], sent);
        }
        db.splice_next(len, end.wait)
            .map_err(|e| (sent, vmsplice_refusal(e)))?;
        sent += len as u64;
    }
    Ok(sent)
}

/// A sandbox that forbids vmsplice answers ENOSYS or EPERM: the machine
/// cannot do this rung, which is not a failure of the program.
pub(crate) fn vmsplice_refusal(err: io::Error) -> io::Error {
    use rustix::io::Errno;
    match Errno::from_io_error(&err) {
        Some(Errno::NOSYS | Errno::PERM) => io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "vmsplice refused by the kernel: {}",
                crate::quote::strerror(&err)
            ),
        ),
        _ => err,
    }
}

/// Fails with [`io::ErrorKind::Unsupported`] unless every buffer is
/// entirely on huge pages.
pub fn check_huge_pages(buffers: &[&Buffer]) -> io::Result<Vec<HugePages>> {
    let mut found = Vec::new();
    for buf in buffers {
        let got = buf.huge_pages()?;
        if !got.all_huge() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "huge pages not obtained: {} of {} on huge pages (transparent huge pages: {})",
                    Size(got.huge_bytes),
                    Size(got.mapped_bytes),
                    crate::sys::ThpMode::current()
                ),
            ));
        }
        found.push(got);
    }
    Ok(found)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sys::pipe;

    /// Gifted pages must not be refilled while the pipe holds them.
    #[test]
    fn gift_with_early_reuse_is_refused_before_anything_is_sent() {
        let p = pipe().unwrap();
        let config = WriterConfig {
            method: WriteMethod::Vmsplice,
            end: EndConfig {
                buf_size: 64 * 1024,
                gift: true,
                ..EndConfig::default()
            },
            unsafe_early_reuse: Some(256 * 1024),
            bytes: Some(64 * 1024),
            ..WriterConfig::default()
        };
        let err = run_writer(&p.write, &config).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("SPLICE_F_GIFT") && msg.contains("early reuse"),
            "{msg}"
        );
        crate::sys::set_nonblocking(&p.read, true).unwrap();
        let mut buf = [0u8; 1];
        assert_eq!(
            rustix::io::read(&p.read, &mut buf),
            Err(rustix::io::Errno::AGAIN),
            "something was spliced"
        );
    }
}
