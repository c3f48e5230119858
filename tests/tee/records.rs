//! tee reading a socket that keeps record boundaries (`SOCK_SEQPACKET`,
//! `SOCK_DGRAM`): every record of 1 byte to 4 MiB comes out whole, byte
//! for byte into a file and a pipe, one record for one into a record
//! socket (a read into a 128 KiB buffer cut a 200,000-byte record to
//! 131,072 bytes, status 0).

use std::os::fd::OwnedFd;

use rustix::net::SocketType;

use super::*;
use common::records::{differ, end_records, name, pair, records, recv_all, send_all, sizes};

/// `pipespeed tee ARGS FILE` with `stdin` and `stdout`, in a fresh
/// directory: its status, stderr and what FILE holds.
fn tee_records(args: &[&str], stdin: OwnedFd, stdout: Stdio) -> (Output, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(EXE)
        .arg("tee")
        .args(args)
        .arg("file")
        .current_dir(dir.path())
        .stdin(Stdio::from(stdin))
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let file = std::fs::read(dir.path().join("file")).unwrap_or_default();
    (out, file)
}

#[test]
fn every_record_from_a_record_socket_reaches_a_file_and_a_pipe_whole() {
    for kind in [SocketType::SEQPACKET, SocketType::DGRAM] {
        let sent = records(&sizes(kind));
        let want = sent.concat();
        for args in [&[][..], &["-p"]] {
            let what = format!("{} {args:?}", name(kind));
            let (ours, theirs) = pair(kind);
            let sender = send_all(ours, sent.clone());
            let (out, file) = tee_records(args, theirs, Stdio::piped());
            sender.join().unwrap();
            assert_eq!(text(&out.stderr), "", "{what}");
            assert!(out.status.success(), "{what}: {:?}", out.status);
            assert!(
                out.stdout == want,
                "{what}: stdout has {} bytes of {}",
                out.stdout.len(),
                want.len()
            );
            assert!(
                file == want,
                "{what}: the file has {} bytes of {}",
                file.len(),
                want.len()
            );
        }
    }
}

#[test]
fn records_go_to_a_record_socket_one_for_one() {
    for kind in [SocketType::SEQPACKET, SocketType::DGRAM] {
        let what = name(kind);
        let sent = records(&sizes(kind));
        let (ours_in, theirs_in) = pair(kind);
        let (ours_out, theirs_out) = pair(kind);
        let writer = theirs_out.try_clone().unwrap();
        let sender = send_all(ours_in, sent.clone());
        let receiver = recv_all(ours_out);
        let (out, file) = tee_records(&[], theirs_in, Stdio::from(theirs_out));
        sender.join().unwrap();
        end_records(&writer);
        let got = receiver.join().unwrap();
        assert_eq!(text(&out.stderr), "", "{what}");
        assert!(out.status.success(), "{what}: {:?}", out.status);
        assert!(got == sent, "{what}: {}", differ(&sent, &got));
        assert!(file == sent.concat(), "{what}: the file differs");
    }
}
