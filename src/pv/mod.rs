//! pv as library code: the meter, the display line's format, the copy
//! loop, the display thread and its rows, the remote control (`-R`), the
//! watching of another process's files (`-d`) and `-M`. Nothing here
//! prints on its own: the display goes to the standard error handed in.

pub(crate) mod copy;
pub(crate) mod cursor;
pub(crate) mod display;
pub(crate) mod format;
pub mod meter;
pub(crate) mod monitor;
pub(crate) mod remote;
pub(crate) mod sparse;
pub(crate) mod watch;
