//! The ways two processes can talk that `ipc` measures: what each is,
//! what it copies, and where its cost goes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One way of moving bytes from one process to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// `write(2)` into a pipe, `read(2)` out of it.
    Pipe,
    /// The ladder's zero-copy pipe: `vmsplice(2)` of a double buffer in,
    /// `splice(2)` to `/dev/null` out.
    PipeSplice,
    /// A named pipe (`mkfifo(3)`), opened by its path: `write`/`read`.
    Fifo,
    /// An `AF_UNIX` `SOCK_STREAM` socketpair: `send(2)`/`recv(2)`.
    UnixStream,
    /// An `AF_UNIX` `SOCK_SEQPACKET` socketpair: one message per call.
    UnixSeqpacket,
    /// An `AF_UNIX` `SOCK_DGRAM` socketpair: one datagram per message.
    UnixDgram,
    /// TCP over loopback with `TCP_NODELAY`.
    Tcp,
    /// TCP over loopback, sent with `MSG_ZEROCOPY`.
    TcpZerocopy,
    /// A POSIX message queue: `mq_send(3)`/`mq_receive(3)`.
    Mqueue,
    /// A ring in shared memory (memfd + mmap), futex wake-ups.
    Shm,
    /// The same ring, both ends spinning instead of sleeping.
    ShmSpin,
    /// `IORING_OP_WRITE`/`IORING_OP_READ` on a pipe, through io_uring.
    IoUring,
    /// `vmsplice` in, `IORING_OP_SPLICE` to `/dev/null` out.
    IoUringSplice,
}

impl Mechanism {
    /// Every mechanism, in the order of the tables.
    pub const ALL: [Mechanism; 13] = [
        Mechanism::Pipe,
        Mechanism::PipeSplice,
        Mechanism::Fifo,
        Mechanism::UnixStream,
        Mechanism::UnixSeqpacket,
        Mechanism::UnixDgram,
        Mechanism::Tcp,
        Mechanism::TcpZerocopy,
        Mechanism::Mqueue,
        Mechanism::Shm,
        Mechanism::ShmSpin,
        Mechanism::IoUring,
        Mechanism::IoUringSplice,
    ];

    /// The name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Pipe => "pipe",
            Mechanism::PipeSplice => "pipe-splice",
            Mechanism::Fifo => "fifo",
            Mechanism::UnixStream => "unix-stream",
            Mechanism::UnixSeqpacket => "unix-seqpacket",
            Mechanism::UnixDgram => "unix-dgram",
            Mechanism::Tcp => "tcp",
            Mechanism::TcpZerocopy => "tcp-zerocopy",
            Mechanism::Mqueue => "mqueue",
            Mechanism::Shm => "shm",
            Mechanism::ShmSpin => "shm-spin",
            Mechanism::IoUring => "io-uring",
            Mechanism::IoUringSplice => "io-uring-splice",
        }
    }

    /// Bytes the CPU copies per byte moved, by design.
    pub fn copies(self) -> u32 {
        match self {
            Mechanism::PipeSplice | Mechanism::IoUringSplice => 0,
            Mechanism::Shm | Mechanism::ShmSpin => 1,
            _ => 2,
        }
    }

    /// Whether its ends spin instead of sleeping: it needs two CPUs.
    pub fn spins(self) -> bool {
        self == Mechanism::ShmSpin
    }

    /// The kernel facility it needs beyond pipes, sockets and shared
    /// memory, which a machine may refuse (a kernel built without it, a
    /// sandbox, `io_uring_disabled`, a locked-memory limit): then its
    /// rows are unavailable, not failed. The name is what the tests call
    /// it (`PIPESPEED_REQUIRE_IO_URING=1` makes a refusal fail them).
    pub fn facility(self) -> Option<&'static str> {
        match self {
            Mechanism::IoUring | Mechanism::IoUringSplice => Some("io_uring"),
            Mechanism::TcpZerocopy => Some("so_zerocopy"),
            Mechanism::Mqueue => Some("mqueue"),
            _ => None,
        }
    }

    /// Where its cost goes, in one sentence.
    pub fn cost(self) -> &'static str {
        match self {
            Mechanism::Pipe => {
                "two copies (into the pipe's pages, out of them) and a wake-up whenever the \
                 pipe fills or empties; messages past the pipe's 64 KiB go in pieces"
            }
            Mechanism::PipeSplice => {
                "no copy: the pipe holds references to the sender's pages and splice drops \
                 them into /dev/null; what is left is page bookkeeping and wake-ups"
            }
            Mechanism::Fifo => {
                "a pipe reached by a path: the same two copies and wake-ups as pipe once open"
            }
            Mechanism::UnixStream => {
                "two copies, through socket buffers (an skb per send) rather than pipe pages, \
                 and the socket's accounting of its send buffer"
            }
            Mechanism::UnixSeqpacket => {
                "two copies and an skb per message, kept whole: one call per message, and a \
                 message must fit the send buffer"
            }
            Mechanism::UnixDgram => {
                "two copies and an skb per datagram; a datagram must fit the send buffer, and \
                 a full receive queue puts the sender to sleep"
            }
            Mechanism::Tcp => {
                "two copies plus the TCP/IP stack both ways over loopback: segmentation, \
                 checksums skipped on loopback, acks and the socket locks"
            }
            Mechanism::TcpZerocopy => {
                "TCP with the sender's pages pinned instead of copied, and a completion to reap \
                 from the error queue before a buffer is reused; on loopback the kernel copies \
                 them on delivery after all (the completions say so)"
            }
            Mechanism::Mqueue => {
                "two copies into and out of a kernel message, a message at a time, bounded by \
                 msgsize_max and a queue of msg_max messages"
            }
            Mechanism::Shm => {
                "one copy, the sender's memcpy into the ring (the receiver takes the bytes in \
                 place); a futex system call only when an end has to sleep"
            }
            Mechanism::ShmSpin => {
                "one copy and no system call at all: each end spins on the other's position, \
                 burning its CPU while it waits"
            }
            Mechanism::IoUring => {
                "pipe's two copies, each read and write a submission and a completion through \
                 io_uring's rings with one io_uring_enter per operation"
            }
            Mechanism::IoUringSplice => {
                "no copy, as pipe-splice, with each splice submitted through io_uring: the \
                 ring's bookkeeping and a kernel worker when the pipe is empty"
            }
        }
    }

    /// Why a round trip is not measured over it, if it is not.
    pub fn no_round_trip(self) -> Option<&'static str> {
        match self {
            Mechanism::PipeSplice | Mechanism::IoUringSplice => Some(
                "a spliced message is dropped into /dev/null, so there is nothing to send back: \
                 its round trip would be pipe's",
            ),
            Mechanism::TcpZerocopy => Some(
                "a round trip of MSG_ZEROCOPY would measure the completion on the error queue \
                 as much as the transfer; tcp's round trip is the transfer",
            ),
            _ => None,
        }
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no mechanism; its message lists the valid ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{name}' is not a mechanism (valid: {})", valid_names())]
pub struct UnknownMechanism {
    /// The name given.
    pub name: String,
}

/// Every mechanism's name, comma-separated.
pub(crate) fn valid_names() -> String {
    Mechanism::ALL.map(Mechanism::name).join(", ")
}

impl FromStr for Mechanism {
    type Err = UnknownMechanism;

    fn from_str(name: &str) -> Result<Mechanism, UnknownMechanism> {
        Mechanism::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| UnknownMechanism {
                name: name.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_a_wrong_one_lists_the_valid_ones() {
        for m in Mechanism::ALL {
            assert_eq!(m.name().parse::<Mechanism>(), Ok(m));
            let json = serde_json::to_string(&m).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", m.name()));
        }
        let err = "pipes".parse::<Mechanism>().unwrap_err().to_string();
        assert!(
            err.starts_with("'pipes' is not a mechanism (valid: pipe, "),
            "{err}"
        );
        assert!(err.contains("io-uring-splice)"), "{err}");
    }
}
