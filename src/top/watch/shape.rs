//! Which stages and pipes the watch follows: the candidates of its
//! scope, their pipelines as the graph finds them, merged with what was
//! seen before, and what cannot be seen.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use super::super::Scope;
use super::super::graph::{self, Link, Seen};
use super::super::probe::{Counters, FillAcc, Shares, ancestors, display_name, read_counters};
use super::{Pipe, Shape, Stage, Watcher, tree_of};
use crate::sys::procfs::{self, Access, Object, PipeId};

impl Watcher {
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
    pub(super) fn rescan(&mut self, seen: &BTreeMap<u32, Seen>) {
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
                let words = procfs::command_line(pid, &s.stat.comm);
                stage.name = display_name(&stage.comm, &words);
                stage.command = words.join(" ");
            }
            return;
        }
        let words = procfs::command_line(pid, &s.stat.comm);
        let mut stage = Stage {
            pid,
            start: s.stat.start,
            comm: s.stat.comm.clone(),
            name: display_name(&s.stat.comm, &words),
            command: words.join(" "),
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
}
