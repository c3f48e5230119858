//! The escaping every HTML page uses.

pub use super::page::escape;
