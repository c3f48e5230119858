//! Ping-pong round-trip latency over a pair of pipes, as `perf bench sched
//! pipe` and lmbench's `lat_pipe` measure it, with percentiles.
//!
//! The pinger writes a message into pipe A->B, the ponger reads all of it
//! and writes it back into pipe B->A, and the pinger reads all of the
//! reply: one round trip, timed with the monotonic clock and recorded in an
//! HDR histogram. One way is about half of it. Messages larger than
//! `PIPE_BUF` or than the pipe itself arrive in several pieces: both sides
//! loop on partial reads and writes.
//!
//! Every message carries a pattern that depends on its round trip: both
//! sides check its first and last bytes (cheap, always), or every byte
//! with `verify`.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

use std::path::PathBuf;
use std::process::Stdio;

use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use super::hist::{LatencyNs, new_histogram, record};
use super::stats::{median, min_max};
use super::worker::{Role, Worker};
use crate::child::{Group, last_message};
use crate::sys::{SystemFacts, pin_to_cpu, pipe};
use crate::wait::{Direction, Wait};

/// The `schema` of [`LatencyResult`] documents.
pub const SCHEMA: &str = "pipespeed.latency/1";

/// Whether pinger and ponger are two processes or two threads of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Two processes (the ponger is a child process).
    Processes,
    /// Two threads of one process.
    Threads,
}

/// Where pinger and ponger run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Placement {
    /// Each pinned to one CPU (possibly the same one).
    Pinned {
        /// The pinger's CPU.
        pinger_cpu: usize,
        /// The ponger's CPU.
        ponger_cpu: usize,
    },
    /// Left to the scheduler, within the process's allowed CPUs.
    Unpinned,
}

impl Placement {
    /// The pinger's and the ponger's CPU, `None` when unpinned.
    pub fn cpus(self) -> (Option<usize>, Option<usize>) {
        match self {
            Placement::Pinned {
                pinger_cpu,
                ponger_cpu,
            } => (Some(pinger_cpu), Some(ponger_cpu)),
            Placement::Unpinned => (None, None),
        }
    }
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cpus() {
            (Some(a), Some(b)) if a == b => write!(f, "pinger and ponger both on CPU {a}"),
            (Some(a), Some(b)) => write!(f, "pinger on CPU {a}, ponger on CPU {b}"),
            _ => f.write_str("unpinned (left to the scheduler)"),
        }
    }
}

/// How long a warm-up or a measurement lasts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Span {
    /// This many round trips.
    RoundTrips(u64),
    /// Round trips until this many seconds have passed.
    Seconds(f64),
}

impl Span {
    /// Whether a span that has done `trips` round trips in `elapsed` is over.
    pub fn is_over(self, trips: u64, elapsed: Duration) -> bool {
        match self {
            Span::RoundTrips(n) => trips >= n,
            Span::Seconds(s) => elapsed.as_secs_f64() >= s,
        }
    }
}

/// What both sides agree on: the message and how to wait for the pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchange {
    /// Bytes per message (at least 1).
    pub size: usize,
    /// How both sides wait for their pipes.
    pub wait: Wait,
    /// Check every byte of every message, not just the first and last.
    pub verify: bool,
}

/// What the pinger does in one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingConfig {
    /// The messages.
    pub exchange: Exchange,
    /// Round trips made, not recorded, before measuring.
    pub warmup: Span,
    /// How long the measurement lasts.
    pub measure: Span,
}

/// One measured run of one message size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRun {
    /// Round trips measured (warm-up excluded).
    pub round_trips: u64,
    /// Seconds from the first measured round trip's start to the last one's end.
    pub seconds: f64,
    /// `round_trips / seconds`.
    pub round_trips_per_s: f64,
    /// The round-trip times.
    pub rtt_ns: LatencyNs,
    /// Round trips made before measuring.
    pub warmup_round_trips: u64,
}

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
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "{who}: cannot read: {}",
                        crate::quote::strerror(&io::Error::from(e))
                    ),
                ));
            }
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
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "{who}: cannot write: {}",
                        crate::quote::strerror(&io::Error::from(e))
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The pinger: sends messages into `to`, reads each reply from `from`,
/// warms up then measures as `config` says. Its ends are closed on return,
/// which ends the ponger.
pub fn ping(to: impl AsFd, from: impl AsFd, config: &PingConfig) -> io::Result<LatencyRun> {
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
    let mut histogram = new_histogram();
    let begin = Instant::now();
    let (mut first_start, mut end) = (None, begin);
    while !config
        .measure
        .is_over(trip - warmup_round_trips, end - begin)
    {
        let (start, stop) = round_trip(trip)?;
        first_start.get_or_insert(start);
        end = stop;
        let ns = (stop - start).as_nanos();
        record(&mut histogram, u64::try_from(ns).unwrap_or(u64::MAX));
        trip += 1;
    }
    let round_trips = trip - warmup_round_trips;
    let seconds = (end - first_start.unwrap_or(end)).as_secs_f64();
    Ok(LatencyRun {
        round_trips,
        seconds,
        round_trips_per_s: if seconds > 0.0 {
            round_trips as f64 / seconds
        } else {
            0.0
        },
        rtt_ns: LatencyNs::of(&histogram),
        warmup_round_trips,
    })
}

/// The ponger: reads each whole message from `from`, checks it and writes
/// it back into `to`, until the pinger closes its end. Returns the number
/// of round trips served.
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

/// Makes one run: pinger and ponger placed as told, in whatever form the
/// runner gives them (threads, processes, or a mock).
pub trait Runner {
    /// One run of `config` with the sides on `placement`.
    fn run(&mut self, config: &PingConfig, placement: Placement) -> io::Result<LatencyRun>;
}

/// Pinger and ponger as two threads of this process.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadRunner;

impl Runner for ThreadRunner {
    fn run(&mut self, config: &PingConfig, placement: Placement) -> io::Result<LatencyRun> {
        let (a_to_b, b_to_a) = (pipe()?, pipe()?);
        let (pinger_cpu, ponger_cpu) = placement.cpus();
        let exchange = config.exchange;
        std::thread::scope(|s| {
            // Each side owns its ends, so they close when it returns: a
            // side that fails ends the other one instead of hanging it.
            let ponger = s.spawn(move || {
                pin(ponger_cpu, "ponger")?;
                pong(a_to_b.read, b_to_a.write, &exchange)
            });
            let pinger = s.spawn(move || {
                pin(pinger_cpu, "pinger")?;
                ping(a_to_b.write, b_to_a.read, config)
            });
            let panicked = |who: &str| io::Error::other(format!("the {who} thread panicked"));
            let pinged = pinger.join().map_err(|_| panicked("pinger"))?;
            let served = ponger.join().map_err(|_| panicked("ponger"))?;
            // The ponger's error is the cause when both failed.
            let (run, served) = (pinged?, served?);
            let sent = run.warmup_round_trips + run.round_trips;
            if served != sent {
                return Err(io::Error::other(format!(
                    "the ponger served {served} round trips, the pinger made {sent}"
                )));
            }
            Ok(run)
        })
    }
}

/// Pinger in a thread of this process, ponger in a child process: this
/// binary (`exe`) run as a [`Role::Ponger`] worker, its stdin and stdout
/// the two pipes.
#[derive(Debug, Clone)]
pub struct ProcessRunner {
    /// The pipespeed binary.
    pub exe: PathBuf,
}

/// How long a ponger may take to exit once the pinger is done.
const PONGER_EXIT_TIMEOUT: Duration = Duration::from_secs(10);

impl Runner for ProcessRunner {
    fn run(&mut self, config: &PingConfig, placement: Placement) -> io::Result<LatencyRun> {
        let (a_to_b, b_to_a) = (pipe()?, pipe()?);
        let (pinger_cpu, ponger_cpu) = placement.cpus();
        let ponger = Worker::new(
            Role::Ponger {
                exchange: config.exchange,
            },
            ponger_cpu,
        );
        let mut cmd = ponger.command(&self.exe);
        // Our pipes are close-on-exec; dup2 onto stdin and stdout clears
        // that, so the child holds exactly its two ends.
        cmd.stdin(Stdio::from(a_to_b.read))
            .stdout(Stdio::from(b_to_a.write))
            .stderr(Stdio::piped());
        let mut group = Group::new();
        let child = group.spawn(&mut cmd, "the ponger".into())?;
        // Close our copies of the child's ends, so that each side sees the
        // other one go.
        drop(cmd);
        let pinged = std::thread::scope(|s| {
            s.spawn(move || {
                pin(pinger_cpu, "pinger")?;
                ping(a_to_b.write, b_to_a.read, config)
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the pinger thread panicked")))
        });
        // It exits on end of file; the ponger's error is the cause when
        // both failed.
        let ended = group.finish(child, PONGER_EXIT_TIMEOUT);
        match (ended.killed, ended.success(), last_message(&ended.stderr)) {
            (true, _, _) => Err(io::Error::other(
                "the ponger did not exit after the pinger finished; killed",
            )),
            (false, true, _) => pinged,
            (false, false, "") => Err(io::Error::other(match ended.status {
                Some(status) => format!("the ponger failed ({status})"),
                None => "cannot wait for the ponger".to_string(),
            })),
            (false, false, why) => Err(io::Error::other(why.to_string())),
        }
    }
}

/// Pins the calling thread to `cpu`, if any, saying who failed.
pub fn pin(cpu: Option<usize>, who: &str) -> io::Result<()> {
    match cpu {
        Some(cpu) => pin_to_cpu(cpu).map_err(|e| {
            io::Error::new(e.kind(), format!("{who}: {}", crate::quote::strerror(&e)))
        }),
        None => Ok(()),
    }
}

/// What a latency measurement is asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyConfig {
    /// Message sizes, one row each.
    pub sizes: Vec<usize>,
    /// Runs per size.
    pub runs: usize,
    /// Warm-up before each run.
    pub warmup: Span,
    /// Length of each run.
    pub measure: Span,
    /// How both sides wait.
    pub wait: Wait,
    /// Check every byte.
    pub verify: bool,
    /// Threads or processes (recorded; the runner makes it so).
    pub mode: Mode,
    /// Where the sides run.
    pub placement: Placement,
}

/// How the runs of one size spread: the smallest and largest per-run
/// median and rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Smallest per-run p50, in ns.
    pub p50_ns_min: u64,
    /// Largest per-run p50, in ns.
    pub p50_ns_max: u64,
    /// Smallest per-run round trips per second.
    pub round_trips_per_s_min: f64,
    /// Largest per-run round trips per second.
    pub round_trips_per_s_max: f64,
}

/// The result of one message size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRow {
    /// Bytes per message.
    pub size: usize,
    /// Median over runs of round trips per second.
    pub round_trips_per_s: f64,
    /// Field by field, the median over runs of the round-trip summaries.
    pub rtt_ns: LatencyNs,
    /// How the runs spread.
    pub spread: Spread,
    /// Every run, in the order made.
    pub runs: Vec<LatencyRun>,
}

impl LatencyRow {
    /// The row of `size` summarising `runs`.
    pub fn summarize(size: usize, runs: Vec<LatencyRun>) -> LatencyRow {
        let rates: Vec<f64> = runs.iter().map(|r| r.round_trips_per_s).collect();
        let p50s: Vec<f64> = runs.iter().map(|r| r.rtt_ns.p50 as f64).collect();
        let (p50_min, p50_max) = min_max(&p50s).unwrap_or_default();
        let (rate_min, rate_max) = min_max(&rates).unwrap_or_default();
        let summaries: Vec<LatencyNs> = runs.iter().map(|r| r.rtt_ns).collect();
        LatencyRow {
            size,
            round_trips_per_s: median(&rates).unwrap_or(0.0),
            rtt_ns: LatencyNs::median_of(&summaries),
            spread: Spread {
                p50_ns_min: p50_min as u64,
                p50_ns_max: p50_max as u64,
                round_trips_per_s_min: rate_min,
                round_trips_per_s_max: rate_max,
            },
            runs,
        }
    }
}

/// Everything a latency measurement found, with what it was asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyResult {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The pipespeed version that measured.
    pub pipespeed_version: String,
    /// The machine.
    pub system: SystemFacts,
    /// What was asked (its fields are the document's).
    #[serde(flatten)]
    pub config: LatencyConfig,
    /// One per size, in the order asked.
    pub rows: Vec<LatencyRow>,
}

/// Runs every size `config.runs` times with `runner`, calling `on_run`
/// after each run, and summarises.
pub fn run_latency(
    config: &LatencyConfig,
    system: SystemFacts,
    runner: &mut dyn Runner,
    on_run: &mut dyn FnMut(usize, &LatencyRun),
) -> io::Result<LatencyResult> {
    let mut rows = Vec::with_capacity(config.sizes.len());
    for &size in &config.sizes {
        let ping = PingConfig {
            exchange: Exchange {
                size,
                wait: config.wait,
                verify: config.verify,
            },
            warmup: config.warmup,
            measure: config.measure,
        };
        let mut runs = Vec::with_capacity(config.runs);
        for i in 0..config.runs {
            let run = runner.run(&ping, config.placement).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{size}-byte messages, run {}: {}",
                        i + 1,
                        crate::quote::strerror(&e)
                    ),
                )
            })?;
            on_run(size, &run);
            runs.push(run);
        }
        rows.push(LatencyRow::summarize(size, runs));
    }
    Ok(LatencyResult {
        schema: SCHEMA.to_string(),
        pipespeed_version: env!("CARGO_PKG_VERSION").to_string(),
        system,
        config: config.clone(),
        rows,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
    fn spans_end_on_count_or_time() {
        assert!(!Span::RoundTrips(3).is_over(2, Duration::from_secs(9)));
        assert!(Span::RoundTrips(3).is_over(3, Duration::ZERO));
        assert!(!Span::Seconds(0.5).is_over(1000, Duration::from_millis(499)));
        assert!(Span::Seconds(0.5).is_over(0, Duration::from_millis(500)));
    }

    #[test]
    fn rows_take_medians_and_spreads_of_runs() {
        let run = |rate: f64, p50: u64| LatencyRun {
            round_trips: 100,
            seconds: 100.0 / rate,
            round_trips_per_s: rate,
            rtt_ns: LatencyNs {
                mean: p50 as f64,
                p50,
                p90: p50 * 2,
                p99: p50 * 3,
                p999: p50 * 4,
                max: p50 * 5,
            },
            warmup_round_trips: 10,
        };
        let row = LatencyRow::summarize(64, vec![run(300.0, 10), run(100.0, 30), run(200.0, 20)]);
        assert_eq!(row.round_trips_per_s, 200.0);
        assert_eq!((row.rtt_ns.p50, row.rtt_ns.max), (20, 100));
        assert_eq!((row.spread.p50_ns_min, row.spread.p50_ns_max), (10, 30));
        assert_eq!(row.spread.round_trips_per_s_min, 100.0);
        assert_eq!(row.spread.round_trips_per_s_max, 300.0);
        assert_eq!(row.runs.len(), 3);
    }
}
