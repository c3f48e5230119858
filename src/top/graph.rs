//! Which processes form a pipeline: every process joined to a target by
//! a pipe or a FIFO, one end in each, found through `/proc/PID/fd`.
//!
//! Not every shared pipe is a pipeline's. Three kinds are left out:
//! - a pipe one process holds both ends of (a tool's private splice pipe,
//!   xz's self-pipe, make's jobserver, which every child inherits whole);
//! - an end on descriptor 2 or above that more than one process holds: a
//!   descriptor a parent leaked to all its children (a job runner's
//!   status pipe, a test harness capturing everyone's stderr), not one a
//!   stage was given to read or write (stderr counts with `2>&1 |`, where
//!   it is the stdout pipe);
//! - a pipe whose other end no visible process holds (its reader exited,
//!   or it is another user's): said, not drawn.

use std::collections::{BTreeMap, BTreeSet};

use crate::sys::procfs::{self, Access, Descriptor, Object, PipeId, Stat};

/// A process as the scan found it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub stat: Stat,
    /// Its pipes and files; `None` when they cannot be read (another
    /// user's process).
    pub fds: Option<Vec<Descriptor>>,
}

/// Every process of `/proc` but `me`, with what can be read of each;
/// with `tree`, the descriptors of that process and its descendants only
/// (the others' are not needed, and reading them costs).
pub(crate) fn scan(me: u32, tree: Option<u32>) -> BTreeMap<u32, Seen> {
    let mut seen: BTreeMap<u32, Seen> = procfs::processes()
        .into_iter()
        .filter(|&pid| pid != me)
        .filter_map(|pid| {
            let stat = procfs::stat(pid)?;
            Some((pid, Seen { stat, fds: None }))
        })
        .collect();
    let wanted: Vec<u32> = match tree {
        Some(root) => descendants(root, &seen),
        None => seen.keys().copied().collect(),
    };
    for pid in wanted {
        if let Some(s) = seen.get_mut(&pid) {
            // A zombie has no descriptors left to read.
            s.fds = procfs::descriptors(pid).ok();
        }
    }
    seen
}

/// One end of a link: a process and the descriptor it holds it on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct End {
    pub pid: u32,
    pub fd: u32,
}

/// A pipe between two stages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    pub id: PipeId,
    /// A FIFO's path where it was opened by one.
    pub path: Option<String>,
    pub writers: Vec<End>,
    pub readers: Vec<End>,
}

impl Link {
    /// `pipe:[INODE]`, or the FIFO's path.
    pub(super) fn name(&self) -> String {
        match (&self.path, self.id) {
            (Some(path), _) => path.clone(),
            (None, PipeId::Anonymous(ino)) => format!("pipe:[{ino}]"),
            (None, PipeId::Named { ino, .. }) => format!("fifo:[{ino}]"),
        }
    }
}

/// A pipe end a process holds whose other end no process that can be
/// read holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dangling {
    pub end: End,
    pub id: PipeId,
    pub access: Access,
}

/// The links between the processes `seen`, by the rules at the top.
pub(crate) fn links(seen: &BTreeMap<u32, Seen>) -> (Vec<Link>, Vec<Dangling>) {
    let mut holders: BTreeMap<PipeId, Vec<(End, Access, Option<String>)>> = BTreeMap::new();
    for (&pid, proc) in seen {
        for d in proc.fds.iter().flatten() {
            if let Object::Pipe { id, path } = &d.object {
                holders.entry(*id).or_default().push((
                    End { pid, fd: d.fd },
                    d.access,
                    path.clone(),
                ));
            }
        }
    }
    let mut links = Vec::new();
    let mut dangling = Vec::new();
    for (id, ends) in holders {
        let procs_with = |access: Access| -> BTreeSet<u32> {
            ends.iter()
                .filter(|(_, a, _)| *a == access)
                .map(|(e, _, _)| e.pid)
                .collect()
        };
        let (readers, writers) = (procs_with(Access::Read), procs_with(Access::Write));
        let both = ends.iter().any(|(_, a, _)| *a == Access::ReadWrite)
            || readers.intersection(&writers).next().is_some();
        if both {
            continue;
        }
        // An end on descriptor 2 or above that several processes share was
        // inherited, not given (a log or a test harness's capture on
        // everyone's stderr); stderr joins when stdout is the same pipe
        // (`2>&1 |`).
        let on_stdout = |pid: u32| ends.iter().any(|(e, _, _)| e.pid == pid && e.fd == 1);
        let keep = |access: Access, procs: &BTreeSet<u32>| {
            let shared = procs.len() > 1;
            ends.iter()
                .filter(|(e, a, _)| {
                    *a == access
                        && (e.fd < 2 || (e.fd == 2 && on_stdout(e.pid)) || !shared || is_named(id))
                })
                .map(|(e, _, _)| *e)
                .collect::<Vec<End>>()
        };
        let mut r = keep(Access::Read, &readers);
        let mut w = keep(Access::Write, &writers);
        // A parent that waits for a child holding the same end (timeout,
        // sudo, time, a subshell) is not a stage: its child is.
        for ends in [&mut r, &mut w] {
            let holders: BTreeSet<u32> = ends.iter().map(|e| e.pid).collect();
            ends.retain(|e| {
                !holders
                    .iter()
                    .any(|&h| h != e.pid && descends(h, e.pid, seen))
            });
        }
        match (r.is_empty(), w.is_empty()) {
            (false, false) => links.push(Link {
                id,
                path: ends.iter().find_map(|(_, _, p)| p.clone()),
                writers: w,
                readers: r,
            }),
            (true, false) | (false, true) => {
                // Only an end on 0, 1 or 2 is worth saying: that is a
                // stage's input or output.
                for (end, access) in w
                    .iter()
                    .map(|e| (*e, Access::Write))
                    .chain(r.iter().map(|e| (*e, Access::Read)))
                    .filter(|(e, _)| e.fd < 3)
                {
                    dangling.push(Dangling { end, id, access });
                }
            }
            (true, true) => {}
        }
    }
    (links, dangling)
}

/// Whether `pid` descends from `ancestor`.
fn descends(pid: u32, ancestor: u32, seen: &BTreeMap<u32, Seen>) -> bool {
    let mut at = pid;
    for _ in 0..seen.len() {
        match seen.get(&at).map(|s| s.stat.ppid) {
            Some(parent) if parent == ancestor => return true,
            Some(parent) if parent > 1 => at = parent,
            _ => return false,
        }
    }
    false
}

fn is_named(id: PipeId) -> bool {
    matches!(id, PipeId::Named { .. })
}

/// The processes joined to `targets` by `links`, directly or through
/// others, with the targets themselves, in pipeline order.
pub(crate) fn component(targets: &[u32], links: &[Link]) -> (Vec<u32>, Vec<Link>) {
    let mut members: BTreeSet<u32> = targets.iter().copied().collect();
    loop {
        let before = members.len();
        for link in links {
            let pids = || link.writers.iter().chain(&link.readers).map(|e| e.pid);
            if pids().any(|p| members.contains(&p)) {
                members.extend(pids());
            }
        }
        if members.len() == before {
            break;
        }
    }
    let mine: Vec<Link> = links
        .iter()
        .filter(|l| l.writers.iter().any(|e| members.contains(&e.pid)))
        .cloned()
        .collect();
    (order(&members, &mine), mine)
}

/// The stages from the first writer to the last reader: by the longest
/// chain of pipes that leads to each (a cycle, as a coprocess makes, is
/// cut), then by PID.
pub(crate) fn order(members: &BTreeSet<u32>, links: &[Link]) -> Vec<u32> {
    let mut depth: BTreeMap<u32, usize> = members.iter().map(|&p| (p, 0)).collect();
    for _ in 0..members.len() {
        let mut changed = false;
        for link in links {
            for w in &link.writers {
                for r in &link.readers {
                    // An end of a process that is not a member (a link as
                    // first seen, its holder gone since) orders nothing.
                    let (Some(&dw), Some(&dr)) = (depth.get(&w.pid), depth.get(&r.pid)) else {
                        continue;
                    };
                    let d = dw + 1;
                    if w.pid != r.pid && d > dr && d < members.len() {
                        depth.insert(r.pid, d);
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut stages: Vec<u32> = members.iter().copied().collect();
    stages.sort_by_key(|p| (depth[p], *p));
    stages
}

/// Groups `candidates` into pipelines (each a list of stages in order and
/// its links): the processes joined by pipes form one; a candidate that
/// is joined to none is left out.
pub(crate) fn pipelines(candidates: &[u32], links: &[Link]) -> Vec<(Vec<u32>, Vec<Link>)> {
    let mut left: BTreeSet<u32> = candidates.iter().copied().collect();
    let mut found = Vec::new();
    while let Some(&first) = left.iter().next() {
        let (stages, mine) = component(&[first], links);
        for s in &stages {
            left.remove(s);
        }
        if !mine.is_empty() {
            found.push((stages, mine));
        }
    }
    found
}

/// Keeps of `links` only the ends `members` hold, and the links that
/// still have a writer and a reader.
pub(crate) fn within(links: &mut Vec<Link>, members: &[u32]) {
    for link in links.iter_mut() {
        link.writers.retain(|e| members.contains(&e.pid));
        link.readers.retain(|e| members.contains(&e.pid));
    }
    links.retain(|l| !l.writers.is_empty() && !l.readers.is_empty());
}

/// The processes started (directly or not) by `root`, with `root`.
pub(crate) fn descendants(root: u32, seen: &BTreeMap<u32, Seen>) -> Vec<u32> {
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            seen.iter()
                .filter(|(_, s)| s.stat.ppid == parent)
                .map(|(&p, _)| p),
        );
        i += 1;
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(pid: u32) -> Stat {
        Stat {
            comm: format!("p{pid}"),
            state: 'S',
            ppid: 1,
            session: 1,
            tty: 0,
            cpu_ticks: 0,
            start: 0,
        }
    }

    fn pipe(ino: u64, fd: u32, access: Access) -> Descriptor {
        Descriptor {
            fd,
            object: Object::Pipe {
                id: PipeId::Anonymous(ino),
                path: None,
            },
            access,
            pos: 0,
        }
    }

    fn world(procs: &[(u32, Vec<Descriptor>)]) -> BTreeMap<u32, Seen> {
        procs
            .iter()
            .map(|(pid, fds)| {
                (
                    *pid,
                    Seen {
                        stat: stat(*pid),
                        fds: Some(fds.clone()),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn a_three_stage_pipeline_is_found_from_any_stage_in_order() {
        use Access::*;
        let seen = world(&[
            (30, vec![pipe(2, 0, Read)]),
            (10, vec![pipe(1, 1, Write)]),
            (20, vec![pipe(1, 0, Read), pipe(2, 1, Write)]),
            (99, vec![]),
        ]);
        let (links, dangling) = links(&seen);
        assert_eq!(links.len(), 2);
        assert!(dangling.is_empty());
        for target in [10, 20, 30] {
            let (stages, mine) = component(&[target], &links);
            assert_eq!(stages, vec![10, 20, 30]);
            assert_eq!(mine.len(), 2);
        }
        assert_eq!(component(&[99], &links).0, vec![99]);
    }

    #[test]
    fn private_pipes_and_leaked_descriptors_join_nothing() {
        use Access::*;
        let seen = world(&[
            // A private splice pipe, and a jobserver both ends inherited.
            (
                10,
                vec![pipe(5, 4, Read), pipe(5, 5, Write), pipe(6, 3, Read)],
            ),
            (11, vec![pipe(6, 3, Read), pipe(6, 4, Write)]),
            // A status pipe every job inherited on 251, read by the runner.
            (20, vec![pipe(7, 251, Write), pipe(8, 1, Write)]),
            (21, vec![pipe(7, 251, Write), pipe(8, 0, Read)]),
            (1, vec![pipe(7, 9, Read)]),
        ]);
        let (links, _) = links(&seen);
        assert_eq!(links.len(), 1, "{links:?}");
        // Everyone's stderr into one capture, and `2>&1 |`.
        let seen = world(&[
            (
                30,
                vec![pipe(9, 2, Write), pipe(10, 1, Write), pipe(10, 2, Write)],
            ),
            (31, vec![pipe(9, 2, Write), pipe(10, 0, Read)]),
            (40, vec![pipe(9, 0, Read)]),
        ]);
        let (found, _) = super::links(&seen);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].writers,
            [End { pid: 30, fd: 1 }, End { pid: 30, fd: 2 }]
        );
        assert_eq!(component(&[20], &links).0, vec![20, 21]);
        assert_eq!(component(&[10], &links).0, vec![10]);
    }

    #[test]
    fn an_end_without_its_other_end_is_dangling() {
        use Access::*;
        let seen = world(&[(10, vec![pipe(1, 1, Write)]), (11, vec![pipe(9, 7, Read)])]);
        let (links, dangling) = links(&seen);
        assert!(links.is_empty());
        assert_eq!(
            dangling,
            vec![Dangling {
                end: End { pid: 10, fd: 1 },
                id: PipeId::Anonymous(1),
                access: Write
            }]
        );
    }

    #[test]
    fn separate_pipelines_are_told_apart_and_a_cycle_ends() {
        use Access::*;
        let seen = world(&[
            (1, vec![pipe(1, 1, Write), pipe(3, 0, Read)]),
            (2, vec![pipe(1, 0, Read), pipe(3, 1, Write)]),
            (5, vec![pipe(4, 1, Write)]),
            (6, vec![pipe(4, 0, Read)]),
            (7, vec![]),
        ]);
        let (links, _) = links(&seen);
        let found = pipelines(&[1, 2, 5, 6, 7], &links);
        let stages: Vec<Vec<u32>> = found.into_iter().map(|(s, _)| s).collect();
        assert_eq!(stages, vec![vec![1, 2], vec![5, 6]]);
    }
}
