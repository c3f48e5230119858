use super::*;
use crate::bench::core::Status;
use crate::bench::ladder::Rung;
use crate::compare::bootstrap::Bootstrap;
use crate::compare::compare;
use crate::compare::tests::{RUNS, bench, faster_latency, rung, scaled, with};

/// Every kind of line: no change, faster, no runs in either file, one
/// run, only in new; a kernel that differs, a buffer size that differs.
fn fixture() -> Comparison {
    let mut huge = rung(Rung::VmspliceSpliceHuge, &[]);
    huge.status = Status::Unavailable;
    huge.reason = Some("no huge | pages".into());
    let base = bench(vec![
        rung(Rung::WriteRead, &RUNS),
        rung(Rung::VmspliceRead, &scaled(2.0)),
        huge.clone(),
        rung(Rung::Tuned, &[30.0]),
    ]);
    let mut tuned = rung(Rung::Tuned, &[31.0, 29.0]);
    tuned.buf_size = 2 << 20;
    let new = bench(vec![
        rung(Rung::WriteRead, &[9.9, 10.1, 10.0, 10.3, 9.8]),
        rung(Rung::VmspliceRead, &scaled(4.0)),
        huge,
        tuned,
        rung(Rung::Memcpy, &RUNS),
    ]);
    let new = with(&new, |r| r.header.system.kernel = "6.6.0".into());
    compare(&base, "old.json", &new, "new.json", &Bootstrap::default()).unwrap()
}

/// At 80 columns: the ratio is left out (the delta says it), the rule
/// and the facts wrap, the answer comes last. Every line fits.
#[test]
fn text_snapshot() {
    let expected = "\
pipespeed compare: old.json (base) vs new.json (new), pipespeed.bench/3
rule: mmtests' on the runs (means apart by more than both 95% half-widths) and a
  change past 25%, the drift between invocations; CI: the ratio's, 10000
  bootstrap resamples (seed 1)

GiB/s (higher is better)
rung                   base    new  runs    delta  95% CI          verdict
write-read            10.00  10.00   5/5    +0.0%  [0.970, 1.031]  ~
vmsplice-read         20.00  40.00   5/5  +100.0%  [1.941, 2.061]  faster
vmsplice-splice-huge  no runs in either file (unavailable: no huge | pages)
tuned                 30.00  30.00   1/2    +0.0%  -               ? 1 run
memcpy                only in new.json

faster, slower: called by the rule; ~: no change it can call; runs: base/new.
? 1 run: fewer than 2 runs on a side: no interval.
system: pipespeed_version 0.1.0; kernel 6.1.0 -> 6.6.0; arch x86_64;
  cpu_model Test CPU; cpus_online 2; cpus_allowed 0,1; thp madvise;
  pipe_max_size_bytes 1048576; page_size_bytes 4096;
  placement writer on CPU 0, reader on CPU 1
settings that differ: buf_size of tuned 256KiB -> 2MiB
answer: vmsplice-read faster +100.0% (1 row ~, 1 row ?).
for a verdict: more runs (--runs 10 or more) on a quiet machine.
";
    assert_eq!(text(&fixture(), 80), expected);
}

#[test]
fn every_line_fits_the_width_and_the_ratio_comes_back_when_it_fits() {
    // From 60 columns: a table row is never broken, and at 40 these rows
    // alone take 58.
    for width in [60, 80, 100, 120] {
        let out = text(&fixture(), width);
        for line in out.lines() {
            assert!(line.chars().count() <= width, "{width}: {line:?}\n{out}");
        }
        // The answer last: its last line and its continuation.
        let last = out.lines().rev().find(|l| !l.starts_with(' ')).unwrap();
        assert!(last.starts_with("for a verdict: "), "{out}");
    }
    let wide = text(&fixture(), 120);
    assert!(
        wide.contains("\nrung                   base    new  runs    delta  ratio  95% CI  "),
        "{wide}"
    );
}

#[test]
fn markdown_snapshot() {
    let expected = "\
`pipespeed compare old.json new.json` (pipespeed.bench/3): rule: mmtests' on the runs (means apart by more than both 95% half-widths) and a change past 25%, the drift between invocations; CI: the ratio's, 10000 bootstrap resamples (seed 1)

**GiB/s (higher is better)**

| rung                 |  base |   new | runs |   delta | ratio | 95% CI         | verdict |
| :------------------- | ----: | ----: | ---: | ------: | ----: | :------------- | :------ |
| write-read           | 10.00 | 10.00 |  5/5 |   +0.0% | 1.000 | [0.970, 1.031] | ~       |
| vmsplice-read        | 20.00 | 40.00 |  5/5 | +100.0% | 2.000 | [1.941, 2.061] | faster  |
| vmsplice-splice-huge |       |       |      |         |       |                | no runs in either file (unavailable: no huge \\| pages) |
| tuned                | 30.00 | 30.00 |  1/2 |   +0.0% | 1.000 | -              | ? 1 run |
| memcpy               |       |       |      |         |       |                | only in new.json |

faster, slower: called by the rule; ~: no change it can call; runs: base/new. ? 1 run: fewer than 2 runs on a side: no interval.

System: pipespeed_version 0.1.0; kernel 6.1.0 -> 6.6.0; arch x86_64; cpu_model Test CPU; cpus_online 2; cpus_allowed 0,1; thp madvise; pipe_max_size_bytes 1048576; page_size_bytes 4096; placement writer on CPU 0, reader on CPU 1

Settings that differ: buf_size of tuned 256KiB -> 2MiB

answer: vmsplice-read faster +100.0% (1 row ~, 1 row ?). for a verdict: more runs (--runs 10 or more) on a quiet machine.
";
    assert_eq!(markdown(&fixture()), expected);
}

#[test]
fn latencies_say_lower_is_faster_and_read_in_time_units() {
    let c = faster_latency();
    let out = text(&c, 100);
    assert!(
        out.contains("round trip p50 (lower is better: a lower new is faster)\nsize  "),
        "{out}"
    );
    assert!(
        out.contains("64B   5.05 us  2.52 us   2/2  -50.0%  0.500"),
        "{out}"
    );
    assert!(out.contains("round trips/s (higher is better)"), "{out}");
    assert_eq!(out.matches("faster\n").count(), 3, "{out}");
}

#[test]
fn values_keep_three_or_four_digits() {
    assert_eq!(value(Unit::GibPerS, 12.345), "12.35");
    assert_eq!(value(Unit::Nanoseconds, 850.0), "850 ns");
    assert_eq!(value(Unit::Nanoseconds, 11_727.0), "11.73 us");
    assert_eq!(value(Unit::Nanoseconds, 2.5e6), "2.50 ms");
    assert_eq!(value(Unit::PerSecond, 81_318.0), "81.3k");
    assert_eq!(value(Unit::PerSecond, 1.25e6), "1.25M");
    assert_eq!(percent(0.95), "95%");
    assert_eq!(percent(0.999), "99.9%");
}

#[test]
fn long_lines_wrap_at_item_boundaries() {
    assert_eq!(wrap("a 1; b 2; c 3", 8, "  "), "a 1;\n  b 2;\n  c 3\n");
    assert_eq!(wrap("a 1; b 2", 80, "  "), "a 1; b 2\n");
}
