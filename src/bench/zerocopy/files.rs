//! The checks of the paths with a regular file at one end: splice and
//! io_uring's splice of a file into a pipe, sendfile of a file into a
//! socket, and splice of a pipe into a file.
//!
//! Each is the vmsplice check's test on another path: put one page of
//! [`BEFORE`] through the call, change the source to [`AFTER`], and see
//! what comes out at the other end ([`classify`]). Each takes the call
//! as a closure, so that a test can pass a stand-in that copies
//! (`pread` and `write`) and see the "copies" answer this kernel does
//! not give.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
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

/// A call that took nothing: nothing to tell.
fn took_nothing(what: &str) -> CopyCheck {
    CopyCheck::Unknown {
        why: format!("{what} moved no bytes"),
    }
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
    mut put: impl FnMut(BorrowedFd<'_>, BorrowedFd<'_>, usize) -> io::Result<usize>,
) -> CopyCheck {
    let (file, pipe) = match (scratch_file(page(), BEFORE), pipe()) {
        (Ok(f), Ok(p)) => (f, p),
        (Err(e), _) => return unknown("scratch file", e),
        (_, Err(e)) => return unknown("cannot make a pipe", e),
    };
    let put = match put(file.as_fd(), pipe.write.as_fd(), page()) {
        Ok(0) => return took_nothing(what),
        Ok(n) => n,
        Err(e) => return unknown(what, e),
    };
    if let Err(e) = file.write_all_at(&vec![AFTER; put], 0) {
        return unknown("pwrite into the scratch file", e);
    }
    match read_up_to(pipe.read.as_fd(), put) {
        Ok(got) => classify(&got, put),
        Err(e) => unknown("read", e),
    }
}

/// Checks sendfile: `send(file, socket, len)` of a file's page into one
/// end of a unix stream socket pair, a `pwrite` of new bytes at that
/// offset, then a read at the other end.
pub(crate) fn check_sendfile_with(
    mut send: impl FnMut(BorrowedFd<'_>, BorrowedFd<'_>, usize) -> io::Result<usize>,
) -> CopyCheck {
    let (file, (near, far)) = match (scratch_file(page(), BEFORE), socket_pair()) {
        (Ok(f), Ok(s)) => (f, s),
        (Err(e), _) => return unknown("scratch file", e),
        (_, Err(e)) => return unknown("socket pair", e),
    };
    let sent = match send(file.as_fd(), near.as_fd(), page()) {
        Ok(0) => return took_nothing("sendfile"),
        Ok(n) => n,
        Err(e) => return unknown("sendfile", e),
    };
    if let Err(e) = file.write_all_at(&vec![AFTER; sent], 0) {
        return unknown("pwrite into the scratch file", e);
    }
    match read_up_to(far.as_fd(), sent) {
        Ok(got) => classify(&got, sent),
        Err(e) => unknown("read from the socket", e),
    }
}

/// The real sendfile, at offset 0.
pub(crate) fn sendfile_file(
    file: BorrowedFd<'_>,
    socket: BorrowedFd<'_>,
    len: usize,
) -> io::Result<usize> {
    sendfile(socket, file, Some(&mut 0), len)
}

/// Checks a call that moves a pipe into a file: a buffer's page is
/// vmspliced into a pipe, `drain(pipe, file, len)` moves it into the
/// file at offset 0, the buffer is changed, and the file read back.
/// (Whether the pipe held the buffer's pages at all is the vmsplice
/// check's answer: the caller weighs the two.)
pub(crate) fn check_pipe_to_file_with(
    mut drain: impl FnMut(BorrowedFd<'_>, &File, usize) -> io::Result<usize>,
) -> CopyCheck {
    let (file, pipe) = match (scratch_file(0, BEFORE), pipe()) {
        (Ok(f), Ok(p)) => (f, p),
        (Err(e), _) => return unknown("scratch file", e),
        (_, Err(e)) => return unknown("cannot make a pipe", e),
    };
    let mut buf = vec![BEFORE; 2 * page()];
    // A page-aligned page of the buffer: vmsplice takes whole pages.
    let start = buf.as_ptr().align_offset(page());
    let put = match vmsplice_checked(&pipe.write, &buf[start..start + page()]) {
        Ok(0) => return took_nothing("vmsplice"),
        Ok(n) => n,
        Err(e) => return unknown("vmsplice", e),
    };
    let moved = match drain(pipe.read.as_fd(), &file, put) {
        Ok(0) => return took_nothing("splice into the file"),
        Ok(n) => n,
        Err(e) => return unknown("splice into the file", e),
    };
    buf[start..start + moved].fill(AFTER);
    let mut got = vec![0u8; moved];
    match file.read_at(&mut got, 0) {
        Ok(n) => classify(&got[..n], moved),
        Err(e) => unknown("pread of the scratch file", e),
    }
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
