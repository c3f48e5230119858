//! The vmsplice double-buffer discipline, in one type.
//!
//! `vmsplice` puts references to the caller's pages into the pipe, not
//! copies: writing a page still in the pipe changes what the reader gets.
//! The discipline (from the FizzBuzz answer the blog borrows) makes reuse
//! safe without asking the reader anything: split the buffer into two
//! halves of whole pages, size the pipe to one half, and alternately fill
//! a half and vmsplice all of it. Once a whole half `B` is spliced in, the
//! pipe (one slot per page) holds nothing but `B`'s pages, so the reader
//! has taken every page of the other half out: it may be refilled.
//!
//! This needs a half to span at least as many pages as the pipe has
//! slots, so it holds for halves that start past a page boundary
//! ([`BufferOptions::offset`]), as the blog's `malloc`ed ones do. They
//! span one page more than the pipe holds, so the writer always has a
//! piece waiting when room appears and the ends overlap instead of taking
//! turns: about 1.2x faster on the project's VM (docs/ladder.md).
//!
//! # Limits
//!
//! "Taken out of the pipe" is not "no longer referenced": a reader that
//! splices the pages into another pipe, or `tee`s them, passes the
//! references on (Travis Downs' objection, footnoted in the blog), and a
//! refill can show up downstream. Only a reader that copies is safe in
//! every case. [`DoubleBuffer::new`] checks that the kernel granted the
//! pipe size exactly, and refuses otherwise.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use crate::buf::{Buffer, BufferOptions};
use crate::sys::{SpliceFlags, ensure_write_end, fcntl_setpipe_size, vmsplice};
use crate::units::Size;
use crate::wait::{Direction, Wait, is_retryable, wait_ready};

/// How the two halves are laid out in memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Layout {
    /// Two separate mappings (the default).
    #[default]
    Separate,
    /// Two halves of one contiguous mapping (the blog's `--same_buffer`).
    Contiguous,
}

/// Whether the pipe is sized so reuse is safe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// The pipe is one half big: a half is refilled only after the reader
    /// has taken all its pages out of the pipe.
    AfterConsumed,
    /// The pipe is sized to `pipe_size` (larger than a half): a half may be
    /// refilled while the pipe still references its pages. Exists to show,
    /// with `--verify`, the corruption the discipline prevents. Refused
    /// with `SPLICE_F_GIFT`, whose pages must not change while the kernel
    /// may hold them ([`crate::sys::vmsplice`]'s contract).
    Early {
        /// The pipe size to ask for.
        pipe_size: usize,
    },
}

impl Reuse {
    /// Fails with [`io::ErrorKind::InvalidInput`] for `gift` with
    /// [`Reuse::Early`]: gifted pages must not change while the pipe holds
    /// them, and early reuse refills them then.
    pub fn allows_gift(self, gift: bool) -> io::Result<()> {
        match self {
            Reuse::Early { .. } if gift => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "SPLICE_F_GIFT and early reuse do not go together: gifted pages are the \
                 kernel's while the pipe holds them, and early reuse refills them then",
            )),
            _ => Ok(()),
        }
    }
}

/// Two page-aligned halves vmspliced in turn into the write end of a
/// pipe sized to one half.
///
/// `new` duplicates the caller's descriptor, checks that the duplicate is
/// a write end, and uses it for every vmsplice after: asking the caller's
/// `AsFd` again could give another descriptor (safe code may `dup2` over a
/// borrowed standard descriptor), and a vmsplice into a read end would
/// copy pipe data into a half only borrowed for reading. The duplicate
/// shares the caller's open file description (`O_NONBLOCK`, the pipe).
#[derive(Debug)]
pub struct DoubleBuffer {
    /// The write end checked in `new`: a duplicate nobody else holds.
    pipe: OwnedFd,
    halves: Halves,
    half_len: usize,
    next: usize,
    pipe_size: usize,
    gift: bool,
}

#[derive(Debug)]
enum Halves {
    Separate([Buffer; 2]),
    Contiguous(Buffer),
}

impl DoubleBuffer {
    /// Maps two halves of `half_len` bytes and sizes `pipe` to one half;
    /// `gift` adds `SPLICE_F_GIFT` (see [`DoubleBuffer::splice_next`]).
    ///
    /// Fails when `pipe` is not open for writing, `half_len` is not a whole
    /// number of pages, `gift` comes with [`Reuse::Early`] (kind
    /// [`io::ErrorKind::InvalidInput`]), or the kernel grants another pipe
    /// size (it rounds up to a power-of-two number of pages, and caps at
    /// `/proc/sys/fs/pipe-max-size`).
    pub fn new(
        pipe: impl AsFd,
        half_len: usize,
        options: BufferOptions,
        layout: Layout,
        reuse: Reuse,
        gift: bool,
    ) -> io::Result<DoubleBuffer> {
        reuse.allows_gift(gift)?;
        let pipe = pipe.as_fd().try_clone_to_owned()?;
        ensure_write_end(&pipe)?;
        let page = rustix::param::page_size();
        if half_len == 0 || !half_len.is_multiple_of(page) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "vmsplice double buffering needs each half to be a whole number of pages: \
                     half of the buffer is {} (page size {})",
                    Size(half_len as u64),
                    Size(page as u64)
                ),
            ));
        }
        let asked = match reuse {
            Reuse::AfterConsumed => half_len,
            Reuse::Early { pipe_size } => pipe_size,
        };
        let granted = fcntl_setpipe_size(&pipe, asked)?;
        if reuse == Reuse::AfterConsumed && granted != half_len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "vmsplice double buffering needs the pipe sized to exactly half the buffer: \
                     asked {}, the kernel granted {} (use a power-of-two number of pages)",
                    Size(half_len as u64),
                    Size(granted as u64)
                ),
            ));
        }
        let halves = match layout {
            Layout::Separate => Halves::Separate([
                Buffer::new(half_len, options)?,
                Buffer::new(half_len, options)?,
            ]),
            Layout::Contiguous => {
                let both = half_len.checked_mul(2).ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("two halves of {half_len} bytes are more than memory holds"),
                    )
                })?;
                Halves::Contiguous(Buffer::new(both, options)?)
            }
        };
        Ok(DoubleBuffer {
            pipe,
            halves,
            half_len,
            next: 0,
            pipe_size: granted,
            gift,
        })
    }

    /// The size of each half.
    pub fn half_len(&self) -> usize {
        self.half_len
    }

    /// The pipe size granted.
    pub fn pipe_size(&self) -> usize {
        self.pipe_size
    }

    /// The buffers backing the halves, for huge page checks.
    pub fn buffers(&self) -> Vec<&Buffer> {
        match &self.halves {
            Halves::Separate([a, b]) => vec![a, b],
            Halves::Contiguous(one) => vec![one],
        }
    }

    /// The half to fill next. Under [`Reuse::AfterConsumed`] none of its
    /// pages is in the pipe any more.
    pub fn next_half(&mut self) -> &mut [u8] {
        let (i, n) = (self.next, self.half_len);
        match &mut self.halves {
            Halves::Separate(halves) => &mut halves[i][..],
            Halves::Contiguous(one) => &mut one[i * n..(i + 1) * n],
        }
    }

    /// Vmsplices the first `len` bytes of the next half (all of it, for
    /// the discipline to hold, except at the very end of a stream) into
    /// `pipe`, waiting as `wait` says, then makes the other half the next
    /// one.
    ///
    /// With `gift` (given to [`DoubleBuffer::new`]), `SPLICE_F_GIFT` is
    /// added while the remaining part starts on a page boundary and is a
    /// whole number of pages. A reader gone away gives an error of kind
    /// [`io::ErrorKind::BrokenPipe`]; retryable errors are retried, so a
    /// half is never left partly spliced on success.
    pub fn splice_next(&mut self, len: usize, wait: Wait) -> io::Result<()> {
        let page = rustix::param::page_size();
        let len = len.min(self.half_len);
        let mut done = 0;
        while done < len {
            wait.before_call(&self.pipe, Direction::Out)?;
            let mut flags = wait.splice_flags();
            let half = match &self.halves {
                Halves::Separate(halves) => &halves[self.next][done..len],
                Halves::Contiguous(one) => {
                    &one[self.next * self.half_len + done..self.next * self.half_len + len]
                }
            };
            if self.gift
                && (half.as_ptr() as usize).is_multiple_of(page)
                && half.len().is_multiple_of(page)
            {
                flags |= SpliceFlags::GIFT;
            }
            // SAFETY: `pipe` is a write end: `new` checked this very
            // descriptor, which only this type holds (an open file's
            // access mode never changes). GIFT is passed only for whole,
            // page-aligned pages (checked above) and only with
            // `Reuse::AfterConsumed` (`new` refuses `Early`), under which
            // a half stays untouched until the pipe has let go of its
            // pages (see the module documentation).
            match unsafe { vmsplice(&self.pipe, half, flags) } {
                Ok(n) => done += n,
                Err(err) if is_retryable(&err) => {
                    if !wait.is_busy() && err.kind() == io::ErrorKind::WouldBlock {
                        wait_ready(&self.pipe, Direction::Out)?;
                    }
                }
                Err(err) => return Err(err),
            }
        }
        self.next ^= 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buf::MALLOC_OFFSET;
    use crate::sys::pipe;
    use crate::verify::{Verifier, fill_pattern};

    /// A double buffer of halves of `half_len` bytes, separate and with
    /// default options.
    fn make(
        pipe: impl AsFd,
        half_len: usize,
        reuse: Reuse,
        gift: bool,
    ) -> io::Result<DoubleBuffer> {
        let options = BufferOptions::default();
        DoubleBuffer::new(pipe, half_len, options, Layout::Separate, reuse, gift)
    }

    /// The standard descriptors may be replaced by safe code
    /// (`rustix::stdio::dup2_stdin`) while borrowed: a double buffer over
    /// stdin, a pipe's write end when it is made, keeps splicing into
    /// that pipe after stdin becomes another pipe's read end (a vmsplice
    /// there would copy that pipe's bytes into a half).
    #[test]
    fn a_descriptor_replaced_after_the_check_is_not_used() {
        let original = std::io::stdin().as_fd().try_clone_to_owned().unwrap();
        let (checked, other) = (pipe().unwrap(), pipe().unwrap());
        rustix::stdio::dup2_stdin(&checked.write).unwrap();
        let stdin = std::io::stdin();
        let made = make(stdin.as_fd(), 4096, Reuse::AfterConsumed, false);
        // Stdin is now a read end with bytes waiting.
        rustix::io::write(&other.write, &[7; 4096]).unwrap();
        rustix::stdio::dup2_stdin(&other.read).unwrap();
        let spliced = made.and_then(|mut db| {
            db.next_half().fill(b'X');
            crate::sys::set_nonblocking(&checked.write, true)?;
            db.splice_next(4096, Wait::Block).map(|()| db)
        });
        rustix::stdio::dup2_stdin(&original).unwrap();
        let db = spliced.unwrap();
        crate::sys::set_nonblocking(&checked.read, true).unwrap();
        crate::sys::set_nonblocking(&other.read, true).unwrap();
        let mut got = vec![0u8; 8192];
        assert_eq!(rustix::io::read(&checked.read, &mut got), Ok(4096));
        assert!(got[..4096].iter().all(|&b| b == b'X'), "the wrong bytes");
        assert_eq!(rustix::io::read(&other.read, &mut got), Ok(4096));
        drop(db);
    }

    /// An `AsFd` of the caller's own is asked for its descriptor once:
    /// one that gives a write end to the check and a read end after gets
    /// its write end used throughout.
    #[test]
    fn a_callers_as_fd_is_asked_once() {
        struct Fickle<'a> {
            write: &'a OwnedFd,
            read: &'a OwnedFd,
            asked: std::cell::Cell<u32>,
        }
        impl AsFd for Fickle<'_> {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                self.asked.set(self.asked.get() + 1);
                match self.asked.get() {
                    1 => self.write.as_fd(),
                    _ => self.read.as_fd(),
                }
            }
        }
        let p = pipe().unwrap();
        let fickle = Fickle {
            write: &p.write,
            read: &p.read,
            asked: std::cell::Cell::new(0),
        };
        let mut db = make(&fickle, 4096, Reuse::AfterConsumed, false).unwrap();
        db.next_half().fill(b'X');
        db.splice_next(4096, Wait::Block).unwrap();
        assert_eq!(fickle.asked.get(), 1);
        let mut got = [0u8; 4096];
        assert_eq!(rustix::io::read(&p.read, &mut got), Ok(4096));
        assert!(got.iter().all(|&b| b == b'X'));
    }

    #[test]
    fn halves_must_be_whole_pages() {
        let p = pipe().unwrap();
        let err = make(&p.write, 1000, Reuse::AfterConsumed, false).unwrap_err();
        assert!(err.to_string().contains("whole number of pages"), "{err}");
    }

    #[test]
    fn gift_with_early_reuse_is_refused() {
        let p = pipe().unwrap();
        let early = Reuse::Early {
            pipe_size: 64 * 1024,
        };
        let err = make(&p.write, 4096, early, true).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        assert!(
            err.to_string().contains("SPLICE_F_GIFT and early reuse"),
            "{err}"
        );
        // Each alone is allowed.
        make(&p.write, 4096, early, false).unwrap();
        make(&p.write, 4096, Reuse::AfterConsumed, true).unwrap();
    }

    /// Two halves of a contiguous mapping are counted without wrapping:
    /// halves of 2^63 bytes are refused, not mapped as 0 bytes.
    #[test]
    fn halves_too_large_to_count_are_refused() {
        let p = pipe().unwrap();
        let early = Reuse::Early { pipe_size: 4096 };
        let options = BufferOptions::default();
        let err = DoubleBuffer::new(&p.write, 1 << 63, options, Layout::Contiguous, early, false)
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
    }

    #[test]
    fn pipe_granted_larger_than_a_half_is_refused() {
        let p = pipe().unwrap();
        // 3 pages round up to a 4-page pipe.
        let err = make(&p.write, 3 * 4096, Reuse::AfterConsumed, false).unwrap_err();
        assert!(err.to_string().contains("granted 16KiB"), "{err}");
    }

    #[test]
    fn a_copying_reader_gets_every_half_intact() {
        let layouts = [Layout::Separate, Layout::Contiguous];
        for (layout, offset) in layouts
            .into_iter()
            .flat_map(|l| [(l, 0), (l, MALLOC_OFFSET)])
        {
            let p = pipe().unwrap();
            let half = 16 * 1024;
            let options = BufferOptions {
                offset,
                ..Default::default()
            };
            let mut db =
                DoubleBuffer::new(&p.write, half, options, layout, Reuse::AfterConsumed, false)
                    .unwrap();
            assert_eq!(db.pipe_size(), half);
            let total = 40 * half as u64;
            std::thread::scope(|s| {
                let reader = s.spawn(|| {
                    let mut v = Verifier::new();
                    let mut buf = vec![0u8; 7000];
                    while v.offset() < total {
                        let n = rustix::io::read(&p.read, &mut buf).unwrap();
                        v.check(&buf[..n]).unwrap();
                    }
                });
                let mut sent = 0u64;
                while sent < total {
                    fill_pattern(db.next_half(), sent);
                    db.splice_next(half, Wait::Block).unwrap();
                    sent += half as u64;
                }
                reader.join().unwrap();
            });
        }
    }
}
