//! Page-aligned and huge-page buffers, mapped with `mmap` and released on
//! drop.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::fs;
use std::io;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use rustix::mm::{Advice, MapFlags, ProtFlags, madvise, mlock, mmap_anonymous, munmap};

use crate::sys::failed;
use crate::units::MIB;

/// The size of a transparent huge page on x86-64 and most arm64 kernels.
pub const HUGE_PAGE_SIZE: usize = 2 * MIB as usize;

/// How to obtain a [`Buffer`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BufferOptions {
    /// Align to 2 MiB and ask for transparent huge pages with
    /// `madvise(MADV_HUGEPAGE)`. Whether the kernel really gave them is
    /// told by [`Buffer::huge_pages`].
    pub huge_pages: bool,
    /// Lock the pages in memory with `mlock`, so they are never reclaimed.
    pub lock: bool,
    /// Leave the pages untouched: they are only allocated by the first
    /// access (the blog's `--dont_touch_pages`). Otherwise every byte is set
    /// to `'X'`, which faults every page in.
    pub dont_touch: bool,
    /// Bytes past a page boundary where the buffer starts (less than a
    /// page; 0 for page-aligned). The blog's buffers come from `malloc`,
    /// which places large blocks [`MALLOC_OFFSET`] bytes past a page
    /// boundary: see [`crate::double_buffer`] for why that matters.
    pub offset: usize,
}

/// Where glibc's `malloc` starts a block it serves with its own `mmap`
/// (128 KiB and up): 16 bytes past the page boundary, after its chunk
/// header. The blog's and `pipe_ref`'s buffers sit there.
pub const MALLOC_OFFSET: usize = 16;

/// A page-aligned anonymous mapping of `len` bytes.
#[derive(Debug)]
pub struct Buffer {
    /// The first byte handed out: `map + offset`.
    ptr: NonNull<u8>,
    len: usize,
    /// The start of the mapping, aligned.
    map: NonNull<u8>,
    map_len: usize,
    huge_pages: bool,
}

// SAFETY: the mapping is owned by the `Buffer` alone, like a `Vec<u8>`.
unsafe impl Send for Buffer {}
// SAFETY: shared access only reads, like `&[u8]`.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// Maps a buffer of `len` bytes (at least one page is mapped), starting
    /// `options.offset` bytes past an aligned boundary.
    pub fn new(len: usize, options: BufferOptions) -> io::Result<Buffer> {
        let page = rustix::param::page_size();
        if options.offset >= page {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "buffer offset {} must be less than a page ({page} bytes)",
                    options.offset
                ),
            ));
        }
        let align = if options.huge_pages {
            HUGE_PAGE_SIZE
        } else {
            page
        };
        // A sum that wrapped would map less than `len` and hand out a
        // slice past the mapping; a slice may not exceed isize::MAX bytes.
        let too_large = || {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "cannot map a buffer of {len} bytes{}: larger than the address space",
                    match options.offset {
                        0 => String::new(),
                        n => format!(" at offset {n}"),
                    }
                ),
            )
        };
        let map_len = len
            .checked_add(options.offset)
            .map(|n| n.max(1).div_ceil(align))
            .and_then(|units| units.checked_mul(align))
            .filter(|&n| isize::try_from(n).is_ok())
            .ok_or_else(too_large)?;
        // Over-allocate by one alignment unit so an aligned start exists,
        // then give back the slop on both sides.
        let over_len = if options.huge_pages {
            map_len.checked_add(align).ok_or_else(too_large)?
        } else {
            map_len
        };
        // SAFETY: a fresh anonymous mapping aliases no Rust object.
        let raw = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                over_len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        }
        .map_err(|e| {
            io::Error::new(
                io::Error::from(e).kind(),
                format!(
                    "cannot map a buffer of {} (mmap): {}",
                    crate::units::Size(over_len as u64),
                    crate::quote::strerror(&io::Error::from(e))
                ),
            )
        })?;
        let addr = raw as usize;
        let start = addr.next_multiple_of(align);
        let head = start - addr;
        let tail = over_len - head - map_len;
        if head > 0 {
            // SAFETY: the head slop is part of the mapping made above and is
            // never handed out.
            unsafe { munmap(raw, head) }?;
        }
        if tail > 0 {
            // SAFETY: the tail slop is part of the mapping made above and is
            // never handed out.
            unsafe { munmap((start + map_len) as *mut c_void, tail) }?;
        }
        let map =
            NonNull::new(start as *mut u8).ok_or_else(|| io::Error::other("mmap returned null"))?;
        // SAFETY: `offset < page <= map_len`, so the pointer stays inside
        // the mapping; `offset + len <= map_len` was checked above without
        // wrapping, so the `len` bytes from it do too.
        let ptr = unsafe { map.add(options.offset) };
        let buffer = Buffer {
            ptr,
            len,
            map,
            map_len,
            huge_pages: options.huge_pages,
        };
        if options.huge_pages {
            // SAFETY: the range is exactly our mapping; advice changes no
            // contents.
            unsafe { madvise(start as *mut c_void, map_len, Advice::LinuxHugepage) }
                .map_err(|e| failed("cannot ask for huge pages (madvise MADV_HUGEPAGE)", e))?;
        }
        if options.lock {
            // SAFETY: the range is exactly our mapping.
            unsafe { mlock(start as *mut c_void, map_len) }.map_err(|e| {
                io::Error::new(
                    io::Error::from(e).kind(),
                    format!(
                        "cannot lock {} bytes in memory (mlock): {} (see `ulimit -l`)",
                        map_len,
                        io::Error::from(e)
                    ),
                )
            })?;
        }
        let mut buffer = buffer;
        if !options.dont_touch {
            buffer.fill(b'X');
        }
        Ok(buffer)
    }

    /// The length asked for.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How much of the buffer is backed by huge pages right now, from the
    /// kernel's own accounting. Only touched pages can be huge.
    pub fn huge_pages(&self) -> io::Result<HugePages> {
        if !self.huge_pages {
            return Ok(HugePages {
                huge_bytes: 0,
                mapped_bytes: self.map_len as u64,
                source: HugePageSource::NotRequested,
            });
        }
        let addr = self.map.as_ptr() as usize;
        let mapped_bytes = self.map_len as u64;
        // smaps speaks for the whole mapping and needs no privilege;
        // kpageflags only for the first page, and only for root.
        match smaps_anon_huge_bytes(addr) {
            Ok(huge_bytes) => Ok(HugePages {
                huge_bytes,
                mapped_bytes,
                source: HugePageSource::Smaps,
            }),
            Err(err) => match kpageflags_thp(addr) {
                Some(is_thp) => Ok(HugePages {
                    huge_bytes: if is_thp { mapped_bytes } else { 0 },
                    mapped_bytes,
                    source: HugePageSource::Kpageflags,
                }),
                None => Err(err),
            },
        }
    }
}

/// Where [`HugePages`] got its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HugePageSource {
    /// Huge pages were not asked for.
    NotRequested,
    /// `AnonHugePages` of the mapping in `/proc/self/smaps`.
    Smaps,
    /// The `THP` flag of the first page in `/proc/kpageflags` (root only).
    Kpageflags,
}

/// How much of a buffer the kernel backs with huge pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HugePages {
    /// Bytes backed by transparent huge pages.
    pub huge_bytes: u64,
    /// Bytes mapped for the buffer.
    pub mapped_bytes: u64,
    /// How this was found out.
    pub source: HugePageSource,
}

impl HugePages {
    /// Whether every mapped byte is on a huge page.
    pub fn all_huge(&self) -> bool {
        self.huge_bytes >= self.mapped_bytes && self.mapped_bytes > 0
    }
}

/// `AnonHugePages` of the mapping that contains `addr`, in bytes.
fn smaps_anon_huge_bytes(addr: usize) -> io::Result<u64> {
    let text = fs::read_to_string("/proc/self/smaps")?;
    let mut inside = false;
    for line in text.lines() {
        if let Some((range, _)) = line.split_once(' ')
            && let Some((lo, hi)) = range.split_once('-')
            && let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        {
            inside = (lo..hi).contains(&addr);
            continue;
        }
        if inside && let Some(rest) = line.strip_prefix("AnonHugePages:") {
            let kib: u64 = rest
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("unreadable smaps line {line:?}"),
                    )
                })?;
            return Ok(kib * 1024);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        "buffer mapping not found in /proc/self/smaps",
    ))
}

/// The `THP` flag of the page behind `addr`, when `/proc/self/pagemap`
/// gives page frame numbers and `/proc/kpageflags` is readable (root).
fn kpageflags_thp(addr: usize) -> Option<bool> {
    use std::os::unix::fs::FileExt;
    const KPF_THP: u64 = 22;
    let page = rustix::param::page_size() as u64;
    let mut entry = [0u8; 8];
    fs::File::open("/proc/self/pagemap")
        .ok()?
        .read_exact_at(&mut entry, addr as u64 / page * 8)
        .ok()?;
    let entry = u64::from_le_bytes(entry);
    let pfn = entry & ((1 << 55) - 1);
    if entry >> 63 == 0 || pfn == 0 {
        return None;
    }
    let mut flags = [0u8; 8];
    fs::File::open("/proc/kpageflags")
        .ok()?
        .read_exact_at(&mut flags, pfn * 8)
        .ok()?;
    Some(u64::from_le_bytes(flags) >> KPF_THP & 1 == 1)
}

impl Deref for Buffer {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` readable bytes of our mapping
        // (`offset + len <= map_len`).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for Buffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` points to `len` writable bytes of our mapping
        // (`offset + len <= map_len`), and `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the range is our mapping and no borrow outlives `self`.
        // A pipe may still reference the pages: munmap only drops our
        // mapping, the kernel keeps the pages alive until it lets go.
        let _ = unsafe { munmap(self.map.as_ptr().cast(), self.map_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_page_aligned_and_filled() {
        let b = Buffer::new(10_000, BufferOptions::default()).unwrap();
        assert_eq!(b.as_ptr() as usize % rustix::param::page_size(), 0);
        assert_eq!(b.len(), 10_000);
        assert!(b.iter().all(|&c| c == b'X'));
    }

    #[test]
    fn malloc_like_buffers_start_past_the_page_boundary() {
        let page = rustix::param::page_size();
        let mut b = Buffer::new(2 * page, MALLOC_LIKE).unwrap();
        assert_eq!(b.as_ptr() as usize % page, MALLOC_OFFSET);
        assert_eq!(b.len(), 2 * page);
        // Every byte is ours to write, up to the last.
        b[2 * page - 1] = b'y';
        assert!(b[..2 * page - 1].iter().all(|&c| c == b'X'));
        let too_far = BufferOptions {
            offset: page,
            ..PLAIN
        };
        let err = Buffer::new(page, too_far).unwrap_err();
        assert!(err.to_string().contains("less than a page"), "{err}");
    }

    const PLAIN: BufferOptions = BufferOptions {
        huge_pages: false,
        lock: false,
        dont_touch: false,
        offset: 0,
    };
    const HUGE: BufferOptions = BufferOptions {
        huge_pages: true,
        ..PLAIN
    };
    const MALLOC_LIKE: BufferOptions = BufferOptions {
        offset: MALLOC_OFFSET,
        ..PLAIN
    };

    #[test]
    fn untouched_buffers_read_as_zero() {
        let untouched = BufferOptions {
            dont_touch: true,
            ..PLAIN
        };
        let b = Buffer::new(4096, untouched).unwrap();
        assert!(b.iter().all(|&c| c == 0));
    }

    #[test]
    fn huge_buffers_are_2mib_aligned_and_say_what_they_got() {
        let b = Buffer::new(HUGE_PAGE_SIZE, HUGE).unwrap();
        assert_eq!(b.as_ptr() as usize % HUGE_PAGE_SIZE, 0);
        let got = b.huge_pages().unwrap();
        assert_eq!(got.mapped_bytes, HUGE_PAGE_SIZE as u64);
        assert!(got.huge_bytes <= got.mapped_bytes);
        // Whether the kernel granted them depends on THP mode and memory;
        // when the policy forbids them, none may be reported.
        if !crate::sys::ThpMode::current().allows_madvise() {
            assert_eq!(got.huge_bytes, 0);
        }
    }

    #[test]
    fn lengths_past_the_address_space_are_refused_not_wrapped() {
        let page = rustix::param::page_size();
        for (len, options) in [
            (usize::MAX, PLAIN),
            (usize::MAX, MALLOC_LIKE),
            (usize::MAX - MALLOC_OFFSET + 1, MALLOC_LIKE),
            (usize::MAX - page + 2, PLAIN),
            (usize::MAX - HUGE_PAGE_SIZE + 2, HUGE),
            (usize::MAX - 2 * HUGE_PAGE_SIZE + 1, HUGE),
            (isize::MAX as usize + 1, PLAIN),
            (1 << 62, PLAIN),
        ] {
            match Buffer::new(len, options) {
                Err(err) => assert!(err.to_string().contains("cannot map"), "{len}: {err}"),
                Ok(b) => panic!("{len} bytes mapped as {} bytes", b.map_len),
            }
        }
    }

    #[test]
    fn a_buffer_maps_at_least_its_length_past_its_offset() {
        let page = rustix::param::page_size();
        for len in [0, 1, page - 17, page - 16, page - 15, page, page + 1] {
            let b = Buffer::new(len, MALLOC_LIKE).unwrap();
            assert!(
                b.map_len >= len + MALLOC_OFFSET && b.map_len >= page,
                "{len}"
            );
            assert_eq!(b.map_len % page, 0);
        }
    }

    #[test]
    fn plain_buffers_report_no_huge_pages_requested() {
        let b = Buffer::new(4096, BufferOptions::default()).unwrap();
        assert_eq!(b.huge_pages().unwrap().source, HugePageSource::NotRequested);
    }
}
