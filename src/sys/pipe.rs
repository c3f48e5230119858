//! Pipes and their capacity.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
use rustix::pipe::PipeFlags;

use crate::units::Size;

/// The largest pipe size an unprivileged process may ask for.
pub(crate) const PIPE_MAX_SIZE_PATH: &str = "/proc/sys/fs/pipe-max-size";

/// The two ends of a pipe made by [`pipe`].
#[derive(Debug)]
pub struct PipePair {
    /// The end data is read from.
    pub read: OwnedFd,
    /// The end data is written to.
    pub write: OwnedFd,
}

/// `pipe2(fds, O_CLOEXEC)`: creates a pipe whose ends are closed on `exec`.
///
/// ```
/// use std::io::{Read, Write};
///
/// let p = pipespeed::sys::pipe()?;
/// let (mut r, mut w) = (std::fs::File::from(p.read), std::fs::File::from(p.write));
/// w.write_all(b"through the kernel")?;
/// drop(w); // the reader then sees the end
/// let mut out = String::new();
/// r.read_to_string(&mut out)?;
/// assert_eq!(out, "through the kernel");
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # References
///  - [pipe(2)](https://man7.org/linux/man-pages/man2/pipe.2.html)
#[doc(alias = "pipe2")]
pub fn pipe() -> io::Result<PipePair> {
    let (read, write) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC)?;
    Ok(PipePair { read, write })
}

/// `fcntl(fd, F_GETPIPE_SZ)`: the capacity of the pipe `fd` refers to.
///
/// ```
/// use pipespeed::sys::{fcntl_getpipe_size, pipe};
///
/// let p = pipe()?;
/// // 16 pages by default; fewer once the user's pipe budget is spent.
/// let size = fcntl_getpipe_size(&p.read)?;
/// assert!(size >= 4096, "{size}");
/// // Both ends share one pipe, and so one capacity.
/// assert_eq!(fcntl_getpipe_size(&p.write)?, size);
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # References
///  - [fcntl(2)](https://man7.org/linux/man-pages/man2/fcntl.2.html)
pub fn fcntl_getpipe_size(fd: impl AsFd) -> io::Result<usize> {
    Ok(rustix::pipe::fcntl_getpipe_size(fd)?)
}

/// `fcntl(fd, F_SETPIPE_SZ, size)`: asks for a pipe capacity of `size`
/// bytes and returns the capacity granted, which the kernel rounds up to a
/// power-of-two number of pages.
///
/// A refusal is reported with its cause: above
/// `/proc/sys/fs/pipe-max-size` (EPERM without `CAP_SYS_RESOURCE`, which
/// sandboxes drop even for root), the per-user pipe budget (EPERM too),
/// smaller than the data already in the pipe (EBUSY), or not a pipe.
///
/// ```
/// use pipespeed::sys::{fcntl_getpipe_size, fcntl_setpipe_size, pipe};
///
/// let p = pipe()?;
/// // 12 KiB is three pages, rounded up to four.
/// assert_eq!(fcntl_setpipe_size(&p.write, 12 * 1024)?, 16 * 1024);
/// assert_eq!(fcntl_getpipe_size(&p.read)?, 16 * 1024);
/// // Not a pipe: an error that says so.
/// let file = tempfile::tempfile()?;
/// let err = fcntl_setpipe_size(&file, 4096).unwrap_err();
/// assert!(err.to_string().starts_with("cannot set pipe size to 4KiB: not a pipe"), "{err}");
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # References
///  - [fcntl(2)](https://man7.org/linux/man-pages/man2/fcntl.2.html)
///  - [pipe(7)](https://man7.org/linux/man-pages/man7/pipe.7.html)
pub fn fcntl_setpipe_size(fd: impl AsFd, size: usize) -> io::Result<usize> {
    rustix::pipe::fcntl_setpipe_size(fd, size).map_err(|errno| {
        let err = io::Error::from(errno);
        let cause = match errno {
            rustix::io::Errno::PERM => match pipe_max_size() {
                Ok(max) if size > max => format!(
                    "exceeds {PIPE_MAX_SIZE_PATH} ({}) and the process may not go beyond it",
                    Size(max as u64)
                ),
                _ => format!("refused by the kernel ({err}): the user's pipe budget may be spent"),
            },
            rustix::io::Errno::BUSY => "the pipe holds more data than that".to_string(),
            rustix::io::Errno::BADF | rustix::io::Errno::INVAL => {
                format!("not a pipe, or not a size the kernel accepts ({err})")
            }
            _ => err.to_string(),
        };
        io::Error::new(
            err.kind(),
            format!("cannot set pipe size to {}: {cause}", Size(size as u64)),
        )
    })
}

/// The largest capacity an unprivileged process may give a pipe, read from
/// `/proc/sys/fs/pipe-max-size`.
///
/// ```
/// use pipespeed::sys::{fcntl_setpipe_size, pipe, pipe_max_size};
///
/// let max = pipe_max_size()?; // 1 MiB unless the administrator changed it
/// assert!(max >= 4096);
/// // Beyond it, the kernel refuses (without CAP_SYS_RESOURCE) or grants
/// // more than the limit (with it, which sandboxes drop even for root).
/// match fcntl_setpipe_size(&pipe()?.write, 2 * max) {
///     Err(e) => assert!(e.to_string().contains("pipe-max-size"), "{e}"),
///     Ok(granted) => assert!(granted > max),
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn pipe_max_size() -> io::Result<usize> {
    let text = std::fs::read_to_string(PIPE_MAX_SIZE_PATH)?;
    text.trim().parse().map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{PIPE_MAX_SIZE_PATH} holds {text:?}, not a number"),
        )
    })
}

/// Sets or clears `O_NONBLOCK` on the open file description behind `fd`,
/// and so for every descriptor sharing it (a pipe end inherited from a
/// shell is shared with the shell).
pub fn set_nonblocking(fd: impl AsFd, nonblocking: bool) -> io::Result<()> {
    let fd = fd.as_fd();
    let mut flags = fcntl_getfl(fd)?;
    flags.set(OFlags::NONBLOCK, nonblocking);
    fcntl_setfl(fd, flags)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_size_refusal_names_the_limit() {
        let p = pipe().unwrap();
        let max = pipe_max_size().unwrap();
        match fcntl_setpipe_size(&p.write, max * 4) {
            // Processes with CAP_SYS_RESOURCE may go past the limit.
            Ok(granted) => assert!(granted >= max * 4),
            Err(err) => {
                let msg = err.to_string();
                assert!(msg.contains("cannot set pipe size"), "{msg}");
                assert!(msg.contains(PIPE_MAX_SIZE_PATH), "{msg}");
            }
        }
    }

    #[test]
    fn nonblocking_empty_pipe_reports_would_block() {
        let p = pipe().unwrap();
        set_nonblocking(&p.read, true).unwrap();
        let mut buf = [0u8; 8];
        let err = rustix::io::read(&p.read, &mut buf).unwrap_err();
        assert_eq!(err, rustix::io::Errno::AGAIN);
    }
}
