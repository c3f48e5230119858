//! System calls, named after their man pages, on top of [rustix].
//!
//! Every wrapper takes `impl AsFd`, returns `io::Result`, and turns the
//! kernel's terse refusals into errors that name the limit involved.

pub mod clock;
pub mod cpu;
pub mod facts;
pub mod file;
pub mod inherited;
pub mod mq;
pub mod noise;
pub mod pipe;
pub mod process;
pub mod rusage;
pub mod signal;
pub mod socket;
pub mod splice;
pub mod uring;
pub mod zerocopy;

pub use cpu::{available_cpus, pin_to_cpu};
pub use facts::{SystemFacts, ThpMode};
pub use file::{FdInfo, FdKind, copy_file_range, fd_info, sendfile};
pub use noise::{NoiseProbe, RunNoise};
pub use pipe::{
    PipePair, fcntl_getpipe_size, fcntl_setpipe_size, pipe, pipe_max_size, set_nonblocking,
};
pub use rusage::{ResourceUsage, UsageOf, getrusage};
pub use splice::{SpliceFlags, ensure_write_end, splice, tee, vmsplice, vmsplice_checked};
