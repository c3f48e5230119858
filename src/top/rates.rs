//! Each stage's bytes in and out over a window, where `/proc/PID/io`
//! counts them, and estimated where it does not.
//!
//! `rchar`/`wchar` do not count splice or vmsplice: a stage that splices
//! gets its rate from its neighbours across the pipe they share (what its
//! reader took out plus what the pipe gained) or from a regular file's
//! `pos:` in fdinfo, and a splicing stage passes through what it takes
//! in. Estimated figures are marked.

use serde::Serialize;

/// A rate in bytes per second, and whether it was estimated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// Worked out from the neighbours, not counted (the stage splices).
    pub estimated: bool,
}

/// What one stage counted over the window, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Counted {
    /// `rchar` and `wchar`'s change; `None` when `io` cannot be read.
    pub read: Option<u64>,
    pub written: Option<u64>,
    /// How far its regular files' positions moved: those it reads and
    /// those it writes.
    pub file_in: u64,
    pub file_out: u64,
}

impl Counted {
    /// Both counters readable and still: a splicer (a pass-through whose
    /// in is its out), or a stage that moved nothing; either way its rate
    /// is the neighbours' estimate, or unknown, never a counted zero.
    fn splices(&self) -> bool {
        self.read == Some(0) && self.written == Some(0)
    }
}

/// A pipe between stage `from` and stage `to`, and how many bytes more it
/// held at the window's end than at its start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Flow {
    pub from: usize,
    pub to: usize,
    pub gained: Option<i64>,
}

/// Less than a page counted across a pipe whose other end counted
/// nothing (a splicer on each side) is a start-up read of a small file,
/// such as `/proc/sys/fs/pipe-max-size`, not a rate.
const START_UP: u64 = 4096;

/// A splicer's counters move a little (its start-up reads a few files;
/// pv 1.6 under -L reads and writes a few percent of its bytes): a count
/// under half of what its neighbour counted across their pipe (a pipe
/// holds a MiB at most, nothing like the difference) is taken for none,
/// so the stage is estimated, not shown at a fraction of its rate.
pub(crate) fn drop_start_up(stages: &mut [Counted], flows: &[Flow]) {
    for f in flows {
        let (Some(w), Some(r)) = (stages[f.from].written, stages[f.to].read) else {
            continue;
        };
        if w > 0 && w.saturating_mul(2) < r {
            stages[f.from].written = Some(0);
        } else if r > 0 && r.saturating_mul(2) < w {
            stages[f.to].read = Some(0);
        } else if w == 0 && r > 0 && r < START_UP {
            // Both splice, and the reader's start-up read a file or two.
            stages[f.to].read = Some(0);
        } else if r == 0 && w > 0 && w < START_UP {
            stages[f.from].written = Some(0);
        }
    }
}

/// A stage's bytes over a window, and whether they were estimated.
pub(crate) type Bytes = Option<(f64, bool)>;

/// Each stage's (in, out) in bytes over the window, `None` where neither
/// its counters nor its neighbours can say.
pub(crate) fn estimate(stages: &[Counted], flows: &[Flow]) -> Vec<(Bytes, Bytes)> {
    let known = |n: Option<u64>, file: u64| match n {
        Some(0) if file > 0 => Some((file as f64, false)),
        Some(0) | None => None,
        Some(n) => Some((n as f64, false)),
    };
    let mut rates: Vec<_> = stages
        .iter()
        .map(|c| (known(c.read, c.file_in), known(c.written, c.file_out)))
        .collect();
    let single_out = |i: usize| flows.iter().filter(|f| f.from == i).count() == 1;
    let single_in = |i: usize| flows.iter().filter(|f| f.to == i).count() == 1;
    for _ in 0..=2 * stages.len() {
        let mut changed = false;
        for f in flows {
            let Some(gained) = f.gained else { continue };
            let gained = gained as f64;
            if !(single_out(f.from) && single_in(f.to)) {
                continue;
            }
            match (rates[f.from].1, rates[f.to].0) {
                (Some((out, _)), None) => {
                    rates[f.to].0 = Some(((out - gained).max(0.0), true));
                    changed = true;
                }
                (None, Some((inp, _))) => {
                    rates[f.from].1 = Some(((inp + gained).max(0.0), true));
                    changed = true;
                }
                _ => {}
            }
        }
        for (r, c) in rates.iter_mut().zip(stages) {
            if !c.splices() {
                continue;
            }
            match *r {
                (Some((v, _)), None) => {
                    r.1 = Some((v, true));
                    changed = true;
                }
                (None, Some((v, _))) => {
                    r.0 = Some((v, true));
                    changed = true;
                }
                _ => {}
            }
        }
        if !changed {
            break;
        }
    }
    // Counters that were readable and did not move, with nothing to say
    // otherwise: nothing went through.
    for (r, c) in rates.iter_mut().zip(stages) {
        if r.0.is_none() && c.read.is_some() && c.file_in == 0 && !c.splices() {
            r.0 = Some((0.0, false));
        }
        if r.1.is_none() && c.written.is_some() && c.file_out == 0 && !c.splices() {
            r.1 = Some((0.0, false));
        }
    }
    rates
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(read: u64, written: u64) -> Counted {
        Counted {
            read: Some(read),
            written: Some(written),
            ..Counted::default()
        }
    }

    fn chain(gained: &[i64]) -> Vec<Flow> {
        gained
            .iter()
            .enumerate()
            .map(|(i, g)| Flow {
                from: i,
                to: i + 1,
                gained: Some(*g),
            })
            .collect()
    }

    #[test]
    fn a_splicer_s_start_up_reads_are_not_its_rate() {
        // pv read 4 KiB of its start-up files and spliced the rest.
        let mut stages = [rw(0, 10 << 20), rw(4096, 0), rw(10 << 20, 0)];
        drop_start_up(&mut stages, &chain(&[0, 0]));
        assert_eq!(stages[1], rw(0, 0));
        let r = estimate(&stages, &chain(&[0, 0]));
        assert_eq!(r[1].0, Some(((10 << 20) as f64, true)));
        // A stage that copies as much as its neighbours keeps its counts.
        let mut stages = [rw(0, 1000), rw(1000, 990), rw(990, 0)];
        drop_start_up(&mut stages, &chain(&[0, 0]));
        assert_eq!(stages[1], rw(1000, 990));
        // pv 1.6 under -L: a few percent through read and write.
        let mut stages = [rw(0, 47 << 20), rw(1 << 20, 1 << 20), rw(47 << 20, 0)];
        drop_start_up(&mut stages, &chain(&[0, 0]));
        assert_eq!(stages[1], rw(0, 0));
    }

    /// `pv -q -L 3M | pipespeed cat`: both splice, and cat's one read of
    /// /proc/sys/fs/pipe-max-size (8 bytes) fell in the window (CI, under
    /// load): less than a page read from a splicer is start-up, not a rate.
    #[test]
    fn a_few_bytes_read_from_a_splicer_are_start_up_too() {
        let mut stages = [rw(0, 3 << 20), rw(0, 0), rw(8, 0), rw(3 << 20, 0)];
        drop_start_up(&mut stages, &chain(&[0, 0, 0]));
        assert_eq!(stages[2], rw(0, 0));
        let r = estimate(&stages, &chain(&[0, 0, 0]));
        assert_eq!(r[2].0, Some(((3 << 20) as f64, true)));
        // A page or more is a count.
        let mut stages = [rw(0, 0), rw(8192, 0)];
        drop_start_up(&mut stages, &chain(&[0]));
        assert_eq!(stages[1], rw(8192, 0));
    }

    #[test]
    fn counted_stages_are_taken_as_they_counted() {
        let r = estimate(&[rw(10, 100), rw(100, 5)], &chain(&[0]));
        assert_eq!(r[0], (Some((10.0, false)), Some((100.0, false))));
        assert_eq!(r[1], (Some((100.0, false)), Some((5.0, false))));
    }

    #[test]
    fn a_splicing_middle_stage_gets_its_neighbours_figures_marked() {
        // yes wrote 1000; the pipe after it gained 200; cat (splicing)
        // counted nothing; wc read 700; the pipe before wc gained 100.
        let r = estimate(&[rw(0, 1000), rw(0, 0), rw(700, 0)], &chain(&[200, 100]));
        assert_eq!(r[1], (Some((800.0, true)), Some((800.0, true))));
        // The pass-through's out reaches its reader less what the pipe
        // gained; the reader's own count stays.
        assert_eq!(r[2].0, Some((700.0, false)));
    }

    #[test]
    fn two_splicers_in_a_row_are_estimated_through_each_other() {
        let r = estimate(
            &[rw(0, 1000), rw(0, 0), rw(0, 0), rw(1000, 0)],
            &chain(&[0, 0, 0]),
        );
        for stage in &r[1..3] {
            assert_eq!(*stage, (Some((1000.0, true)), Some((1000.0, true))));
        }
    }

    #[test]
    fn a_splicer_reading_a_file_is_measured_by_its_position() {
        let first = Counted {
            file_in: 4096,
            ..rw(0, 0)
        };
        let r = estimate(&[first, rw(4096, 0)], &chain(&[0]));
        assert_eq!(r[0], (Some((4096.0, false)), Some((4096.0, true))));
    }

    #[test]
    fn what_cannot_be_read_or_worked_out_is_unknown_and_a_quiet_stage_is_zero() {
        let hidden = Counted::default();
        let r = estimate(&[hidden, rw(0, 0)], &chain(&[0]));
        assert_eq!(r[0], (None, None));
        assert_eq!(r[1], (None, None), "a lone splicer is unknown, not 0");
        let r = estimate(&[rw(0, 0), rw(0, 5)], &[]);
        assert_eq!(r[1], (Some((0.0, false)), Some((5.0, false))));
    }
}
