//! pv's `-O`: zeros written to a regular file become holes, by seeking
//! over them instead of writing them.
//!
//! Only where a hole reads back as the zeros it stands for: past the end
//! the file had when the writer was made. Bytes the file already holds
//! there (a file opened without `O_TRUNC`, `1<>FILE`) are written over, zeros
//! or not; a file opened with `O_APPEND` is never seeked in (every write
//! goes to its end, so a seek would drop the zeros); anything that is not a
//! regular file is written as it is. At the end of each input, a file
//! whose last bytes were seeked over is extended to its length.

use std::io;
use std::os::fd::BorrowedFd;

use rustix::fs::{OFlags, SeekFrom, fcntl_getfl, fstat, ftruncate, seek};

use crate::sys::{FdKind, fd_info};
use crate::wait::write_all;

/// The stretch looked at as a whole: a block of zeros this long (at this
/// alignment in the file) is a hole, anything shorter is written.
pub(crate) const BLOCK: u64 = 4096;

/// Writes to one output, seeking over blocks of zeros.
#[derive(Debug)]
pub(crate) struct SparseWriter {
    /// Where the next byte goes.
    at: u64,
    /// The file's length when the writer was made: below it, every byte
    /// is written.
    kept: u64,
    /// Whether the last stretch was seeked over, not written: the file
    /// may be shorter than `at`.
    hole_at_end: bool,
}

impl SparseWriter {
    /// A writer for `output` when it is a regular file opened without
    /// `O_APPEND` (`None`: write it as it is).
    pub(crate) fn for_output(output: BorrowedFd<'_>) -> Option<SparseWriter> {
        let info = fd_info(output).ok()?;
        if info.kind != FdKind::Regular {
            return None;
        }
        if fcntl_getfl(output).ok()?.contains(OFlags::APPEND) {
            return None;
        }
        let at = seek(output, SeekFrom::Current(0)).ok()?;
        let kept = u64::try_from(fstat(output).ok()?.st_size).ok()?;
        Some(SparseWriter {
            at,
            kept,
            hole_at_end: false,
        })
    }

    /// Writes `bytes`, seeking over the blocks of zeros that lie past the
    /// kept length; `written` is told every stretch moved (written or
    /// seeked over).
    pub(crate) fn write_all(
        &mut self,
        output: BorrowedFd<'_>,
        bytes: &[u8],
        mut written: impl FnMut(usize),
    ) -> io::Result<()> {
        let mut rest = bytes;
        while !rest.is_empty() {
            // Up to the next block boundary of the file.
            let to_boundary = (BLOCK - self.at % BLOCK) as usize;
            let (run, hole) = self.next_run(rest, to_boundary);
            if hole {
                let end = self
                    .at
                    .checked_add(run as u64)
                    .and_then(|end| i64::try_from(end).ok())
                    .ok_or_else(|| io::Error::from_raw_os_error(libc::EFBIG))?;
                seek(output, SeekFrom::Current(run as i64))?;
                self.at = end as u64;
                self.hole_at_end = true;
            } else {
                write_all(output, &rest[..run], |_| {})?;
                self.at += run as u64;
                self.hole_at_end = false;
            }
            written(run);
            rest = &rest[run..];
        }
        Ok(())
    }

    /// The length of the next run of `rest` that is all holes or all
    /// writes, and which: whole blocks of zeros past the kept length are
    /// holes; the first block ends after `to_boundary` bytes.
    fn next_run(&self, rest: &[u8], to_boundary: usize) -> (usize, bool) {
        let mut len = 0;
        let mut hole = None;
        let mut block = to_boundary;
        while len < rest.len() {
            let end = (len + block).min(rest.len());
            let whole = end - len == block;
            let this_hole = whole
                && self.at + len as u64 >= self.kept
                && rest[len..end].iter().all(|&b| b == 0);
            match hole {
                None => hole = Some(this_hole),
                Some(h) if h != this_hole => break,
                Some(_) => {}
            }
            len = end;
            block = BLOCK as usize;
        }
        (len, hole.unwrap_or(false))
    }

    /// The end of an input: a file whose last bytes were seeked over is
    /// made as long as what was copied (the hole at its end becomes part
    /// of it).
    pub(crate) fn finish(&mut self, output: BorrowedFd<'_>) -> io::Result<()> {
        if self.hole_at_end {
            let len = u64::try_from(fstat(output)?.st_size).unwrap_or(0);
            if len < self.at {
                ftruncate(output, self.at)?;
            }
            self.hole_at_end = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;

    use super::*;

    fn written(file: &mut File) -> Vec<u8> {
        let mut out = Vec::new();
        file.rewind().unwrap();
        file.read_to_end(&mut out).unwrap();
        out
    }

    fn through(file: &mut File, chunks: &[&[u8]]) -> u64 {
        let mut w = SparseWriter::for_output(file.as_fd()).expect("a regular file");
        let mut moved = 0u64;
        for chunk in chunks {
            w.write_all(file.as_fd(), chunk, |n| moved += n as u64)
                .unwrap();
        }
        w.finish(file.as_fd()).unwrap();
        moved
    }

    #[test]
    fn zeros_become_holes_and_read_back_as_zeros() {
        let mut f = tempfile::tempfile().unwrap();
        let mut data = vec![0u8; 1 << 20];
        data[100] = 7;
        data[(1 << 20) - 1] = 9;
        assert_eq!(through(&mut f, &[&data]), data.len() as u64);
        assert!(written(&mut f) == data);
        // Fewer blocks than bytes: most of it is a hole (where the
        // filesystem has holes: tmpfs and ext4 do).
        let meta = f.metadata().unwrap();
        assert!(
            meta.blocks() * 512 < data.len() as u64 / 2,
            "{} blocks",
            meta.blocks()
        );
    }

    #[test]
    fn zeros_at_the_end_make_the_file_its_length() {
        let mut f = tempfile::tempfile().unwrap();
        let mut data = vec![0u8; 3 * BLOCK as usize + 5];
        data[0] = 1;
        through(&mut f, &[&data[..10], &data[10..]]);
        assert_eq!(f.metadata().unwrap().len(), data.len() as u64);
        assert!(written(&mut f) == data);
    }

    #[test]
    fn bytes_the_file_held_are_written_over_with_zeros() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![0xff; 3 * BLOCK as usize]).unwrap();
        f.rewind().unwrap();
        let zeros = vec![0u8; 2 * BLOCK as usize];
        through(&mut f, &[&zeros]);
        let mut expected = zeros.clone();
        expected.extend(vec![0xff; BLOCK as usize]);
        assert!(written(&mut f) == expected);
    }

    #[test]
    fn unaligned_starts_and_short_zero_runs_are_written() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"abc").unwrap();
        let mut data = vec![0u8; 2 * BLOCK as usize];
        data[BLOCK as usize + 1] = 3;
        through(&mut f, &[&data, b"xyz", &[0u8; 7]]);
        let mut expected = b"abc".to_vec();
        expected.extend(&data);
        expected.extend(b"xyz");
        expected.extend([0u8; 7]);
        assert!(written(&mut f) == expected);
    }

    #[test]
    fn appending_files_and_pipes_are_not_seeked_in() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").unwrap();
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        assert!(SparseWriter::for_output(f.as_fd()).is_none());
        let p = crate::sys::pipe().unwrap();
        assert!(SparseWriter::for_output(p.write.as_fd()).is_none());
    }
}
