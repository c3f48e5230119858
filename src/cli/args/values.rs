//! The rules of the values every command takes, one function each: sizes,
//! counts, seconds and CPUs are checked once, against the maximum their
//! help names, and worded the same everywhere.
use crate::bench::core::Placement;

use crate::bench::core::MAX_MESSAGE;
use crate::bench::ladder::Rung;
use crate::units::{MAX_BUFFER, MAX_RUN_BYTES, Size, parse_size};

use super::PlacementArg;

/// A size (`4096`, `256K`, `1G`).
pub(crate) fn size(text: &str) -> Result<u64, String> {
    parse_size(text).map_err(|e| e.to_string())
}

/// A rung's name, one of the possible values clap lists in errors and
/// shell completions.
pub(crate) fn rung() -> impl clap::builder::TypedValueParser<Value = Rung> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Rung::ALL.map(Rung::name)).map(|name| {
        // PossibleValuesParser let only the names of Rung::ALL through.
        Rung::ALL
            .into_iter()
            .find(|r| r.name() == name)
            .unwrap_or(Rung::WriteRead)
    })
}

/// A message of `latency --sizes` or `contend --msg-size`: 1 byte to
/// [`MAX_MESSAGE`].
pub(crate) fn message_size(text: &str) -> Result<usize, String> {
    match size(text)? {
        0 => Err(format!(
            "'{text}' is not a message size: a message holds at least 1 byte"
        )),
        n if n > MAX_MESSAGE as u64 => Err(format!(
            "'{text}' is not a message size: too large (at most {})",
            Size(MAX_MESSAGE as u64)
        )),
        n => Ok(n as usize),
    }
}

/// A count from `min` to `max` (writers, readers, memory hogs).
pub(crate) fn count(
    min: usize,
    max: usize,
) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |text: &str| match text.parse::<usize>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!("'{text}' is not a count from {min} to {max}")),
    }
}

/// The largest CPU number any option takes: the last of the kernel's
/// affinity mask of `CPU_SETSIZE` (1024) CPUs, as sched_setaffinity(2)
/// and taskset see it.
pub(crate) const MAX_CPU: usize = 1023;

/// A CPU number from 0 to [`MAX_CPU`] (`--cpu`, `--cpus`); whether this
/// process may use it is checked where the command pins.
pub(crate) fn cpu(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n <= MAX_CPU => Ok(n),
        _ => Err(format!("'{text}' is not a CPU number from 0 to {MAX_CPU}")),
    }
}

/// The shortest and longest durations any option takes, in seconds: below
/// 10 ms a run measures its own start-up (a contend run of 1 ns printed
/// zeros), above a day it is a mistake (`1e30` ran forever).
pub(crate) const SECONDS_RANGE: (f64, f64) = (0.01, 86_400.0);

/// A duration in seconds (`2`, `0.5`, `0.5s`) within [`SECONDS_RANGE`]:
/// the one rule of every command's seconds.
pub(crate) fn seconds(text: &str) -> Result<f64, String> {
    let (min, max) = SECONDS_RANGE;
    match text.strip_suffix('s').unwrap_or(text).parse::<f64>() {
        Ok(s) if (min..=max).contains(&s) => Ok(s),
        _ => Err(format!(
            "'{text}' is not a duration: give seconds from {min} to {max}, e.g. 2 or 0.5"
        )),
    }
}

/// The writer (or pinger, or sender) on one CPU, the other end on another.
pub(crate) fn pinned(writer_cpu: usize, reader_cpu: usize) -> Placement {
    Placement::Pinned {
        writer_cpu,
        reader_cpu,
    }
}

/// `--cpus A,B` checked against the CPUs this process may use: the one
/// rule and wording of every command; `ends` names the two sides (`the
/// writer's and the reader's`).
pub(crate) fn cpu_pair(
    cpus: &[usize],
    allowed: &[usize],
    ends: &str,
) -> Result<Placement, crate::cli::UsageError> {
    let [a, b] = cpus[..] else {
        return Err(crate::cli::UsageError(format!(
            "--cpus takes two CPUs, {ends} (e.g. --cpus 0,1)"
        )));
    };
    match [a, b].into_iter().find(|c| !allowed.contains(c)) {
        Some(cpu) => Err(crate::cli::UsageError(format!(
            "--cpus: CPU {cpu} is not one this process may use (allowed: {})",
            cpu_list(allowed)
        ))),
        None => Ok(pinned(a, b)),
    }
}

/// CPU numbers as a list `0,1,3`.
pub(crate) fn cpu_list(cpus: &[usize]) -> String {
    let cpus: Vec<String> = cpus.iter().map(usize::to_string).collect();
    cpus.join(",")
}

/// Where the two ends of `bench` or `ipc` run: `choice`, else `--cpus`
/// (`ends` names them, as [`cpu_pair`] words it), else the first two
/// allowed CPUs.
pub(crate) fn placement(
    choice: Option<PlacementArg>,
    cpus: &[usize],
    facts: &crate::sys::SystemFacts,
    ends: &str,
) -> anyhow::Result<crate::bench::core::Placement> {
    use crate::cli::UsageError;
    let allowed = &facts.cpus_allowed;
    match (choice, &allowed[..]) {
        (Some(PlacementArg::Unpinned), _) => Ok(Placement::Unpinned),
        (Some(PlacementArg::SameCpu), [a, ..]) => Ok(pinned(*a, *a)),
        (Some(PlacementArg::DifferentCpu), [a, b, ..]) => Ok(pinned(*a, *b)),
        (Some(PlacementArg::DifferentCpu), _) => Err(UsageError(
            "--placement different-cpu needs two CPUs, and this process may run on one \
             (its affinity mask, as set by taskset or a cpuset)"
                .into(),
        )
        .into()),
        (Some(PlacementArg::SameCpu), []) => {
            Err(UsageError("this process may run on no CPU at all".into()).into())
        }
        (None, _) if cpus.is_empty() => Ok(Placement::default_for(facts)),
        (None, _) => Ok(cpu_pair(cpus, allowed, ends)?),
    }
}

/// A size no larger than `max`; `what` names it in the error (`a
/// buffer`).
fn size_at_most(text: &str, max: u64, what: &str) -> Result<u64, String> {
    match size(text)? {
        n if n > max => Err(format!(
            "'{text}' is too large: {what} is at most {} ({max} bytes)",
            Size(max)
        )),
        n => Ok(n),
    }
}

/// A pipe size: at least one byte (the kernel rounds it up to a page), at
/// most [`MAX_BUFFER`].
pub(crate) fn pipe_size(text: &str) -> Result<usize, String> {
    match size_at_most(text, MAX_BUFFER, "a pipe")? {
        0 => Err(format!(
            "'{text}': a pipe holds at least one page: give 4K or more"
        )),
        // At most MAX_BUFFER (1 GiB): fits in usize.
        n => Ok(n as usize),
    }
}

/// Bytes a run moves: 0 to [`MAX_RUN_BYTES`].
pub(crate) fn run_bytes(text: &str) -> Result<u64, String> {
    size_at_most(text, MAX_RUN_BYTES, "a run")
}

/// Bytes a measurement moves: 1 to [`MAX_RUN_BYTES`].
pub(crate) fn positive_size(text: &str) -> Result<u64, String> {
    match run_bytes(text)? {
        0 => Err(format!("'{text}': a measurement needs at least 1 byte")),
        n => Ok(n),
    }
}

/// A buffer's size: 1 byte to [`MAX_BUFFER`].
pub(crate) fn buffer_size(text: &str) -> Result<usize, String> {
    match size_at_most(text, MAX_BUFFER, "a buffer")? {
        0 => Err(format!("'{text}': a buffer holds at least 1 byte")),
        // At most MAX_BUFFER (1 GiB): fits in usize.
        n => Ok(n as usize),
    }
}

/// Where a buffer starts past a page boundary: 0 to a page less one byte.
pub(crate) fn buffer_offset(text: &str) -> Result<usize, String> {
    let page = rustix::param::page_size();
    match text.parse::<usize>() {
        Ok(n) if n < page => Ok(n),
        _ => Err(format!(
            "'{text}' is not a buffer offset: give bytes from 0 to {} (less than a page)",
            page - 1
        )),
    }
}
