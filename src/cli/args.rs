//! The option groups and value rules the commands share; each command's
//! own options are in its file, which turns them into the library's
//! configuration. Nothing here names a command.

use clap::{Args, ValueEnum};

/// `--stall-timeout`, the watchdog of every measurement (contend,
/// latency, ipc, bench): one rule and one wording for all.
#[derive(Debug, Clone, Copy, Args)]
pub struct StallArgs {
    /// Fail a run none of whose workers (threads or processes) makes
    /// progress, no CPU time and no context switch, for SECS seconds:
    /// their state, wchan, system call and kernel stack (root) go into the
    /// message and the JSON, instead of a hang [default: 60] [range:
    /// 0.1-86400].
    #[arg(long = "stall-timeout", value_name = "SECS", default_value = "60", value_parser = stall_timeout)]
    pub stall_timeout: f64,
}

impl Default for StallArgs {
    fn default() -> StallArgs {
        StallArgs {
            stall_timeout: pipespeed::bench::core::DEFAULT_STALL_TIMEOUT.as_secs_f64(),
        }
    }
}

impl StallArgs {
    /// The timeout, checked by the parser.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.stall_timeout)
    }
}

fn stall_timeout(text: &str) -> Result<f64, String> {
    use pipespeed::bench::core::{MAX_STALL_TIMEOUT_S as MAX, MIN_STALL_TIMEOUT_S as MIN};
    match text.strip_suffix('s').unwrap_or(text).parse::<f64>() {
        Ok(s) if (MIN..=MAX).contains(&s) => Ok(s),
        _ => Err(format!(
            "'{text}' is not a stall timeout: give seconds from {MIN} to {MAX}, e.g. 60"
        )),
    }
}

mod values;

pub use values::*;

// pv's help and kernels' tests parse a whole command line.
pub use crate::Cli;
#[cfg(test)]
pub use crate::Command;

/// `--placement` of bench and latency: where the two ends run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlacementArg {
    /// Both on the first allowed CPU.
    SameCpu,
    /// On the first two allowed CPUs.
    DifferentCpu,
    /// Left to the scheduler.
    Unpinned,
}
