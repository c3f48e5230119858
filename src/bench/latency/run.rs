//! Running a latency measurement: every size `runs` times, each run by a
//! runner that places pinger and ponger in threads or processes.

use crate::bench::core::harness::Header;
use crate::bench::core::pin;
use crate::sys::process::interrupted;
use std::io;
use std::process::Stdio;
use std::time::Duration;

use super::super::core::harness::{Event, Figure, Processes, Runner, Threads};
use super::exchange::{ping, pong};
use super::job::{Exchange, LatencyConfig, PingConfig, PingJob};
use super::result::{LatencyResult, LatencyRow, LatencyRun, SCHEMA};
use crate::bench::core::Spawn;
use crate::child::{Group, last_message};
use crate::sys::{SystemFacts, pipe};
use crate::units::Size;

/// Pinger and ponger as two threads of this process.
impl Runner<PingJob> for Threads {
    fn run(&mut self, job: &PingJob) -> io::Result<LatencyRun> {
        let (a_to_b, b_to_a) = (pipe()?, pipe()?);
        let (pinger_cpu, ponger_cpu) = job.placement.cpus();
        let (config, exchange) = (&job.ping, job.ping.exchange);
        std::thread::scope(|s| {
            // Each side owns its ends, so they close when it returns: a
            // side that fails ends the other one instead of hanging it.
            let ponger = s.spawn(move || {
                pin(ponger_cpu, "ponger")?;
                pong(a_to_b.read, b_to_a.write, &exchange)
            });
            let pinger = s.spawn(move || {
                pin(pinger_cpu, "pinger")?;
                ping(a_to_b.write, b_to_a.read, config)
            });
            let panicked = |who: &str| io::Error::other(format!("the {who} thread panicked"));
            let pinged = pinger.join().map_err(|_| panicked("pinger"))?;
            let served = ponger.join().map_err(|_| panicked("ponger"))?;
            // The ponger's error is the cause when both failed.
            let (run, served) = (pinged?, served?);
            let sent = run.warmup_round_trips + run.round_trips;
            if served != sent {
                return Err(io::Error::other(format!(
                    "the ponger served {served} round trips, the pinger made {sent}"
                )));
            }
            Ok(run)
        })
    }
}

/// How long a ponger may take to exit once the pinger is done.
const PONGER_EXIT_TIMEOUT: Duration = Duration::from_secs(10);

/// Pinger in a thread of this process, ponger in a child process: the
/// pipespeed binary run as a ponger worker, its stdin and
/// stdout the two pipes.
impl Runner<PingJob> for Processes {
    fn run(&mut self, job: &PingJob) -> io::Result<LatencyRun> {
        let (a_to_b, b_to_a) = (pipe()?, pipe()?);
        let (pinger_cpu, ponger_cpu) = job.placement.cpus();
        let config = &job.ping;
        let ponger = Spawn::new(&config.exchange, ponger_cpu);
        let mut cmd = ponger.command(&self.exe);
        // Our pipes are close-on-exec; dup2 onto stdin and stdout clears
        // that, so the child holds exactly its two ends.
        cmd.stdin(Stdio::from(a_to_b.read))
            .stdout(Stdio::from(b_to_a.write))
            .stderr(Stdio::piped());
        let mut group = Group::new();
        let child = group.spawn(&mut cmd, "the ponger".into())?;
        // Close our copies of the child's ends, so that each side sees the
        // other one go.
        drop(cmd);
        let pinged = std::thread::scope(|s| {
            s.spawn(move || {
                pin(pinger_cpu, "pinger")?;
                ping(a_to_b.write, b_to_a.read, config)
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the pinger thread panicked")))
        });
        // It exits on end of file; the ponger's error is the cause when
        // both failed.
        let ended = group.finish(child, PONGER_EXIT_TIMEOUT);
        match (ended.killed, ended.success(), last_message(&ended.stderr)) {
            (true, _, _) => Err(io::Error::other(
                "the ponger did not exit after the pinger finished; killed",
            )),
            (false, true, _) => pinged,
            (false, false, "") => Err(io::Error::other(match ended.status {
                Some(status) => format!("the ponger failed ({status})"),
                None => "cannot wait for the ponger".to_string(),
            })),
            (false, false, why) => Err(io::Error::other(why.to_string())),
        }
    }
}

/// Runs every size `config.runs` times with `runner`, reporting each run
/// to `progress`, and summarises.
/// After SIGINT, SIGTERM or SIGHUP (see
/// [`catch_interrupts`](crate::sys::process::catch_interrupts)) no run
/// starts, the run it cut short counts for nothing, and the result holds
/// the sizes measured before it, marked `interrupted`.
pub fn run_latency(
    config: &LatencyConfig,
    system: SystemFacts,
    runner: &mut dyn Runner<PingJob>,
    progress: &mut dyn FnMut(Event<'_>),
) -> io::Result<LatencyResult> {
    let mut rows = Vec::with_capacity(config.sizes.len());
    // The command line bounds runs (1000); a library caller may not:
    // saturate the count, and let the runs' vector grow as runs are made
    // (`--runs 2147483648` asked for 2^31 runs' memory at once and aborted).
    let total = config.sizes.len().saturating_mul(config.runs);
    for &size in &config.sizes {
        let row = Size(size as u64).to_string();
        let ping = PingConfig {
            exchange: Exchange {
                size,
                wait: config.wait,
                verify: config.verify,
            },
            warmup: config.warmup,
            measure: config.measure,
        };
        let mut runs = Vec::new();
        for i in 0..config.runs {
            if interrupted().is_some() {
                break;
            }
            let job = PingJob {
                ping,
                placement: config.placement,
            };
            let run = runner.run(&job);
            if run.is_err() && interrupted().is_some() {
                break;
            }
            let run = run.map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{size}-byte messages, run {}: {}",
                        i + 1,
                        crate::quote::strerror(&e)
                    ),
                )
            })?;
            progress(Event::Measured {
                row: &row,
                index: rows.len().saturating_mul(config.runs).saturating_add(i + 1),
                total,
                figure: Figure::RoundTripNs(run.rtt_ns.p50 as f64),
            });
            runs.push(run);
        }
        if runs.is_empty() {
            break;
        }
        rows.push(LatencyRow::summarize(size, runs));
    }
    let mut header = Header::new(SCHEMA, system);
    header.interrupted = interrupted().is_some();
    Ok(LatencyResult {
        header,
        config: config.clone(),
        rows,
    })
}
