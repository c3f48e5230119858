//! read/write: the reference path that works for every pair of
//! descriptors, and where every faster mechanism falls back to.

use std::io;
use std::os::fd::BorrowedFd;
use std::sync::Arc;

use super::records::{RecordWriter, recv_record, write_all_or_records};
use super::{Copier, CopyError, Records, Side, count};
use crate::wait::read;

impl Copier {
    /// Copies by read/write until the input ends or the limit is reached,
    /// after writing out what an interrupted splice left in the
    /// intermediate pipe. Returns how many bytes it read from `src`.
    /// A record socket at either end ([`Records`]) is read a whole record
    /// at a time, and written in records it takes.
    pub(super) fn read_write(
        &mut self,
        src: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        moved: &mut u64,
        records: Records,
    ) -> Result<u64, CopyError> {
        let fail = |side, source, moved: &u64| CopyError {
            side,
            moved: *moved,
            source,
        };
        // The buffers are taken out of `self` for the loop, so that `self`
        // can still answer `want`.
        let mut buf = self.take_buf().map_err(|e| fail(Side::Output, e, moved))?;
        let mut record = std::mem::take(&mut self.record_buf);
        let progress = Arc::clone(&self.progress);
        let mut writer = records.output.then(RecordWriter::default);
        let mut put = |data: &[u8], moved: &mut u64| {
            write_all_or_records(&mut writer, dst, data, |n| count(moved, &progress, n))
        };
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
                put(&buf[..n], moved).map_err(|e| fail(Side::Output, e, moved))?;
            }
            let mut read_total = 0u64;
            loop {
                let want = self.want(*moved, buf.len());
                if want == 0 {
                    return Ok(read_total);
                }
                let data = if records.input {
                    let n =
                        recv_record(src, &mut record).map_err(|e| fail(Side::Input, e, moved))?;
                    &record[..n]
                } else {
                    let n = read(src, &mut buf[..want]).map_err(|e| fail(Side::Input, e, moved))?;
                    &buf[..n]
                };
                if data.is_empty() {
                    return Ok(read_total);
                }
                read_total += data.len() as u64;
                if let Some(inspect) = &mut self.inspector {
                    inspect(data);
                }
                put(data, moved).map_err(|e| fail(Side::Output, e, moved))?;
            }
        })();
        self.buf = Some(buf);
        self.record_buf = record;
        result
    }
}
