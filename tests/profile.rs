//! `bench --profile` and the cost per GiB: perf report text recorded on
//! the project's VM, the ladder with a mock executor (known usage, canned
//! profiles), the renderers on fixed data, and the binary with and
//! without perf. Passes as root with perf, as an ordinary user, and where
//! perf is not installed.

#![allow(clippy::unwrap_used)]
use pipespeed::bench::core::{Placement, RunError, Status};

use std::process::{Command, Output};
use std::time::Duration;

use pipespeed::bench::core::Cancel;
use pipespeed::bench::core::Runner;
use pipespeed::bench::ladder::{
    Job, LadderConfig, MEMCPY_NOT_PROFILED, ProcessExecutor, Rung, Sample, run_ladder,
};
use pipespeed::bench::profile::{Cost, Profile, ProfileStatus, SymbolShare, TOP_SYMBOLS};
use pipespeed::bench::profile::{NOT_INSTALLED, Perf, PerfAccess};
use pipespeed::report::{Csv, Exporter, Text};
use pipespeed::sys::{ResourceUsage, SystemFacts, ThpMode};
use pipespeed::units::GIB;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

fn facts() -> SystemFacts {
    SystemFacts {
        kernel: "6.18.0-test".into(),
        kernel_version: "#1".into(),
        arch: "x86_64".into(),
        cpu_model: "Test CPU".into(),
        cpus_online: 2,
        cpus_allowed: vec![0, 1],
        thp: ThpMode::Never,
        pipe_max_size_bytes: 1 << 20,
        page_size_bytes: 4096,
        virtualization: None,
    }
}

fn config(rungs: &[Rung], profile: bool) -> LadderConfig {
    LadderConfig {
        rungs: rungs.to_vec(),
        runs: 2,
        max_runs: 2,
        bytes: Some(GIB / 2),
        buf_size: 256 * 1024,
        pipe_size: None,
        placement: Placement::Pinned {
            writer_cpu: 0,
            reader_cpu: 1,
        },
        alternative: None,
        verify: false,
        seed: 1,
        target_seconds: 0.5,
        profile,
        warmup_rule: pipespeed::bench::core::Warmup::exactly(1),
    }
}

/// Every measured run (1/2 GiB) uses 0.25 s user, 1 s system, 1000 + 24
/// context switches and 500 + 12 page faults; warm-ups (256 MiB) use ten
/// times as much, and must not count. Profiles are canned; the calls are
/// recorded.
#[derive(Default)]
struct Mock {
    runs: usize,
    profiled: Vec<(usize, Job)>,
}

impl Runner<Job> for Mock {
    fn run(&mut self, job: &Job) -> Result<Sample, RunError> {
        self.runs += 1;
        let times = if job.bytes() == GIB / 2 { 1 } else { 10 };
        Ok(Sample {
            bytes: GIB / 2,
            seconds: 1.0,
            gib_s: 0.5,
            usage: Some(ResourceUsage {
                user: Duration::from_millis(250 * times),
                system: Duration::from_secs(times),
                voluntary_switches: 1000 * times,
                involuntary_switches: 24 * times,
                minor_faults: 500 * times,
                major_faults: 12 * times,
            }),
            noise: None,
            copy_check: None,
        })
    }

    fn profile(&mut self, job: &Job) -> Profile {
        self.profiled.push((self.runs, job.clone()));
        Profile {
            status: ProfileStatus::Recorded,
            reason: None,
            command: Some("perf record ...".into()),
            samples: 10,
            symbols: vec![],
        }
    }
}

#[test]
fn cost_is_the_measured_runs_usage_per_gib() {
    let mut mock = Mock::default();
    let result = run_ladder(
        &config(&[Rung::WriteRead], false),
        &facts(),
        &mut mock,
        &Cancel::never(),
        &mut |_| {},
    );
    let r = &result.rungs[0];
    assert_eq!(r.status, Status::Ok);
    assert_eq!(
        r.cost,
        Some(Cost {
            user_s_per_gib: 0.5,
            system_s_per_gib: 2.0,
            context_switches_per_gib: 2048.0,
            page_faults_per_gib: 1024.0,
        })
    );
    assert_eq!(r.profile, None, "no profile without --profile");
    assert!(mock.profiled.is_empty());
}

#[test]
fn each_measured_rung_is_profiled_once_after_all_measured_runs() {
    let mut mock = Mock::default();
    let mut events = Vec::new();
    let cfg = config(&[Rung::WriteRead], true);
    let result = run_ladder(&cfg, &facts(), &mut mock, &Cancel::never(), &mut |e| {
        events.push(format!("{e:?}"))
    });
    assert_eq!(mock.profiled.len(), 1);
    let (runs_before, job) = &mock.profiled[0];
    assert_eq!(*runs_before, 3, "profiled after the warm-up and both runs");
    assert_eq!(job.bytes(), GIB / 2, "with the bytes of a measured run");
    assert_eq!(
        result.rungs[0].profile.as_ref().unwrap().status,
        ProfileStatus::Recorded
    );
    assert_eq!(events.last().unwrap(), "Profiling { row: \"write-read\" }");
    assert_eq!(result.rungs[0].gib_s.runs.len(), 2, "not a measured run");
}

#[test]
fn rungs_the_machine_cannot_do_are_not_profiled() {
    let mut mock = Mock::default();
    // THP never: the huge rung is unavailable before any run.
    let result = run_ladder(
        &config(&[Rung::VmspliceSpliceHuge, Rung::WriteRead], true),
        &facts(),
        &mut mock,
        &Cancel::never(),
        &mut |_| {},
    );
    assert_eq!(result.rungs[0].status, Status::Unavailable);
    assert_eq!(result.rungs[0].profile, None);
    assert_eq!(result.rungs[0].cost, None);
    assert!(result.rungs[1].profile.is_some());
    assert_eq!(mock.profiled.len(), 1);
}

#[test]
fn without_perf_on_path_profiles_say_it_is_not_installed() {
    let empty = tempfile::tempdir().unwrap();
    let ok = PerfAccess {
        paranoid: Some(-1),
        kptr_restrict: Some(0),
        root: true,
    };
    let mut executor = ProcessExecutor::new(EXE.into());
    executor.perf = Some(Perf::locate(Some(empty.path().as_os_str()), &ok));
    let job = Job::Memcpy {
        buf_size: 4096,
        bytes: 4096,
        cpu: None,
    };
    assert_eq!(executor.profile(&job), Profile::unavailable(NOT_INSTALLED));
}

/// A result with cost and profiles: one recorded, one refused.
fn rendered() -> pipespeed::bench::ladder::LadderResult {
    let mut mock = Mock::default();
    let mut result = run_ladder(
        &config(&[Rung::WriteRead, Rung::Memcpy], true),
        &facts(),
        &mut mock,
        &Cancel::never(),
        &mut |_| {},
    );
    result.rungs[0].profile = Some(Profile {
        status: ProfileStatus::Recorded,
        reason: None,
        command: None,
        samples: 814,
        symbols: vec![
            SymbolShare {
                symbol: "_copy_to_iter".into(),
                percent: 20.147,
                kernel: true,
                comm: "ps-reader".into(),
            },
            SymbolShare {
                symbol: "_start".into(),
                percent: 0.123,
                kernel: false,
                comm: "ps-writer".into(),
            },
        ],
    });
    result.rungs[1].profile = Some(Profile::unavailable(MEMCPY_NOT_PROFILED));
    result
}

#[test]
fn the_table_shows_cost_and_top_symbols() {
    // The cost table is detail: --explain prints it.
    let text = String::from_utf8(Text::new(true).export(&rendered()).unwrap()).unwrap();
    let start = text.find("\ncost per GiB").unwrap();
    let end = text.find("\n\nwrite-read: write copies").unwrap();
    let tail = &text[start..=end];
    assert_eq!(
        tail,
        "
cost per GiB piped (getrusage of the writer and reader processes, start-up included,
over the measured runs; memcpy: its one thread):
rung        user CPU s   sys CPU s  ctx switches  page faults
write-read       0.500       2.000          2048         1024
memcpy           0.500       2.000          2048         1024

where the time goes: perf record -e cpu-clock -g of each end, self time per symbol
as a share of both ends' samples ([k] kernel, [.] user space):

write-read (814 samples):
   20.15%  ps-reader  [k] _copy_to_iter
    0.12%  ps-writer  [.] _start

memcpy: no profile: memcpy runs in a thread of pipespeed bench, not as a command perf could start
"
    );
    assert!(tail.lines().all(|l| l.len() <= 100), "{tail}");
}

#[test]
fn one_reason_for_every_rung_is_said_once() {
    let mut result = rendered();
    for r in &mut result.rungs {
        r.profile = Some(Profile::unavailable(NOT_INSTALLED));
    }
    let text = String::from_utf8(Text::new(false).export(&result).unwrap()).unwrap();
    // Once, and the answer after it, last.
    assert_eq!(text.matches("no profile").count(), 1, "{text}");
    assert!(
        text.contains(&format!("\nno profiles: {NOT_INSTALLED}\n\nbaseline: ")),
        "{text}"
    );
}

#[test]
fn csv_rows_carry_the_rung_cost() {
    let csv = String::from_utf8(Csv.export(&rendered()).unwrap()).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().contains(
        ",user_s_per_gib,system_s_per_gib,context_switches_per_gib,page_faults_per_gib,"
    ));
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("write-read,ok,1,0.5000,536870912,262144,,2,0.5000,2.0000,2048.0,1024.0,")
    );
}

fn bench(path: Option<&std::path::Path>) -> (Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ladder.json");
    let mut cmd = Command::new(EXE);
    cmd.args(["bench", "--rungs", "write-read", "--runs", "1"])
        .args(["--bytes", "16M", "--profile", "--json"])
        .arg(&json);
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (out, value)
}

#[test]
fn bench_without_perf_says_so_and_measures_anyway() {
    let empty = tempfile::tempdir().unwrap();
    let (out, value) = bench(Some(empty.path()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Said once, and the answer after it, last.
    assert!(
        stdout.contains(&format!("\nno profiles: {NOT_INSTALLED}\n\nbaseline: ")),
        "{stdout}"
    );
    let rung = &value["rungs"][0];
    assert_eq!(rung["status"], "ok");
    assert_eq!(rung["profile"]["status"], "unavailable");
    assert_eq!(rung["profile"]["reason"], NOT_INSTALLED);
    assert!(rung["cost"]["system_s_per_gib"].as_f64().unwrap() >= 0.0);
}

/// Root with perf: symbols. Otherwise the reason: not installed, the
/// paranoid setting, or what perf said.
#[test]
fn bench_profile_shows_symbols_or_says_why() {
    let (out, value) = bench(None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let profile = &value["rungs"][0]["profile"];
    match profile["status"].as_str().unwrap() {
        "recorded" => {
            assert!(profile["samples"].as_u64().unwrap() > 0);
            let symbols = profile["symbols"].as_array().unwrap();
            assert!(!symbols.is_empty() && symbols.len() <= TOP_SYMBOLS);
            assert!(symbols.iter().any(|s| s["kernel"] == true), "{profile}");
            assert!(stdout.contains("\nwrite-read ("), "{stdout}");
            assert!(stdout.contains(" [k] "), "{stdout}");
        }
        "unavailable" => {
            let reason = profile["reason"].as_str().unwrap();
            // The same search the bench made: perf first, then access.
            let expected = Perf::locate(None, &PerfAccess::of_this_process())
                .err()
                .unwrap();
            assert_eq!(reason, expected);
            // The text wraps the reason to the terminal's width.
            let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                words(&stdout).contains(&words(&format!("no profiles: {reason}"))),
                "{stdout}"
            );
        }
        _ => {
            let reason = profile["reason"].as_str().unwrap();
            assert!(!reason.is_empty());
            assert!(stdout.contains(&format!("write-read: profile failed: {reason}")));
        }
    }
}
