//! The descriptors a mechanism's two ends share, made by the parent
//! before it starts them. What a mechanism cannot do at a size (a
//! datagram larger than the send buffer, a message larger than
//! `msgsize_max`) is found here, before any process starts, as an error
//! of kind [`io::ErrorKind::Unsupported`] that says why.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use rustix::fs::{Mode, OFlags};
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};

use super::mechanism::Mechanism;
use crate::sys::mq::{MSG_MAX, MSGSIZE_MAX, mq_open_private, mqueue_limit};
use crate::sys::pipe;
use crate::units::Size;

/// The descriptors of one direction: the sending end's and the
/// receiving end's (the same object for a socket or a ring file).
#[derive(Debug)]
pub(crate) struct OneWay {
    /// The sender's descriptor.
    pub send: OwnedFd,
    /// The receiver's descriptor.
    pub recv: OwnedFd,
}

/// The descriptors of one end of a two-way channel.
#[derive(Debug)]
pub(crate) struct End {
    /// What it receives on.
    pub recv: OwnedFd,
    /// What it sends on.
    pub send: OwnedFd,
}

/// A channel of `mechanism` from a sender to a receiver, for messages of
/// `size`.
pub(crate) fn one_way(mechanism: Mechanism, size: usize) -> io::Result<OneWay> {
    match mechanism {
        Mechanism::Pipe | Mechanism::PipeSplice | Mechanism::IoUring | Mechanism::IoUringSplice => {
            if matches!(mechanism, Mechanism::IoUring | Mechanism::IoUringSplice) {
                // Refused here rather than in one end, which would leave
                // the other only "the other end is gone".
                crate::sys::uring::Uring::new()?;
            }
            let p = pipe()?;
            Ok(OneWay {
                send: p.write,
                recv: p.read,
            })
        }
        Mechanism::Fifo => fifo(),
        Mechanism::UnixStream => socketpair(SocketType::STREAM, size),
        Mechanism::UnixSeqpacket => socketpair(SocketType::SEQPACKET, size),
        Mechanism::UnixDgram => socketpair(SocketType::DGRAM, size),
        Mechanism::Tcp | Mechanism::TcpZerocopy => tcp(),
        Mechanism::Mqueue => {
            let q = queue(size)?;
            Ok(OneWay {
                send: q.try_clone()?,
                recv: q,
            })
        }
        Mechanism::Shm | Mechanism::ShmSpin => {
            let file = crate::ring::create(size, 1)?;
            Ok(OneWay {
                send: file.try_clone()?,
                recv: file,
            })
        }
    }
}

/// A channel of `mechanism` both ways, for round trips: the pinger's end
/// and the ponger's.
pub(crate) fn two_way(mechanism: Mechanism, size: usize) -> io::Result<(End, End)> {
    let both = |fd: OwnedFd| -> io::Result<End> {
        Ok(End {
            recv: fd.try_clone()?,
            send: fd,
        })
    };
    match mechanism {
        Mechanism::UnixStream
        | Mechanism::UnixSeqpacket
        | Mechanism::UnixDgram
        | Mechanism::Tcp
        | Mechanism::TcpZerocopy => {
            let pair = one_way(mechanism, size)?;
            Ok((both(pair.send)?, both(pair.recv)?))
        }
        Mechanism::Shm | Mechanism::ShmSpin => {
            let file = crate::ring::create(size, 2)?;
            Ok((both(file.try_clone()?)?, both(file)?))
        }
        _ => {
            let (there, back) = (one_way(mechanism, size)?, one_way(mechanism, size)?);
            Ok((
                End {
                    send: there.send,
                    recv: back.recv,
                },
                End {
                    recv: there.recv,
                    send: back.send,
                },
            ))
        }
    }
}

fn unsupported(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, why)
}

/// A name no other channel of this process has used.
fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{}-{n}", std::process::id())
}

/// A FIFO made in a private directory and opened by its path, both ends
/// (the read end without blocking, which a FIFO with no writer yet
/// needs), then removed whatever happened: the descriptors stay.
fn fifo() -> io::Result<OneWay> {
    let dir = tempfile::Builder::new()
        .prefix("pipespeed-fifo-")
        .tempdir()?;
    let ends = fifo_in(dir.path());
    let removed = dir.close();
    let ends = ends?;
    removed?;
    Ok(ends)
}

/// The FIFO's two ends, made in `dir`.
fn fifo_in(dir: &std::path::Path) -> io::Result<OneWay> {
    let path = dir.join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &path,
        rustix::fs::FileType::Fifo,
        Mode::RUSR | Mode::WUSR,
        0,
    )?;
    let recv = rustix::fs::open(
        &path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let send = rustix::fs::open(&path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    crate::sys::set_nonblocking(&recv, false)?;
    Ok(OneWay { send, recv })
}

/// Where Linux caps what `SO_SNDBUF` may ask for.
const WMEM_MAX: &str = "/proc/sys/net/core/wmem_max";

/// An `AF_UNIX` socketpair of `kind`. A datagram or a packet must fit
/// the send buffer whole: for a larger message the buffer is raised as an
/// application would (`SO_SNDBUF`, capped by `net.core.wmem_max`), and
/// one message tried.
fn socketpair(kind: SocketType, size: usize) -> io::Result<OneWay> {
    let (send, recv) =
        rustix::net::socketpair(AddressFamily::UNIX, kind, SocketFlags::CLOEXEC, None)?;
    for end in [&send, &recv] {
        set_silence_timeout(end)?;
    }
    if kind == SocketType::STREAM {
        return Ok(OneWay { send, recv });
    }
    // Both ways: a ponger sends on the receiving end.
    for (from, to) in [(&send, &recv), (&recv, &send)] {
        if size + 4096 > rustix::net::sockopt::socket_send_buffer_size(from)? {
            // The kernel doubles what is asked, for its bookkeeping.
            rustix::net::sockopt::set_socket_send_buffer_size(from, size + 4096)?;
        }
        fits(from, to, size)?;
    }
    Ok(OneWay { send, recv })
}

/// Whether a datagram of `size` goes from `from` to `to` whole: one is
/// sent without waiting, and taken out again.
fn fits(from: &OwnedFd, to: &OwnedFd, size: usize) -> io::Result<()> {
    let probe = vec![0u8; size];
    match rustix::net::send(from, &probe, SendFlags::DONTWAIT | SendFlags::NOSIGNAL) {
        Ok(_) => {
            let mut back = vec![0u8; size];
            rustix::net::recv(to, &mut back, RecvFlags::DONTWAIT)?;
            Ok(())
        }
        Err(rustix::io::Errno::MSGSIZE | rustix::io::Errno::NOBUFS) => {
            let sndbuf = rustix::net::sockopt::socket_send_buffer_size(from).unwrap_or(0);
            let max = std::fs::read_to_string(WMEM_MAX).unwrap_or_default();
            Err(unsupported(format!(
                "a {} message does not fit an AF_UNIX socket's send buffer ({}, raised as far \
                 as net.core.wmem_max = {} allows)",
                Size(size as u64),
                Size(sndbuf as u64),
                max.trim()
            )))
        }
        Err(e) => Err(e.into()),
    }
}

/// How long an end may wait for the other without a byte before it
/// gives up: a datagram socket, a queue or the ring has no end of file
/// when the other end dies, and a run lasts a fraction of a second.
pub(crate) const SILENCE: Duration = Duration::from_secs(30);

/// `SO_RCVTIMEO` of [`SILENCE`]: a longer wait fails with `EAGAIN`.
fn set_silence_timeout(fd: &OwnedFd) -> io::Result<()> {
    rustix::net::sockopt::set_socket_timeout(
        fd,
        rustix::net::sockopt::Timeout::Recv,
        Some(SILENCE),
    )?;
    Ok(())
}

/// A TCP connection over loopback, `TCP_NODELAY` at both ends.
fn tcp() -> io::Result<OneWay> {
    let listener = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))?;
    let client = TcpStream::connect(listener.local_addr()?)?;
    let (server, _) = listener.accept()?;
    for s in [&client, &server] {
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(SILENCE))?;
    }
    Ok(OneWay {
        send: client.into(),
        recv: server.into(),
    })
}

/// A private POSIX message queue for messages of `size`, as many as
/// `msg_max` allows up to 10 (the usual default).
fn queue(size: usize) -> io::Result<OwnedFd> {
    if let Some(max) = mqueue_limit(MSGSIZE_MAX)
        && size > max
    {
        return Err(unsupported(format!(
            "a {} message is over the message queue limit of {} ({MSGSIZE_MAX})",
            Size(size as u64),
            Size(max as u64)
        )));
    }
    let slots = mqueue_limit(MSG_MAX).unwrap_or(10).clamp(1, 10);
    mq_open_private(&format!("/{}", unique("pipespeed")), slots, size).map_err(|e| {
        let why = crate::quote::strerror(&e);
        match e.raw_os_error() {
            // EMFILE from mq_open is RLIMIT_MSGQUEUE (the bytes of this
            // user's queues), not open files.
            Some(libc::EMFILE) => unsupported(format!(
                "mq_open refused a queue of {slots} messages of {}: over this user's \
                 RLIMIT_MSGQUEUE (ulimit -q)",
                Size(size as u64)
            )),
            Some(libc::ENOSYS | libc::EACCES | libc::ENOSPC | libc::EINVAL) => {
                unsupported(format!(
                    "mq_open refused a queue of {} messages of {}: {why}",
                    slots,
                    Size(size as u64)
                ))
            }
            _ => io::Error::new(e.kind(), format!("cannot open a message queue: {why}")),
        }
    })
}
