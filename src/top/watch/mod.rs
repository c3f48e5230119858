//! The watch: which stages and pipes, probed several times a window, and
//! each window turned into a [`Sample`] (`window`); which stages and
//! pipes is `shape`'s.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::graph::{self, Link};
use super::probe::{Counters, FillAcc, Shares, activity, nap, read_counters, resolve};
use super::{PipelineSample, SCHEMA, Sample, Scope, TopError};
use crate::bench::core::Cancel;
use crate::sys::procfs::{self, PipeId, TaskState};

mod shape;
mod window;

/// Probes a window (of 10 s or less): what the shares are counted in.
const PROBES_PER_WINDOW: u32 = 20;
/// The shortest time between probes...
const MIN_PROBE_GAP: Duration = Duration::from_millis(5);
/// ...and the longest.
const MAX_PROBE_GAP: Duration = Duration::from_millis(500);
/// How often the pipelines' shape is looked for again (new stages, a
/// FIFO opened late).
const RESCAN: Duration = Duration::from_secs(1);

#[derive(Debug)]
struct Stage {
    pid: u32,
    start: u64,
    comm: String,
    name: String,
    command: String,
    visible: bool,
    exited: bool,
    /// Its regular files: descriptor and whether it writes them.
    files: Vec<(u32, bool)>,
    first: Counters,
    base: Counters,
    last: Counters,
    /// When `first` and `last` were read.
    first_at: Instant,
    last_at: Instant,
    window: Shares,
    total: Shares,
    named: u32,
}

#[derive(Debug)]
struct Pipe {
    link: Link,
    capacity: Option<u64>,
    window: FillAcc,
    total: FillAcc,
}

/// The stages of one pipeline, in order, and its pipes.
#[derive(Debug, Default)]
struct Shape {
    stages: Vec<u32>,
    pipes: Vec<PipeId>,
}

/// Watches pipelines: [`Watcher::sample`] a window at a time, then
/// [`Watcher::summary`].
#[derive(Debug)]
pub struct Watcher {
    scope: Scope,
    me: u32,
    cpus: usize,
    /// What `Scope::Targets` resolved to.
    targets: Vec<u32>,
    stages: BTreeMap<u32, Stage>,
    pipes: BTreeMap<PipeId, Pipe>,
    shapes: Vec<Shape>,
    unseen: Vec<String>,
    started: Instant,
    last_scan: Option<Instant>,
    windows: u32,
    window_started: Instant,
}

impl Watcher {
    /// Finds the pipelines of `scope`: an error when there is none to
    /// watch.
    pub fn new(scope: Scope) -> Result<Watcher, TopError> {
        let me = std::process::id();
        let seen = graph::scan(me, tree_of(&scope));
        let targets = match &scope {
            Scope::Targets(targets) => resolve(targets, &seen)?,
            Scope::Session => {
                let tty = procfs::stat(me).map_or(0, |s| s.tty);
                if tty == 0 {
                    return Err(TopError::NoTerminal);
                }
                Vec::new()
            }
            Scope::Tree(root) => vec![*root],
        };
        let cpus = crate::sys::available_cpus().map_or(1, |c| c.len().max(1));
        let now = Instant::now();
        let mut watcher = Watcher {
            scope,
            me,
            cpus,
            targets,
            stages: BTreeMap::new(),
            pipes: BTreeMap::new(),
            shapes: Vec::new(),
            unseen: Vec::new(),
            started: now,
            last_scan: None,
            windows: 0,
            window_started: now,
        };
        watcher.rescan(&seen);
        if watcher.shapes.is_empty() && watcher.scope == Scope::Session {
            return Err(TopError::NoPipeline);
        }
        Ok(watcher)
    }

    /// The windows sampled that are the run's: not the one the last
    /// stage exited in (after the first), whose figures went with it.
    pub fn windows(&self) -> u32 {
        self.windows
    }

    /// Whether every stage of every pipeline has exited.
    pub fn ended(&self) -> bool {
        self.stages.values().all(|s| s.exited)
    }

    /// Watches for `window` (less if every stage exits or `cancel` says
    /// so), probing 20 times (at most 0.5 s apart), and returns what it saw.
    pub fn sample(&mut self, window: Duration, cancel: &Cancel) -> Sample {
        // What --run started is looked at every window (only its own
        // processes' descriptors are read); anything else every second.
        let tree = tree_of(&self.scope);
        if tree.is_some() || self.last_scan.is_none_or(|t| t.elapsed() >= RESCAN) {
            let seen = graph::scan(self.me, tree);
            self.rescan(&seen);
        }
        let start = Instant::now();
        self.window_started = start;
        for s in self.stages.values_mut() {
            s.window = Shares::default();
            s.base = s.last;
        }
        for p in self.pipes.values_mut() {
            p.window = FillAcc::default();
        }
        // A probe at the start of each of PROBES_PER_WINDOW equal parts
        // (more in a long window: the end of a stage is seen within
        // MAX_PROBE_GAP).
        let gap = (window / PROBES_PER_WINDOW).clamp(MIN_PROBE_GAP, MAX_PROBE_GAP);
        let mut next = start;
        loop {
            self.probe();
            next += gap;
            if next.duration_since(start) >= window || cancel.is_cancelled() || self.ended() {
                break;
            }
            nap(next, cancel);
        }
        if !self.ended() {
            nap(start + window, cancel);
        }
        for s in self.stages.values_mut().filter(|s| !s.exited) {
            match procfs::stat(s.pid) {
                Some(stat) if stat.start == s.start && stat.state != 'Z' => {
                    s.last = read_counters(s.pid, &s.files);
                    s.last_at = Instant::now();
                }
                _ => s.exited = true,
            }
        }
        let elapsed = start.elapsed().as_secs_f64();
        // The window the last stage exited in is not one of the run's:
        // its figures went with the stages (the CLI does not show it).
        if !self.ended() || self.windows == 0 {
            self.windows += 1;
        }
        let pipelines: Vec<PipelineSample> = (0..self.shapes.len())
            .map(|i| self.pipeline(i, elapsed, false))
            .collect();
        for p in &pipelines {
            if let Some(pid) = p.verdict.bottleneck
                && let Some(s) = self.stages.get_mut(&pid)
            {
                s.named += 1;
            }
        }
        Sample {
            schema: SCHEMA,
            kind: "sample",
            time_s: self.started.elapsed().as_secs_f64(),
            window_s: elapsed,
            probes: self
                .stages
                .values()
                .map(|s| s.window.probes)
                .max()
                .unwrap_or(0),
            pipelines,
            unseen: self.unseen.clone(),
        }
    }

    /// One probe: every pipe's fill, then what every live stage's
    /// threads are doing.
    fn probe(&mut self) {
        // Who is gone first: a pipe is measured only through a reader that
        // is still there (opened through a writer, a pipe whose reader has
        // gone would get one back for the moment of the measure).
        let live: Vec<u32> = self
            .stages
            .values()
            .filter(|s| !s.exited)
            .map(|s| s.pid)
            .collect();
        let mut threads: BTreeMap<u32, Vec<TaskState>> = BTreeMap::new();
        for pid in live {
            let tasks: Vec<TaskState> = procfs::tasks(pid)
                .into_iter()
                .filter_map(|tid| procfs::task_state(pid, tid))
                .collect();
            if tasks.is_empty() || tasks.iter().all(|t| t.state == 'Z') {
                // Gone: its last counters are those of the last window.
                if let Some(stage) = self.stages.get_mut(&pid) {
                    stage.exited = true;
                }
                continue;
            }
            threads.insert(pid, tasks);
        }
        for pipe in self.pipes.values_mut() {
            let ends = pipe.link.readers.iter();
            let fill = ends
                .filter(|e| {
                    self.stages
                        .get(&e.pid)
                        .is_some_and(|s| !s.exited && s.visible)
                })
                .find_map(|e| procfs::pipe_fill(e.pid, e.fd, pipe.link.id));
            if let Some(fill) = fill {
                pipe.capacity = Some(fill.capacity);
                pipe.window.add(fill);
                pipe.total.add(fill);
            }
        }
        for (pid, tasks) in threads {
            let (empty_in, full_out) = self.ends_of(pid);
            let a = activity(&tasks, empty_in, full_out);
            if let Some(stage) = self.stages.get_mut(&pid) {
                stage.window.add(a);
                stage.total.add(a);
            }
        }
    }

    /// Whether stage `pid`'s input pipes were all empty and its output
    /// pipes all full at the last probe.
    fn ends_of(&self, pid: u32) -> (bool, bool) {
        let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
        for p in self.pipes.values() {
            let level = p.window.last.zip(p.capacity);
            if p.link.readers.iter().any(|e| e.pid == pid) {
                inputs.push(level);
            }
            if p.link.writers.iter().any(|e| e.pid == pid) {
                outputs.push(level);
            }
        }
        let empty = !inputs.is_empty() && inputs.iter().all(|l| matches!(l, Some((0, _))));
        let full = !outputs.is_empty()
            && outputs
                .iter()
                .all(|l| matches!(l, Some((b, c)) if *b + 4096 > *c));
        (empty, full)
    }
}

/// The root of `Scope::Tree`.
fn tree_of(scope: &Scope) -> Option<u32> {
    match scope {
        Scope::Tree(root) => Some(*root),
        _ => None,
    }
}
