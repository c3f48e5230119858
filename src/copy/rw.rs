//! read/write: the reference path that works for every pair of
//! descriptors, and where every faster mechanism falls back to.

use std::io;
use std::os::fd::BorrowedFd;

use super::{Copier, CopyError, Side, count};
use crate::wait::{read, write_all};

impl Copier {
    /// Copies by read/write until the input ends or the limit is reached,
    /// after writing out what an interrupted splice left in the
    /// intermediate pipe. Returns how many bytes it read from `src`.
    pub(super) fn read_write(
        &mut self,
        src: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        moved: &mut u64,
    ) -> Result<u64, CopyError> {
        let fail = |side, source, moved: &u64| CopyError {
            side,
            moved: *moved,
            source,
        };
        // The buffer is taken out of `self` for the loop, so that `self`
        // can still answer `want`.
        let mut buf = self.take_buf().map_err(|e| fail(Side::Output, e, moved))?;
        let result = (|| {
            while self.pending > 0 {
                let Some(mid) = &self.mid else {
                    break; // discarded: nothing is pending any more
                };
                let len = self.pending.min(buf.len());
                let n =
                    read(&mid.read, &mut buf[..len]).map_err(|e| fail(Side::Input, e, moved))?;
                if n == 0 {
                    let lost = io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the intermediate pipe ended before the bytes spliced into it",
                    );
                    return Err(fail(Side::Input, lost, moved));
                }
                self.pending -= n;
                write_all(dst, &buf[..n], |n| count(moved, &self.progress, n))
                    .map_err(|e| fail(Side::Output, e, moved))?;
            }
            let mut read_total = 0u64;
            loop {
                let want = self.want(*moved, buf.len());
                if want == 0 {
                    return Ok(read_total);
                }
                let n = read(src, &mut buf[..want]).map_err(|e| fail(Side::Input, e, moved))?;
                if n == 0 {
                    return Ok(read_total);
                }
                read_total += n as u64;
                if let Some(inspect) = &mut self.inspector {
                    inspect(&buf[..n]);
                }
                write_all(dst, &buf[..n], |n| count(moved, &self.progress, n))
                    .map_err(|e| fail(Side::Output, e, moved))?;
            }
        })();
        self.buf = Some(buf);
        result
    }
}
