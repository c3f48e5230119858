//! One input fanned out to several outputs, as `tee` does, moving page
//! references where the kernel allows: `pipespeed tee`'s engine.
//!
//! [`fan_out`] gives every output every byte, in order, none lost,
//! duplicated or reordered, whether a failed output is dropped or stops
//! the copy ([`OnFailure`]). Each round the input is spliced into a pipe
//! of tee's own, `tee(2)` copies it to each output pipe and to a pipe of
//! each other output's own (so that a failure is charged to the output it
//! belongs to), and `splice(2)` moves it out into the last output; a
//! short `tee(2)`, a refused splice, a small file or a socket that keeps
//! records fall back to `read(2)` and `write(2)`, and two outputs that are
//! one file are written 8 KiB at a time as GNU tee writes them.
//! `/dev/null` beside an output that takes the bytes is given nothing
//! (the kernel would drop them), and the own pipes of a round are
//! emptied side by side by threads started once for the fan-out.
//! docs/tee.md ("How the bytes move") gives the reasons and the tests.

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
