//! A fan-out under way: its outputs, its input pipe, and the copy by
//! read/write; `round.rs` has the rounds of tee and splice.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::mpsc;

use rustix::event::{PollFd, PollFlags, poll};
use rustix::io::Errno;

use super::out::{Drain, Out, Route};
use super::{Ended, Method, OnFailure, OutputIndex, ReadError, TeeOptions, Teed};
use crate::copy::{SMALL_FILE, bytes_ahead, grow_pipe, recv_record};
use crate::sys::socket::keeps_records;
use crate::sys::{FdKind, SpliceFlags, fcntl_getpipe_size, fd_info, splice};
use crate::wait::{Direction, wait_ready};

/// Bytes read at a time when reading into memory (GNU tee reads 8 KiB at
/// a time; larger reads take what is there as well, in fewer calls).
pub(super) const CHUNK: usize = 128 * 1024;

/// Bytes read at a time when two outputs are one regular file or block
/// device: GNU tee's (`BUFSIZ`), each chunk written whole to each output
/// in turn, so that the file ends as GNU's leaves it (a round spliced
/// into one while another appended to it wrote the round twice).
pub(super) const SHARED_CHUNK: usize = 8 * 1024;

/// The most outputs given a pipe of their own (one more output, the
/// last, takes the round straight from tee's own pipe).
pub(super) const OWN_PIPES: usize = 4;

/// The least a round holds for its copies into files to run side by side
/// (a thread costs tens of microseconds; copying 256 KiB, about as many).
pub(super) const PARALLEL_MIN: usize = 256 * 1024;

/// The most one round takes: what a round read into memory (a short
/// `tee`) may need, whatever `pipe-max-size` allows.
pub(super) const ROUND_MAX: usize = 4 * 1024 * 1024;

/// Copies everything `input` gives to every one of `outputs`, until the
/// input ends, every output has failed, or `on_failure` says stop; see
/// the [module documentation](crate::tee).
///
/// `on_failure(i, err)` is called once for each output that fails, with
/// its position in `outputs` and the error; the output is not written to
/// again. The outputs still there have every byte taken from the input
/// when this returns, also with a [`ReadError`].
pub(crate) fn fan_out<'a>(
    input: BorrowedFd<'a>,
    outputs: &[BorrowedFd<'a>],
    options: TeeOptions,
    on_failure: impl FnMut(OutputIndex, io::Error) -> OnFailure,
) -> Result<Teed, ReadError> {
    // Outputs that are one file are written as GNU tee writes them.
    let shared = share_a_file(outputs);
    let splice_ok = !options.read_write && !shared;
    // A socket that keeps records is read a record at a time, whole.
    let input_records = keeps_records(input);
    let info = fd_info(input).ok();
    let ahead = info.as_ref().and_then(|info| bytes_ahead(input, info));
    let splice_in = splice_ok
        && info.is_some_and(|info| match info.kind {
            FdKind::Pipe | FdKind::CharDevice | FdKind::BlockDevice => true,
            FdKind::Regular => {
                options.page_references && ahead.is_some_and(|ahead| ahead > SMALL_FILE)
            }
            FdKind::Socket => !input_records,
            _ => false,
        });
    let input_is_pipe = info.is_some_and(|info| info.kind == FdKind::Pipe);
    // Even a pipe goes through a pipe of tee's own: the bytes tee(2)
    // copies to one output must be the bytes it then moves to the last,
    // and another process reading the same pipe could take them between
    // the two calls.
    // A pipe that cannot be made (descriptors spent) leaves read/write.
    let fill = splice_in
        .then(|| {
            let pipe = crate::sys::pipe().ok()?;
            let size = fcntl_getpipe_size(&pipe.write).ok()?;
            Some((pipe, size))
        })
        .flatten();
    let mut fan = Fan {
        input,
        input_is_pipe,
        input_records,
        chunk: if shared { SHARED_CHUNK } else { CHUNK },
        outs: outputs.iter().map(|&fd| Out::new(fd, splice_ok)).collect(),
        on_failure,
        options,
        fill: fill
            .as_ref()
            .map(|(p, _)| (p.read.as_fd(), p.write.as_fd())),
        fill_size: fill.as_ref().map_or(0, |&(_, size)| size),
        held: 0,
        filled: false,
        buf: Vec::new(),
        parallel: crate::sys::available_cpus().is_ok_and(|cpus| cpus.len() > 1),
        bytes: 0,
        goal: 0,
        max: 0,
        sized: false,
        stopped: false,
        failed: Vec::new(),
        short_rounds: 0,
        parallel_rounds: 0,
        workers: Vec::new(),
    };
    // Outputs past the first few that need a pipe of their own are written
    // from memory: each pipe costs two descriptors and up to
    // `pipe-max-size` of the user's pipe budget, and a file is copied
    // either way.
    let mut own_pipes = 0;
    for out in fan.outs.iter_mut().filter(|o| o.route == Route::Splice) {
        own_pipes += 1;
        if own_pipes > OWN_PIPES + 1 {
            out.route = Route::Write;
        }
    }
    // `/dev/null` beside an output that takes the bytes gets nothing: the
    // kernel would drop it.
    if fan.outs.iter().any(|o| !o.is_null) {
        for out in fan.outs.iter_mut().filter(|o| o.is_null) {
            out.route = Route::Discard;
        }
    }
    let spliced = |o: &Out<'_>| matches!(o.route, Route::Pipe | Route::Splice);
    let mut method = if fan.fill.is_some() && fan.outs.iter().any(spliced) {
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
    std::thread::scope(|scope| {
        // Threads that empty the outputs' own pipes beside the main one,
        // one per own pipe but the one the round may be spliced from.
        if fan.parallel && method == Method::Splice {
            let own = fan.outs.iter().filter(|o| o.route == Route::Splice).count();
            for _ in 1..own {
                fan.workers.push(Worker::spawn(scope));
            }
        }
        let result = loop {
            if fan.stopped {
                break Ok(fan.teed(Ended::Stopped, method));
            }
            if !fan.outs.iter().any(|o| o.alive) {
                break Ok(fan.teed(Ended::NoOutputs, method));
            }
            let step = match method {
                Method::Splice => fan.round(),
                Method::ReadWrite => fan.copy_round(),
            };
            fan.report();
            if fan.stopped {
                break Ok(fan.teed(Ended::Stopped, method));
            }
            match step {
                Ok(Step::Again) => {}
                Ok(Step::End) => break Ok(fan.teed(Ended::Input, method)),
                Ok(Step::ReadWrite) => method = Method::ReadWrite,
                Err(error) => {
                    break Err(ReadError {
                        error,
                        bytes: fan.bytes,
                    });
                }
            }
        };
        // Their queues closed, the threads end, and the scope with them.
        fan.workers.clear();
        result
    })
}

/// A thread that empties outputs' own pipes ([`Drain`]), one a round,
/// kept for the whole fan-out: a thread spawned for each round cost about
/// fifteen system calls and a stack's mapping (strace -c of 1 GiB into two
/// files: 1,024 `clone3`, 1,043 `mmap`), and made the rounds written side
/// by side slower than one after the other on a busy machine (docs/tee.md).
pub(super) struct Worker<'a> {
    pub(super) jobs: mpsc::Sender<Drain<'a>>,
    pub(super) done: mpsc::Receiver<(Drain<'a>, io::Result<()>)>,
}

impl<'a> Worker<'a> {
    fn spawn<'scope>(scope: &'scope std::thread::Scope<'scope, '_>) -> Worker<'a>
    where
        'a: 'scope,
    {
        let (jobs, queue) = mpsc::channel::<Drain<'a>>();
        let (finished, done) = mpsc::channel();
        scope.spawn(move || {
            for mut job in queue {
                let result = job.run();
                if finished.send((job, result)).is_err() {
                    return;
                }
            }
        });
        Worker { jobs, done }
    }
}

/// Whether two of `outputs` are one file with an offset, a regular file
/// or a block device (the same device and inode): where each is written
/// decides what the file holds. Two that are one pipe, terminal, socket
/// or `/dev/null` take each round in turn, as they take GNU's chunks.
fn share_a_file(outputs: &[BorrowedFd<'_>]) -> bool {
    let mut files: Vec<(u64, u64)> = outputs
        .iter()
        .filter_map(|&fd| fd_info(fd).ok())
        .filter(|info| matches!(info.kind, FdKind::Regular | FdKind::BlockDevice))
        .map(|info| (info.dev, info.ino))
        .collect();
    files.sort_unstable();
    files.windows(2).any(|pair| pair[0] == pair[1])
}

/// What a round leaves to do.
pub(super) enum Step {
    /// Go on.
    Again,
    /// The input ended.
    End,
    /// The input refused its first splice: read it from now on.
    ReadWrite,
}

/// A fan-out under way.
pub(super) struct Fan<'a, F> {
    pub(super) input: BorrowedFd<'a>,
    pub(super) input_is_pipe: bool,
    /// Whether the input is a socket that keeps record boundaries.
    pub(super) input_records: bool,
    /// Bytes read at a time by read/write.
    pub(super) chunk: usize,
    pub(super) outs: Vec<Out<'a>>,
    pub(super) on_failure: F,
    pub(super) options: TeeOptions,
    /// The pipe the input is spliced into (read and write ends), its
    /// size, and what it holds.
    pub(super) fill: Option<(BorrowedFd<'a>, BorrowedFd<'a>)>,
    pub(super) fill_size: usize,
    pub(super) held: usize,
    /// Whether a splice into `fill` has succeeded once.
    pub(super) filled: bool,
    /// A round's bytes, when they are read into memory.
    pub(super) buf: Vec<u8>,
    /// Whether more than one CPU may run this process: a round's copies
    /// into files then run side by side.
    pub(super) parallel: bool,
    /// Bytes taken from the input.
    pub(super) bytes: u64,
    /// What the pipes should hold (0: as made), and `pipe-max-size` (0:
    /// unknown, or pipes left alone).
    pub(super) goal: u64,
    pub(super) max: usize,
    /// Whether the pipes were sized for the whole copy.
    pub(super) sized: bool,
    pub(super) stopped: bool,
    /// Outputs that failed in this round, not yet told.
    pub(super) failed: Vec<(usize, io::Error)>,
    /// See [`Teed::short_rounds`] and [`Teed::parallel_rounds`].
    pub(super) short_rounds: u64,
    pub(super) parallel_rounds: u64,
    /// Threads that empty own pipes beside the main one (none with one
    /// CPU).
    pub(super) workers: Vec<Worker<'a>>,
}

impl<'a, F: FnMut(OutputIndex, io::Error) -> OnFailure> Fan<'a, F> {
    pub(super) fn teed(&self, ended: Ended, method: Method) -> Teed {
        Teed {
            bytes: self.bytes,
            ended,
            method,
            short_rounds: self.short_rounds,
            parallel_rounds: self.parallel_rounds,
        }
    }

    /// Output `i` failed with `err`: it is written to no more.
    /// It is told at the end of the round, with the others that failed
    /// in it, in the outputs' order (as GNU's tee, writing to each in
    /// turn, would find them).
    pub(super) fn fail(&mut self, i: usize, err: io::Error) {
        self.outs[i].close();
        self.failed.push((i, err));
    }

    /// Tells `on_failure` of the outputs that failed in the round, in
    /// order, until it says stop.
    fn report(&mut self) {
        let mut failed = std::mem::take(&mut self.failed);
        failed.sort_by_key(|&(i, _)| i);
        for (i, err) in failed {
            if (self.on_failure)(i, err) == OnFailure::Stop {
                self.stopped = true;
                return;
            }
        }
    }

    /// `self.buf`, at least `len` bytes long.
    pub(super) fn buf(&mut self, len: usize) -> &mut [u8] {
        if self.buf.len() < len {
            self.buf.resize(len, 0);
        }
        &mut self.buf[..len]
    }

    /// Waits until the input is ready, failing (as `EPIPE`) each output
    /// pipe found without a reader meanwhile (gnulib's `iopoll`): whether
    /// one was.
    pub(super) fn watch(&mut self) -> io::Result<bool> {
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
                return Ok(false);
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
        Ok(true)
    }

    /// A round of read/write: a chunk read, or a record of a socket that
    /// keeps them received whole however large (a read would cut it at
    /// the buffer's length and drop the rest), written to every output.
    pub(super) fn copy_round(&mut self) -> io::Result<Step> {
        if self.options.watch_pipes && self.watch()? {
            return Ok(Step::Again);
        }
        if self.input_records {
            let n = recv_record(self.input, &mut self.buf)?;
            return Ok(self.give(n));
        }
        self.read_out(self.input, self.chunk)
    }

    /// Reads up to `len` bytes of `src` into memory and writes them to
    /// every output.
    pub(super) fn read_out(&mut self, src: BorrowedFd<'_>, len: usize) -> io::Result<Step> {
        let n = crate::wait::read(src, self.buf(len.min(CHUNK)))?;
        Ok(self.give(n))
    }

    /// Writes the first `n` bytes of `self.buf`, just taken from the
    /// input, to every output: the end of the input if there are none.
    fn give(&mut self, n: usize) -> Step {
        if n == 0 {
            return Step::End;
        }
        self.took(n);
        self.write_out(|_, _| true, 0, n);
        Step::Again
    }

    /// Writes `self.buf[from..to]` to every output still there that
    /// `which` picks (by index), failing each that cannot take it.
    pub(super) fn write_out(
        &mut self,
        which: impl Fn(usize, &Out<'_>) -> bool,
        from: usize,
        to: usize,
    ) {
        for i in 0..self.outs.len() {
            if self.outs[i].alive
                && self.outs[i].route != Route::Discard
                && which(i, &self.outs[i])
                && let Err(err) = self.outs[i].write(&self.buf[from..to])
            {
                self.fail(i, err);
            }
        }
    }

    /// The input pipe, holding bytes; `Err(step)` when the round ends
    /// there.
    pub(super) fn source(&mut self) -> io::Result<Result<BorrowedFd<'a>, Step>> {
        let Some((read, write)) = self.fill else {
            return Ok(Err(Step::ReadWrite));
        };
        if self.held > 0 {
            return Ok(Ok(read));
        }
        if self.options.watch_pipes && self.watch()? {
            return Ok(Err(Step::Again));
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
            // (A refusal, as the copy engine takes it, rather than a read error.)
            Err(err) if !self.filled && crate::copy::is_refusal(&err) => Ok(Err(Step::ReadWrite)),
            Err(err) => Err(err),
        }
    }

    /// Sizes every pipe of the copy to hold `bytes` (at most
    /// `pipe-max-size`): the input's, the fill pipe, the outputs' own and
    /// the outputs that are pipes.
    pub(super) fn size_pipes(&mut self, bytes: u64) {
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
}
