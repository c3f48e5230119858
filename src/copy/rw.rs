//! read/write: the reference path that works for every pair of
//! descriptors, and where every faster mechanism falls back to.

use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Copier, CopyError, Side};
use crate::wait::{read, write_all};

impl Copier {
    /// Copies by read/write until the input ends or the limit is reached,
    /// after writing out what an interrupted splice left in the
    /// intermediate pipe.
    pub(super) fn read_write(
        &mut self,
        src: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        moved: &mut u64,
    ) -> Result<(), CopyError> {
        let fail = |side, source, moved: &u64| CopyError {
            side,
            moved: *moved,
            source,
        };
        // The buffer is taken out of `self` for the loop, so that `self`
        // can still answer `want`.
        let mut buf = match self.buf() {
            Ok(_) => self.buf.take().expect("made above"),
            Err(err) => return Err(fail(Side::Input, err, moved)),
        };
        let result = (|| {
            while self.pending > 0 {
                let mid = self.mid.as_ref().expect("bytes are pending in it");
                let len = self.pending.min(buf.len());
                let n =
                    read(&mid.read, &mut buf[..len]).map_err(|e| fail(Side::Input, e, moved))?;
                self.pending -= n;
                write_all(dst, &buf[..n], |n| count(moved, &self.progress, n))
                    .map_err(|e| fail(Side::Output, e, moved))?;
            }
            loop {
                let want = self.want(*moved, buf.len());
                if want == 0 {
                    return Ok(());
                }
                let n = read(src, &mut buf[..want]).map_err(|e| fail(Side::Input, e, moved))?;
                if n == 0 {
                    return Ok(());
                }
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

/// Counts `n` more bytes written into the copy's total and the copier's
/// progress.
fn count(moved: &mut u64, progress: &AtomicU64, n: usize) {
    *moved += n as u64;
    progress.fetch_add(n as u64, Ordering::Relaxed);
}
