//! POSIX message queues, through libc's calls (rustix has none). On Linux
//! a queue descriptor is a file descriptor (mq_overview(7)): an
//! [`OwnedFd`], passed to a child and closed like any other.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// Where Linux says how large a message may be.
pub const MSGSIZE_MAX: &str = "/proc/sys/fs/mqueue/msgsize_max";
/// Where Linux says how many messages a queue may hold.
pub(crate) const MSG_MAX: &str = "/proc/sys/fs/mqueue/msg_max";

/// `mq_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600, &attr)`
/// with room for `max_messages` messages of `msg_size` bytes, then
/// `mq_unlink(name)`: the queue lives as long as a descriptor does.
///
/// # References
///  - [mq_open(3)](https://man7.org/linux/man-pages/man3/mq_open.3.html)
pub(crate) fn mq_open_private(
    name: &str,
    max_messages: usize,
    msg_size: usize,
) -> io::Result<OwnedFd> {
    let cname = CString::new(name).map_err(io::Error::other)?;
    // SAFETY: mq_attr is plain data; all zero is a valid value of it.
    let mut attr: libc::mq_attr = unsafe { std::mem::zeroed() };
    attr.mq_maxmsg = max_messages as libc::c_long;
    attr.mq_msgsize = msg_size as libc::c_long;
    let flags = libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC;
    // SAFETY: `cname` is a NUL-terminated string and `attr` a valid
    // mq_attr, both alive for the call; the mode is passed as the
    // variadic argument mq_open reads with O_CREAT.
    let mqd = unsafe {
        libc::mq_open(
            cname.as_ptr(),
            flags,
            0o600 as libc::mode_t,
            &mut attr as *mut libc::mq_attr,
        )
    };
    if mqd == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: on Linux an mqd_t is a file descriptor that mq_open just
    // opened and nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(mqd) };
    // SAFETY: `cname` is a NUL-terminated string alive for the call.
    if unsafe { libc::mq_unlink(cname.as_ptr()) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// `mq_timedsend(fd, msg, len, 0, now + within)`: one message, whole;
/// waiting longer than `within` for room is an error of kind
/// [`io::ErrorKind::TimedOut`].
///
/// # References
///  - [mq_send(3)](https://man7.org/linux/man-pages/man3/mq_send.3.html)
pub(crate) fn mq_send(fd: impl AsFd, msg: &[u8], within: Duration) -> io::Result<()> {
    let deadline = realtime_after(within);
    // SAFETY: `msg` is valid for reading `msg.len()` bytes and `deadline`
    // is a valid timespec, both for the call; an mqd_t is the
    // descriptor's number.
    let r = unsafe {
        libc::mq_timedsend(
            fd.as_fd().as_raw_fd(),
            msg.as_ptr().cast(),
            msg.len(),
            0,
            &deadline,
        )
    };
    if r == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `CLOCK_REALTIME` now plus `within`: the deadlines of the timed calls.
fn realtime_after(within: Duration) -> libc::timespec {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    let end = now.tv_sec as i128 * 1_000_000_000 + now.tv_nsec as i128 + within.as_nanos() as i128;
    libc::timespec {
        tv_sec: (end / 1_000_000_000) as libc::time_t,
        tv_nsec: (end % 1_000_000_000) as libc::c_long,
    }
}

/// `mq_timedreceive(fd, buf, len, NULL, now + within)`: the oldest
/// message, whole; `buf` must hold the queue's message size. Returns its
/// length; waiting longer than `within` is an error of kind
/// [`io::ErrorKind::TimedOut`].
///
/// # References
///  - [mq_receive(3)](https://man7.org/linux/man-pages/man3/mq_receive.3.html)
pub(crate) fn mq_receive(fd: impl AsFd, buf: &mut [u8], within: Duration) -> io::Result<usize> {
    let deadline = realtime_after(within);
    // SAFETY: `buf` is valid for writing `buf.len()` bytes and `deadline`
    // is a valid timespec, both for the call; an mqd_t is the
    // descriptor's number.
    let r = unsafe {
        libc::mq_timedreceive(
            fd.as_fd().as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            std::ptr::null_mut(),
            &deadline,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as usize)
}

/// A number from one of the `/proc/sys/fs/mqueue` files.
pub fn mqueue_limit(path: &str) -> Option<usize> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_message_goes_through_a_private_queue_whole() {
        let name = format!("/pipespeed-test-{}", std::process::id());
        // A kernel without POSIX message queues: ENOSYS, of kind
        // Unsupported.
        let Some(q) = crate::sys::available("mqueue", mq_open_private(&name, 2, 100)) else {
            return;
        };
        mq_send(&q, b"hello", Duration::from_secs(1)).unwrap();
        mq_send(&q, b"", Duration::from_secs(1)).unwrap();
        let mut buf = [0u8; 100];
        assert_eq!(mq_receive(&q, &mut buf, Duration::from_secs(1)).unwrap(), 5);
        assert_eq!(&buf[..5], b"hello");
        assert_eq!(mq_receive(&q, &mut buf, Duration::from_secs(1)).unwrap(), 0);
        // Nothing more: the wait ends.
        let err = mq_receive(&q, &mut buf, Duration::from_millis(10)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        // Too large for the queue.
        assert!(mq_send(&q, &[0; 101], Duration::from_secs(1)).is_err());
        // Unlinked at once: the name is free again.
        drop(mq_open_private(&name, 1, 1).unwrap());
        assert!(mqueue_limit(MSGSIZE_MAX).is_some_and(|n| n > 0));
    }
}
