//! One writer's and one reader's loop, the same in threads and in
//! processes: what they time, count and check.

use std::io;
use std::os::fd::BorrowedFd;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::bench::hist::{new_histogram, record};
use crate::buf::{Buffer, BufferOptions, MALLOC_OFFSET};
use crate::sys::pin_to_cpu;
use crate::sys::process::interrupted;

use super::frame::{Tally, TallyReport, fill_message};

/// Now, in nanoseconds of `CLOCK_MONOTONIC`: one clock for every thread
/// and process of a run, so their times can be compared.
pub(crate) fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// What an end needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EndSetup {
    /// Bytes per message.
    pub msg_size: usize,
    /// Writers on the pipe (readers need it to check cells).
    pub writers: usize,
    /// Readers on the pipe (a sole reader sees the whole stream).
    pub readers: usize,
    /// Send and check self-describing messages.
    pub verify: bool,
    /// The CPU to pin the end to.
    pub cpu: Option<usize>,
}

/// What one writer did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WriterEnd {
    /// Messages written whole.
    pub messages: u64,
    /// Bytes written.
    pub bytes: u64,
    /// When the first write began (`CLOCK_MONOTONIC` ns), if there was one.
    pub first_ns: Option<u64>,
    /// When the last write returned.
    pub last_ns: Option<u64>,
    /// Nanoseconds per message: from the first `write(2)` of a message to
    /// the return of the one that put its last byte in.
    #[serde(with = "hist_pairs")]
    pub latency: Histogram<u64>,
}

/// What one reader did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReaderEnd {
    /// Bytes read.
    pub bytes: u64,
    /// `read(2)` calls that returned data.
    pub calls: u64,
    /// Nanoseconds per `read(2)` call that returned data, waiting
    /// included.
    #[serde(with = "hist_pairs")]
    pub latency: Histogram<u64>,
    /// With `--verify`: what the reader received.
    pub tally: Option<TallyReport>,
}

/// The buffers an end works with, allocated (and faulted in) before the
/// start so no page fault lands in a measurement.
pub(crate) struct Prepared {
    buf: Buffer,
}

/// Pins the calling thread (if asked) and maps the end's buffer: the
/// writer's 16 bytes past a page boundary as malloc places it (as the
/// ladder's write-read rung does), the reader's page-aligned.
pub(crate) fn prepare(setup: &EndSetup, writer: bool) -> io::Result<Prepared> {
    if let Some(cpu) = setup.cpu {
        pin_to_cpu(cpu)?;
    }
    let options = BufferOptions {
        offset: if writer { MALLOC_OFFSET } else { 0 },
        ..BufferOptions::default()
    };
    let buf = Buffer::new(setup.msg_size, options).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "cannot map a {}-byte message buffer: {}",
                setup.msg_size,
                crate::quote::strerror(&e)
            ),
        )
    })?;
    Ok(Prepared { buf })
}

/// Writes messages into `out` until `stop_ns` (or an interrupt), timing
/// each message.
pub(crate) fn write_messages(
    out: BorrowedFd<'_>,
    index: usize,
    setup: &EndSetup,
    prepared: Prepared,
    stop_ns: u64,
) -> io::Result<WriterEnd> {
    let mut buf = prepared.buf;
    let mut end = WriterEnd {
        messages: 0,
        bytes: 0,
        first_ns: None,
        last_ns: None,
        latency: new_histogram(),
    };
    let writer_id = index as u16;
    while interrupted().is_none() {
        if setup.verify {
            fill_message(&mut buf, writer_id, end.messages);
        }
        let start = now_ns();
        if start >= stop_ns {
            break;
        }
        crate::wait::write_all(out, &buf, |_| {}).map_err(|e| {
            let why = if e.kind() == io::ErrorKind::BrokenPipe {
                "every reader is gone".to_string()
            } else {
                e.to_string()
            };
            io::Error::new(
                e.kind(),
                format!("writer {index}: write to the pipe failed: {why}"),
            )
        })?;
        let done = now_ns();
        record(&mut end.latency, done - start);
        end.first_ns.get_or_insert(start);
        end.last_ns = Some(done);
        end.messages += 1;
        end.bytes += buf.len() as u64;
    }
    Ok(end)
}

/// Reads from `input` until end of file (every writer gone), asking each
/// time for the rest of the current message, timing each call.
pub(crate) fn read_messages(
    input: BorrowedFd<'_>,
    index: usize,
    setup: &EndSetup,
    prepared: Prepared,
) -> io::Result<ReaderEnd> {
    let mut buf = prepared.buf;
    let msg_size = buf.len();
    let sole = setup.readers == 1;
    let mut tally = setup
        .verify
        .then(|| Tally::new(setup.writers, msg_size, sole));
    let mut end = ReaderEnd {
        bytes: 0,
        calls: 0,
        latency: new_histogram(),
        tally: None,
    };
    loop {
        let want = msg_size - (end.bytes % msg_size as u64) as usize;
        let start = now_ns();
        let n = crate::wait::read(input, &mut buf[..want]).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "reader {index}: read from the pipe failed: {}",
                    crate::quote::strerror(&e)
                ),
            )
        })?;
        if n == 0 {
            break;
        }
        record(&mut end.latency, now_ns() - start);
        end.calls += 1;
        end.bytes += n as u64;
        if let Some(t) = &mut tally {
            t.feed(&buf[..n]);
        }
    }
    end.tally = tally.map(Tally::finish);
    Ok(end)
}

/// A histogram as `[value, count]` pairs of its recorded buckets, for the
/// reports worker processes send back.
mod hist_pairs {
    use hdrhistogram::Histogram;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::bench::hist::new_histogram;

    pub(super) fn serialize<S: Serializer>(h: &Histogram<u64>, s: S) -> Result<S::Ok, S::Error> {
        let pairs: Vec<[u64; 2]> = h
            .iter_recorded()
            .map(|v| [v.value_iterated_to(), v.count_at_value()])
            .collect();
        pairs.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Histogram<u64>, D::Error> {
        let pairs = Vec::<[u64; 2]>::deserialize(d)?;
        let mut h = new_histogram();
        for [value, count] in pairs {
            h.record_n(value, count).map_err(serde::de::Error::custom)?;
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::hist::LatencyNs;

    #[test]
    fn a_histogram_survives_the_trip_through_json() {
        let mut end = WriterEnd {
            messages: 3,
            bytes: 3,
            first_ns: Some(1),
            last_ns: Some(9),
            latency: new_histogram(),
        };
        for ns in [100, 2_000, 2_000, 3_000_000] {
            record(&mut end.latency, ns);
        }
        let json = serde_json::to_string(&end).unwrap();
        let back: WriterEnd = serde_json::from_str(&json).unwrap();
        assert_eq!(back.latency.len(), 4);
        assert_eq!(LatencyNs::of(&back.latency), LatencyNs::of(&end.latency));
    }

    #[test]
    fn one_writer_and_one_reader_move_every_byte() {
        let crate::sys::PipePair { read, write } = crate::sys::pipe().unwrap();
        let setup = EndSetup {
            msg_size: 4096,
            writers: 1,
            readers: 1,
            verify: true,
            cpu: None,
        };
        let reader = std::thread::spawn(move || {
            let p = prepare(&setup, false).unwrap();
            read_messages(std::os::fd::AsFd::as_fd(&read), 0, &setup, p).unwrap()
        });
        let p = prepare(&setup, true).unwrap();
        let stop = now_ns() + 20_000_000;
        let w = write_messages(std::os::fd::AsFd::as_fd(&write), 0, &setup, p, stop).unwrap();
        drop(write);
        let r = reader.join().unwrap();
        assert!(w.messages > 0);
        assert_eq!(r.bytes, w.bytes);
        assert_eq!(w.latency.len(), w.messages);
        let v = super::super::tally::check(&[r.tally.unwrap()], &[w.messages], 4096, true);
        assert!(v.ok, "{v:?}");
    }
}
