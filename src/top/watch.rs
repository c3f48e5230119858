//! The watch: which stages and pipes, probed several times a window, and
//! each window turned into a [`Sample`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::graph::{self, Link, Seen};
use super::judge::{self, PipeView, StageView};
use super::probe::{
    Counters, FillAcc, Shares, activity, ancestors, display_name, nap, read_counters, resolve,
};
use super::procfs::{self, Access, Object, PipeId, TaskState};
use super::rates::{self, Counted, Flow, Rate};
use super::{
    Named, PipeSample, PipelineSample, SCHEMA, Sample, Scope, StageSample, Summary, TopError,
};
use crate::bench::core::Cancel;

/// Probes a window (of 10 s or less): what the shares are counted in.
pub const PROBES_PER_WINDOW: u32 = 20;
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

    /// Whether every stage of every pipeline has exited.
    pub fn ended(&self) -> bool {
        self.stages.values().all(|s| s.exited)
    }

    /// The PIDs of the stages being watched, exited or not.
    pub fn stage_pids(&self) -> Vec<u32> {
        self.shapes.iter().flat_map(|s| s.stages.clone()).collect()
    }

    fn candidates(&self, seen: &BTreeMap<u32, Seen>) -> Vec<u32> {
        match &self.scope {
            Scope::Targets(_) => {
                let mut c: BTreeSet<u32> = self.targets.iter().copied().collect();
                c.extend(self.stages.keys());
                c.into_iter().filter(|p| seen.contains_key(p)).collect()
            }
            Scope::Session => {
                let Some(mine) = procfs::stat(self.me) else {
                    return Vec::new();
                };
                let ancestors = ancestors(self.me, seen);
                seen.iter()
                    .filter(|(p, s)| s.stat.tty == mine.tty && !ancestors.contains(p))
                    .map(|(&p, _)| p)
                    .collect()
            }
            // The shell that runs a pipeline holds none of its pipes (or
            // one its child holds too: graph::links leaves it out).
            Scope::Tree(root) => graph::descendants(*root, seen),
        }
    }

    /// Looks for the pipelines again: new stages and pipes join, stages
    /// and pipes already seen stay (marked exited once gone).
    fn rescan(&mut self, seen: &BTreeMap<u32, Seen>) {
        self.last_scan = Some(Instant::now());
        let candidates = self.candidates(seen);
        let (mut links, dangling) = graph::links(seen);
        if let Scope::Tree(_) = self.scope {
            // What the command started is the pipeline: where its output
            // goes (our own reader, say) is not a stage of it.
            graph::within(&mut links, &candidates);
        }
        let mut found = graph::pipelines(&candidates, &links);
        let in_pipelines: BTreeSet<u32> = found.iter().flat_map(|(s, _)| s.clone()).collect();
        // A target or a started command joined to nothing is a pipeline of
        // one stage: what it does is still worth showing.
        let alone: Vec<u32> = match &self.scope {
            Scope::Targets(_) => self.targets.clone(),
            // A lone command: the processes that are not waiting for one.
            Scope::Tree(_) if found.is_empty() => candidates
                .iter()
                .copied()
                .filter(|p| !seen.values().any(|s| s.stat.ppid == *p))
                .collect(),
            _ => Vec::new(),
        };
        if let Scope::Tree(_) = self.scope {
            // A shell seen alone before it started its stages is not one.
            let parent = |p: u32| seen.values().any(|s| s.stat.ppid == p);
            self.shapes.retain(|shape| match shape.stages[..] {
                [pid] => !parent(pid) || !seen.contains_key(&pid),
                _ => true,
            });
        }
        for p in alone {
            if !in_pipelines.contains(&p) && seen.contains_key(&p) {
                found.push((vec![p], Vec::new()));
            }
        }
        for (stages, mine) in found {
            for &pid in &stages {
                self.add_stage(pid, seen);
            }
            for link in &mine {
                // The ends as seen now: a stage that joined later is on it,
                // one that left keeps its place in the order.
                let pipe = self.pipes.entry(link.id).or_insert_with(|| Pipe {
                    link: link.clone(),
                    capacity: None,
                    window: FillAcc::default(),
                    total: FillAcc::default(),
                });
                for (ends, now) in [
                    (&mut pipe.link.writers, &link.writers),
                    (&mut pipe.link.readers, &link.readers),
                ] {
                    for e in now {
                        if !ends.contains(e) {
                            ends.push(*e);
                        }
                    }
                }
            }
            // Every shape this component touches (a stage or a pipe in
            // common) becomes one.
            let mut members: BTreeSet<u32> = stages
                .iter()
                .copied()
                .filter(|p| self.stages.contains_key(p))
                .collect();
            let mut pipes: BTreeSet<PipeId> = mine.iter().map(|l| l.id).collect();
            self.shapes.retain(|s| {
                let touches = s.stages.iter().any(|p| members.contains(p))
                    || s.pipes.iter().any(|id| pipes.contains(id));
                if touches {
                    members.extend(&s.stages);
                    pipes.extend(&s.pipes);
                }
                !touches
            });
            let all: Vec<Link> = pipes
                .iter()
                .filter_map(|id| self.pipes.get(id).map(|p| p.link.clone()))
                .collect();
            self.shapes.push(Shape {
                stages: graph::order(&members, &all),
                pipes: pipes.into_iter().collect(),
            });
        }
        // What --run started: where its ends lead outside it is ours.
        self.unseen = match tree_of(&self.scope) {
            Some(_) => self.unseen_notes(seen, &[]),
            None => self.unseen_notes(seen, &dangling),
        };
    }

    fn add_stage(&mut self, pid: u32, seen: &BTreeMap<u32, Seen>) {
        let Some(s) = seen.get(&pid) else { return };
        let files: Vec<(u32, bool)> = s
            .fds
            .iter()
            .flatten()
            .filter(|d| matches!(d.object, Object::File { .. }))
            .map(|d| (d.fd, d.access != Access::Read))
            .collect();
        if let Some(stage) = self.stages.get_mut(&pid)
            && stage.start == s.stat.start
        {
            stage.files = files;
            // Caught between fork and exec, it had its parent's name.
            if stage.comm != s.stat.comm {
                stage.comm = s.stat.comm.clone();
                stage.command = procfs::command_line(pid, &s.stat.comm);
                stage.name = display_name(&stage.comm, &stage.command);
            }
            return;
        }
        let command = procfs::command_line(pid, &s.stat.comm);
        let mut stage = Stage {
            pid,
            start: s.stat.start,
            comm: s.stat.comm.clone(),
            name: display_name(&s.stat.comm, &command),
            command,
            visible: s.fds.is_some(),
            exited: false,
            files,
            first: Counters::default(),
            base: Counters::default(),
            last: Counters::default(),
            first_at: Instant::now(),
            last_at: Instant::now(),
            window: Shares::default(),
            total: Shares::default(),
            named: 0,
        };
        let now = read_counters(stage.pid, &stage.files);
        (stage.first, stage.base, stage.last) = (now, now, now);
        self.stages.insert(pid, stage);
    }

    fn unseen_notes(
        &self,
        seen: &BTreeMap<u32, Seen>,
        dangling: &[graph::Dangling],
    ) -> Vec<String> {
        let mut notes = Vec::new();
        for s in self.stages.values().filter(|s| !s.visible) {
            notes.push(format!(
                "{} (PID {}) is another user's process: its pipes, I/O and state cannot be read \
                 (run as root or as its user)",
                s.name, s.pid
            ));
        }
        let others = seen.values().any(|s| s.fds.is_none());
        for d in dangling
            .iter()
            .filter(|d| self.stages.contains_key(&d.end.pid))
        {
            let stage = &self.stages[&d.end.pid];
            let (verb, other) = match d.access {
                Access::Read => ("reads", "writer"),
                _ => ("writes", "reader"),
            };
            let why = if others {
                "it exited, or is another user's process"
            } else {
                "it exited"
            };
            let name = match d.id {
                PipeId::Anonymous(ino) => format!("pipe:[{ino}]"),
                PipeId::Named { ino, .. } => format!("fifo:[{ino}]"),
            };
            notes.push(format!(
                "{} (PID {}) {verb} {name} on descriptor {}, whose {other} cannot be seen ({why})",
                stage.name, stage.pid, d.end.fd
            ));
        }
        notes
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

    /// Pipeline `i` over the window (`whole`: over the whole watch).
    fn pipeline(&self, i: usize, seconds: f64, whole: bool) -> PipelineSample {
        let shape = &self.shapes[i];
        let index: BTreeMap<u32, usize> = shape
            .stages
            .iter()
            .enumerate()
            .map(|(i, &p)| (p, i))
            .collect();
        let pipes: Vec<&Pipe> = shape.pipes.iter().map(|id| &self.pipes[id]).collect();
        let ends = |pipe: &Pipe| {
            let from = pipe.link.writers.iter().find_map(|e| index.get(&e.pid))?;
            let to = pipe.link.readers.iter().find_map(|e| index.get(&e.pid))?;
            Some((*from, *to))
        };
        let mut counted: Vec<Counted> = shape
            .stages
            .iter()
            .map(|p| {
                let s = &self.stages[p];
                let from = if whole { s.first } else { s.base };
                let io = s.last.io.zip(from.io);
                Counted {
                    read: io.map(|(l, f)| l.0.saturating_sub(f.0)),
                    written: io.map(|(l, f)| l.1.saturating_sub(f.1)),
                    file_in: s.last.file_in.saturating_sub(from.file_in),
                    file_out: s.last.file_out.saturating_sub(from.file_out),
                }
            })
            .collect();
        let flows: Vec<Flow> = pipes
            .iter()
            .filter_map(|p| {
                let (from, to) = ends(p)?;
                let acc = if whole { p.total } else { p.window };
                Some(Flow {
                    from,
                    to,
                    gained: acc.gained(),
                })
            })
            .collect();
        rates::drop_start_up(&mut counted, &flows);
        let estimated = rates::estimate(&counted, &flows);
        let per_s = |r: Option<(f64, bool)>, seconds: f64| {
            r.map(|(bytes, estimated)| Rate {
                bytes_per_s: if seconds > 0.0 { bytes / seconds } else { 0.0 },
                estimated,
            })
        };
        let ns = seconds * 1e9;
        let stages: Vec<StageSample> = shape
            .stages
            .iter()
            .zip(&estimated)
            .zip(&counted)
            .map(|((p, (inp, out)), c)| {
                let s = &self.stages[p];
                let from = if whole { s.first } else { s.base };
                let shares = if whole { s.total } else { s.window };
                // Over the whole watch, a stage's own span: from when it
                // was first seen to its last counters before it exited.
                let ns = match whole {
                    true => s.last_at.duration_since(s.first_at).as_secs_f64() * 1e9,
                    false => ns,
                };
                let pct = |d: u64| if ns > 0.0 { 100.0 * d as f64 / ns } else { 0.0 };
                StageSample {
                    pid: s.pid,
                    name: s.name.clone(),
                    command: s.command.clone(),
                    state: if s.exited { "exited" } else { "running" },
                    cpu_pct: pct(s.last.cpu_ns.saturating_sub(from.cpu_ns)),
                    runq_pct: pct(s.last.runq_ns.saturating_sub(from.runq_ns)),
                    bytes_in: per_s(*inp, ns / 1e9),
                    bytes_out: per_s(*out, ns / 1e9),
                    working_pct: shares.pct(shares.working),
                    input_wait_pct: shares.pct(shares.input),
                    output_wait_pct: shares.pct(shares.output),
                    other_pct: shares.pct(shares.other),
                    visible: s.visible,
                    copies: c.read.unwrap_or(0) > 0 || c.written.unwrap_or(0) > 0,
                }
            })
            .collect();
        let pipe_samples: Vec<PipeSample> = pipes
            .iter()
            .map(|p| PipeSample {
                name: p.link.name(),
                from: p.link.writers.first().map_or(0, |e| e.pid),
                to: p.link.readers.first().map_or(0, |e| e.pid),
                capacity: p.capacity,
                fill_pct: if whole { p.total.pct() } else { p.window.pct() },
            })
            .collect();
        let views: Vec<StageView> = stages
            .iter()
            .map(|s| StageView {
                name: s.name.clone(),
                pid: s.pid,
                cpu: s.cpu_pct / 100.0,
                runq: s.runq_pct / 100.0,
                work: s.working_pct / 100.0,
                input_wait: s.input_wait_pct / 100.0,
                output_wait: s.output_wait_pct / 100.0,
                visible: s.visible,
                copies: s.copies,
                exited: s.state == "exited" && !whole,
            })
            .collect();
        let pipe_views: Vec<PipeView> = pipes
            .iter()
            .zip(&pipe_samples)
            .filter_map(|(p, sample)| {
                let (from, to) = ends(p)?;
                Some(PipeView {
                    from,
                    to,
                    fill: sample.fill_pct.map(|f| f.mean / 100.0),
                })
            })
            .collect();
        PipelineSample {
            verdict: judge::judge(&views, &pipe_views, self.cpus),
            stages,
            pipes: pipe_samples,
        }
    }

    /// The whole watch: each pipeline's figures over all of it, and how
    /// often each stage was named.
    pub fn summary(&self) -> Summary {
        let seconds = self.started.elapsed().as_secs_f64();
        Summary {
            schema: SCHEMA,
            kind: "summary",
            time_s: seconds,
            samples: self.windows,
            pipelines: (0..self.shapes.len())
                .map(|i| self.pipeline(i, seconds, true))
                .collect(),
            named: self
                .shapes
                .iter()
                .map(|shape| {
                    let mut named: Vec<Named> = shape
                        .stages
                        .iter()
                        .map(|p| &self.stages[p])
                        .filter(|s| s.named > 0)
                        .map(|s| Named {
                            name: s.name.clone(),
                            pid: s.pid,
                            windows: s.named,
                        })
                        .collect();
                    named.sort_by_key(|n| std::cmp::Reverse(n.windows));
                    named
                })
                .collect(),
        }
    }
}

/// The root of `Scope::Tree`.
fn tree_of(scope: &Scope) -> Option<u32> {
    match scope {
        Scope::Tree(root) => Some(*root),
        _ => None,
    }
}
