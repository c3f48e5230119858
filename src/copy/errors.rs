//! What an error of a mechanism's call means: a refusal of the
//! mechanism, or a failure, and of which side.

use std::io;

use super::Side;

/// How a mechanism's loop ended.
pub(super) enum Outcome {
    /// The input ended, or the limit was reached.
    Done,
    /// The kernel refused the mechanism on its first call.
    Refused(io::Error),
    /// Any other error, from the side given when the call says which.
    Broke(io::Error, Option<Side>),
}

/// The side an error of a call that both reads and writes must come from,
/// when its kind says so (no space, the reader gone, ...).
pub(super) fn side_of(err: &io::Error) -> Option<Side> {
    use rustix::io::Errno;
    let output = [
        Errno::PIPE,
        Errno::NOSPC,
        Errno::DQUOT,
        Errno::FBIG,
        Errno::ROFS,
    ];
    output
        .iter()
        .any(|e| err.raw_os_error() == Some(e.raw_os_error()))
        .then_some(Side::Output)
}

/// A second `io::Error` equal to `err` for the record (`io::Error` is not
/// `Clone`).
pub(super) fn same_error(err: &io::Error) -> io::Error {
    match err.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(err.kind(), err.to_string()),
    }
}

/// The errors that mean "this mechanism does not work for these two
/// descriptors", when they come on the first call.
pub(crate) fn is_refusal(err: &io::Error) -> bool {
    use rustix::io::Errno;
    [
        Errno::INVAL,
        Errno::NOSYS,
        Errno::XDEV,
        Errno::OPNOTSUPP,
        Errno::BADF,
        Errno::PERM,
    ]
    .iter()
    .any(|e| err.raw_os_error() == Some(e.raw_os_error()))
}
