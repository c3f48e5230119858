//! Counts the lines going from a pipe on stdin to a pipe on stdout with
//! tee(2) into a side pipe, the alternative to read/write that `pipespeed
//! pv -l` was measured against (docs/pv.md):
//!
//! ```sh
//! producer | target/release/examples/tee_lines | consumer
//! ```

use std::io;
use std::os::fd::AsFd;
use std::process::ExitCode;

use pipespeed::pv::meter::count_lines;
use pipespeed::sys::{SpliceFlags, fcntl_setpipe_size, pipe, pipe_max_size, splice, tee};

fn main() -> ExitCode {
    match run() {
        Ok(lines) => {
            eprintln!("{lines} lines");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("tee_lines: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> io::Result<u64> {
    let (stdin, stdout) = (io::stdin(), io::stdout());
    let (input, output) = (stdin.as_fd(), stdout.as_fd());
    let max = pipe_max_size()?;
    let side = pipe()?;
    for fd in [input, output, side.write.as_fd()] {
        fcntl_setpipe_size(fd, max)?;
    }
    let mut buf = vec![0u8; max];
    let mut lines = 0u64;
    loop {
        // Duplicate what is in the input pipe into the side pipe...
        let n = tee(input, &side.write, max, SpliceFlags::empty())?;
        if n == 0 {
            return Ok(lines);
        }
        // ...move those bytes on to the output...
        let mut left = n;
        while left > 0 {
            left -= splice(input, None, output, None, left, SpliceFlags::empty())?;
        }
        // ...and read the copy to count its lines.
        let mut left = n;
        while left > 0 {
            let got = rustix::io::read(&side.read, &mut buf[..left])?;
            lines += count_lines(&buf[..got], b'\n');
            left -= got;
        }
    }
}
