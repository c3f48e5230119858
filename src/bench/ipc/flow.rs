//! What the ends do over any mechanism: the sender and the receiver of a
//! throughput run, the pinger and the ponger of a latency run. With
//! `verify` every byte carries the [`crate::verify`] stream and is checked
//! where it is received.

use std::io;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::super::hist::Trips;
use super::record::TripRun;
use super::traits::{Receiver, Sender, Sink};
use crate::bench::reader::ReceiveClock;
use crate::verify::{Verifier, fill_pattern};

/// What the receiver of a throughput run reports (as JSON, from a
/// worker).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Received {
    /// Bytes received in all.
    pub bytes: u64,
    /// Bytes after the first receive, the ones timed.
    pub timed_bytes: u64,
    /// Seconds from the first receive to the last.
    pub seconds: f64,
    /// `timed_bytes / seconds`.
    pub gib_s: f64,
}

/// A received stream whose bytes are not the sender's, in words.
fn mismatch_error(found: crate::verify::Mismatch) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "verify failed: byte {} is {:#04x}, expected {:#04x} ({})",
            found.offset,
            found.found,
            found.expected,
            found.kind()
        ),
    )
}

/// Checks `bytes` as the next of the stream `verifier` follows.
fn check(verifier: &mut Verifier, bytes: &[u8]) -> io::Result<()> {
    verifier.check(bytes).map_err(mismatch_error)
}

/// Sends `bytes` in messages of `size` (the last one shorter if they do
/// not divide), then says it is done.
pub(crate) fn send_stream(
    tx: &mut dyn Sender,
    size: usize,
    bytes: u64,
    verify: bool,
) -> io::Result<()> {
    let mut offset = 0u64;
    while offset < bytes {
        let len = (bytes - offset).min(size as u64) as usize;
        if verify {
            fill_pattern(&mut tx.buffer()[..len], offset);
        } else {
            tx.buffer();
        }
        tx.send(len)?;
        offset += len as u64;
    }
    tx.finish()
}

/// Receives until the end, timing from the first receive to the last and
/// checking every byte with `verify`.
pub(crate) fn receive_stream(rx: &mut dyn Receiver, verify: bool) -> io::Result<Received> {
    let mut verifier = verify.then(Verifier::new);
    let mut report = Received::default();
    let mut clock = ReceiveClock::default();
    loop {
        let n = match verifier.as_mut() {
            Some(v) => rx.recv(Some(&mut |b: &[u8]| check(v, b)))?,
            None => rx.recv(None)?,
        };
        if n == 0 {
            break;
        }
        clock.tick();
        report.bytes += n as u64;
        clock.count(n);
    }
    (report.timed_bytes, report.seconds, report.gib_s) = clock.figures();
    // Nothing at all is the sender's story (its words say why); one
    // receive is ours: the clock starts at the first receive, so one
    // receive times nothing.
    if report.bytes > 0 && (report.timed_bytes == 0 || report.seconds <= 0.0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} bytes came in one receive: too few to time (a run sends at least two messages)",
                report.bytes
            ),
        ));
    }
    Ok(report)
}

/// Receives exactly `size` bytes (one message, in as many pieces as the
/// mechanism gives), handing each piece to `take`; `Ok(false)` at the
/// end before its first byte.
fn receive_message(
    rx: &mut dyn Receiver,
    size: usize,
    mut take: Sink<'_>,
    who: &str,
) -> io::Result<bool> {
    let mut got = 0;
    while got < size {
        let n = match take.as_mut() {
            Some(take) => rx.recv(Some(&mut **take))?,
            None => rx.recv(None)?,
        };
        if n == 0 {
            if got == 0 {
                return Ok(false);
            }
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{who}: the channel ended {got} bytes into a {size}-byte message"),
            ));
        }
        got += n;
    }
    if got > size {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{who}: {got} bytes arrived for a {size}-byte message"),
        ));
    }
    Ok(true)
}

/// The pinger: round trips of `size`-byte messages, `warmup_s` seconds
/// not recorded, then `seconds` recorded; says it is done at the end.
pub(crate) fn ping(
    tx: &mut dyn Sender,
    rx: &mut dyn Receiver,
    size: usize,
    warmup_s: f64,
    seconds: f64,
    verify: bool,
) -> io::Result<TripRun> {
    let mut sent = 0u64;
    let mut back = verify.then(Verifier::new);
    let mut trip = |tx: &mut dyn Sender, rx: &mut dyn Receiver| -> io::Result<(Instant, Instant)> {
        if verify {
            fill_pattern(tx.buffer(), sent);
        }
        sent += size as u64;
        let start = Instant::now();
        tx.send(size)?;
        let replied = match back.as_mut() {
            Some(v) => receive_message(rx, size, Some(&mut |b: &[u8]| check(v, b)), "pinger")?,
            None => receive_message(rx, size, None, "pinger")?,
        };
        if !replied {
            return Err(io::Error::other(
                "pinger: the ponger closed its end instead of replying",
            ));
        }
        Ok((start, Instant::now()))
    };
    let begin = Instant::now();
    let mut warmup_round_trips = 0;
    while begin.elapsed().as_secs_f64() < warmup_s {
        trip(tx, rx)?;
        warmup_round_trips += 1;
    }
    let mut trips = Trips::new(Instant::now());
    let measure = Instant::now();
    while trips.count() == 0 || measure.elapsed().as_secs_f64() < seconds {
        let (start, stop) = trip(tx, rx)?;
        trips.record(start, stop);
    }
    tx.finish()?;
    Ok(trips.finish(warmup_round_trips))
}

/// The ponger: receives each whole message, checks it with `verify`, and
/// sends it back, until the pinger is done. Returns the round trips
/// served.
pub(crate) fn pong(
    rx: &mut dyn Receiver,
    tx: &mut dyn Sender,
    size: usize,
    verify: bool,
) -> io::Result<u64> {
    let mut verifier = verify.then(Verifier::new);
    let mut trips = 0;
    loop {
        let buf = tx.buffer();
        let mut at = 0;
        let mut take = |b: &[u8]| {
            let Some(place) = buf.get_mut(at..at + b.len()) else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("ponger: more than a {size}-byte message arrived at once"),
                ));
            };
            place.copy_from_slice(b);
            at += b.len();
            match verifier.as_mut() {
                Some(v) => check(v, b),
                None => Ok(()),
            }
        };
        if !receive_message(rx, size, Some(&mut take), "ponger")? {
            break;
        }
        tx.send(size)?;
        trips += 1;
    }
    // No end to say: the pinger has gone, and a datagram to it would be
    // refused.
    Ok(trips)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::channel::{one_way, two_way};
    use super::super::ends::{Setup, Way, receiver, sender};
    use super::super::mechanism::Mechanism;
    use super::*;

    /// An end's setup, its ends on CPUs apart.
    fn setup(size: usize, way: Way) -> Setup {
        Setup {
            size,
            way,
            shared_cpu: false,
        }
    }

    /// Every mechanism's ends, in two threads of this process.
    fn stream(mechanism: Mechanism, size: usize, bytes: u64) -> io::Result<Received> {
        let ch = one_way(mechanism, size)?;
        let mut tx = sender(mechanism, ch.send, setup(size, Way::Forward))?;
        let mut rx = receiver(mechanism, ch.recv, setup(size, Way::Forward))?;
        std::thread::scope(|s| {
            let sent = s.spawn(move || send_stream(tx.as_mut(), size, bytes, true));
            let got = receive_stream(rx.as_mut(), true);
            sent.join().unwrap()?;
            got
        })
    }

    #[test]
    fn every_mechanism_moves_the_exact_bytes_in_threads() {
        let mq_max = crate::sys::mq::mqueue_limit(crate::sys::mq::MSGSIZE_MAX);
        let page = rustix::param::page_size();
        for m in Mechanism::ALL {
            for size in [1usize, 4095, 65537] {
                let bytes = (size as u64 * 5).max(100_000);
                // A size the mechanism cannot take: a pipe of half a
                // message that is not a power of two pages, a message past
                // the queue's limit, a datagram past the socket's buffer.
                let too_large = match m {
                    Mechanism::PipeSplice | Mechanism::IoUringSplice => {
                        !size.div_ceil(page).is_power_of_two()
                    }
                    Mechanism::Mqueue => Some(size) > mq_max,
                    Mechanism::UnixDgram | Mechanism::UnixSeqpacket => true,
                    _ => false,
                };
                match stream(m, size, bytes) {
                    Ok(got) => assert_eq!(got.bytes, bytes, "{m} at {size}"),
                    Err(e) if e.kind() == io::ErrorKind::Unsupported && too_large => {}
                    // A facility this machine refuses: a visible skip, or
                    // a failure where the run requires it.
                    Err(e) if m.facility().is_some() => {
                        let refused: io::Result<()> = Err(e);
                        let _ = crate::sys::available(m.facility().unwrap_or_default(), refused);
                    }
                    Err(e) => panic!("{m} at {size}: {e}"),
                }
            }
        }
    }

    #[test]
    fn round_trips_echo_the_exact_bytes_in_threads() {
        // 1 MiB: a datagram larger than the default send buffer must fit
        // both ways (the ponger sends on the other socket of the pair).
        let mq_max = crate::sys::mq::mqueue_limit(crate::sys::mq::MSGSIZE_MAX);
        for size in [5000, 1 << 20] {
            for m in Mechanism::ALL
                .into_iter()
                .filter(|m| m.no_round_trip().is_none())
            {
                let (pinger, ponger) = match two_way(m, size) {
                    Ok(ends) => ends,
                    Err(e) if m == Mechanism::Mqueue && Some(size) > mq_max => {
                        assert_eq!(e.kind(), io::ErrorKind::Unsupported, "{e}");
                        continue;
                    }
                    Err(e) => panic!("{m} at {size}: {e}"),
                };
                let way = |way| setup(size, way);
                let mut p_tx = sender(m, pinger.send, way(Way::Forward)).unwrap();
                let mut p_rx = receiver(m, pinger.recv, way(Way::Back)).unwrap();
                let mut q_tx = sender(m, ponger.send, way(Way::Back)).unwrap();
                let mut q_rx = receiver(m, ponger.recv, way(Way::Forward)).unwrap();
                let (run, served) = std::thread::scope(|s| {
                    let served = s.spawn(move || pong(q_rx.as_mut(), q_tx.as_mut(), size, true));
                    let run = ping(p_tx.as_mut(), p_rx.as_mut(), size, 0.0, 0.01, true);
                    drop((p_tx, p_rx));
                    (run, served.join().unwrap())
                });
                let (run, served) = (run.unwrap(), served.unwrap());
                assert!(run.round_trips > 0, "{m} at {size}");
                assert_eq!(
                    served,
                    run.round_trips + run.warmup_round_trips,
                    "{m} at {size}"
                );
            }
        }
    }

    #[test]
    fn a_pinger_that_fails_ends_its_ponger_at_once() {
        for m in Mechanism::ALL
            .into_iter()
            .filter(|m| m.no_round_trip().is_none())
        {
            let size = 100;
            let (pinger, ponger) = two_way(m, size).unwrap();
            let way = |way| setup(size, way);
            let q_tx = sender(m, ponger.send, way(Way::Back)).unwrap();
            let q_rx = receiver(m, ponger.recv, way(Way::Forward)).unwrap();
            let (done, ended) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let (mut q_rx, mut q_tx) = (q_rx, q_tx);
                let _ = done.send(
                    pong(q_rx.as_mut(), q_tx.as_mut(), size, true).map_err(|e| e.to_string()),
                );
            });
            // The pinger's ends go without a word: an error cut it short.
            let p_tx = sender(m, pinger.send, way(Way::Forward)).unwrap();
            let p_rx = receiver(m, pinger.recv, way(Way::Back)).unwrap();
            drop((p_tx, p_rx));
            let served = ended.recv_timeout(std::time::Duration::from_secs(5));
            assert_eq!(served, Ok(Ok(0)), "{m}: the ponger did not end");
        }
    }
}
