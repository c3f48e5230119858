//! The `pipespeed` binary: what only a program's own image may hold, then
//! the command line ([`pipespeed::cli`]).

use std::process::ExitCode;

// What the parent left closed or ignored, read before the Rust runtime
// reopens closed descriptors on /dev/null and ignores SIGPIPE: the C
// library runs `.init_array` first (see `pipespeed::sys::inherited`). It
// stays in the binary: a static of the library's would be linked in only
// if something else in its object were used.
#[used]
#[allow(unsafe_code)]
// SAFETY: `record` takes no arguments and is safe to run before `main`: it
// makes only fcntl and sigaction calls and stores one atomic byte.
#[unsafe(link_section = ".init_array")]
static RECORD_INHERITED: extern "C" fn() = pipespeed::sys::inherited::record;

fn main() -> ExitCode {
    pipespeed::cli::main()
}
