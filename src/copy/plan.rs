//! What a copy is told ([`CopyOptions`]), how it chooses a [`Mechanism`]
//! for a pair of descriptors, and what it reports: [`Copied`] with its
//! [`Fallback`]s, or a [`CopyError`] naming the [`Side`] that failed.

use std::fmt;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use crate::sys::{FdInfo, FdKind};
use crate::units::KIB;

/// Regular files up to this size are copied by read/write, as GNU cat does:
/// setting up a faster mechanism costs more than it saves.
pub const SMALL_FILE: u64 = 32 * KIB;

/// How bytes move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// `copy_file_range(2)`, file to file inside the kernel.
    CopyFileRange,
    /// `sendfile(2)`, from a file inside the kernel.
    Sendfile,
    /// `splice(2)` directly, one end being a pipe.
    Splice,
    /// `splice(2)` into an intermediate pipe and out of it again.
    SplicePipe,
    /// `read(2)` into a buffer and `write(2)` out of it: works for
    /// everything, copies every byte twice.
    ReadWrite,
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mechanism::CopyFileRange => "copy_file_range",
            Mechanism::Sendfile => "sendfile",
            Mechanism::Splice => "splice",
            Mechanism::SplicePipe => "splice via a pipe",
            Mechanism::ReadWrite => "read/write",
        })
    }
}

/// How [`Copier::copy`](super::Copier::copy) works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyOptions {
    /// Copy at most this many bytes. From a socket that keeps record
    /// boundaries, records are copied whole: the last one may pass the
    /// limit, by less than its length, rather than be cut (the rest of a
    /// record that is read is lost).
    pub limit: Option<u64>,
    /// Start with this mechanism instead of choosing (for tests and
    /// benchmarks); a refusal still falls back.
    pub force: Option<Mechanism>,
    /// Enlarge pipes at either end, and the intermediate pipe, as far as
    /// the data needs, up to `/proc/sys/fs/pipe-max-size` (see the module
    /// documentation; never shrinks a pipe).
    pub grow_pipes: bool,
    /// Set the destination pipe, and the intermediate pipe, to this size
    /// instead (the kernel rounds it up to a power-of-two number of
    /// pages), smaller or larger than they are, where the system allows:
    /// a refusal (past `/proc/sys/fs/pipe-max-size`, a spent pipe budget,
    /// more bytes in the pipe than the size) leaves the pipe as it is.
    /// `grow_pipes` does nothing then.
    pub pipe_size: Option<usize>,
    /// Allow splicing a file into a pipe or socket, which passes page
    /// references (see the module documentation).
    pub page_references: bool,
    /// Buffer size of read/write.
    pub buf_size: usize,
}

impl Default for CopyOptions {
    fn default() -> CopyOptions {
        CopyOptions {
            limit: None,
            force: None,
            grow_pipes: true,
            pipe_size: None,
            page_references: true,
            buf_size: 256 * KIB as usize,
        }
    }
}

/// A mechanism dropped during a copy, and why.
#[derive(Debug)]
pub struct Fallback {
    /// The mechanism dropped.
    pub from: Mechanism,
    /// Bytes it had moved (0 when the kernel refused it outright).
    pub moved: u64,
    /// What the kernel said.
    pub cause: io::Error,
}

/// What a copy did.
#[derive(Debug)]
pub struct Copied {
    /// Bytes written to the destination.
    pub bytes: u64,
    /// The mechanism that finished the copy.
    pub mechanism: Mechanism,
    /// Mechanisms tried first and dropped, in order.
    pub fallbacks: Vec<Fallback>,
}

/// Which end of a copy an error belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Reading the source.
    Input,
    /// Writing the destination.
    Output,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Input => "read error",
            Side::Output => "write error",
        })
    }
}

/// A copy that failed, with the side at fault and how far it got.
#[derive(Debug, thiserror::Error)]
#[error("{side}: {source}")]
pub struct CopyError {
    /// The end that failed.
    pub side: Side,
    /// Bytes written to the destination before the failure.
    pub moved: u64,
    /// The system's error.
    #[source]
    pub source: io::Error,
}

/// What a copy's destination is besides its [`FdInfo`], for [`choose`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Destination {
    /// It has taken [`SHOWN_LARGE`](super::SHOWN_LARGE) bytes or more
    /// from the copier's copies before this one (`cat` of many files):
    /// the pipes are made and enlarged already, and a small file costs
    /// no more to splice than to read and write.
    pub(crate) large_stream: bool,
    /// A regular file on a filesystem that may copy by itself
    /// ([`copies_itself`](crate::sys::copies_itself)).
    pub(crate) copies_itself: bool,
}

/// The mechanism [`Copier::copy`](super::Copier::copy) starts with for a source and a
/// destination: the one decision of the engine.
pub(crate) fn choose(
    src: &FdInfo,
    dst: &FdInfo,
    to: Destination,
    options: &CopyOptions,
) -> Mechanism {
    use FdKind::*;
    // (A size of 0 may be procfs's, whose files refuse splice.)
    let small_file =
        src.kind == Regular && src.size <= SMALL_FILE && !(to.large_stream && src.size > 0);
    match (src.kind, dst.kind) {
        // Terminals want each line as it comes; splice would not help.
        (Tty, _) | (_, Tty) => Mechanism::ReadWrite,
        _ if small_file => Mechanism::ReadWrite,
        (Regular, Regular) if to.copies_itself => Mechanism::CopyFileRange,
        // ext4 and tmpfs: the kernel's copy_file_range splices through a
        // pipe of 64 KiB; through one of FILE_PIPE, faster.
        (Regular, Regular) => Mechanism::SplicePipe,
        (Regular, _) if !options.page_references => Mechanism::ReadWrite,
        // Until the input has shown it is large: see `once_large`.
        (Pipe, Pipe) => Mechanism::Splice,
        (
            Regular | Pipe | Socket | CharDevice | BlockDevice,
            Regular | Pipe | Socket | CharDevice | BlockDevice,
        ) => Mechanism::SplicePipe,
        _ => Mechanism::ReadWrite,
    }
}

/// The mechanism a copy goes on with once its input has shown it is
/// large (after [`SHOWN_LARGE`](super::SHOWN_LARGE) bytes, when the pipes
/// are enlarged): a pipe spliced straight into a pipe goes through the
/// intermediate pipe from then on, as every other large copy does; any
/// other mechanism, and a forced one, goes on.
///
/// Straight, one splice holds both pipes' locks, so the writer upstream
/// and the reader downstream both wait for it; through the intermediate
/// pipe, each splice holds one (docs/cat.md has the measurement).
pub(crate) fn once_large(mechanism: Mechanism, options: &CopyOptions) -> Mechanism {
    match (mechanism, options.force) {
        (Mechanism::Splice, None) => Mechanism::SplicePipe,
        (mechanism, _) => mechanism,
    }
}

/// What a copy writes of what it reads, for [`input_is_output`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewrite {
    /// The bytes as read: a file copied over itself from where it is
    /// read, or from before, is rewritten with what it holds.
    Verbatim,
    /// Other bytes (cat's options): more or fewer than were read, so no
    /// position of the output is safe; more, and the output overtakes the
    /// input and grows the file without end.
    Formatted,
}

/// Whether copying `input` to `output` would write over what it reads, or
/// read what it writes: then cat says "input file is output file" and
/// copies nothing of that input.
///
/// Only a file that is the output's file (same device and inode: through
/// a hard link, a symbolic link, `/proc/self/fd/N` or stdin), other than a
/// pipe or socket, can be. Such an input is refused when:
///
/// - the output's position (its end, when it appends) is past the
///   input's: every byte written would be read again, and the file would
///   grow until the disk is full (GNU cat's test since coreutils 9.6);
/// - the copy is [`Rewrite::Formatted`], for a regular file with bytes
///   left to read from its position, or a block device, wherever the two
///   stand (stricter than GNU cat 9.10, whose `cat -n f 1<>f` fills the
///   disk; docs/cat.md);
/// - the two are one open file (`cat <>f >&0`), sharing one position,
///   with bytes left to read: each write lands on bytes not read yet.
///
/// An output at or before the input's position, in a file of its own,
/// rewrites the file in place, which ends (`cat - f2 <f1 1<>f1`). A
/// position `lseek` cannot tell (a terminal) never refuses.
pub fn input_is_output(
    input: impl AsFd,
    info: &FdInfo,
    output: impl AsFd,
    output_info: &FdInfo,
    rewrite: Rewrite,
) -> bool {
    use rustix::fs::{OFlags, SeekFrom, fcntl_getfl, seek};
    if matches!(info.kind, FdKind::Pipe | FdKind::Socket) || !info.same_file(output_info) {
        return false;
    }
    let input = input.as_fd();
    let Ok(input_at) = seek(input, SeekFrom::Current(0)) else {
        return false;
    };
    // Nothing left to read: only GNU's rule below can refuse it.
    let at_end = info.kind == FdKind::Regular && input_at >= info.size;
    if rewrite == Rewrite::Formatted
        && matches!(info.kind, FdKind::Regular | FdKind::BlockDevice)
        && !at_end
    {
        return true;
    }
    let output = output.as_fd();
    let appends = fcntl_getfl(output).is_ok_and(|flags| flags.contains(OFlags::APPEND));
    let whence = if appends {
        SeekFrom::End(0)
    } else {
        SeekFrom::Current(0)
    };
    match seek(output, whence) {
        Ok(output_at) if input_at < output_at => true,
        Ok(output_at) if input_at == output_at && !appends && !at_end => {
            one_position(input, output, input_at)
        }
        _ => false,
    }
}

/// Whether `input` and `output`, both at `at`, are one open file (one
/// position): moving the input's position one byte on moves the
/// output's. The input is put back at `at`.
fn one_position(input: BorrowedFd<'_>, output: BorrowedFd<'_>, at: u64) -> bool {
    use rustix::fs::{SeekFrom, seek};
    let Some(next) = at.checked_add(1) else {
        return false;
    };
    if seek(input, SeekFrom::Start(next)).is_err() {
        return false;
    }
    let shared = seek(output, SeekFrom::Current(0)).is_ok_and(|output_at| output_at == next);
    // Back where it was; if even that fails, the copy is refused rather
    // than started from a wrong position.
    seek(input, SeekFrom::Start(at)).is_err() || shared
}
