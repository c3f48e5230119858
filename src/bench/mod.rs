//! The measurements: the two ends of the blog's pipe, and the ladder that
//! runs them.

pub mod contend;
pub mod core;
pub mod hist;
pub mod ipc;
pub mod ladder;
pub mod latency;
pub(crate) mod ping;
pub mod profile;
pub mod reader;
pub(crate) mod worker;
pub mod writer;
pub mod zerocopy;

// The scan is the ladder over one setting; its old path stays for callers.
pub use ladder::scan;
