//! The library alone: copies standard input to standard output with
//! pipespeed's copy engine and says how, as `cat` would with no option.
//! It needs none of the command line's crates, so a program like it builds
//! with `pipespeed = { ..., default-features = false }` (docs/architecture.md,
//! "The library", has the build times):
//!
//! ```sh
//! cargo run --example library_only --no-default-features < Cargo.toml | wc -c
//! ```

use std::io;
use std::process::ExitCode;

fn main() -> ExitCode {
    match pipespeed::copy::copy(io::stdin(), io::stdout()) {
        Ok(copied) => {
            eprintln!("copied {} bytes by {}", copied.bytes, copied.mechanism);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("copy: {e}");
            ExitCode::FAILURE
        }
    }
}
