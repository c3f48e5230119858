//! One output of a fan-out: how its bytes reach it ([`Route`]), its own
//! pipe, and the calls that fill and empty it.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::io::Errno;

use crate::copy::{RecordWriter, write_all_or_records};
use crate::sys::socket::keeps_records;
use crate::sys::{FdKind, PipePair, SpliceFlags, fcntl_getpipe_size, fd_info, splice, tee};
use crate::wait::{Direction, wait_ready, write_all};

/// Bytes copied at a time from an output's own pipe once it refuses
/// splice.
const SCRATCH: usize = 128 * 1024;

/// How an output gets its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// A pipe: `tee(2)` or `splice(2)` straight into it.
    Pipe,
    /// Anything else that takes `splice(2)`: from the input pipe when it
    /// moves the round, else through a pipe of its own.
    Splice,
    /// `write(2)` only.
    Write,
    /// Nothing: `/dev/null`, beside outputs that take the bytes. The
    /// kernel drops what is written to it, so a round is not copied for
    /// it (`tee F /dev/null` spliced and dropped every round).
    Discard,
}

/// An output and what it holds.
pub(super) struct Out<'a> {
    pub fd: BorrowedFd<'a>,
    pub route: Route,
    /// Whether it is a pipe (watched for its reader going).
    pub is_pipe: bool,
    /// Whether it is `/dev/null` (character device 1, 3).
    pub is_null: bool,
    /// Still written to.
    pub alive: bool,
    /// Its own pipe, made on first need.
    pub mid: Option<PipePair>,
    /// What its own pipe holds, in bytes; its capacity.
    pub pending: usize,
    pub mid_size: usize,
    /// What its own pipe is copied through, once it refuses splice.
    scratch: Vec<u8>,
    /// For a socket that keeps records: writes in records it takes.
    records: Option<RecordWriter>,
}

impl<'a> Out<'a> {
    /// The output `fd`, routed by what it is.
    pub(super) fn new(fd: BorrowedFd<'a>, splice_ok: bool) -> Out<'a> {
        let info = fd_info(fd);
        let records = keeps_records(fd).then(RecordWriter::default);
        let is_pipe = info.as_ref().is_ok_and(|info| info.kind == FdKind::Pipe);
        let route = match info {
            _ if !splice_ok => Route::Write,
            Ok(info) => match info.kind {
                FdKind::Pipe => Route::Pipe,
                FdKind::Socket if records.is_some() => Route::Write,
                FdKind::Regular | FdKind::Socket | FdKind::CharDevice | FdKind::BlockDevice => {
                    Route::Splice
                }
                _ => Route::Write,
            },
            // A descriptor that cannot be examined fails at its first
            // write, with the error that call gives.
            Err(_) => Route::Write,
        };
        Out {
            fd,
            route,
            is_pipe,
            is_null: is_dev_null(fd),
            alive: true,
            mid: None,
            pending: 0,
            mid_size: 0,
            scratch: Vec::new(),
            records,
        }
    }

    /// Its own pipe, made (and enlarged to `goal` bytes, at most `max`)
    /// on first need.
    pub(super) fn mid(&mut self, goal: u64, max: usize) -> io::Result<&PipePair> {
        let pair = match self.mid.take() {
            Some(pair) => pair,
            None => {
                let pair = crate::sys::pipe()?;
                crate::copy::grow_pipe(pair.write.as_fd(), goal, max);
                self.mid_size = fcntl_getpipe_size(&pair.write)?;
                pair
            }
        };
        Ok(self.mid.insert(pair))
    }

    /// Writes all of `buf` into it (in records it takes, for a socket
    /// that keeps them).
    pub(super) fn write(&mut self, buf: &[u8]) -> io::Result<()> {
        write_all_or_records(&mut self.records, self.fd, buf, |_| {})
    }

    /// Forgets what it holds (it failed).
    pub(super) fn close(&mut self) {
        self.alive = false;
        self.mid = None;
        self.pending = 0;
    }

    /// Writes all its own pipe holds into it: by `splice(2)`, or, once
    /// that is refused, by `read(2)` into memory and `write(2)`.
    pub(super) fn drain(&mut self) -> io::Result<()> {
        let Some(mut job) = self.take_drain() else {
            return Ok(());
        };
        let result = job.run();
        self.put_back(job);
        result
    }

    /// What emptying its own pipe needs, taken out of it (for a worker
    /// thread to own during a round): `None` when it holds nothing.
    pub(super) fn take_drain(&mut self) -> Option<Drain<'a>> {
        if self.pending == 0 {
            return None;
        }
        let mid = self.mid.take()?;
        Some(Drain {
            fd: self.fd,
            mid,
            pending: self.pending,
            route: self.route,
            scratch: std::mem::take(&mut self.scratch),
        })
    }

    /// Takes back what [`Out::take_drain`] took, as the drain left it.
    pub(super) fn put_back(&mut self, job: Drain<'a>) {
        self.mid = Some(job.mid);
        self.pending = job.pending;
        self.route = job.route;
        self.scratch = job.scratch;
    }
}

/// An output's own pipe to empty into it, and what that changes: what
/// the pipe still holds, and the route (once splice is refused, writes).
pub(super) struct Drain<'a> {
    fd: BorrowedFd<'a>,
    mid: PipePair,
    pending: usize,
    route: Route,
    /// What the pipe is copied through, once the output refuses splice.
    scratch: Vec<u8>,
}

impl Drain<'_> {
    /// Writes all the pipe holds into the output: by `splice(2)`, or,
    /// once that is refused, by `read(2)` into memory and `write(2)`.
    pub(super) fn run(&mut self) -> io::Result<()> {
        while self.pending > 0 {
            if self.route == Route::Write {
                let buf = &mut self.scratch;
                if buf.is_empty() {
                    buf.resize(SCRATCH, 0);
                }
                let len = self.pending.min(buf.len());
                let n = read_exact(self.mid.read.as_fd(), &mut buf[..len])?;
                write_all(self.fd, &buf[..n], |_| {})?;
                self.pending -= n;
                continue;
            }
            match splice_once(self.mid.read.as_fd(), self.fd, self.pending) {
                Ok(n) => self.pending -= n,
                Err(err) if refuses_splice(&err) => self.route = Route::Write,
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }
}

/// Whether `fd` is `/dev/null`: the character device 1, 3 (devices(7)).
fn is_dev_null(fd: BorrowedFd<'_>) -> bool {
    use rustix::fs::{FileType, fstat, major, minor};
    fstat(fd).is_ok_and(|st| {
        FileType::from_raw_mode(st.st_mode) == FileType::CharacterDevice
            && (major(st.st_rdev), minor(st.st_rdev)) == (1, 3)
    })
}

/// Whether `err` from a splice into an output means "not this way"
/// rather than a failure of the output: a terminal, `/dev/full`, a file
/// opened with `O_APPEND` refuse with `EINVAL`.
pub(super) fn refuses_splice(err: &io::Error) -> bool {
    [Errno::INVAL, Errno::NOSYS, Errno::OPNOTSUPP]
        .iter()
        .any(|e| err.raw_os_error() == Some(e.raw_os_error()))
}

/// One `splice(2)` of up to `len` bytes from the pipe `from` to `to`,
/// retried on `EINTR`, waiting on `EAGAIN` (a non-blocking output). A 0
/// with bytes asked for cannot come from a pipe we know holds them: it
/// is an error (`WriteZero`).
pub(super) fn splice_once(
    from: BorrowedFd<'_>,
    to: BorrowedFd<'_>,
    len: usize,
) -> io::Result<usize> {
    loop {
        match splice(from, None, to, None, len, SpliceFlags::empty()) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => return Ok(n),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => wait_ready(to, Direction::Out)?,
            Err(err) => return Err(err),
        }
    }
}

/// `tee(2)` of up to `len` bytes from the pipe `from` into the pipe `to`,
/// retried on `EINTR`; on `EAGAIN` (a non-blocking end: the input empty,
/// or the output full) it waits for both to be ready.
pub(super) fn tee_once(from: BorrowedFd<'_>, to: BorrowedFd<'_>, len: usize) -> io::Result<usize> {
    loop {
        match tee(from, to, len, SpliceFlags::empty()) {
            Ok(n) => return Ok(n),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                wait_ready(from, Direction::In)?;
                wait_ready(to, Direction::Out)?;
            }
            Err(err) => return Err(err),
        }
    }
}

/// Reads exactly `buf.len()` bytes from a pipe known to hold them.
pub(super) fn read_exact(from: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match crate::wait::read(from, &mut buf[done..])? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => done += n,
        }
    }
    Ok(done)
}

/// Splices all of `n` bytes from the pipe `from` (known to hold them)
/// into `to`; on a failure, the error and the bytes left.
pub(super) fn splice_all(
    from: BorrowedFd<'_>,
    to: BorrowedFd<'_>,
    n: usize,
) -> Result<(), (io::Error, usize)> {
    let mut left = n;
    while left > 0 {
        match splice_once(from, to, left) {
            Ok(k) => left -= k,
            Err(err) => return Err((err, left)),
        }
    }
    Ok(())
}
