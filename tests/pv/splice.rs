//! Page references: spliced, a file reaches the reader as references to
//! its page-cache pages, so a file overwritten in place after pv has
//! exited, before the reader has read, shows the reader the new bytes.
//! `--no-splice` (`-C`) copies instead: the reader gets the bytes of when
//! pv ran. Between two pipes, pv splices, and grows both pipes itself.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::Stdio;

use super::{data, pv, stderr};

/// pv's output pipe, filled by `pv -q options f`, read only after pv has
/// exited and `f` has been overwritten in place: `(old, read)`, or `None`
/// (a skip, said) when the pipe cannot hold the file.
fn read_after_overwrite(options: &[&str]) -> Option<(Vec<u8>, Vec<u8>)> {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    // Above the size the copy engine copies by read/write (32 KiB), within
    // one 64 KiB pipe.
    let old = vec![b'o'; 48 * 1024];
    std::fs::write(&f, &old).unwrap();
    let (mut reader, writer) = std::io::pipe().unwrap();
    // A user past pipe-user-pages-soft gets 8 KiB pipes: pv would block.
    let size = rustix::pipe::fcntl_setpipe_size(&writer, 64 * 1024).unwrap_or(0);
    if size < old.len() {
        crate::common::skip(
            "pipe_quota",
            &format!("a pipe of 64 KiB was refused (pipe quota used up?), got {size}"),
        );
        return None;
    }
    let out = pv(&[&["-q"], options, &[f.to_str().unwrap()]].concat())
        .stdin(Stdio::null())
        .stdout(writer)
        .output()
        .unwrap();
    assert!(out.status.success(), "{options:?}: {}", stderr(&out));
    // In place: the same page-cache pages, not a new file.
    let mut file = OpenOptions::new().write(true).open(&f).unwrap();
    file.write_all(&vec![b'n'; old.len()]).unwrap();
    drop(file);
    let mut got = Vec::new();
    reader.read_to_end(&mut got).unwrap();
    Some((old, got))
}

#[test]
fn no_splice_gives_the_reader_the_bytes_of_when_pv_ran() {
    for option in ["--no-splice", "-C"] {
        let Some((old, got)) = read_after_overwrite(&[option]) else {
            return;
        };
        assert!(got == old, "{option}: the reader saw later bytes");
    }
    // Spliced, the reader may see either (6.18 shows it the new bytes),
    // but never a mixture of lengths.
    if let Some((old, got)) = read_after_overwrite(&[]) {
        assert_eq!(got.len(), old.len());
    }
}

/// `pv -q` between two pipes the test holds the other ends of, both at
/// the kernel's default size (as a source that never grows its pipe
/// leaves it, or one that has not yet when pv starts, as pv 1.12 finds
/// `uutils cat`'s when it wins that race: docs/pv.md, "Speed against
/// pv 1.12"); `moved` bytes sent through it and read back, then `look`
/// called with pv's pid and the test's ends while pv still runs; or
/// `None` (a skip, said) where this user's pipes cannot grow.
fn between_pipes(moved: usize, look: impl FnOnce(u32, &OwnedFd, &OwnedFd)) -> Option<()> {
    let max = pipespeed::sys::pipe_max_size().unwrap_or(0);
    let (_r, scratch) = std::io::pipe().unwrap();
    let grown = rustix::pipe::fcntl_setpipe_size(&scratch, 256 * 1024).unwrap_or(0);
    if max < 256 * 1024 || grown < 256 * 1024 {
        crate::common::skip(
            "pipe_quota",
            &format!("pipes cannot grow to 256 KiB here (pipe-max-size {max}, got {grown})"),
        );
        return None;
    }
    let (in_r, in_w) = std::io::pipe().unwrap();
    let (mut out_r, out_w) = std::io::pipe().unwrap();
    let child = pv(&["-q"])
        .stdin(in_r)
        .stdout(out_w)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = data(moved);
    let writer = {
        let (bytes, mut in_w) = (bytes.clone(), in_w.try_clone().unwrap());
        std::thread::spawn(move || in_w.write_all(&bytes).unwrap())
    };
    let mut got = vec![0u8; moved];
    out_r.read_exact(&mut got).unwrap();
    writer.join().unwrap();
    assert!(got == bytes, "the bytes came out changed");
    let (in_w, out_r) = (OwnedFd::from(in_w), OwnedFd::from(out_r));
    look(child.id(), &in_w, &out_r);
    drop(in_w);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    Some(())
}

#[test]
fn pv_grows_its_input_and_output_pipes_whatever_the_source_did() {
    between_pipes(512 * 1024, |_, input, output| {
        let size = |fd| rustix::pipe::fcntl_getpipe_size(fd).unwrap();
        // Grown once 64 KiB had gone through (the copy engine's rule),
        // to pipe-max-size or what this user's pipe budget gave.
        assert!(
            size(input) > 64 * 1024,
            "input pipe left at {}",
            size(input)
        );
        assert!(
            size(output) > 64 * 1024,
            "output pipe left at {}",
            size(output)
        );
    });
}

#[test]
fn pv_moves_pipe_to_pipe_without_reading_the_bytes() {
    let moved = 4 << 20;
    between_pipes(moved, |pid, _, _| {
        // rchar and wchar count read(2) and write(2), not splice(2).
        let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
        let field = |name: &str| -> u64 {
            io.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse().ok())
                .unwrap()
        };
        let (read, written) = (field("rchar:"), field("wchar:"));
        assert!(
            read < moved as u64 / 4 && written < moved as u64 / 4,
            "pv read {read} and wrote {written} bytes of {moved} moved"
        );
    });
}
