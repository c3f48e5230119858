//! What a transfer keeps of the bytes it writes, for the display: the
//! last bytes (`-A`, `%A`) and the last whole line (`%L`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::pv::meter::PreviousLine;

/// The last bytes written, for `-A`.
pub(crate) type Tail = Arc<Mutex<VecDeque<u8>>>;

/// The last whole line written, for `%L`.
pub(crate) type Lines = Arc<Mutex<PreviousLine>>;

/// Appends `bytes` to the kept tail, keeping the last `keep`.
pub(super) fn keep_tail(tail: &Mutex<VecDeque<u8>>, bytes: &[u8], keep: usize) {
    let mut tail = tail
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let new = &bytes[bytes.len().saturating_sub(keep)..];
    let drop = (tail.len() + new.len()).saturating_sub(keep);
    let drop = drop.min(tail.len());
    tail.drain(..drop);
    tail.extend(new);
}

/// Takes `bytes` into `%L`'s memory of lines ending with `end`, if it
/// is kept.
pub(super) fn keep_lines(lines: Option<&Lines>, bytes: &[u8], end: u8) {
    if let Some(lines) = lines {
        lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .feed(bytes, end);
    }
}
