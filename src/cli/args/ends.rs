//! The options of `pipespeed write` and `pipespeed read`, the blog's two
//! ends.
use std::path::PathBuf;

use clap::Args;

use super::values::*;

/// Options both ends share (the blog's programs share one option parser).
#[derive(Debug, Args)]
pub struct EndArgs {
    /// Buffer size (vmsplice splits it into two halves). Takes K, M, G
    /// [range: 1-1G].
    #[arg(long = "buf-size", visible_alias = "buf", alias = "buf_size", value_name = "SIZE", default_value = "256K", value_parser = buffer_size)]
    pub buf_size: usize,
    /// Pipe size to set with F_SETPIPE_SZ (vmsplice: always half the
    /// buffer) [range: 1-1G].
    #[arg(long = "pipe-size", alias = "pipe_size", value_name = "SIZE", value_parser = pipe_size)]
    pub pipe_size: Option<usize>,
    /// Start the buffer BYTES past a page boundary, less than a page.
    /// Default: 16 for the writer (where malloc puts it, as in the blog),
    /// 0 with --huge-page or --gift and for the reader.
    #[arg(long = "buf-offset", value_name = "BYTES", value_parser = buffer_offset)]
    pub buf_offset: Option<usize>,
    /// Put the buffer on 2 MiB transparent huge pages (aligned + MADV_HUGEPAGE).
    #[arg(long = "huge-page", visible_alias = "huge", alias = "huge_page")]
    pub huge_page: bool,
    /// Fail (exit 3) unless the buffer really is on huge pages.
    #[arg(long = "check-huge-page", alias = "check_huge_page")]
    pub check_huge_page: bool,
    /// Non-blocking calls retried on EAGAIN instead of sleeping.
    ///
    /// A busy end spins on its CPU: the two ends need one each. Without
    /// --cpu, on at most 2 allowed CPUs (sched_getaffinity: the machine's,
    /// or taskset's), the end prints one line saying how to pin them,
    /// since the scheduler may put both on one CPU, where they spin against
    /// each other (the README gives the blog's pair measured both ways on
    /// 2 vCPUs). With 3 or more, one is left over for the rest of the
    /// machine, and nothing is said.
    #[arg(long = "busy-loop", visible_alias = "busy", alias = "busy_loop")]
    pub busy_loop: bool,
    /// poll(2) before every call (with --busy-loop: poll with no timeout).
    #[arg(long)]
    pub poll: bool,
    /// SPLICE_F_GIFT on vmsplice; SPLICE_F_MOVE on the reader's splice.
    #[arg(long)]
    pub gift: bool,
    /// Lock the buffer in memory (mlock).
    #[arg(long = "lock-memory", alias = "lock_memory")]
    pub lock_memory: bool,
    /// Do not fault the buffer's pages in before piping.
    #[arg(long = "dont-touch-pages", alias = "dont_touch_pages")]
    pub dont_touch_pages: bool,
    /// Send (write) or check (read) a stream where every byte is checkable.
    #[arg(long)]
    pub verify: bool,
    /// Pin this process to CPU N [range: 0-1023].
    #[arg(long, value_name = "N", value_parser = cpu)]
    pub cpu: Option<usize>,
    /// Print the settings to stderr before starting, in one line of
    /// words: method, buffer, pipe, waiting, bytes, CPU.
    #[arg(long)]
    pub verbose: bool,
}

/// `pipespeed write`.
#[derive(Debug, Args)]
#[command(
    after_help = "Standard output must be a pipe, a FIFO, a socket or a character device other than a terminal (/dev/null): without --bytes the writer never stops, so a regular file (which it would fill), a terminal or a block device is refused (status 2) before anything is written; with --bytes they take exactly that.\n\nExit status: 0 the bytes asked for were sent, or the reader went away; 1 an error (a closed stdout included); 2 bad usage (an endless stream to a file or terminal included); 3 not possible on this machine (huge pages not granted, vmsplice refused)."
)]
pub struct WriteArgs {
    #[command(flatten)]
    pub end: EndArgs,
    /// vmsplice two alternating halves instead of write(2).
    #[arg(long, aliases = ["write_with_vmsplice", "write-with-vmsplice"])]
    pub vmsplice: bool,
    /// Make the two halves one contiguous mapping.
    #[arg(long = "same-buffer", alias = "same_buffer")]
    pub same_buffer: bool,
    /// UNSAFE, for showing the hazard: size the pipe to SIZE instead of half
    /// the buffer, so halves are refilled while still in the pipe. Not
    /// with --gift (gifted pages must not change in the pipe) [range:
    /// 1-1G].
    #[arg(long = "unsafe-early-reuse", value_name = "SIZE", value_parser = pipe_size, requires = "vmsplice", conflicts_with = "gift")]
    pub unsafe_early_reuse: Option<usize>,
    /// Stop after SIZE bytes (default: until the reader goes away, which
    /// needs a pipe, socket or character device as stdout) [at most
    /// 1024T].
    #[arg(long, aliases = ["bytes_to_pipe", "bytes-to-pipe"], value_name = "SIZE", value_parser = run_bytes)]
    pub bytes: Option<u64>,
}

/// `pipespeed read`.
#[derive(Debug, Args)]
#[command(
    after_help = "Standard input is meant to be a pipe: from anything else (a file, /dev/zero) the figure is still printed, as what was measured, but one line on stderr says what the input is, the line says \"read from a regular file, not a pipe\" instead of \"piped\", and the JSON's \"input\" and the CSV's last column name it.\n\nExit status: 0 the bytes asked for arrived; 1 an error, or the input ended before --bytes; 2 bad usage; 3 not possible on this machine (huge pages not granted)."
)]
pub struct ReadArgs {
    #[command(flatten)]
    pub end: EndArgs,
    /// splice(2) to /dev/null instead of read(2).
    #[arg(long, aliases = ["read_with_splice", "read-with-splice"])]
    pub splice: bool,
    /// Bytes to consume [range: 1-1024T]; fewer before the input ends is
    /// an error (status 1).
    #[arg(long, aliases = ["bytes_to_pipe", "bytes-to-pipe"], value_name = "SIZE", default_value = "10G", value_parser = positive_size)]
    pub bytes: u64,
    /// Write one CSV line to FILE (- or no FILE: standard output), the
    /// columns: gib_s, bytes, buf_size, pipe_size, busy_loop, poll,
    /// huge_page, check_huge_page, read_with_splice, gift, lock_memory,
    /// dont_touch_pages, seconds, input (pipe, file, char-device, ...).
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub csv: Option<PathBuf>,
    /// Write the measurement as one JSON object on one line to FILE (- or
    /// no FILE: standard output). With a result on standard output, the
    /// blog's line goes to stderr; with none, to stdout.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
}
