//! pv as library code: what the meter shows and how it limits a rate
//! ([`meter`]), the display line from a format (`format`), the copy
//! loop with `-L`, `-S` and `-l` (`copy`) and its holes with `-O`
//! (`sparse`), the display thread
//! (`display`) and its rows with `-c` (`cursor`), the remote control
//! of a running meter (`remote`), `-d`, the watching of another
//! process's files (`watch`), and `-M`, the metering of a command's
//! standard input and output (`monitor`).
//!
//! The display is drawn only on the standard error the caller hands in:
//! pv's display goes there, and nothing here prints on its own.

pub(crate) mod copy;
pub(crate) mod cursor;
pub(crate) mod display;
pub(crate) mod format;
pub mod meter;
pub(crate) mod monitor;
pub(crate) mod remote;
pub(crate) mod sparse;
pub(crate) mod watch;
