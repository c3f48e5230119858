//! `pipespeed ipc` through the library with its real runner (every end a
//! process of the binary) and through the binary: every mechanism moves
//! the exact bytes at the boundary sizes, what cannot run says why and the
//! rest runs. Tiny runs: behaviour, never speed.
//!
//! On one CPU (`taskset -c 0 cargo test`) the spinning ring is checked to
//! be skipped with its reason.

#![allow(clippy::unwrap_used)]

use crate::common;
use pipespeed::bench::core::{Cancel, Placement, Status};

use std::path::PathBuf;
use std::process::{Command, Output};

use pipespeed::bench::core::Processes;
use pipespeed::bench::ipc::SPIN_ON_ONE_CPU;
use pipespeed::bench::ipc::{IpcConfig, IpcResult, IpcRow, Mechanism, run_ipc};
use pipespeed::sys::SystemFacts;
use pipespeed::sys::{MSGSIZE_MAX, mqueue_limit};

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

/// One byte, around a page, around the default pipe, and 1 MiB.
const BOUNDARIES: [usize; 7] = [1, 4095, 4096, 65535, 65536, 65537, 1 << 20];

/// One run of each metric, three messages of each size (at most 16 KiB
/// of 1-byte messages).
fn config(mechanisms: &[Mechanism], sizes: &[usize], placement: Placement) -> IpcConfig {
    let largest = sizes.iter().max().copied().unwrap_or(1) as u64;
    IpcConfig {
        mechanisms: mechanisms.to_vec(),
        sizes: sizes.to_vec(),
        throughput: true,
        latency: true,
        runs: 1,
        max_runs: 1,
        duration_s: 0.01,
        bytes: Some((3 * largest).max(16 << 10)),
        placement,
        verify: true,
        seed: 1,
        warmup_rule: pipespeed::bench::core::Warmup::exactly(1),
        stall_timeout: pipespeed::bench::core::DEFAULT_STALL_TIMEOUT,
    }
}

fn measure(config: &IpcConfig) -> IpcResult {
    let facts = SystemFacts::collect();
    let mut runner = Processes {
        exe: PathBuf::from(EXE),
    };
    run_ipc(config, &facts, &mut runner, &Cancel::never(), &mut |_| {})
}

/// What `SO_SNDBUF` may ask for at most.
fn wmem_max() -> usize {
    std::fs::read_to_string("/proc/sys/net/core/wmem_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Why this machine cannot run `row`'s throughput, if it should not:
/// what the kernel's limits say, found here independently of the code.
fn expected_unavailable(row: &IpcRow, one_cpu: bool) -> Option<&'static str> {
    let page = rustix::param::page_size();
    let pages = row.size.div_ceil(page);
    match row.mechanism {
        m if m.spins() && one_cpu => Some("skipped on one CPU"),
        Mechanism::PipeSplice | Mechanism::IoUringSplice if !pages.is_power_of_two() => {
            Some("pipe sized to exactly half")
        }
        Mechanism::Mqueue if mqueue_limit(MSGSIZE_MAX).is_some_and(|max| row.size > max) => {
            Some("over the message queue limit")
        }
        // An AF_UNIX datagram must fit the send buffer less 32 bytes
        // (af_unix.c); SO_SNDBUF may raise the buffer to twice
        // net.core.wmem_max.
        Mechanism::UnixDgram | Mechanism::UnixSeqpacket
            if row.size + 32 > 2 * wmem_max().min(row.size + 4096) =>
        {
            Some("does not fit an AF_UNIX socket's send buffer")
        }
        _ => None,
    }
}

#[test]
fn every_mechanism_moves_the_exact_bytes_at_the_boundaries_or_says_why_not() {
    let facts = SystemFacts::collect();
    let one_cpu = facts.cpus_allowed.len() < 2;
    let placement = Placement::default_for(&facts);
    let rows: Vec<IpcRow> = BOUNDARIES
        .iter()
        .flat_map(|&size| measure(&config(&Mechanism::ALL, &[size], placement)).rows)
        .collect();
    assert_eq!(rows.len(), Mechanism::ALL.len() * BOUNDARIES.len());
    for row in &rows {
        let what = format!("{} at {} bytes", row.mechanism, row.size);
        let t = row.throughput.as_ref().unwrap();
        match expected_unavailable(row, one_cpu) {
            Some(why) => {
                assert_eq!(t.status, Status::Unavailable, "{what}: {t:?}");
                let reason = t.reason.as_deref().unwrap_or("");
                assert!(reason.contains(why), "{what}: {reason}");
            }
            // A facility this machine refuses (io_uring disabled, no
            // SO_ZEROCOPY, no message queues): a skip said where cargo
            // test shows it, as the unit tests say it, and a failure
            // where .ci/run requires the facility.
            None if t.status == Status::Unavailable && row.mechanism.facility().is_some() => {
                let reason = t.reason.as_deref().unwrap_or("");
                common::skip(
                    row.mechanism.facility().unwrap(),
                    &format!("{what}: {reason}"),
                );
                continue;
            }
            None => {
                assert_eq!(t.status, Status::Ok, "{what}: {:?}", t.reason);
                // Verified by the receiver, byte for byte; all arrived.
                assert_eq!(t.runs.len(), 1, "{what}");
                assert_eq!(t.runs[0].bytes, t.bytes_per_run, "{what}");
                assert!(t.bytes_per_run >= row.size as u64 && t.runs[0].gib_s > 0.0);
            }
        }
        let l = row.latency.as_ref().unwrap();
        match (
            row.mechanism.no_round_trip(),
            expected_unavailable(row, one_cpu),
        ) {
            (Some(_), _) | (None, Some(_)) => {
                assert_eq!(l.status, Status::Unavailable, "{what}: {l:?}")
            }
            (None, None) => {
                assert_eq!(l.status, Status::Ok, "{what} round trips: {:?}", l.reason);
                let run = &l.runs[0];
                assert!(run.round_trips > 0 && run.rtt_ns.p50 > 0, "{what}: {run:?}");
            }
        }
    }
}

#[test]
fn on_one_cpu_the_spinning_ring_is_skipped_with_a_reason_and_the_rest_runs() {
    let cpu = SystemFacts::collect().cpus_allowed[0];
    let same = Placement::Pinned {
        writer_cpu: cpu,
        reader_cpu: cpu,
    };
    let result = measure(&config(
        &[Mechanism::ShmSpin, Mechanism::Shm],
        &[4096],
        same,
    ));
    let (spin, ring) = (&result.rows[0], &result.rows[1]);
    for metric in [
        spin.throughput
            .as_ref()
            .map(|t| (t.status, t.reason.clone())),
        spin.latency.as_ref().map(|l| (l.status, l.reason.clone())),
    ] {
        assert_eq!(
            metric,
            Some((Status::Unavailable, Some(SPIN_ON_ONE_CPU.to_string())))
        );
    }
    assert_eq!(ring.throughput.as_ref().unwrap().status, Status::Ok);
    assert_eq!(ring.latency.as_ref().unwrap().status, Status::Ok);
}

fn ipc(args: &[&str]) -> Output {
    Command::new(EXE).arg("ipc").args(args).output().unwrap()
}

#[test]
fn a_wrong_mechanism_is_refused_with_the_valid_ones() {
    let out = ipc(&["--mechanisms", "pipe,pigeon"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("'pigeon' is not a mechanism"), "{err}");
    for m in Mechanism::ALL {
        assert!(err.contains(m.name()), "{err}");
    }
}

/// `nobody`'s uid and gid when running as root (root's CAP_IPC_LOCK
/// ignores RLIMIT_MEMLOCK), `None` for any other user.
fn unprivileged() -> Option<(u32, u32)> {
    if !rustix::process::geteuid().is_root() {
        return None;
    }
    std::fs::read_to_string("/etc/passwd")
        .ok()?
        .lines()
        .find_map(|line| match line.split(':').collect::<Vec<_>>()[..] {
            ["nobody", _, uid, gid, ..] => Some((uid.parse().ok()?, gid.parse().ok()?)),
            _ => None,
        })
}

/// Under a locked-memory limit smaller than a message, MSG_ZEROCOPY
/// sends fail at once with ENOBUFS: said as such, as a row this machine
/// cannot run (status 3 when it is the only one), not waited on as a
/// completion that never comes (10 s per size, blamed on "no
/// completion").
#[test]
fn a_locked_memory_limit_too_small_for_zerocopy_is_said_at_once() {
    use std::os::unix::process::CommandExt;
    let root = rustix::process::geteuid().is_root();
    let user = unprivileged();
    if root && user.is_none() {
        common::skip(
            "nobody",
            "running as root and /etc/passwd has no user nobody",
        );
        return;
    }
    let mut command = Command::new("sh");
    command.args([
        "-c",
        r#"ulimit -l 64 && exec "$0" ipc --mechanisms tcp-zerocopy --sizes 1M \
           --metrics throughput --runs 1 --duration 0.01"#,
        EXE,
    ]);
    if let Some((uid, gid)) = user {
        command.uid(uid).gid(gid).current_dir("/");
    }
    let out = command.output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if said.contains("Permission denied") && user.is_some() {
        common::skip("nobody", "nobody cannot run the test binary here");
        return;
    }
    assert!(said.contains("RLIMIT_MEMLOCK 64KiB"), "{said}");
    assert!(!said.contains("no MSG_ZEROCOPY completion"), "{said}");
    assert_eq!(out.status.code(), Some(3), "{said}");
}

/// A tiny run through the binary with `COLUMNS=80` and `=120` (stdout a
/// pipe, so the width is `COLUMNS`'): no line wider, the verdict last.
/// Behaviour, not speed: one run of 0.01 s a metric.
#[test]
fn the_text_fits_the_columns_it_is_given_with_the_verdict_last() {
    for columns in ["80", "120"] {
        let out = Command::new(EXE)
            .env("COLUMNS", columns)
            .args([
                "ipc",
                "--mechanisms",
                "pipe,unix-stream",
                "--sizes",
                "64,64K",
            ])
            .args(["--runs", "1", "--max-runs", "1", "--duration", "0.01"])
            .args(["--warmup-runs", "1"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        common::assert_fits(&text, columns.parse().unwrap());
        let verdict = text.trim_end().rsplit("\n\n").next().unwrap();
        assert!(verdict.starts_with("throughput: fastest "), "{text}");
        assert!(verdict.contains("\ntrust:      "), "{text}");
        assert!(verdict.lines().count() <= 6, "{text}");
    }
}
