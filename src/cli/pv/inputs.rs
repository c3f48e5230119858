//! A meter's run: every input to the output in order, the display drawn
//! meanwhile, and pv's messages and status bits for what fails.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Instant;

use crate::copy::{CopyOptions, Mechanism, Side};
use crate::pv::copy::{Ended, Skipped, Transfer, TransferOptions, input_is_output};
use crate::pv::display::{Display, draw};
use crate::pv::meter::count_lines;
use crate::sys::inherited::{self, Stdio};
use crate::sys::{FdInfo, FdKind, fd_info};

use super::targets::{Output, SAME, Store};
use super::{EXIT_ACCESS, EXIT_SAME, EXIT_TRANSFER, Invocation, PvArgs, Reading, ebadf};
use crate::cli::strerror;

/// One run's inputs and how to read them.
pub(super) struct Meter {
    pub me: Invocation,
    pub names: Vec<PathBuf>,
    pub direct_io: bool,
    pub store: Option<Store>,
    pub show: bool,
    pub skip_errors: u8,
    /// Whether the bytes end on standard output (not `-o`, not `-X`).
    pub to_stdout: bool,
}

impl Meter {
    /// Copies every input, drawing the display meanwhile; the exit status.
    pub(super) fn run(
        &self,
        mut transfer: Transfer,
        display: &Display,
        output: Output,
        start: Instant,
    ) -> u8 {
        let out = output.fd();
        let out_info = match fd_info(out) {
            Ok(info) => info,
            Err(err) => {
                self.me.say(&format!("standard output: {}", strerror(&err)));
                return EXIT_ACCESS;
            }
        };
        let reading = Reading::of(&transfer, Some(out));
        let stderr = io::stderr();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let mut status = 0u8;
        std::thread::scope(|scope| {
            let drawer = self.show.then(|| {
                let (reading, stderr) = (&reading, &stderr);
                scope.spawn(move || draw(display, reading, start, &done_rx, stderr))
            });
            status = match &self.store {
                None => self.copy_all(&mut transfer, out, &out_info, None).0,
                Some(store) => self.store_and_forward(&mut transfer, store, out),
            };
            drop(done_tx);
            if let Some(drawer) = drawer {
                let _ = drawer.join();
            }
        });
        status
    }

    /// `-U`: every input into `store` (metered), then `store` from its
    /// start to `out`. A write to the store that fails ends the run there:
    /// nothing is forwarded (status 16).
    fn store_and_forward(&self, transfer: &mut Transfer, store: &Store, out: BorrowedFd<'_>) -> u8 {
        let file = store.file.as_fd();
        let named = store.name.display();
        let store_info = match fd_info(file) {
            Ok(info) => info,
            Err(err) => {
                self.me.say(&format!("{named}: {}", strerror(&err)));
                return EXIT_ACCESS;
            }
        };
        let (mut status, write_failed) =
            self.copy_all(transfer, file, &store_info, Some(&store.name));
        if write_failed {
            return status;
        }
        // As much as went in: the store's end, wherever it is.
        let forward = rustix::fs::seek(file, rustix::fs::SeekFrom::End(0))
            .and_then(|stored| {
                rustix::fs::seek(file, rustix::fs::SeekFrom::Start(0)).map(|_| stored)
            })
            .map_err(io::Error::from)
            .map_err(|err| (Side::Input, err))
            .and_then(|stored| {
                let mut copier = crate::copy::Copier::new(CopyOptions {
                    limit: Some(stored),
                    ..CopyOptions::default()
                });
                let copied = copier
                    .copy(file, out)
                    .map_err(|err| (err.side, err.source))?;
                if copied.bytes < stored {
                    // Cut short by another process: not all went on.
                    return Err((
                        Side::Input,
                        io::Error::new(io::ErrorKind::UnexpectedEof, "the store shrank"),
                    ));
                }
                Ok(())
            });
        match forward {
            Ok(()) => {}
            Err((Side::Output, err)) if err.kind() == io::ErrorKind::BrokenPipe => {}
            Err((Side::Output, err)) => {
                self.me.say(&format!("write failed: {}", strerror(&err)));
                status |= EXIT_TRANSFER;
            }
            Err((Side::Input, err)) => {
                self.me
                    .say(&format!("{named}: read failed: {}", strerror(&err)));
                status |= EXIT_TRANSFER;
            }
        }
        status
    }

    /// Every input to `out`, in order; the status bits of what failed,
    /// and whether a write to `out` failed (which ends the copy).
    fn copy_all(
        &self,
        transfer: &mut Transfer,
        out: BorrowedFd<'_>,
        out_info: &FdInfo,
        out_name: Option<&Path>,
    ) -> (u8, bool) {
        let mut status = 0u8;
        let stdin = io::stdin();
        for name in &self.names {
            let file;
            let is_stdin = name.as_os_str() == "-";
            let fd = if is_stdin {
                if let Some(refused) = self.closed_stdin() {
                    status |= refused;
                    continue;
                }
                if self.direct_io {
                    set_direct(stdin.as_fd());
                }
                stdin.as_fd()
            } else {
                match open_input(name, self.direct_io) {
                    Ok(opened) => {
                        file = opened;
                        file.as_fd()
                    }
                    Err(err) => {
                        self.me
                            .say(&format!("{}: {}", name.display(), strerror(&err)));
                        status |= EXIT_ACCESS;
                        continue;
                    }
                }
            };
            if let Some(refused) = self.closed_stdout(name, is_stdin) {
                status |= refused;
                continue;
            }
            if fd_info(fd).is_ok_and(|info| input_is_output(&info, out_info)) {
                self.me.say(&format!("{}: {SAME}", name.display()));
                status |= EXIT_SAME;
                continue;
            }
            let mut warned = false;
            let mut warn = |skipped: Skipped| {
                if self.skip_warning(name, &skipped, warned) {
                    warned = true;
                }
            };
            match transfer.copy(fd, out, &mut warn) {
                Ok(Ended::Input) => {}
                Ok(Ended::StopSize) => break,
                Err(err) if err.side == Side::Output => {
                    if err.source.kind() != io::ErrorKind::BrokenPipe {
                        let named = out_name.map(|n| format!("{}: ", n.display()));
                        self.me.say(&format!(
                            "{}write failed: {}",
                            named.unwrap_or_default(),
                            strerror(&err.source)
                        ));
                        status |= EXIT_TRANSFER;
                    }
                    return (status, true);
                }
                // pv 1.12 names a directory's failure without "read failed".
                Err(err) if err.source.raw_os_error() == Some(libc::EISDIR) => {
                    self.me
                        .say(&format!("{}: {}", name.display(), strerror(&err.source)));
                    status |= EXIT_TRANSFER;
                }
                Err(err) => {
                    self.me.say(&format!(
                        "{}: read failed: {}",
                        name.display(),
                        strerror(&err.source)
                    ));
                    status |= EXIT_TRANSFER;
                }
            }
        }
        (status, false)
    }

    /// `-E`'s warning for a skipped stretch (`-EE`: the first of a file
    /// only). Whether it was said.
    fn skip_warning(&self, name: &Path, skipped: &Skipped, warned: bool) -> bool {
        if warned && self.skip_errors > 1 {
            return false;
        }
        self.me.say(&format!(
            "{}: warning: read error: skipped {} bytes at offset {}: {}",
            name.display(),
            skipped.bytes,
            skipped.offset,
            strerror(&skipped.error)
        ));
        true
    }

    /// The message and status bit for reading a standard input that was
    /// closed when pv started, as pv 1.12 words them, or `None` if it was
    /// open. Without the check the read fails on the placeholder
    /// descriptor with a transfer error (16), where pv says it cannot stat
    /// the input (2).
    fn closed_stdin(&self) -> Option<u8> {
        inherited::closed_at_start(Stdio::Stdin).then(|| {
            self.me.say(&format!("-: {}", ebadf()));
            EXIT_ACCESS
        })
    }

    /// The message and status bit for copying input `name` to a standard
    /// output that was closed when pv started, or `None` if it was open.
    ///
    /// pv (1.6 and 1.12) checks the output against each input: for standard
    /// input it cannot stat the output (status 2); a named file it opens
    /// lands on the free descriptor 1 and is refused as "input file is also
    /// the output" (status 4). The statuses are pv's; the message for a file says what
    /// is really wrong. Nothing is copied either way: the bytes would be
    /// lost.
    fn closed_stdout(&self, name: &Path, is_stdin: bool) -> Option<u8> {
        if !self.to_stdout || !inherited::closed_at_start(Stdio::Stdout) {
            return None;
        }
        Some(if is_stdin {
            self.me.say(&format!("(stdout): {}", ebadf()));
            EXIT_ACCESS
        } else {
            self.me.say(&format!(
                "{}: cannot copy to standard output: {}",
                name.display(),
                ebadf()
            ));
            EXIT_SAME
        })
    }
}

/// Opens an input, with O_DIRECT for `-K` where the filesystem takes it.
fn open_input(name: &Path, direct: bool) -> io::Result<File> {
    if direct
        && let Ok(file) = File::options()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(name)
    {
        return Ok(file);
    }
    File::open(name)
}

/// `-K` on standard input: O_DIRECT if it is a file that takes it.
fn set_direct(fd: BorrowedFd<'_>) {
    use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
    if fd_info(fd).is_ok_and(|info| info.kind == FdKind::Regular)
        && let Ok(flags) = fcntl_getfl(fd)
    {
        let _ = fcntl_setfl(fd, flags | OFlags::DIRECT);
    }
}

/// What a transfer is told, from the options (every side of `-M` too:
/// pv 1.12 applies every data transfer modifier to both).
pub(super) fn transfer_options(
    args: &PvArgs,
    buf_size: usize,
    given_size: Option<u64>,
    last_written: usize,
    previous_line: bool,
) -> TransferOptions {
    TransferOptions {
        copy: CopyOptions {
            // Every input by read/write, pipes too: pv's -C never splices;
            // nor does -K, whose reads must be aligned, nor -O, which
            // looks at every byte written (pv 1.12: -O implies -C); -A and
            // -T imply -C (pv(1)), which shows in %L's line.
            force: (args.no_splice
                || args.direct_io
                || args.sparse
                || args.last_written.is_some()
                || args.buffer_percent)
                .then_some(Mechanism::ReadWrite),
            page_references: !args.no_splice,
            // -J: the output pipe (and the intermediate one) at that size,
            // where the system allows it; -J 0 as not given, as pv 1.12.
            pipe_size: args
                .pipe_buffer_size
                .filter(|&n| n > 0)
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            buf_size,
            ..CopyOptions::default()
        },
        rate_limit: args.rate_limit,
        // Only a size given stops: one computed from the files would cut
        // a file that grows while it is copied.
        stop_at: given_size.filter(|_| args.stop_at_size),
        lines: args.line_mode,
        null: args.null,
        last_written,
        previous_line,
        sync: args.sync,
        skip_errors: args.skip_errors,
        error_skip_block: args.error_skip_block,
        // O_DIRECT reads whole blocks: 4 KiB is a multiple of every
        // logical block size Linux has.
        unit: if args.direct_io { 4096 } else { 1 },
        sparse: args.sparse,
    }
}

/// `-l` without `-s`: the `end` bytes (`\n`, NUL with `-0`) in all
/// `names`, as pv 1.12 counts them for a size, when every one is a
/// regular file (`-`: stdin, from its offset); `None` if one is not, or
/// cannot be opened or read (the transfer then says why), or none holds a
/// line. Read 64 KiB at a time by pread(2), no offset moved; opened
/// O_NONBLOCK, so a name swapped for a FIFO cannot hold the count.
pub(super) fn line_total(names: &[PathBuf], end: u8) -> Option<u64> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    for name in names {
        let (fd, from): (OwnedFd, u64) = if name.as_os_str() == "-" {
            let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
            let from = rustix::fs::seek(&fd, rustix::fs::SeekFrom::Current(0)).ok()?;
            (fd, from)
        } else {
            let file = File::options()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(name)
                .ok()?;
            (file.into(), 0)
        };
        if fd_info(&fd).ok()?.kind != FdKind::Regular {
            return None;
        }
        let mut at = from;
        loop {
            let n = match rustix::io::pread(&fd, &mut buf, at) {
                Ok(0) => break,
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return None,
            };
            total += count_lines(&buf[..n], end);
            at += n as u64;
        }
    }
    (total > 0).then_some(total)
}
