//! `MSG_ZEROCOPY` sends, which pin the caller's pages until the socket's
//! error queue says they completed (Documentation/networking/msg_zerocopy.rst),
//! through libc: rustix has neither `SO_ZEROCOPY` nor `sock_extended_err`.
#![allow(unsafe_code)]

use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsFd, AsRawFd};

use rustix::net::SendFlags;

/// `SO_ZEROCOPY` (asm-generic/socket.h).
const SO_ZEROCOPY: libc::c_int = 60;
/// `SO_EE_ORIGIN_ZEROCOPY` (linux/errqueue.h).
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
/// `SO_EE_CODE_ZEROCOPY_COPIED` (linux/errqueue.h): the kernel copied
/// the data after all.
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;

/// The flag of a zero-copy `send(2)`.
pub(crate) const MSG_ZEROCOPY: SendFlags = SendFlags::from_bits_retain(libc::MSG_ZEROCOPY as u32);

/// `setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, 1)`: the socket may take
/// `MSG_ZEROCOPY` sends. A kernel or socket without it gives an error of
/// kind [`io::ErrorKind::Unsupported`].
pub(crate) fn set_so_zerocopy(fd: impl AsFd) -> io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: `one` is a c_int alive for the call, and its size is passed.
    let r = unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            SO_ZEROCOPY,
            (&one as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOPROTOOPT | libc::EOPNOTSUPP) => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "this kernel refused SO_ZEROCOPY: {}",
                crate::quote::strerror(&e)
            ),
        )),
        _ => Err(e),
    }
}

/// Sends completed, as the error queue says: `MSG_ZEROCOPY` sends `first`
/// to `last` (the kernel numbers them from 0), and whether the kernel
/// copied them after all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Completed {
    /// The first send completed.
    pub first: u32,
    /// The last send completed.
    pub last: u32,
    /// Whether the kernel copied the pages instead of sending them.
    pub copied: bool,
}

/// Reads one notification from `fd`'s error queue without waiting
/// (`recvmsg(MSG_ERRQUEUE | MSG_DONTWAIT)`): `None` when there is none.
pub(crate) fn zerocopy_completed(fd: impl AsFd) -> io::Result<Option<Completed>> {
    let mut control = [0u64; 16];
    // SAFETY: msghdr is plain data; all zero is a valid (empty) value.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of::<[u64; 16]>() as _;
    let flags = libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT;
    // SAFETY: `msg` names only `control`, alive and writable for the call.
    let r = unsafe { libc::recvmsg(fd.as_fd().as_raw_fd(), &mut msg, flags) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) => Ok(None),
            _ => Err(e),
        };
    }
    // SAFETY: `msg` was filled by recvmsg; the CMSG macros walk the
    // control buffer it names within msg_controllen.
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(&msg) };
    while !cmsg.is_null() {
        // SAFETY: a non-null header from CMSG_FIRSTHDR/NXTHDR is inside
        // `control`.
        let header = unsafe { &*cmsg };
        let ip_err = (header.cmsg_level == libc::SOL_IP && header.cmsg_type == libc::IP_RECVERR)
            || (header.cmsg_level == libc::SOL_IPV6 && header.cmsg_type == libc::IPV6_RECVERR);
        if ip_err {
            // SAFETY: an IP_RECVERR message carries a sock_extended_err;
            // read unaligned, as control data may not be aligned for it.
            let err: libc::sock_extended_err =
                unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast()) };
            if err.ee_origin == SO_EE_ORIGIN_ZEROCOPY && err.ee_errno == 0 {
                return Ok(Some(Completed {
                    first: err.ee_info,
                    last: err.ee_data,
                    copied: err.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0,
                }));
            }
        }
        // SAFETY: as above.
        cmsg = unsafe { libc::CMSG_NXTHDR(&msg, cmsg) };
    }
    Err(io::Error::other(
        "the error queue held something other than a MSG_ZEROCOPY completion",
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn loopback_sends_complete_in_order_and_are_copied_on_delivery() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let tx = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut rx, _) = listener.accept().unwrap();
        if crate::sys::available("so_zerocopy", set_so_zerocopy(&tx)).is_none() {
            return;
        }
        let buf = vec![7u8; 100_000];
        for _ in 0..3 {
            let n = rustix::net::send(&tx, &buf, MSG_ZEROCOPY).unwrap();
            assert_eq!(n, buf.len());
        }
        let mut got = vec![0u8; 300_000];
        rx.read_exact(&mut got).unwrap();
        assert!(got.iter().all(|&b| b == 7));
        // The three sends complete, as one range or several, in order.
        let mut next = 0;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while next < 3 {
            assert!(std::time::Instant::now() < deadline, "no completion");
            if let Some(done) = zerocopy_completed(&tx).unwrap() {
                assert_eq!(done.first, next);
                // Loopback delivers to a local socket: the kernel copies.
                assert!(done.copied, "{done:?}");
                next = done.last + 1;
            }
        }
    }
}
