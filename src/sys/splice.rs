//! Moving pages between pipes, files and memory without copying them.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::AsFd;

use rustix::fs::{OFlags, fcntl_getfl};
use rustix::pipe::IoSliceRaw;
pub use rustix::pipe::SpliceFlags;

/// `splice(fd_in, off_in, fd_out, off_out, len, flags)`: moves up to `len`
/// bytes between two descriptors, one of which must be a pipe, without
/// copying them through user memory.
///
/// The offsets must be `None` for pipes; for files, `Some` reads or writes
/// at that offset (and advances it) instead of the file position. Returns
/// 0 at the end of the input.
///
/// # References
///  - [splice(2)](https://man7.org/linux/man-pages/man2/splice.2.html)
pub fn splice(
    fd_in: impl AsFd,
    off_in: Option<&mut u64>,
    fd_out: impl AsFd,
    off_out: Option<&mut u64>,
    len: usize,
    flags: SpliceFlags,
) -> io::Result<usize> {
    Ok(rustix::pipe::splice(
        fd_in, off_in, fd_out, off_out, len, flags,
    )?)
}

/// `vmsplice(fd, &iov, 1, flags)`: maps the pages of `buf` into the pipe
/// `fd` refers to, without copying them, and returns how many bytes went in.
///
/// The pipe keeps references to the pages, not copies: what is written to
/// `buf` before a reader takes them is what it sees
/// ([`crate::DoubleBuffer`] is the discipline that avoids this).
///
/// # Safety
///
/// `fd` must be open for writing ([`ensure_write_end`] checks it): on a
/// read end, vmsplice copies pipe data *into* `buf`, which is only
/// borrowed for reading. Check and use a duplicate of your own: safe code
/// may `dup2` another file over a borrowed standard descriptor. With
/// [`SpliceFlags::GIFT`], `buf` must be whole, page-aligned pages, left
/// unmodified while the pipe may still hold them (the kernel's to take
/// over until then).
///
/// # References
///  - [vmsplice(2)](https://man7.org/linux/man-pages/man2/vmsplice.2.html)
pub unsafe fn vmsplice(fd: impl AsFd, buf: &[u8], flags: SpliceFlags) -> io::Result<usize> {
    let iov = [IoSliceRaw::from_slice(buf)];
    // SAFETY: the caller guarantees `fd` is open for writing, so the kernel
    // only reads from `buf`, which the shared borrow allows; the GIFT
    // contract is the caller's too (see `# Safety`).
    Ok(unsafe { rustix::pipe::vmsplice(fd, &iov, flags) }?)
}

/// Fails with `EBADF` unless `fd` is open for writing, the condition under
/// which [`vmsplice`] only reads the caller's memory. Meant to be checked
/// once (a busy-looping writer makes millions of calls): the answer holds
/// for this descriptor as long as no other file takes its number.
pub fn ensure_write_end(fd: impl AsFd) -> io::Result<()> {
    let access = fcntl_getfl(fd)? & OFlags::RWMODE;
    if access == OFlags::WRONLY || access == OFlags::RDWR {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(
            rustix::io::Errno::BADF.raw_os_error(),
        ))
    }
}

/// [`vmsplice`] of `buf` into the pipe `fd` (no flags), checking a
/// duplicate of `fd` and splicing into that: safe, at the cost of a dup
/// and an fcntl per call, for occasional calls (the copy check). What the
/// caller writes to `buf` before a reader takes the pages is what the
/// reader gets: a matter of which bytes arrive, not of memory safety.
pub fn vmsplice_checked(fd: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    let fd = fd.as_fd().try_clone_to_owned()?;
    ensure_write_end(&fd)?;
    // SAFETY: `fd` is open for writing (checked above, on this very
    // descriptor, which nobody else holds), so the kernel only reads
    // `buf`; without GIFT the pages stay the caller's.
    unsafe { vmsplice(&fd, buf, SpliceFlags::empty()) }
}

/// `tee(fd_in, fd_out, len, flags)`: duplicates up to `len` bytes from one
/// pipe into another without consuming them from the first.
///
/// # References
///  - [tee(2)](https://man7.org/linux/man-pages/man2/tee.2.html)
pub fn tee(
    fd_in: impl AsFd,
    fd_out: impl AsFd,
    len: usize,
    flags: SpliceFlags,
) -> io::Result<usize> {
    Ok(rustix::pipe::tee(fd_in, fd_out, len, flags)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::pipe;

    #[test]
    fn vmsplice_then_splice_moves_the_bytes() {
        let a = pipe().unwrap();
        let b = pipe().unwrap();
        let data = b"hello, pipes".to_vec();
        // SAFETY: a write end, no GIFT flag.
        let n = unsafe { vmsplice(&a.write, &data, SpliceFlags::empty()) }.unwrap();
        assert_eq!(n, data.len());
        let n = tee(&a.read, &b.write, 64, SpliceFlags::empty()).unwrap();
        assert_eq!(n, data.len());
        let mut out = [0u8; 64];
        let n = rustix::io::read(&a.read, &mut out).unwrap();
        assert_eq!(&out[..n], &data[..]);
        let n = rustix::io::read(&b.read, &mut out).unwrap();
        assert_eq!(&out[..n], &data[..], "tee left a copy in the second pipe");
    }

    #[test]
    fn only_write_ends_may_be_vmspliced_into() {
        let p = pipe().unwrap();
        ensure_write_end(&p.write).unwrap();
        let err = ensure_write_end(&p.read).unwrap_err();
        assert_eq!(
            err.raw_os_error(),
            Some(rustix::io::Errno::BADF.raw_os_error())
        );
    }

    #[test]
    fn splice_into_a_file_at_an_offset() {
        let p = pipe().unwrap();
        let file = tempfile::tempfile().unwrap();
        rustix::io::write(&p.write, b"0123456789").unwrap();
        let mut off = 3u64;
        let to_file = splice(
            &p.read,
            None,
            &file,
            Some(&mut off),
            10,
            SpliceFlags::empty(),
        );
        let n = to_file.unwrap();
        assert_eq!((n, off), (10, 13));
        let mut out = [0u8; 16];
        let n = rustix::io::pread(&file, &mut out, 3).unwrap();
        assert_eq!(&out[..n], b"0123456789");
    }
}
