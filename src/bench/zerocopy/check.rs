//! Every path's check in one place, and the rule that weighs a check by
//! the one it rests on.

use std::os::fd::AsFd;

use super::files::{
    check_file_to_pipe_with, check_pipe_to_file_with, check_sendfile_with, sendfile_file,
    splice_file, splice_into_file,
};
use super::path::Path;
use super::pipes::{
    check_pipe_to_socket_with, check_reused_buffer_with, check_tee, splice_into_socket,
};
use crate::bench::core::{CopyCheck, check_vmsplice};
use crate::buf::BufferOptions;
use crate::sys::uring::Uring;
use crate::sys::vmsplice_checked;

/// What `path`'s check finds on this kernel (`None` for read/write,
/// which copies by construction and is not checked).
pub fn check(path: Path) -> Option<CopyCheck> {
    Some(match path {
        Path::ReadWrite => return None,
        Path::Vmsplice => check_vmsplice(BufferOptions::default()),
        Path::FileToPipe => check_file_to_pipe_with("splice", splice_file),
        Path::Tee => check_tee(),
        Path::PipeToFile => check_pipe_to_file_with(splice_into_file),
        Path::Sendfile => check_sendfile_with(sendfile_file),
        Path::PipeToSocket => check_pipe_to_socket_with(splice_into_socket),
        Path::UringSplice => match Uring::new() {
            Ok(mut ring) => check_file_to_pipe_with("io_uring splice", |file, pipe, len| {
                ring.splice_from_file(file.as_fd(), 0, pipe.as_fd(), len)
            }),
            Err(e) => CopyCheck::Unknown {
                why: format!("unavailable: {}", crate::quote::strerror(&e)),
            },
        },
        Path::ReusedBuffer => check_reused_buffer_with(|fd, buf| vmsplice_checked(fd, buf)),
    })
}

/// Every path's check, in [`Path::ALL`]'s order, each weighed by
/// `weigh` (a splice out of a pipe rests on vmsplice's answer).
pub fn check_all() -> Vec<(Path, Option<CopyCheck>)> {
    let found: Vec<(Path, Option<CopyCheck>)> =
        Path::ALL.into_iter().map(|p| (p, check(p))).collect();
    weigh(found)
}

/// The checks of splice from a pipe (into a file, into a socket) fill
/// their pipe by vmsplice: where vmsplice copies, the pipe holds no page
/// of the buffer, and their "copies" says nothing of splice. They are
/// then unknown, with that reason.
pub(crate) fn weigh(mut found: Vec<(Path, Option<CopyCheck>)>) -> Vec<(Path, Option<CopyCheck>)> {
    let vmsplice = found
        .iter()
        .find(|(p, _)| *p == Path::Vmsplice)
        .and_then(|(_, f)| f.clone());
    if vmsplice == Some(CopyCheck::References) {
        return found;
    }
    for (path, check) in &mut found {
        if matches!(path, Path::PipeToFile | Path::PipeToSocket)
            && *check == Some(CopyCheck::Copies)
        {
            *check = Some(CopyCheck::Unknown {
                why: "vmsplice copies here, so the pipe held no page of the buffer to follow"
                    .into(),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::zerocopy::kernel_note;

    #[test]
    fn a_splice_from_a_pipe_that_holds_a_copy_is_unknown() {
        let found = vec![
            (Path::Vmsplice, Some(CopyCheck::Copies)),
            (Path::PipeToFile, Some(CopyCheck::Copies)),
            (Path::PipeToSocket, Some(CopyCheck::Copies)),
            (Path::Sendfile, Some(CopyCheck::Copies)),
        ];
        let weighed = weigh(found);
        assert!(matches!(weighed[1].1, Some(CopyCheck::Unknown { .. })));
        assert!(matches!(weighed[2].1, Some(CopyCheck::Unknown { .. })));
        assert_eq!(
            weighed[3].1,
            Some(CopyCheck::Copies),
            "sendfile rests on no vmsplice"
        );
    }

    #[test]
    fn with_vmsplice_passing_references_the_answers_stand() {
        let found = vec![
            (Path::Vmsplice, Some(CopyCheck::References)),
            (Path::PipeToFile, Some(CopyCheck::Copies)),
        ];
        assert_eq!(weigh(found.clone()), found);
    }

    #[test]
    fn vmsplice_passes_references_here() {
        assert_eq!(
            check(Path::Vmsplice),
            Some(CopyCheck::References),
            "{}",
            kernel_note()
        );
    }

    #[test]
    fn io_uring_splice_from_a_file_passes_references_here() {
        // io_uring may be off (io_uring_disabled, seccomp): a skip, said.
        if crate::sys::available("io_uring", Uring::new()).is_none() {
            return;
        }
        let found = check(Path::UringSplice);
        assert_eq!(found, Some(CopyCheck::References), "{}", kernel_note());
    }

    #[test]
    fn every_path_gives_an_answer_here_and_read_write_is_not_checked() {
        let found = check_all();
        assert_eq!(found.len(), Path::ALL.len());
        for (path, check) in found {
            match path {
                Path::ReadWrite => assert_eq!(check, None),
                _ => assert!(check.is_some(), "{path}"),
            }
        }
    }
}
