#![allow(clippy::unwrap_used)]

use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::process::{Pid, Signal, kill_process};

use super::super::outcome::RunError;
use super::threads::lock;
use super::*;

fn counters(cpu: u64, switches: u64) -> Option<Counters> {
    Some(Counters { cpu, switches })
}

#[test]
fn a_run_whose_tasks_all_stand_still_for_the_timeout_is_stalled() {
    let t0 = Instant::now();
    let s = Duration::from_secs(1);
    // Task 0 stands still, task 1 runs for 3 s, then stands still too;
    // task 2 sleeps and wakes (only its switches move) for 4 s; task 3
    // ends.
    let mut p = Progress::new(&[counters(5, 5); 4], t0);
    for k in 1..=40u64 {
        let now = t0 + s * k as u32 / 4;
        let t = now - t0;
        p.observe(0, counters(5, 5), now);
        p.observe(1, counters(5 + k.min(12), 5), now);
        p.observe(2, counters(5, 5 + k.min(16)), now);
        p.observe(3, None, now);
        // While one task progresses, a still one is waiting for it, not
        // stalled; once none has for 2 s (4 s + 2 s), the run is, and the
        // longest still task is named.
        let expected = (t >= 6 * s).then_some(0);
        assert_eq!(p.stalled(now, 2 * s), expected, "after {t:?}");
    }
    assert_eq!(p.idle(0, t0 + 5 * s), Some(5 * s));
    assert_eq!(p.idle(1, t0 + 5 * s), Some(2 * s));
    assert_eq!(p.idle(3, t0 + 5 * s), None);
    // An ended task stays ended, whatever comes after.
    p.observe(3, counters(1, 1), t0 + 6 * s);
    assert_eq!(p.idle(3, t0 + 6 * s), None);
    // A run whose tasks have all ended is not stalled.
    let mut ended = Progress::new(&[counters(1, 1)], t0);
    ended.observe(0, None, t0 + s);
    assert_eq!(ended.stalled(t0 + 10 * s, 2 * s), None);
}

#[test]
fn the_longest_still_task_is_the_one_named() {
    let t0 = Instant::now();
    let s = Duration::from_secs(1);
    let mut p = Progress::new(&[counters(1, 1), counters(1, 1)], t0);
    // Task 1 stops one second before task 0 does.
    p.observe(0, counters(2, 1), t0 + s);
    p.observe(1, counters(1, 1), t0 + s);
    assert_eq!(p.stalled(t0 + 3 * s, 2 * s), Some(1));
    assert_eq!(p.stalled(t0 + 3 * s, 4 * s), None);
}

fn task(label: &str, state: &str, no_progress_s: f64) -> StalledTask {
    StalledTask {
        label: label.into(),
        pid: 1,
        tid: None,
        no_progress_s,
        state: Some(state.into()),
        wchan: None,
        syscall: "running".into(),
        stack: Vec::new(),
        stack_unreadable: None,
    }
}

#[test]
fn a_stopped_or_d_state_task_is_named_before_those_that_wait_for_it() {
    let mut tasks = vec![
        task("pinger", "S (sleeping)", 1.0),
        task("reader 1", "S (sleeping)", 3.0),
        task("ponger", "T (stopped)", 0.9),
        task("writer 0", "D (disk sleep)", 2.0),
    ];
    order(&mut tasks);
    let labels: Vec<&str> = tasks.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["writer 0", "ponger", "reader 1", "pinger"]);
}

/// `sleep 100`, stopped by SIGSTOP, once its state says so.
fn stopped_sleep() -> Child {
    let mut child = Command::new("sleep").arg("100").spawn().unwrap();
    let pid = Pid::from_raw(child.id() as i32).unwrap();
    kill_process(pid, Signal::STOP).unwrap();
    let task = Task::process(child.id());
    for _ in 0..1000 {
        if task::locate(task).state.is_some_and(|s| s.starts_with('T')) {
            return child;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("sleep was not stopped after 10 s");
}

#[test]
fn a_stopped_process_is_reported_stalled_with_its_state_and_killed() {
    let mut child = stopped_sleep();
    let pid = child.id();
    let called = Arc::new(AtomicBool::new(false));
    let seen = called.clone();
    let watched = vec![Watched {
        label: "writer 0".into(),
        task: Task::process(pid),
    }];
    let watch = Watch::start(watched, Duration::from_millis(200), move |stall| {
        seen.store(true, Ordering::SeqCst);
        assert_eq!(stall.tasks[0].label, "writer 0");
        let _ = kill_process(Pid::from_raw(pid as i32).unwrap(), Signal::KILL);
    })
    .unwrap();
    // The watchdog ends the stopped child: waiting returns.
    let status = child.wait().unwrap();
    let stall = watch.finish().unwrap();
    assert!(called.load(Ordering::SeqCst));
    assert!(!status.success());
    let task = &stall.tasks[0];
    assert_eq!((task.pid, task.tid), (pid, None));
    assert_eq!(task.state.as_deref(), Some("T (stopped)"));
    assert!(task.no_progress_s >= 0.2, "{}", task.no_progress_s);
    // The stack as root, else why not: never both, never neither.
    assert_ne!(task.stack.is_empty(), task.stack_unreadable.is_none());
    let message = stall.to_string();
    assert!(
        message.starts_with("writer 0 stalled: no progress for ")
            && message.contains("state T (stopped)"),
        "{message}"
    );
}

#[test]
fn a_run_that_ends_in_time_has_no_stall() {
    let mut child = stopped_sleep();
    let watched = vec![Watched {
        label: "reader 0".into(),
        task: Task::process(child.id()),
    }];
    let watch = Watch::start(watched, Duration::from_secs(3600), |_| {
        panic!("no stall within an hour")
    })
    .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(watch.finish(), None);
}

#[test]
fn a_thread_that_never_wakes_is_reported_stalled_and_the_run_returns() {
    let crate::sys::PipePair { read, write } = crate::sys::pipe().unwrap();
    let ended = run_threads(Duration::from_millis(300), move |roster| {
        std::thread::scope(|s| {
            let reader = s.spawn(|| {
                roster.enlist("reader 0".into());
                // Nobody writes: it sleeps until the test lets it go.
                let mut byte = [0u8; 1];
                rustix::io::read(&read, &mut byte)
            });
            // Its TID is enlisted before it blocks.
            while lock(&roster.tasks).is_empty() {
                std::thread::sleep(Duration::from_millis(1));
            }
            roster.watch().unwrap();
            reader.join().unwrap()
        })
    });
    let Err(RunError::Stalled(stall)) = ended else {
        panic!("not a stall: {ended:?}")
    };
    // Let the abandoned thread go.
    rustix::io::write(&write, b"x").unwrap();
    let task = &stall.tasks[0];
    assert_eq!(task.label, "reader 0");
    assert_eq!(task.pid, std::process::id());
    assert!(task.tid.is_some_and(|t| t != task.pid), "{task:?}");
    assert_eq!(task.state.as_deref(), Some("S (sleeping)"));
    assert!(task.syscall.starts_with("read("), "{}", task.syscall);
}

#[test]
fn a_run_in_threads_that_ends_returns_its_value() {
    let ended = run_threads(Duration::from_secs(3600), |roster| {
        roster.enlist("writer 0".into());
        roster.watch().unwrap();
        7
    });
    assert_eq!(ended, Ok(7));
}
