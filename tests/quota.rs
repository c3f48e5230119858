//! The user's pipe budget (`/proc/sys/fs/pipe-user-pages-soft`): past
//! it, every new pipe of that user gets 2 pages and `F_SETPIPE_SZ` is
//! refused. `pipespeed cat` must not spend it on small files, and must
//! not fail where it is spent.
//!
//! Root is exempt from the budget, so as root the pipelines run as
//! `nobody`; as any other user they run as that user. The pipes must be
//! made by that user's processes (a pipe counts against its maker), so a
//! shell of that user makes them, on commands sent to its stdin. Alone in
//! its binary, and one test at a time, so that no other test of the same
//! user makes pipes meanwhile.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::{PermissionsExt, chown};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::thread::sleep;
use std::time::{Duration, Instant};

mod common;

use pipespeed::sys::fcntl_getpipe_size;
use rustix::fs::{Mode, OFlags, fstat, open};

/// One test at a time: both spend the same budget.
static BUDGET: Mutex<()> = Mutex::new(());

const KIB: usize = 1024;

/// How long a pipeline may take to start copying.
const PATIENCE: Duration = Duration::from_secs(60);

/// A shell of an unprivileged user, in its own process group, running
/// the commands it is sent; killed with everything it started on drop.
struct UserShell {
    child: Child,
    commands: ChildStdin,
    answers: BufReader<ChildStdout>,
    /// The inode of the pipe the commands come through: a child the
    /// shell has forked has it as stdin until it sets up its own.
    commands_ino: u64,
    /// Processes started, to see gone before the budget counts as free.
    started: Vec<u32>,
    dir: tempfile::TempDir,
}

/// The user to run as: `Ok(None)` for this process's own (not root),
/// `nobody`'s uid and gid as root, or why there is none.
fn unprivileged_user() -> Result<Option<(u32, u32)>, String> {
    if !rustix::process::geteuid().is_root() {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(|e| format!("/etc/passwd: {e}"))?;
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            match fields[..] {
                ["nobody", _, uid, gid, ..] => Some((uid.parse().ok()?, gid.parse().ok()?)),
                _ => None,
            }
        })
        .map(Some)
        .ok_or_else(|| "running as root and /etc/passwd has no user nobody".to_string())
}

impl UserShell {
    /// A shell of an unprivileged user with `$BIN` set to the pipespeed
    /// binary and `$D` to a directory it can read and write holding
    /// `files` (name, length); or why there can be none.
    fn start(files: &[(&str, usize)]) -> Result<UserShell, String> {
        let soft = std::fs::read_to_string("/proc/sys/fs/pipe-user-pages-soft")
            .map_err(|e| format!("/proc/sys/fs/pipe-user-pages-soft: {e}"))?;
        if soft.trim() == "0" {
            return Err("pipe-user-pages-soft is 0: no per-user pipe budget here".into());
        }
        let user = unprivileged_user()?;
        let dir = tempfile::tempdir().unwrap();
        for (name, len) in files {
            std::fs::write(dir.path().join(name), vec![b'q'; *len]).unwrap();
        }
        if let Some((uid, gid)) = user {
            chown(dir.path(), Some(uid), Some(gid)).unwrap();
        }
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = env!("CARGO_BIN_EXE_pipespeed");
        let mut command = Command::new("sh");
        command
            .arg("-s")
            .env("BIN", bin)
            .env("D", dir.path())
            .current_dir(dir.path())
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        if let Some((uid, gid)) = user {
            command.uid(uid).gid(gid);
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start sh: {e}"))?;
        let commands = child.stdin.take().unwrap();
        let commands_ino = fstat(&commands).unwrap().st_ino;
        let answers = BufReader::new(child.stdout.take().unwrap());
        let mut shell = UserShell {
            child,
            commands,
            answers,
            commands_ino,
            started: Vec::new(),
            dir,
        };
        // A clone nobody may not read holds a binary nobody may not run.
        let answer = shell.run(r#"test -x "$BIN" && test -r "$D" && echo yes || echo no"#);
        if answer != "yes" {
            let who = user.map_or("this user".to_string(), |(uid, _)| format!("uid {uid}"));
            return Err(format!(
                "{who} cannot run {bin} (a directory on its path is closed to it)"
            ));
        }
        Ok(shell)
    }

    /// Runs `command` (which must print one line) and returns that line.
    fn run(&mut self, command: &str) -> String {
        writeln!(self.commands, "{command}").unwrap();
        let mut line = String::new();
        self.answers.read_line(&mut line).unwrap();
        assert!(line.ends_with('\n'), "the shell ended after {command:?}");
        line.trim_end().to_string()
    }

    /// Starts `pipeline | sleep` in the background, `n` times (with `$i`
    /// counting from 0), and returns the pipes between them, once each
    /// has received bytes: the writer has sized its pipes by then.
    fn pipelines(&mut self, n: usize, pipeline: &str) -> Vec<OwnedFd> {
        let readers = self.run(&format!(
            r#"i=0; p=; while [ $i -lt {n} ]; do {pipeline} | sleep 600 & p="$p $!"; i=$((i + 1)); done; echo $p"#
        ));
        let pids: Vec<u32> = readers.split(' ').map(|p| p.parse().unwrap()).collect();
        assert_eq!(pids.len(), n, "{readers}");
        self.started.extend(&pids);
        pids.iter()
            .map(|&pid| {
                let pipe = self.stdin_pipe_of(pid);
                let since = Instant::now();
                while rustix::io::ioctl_fionread(&pipe).unwrap() == 0 {
                    assert!(
                        since.elapsed() < PATIENCE,
                        "nothing arrived in {pid}'s pipe"
                    );
                    sleep(Duration::from_millis(10));
                }
                pipe
            })
            .collect()
    }

    /// The size of a pipe the user makes now.
    fn new_pipe_size(&mut self) -> usize {
        let pid = self.run("sleep 600 | sleep 600 & echo $!").parse().unwrap();
        self.started.push(pid);
        fcntl_getpipe_size(self.stdin_pipe_of(pid)).unwrap()
    }

    /// The pipe `pid` reads, opened through /proc, once the process has
    /// it as its stdin.
    fn stdin_pipe_of(&self, pid: u32) -> OwnedFd {
        let path = format!("/proc/{pid}/fd/0");
        let since = Instant::now();
        loop {
            let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
            if let Ok(fd) = open(path.as_str(), flags, Mode::empty()) {
                let st = fstat(&fd).unwrap();
                let fifo = rustix::fs::FileType::from_raw_mode(st.st_mode).is_fifo();
                if fifo && st.st_ino != self.commands_ino {
                    return fd;
                }
            }
            assert!(
                since.elapsed() < PATIENCE,
                "{path} is not a pipe of its own"
            );
            sleep(Duration::from_millis(10));
        }
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for UserShell {
    fn drop(&mut self) {
        let group = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        let _ = self.child.wait();
        // The budget is given back as the processes exit: wait for them.
        let since = Instant::now();
        for pid in &self.started {
            let fd0 = PathBuf::from(format!("/proc/{pid}/fd/0"));
            while fd0.exists() && since.elapsed() < PATIENCE {
                sleep(Duration::from_millis(10));
            }
        }
    }
}

/// The shell, or `None` after saying on stderr why there is none.
fn user_shell(files: &[(&str, usize)]) -> Option<UserShell> {
    match UserShell::start(files) {
        Ok(shell) => Some(shell),
        Err(why) => {
            common::skip("pipe_budget", &why);
            None
        }
    }
}

#[test]
fn two_hundred_copies_of_small_files_leave_the_users_pipes_at_64_kib() {
    let _one_at_a_time = BUDGET.lock().unwrap_or_else(|e| e.into_inner());
    // Small enough for read/write, and large enough for splice through
    // the intermediate pipe; both fit in a 64 KiB pipe.
    let files = [("small0", 1000), ("small1", 60 * KIB)];
    let Some(mut shell) = user_shell(&files) else {
        return;
    };
    assert_eq!(shell.new_pipe_size(), 64 * KIB, "before any copy");
    // Their pipes stay alive while the new one is made: the readers
    // have not read yet.
    let pipes = shell.pipelines(200, r#""$BIN" cat "$D/small$((i % 2))""#);
    let sizes: Vec<usize> = pipes
        .iter()
        .map(|p| fcntl_getpipe_size(p).unwrap())
        .collect();
    let grown = sizes.iter().filter(|&&s| s != 64 * KIB).count();
    assert_eq!(
        shell.new_pipe_size(),
        64 * KIB,
        "{grown} of the 200 pipes are not 64 KiB: {:?}",
        &sizes[..10]
    );
    assert_eq!(grown, 0, "{sizes:?}");
}

#[test]
fn a_spent_budget_only_leaves_the_pipes_small() {
    let _one_at_a_time = BUDGET.lock().unwrap_or_else(|e| e.into_inner());
    let max = pipespeed::sys::pipe_max_size().unwrap();
    let soft: usize = std::fs::read_to_string("/proc/sys/fs/pipe-user-pages-soft")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let page = rustix::param::page_size();
    // A copy of a file larger than the largest pipe enlarges its stdout
    // and its intermediate pipe to it, and blocks with both full.
    let per_copy = 2 * max / page;
    let copies = soft.div_ceil(per_copy.max(1)) + 4;
    if copies > 400 {
        common::skip(
            "pipe_budget",
            &format!("spending a budget of {soft} pages takes {copies} copies"),
        );
        return;
    }
    let big = 2 * max;
    let Some(mut shell) = user_shell(&[("big", big)]) else {
        return;
    };
    shell.pipelines(copies, r#""$BIN" cat "$D/big""#);
    // Growth stops short of the budget by less than one pipe's growth:
    // default pipes fill that gap.
    shell.pipelines(max / page / 16 + 2, "echo gap");
    assert_eq!(
        shell.new_pipe_size(),
        2 * page,
        "{copies} copies of {big} bytes did not spend a budget of {soft} pages"
    );
    // A copy now cannot enlarge anything, and still copies everything.
    let answer = shell.run(
        r#"a=$( { "$BIN" cat "$D/big"; echo $? > "$D/status"; } | cksum); b=$(cksum < "$D/big"); echo "$(cat "$D/status") $a $b""#,
    );
    let fields: Vec<&str> = answer.split(' ').collect();
    assert_eq!(fields.len(), 5, "{answer}");
    assert_eq!(fields[0], "0", "the copy's exit status: {answer}");
    assert_eq!(
        fields[1..3],
        fields[3..5],
        "checksums, copied and read: {answer}"
    );
    assert!(shell.dir().join("status").exists());
    // tee too: from a pipe to a pipe and two files, its own pipes small.
    let answer = shell.run(
        r#"a=$( { cat "$D/big" | "$BIN" tee "$D/t1" "$D/t2"; echo $? > "$D/status2"; } | cksum); b=$(cat "$D/t1" | cksum); c=$(cat "$D/t2" | cksum); d=$(cksum < "$D/big"); echo "$(cat "$D/status2") $a $b $c $d""#,
    );
    let fields: Vec<&str> = answer.split(' ').collect();
    assert_eq!(fields.len(), 9, "{answer}");
    assert_eq!(fields[0], "0", "tee's exit status: {answer}");
    for copy in [&fields[1..3], &fields[3..5], &fields[5..7]] {
        assert_eq!(copy, &fields[7..9], "checksums, teed and read: {answer}");
    }
}
