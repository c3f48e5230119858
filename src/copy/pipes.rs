//! How far a copy enlarges its pipes (the module documentation of
//! [`crate::copy`] gives the rules): the one place that decides.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use super::Copier;
use crate::sys::{FdInfo, FdKind, PipePair, fcntl_getpipe_size, fcntl_setpipe_size};
use crate::units::KIB;

/// How many bytes a source of unknown length must deliver before the copy
/// enlarges its pipes: a default pipe's worth (16 pages), so that a short
/// input never costs the user more than pipes of the default size.
pub const SHOWN_LARGE: u64 = 64 * KIB;

/// The most a file-to-file copy's intermediate pipe holds: GNU cat 9.12's
/// pipe size. On ext4, 1 GiB copies after a sync ran alike through pipes
/// of 256 KiB, 512 KiB and 1 MiB (2.2-2.7 GiB/s), and slower by the
/// kernel's own copy_file_range (1.3-2.2), which splices through 64 KiB
/// (docs/cat.md); the smaller pipe costs less of the user's pipe budget.
pub(super) const FILE_PIPE: u64 = 512 * KIB;

/// A copy's two ends, with what they are.
pub(super) type Ends<'a> = [(BorrowedFd<'a>, FdKind); 2];

impl Copier {
    /// Sizes the pipes as a copy starts, from `ahead`, the bytes a regular
    /// file has left ([`bytes_ahead`]): enlarged at once to hold them, or,
    /// for a source of unknown length, not yet (the copy pauses after
    /// [`SHOWN_LARGE`] bytes). `streamed`: bytes the destination took from
    /// this copier's copies before, one after the other; once that is
    /// [`SHOWN_LARGE`], the stream is large whatever this copy holds, and
    /// the pipes are enlarged as far as they may (`cat` of 10,000 files of
    /// 1-64 KiB into a pipe: GNU cat 9.12 sets its pipes to 512 KiB at its
    /// first splice, and a stdout left at 64 KiB woke the reader
    /// for every file or two).
    pub(super) fn size_pipes_at_start(
        &mut self,
        ends: Ends<'_>,
        ahead: Option<u64>,
        streamed: u64,
    ) {
        self.pipe_goal = 0;
        self.pause_at = None;
        if let Some(size) = self.options.pipe_size {
            let [_, (dst, kind)] = ends;
            if kind == FdKind::Pipe {
                set_pipe(dst, size);
            }
            return;
        }
        if !self.options.grow_pipes {
            return;
        }
        let limit = self.options.limit.unwrap_or(u64::MAX);
        match ahead {
            _ if streamed >= SHOWN_LARGE && self.options.limit.is_none() => {
                self.fit_pipes(ends, u64::MAX);
            }
            Some(bytes) => self.fit_pipes(ends, bytes.min(limit)),
            None if limit > SHOWN_LARGE => self.pause_at = Some(SHOWN_LARGE),
            None => {}
        }
    }

    /// Whether the copy stopped where it was to pause (`moved` bytes
    /// written), in which case the pipes are now enlarged to hold what the
    /// limit leaves (all they may, without one) and the copy goes on.
    /// Nothing waits in the intermediate pipe then: a mechanism is done
    /// only once it is empty.
    pub(super) fn size_pipes_at_pause(&mut self, ends: Ends<'_>, moved: u64) -> bool {
        if self.pause_at != Some(moved) {
            return false;
        }
        self.pause_at = None;
        let limit = self.options.limit.unwrap_or(u64::MAX);
        self.fit_pipes(ends, limit.saturating_sub(moved));
        true
    }

    /// Enlarges the pipes among `ends`, and the intermediate pipe (made
    /// already or later in this copy), to hold `bytes`. The destination
    /// and the intermediate pipe are asked their size only until it is
    /// known to be enough (once per copier, for cat's stdout, not once per
    /// file).
    fn fit_pipes(&mut self, ends: Ends<'_>, bytes: u64) {
        let max = self.pipe_max_size();
        // (The destination's device and inode: set as the copy began.)
        let dst = self.stream.map(|(id, _)| id);
        let [(src, src_kind), (dst_fd, dst_kind)] = ends;
        let bytes = match (src_kind, dst_kind) {
            (FdKind::Regular, FdKind::Regular) => bytes.min(FILE_PIPE),
            _ => bytes,
        };
        self.pipe_goal = bytes;
        if src_kind == FdKind::Pipe {
            grow_pipe(src, bytes, max);
        }
        if dst_kind == FdKind::Pipe {
            let known = match (self.dst_size, dst) {
                (Some((id, size)), Some(dst)) if id == dst => size,
                _ => 0,
            };
            let now = grow_known(dst_fd, bytes, max, known);
            self.dst_size = dst.map(|dst| (dst, now));
        }
        if let Some(mid) = &self.mid {
            self.mid_size = grow_known(mid.write.as_fd(), bytes, max, self.mid_size);
        }
    }

    /// The intermediate pipe, taken out of `self` (made on first use, and
    /// then enlarged as far as this copy's pipes are); the caller puts it
    /// back.
    pub(super) fn take_mid(&mut self) -> io::Result<PipePair> {
        if let Some(pair) = self.mid.take() {
            return Ok(pair);
        }
        let pair = crate::sys::pipe()?;
        self.mid_size = 0;
        match self.options.pipe_size {
            Some(size) => set_pipe(pair.write.as_fd(), size),
            None => {
                let max = self.pipe_max_size();
                self.mid_size = grow_known(pair.write.as_fd(), self.pipe_goal, max, 0);
            }
        }
        Ok(pair)
    }

    /// `/proc/sys/fs/pipe-max-size`, read once per copier (0: unknown).
    fn pipe_max_size(&mut self) -> usize {
        *self
            .pipe_max_size
            .get_or_insert_with(|| crate::sys::pipe_max_size().unwrap_or(0))
    }
}

/// What is left to read of a regular file from its position: `None` for
/// anything else, and for files whose size says 0 (procfs), whose length
/// is known only once read.
pub(crate) fn bytes_ahead(fd: BorrowedFd<'_>, info: &FdInfo) -> Option<u64> {
    if info.kind != FdKind::Regular || info.size == 0 {
        return None;
    }
    let offset = rustix::fs::seek(fd, rustix::fs::SeekFrom::Current(0)).unwrap_or(0);
    Some(info.size.saturating_sub(offset))
}

/// Enlarges the pipe behind `fd` to hold `bytes`, at most `max` (nothing
/// when `max` is 0, unknown); the kernel rounds the size up to a
/// power-of-two number of pages. A pipe that holds that much already is
/// left alone, and a refusal (the user's pipe budget is spent) only costs
/// speed, so it is ignored.
pub(crate) fn grow_pipe(fd: BorrowedFd<'_>, bytes: u64, max: usize) {
    grow_known(fd, bytes, max, 0);
}

/// [`grow_pipe`] of a pipe known to hold `known` bytes (0: not known):
/// nothing is asked of the kernel when that is enough. Returns what the
/// pipe holds now, as far as known (0: not known).
fn grow_known(fd: BorrowedFd<'_>, bytes: u64, max: usize, known: usize) -> usize {
    let size = bytes.min(max as u64) as usize;
    if size == 0 || known >= size {
        return known;
    }
    // Asked even when `known` says less: another process may have grown
    // a shared pipe, and setting less would shrink it.
    match fcntl_getpipe_size(fd) {
        Ok(now) if now < size => fcntl_setpipe_size(fd, size).unwrap_or(now),
        Ok(now) => now,
        Err(_) => 0,
    }
}

/// Sets the pipe behind `fd` to `size` ([`CopyOptions::pipe_size`]
/// says why a refusal is ignored).
///
/// [`CopyOptions::pipe_size`]: super::CopyOptions::pipe_size
fn set_pipe(fd: BorrowedFd<'_>, size: usize) {
    if fcntl_getpipe_size(fd).is_ok_and(|now| now != size) {
        let _ = fcntl_setpipe_size(fd, size);
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::{Seek, Write};

    use super::*;
    use crate::copy::{CopyOptions, Mechanism, SMALL_FILE};

    fn file_of(len: usize) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![b'x'; len]).unwrap();
        f.rewind().unwrap();
        f
    }

    /// A pipe that has delivered `len` bytes and ended.
    fn pipe_of(len: usize) -> File {
        let p = crate::sys::pipe().unwrap();
        let bytes = vec![b'y'; len];
        let w = p.write;
        std::thread::spawn(move || File::from(w).write_all(&bytes).unwrap());
        File::from(p.read)
    }

    /// The intermediate pipe's size after copying `src` to /dev/null.
    fn mid_size_after(src: File, options: CopyOptions) -> Option<usize> {
        let mut copier = Copier::new(options);
        let null = File::create("/dev/null").unwrap();
        copier.copy(&src, &null).unwrap();
        copier
            .mid
            .as_ref()
            .map(|mid| fcntl_getpipe_size(&mid.read).unwrap())
    }

    fn may_grow_to(size: usize) -> bool {
        let p = crate::sys::pipe().unwrap();
        // EPERM past the user's pipe budget or pipe-max-size: this
        // machine cannot, a skip said where cargo test shows it.
        let grown = fcntl_setpipe_size(&p.write, size).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                format!("cannot enlarge a pipe to {size} bytes here ({e}): growth not checked"),
            )
        });
        crate::sys::available("pipe_growth", grown).is_some()
    }

    #[test]
    fn the_intermediate_pipe_holds_what_the_data_needs() {
        let max = crate::sys::pipe_max_size().unwrap();
        let default = CopyOptions::default();
        // Small data leaves it as made: 64 KiB, less when the user's
        // budget is spent.
        let small = [
            mid_size_after(file_of(40_000), default),
            mid_size_after(pipe_of(60_000), default),
        ];
        for size in small {
            assert!(size.is_some_and(|s| s <= 64 * 1024), "{size:?}");
        }
        let no_growth = CopyOptions {
            grow_pipes: false,
            ..default
        };
        let size = mid_size_after(file_of(3 << 20), no_growth);
        assert!(size.is_some_and(|s| s <= 64 * 1024), "{size:?}");
        if may_grow_to(max) {
            assert_eq!(mid_size_after(file_of(200_000), default), Some(256 * 1024));
            assert_eq!(mid_size_after(file_of(3 << 20), default), Some(max));
            assert_eq!(mid_size_after(pipe_of(300_000), default), Some(max));
        }
    }

    #[test]
    fn a_stream_of_small_files_grows_the_pipes_as_a_large_file_does() {
        let max = crate::sys::pipe_max_size().unwrap();
        if !may_grow_to(max) {
            return;
        }
        // Files read and written (30,000 bytes), and spliced (40,000),
        // one after the other into one pipe: once 64 KiB have gone, the
        // stream is large.
        for len in [30_000, 40_000] {
            let out = crate::sys::pipe().unwrap();
            let reader = File::from(out.read);
            let reader = std::thread::spawn(move || {
                std::io::copy(&mut &reader, &mut std::io::sink()).unwrap()
            });
            let mut copier = Copier::new(CopyOptions::default());
            let (mut sizes, mut mechanisms) = (Vec::new(), Vec::new());
            for _ in 0..4 {
                let copied = copier.copy(file_of(len), &out.write).unwrap();
                sizes.push(fcntl_getpipe_size(&out.write).unwrap());
                mechanisms.push(copied.mechanism);
            }
            let mid = copier
                .mid
                .as_ref()
                .map(|m| fcntl_getpipe_size(&m.read).unwrap());
            drop(out.write);
            assert_eq!(reader.join().unwrap(), 4 * len as u64);
            // The first files leave the pipe as made; the one after 64
            // KiB finds it grown.
            assert_eq!(sizes[0], 64 * 1024, "{len}: {sizes:?}");
            assert_eq!(sizes[3], max, "{len}: {sizes:?}");
            // A small file in a large stream is spliced, as a large one.
            let first = if len > SMALL_FILE as usize {
                Mechanism::SplicePipe
            } else {
                Mechanism::ReadWrite
            };
            assert_eq!(mechanisms[0], first, "{len}");
            assert_eq!(mechanisms[3], Mechanism::SplicePipe, "{len}");
            assert_eq!(mid, Some(max), "{len}");
        }
    }

    #[test]
    fn no_intermediate_pipe_is_made_for_nothing() {
        let options = CopyOptions {
            force: Some(Mechanism::SplicePipe),
            limit: Some(0),
            ..CopyOptions::default()
        };
        assert_eq!(mid_size_after(file_of(100_000), options), None);
        // Nor for a file read from its end.
        let mut at_end = file_of(100_000);
        at_end.seek(std::io::SeekFrom::End(0)).unwrap();
        assert_eq!(mid_size_after(at_end, CopyOptions::default()), None);
    }
}
