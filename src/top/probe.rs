//! What a probe reads and how it is counted: a stage's counters, what
//! its threads are doing, a pipe's fill over a window; and the small
//! readings of `/proc` the watch needs (names, targets, ancestors).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::graph::Seen;
use super::{FillPct, Target, TopError};
use crate::bench::core::Cancel;
use crate::sys::procfs::{self, TaskState};

/// The counters of one stage at one instant.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counters {
    pub cpu_ns: u64,
    pub runq_ns: u64,
    pub io: Option<(u64, u64)>,
    pub file_in: u64,
    pub file_out: u64,
}

/// What a probe found a stage doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Activity {
    Working,
    Input,
    Output,
    Other,
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Shares {
    pub probes: u32,
    pub working: u32,
    pub input: u32,
    pub output: u32,
    pub other: u32,
}

impl Shares {
    pub(super) fn add(&mut self, a: Activity) {
        self.probes += 1;
        match a {
            Activity::Working => self.working += 1,
            Activity::Input => self.input += 1,
            Activity::Output => self.output += 1,
            Activity::Other => self.other += 1,
        }
    }

    pub(super) fn pct(&self, n: u32) -> f64 {
        if self.probes == 0 {
            0.0
        } else {
            100.0 * f64::from(n) / f64::from(self.probes)
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct FillAcc {
    pub n: u32,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    pub first: Option<u64>,
    pub last: Option<u64>,
}

impl FillAcc {
    pub(super) fn add(&mut self, fill: procfs::Fill) {
        let f = if fill.capacity == 0 {
            0.0
        } else {
            fill.bytes as f64 / fill.capacity as f64
        };
        if self.n == 0 {
            (self.min, self.max) = (f, f);
        }
        self.n += 1;
        self.sum += f;
        self.min = self.min.min(f);
        self.max = self.max.max(f);
        self.first.get_or_insert(fill.bytes);
        self.last = Some(fill.bytes);
    }

    pub(super) fn pct(&self) -> Option<FillPct> {
        (self.n > 0).then(|| FillPct {
            mean: 100.0 * self.sum / f64::from(self.n),
            min: 100.0 * self.min,
            max: 100.0 * self.max,
        })
    }

    pub(super) fn gained(&self) -> Option<i64> {
        Some(self.last? as i64 - self.first? as i64)
    }
}

/// What a stage is called: its command name, with the subcommand for a
/// multi-call program (`pipespeed cat`, `busybox gzip`), from the words
/// of its command line.
pub(super) fn display_name(comm: &str, words: &[String]) -> String {
    let mut words = words.iter().map(String::as_str);
    let program = words.next().unwrap_or("").rsplit('/').next().unwrap_or("");
    match words.next() {
        Some(sub)
            if ["pipespeed", "busybox"].contains(&program)
                && !sub.is_empty()
                && !sub.starts_with('-') =>
        {
            format!("{program} {sub}")
        }
        _ => comm.to_string(),
    }
}

/// Sleeps until `until`, in naps short enough that a cancel (SIGINT,
/// say, which does not cut a sleep short) is seen within 50 ms.
pub(super) fn nap(until: Instant, cancel: &Cancel) {
    loop {
        let now = Instant::now();
        if now >= until || cancel.is_cancelled() {
            return;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
    }
}

/// The PIDs `targets` name; an error for a PID or name with no process.
pub(super) fn resolve(
    targets: &[Target],
    seen: &BTreeMap<u32, Seen>,
) -> Result<Vec<u32>, TopError> {
    let mut pids = Vec::new();
    for t in targets {
        match t {
            Target::Pid(pid) if seen.contains_key(pid) => pids.push(*pid),
            Target::Pid(pid) => return Err(TopError::NoProcess(*pid)),
            Target::Name(name) => {
                let found: Vec<u32> = seen
                    .iter()
                    .filter(|(p, s)| s.stat.comm == *name || procfs::program(**p) == *name)
                    .map(|(&p, _)| p)
                    .collect();
                if found.is_empty() {
                    return Err(TopError::NoName(name.clone()));
                }
                pids.extend(found);
            }
        }
    }
    Ok(pids)
}

/// `pid` and the processes it descends from.
pub(super) fn ancestors(pid: u32, seen: &BTreeMap<u32, Seen>) -> BTreeSet<u32> {
    let mut found = BTreeSet::from([pid]);
    let mut at = procfs::stat(pid).map(|s| s.ppid);
    while let Some(p) = at {
        if p == 0 || !found.insert(p) {
            break;
        }
        at = seen
            .get(&p)
            .map(|s| s.stat.ppid)
            .or_else(|| procfs::stat(p).map(|s| s.ppid));
    }
    found
}

/// A stage's counters now: CPU and run-queue time summed over its threads
/// (or its CPU ticks where schedstat is missing), its I/O counters and
/// its files' positions.
pub(super) fn read_counters(pid: u32, files: &[(u32, bool)]) -> Counters {
    let mut c = Counters::default();
    let mut sched = false;
    for tid in procfs::tasks(pid) {
        if let Some((run, wait)) = procfs::schedstat(pid, tid) {
            c.cpu_ns += run;
            c.runq_ns += wait;
            sched = true;
        }
    }
    if !sched && let Some(stat) = procfs::stat(pid) {
        let hz = rustix::param::clock_ticks_per_second().max(1);
        c.cpu_ns = stat.cpu_ticks.saturating_mul(1_000_000_000 / hz);
    }
    c.io = procfs::io_counters(pid);
    for &(fd, writes) in files {
        if let Some((_, pos)) = procfs::fdinfo(pid, fd) {
            if writes {
                c.file_out = c.file_out.saturating_add(pos);
            } else {
                c.file_in = c.file_in.saturating_add(pos);
            }
        }
    }
    c
}

/// What a stage's threads were doing at one probe: working if one runs,
/// else waiting on its input or output pipe if one sleeps there. A
/// thread asleep in poll(2) or select(2) waits on a pipe that is empty
/// (input) or full (output) at the same probe.
pub(super) fn activity(tasks: &[TaskState], input_empty: bool, output_full: bool) -> Activity {
    let sleeps_in =
        |f: &dyn Fn(&str) -> bool| tasks.iter().any(|t| t.wchan.as_deref().is_some_and(f));
    if tasks.iter().any(|t| t.state == 'R') {
        Activity::Working
    } else if sleeps_in(&|w| w.contains("pipe_read") || w == "pipe_wait_readable") {
        Activity::Input
    } else if sleeps_in(&|w| w.contains("pipe_write") || w == "pipe_wait_writable") {
        Activity::Output
    } else if sleeps_in(&|w| w.contains("poll") || w.contains("select")) && input_empty {
        Activity::Input
    } else if sleeps_in(&|w| w.contains("poll") || w.contains("select")) && output_full {
        Activity::Output
    } else {
        Activity::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(state: char, wchan: Option<&str>) -> TaskState {
        TaskState {
            state,
            wchan: wchan.map(str::to_string),
        }
    }

    #[test]
    fn a_multi_call_program_is_named_with_its_subcommand() {
        let name = |comm: &str, words: &[&str]| {
            display_name(
                comm,
                &words.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            name("pipespeed", &["/usr/bin/pipespeed", "cat", "-"]),
            "pipespeed cat"
        );
        assert_eq!(
            name("pipespeed", &["/a b/é/pipespeed", "pv", "-q"]),
            "pipespeed pv"
        );
        assert_eq!(
            name("pipespeed", &["pipespeed", "--json", "x"]),
            "pipespeed"
        );
        assert_eq!(name("gzip", &["gzip", "-1"]), "gzip");
        assert_eq!(name("cat", &["/home/u/bin/cat"]), "cat");
    }

    #[test]
    fn a_running_thread_makes_the_stage_working_whatever_the_others_do() {
        let t = [task('S', Some("anon_pipe_read")), task('R', None)];
        assert_eq!(activity(&t, true, false), Activity::Working);
    }

    #[test]
    fn pipe_sleeps_are_input_or_output_and_others_are_other() {
        let cases = [
            ('S', Some("anon_pipe_read"), false, Activity::Input),
            ('S', Some("pipe_wait_readable"), false, Activity::Input),
            ('S', Some("anon_pipe_write"), false, Activity::Output),
            ('S', Some("pipe_wait_writable"), false, Activity::Output),
            ('S', Some("hrtimer_nanosleep"), true, Activity::Other),
            ('D', None, true, Activity::Other),
        ];
        for (state, wchan, empty_and_full, expected) in cases {
            let got = activity(&[task(state, wchan)], empty_and_full, empty_and_full);
            assert_eq!(got, expected, "{state} {wchan:?}");
        }
    }

    #[test]
    fn a_poll_is_read_from_the_pipes_it_may_wait_on() {
        let poll = [
            task('S', Some("do_sys_poll")),
            task('S', Some("do_nanosleep")),
        ];
        assert_eq!(activity(&poll, true, false), Activity::Input);
        assert_eq!(activity(&poll, false, true), Activity::Output);
        assert_eq!(activity(&poll, false, false), Activity::Other);
    }
}
