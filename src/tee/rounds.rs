//! The rounds of a fan-out, as the module documentation of
//! [`crate::tee`] tells them.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::event::{PollFd, PollFlags, poll};
use rustix::io::Errno;

use super::out::{Out, Route, read_exact, refuses_splice, splice_once, tee_once};
use super::{Ended, Method, OnFailure, OutputIndex, ReadError, TeeOptions, Teed};
use crate::copy::{SHOWN_LARGE, SMALL_FILE, bytes_ahead, grow_pipe};
use crate::sys::socket::keeps_records;
use crate::sys::{FdKind, SpliceFlags, fcntl_getpipe_size, fd_info, splice};
use crate::wait::{Direction, wait_ready, write_all};

/// Bytes read at a time when reading into memory (GNU tee reads 8 KiB at
/// a time; larger reads take what is there as well, in fewer calls).
const CHUNK: usize = 128 * 1024;

/// The most one round takes: what a round read into memory (a short
/// `tee`) may need, whatever `pipe-max-size` allows.
const ROUND_MAX: usize = 4 * 1024 * 1024;

/// Copies everything `input` gives to every one of `outputs`, until the
/// input ends, every output has failed, or `on_failure` says stop; see
/// the [module documentation](crate::tee).
///
/// `on_failure(i, err)` is called once for each output that fails, with
/// its position in `outputs` and the error; the output is not written to
/// again. The outputs still there have every byte taken from the input
/// when this returns, also with a [`ReadError`].
///
/// ```
/// use std::io::{Read, Write};
/// use std::os::fd::AsFd;
/// use pipespeed::sys::pipe;
/// use pipespeed::tee::{Ended, TeeOptions, fan_out};
///
/// let input = pipe()?;
/// std::fs::File::from(input.write).write_all(b"to both")?;
/// let a = pipe()?;
/// let b = tempfile::tempfile()?;
/// let teed = fan_out(
///     input.read.as_fd(),
///     &[a.write.as_fd(), b.as_fd()],
///     TeeOptions::default(),
///     |_, err| panic!("{err}"),
/// )?;
/// assert_eq!((teed.bytes, teed.ended), (7, Ended::Input));
/// drop(a.write);
/// let mut got = String::new();
/// std::fs::File::from(a.read).read_to_string(&mut got)?;
/// assert_eq!(got, "to both");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fan_out<'a>(
    input: BorrowedFd<'a>,
    outputs: &[BorrowedFd<'a>],
    options: TeeOptions,
    on_failure: impl FnMut(OutputIndex, io::Error) -> OnFailure,
) -> Result<Teed, ReadError> {
    let splice_ok = !options.read_write;
    let info = fd_info(input).ok();
    let ahead = info.as_ref().and_then(|info| bytes_ahead(input, info));
    let splice_in = splice_ok
        && info.is_some_and(|info| match info.kind {
            FdKind::Pipe | FdKind::CharDevice | FdKind::BlockDevice => true,
            FdKind::Regular => {
                options.page_references && ahead.is_some_and(|ahead| ahead > SMALL_FILE)
            }
            FdKind::Socket => !keeps_records(input),
            _ => false,
        });
    let input_is_pipe = info.is_some_and(|info| info.kind == FdKind::Pipe);
    let fill = match splice_in && !input_is_pipe {
        true => Some(crate::sys::pipe().map_err(|error| ReadError { error, bytes: 0 })?),
        false => None,
    };
    let mut fan = Fan {
        input,
        input_is_pipe,
        outs: outputs.iter().map(|&fd| Out::new(fd, splice_ok)).collect(),
        on_failure,
        options,
        fill: fill.as_ref().map(|p| (p.read.as_fd(), p.write.as_fd())),
        fill_size: match &fill {
            Some(p) => fcntl_getpipe_size(&p.write).map_err(|error| ReadError { error, bytes: 0 })?,
            None => 0,
        },
        held: 0,
        filled: false,
        buf: Vec::new(),
        scratch: vec![0; CHUNK],
        bytes: 0,
        goal: 0,
        max: 0,
        sized: false,
        stopped: false,
    };
    let mut method = if splice_in && fan.outs.iter().any(|o| o.route != Route::Write) {
        Method::Splice
    } else {
        Method::ReadWrite
    };
    if method == Method::Splice && options.grow_pipes {
        fan.max = crate::sys::pipe_max_size().unwrap_or(0);
        if let Some(ahead) = ahead {
            fan.size_pipes(ahead);
        }
    }
    loop {
        if fan.stopped {
            return Ok(fan.teed(Ended::Stopped, method));
        }
        if !fan.outs.iter().any(|o| o.alive) {
            return Ok(fan.teed(Ended::NoOutputs, method));
        }
        let step = match method {
            Method::Splice => fan.round(),
            Method::ReadWrite => fan.copy_round(),
        };
        match step {
            Ok(Step::Again) => {}
            Ok(Step::End) => return Ok(fan.teed(Ended::Input, method)),
            Ok(Step::ReadWrite) => method = Method::ReadWrite,
            Err(error) => {
                return Err(ReadError {
                    error,
                    bytes: fan.bytes,
                });
            }
        }
    }
}

/// What a round leaves to do.
enum Step {
    /// Go on.
    Again,
    /// The input ended.
    End,
    /// The input refused its first splice: read it from now on.
    ReadWrite,
}

/// A fan-out under way.
struct Fan<'a, F> {
    input: BorrowedFd<'a>,
    input_is_pipe: bool,
    outs: Vec<Out<'a>>,
    on_failure: F,
    options: TeeOptions,
    /// The pipe an input that is not one is spliced into (read and write
    /// ends), its size, and what it holds.
    fill: Option<(BorrowedFd<'a>, BorrowedFd<'a>)>,
    fill_size: usize,
    held: usize,
    /// Whether a splice into `fill` has succeeded once.
    filled: bool,
    /// A round's bytes, when they are read into memory.
    buf: Vec<u8>,
    /// What an output's own pipe is copied through, once it refuses
    /// splice.
    scratch: Vec<u8>,
    /// Bytes taken from the input.
    bytes: u64,
    /// What the pipes should hold (0: as made), and `pipe-max-size` (0:
    /// unknown, or pipes left alone).
    goal: u64,
    max: usize,
    /// Whether the pipes were sized for the whole copy.
    sized: bool,
    stopped: bool,
}

impl<'a, F: FnMut(OutputIndex, io::Error) -> OnFailure> Fan<'a, F> {
    fn teed(&self, ended: Ended, method: Method) -> Teed {
        Teed {
            bytes: self.bytes,
            ended,
            method,
        }
    }

    /// Output `i` failed with `err`: it is written to no more.
    fn fail(&mut self, i: usize, err: io::Error) {
        self.outs[i].close();
        if (self.on_failure)(i, err) == OnFailure::Stop {
            self.stopped = true;
        }
    }

    /// `self.buf`, at least `len` bytes long.
    fn buf(&mut self, len: usize) -> &mut [u8] {
        if self.buf.len() < len {
            self.buf.resize(len, 0);
        }
        &mut self.buf[..len]
    }

    /// Waits until the input is ready, failing (as `EPIPE`) each output
    /// pipe found without a reader meanwhile (gnulib's `iopoll`).
    fn watch(&mut self) -> io::Result<()> {
        let pipes: Vec<usize> = (0..self.outs.len())
            .filter(|&i| self.outs[i].alive && self.outs[i].is_pipe)
            .collect();
        let fds: Vec<BorrowedFd<'a>> = pipes.iter().map(|&i| self.outs[i].fd).collect();
        let input = self.input;
        let broken: Vec<usize> = loop {
            let mut polled = vec![PollFd::new(&input, PollFlags::IN)];
            polled.extend(fds.iter().map(|fd| PollFd::new(fd, PollFlags::empty())));
            match poll(&mut polled, None) {
                Ok(_) => {}
                Err(Errno::INTR) => continue,
                Err(errno) => return Err(errno.into()),
            }
            if !polled[0].revents().is_empty() {
                return Ok(());
            }
            let gone = PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL;
            let broken: Vec<usize> = pipes
                .iter()
                .zip(&polled[1..])
                .filter(|(_, fd)| fd.revents().intersects(gone))
                .map(|(&i, _)| i)
                .collect();
            if !broken.is_empty() {
                break broken;
            }
        };
        for i in broken {
            self.fail(i, Errno::PIPE.into());
        }
        Ok(())
    }

    /// A round of read/write: a chunk read, written to every output.
    fn copy_round(&mut self) -> io::Result<Step> {
        if self.options.watch_pipes {
            self.watch()?;
            if self.stopped {
                return Ok(Step::Again);
            }
        }
        let input = self.input;
        let n = crate::wait::read(input, self.buf(CHUNK))?;
        if n == 0 {
            return Ok(Step::End);
        }
        self.bytes += n as u64;
        self.write_out(|_, _| true, 0, n);
        Ok(Step::Again)
    }

    /// Writes `self.buf[from..to]` to every output still there that
    /// `which` picks (by index), failing each that cannot take it.
    fn write_out(&mut self, which: impl Fn(usize, &Out<'_>) -> bool, from: usize, to: usize) {
        for i in 0..self.outs.len() {
            if self.outs[i].alive && which(i, &self.outs[i]) && !self.stopped {
                let fd = self.outs[i].fd;
                if let Err(err) = write_all(fd, &self.buf[from..to], |_| {}) {
                    self.fail(i, err);
                }
            }
        }
    }

    /// The input pipe, holding bytes; `Err(step)` when the round ends
    /// there.
    fn source(&mut self) -> io::Result<Result<BorrowedFd<'a>, Step>> {
        let Some((read, write)) = self.fill else {
            if self.options.watch_pipes {
                let alive = self.outs.iter().filter(|o| o.alive).count();
                self.watch()?;
                if self.outs.iter().filter(|o| o.alive).count() != alive {
                    return Ok(Err(Step::Again));
                }
            }
            return Ok(Ok(self.input));
        };
        if self.held > 0 {
            return Ok(Ok(read));
        }
        if self.options.watch_pipes {
            self.watch()?;
            if self.stopped {
                return Ok(Err(Step::Again));
            }
        }
        match splice(
            self.input,
            None,
            write,
            None,
            self.fill_size,
            SpliceFlags::empty(),
        ) {
            Ok(0) => Ok(Err(Step::End)),
            Ok(n) => {
                self.held = n;
                self.filled = true;
                Ok(Ok(read))
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => Ok(Err(Step::Again)),
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                wait_ready(self.input, Direction::In)?;
                Ok(Err(Step::Again))
            }
            Err(err) if !self.filled && input_refuses(&err) => Ok(Err(Step::ReadWrite)),
            Err(err) => Err(err),
        }
    }

    /// Sizes every pipe of the copy to hold `bytes` (at most
    /// `pipe-max-size`): the input's, the fill pipe, the outputs' own and
    /// the outputs that are pipes.
    fn size_pipes(&mut self, bytes: u64) {
        self.goal = bytes;
        if self.input_is_pipe {
            grow_pipe(self.input, bytes, self.max);
        }
        if let Some((_, write)) = self.fill {
            grow_pipe(write, bytes, self.max);
            self.fill_size = fcntl_getpipe_size(write).unwrap_or(self.fill_size);
        }
        for out in &mut self.outs {
            if out.alive && out.is_pipe {
                grow_pipe(out.fd, bytes, self.max);
            }
            if let Some(mid) = &out.mid {
                grow_pipe(mid.write.as_fd(), bytes, self.max);
                out.mid_size = fcntl_getpipe_size(&mid.write).unwrap_or(out.mid_size);
            }
        }
    }

    /// A round of tee and splice (see the module documentation).
    fn round(&mut self) -> io::Result<Step> {
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
        let mut limit = ROUND_MAX.min(if self.fill.is_some() {
            self.held
        } else {
            ROUND_MAX
        });
        for &i in &teed {
            if self.outs[i].route == Route::Splice {
                let (goal, max) = (self.goal, self.max);
                match self.outs[i].mid(goal, max) {
                    Ok(_) => limit = limit.min(self.outs[i].mid_size),
                    Err(err) => {
                        self.fail(i, err);
                        return Ok(Step::Again);
                    }
                }
            }
        }
        let Some((&first, others)) = teed.split_first() else {
            return self.single(src, mover, limit);
        };
        let n = match self.tee_to(first, src, limit) {
            Some(0) => return Ok(Step::End),
            Some(n) => n,
            None => return Ok(Step::Again),
        };
        // Outputs that got less than the round: how much.
        let mut short = Vec::new();
        for &i in others {
            match self.tee_to(i, src, n) {
                Some(k) if k < n => short.push((i, k)),
                Some(_) => {}
                // Failed: the round goes on without it (or stops).
                None if self.stopped => return Ok(Step::Again),
                None => {}
            }
        }
        if self.stopped {
            return Ok(Step::Again);
        }
        match mover {
            Some(m) if short.is_empty() => self.move_out(src, m, n)?,
            _ => {
                read_exact(src, self.buf(n))?;
                self.write_out(|_, o| o.route == Route::Write, 0, n);
                if let Some(m) = mover {
                    self.write_out_one(m, 0, n);
                }
                for (i, k) in short {
                    // What its own pipe holds first, then the rest.
                    if self.outs[i].alive
                        && let Err(err) = self.outs[i].drain(&mut self.scratch)
                    {
                        self.fail(i, err);
                    }
                    self.write_out_one(i, k, n);
                }
            }
        }
        self.took(n);
        for &i in &teed {
            if self.outs[i].alive
                && let Err(err) = self.outs[i].drain(&mut self.scratch)
            {
                self.fail(i, err);
            }
        }
        Ok(Step::Again)
    }

    /// The indexes of the outputs `which` picks, in order.
    fn pick(&self, which: impl Fn(&Out<'_>) -> bool) -> Vec<usize> {
        (0..self.outs.len()).filter(|&i| which(&self.outs[i])).collect()
    }

    /// `n` bytes left the input.
    fn took(&mut self, n: usize) {
        self.bytes += n as u64;
        self.held = self.held.saturating_sub(n);
    }

    /// Writes `self.buf[from..to]` to output `i`, if it is still there.
    fn write_out_one(&mut self, i: usize, from: usize, to: usize) {
        self.write_out(|j, _| j == i, from, to);
    }

    /// A round with one output to splice into, or only outputs to write.
    fn single(&mut self, src: BorrowedFd<'_>, mover: Option<usize>, limit: usize) -> io::Result<Step> {
        let Some(m) = mover else {
            let n = crate::wait::read(src, self.buf(limit.min(CHUNK)))?;
            if n == 0 {
                return Ok(Step::End);
            }
            self.took(n);
            self.write_out(|_, _| true, 0, n);
            return Ok(Step::Again);
        };
        loop {
            match splice(src, None, self.outs[m].fd, None, limit, SpliceFlags::empty()) {
                Ok(0) => return Ok(Step::End),
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
    fn tee_to(&mut self, i: usize, src: BorrowedFd<'_>, len: usize) -> Option<usize> {
        let (goal, max) = (self.goal, self.max);
        let out = &mut self.outs[i];
        let to = match out.route {
            Route::Pipe => out.fd,
            _ => match out.mid(goal, max) {
                Ok(mid) => mid.write.as_fd(),
                Err(err) => {
                    self.fail(i, err);
                    return None;
                }
            },
        };
        match tee_once(src, to, len) {
            Ok(n) => {
                if out.route != Route::Pipe {
                    out.pending += n;
                }
                Some(n)
            }
            Err(err) if out.route == Route::Pipe && refuses_splice(&err) => {
                // The output is the input pipe itself (`tee /dev/stdin`):
                // through a pipe of its own, then.
                out.route = Route::Splice;
                self.tee_to(i, src, len)
            }
            Err(err) => {
                self.fail(i, err);
                None
            }
        }
    }

    /// Splices the round's `n` bytes out of the input into output `m`;
    /// what it does not take (it failed) is read and dropped, as every
    /// other output has it.
    fn move_out(&mut self, src: BorrowedFd<'_>, m: usize, n: usize) -> io::Result<()> {
        let mut left = n;
        while left > 0 {
            match splice_once(src, self.outs[m].fd, left) {
                Ok(k) => left -= k,
                Err(err) if refuses_splice(&err) => {
                    self.outs[m].route = Route::Write;
                    read_exact(src, self.buf(left))?;
                    self.write_out_one(m, 0, left);
                    left = 0;
                }
                Err(err) => {
                    self.fail(m, err);
                    read_exact(src, self.buf(left))?;
                    left = 0;
                }
            }
        }
        Ok(())
    }
}

/// Whether `err`, from the first splice out of the input, means "not
/// this way" (as the copy engine takes it) rather than a read error.
fn input_refuses(err: &io::Error) -> bool {
    [
        Errno::INVAL,
        Errno::NOSYS,
        Errno::XDEV,
        Errno::OPNOTSUPP,
        Errno::BADF,
        Errno::PERM,
    ]
    .iter()
    .any(|e| err.raw_os_error() == Some(e.raw_os_error()))
}
