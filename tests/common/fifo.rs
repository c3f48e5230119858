//! FIFOs for the tests: making one, and a reader for the tests that write
//! results into one. A module of tests/common, and included with
//! `#[path]` by the unit tests of src/cli/output.rs.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Opens `fifo` for reading now, without blocking (so the writer's check
/// finds a reader however late a thread would run), and reads it in a
/// thread until its writer has come and gone: before a writer opens it,
/// `poll` sees neither data nor a hang-up (pipe(7)).
pub fn read_fifo(fifo: &Path) -> JoinHandle<Vec<u8>> {
    use rustix::event::{PollFd, PollFlags, poll};
    use rustix::fs::{Mode, OFlags, open};
    use rustix::io::Errno;
    let fd = open(fifo, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty()).unwrap();
    std::thread::spawn(move || {
        // A hang's bound, not a timing: no writer at all is a failure.
        let deadline = Instant::now() + Duration::from_secs(60);
        let slice = rustix::time::Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        };
        let (mut got, mut buf) = (Vec::new(), vec![0; 65536]);
        loop {
            assert!(Instant::now() < deadline, "no writer came and went");
            let mut fds = [PollFd::new(&fd, PollFlags::IN)];
            match poll(&mut fds, Some(&slice)) {
                Ok(0) | Err(Errno::INTR) => continue,
                Ok(_) => {}
                Err(e) => panic!("poll: {e}"),
            }
            match rustix::io::read(&fd, &mut buf) {
                Ok(0) => return got,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(Errno::AGAIN | Errno::INTR) => {}
                Err(e) => panic!("read: {e}"),
            }
        }
    })
}

/// Makes a FIFO at `path`, mode 0600.
pub fn mkfifo(path: impl AsRef<Path>) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path.as_ref(),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}
