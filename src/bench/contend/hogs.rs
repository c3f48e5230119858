//! `--memory-pressure`: stress-ng itself where it is on `PATH`
//! ([`super::stress_ng`], pipe_bench's command), else worker processes of
//! ours that keep mapping, writing and unmapping a share of RAM, as
//! `stress-ng --vm 4 --vm-bytes 80%` does (its default, without
//! `--vm-keep`), so the page allocator and reclaim stay busy while the
//! pipe is measured. The result says which made the pressure.

use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;
use std::process::{ChildStdout, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, poll};
use serde::{Deserialize, Serialize};

use crate::buf::{Buffer, BufferOptions};
use crate::units::{GIB, Size};

use super::pressure::{Evidence, Sample, mem_available};
use super::stress_ng::{self, StressNg};
use crate::bench::core::worker::failure;
use crate::bench::core::{RoleSpec, Spawn};
use crate::child::{Group, interrupted_error};

/// A memory hog, as a worker process: maps and writes `bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct HogSpec {
    /// Bytes mapped and written per round.
    pub bytes: u64,
}

impl RoleSpec for HogSpec {
    const ROLE: &'static str = "memory-hog";
}

/// Hogs started by default (stress-ng `--vm 4`).
pub const DEFAULT_WORKERS: usize = 4;
/// Share of `MemAvailable` asked for by default, in percent (stress-ng
/// `--vm-bytes 80%`).
pub const DEFAULT_SHARE_PERCENT: f64 = 80.0;
/// The most memory hogs one run may start.
pub const MAX_HOGS: usize = 64;
/// The hogs never take more than this share of `MemAvailable`...
pub(crate) const MAX_SHARE_OF_AVAILABLE: f64 = 0.8;
/// ...and always leave this much of it, so the machine stays usable.
pub(crate) const KEEP_AVAILABLE: u64 = GIB;
/// How long the hogs may take to fill their memory once.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// How much pressure to make.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PressureConfig {
    /// Hog processes.
    pub workers: usize,
    /// Their total size, in percent of `MemAvailable` (before the cap).
    pub share_percent: f64,
}

/// The memory the hogs take, worked out from `MemAvailable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Plan {
    /// `MemAvailable` before the hogs, in bytes.
    pub mem_available: u64,
    /// The share asked for, in bytes.
    pub requested: u64,
    /// What all hogs take together, after the cap.
    pub total: u64,
    /// What each takes (whole pages).
    pub per_worker: u64,
    /// Whether the cap cut the share.
    pub capped: bool,
}

/// Splits `share_percent` of `mem_available` over `workers`, capped at
/// [`MAX_SHARE_OF_AVAILABLE`] of it and leaving [`KEEP_AVAILABLE`].
pub(crate) fn plan(mem_available: u64, share_percent: f64, workers: usize) -> io::Result<Plan> {
    let requested = (mem_available as f64 * share_percent / 100.0) as u64;
    let cap = ((mem_available as f64 * MAX_SHARE_OF_AVAILABLE) as u64)
        .min(mem_available.saturating_sub(KEEP_AVAILABLE));
    let total = requested.min(cap);
    let page = 4096;
    let per_worker = total / workers.max(1) as u64 / page * page;
    if per_worker == 0 {
        return Err(io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!(
                "no memory to spare for pressure: MemAvailable is {:.2} GiB, and the hogs must \
                 leave {} and take at most {:.0}% of it",
                mem_available as f64 / GIB as f64,
                Size(KEEP_AVAILABLE),
                MAX_SHARE_OF_AVAILABLE * 100.0
            ),
        ));
    }
    Ok(Plan {
        mem_available,
        requested,
        total: per_worker * workers as u64,
        per_worker,
        capped: requested > cap,
    })
}

/// What [`PressureReport::by`] says of pipespeed's own hogs (and what a
/// result written before stress-ng was run says).
pub const OWN_HOGS: &str = "pipespeed hogs";

fn own_hogs() -> String {
    OWN_HOGS.to_string()
}

/// What the hogs did, and what the kernel says it felt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PressureReport {
    /// What made the pressure: `stress-ng 0.15.06` (stress-ng found on
    /// `PATH`, as it names its version) or [`OWN_HOGS`].
    #[serde(default = "own_hogs")]
    pub by: String,
    /// stress-ng's arguments (pipe_bench's: `--vm 4 --vm-bytes 80%
    /// --vm-method all` by default); absent for pipespeed's hogs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Hog processes (stress-ng's `--vm` instances).
    pub workers: usize,
    /// Share of `MemAvailable` asked for, in percent (stress-ng's
    /// `--vm-bytes`, a share of memory as stress-ng counts it).
    pub share_percent: f64,
    /// `MemAvailable` before the hogs started, in bytes.
    pub mem_available_bytes: u64,
    /// The share asked for, in bytes.
    pub bytes_requested: u64,
    /// What the hogs took together, in bytes (with stress-ng: what was
    /// asked of it, which sizes its share itself).
    pub bytes_total: u64,
    /// What each hog maps and writes per cycle, in bytes (with stress-ng:
    /// what was asked of each instance).
    pub bytes_per_worker: u64,
    /// Whether the cap (80% of `MemAvailable`, leaving 1 GiB) cut the
    /// share (never for stress-ng, which has its own).
    pub capped: bool,
    /// What a hog does.
    pub method: String,
    /// Seconds until every hog had written its memory once (with
    /// stress-ng: the second pipe_bench gives it).
    pub ready_s: f64,
    /// Seconds the evidence covers: from the hogs being ready to the end
    /// of the last run.
    pub seconds: f64,
    /// Hogs still alive at the end (fewer than `workers`: the OOM killer
    /// or a failure ended some).
    pub hogs_running_at_end: usize,
    /// CPU seconds (user + system) the hogs used during `seconds`: on a
    /// small machine they compete for CPU as well as for memory.
    pub hog_cpu_s: f64,
    /// The kernel's accounts over `seconds`.
    #[serde(flatten)]
    pub evidence: Evidence,
    /// The kernel's accounts while the hogs wrote their memory the first
    /// time (the `ready_s` before the measurement).
    pub while_filling: Evidence,
}

/// What makes the pressure.
enum Source {
    /// pipespeed's own hogs.
    Own(Group),
    /// stress-ng, found on `PATH`.
    StressNg(StressNg),
}

/// The running hogs; dropping them kills and reaps them.
pub(crate) struct Hogs {
    source: Source,
    config: PressureConfig,
    plan: Plan,
    ready_s: f64,
    ready_at: Instant,
    at_start: Sample,
    before: Sample,
    cpu_ticks_before: u64,
}

/// CPU ticks all of `pids` have used so far.
fn cpu_ticks(pids: &[u32]) -> u64 {
    pids.iter()
        .filter_map(|&p| Some(crate::sys::procfs::stat(p)?.cpu_ticks))
        .sum()
}

impl Hogs {
    /// Starts stress-ng where it is on `PATH`, else the hogs (`exe` is
    /// the pipespeed binary), and waits until they have written their
    /// share once.
    pub(crate) fn start(config: &PressureConfig, exe: &Path) -> io::Result<Hogs> {
        let available = mem_available().ok_or_else(|| {
            io::Error::other("cannot read MemAvailable from /proc/meminfo to size the hogs")
        })?;
        let at_start = Sample::read();
        let started = Instant::now();
        let (source, plan) = match stress_ng::find() {
            Some(program) => {
                let s = StressNg::start(&program, config.workers, config.share_percent)?;
                (Source::StressNg(s), asked(available, config))
            }
            None => {
                let plan = plan(available, config.share_percent, config.workers)?;
                (Source::Own(own(config, &plan, exe)?), plan)
            }
        };
        let hogs = Hogs {
            source,
            config: *config,
            plan,
            ready_s: started.elapsed().as_secs_f64(),
            ready_at: Instant::now(),
            at_start,
            before: Sample::read(),
            cpu_ticks_before: 0,
        };
        Ok(Hogs {
            cpu_ticks_before: hogs.cpu_ticks(),
            ..hogs
        })
    }

    /// CPU ticks the hogs have used so far.
    fn cpu_ticks(&self) -> u64 {
        match &self.source {
            Source::Own(group) => cpu_ticks(&group.pids()),
            Source::StressNg(s) => s.cpu_ticks(),
        }
    }

    /// Bytes the hogs hold together.
    pub(crate) fn bytes_total(&self) -> u64 {
        self.plan.total
    }

    /// Seconds until every hog had written its memory once.
    pub(crate) fn ready_s(&self) -> f64 {
        self.ready_s
    }

    /// Reads the evidence, then stops and reaps the hogs.
    pub(crate) fn finish(self) -> PressureReport {
        let after = Sample::read();
        let seconds = self.ready_at.elapsed().as_secs_f64();
        let ticks = self.cpu_ticks().saturating_sub(self.cpu_ticks_before);
        let (by, command, method, running) = match self.source {
            Source::Own(mut group) => {
                let running = group.running();
                group.kill_all();
                let method = "map anonymous memory, write every byte, unmap, repeat (stress-ng \
                              --vm without --vm-keep)";
                (own_hogs(), None, method.to_string(), running)
            }
            Source::StressNg(s) => {
                let running = s.instances_running();
                let (by, args) = (s.by.clone(), s.args.clone());
                s.stop();
                let method = format!(
                    "{} {}, as pipe_bench runs it",
                    stress_ng::PROGRAM,
                    args.join(" ")
                );
                (by, Some(args), method, running)
            }
        };
        PressureReport {
            by,
            command,
            workers: self.config.workers,
            share_percent: self.config.share_percent,
            mem_available_bytes: self.plan.mem_available,
            bytes_requested: self.plan.requested,
            bytes_total: self.plan.total,
            bytes_per_worker: self.plan.per_worker,
            capped: self.plan.capped,
            method,
            ready_s: self.ready_s,
            seconds,
            hogs_running_at_end: running,
            hog_cpu_s: ticks as f64 / rustix::param::clock_ticks_per_second() as f64,
            evidence: Evidence::between(self.before, after),
            while_filling: Evidence::between(self.at_start, self.before),
        }
    }
}

/// What stress-ng is asked for, in bytes (it sizes its share itself, and
/// has no cap of ours).
fn asked(mem_available: u64, config: &PressureConfig) -> Plan {
    let requested = (mem_available as f64 * config.share_percent / 100.0) as u64;
    let per_worker = requested / config.workers.max(1) as u64;
    Plan {
        mem_available,
        requested,
        total: requested,
        per_worker,
        capped: false,
    }
}

/// Starts pipespeed's own hogs and waits until each has written its
/// share once.
fn own(config: &PressureConfig, plan: &Plan, exe: &Path) -> io::Result<Group> {
    let mut group = Group::new();
    let mut outs = Vec::new();
    let mut labels = Vec::new();
    for i in 0..config.workers {
        let hog = HogSpec {
            bytes: plan.per_worker,
        };
        let mut cmd = Spawn::new(&hog, None).command(exe);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let label = format!("memory hog {i}");
        let index = group.spawn(&mut cmd, label.clone())?;
        labels.push(label);
        let out = group.child(index).stdout.take();
        outs.push((
            index,
            out.ok_or_else(|| io::Error::other("hog without stdout"))?,
        ));
    }
    wait_ready(&mut group, outs, &labels)?;
    Ok(group)
}

/// Waits for one byte from each hog: it has written all its memory once.
fn wait_ready(
    group: &mut Group,
    mut outs: Vec<(usize, ChildStdout)>,
    labels: &[String],
) -> io::Result<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let tick = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: 100_000_000,
    };
    while !outs.is_empty() {
        if let Some(err) = interrupted_error() {
            return Err(err);
        }
        if Instant::now() > deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{} memory hogs had not written their memory after {} s",
                    outs.len(),
                    READY_TIMEOUT.as_secs()
                ),
            ));
        }
        let mut fds: Vec<PollFd<'_>> = outs
            .iter()
            .map(|(_, out)| PollFd::new(out, PollFlags::IN))
            .collect();
        match poll(&mut fds, Some(&tick)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => {
                return Err(io::Error::new(
                    io::Error::from(e).kind(),
                    format!("poll: {}", crate::quote::strerror(&io::Error::from(e))),
                ));
            }
        }
        let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
        drop(fds);
        let mut still = Vec::new();
        for ((index, mut out), ready) in outs.into_iter().zip(ready) {
            if !ready {
                still.push((index, out));
                continue;
            }
            let mut byte = [0u8; 1];
            match out.read(&mut byte) {
                Ok(1) => {}
                Ok(_) | Err(_) => {
                    let label = labels.get(index).map_or("a memory hog", String::as_str);
                    return Err(failure(group, index, label, "filling its memory").into_io());
                }
            }
        }
        outs = still;
    }
    Ok(())
}

/// The hog itself (a worker process): maps `bytes`, writes every byte,
/// unmaps, again and again until killed. Writes one byte to `ready` after
/// the first round.
pub fn hog(bytes: u64, ready: BorrowedFd<'_>) -> io::Result<()> {
    let len = usize::try_from(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "hog size too large"))?;
    let mut pattern = 0u8;
    let mut told = false;
    loop {
        let options = BufferOptions {
            dont_touch: true,
            ..BufferOptions::default()
        };
        let mut buf = Buffer::new(len, options).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("memory hog: cannot map {}: {e}", Size(bytes)),
            )
        })?;
        pattern = pattern.wrapping_add(1);
        buf.fill(pattern);
        std::hint::black_box(&mut buf);
        drop(buf);
        if !told {
            rustix::io::write(ready.as_fd(), b"r")?;
            told = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_is_split_and_capped() {
        let p = plan(24 * GIB, 80.0, 4).unwrap();
        assert_eq!(p.total, p.per_worker * 4);
        assert!(!p.capped);
        assert!(p.total <= 24 * GIB * 8 / 10);
        let p = plan(4 * GIB, 100.0, 4).unwrap();
        assert!(p.capped);
        assert!(p.total <= 3 * GIB);
        let p = plan(2 * GIB, 80.0, 4).unwrap();
        assert!(p.capped, "must leave 1 GiB of 2");
        assert!(p.total <= GIB);
        assert_eq!(p.per_worker % 4096, 0);
    }

    #[test]
    fn a_result_from_before_stress_ng_reads_as_pipespeed_s_hogs() {
        let old = serde_json::json!({
            "workers": 4, "share_percent": 80.0, "mem_available_bytes": 1,
            "bytes_requested": 1, "bytes_total": 1, "bytes_per_worker": 1,
            "capped": false, "method": "map", "ready_s": 1.0, "seconds": 1.0,
            "hogs_running_at_end": 4, "hog_cpu_s": 0.5, "happened": false,
            "while_filling": {"happened": false}
        });
        let r: PressureReport = serde_json::from_value(old).unwrap();
        assert_eq!((r.by.as_str(), &r.command), (OWN_HOGS, &None));
        let mut json = serde_json::to_value(&r).unwrap();
        assert!(json.get("command").is_none(), "{json}");
        json["by"] = "stress-ng 0.15.06".into();
        json["command"] = serde_json::json!(["--vm", "4"]);
        let r: PressureReport = serde_json::from_value(json).unwrap();
        assert_eq!(r.command.unwrap(), ["--vm", "4"]);
    }

    #[test]
    fn no_memory_to_spare_is_an_error_naming_it() {
        let err = plan(GIB / 2, 80.0, 4).unwrap_err();
        assert!(err.to_string().contains("MemAvailable"), "{err}");
    }
}
