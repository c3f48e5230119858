//! pipespeed: how fast are Linux pipes on this machine?
//!
//! A library and a `pipespeed` binary that reproduce, measure and explain
//! every step of Francesco Mazzoli's "How fast are Linux pipes anyway?"
//! (write/read, vmsplice, splice, huge pages, busy looping) on the machine
//! at hand.
//!
//! ```
//! use std::io::{Read, Write};
//!
//! // A pipe with a few bytes in it, its write end closed...
//! let src = pipespeed::sys::pipe()?;
//! std::fs::File::from(src.write).write_all(b"hello, pipe")?;
//! // ...copied into another pipe by the fastest mechanism the kernel
//! // takes for that pair (splice, for two pipes).
//! let dst = pipespeed::sys::pipe()?;
//! let copied = pipespeed::copy::copy(&src.read, &dst.write)?;
//! assert_eq!(copied.bytes, 11);
//! drop(dst.write);
//! let mut out = String::new();
//! std::fs::File::from(dst.read).read_to_string(&mut out)?;
//! assert_eq!(out, "hello, pipe");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Running a measurement: the ladder of two rungs, on a runner that
//! measures nothing (a real program passes [`Threads`](bench::core::Threads)
//! or a [`ProcessExecutor`](bench::ladder::ProcessExecutor); this one says
//! every run moved 1 GiB at 2 GiB/s), scheduled as `pipespeed bench` is:
//!
//! ```
//! use pipespeed::bench::core::{Cancel, Placement, RunError, Runner, Status, Warmup};
//! use pipespeed::bench::ladder::{Job, LadderConfig, Rung, Sample, run_ladder};
//! use pipespeed::sys::SystemFacts;
//!
//! struct Fixed;
//! impl Runner<Job> for Fixed {
//!     fn run(&mut self, _job: &Job) -> Result<Sample, RunError> {
//!         let (bytes, seconds, gib_s) = (1 << 30, 0.5, 2.0);
//!         Ok(Sample { bytes, seconds, gib_s, usage: None, noise: None, copy_check: None })
//!     }
//! }
//!
//! let facts = SystemFacts::collect();
//! let config = LadderConfig {
//!     rungs: vec![Rung::WriteRead, Rung::VmspliceSplice],
//!     runs: 3,
//!     max_runs: 3,
//!     bytes: Some(1 << 20),
//!     buf_size: 64 * 1024,
//!     pipe_size: None,
//!     placement: Placement::default_for(&facts),
//!     alternative: None,
//!     verify: false,
//!     seed: 1,
//!     target_seconds: 0.1,
//!     profile: false,
//!     warmup_rule: Warmup::exactly(1),
//! };
//! let result = run_ladder(&config, &facts, &mut Fixed, &Cancel::never(), &mut |_event| {});
//! assert!(!result.header.interrupted);
//! for rung in &result.rungs {
//!     assert_eq!(rung.status, Status::Ok, "{:?}", rung.reason);
//!     assert_eq!(rung.gib_s.runs, vec![2.0; 3]);
//!     assert_eq!(rung.median(), Some(2.0));
//! }
//! ```
//!
//! # Features
//!
//! - `cli` (on by default): the `pipespeed` binary and the SVG charts and
//!   HTML pages of [`report`] (`report::svg`, `report::html`), with the
//!   crates only they need (clap, clap_complete, clap_mangen, indicatif,
//!   plotters, anyhow). A program that uses the library alone depends on
//!   `pipespeed = { version = "0.1", default-features = false }` and
//!   builds 28 crates instead of 57 (docs/architecture.md, "The library",
//!   has the figures; `examples/library_only.rs` is such a program).
//!
//! # Tour
//!
//! - [`sys`]: the system calls, on [rustix](https://docs.rs/rustix): pipes and their size,
//!   `splice`, `vmsplice`, `tee`, non-blocking mode, CPU pinning, and the
//!   machine's facts.
//! - [`buf`]: page-aligned and huge-page buffers, with a check of whether
//!   the kernel really granted huge pages.
//! - [`double_buffer`]: the vmsplice double-buffer discipline in one type,
//!   with its safety argument and its limits.
//! - [`ring`]: a byte ring in shared memory between two processes, one
//!   `memcpy` per byte, futex or spinning wake-ups; its file
//!   ([`ring::create`]) lets each ring have one producer and one
//!   consumer, whoever opens them.
//! - [`copy`](mod@copy): the copy engine: [`copy()`](copy::copy) moves every
//!   byte from one descriptor to another by the fastest mechanism the
//!   kernel accepts (copy_file_range, sendfile, splice, read/write),
//!   falling back without losing a byte.
//! - `cat`: GNU cat's `-b -E -n -s -T -v` as a streaming formatter,
//!   and cat's engine; `quote`: GNU's quoting of file names in messages.
//! - `yes`: a line repeated into a pipe by vmsplice of pages never
//!   written again (`sys::frozen`), elsewhere by write.
//! - [`pv`]: pv as library code: the meter (pv's display items and a
//!   token bucket), the copy loop with its rate limit and stop size, the
//!   display thread and `-d`'s watching.
//! - [`wait`]: blocking, polling and busy-looping ends.
//! - `verify`: a checkable byte stream for `--verify`.
//! - [`bench`](mod@bench): the measurements. [`bench::core`] is what
//!   every kind is made of (where the ends run, cancelling, the one
//!   [`schedule`](bench::core::schedule()) of runs, the
//!   [`Series`](bench::core::Series) every result holds); on it the
//!   [ladder](bench::ladder) of writer and reader processes and its
//!   [scan](bench::scan) of one setting, round-trip
//!   [latency](bench::latency), many ends on one pipe
//!   ([contend](bench::contend)), pipes beside other IPC
//!   ([ipc](bench::ipc)), percentiles ([hist](bench::hist)), per-rung
//!   [cost and profile](bench::profile), and which paths still pass page
//!   references on the running kernel ([zerocopy](bench::zerocopy)).
//! - [`report`]: every result as a table, JSON, CSV or Markdown; with
//!   the `cli` feature, SVG charts of every result (`report::svg`) and a
//!   self-contained HTML page (`report::html`).
//! - [`compare`]: two results of one command side by side, with a
//!   bootstrap interval of each ratio and a verdict, as benchstat does.
//! - [`units`]: `256K`-style sizes.
//!
//! Library code never prints; errors are [`std::io::Error`]s whose
//! messages name the thing and the cause.
//!
//! `unsafe` code lives in [`sys`] and the engines ([`buf`],
//! [`double_buffer`], [`ring`]), each block with its argument; every safe function is sound whatever its safe caller does:
//! what a call's soundness needs is either checked and then held (the
//! ring's claims and seals, the double buffer's own duplicate of the write
//! end it checked), or the function is `unsafe` with its contract
//! ([`sys::vmsplice`]).

#![deny(missing_docs)]
// Without the `cli` feature nothing calls what only the command line uses
// (the tools' option handling, the ends its worker subcommand serves).
#![cfg_attr(not(feature = "cli"), allow(dead_code, unused_imports))]

pub mod bench;
pub mod buf;
pub(crate) mod build_info;
pub(crate) mod cat;
pub(crate) mod child;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
pub mod compare;
pub mod copy;
pub mod double_buffer;
pub(crate) mod kernels;
pub mod pv;
pub(crate) mod quote;
pub mod report;
pub mod ring;
pub mod sys;
pub(crate) mod tee;
pub mod top;
pub mod units;
pub(crate) mod verify;
pub mod wait;
pub(crate) mod yes;

pub use buf::{Buffer, BufferOptions};
pub use double_buffer::DoubleBuffer;
