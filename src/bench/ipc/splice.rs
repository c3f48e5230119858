//! The zero-copy ends of `pipe-splice` and `io-uring-splice`: the
//! ladder's vmsplice double buffer in, splice (or `IORING_OP_SPLICE`) to
//! `/dev/null` out.

use std::io;
use std::os::fd::OwnedFd;

use rustix::fs::{MemfdFlags, Mode, OFlags};

use super::traits::{Receiver, Sender, Sink, named};
use crate::buf::BufferOptions;
use crate::double_buffer::{DoubleBuffer, Layout, Reuse};
use crate::sys::SpliceFlags;
use crate::sys::uring::Uring;
use crate::wait::Wait;

/// The ladder's zero-copy sender: vmsplice of one half of a
/// [`DoubleBuffer`] per message, the pipe sized to one half (a message
/// rounded up to whole pages), so that a half is refilled only once the
/// receiver has taken it.
pub(crate) struct VmspliceSender {
    double: DoubleBuffer,
    size: usize,
    /// Halves not yet filled with `X`.
    fresh: usize,
}

impl VmspliceSender {
    /// The sender into the pipe `fd`, for messages of `size`.
    pub(crate) fn new(fd: OwnedFd, size: usize) -> io::Result<VmspliceSender> {
        let page = rustix::param::page_size();
        let half = size.checked_next_multiple_of(page).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a {size}-byte message is more than whole pages can count"),
            )
        })?;
        let double = DoubleBuffer::new(
            fd,
            half,
            BufferOptions::default(),
            Layout::Separate,
            Reuse::AfterConsumed,
            false,
        )
        .map_err(|e| match e.kind() {
            // The kernel grants only a power of two pages: a message of
            // another number of pages cannot fill the pipe exactly.
            io::ErrorKind::InvalidInput | io::ErrorKind::PermissionDenied => {
                io::Error::new(io::ErrorKind::Unsupported, e.to_string())
            }
            _ => e,
        })?;
        Ok(VmspliceSender {
            double,
            size,
            fresh: 2,
        })
    }
}

impl Sender for VmspliceSender {
    fn buffer(&mut self) -> &mut [u8] {
        let half = self.double.next_half();
        if self.fresh > 0 {
            // A page never written is the shared zero page: vmsplicing it
            // would pass the same page over and over.
            half.fill(b'X');
            self.fresh -= 1;
        }
        &mut half[..self.size]
    }

    fn send(&mut self, len: usize) -> io::Result<()> {
        self.double.splice_next(len, Wait::Block)
    }

    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Splices what arrives into `/dev/null` (through io_uring when it has a
/// ring); asked for the bytes, into a memfd and back with `pread`.
pub(crate) struct SpliceReceiver {
    fd: OwnedFd,
    null: OwnedFd,
    size: usize,
    uring: Option<Uring>,
    checked: Option<(OwnedFd, Vec<u8>)>,
}

impl SpliceReceiver {
    /// The receiver from the pipe `fd`, splicing up to `size` at a time,
    /// through `uring` if any.
    pub(crate) fn new(
        fd: OwnedFd,
        size: usize,
        uring: Option<Uring>,
    ) -> io::Result<SpliceReceiver> {
        let null = rustix::fs::open("/dev/null", OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
        Ok(SpliceReceiver {
            fd,
            null,
            size,
            uring,
            checked: None,
        })
    }
}

impl Receiver for SpliceReceiver {
    fn recv(&mut self, sink: Sink<'_>) -> io::Result<usize> {
        let Some(sink) = sink else {
            return match &mut self.uring {
                Some(ring) => ring.splice(&self.fd, &self.null, None, self.size),
                None => crate::sys::splice(
                    &self.fd,
                    None,
                    &self.null,
                    None,
                    self.size,
                    SpliceFlags::empty(),
                ),
            }
            .map_err(|e| named("splice", e));
        };
        let (file, buf) = match &mut self.checked {
            Some(checked) => checked,
            checked => {
                let file = rustix::fs::memfd_create("pipespeed-ipc", MemfdFlags::CLOEXEC)?;
                checked.insert((file, vec![0; self.size]))
            }
        };
        let mut at = 0u64;
        let n = match &mut self.uring {
            Some(ring) => ring.splice(&self.fd, file, Some(0), self.size)?,
            None => crate::sys::splice(
                &self.fd,
                None,
                &*file,
                Some(&mut at),
                self.size,
                SpliceFlags::empty(),
            )?,
        };
        let read = rustix::io::pread(&*file, &mut buf[..n], 0)?;
        if read != n {
            return Err(io::Error::other(format!(
                "read back {read} of the {n} bytes spliced into a memfd"
            )));
        }
        if n > 0 {
            sink(&buf[..n])?;
        }
        Ok(n)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_message_too_large_to_count_in_pages_is_refused() {
        let p = crate::sys::pipe().unwrap();
        let err = VmspliceSender::new(p.write, usize::MAX).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
    }
}
