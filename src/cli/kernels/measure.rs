//! What the guest of `pipespeed kernels` runs: `--measure`'s commands,
//! or the user's after `--`, each with the watchdog, and the bound on the
//! runs a pool may hold.

use crate::compare::MAX_RUNS;
use crate::kernels::{Measurement, Program};
use clap::ValueEnum;

use super::KernelsArgs;
use crate::cli::UsageError;

/// `--measure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Measure {
    /// contend --sweep, then contend --sweep --memory-pressure.
    PipeBench,
    /// contend --sweep.
    Contend,
    /// The ladder (bench).
    Ladder,
    /// latency.
    Latency,
    /// ipc.
    Ipc,
}

/// What the guest runs.
pub(super) fn measurements(args: &KernelsArgs) -> Result<Vec<Measurement>, UsageError> {
    let runs = args.runs.to_string();
    let stall = [
        "--stall-timeout".to_string(),
        args.stall.stall_timeout.to_string(),
    ];
    let contend = |pressure: bool| {
        let mut a: Vec<String> = ["contend", "--sweep", "--duration"]
            .map(String::from)
            .into();
        a.push(args.duration.to_string());
        a.extend(["--runs".into(), runs.clone()]);
        a.extend(["--warmup-runs".into(), "1".into()]);
        if pressure {
            a.push("--memory-pressure".into());
        }
        a.extend(stall.clone());
        a
    };
    // Every boot's runs are pooled, and a pool may hold MAX_RUNS a row:
    // refused now, not after the last boot.
    let pooled = |per_boot: usize, how: &str| {
        let total = per_boot.saturating_mul(args.rounds);
        if total > MAX_RUNS {
            return Err(UsageError(format!(
                "--rounds {} x {per_boot} runs a boot ({how}) pools {total} runs a row: at most {MAX_RUNS}",
                args.rounds
            )));
        }
        Ok(())
    };
    let one = |name: &str, args: Vec<String>| Measurement {
        name: name.into(),
        args,
        program: Program::Pipespeed,
    };
    if args.pipe_bench.is_some() {
        // Each run of pipe_bench is one run of each of its cells.
        pooled(args.runs, "--runs")?;
        if args.command.iter().any(|a| a == "--memory-pressure") {
            return Err(UsageError(
                "kernels --pipe-bench -- --memory-pressure: the guest has no stress-ng for it \
                 to start"
                    .into(),
            ));
        }
        return Ok(vec![Measurement {
            name: "pipe_bench".into(),
            args: args.command.clone(),
            program: Program::PipeBench { runs: args.runs },
        }]);
    }
    if !args.command.is_empty() {
        let first = args.command[0].as_str();
        if !["bench", "contend", "latency", "ipc"].contains(&first) {
            return Err(UsageError(format!(
                "kernels -- {first}: the guest runs bench, contend, latency or ipc (their --json is compared)"
            )));
        }
        if args
            .command
            .iter()
            .any(|a| a == "--json" || a.starts_with("--json="))
        {
            return Err(UsageError(
                "kernels -- ...: leave --json out: the guest writes its own".into(),
            ));
        }
        pooled(most_runs(&args.command), "its most runs a row")?;
        let mut command = args.command.clone();
        let given = |a: &String| a == "--stall-timeout" || a.starts_with("--stall-timeout=");
        if !command.iter().any(given) {
            command.extend(stall.clone());
        }
        return Ok(vec![one(first, command)]);
    }
    pooled(args.runs, "--runs")?;
    let with = |cmd: &str| {
        let mut a = vec![cmd.to_string(), "--runs".into(), runs.clone()];
        // ipc's --runs leaves room for more while a row is noisy.
        if cmd == "ipc" {
            a.extend(["--max-runs".into(), runs.clone()]);
        }
        a.extend(stall.clone());
        a
    };
    Ok(match args.measure {
        Measure::PipeBench => vec![
            one("contend", contend(false)),
            one("contend-pressure", contend(true)),
        ],
        Measure::Contend => vec![one("contend", contend(false))],
        Measure::Ladder => vec![one("bench", with("bench"))],
        Measure::Latency => vec![one("latency", with("latency"))],
        Measure::Ipc => vec![one("ipc", with("ipc"))],
    })
}

/// The most runs a row gets from `pipespeed ARGS`: its `--max-runs`, else
/// its `--runs`, else the command's default most (bench and latency 10,
/// contend and ipc 6); a value that is no number is left to the command
/// to refuse.
fn most_runs(command: &[String]) -> usize {
    let value = |flag: &str| {
        let eq = format!("{flag}=");
        command
            .iter()
            .enumerate()
            .find_map(|(i, a)| match a.strip_prefix(&eq) {
                Some(v) => v.parse::<usize>().ok(),
                None if a == flag => command.get(i + 1)?.parse().ok(),
                None => None,
            })
    };
    let default = match command.first().map(String::as_str) {
        Some("bench" | "latency") => 10,
        _ => 6,
    };
    value("--max-runs").or(value("--runs")).unwrap_or(default)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use clap::Parser;

    use super::*;
    use crate::cli::args::{Cli, Command};

    fn measured(argv: &[&str]) -> Vec<Vec<String>> {
        let argv = ["pipespeed", "kernels", "a", "b"].iter().chain(argv);
        let Some(Command::Kernels(args)) = Cli::try_parse_from(argv).unwrap().command else {
            panic!("not kernels")
        };
        measurements(&args)
            .unwrap()
            .into_iter()
            .map(|m| m.args)
            .collect()
    }

    #[test]
    fn every_guest_command_gets_the_watchdog_and_its_runs() {
        let words = |line: &str| line.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            measured(&[]),
            [
                words("contend --sweep --duration 1 --runs 1 --warmup-runs 1 --stall-timeout 60"),
                words(
                    "contend --sweep --duration 1 --runs 1 --warmup-runs 1 --memory-pressure --stall-timeout 60"
                ),
            ]
        );
        // ipc would add runs while a row is noisy: held to --runs.
        assert_eq!(
            measured(&["--measure", "ipc", "--runs", "2", "--stall-timeout", "5"]),
            [words("ipc --runs 2 --max-runs 2 --stall-timeout 5")]
        );
        // A command of the user's gets the watchdog unless it has one.
        assert_eq!(
            measured(&["--", "latency", "--runs", "3"]),
            [words("latency --runs 3 --stall-timeout 60")]
        );
        assert_eq!(
            measured(&["--", "latency", "--stall-timeout=9"]),
            [words("latency --stall-timeout=9")]
        );
    }

    #[test]
    fn pipe_bench_gets_the_arguments_after_the_dashes_and_the_runs() {
        let argv = [
            "pipespeed",
            "kernels",
            "a",
            "b",
            "--pipe-bench",
            "pb",
            "--runs",
            "3",
        ];
        let parsed = |more: &[&str]| {
            let argv = argv.iter().chain(more);
            let Some(Command::Kernels(args)) = Cli::try_parse_from(argv).unwrap().command else {
                panic!("not kernels")
            };
            measurements(&args)
        };
        let m = parsed(&["--", "-w", "2", "-d", "1"]).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].program, Program::PipeBench { runs: 3 });
        assert_eq!(m[0].command_line(), "pipe_bench -w 2 -d 1");
        assert_eq!(parsed(&[]).unwrap()[0].command_line(), "pipe_bench");
        let err = parsed(&["--", "--memory-pressure"]).unwrap_err();
        assert!(err.0.contains("stress-ng"), "{}", err.0);
    }
}
