//! Page references: spliced, a file reaches the reader as references to
//! its page-cache pages, so a file overwritten in place after pv has
//! exited, before the reader has read, shows the reader the new bytes.
//! `--no-splice` (`-C`) copies instead: the reader gets the bytes of when
//! pv ran.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::process::Stdio;

use super::{pv, stderr};

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
