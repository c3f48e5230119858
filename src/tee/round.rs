//! A round of `tee(2)` and `splice(2)`, as the module documentation of
//! [`crate::tee`] tells it.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::mpsc;

use super::fan::{Fan, PARALLEL_MIN, ROUND_MAX, Step};
use super::out::{Out, Route, read_exact, refuses_splice, splice_all, tee_once};
use super::{OnFailure, OutputIndex};
use crate::copy::SHOWN_LARGE;
use crate::sys::{SpliceFlags, splice};
use crate::wait::{Direction, wait_ready};

impl<'a, F: FnMut(OutputIndex, io::Error) -> OnFailure> Fan<'a, F> {
    /// A round of tee and splice (see the module documentation).
    pub(super) fn round(&mut self) -> io::Result<Step> {
        if !self.sized && self.max > 0 && self.bytes >= SHOWN_LARGE {
            self.sized = true;
            if self.goal == 0 {
                self.size_pipes(u64::MAX);
            }
        }
        let src = match self.source()? {
            Ok(src) => src,
            Err(step) => return Ok(step),
        };
        let alive = |o: &Out<'_>| o.alive;
        let writers: Vec<usize> = self.pick(|o| alive(o) && o.route == Route::Write);
        // The output the round's bytes are spliced into, out of the input
        // pipe: one that would need a pipe of its own otherwise.
        let mover = if writers.is_empty() {
            let splice = self.pick(|o| alive(o) && o.route == Route::Splice);
            let pipes = self.pick(|o| alive(o) && o.route == Route::Pipe);
            splice.last().or(pipes.last()).copied()
        } else {
            None
        };
        // Outputs that are pipes first: the first tee's length is the
        // round's, and it may fall short at a full output pipe.
        let mut teed = self.pick(|o| alive(o) && o.route == Route::Pipe);
        teed.extend(self.pick(|o| alive(o) && o.route == Route::Splice));
        teed.retain(|&i| Some(i) != mover);
        let mut limit = ROUND_MAX.min(self.held);
        for &i in &teed {
            if self.outs[i].route == Route::Splice {
                let (goal, max) = (self.goal, self.max);
                match self.outs[i].mid(goal, max) {
                    Ok(_) => limit = limit.min(self.outs[i].mid_size),
                    // No pipe to be had (descriptors or the pipe budget
                    // spent): written from memory, as GNU's tee writes.
                    Err(_) => {
                        self.outs[i].route = Route::Write;
                        return Ok(Step::Again);
                    }
                }
            }
        }
        let Some((&first, others)) = teed.split_first() else {
            return self.single(src, mover, limit);
        };
        let n = match self.tee_to(first, src, limit) {
            // (tee's own pipe holds bytes: 0 is an output that turned to
            // writes; the round starts again with it among the writers.)
            Some(0) => return Ok(Step::Again),
            Some(n) => n,
            None => return Ok(Step::Again),
        };
        // Outputs that got less than the round: how much.
        let mut short = Vec::new();
        for &i in others {
            match self.tee_to(i, src, n) {
                Some(k) if k < n => short.push((i, k)),
                // All of it; or it failed, and the round goes on without
                // it (the failure is told at the end of the round).
                Some(_) | None => {}
            }
        }
        match mover {
            Some(m) if short.is_empty() => self.move_and_drain(src, m, n, &teed)?,
            _ => {
                self.short_rounds = self
                    .short_rounds
                    .saturating_add(u64::from(!short.is_empty()));
                read_exact(src, self.buf(n))?;
                // (An output in `short` may have turned to writes in this
                // round: it gets its rest below, once.)
                self.write_out(
                    |i, o| o.route == Route::Write && !short.iter().any(|&(j, _)| j == i),
                    0,
                    n,
                );
                if let Some(m) = mover {
                    self.write_out_one(m, 0, n);
                }
                for (i, k) in short {
                    // What its own pipe holds first, then the rest.
                    self.drain(&[i]);
                    self.write_out_one(i, k, n);
                }
                self.drain(&teed);
            }
        }
        self.took(n);
        Ok(Step::Again)
    }

    /// The indexes of the outputs `which` picks, in order.
    pub(super) fn pick(&self, which: impl Fn(&Out<'_>) -> bool) -> Vec<usize> {
        (0..self.outs.len())
            .filter(|&i| which(&self.outs[i]))
            .collect()
    }

    /// `n` bytes left the input.
    pub(super) fn took(&mut self, n: usize) {
        self.bytes = self.bytes.saturating_add(n as u64);
        self.held = self.held.saturating_sub(n);
    }

    /// Writes `self.buf[from..to]` to output `i`, if it is still there.
    pub(super) fn write_out_one(&mut self, i: usize, from: usize, to: usize) {
        self.write_out(|j, _| j == i, from, to);
    }

    /// A round with one output to splice into, or only outputs to write.
    pub(super) fn single(
        &mut self,
        src: BorrowedFd<'_>,
        mover: Option<usize>,
        limit: usize,
    ) -> io::Result<Step> {
        let Some(m) = mover else {
            return self.read_out(src, limit);
        };
        loop {
            match splice(
                src,
                None,
                self.outs[m].fd,
                None,
                limit,
                SpliceFlags::empty(),
            ) {
                // (Not the input's end: tee's own pipe holds bytes. The
                // output took nothing.)
                Ok(0) => {
                    self.fail(m, io::ErrorKind::WriteZero.into());
                    return Ok(Step::Again);
                }
                Ok(n) => {
                    self.took(n);
                    return Ok(Step::Again);
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    wait_ready(src, Direction::In)?;
                    wait_ready(self.outs[m].fd, Direction::Out)?;
                }
                Err(err) if refuses_splice(&err) => {
                    self.outs[m].route = Route::Write;
                    return Ok(Step::Again);
                }
                Err(err) => {
                    self.fail(m, err);
                    return Ok(Step::Again);
                }
            }
        }
    }

    /// `tee(2)` of up to `len` bytes of the input into output `i` (a
    /// pipe) or its own pipe: how many, or `None` if it failed.
    pub(super) fn tee_to(&mut self, i: usize, src: BorrowedFd<'_>, len: usize) -> Option<usize> {
        let (goal, max) = (self.goal, self.max);
        let out = &mut self.outs[i];
        let to = match out.route {
            Route::Pipe => out.fd,
            _ => match out.mid(goal, max) {
                Ok(mid) => mid.write.as_fd(),
                // No pipe to be had: written from memory, all the round.
                Err(_) => {
                    out.route = Route::Write;
                    return Some(0);
                }
            },
        };
        match tee_once(src, to, len) {
            Ok(n) => {
                if out.route != Route::Pipe {
                    // (At most what the pipe holds.)
                    out.pending = out.pending.saturating_add(n);
                }
                Some(n)
            }
            Err(err) if out.route == Route::Pipe && refuses_splice(&err) => {
                // A pipe that refuses tee(2): through a pipe of its own,
                // then.
                out.route = Route::Splice;
                self.tee_to(i, src, len)
            }
            Err(err) => {
                self.fail(i, err);
                None
            }
        }
    }

    /// Empties the own pipes of the outputs among `which` into them.
    fn drain(&mut self, which: &[usize]) {
        for &i in which {
            if self.outs[i].alive
                && let Err(err) = self.outs[i].drain()
            {
                self.fail(i, err);
            }
        }
    }

    /// Splices the round's `n` bytes out of the input into output `m`,
    /// and empties the own pipes of the outputs among `teed` into them:
    /// side by side when two or more of these are copies (files) and
    /// more than one CPU may run them, each output in a thread of its
    /// own. What `m` does not take (it failed) is read and dropped, as
    /// every other output has it; what it refuses to take by splice is
    /// written.
    fn move_and_drain(
        &mut self,
        src: BorrowedFd<'_>,
        m: usize,
        n: usize,
        teed: &[usize],
    ) -> io::Result<()> {
        let to = self.outs[m].fd;
        let draining: Vec<usize> = teed
            .iter()
            .copied()
            .filter(|&i| self.outs[i].alive && self.outs[i].pending > 0)
            .collect();
        let copies = draining.len() + usize::from(self.outs[m].route == Route::Splice);
        let moved = if !self.workers.is_empty() && copies >= 2 && n >= PARALLEL_MIN {
            self.parallel_rounds = self.parallel_rounds.saturating_add(1);
            // Each own pipe to a worker while there is one, the rest
            // emptied here once the round is spliced.
            let (mut sent, mut here) = (Vec::new(), Vec::new());
            for (k, &i) in draining.iter().enumerate() {
                let Some(job) = self.outs[i].take_drain() else {
                    continue;
                };
                let job = match self.workers.get(k) {
                    Some(worker) => match worker.jobs.send(job) {
                        Ok(()) => {
                            sent.push((k, i));
                            continue;
                        }
                        Err(mpsc::SendError(job)) => job,
                    },
                    None => job,
                };
                self.outs[i].put_back(job);
                here.push(i);
            }
            let moved = splice_all(src, to, n);
            self.drain(&here);
            for (k, i) in sent {
                match self.workers[k].done.recv() {
                    Ok((job, result)) => {
                        self.outs[i].put_back(job);
                        if let Err(err) = result {
                            self.fail(i, err);
                        }
                    }
                    // (Its pipe went with it: the output is failed rather
                    // than left half written without a word.)
                    Err(_) => self.fail(i, io::Error::other("a thread of tee ended")),
                }
            }
            moved
        } else {
            let moved = splice_all(src, to, n);
            self.drain(&draining);
            moved
        };
        if let Err((err, left)) = moved {
            read_exact(src, self.buf(left))?;
            if refuses_splice(&err) {
                self.outs[m].route = Route::Write;
                self.write_out_one(m, 0, left);
            } else {
                self.fail(m, err);
            }
        }
        Ok(())
    }
}
