//! A window (or the whole watch) turned into what is shown: each stage's
//! figures, its rates worked out, each pipe's fill, and the verdict.

use std::collections::BTreeMap;

use super::super::judge::{self, PipeView, StageView};
use super::super::rates::{self, Counted, Flow, Rate};
use super::super::{Named, PipeSample, PipelineSample, SCHEMA, StageSample, Summary};
use super::{Pipe, Watcher};

impl Watcher {
    /// Pipeline `i` over the window (`whole`: over the whole watch).
    pub(super) fn pipeline(&self, i: usize, seconds: f64, whole: bool) -> PipelineSample {
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
