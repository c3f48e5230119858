//! Copies each file named on the command line (or stdin) to stdout with
//! the copy engine and says on stderr which mechanism moved the bytes:
//!
//! ```sh
//! cargo run --release --example copy -- FILE | cat > /dev/null
//! ```

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::process::ExitCode;

use pipespeed::copy::{Copier, CopyOptions};

fn main() -> ExitCode {
    // COPY_FORCE=splice-pipe (or any other mechanism's name) starts there.
    let force = std::env::var("COPY_FORCE")
        .ok()
        .map(|name| serde_json::from_value(serde_json::Value::String(name)))
        .transpose();
    let force = match force {
        Ok(force) => force,
        Err(err) => {
            eprintln!("copy: COPY_FORCE: {err}");
            return ExitCode::from(2);
        }
    };
    let mut copier = Copier::new(CopyOptions {
        force,
        ..CopyOptions::default()
    });
    let stdout = io::stdout();
    let mut status = ExitCode::SUCCESS;
    let names: Vec<String> = std::env::args().skip(1).collect();
    let names = if names.is_empty() {
        vec!["-".to_string()]
    } else {
        names
    };
    for name in names {
        let result = if name == "-" {
            copier.copy(io::stdin().as_fd(), stdout.as_fd())
        } else {
            match File::open(&name) {
                Ok(file) => copier.copy(&file, stdout.as_fd()),
                Err(err) => {
                    eprintln!("copy: {name}: {err}");
                    status = ExitCode::FAILURE;
                    continue;
                }
            }
        };
        match result {
            Ok(copied) => {
                eprintln!(
                    "copy: {name}: {} bytes by {}",
                    copied.bytes, copied.mechanism
                );
                for f in &copied.fallbacks {
                    eprintln!(
                        "copy: {name}: {} gave way after {} bytes: {}",
                        f.from, f.moved, f.cause
                    );
                }
            }
            Err(err) => {
                eprintln!("copy: {name}: {err}");
                return ExitCode::FAILURE;
            }
        }
    }
    status
}
