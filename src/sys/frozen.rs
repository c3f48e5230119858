//! Pages filled once, then made read-only for good: memory that
//! `vmsplice(2)` may hand to a pipe again and again (`pipespeed yes`).
//!
//! vmsplice puts references to the caller's pages in the pipe, not
//! copies: a page written to before the reader takes it reaches the
//! reader changed (the blog's double buffer is one discipline against
//! that). [`FrozenPages`] is the other: its content is written by the
//! closure given to [`FrozenPages::new`] and then `mprotect(PROT_READ)`
//! makes any later write a fault, by anyone, for the life of the mapping.
//! A pipe may then hold the same pages any number of times: every
//! reference shows the bytes as they were filled. After `munmap` the
//! kernel keeps each page alive while a pipe still references it.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::io;
use std::ops::Range;
use std::os::fd::AsFd;
use std::ptr::NonNull;

use rustix::mm::{MapFlags, MprotectFlags, ProtFlags, mmap_anonymous, mprotect, munmap};
use rustix::pipe::{IoSliceRaw, SpliceFlags};

use crate::sys::failed;

/// Bytes in a page of its own mapping, read-only once filled.
#[derive(Debug)]
pub(crate) struct FrozenPages {
    /// The start of the mapping (page-aligned).
    map: NonNull<u8>,
    /// The bytes filled, from `map`.
    len: usize,
    /// The mapping's length: `len` rounded up to whole pages.
    map_len: usize,
}

impl FrozenPages {
    /// Maps `len` bytes (at least one) of fresh pages, lets `fill` write
    /// them, then makes them read-only.
    pub(crate) fn new(len: usize, fill: impl FnOnce(&mut [u8])) -> io::Result<FrozenPages> {
        let page = rustix::param::page_size();
        let map_len = len
            .max(1)
            .checked_next_multiple_of(page)
            .filter(|&n| isize::try_from(n).is_ok())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("cannot map {len} bytes: too large"),
                )
            })?;
        // SAFETY: a fresh anonymous mapping aliases no Rust object.
        let raw = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                map_len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        }
        .map_err(|e| failed(format!("cannot map {map_len} bytes (mmap)"), e))?;
        let map =
            NonNull::new(raw.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        let frozen = FrozenPages { map, len, map_len };
        // SAFETY: the mapping is `map_len >= len` bytes, readable and
        // writable, and only this borrow refers to it until `mprotect`.
        let bytes = unsafe { std::slice::from_raw_parts_mut(map.as_ptr(), len) };
        fill(bytes);
        // SAFETY: the range is exactly our mapping; from here on no code
        // writes to it (a write would fault), which `as_slice` and
        // `vmsplice` rely on.
        unsafe { mprotect(raw, map_len, MprotectFlags::READ) }
            .map_err(|e| failed("cannot make pages read-only (mprotect)", e))?;
        Ok(frozen)
    }

    /// The bytes, as filled.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` bytes from `map` are mapped and initialised (by
        // the kernel's zeroing, then `fill`), and never written again.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr(), self.len) }
    }

    /// `vmsplice(fd, &iov, 1, 0)` of the bytes in `range`: references to
    /// their pages go into the pipe `fd` writes to; returns how many bytes
    /// went in (fewer when the pipe had room for fewer pages).
    ///
    /// Safe, unlike [`crate::sys::vmsplice`]: the pages are read-only, so
    /// the kernel cannot write into them even if `fd` is a pipe's read end
    /// (vmsplice then fails with `EFAULT`), and no later write can change
    /// what a reader of the pipe gets.
    ///
    /// Without `SPLICE_F_GIFT`: on today's kernels it only lets a reader
    /// steal a page no one else maps, which ours never are while mapped,
    /// and it made no difference to the rate measured here (docs/yes.md).
    ///
    /// # References
    ///  - [vmsplice(2)](https://man7.org/linux/man-pages/man2/vmsplice.2.html)
    pub(crate) fn vmsplice(&self, fd: impl AsFd, range: Range<usize>) -> io::Result<usize> {
        let iov = [IoSliceRaw::from_slice(&self.as_slice()[range])];
        // SAFETY: the pages behind `iov` are read-only for the life of the
        // mapping (see `new`), so the kernel can only read them, and what
        // it keeps references to never changes.
        Ok(unsafe { rustix::pipe::vmsplice(fd, &iov, SpliceFlags::empty()) }?)
    }
}

impl Drop for FrozenPages {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `new`, which no borrow
        // outlives (`as_slice` borrows `self`); pages a pipe still
        // references stay alive in the kernel until the reader takes them.
        let _ = unsafe { munmap(self.map.as_ptr().cast::<c_void>(), self.map_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::pipe;

    #[test]
    fn filled_once_read_back() {
        let pages = FrozenPages::new(5000, |b| b.fill(b'y')).unwrap();
        assert_eq!(pages.as_slice().len(), 5000);
        assert!(pages.as_slice().iter().all(|&b| b == b'y'));
    }

    #[test]
    fn the_same_pages_spliced_twice_arrive_twice() {
        let p = pipe().unwrap();
        let pages = FrozenPages::new(8192, |b| {
            for (i, byte) in b.iter_mut().enumerate() {
                *byte = (i % 251) as u8;
            }
        })
        .unwrap();
        assert_eq!(pages.vmsplice(&p.write, 0..8192).unwrap(), 8192);
        assert_eq!(pages.vmsplice(&p.write, 100..4196).unwrap(), 4096);
        drop(pages);
        let mut out = vec![0u8; 8192 + 4096];
        let mut got = 0;
        while got < out.len() {
            got += rustix::io::read(&p.read, &mut out[got..]).unwrap();
        }
        let want: Vec<u8> = (0..8192)
            .chain(100..4196)
            .map(|i| (i % 251) as u8)
            .collect();
        assert_eq!(out, want, "the pipe kept the pages past munmap");
    }

    #[test]
    fn a_read_end_cannot_write_into_them() {
        let p = pipe().unwrap();
        rustix::io::write(&p.write, b"data").unwrap();
        let pages = FrozenPages::new(4096, |b| b.fill(b'y')).unwrap();
        let err = pages.vmsplice(&p.read, 0..4096).unwrap_err();
        assert!(
            matches!(err.raw_os_error(), Some(libc::EFAULT | libc::EBADF)),
            "{err}"
        );
        assert!(pages.as_slice().iter().all(|&b| b == b'y'));
    }
}
