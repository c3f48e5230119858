//! What kind of socket a descriptor is, as far as copying is concerned.

use std::os::fd::AsFd;

use rustix::net::{SocketType, sockopt};

/// Whether `fd` is a socket that keeps record boundaries
/// (`SOCK_SEQPACKET`, `SOCK_DGRAM`, `SOCK_RAW`, `SOCK_RDM`): each read
/// takes one record and drops what of it does not fit in the buffer, each
/// write makes one record and is refused (`EMSGSIZE`) when larger than the
/// socket takes. `false` for a stream socket and for anything that is not
/// a socket.
///
/// `getsockopt(fd, SOL_SOCKET, SO_TYPE, ...)`
///
/// # References
///  - [socket(7)](https://man7.org/linux/man-pages/man7/socket.7.html) (`SO_TYPE`)
///  - [unix(7)](https://man7.org/linux/man-pages/man7/unix.7.html) (`SOCK_SEQPACKET`)
#[doc(alias = "SO_TYPE")]
pub(crate) fn keeps_records(fd: impl AsFd) -> bool {
    sockopt::socket_type(fd).is_ok_and(|kind| {
        matches!(
            kind,
            SocketType::SEQPACKET | SocketType::DGRAM | SocketType::RAW | SocketType::RDM
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::net::{AddressFamily, SocketFlags, socketpair};

    #[test]
    fn record_sockets_are_told_from_streams_and_files() {
        let pair = |kind| socketpair(AddressFamily::UNIX, kind, SocketFlags::CLOEXEC, None);
        let (seqpacket, _peer) = pair(SocketType::SEQPACKET).unwrap();
        assert!(keeps_records(&seqpacket));
        let (dgram, _peer) = pair(SocketType::DGRAM).unwrap();
        assert!(keeps_records(&dgram));
        let (stream, _peer) = pair(SocketType::STREAM).unwrap();
        assert!(!keeps_records(&stream));
        let file = tempfile::tempfile().unwrap();
        assert!(!keeps_records(&file));
    }
}
