//! The checks of the paths with a regular file at one end: splice and
//! io_uring's splice of a file into a pipe, sendfile of a file into a
//! socket, and splice of a pipe into a file.
//!
//! Each puts one page of [`BEFORE`] through the call, changes the source
//! to [`AFTER`], and sees what comes out at the other end ([`classify`]).
//! Each takes the call as a closure, so that a test can pass a stand-in
//! that copies and see the "copies" answer this kernel does not give.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileExt;

use super::scratch::{scratch_file, socket_pair};
use crate::bench::core::CopyCheck;
use crate::bench::core::copies::{AFTER, BEFORE, classify, read_up_to};
use crate::sys::{SpliceFlags, pipe, sendfile, splice, vmsplice_checked};

/// What one check moves: a page, which a default pipe and a socket's
/// buffer both take in one call.
pub(crate) fn page() -> usize {
    rustix::param::page_size()
}

/// The answer "could not tell", naming what failed and why.
pub(crate) fn unknown(what: &str, e: io::Error) -> CopyCheck {
    CopyCheck::Unknown {
        why: format!("{what}: {}", crate::quote::strerror(&e)),
    }
}

/// `r`'s value, or the answer "could not tell" naming `what` failed.
pub(crate) fn or_unknown<T>(what: &str, r: io::Result<T>) -> Result<T, CopyCheck> {
    r.map_err(|e| unknown(what, e))
}

/// The bytes a call moved; one that failed or took nothing cannot tell.
fn took(what: &str, r: io::Result<usize>) -> Result<usize, CopyCheck> {
    match or_unknown(what, r)? {
        0 => Err(CopyCheck::Unknown {
            why: format!("{what} moved no bytes"),
        }),
        n => Ok(n),
    }
}

/// The answer of a check written with `?` on its "could not tell"s.
pub(crate) fn told(check: impl FnOnce() -> Result<CopyCheck, CopyCheck>) -> CopyCheck {
    check().unwrap_or_else(|unknown| unknown)
}

/// `splice(2)` of `len` bytes at offset 0 of `file` into `pipe`.
pub(crate) fn splice_file(
    file: BorrowedFd<'_>,
    pipe: BorrowedFd<'_>,
    len: usize,
) -> io::Result<usize> {
    splice(file, Some(&mut 0), pipe, None, len, SpliceFlags::empty())
}

/// Checks a call that moves a file's page into a pipe: `put(file, pipe,
/// len)` (splice, or io_uring's splice), then a `pwrite` of new bytes at
/// that offset, then a read of the pipe.
pub(crate) fn check_file_to_pipe_with(
    what: &str,
    put: impl FnMut(BorrowedFd<'_>, BorrowedFd<'_>, usize) -> io::Result<usize>,
) -> CopyCheck {
    let pipe = or_unknown("cannot make a pipe", pipe()).map(|p| (p.write, p.read));
    check_from_file(what, pipe, "read", put)
}

/// Checks sendfile: `send(file, socket, len)` of a file's page into one
/// end of a unix stream socket pair, a `pwrite` of new bytes at that
/// offset, then a read at the other end.
pub(crate) fn check_sendfile_with(
    send: impl FnMut(BorrowedFd<'_>, BorrowedFd<'_>, usize) -> io::Result<usize>,
) -> CopyCheck {
    let pair = or_unknown("socket pair", socket_pair());
    check_from_file("sendfile", pair, "read from the socket", send)
}

/// Moves a file's page by `put` into `ends.0`, changes the file, and
/// reads `ends.1` (`reading` names that read).
fn check_from_file(
    what: &str,
    ends: Result<(OwnedFd, OwnedFd), CopyCheck>,
    reading: &str,
    mut put: impl FnMut(BorrowedFd<'_>, BorrowedFd<'_>, usize) -> io::Result<usize>,
) -> CopyCheck {
    told(|| {
        let file = or_unknown("scratch file", scratch_file(page(), BEFORE))?;
        let (near, far) = ends?;
        let put = took(what, put(file.as_fd(), near.as_fd(), page()))?;
        or_unknown(
            "pwrite into the scratch file",
            file.write_all_at(&vec![AFTER; put], 0),
        )?;
        let got = or_unknown(reading, read_up_to(far.as_fd(), put))?;
        Ok(classify(&got, put))
    })
}

/// The real sendfile, at offset 0.
pub(crate) fn sendfile_file(
    file: BorrowedFd<'_>,
    socket: BorrowedFd<'_>,
    len: usize,
) -> io::Result<usize> {
    sendfile(socket, file, Some(&mut 0), len)
}

/// A buffer of `len` bytes of [`BEFORE`] and more, and where its first
/// whole page starts: vmsplice takes whole pages.
pub(crate) fn page_aligned(len: usize) -> (Vec<u8>, usize) {
    let buf = vec![BEFORE; len + page()];
    let start = buf.as_ptr().align_offset(page());
    (buf, start)
}

/// Checks a call that moves a pipe into a file: a buffer's page is
/// vmspliced into a pipe, `drain(pipe, file, len)` moves it into the
/// file at offset 0, the buffer is changed, and the file read back.
/// (Whether the pipe held the buffer's pages at all is the vmsplice
/// check's answer: the caller weighs the two.)
pub(crate) fn check_pipe_to_file_with(
    mut drain: impl FnMut(BorrowedFd<'_>, &File, usize) -> io::Result<usize>,
) -> CopyCheck {
    told(|| {
        let file = or_unknown("scratch file", scratch_file(0, BEFORE))?;
        let pipe = or_unknown("cannot make a pipe", pipe())?;
        let (mut buf, start) = page_aligned(page());
        let put = took(
            "vmsplice",
            vmsplice_checked(&pipe.write, &buf[start..start + page()]),
        )?;
        let moved = took("splice into the file", drain(pipe.read.as_fd(), &file, put))?;
        buf[start..start + moved].fill(AFTER);
        let mut got = vec![0u8; moved];
        let n = or_unknown("pread of the scratch file", file.read_at(&mut got, 0))?;
        Ok(classify(&got[..n], moved))
    })
}

/// The real splice of a pipe into a file, at offset 0.
pub(crate) fn splice_into_file(pipe: BorrowedFd<'_>, file: &File, len: usize) -> io::Result<usize> {
    splice(pipe, None, file, Some(&mut 0), len, SpliceFlags::empty())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::bench::zerocopy::kernel_note;

    /// A stand-in that copies a file's bytes: pread, then write.
    fn copy_from_file(file: BorrowedFd<'_>, to: BorrowedFd<'_>, len: usize) -> io::Result<usize> {
        let mut buf = vec![0u8; len];
        let n = rustix::io::pread(file, &mut buf, 0)?;
        Ok(rustix::io::write(to, &buf[..n])?)
    }

    #[test]
    fn splice_from_a_file_passes_page_cache_references_here() {
        let found = check_file_to_pipe_with("splice", splice_file);
        assert_eq!(found, CopyCheck::References, "{}", kernel_note());
    }

    #[test]
    fn pread_and_write_in_place_of_splice_are_found_to_copy() {
        assert_eq!(
            check_file_to_pipe_with("splice", copy_from_file),
            CopyCheck::Copies
        );
    }

    #[test]
    fn sendfile_into_a_unix_socket_passes_page_cache_references_here() {
        let found = check_sendfile_with(sendfile_file);
        assert_eq!(found, CopyCheck::References, "{}", kernel_note());
    }

    #[test]
    fn pread_and_write_in_place_of_sendfile_are_found_to_copy() {
        assert_eq!(check_sendfile_with(copy_from_file), CopyCheck::Copies);
    }

    #[test]
    fn splice_into_a_file_copies_here() {
        let found = check_pipe_to_file_with(splice_into_file);
        assert_eq!(found, CopyCheck::Copies, "{}", kernel_note());
    }

    #[test]
    fn read_and_pwrite_in_place_of_splice_into_a_file_are_found_to_copy() {
        let found = check_pipe_to_file_with(|pipe, file, len| {
            let got = read_up_to(pipe, len)?;
            file.write_all_at(&got, 0)?;
            Ok(got.len())
        });
        assert_eq!(found, CopyCheck::Copies);
    }

    #[test]
    fn a_file_that_follows_the_buffer_is_found_to_hold_references() {
        // The check can answer "references" too: a stand-in whose file
        // shows the buffer's later bytes, as one sharing its pages would.
        let found = check_pipe_to_file_with(|pipe, file, len| {
            let got = read_up_to(pipe, len)?;
            file.write_all_at(&vec![AFTER; got.len()], 0)?;
            Ok(got.len())
        });
        assert_eq!(found, CopyCheck::References);
    }

    #[test]
    fn a_refusal_is_unknown_with_the_call_and_the_reason() {
        let found = check_file_to_pipe_with("io_uring splice", |_, _, _| {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        });
        let CopyCheck::Unknown { why } = found else {
            panic!("{found:?}")
        };
        assert!(why.starts_with("io_uring splice: "), "{why}");
    }
}
