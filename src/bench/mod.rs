//! The measurements: the two ends of the blog's pipe, and the ladder that
//! runs them.

pub mod contend;
pub mod hist;
pub mod ladder;
pub mod latency;
pub mod process;
pub mod profile;
pub mod reader;
pub mod rung;
pub mod scan;
pub mod stats;
pub mod worker;
pub mod writer;
