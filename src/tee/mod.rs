//! One input fanned out to several outputs, as `tee` does, moving page
//! references where the kernel allows: `pipespeed tee`'s engine, usable
//! without the command line.
//!
//! [`fan_out`] copies everything its input gives to every output, in
//! order, and says how it ended. An output that fails is reported to the
//! caller, who says whether to go on without it or to stop
//! ([`OnFailure`]); the other outputs get every byte either way, none
//! lost, duplicated or reordered.
//!
//! # How the bytes move
//!
//! With a pipe as input (standard input, or a private pipe that the
//! input is spliced into when it is a file, socket or device), every round
//! takes what the input pipe holds, `n` bytes, and:
//!
//! - gives a copy of them to each output that is a pipe, by `tee(2)`
//!   straight into it (page references, no bytes copied), and to each
//!   other output by `tee(2)` into a pipe of its own;
//! - moves them out of the input pipe by `splice(2)` into one last output
//!   (a file, socket or device where there is one: it needs no pipe of
//!   its own), or by `read(2)` when an output takes only `write(2)` (a
//!   terminal, a socket that keeps records, or one that refused splice);
//! - empties each output's own pipe into it by `splice(2)`.
//!
//! `tee(2)` never consumes the input, and each output's share of a round
//! leaves the input pipe only once every output has it, so a slow output
//! holds the others back (as GNU tee's writes do) but never makes them
//! lose or repeat bytes. An output's own pipe is what keeps errors
//! apart: whatever fails when it is emptied is that output's failure, and
//! a failure reading the input is never taken for one of an output. When
//! a `tee(2)` gets fewer bytes through than the round holds (a full
//! output pipe, a pipe of its own smaller than the input's), that round's
//! bytes are read into memory and the rest written to it.
//!
//! An output that refuses `splice(2)` (`EINVAL`: a terminal, `/dev/full`,
//! a file opened with `O_APPEND`) is written by `write(2)` from then on,
//! starting with what its pipe holds. An input that cannot be spliced
//! (a terminal, a regular file of [`SMALL_FILE`] or less, a socket that
//! keeps records, or a refusal on the first call) is read with `read(2)`
//! into memory and written to each output, as GNU tee does. A socket
//! that keeps records is read a record at a time, whole however large
//! ([`crate::copy`]'s `recv_record`).
//!
//! Two outputs that are one regular file or block device (the same
//! device and inode: `tee a >>a`, `tee /dev/stdout >>o`, `tee -a a a`)
//! are written as GNU tee writes them, whatever the input: 8 KiB read at
//! a time, each chunk written whole to each output in turn, so that the
//! file holds what GNU's does (a round spliced into one while another
//! appended to the file wrote the round twice). Outputs that are one
//! pipe, terminal, socket or other character device (`tee /dev/null
//! >/dev/null`, `tee /dev/stderr 2>&1 | ...`) have no offset to get
//! wrong: each takes every round in turn, by `tee(2)` and `splice(2)`.
//!
//! Pipes are enlarged as the copy engine enlarges them ([`crate::copy`]):
//! a regular file's pipes at once to hold what is left of it, any other
//! input's only after [`SHOWN_LARGE`] bytes, up to
//! `/proc/sys/fs/pipe-max-size`; a refusal (the user's pipe budget) only
//! costs speed.
//!
//! [`SMALL_FILE`]: crate::copy::SMALL_FILE
//! [`SHOWN_LARGE`]: crate::copy::SHOWN_LARGE

mod fan;
mod out;
mod round;
#[cfg(test)]
mod tests;

use std::io;

pub(crate) use fan::fan_out;

/// What to do when an output fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnFailure {
    /// Go on without that output.
    Drop,
    /// Stop the whole copy now.
    Stop,
}

/// How [`fan_out`] works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TeeOptions {
    /// While waiting for input, watch the outputs that are pipes, and
    /// report one whose reader has gone at once (as `EPIPE`), rather than
    /// at the next write: `tee -p` ends when its last reader goes, even if
    /// its input is idle. (Wasted on an input that is always ready, a
    /// regular file.)
    pub watch_pipes: bool,
    /// Allow splicing a regular file into the pipes, which passes
    /// references to its page-cache pages (see [`crate::copy`]'s "Page
    /// references"); `false` reads it with `read(2)`.
    pub page_references: bool,
    /// Enlarge the pipes as the copy engine does.
    pub grow_pipes: bool,
    /// Use `read(2)` and `write(2)` only (for tests and benchmarks).
    pub read_write: bool,
}

impl Default for TeeOptions {
    fn default() -> TeeOptions {
        TeeOptions {
            watch_pipes: false,
            page_references: true,
            grow_pipes: true,
            read_write: false,
        }
    }
}

/// Why a fan-out ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The input ended.
    Input,
    /// Every output failed.
    NoOutputs,
    /// The caller said [`OnFailure::Stop`].
    Stopped,
}

/// How the input was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// `tee(2)` and `splice(2)`, from the input pipe or a private one.
    Splice,
    /// `read(2)` into memory.
    ReadWrite,
}

/// What [`fan_out`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Teed {
    /// Bytes taken from the input (every output still there has them
    /// all).
    pub bytes: u64,
    /// Why it ended.
    pub ended: Ended,
    /// How the input was read, in the end (a refusal of the input's first
    /// splice turns to read/write).
    pub method: Method,
    /// Rounds in which `tee(2)` got fewer bytes into some output than
    /// the round held, so that the round was read into memory and the
    /// rest written.
    pub short_rounds: u64,
    /// Rounds whose copies into files ran side by side, in threads.
    pub parallel_rounds: u64,
}

/// Reading the input failed: after `bytes` bytes, which every output
/// still there has.
#[derive(Debug, thiserror::Error)]
#[error("read error: {error}")]
pub(crate) struct ReadError {
    /// What the input's system call said.
    #[source]
    pub error: io::Error,
    /// Bytes taken from the input before.
    pub bytes: u64,
}

/// One output of [`fan_out`], by position in its `outputs`.
pub(crate) type OutputIndex = usize;
