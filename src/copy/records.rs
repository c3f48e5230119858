//! Sockets that keep record boundaries (`SOCK_SEQPACKET`, `SOCK_DGRAM`;
//! [`keeps_records`](crate::sys::socket::keeps_records) tells them), read
//! and written by read/write since splice cuts records: each record is
//! peeked at for its length and received whole, a cut one is an error,
//! never a silent loss; a write goes as one record if the socket takes
//! it, else in the largest it takes (docs/cat.md has the cases).

use std::io::{self, IoSliceMut};
use std::os::fd::{AsFd, BorrowedFd};

use rustix::io::Errno;
use rustix::net::{RecvAncillaryBuffer, RecvFlags, RecvMsg, ReturnFlags, recvmsg};

use crate::wait::{Direction, wait_ready};

/// The buffer a record of unknown length is received into when the
/// protocol does not tell lengths: the largest datagram of UDP and twice
/// GNU cat's 128 KiB.
const UNKNOWN_LENGTH: usize = 256 << 10;

/// `recvmsg(fd, buf, flags)`, retried on `EINTR`, waiting with `poll` on
/// `EAGAIN`.
fn recv(fd: BorrowedFd<'_>, buf: &mut [u8], flags: RecvFlags) -> io::Result<RecvMsg> {
    loop {
        let mut control = RecvAncillaryBuffer::default();
        match recvmsg(fd, &mut [IoSliceMut::new(buf)], &mut control, flags) {
            Ok(msg) => return Ok(msg),
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => wait_ready(fd, Direction::In)?,
            Err(errno) => return Err(errno.into()),
        }
    }
}

/// The length of the next record of `fd`, waiting for one: 0 at the end
/// of the input (an empty record ends it too, as a read of 0 bytes does in
/// GNU cat). A protocol that does not tell lengths gets
/// 256 KiB. What is measured is what [`recv_measured`] takes,
/// so a caller may decide on a record before reading it (pv's `-S` and
/// `-L`).
pub(crate) fn next_record_len(fd: impl AsFd) -> io::Result<usize> {
    let mut first = [0u8; 1];
    let peeked = recv(fd.as_fd(), &mut first, RecvFlags::PEEK | RecvFlags::TRUNC)?;
    Ok(match peeked.bytes {
        // The protocol did not say how long: one byte and cut.
        1 if peeked.flags.contains(ReturnFlags::TRUNC) => UNKNOWN_LENGTH,
        len => len,
    })
}

/// Receives the next record of `fd`, of `len` bytes as
/// [`next_record_len`] measured it, whole into `buf` (grown to hold it),
/// and returns its length; a record that does not fit after all (another
/// reader of the socket took the measured one) is an error, never a
/// silent loss.
pub(crate) fn recv_measured(fd: impl AsFd, len: usize, buf: &mut Vec<u8>) -> io::Result<usize> {
    if buf.len() < len.max(1) {
        buf.resize(len.max(1), 0);
    }
    let got = recv(fd.as_fd(), buf, RecvFlags::TRUNC)?;
    if got.bytes > buf.len() || got.flags.contains(ReturnFlags::TRUNC) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "a record of {} bytes was cut to {} (the socket changed between peek and read)",
                got.bytes,
                buf.len()
            ),
        ));
    }
    Ok(got.bytes)
}

/// Receives the next record of `fd` whole into `buf`, grown to hold it,
/// and returns its length: 0 at the end of the input. Waits for a record
/// if none is there.
pub(crate) fn recv_record(fd: impl AsFd, buf: &mut Vec<u8>) -> io::Result<usize> {
    let fd = fd.as_fd();
    let len = next_record_len(fd)?;
    recv_measured(fd, len, buf)
}

/// Writes to a socket that keeps record boundaries, in records it takes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordWriter {
    /// The largest record to ask for: what the socket took last after a
    /// refusal, else no limit.
    max: usize,
}

impl Default for RecordWriter {
    fn default() -> RecordWriter {
        RecordWriter { max: usize::MAX }
    }
}

impl RecordWriter {
    /// Writes all of `buf`: as one record if the socket takes it, else in
    /// records of the largest size it takes (halved on each `EMSGSIZE`,
    /// and kept for the next writes). Retries on `EINTR`, waits with
    /// `poll` on `EAGAIN`, and tells `written` how many bytes each record
    /// took.
    pub(crate) fn write_all(
        &mut self,
        fd: impl AsFd,
        mut buf: &[u8],
        mut written: impl FnMut(usize),
    ) -> io::Result<()> {
        let fd = fd.as_fd();
        while !buf.is_empty() {
            let len = buf.len().min(self.max);
            match rustix::io::write(fd, &buf[..len]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    written(n);
                    buf = &buf[n..];
                }
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => wait_ready(fd, Direction::Out)?,
                Err(Errno::MSGSIZE) if len > 1 => self.max = len / 2,
                Err(errno) => return Err(errno.into()),
            }
        }
        Ok(())
    }
}

/// Writes all of `buf` to `fd`: in records it takes when `records` holds a
/// [`RecordWriter`] (a socket that keeps them), else as a stream.
pub(crate) fn write_all_or_records(
    records: &mut Option<RecordWriter>,
    fd: BorrowedFd<'_>,
    buf: &[u8],
    written: impl FnMut(usize),
) -> io::Result<()> {
    match records {
        Some(writer) => writer.write_all(fd, buf, written),
        None => crate::wait::write_all(fd, buf, written),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::net::{AddressFamily, SendFlags, SocketFlags, SocketType, send, socketpair};

    fn seqpacket() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
        socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .unwrap()
    }

    #[test]
    fn a_record_larger_than_the_buffer_is_received_whole() {
        let (a, b) = seqpacket();
        rustix::net::sockopt::set_socket_send_buffer_size(&a, 1 << 20).unwrap();
        let big = vec![7u8; 150_000];
        std::thread::scope(|s| {
            s.spawn(|| {
                send(&a, &big, SendFlags::empty()).unwrap();
                send(&a, b"xyz", SendFlags::empty()).unwrap();
            });
            let mut buf = vec![0u8; 10];
            assert_eq!(recv_record(&b, &mut buf).unwrap(), 150_000);
            assert!(buf[..150_000] == big[..]);
            assert_eq!(recv_record(&b, &mut buf).unwrap(), 3);
            assert_eq!(&buf[..3], b"xyz");
        });
        drop(a);
        let mut buf = Vec::new();
        assert_eq!(recv_record(&b, &mut buf).unwrap(), 0);
    }

    #[test]
    fn a_write_larger_than_the_socket_takes_goes_in_records_it_takes() {
        let (a, b) = seqpacket();
        let data: Vec<u8> = (0..1_000_000u32).map(|i| i as u8).collect();
        let mut writer = RecordWriter::default();
        std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut got = Vec::new();
                let mut buf = Vec::new();
                loop {
                    let n = recv_record(&b, &mut buf).unwrap();
                    if n == 0 {
                        return got;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
            });
            let mut counted = 0;
            writer.write_all(&a, &data, |n| counted += n).unwrap();
            assert_eq!(counted, data.len());
            drop(a);
            assert!(reader.join().unwrap() == data);
        });
        assert!(writer.max < data.len());
    }
}
