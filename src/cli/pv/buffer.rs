//! `-B`: the read/write buffer's size, tried before anything is copied.

use std::io;
use std::process::ExitCode;

use crate::buf::{Buffer, BufferOptions};
use crate::copy::CopyOptions;
use crate::pv::format::size_text;

use super::{EXIT_MEMORY, Invocation, PvArgs};
use crate::cli::strerror;

/// The read/write buffer size: `-B`'s, tried now ([`allocate`]), or the
/// copy engine's default; `Err` once said (pv's status 64).
pub(super) fn buffer_size(args: &PvArgs, me: &Invocation) -> Result<usize, ExitCode> {
    let Some(bytes) = args.buffer_size else {
        return Ok(CopyOptions::default().buf_size);
    };
    allocate(bytes).map_err(|err| {
        let shown = size_text(bytes as f64, "B", true);
        me.say(&format!(
            "buffer allocation failed: -B {}: {}",
            shown.trim_start(),
            strerror(&err)
        ));
        ExitCode::from(EXIT_MEMORY)
    })
}

/// The largest `-B`: 1 TiB, far past what one read or write moves (Linux
/// caps both at 2 GiB less a page). A larger one is refused as a buffer
/// the system cannot give (status 64), never handed to the allocator.
const MAX_BUFFER: u64 = 1 << 40;

/// A read/write buffer of `bytes` (at least 1) can be had: tried now, so
/// that a size the system cannot give is refused before anything is
/// copied (pv: "buffer allocation failed", status 64), not met as a
/// failure in the middle of a copy, or not at all when every input goes
/// by splice. The copier makes its own buffer on first use.
fn allocate(bytes: u64) -> io::Result<usize> {
    let size = usize::try_from(bytes.max(1))
        .ok()
        .filter(|&size| size as u64 <= MAX_BUFFER)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
    let options = BufferOptions {
        dont_touch: true,
        ..BufferOptions::default()
    };
    Buffer::new(size, options).map(|_| size)
}
