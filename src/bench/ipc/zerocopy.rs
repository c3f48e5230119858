//! The `tcp-zerocopy` sender: `send(MSG_ZEROCOPY)` from a few buffers in
//! turn, each refilled only once the kernel has said on the error queue
//! that every send from it completed.

use std::io;
use std::os::fd::OwnedFd;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::io::Errno;
use rustix::net::SendFlags;

use super::traits::{Sender, message_buffer, named};
use crate::buf::Buffer;
use crate::sys::zerocopy::{MSG_ZEROCOPY, set_so_zerocopy, zerocopy_completed};

/// Buffers sent from in turn: while the kernel holds some, the sender
/// fills another.
const BUFFERS: usize = 4;

/// How long a completion may take before the sender gives up.
const COMPLETION_TIMEOUT: Duration = Duration::from_secs(10);

/// Sends with `MSG_ZEROCOPY`, the buffers' discipline kept by the
/// completions.
pub(crate) struct ZerocopySender {
    fd: OwnedFd,
    bufs: Vec<Buffer>,
    /// The buffer of the next message.
    next: usize,
    /// The numbers of each buffer's sends not yet completed. Completions
    /// may come out of order, so each send is struck off by itself.
    pending: [Vec<u32>; BUFFERS],
    /// The number the kernel gives the next zero-copy send.
    sends: u32,
}

impl ZerocopySender {
    /// A sender on the TCP socket `fd`, for messages of `size`; a kernel
    /// without `SO_ZEROCOPY` is an [`io::ErrorKind::Unsupported`] error.
    pub(crate) fn new(fd: OwnedFd, size: usize) -> io::Result<ZerocopySender> {
        set_so_zerocopy(&fd)?;
        Ok(ZerocopySender {
            fd,
            bufs: (0..BUFFERS)
                .map(|_| message_buffer(size, b'X'))
                .collect::<io::Result<_>>()?,
            next: 0,
            pending: Default::default(),
            sends: 0,
        })
    }

    /// Reads the completions there are; with `wait`, waits for one first.
    fn reap(&mut self, wait: bool) -> io::Result<()> {
        if wait {
            let timeout = Timespec::try_from(COMPLETION_TIMEOUT).map_err(io::Error::other)?;
            let mut fds = [PollFd::new(&self.fd, PollFlags::ERR)];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) => {
                    return Err(io::Error::other(format!(
                        "no MSG_ZEROCOPY completion within {} s",
                        COMPLETION_TIMEOUT.as_secs()
                    )));
                }
                Ok(_) | Err(Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        while let Some(done) = zerocopy_completed(&self.fd)? {
            let range = done.first..=done.last;
            for sends in &mut self.pending {
                sends.retain(|n| !range.contains(n));
            }
        }
        Ok(())
    }
}

impl Sender for ZerocopySender {
    fn buffer(&mut self) -> &mut [u8] {
        // The kernel may still read this buffer: wait for its sends. An
        // error here shows at the next send, which reaps again.
        while !self.pending[self.next].is_empty() {
            if self.reap(true).is_err() {
                break;
            }
        }
        &mut self.bufs[self.next]
    }

    fn send(&mut self, len: usize) -> io::Result<()> {
        while !self.pending[self.next].is_empty() {
            self.reap(true)?;
        }
        let slot = self.next;
        let mut done = 0;
        while done < len {
            let flags = MSG_ZEROCOPY | SendFlags::NOSIGNAL;
            match rustix::net::send(&self.fd, &self.bufs[slot][done..len], flags) {
                Ok(n) => {
                    done += n;
                    self.pending[slot].push(self.sends);
                    self.sends = self.sends.wrapping_add(1);
                }
                Err(Errno::INTR) => {}
                // With sends awaiting completion: too many of them
                // (optmem_max) or their pinned pages: each completion
                // frees some. With none, only the locked-memory limit
                // refuses: no completion will ever come.
                Err(Errno::NOBUFS) if self.pending.iter().any(|s| !s.is_empty()) => {
                    self.reap(true)?
                }
                Err(Errno::NOBUFS) => return Err(memlock_too_small(len)),
                Err(e) => return Err(named("send", e.into())),
            }
        }
        self.next = (self.next + 1) % BUFFERS;
        self.reap(false)
    }

    /// Waits until the kernel is done with every buffer: they may be
    /// freed only then (freed early, the heap gave their bytes to others
    /// before loopback delivery copied them, and the receiver saw those).
    fn finish(&mut self) -> io::Result<()> {
        while self.pending.iter().any(|sends| !sends.is_empty()) {
            self.reap(true)?;
        }
        Ok(())
    }
}

/// The refusal of a `MSG_ZEROCOPY` send when nothing else is pinned:
/// its pages count against `RLIMIT_MEMLOCK` (unless the process has
/// `CAP_IPC_LOCK`), and a message larger than the limit can never be
/// sent so (`ENOBUFS`, from `mm_account_pinned_pages`): this machine
/// cannot run it, as an [`io::ErrorKind::Unsupported`] error.
///
/// # References
///  - [MSG_ZEROCOPY](https://docs.kernel.org/networking/msg_zerocopy.html), "Limits"
fn memlock_too_small(len: usize) -> io::Error {
    use rustix::process::{Resource, getrlimit};
    let limit = match getrlimit(Resource::Memlock).current {
        Some(bytes) => format!("{}", crate::units::Size(bytes)),
        None => "unlimited".to_string(),
    };
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "send: the locked-memory limit (RLIMIT_MEMLOCK {limit}) is too small for \
             MSG_ZEROCOPY sends of {} (ENOBUFS): raise it with ulimit -l",
            crate::units::Size(len as u64)
        ),
    )
}

impl Drop for ZerocopySender {
    fn drop(&mut self) {
        // As finish; a sender that failed may leave early, after a wait.
        while self.pending.iter().any(|sends| !sends.is_empty()) {
            if self.reap(true).is_err() {
                break;
            }
        }
    }
}
