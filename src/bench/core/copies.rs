//! Checking, on this kernel, that vmsplice moves page references rather
//! than bytes.
//!
//! The ladder's zero-copy rungs rest on one property of vmsplice: the
//! pipe gets references to the writer's own pages. Kernels may drop it (a
//! patch queued in the VFS tree makes vmsplice a wrapper for `pwritev2`,
//! which copies), and the ladder would go on printing "copies 0". So each
//! vmsplice rung is checked before it is measured: vmsplice a buffer into
//! a pipe, change the buffer, read the pipe. A reader that sees the new
//! bytes was handed the writer's pages; one that sees the old bytes got a
//! copy made during the vmsplice call.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use serde::{Deserialize, Serialize};

use crate::buf::{Buffer, BufferOptions};
use crate::sys::{pipe, vmsplice_checked};

/// What the check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "found", rename_all = "kebab-case")]
pub enum CopyCheck {
    /// The reader saw a change made after the call: the pipe held
    /// references to the writer's pages.
    References,
    /// The reader saw the bytes as they were at the call: the kernel
    /// copied them.
    Copies,
    /// The check could not tell.
    Unknown {
        /// Why.
        why: String,
    },
}

/// The bytes of the source when it is put into the pipe, and after.
pub(crate) const BEFORE: u8 = 0xA5;
/// What the source is changed to once the call has returned.
pub(crate) const AFTER: u8 = 0x5A;

/// Checks this kernel's vmsplice with a buffer made with `options` (the
/// rung's: huge pages take another path in the kernel): one huge page,
/// or 64 KiB of small pages.
pub fn check_vmsplice(options: BufferOptions) -> CopyCheck {
    let len = if options.huge_pages {
        crate::buf::HUGE_PAGE_SIZE
    } else {
        64 * 1024
    };
    check_with(len, options, |fd, buf| vmsplice_checked(fd, buf))
}

/// The check with `put` in place of vmsplice: `put(fd, buf)` puts some of
/// `buf` into the pipe `fd` and returns how much. Tests pass `write(2)` to
/// see the answer of a kernel that copies.
pub fn check_with(
    len: usize,
    options: BufferOptions,
    mut put: impl FnMut(BorrowedFd<'_>, &[u8]) -> io::Result<usize>,
) -> CopyCheck {
    let unknown = |what: &str, e: io::Error| CopyCheck::Unknown {
        why: format!("{what}: {}", crate::quote::strerror(&e)),
    };
    let pipe = match pipe() {
        Ok(p) => p,
        Err(e) => return unknown("cannot make a pipe", e),
    };
    let mut buf = match Buffer::new(len.max(1), options) {
        Ok(b) => b,
        Err(e) => return unknown("cannot map a buffer", e),
    };
    buf.fill(BEFORE);
    // A pipe holds at least 16 pages by default: one call takes a page.
    let page = rustix::param::page_size().min(buf.len());
    let put = match put(pipe.write.as_fd(), &buf[..page]) {
        Ok(0) => {
            return CopyCheck::Unknown {
                why: "the pipe took no bytes".into(),
            };
        }
        Ok(n) => n,
        Err(e) => return unknown("vmsplice", e),
    };
    buf[..put].fill(AFTER);
    match read_up_to(pipe.read.as_fd(), put) {
        Ok(got) => classify(&got, put),
        Err(e) => unknown("read", e),
    }
}

/// Reads from `fd` until `len` bytes or the end, whichever comes first.
pub(crate) fn read_up_to(fd: BorrowedFd<'_>, len: usize) -> io::Result<Vec<u8>> {
    let mut got = vec![0u8; len];
    let mut done = 0;
    while done < len {
        match rustix::io::read(fd, &mut got[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    got.truncate(done);
    Ok(got)
}

/// What the reader's `got` says of `put` bytes that were [`BEFORE`] at
/// the call and [`AFTER`] since: all new, references; all old, a copy;
/// anything else, nothing sure.
pub(crate) fn classify(got: &[u8], put: usize) -> CopyCheck {
    if !got.is_empty() && got.iter().all(|&b| b == AFTER) {
        CopyCheck::References
    } else if !got.is_empty() && got.iter().all(|&b| b == BEFORE) {
        CopyCheck::Copies
    } else {
        CopyCheck::Unknown {
            why: format!(
                "the reader saw {} of {put} bytes, old and new mixed",
                got.len()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_kernel_s_vmsplice_gives_a_clear_answer() {
        // References on the project's kernels (6.x); a kernel that copies
        // says Copies. Never a mixture, never a failure to check.
        for huge_pages in [false, true] {
            let found = check_vmsplice(BufferOptions {
                huge_pages,
                ..BufferOptions::default()
            });
            assert!(
                matches!(found, CopyCheck::References | CopyCheck::Copies),
                "{found:?}"
            );
        }
    }

    #[test]
    fn write_in_place_of_vmsplice_is_found_to_copy() {
        let found = check_with(1 << 16, BufferOptions::default(), |fd, buf| {
            Ok(rustix::io::write(fd, buf)?)
        });
        assert_eq!(found, CopyCheck::Copies);
    }

    #[test]
    fn a_refusal_is_unknown_with_the_reason() {
        let found = check_with(4096, BufferOptions::default(), |_, _| {
            Err(io::Error::from_raw_os_error(
                rustix::io::Errno::PERM.raw_os_error(),
            ))
        });
        let CopyCheck::Unknown { why } = found else {
            panic!("{found:?}")
        };
        assert!(why.starts_with("vmsplice: "), "{why}");
    }
}
