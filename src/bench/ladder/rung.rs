//! The ladder's rungs: what each changes, what it copies, and why it is
//! faster than the one before.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One step of the ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rung {
    /// Single-thread `memcpy` of the same buffer: what copying can reach.
    Memcpy,
    /// `write` into the pipe, `read` out of it: two copies.
    WriteRead,
    /// `vmsplice` in, `read` out: one copy.
    VmspliceRead,
    /// `vmsplice` in, `splice` to `/dev/null` out: no copy.
    VmspliceSplice,
    /// The same with the writer's buffer on huge pages.
    VmspliceSpliceHuge,
    /// The same with both ends spinning instead of sleeping.
    VmspliceSpliceHugeBusy,
    /// Beyond the blog: its best method with the largest pipe allowed and
    /// a buffer of two such halves.
    Tuned,
    /// One thread vmsplicing into a pipe and splicing out of it: what the
    /// zero-copy rungs can reach with no second process and no wake-ups.
    SpliceLimit,
}

impl Rung {
    /// Every rung, in ladder order.
    pub const ALL: [Rung; 8] = [
        Rung::Memcpy,
        Rung::WriteRead,
        Rung::VmspliceRead,
        Rung::VmspliceSplice,
        Rung::VmspliceSpliceHuge,
        Rung::VmspliceSpliceHugeBusy,
        Rung::Tuned,
        Rung::SpliceLimit,
    ];

    /// The rung's name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Rung::Memcpy => "memcpy",
            Rung::WriteRead => "write-read",
            Rung::VmspliceRead => "vmsplice-read",
            Rung::VmspliceSplice => "vmsplice-splice",
            Rung::VmspliceSpliceHuge => "vmsplice-splice-huge",
            Rung::VmspliceSpliceHugeBusy => "vmsplice-splice-huge-busy",
            Rung::Tuned => "tuned",
            Rung::SpliceLimit => "splice-limit",
        }
    }

    /// What the rung changes, in a few words.
    pub fn changes(self) -> &'static str {
        match self {
            Rung::Memcpy => "memory copy, no pipe: the copying limit",
            Rung::WriteRead => "write(2) | read(2): the baseline",
            Rung::VmspliceRead => "writer vmsplices its pages in",
            Rung::VmspliceSplice => "reader splices to /dev/null",
            Rung::VmspliceSpliceHuge => "writer buffer on 2 MiB huge pages",
            Rung::VmspliceSpliceHugeBusy => "both ends spin, never sleep",
            Rung::Tuned => "largest pipe, buffer of two pipe-sized halves",
            Rung::SpliceLimit => "one thread, no wake-ups: the zero-copy limit",
        }
    }

    /// What the rung changes in a word or two (at most 10 characters),
    /// for a table in a narrow terminal.
    pub fn changes_short(self) -> &'static str {
        match self {
            Rung::Memcpy => "copy limit",
            Rung::WriteRead => "baseline",
            Rung::VmspliceRead => "vmsplice",
            Rung::VmspliceSplice => "splice out",
            Rung::VmspliceSpliceHuge => "huge pages",
            Rung::VmspliceSpliceHugeBusy => "ends spin",
            Rung::Tuned => "max pipe",
            Rung::SpliceLimit => "one thread",
        }
    }

    /// Bytes copied by the CPU per byte piped, by design (0: page
    /// references move, so the GiB/s is not memory bandwidth).
    pub fn copies(self) -> u32 {
        match self {
            Rung::Memcpy => 1,
            Rung::WriteRead => 2,
            Rung::VmspliceRead => 1,
            _ => 0,
        }
    }

    /// Why the rung is faster than the one before, in the blog's terms.
    pub fn explanation(self) -> &'static str {
        match self {
            Rung::Memcpy => {
                "One thread copying the buffer with memcpy, no pipe and no kernel. Every rung that \
                 copies bytes (write-read copies twice, vmsplice-read once) is bounded by it."
            }
            Rung::WriteRead => {
                "write copies the buffer into pipe pages the kernel allocates (copy_page_from_iter, \
                 __alloc_pages), read copies it out again (copy_page_to_iter): two copies and a page \
                 allocation per 4 KiB, and both ends sleep and wake each other."
            }
            Rung::VmspliceRead => {
                "vmsplice puts references to the writer's own pages in the pipe instead of copying \
                 them (get_user_pages); only the reader's read copies. The writer alternates two \
                 halves with the pipe sized to one half, so a half is refilled only once the reader \
                 has taken all its pages."
            }
            Rung::VmspliceSplice => {
                "The reader splices the pipe to /dev/null: page references move and are dropped, no \
                 byte is copied. What is left is bookkeeping: walking the page table for every 4 KiB \
                 page (iov_iter_get_pages), reference counts, and the pipe's locks and wake-ups."
            }
            Rung::VmspliceSpliceHuge => {
                "With the buffer on 2 MiB transparent huge pages, the page-table walk finds one entry \
                 and the kernel fills the following struct pages in a loop. The blog saw ~50% more; \
                 on some VMs the huge-page path is slower (compound page reference counting)."
            }
            Rung::VmspliceSpliceHugeBusy => {
                "Both ends pass SPLICE_F_NONBLOCK and retry on EAGAIN instead of sleeping: no \
                 wait_for_space, no __wake_up_common_lock, no scheduler round trips, at the cost of \
                 two CPUs spinning at 100%. Needs two CPUs."
            }
            Rung::Tuned => {
                "The best method of the blog, with the pipe as large as /proc/sys/fs/pipe-max-size \
                 allows and a buffer of two such halves: fewer system calls and wake-ups per byte."
            }
            Rung::SpliceLimit => {
                "Not a way of piping but a ceiling, as memcpy is for the copying rungs: one thread \
                 vmsplices tuned's buffer into a pipe of pipe-max-size and splices it to /dev/null, \
                 so there is no second process, no lock contention and no wake-up. What is left is \
                 the page bookkeeping itself; a zero-copy rung's share of it is what its two \
                 processes and their wake-ups cost."
            }
        }
    }

    /// The explanation of a rung on a kernel whose vmsplice was found to
    /// copy (see `copies`), for the rungs that vmsplice.
    pub fn explanation_when_vmsplice_copies(self) -> Option<&'static str> {
        self.vmsplices().then_some(
            "But on this kernel vmsplice copies: the check at start-up saw the bytes as they were \
             when vmsplice was called, not as changed afterwards, so the pipe got a copy (newer \
             kernels implement vmsplice with the same copy as pwritev2). The rung copies once \
             more than the blog's, and what is said of page references does not apply.",
        )
    }

    /// Whether the rung's writer uses vmsplice.
    pub fn vmsplices(self) -> bool {
        !matches!(self, Rung::Memcpy | Rung::WriteRead)
    }

    /// The rung whose median bounds this one's: memcpy for the rungs that
    /// copy, splice-limit for those that move page references.
    pub fn ceiling(self, copies: u32) -> Rung {
        if copies > 0 {
            Rung::Memcpy
        } else {
            Rung::SpliceLimit
        }
    }

    pub(super) fn uses_huge_pages(self) -> bool {
        matches!(
            self,
            Rung::VmspliceSpliceHuge
                | Rung::VmspliceSpliceHugeBusy
                | Rung::Tuned
                | Rung::SpliceLimit
        )
    }

    /// Whether its ends sleep while the pipe is full or empty, so that
    /// where they run decides how much each wake-up costs: write-read and
    /// the vmsplice rungs before busy looping.
    pub fn blocks(self) -> bool {
        !self.busy() && !matches!(self, Rung::Memcpy | Rung::SpliceLimit)
    }

    pub(super) fn busy(self) -> bool {
        matches!(self, Rung::VmspliceSpliceHugeBusy | Rung::Tuned)
    }
}

impl fmt::Display for Rung {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rung {
    type Err = String;

    fn from_str(s: &str) -> Result<Rung, String> {
        Rung::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Rung::ALL.iter().map(|r| r.name()).collect();
                format!("unknown rung '{s}' (rungs: {})", names.join(", "))
            })
    }
}
