//! The copy engine through the library: every mechanism, forced, between
//! every kind of descriptor we can build, at the boundary sizes; output
//! must equal input whatever the kernel refuses.

#![allow(clippy::unwrap_used)]

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::thread;
use std::time::Duration;

use crate::common;
use common::{SIZES, pty};
use pipespeed::copy::{Copied, Copier, CopyOptions, Mechanism, Side, copy};
use pipespeed::sys::{pipe, set_nonblocking};

const MECHANISMS: [Mechanism; 5] = [
    Mechanism::CopyFileRange,
    Mechanism::Sendfile,
    Mechanism::Splice,
    Mechanism::SplicePipe,
    Mechanism::ReadWrite,
];

/// Bytes that show any loss, duplication or reordering: every 8-byte word
/// holds its offset, then a byte tail.
fn data(len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len + 8);
    let mut off = 0u64;
    while v.len() < len {
        v.extend_from_slice(&off.to_le_bytes());
        off += 8;
    }
    v.truncate(len);
    v
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Src {
    File,
    Pipe,
    Socket,
    /// /dev/zero with a length limit.
    Zero,
    /// A procfs file: size 0 in fstat, content only by reading.
    Proc,
    /// The terminal side of a pty in raw mode, with a length limit.
    Pty,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Dst {
    File,
    Pipe,
    Socket,
    Null,
    Pty,
}

fn tempfile_with(bytes: &[u8]) -> File {
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(bytes).unwrap();
    f.rewind().unwrap();
    f
}

fn read_exactly(fd: impl AsFd, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    let mut got = 0;
    while got < len {
        let n = rustix::io::read(&fd, &mut out[got..]).unwrap();
        assert!(n > 0, "early end after {got} of {len}");
        got += n;
    }
    out
}

fn read_to_end(fd: OwnedFd) -> Vec<u8> {
    let mut out = Vec::new();
    File::from(fd).read_to_end(&mut out).unwrap();
    out
}

/// Copies `len` bytes of a `src` into a `dst`, starting with `force`:
/// what arrived, what the input was, and the copy's report.
fn run(src: Src, dst: Dst, len: usize, force: Option<Mechanism>) -> (Vec<u8>, Vec<u8>, Copied) {
    let expected = match src {
        Src::Zero => vec![0; len],
        Src::Proc => std::fs::read("/proc/version").unwrap(),
        _ => data(len),
    };
    let limit = matches!(src, Src::Zero | Src::Pty).then_some(len as u64);
    let options = CopyOptions {
        force,
        limit,
        ..CopyOptions::default()
    };
    let want = expected.len();
    let (got, copied) = thread::scope(|s| {
        let (input, feeder): (OwnedFd, Option<OwnedFd>) = match src {
            Src::File => (tempfile_with(&expected).into(), None),
            Src::Pipe => {
                let p = pipe().unwrap();
                (p.read, Some(p.write))
            }
            Src::Socket => {
                let (a, b) = UnixStream::pair().unwrap();
                (a.into(), Some(b.into()))
            }
            Src::Zero => (File::open("/dev/zero").unwrap().into(), None),
            Src::Proc => (File::open("/proc/version").unwrap().into(), None),
            Src::Pty => {
                let (controller, terminal) = pty();
                (terminal.into(), Some(controller))
            }
        };
        // The feeder hands its end back instead of closing it: closing a
        // pty's controller hangs the terminal up, and reads fail with EIO
        // even while bytes are buffered. Pipes and sockets are closed by
        // the feeder so that the copy sees the end of its input.
        let keep_open = src == Src::Pty;
        let feeding = feeder.map(|feeder| {
            let bytes = &expected;
            s.spawn(move || {
                let mut f = File::from(feeder);
                f.write_all(bytes).unwrap();
                keep_open.then_some(f)
            })
        });
        let (output, drain): (OwnedFd, Option<thread::ScopedJoinHandle<'_, Vec<u8>>>) = match dst {
            Dst::File => (tempfile::tempfile().unwrap().into(), None),
            Dst::Pipe => {
                let p = pipe().unwrap();
                let r = p.read;
                (p.write, Some(s.spawn(move || read_to_end(r))))
            }
            Dst::Socket => {
                let (a, b) = UnixStream::pair().unwrap();
                (a.into(), Some(s.spawn(move || read_to_end(b.into()))))
            }
            Dst::Null => (File::create("/dev/null").unwrap().into(), None),
            Dst::Pty => {
                let (controller, terminal) = pty();
                (
                    terminal.into(),
                    Some(s.spawn(move || read_exactly(controller, want))),
                )
            }
        };
        let copied = Copier::new(options)
            .copy(&input, &output)
            .unwrap_or_else(|e| panic!("{src:?} -> {dst:?}, {len} bytes, forced {force:?}: {e:?}"));
        drop(feeding.map(|f| f.join().unwrap()));
        let got = match (dst, drain) {
            (Dst::File, _) => {
                let mut f = File::from(output);
                f.seek(SeekFrom::Start(0)).unwrap();
                let mut v = Vec::new();
                f.read_to_end(&mut v).unwrap();
                Some(v)
            }
            // Nothing to read back: the count is all there is.
            (Dst::Null, _) => None,
            (Dst::Pty, Some(drain)) => {
                let got = drain.join().unwrap();
                drop(output);
                Some(got)
            }
            (_, Some(drain)) => {
                drop(output);
                Some(drain.join().unwrap())
            }
            (_, None) => unreachable!("every other destination is drained"),
        };
        (got, copied)
    });
    let got = got.unwrap_or_else(|| expected[..expected.len().min(copied.bytes as usize)].to_vec());
    (got, expected, copied)
}

#[test]
fn every_mechanism_between_every_kind_at_the_boundary_sizes() {
    let srcs = [
        Src::File,
        Src::Pipe,
        Src::Socket,
        Src::Zero,
        Src::Proc,
        Src::Pty,
    ];
    let dsts = [Dst::File, Dst::Pipe, Dst::Socket, Dst::Null, Dst::Pty];
    for src in srcs {
        for dst in dsts {
            for &len in &SIZES {
                if src == Src::Proc && len != 0 {
                    continue; // its size is its own
                }
                for force in std::iter::once(None).chain(MECHANISMS.map(Some)) {
                    let (got, expected, copied) = run(src, dst, len, force);
                    assert!(
                        got == expected,
                        "{src:?} -> {dst:?}, {len} bytes, forced {force:?}: {} bytes arrived, \
                         {} expected, first difference at {:?} ({copied:?})",
                        got.len(),
                        expected.len(),
                        got.iter().zip(&expected).position(|(a, b)| a != b)
                    );
                    assert_eq!(copied.bytes, expected.len() as u64, "{src:?} -> {dst:?}");
                }
            }
        }
    }
}

#[test]
fn the_choice_follows_the_descriptor_kinds() {
    let big = 1024 * 1024 + 1;
    // A filesystem that may copy by itself is asked to (copy_file_range);
    // ext4 and tmpfs, which copy through a pipe of 64 KiB of the kernel's,
    // through the intermediate pipe.
    let file_to_file = if pipespeed::sys::copies_itself(tempfile::tempfile().unwrap()) {
        Mechanism::CopyFileRange
    } else {
        Mechanism::SplicePipe
    };
    let cases = [
        (Src::File, Dst::File, big, file_to_file),
        (Src::File, Dst::Pipe, big, Mechanism::SplicePipe),
        (Src::Pipe, Dst::File, big, Mechanism::SplicePipe),
        // Pipe to pipe: straight until the input has shown it is large
        // (SHOWN_LARGE), through the intermediate pipe after.
        (Src::Pipe, Dst::Pipe, 60_000, Mechanism::Splice),
        (Src::Pipe, Dst::Pipe, big, Mechanism::SplicePipe),
        (Src::Socket, Dst::Pipe, big, Mechanism::SplicePipe),
        (Src::File, Dst::Socket, big, Mechanism::SplicePipe),
        (Src::File, Dst::Null, big, Mechanism::SplicePipe),
        (Src::Zero, Dst::File, big, Mechanism::SplicePipe),
        // Small files, procfs files and terminals go by read/write.
        (Src::File, Dst::Pipe, 32 * 1024, Mechanism::ReadWrite),
        (Src::File, Dst::File, 1, Mechanism::ReadWrite),
        (Src::Proc, Dst::Pipe, 0, Mechanism::ReadWrite),
        (Src::File, Dst::Pty, big, Mechanism::ReadWrite),
        (Src::Pty, Dst::Pipe, big, Mechanism::ReadWrite),
    ];
    for (src, dst, len, mechanism) in cases {
        let (got, expected, copied) = run(src, dst, len, None);
        assert!(
            got == expected,
            "{src:?} -> {dst:?}: {} of {} bytes, first difference at {:?}",
            got.len(),
            expected.len(),
            got.iter().zip(&expected).position(|(a, b)| a != b)
        );
        assert_eq!(
            copied.mechanism, mechanism,
            "{src:?} -> {dst:?}, {len} bytes"
        );
        assert!(copied.fallbacks.is_empty(), "{copied:?}");
    }
}

#[test]
fn splice_between_two_non_pipes_is_refused_and_falls_back_silently() {
    let (got, expected, copied) = run(Src::File, Dst::File, 100_000, Some(Mechanism::Splice));
    assert!(got == expected);
    assert_eq!(copied.mechanism, Mechanism::ReadWrite);
    assert_eq!(copied.fallbacks.len(), 1);
    assert_eq!(copied.fallbacks[0].from, Mechanism::Splice);
    assert_eq!(copied.fallbacks[0].moved, 0);
}

#[test]
fn an_append_only_target_falls_back_to_read_write() {
    let input = data(200_000);
    for force in [None, Some(Mechanism::Splice), Some(Mechanism::SplicePipe)] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, b"head").unwrap();
        let target = OpenOptions::new().append(true).open(&path).unwrap();
        let copied = {
            let options = CopyOptions {
                force,
                ..CopyOptions::default()
            };
            let src = tempfile_with(&input);
            Copier::new(options).copy(&src, &target).unwrap()
        };
        assert_eq!(copied.mechanism, Mechanism::ReadWrite, "{force:?}");
        assert_eq!(copied.fallbacks.len(), 1, "{copied:?}");
        let written = std::fs::read(&path).unwrap();
        assert!(
            written[..4] == *b"head" && written[4..] == input[..],
            "{force:?}"
        );
    }
    // From a pipe too: splice into an O_APPEND file is refused.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let target = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap();
    let p = pipe().unwrap();
    let copied = thread::scope(|s| {
        let w = p.write;
        let bytes = &input;
        s.spawn(move || File::from(w).write_all(bytes).unwrap());
        copy(&p.read, &target).unwrap()
    });
    assert_eq!(copied.mechanism, Mechanism::ReadWrite);
    assert!(std::fs::read(&path).unwrap() == input);
}

#[test]
fn across_filesystems_copy_file_range_gives_way_to_sendfile() {
    // /dev/shm is a tmpfs; the temporary directory is elsewhere, or the
    // test says so and checks the same-filesystem case instead.
    let shm = tempfile::tempfile_in("/dev/shm").unwrap();
    let input = data(300_000);
    let mut src = shm;
    src.write_all(&input).unwrap();
    src.rewind().unwrap();
    // The default temporary directory: writable by any user, and on
    // another filesystem than /dev/shm unless /tmp is a tmpfs too.
    let target = tempfile::tempfile().unwrap();
    // Forced: on ext4 and tmpfs the engine would not ask copy_file_range
    // (see the_choice_follows_the_descriptor_kinds).
    let options = CopyOptions {
        force: Some(Mechanism::CopyFileRange),
        ..CopyOptions::default()
    };
    let copied = Copier::new(options).copy(&src, &target).unwrap();
    let same_fs =
        pipespeed::sys::fd_info(&src).unwrap().dev == pipespeed::sys::fd_info(&target).unwrap().dev;
    if same_fs {
        common::skip(
            "exdev",
            "/dev/shm and the target directory share a filesystem: no EXDEV to test",
        );
        assert_eq!(copied.mechanism, Mechanism::CopyFileRange);
    } else {
        // Linux 5.19+ copies across filesystems itself for some pairs;
        // where it refuses, sendfile must take over at once.
        match copied.fallbacks.as_slice() {
            [] => assert_eq!(copied.mechanism, Mechanism::CopyFileRange),
            [f] => {
                assert_eq!((f.from, f.moved), (Mechanism::CopyFileRange, 0));
                assert_eq!(
                    f.cause.raw_os_error(),
                    Some(rustix::io::Errno::XDEV.raw_os_error())
                );
                assert_eq!(copied.mechanism, Mechanism::Sendfile);
            }
            more => panic!("unexpected fallbacks {more:?}"),
        }
    }
    let mut target = target;
    target.rewind().unwrap();
    let mut out = Vec::new();
    target.read_to_end(&mut out).unwrap();
    assert!(out == input);
}

#[test]
fn a_procfs_file_refuses_splice_and_still_arrives_whole() {
    // fstat says 0 bytes; splice and sendfile say EINVAL on 6.x.
    let expected = std::fs::read("/proc/self/status").unwrap();
    let lines = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    for force in [
        None,
        Some(Mechanism::Splice),
        Some(Mechanism::SplicePipe),
        Some(Mechanism::Sendfile),
    ] {
        let src = File::open("/proc/self/status").unwrap();
        let mut dst = tempfile::tempfile().unwrap();
        let options = CopyOptions {
            force,
            ..CopyOptions::default()
        };
        let copied = Copier::new(options).copy(&src, &dst).unwrap();
        dst.rewind().unwrap();
        let mut got = Vec::new();
        dst.read_to_end(&mut got).unwrap();
        // The status of a live process changes (memory, switches), but
        // not its shape: every line is there, starting with its name.
        assert_eq!(
            lines(&got).len(),
            lines(&expected).len(),
            "{force:?}: {copied:?}"
        );
        assert!(got.starts_with(b"Name:"), "{force:?}");
        assert_eq!(copied.mechanism, Mechanism::ReadWrite, "{force:?}");
    }
}

#[test]
fn a_full_device_is_an_output_error() {
    let src = tempfile_with(&data(200_000));
    let full = OpenOptions::new().write(true).open("/dev/full").unwrap();
    for force in [None, Some(Mechanism::ReadWrite), Some(Mechanism::Sendfile)] {
        let mut src = src.try_clone().unwrap();
        src.rewind().unwrap();
        let options = CopyOptions {
            force,
            ..CopyOptions::default()
        };
        let err = Copier::new(options).copy(&src, &full).unwrap_err();
        assert_eq!(err.side, Side::Output, "{force:?}: {err}");
        assert_eq!(
            err.source.kind(),
            std::io::ErrorKind::StorageFull,
            "{force:?}: {err}"
        );
        assert_eq!(
            err.to_string(),
            "write error: No space left on device (os error 28)"
        );
    }
}

#[test]
fn a_closed_reader_is_a_broken_pipe_on_output() {
    // The test harness ignores SIGPIPE, as every Rust program does.
    for src_kind in [Src::File, Src::Pipe] {
        let p = pipe().unwrap();
        drop(p.read);
        let input = data(300_000);
        let err = match src_kind {
            Src::File => copy(tempfile_with(&input), &p.write).unwrap_err(),
            _ => {
                let q = pipe().unwrap();
                File::from(q.write).write_all(&input[..1000]).unwrap();
                copy(&q.read, &p.write).unwrap_err()
            }
        };
        assert_eq!(err.side, Side::Output);
        assert_eq!(err.source.kind(), std::io::ErrorKind::BrokenPipe);
        assert_eq!(err.moved, 0);
    }
}

#[test]
fn a_directory_is_an_input_error() {
    let dir = File::open(std::env::temp_dir()).unwrap();
    let err = copy(&dir, File::create("/dev/null").unwrap()).unwrap_err();
    assert_eq!(err.side, Side::Input);
    assert_eq!(err.source.kind(), std::io::ErrorKind::IsADirectory);
}

#[test]
fn non_blocking_ends_wait_instead_of_failing_or_dropping() {
    let input = data(3 * 1024 * 1024 + 17);
    for force in [
        None,
        Some(Mechanism::ReadWrite),
        Some(Mechanism::SplicePipe),
    ] {
        let (a, b) = (pipe().unwrap(), pipe().unwrap());
        for end in [&a.read, &a.write, &b.read, &b.write] {
            set_nonblocking(end, true).unwrap();
        }
        let got = thread::scope(|s| {
            let (w, r) = (a.write, b.read);
            let bytes = &input;
            s.spawn(move || {
                // A slow producer: the copier finds its input empty often.
                for chunk in bytes.chunks(100_000) {
                    let mut rest = chunk;
                    while !rest.is_empty() {
                        match rustix::io::write(&w, rest) {
                            Ok(n) => rest = &rest[n..],
                            Err(rustix::io::Errno::AGAIN) => thread::yield_now(),
                            Err(e) => panic!("{e}"),
                        }
                    }
                    thread::sleep(std::time::Duration::from_millis(1));
                }
            });
            let drain = s.spawn(move || {
                set_nonblocking(&r, false).unwrap();
                // A slow consumer too: its pipe fills up.
                thread::sleep(std::time::Duration::from_millis(20));
                read_to_end(r)
            });
            let options = CopyOptions {
                force,
                ..CopyOptions::default()
            };
            let copied = Copier::new(options).copy(&a.read, &b.write).unwrap();
            assert_eq!(copied.bytes, input.len() as u64);
            drop(b.write);
            drain.join().unwrap()
        });
        assert!(got == input, "{force:?}");
    }
}

#[test]
fn a_limit_stops_exactly_there_and_leaves_the_rest() {
    let input = data(1024 * 1024 + 1);
    for force in std::iter::once(None).chain(MECHANISMS.map(Some)) {
        for limit in [0, 1, 4096, 70_000, 1024 * 1024 + 1, 5 * 1024 * 1024] {
            let mut src = tempfile_with(&input);
            let mut dst = tempfile::tempfile().unwrap();
            let options = CopyOptions {
                force,
                limit: Some(limit),
                ..CopyOptions::default()
            };
            let copied = Copier::new(options).copy(&src, &dst).unwrap();
            let n = (limit as usize).min(input.len());
            assert_eq!(copied.bytes, n as u64, "{force:?} limit {limit}");
            dst.rewind().unwrap();
            let mut got = Vec::new();
            dst.read_to_end(&mut got).unwrap();
            assert!(got == input[..n], "{force:?} limit {limit}");
            // The input's position is just past what was copied.
            assert_eq!(
                src.stream_position().unwrap(),
                n as u64,
                "{force:?} limit {limit}"
            );
        }
    }
}

#[test]
fn a_copier_reused_for_many_inputs_keeps_them_in_order() {
    let inputs: Vec<Vec<u8>> = [0, 5, 70_000, 1, 2 * 1024 * 1024, 33_000]
        .iter()
        .map(|&n| data(n))
        .collect();
    let mut dst = tempfile::tempfile().unwrap();
    let mut copier = Copier::new(CopyOptions::default());
    let progress = copier.progress();
    let null = File::create("/dev/null").unwrap();
    for input in &inputs {
        copier.copy(tempfile_with(input), &dst).unwrap();
        // An interleaved copy through the intermediate pipe leaves nothing behind.
        copier.copy(tempfile_with(input), &null).unwrap();
    }
    let total: usize = inputs.iter().map(Vec::len).sum();
    assert_eq!(
        progress.load(std::sync::atomic::Ordering::Relaxed),
        2 * total as u64
    );
    dst.rewind().unwrap();
    let mut got = Vec::new();
    dst.read_to_end(&mut got).unwrap();
    assert!(got == inputs.concat());
}

#[test]
fn a_file_that_grows_while_copied_is_copied_to_its_new_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("growing");
    // Four times what the intermediate and the destination pipe can hold.
    let first = data(4 * pipespeed::sys::pipe_max_size().unwrap().max(1 << 20));
    std::fs::write(&path, &first).unwrap();
    let src = File::open(&path).unwrap();
    let p = pipe().unwrap();
    let more = vec![b'+'; 300_000];
    let got = thread::scope(|s| {
        let r = p.read;
        let (path, more) = (&path, &more);
        let drain = s.spawn(move || {
            // The copier cannot be done before this: the pipes hold half
            // of the file at most.
            let head = read_exactly(&r, 1);
            OpenOptions::new()
                .append(true)
                .open(path)
                .unwrap()
                .write_all(more)
                .unwrap();
            [head, read_to_end(r)].concat()
        });
        let copied = copy(&src, &p.write).unwrap();
        assert_eq!(copied.bytes, (first.len() + more.len()) as u64);
        drop(p.write);
        drain.join().unwrap()
    });
    assert!(got == [first, more].concat());
}

#[test]
fn page_references_can_be_refused() {
    let input = data(1024 * 1024);
    let p = pipe().unwrap();
    let options = CopyOptions {
        page_references: false,
        ..CopyOptions::default()
    };
    let copied = thread::scope(|s| {
        let r = p.read;
        let drain = s.spawn(move || read_to_end(r));
        let copied = Copier::new(options)
            .copy(tempfile_with(&input), &p.write)
            .unwrap();
        drop(p.write);
        assert!(drain.join().unwrap() == input);
        copied
    });
    assert_eq!(copied.mechanism, Mechanism::ReadWrite);
}

#[test]
fn a_sparse_file_over_4_gib_arrives_whole() {
    // Past 2^32 bytes, with data at the start, across the 4 GiB mark and
    // at the end, and holes between.
    let len: u64 = (4 << 30) + 64 * 1024 + 1;
    let marks = [0u64, (4 << 30) - 3, len - 5000];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse");
    let mut f = File::create(&path).unwrap();
    f.set_len(len).unwrap();
    let stamp = data(5000);
    for &at in &marks {
        f.seek(SeekFrom::Start(at)).unwrap();
        f.write_all(&stamp).unwrap();
    }
    drop(f);
    let expected_at = |pos: u64, out: &mut [u8]| {
        out.fill(0);
        for &at in &marks {
            let (lo, hi) = (at.max(pos), (at + 5000).min(pos + out.len() as u64));
            if lo < hi {
                out[(lo - pos) as usize..(hi - pos) as usize]
                    .copy_from_slice(&stamp[(lo - at) as usize..(hi - at) as usize]);
            }
        }
    };
    let p = pipe().unwrap();
    let copied = thread::scope(|s| {
        let r = File::from(p.read);
        let checker = s.spawn(move || {
            let mut r = std::io::BufReader::with_capacity(1 << 20, r);
            let (mut pos, mut got, mut want) = (0u64, vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
            loop {
                let n = r.read(&mut got).unwrap();
                if n == 0 {
                    return pos;
                }
                expected_at(pos, &mut want[..n]);
                assert!(
                    got[..n] == want[..n],
                    "wrong bytes within [{pos}, {})",
                    pos + n as u64
                );
                pos += n as u64;
            }
        });
        let copied = copy(File::open(&path).unwrap(), &p.write).unwrap();
        drop(p.write);
        assert_eq!(checker.join().unwrap(), len);
        copied
    });
    assert_eq!(
        (copied.bytes, copied.mechanism),
        (len, Mechanism::SplicePipe)
    );
}

#[test]
fn an_inspector_sees_every_byte_in_order() {
    use std::sync::{Arc, Mutex};
    let input = data(300_001);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut copier = Copier::new(CopyOptions::default());
    let sink = Arc::clone(&seen);
    copier.set_inspector(Some(Box::new(move |b| {
        sink.lock().unwrap().extend_from_slice(b)
    })));
    let copied = copier
        .copy(tempfile_with(&input), File::create("/dev/null").unwrap())
        .unwrap();
    assert_eq!(copied.mechanism, Mechanism::ReadWrite);
    assert!(*seen.lock().unwrap() == input);
}

#[test]
fn a_connection_reset_midway_is_an_input_error_not_an_end() {
    use std::net::{TcpListener, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    let p = pipe().unwrap();
    let err = thread::scope(|s| {
        let r = p.read;
        s.spawn(move || {
            server.write_all(&data(100_000)).unwrap();
            // Once the copy has passed some bytes on, reset the connection:
            // a zero linger time makes close send RST.
            let head = read_exactly(&r, 1000);
            assert_eq!(head, data(1000));
            rustix::net::sockopt::set_socket_linger(&server, Some(Duration::ZERO)).unwrap();
            drop(server);
            read_to_end(r)
        });
        let err = copy(&client, &p.write).unwrap_err();
        drop(p.write);
        err
    });
    assert_eq!(err.side, Side::Input, "{err}");
    assert_eq!(
        err.source.kind(),
        std::io::ErrorKind::ConnectionReset,
        "{err}"
    );
}

/// A pipe of exactly 64 KiB (the default size, set in case the user's
/// pipe budget made it smaller) and a thread draining it; the closure
/// gets the write end and returns the pipe's size after its copy.
fn into_a_64k_pipe(copy_into: impl FnOnce(&OwnedFd)) -> usize {
    let p = pipe().unwrap();
    pipespeed::sys::fcntl_setpipe_size(&p.write, 64 * 1024).unwrap();
    thread::scope(|s| {
        let r = p.read;
        let drain = s.spawn(move || read_to_end(r));
        copy_into(&p.write);
        let size = pipespeed::sys::fcntl_getpipe_size(&p.write).unwrap();
        drop(p.write);
        drain.join().unwrap();
        size
    })
}

/// Whether this process may enlarge a pipe to `size` now: not when the
/// user's pipe budget is spent (then the growth tests say so and check
/// only that nothing grew past what the data needs).
fn growth_allowed(size: usize) -> bool {
    let p = pipe().unwrap();
    let allowed = pipespeed::sys::fcntl_setpipe_size(&p.write, size).is_ok();
    if !allowed {
        common::skip(
            "pipe_growth",
            &format!("cannot enlarge a pipe to {size} bytes here: growth not checked"),
        );
    }
    allowed
}

#[test]
fn a_file_that_fits_in_the_pipe_leaves_it_as_it_is() {
    let big = data(2 * 1024 * 1024);
    // (bytes in the file, position read from, limit)
    let cases = [
        (1000, 0, None),
        (32 * 1024 + 1, 0, None),
        (64 * 1024 - 1, 0, None),
        (64 * 1024, 0, None),
        // What is left from the position, and under the limit, counts.
        (2 * 1024 * 1024, 2 * 1024 * 1024 - 1000, None),
        (2 * 1024 * 1024, 2 * 1024 * 1024 - 64 * 1024, None),
        (2 * 1024 * 1024, 0, Some(1000)),
        (2 * 1024 * 1024, 0, Some(64 * 1024)),
    ];
    for (len, from, limit) in cases {
        for force in [
            None,
            Some(Mechanism::SplicePipe),
            Some(Mechanism::ReadWrite),
        ] {
            let mut src = tempfile_with(&big[..len]);
            src.seek(SeekFrom::Start(from as u64)).unwrap();
            let options = CopyOptions {
                force,
                limit,
                ..CopyOptions::default()
            };
            let size = into_a_64k_pipe(|dst| {
                Copier::new(options).copy(&src, dst).unwrap();
            });
            assert_eq!(
                size,
                64 * 1024,
                "{len} bytes from {from}, limit {limit:?}, {force:?}"
            );
        }
    }
}

#[test]
fn a_larger_file_grows_the_pipe_only_as_far_as_it_needs() {
    let max = pipespeed::sys::pipe_max_size().unwrap();
    if !growth_allowed(max) {
        return;
    }
    let big = data(2 * max + 1);
    let cases = [
        (64 * 1024 + 1, 128 * 1024),
        (200_000, 256 * 1024),
        (max + 1, max),
        (2 * max + 1, max),
    ];
    for (len, expected) in cases {
        for force in [None, Some(Mechanism::ReadWrite)] {
            let options = CopyOptions {
                force,
                ..CopyOptions::default()
            };
            let src = tempfile_with(&big[..len]);
            let size = into_a_64k_pipe(|dst| {
                Copier::new(options).copy(&src, dst).unwrap();
            });
            assert_eq!(size, expected.min(max), "{len} bytes, {force:?}");
        }
    }
    // Without grow_pipes, nothing grows.
    let options = CopyOptions {
        grow_pipes: false,
        ..CopyOptions::default()
    };
    let src = tempfile_with(&big);
    let size = into_a_64k_pipe(|dst| {
        Copier::new(options).copy(&src, dst).unwrap();
    });
    assert_eq!(size, 64 * 1024);
}

#[test]
fn a_source_of_unknown_length_grows_the_pipes_only_once_it_has_shown_large() {
    let max = pipespeed::sys::pipe_max_size().unwrap();
    let allowed = growth_allowed(max);
    for len in [1000, 64 * 1024 - 1, 64 * 1024 + 1, 300_000] {
        let input = data(len);
        let q = pipe().unwrap();
        pipespeed::sys::fcntl_setpipe_size(&q.write, 64 * 1024).unwrap();
        let (src_size, dst_size) = thread::scope(|s| {
            let w = q.write;
            let bytes = &input;
            s.spawn(move || File::from(w).write_all(bytes).unwrap());
            let mut src_size = 0;
            let dst_size = into_a_64k_pipe(|dst| {
                let copied = copy(&q.read, dst).unwrap();
                assert_eq!(copied.bytes, len as u64);
                src_size = pipespeed::sys::fcntl_getpipe_size(&q.read).unwrap();
            });
            (src_size, dst_size)
        });
        // Less than a default pipe's worth says nothing yet; more does.
        let expected = match len {
            ..65536 => 64 * 1024,
            _ if allowed => max,
            _ => 64 * 1024,
        };
        assert_eq!((src_size, dst_size), (expected, expected), "{len} bytes");
    }
    // /dev/zero through the intermediate pipe, under a limit.
    let zero = File::open("/dev/zero").unwrap();
    for (limit, expected) in [(60_000, 64 * 1024), (64 * 1024 + 100_000, 128 * 1024)] {
        let options = CopyOptions {
            limit: Some(limit),
            ..CopyOptions::default()
        };
        let size = into_a_64k_pipe(|dst| {
            let copied = Copier::new(options).copy(&zero, dst).unwrap();
            assert_eq!(copied.bytes, limit);
        });
        let expected = if allowed { expected } else { 64 * 1024 };
        assert_eq!(size, expected, "/dev/zero, limit {limit}");
    }
}
