//! GNU cat as library code: its `-b -E -n -s -T -v` as a streaming
//! formatter ([`format`](mod@format)), the engine that copies each file, by the
//! copy engine or through the formatter ([`engine`]), and how its operands
//! are opened (`open`). Messages, options
//! and exit statuses are the binary's (`pipespeed cat`).

pub(crate) mod engine;
pub(crate) mod format;
pub(crate) mod open;
