//! A socket that keeps record boundaries (`SOCK_SEQPACKET`, `SOCK_DGRAM`)
//! at either end: a read shorter than a record drops the rest of it, and a
//! write longer than the socket takes is refused (`EMSGSIZE`). Every byte
//! must arrive, in order, with status 0, whether cat splices or not, and
//! with an option that sends the bytes through the formatter.

use super::*;
use rustix::net::{
    AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType, recv, send, socketpair,
};
use std::os::fd::OwnedFd;

/// Record sizes: one byte, the remainder of 64 KiB by 5000-byte records
/// (a splice asked for what was left before the copy's pause cut a record
/// there), a page, the record size of the issue, and a default pipe's
/// worth.
const RECORD_SIZES: [usize; 5] = [1, 536, 4096, 5000, 65536];
const COUNT: usize = 50;

fn pair(kind: SocketType) -> (OwnedFd, OwnedFd) {
    socketpair(AddressFamily::UNIX, kind, SocketFlags::CLOEXEC, None).unwrap()
}

/// `COUNT` records of `size` bytes, each of one letter (which `-v` shows
/// as it is), the letter changing from record to record.
fn records(size: usize) -> Vec<Vec<u8>> {
    (0..COUNT)
        .map(|i| vec![b'A' + (i % 26) as u8; size])
        .collect()
}

/// Sends `records` on `fd` from a thread, then an empty record (the end
/// of a datagram socket, whose peer's close is no end), then closes it.
fn send_all(fd: OwnedFd, records: Vec<Vec<u8>>) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        for record in records.iter().chain([&Vec::new()]) {
            // cat may have failed and gone: the assertions on its outcome
            // say so.
            if send(&fd, record, SendFlags::empty()).is_err() {
                return;
            }
        }
    })
}

/// The records received on `fd` until the end; a record cut by the
/// buffer fails the test.
fn recv_all(fd: &OwnedFd) -> Vec<Vec<u8>> {
    let mut buf = vec![0u8; 4 << 20];
    let mut got = Vec::new();
    loop {
        let (n, len) = recv(fd, &mut buf[..], RecvFlags::TRUNC).unwrap();
        assert_eq!(n, len, "a record of {len} bytes was cut");
        if n == 0 {
            return got;
        }
        got.push(buf[..n].to_vec());
    }
}

/// `pipespeed cat ARGS`, spliced or not, on the given ends.
fn spawn(args: &[&str], no_splice: bool, stdin: Stdio, stdout: Stdio) -> Child {
    let mut cmd = Command::new(EXE);
    cmd.arg("cat")
        .args(args)
        .env("PIPESPEED_NO_SPLICE", if no_splice { "1" } else { "0" })
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

/// Every way through cat: plain (spliced, or not) and formatted.
const WAYS: [(&[&str], bool); 4] = [(&[], false), (&[], true), (&["-v"], false), (&["-v"], true)];

#[test]
fn every_record_from_a_record_socket_arrives_whole() {
    for kind in [SocketType::SEQPACKET, SocketType::DGRAM] {
        for size in RECORD_SIZES {
            for (args, no_splice) in WAYS {
                let what = format!("{kind:?} {size} {args:?} no_splice={no_splice}");
                let (ours, theirs) = pair(kind);
                let child = spawn(args, no_splice, Stdio::from(theirs), Stdio::piped());
                let sent = records(size);
                let sender = send_all(ours, sent.clone());
                let out = child.wait_with_output().unwrap();
                sender.join().unwrap();
                assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{what}");
                assert!(out.status.success(), "{what}: {:?}", out.status);
                assert_eq!(out.stdout.len(), size * COUNT, "{what}");
                assert!(out.stdout == sent.concat(), "{what}: bytes differ");
            }
        }
    }
}

#[test]
fn records_go_to_a_record_socket_one_for_one() {
    for size in RECORD_SIZES {
        for (args, no_splice) in WAYS {
            let what = format!("{size} {args:?} no_splice={no_splice}");
            let (ours_in, theirs_in) = pair(SocketType::SEQPACKET);
            let (ours_out, theirs_out) = pair(SocketType::SEQPACKET);
            let mut child = spawn(
                args,
                no_splice,
                Stdio::from(theirs_in),
                Stdio::from(theirs_out),
            );
            let sent = records(size);
            let sender = send_all(ours_in, sent.clone());
            let got = recv_all(&ours_out);
            let status = child.wait().unwrap();
            sender.join().unwrap();
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            assert_eq!(stderr, "", "{what}");
            assert!(status.success(), "{what}: {status:?}");
            assert!(got == sent, "{what}: the records differ");
        }
    }
}

/// A file larger than a record socket takes in one record (212992 bytes
/// of send buffer by default): written in records it takes, not refused
/// as "Message too long", as GNU cat 9.10's 256 KiB writes are.
#[test]
fn a_large_file_goes_to_a_record_socket_in_records_it_takes() {
    let dir = Dir::new();
    let text = large_text();
    let path = dir.write("large", &text);
    for (args, no_splice) in WAYS {
        let what = format!("{args:?} no_splice={no_splice}");
        let (ours, theirs) = pair(SocketType::SEQPACKET);
        let mut all: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        all.push(path.as_os_str());
        let mut cmd = Command::new(EXE);
        cmd.arg("cat")
            .args(all)
            .env("PIPESPEED_NO_SPLICE", if no_splice { "1" } else { "0" })
            .stdin(Stdio::null())
            .stdout(Stdio::from(theirs))
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        drop(cmd);
        let got = recv_all(&ours).concat();
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(stderr, "", "{what}");
        assert!(status.success(), "{what}: {status:?}");
        let expected = if args.is_empty() {
            text.clone()
        } else {
            let mut to_pipe = Command::new(EXE);
            to_pipe.arg("cat").args(args).arg(&path);
            to_pipe.output().unwrap().stdout
        };
        assert_eq!(got.len(), expected.len(), "{what}");
        assert!(got == expected, "{what}: bytes differ");
    }
}

/// Records of 1 byte to 4 MiB (as large as this user's sockets take),
/// every way through cat: byte for byte into a pipe, one record for one
/// into a socket of the same kind.
#[test]
fn records_of_every_size_arrive_whole() {
    for (args, no_splice) in WAYS {
        common::records::arrive_whole(
            &format!("{args:?} no_splice={no_splice}"),
            |stdin, stdout| {
                spawn(args, no_splice, stdin, stdout)
                    .wait_with_output()
                    .unwrap()
            },
        );
    }
}
