//! No descriptor leaks: many copies, every mechanism, under a limit of a
//! few descriptors more than the test needs. Alone in a process of its
//! own, so no other test opens descriptors meanwhile or meets the limit.

#![allow(clippy::unwrap_used)]

use std::fs::File;
use std::io::{Seek, Write};

use crate::common;
use pipespeed::copy::{Copier, CopyOptions, Mechanism};
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").unwrap().count() as u64
}

#[test]
fn copies_leave_no_descriptor_open() {
    if !common::in_a_process_of_its_own() {
        return;
    }
    let mut src = tempfile::tempfile().unwrap();
    src.write_all(&vec![7u8; 100_000]).unwrap();
    let null = File::create("/dev/null").unwrap();
    let dst = tempfile::tempfile().unwrap();
    let before = open_fds();
    let old = getrlimit(Resource::Nofile);
    // Room for the intermediate pipe and a little more, not for a leak of
    // one descriptor per copy.
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(before + 6),
            maximum: old.maximum,
        },
    )
    .unwrap();
    let mechanisms = [
        None,
        Some(Mechanism::CopyFileRange),
        Some(Mechanism::Sendfile),
        Some(Mechanism::Splice),
        Some(Mechanism::SplicePipe),
        Some(Mechanism::ReadWrite),
    ];
    for round in 0..50 {
        for force in mechanisms {
            for out in [&null, &dst] {
                src.rewind().unwrap();
                let options = CopyOptions {
                    force,
                    ..CopyOptions::default()
                };
                let copied = Copier::new(options).copy(&src, out);
                assert!(copied.is_ok(), "round {round}, {force:?}: {copied:?}");
            }
        }
    }
    setrlimit(Resource::Nofile, old).unwrap();
    assert_eq!(open_fds(), before);
}
