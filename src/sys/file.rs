//! What a file descriptor refers to, and the calls that copy between
//! files inside the kernel.

use std::io;
use std::os::fd::AsFd;

use rustix::fs::{FileType, fstat};

/// What kind of file a descriptor refers to, as far as moving bytes is
/// concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FdKind {
    /// A regular file.
    Regular,
    /// A pipe or FIFO.
    Pipe,
    /// A socket.
    Socket,
    /// A terminal (a character device for which `isatty` holds).
    Tty,
    /// Any other character device (`/dev/null`, `/dev/zero`, ...).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A directory.
    Directory,
    /// Anything else (symbolic links opened with `O_PATH`, unknown types).
    Other,
}

/// The facts about a descriptor that the copy engine and `cat` use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdInfo {
    /// What it is.
    pub kind: FdKind,
    /// `st_size`: meaningful for regular files only (0 for procfs files,
    /// whose size is unknown until read).
    pub size: u64,
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

impl FdInfo {
    /// Whether both describe the same file (same device and inode).
    pub fn same_file(&self, other: &FdInfo) -> bool {
        self.dev == other.dev && self.ino == other.ino
    }
}

/// `fstat(fd)` (and `isatty` for character devices), reduced to [`FdInfo`].
///
/// # References
///  - [fstat(2)](https://man7.org/linux/man-pages/man2/fstat.2.html)
#[doc(alias = "fstat")]
pub fn fd_info(fd: impl AsFd) -> io::Result<FdInfo> {
    let fd = fd.as_fd();
    let st = fstat(fd)?;
    let kind = match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => FdKind::Regular,
        FileType::Fifo => FdKind::Pipe,
        FileType::Socket => FdKind::Socket,
        FileType::CharacterDevice if rustix::termios::isatty(fd) => FdKind::Tty,
        FileType::CharacterDevice => FdKind::CharDevice,
        FileType::BlockDevice => FdKind::BlockDevice,
        FileType::Directory => FdKind::Directory,
        _ => FdKind::Other,
    };
    Ok(FdInfo {
        kind,
        size: u64::try_from(st.st_size).unwrap_or(0),
        dev: st.st_dev,
        ino: st.st_ino,
    })
}

/// `copy_file_range(fd_in, off_in, fd_out, off_out, len, 0)`: copies up to
/// `len` bytes between two files inside the kernel (a reflink or a
/// server-side copy where the filesystem can). `None` offsets use and
/// advance the file positions. Returns 0 at the end of the input, and also
/// where a filesystem cannot say how long a file is (procfs).
///
/// # References
///  - [copy_file_range(2)](https://man7.org/linux/man-pages/man2/copy_file_range.2.html)
pub fn copy_file_range(
    fd_in: impl AsFd,
    off_in: Option<&mut u64>,
    fd_out: impl AsFd,
    off_out: Option<&mut u64>,
    len: usize,
) -> io::Result<usize> {
    Ok(rustix::fs::copy_file_range(
        fd_in, off_in, fd_out, off_out, len,
    )?)
}

/// Whether the filesystem of `fd` may make a copy itself when
/// `copy_file_range(2)` asks it to (a reflink on btrfs or XFS, a copy on
/// the server for NFS, SMB or Ceph): `false` for ext2/3/4 and tmpfs,
/// which have neither, so that the kernel copies through a pipe of its
/// own of 16 pages (`splice_direct_to_actor`, fs/splice.c) and a copy
/// through a larger pipe of the caller's is faster (docs/cat.md). `true`
/// when `fstatfs` fails: then copy_file_range is tried.
///
/// # References
///  - [fstatfs(2)](https://man7.org/linux/man-pages/man2/fstatfs.2.html)
#[doc(alias = "fstatfs")]
pub fn copies_itself(fd: impl AsFd) -> bool {
    /// `EXT4_SUPER_MAGIC` (ext2 and ext3 share it) and `TMPFS_MAGIC`,
    /// from linux/magic.h.
    const NO_COPY_OFFLOAD: [i64; 2] = [0xEF53, 0x0102_1994];
    // (`f_type` is an i64 on x86-64, 32 bits wide on some others.)
    #[allow(clippy::unnecessary_cast)]
    rustix::fs::fstatfs(fd).map_or(true, |st| !NO_COPY_OFFLOAD.contains(&(st.f_type as i64)))
}

/// `sendfile(out_fd, in_fd, offset, count)`: copies up to `count` bytes
/// from a file (anything that can be mapped into the page cache) to any
/// descriptor inside the kernel. A `None` offset uses and advances the
/// input's file position.
///
/// # References
///  - [sendfile(2)](https://man7.org/linux/man-pages/man2/sendfile.2.html)
pub fn sendfile(
    out_fd: impl AsFd,
    in_fd: impl AsFd,
    offset: Option<&mut u64>,
    count: usize,
) -> io::Result<usize> {
    Ok(rustix::fs::sendfile(out_fd, in_fd, offset, count)?)
}

/// `close(fd)`, with its error: a file system that writes back late (NFS,
/// a full disk) may report a failed write only here, which dropping an
/// [`OwnedFd`](std::os::fd::OwnedFd) would ignore.
///
/// # References
///  - [close(2)](https://man7.org/linux/man-pages/man2/close.2.html)
#[allow(unsafe_code)]
pub fn close(fd: std::os::fd::OwnedFd) -> io::Result<()> {
    use std::os::fd::IntoRawFd;
    let raw = fd.into_raw_fd();
    // SAFETY: `raw` was owned by `fd`, which gave ownership up: nothing
    // else uses or closes it. Linux frees the descriptor even when close
    // fails, so it is never closed twice.
    if unsafe { libc::close(raw) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, Write};

    #[test]
    fn tmpfs_does_not_copy_by_itself() {
        let shm = tempfile::tempfile_in("/dev/shm").unwrap();
        assert!(!copies_itself(&shm));
    }

    #[test]
    fn kinds_of_common_descriptors() {
        let file = tempfile::tempfile().unwrap();
        assert_eq!(fd_info(&file).unwrap().kind, FdKind::Regular);
        let p = crate::sys::pipe().unwrap();
        assert_eq!(fd_info(&p.read).unwrap().kind, FdKind::Pipe);
        let null = std::fs::File::open("/dev/null").unwrap();
        assert_eq!(fd_info(&null).unwrap().kind, FdKind::CharDevice);
        let dir = std::fs::File::open("/").unwrap();
        assert_eq!(fd_info(&dir).unwrap().kind, FdKind::Directory);
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(fd_info(&a).unwrap().kind, FdKind::Socket);
    }

    #[test]
    fn copy_file_range_and_sendfile_move_file_bytes() {
        let mut src = tempfile::tempfile().unwrap();
        src.write_all(b"0123456789").unwrap();
        src.rewind().unwrap();
        let dst = tempfile::tempfile().unwrap();
        assert_eq!(copy_file_range(&src, None, &dst, None, 4).unwrap(), 4);
        assert_eq!(sendfile(&dst, &src, None, 100).unwrap(), 6);
        let info = fd_info(&dst).unwrap();
        assert_eq!(info.size, 10);
        assert!(info.same_file(&fd_info(&dst).unwrap()));
        assert!(!info.same_file(&fd_info(&src).unwrap()));
        let mut out = [0u8; 10];
        rustix::io::pread(&dst, &mut out, 0).unwrap();
        assert_eq!(&out, b"0123456789");
    }
}
