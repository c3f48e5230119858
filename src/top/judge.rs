//! Which stage limits a pipeline, by two rules, and what to do about it.
//!
//! - **The pipes' fill**: the limiting stage has its input pipe full and
//!   its output pipe empty.
//! - **The waits**: the limiting stage is the one least often blocked on
//!   its pipes, whether it computes or sleeps (a rate limit at 0% CPU,
//!   which CPU% alone would miss).
//!
//! Where both name the same stage, it is the bottleneck; otherwise the
//! verdict says why there is no single one.

use serde::Serialize;

/// A pipe is full enough to hold its writer back above this mean fill...
pub const FULL: f64 = 0.5;
/// ...and empty enough to hold its reader back below this one.
pub const EMPTY: f64 = 0.1;
/// The waits' rule: the candidate is blocked on its pipes at most this
/// share of the time...
const LEAST_BLOCKED: f64 = 0.3;
/// ...and every other stage at least this much more often.
const MARGIN: f64 = 0.25;
/// A stage at or above this CPU share of one CPU is CPU-bound.
const CPU_BOUND: f64 = 0.8;

/// One stage's window, as the rules read it: shares of the window's
/// probes, each 0 to 1.
#[derive(Debug, Clone, PartialEq)]
pub struct StageView {
    /// What to call it: its command name.
    pub name: String,
    /// Its process ID.
    pub pid: u32,
    /// The share of one CPU it used.
    pub cpu: f64,
    /// The share of the window it waited on a run queue for a CPU.
    pub runq: f64,
    /// The share of probes that found it running.
    pub work: f64,
    /// ...blocked reading a pipe.
    pub input_wait: f64,
    /// ...blocked writing a pipe.
    pub output_wait: f64,
    /// Whether its state could be read at all (another user's process
    /// cannot be).
    pub visible: bool,
    /// Whether it copies through user space (its read and write counters
    /// moved): a `cat`, `pv` or `tee` that does is one that could splice.
    pub copies: bool,
    /// Whether it had exited by the window's end.
    pub exited: bool,
}

impl StageView {
    /// The share of the window it spent blocked on its pipes: what the
    /// probes found, or, when more, what its CPU time leaves once the
    /// run queue and its sleeps elsewhere are counted. A writer that a
    /// fast reader wakes for every page it frees is runnable at many
    /// probes and on a CPU for few of them (head at 12% CPU was
    /// "working" at 59% of the probes): the CPU time, from schedstat, is
    /// exact where a probe's snapshot is not.
    pub fn blocked(&self) -> f64 {
        let probed = self.input_wait + self.output_wait;
        let elsewhere = (1.0 - self.work - probed).max(0.0);
        let by_cpu = 1.0 - self.cpu.min(1.0) - self.runq - elsewhere;
        probed.max(by_cpu).clamp(0.0, 1.0)
    }
}

/// One pipe's window: its mean fill (0 to 1) where it could be read, and
/// the stages it joins (indices into the stages).
#[derive(Debug, Clone, PartialEq)]
pub struct PipeView {
    /// The writer.
    pub from: usize,
    /// The reader.
    pub to: usize,
    /// The mean fill, 0 to 1.
    pub fill: Option<f64>,
}

/// The answer for one pipeline and one window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The PID of the stage that limits the pipeline, if one does.
    pub bottleneck: Option<u32>,
    /// Its command name.
    pub stage: Option<String>,
    /// The sentence: `gzip: input pipe full 80%, output pipe empty 2%, 98%
    /// CPU: CPU-bound`, or `no single bottleneck: ...`.
    pub why: String,
    /// Which rules named it: `fill and waits`, `waits` or `fill` (the
    /// other could not be read), or `none`.
    pub rules: String,
    /// What to do, where it follows from what was seen.
    pub advice: Vec<String>,
}

impl Verdict {
    /// A verdict that names no stage, for this reason.
    fn undecided(why: String) -> Verdict {
        Verdict {
            bottleneck: None,
            stage: None,
            why,
            rules: "none".to_string(),
            advice: Vec::new(),
        }
    }
}

/// The stage the fill rule names, if exactly one qualifies; `Err` when
/// the fills cannot be read.
fn by_fill(stages: &[StageView], pipes: &[PipeView]) -> Result<Option<usize>, ()> {
    if pipes.is_empty() || pipes.iter().any(|p| p.fill.is_none()) {
        return Err(());
    }
    let found: Vec<usize> = (0..stages.len())
        .filter(|&i| {
            let inputs = pipes.iter().filter(|p| p.to == i);
            let outputs = pipes.iter().filter(|p| p.from == i);
            let joined = pipes.iter().any(|p| p.to == i || p.from == i);
            joined
                && inputs.clone().all(|p| p.fill.unwrap_or(0.0) >= FULL)
                && outputs.clone().all(|p| p.fill.unwrap_or(1.0) <= EMPTY)
        })
        .collect();
    Ok(match found[..] {
        [one] => Some(one),
        _ => None,
    })
}

/// The stage the waits' rule names, if one is clearly the least blocked
/// on its pipes; `Err` when some stage's state cannot be read.
fn by_waits(stages: &[StageView]) -> Result<Option<usize>, ()> {
    let live: Vec<usize> = (0..stages.len()).filter(|&i| !stages[i].exited).collect();
    if live.len() < 2 {
        return Ok(live.first().copied());
    }
    if live.iter().any(|&i| !stages[i].visible) {
        return Err(());
    }
    let blocked = |i: usize| stages[i].blocked();
    let mut by: Vec<usize> = live.clone();
    by.sort_by(|&a, &b| blocked(a).total_cmp(&blocked(b)));
    let (best, next) = (by[0], by[1]);
    Ok((blocked(best) <= LEAST_BLOCKED && blocked(next) >= blocked(best) + MARGIN).then_some(best))
}

/// Judges one pipeline's window. `cpus` is how many CPUs its stages may
/// run on.
pub fn judge(stages: &[StageView], pipes: &[PipeView], cpus: usize) -> Verdict {
    if stages.iter().all(|s| s.exited) {
        return Verdict::undecided("the pipeline has ended".to_string());
    }
    let fill = by_fill(stages, pipes);
    let waits = by_waits(stages);
    let (chosen, rules) = match (fill, waits) {
        (Ok(Some(a)), Ok(Some(b))) if a == b => (Some(a), "fill and waits"),
        (Ok(Some(a)), Ok(Some(b))) => {
            return none(
                format!(
                    "no single bottleneck: the pipes' fill points at {} and the waits at {}",
                    stages[a].name, stages[b].name
                ),
                stages,
                cpus,
            );
        }
        (Ok(Some(a)), Err(())) => (Some(a), "fill"),
        (Err(()), Ok(Some(b))) => (Some(b), "waits"),
        // One rule names a stage, the other (readable) none: enough,
        // unless the stages crowd the CPUs, when what one does is what the
        // others leave it.
        (Ok(Some(_)), Ok(None)) | (Ok(None), Ok(Some(_))) if !crowded(stages, cpus).is_empty() => {
            return none(
                "no single bottleneck: only one rule names a stage".to_string(),
                stages,
                cpus,
            );
        }
        (Ok(Some(a)), Ok(None)) => (Some(a), "fill"),
        (Ok(None), Ok(Some(b))) => (Some(b), "waits"),
        (Err(()), Err(())) => {
            return Verdict::undecided(
                "cannot tell: neither the pipes nor the stages' states can be read \
                 (another user's processes: run as root or as their user)"
                    .to_string(),
            );
        }
        _ => (None, "none"),
    };
    let Some(i) = chosen else {
        return none(
            "no single bottleneck: every stage waits on its pipes part of the time".to_string(),
            stages,
            cpus,
        );
    };
    let s = &stages[i];
    let mut parts = Vec::new();
    for p in pipes.iter().filter(|p| p.to == i) {
        if let Some(f) = p.fill {
            parts.push(match f >= FULL {
                true => format!("input pipe full ({:.0}%)", f * 100.0),
                false => format!("input pipe {:.0}% full", f * 100.0),
            });
        }
    }
    for p in pipes.iter().filter(|p| p.from == i) {
        if let Some(f) = p.fill {
            parts.push(match f <= EMPTY {
                true => format!("output pipe empty ({:.0}%)", f * 100.0),
                false => format!("output pipe {:.0}% full", f * 100.0),
            });
        }
    }
    parts.push(format!("{:.0}% CPU", s.cpu * 100.0));
    let blocked = s.blocked();
    if blocked < 0.995 {
        parts.push(format!("blocked on its pipes {:.0}%", blocked * 100.0));
    }
    let why = format!(
        "{} (PID {}): {}{}{}",
        s.name,
        s.pid,
        parts.join(", "),
        kind(s),
        crowded(stages, cpus)
    );
    let mut advice = Vec::new();
    // GNU cat and tee, and a pv that does not splice (pv 1.12 does).
    let tool = ["cat", "pv", "tee"].contains(&s.name.as_str());
    if tool && s.copies {
        advice.push(format!(
            "{0} copies through user space: pipespeed {0} splices (a symlink named {0} is a \
             drop-in)",
            s.name
        ));
    } else if stages.len() > 1 {
        advice.push(format!(
            "the pipes are not the bottleneck: {} is; a faster pipe would not help",
            s.name
        ));
    }
    Verdict {
        bottleneck: Some(s.pid),
        stage: Some(s.name.clone()),
        why,
        rules: rules.to_string(),
        advice,
    }
}

/// Why the stage is slow, from what it did with its time: on a CPU or
/// waiting for one is CPU-bound (other processes take part of its CPU).
fn kind(s: &StageView) -> String {
    if s.cpu + s.runq >= CPU_BOUND {
        if s.runq >= 0.2 {
            format!(
                ": CPU-bound, and waiting for a CPU {:.0}% of the time (other processes share it)",
                s.runq * 100.0
            )
        } else {
            ": CPU-bound".to_string()
        }
    } else if s.work < 0.5 && s.cpu < 0.2 {
        ": sleeping outside its pipes (a rate limit, a disk, the network)".to_string()
    } else {
        String::new()
    }
}

/// What the stages together ask of the CPUs, when it is more than the
/// CPUs give: then each stage's figures are also the others'.
fn crowded(stages: &[StageView], cpus: usize) -> String {
    let live = stages.iter().filter(|s| !s.exited);
    let wanted: f64 = live.clone().map(|s| s.cpu + s.runq).sum();
    let waited: f64 = live.map(|s| s.runq).sum();
    if wanted >= 0.9 * cpus as f64 && waited >= 0.1 {
        format!("; the stages together want {wanted:.1} of {cpus} CPUs")
    } else {
        String::new()
    }
}

fn none(why: String, stages: &[StageView], cpus: usize) -> Verdict {
    let busy = stages
        .iter()
        .filter(|s| !s.exited && s.cpu + s.runq >= 0.5)
        .count();
    let waiting = stages.iter().any(|s| s.runq >= 0.1);
    let crowd = crowded(stages, cpus);
    Verdict::undecided(if busy > cpus && waiting {
        format!("{why}; {busy} busy stages compete for {cpus} CPUs (they wait for a CPU)")
    } else if !crowd.is_empty() {
        format!("{why}{crowd}")
    } else {
        why
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(name: &str, cpu: f64, input: f64, output: f64) -> StageView {
        StageView {
            name: name.to_string(),
            pid: name.len() as u32,
            cpu,
            runq: 0.0,
            work: cpu,
            input_wait: input,
            output_wait: output,
            visible: true,
            copies: true,
            exited: false,
        }
    }

    fn pipes(fills: &[f64]) -> Vec<PipeView> {
        fills
            .iter()
            .enumerate()
            .map(|(i, f)| PipeView {
                from: i,
                to: i + 1,
                fill: Some(*f),
            })
            .collect()
    }

    #[test]
    fn a_cpu_bound_middle_stage_is_named_by_both_rules() {
        let stages = [
            stage("yes", 0.05, 0.0, 0.95),
            stage("gzip", 0.98, 0.0, 0.02),
            stage("wc", 0.01, 0.99, 0.0),
        ];
        let v = judge(&stages, &pipes(&[0.95, 0.01]), 2);
        assert_eq!(v.bottleneck, Some(4));
        assert_eq!(v.rules, "fill and waits");
        assert_eq!(
            v.why,
            "gzip (PID 4): input pipe full (95%), output pipe empty (1%), 98% CPU, \
             blocked on its pipes 2%: CPU-bound"
        );
        assert_eq!(
            v.advice,
            ["the pipes are not the bottleneck: gzip is; a faster pipe would not help"]
        );
    }

    #[test]
    fn a_rate_limited_stage_at_no_cpu_is_named_and_called_sleeping() {
        let mut pv = stage("pv", 0.01, 0.0, 0.0);
        pv.work = 0.01;
        let stages = [
            stage("yes", 0.01, 0.0, 0.99),
            pv,
            stage("cat", 0.0, 0.99, 0.0),
        ];
        let v = judge(&stages, &pipes(&[1.0, 0.0]), 2);
        assert_eq!(v.stage.as_deref(), Some("pv"));
        assert!(
            v.why
                .ends_with(": sleeping outside its pipes (a rate limit, a disk, the network)"),
            "{}",
            v.why
        );
        assert_eq!(
            v.advice,
            [
                "pv copies through user space: pipespeed pv splices (a symlink named pv is a drop-in)"
            ]
        );
    }

    #[test]
    fn a_tee_that_copies_is_sent_to_pipespeed_tee() {
        let stages = [
            stage("yes", 0.1, 0.0, 0.9),
            stage("tee", 1.0, 0.0, 0.0),
            stage("wc", 0.1, 0.9, 0.0),
        ];
        let v = judge(&stages, &pipes(&[1.0, 0.0]), 2);
        assert_eq!(v.stage.as_deref(), Some("tee"));
        assert_eq!(
            v.advice,
            [
                "tee copies through user space: pipespeed tee splices (a symlink named tee is a drop-in)"
            ]
        );
    }

    #[test]
    fn the_reader_and_the_writer_at_the_ends_can_be_named() {
        let stages = [stage("yes", 0.1, 0.0, 0.9), stage("slow", 1.0, 0.0, 0.0)];
        assert_eq!(
            judge(&stages, &pipes(&[0.9]), 2).stage.as_deref(),
            Some("slow")
        );
        let stages = [stage("slow", 1.0, 0.0, 0.0), stage("wc", 0.1, 0.9, 0.0)];
        assert_eq!(
            judge(&stages, &pipes(&[0.0]), 2).stage.as_deref(),
            Some("slow")
        );
    }

    #[test]
    fn a_writer_woken_often_but_seldom_on_a_cpu_counts_as_blocked() {
        // head | sha256sum: head runnable at 59% of the probes, blocked
        // writing at 17%, on a CPU 12% of the time.
        let mut head = stage("head", 0.12, 0.0, 0.17);
        head.work = 0.59;
        head.runq = 0.05;
        assert!((head.blocked() - 0.59).abs() < 1e-9, "{}", head.blocked());
        let sha = stage("sha256sum", 0.97, 0.02, 0.0);
        let v = judge(&[head, sha], &pipes(&[0.3]), 2);
        assert_eq!(
            (v.stage.as_deref(), v.rules.as_str()),
            (Some("sha256sum"), "waits")
        );
    }

    #[test]
    fn a_balanced_pipeline_has_no_single_bottleneck() {
        let stages = [
            stage("a", 0.6, 0.0, 0.4),
            stage("b", 0.6, 0.2, 0.2),
            stage("c", 0.6, 0.4, 0.0),
        ];
        let v = judge(&stages, &pipes(&[0.4, 0.3]), 4);
        assert_eq!(v.bottleneck, None);
        assert_eq!(
            v.why,
            "no single bottleneck: every stage waits on its pipes part of the time"
        );
    }

    #[test]
    fn rules_that_disagree_give_no_single_bottleneck_and_say_so() {
        let stages = [
            stage("a", 0.9, 0.0, 0.0),
            stage("b", 0.9, 0.9, 0.0),
            stage("c", 0.1, 0.9, 0.0),
        ];
        // The fill points at b (input full, output empty), the waits at a.
        let v = judge(&stages, &pipes(&[0.9, 0.05]), 2);
        assert_eq!(v.bottleneck, None);
        assert!(
            v.why.contains("fill points at b and the waits at a"),
            "{}",
            v.why
        );
    }

    #[test]
    fn more_busy_stages_than_cpus_is_said() {
        let mut stages = [
            stage("a", 0.7, 0.2, 0.2),
            stage("b", 0.7, 0.2, 0.2),
            stage("c", 0.7, 0.2, 0.2),
        ];
        stages[1].runq = 0.3;
        let v = judge(&stages, &pipes(&[0.3, 0.3]), 2);
        assert!(
            v.why
                .ends_with("3 busy stages compete for 2 CPUs (they wait for a CPU)"),
            "{}",
            v.why
        );
    }

    #[test]
    fn one_rule_alone_does_not_name_a_stage_among_stages_crowding_the_cpus() {
        let mut stages = [
            stage("write", 0.8, 0.0, 0.1),
            stage("cat", 0.3, 0.5, 0.3),
            stage("read", 0.7, 0.4, 0.0),
        ];
        for s in &mut stages {
            s.runq = 0.1;
        }
        // The waits name write; the fill (output 45% full) names nobody.
        let v = judge(&stages, &pipes(&[0.45, 0.45]), 2);
        assert_eq!(v.bottleneck, None);
        assert_eq!(
            v.why,
            "no single bottleneck: only one rule names a stage; the stages together want 2.1 \
             of 2 CPUs"
        );
        // With a CPU to spare, the waits alone name it.
        let v = judge(&stages, &pipes(&[0.45, 0.45]), 4);
        assert_eq!(
            (v.stage.as_deref(), v.rules.as_str()),
            (Some("write"), "waits")
        );
    }

    #[test]
    fn unreadable_fills_leave_the_waits_to_decide_and_say_so() {
        let stages = [stage("yes", 0.1, 0.0, 0.9), stage("slow", 1.0, 0.0, 0.0)];
        let mut p = pipes(&[0.9]);
        p[0].fill = None;
        let v = judge(&stages, &p, 2);
        assert_eq!(
            (v.stage.as_deref(), v.rules.as_str()),
            (Some("slow"), "waits")
        );
        let mut hidden = stages.clone();
        hidden[0].visible = false;
        let v = judge(&hidden, &p, 2);
        assert_eq!(v.bottleneck, None);
        assert!(v.why.starts_with("cannot tell"), "{}", v.why);
    }
}
