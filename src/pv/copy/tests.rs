#![allow(clippy::unwrap_used)]

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::sync::{Mutex, OnceLock};

use super::*;

/// What the fake clock saw: the time slept, the sleeps, and the count
/// of the transfer at each sleep.
#[derive(Default)]
struct Seen {
    elapsed: Duration,
    counts: Vec<(Duration, u64)>,
}

/// A clock that moves only when the loop sleeps.
struct FakeClock {
    start: Instant,
    seen: Arc<Mutex<Seen>>,
    count: Arc<OnceLock<Arc<AtomicU64>>>,
}

impl Clock for FakeClock {
    fn now(&mut self) -> Instant {
        self.start + self.seen.lock().unwrap().elapsed
    }

    fn sleep(&mut self, duration: Duration) {
        let mut seen = self.seen.lock().unwrap();
        seen.elapsed += duration;
        let count = self.count.get().map_or(0, |c| c.load(Ordering::Relaxed));
        let at = seen.elapsed;
        seen.counts.push((at, count));
    }
}

fn file_of(bytes: &[u8]) -> File {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(bytes).unwrap();
    file.rewind().unwrap();
    file
}

fn contents(mut file: File) -> Vec<u8> {
    file.rewind().unwrap();
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).unwrap();
    bytes
}

fn data(n: u32) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

/// Copies `input` to `out` whole, skipping no error.
fn copy_all(transfer: &mut Transfer, input: impl AsFd, out: &File) -> Ended {
    transfer.copy(input, out, &mut |_| {}).unwrap()
}

/// A transfer on a fake clock, and what the clock saw.
fn faked(options: TransferOptions) -> (Transfer, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let count = Arc::new(OnceLock::new());
    let clock = FakeClock {
        start: Instant::now(),
        seen: Arc::clone(&seen),
        count: Arc::clone(&count),
    };
    let transfer = Transfer::with_clock(options, Box::new(clock));
    let _ = count.set(transfer.count());
    (transfer, seen)
}

#[test]
fn a_rate_limit_holds_the_copy_to_the_rate_and_loses_nothing() {
    let bytes = data(100_000);
    let (input, out) = (file_of(&bytes), tempfile::tempfile().unwrap());
    let rate = 10_000u64;
    let (mut transfer, seen) = faked(TransferOptions {
        rate_limit: Some(rate),
        ..TransferOptions::default()
    });
    assert_eq!(copy_all(&mut transfer, &input, &out), Ended::Input);
    assert_eq!(transfer.count().load(Ordering::Relaxed), 100_000);
    assert_eq!(contents(out), bytes);
    let seen = seen.lock().unwrap();
    // Never ahead of the rate: one burst (a tenth of a second's worth)
    // plus what the time so far earned.
    for &(at, count) in &seen.counts {
        let allowed = rate as f64 * (0.1 + at.as_secs_f64());
        assert!(count as f64 <= allowed + 1.0, "{count} bytes at {at:?}");
    }
    // And never slower: the bucket starts empty, so 100 000 bytes take
    // 10 s at 10 000 a second.
    let secs = seen.elapsed.as_secs_f64();
    assert!((9.9..=10.01).contains(&secs), "{secs} s");
    assert!(seen.counts.len() > 50, "{} sleeps", seen.counts.len());
}

#[test]
fn the_stop_size_ends_the_copy_exactly_there_over_all_inputs() {
    let (first, second) = (data(3000), data(5000));
    let out = tempfile::tempfile().unwrap();
    let (mut transfer, _) = faked(TransferOptions {
        stop_at: Some(4000),
        ..TransferOptions::default()
    });
    assert_eq!(copy_all(&mut transfer, file_of(&first), &out), Ended::Input);
    assert_eq!(
        copy_all(&mut transfer, file_of(&second), &out),
        Ended::StopSize
    );
    assert_eq!(
        copy_all(&mut transfer, file_of(&second), &out),
        Ended::StopSize
    );
    let expected = [&first[..], &second[..1000]].concat();
    assert_eq!(contents(out), expected);
}

#[test]
fn a_stop_size_and_a_rate_limit_together() {
    let bytes = data(50_000);
    let out = tempfile::tempfile().unwrap();
    let (mut transfer, seen) = faked(TransferOptions {
        rate_limit: Some(10_000),
        stop_at: Some(20_000),
        ..TransferOptions::default()
    });
    assert_eq!(
        copy_all(&mut transfer, file_of(&bytes), &out),
        Ended::StopSize
    );
    assert_eq!(contents(out), &bytes[..20_000]);
    let secs = seen.lock().unwrap().elapsed.as_secs_f64();
    assert!((1.9..=2.01).contains(&secs), "{secs} s");
}

#[test]
fn line_mode_counts_lines_and_copies_every_byte() {
    let text = b"one\ntwo\n\nthree without end".repeat(1000);
    let out = tempfile::tempfile().unwrap();
    let mut transfer = Transfer::new(TransferOptions {
        lines: true,
        ..TransferOptions::default()
    });
    assert_eq!(copy_all(&mut transfer, file_of(&text), &out), Ended::Input);
    assert_eq!(transfer.count().load(Ordering::Relaxed), 3000);
    assert_eq!(contents(out), text);
}

/// `-l -L`: the limit counts lines, however long they are: 20 lines of
/// 47 bytes at 40 lines a second take half a second of the fake clock
/// (counted in bytes they would take 23).
#[test]
fn a_line_limit_counts_lines_not_bytes() {
    let text = "a long line of text, much longer than one byte\n".repeat(20);
    let out = tempfile::tempfile().unwrap();
    let (mut transfer, seen) = faked(TransferOptions {
        lines: true,
        rate_limit: Some(40),
        ..TransferOptions::default()
    });
    assert_eq!(
        copy_all(&mut transfer, file_of(text.as_bytes()), &out),
        Ended::Input
    );
    assert_eq!(transfer.count().load(Ordering::Relaxed), 20);
    assert_eq!(contents(out), text.as_bytes());
    let secs = seen.lock().unwrap().elapsed.as_secs_f64();
    assert!((0.35..=0.55).contains(&secs), "{secs} s");
}
