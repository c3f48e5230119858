//! What an end of a channel is, whatever its mechanism: the [`Sender`]
//! and [`Receiver`] traits, its message buffer and its errors.

use std::io;

use super::channel::SILENCE;
use crate::buf::{Buffer, BufferOptions};
use crate::ring::silence_error;

/// Where a receiver may hand the bytes it took; `None`: nobody looks at
/// them (a splice to `/dev/null`, the ring's bytes taken in place).
pub(crate) use crate::ring::Sink;

/// The sending end of a channel.
pub(crate) trait Sender: Send {
    /// Where the next message goes: a message's bytes, filled with `X`
    /// until the caller writes something else.
    fn buffer(&mut self) -> &mut [u8];
    /// Sends the first `len` bytes of the buffer, whole.
    fn send(&mut self, len: usize) -> io::Result<()>;
    /// Says there is no more, where the mechanism has no end of file of
    /// its own (a datagram, a message queue, the ring).
    fn finish(&mut self) -> io::Result<()>;
}

/// The receiving end of a channel.
pub(crate) trait Receiver: Send {
    /// Waits for bytes and takes up to a message's worth (a whole message
    /// where the mechanism keeps them whole), handing them to `sink`;
    /// 0 at the end.
    fn recv(&mut self, sink: Sink<'_>) -> io::Result<usize>;
}

/// A page-aligned buffer of one message, filled with `fill`: glibc's
/// `memcpy` is measurably slower from a buffer 16 bytes past a 32-byte
/// boundary, where a `Vec` may land (`peers/ipc_ref.c` aligns its buffers
/// the same way).
pub(crate) fn message_buffer(size: usize, fill: u8) -> io::Result<Buffer> {
    let mut buf = Buffer::new(size, BufferOptions::default())?;
    buf.fill(fill);
    Ok(buf)
}

/// `e` as the error of an end that could not `doing`: the other end
/// gone, silent for [`SILENCE`], or the call's own error.
pub(crate) fn named(doing: &str, e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::TimedOut => silent(doing),
        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => io::Error::new(
            io::ErrorKind::BrokenPipe,
            format!("cannot {doing}: the other end is gone"),
        ),
        kind => io::Error::new(
            kind,
            format!("cannot {doing}: {}", crate::quote::strerror(&e)),
        ),
    }
}

/// The error of an end that waited [`SILENCE`] for the other in vain.
pub(crate) fn silent(doing: &str) -> io::Error {
    silence_error(doing, SILENCE)
}
