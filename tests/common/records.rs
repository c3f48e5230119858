//! Records of 1 byte to 4 MiB through a socket that keeps record
//! boundaries (`SOCK_SEQPACKET`, `SOCK_DGRAM`), for the tests of every
//! command that reads one (cat, tee, pv): each record must come out
//! whole, one write for one record into a record socket, byte for byte
//! into a file or a pipe.
//!
//! An AF_UNIX record is bounded by its sender's send buffer (a little
//! less than `SO_SNDBUF`, which is twice what is asked, at most twice
//! `net.core.wmem_max` unless root forces it with `SO_SNDBUFFORCE`): the
//! sockets here get the largest buffer the user running the test may set,
//! every size this allows is sent, and what it does not allow is said
//! where the test run shows it (as a skip), never silently left out.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write;
use std::os::fd::OwnedFd;
use std::process::{Output, Stdio};
use std::thread::JoinHandle;

use rustix::io::Errno;
use rustix::net::{
    AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType, recv, send, socketpair, sockopt,
};

/// The largest record the tests send.
pub const LARGEST: usize = 4 << 20;

/// The record sizes, where a reader could cut: a byte, a splice's 536, a
/// page, a default pipe's worth, around the 128 KiB a read took, the
/// issue's 150,010 and 200,000, past the 256 KiB of a protocol that does
/// not tell lengths, past a MiB, and 4 MiB.
const SIZES: [usize; 12] = [
    1,
    536,
    4096,
    65_536,
    131_071,
    131_073,
    150_010,
    200_000,
    262_145,
    (1 << 20) + 1,
    LARGEST - 1,
    LARGEST,
];

/// `kind`'s name, as socket(2) spells it.
pub fn name(kind: SocketType) -> &'static str {
    match kind {
        SocketType::SEQPACKET => "SOCK_SEQPACKET",
        SocketType::DGRAM => "SOCK_DGRAM",
        _ => "another socket type",
    }
}

/// A connected pair of `kind`, each end's send buffer as large as this
/// user may make it for [`LARGEST`] records: `SO_SNDBUFFORCE` (root),
/// else `SO_SNDBUF` (capped by `net.core.wmem_max`).
pub fn pair(kind: SocketType) -> (OwnedFd, OwnedFd) {
    let (a, b) = socketpair(AddressFamily::UNIX, kind, SocketFlags::CLOEXEC, None).unwrap();
    for end in [&a, &b] {
        let want = LARGEST + (64 << 10);
        if sockopt::set_socket_send_buffer_size_force(end, want).is_err() {
            sockopt::set_socket_send_buffer_size(end, want).unwrap();
        }
    }
    (a, b)
}

/// Whether a pair made by [`pair`] takes a record of `len` bytes.
fn takes(kind: SocketType, len: usize) -> bool {
    let (a, _b) = pair(kind);
    send(&a, &vec![0u8; len], SendFlags::DONTWAIT).is_ok_and(|n| n == len)
}

/// The sizes of the records a test sends on sockets of `kind`: every one
/// of 1 byte to [`LARGEST`] that this user's sockets take, smallest to
/// largest and back (a record after a larger one, too). Says which sizes
/// are covered, and, as a skip, which are not and why.
pub fn sizes(kind: SocketType) -> Vec<usize> {
    let taken: Vec<usize> = SIZES.into_iter().filter(|&len| takes(kind, len)).collect();
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let _ = writeln!(
        std::io::stderr(),
        "covered: {test}: {} records of {taken:?} bytes",
        name(kind)
    );
    if taken.len() < SIZES.len() {
        let wmem_max = std::fs::read_to_string("/proc/sys/net/core/wmem_max").unwrap_or_default();
        super::skip(
            "large_records",
            &format!(
                "{} records above {} bytes: this user's send buffer is \
                 capped by net.core.wmem_max = {}",
                name(kind),
                taken.last().copied().unwrap_or(0),
                wmem_max.trim()
            ),
        );
    }
    let mut all = taken.clone();
    all.extend(taken.iter().rev().skip(1));
    all
}

/// The records of a test, of the given sizes, each different: printable
/// letters and no newline, so that cat's `-v` and `-s` leave them as
/// they are.
pub fn records(sizes: &[usize]) -> Vec<Vec<u8>> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            (0..len)
                .map(|j| b'a' + ((i * 7 + j / 4093 + j % 3) % 26) as u8)
                .collect()
        })
        .collect()
}

/// Sends `records` on `end` from a thread, then an empty record (the end
/// of the input, for a datagram socket too, whose peer's close is no
/// end), then closes it. The thread stops quietly when the reader has
/// gone (it may have failed: the assertions on its outcome say so), and
/// panics, saying the errno and the record's size, on any other error:
/// a send that failed otherwise was taken for the reader's fault ("records
/// of ... came for ...").
pub fn send_all(end: OwnedFd, records: Vec<Vec<u8>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        for record in records.iter().chain([&Vec::new()]) {
            let mut tries = 0;
            loop {
                match send(&end, record, SendFlags::empty()) {
                    Ok(n) => {
                        assert_eq!(
                            n,
                            record.len(),
                            "a record of {} bytes sent in part",
                            record.len()
                        );
                        break;
                    }
                    Err(Errno::PIPE | Errno::CONNREFUSED | Errno::CONNRESET | Errno::NOTCONN) => {
                        return;
                    }
                    // A large record needs memory in one piece (a
                    // high-order allocation), which a fragmented machine
                    // may find only after a while.
                    Err(Errno::NOBUFS) if tries < 50 => {
                        tries += 1;
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    Err(errno) => panic!(
                        "sending a record of {} bytes: {errno} (errno {})",
                        record.len(),
                        errno.raw_os_error()
                    ),
                }
            }
        }
    })
}

/// Receives records on `end` in a thread until an empty one (see
/// [`end_records`]); a record cut by the buffer fails the test.
pub fn recv_all(end: OwnedFd) -> JoinHandle<Vec<Vec<u8>>> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; LARGEST + 1];
        let mut got = Vec::new();
        loop {
            let (n, len) = recv(&end, &mut buf[..], RecvFlags::TRUNC).unwrap();
            assert_eq!(n, len, "a record of {len} bytes was cut");
            if n == 0 {
                return got;
            }
            got.push(buf[..n].to_vec());
        }
    })
}

/// Ends what [`recv_all`] receives, once the command writing to the
/// other end is done: an empty record sent on `writer` (a copy of the
/// command's end, kept by the test; a datagram socket's reader never
/// sees its peer close).
pub fn end_records(writer: &OwnedFd) {
    send(writer, b"", SendFlags::empty()).unwrap();
}

/// Says how `got` differs from `sent`, record by record, in one line.
pub fn differ(sent: &[Vec<u8>], got: &[Vec<u8>]) -> String {
    let lens = |records: &[Vec<u8>]| records.iter().map(Vec::len).collect::<Vec<_>>();
    format!("records of {:?} bytes came for {:?}", lens(got), lens(sent))
}

/// Records of every size [`sizes`] allows, `SOCK_SEQPACKET` and
/// `SOCK_DGRAM`, through a command that `run(stdin, stdout)` runs to its
/// end: byte for byte into a pipe, one record for one into a socket of
/// the same kind. `what` names the command in a failure.
pub fn arrive_whole(what: &str, run: impl Fn(Stdio, Stdio) -> Output) {
    for kind in [SocketType::SEQPACKET, SocketType::DGRAM] {
        let sent = records(&sizes(kind));
        let want = sent.concat();
        let what = format!("{} {what}", name(kind));
        let succeeded = |out: &Output| {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{what}: {:?}: {stderr}", out.status);
        };

        let (ours, theirs) = pair(kind);
        let sender = send_all(ours, sent.clone());
        let out = run(Stdio::from(theirs), Stdio::piped());
        sender.join().unwrap();
        succeeded(&out);
        assert!(
            out.stdout == want,
            "{what}: {} bytes of {}",
            out.stdout.len(),
            want.len()
        );

        let (ours_in, theirs_in) = pair(kind);
        let (ours_out, theirs_out) = pair(kind);
        let writer = theirs_out.try_clone().unwrap();
        let sender = send_all(ours_in, sent.clone());
        let receiver = recv_all(ours_out);
        let out = run(Stdio::from(theirs_in), Stdio::from(theirs_out));
        sender.join().unwrap();
        end_records(&writer);
        let got = receiver.join().unwrap();
        succeeded(&out);
        assert!(got == sent, "{what}: {}", differ(&sent, &got));
    }
}
