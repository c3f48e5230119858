//! `ipc`'s runner: a throughput run is a sender worker and a receiver
//! worker (which prints what it [`Received`] as JSON); a latency run is
//! the pinger in a thread of this process and a ponger worker. Each
//! worker has the channel's descriptors as its standard input and output.
use crate::bench::core::{Placement, RunError, pin};

use std::io;
use std::os::fd::BorrowedFd;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::super::core::harness::{Processes, Runner};
use super::channel::{one_way, two_way};
use super::ends::{Setup, Way, receiver, sender};
use super::flow::{Received, ping, pong, receive_stream, send_stream};
use super::job::{StreamJob, TripJob};
use super::mechanism::Mechanism;
use super::record::{StreamRun, TripRun};
use crate::bench::core::Spawn;
use crate::bench::core::end_thread::EndThread;
use crate::bench::core::watchdog::{Watched, this_thread, watch_processes, watch_run};
use crate::bench::core::worker::Told;
use crate::child::{Group, said};
use crate::sys::task::Task;
use crate::sys::{NoiseProbe, ResourceUsage, UsageOf, getrusage};
use crate::units::GIB;

/// What one `ipc` worker is: an end of a channel of `mechanism`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct EndSpec {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// Bytes per message.
    pub size: usize,
    /// Check every byte.
    pub verify: bool,
    /// Whether both ends share one CPU.
    pub shared_cpu: bool,
    /// Which end.
    pub end: EndKind,
}

impl crate::bench::core::RoleSpec for EndSpec {
    const ROLE: &'static str = "ipc";
}

/// Which end of a channel a worker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum EndKind {
    /// Sends `bytes` into stdout.
    Sender {
        /// Bytes in all.
        bytes: u64,
    },
    /// Receives from stdin to the end, then prints a [`Received`] line.
    Receiver,
    /// Sends every message from stdin back into stdout.
    Ponger,
}

impl EndSpec {
    /// How messages name this end.
    pub(crate) fn name(&self) -> &'static str {
        match self.end {
            EndKind::Sender { .. } => "ipc sender",
            EndKind::Receiver => "ipc receiver",
            EndKind::Ponger => "ipc ponger",
        }
    }

    /// Does the work, on this process's standard input and output.
    pub(crate) fn serve(&self, stdin: BorrowedFd<'_>, stdout: BorrowedFd<'_>) -> io::Result<()> {
        let EndSpec {
            mechanism: m,
            size,
            verify,
            shared_cpu,
            end,
        } = *self;
        let setup = |way| Setup {
            size,
            way,
            shared_cpu,
        };
        let own = |fd: BorrowedFd<'_>| fd.try_clone_to_owned();
        match end {
            EndKind::Sender { bytes } => {
                let mut tx = sender(m, own(stdout)?, setup(Way::Forward))?;
                send_stream(tx.as_mut(), size, bytes, verify)
            }
            EndKind::Receiver => {
                let mut rx = receiver(m, own(stdin)?, setup(Way::Forward))?;
                let got = receive_stream(rx.as_mut(), verify)?;
                drop(rx);
                let mut line = serde_json::to_vec(&got)?;
                line.push(b'\n');
                crate::wait::write_all(stdout, &line, |_| {})
            }
            EndKind::Ponger => {
                let mut rx = receiver(m, own(stdin)?, setup(Way::Forward))?;
                let mut tx = sender(m, own(stdout)?, setup(Way::Back))?;
                pong(rx.as_mut(), tx.as_mut(), size, verify).map(drop)
            }
        }
    }
}

/// How long an end may take to exit once its work should be over, and a
/// sender to send everything (runs last a fraction of a second).
const EXIT_TIMEOUT: Duration = Duration::from_secs(10);
const SEND_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a receiver whose sender failed may take to say why.
const RECEIVER_WORDS_WITHIN: Duration = Duration::from_secs(1);

/// A setup error: unavailable when the kernel or a limit refuses the
/// mechanism at this size, failed otherwise.
fn setup_error(e: io::Error) -> RunError {
    let why = crate::quote::strerror(&e);
    match e.kind() {
        io::ErrorKind::Unsupported => RunError::Unavailable(e.to_string()),
        _ => RunError::Failed(format!("cannot set up the channel: {why}")),
    }
}

/// An end's failure in its own words: the outcome it reported typed
/// ([`RunError::from_worker`]: unavailable when the kernel refused,
/// io_uring off or a pipe size not granted), else its last message (a
/// crash, a signal), else its status.
fn end_failed(who: &str, stderr: &str, status: Option<std::process::ExitStatus>) -> RunError {
    match Told::of(stderr) {
        Told::Outcome(err) => err,
        Told::Nothing => RunError::Failed(match status {
            Some(status) => format!("the {who} failed ({status}) without a word"),
            None => format!("cannot wait for the {who}"),
        }),
        Told::Words(why) if said(stderr).is_some() => RunError::Failed(why.to_string()),
        Told::Words(why) => RunError::Failed(format!("the {who} failed: {why}")),
    }
}

/// Whether both ends of a job placed so share one CPU: pinned to the same
/// one, or left to the scheduler with fewer than two this process may use.
fn shared_cpu(placement: Placement) -> bool {
    match placement {
        Placement::Pinned {
            writer_cpu,
            reader_cpu,
        } => writer_cpu == reader_cpu,
        Placement::Unpinned => crate::sys::available_cpus().unwrap_or_default().len() < 2,
    }
}

fn worker(spec: EndSpec, cpu: Option<usize>, exe: &std::path::Path) -> Command {
    let mut cmd = Spawn::new(&spec, cpu).command(exe);
    cmd.stderr(Stdio::piped());
    cmd
}

/// What `of` used since `before` (`None`: either not measured).
fn used_since(before: Option<ResourceUsage>, of: UsageOf) -> Option<ResourceUsage> {
    Some(getrusage(of).ok()?.since(&before?))
}

impl Runner<StreamJob> for Processes {
    fn run(&mut self, job: &StreamJob) -> Result<StreamRun, RunError> {
        let ch = one_way(job.mechanism, job.size).map_err(setup_error)?;
        let (send_cpu, recv_cpu) = job.placement.cpus();
        let spec = |end| EndSpec {
            mechanism: job.mechanism,
            size: job.size,
            verify: job.verify,
            shared_cpu: shared_cpu(job.placement),
            end,
        };
        let mut tx = worker(
            spec(EndKind::Sender { bytes: job.bytes }),
            send_cpu,
            &self.exe,
        );
        tx.stdin(Stdio::null()).stdout(Stdio::from(ch.send));
        let mut rx = worker(spec(EndKind::Receiver), recv_cpu, &self.exe);
        rx.stdin(Stdio::from(ch.recv)).stdout(Stdio::piped());
        let probe = NoiseProbe::start();
        let before = getrusage(UsageOf::Children).ok();
        let mut group = Group::new();
        let spawned = |e: io::Error| RunError::Failed(format!("cannot start an end: {e}"));
        let receiver = group
            .spawn(&mut rx, "the ipc receiver".into())
            .map_err(spawned)?;
        let sender = group
            .spawn(&mut tx, "the ipc sender".into())
            .map_err(spawned)?;
        // Only the ends hold the channel now.
        drop((tx, rx));
        // An end that makes no progress is killed with the other: the
        // waits below end, and the stall is the run's error.
        let ends = vec![
            ("the ipc receiver".into(), group.child(receiver).id()),
            ("the ipc sender".into(), group.child(sender).id()),
        ];
        let watch = watch_processes(ends, job.stall_timeout).map_err(|e| RunError::from_io(&e))?;
        let ran = stream_ends(&mut group, sender, receiver, job);
        let got = match watch.finish() {
            Some(stall) => return Err(RunError::Stalled(Box::new(stall))),
            None => ran?,
        };
        let usage = used_since(before, UsageOf::Children);
        let ends: Vec<usize> = [send_cpu, recv_cpu].into_iter().flatten().collect();
        let used = usage.unwrap_or_default();
        let noise = probe.finish(used.user + used.system, used.involuntary_switches, &ends);
        Ok(StreamRun {
            timed_bytes: got.timed_bytes,
            seconds: got.seconds,
            gib_s: got.gib_s,
            msgs_per_s: got.gib_s * GIB as f64 / job.size.max(1) as f64,
            cpu_s: usage.map(|u| (u.user + u.system).as_secs_f64()),
            bytes: got.bytes,
            noise: Some(noise),
        })
    }
}

/// The rest of a throughput run once both ends run: the sender to its
/// end, then the receiver and its report.
fn stream_ends(
    group: &mut Group,
    sender: usize,
    receiver: usize,
    job: &StreamJob,
) -> Result<Received, RunError> {
    let sent = group.finish(sender, SEND_TIMEOUT);
    if !sent.success() {
        // The receiver's words are the cause when it said any: a
        // receiver that found a wrong byte, or that io_uring refused,
        // leaves the sender only "the other end is gone".
        let received = group.finish(receiver, RECEIVER_WORDS_WITHIN);
        let sender_refused = matches!(
            RunError::from_worker(&sent.stderr),
            Some(RunError::Unavailable(_))
        );
        if !sender_refused
            && !received.killed
            && !received.success()
            && said(&received.stderr).is_some()
        {
            return Err(end_failed(
                "ipc receiver",
                &received.stderr,
                received.status,
            ));
        }
        if sent.killed {
            return Err(RunError::Failed(format!(
                "the ipc sender did not finish within {} s; killed",
                SEND_TIMEOUT.as_secs()
            )));
        }
        return Err(end_failed("ipc sender", &sent.stderr, sent.status));
    }
    let out = group
        .output(receiver)
        .map_err(|e| RunError::Failed(format!("cannot read the ipc receiver: {e}")))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(end_failed("ipc receiver", &stderr, Some(out.status)));
    }
    let got: Received = serde_json::from_slice(&out.stdout)
        .map_err(|e| RunError::Failed(format!("the ipc receiver's report is not one: {e}")))?;
    if got.bytes != job.bytes {
        return Err(RunError::Failed(format!(
            "{} bytes sent, {} received",
            job.bytes, got.bytes
        )));
    }
    Ok(got)
}

impl Runner<TripJob> for Processes {
    fn run(&mut self, job: &TripJob) -> Result<TripRun, RunError> {
        let (pinger, ponger) = two_way(job.mechanism, job.size).map_err(setup_error)?;
        let (ping_cpu, pong_cpu) = job.placement.cpus();
        let spec = EndSpec {
            mechanism: job.mechanism,
            size: job.size,
            verify: job.verify,
            shared_cpu: shared_cpu(job.placement),
            end: EndKind::Ponger,
        };
        let mut cmd = worker(spec, pong_cpu, &self.exe);
        cmd.stdin(Stdio::from(ponger.recv))
            .stdout(Stdio::from(ponger.send));
        let probe = NoiseProbe::start();
        let before = getrusage(UsageOf::Children).ok();
        let mut group = Group::new();
        let child = group
            .spawn(&mut cmd, "the ipc ponger".into())
            .map_err(|e| RunError::Failed(format!("cannot start the ponger: {e}")))?;
        drop(cmd);
        let ponger = Watched {
            label: "the ipc ponger".into(),
            task: Task::process(group.child(child).id()),
        };
        let (pinger_is, pinger_tid) = mpsc::channel();
        let (mechanism, size, verify) = (job.mechanism, job.size, job.verify);
        let (warmup_seconds, seconds) = (job.warmup_seconds, job.seconds);
        let pinger = EndThread::spawn("ipc pinger", move || {
            let _ = pinger_is.send(this_thread("the ipc pinger"));
            let before = getrusage(UsageOf::Thread).ok();
            let run = (|| {
                pin(ping_cpu, "pinger")?;
                let setup = |way| Setup {
                    size,
                    way,
                    shared_cpu: spec.shared_cpu,
                };
                let mut tx = sender(mechanism, pinger.send, setup(Way::Forward))?;
                let mut rx = receiver(mechanism, pinger.recv, setup(Way::Back))?;
                ping(
                    tx.as_mut(),
                    rx.as_mut(),
                    size,
                    warmup_seconds,
                    seconds,
                    verify,
                )
            })();
            (run, used_since(before, UsageOf::Thread).unwrap_or_default())
        })
        .map_err(|e| RunError::Failed(format!("cannot start the pinger: {e}")))?;
        // A stalled end: the ponger is killed, and the pinger's next send
        // or receive fails. A signal kills the ponger too, but may leave
        // the pinger waiting (see `EndThread`): the run ends without it.
        let tasks = [Some(ponger), pinger_tid.recv().ok()];
        let watch = watch_run(tasks.into_iter().flatten().collect(), job.stall_timeout);
        let pinged = match pinger.join() {
            Ok(Some(pinged)) => pinged,
            Ok(None) => {
                let why = crate::child::interrupted_error()
                    .map_or_else(|| "interrupted".into(), |e| e.to_string());
                return Err(RunError::Failed(why));
            }
            Err(e) => (Err(e), ResourceUsage::default()),
        };
        let watch = watch.map_err(|e| RunError::from_io(&e))?;
        let (run, pinger_used) = pinged;
        let ended = group.finish(child, EXIT_TIMEOUT);
        if let Some(stall) = watch.finish() {
            return Err(RunError::Stalled(Box::new(stall)));
        }
        // The ponger's words are the cause when both failed; a ponger
        // killed for waiting on a pinger that failed is not.
        if !ended.success() {
            if let (true, Err(e)) = (ended.killed, &run) {
                return Err(RunError::Failed(crate::quote::strerror(e)));
            }
            if ended.killed {
                return Err(RunError::Failed(
                    "the ipc ponger did not exit after the pinger finished; killed".into(),
                ));
            }
            return Err(end_failed("ipc ponger", &ended.stderr, ended.status));
        }
        let mut run = run.map_err(|e| RunError::Failed(crate::quote::strerror(&e)))?;
        let ponger_used = used_since(before, UsageOf::Children).unwrap_or_default();
        let used = pinger_used + ponger_used;
        let ends: Vec<usize> = [ping_cpu, pong_cpu].into_iter().flatten().collect();
        run.noise = Some(probe.finish(used.user + used.system, used.involuntary_switches, &ends));
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    use super::*;

    #[test]
    fn an_end_that_failed_is_read_by_its_typed_outcome_not_its_status() {
        let refused = RunError::Unavailable("io_uring is disabled".into());
        let stderr = format!("pipespeed: io_uring is disabled\n{}\n", refused.to_line());
        // Whatever the status says (1 here), the outcome line decides.
        let status = Some(ExitStatus::from_raw(1 << 8));
        assert_eq!(end_failed("ipc sender", &stderr, status), refused);
        let broke = RunError::Failed("a wrong byte".into());
        let stderr = format!("pipespeed: a wrong byte\n{}\n", broke.to_line());
        let status = Some(ExitStatus::from_raw(3 << 8));
        assert_eq!(end_failed("ipc receiver", &stderr, status), broke);
        // A crash says no outcome: its last words, or its status.
        let crashed = end_failed("ipc ponger", "thread 'main' panicked\n", status);
        assert_eq!(
            crashed,
            RunError::Failed("the ipc ponger failed: thread 'main' panicked".into())
        );
        let killed = Some(ExitStatus::from_raw(9));
        match end_failed("ipc sender", "", killed) {
            RunError::Failed(why) => assert!(why.contains("without a word"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
