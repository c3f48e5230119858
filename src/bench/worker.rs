//! Every child process a measurement starts is the pipespeed binary again,
//! run as the hidden `pipespeed worker SPEC`, where `SPEC` is one
//! [`Worker`] as JSON: the ends of a ladder rung, latency's ponger,
//! contend's writers and readers, and its memory hogs. One description,
//! built and read by the same types, so the two sides cannot drift apart
//! (the round trip is tested).
//!
//! [`crate::child`] starts and supervises the processes; this module says
//! what each one is and does it.
use crate::bench::core::pin;

use std::io;
use std::os::fd::BorrowedFd;
use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::contend::EndSetup;
use super::ipc::procs::EndSpec;
use super::latency::{Exchange, pong};
use super::reader::{ReaderConfig, run_reader};
use super::writer::{WriterConfig, run_writer};
use crate::sys::process::die_with_parent;
use crate::sys::{FdKind, fd_info};

/// The subcommand that makes the pipespeed binary a worker; the
/// [`Worker`] follows as JSON.
pub const WORKER_COMMAND: &str = "worker";

/// One worker process: what it is, where it runs and whom it dies with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Worker {
    /// What it does, with its standard input and output.
    #[serde(flatten)]
    pub role: Role,
    /// The CPU to pin it to before anything else.
    pub cpu: Option<usize>,
    /// The PID of the process that started it: it dies with that process,
    /// and refuses to start if that process is gone already. `None`: it
    /// dies with whatever process started it (`perf record`, under
    /// `bench --profile`).
    pub parent: Option<u32>,
}

/// What a worker does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "kebab-case")]
pub enum Role {
    /// A ladder rung's writer: the blog's `write`, into stdout.
    Writer {
        /// Its settings.
        config: WriterConfig,
    },
    /// A ladder rung's reader: the blog's `read`, from stdin; its
    /// [`ReadReport`](super::reader::ReadReport) goes to stdout as one
    /// JSON line, also when its input ended early.
    Reader {
        /// Its settings.
        config: ReaderConfig,
    },
    /// Latency's ponger: every message from stdin back to stdout, until
    /// end of file.
    Ponger {
        /// The messages.
        exchange: Exchange,
    },
    /// A contend writer: messages to stdout until the parent's stop time;
    /// stdin is its control socket (see [`super::contend`]).
    ContendWriter {
        /// Writer number (the id in its messages).
        index: usize,
        /// Message size and the rest.
        setup: EndSetup,
    },
    /// A contend reader: messages from stdin until end of file; stdout is
    /// its control socket.
    ContendReader {
        /// Reader number.
        index: usize,
        /// Message size and the rest.
        setup: EndSetup,
    },
    /// A memory hog of `bytes`, for contend's `--memory-pressure`: writes
    /// one byte to stdout once its memory is written.
    MemoryHog {
        /// Bytes mapped and written per round.
        bytes: u64,
    },
    /// An end of an `ipc` channel, on stdin and stdout.
    Ipc {
        /// Which end, of which mechanism.
        end: EndSpec,
    },
}

impl Role {
    /// How messages name it.
    pub fn name(&self) -> &'static str {
        match self {
            Role::Writer { .. } => "write",
            Role::Reader { .. } => "read",
            Role::Ponger { .. } => "ponger",
            Role::ContendWriter { .. } => "contend writer",
            Role::ContendReader { .. } => "contend reader",
            Role::MemoryHog { .. } => "memory hog",
            Role::Ipc { end } => end.name(),
        }
    }
}

impl Worker {
    /// `role` on `cpu`, dying with this process.
    pub fn new(role: Role, cpu: Option<usize>) -> Worker {
        Worker {
            role,
            cpu,
            parent: Some(std::process::id()),
        }
    }

    /// The description, as the argument after [`WORKER_COMMAND`].
    pub fn to_json(&self) -> String {
        // A derived Serialize of plain data cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a description made by [`Worker::to_json`].
    pub fn from_json(text: &str) -> io::Result<Worker> {
        serde_json::from_str(text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not a worker description: {e}"),
            )
        })
    }

    /// The arguments that make the pipespeed binary this worker.
    pub fn args(&self) -> [String; 2] {
        [WORKER_COMMAND.to_string(), self.to_json()]
    }

    /// `EXE worker SPEC`, its standard streams still to be set.
    pub fn command(&self, exe: &Path) -> Command {
        let mut cmd = Command::new(exe);
        cmd.args(self.args());
        cmd
    }

    /// Does the work, on this process's standard input and output.
    pub fn serve(&self, stdin: BorrowedFd<'_>, stdout: BorrowedFd<'_>) -> io::Result<()> {
        die_with_parent(self.parent)?;
        pin(self.cpu, self.role.name())?;
        let named = |e: io::Error| {
            io::Error::new(
                e.kind(),
                format!("{}: {}", self.role.name(), crate::quote::strerror(&e)),
            )
        };
        match &self.role {
            Role::Writer { config } => run_writer(stdout, config).map(drop).map_err(named),
            Role::Reader { config } => {
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
            Role::Ponger { exchange } => {
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
            Role::ContendWriter { index, setup } => {
                super::contend::serve_writer(stdin, stdout, *index, setup)
            }
            Role::ContendReader { index, setup } => {
                super::contend::serve_reader(stdout, stdin, *index, setup)
            }
            Role::MemoryHog { bytes } => super::contend::hog(*bytes, stdout),
            Role::Ipc { end } => end.serve(stdin, stdout).map_err(named),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::latency::Exchange;
    use crate::buf::BufferOptions;
    use crate::double_buffer::Layout;
    use crate::wait::Wait;

    fn every_role() -> Vec<Role> {
        let writer = WriterConfig {
            method: super::super::writer::WriteMethod::Vmsplice,
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
            layout: Layout::Contiguous,
            unsafe_early_reuse: Some(4096),
            verify: true,
            bytes: Some(u64::MAX),
        };
        let reader = ReaderConfig {
            method: super::super::reader::ReadMethod::Splice,
            bytes: 10 << 30,
            verify: true,
            wait: Wait::Poll,
            ..ReaderConfig::default()
        };
        let setup = EndSetup {
            msg_size: 65536,
            writers: 4,
            readers: 2,
            verify: true,
            cpu: Some(1),
        };
        vec![
            Role::Writer { config: writer },
            Role::Reader { config: reader },
            Role::Ponger {
                exchange: Exchange {
                    size: 4096,
                    wait: Wait::Busy,
                    verify: true,
                },
            },
            Role::ContendWriter { index: 3, setup },
            Role::ContendReader { index: 1, setup },
            Role::MemoryHog { bytes: 1 << 30 },
            Role::Ipc {
                end: EndSpec {
                    mechanism: crate::bench::ipc::Mechanism::ShmSpin,
                    size: 4095,
                    verify: true,
                    shared_cpu: true,
                    end: crate::bench::ipc::procs::EndKind::Sender { bytes: 1 << 40 },
                },
            },
        ]
    }

    #[test]
    fn every_description_reads_back_as_written() {
        for (i, role) in every_role().into_iter().enumerate() {
            let worker = Worker {
                role,
                cpu: (i % 2 == 0).then_some(i),
                parent: (i % 3 != 0).then_some(4242),
            };
            let [command, spec] = worker.args();
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
