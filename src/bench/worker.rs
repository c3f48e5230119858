//! Every child process a measurement starts is the pipespeed binary
//! again, as the hidden `pipespeed worker SPEC` (`SPEC`: one [`Worker`] as
//! JSON). Each kind writes it through its
//! [`RoleSpec`](crate::bench::core::RoleSpec); this module reads the same
//! types back and runs them, so the two sides cannot drift apart.
use crate::bench::core::pin;

use std::io;
use std::os::fd::BorrowedFd;

use serde::{Deserialize, Serialize};

use super::contend::{HogSpec, ReaderSpec, WriterSpec};
use super::ipc::procs::EndSpec;
use super::ping::{Exchange, pong};
use super::reader::{ReaderConfig, run_reader};
use super::writer::{WriterConfig, run_writer};
use crate::sys::process::die_with_parent;
use crate::sys::{FdKind, fd_info};

/// One worker process, as it reads its description: what it is, where
/// it runs and whom it dies with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Worker {
    /// What it does, with its standard input and output.
    #[serde(flatten)]
    pub role: Role,
    /// The CPU to pin it to before anything else.
    pub cpu: Option<usize>,
    /// The PID it dies with (refusing to start if it is gone); `None`:
    /// whatever process started it (`perf record`, under `--profile`).
    pub parent: Option<u32>,
}

/// What a worker does: the `RoleSpec` of the kind that starts it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "kebab-case")]
pub(crate) enum Role {
    /// A ladder rung's writer: the blog's `write`, into stdout.
    Writer(WriterConfig),
    /// A ladder rung's reader: the blog's `read`, from stdin; its report
    /// goes to stdout as one JSON line, also when its input ended early.
    Reader(ReaderConfig),
    /// Latency's ponger: every message from stdin back to stdout.
    Ponger(Exchange),
    /// A contend writer: messages to stdout until the parent's stop time;
    /// stdin is its control socket (see [`super::contend`]).
    ContendWriter(WriterSpec),
    /// A contend reader: messages from stdin until end of file; stdout is
    /// its control socket.
    ContendReader(ReaderSpec),
    /// A memory hog for contend's `--memory-pressure`: one byte to stdout
    /// once its memory is written.
    MemoryHog(HogSpec),
    /// An end of an `ipc` channel, on stdin and stdout.
    Ipc(EndSpec),
}

impl Role {
    /// How messages name it.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Role::Writer(_) => "write",
            Role::Reader(_) => "read",
            Role::Ponger(_) => "ponger",
            Role::ContendWriter(_) => "contend writer",
            Role::ContendReader(_) => "contend reader",
            Role::MemoryHog(_) => "memory hog",
            Role::Ipc(end) => end.name(),
        }
    }
}

impl Worker {
    /// Reads a description made by
    /// [`Spawn::to_json`](crate::bench::core::Spawn::to_json).
    pub(crate) fn from_json(text: &str) -> io::Result<Worker> {
        serde_json::from_str(text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not a worker description: {e}"),
            )
        })
    }

    /// Does the work, on this process's standard input and output.
    pub(crate) fn serve(&self, stdin: BorrowedFd<'_>, stdout: BorrowedFd<'_>) -> io::Result<()> {
        die_with_parent(self.parent)?;
        pin(self.cpu, self.role.name())?;
        let named = |e: io::Error| {
            io::Error::new(
                e.kind(),
                format!("{}: {}", self.role.name(), crate::quote::strerror(&e)),
            )
        };
        match &self.role {
            Role::Writer(config) => run_writer(stdout, config).map(drop).map_err(named),
            Role::Reader(config) => {
                let report = run_reader(stdin, config).map_err(named)?;
                let mut line = serde_json::to_vec(&report)?;
                line.push(b'\n');
                crate::wait::write_all(stdout, &line, |_| {})?;
                match &report.mismatch {
                    Some(mismatch) => Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("verify failed: {mismatch}"),
                    )),
                    None => Ok(()),
                }
            }
            Role::Ponger(exchange) => {
                for (name, fd) in [("stdin", stdin), ("stdout", stdout)] {
                    if fd_info(fd).map(|i| i.kind).ok() != Some(FdKind::Pipe) {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!("the ponger's {name} must be a pipe"),
                        ));
                    }
                }
                pong(stdin, stdout, exchange).map(drop)
            }
            Role::ContendWriter(WriterSpec { index, setup }) => {
                super::contend::serve_writer(stdin, stdout, *index, setup)
            }
            Role::ContendReader(ReaderSpec { index, setup }) => {
                super::contend::serve_reader(stdout, stdin, *index, setup)
            }
            Role::MemoryHog(HogSpec { bytes }) => super::contend::hog(*bytes, stdout),
            Role::Ipc(end) => end.serve(stdin, stdout).map_err(named),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::contend::EndSetup;
    use crate::bench::core::Spawn;
    use crate::bench::latency::Exchange;
    use crate::bench::writer::EndConfig;
    use crate::buf::BufferOptions;
    use crate::double_buffer::Layout;
    use crate::wait::Wait;

    fn every_role() -> Vec<(Spawn, Role)> {
        let writer = WriterConfig {
            method: super::super::writer::WriteMethod::Vmsplice,
            end: EndConfig {
                buf_size: 1 << 20,
                pipe_size: Some(65536),
                buffer: BufferOptions {
                    huge_pages: true,
                    lock: true,
                    dont_touch: false,
                    offset: 16,
                },
                check_huge_pages: true,
                wait: Wait::BusyPoll,
                gift: true,
                verify: true,
            },
            layout: Layout::Contiguous,
            unsafe_early_reuse: Some(4096),
            bytes: Some(u64::MAX),
        };
        let reader = ReaderConfig {
            method: super::super::reader::ReadMethod::Splice,
            end: EndConfig {
                verify: true,
                wait: Wait::Poll,
                ..EndConfig::default()
            },
            bytes: 10 << 30,
        };
        let setup = EndSetup {
            msg_size: 65536,
            writers: 4,
            readers: 2,
            verify: true,
            cpu: Some(1),
        };
        let exchange = Exchange {
            size: 4096,
            wait: Wait::Busy,
            verify: true,
        };
        let end = EndSpec {
            mechanism: crate::bench::ipc::Mechanism::ShmSpin,
            size: 4095,
            verify: true,
            shared_cpu: true,
            end: crate::bench::ipc::procs::EndKind::Sender { bytes: 1 << 40 },
        };
        let contend_writer = WriterSpec { index: 3, setup };
        let contend_reader = ReaderSpec { index: 1, setup };
        let hog = HogSpec { bytes: 1 << 30 };
        // What each kind writes, and what this module must read back.
        vec![
            (Spawn::new(&writer, None), Role::Writer(writer)),
            (Spawn::new(&reader, None), Role::Reader(reader)),
            (Spawn::new(&exchange, None), Role::Ponger(exchange)),
            (
                Spawn::new(&contend_writer, None),
                Role::ContendWriter(contend_writer),
            ),
            (
                Spawn::new(&contend_reader, None),
                Role::ContendReader(contend_reader),
            ),
            (Spawn::new(&hog, None), Role::MemoryHog(hog)),
            (Spawn::new(&end, None), Role::Ipc(end)),
        ]
    }

    #[test]
    fn every_description_reads_back_as_written() {
        for (i, (mut spawn, role)) in every_role().into_iter().enumerate() {
            spawn.cpu = (i % 2 == 0).then_some(i);
            spawn.parent = (i % 3 != 0).then_some(4242);
            let worker = Worker {
                role,
                cpu: spawn.cpu,
                parent: spawn.parent,
            };
            let [command, spec] = spawn.args();
            assert_eq!(command, "worker");
            assert_eq!(Worker::from_json(&spec).unwrap(), worker, "{spec}");
        }
    }

    #[test]
    fn a_description_that_is_not_one_is_refused_naming_it() {
        for text in ["{not json", "{\"role\":\"juggler\"}", "[]"] {
            let err = Worker::from_json(text).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
            assert!(
                err.to_string().contains("not a worker description"),
                "{err}"
            );
        }
    }
}
