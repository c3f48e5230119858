//! The checks of the paths between pipes and from a pipe into a socket:
//! tee, the load generator's reused buffer, and splice into a socket.
//!
//! As in `files`, each takes its call as a closure, so that a test can
//! pass a stand-in that copies.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileExt;

use super::files::{or_unknown, page, page_aligned, splice_file, told, unknown};
use super::scratch::{scratch_file, socket_pair};
use crate::bench::core::CopyCheck;
use crate::bench::core::copies::{AFTER, BEFORE, classify, read_up_to};
use crate::sys::{SpliceFlags, pipe, set_nonblocking, splice, tee, vmsplice_checked};

/// What fills the pipe that tee duplicates, and is changed after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TeeSource {
    /// A page of a file, spliced in (the page cache).
    File,
    /// A page of a buffer, vmspliced in (user memory).
    Buffer,
}

/// Checks tee from each source in turn, the file first: the answer of the
/// first source whose pipe held references (a pipe that holds a copy
/// has no page left to follow, so tee's answer cannot be told from it).
pub(crate) fn check_tee() -> CopyCheck {
    first_told([TeeSource::File, TeeSource::Buffer], |source| {
        check_tee_with(source, |a, b, len| tee(a, b, len, SpliceFlags::empty()))
    })
}

/// The first answer of `check` over `sources` that is not unknown, or
/// unknown with every source's reason.
fn first_told(sources: [TeeSource; 2], mut check: impl FnMut(TeeSource) -> CopyCheck) -> CopyCheck {
    let mut whys = Vec::new();
    for source in sources {
        match check(source) {
            CopyCheck::Unknown { why } => whys.push(why),
            found => return found,
        }
    }
    CopyCheck::Unknown {
        why: whys.join("; "),
    }
}

/// `r`, with a call that moved nothing as an error of `kind`.
fn nonzero(r: io::Result<usize>, kind: io::ErrorKind) -> io::Result<usize> {
    match r? {
        0 => Err(kind.into()),
        n => Ok(n),
    }
}

/// Checks `dup(a, b, len)` (tee) from the pipe `a`, filled from `source`,
/// into the pipe `b`; then changes the source, reads `b`, and reads `a`
/// to see whether the first pipe followed the change at all.
pub(crate) fn check_tee_with(
    source: TeeSource,
    mut dup: impl FnMut(BorrowedFd<'_>, BorrowedFd<'_>, usize) -> io::Result<usize>,
) -> CopyCheck {
    told(|| {
        let a = or_unknown("cannot make a pipe", pipe())?;
        let b = or_unknown("cannot make a pipe", pipe())?;
        let file = or_unknown("scratch file", scratch_file(page(), BEFORE))?;
        let (mut buf, start) = page_aligned(page());
        let (what, put) = match source {
            TeeSource::File => (
                "splice from a file",
                splice_file(file.as_fd(), a.write.as_fd(), page()),
            ),
            TeeSource::Buffer => (
                "vmsplice",
                vmsplice_checked(&a.write, &buf[start..start + page()]),
            ),
        };
        let put = or_unknown(what, nonzero(put, io::ErrorKind::UnexpectedEof))?;
        let copied = or_unknown("tee", dup(a.read.as_fd(), b.write.as_fd(), put))?;
        if copied != put {
            return Err(CopyCheck::Unknown {
                why: format!("tee moved {copied} of {put} bytes"),
            });
        }
        let changed = match source {
            TeeSource::File => file.write_all_at(&vec![AFTER; put], 0),
            TeeSource::Buffer => {
                buf[start..start + put].fill(AFTER);
                Ok(())
            }
        };
        or_unknown("pwrite into the scratch file", changed)?;
        let teed = or_unknown("read", read_up_to(b.read.as_fd(), copied))?;
        let first = or_unknown("read", read_up_to(a.read.as_fd(), put))?;
        Ok(match classify(&first, put) {
            CopyCheck::References => classify(&teed, copied),
            CopyCheck::Copies => CopyCheck::Unknown {
                why: format!("{what} copied, so the pipe had no page to follow"),
            },
            unknown => unknown,
        })
    })
}

/// The load generator's pattern: vmsplice a chunk of a buffer, refill
/// the buffer, vmsplice it again, read both chunks. References: the
/// first chunk arrives with the refill's bytes (reusing the buffer at
/// once corrupts the stream); copies: it arrives as it was put.
pub(crate) fn check_reused_buffer_with(
    mut put: impl FnMut(BorrowedFd<'_>, &[u8]) -> io::Result<usize>,
) -> CopyCheck {
    told(|| {
        let chunk = 4 * page();
        let pipe = or_unknown("cannot make a pipe", pipe())?;
        // Both chunks are put before anything is read: a pipe that cannot
        // hold them both (two pages, once the user's pipe budget is spent)
        // would make the second put wait for ever. Non-blocking, it says so.
        or_unknown(
            "cannot make the pipe non-blocking",
            set_nonblocking(&pipe.write, true),
        )?;
        let (mut buf, start) = page_aligned(chunk);
        let mut put_all = |buf: &[u8]| -> Result<(), CopyCheck> {
            let mut done = 0;
            while done < buf.len() {
                match put(pipe.write.as_fd(), &buf[done..]) {
                    Ok(0) => return Err(unknown("vmsplice", io::ErrorKind::WriteZero.into())),
                    Ok(n) => done += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        return Err(CopyCheck::Unknown {
                            why: format!(
                                "the pipe holds fewer than the {} pages of two chunks (the \
                                 user's pipe budget spent?)",
                                2 * chunk / page()
                            ),
                        });
                    }
                    Err(e) => return Err(unknown("vmsplice", e)),
                }
            }
            Ok(())
        };
        // A default pipe (16 pages) holds both chunks.
        put_all(&buf[start..start + chunk])?;
        buf[start..start + chunk].fill(AFTER);
        put_all(&buf[start..start + chunk])?;
        let first = or_unknown("read", read_up_to(pipe.read.as_fd(), chunk))?;
        Ok(classify(&first, chunk))
    })
}

/// Checks a call that moves a pipe into a socket: a buffer's page is
/// vmspliced into a pipe, `drain(pipe, socket, len)` moves it into one
/// end of a unix stream socket pair, the buffer is changed, and the other
/// end read. (Whether the pipe held the buffer's pages is the vmsplice
/// check's answer: the caller weighs the two.)
pub(crate) fn check_pipe_to_socket_with(
    mut drain: impl FnMut(BorrowedFd<'_>, BorrowedFd<'_>, usize) -> io::Result<usize>,
) -> CopyCheck {
    told(|| {
        let pipe = or_unknown("cannot make a pipe", pipe())?;
        let (near, far) = or_unknown("socket pair", socket_pair())?;
        let (mut buf, start) = page_aligned(page());
        let zero = io::ErrorKind::WriteZero;
        let put = vmsplice_checked(&pipe.write, &buf[start..start + page()]);
        let put = or_unknown("vmsplice", nonzero(put, zero))?;
        let moved = nonzero(drain(pipe.read.as_fd(), near.as_fd(), put), zero);
        let moved = or_unknown("splice into the socket", moved)?;
        buf[start..start + moved].fill(AFTER);
        let got = or_unknown("read from the socket", read_up_to(far.as_fd(), moved))?;
        Ok(classify(&got, moved))
    })
}

/// The real splice of a pipe into a socket.
pub(crate) fn splice_into_socket(
    pipe: BorrowedFd<'_>,
    socket: BorrowedFd<'_>,
    len: usize,
) -> io::Result<usize> {
    splice(pipe, None, socket, None, len, SpliceFlags::empty())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::bench::zerocopy::kernel_note;

    /// A tee that copies: tee into a pipe of its own, read that, write
    /// the bytes into `b` (the first pipe keeps its bytes, as with tee).
    fn copying_tee(a: BorrowedFd<'_>, b: BorrowedFd<'_>, len: usize) -> io::Result<usize> {
        let own = pipe()?;
        let n = tee(a, &own.write, len, SpliceFlags::empty())?;
        let bytes = read_up_to(own.read.as_fd(), n)?;
        Ok(rustix::io::write(b, &bytes)?)
    }

    /// A stand-in that copies out of a pipe: read, then write.
    fn read_and_write(pipe: BorrowedFd<'_>, to: BorrowedFd<'_>, len: usize) -> io::Result<usize> {
        let bytes = read_up_to(pipe, len)?;
        Ok(rustix::io::write(to, &bytes)?)
    }

    #[test]
    fn tee_follows_the_page_from_either_source_here() {
        for source in [TeeSource::File, TeeSource::Buffer] {
            let found = check_tee_with(source, |a, b, n| tee(a, b, n, SpliceFlags::empty()));
            assert_eq!(
                found,
                CopyCheck::References,
                "{source:?}: {}",
                kernel_note()
            );
        }
        assert_eq!(check_tee(), CopyCheck::References, "{}", kernel_note());
    }

    #[test]
    fn a_tee_that_copies_is_found_to_copy() {
        for source in [TeeSource::File, TeeSource::Buffer] {
            assert_eq!(
                check_tee_with(source, copying_tee),
                CopyCheck::Copies,
                "{source:?}"
            );
        }
    }

    #[test]
    fn tee_is_judged_from_the_first_source_that_held_references() {
        let unknown = |why: &str| CopyCheck::Unknown { why: why.into() };
        let sources = [TeeSource::File, TeeSource::Buffer];
        let found = first_told(sources, |s| match s {
            TeeSource::File => {
                unknown("splice from a file copied, so the pipe had no page to follow")
            }
            TeeSource::Buffer => CopyCheck::Copies,
        });
        assert_eq!(found, CopyCheck::Copies);
        let found = first_told(sources, |s| unknown(&format!("{s:?} copied")));
        assert_eq!(found, unknown("File copied; Buffer copied"));
    }

    #[test]
    fn a_reused_buffer_shows_through_here() {
        let found = check_reused_buffer_with(|fd, buf| vmsplice_checked(fd, buf));
        assert_eq!(found, CopyCheck::References, "{}", kernel_note());
    }

    #[test]
    fn a_pipe_too_small_for_both_chunks_is_unknown_not_a_hang() {
        // A pipe of one page (as when the user's pipe budget is spent and
        // new pipes get two): the second put would wait for a reader that
        // only comes after it.
        let mut first = true;
        let found = check_reused_buffer_with(|fd, buf| {
            if std::mem::take(&mut first) {
                crate::sys::fcntl_setpipe_size(fd, page())?;
            }
            Ok(rustix::io::write(fd, buf)?)
        });
        match found {
            CopyCheck::Unknown { why } => assert!(why.contains("pipe budget"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_reused_buffer_written_with_write_is_found_to_copy() {
        let found = check_reused_buffer_with(|fd, buf| Ok(rustix::io::write(fd, buf)?));
        assert_eq!(found, CopyCheck::Copies);
    }

    #[test]
    fn splice_into_a_unix_socket_passes_references_here() {
        let found = check_pipe_to_socket_with(splice_into_socket);
        assert_eq!(found, CopyCheck::References, "{}", kernel_note());
    }

    #[test]
    fn read_and_write_in_place_of_splice_into_a_socket_are_found_to_copy() {
        assert_eq!(check_pipe_to_socket_with(read_and_write), CopyCheck::Copies);
    }
}
