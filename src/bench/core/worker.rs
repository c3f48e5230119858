//! Starting a worker: every child process a measurement starts is the
//! pipespeed binary again, as the hidden `pipespeed worker SPEC`, where
//! `SPEC` is the role's own description as JSON, tagged with its name,
//! with the CPU to pin it to and the process it dies with.
//!
//! A kind describes its workers with its own types ([`RoleSpec`]), and
//! [`bench::worker`](crate::bench::worker) reads the same types back and
//! runs them: the kinds build on this module, never on the module that
//! runs every kind (a test round-trips every role).

use std::path::Path;
use std::process::Command;

use serde::Serialize;
use serde_json::{Map, Value};

/// The subcommand that makes the pipespeed binary a worker; the
/// description follows as JSON.
pub const WORKER_COMMAND: &str = "worker";

/// What one kind of worker is told: serialized as a JSON object, it is
/// the worker's description, with `"role": ROLE`.
pub trait RoleSpec: Serialize {
    /// The role's name in the description (`writer`, `ponger`, ...).
    const ROLE: &'static str;
}

/// A worker to start: its description, where it runs and whom it dies
/// with.
#[derive(Debug, Clone, PartialEq)]
pub struct Spawn {
    role: &'static str,
    spec: Map<String, Value>,
    /// The CPU to pin it to before anything else.
    pub cpu: Option<usize>,
    /// The PID it dies with, and that must still be alive when it starts
    /// (`None`: whatever process started it, as `perf record` does under
    /// `bench --profile`).
    pub parent: Option<u32>,
}

impl Spawn {
    /// A worker of `role` on `cpu`, dying with this process.
    pub fn new<R: RoleSpec>(role: &R, cpu: Option<usize>) -> Spawn {
        let spec = match serde_json::to_value(role) {
            Ok(Value::Object(map)) => map,
            // A RoleSpec is a struct of plain data: always an object.
            _ => Map::new(),
        };
        Spawn {
            role: R::ROLE,
            spec,
            cpu,
            parent: Some(std::process::id()),
        }
    }

    /// The role's name.
    pub fn role(&self) -> &'static str {
        self.role
    }

    /// The description, as the argument after `WORKER_COMMAND`.
    pub fn to_json(&self) -> String {
        let mut all = self.spec.clone();
        all.insert("role".into(), Value::from(self.role));
        all.insert("cpu".into(), serde_json::json!(self.cpu));
        all.insert("parent".into(), serde_json::json!(self.parent));
        Value::Object(all).to_string()
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
}
