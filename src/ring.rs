//! A byte ring in shared memory: one producer, one consumer, each in its
//! own process, the physical limit of copying IPC (`peers/ipc_ref.c` is
//! the same ring in C, its reference).
//!
//! The producer copies each message in; the consumer takes the bytes in
//! place. Positions are wrapping `u32` byte counts (`head` written, `tail`
//! taken), each on a cache line of its own so that the ends do not bounce
//! one line between their CPUs.
//!
//! A waiting end spins on the other's position, or spins briefly and then
//! sleeps in `FUTEX_WAIT` after raising its `waiting` flag; the other end
//! calls `FUTEX_WAKE` only when that flag is up, so a ring that never runs
//! full or empty for long makes no system call. Flag and position are each
//! stored before the other is loaded, with `SeqCst` between (Dekker's
//! handshake), so no wake-up is missed. An end that waits its `silence` in
//! vain fails: a ring has no end of file when the other process dies.
//!
//! # One producer, one consumer
//!
//! The protocol is sound only with one producer and one consumer per ring
//! and nothing else writing its memory (a consumer hands the bytes on in
//! place, as `&[u8]`). The ends are opened from a descriptor that may
//! travel to other processes, so the file itself enforces this:
//!
//! - only a file made by [`create`] is opened: a memfd whose size is
//!   sealed (it can neither shrink under a mapping nor be read past) and
//!   whose first page says the message size and the number of rings;
//! - an end claims its ring's producer or consumer word with a
//!   compare-and-swap when it opens: a second one, in any process, is
//!   refused; claims are never given back;
//! - the end that completes the set of claims seals the file against
//!   writes (`F_SEAL_FUTURE_WRITE`); a consumer hands bytes on in place
//!   only once it has seen that seal. Before it, the ends touch the bytes
//!   only through atomics and raw copies, never through a reference.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering, fence};

use rustix::mm::{MapFlags, ProtFlags};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::thread::futex::{self, Timespec};

mod file;

pub use file::create;
use file::{Role, check_size, layout, read_word, seal_when_complete, sealed};

/// Where a consumer may hand the bytes it took, in place; `None`: nobody
/// looks at them.
pub type Sink<'a> = Option<&'a mut dyn FnMut(&[u8]) -> io::Result<()>>;

/// The largest message: positions are `u32` counts, and the ring must
/// stay far below 2^31 bytes.
pub const MAX_MESSAGE: usize = 1 << 28;

/// The error of an end that waited `within` in vain while trying to
/// `doing` ("send" or "receive").
pub fn silence_error(doing: &str, within: Duration) -> io::Error {
    let what = match doing {
        "send" => "no room came",
        _ => "nothing came",
    };
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "cannot {doing}: {what} for {} s, the other end has stopped",
            within.as_secs()
        ),
    )
}

/// Bytes before the data: the positions and flags, a cache line each.
const HEADER: usize = 4096;
const HEAD: usize = 0;
const TAIL: usize = 64;
const PRODUCER_WAITING: usize = 128;
const CONSUMER_WAITING: usize = 192;
const CLOSED: usize = 256;
/// The data bytes of a ring for messages of `size`: at least 1 MiB and
/// four messages, a power of two. A size over [`MAX_MESSAGE`], which no
/// ring takes, counts as [`MAX_MESSAGE`].
pub fn capacity(size: usize) -> usize {
    (4 * size.min(MAX_MESSAGE)).max(1 << 20).next_power_of_two()
}

/// The bytes one ring for messages of `size` takes in the shared file
/// (a whole number of pages, so that rings can follow each other).
pub fn ring_bytes(size: usize) -> usize {
    HEADER + capacity(size)
}

/// One ring, mapped from a shared file.
struct Ring {
    base: NonNull<u8>,
    len: usize,
    cap: usize,
    wait: RingWait,
    /// How long an end waits in vain before it fails.
    silence: Duration,
    /// The file, for its seals.
    file: OwnedFd,
}

/// What both ends of a ring agree on when they open it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingSpec {
    /// The largest message, in bytes: the size the file was made for.
    pub size: usize,
    /// Which ring of the file.
    pub index: usize,
    /// How a waiting end waits.
    pub wait: RingWait,
    /// How long an end waits in vain before it fails.
    pub silence: Duration,
}

/// How a ring end waits for the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingWait {
    /// Sleeps in `FUTEX_WAIT` at once (the ends share a CPU).
    Sleep,
    /// Spins [`SPINS_BEFORE_SLEEP`] times, then sleeps: a short wait
    /// costs neither end a system call.
    SpinThenSleep,
    /// Spins, never sleeping and never waking the other.
    Spin,
}

/// Spins before an end sleeps: with none, the producer paid a
/// `FUTEX_WAKE` for nearly every 64 KiB message (docs/ipc.md has the
/// figures).
pub const SPINS_BEFORE_SLEEP: u32 = 1000;

/// How long a closing producer repeats its wake-up while the consumer
/// says it is about to sleep.
const CLOSE_WAKE_FOR: Duration = Duration::from_millis(100);

// SAFETY: the mapping is shared memory reached only through atomics and
// the ring protocol; the pointer may move to another thread with it.
unsafe impl Send for Ring {}

impl Ring {
    /// Maps ring `spec.index` of `fd`, a file made by [`create`] for
    /// messages of `spec.size`, and claims it as `role`; with the position
    /// that end writes.
    fn open(fd: BorrowedFd<'_>, spec: RingSpec, role: Role) -> io::Result<(Ring, u32)> {
        let RingSpec {
            size,
            index,
            wait,
            silence,
        } = spec;
        check_size(size)?;
        let rings = layout(fd, size, index)?;
        let len = ring_bytes(size);
        let taken = || {
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "ring {index} already has a {}: a ring takes one producer and one consumer",
                    role.name()
                ),
            )
        };
        // Said before mapping, which a file sealed against writes (every
        // end open) would refuse with a less telling EPERM.
        if read_word(fd, index * len + role.claim())? != 0 {
            return Err(taken());
        }
        // SAFETY: a new shared mapping at an address the kernel picks, so
        // it aliases nothing of ours; `len` bytes at `index * len`, page
        // aligned, inside the file (`layout` checked its length, sealed
        // against shrinking, so no access faults); unmapped only in Drop.
        // Other processes keep to the module's protocol, enforced by the
        // claims and seals.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                fd,
                (index * len) as u64,
            )
        }?;
        let base =
            NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave NULL"))?;
        let ring = Ring {
            base,
            len,
            cap: capacity(size),
            wait,
            silence,
            file: fd.try_clone_to_owned()?,
        };
        if ring
            .word(role.claim())
            .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return Err(taken());
        }
        seal_when_complete(fd, size, rings)?;
        let own = match role {
            Role::Producer => HEAD,
            Role::Consumer => TAIL,
        };
        let position = ring.word(own).load(Ordering::Acquire);
        Ok((ring, position))
    }

    fn word(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: `offset` is one of the header's word offsets, inside the
        // mapping and 4-byte aligned (the mapping is page aligned); the
        // word is only ever accessed atomically, by both ends (`create`
        // wrote the file's words before any end mapped it).
        unsafe { &*self.base.as_ptr().add(offset).cast::<AtomicU32>() }
    }

    fn data(&self) -> *mut u8 {
        // SAFETY: HEADER is inside the mapping of HEADER + cap bytes.
        unsafe { self.base.as_ptr().add(HEADER) }
    }

    /// Waits until `word` no longer holds `seen` (or the producer has
    /// closed), as `self.wait` says; fails after `silence` in vain.
    fn wait(&self, word: usize, seen: u32, waiting: usize) -> io::Result<()> {
        let moved = || {
            self.word(word).load(Ordering::SeqCst) != seen
                || self.word(CLOSED).load(Ordering::SeqCst) != 0
        };
        let spins = match self.wait {
            RingWait::Sleep => 0,
            RingWait::SpinThenSleep => SPINS_BEFORE_SLEEP,
            RingWait::Spin => u32::MAX,
        };
        // The clock is read only once a wait is long: at 4 KiB messages a
        // message takes ~100 ns, and a clock read per wait showed.
        let mut start = None;
        for i in 0..spins {
            if moved() {
                return Ok(());
            }
            std::hint::spin_loop();
            if i % 4096 == 4095 && start.get_or_insert_with(Instant::now).elapsed() > self.silence {
                return Err(silence_error(self.doing(word), self.silence));
            }
        }
        let start = start.unwrap_or_else(Instant::now);
        loop {
            self.word(waiting).store(1, Ordering::SeqCst);
            if !moved() {
                let left = self.silence.saturating_sub(start.elapsed());
                let timeout = Timespec {
                    tv_sec: left.as_secs() as _,
                    tv_nsec: left.subsec_nanos() as _,
                };
                match futex::wait(self.word(word), futex::Flags::empty(), seen, Some(&timeout)) {
                    Ok(()) | Err(Errno::AGAIN | Errno::INTR | Errno::TIMEDOUT) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            self.word(waiting).store(0, Ordering::SeqCst);
            if moved() {
                return Ok(());
            }
            if start.elapsed() >= self.silence {
                return Err(silence_error(self.doing(word), self.silence));
            }
        }
    }

    /// What an end waiting on `word` is doing, for its error.
    fn doing(&self, word: usize) -> &'static str {
        match word {
            HEAD => "receive",
            _ => "send",
        }
    }

    /// After storing `word`: wakes the other end if it sleeps on it.
    fn wake(&self, word: usize, waiting: usize) -> io::Result<()> {
        if self.wait == RingWait::Spin {
            return Ok(());
        }
        fence(Ordering::SeqCst);
        if self.word(waiting).load(Ordering::Relaxed) != 0 {
            futex::wake(self.word(word), futex::Flags::empty(), 1)?;
        }
        Ok(())
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `open`, not used after this.
        let _ = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// The producing end of a ring.
pub struct ShmSender {
    ring: Ring,
    /// `head` as this end last stored it: only this end writes it, so it
    /// need not be read back from the shared line.
    head: u32,
    closed: bool,
    /// The largest message.
    size: usize,
}

impl ShmSender {
    /// The producer of ring `spec.index` of `fd`, a file made by
    /// [`create`] for messages of `spec.size`, failing after
    /// `spec.silence` without room. The ring's only producer: a second
    /// one, in any process, is refused (an error of kind
    /// [`io::ErrorKind::AlreadyExists`]).
    pub fn open(fd: impl AsFd, spec: RingSpec) -> io::Result<ShmSender> {
        let (ring, head) = Ring::open(fd.as_fd(), spec, Role::Producer)?;
        Ok(ShmSender {
            ring,
            head,
            closed: false,
            size: spec.size,
        })
    }

    /// Copies `msg`, at most the ring's message size, into the ring,
    /// waiting for room.
    pub fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        if msg.len() > self.size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a {}-byte message in a ring of {}-byte messages",
                    msg.len(),
                    self.size
                ),
            ));
        }
        let r = &self.ring;
        let head = self.head;
        loop {
            let tail = r.word(TAIL).load(Ordering::Acquire);
            if head.wrapping_sub(tail) as usize + msg.len() <= r.cap {
                break;
            }
            r.wait(TAIL, tail, PRODUCER_WAITING)?;
        }
        let at = head as usize & (r.cap - 1);
        let first = msg.len().min(r.cap - at);
        // SAFETY: [head, head + len) is free: the consumer has taken
        // everything before `tail` and reads nothing past `head` until it
        // is published below; both pieces lie inside the data area.
        unsafe {
            std::ptr::copy_nonoverlapping(msg.as_ptr(), r.data().add(at), first);
            if first < msg.len() {
                std::ptr::copy_nonoverlapping(msg.as_ptr().add(first), r.data(), msg.len() - first);
            }
        }
        self.head = head.wrapping_add(msg.len() as u32);
        r.word(HEAD).store(self.head, Ordering::Release);
        r.wake(HEAD, CONSUMER_WAITING)
    }

    /// Says there is no more: the consumer sees the end once it has taken
    /// everything. Also done on drop.
    ///
    /// The consumer sleeps on `head`, not `closed`: one that saw `closed`
    /// unset may enter `FUTEX_WAIT` just after a wake-up. So the wake-up is
    /// repeated while its flag is up and none was woken.
    pub fn close(&mut self) -> io::Result<()> {
        if std::mem::replace(&mut self.closed, true) {
            return Ok(());
        }
        let r = &self.ring;
        r.word(CLOSED).store(1, Ordering::Release);
        fence(Ordering::SeqCst);
        if r.wait == RingWait::Spin {
            return Ok(());
        }
        // For 100 ms at most: a consumer that died asleep leaves its flag
        // up for ever (and a live one that missed this wakes at its
        // silence timeout).
        let start = Instant::now();
        while futex::wake(r.word(HEAD), futex::Flags::empty(), 1)? == 0
            && r.word(CONSUMER_WAITING).load(Ordering::SeqCst) != 0
            && start.elapsed() < CLOSE_WAKE_FOR
        {
            std::hint::spin_loop();
        }
        Ok(())
    }
}

impl Drop for ShmSender {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// The consuming end of a ring.
pub struct ShmReceiver {
    ring: Ring,
    /// `tail` as this end last stored it (only this end writes it).
    tail: u32,
    max: usize,
    /// Whether the file was seen sealed against writes.
    sealed: bool,
}

impl ShmReceiver {
    /// The consumer of ring `spec.index` of `fd`, taking at most
    /// `spec.size` bytes at a time; its only one, as [`ShmSender::open`]
    /// is its only producer.
    pub fn open(fd: impl AsFd, spec: RingSpec) -> io::Result<ShmReceiver> {
        let (ring, tail) = Ring::open(fd.as_fd(), spec, Role::Consumer)?;
        Ok(ShmReceiver {
            ring,
            tail,
            max: spec.size,
            sealed: false,
        })
    }

    /// Takes up to `size` bytes as soon as there are any, handing them in
    /// place to `sink` if there is one; 0 once the producer has closed
    /// and everything is taken. Fails to hand them on from a file not yet
    /// sealed against writes, where others could change them meanwhile.
    pub fn recv(&mut self, sink: Sink<'_>) -> io::Result<usize> {
        let r = &self.ring;
        let tail = self.tail;
        let head = loop {
            let head = r.word(HEAD).load(Ordering::Acquire);
            if head != tail {
                break head;
            }
            if r.word(CLOSED).load(Ordering::Acquire) != 0 {
                // Bytes published before the close are seen now.
                if r.word(HEAD).load(Ordering::Acquire) == tail {
                    return Ok(0);
                }
                continue;
            }
            r.wait(HEAD, tail, CONSUMER_WAITING)?;
        };
        let n = (head.wrapping_sub(tail) as usize).min(self.max);
        if let Some(sink) = sink {
            if !self.sealed {
                self.sealed = sealed(r.file.as_fd())?;
                if !self.sealed {
                    return Err(io::Error::other(
                        "cannot hand on the ring's bytes: its file is not sealed against \
                         writes (an end of one of its rings never opened)",
                    ));
                }
            }
            let at = tail as usize & (r.cap - 1);
            let first = n.min(r.cap - at);
            // SAFETY: [tail, tail + n) lies in the data area (`at` is
            // masked, `first` <= `cap - at`, `n` <= `max` <= `cap`); it was
            // published by the producer's Release store of `head` (Acquire
            // above) and is not written again until `tail` moves past it:
            // the one producer (claimed) keeps to that, and nothing else
            // writes the file (sealed, checked above).
            let (a, b) = unsafe {
                (
                    std::slice::from_raw_parts(r.data().add(at), first),
                    std::slice::from_raw_parts(r.data(), n - first),
                )
            };
            sink(a)?;
            if !b.is_empty() {
                sink(b)?;
            }
        }
        self.tail = tail.wrapping_add(n as u32);
        r.word(TAIL).store(self.tail, Ordering::Release);
        r.wake(TAIL, PRODUCER_WAITING)?;
        Ok(n)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rustix::fs::MemfdFlags;

    const SILENCE: Duration = Duration::from_secs(30);

    /// Ring `index` of a file for messages of `size`, its ends waiting
    /// as `wait` says.
    fn spec(size: usize, index: usize, wait: RingWait) -> RingSpec {
        RingSpec {
            size,
            index,
            wait,
            silence: SILENCE,
        }
    }

    /// The producer and the consumer of ring `index` of `fd`.
    fn ends(fd: &OwnedFd, size: usize, index: usize, wait: RingWait) -> (ShmSender, ShmReceiver) {
        let spec = spec(size, index, wait);
        let tx = ShmSender::open(fd, spec).unwrap();
        let rx = ShmReceiver::open(fd, spec).unwrap();
        (tx, rx)
    }

    #[test]
    fn bytes_cross_the_ring_in_order_past_its_wrap() {
        for wait in [RingWait::Sleep, RingWait::SpinThenSleep, RingWait::Spin] {
            let size = 300_001;
            let fd = create(size, 1).unwrap();
            let (mut tx, mut rx) = ends(&fd, size, 0, wait);
            // More than the 2 MiB ring, so it wraps, from another thread.
            let messages = 20u32;
            let got = std::thread::scope(|s| {
                s.spawn(move || {
                    for i in 0..messages {
                        let msg: Vec<u8> = (0..size).map(|j| (j as u32 ^ i) as u8).collect();
                        tx.send(&msg).unwrap();
                    }
                });
                let mut got = Vec::new();
                loop {
                    let mut sink = |b: &[u8]| {
                        got.extend_from_slice(b);
                        Ok(())
                    };
                    if rx.recv(Some(&mut sink)).unwrap() == 0 {
                        break got;
                    }
                }
            });
            let want: Vec<u8> = (0..messages)
                .flat_map(|i| (0..size).map(move |j| (j as u32 ^ i) as u8))
                .collect();
            assert_eq!(got.len(), want.len());
            assert!(got == want, "bytes differ ({wait:?})");
        }
    }

    /// One producer and one consumer per ring: a second of either, in
    /// this process or another, is refused (two producers would write the
    /// same bytes at once).
    #[test]
    fn a_ring_takes_one_producer_and_one_consumer() {
        let fd = create(64, 1).unwrap();
        let _ends = ends(&fd, 64, 0, RingWait::Sleep);
        let err = ShmSender::open(&fd, spec(64, 0, RingWait::Sleep))
            .err()
            .expect("a second producer was let in");
        assert!(err.to_string().contains("already has a producer"), "{err}");
        let err = ShmReceiver::open(&fd, spec(64, 0, RingWait::Sleep))
            .err()
            .expect("a second consumer was let in");
        assert!(err.to_string().contains("already has a consumer"), "{err}");
    }

    /// Only a file made by `create`, for this message size and with this
    /// ring, is opened: another layout would put the ends' words in each
    /// other's bytes, and a file that can shrink faults its mappings.
    #[test]
    fn only_a_ring_file_of_the_same_layout_is_opened() {
        let open = |fd: &OwnedFd, size, index| {
            ShmSender::open(fd, spec(size, index, RingWait::Sleep))
                .err()
                .expect("opened")
                .to_string()
        };
        let plain = rustix::fs::memfd_create("ring", MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&plain, ring_bytes(64) as u64).unwrap();
        assert!(open(&plain, 64, 0).contains("not a ring file"));
        let fd = create(64, 2).unwrap();
        assert!(open(&fd, 128, 0).contains("made for 64-byte messages"));
        assert!(open(&fd, 64, 2).contains("it holds 2 rings"));
        let err = create(0, 1).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        let err = create(64, usize::MAX).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
    }

    /// Once every end of every ring is open, nothing else writes the
    /// file; before that, a consumer does not hand on bytes in place.
    #[test]
    fn the_file_is_sealed_once_every_end_is_open() {
        let fd = create(64, 2).unwrap();
        let (mut tx, mut rx) = ends(&fd, 64, 0, RingWait::Sleep);
        // Ring 1 has no end yet: the file may still be written.
        assert_eq!(rustix::io::pwrite(&fd, &[0], 4096 - 1), Ok(1));
        tx.send(b"hello").unwrap();
        let mut sink = |_: &[u8]| Ok(());
        let err = rx.recv(Some(&mut sink)).unwrap_err();
        assert!(err.to_string().contains("not sealed"), "{err}");
        let err = tx.send(&[0; 65]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        let _back = ends(&fd, 64, 1, RingWait::Sleep);
        assert_eq!(
            rustix::io::pwrite(&fd, &[0], 4096 - 1),
            Err(Errno::PERM),
            "the file was not sealed"
        );
        let mut got = Vec::new();
        let mut sink = |b: &[u8]| {
            got.extend_from_slice(b);
            Ok(())
        };
        assert_eq!(rx.recv(Some(&mut sink)).unwrap(), 5);
        assert_eq!(got, b"hello");
    }

    #[test]
    fn any_size_counts_without_overflow() {
        assert_eq!(capacity(1), 1 << 20);
        assert_eq!(capacity(usize::MAX), capacity(MAX_MESSAGE));
        assert_eq!(ring_bytes(MAX_MESSAGE), HEADER + (1 << 30));
    }

    #[test]
    fn a_producer_closes_even_when_the_consumer_died_asleep() {
        let fd = create(64, 1).unwrap();
        let (tx, rx) = ends(&fd, 64, 0, RingWait::Sleep);
        // A consumer killed in FUTEX_WAIT leaves its flag up.
        rx.ring.word(CONSUMER_WAITING).store(1, Ordering::SeqCst);
        let (done, closed) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(tx);
            let _ = done.send(());
        });
        let waited = closed.recv_timeout(Duration::from_secs(5));
        assert!(waited.is_ok(), "the close never returned");
    }
}
