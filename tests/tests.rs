//! The integration tests, one binary (as ripgrep's): each module was a
//! binary of its own, and each binary linked the whole library again.
//!
//! Two files stay binaries of their own (Cargo.toml), each for state a
//! whole process shares with every test running beside it:
//! - `cat`: its in-place tests lower the file size limit
//!   (`RLIMIT_FSIZE`) for the process and everything it starts after;
//! - `quota`: it spends the user's pipe budget, which every process of
//!   the user shares, so nothing else may make pipes meanwhile (Cargo
//!   runs test binaries one after another).
//!
//! `copy_fds` counts the process's descriptors under a low limit: it runs
//! itself again in a process of its own (`common::in_a_process_of_its_own`).

#![allow(clippy::unwrap_used)]

mod common;
mod fixtures;

mod charts;
mod cli;
mod compare;
mod contend;
mod copy;
mod copy_fds;
mod doc_lists;
mod ends;
mod generate;
mod html;
mod interrupt;
mod ipc;
mod ipc_report;
mod kernels;
mod kinds_verdict;
mod ladder;
mod latency;
mod layers;
mod profile;
mod pv;
mod report;
mod results;
mod shapes;
mod sizes;
mod stdio;
mod tee;
mod top;
mod verdict;
mod watchdog;
mod yes;
mod zero_copy;
