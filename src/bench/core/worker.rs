//! Starting a worker: every child process a measurement starts is the
//! pipespeed binary again, as the hidden `pipespeed worker SPEC`, where
//! `SPEC` is the role's own description as JSON, tagged with its name,
//! with the CPU to pin it to and the process it dies with.
//!
//! A kind describes its workers with its own types ([`RoleSpec`]), and
//! `bench::worker` reads the same types back and runs them: the kinds
//! build on this module, never on the module that runs every kind (a
//! test round-trips every role).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use super::outcome::RunError;
use crate::child::{Group, interrupted_error, last_message};

/// The subcommand that makes the pipespeed binary a worker; the
/// description follows as JSON.
pub(crate) const WORKER_COMMAND: &str = "worker";

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

/// What a finished worker left on its standard error, read the same way
/// for every kind: the outcome it reported, typed
/// ([`RunError::from_worker`]), else its last words (a crash, a panic),
/// else nothing, when how it ended is all there is to say.
#[derive(Debug, PartialEq)]
pub(crate) enum Told<'a> {
    /// Its outcome line: what the machine cannot do, or why it failed.
    Outcome(RunError),
    /// No outcome line: its last message ([`last_message`]).
    Words(&'a str),
    /// Not a word.
    Nothing,
}

impl<'a> Told<'a> {
    /// What `stderr`, a finished worker's standard error, tells.
    pub(crate) fn of(stderr: &'a str) -> Told<'a> {
        match RunError::from_worker(stderr) {
            Some(err) => Told::Outcome(err),
            None => match last_message(stderr) {
                "" => Told::Nothing,
                words => Told::Words(words),
            },
        }
    }
}

/// Why the worker at `index` of `group` stopped early while `doing`,
/// typed as it said (the machine cannot, or it failed), else its last
/// message or how it ended (a crash, a signal); an interrupt first, if
/// there was one. A worker that has not exited within
/// [`FAILING_WORKER_GRACE`] broke the protocol and is killed (its stderr
/// would never end); one that is failing has that long to say why.
pub(crate) fn failure(group: &mut Group, index: usize, label: &str, doing: &str) -> RunError {
    if let Some(err) = interrupted_error() {
        return RunError::Failed(err.to_string());
    }
    let ended = group.finish(index, FAILING_WORKER_GRACE);
    let why = match Told::of(&ended.stderr) {
        Told::Outcome(RunError::Unavailable(why)) => {
            return RunError::Unavailable(format!("{label}: {why}"));
        }
        Told::Outcome(RunError::Failed(why)) => why,
        Told::Outcome(stalled @ RunError::Stalled(_)) => return stalled,
        Told::Words(said) => said.to_string(),
        Told::Nothing if ended.killed => "it stopped answering and was killed".to_string(),
        Told::Nothing => match ended.status {
            Some(status) => format!("it ended ({status}) without a word"),
            None => "it could not be waited for".to_string(),
        },
    };
    RunError::Failed(format!("{label} failed while {doing}: {why}"))
}

/// How long a worker that broke off may take to exit and say why.
const FAILING_WORKER_GRACE: Duration = Duration::from_secs(1);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::process::Stdio;

    use super::*;

    /// The failure of a worker that ran `script` (sh) and ended.
    fn failure_of(script: &str) -> RunError {
        let mut group = Group::new();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let index = group.spawn(&mut cmd, "writer 0".into()).unwrap();
        failure(&mut group, index, "writer 0", "writing")
    }

    #[test]
    fn a_worker_s_failure_is_read_typed_from_its_outcome_line() {
        let unavailable = RunError::Unavailable("huge pages not granted".into()).to_line();
        let err = failure_of(&format!(
            "echo 'pipespeed: huge pages not granted' >&2; echo '{unavailable}' >&2; exit 1"
        ));
        // Typed by what it said, not by its exit status.
        assert_eq!(
            err,
            RunError::Unavailable("writer 0: huge pages not granted".into())
        );
        let failed = RunError::Failed("short read".into()).to_line();
        let err = failure_of(&format!("echo '{failed}' >&2; exit 3"));
        assert_eq!(
            err,
            RunError::Failed("writer 0 failed while writing: short read".into())
        );
        // No outcome line (a crash, a signal): its last words, or its end.
        let err = failure_of("echo 'pipespeed: out of cheese' >&2; exit 1");
        assert_eq!(
            err,
            RunError::Failed("writer 0 failed while writing: out of cheese".into())
        );
        let err = failure_of("kill -9 $$");
        let RunError::Failed(why) = err else {
            panic!("{err:?}")
        };
        assert!(
            why.starts_with("writer 0 failed while writing: it ended ("),
            "{why}"
        );
    }
}
