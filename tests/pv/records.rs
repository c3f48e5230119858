//! pv to and from a `SOCK_SEQPACKET` socket: every byte, in order, and a
//! record is never split or cut short (a read of such a socket takes one
//! record and drops what does not fit; a splice took 536 bytes of each
//! 5000-byte record and lost the rest, status 0).

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};

use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType, recv, send};

use super::{data, pv, stderr};

/// The record sizes at which a copy went wrong or could: 1 byte, a
/// splice's 536, a page, 5000, and 64 KiB.
const RECORD_SIZES: [usize; 5] = [1, 536, 4096, 5000, 65536];

/// How many records each run sends.
const RECORDS: usize = 40;

fn seqpacket_pair() -> (OwnedFd, OwnedFd) {
    rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )
    .unwrap()
}

/// The records of one run: each of `size` bytes, each different.
fn records(size: usize) -> Vec<Vec<u8>> {
    (0..RECORDS)
        .map(|i| data(size * (i + 1))[size * i..].to_vec())
        .collect()
}

/// Sends `records` on `end`, then shuts it for writing.
fn send_all(end: OwnedFd, records: Vec<Vec<u8>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for record in &records {
            assert_eq!(
                send(&end, record, SendFlags::empty()).unwrap(),
                record.len()
            );
        }
        rustix::net::shutdown(&end, rustix::net::Shutdown::Write).unwrap();
    })
}

/// Every record that arrives on `end` until the peer shuts down, each
/// whole (a buffer larger than any record; a truncated one fails).
fn receive_all(end: OwnedFd) -> std::thread::JoinHandle<Vec<Vec<u8>>> {
    std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let (n, total) = recv(&end, &mut buf[..], RecvFlags::TRUNC).unwrap();
            assert_eq!(n, total, "a record larger than 1 MiB");
            if n == 0 {
                return got;
            }
            got.push(buf[..n].to_vec());
        }
    })
}

#[test]
fn every_record_from_a_seqpacket_socket_arrives_whole_and_in_order() {
    for size in RECORD_SIZES {
        for options in [
            &["-q"][..],
            &["-q", "-C"],
            &["-q", "-L", "1G"],
            &["-q", "-l"],
            &["-q", "-B", "4K"],
            &["-f", "-A", "8", "-b"],
        ] {
            let (ours, theirs) = seqpacket_pair();
            let sent = records(size);
            let feeder = send_all(theirs, sent.clone());
            let out = pv(options)
                .stdin(Stdio::from(ours))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .unwrap();
            feeder.join().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{size} {options:?}: {}",
                stderr(&out)
            );
            let want = sent.concat();
            assert!(
                out.stdout == want,
                "{size} {options:?}: {} of {} bytes",
                out.stdout.len(),
                want.len()
            );
        }
    }
}

#[test]
fn every_byte_reaches_a_seqpacket_socket_and_records_stay_records() {
    for size in RECORD_SIZES {
        // From a pipe: every byte, in order, in records of any size.
        for options in [&["-q"][..], &["-q", "-C"], &["-q", "-B", "1M"]] {
            let (ours, theirs) = seqpacket_pair();
            let receiver = receive_all(theirs);
            let input = data(size * RECORDS);
            let mut child = pv(options)
                .stdin(Stdio::piped())
                .stdout(Stdio::from(ours))
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let feed = input.clone();
            let feeder = std::thread::spawn(move || stdin.write_all(&feed).unwrap());
            feeder.join().unwrap();
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            let status = child.wait().unwrap();
            assert_eq!(status.code(), Some(0), "{size} {options:?}: {err}");
            let got = receiver.join().unwrap().concat();
            assert!(
                got == input,
                "{size} {options:?}: {} of {} bytes",
                got.len(),
                input.len()
            );
        }
        // From one SEQPACKET socket to another: the same records.
        let (ours_in, theirs_in) = seqpacket_pair();
        let (ours_out, theirs_out) = seqpacket_pair();
        let sent = records(size);
        let feeder = send_all(theirs_in, sent.clone());
        let receiver = receive_all(theirs_out);
        let out = Command::new(env!("CARGO_BIN_EXE_pipespeed"))
            .args(["pv", "-q"])
            .stdin(Stdio::from(ours_in))
            .stdout(Stdio::from(ours_out))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        feeder.join().unwrap();
        assert_eq!(out.status.code(), Some(0), "{size}: {}", stderr(&out));
        let got = receiver.join().unwrap();
        assert!(
            got == sent,
            "{size}: {} records came for {}",
            got.len(),
            sent.len()
        );
    }
}

/// pv into a record socket reads a stream into a buffer of `-B` bytes: a
/// large one is reserved, not touched (it was zeroed whole first: `-B 1G`
/// for 4 KiB of input held 1 GiB of memory).
#[test]
fn a_large_buffer_into_a_seqpacket_socket_is_not_touched_whole() {
    let (ours, theirs) = seqpacket_pair();
    let mut child = pv(&["-q", "-B", "1G"])
        .stdin(Stdio::piped())
        .stdout(Stdio::from(ours))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&data(4096)).unwrap();
    // Once the bytes are through, the buffer is in use: pv still runs,
    // its stdin open, and its peak memory can be read.
    let mut buf = vec![0u8; 8192];
    let mut got = 0;
    while got < 4096 {
        let (n, _) = recv(&theirs, &mut buf[..], RecvFlags::TRUNC).unwrap();
        assert!(n > 0, "pv ended early");
        got += n;
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let peak_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    assert!(peak_kib < 256 * 1024, "pv's peak memory: {peak_kib} KiB");
}

/// Records of 1 byte to 4 MiB (as large as this user's sockets take),
/// `SOCK_SEQPACKET` and `SOCK_DGRAM`: byte for byte into a pipe, one
/// record for one into a socket of the same kind, whatever the buffer.
#[test]
fn records_of_every_size_arrive_whole() {
    for options in [
        &["-q"][..],
        &["-q", "-C"],
        &["-q", "-B", "4K"],
        &["-f", "-b"],
    ] {
        super::common::records::arrive_whole(&format!("{options:?}"), |stdin, stdout| {
            pv(options)
                .stdin(stdin)
                .stdout(stdout)
                .stderr(Stdio::piped())
                .output()
                .unwrap()
        });
    }
}
