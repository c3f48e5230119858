//! The two sides of a round trip: the pinger writes a message into one
//! pipe, the ponger reads all of it and writes it back into another.
//! Messages larger than `PIPE_BUF` or the pipe arrive in pieces, so both
//! loop on partial reads and writes. Each message carries a pattern of
//! its round trip: its first and last bytes are checked, or every byte
//! with `verify`.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Instant;

use rustix::io::Errno;

use super::super::core::harness::MAX_MESSAGE;
use super::super::hist::{TripRun, Trips};
use super::{Exchange, PingConfig};

use crate::wait::{Direction, Wait};

/// The messages of every round trip. Round trip `t` sends the `size`
/// bytes of a table that start at `t % 256`: each message differs from the
/// one before at nearly every offset, and checking one is a `memcmp`.
struct Pattern {
    table: Vec<u8>,
    size: usize,
    verify: bool,
}

impl Pattern {
    fn new(exchange: &Exchange) -> io::Result<Pattern> {
        let Exchange { size, verify, .. } = *exchange;
        if size == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a message must be at least 1 byte: an empty write wakes no reader",
            ));
        }
        // The table below is a message and 255 bytes more.
        if size > MAX_MESSAGE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a message is at most {MAX_MESSAGE} bytes, not {size}"),
            ));
        }
        let table = (0..size + 255).map(|j| j as u8 ^ (j >> 8) as u8).collect();
        Ok(Pattern {
            table,
            size,
            verify,
        })
    }

    fn expected(&self, trip: u64) -> &[u8] {
        let start = (trip % 256) as usize;
        &self.table[start..start + self.size]
    }

    /// Puts round trip `trip`'s message in `msg`: all of it with `verify`,
    /// else its first and last bytes.
    fn stamp(&self, msg: &mut [u8], trip: u64) {
        let (want, last) = (self.expected(trip), self.size - 1);
        if self.verify {
            msg.copy_from_slice(want);
        } else {
            (msg[0], msg[last]) = (want[0], want[last]);
        }
    }

    /// Checks `msg` as [`Pattern::stamp`] wrote it.
    fn check(&self, msg: &[u8], trip: u64, who: &str) -> io::Result<()> {
        let (want, last) = (self.expected(trip), self.size - 1);
        let intact = match self.verify {
            true => msg == want,
            false => msg[0] == want[0] && msg[last] == want[last],
        };
        if intact {
            return Ok(());
        }
        let i = msg.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{who} received a wrong message in round trip {trip}: byte {i} of {} is {:#04x}, \
                 expected {:#04x} (bytes lost, duplicated or reordered)",
                self.size, msg[i], want[i]
            ),
        ))
    }
}

/// Reads a whole message into `buf`, in as many reads as it takes.
/// `Ok(false)` when the pipe ends before its first byte.
fn read_message(fd: BorrowedFd<'_>, buf: &mut [u8], wait: Wait, who: &str) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        wait.before_call(fd, Direction::In)?;
        match rustix::io::read(fd, &mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "{who}: the pipe ended {got} bytes into a {}-byte message",
                        buf.len()
                    ),
                ));
            }
            Ok(n) => got += n,
            // Busy: spin; poll and block: a signal, or a spurious wake-up.
            Err(Errno::AGAIN | Errno::INTR) => {}
            Err(e) => return Err(failed(who, "read", e)),
        }
    }
    Ok(true)
}

/// Writes all of `buf`, in as many writes as it takes.
fn write_message(fd: BorrowedFd<'_>, mut buf: &[u8], wait: Wait, who: &str) -> io::Result<()> {
    while !buf.is_empty() {
        wait.before_call(fd, Direction::Out)?;
        match rustix::io::write(fd, buf) {
            Ok(n) => buf = &buf[n..],
            Err(Errno::AGAIN | Errno::INTR) => {}
            Err(Errno::PIPE) => {
                return Err(io::Error::other(format!(
                    "{who}: the other side closed its end of the pipe"
                )));
            }
            Err(e) => return Err(failed(who, "write", e)),
        }
    }
    Ok(())
}

/// `who: cannot CALL: why`, of kind `e`'s.
fn failed(who: &str, call: &str, e: Errno) -> io::Error {
    let why = crate::quote::strerror(&io::Error::from(e));
    io::Error::new(e.kind(), format!("{who}: cannot {call}: {why}"))
}

/// The pinger: sends messages into `to`, reads each reply from `from`,
/// warms up then measures as `config` says.
pub fn ping(to: impl AsFd, from: impl AsFd, config: &PingConfig) -> io::Result<TripRun> {
    let (to, from) = (to.as_fd(), from.as_fd());
    let Exchange { size, wait, .. } = config.exchange;
    let pattern = Pattern::new(&config.exchange)?;
    wait.prepare(to)?;
    wait.prepare(from)?;
    let mut msg = vec![0u8; size];
    let mut reply = vec![0u8; size];
    let mut trip = 0u64;
    // Returns when the round trip started and ended: two clock reads each.
    let mut round_trip = |trip: u64| -> io::Result<(Instant, Instant)> {
        pattern.stamp(&mut msg, trip);
        let start = Instant::now();
        write_message(to, &msg, wait, "pinger")?;
        if !read_message(from, &mut reply, wait, "pinger")? {
            return Err(io::Error::other(
                "pinger: the ponger closed its end of the pipe instead of replying",
            ));
        }
        let end = Instant::now();
        pattern.check(&reply, trip, "pinger")?;
        Ok((start, end))
    };
    let warmup_start = Instant::now();
    while !config.warmup.is_over(trip, warmup_start.elapsed()) {
        round_trip(trip)?;
        trip += 1;
    }
    let warmup_round_trips = trip;
    let begin = Instant::now();
    let mut trips = Trips::new(begin);
    while !config.measure.is_over(trips.count(), trips.end() - begin) {
        let (start, stop) = round_trip(trip)?;
        trips.record(start, stop);
        trip += 1;
    }
    Ok(trips.finish(warmup_round_trips))
}

/// The ponger: every message from `from` checked and written back into
/// `to`, until the pinger closes its end; the round trips served.
pub fn pong(from: impl AsFd, to: impl AsFd, exchange: &Exchange) -> io::Result<u64> {
    let (from, to) = (from.as_fd(), to.as_fd());
    let Exchange { size, wait, .. } = *exchange;
    let pattern = Pattern::new(exchange)?;
    wait.prepare(from)?;
    wait.prepare(to)?;
    let mut buf = vec![0u8; size];
    let mut trip = 0;
    while read_message(from, &mut buf, wait, "ponger")? {
        pattern.check(&buf, trip, "ponger")?;
        write_message(to, &buf, wait, "ponger")?;
        trip += 1;
    }
    Ok(trip)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sys::pipe;

    #[test]
    fn a_wrong_byte_is_reported_with_its_place() {
        let (a_to_b, b_to_a) = (pipe().unwrap(), pipe().unwrap());
        let ex = Exchange {
            size: 300,
            wait: Wait::Block,
            verify: true,
        };
        let pattern = Pattern::new(&ex).unwrap();
        let mut msg = vec![0u8; 300];
        pattern.stamp(&mut msg, 0);
        msg[257] ^= 1;
        rustix::io::write(&a_to_b.write, &msg).unwrap();
        drop(a_to_b.write);
        let err = pong(a_to_b.read, b_to_a.write, &ex).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("byte 257 of 300"), "{err}");
        // Without verify only the ends are checked: a stale message is caught.
        let cheap = Pattern::new(&Exchange {
            verify: false,
            ..ex
        })
        .unwrap();
        let mut stale = vec![0u8; 300];
        cheap.stamp(&mut stale, 1);
        assert!(cheap.check(&stale, 2, "t").is_err());
        assert!(cheap.check(&stale, 1, "t").is_ok());
        assert!(Pattern::new(&Exchange { size: 0, ..ex }).is_err());
    }

    #[test]
    fn a_message_past_the_largest_is_refused_not_allocated() {
        let ex = |size| Exchange {
            size,
            wait: Wait::Block,
            verify: false,
        };
        for size in [MAX_MESSAGE + 1, usize::MAX - 254, usize::MAX] {
            let err = Pattern::new(&ex(size)).err().unwrap();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{size}: {err}");
        }
        assert!(Pattern::new(&ex(MAX_MESSAGE)).is_ok());
    }
}
