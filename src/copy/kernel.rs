//! The mechanisms that move bytes inside the kernel: copy_file_range,
//! sendfile, splice, and splice through an intermediate pipe.

use std::io;
use std::os::fd::BorrowedFd;

use super::errors::{Outcome, is_refusal, side_of};
use super::{Copier, Side};
use crate::sys::{PipePair, SpliceFlags, copy_file_range, sendfile, splice};
use crate::wait::{Direction, wait_ready};

/// The most asked of the kernel in one splice or sendfile call. Calls
/// return after less (a pipe's capacity, for splice), so this only bounds
/// the time between two returns.
const CHUNK: usize = 64 << 20;

/// The most asked in one copy_file_range call: all Linux takes
/// (`MAX_RW_COUNT`, 2 GiB less a page), as GNU cat asks. A filesystem can
/// then copy in large extents: on ext4 right after a sync, a 4 GiB copy in
/// 64 MiB calls took 2-3 times as long as in 2 GiB calls.
const RANGE_CHUNK: usize = (i32::MAX as usize) & !4095;

/// The calls that move bytes from one descriptor to another inside the
/// kernel, each in a loop of its own until the input ends.
#[derive(Debug, Clone, Copy)]
pub(super) enum KernelCall {
    CopyFileRange,
    Sendfile,
    Splice,
}

impl Copier {
    pub(super) fn in_kernel(
        &self,
        call: KernelCall,
        src: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        moved: &mut u64,
    ) -> Outcome {
        match call {
            // A 0 before any byte moved is how some filesystems (procfs,
            // and others without the method) say no.
            KernelCall::CopyFileRange => {
                self.kernel_loop(src, dst, moved, RANGE_CHUNK, true, |want| {
                    copy_file_range(src, None, dst, None, want)
                })
            }
            KernelCall::Sendfile => self.kernel_loop(src, dst, moved, CHUNK, false, |want| {
                sendfile(dst, src, None, want)
            }),
            KernelCall::Splice => self.kernel_loop(src, dst, moved, CHUNK, false, |want| {
                splice(src, None, dst, None, want, SpliceFlags::empty())
            }),
        }
    }

    /// One call after another until the input ends: `call(len)` moves at
    /// most `len` bytes (at most `chunk`) from `src` to `dst`.
    fn kernel_loop(
        &self,
        src: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        moved: &mut u64,
        chunk: usize,
        zero_first_refuses: bool,
        mut call: impl FnMut(usize) -> io::Result<usize>,
    ) -> Outcome {
        let mut first = true;
        loop {
            let want = self.want(*moved, chunk);
            if want == 0 {
                return Outcome::Done;
            }
            match call(want) {
                Ok(0) if first && zero_first_refuses => {
                    return Outcome::Refused(io::Error::new(
                        io::ErrorKind::Unsupported,
                        "nothing copied: the filesystem may not support it",
                    ));
                }
                Ok(0) => return Outcome::Done,
                Ok(n) => {
                    self.count(moved, n);
                    first = false;
                }
                Err(err) => {
                    // Either end may be the one not ready: wait for both.
                    let ready = || {
                        wait_ready(dst, Direction::Out)
                            .and_then(|()| wait_ready(src, Direction::In))
                    };
                    if let Some(end) = after_error(err, first, None, ready) {
                        return end;
                    }
                }
            }
        }
    }

    /// Splices `src` into the intermediate pipe and from there to `dst`
    /// (see the module documentation for why). What is in the
    /// intermediate pipe when this returns is counted in `self.pending`
    /// and written out by the fallback.
    pub(super) fn splice_pipe(
        &mut self,
        src: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        moved: &mut u64,
    ) -> Outcome {
        // No intermediate pipe (a pipe of the user's budget) for nothing.
        if self.pending == 0 && self.want(*moved, CHUNK) == 0 {
            return Outcome::Done;
        }
        // Taken out of `self` for the loop, so `self` can still count.
        let mid = match self.take_mid() {
            Ok(pair) => pair,
            Err(err) => return Outcome::Refused(err),
        };
        let outcome = self.splice_through(&mid, src, dst, moved);
        self.mid = Some(mid);
        outcome
    }

    fn splice_through(
        &mut self,
        mid: &PipePair,
        src: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        moved: &mut u64,
    ) -> Outcome {
        let (mut first_in, mut first_out) = (true, true);
        loop {
            if self.pending == 0 {
                let want = self.want(*moved, CHUNK);
                if want == 0 {
                    return Outcome::Done;
                }
                match splice(src, None, &mid.write, None, want, SpliceFlags::empty()) {
                    Ok(0) => return Outcome::Done,
                    Ok(n) => {
                        self.pending = n;
                        first_in = false;
                    }
                    // The intermediate pipe is empty: only the input can
                    // be not ready.
                    Err(err) => {
                        if let Some(end) = after_error(err, first_in, Some(Side::Input), || {
                            wait_ready(src, Direction::In)
                        }) {
                            return end;
                        }
                    }
                }
            }
            while self.pending > 0 {
                match splice(
                    &mid.read,
                    None,
                    dst,
                    None,
                    self.pending,
                    SpliceFlags::empty(),
                ) {
                    Ok(0) => {
                        return Outcome::Broke(
                            io::Error::new(
                                io::ErrorKind::WriteZero,
                                "splice moved nothing out of a non-empty pipe",
                            ),
                            Some(Side::Output),
                        );
                    }
                    Ok(n) => {
                        self.pending -= n;
                        self.count(moved, n);
                        first_out = false;
                    }
                    Err(err) => {
                        if let Some(end) = after_error(err, first_out, Some(Side::Output), || {
                            wait_ready(dst, Direction::Out)
                        }) {
                            return end;
                        }
                    }
                }
            }
        }
    }
}

/// What a failed call means: `None` to call again (it was interrupted, or
/// `ready` has waited until the descriptor that was not ready is), else
/// how the mechanism ends: refused if this was its first call and the
/// error says "not for these descriptors", broken otherwise, charged to
/// `side` when the call touches only one of the two (else to the side the
/// error's kind names, if it names one).
fn after_error(
    err: io::Error,
    first: bool,
    side: Option<Side>,
    ready: impl FnOnce() -> io::Result<()>,
) -> Option<Outcome> {
    match err.kind() {
        io::ErrorKind::Interrupted => None,
        io::ErrorKind::WouldBlock => ready().err().map(|e| Outcome::Broke(e, None)),
        _ if first && is_refusal(&err) => Some(Outcome::Refused(err)),
        _ => {
            let side = side.or_else(|| side_of(&err));
            Some(Outcome::Broke(err, side))
        }
    }
}
