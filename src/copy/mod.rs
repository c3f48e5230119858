//! The copy engine: move every byte from one descriptor to another by the
//! fastest mechanism the kernel accepts for that pair, falling back without
//! losing, duplicating or reordering a byte.
//!
//! [`copy`] classifies both ends ([`FdKind`]) and chooses in one place
//! (`choose`):
//!
//! | source -> destination | mechanism |
//! | --- | --- |
//! | regular file -> regular file on a filesystem that may copy by itself ([`crate::sys::copies_itself`]) | [`Mechanism::CopyFileRange`] (keeps reflinks and server-side copy), then [`Mechanism::Sendfile`] on `EXDEV` |
//! | regular file -> regular file on ext2/3/4 or tmpfs | [`Mechanism::SplicePipe`], the intermediate pipe at most 512 KiB (`FILE_PIPE`): the kernel's copy_file_range would splice through a pipe of 64 KiB |
//! | pipe -> pipe | [`Mechanism::Splice`], then, once the input has shown it is large ([`SHOWN_LARGE`]), [`Mechanism::SplicePipe`] |
//! | any other pair of files, pipes, sockets and devices | [`Mechanism::SplicePipe`]: splice through an intermediate pipe, made once and reused |
//! | a terminal at either end, a regular file with 32 KiB or less left from its position (unless the destination has taken [`SHOWN_LARGE`] bytes from this copier's copies before: then as a large one), or one whose size says 0 (procfs) | [`Mechanism::ReadWrite`] |
//! | a socket that keeps record boundaries (`SOCK_SEQPACKET`, `SOCK_DGRAM`) at either end, whatever [`CopyOptions::force`] says | [`Mechanism::ReadWrite`], a whole record at a time (`recv_record`, `RecordWriter`) |
//!
//! A file goes to a pipe through the intermediate pipe because splice
//! holds the destination pipe's lock while it reads the file's pages;
//! through a private pipe the reader downstream does not wait
//! (docs/cat.md has the measurement).
//!
//! # Pipe sizes
//!
//! Pipes are enlarged only as far as the data needs, since every pipe
//! page counts against the user's budget
//! (`/proc/sys/fs/pipe-user-pages-soft`; docs/cat.md, "The user's pipe
//! budget"): a regular file's at once to hold what remains of it (under
//! [`CopyOptions::limit`], at most `/proc/sys/fs/pipe-max-size`), any
//! other source's only once [`SHOWN_LARGE`] bytes have moved (see
//! `pipes.rs`). A refusal to enlarge only costs speed and is ignored.
//! Pipes are never shrunk.
//!
//! # Falling back
//!
//! A mechanism the kernel refuses on its first call (`EINVAL`, `ENOSYS`,
//! `EXDEV`, `EOPNOTSUPP`, `EBADF` as on an `O_APPEND` target, `EPERM`, or a
//! 0 from `copy_file_range` before any byte moved) is dropped silently for
//! the next one. A later error ends the copy with a [`CopyError`] saying
//! whether the input or the output failed:
//!
//! - an error of the output (a splice out of the intermediate pipe, or an
//!   error only an output gives: `EPIPE`, `ENOSPC`, `EDQUOT`, `EFBIG`,
//!   `EROFS`) ends it at once;
//! - so does any error after the mechanism has moved bytes (as in GNU cat:
//!   `cat: /dev/zero: Input/output error`), charged to the side the call
//!   touched, or the input when one call reads and writes;
//! - an error on the mechanism's first call hands over to read/write,
//!   which continues from exactly where the faster mechanism stopped (the
//!   file positions were advanced by what it moved, and whatever sits in
//!   the intermediate pipe is written first). If read/write meets the
//!   error again, it knows the side; if it finds the input at its end at
//!   once, the first error is reported, against the input; if it goes on
//!   reading, the error passed and the copy completes.
//!
//! A refusal after progress (splice into a terminal gives `EINVAL` after
//! some calls) still hands over to read/write.
//!
//! `EINTR` is always retried; `EAGAIN` on a non-blocking descriptor waits
//! with `poll`, so nothing spins and nothing is dropped.
//!
//! Bytes are read until the input really ends, not until the size `fstat`
//! gave: a file that grows while it is copied is copied to its new end.
//!
//! # Page references
//!
//! Splicing a file into a pipe passes references to its page-cache pages,
//! not copies: if the file is written after the splice and before the
//! reader consumes the pipe, the reader sees the new bytes. A caller for
//! whom that matters sets [`CopyOptions::page_references`] to `false`, and
//! files then go to pipes and sockets by read/write.

mod errors;
mod kernel;
mod pipes;
mod plan;
mod records;
mod rw;

pub(crate) use errors::is_refusal;
use errors::{Outcome, same_error};
use kernel::KernelCall;
pub use pipes::SHOWN_LARGE;
pub(crate) use pipes::{bytes_ahead, grow_pipe};
use plan::once_large;
pub use plan::{
    Copied, CopyError, CopyOptions, Fallback, Mechanism, Rewrite, SMALL_FILE, Side, input_is_output,
};
pub(crate) use plan::{Destination, choose};
pub(crate) use records::{
    RecordWriter, next_record_len, recv_measured, recv_record, write_all_or_records,
};

use std::fmt;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::buf::{Buffer, BufferOptions};
use crate::sys::socket::keeps_records;
use crate::sys::{FdInfo, FdKind, PipePair, fd_info};

/// Copies with the default options: see [`Copier`].
///
/// Every byte of `src` from its position to its end goes to `dst`; the
/// result says how many and by which [`Mechanism`], and an error says
/// which side failed and how many bytes had been written before.
///
/// ```
/// use std::io::{Read, Seek, Write};
/// use pipespeed::copy::{Mechanism, copy};
///
/// let mut src = tempfile::tempfile()?;
/// src.write_all(b"0123456789")?;
/// src.rewind()?;
/// let mut dst = tempfile::tempfile()?;
/// let copied = copy(&src, &dst)?;
/// assert_eq!(copied.bytes, 10);
/// // A file of 32 KiB or less is copied by read/write (SMALL_FILE).
/// assert_eq!(copied.mechanism, Mechanism::ReadWrite);
/// let mut out = String::new();
/// dst.rewind()?;
/// dst.read_to_string(&mut out)?;
/// assert_eq!(out, "0123456789");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn copy(src: impl AsFd, dst: impl AsFd) -> Result<Copied, CopyError> {
    Copier::new(CopyOptions::default()).copy(src, dst)
}

/// The copy engine, holding what it reuses from one copy to the next: the
/// intermediate pipe and the read/write buffer, both made on first need.
///
/// Two copies with one copier, the first stopped at a limit, the second
/// made by a forced mechanism; [`Copier::progress`] counts both:
///
/// ```
/// use std::io::{Read, Write};
/// use pipespeed::copy::{Copier, CopyOptions, Mechanism};
/// use pipespeed::sys::pipe;
///
/// let src = pipe()?;
/// std::fs::File::from(src.write).write_all(b"abcdef")?;
/// let dst = pipe()?;
/// let mut copier = Copier::new(CopyOptions {
///     limit: Some(4),
///     ..CopyOptions::default()
/// });
/// let first = copier.copy(&src.read, &dst.write)?;
/// assert_eq!(first.bytes, 4);
/// // Two pipes: splice, page references moved from one to the other.
/// assert_eq!(first.mechanism, Mechanism::Splice);
///
/// copier.options_mut().limit = None;
/// copier.options_mut().force = Some(Mechanism::ReadWrite);
/// let rest = copier.copy(&src.read, &dst.write)?;
/// assert_eq!((rest.bytes, rest.mechanism), (2, Mechanism::ReadWrite));
/// let progress = copier.progress();
/// assert_eq!(progress.load(std::sync::atomic::Ordering::Relaxed), 6);
///
/// drop(dst.write);
/// let mut out = Vec::new();
/// std::fs::File::from(dst.read).read_to_end(&mut out)?;
/// assert_eq!(out, b"abcdef");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Copier {
    options: CopyOptions,
    mid: Option<PipePair>,
    /// Bytes in the intermediate pipe not yet written out.
    pending: usize,
    buf: Option<Buffer>,
    /// The buffer records are received into, grown to the largest.
    record_buf: Vec<u8>,
    progress: Arc<AtomicU64>,
    inspector: Option<Inspector>,
    /// `/proc/sys/fs/pipe-max-size`, once read (0: unknown).
    pipe_max_size: Option<usize>,
    /// How many bytes this copy's pipes should hold (0: leave them as
    /// made): an intermediate pipe made during the copy is enlarged to it.
    pipe_goal: u64,
    /// Where this copy pauses to enlarge its pipes, counted in bytes
    /// written: [`SHOWN_LARGE`] for a source of unknown length, until it
    /// gets there.
    pause_at: Option<u64>,
    /// The destination of the last copies (device and inode) and
    /// `progress` when copies into it began: what it has taken over
    /// several copies (`cat` of many small files) shows a stream as large
    /// as one file's bytes do.
    stream: Option<((u64, u64), u64)>,
    /// What the intermediate pipe holds at most, once asked or set (0:
    /// not known).
    mid_size: usize,
    /// The destination pipe (device and inode) and what it was found to
    /// hold at most, so that a copy after another asks the kernel again
    /// only to enlarge it.
    dst_size: Option<((u64, u64), usize)>,
    /// The destination file (device and inode) and whether its filesystem
    /// copies by itself.
    dst_copies: Option<((u64, u64), bool)>,
}

/// A function shown every byte copied, in order, before it is written.
pub type Inspector = Box<dyn FnMut(&[u8]) + Send>;

impl fmt::Debug for Copier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Copier")
            .field("options", &self.options)
            .field("mid", &self.mid)
            .field("pending", &self.pending)
            .field("progress", &self.progress)
            .field("inspector", &self.inspector.is_some())
            .finish_non_exhaustive()
    }
}

/// Which ends of a copy are sockets that keep record boundaries: those
/// are read a whole record at a time, and written in records they take
/// (see [`records`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Records {
    /// The source.
    pub(crate) input: bool,
    /// The destination.
    pub(crate) output: bool,
}

impl Copier {
    /// A copier; nothing is allocated until a copy needs it.
    pub fn new(options: CopyOptions) -> Copier {
        Copier {
            options,
            mid: None,
            pending: 0,
            buf: None,
            record_buf: Vec::new(),
            progress: Arc::new(AtomicU64::new(0)),
            inspector: None,
            pipe_max_size: None,
            pipe_goal: 0,
            pause_at: None,
            stream: None,
            mid_size: 0,
            dst_size: None,
            dst_copies: None,
        }
    }

    /// The options.
    pub fn options(&self) -> &CopyOptions {
        &self.options
    }

    /// The options, to change between copies: a new limit, forced
    /// mechanism or `grow_pipes` applies to the next copy; a new buffer
    /// size only to a buffer made after the change (the one made already
    /// is kept).
    pub fn options_mut(&mut self) -> &mut CopyOptions {
        &mut self.options
    }

    /// Bytes written to destinations by this copier so far, over all its
    /// copies, updated after every system call that moved some: another
    /// thread can read it to show progress while a copy runs, at the cost
    /// of one relaxed atomic add per call to the copy.
    pub fn progress(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.progress)
    }

    /// Shows every byte copied from now on to `inspector` (to count lines,
    /// say). The bytes then have to come through user memory: every copy
    /// is made by read/write.
    pub fn set_inspector(&mut self, inspector: Option<Inspector>) {
        self.inspector = inspector;
    }

    /// Copies from `src` to `dst`, from their current file positions, until
    /// the input ends or [`CopyOptions::limit`] bytes are copied.
    pub fn copy(&mut self, src: impl AsFd, dst: impl AsFd) -> Result<Copied, CopyError> {
        let (src, dst) = (src.as_fd(), dst.as_fd());
        let input = |source| CopyError {
            side: Side::Input,
            moved: 0,
            source,
        };
        let output = |source| CopyError {
            side: Side::Output,
            moved: 0,
            source,
        };
        let src_info = fd_info(src).map_err(input)?;
        let dst_info = fd_info(dst).map_err(output)?;
        self.copy_examined(src, &src_info, dst, &dst_info)
    }

    /// [`Copier::copy`] of descriptors the caller has examined already
    /// (with [`fd_info`]): `cat` has, for every file, and examines its
    /// stdout once, where each `fstat` asked again cost as much as a
    /// small file's read.
    pub(crate) fn copy_examined(
        &mut self,
        src: BorrowedFd<'_>,
        src_info: &FdInfo,
        dst: BorrowedFd<'_>,
        dst_info: &FdInfo,
    ) -> Result<Copied, CopyError> {
        let (src_info, dst_info) = (*src_info, *dst_info);
        let ahead = bytes_ahead(src, &src_info);
        let records = Records {
            input: src_info.kind == FdKind::Socket && keeps_records(src),
            output: dst_info.kind == FdKind::Socket && keeps_records(dst),
        };
        let streamed = self.streamed(&dst_info);
        let to = Destination {
            large_stream: streamed >= SHOWN_LARGE && self.options.limit.is_none(),
            copies_itself: src_info.kind == FdKind::Regular
                && dst_info.kind == FdKind::Regular
                && self.copies_itself(dst, &dst_info),
        };
        let mut mechanism = match (&self.inspector, self.options.force) {
            // Splice would cut records where it stops; read/write takes
            // and makes them whole.
            _ if records.input || records.output => Mechanism::ReadWrite,
            // Only read/write sees the bytes.
            (Some(_), _) => Mechanism::ReadWrite,
            (None, Some(forced)) => forced,
            // A file read from near its end is as small as what is left.
            (None, None) => {
                let left = FdInfo {
                    size: ahead.unwrap_or(src_info.size),
                    ..src_info
                };
                choose(&left, &dst_info, to, &self.options)
            }
        };
        let ends = [(src, src_info.kind), (dst, dst_info.kind)];
        self.size_pipes_at_start(ends, ahead, streamed);
        if records.input {
            // Whole records pass any byte count: no pause at one.
            self.pause_at = None;
        }
        let mut moved = 0u64;
        // What `moved` was when the current mechanism took over (a pause
        // to enlarge the pipes does not start it again).
        let mut mechanism_start = 0u64;
        let mut fallbacks = Vec::new();
        // An error of a faster mechanism that read/write took over from,
        // with the side it is charged to if read/write then finds the
        // input at its end: a reset connection, say, reads as an end.
        let mut suspect: Option<(Side, io::Error)> = None;
        loop {
            let before = moved;
            let outcome = match mechanism {
                Mechanism::ReadWrite => {
                    let read = match self.read_write(src, dst, &mut moved, records) {
                        Ok(read) => read,
                        Err(err) => {
                            self.discard_pending();
                            return Err(err);
                        }
                    };
                    if let Some((side, source)) = suspect.take()
                        && read == 0
                    {
                        return Err(CopyError {
                            side,
                            moved,
                            source,
                        });
                    }
                    Outcome::Done
                }
                Mechanism::CopyFileRange => {
                    self.in_kernel(KernelCall::CopyFileRange, src, dst, &mut moved)
                }
                Mechanism::Sendfile => self.in_kernel(KernelCall::Sendfile, src, dst, &mut moved),
                Mechanism::Splice => self.in_kernel(KernelCall::Splice, src, dst, &mut moved),
                Mechanism::SplicePipe => self.splice_pipe(src, dst, &mut moved),
            };
            let cause = match outcome {
                // The input has shown it is large: the pipes are enlarged,
                // and the same mechanism goes on, but for pipe to pipe,
                // which goes through the intermediate pipe from here.
                Outcome::Done if self.size_pipes_at_pause(ends, moved) => {
                    let next = once_large(mechanism, &self.options);
                    if next != mechanism {
                        mechanism = next;
                        mechanism_start = moved;
                    }
                    continue;
                }
                Outcome::Done => {
                    return Ok(Copied {
                        bytes: moved,
                        mechanism,
                        fallbacks,
                    });
                }
                // The output will not get better by writing differently.
                Outcome::Broke(err, Some(Side::Output)) => {
                    self.discard_pending();
                    return Err(CopyError {
                        side: Side::Output,
                        moved,
                        source: err,
                    });
                }
                // An error after the mechanism has moved bytes is the
                // copy's error, as GNU cat reports it: read/write would
                // only meet it again, or, worse, go on past bytes the
                // failed call lost.
                Outcome::Broke(err, side) if moved > mechanism_start && !is_refusal(&err) => {
                    self.discard_pending();
                    return Err(CopyError {
                        side: side.unwrap_or(Side::Input),
                        moved,
                        source: err,
                    });
                }
                // A refusal after some progress (splice into a terminal
                // does that) only means read/write goes on; an error on
                // the mechanism's first call is held against the input if
                // read/write then finds nothing more to read.
                Outcome::Broke(err, side) => {
                    if !is_refusal(&err) {
                        suspect = Some((side.unwrap_or(Side::Input), same_error(&err)));
                    }
                    err
                }
                Outcome::Refused(err) => err,
            };
            let next = match (mechanism, cause.raw_os_error()) {
                (Mechanism::CopyFileRange, Some(code))
                    if code == rustix::io::Errno::XDEV.raw_os_error() =>
                {
                    Mechanism::Sendfile
                }
                _ => Mechanism::ReadWrite,
            };
            fallbacks.push(Fallback {
                from: mechanism,
                moved: moved - before,
                cause,
            });
            mechanism = next;
            mechanism_start = moved;
        }
    }

    /// Bytes still to copy under the limit (or before the pause to enlarge
    /// the pipes), at most `chunk`.
    fn want(&self, moved: u64, chunk: usize) -> usize {
        let stop = match (self.options.limit, self.pause_at) {
            (Some(limit), Some(pause)) => Some(limit.min(pause)),
            (limit, pause) => limit.or(pause),
        };
        match stop {
            // `moved + pending` never passes the stop: every call asks
            // for at most what this leaves.
            Some(stop) => stop
                .saturating_sub(moved + self.pending as u64)
                .min(chunk as u64) as usize,
            None => chunk,
        }
    }

    /// Forgets bytes left in the intermediate pipe by a copy that failed,
    /// so they cannot leak into the next copy: the pipe goes with them.
    fn discard_pending(&mut self) {
        if self.pending > 0 {
            self.mid = None;
            self.mid_size = 0;
            self.pending = 0;
        }
    }

    /// [`copies_itself`](crate::sys::copies_itself) of the
    /// destination file, asked once per destination.
    fn copies_itself(&mut self, dst: BorrowedFd<'_>, info: &FdInfo) -> bool {
        let id = (info.dev, info.ino);
        match self.dst_copies {
            Some((last, answer)) if last == id => answer,
            _ => {
                let answer = crate::sys::copies_itself(dst);
                self.dst_copies = Some((id, answer));
                answer
            }
        }
    }

    /// Bytes `dst` has taken from this copier's earlier copies into it,
    /// one after the other (0 when the last copy went elsewhere).
    fn streamed(&mut self, dst: &FdInfo) -> u64 {
        let id = (dst.dev, dst.ino);
        let now = self.progress.load(Ordering::Relaxed);
        match self.stream {
            Some((last, start)) if last == id => now.saturating_sub(start),
            _ => {
                self.stream = Some((id, now));
                0
            }
        }
    }

    /// The read/write buffer, taken out of `self` (made on first use); the
    /// caller puts it back.
    fn take_buf(&mut self) -> io::Result<Buffer> {
        match self.buf.take() {
            Some(buf) => Ok(buf),
            None => Buffer::new(
                self.options.buf_size.max(1),
                BufferOptions {
                    dont_touch: true,
                    ..Default::default()
                },
            ),
        }
    }

    /// Counts `n` more bytes written.
    fn count(&self, moved: &mut u64, n: usize) {
        count(moved, &self.progress, n);
    }
}

/// Counts `n` more bytes written into a copy's total and a copier's
/// progress.
fn count(moved: &mut u64, progress: &AtomicU64, n: usize) {
    *moved += n as u64;
    progress.fetch_add(n as u64, Ordering::Relaxed);
}
