//! The machine the reports' tests describe, so their tables are fixed.

use crate::sys::{SystemFacts, ThpMode};

/// A two-CPU x86_64 test machine running Linux 6.18.0-test.
pub(crate) fn machine() -> SystemFacts {
    SystemFacts {
        kernel: "6.18.0-test".into(),
        kernel_version: "#1".into(),
        arch: "x86_64".into(),
        cpu_model: "Test CPU".into(),
        cpus_online: 2,
        cpus_allowed: vec![0, 1],
        thp: ThpMode::Madvise,
        pipe_max_size_bytes: 1 << 20,
        page_size_bytes: 4096,
        virtualization: None,
    }
}
