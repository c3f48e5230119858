//! System calls, named after their man pages, on top of [rustix].
//!
//! Every wrapper takes `impl AsFd`, returns `io::Result`, and turns the
//! kernel's terse refusals into errors that name the limit involved.

pub(crate) mod clock;
pub(crate) mod cpu;
pub(crate) mod facts;
pub(crate) mod file;
pub(crate) mod frozen;
pub(crate) mod hold;
pub mod inherited;
pub(crate) mod locale;
pub(crate) mod mq;
pub(crate) mod noise;
pub(crate) mod pipe;
pub(crate) mod process;
pub(crate) mod procfs;
pub(crate) mod replace;
pub(crate) mod rusage;
pub(crate) mod signal;
pub(crate) mod socket;
pub(crate) mod splice;
pub(crate) mod task;
pub(crate) mod uring;
pub(crate) mod zerocopy;

pub use cpu::{available_cpus, pin_to_cpu};
pub use facts::{SystemFacts, ThpMode};
pub use file::{FdInfo, FdKind, close, copies_itself, copy_file_range, fd_info, sendfile};
pub use mq::{MSGSIZE_MAX, mqueue_limit};
pub(crate) use noise::NoiseProbe;
pub use noise::RunNoise;
pub use pipe::{
    PipePair, fcntl_getpipe_size, fcntl_setpipe_size, pipe, pipe_max_size, set_nonblocking,
};
pub(crate) use rusage::UsageOf;
pub use rusage::{ResourceUsage, getrusage};
pub use splice::{SpliceFlags, ensure_write_end, splice, tee, vmsplice, vmsplice_checked};

/// `err`, of its kind, with what was being done in front: `{doing}: {err}`.
pub(crate) fn failed(
    doing: impl std::fmt::Display,
    err: impl Into<std::io::Error>,
) -> std::io::Error {
    let err = err.into();
    std::io::Error::new(err.kind(), format!("{doing}: {err}"))
}

/// For unit tests: `result`'s value, or `None` when the error says this
/// machine cannot (kind [`std::io::ErrorKind::Unsupported`]), after
/// writing `skipped: TEST: WHY` to the stderr handle (libtest captures
/// `eprintln!`); a failure with `PIPESPEED_REQUIRE_<WHAT>=1`, as
/// tests/common's `skip`, and for any other error.
#[cfg(test)]
pub(crate) fn available<T>(what: &str, result: std::io::Result<T>) -> Option<T> {
    use std::io::Write;
    match unavailable(what, result) {
        Ok(value) => Some(value),
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "skipped: {why}");
            None
        }
    }
}

/// [`available`]'s rule: the value, or why the test is skipped; panics
/// where it must fail.
#[cfg(test)]
fn unavailable<T>(what: &str, result: std::io::Result<T>) -> Result<T, String> {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    match result {
        Ok(value) => Ok(value),
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
            let var = format!("PIPESPEED_REQUIRE_{}", what.to_uppercase());
            assert!(
                std::env::var_os(&var).is_none_or(|v| v != "1"),
                "{test}: {what}: {e}, and {var}=1 requires the check"
            );
            Err(format!("{test}: {what}: {e}"))
        }
        Err(e) => panic!("{test}: {what}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    #[test]
    fn a_machine_that_cannot_is_a_skip_and_the_rest_a_value() {
        assert_eq!(super::unavailable("nothing", Ok::<_, io::Error>(5)), Ok(5));
        // ENOSYS is of kind Unsupported, as what the library refuses.
        let nosys = io::Error::from_raw_os_error(libc::ENOSYS);
        let why = super::unavailable::<()>("nothing", Err(nosys)).unwrap_err();
        assert!(
            why.ends_with("nothing: Function not implemented (os error 38)"),
            "{why}"
        );
    }

    #[test]
    #[should_panic(expected = "nothing: Operation not permitted")]
    fn any_other_error_fails_the_test() {
        let eperm = io::Error::from_raw_os_error(libc::EPERM);
        let _ = super::unavailable::<()>("nothing", Err(eperm));
    }
}
