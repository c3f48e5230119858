//! `pipespeed bench` (and `pipespeed` alone): the ladder.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use pipespeed::bench::ladder::{Event, LadderConfig, Placement, Rung, run_ladder};
use pipespeed::bench::process::ProcessExecutor;
use pipespeed::report::{Csv, Exporter, Json, Text};
use pipespeed::sys::SystemFacts;

use crate::UsageError;
use crate::args::BenchArgs;

pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let facts = SystemFacts::collect();
    let placement = placement(&args, &facts)?;
    if args.buf_size < 2 * 4096 {
        return Err(UsageError(
            "--buf-size must be at least 8K: vmsplice needs two halves of whole pages".into(),
        )
        .into());
    }
    if !args.run_seconds.is_finite() || args.run_seconds <= 0.0 {
        return Err(UsageError("--run-seconds must be more than 0".into()).into());
    }
    let config = LadderConfig {
        rungs: if args.rungs.is_empty() {
            Rung::ALL.to_vec()
        } else {
            args.rungs.clone()
        },
        runs: args.runs as usize,
        bytes: args.bytes,
        buf_size: args.buf_size,
        pipe_size: args.pipe_size,
        placement,
        verify: args.verify,
        seed: args.seed.unwrap_or_else(clock_seed),
        target_seconds: args.run_seconds,
        profile: args.profile,
    };
    let exe = std::env::current_exe()
        .context("cannot find the pipespeed binary to run writer and reader")?;
    let mut executor = ProcessExecutor::new(exe);
    let profiles = if config.profile {
        config.rungs.len()
    } else {
        0
    };
    let bar = ProgressBar::new((config.rungs.len() * (config.runs + 1) + profiles) as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed}] {bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let result = run_ladder(&config, &facts, &mut executor, &mut |event| match event {
        Event::WarmedUp(rung, gib_s) => {
            bar.inc(1);
            bar.set_message(format!("{rung} warm-up {gib_s:.2} GiB/s"));
        }
        Event::Skipped(rung, why) => {
            bar.inc(1);
            bar.set_message(format!("{rung}: {why}"));
        }
        Event::Measured { rung, gib_s, .. } => {
            bar.inc(1);
            bar.set_message(format!("{rung} {gib_s:.2} GiB/s"));
        }
        Event::Profiling(rung) => {
            bar.inc(1);
            bar.set_message(format!("{rung} under perf record"));
        }
    });
    bar.finish_and_clear();
    if let Some(path) = &args.json {
        std::fs::write(path, Json.export(&result)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.csv {
        std::fs::write(path, Csv.export(&result)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    io::stdout().write_all(
        &Text {
            explain: args.explain,
        }
        .export(&result)?,
    )?;
    Ok(ExitCode::SUCCESS)
}

fn placement(args: &BenchArgs, facts: &SystemFacts) -> anyhow::Result<Placement> {
    if args.no_pin {
        return Ok(Placement::Unpinned);
    }
    match args.cpus[..] {
        [] => Ok(Placement::default_for(facts)),
        [writer_cpu, reader_cpu] => {
            for cpu in [writer_cpu, reader_cpu] {
                if !facts.cpus_allowed.contains(&cpu) {
                    return Err(UsageError(format!(
                        "--cpus: CPU {cpu} is not one this process may use ({:?})",
                        facts.cpus_allowed
                    ))
                    .into());
                }
            }
            Ok(Placement::Pinned {
                writer_cpu,
                reader_cpu,
            })
        }
        _ => Err(UsageError(
            "--cpus takes two CPUs: the writer's and the reader's, e.g. --cpus 0,1".into(),
        )
        .into()),
    }
}

fn clock_seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}
