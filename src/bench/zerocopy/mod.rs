//! `bench --zero-copy`: for every path that may move page references
//! instead of bytes (vmsplice, splice from and into files and sockets,
//! tee, sendfile, io_uring's splice), whether it does on the running
//! kernel, and what it buys against a plain read/write copy.
//!
//! 2026 kernels are reworking zero-copy (vmsplice as a wrapper of
//! pwritev2, splice into a pipe copying from the page cache, tee perhaps
//! a copy): a user of splice needs the answer of this kernel. Each check
//! is the vmsplice check's test
//! ([`check_vmsplice`](crate::bench::core::check_vmsplice)): change the
//! source after the call and see what the reader gets.

pub(crate) mod check;
pub(crate) mod ends;
pub(crate) mod files;
pub(crate) mod flow;
pub(crate) mod path;
pub(crate) mod pipes;
pub(crate) mod report;
pub(crate) mod result;
pub(crate) mod run;
pub(crate) mod scratch;
pub(crate) mod verdict;

pub use check::{check, check_all};
pub use path::Path;
pub use result::{PathResult, SCHEMA, ZeroCopyConfig, ZeroCopyResult};
pub use run::{DEFAULT_BYTES, NOT_TIMED, default_pipe_size, failed, run_zero_copy};

/// For the tests that assert this kernel's answers: which kernel they
/// were written for, and which one answered otherwise.
#[cfg(test)]
fn kernel_note() -> String {
    format!(
        "the answer of Linux 6.18, the project's CI kernel; this is Linux {}: a kernel that \
         changed this path's zero-copy behaviour fails here on purpose (docs/zero-copy.md)",
        rustix::system::uname().release().to_string_lossy()
    )
}
