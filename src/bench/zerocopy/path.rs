//! The paths a byte can take without passing through the CPU as bytes,
//! what each one's check does, and why it matters.

use serde::{Deserialize, Serialize};

/// One way of moving bytes that may pass page references instead of
/// copying them, and the plain path they are weighed against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Path {
    /// `write(2)` into a pipe, `read(2)` out of it: the plain copy every
    /// other path is weighed against (not checked: it copies by
    /// definition).
    ReadWrite,
    /// `vmsplice(2)` of a user buffer into a pipe.
    Vmsplice,
    /// `splice(2)` of a regular file (its page cache) into a pipe.
    FileToPipe,
    /// `tee(2)` of a pipe into another pipe.
    Tee,
    /// `splice(2)` of a pipe into a regular file.
    PipeToFile,
    /// `sendfile(2)` of a regular file into a socket (AF_UNIX stream).
    Sendfile,
    /// `splice(2)` of a pipe into a socket (AF_UNIX stream).
    PipeToSocket,
    /// `IORING_OP_SPLICE` of a regular file into a pipe.
    UringSplice,
    /// A load generator's loop: vmsplice a buffer, refill it, vmsplice
    /// it again, before the reader has read.
    ReusedBuffer,
}

impl Path {
    /// Every path, the plain one first: the order of the table.
    pub const ALL: [Path; 9] = [
        Path::ReadWrite,
        Path::Vmsplice,
        Path::FileToPipe,
        Path::Tee,
        Path::PipeToFile,
        Path::Sendfile,
        Path::PipeToSocket,
        Path::UringSplice,
        Path::ReusedBuffer,
    ];

    /// Its name in the table, JSON and progress.
    pub fn name(self) -> &'static str {
        match self {
            Path::ReadWrite => "read/write",
            Path::Vmsplice => "vmsplice buffer -> pipe",
            Path::FileToPipe => "splice file -> pipe",
            Path::Tee => "tee pipe -> pipe",
            Path::PipeToFile => "splice pipe -> file",
            Path::Sendfile => "sendfile file -> socket",
            Path::PipeToSocket => "splice pipe -> socket",
            Path::UringSplice => "io_uring splice file -> pipe",
            Path::ReusedBuffer => "buffer reused after vmsplice",
        }
    }

    /// Whether its speed is measured: the reused buffer is vmsplice's
    /// calls again (its question is which bytes arrive, not how fast).
    pub fn measured(self) -> bool {
        self != Path::ReusedBuffer
    }

    /// How its check and its measured runs are made.
    pub fn method(self) -> &'static str {
        match self {
            Path::ReadWrite => {
                "write(2) of a buffer into a pipe, read(2) of it into another buffer; \
                 two copies by the CPU: the figure every other path is divided by"
            }
            Path::Vmsplice => {
                "vmsplice a buffer into a pipe, change the buffer, read the pipe; runs: \
                 vmsplice of a double buffer (the pipe sized to one half), read(2) out"
            }
            Path::FileToPipe => {
                "splice a page of a file into a pipe, pwrite new bytes at that offset, read \
                 the pipe; runs: splice from a cached file, read(2) out"
            }
            Path::Tee => {
                "fill a pipe from a file by splice (or from a buffer by vmsplice), tee it \
                 into a second pipe, change the file (or buffer), read the second pipe; \
                 runs: splice file -> pipe, tee into a second pipe read(2) by the reader, \
                 the first drained into /dev/null"
            }
            Path::PipeToFile => {
                "vmsplice a buffer into a pipe, splice the pipe into a file, change the \
                 buffer, read the file; runs: write(2) into a pipe, splice into a file"
            }
            Path::Sendfile => {
                "sendfile a page of a file into a unix stream socket, pwrite new bytes at \
                 that offset, read the peer; runs: sendfile from a cached file, read(2) by \
                 the peer"
            }
            Path::PipeToSocket => {
                "vmsplice a buffer into a pipe, splice the pipe into a unix stream socket, \
                 change the buffer, read the peer; runs: vmsplice of a double buffer into a \
                 private pipe spliced into the socket, read(2) by the peer"
            }
            Path::UringSplice => {
                "IORING_OP_SPLICE of a page of a file into a pipe, pwrite new bytes at that \
                 offset, read the pipe; runs: the same splice from a cached file, read(2) out"
            }
            Path::ReusedBuffer => {
                "vmsplice 16 KiB of a buffer, refill it, vmsplice it again, then read both \
                 chunks: the first chunk shows the refill if the pipe held references"
            }
        }
    }

    /// Why its answer matters, for `--explain` and docs/zero-copy.md.
    pub fn why(self) -> &'static str {
        match self {
            Path::ReadWrite => {
                "The CPU copies each byte twice, into the pipe and out of it; its cost per \
                 GiB is the yardstick."
            }
            Path::Vmsplice => {
                "The pipe takes references to the writer's pages: no copy in, but the \
                 writer may not touch the buffer until the reader is done with it. A 2026 \
                 VFS series makes vmsplice a wrapper of pwritev2, which copies."
            }
            Path::FileToPipe => {
                "The pipe takes references to page-cache pages: a later write to the file \
                 shows through to the reader. This is what splice-based cat and pv rely \
                 on, what \"Copy Fail\" (CVE-2026-31431) abused, and what Linus proposed \
                 to replace by a copy from the page cache."
            }
            Path::Tee => {
                "tee duplicates the pipe's buffer references: the second pipe follows a \
                 later change of the page exactly as the first does. If it did not, tee \
                 would be copying (a change proposed in 2026)."
            }
            Path::PipeToFile => {
                "Writing a pipe into a file goes through the file's own page cache: the \
                 kernel copies the bytes there, so the file never shares the page it was \
                 given."
            }
            Path::Sendfile => {
                "sendfile is a splice through a pipe inside the kernel: if the socket holds \
                 references to the page cache, a write to the file before the peer reads \
                 changes what the peer gets."
            }
            Path::PipeToSocket => {
                "A socket that takes the pipe's pages by reference (MSG_SPLICE_PAGES) \
                 sends the writer's own memory: the buffer must stay unchanged until the \
                 peer has read, not only until the pipe let go."
            }
            Path::UringSplice => {
                "io_uring's splice is the same kernel splice run from a ring: it moves \
                 what the splice call moves."
            }
            Path::ReusedBuffer => {
                "A load generator that refills one buffer and vmsplices it again corrupts \
                 what the reader has not read yet when the pipe holds references: double \
                 buffering with the pipe sized to one half is the discipline."
            }
        }
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
