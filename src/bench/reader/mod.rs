//! The reading end: the blog's `read` program as a function.

mod report;

pub use report::ReadRun;

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Instant;

use rustix::fs::{MemfdFlags, Mode, OFlags, memfd_create};
use serde::{Deserialize, Serialize};

use crate::buf::Buffer;
use crate::sys::{FdKind, SpliceFlags, fcntl_setpipe_size, fd_info, splice};
use crate::units::{Size, gib_per_s};
use crate::verify::{Mismatch, Verifier};
use crate::wait::{Direction, is_retryable, wait_ready};

use super::writer::{EndConfig, buffer_words, check_huge_pages, wait_words};

/// How the reader takes bytes out of the pipe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadMethod {
    /// `read(2)` into a buffer: the kernel copies.
    #[default]
    Read,
    /// `splice(2)` to `/dev/null`: the pages are released, nothing is
    /// copied. With `--verify`, the splice goes into a memory file instead,
    /// so the bytes can be checked.
    Splice,
}

/// Everything the reader can be told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReaderConfig {
    /// How bytes leave the pipe.
    pub method: ReadMethod,
    /// What the writer is told too.
    #[serde(flatten)]
    pub end: EndConfig,
    /// Bytes to consume before stopping.
    pub bytes: u64,
}

/// A ladder rung's reader, as a worker process.
impl crate::bench::core::RoleSpec for ReaderConfig {
    const ROLE: &'static str = "reader";
}

impl Default for ReaderConfig {
    fn default() -> ReaderConfig {
        ReaderConfig {
            method: ReadMethod::Read,
            end: EndConfig::default(),
            bytes: 10 << 30,
        }
    }
}

/// The settings in words, as `--verbose` prints them: `splice to
/// /dev/null, 256KiB a call, pipe 128KiB, busy loop, stop after 10GiB`.
impl std::fmt::Display for ReaderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let end = &self.end;
        let size = Size(end.buf_size as u64);
        match (self.method, end.verify) {
            (ReadMethod::Read, _) => write!(
                f,
                "read(2), buffer {size} ({})",
                buffer_words(&end.buffer, end.check_huge_pages)
            )?,
            (ReadMethod::Splice, verify) => {
                let to = if verify { "a memory file" } else { "/dev/null" };
                let flag = if end.gift { " with SPLICE_F_MOVE" } else { "" };
                write!(f, "splice to {to}{flag}, {size} a call")?;
            }
        }
        if end.verify {
            write!(f, ", every byte checked")?;
        }
        match end.pipe_size {
            Some(pipe) => write!(f, ", pipe {}", Size(pipe as u64))?,
            None => write!(f, ", pipe as it came")?,
        }
        write!(
            f,
            ", {}, stop after {}",
            wait_words(end.wait),
            Size(self.bytes)
        )
    }
}

/// What the reader's input is: its figure measures a pipe only when it
/// is one (`read < /dev/zero` measures the kernel clearing pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Input {
    /// A pipe or a FIFO: what the figure is meant to measure.
    Pipe,
    /// A regular file.
    File,
    /// A socket.
    Socket,
    /// A terminal.
    Terminal,
    /// A character device that is not a terminal (`/dev/zero`).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A directory, or a file of another kind.
    Other,
}

impl Input {
    /// What `input` is, from `fstat(2)`.
    pub fn of(input: impl AsFd) -> io::Result<Input> {
        Ok(match fd_info(input)?.kind {
            FdKind::Pipe => Input::Pipe,
            FdKind::Regular => Input::File,
            FdKind::Socket => Input::Socket,
            FdKind::Tty => Input::Terminal,
            FdKind::CharDevice => Input::CharDevice,
            FdKind::BlockDevice => Input::BlockDevice,
            FdKind::Directory | FdKind::Other => Input::Other,
        })
    }

    /// Its name in the JSON and the CSV: `pipe`, `file`, `char-device`.
    pub fn name(self) -> &'static str {
        self.words().0
    }

    /// Its name with an article, for a sentence: `a regular file`.
    pub fn described(self) -> &'static str {
        self.words().1
    }

    fn words(self) -> (&'static str, &'static str) {
        match self {
            Input::Pipe => ("pipe", "a pipe"),
            Input::File => ("file", "a regular file"),
            Input::Socket => ("socket", "a socket"),
            Input::Terminal => ("terminal", "a terminal"),
            Input::CharDevice => ("char-device", "a character device"),
            Input::BlockDevice => ("block-device", "a block device"),
            Input::Other => ("other", "neither a file nor a device"),
        }
    }
}

/// What the reader measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadReport {
    /// What the input was: the rate is a pipe's only for
    /// [`Input::Pipe`].
    pub input: Input,
    /// Bytes received in all.
    pub bytes: u64,
    /// Bytes received after the first transfer, the ones the rate is
    /// computed from.
    pub timed_bytes: u64,
    /// Seconds from the end of the first transfer to the end of the last.
    pub seconds: f64,
    /// `timed_bytes / seconds` in GiB/s.
    pub gib_s: f64,
    /// Whether the input ended before `bytes` were received.
    pub eof: bool,
    /// Transfers (system calls that moved data).
    pub transfers: u64,
    /// With `--verify`: the first damaged byte, if any.
    pub mismatch: Option<Mismatch>,
}

/// Consumes `config.bytes` from `input` (or until end of input) and
/// measures the rate from the first transfer to the last.
pub fn run_reader(input: impl AsFd, config: &ReaderConfig) -> io::Result<ReadReport> {
    let end = &config.end;
    let input = input.as_fd();
    let kind = Input::of(input)?;
    if let Some(size) = end.pipe_size {
        fcntl_setpipe_size(input, size)?;
    }
    end.wait.prepare(input)?;
    let mut sink = match config.method {
        ReadMethod::Read => {
            let buf = Buffer::new(end.buf_size, end.buffer)?;
            if end.check_huge_pages {
                check_huge_pages(&[&buf])?;
            }
            Sink::Memory(buf)
        }
        ReadMethod::Splice if end.verify => {
            let file = memfd_create("pipespeed-verify", MemfdFlags::CLOEXEC)?;
            // Reserved, not `vec!`: a size the heap cannot give is an
            // error, not an abort.
            let mut scratch = Vec::new();
            scratch.try_reserve_exact(end.buf_size).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    format!("cannot allocate a buffer of {} bytes", end.buf_size),
                )
            })?;
            scratch.resize(end.buf_size, 0);
            Sink::CheckedFile(file, scratch)
        }
        ReadMethod::Splice => {
            let null =
                rustix::fs::open("/dev/null", OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
            Sink::Null(null)
        }
    };
    let mut verifier = end.verify.then(Verifier::new);
    let mut report = ReadReport {
        input: kind,
        bytes: 0,
        timed_bytes: 0,
        seconds: 0.0,
        gib_s: 0.0,
        eof: false,
        transfers: 0,
        mismatch: None,
    };
    let mut clock = ReceiveClock::default();
    while report.bytes < config.bytes {
        let want = (config.bytes - report.bytes).min(end.buf_size as u64) as usize;
        end.wait.before_call(input, Direction::In)?;
        let n = match sink.take(input, want, end) {
            Ok(n) => n,
            Err(err) if is_retryable(&err) => {
                if !end.wait.is_busy() && err.kind() == io::ErrorKind::WouldBlock {
                    wait_ready(input, Direction::In)?;
                }
                continue;
            }
            Err(err) => return Err(err),
        };
        clock.tick();
        if n == 0 {
            report.eof = true;
            break;
        }
        if let Some(v) = verifier.as_mut()
            && let Err(m) = sink.check(v, n)?
        {
            report.mismatch = Some(m);
            report.bytes += n as u64;
            break;
        }
        report.bytes += n as u64;
        report.transfers += 1;
        clock.count(n);
    }
    (report.timed_bytes, report.seconds, report.gib_s) = clock.figures();
    Ok(report)
}

/// The clock of a stream's receiving end (the reader's, ipc's receiver):
/// it starts at the first receive, whose bytes are not timed (they may
/// have waited in the pipe for the clock to start), and runs to the last
/// tick.
#[derive(Default)]
pub(crate) struct ReceiveClock {
    first: Option<Instant>,
    last: Option<Instant>,
    timed_bytes: u64,
}

impl ReceiveClock {
    /// A receive returned now (data, or the end of the stream).
    pub(crate) fn tick(&mut self) {
        self.last = Some(Instant::now());
    }

    /// The `n` bytes of the receive last ticked.
    pub(crate) fn count(&mut self, n: usize) {
        match self.first {
            None => self.first = self.last,
            Some(_) => self.timed_bytes += n as u64,
        }
    }

    /// The bytes timed, the seconds from the first receive to the last
    /// tick and their GiB/s; zeros before a first receive.
    pub(crate) fn figures(&self) -> (u64, f64, f64) {
        match (self.first, self.last) {
            (Some(first), Some(last)) => {
                let seconds = last.duration_since(first).as_secs_f64();
                (
                    self.timed_bytes,
                    seconds,
                    gib_per_s(self.timed_bytes, seconds),
                )
            }
            _ => (0, 0.0, 0.0),
        }
    }
}

/// Where the reader puts what it takes out of the pipe.
enum Sink {
    Memory(Buffer),
    Null(OwnedFd),
    CheckedFile(OwnedFd, Vec<u8>),
}

impl Sink {
    fn take(&mut self, input: BorrowedFd<'_>, want: usize, end: &EndConfig) -> io::Result<usize> {
        let flags = end.wait.splice_flags()
            | if end.gift {
                SpliceFlags::MOVE
            } else {
                SpliceFlags::empty()
            };
        match self {
            Sink::Memory(buf) => Ok(rustix::io::read(input, &mut buf[..want])?),
            Sink::Null(null) => splice(input, None, null, None, want, flags),
            Sink::CheckedFile(file, _) => {
                let mut offset = 0;
                splice(input, None, file, Some(&mut offset), want, flags)
            }
        }
    }

    /// Checks the `n` bytes just taken.
    fn check(&mut self, verifier: &mut Verifier, n: usize) -> io::Result<Result<(), Mismatch>> {
        match self {
            Sink::Memory(buf) => Ok(verifier.check(&buf[..n])),
            Sink::Null(_) => Ok(Ok(())),
            Sink::CheckedFile(file, scratch) => {
                let mut got = 0;
                while got < n {
                    match rustix::io::pread(&*file, &mut scratch[got..n], got as u64)? {
                        0 => {
                            return Err(io::Error::other(
                                "verify file shorter than what was spliced into it",
                            ));
                        }
                        k => got += k,
                    }
                }
                Ok(verifier.check(&scratch[..n]))
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_the_machine_cannot_hold_is_an_error_for_every_method() {
        for (method, verify) in [
            (ReadMethod::Read, false),
            (ReadMethod::Read, true),
            (ReadMethod::Splice, true),
        ] {
            let pipe = crate::sys::pipe().unwrap();
            let config = ReaderConfig {
                method,
                end: EndConfig {
                    verify,
                    buf_size: usize::MAX / 2,
                    ..EndConfig::default()
                },
                bytes: 1,
            };
            let err = run_reader(&pipe.read, &config).unwrap_err();
            assert!(err.to_string().contains("cannot"), "{method:?}: {err}");
        }
    }
}
