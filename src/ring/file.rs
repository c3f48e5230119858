//! The file a ring lives in: its layout, the claim words and the seals
//! (see the parent module's "One producer, one consumer").

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::atomic::{Ordering, fence};

use rustix::fs::{MemfdFlags, SealFlags, fcntl_add_seals, fcntl_get_seals, fstat};

use super::{HEADER, MAX_MESSAGE, ring_bytes};

/// Set (1) once the ring's producer, or its consumer, has opened.
pub(super) const PRODUCER: usize = 320;
pub(super) const CONSUMER: usize = 384;
/// In the first ring's header: the file's layout, written by [`create`]
/// before the descriptor is anyone else's, and never changed.
pub(super) const FILE_MAGIC: usize = 512;
pub(super) const FILE_SIZE: usize = 576;
pub(super) const FILE_RINGS: usize = 640;
pub(super) const MAGIC: u32 = u32::from_le_bytes(*b"PSR1");

/// Which end of a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Producer,
    Consumer,
}

impl Role {
    /// Its claim word.
    pub(super) fn claim(self) -> usize {
        match self {
            Role::Producer => PRODUCER,
            Role::Consumer => CONSUMER,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Role::Producer => "producer",
            Role::Consumer => "consumer",
        }
    }
}

/// Fails unless a ring takes messages of `size`.
pub(super) fn check_size(size: usize) -> io::Result<()> {
    // Positions are u32 counts: the ring must stay far below 2^31.
    if size == 0 || size > MAX_MESSAGE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("a ring takes messages of 1 byte to {MAX_MESSAGE} bytes, not {size}"),
        ));
    }
    Ok(())
}

/// The bytes of `rings` rings for messages of `size`, if they can be
/// counted.
pub(super) fn file_bytes(size: usize, rings: usize) -> io::Result<usize> {
    ring_bytes(size).checked_mul(rings).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{rings} rings for {size}-byte messages are more bytes than there are"),
        )
    })
}

/// A file of `rings` rings for messages of `size`, every position at 0
/// and no end open yet: a memfd whose size is sealed and whose first page
/// records `size` and `rings`. Its descriptor may be handed to other
/// processes; each ring takes one [`ShmSender`](super::ShmSender) and one [`ShmReceiver`](super::ShmReceiver),
/// wherever they are.
pub fn create(size: usize, rings: usize) -> io::Result<OwnedFd> {
    check_size(size)?;
    let rings32 = u32::try_from(rings)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a ring file holds 1 to {} rings, not {rings}", u32::MAX),
            )
        })?;
    let len = file_bytes(size, rings)?;
    let fd = rustix::fs::memfd_create(
        "pipespeed-ring",
        MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
    )?;
    rustix::fs::ftruncate(&fd, len as u64)?;
    for (at, value) in [
        (FILE_MAGIC, MAGIC),
        (FILE_SIZE, size as u32),
        (FILE_RINGS, rings32),
    ] {
        if rustix::io::pwrite(&fd, &value.to_ne_bytes(), at as u64)? != 4 {
            return Err(io::Error::other("a short write into a new memfd"));
        }
    }
    fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::GROW)?;
    Ok(fd)
}

/// The word at `at` of the file `fd`, read with `pread(2)` (a copy made
/// by the kernel, whoever writes the word meanwhile).
pub(super) fn read_word(fd: BorrowedFd<'_>, at: usize) -> io::Result<u32> {
    let mut word = [0u8; 4];
    if rustix::io::pread(fd, &mut word, at as u64)? != 4 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the ring file ends inside its header",
        ));
    }
    Ok(u32::from_ne_bytes(word))
}

/// Checks that `fd` is a file made by [`create`] for messages of `size`
/// with a ring `index`; its number of rings.
pub(super) fn layout(fd: BorrowedFd<'_>, size: usize, index: usize) -> io::Result<usize> {
    let not = |why: String| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a ring file for {size}-byte messages with a ring {index}: {why}"),
        )
    };
    let seals = fcntl_get_seals(fd).map_err(|e| not(format!("no seals ({e})")))?;
    if !seals.contains(SealFlags::SHRINK | SealFlags::GROW) {
        return Err(not("its size is not sealed".into()));
    }
    let file_len = fstat(fd)?.st_size as u64;
    if file_len < HEADER as u64 {
        return Err(not(format!("{file_len} bytes, less than a header")));
    }
    if read_word(fd, FILE_MAGIC)? != MAGIC {
        return Err(not("it was not made by ring::create".into()));
    }
    let made_for = read_word(fd, FILE_SIZE)? as usize;
    if made_for != size {
        return Err(not(format!("it was made for {made_for}-byte messages")));
    }
    let rings = read_word(fd, FILE_RINGS)? as usize;
    if index >= rings {
        return Err(not(format!("it holds {rings} rings")));
    }
    if (file_len as u128) < file_bytes(size, rings)? as u128 {
        return Err(not(format!(
            "{file_len} bytes are too few for {rings} rings"
        )));
    }
    Ok(rings)
}

/// Seals the file against writes once every end of each of its `rings`
/// rings has claimed: from then on only the ends' own mappings write it.
pub(super) fn seal_when_complete(fd: BorrowedFd<'_>, size: usize, rings: usize) -> io::Result<()> {
    // The claim just made is stored (SeqCst) before these loads: of two
    // ends that complete the set at once, at least one sees it complete.
    fence(Ordering::SeqCst);
    for ring in 0..rings {
        let at = ring * ring_bytes(size);
        for claim in [PRODUCER, CONSUMER] {
            if read_word(fd, at + claim)? == 0 {
                return Ok(());
            }
        }
    }
    Ok(fcntl_add_seals(fd, SealFlags::FUTURE_WRITE)?)
}

/// Whether the file is sealed against writes.
pub(super) fn sealed(fd: BorrowedFd<'_>) -> io::Result<bool> {
    Ok(fcntl_get_seals(fd)?.contains(SealFlags::FUTURE_WRITE))
}
