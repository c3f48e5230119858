//! What the checks and runs move bytes through: a file that has no name
//! (so that nothing is left behind, whatever ends the process) and a
//! pair of connected unix stream sockets.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;

use rustix::net::{AddressFamily, SocketFlags, SocketType, socketpair};

/// A regular file of `len` bytes of `byte`, in `$TMPDIR` (or /tmp), with
/// no name (`O_TMPFILE`, else created and unlinked at once). Its pages
/// are in the page cache once written, which is what splice and sendfile
/// take from.
pub(crate) fn scratch_file(len: usize, byte: u8) -> io::Result<File> {
    let dir = std::env::temp_dir();
    let file = tempfile::tempfile_in(&dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "cannot make a scratch file in {}: {}",
                dir.display(),
                crate::quote::strerror(&e)
            ),
        )
    })?;
    fill(&file, len, byte)?;
    Ok(file)
}

/// Writes `len` bytes of `byte` at the start of `file`.
fn fill(file: &File, len: usize, byte: u8) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let chunk = vec![byte; len.clamp(1, 1 << 20)];
    let mut done = 0;
    while done < len {
        let n = chunk.len().min(len - done);
        file.write_all_at(&chunk[..n], done as u64)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot write a scratch file: {e}")))?;
        done += n;
    }
    Ok(())
}

/// Two connected unix stream sockets: what one writes, the other reads.
pub(crate) fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    socketpair(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )
    .map_err(|e| {
        let e = io::Error::from(e);
        io::Error::new(
            e.kind(),
            format!(
                "cannot make a unix socket pair: {}",
                crate::quote::strerror(&e)
            ),
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_scratch_file_holds_its_bytes_and_has_no_name() {
        let file = scratch_file(5000, 7).unwrap();
        let mut got = vec![0u8; 6000];
        let n = file.read_at(&mut got, 0).unwrap();
        assert_eq!(n, 5000);
        assert!(got[..n].iter().all(|&b| b == 7));
        let st = rustix::fs::fstat(&file).unwrap();
        assert_eq!(st.st_nlink, 0, "no name is left to remove");
    }

    #[test]
    fn a_socket_pair_carries_bytes() {
        let (a, b) = socket_pair().unwrap();
        rustix::io::write(&a, b"hi").unwrap();
        let mut got = [0u8; 2];
        rustix::io::read(&b, &mut got).unwrap();
        assert_eq!(&got, b"hi");
    }
}
