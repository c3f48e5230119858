//! Where the ends of a measurement run, and pinning a thread there.

use std::io;

use super::noise::Ends;
use crate::sys::{SystemFacts, pin_to_cpu};

/// Where the two ends run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Placement {
    /// Writer and reader each pinned to a CPU.
    Pinned {
        /// The writer's CPU.
        writer_cpu: usize,
        /// The reader's CPU (and the memcpy rung's).
        reader_cpu: usize,
    },
    /// Left to the scheduler.
    Unpinned,
}

impl Placement {
    /// The default: the first two allowed CPUs, or unpinned on one CPU.
    pub fn default_for(facts: &SystemFacts) -> Placement {
        match facts.cpus_allowed[..] {
            [a, b, ..] => Placement::Pinned {
                writer_cpu: a,
                reader_cpu: b,
            },
            _ => Placement::Unpinned,
        }
    }

    /// `same-cpu`, `different-cpu` or `unpinned`, as `--placement` names it.
    pub fn kind(self) -> &'static str {
        match self.cpus() {
            (Some(writer), Some(reader)) if writer == reader => "same-cpu",
            (Some(_), _) => "different-cpu",
            _ => "unpinned",
        }
    }

    /// The writer's and the reader's CPU (a sender's and a receiver's, a
    /// pinger's and a ponger's), `None` when unpinned.
    pub fn cpus(self) -> (Option<usize>, Option<usize>) {
        match self {
            Placement::Pinned {
                writer_cpu,
                reader_cpu,
            } => (Some(writer_cpu), Some(reader_cpu)),
            Placement::Unpinned => (None, None),
        }
    }

    /// Whether the two ends run on two CPUs: pinned to different ones, or
    /// unpinned with at least two allowed.
    pub fn distinct_cpus(self, facts: &SystemFacts) -> bool {
        match self.cpus() {
            (Some(writer), Some(reader)) => writer != reader,
            _ => facts.cpus_allowed.len() >= 2,
        }
    }

    /// Where the ends run, as a diagnosis of their noise cares.
    pub fn ends(self, facts: &SystemFacts) -> Ends {
        Ends {
            unpinned: self == Placement::Unpinned,
            one_cpu: !self.distinct_cpus(facts),
        }
    }

    /// The CPUs the ends are pinned to, each once (empty: unpinned), for
    /// the noise of a run on them.
    pub fn cpu_list(self) -> Vec<usize> {
        match self.cpus() {
            (Some(a), Some(b)) if a == b => vec![a],
            (Some(a), Some(b)) => vec![a, b],
            _ => Vec::new(),
        }
    }
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cpus() {
            (Some(writer), Some(reader)) if writer == reader => {
                write!(f, "writer and reader both on CPU {writer}")
            }
            (Some(writer), Some(reader)) => {
                write!(f, "writer on CPU {writer}, reader on CPU {reader}")
            }
            _ => f.write_str("unpinned (left to the scheduler)"),
        }
    }
}

/// Pins the calling thread to `cpu`, if any, saying who failed.
pub fn pin(cpu: Option<usize>, who: &str) -> io::Result<()> {
    match cpu {
        Some(cpu) => pin_to_cpu(cpu).map_err(|e| {
            io::Error::new(e.kind(), format!("{who}: {}", crate::quote::strerror(&e)))
        }),
        None => Ok(()),
    }
}
