use std::io::Read;
use std::os::fd::AsFd;

use super::*;
use crate::sys::pipe;

#[test]
fn the_line_is_the_operands_joined_or_y() {
    assert_eq!(line::<&[u8]>(&[]), b"y\n");
    assert_eq!(line(&[b"a".as_slice()]), b"a\n");
    assert_eq!(line(&[b"a".as_slice(), b"", b"b c"]), b"a  b c\n");
    assert_eq!(line(&[b"".as_slice()]), b"\n");
    assert_eq!(line(&[b"\xff\x00".as_slice()]), b"\xff\x00\n");
}

#[test]
fn a_buffer_is_whole_lines_and_whole_pages_where_it_can() {
    let page = 4096;
    // Two bytes: 64 KiB of lines, 16 full pages.
    assert_eq!(buffer_len(2, 65536, page), 65536);
    // Three bytes: the multiple of 3 pages (12 KiB) below 64 KiB.
    assert_eq!(buffer_len(3, 65536, page), 5 * 3 * 4096);
    // A line whose pages do not fit the target: whole lines only.
    assert_eq!(buffer_len(4097, 65536, page), 15 * 4097);
    // A line longer than the target: one line.
    assert_eq!(buffer_len(100_000, 65536, page), 100_000);
    for line in [1, 2, 7, 4095, 4096, 4097, 65535, 65536, 65537, 1 << 20] {
        for target in [1, 4096, 65536, 1 << 20] {
            let len = buffer_len(line, target, page);
            assert_eq!(len % line, 0, "line {line}, target {target}");
            assert!(len <= target.max(line), "line {line}, target {target}");
        }
    }
}

#[test]
fn a_buffer_is_filled_with_copies() {
    for (line, len) in [(&b"y\n"[..], 10), (b"abc\n", 12), (b"x\n", 2), (b"ab\n", 3)] {
        let mut buf = vec![0u8; len];
        fill(&mut buf, line);
        assert_eq!(buf, line.repeat(len / line.len()));
    }
}

/// The first `n` bytes `repeat` writes into a pipe, by `mechanism`, its
/// reader then going away: `repeat` returns `EPIPE` (the test harness
/// ignores SIGPIPE).
fn first_bytes(line: &[u8], n: usize, splice: bool) -> Vec<u8> {
    let p = pipe().unwrap();
    let line = line.to_vec();
    let write = p.write;
    let writer = std::thread::spawn(move || repeat(&line, write.as_fd(), splice));
    let mut got = vec![0u8; n];
    std::fs::File::from(p.read).read_exact(&mut got).unwrap();
    let err = writer.join().unwrap();
    assert_eq!(err.raw_os_error(), Some(libc::EPIPE), "{err}");
    got
}

#[test]
fn a_pipe_gets_the_lines_in_order_by_both_mechanisms() {
    let long = vec![b'z'; 300_000];
    for l in [&b"y\n"[..], b"abc\n", b"\n", &long] {
        let mut line = l.to_vec();
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        let n = 3 * 1024 * 1024 + 5;
        let want: Vec<u8> = line.iter().copied().cycle().take(n).collect();
        for splice in [true, false] {
            assert!(
                first_bytes(&line, n, splice) == want,
                "line of {} bytes, splice {splice}",
                line.len()
            );
        }
    }
}

#[test]
fn the_mechanism_is_vmsplice_into_a_pipe_only() {
    assert_eq!(
        Mechanism::for_output(FdKind::Pipe, true),
        Mechanism::Vmsplice
    );
    assert_eq!(Mechanism::for_output(FdKind::Pipe, false), Mechanism::Write);
    for kind in [
        FdKind::Regular,
        FdKind::CharDevice,
        FdKind::Socket,
        FdKind::Tty,
    ] {
        assert_eq!(Mechanism::for_output(kind, true), Mechanism::Write);
    }
}

#[test]
fn a_full_device_fails_at_the_first_line() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let err = repeat(b"y\n", full.as_fd(), true);
    assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
}

#[test]
fn a_pipe_is_grown_to_512_kib_as_gnu_yes_does_not_beyond() {
    let max = crate::sys::pipe_max_size().unwrap();
    let p = pipe().unwrap();
    let want = PIPE_TARGET
        .min(max)
        .max(crate::sys::fcntl_getpipe_size(p.write.as_fd()).unwrap());
    assert_eq!(grow_pipe(p.write.as_fd()).unwrap(), want);
    assert_eq!(
        crate::sys::fcntl_getpipe_size(p.write.as_fd()).unwrap(),
        want
    );
    // A pipe already larger stays as it is.
    let q = pipe().unwrap();
    if max > PIPE_TARGET && crate::sys::fcntl_setpipe_size(q.write.as_fd(), max).is_ok() {
        assert_eq!(grow_pipe(q.write.as_fd()).unwrap(), max);
    }
}
