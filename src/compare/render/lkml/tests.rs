use super::*;
use crate::bench::ladder::Rung;
use crate::compare::bootstrap::Bootstrap;
use crate::compare::tests::{RUNS, WriteRuns, bench, change, contend, faster_latency, rung};
use crate::compare::{Document, Verdict, compare};

/// Each run of `RUNS` scaled: writes/s by `writes`, p99 by `p99`.
fn cell_runs(writes: f64, p99: f64) -> Vec<(f64, u64)> {
    RUNS.iter()
        .map(|r| (r * 4000.0 * writes, (r * 13_000.0 * p99) as u64))
        .collect()
}

/// A 2x2 grid: 1x1 faster (writes x1.25, p99 x0.8), 1x2 unchanged, 2x1
/// one run in new, 2x2 only in base; new's kernel and virtualization
/// differ.
fn grid() -> Comparison {
    let same = cell_runs(1.0, 1.0);
    let base: [((usize, usize), WriteRuns); 4] = [
        ((1, 1), &same),
        ((1, 2), &same),
        ((2, 1), &same),
        ((2, 2), &same),
    ];
    let faster = cell_runs(1.25, 0.8);
    let reordered: Vec<(f64, u64)> = same.iter().rev().copied().collect();
    let one = [same[3]];
    let new: [((usize, usize), WriteRuns); 3] =
        [((1, 1), &faster), ((1, 2), &reordered), ((2, 1), &one)];
    let Document::Contend(mut b) = contend(65536, &base) else {
        unreachable!()
    };
    b.header.system.virtualization = Some("kvm".into());
    let Document::Contend(mut n) = contend(65536, &new) else {
        unreachable!()
    };
    n.header.system.kernel = "6.6.0-rc1+".into();
    n.header.system.virtualization = Some("none".into());
    let (b, n) = (Document::Contend(b), Document::Contend(n));
    compare(&b, "base.json", &n, "new.json", &Bootstrap::default()).unwrap()
}

#[test]
fn contend_snapshot() {
    let expected = "\
pipespeed contend: base -> patched (change), medians of the runs
kernel          6.1.0 -> 6.6.0-rc1+
cpu             Test CPU
cpus online     2
virtualization  kvm -> none
pipe-max-size   1MiB
thp             madvise
placement       unpinned
runs per cell   5 -> 1-5

writes/s (higher is better), writers (w) x readers (r):
w\\r  1                       2
1    40.0k -> 50.0k  *+25%*  40.0k -> 40.0k (+0.0%)
2    40.0k -> 40.4k (+1.0%)? base only

write latency p99 (lower is better), writers (w) x readers (r):
w\\r  1                       2
1    130us -> 104us  (-20%)? 130us -> 130us (+0.0%)
2    130us -> 131us (+1.0%)? base only

*+12%*: called: the means differ by more than the half-widths of their two
  95% intervals together (Student's t), mmtests' rule, and the change passes
  25% with one file a side (two invocations drift that far), 5% with
  several (then judged on each file's median). (+12%): not called. Changes
  are of the medians. ? no verdict: fewer than 2 runs on a side, a change
  within the drift, or two machines. ! noisy runs in base or patched
  (spread over 1.25x or an interval wider than +-10%).
pipespeed compare --lkml base.json new.json
";
    assert_eq!(lkml(&grid()), expected);
}

#[test]
fn the_stars_follow_the_rule_not_the_size_of_the_change() {
    let c = grid();
    let verdict = |row: &str| change(&c, 0, row).verdict;
    assert_eq!(verdict("1x1"), Verdict::Faster);
    assert_eq!(verdict("1x2"), Verdict::NoChange);
    assert_eq!(verdict("2x1"), Verdict::TooFewRuns);
    let out = lkml(&c);
    let row1 = out.lines().find(|l| l.starts_with("1 ")).unwrap();
    assert!(row1.contains("*+25%*  40.0k"), "{row1}");
    assert!(row1.ends_with("(+0.0%)"), "{row1}");
    let row2 = out.lines().find(|l| l.starts_with("2 ")).unwrap();
    assert!(row2.contains("(+1.0%)? base only"), "{row2}");
}

#[test]
fn a_ladder_is_a_line_per_rung_and_latency_a_line_per_size() {
    let base = bench(vec![
        rung(Rung::WriteRead, &RUNS),
        rung(Rung::Tuned, &[30.0, 30.5, 29.5]),
    ]);
    let new = bench(vec![
        rung(Rung::WriteRead, &RUNS.map(|r| r * 1.031)),
        rung(Rung::Memcpy, &RUNS),
    ]);
    let c = compare(&base, "a", &new, "b", &Bootstrap::default()).unwrap();
    let out = lkml(&c);
    assert!(
        out.contains("\nGiB/s (higher is better):\nwrite-read  10.00 -> 10.31 (+3.1%)\n"),
        "{out}"
    );
    assert!(
        out.contains("\ntuned       base only\nmemcpy      patched only\n"),
        "{out}"
    );
    assert!(out.contains("\nvirtualization  not recorded\n"), "{out}");
    let c = faster_latency();
    let out = lkml(&c);
    assert!(
        out.contains(
            "round trip latency (lower is better):\n\
             size  p50                        p99\n\
             64B   5.05 us -> 2.52 us *-50%*  9.05 us -> 4.53 us *-50%*\n"
        ),
        "{out}"
    );
    assert!(!out.contains("round trips/s"), "{out}");
}

#[test]
fn a_long_differing_fact_breaks_before_the_arrow() {
    assert_eq!(fact_line("cpu", "A", "A"), format!("{:16}A\n", "cpu"));
    assert_eq!(
        fact_line("kernel", "6.1", "6.6"),
        format!("{:16}6.1 -> 6.6\n", "kernel")
    );
    let (a, b) = ("x".repeat(40), "y".repeat(40));
    assert_eq!(
        fact_line("cpu", &a, &b),
        format!("{:16}{a}\n{:>15} {b}\n", "cpu", "->")
    );
}

#[test]
fn the_last_line_is_the_command_that_prints_the_same() {
    let mut c = grid();
    c.base = "my base.json".into();
    c.bootstrap = Bootstrap {
        resamples: 500,
        confidence: 0.9,
        seed: 7,
    };
    let out = lkml(&c);
    assert_eq!(
        out.lines().last(),
        Some(
            "pipespeed compare --lkml 'my base.json' new.json --confidence 0.9 --resamples 500 \
             --seed 7"
        )
    );
    // The stars do not depend on the bootstrap's confidence: mmtests'
    // rule is on 95% intervals of the means.
    assert!(out.contains("\n  95% intervals together"), "{out}");
}

#[test]
fn numbers_are_compact() {
    assert_eq!(delta(1.0), "+0.0%");
    assert_eq!(delta(1.0994), "+9.9%");
    assert_eq!(delta(1.0996), "+10%");
    assert_eq!(delta(0.5), "-50%");
    assert_eq!(delta(2.993), "+199%");
    assert_eq!(short_ns(812.4), "812ns");
    assert_eq!(short_ns(4_530.0), "4.53us");
    assert_eq!(short_ns(45_640.0), "45.6us");
    assert_eq!(short_ns(135_200.0), "135us");
    assert_eq!(short_ns(99_960.0), "100us");
    assert_eq!(short_ns(3_864_600.0), "3.86ms");
    assert_eq!(short_ns(2.5e9), "2.50s");
    assert_eq!(bytes("1048576"), "1MiB");
    assert_eq!(bytes("0"), "unknown");
}
