//! The fan-out's paths, each with every byte checked: outputs of each
//! kind, a full output pipe, refusals, failures.

#![allow(clippy::unwrap_used)]

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::thread;
use std::time::Duration;

use super::*;
use crate::sys::{fcntl_setpipe_size, pipe};

/// `len` bytes that differ from one page to the next.
fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i / 4096 + i * 7) as u8).collect()
}

/// Reads all of `read` (a pipe's read end) in a thread, after `delay`.
fn reader(read: OwnedFd, delay: Duration) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        thread::sleep(delay);
        let mut got = Vec::new();
        File::from(read).read_to_end(&mut got).unwrap();
        got
    })
}

/// A pipe holding `bytes`, its write end closed.
fn input_pipe(bytes: &[u8]) -> OwnedFd {
    let p = pipe().unwrap();
    fcntl_setpipe_size(&p.write, bytes.len().max(4096)).unwrap();
    File::from(p.write).write_all(bytes).unwrap();
    p.read
}

/// The write end of a pipe whose read end is closed: every write to it
/// fails with `EPIPE`.
fn readerless() -> OwnedFd {
    pipe().unwrap().write
}

/// A fan-out with the default options in which no output fails.
fn tee(input: BorrowedFd<'_>, outputs: &[BorrowedFd<'_>]) -> Teed {
    tee_with(input, outputs, TeeOptions::default())
}

/// A fan-out with `options` in which no output fails.
fn tee_with(input: BorrowedFd<'_>, outputs: &[BorrowedFd<'_>], options: TeeOptions) -> Teed {
    fan_out(input, outputs, options, no_failure).unwrap()
}

/// A fan-out with the default options that drops each output that
/// fails, and the failures: the output's index and the error's number.
fn dropping_failures(
    input: BorrowedFd<'_>,
    outputs: &[BorrowedFd<'_>],
) -> (Teed, Vec<(OutputIndex, Option<i32>)>) {
    let mut failed = Vec::new();
    let teed = fan_out(input, outputs, TeeOptions::default(), |i, err| {
        failed.push((i, err.raw_os_error()));
        OnFailure::Drop
    })
    .unwrap();
    (teed, failed)
}

/// How a fan-out with the default options ends when every failure is
/// answered with `answer`.
fn ended_when_failing(
    input: BorrowedFd<'_>,
    outputs: &[BorrowedFd<'_>],
    answer: OnFailure,
) -> Ended {
    fan_out(input, outputs, TeeOptions::default(), |_, _| answer)
        .unwrap()
        .ended
}

/// Everything in `file`, from its start.
fn contents(mut file: &File) -> Vec<u8> {
    let mut got = Vec::new();
    file.rewind().unwrap();
    file.read_to_end(&mut got).unwrap();
    got
}

fn no_failure(i: OutputIndex, err: io::Error) -> OnFailure {
    panic!("output {i} failed: {err}")
}

#[test]
fn pipes_and_files_get_every_byte() {
    // Rounds of up to 1 MiB: with two CPUs, the two files are written
    // side by side.
    let bytes = data(3 << 20);
    // Fed by a thread, so the rounds take what comes; the first 1 MiB
    // is in the pipe before tee starts, so that its first round is one
    // that goes side by side, however loaded the machine (a feeder
    // that runs late made every round short).
    let input = pipe().unwrap();
    let full = fcntl_setpipe_size(&input.write, 1 << 20).is_ok_and(|size| size >= 1 << 20);
    let ahead = if full { 1 << 20 } else { 0 };
    let mut write = File::from(input.write);
    write.write_all(&bytes[..ahead]).unwrap();
    let feed = bytes[ahead..].to_vec();
    let writer = thread::spawn(move || write.write_all(&feed).unwrap());
    let (a, b) = (pipe().unwrap(), pipe().unwrap());
    let (f, g) = (tempfile::tempfile().unwrap(), tempfile::tempfile().unwrap());
    let outputs = [a.write.as_fd(), f.as_fd(), b.write.as_fd(), g.as_fd()];
    let (ra, rb) = (
        reader(a.read.try_clone().unwrap(), Duration::ZERO),
        reader(b.read.try_clone().unwrap(), Duration::from_millis(20)),
    );
    let teed = tee(input.read.as_fd(), &outputs);
    writer.join().unwrap();
    drop((a, b));
    assert_eq!((teed.bytes, teed.ended), (3 << 20, Ended::Input));
    assert_eq!(teed.method, Method::Splice);
    assert!(ra.join().unwrap() == bytes && rb.join().unwrap() == bytes);
    assert!(contents(&f) == bytes && contents(&g) == bytes);
    if crate::sys::available_cpus().unwrap().len() < 2 {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: pipes_and_files_get_every_byte: the files written side by side: one CPU allowed"
        );
    } else if !full {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: pipes_and_files_get_every_byte: the files written side by side: no 1 MiB pipe"
        );
    } else {
        assert!(teed.parallel_rounds > 0, "{teed:?}");
    }
}

#[test]
fn a_full_output_pipe_gets_the_rest_of_its_round_written() {
    // Three output pipes: the first tee sets the round, the last takes
    // it by splice, the middle one has room for one page only, and its
    // reader comes late.
    let bytes = data(64 * 1024);
    let input = input_pipe(&bytes);
    let (a, b, c) = (pipe().unwrap(), pipe().unwrap(), pipe().unwrap());
    let filler = vec![b'x'; 15 * 4096];
    File::from(b.write.try_clone().unwrap())
        .write_all(&filler)
        .unwrap();
    let readers = [
        reader(a.read.try_clone().unwrap(), Duration::ZERO),
        reader(b.read.try_clone().unwrap(), Duration::from_millis(100)),
        reader(c.read.try_clone().unwrap(), Duration::ZERO),
    ];
    let outputs = [a.write.as_fd(), b.write.as_fd(), c.write.as_fd()];
    let options = TeeOptions {
        grow_pipes: false,
        ..TeeOptions::default()
    };
    let teed = tee_with(input.as_fd(), &outputs, options);
    drop((a.write, b.write, c.write));
    let got: Vec<Vec<u8>> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    assert!(teed.short_rounds >= 1, "{teed:?}");
    assert!(got[0] == bytes && got[2] == bytes);
    assert!(got[1][..filler.len()] == filler[..] && got[1][filler.len()..] == bytes[..]);
}

#[test]
fn an_output_without_a_reader_fails_alone() {
    let bytes = data(300_000);
    let input = input_pipe(&bytes);
    let gone = readerless();
    let f = tempfile::tempfile().unwrap();
    // (The test harness ignores SIGPIPE: the write is an EPIPE.)
    let (teed, failed) = dropping_failures(input.as_fd(), &[gone.as_fd(), f.as_fd()]);
    assert_eq!(failed, [(0, Some(libc::EPIPE))]);
    assert_eq!((teed.bytes, teed.ended), (300_000, Ended::Input));
    assert!(contents(&f) == bytes);
}

#[test]
fn stop_ends_the_copy_at_the_first_failure() {
    let input = input_pipe(&data(100_000));
    let gone = readerless();
    let f = tempfile::tempfile().unwrap();
    let ended = ended_when_failing(input.as_fd(), &[f.as_fd(), gone.as_fd()], OnFailure::Stop);
    assert_eq!(ended, Ended::Stopped);
}

#[test]
fn every_output_failing_ends_the_copy_before_the_input() {
    // An input that never ends: /dev/zero.
    let zero = File::open("/dev/zero").unwrap();
    let gone = readerless();
    let ended = ended_when_failing(zero.as_fd(), &[gone.as_fd()], OnFailure::Drop);
    assert_eq!(ended, Ended::NoOutputs);
}

#[test]
fn an_appending_file_and_dev_full_refuse_splice_and_are_written() {
    let bytes = data(150_000);
    let input = input_pipe(&bytes);
    let mut appended = tempfile::NamedTempFile::new().unwrap();
    appended.write_all(b"before ").unwrap();
    let append = File::options().append(true).open(appended.path()).unwrap();
    let full = File::options().write(true).open("/dev/full").unwrap();
    let plain = tempfile::tempfile().unwrap();
    let (_, failed) = dropping_failures(
        input.as_fd(),
        &[append.as_fd(), full.as_fd(), plain.as_fd()],
    );
    assert_eq!(failed, [(1, Some(libc::ENOSPC))]);
    let got = contents(appended.as_file());
    assert!(got[..7] == b"before "[..] && got[7..] == bytes[..]);
    assert!(contents(&plain) == bytes);
}

/// Outputs that are one pipe or one device without an offset (`tee
/// /dev/stderr 2>&1 | ...`, `tee /dev/null >/dev/null`) are spliced:
/// each takes the round in turn, as it would from GNU's chunks, and only
/// outputs that are one regular file are written 8 KiB at a time.
#[test]
fn outputs_that_are_one_pipe_or_dev_null_are_spliced() {
    let bytes = data(32 * 1024);
    let input = input_pipe(&bytes);
    let out = pipe().unwrap();
    fcntl_setpipe_size(&out.write, 1 << 20).unwrap();
    let again = out.write.try_clone().unwrap();
    let teed = tee(input.as_fd(), &[out.write.as_fd(), again.as_fd()]);
    assert_eq!(
        (teed.bytes, teed.method),
        (bytes.len() as u64, Method::Splice)
    );
    drop((out.write, again));
    let mut got = Vec::new();
    File::from(out.read).read_to_end(&mut got).unwrap();
    assert!(
        got == [&bytes[..], &bytes[..]].concat(),
        "{} bytes",
        got.len()
    );

    let input = input_pipe(&bytes);
    let null = || File::options().write(true).open("/dev/null").unwrap();
    let (a, b) = (null(), null());
    let teed = tee(input.as_fd(), &[a.as_fd(), b.as_fd()]);
    assert_eq!(
        (teed.bytes, teed.method),
        (bytes.len() as u64, Method::Splice)
    );
}

#[test]
fn a_file_as_input_is_spliced_a_small_one_read() {
    for (len, method) in [(100, Method::ReadWrite), (100_000, Method::Splice)] {
        let mut input = tempfile::tempfile().unwrap();
        input.write_all(&data(len)).unwrap();
        input.rewind().unwrap();
        let (f, g) = (tempfile::tempfile().unwrap(), tempfile::tempfile().unwrap());
        let teed = tee(input.as_fd(), &[f.as_fd(), g.as_fd()]);
        assert_eq!((teed.bytes, teed.method), (len as u64, method));
        assert!(contents(&f) == data(len) && contents(&g) == data(len));
    }
}

#[test]
fn read_write_alone_gives_the_same_bytes() {
    let bytes = data(100_000);
    let input = input_pipe(&bytes);
    let a = pipe().unwrap();
    let ra = reader(a.read.try_clone().unwrap(), Duration::ZERO);
    let f = tempfile::tempfile().unwrap();
    let options = TeeOptions {
        read_write: true,
        ..TeeOptions::default()
    };
    let teed = tee_with(input.as_fd(), &[a.write.as_fd(), f.as_fd()], options);
    drop(a);
    assert_eq!(teed.method, Method::ReadWrite);
    assert!(ra.join().unwrap() == bytes && contents(&f) == bytes);
}

#[test]
fn no_outputs_ends_at_once() {
    let input = input_pipe(&data(70_000));
    let teed = tee(input.as_fd(), &[]);
    assert_eq!(teed.ended, Ended::NoOutputs);
}

#[test]
fn an_input_pipe_shared_with_another_reader_gives_every_output_the_same_bytes() {
    // Another process reading the same pipe takes some of the bytes: tee
    // must give each of its outputs the same ones (those it read), not
    // tee some bytes to one output and splice others into the next.
    for _ in 0..5 {
        shared_input_once();
    }
}

fn shared_input_once() {
    let input = pipe().unwrap();
    let chunks = 8192;
    let writer = {
        let write = input.write;
        thread::spawn(move || {
            let mut w = File::from(write);
            for i in 0..chunks {
                w.write_all(&[(i % 251) as u8; 1024]).unwrap();
            }
        })
    };
    let thief = {
        let read = input.read.try_clone().unwrap();
        thread::spawn(move || {
            let mut r = File::from(read);
            let mut buf = [0u8; 512];
            let mut stolen = 0;
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                stolen += n;
            }
            stolen
        })
    };
    let (f, g) = (tempfile::tempfile().unwrap(), tempfile::tempfile().unwrap());
    let teed = tee(input.read.as_fd(), &[f.as_fd(), g.as_fd()]);
    writer.join().unwrap();
    drop(input.read);
    let stolen = thief.join().unwrap();
    assert_eq!(teed.bytes as usize + stolen, chunks * 1024);
    let (a, b) = (contents(&f), contents(&g));
    assert_eq!(a.len(), b.len());
    assert!(a == b, "the two outputs differ");
}

#[test]
fn a_socket_that_keeps_records_gets_records_it_takes() {
    use rustix::net::{AddressFamily, SocketFlags, SocketType, socketpair};
    let bytes = data(1 << 20);
    let input = input_pipe(&bytes);
    let (ours, peer) = socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )
    .unwrap();
    let reader = thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = rustix::io::read(&peer, &mut buf).unwrap();
            if n == 0 {
                break got;
            }
            got.extend_from_slice(&buf[..n]);
        }
    });
    let f = tempfile::tempfile().unwrap();
    tee(input.as_fd(), &[f.as_fd(), ours.as_fd()]);
    drop(ours);
    assert!(reader.join().unwrap() == bytes);
    assert!(contents(&f) == bytes);
}

/// What the function's documentation promises, on a pipe and a file.
#[test]
fn a_pipe_and_a_file_get_every_byte() -> Result<(), Box<dyn std::error::Error>> {
    let input = pipe()?;
    File::from(input.write).write_all(b"to both")?;
    let a = pipe()?;
    let b = tempfile::tempfile()?;
    let teed = fan_out(
        input.read.as_fd(),
        &[a.write.as_fd(), b.as_fd()],
        TeeOptions::default(),
        |_, err| panic!("{err}"),
    )?;
    assert_eq!((teed.bytes, teed.ended), (7, Ended::Input));
    drop(a.write);
    let mut got = String::new();
    File::from(a.read).read_to_string(&mut got)?;
    assert_eq!(got, "to both");
    Ok(())
}
