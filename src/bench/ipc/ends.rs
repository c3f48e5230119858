//! One end's sending and receiving over every [`Mechanism`]: which
//! system call does the work is decided once, in [`sender`] and
//! [`receiver`]; the loops in [`super::flow`] are the same for all.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};

use super::channel::SILENCE;
use super::mechanism::Mechanism;
use super::splice::{SpliceReceiver, VmspliceSender};
pub(crate) use super::traits::{Receiver, Sender, Sink, silent};
use super::traits::{message_buffer, named};
use crate::buf::Buffer;
use crate::ring::{RingSpec, RingWait, ShmReceiver, ShmSender};
use crate::sys::mq::{mq_receive, mq_send};
use crate::sys::uring::Uring;

/// Which of a channel's two directions an end uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Way {
    /// Sender to receiver, pinger to ponger.
    Forward,
    /// Ponger to pinger.
    Back,
}

impl Way {
    /// The ring a shared-memory channel uses for this direction.
    fn ring(self) -> usize {
        match self {
            Way::Forward => 0,
            Way::Back => 1,
        }
    }
}

/// What an end needs to know besides its mechanism and descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Setup {
    /// Bytes per message.
    pub size: usize,
    /// Which direction it uses.
    pub way: Way,
    /// Whether the two ends share one CPU: a ring end that must wait then
    /// sleeps at once, since spinning would only hold the CPU the other
    /// end needs.
    pub shared_cpu: bool,
}

impl Setup {
    /// The ring a shared-memory end of `mechanism` opens, and how it
    /// waits.
    fn ring(&self, mechanism: Mechanism) -> RingSpec {
        let wait = match (mechanism.spins(), self.shared_cpu) {
            (true, _) => RingWait::Spin,
            (false, true) => RingWait::Sleep,
            (false, false) => RingWait::SpinThenSleep,
        };
        RingSpec {
            size: self.size,
            index: self.way.ring(),
            wait,
            silence: SILENCE,
        }
    }
}

/// How a descriptor end moves one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    /// write(2)/read(2), in as many calls as it takes.
    ReadWrite,
    /// send(2)/recv(2) on a stream socket.
    Stream,
    /// One send(2)/recv(2) per message, kept whole; end of file ends.
    Packet,
    /// One datagram per message; an empty one ends.
    Datagram,
    /// mq_send(3)/mq_receive(3); an empty message ends.
    Queue,
}

/// The sending end of `mechanism` over `fd`.
pub(crate) fn sender(
    mechanism: Mechanism,
    fd: OwnedFd,
    setup: Setup,
) -> io::Result<Box<dyn Sender>> {
    let size = setup.size;
    if let Some(call) = fd_call(mechanism) {
        return Ok(Box::new(FdSender {
            fd,
            buf: message_buffer(size, b'X')?,
            call,
            finished: false,
        }));
    }
    match mechanism {
        Mechanism::Shm | Mechanism::ShmSpin => Ok(Box::new(RingSender {
            ring: ShmSender::open(&fd, setup.ring(mechanism))?,
            buf: message_buffer(size, b'X')?,
        })),
        Mechanism::IoUring => Ok(Box::new(UringSender {
            ring: Uring::new()?,
            fd,
            buf: message_buffer(size, b'X')?,
        })),
        Mechanism::TcpZerocopy => Ok(Box::new(super::zerocopy::ZerocopySender::new(fd, size)?)),
        // PipeSplice, IoUringSplice.
        _ => Ok(Box::new(VmspliceSender::new(fd, size)?)),
    }
}

/// The call a mechanism that is a plain descriptor moves a message with.
fn fd_call(mechanism: Mechanism) -> Option<Call> {
    match mechanism {
        Mechanism::Pipe | Mechanism::Fifo => Some(Call::ReadWrite),
        Mechanism::UnixStream | Mechanism::Tcp => Some(Call::Stream),
        Mechanism::UnixSeqpacket => Some(Call::Packet),
        Mechanism::UnixDgram => Some(Call::Datagram),
        Mechanism::Mqueue => Some(Call::Queue),
        Mechanism::TcpZerocopy
        | Mechanism::PipeSplice
        | Mechanism::IoUringSplice
        | Mechanism::Shm
        | Mechanism::ShmSpin
        | Mechanism::IoUring => None,
    }
}

/// The receiving end of `mechanism` over `fd`.
pub(crate) fn receiver(
    mechanism: Mechanism,
    fd: OwnedFd,
    setup: Setup,
) -> io::Result<Box<dyn Receiver>> {
    let size = setup.size;
    // A zero-copy send is received as any TCP stream.
    let call = match mechanism {
        Mechanism::TcpZerocopy => Some(Call::Stream),
        m => fd_call(m),
    };
    if let Some(call) = call {
        return Ok(Box::new(FdReceiver {
            fd,
            buf: message_buffer(size, 0)?,
            call,
        }));
    }
    match mechanism {
        Mechanism::Shm | Mechanism::ShmSpin => Ok(Box::new(RingReceiver(ShmReceiver::open(
            &fd,
            setup.ring(mechanism),
        )?))),
        Mechanism::IoUring => Ok(Box::new(UringReceiver {
            ring: Uring::new()?,
            fd,
            buf: message_buffer(size, 0)?,
        })),
        Mechanism::IoUringSplice => Ok(Box::new(SpliceReceiver::new(
            fd,
            size,
            Some(Uring::new()?),
        )?)),
        // PipeSplice (TcpZerocopy and the plain descriptors are above).
        _ => Ok(Box::new(SpliceReceiver::new(fd, size, None)?)),
    }
}

/// [`named`] for a system call's `Errno`.
fn failed(doing: &str, e: Errno) -> io::Error {
    named(doing, e.into())
}

struct FdSender {
    fd: OwnedFd,
    buf: Buffer,
    call: Call,
    /// Whether the end was said.
    finished: bool,
}

impl Drop for FdSender {
    /// Says the end on the way out too, where only a message can say it:
    /// an end that fails (a pinger that found a wrong byte) must not
    /// leave the other waiting for a datagram that never comes.
    fn drop(&mut self) {
        match self.call {
            Call::Datagram if !self.finished => {
                let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
                let _ = rustix::net::send(&self.fd, &[], flags);
            }
            Call::Queue if !self.finished => {
                let _ = mq_send(&self.fd, &[], std::time::Duration::from_millis(100));
            }
            _ => {}
        }
    }
}

impl Sender for FdSender {
    fn buffer(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    fn send(&mut self, len: usize) -> io::Result<()> {
        let (fd, msg) = (self.fd.as_fd(), &self.buf[..len]);
        let mut done = 0;
        while done < len {
            let sent = match self.call {
                Call::ReadWrite => rustix::io::write(fd, &msg[done..]),
                Call::Stream | Call::Packet | Call::Datagram => {
                    rustix::net::send(fd, &msg[done..], SendFlags::NOSIGNAL)
                }
                Call::Queue => {
                    return mq_send(fd, msg, SILENCE).map_err(|e| named("send", e));
                }
            };
            match sent {
                Ok(n) if self.call == Call::Packet || self.call == Call::Datagram => {
                    if n != len {
                        return Err(io::Error::other(format!(
                            "a {len}-byte message went out as {n} bytes"
                        )));
                    }
                    done = n;
                }
                Ok(n) => done += n,
                Err(Errno::INTR) => {}
                Err(e) => return Err(failed("send", e)),
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.finished = true;
        match self.call {
            Call::Datagram => rustix::net::send(&self.fd, &[], SendFlags::NOSIGNAL)
                .map(drop)
                .map_err(|e| failed("send the end", e)),
            Call::Queue => mq_send(&self.fd, &[], SILENCE).map_err(|e| named("send the end", e)),
            Call::ReadWrite | Call::Stream | Call::Packet => Ok(()),
        }
    }
}

struct FdReceiver {
    fd: OwnedFd,
    buf: Buffer,
    call: Call,
}

impl Receiver for FdReceiver {
    fn recv(&mut self, sink: Sink<'_>) -> io::Result<usize> {
        let fd = self.fd.as_fd();
        let n = loop {
            let got = match self.call {
                Call::ReadWrite => rustix::io::read(fd, &mut self.buf[..]),
                Call::Stream | Call::Packet | Call::Datagram => {
                    rustix::net::recv(fd, &mut self.buf[..], RecvFlags::empty()).map(|(n, _)| n)
                }
                Call::Queue => match mq_receive(fd, &mut self.buf, SILENCE) {
                    Ok(n) => Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(Errno::INTR),
                    Err(e) if e.kind() == io::ErrorKind::TimedOut => Err(Errno::AGAIN),
                    Err(e) => return Err(named("receive", e)),
                },
            };
            match got {
                Ok(n) => break n,
                Err(Errno::INTR) => {}
                // SO_RCVTIMEO: the other end has gone quiet (a datagram
                // socket has no end of file when it dies).
                Err(Errno::AGAIN) => return Err(silent("receive")),
                Err(e) => return Err(failed("receive", e)),
            }
        };
        hand(sink, &self.buf[..n])
    }
}

/// Hands `bytes`, if any, to `sink`, if any; their length.
fn hand(sink: Sink<'_>, bytes: &[u8]) -> io::Result<usize> {
    if let Some(sink) = sink
        && !bytes.is_empty()
    {
        sink(bytes)?;
    }
    Ok(bytes.len())
}

struct RingSender {
    ring: ShmSender,
    buf: Buffer,
}

impl Sender for RingSender {
    fn buffer(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    fn send(&mut self, len: usize) -> io::Result<()> {
        self.ring.send(&self.buf[..len])
    }

    fn finish(&mut self) -> io::Result<()> {
        self.ring.close()
    }
}

struct RingReceiver(ShmReceiver);

impl Receiver for RingReceiver {
    fn recv(&mut self, sink: Sink<'_>) -> io::Result<usize> {
        self.0.recv(sink)
    }
}

struct UringSender {
    ring: Uring,
    fd: OwnedFd,
    buf: Buffer,
}

impl Sender for UringSender {
    fn buffer(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    fn send(&mut self, len: usize) -> io::Result<()> {
        let mut done = 0;
        while done < len {
            done += self.ring.write(&self.fd, &self.buf[done..len])?;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct UringReceiver {
    ring: Uring,
    fd: OwnedFd,
    buf: Buffer,
}

impl Receiver for UringReceiver {
    fn recv(&mut self, sink: Sink<'_>) -> io::Result<usize> {
        let n = self.ring.read(&self.fd, &mut self.buf)?;
        hand(sink, &self.buf[..n])
    }
}
