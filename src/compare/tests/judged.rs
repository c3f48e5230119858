//! What `compare` marks and warns about: significance in the table and
//! in `--lkml`, noisy rows, and files measured under different noise or
//! by different builds.
use super::*;

fn noise(steal_share: f64, other_share: f64, max_load_avg_1m: f64) -> Option<NoiseSummary> {
    Some(NoiseSummary {
        runs: 5,
        steal_share,
        other_share,
        max_load_avg_1m,
    })
}

/// The `row` line of the first table of the text output.
fn text_row(text: &str, row: &str) -> String {
    let prefix = format!("{row} ");
    let line = text.lines().find(|l| l.starts_with(&prefix));
    line.unwrap_or_else(|| panic!("no {row} in {text}")).into()
}

#[test]
fn a_file_compared_with_itself_marks_nothing() {
    let doc = with(
        &bench(vec![
            rung(Rung::WriteRead, &RUNS),
            // Noisy: 3x from slowest to fastest.
            rung(Rung::VmspliceRead, &[10.0, 20.0, 12.0, 30.0, 11.0]),
            rung(Rung::Tuned, &[30.0]),
        ]),
        |r| r.noise = noise(0.001, 0.02, 1.9),
    );
    let c = run(&doc, &doc);
    for line in &c.tables[0].lines {
        let Outcome::Compared(change) = &line.outcome else {
            panic!("{line:?}")
        };
        // No change called; the noisy row gets no verdict at all.
        let unmarked = matches!(
            change.verdict,
            Verdict::NoChange | Verdict::TooFewRuns | Verdict::Noisy
        );
        assert!(unmarked && !change.mmtests_significant(), "{line:?}");
    }
    let text = render::text(&c, 100);
    for row in ["write-read", "vmsplice-read", "tuned"] {
        let line = text_row(&text, row);
        assert!(
            !line.contains("faster") && !line.contains("slower"),
            "{line}"
        );
    }
    let mail = render::lkml(&c);
    let rows = mail.lines().filter(|l| l.contains(" -> "));
    assert_eq!(rows.filter(|l| l.contains('*')).count(), 0, "{mail}");
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
}

#[test]
fn a_doubling_is_marked_in_the_table_and_between_stars_in_lkml() {
    let base = bench(vec![rung(Rung::WriteRead, &RUNS)]);
    let new = bench(vec![rung(Rung::WriteRead, &scaled(2.0))]);
    let c = run(&base, &new);
    let doubled = change(&c, 0, "write-read");
    assert_eq!(doubled.verdict, Verdict::Faster);
    assert!(doubled.mmtests_significant());
    assert!(text_row(&render::text(&c, 100), "write-read").ends_with(" faster"));
    let mail = render::lkml(&c);
    assert!(
        mail.contains("\nwrite-read  10.00 -> 20.00 *+100%*\n"),
        "{mail}"
    );
    assert!(mail.contains("mmtests' rule"), "{mail}");
}

#[test]
fn lkml_stars_a_change_the_rule_calls_only() {
    // RUNS: mean 10.02, s 0.192, 95% half-width 2.776 * 0.192 / sqrt(5)
    // = 0.239; a shifted copy has the same: 0.478 together.
    let shifted = |by: f64| RUNS.map(|v| v + by);
    let new = bench(vec![
        rung(Rung::WriteRead, &shifted(0.4)),
        rung(Rung::Tuned, &shifted(0.6)),
        rung(Rung::Memcpy, &shifted(3.0)),
    ]);
    let base = bench(vec![
        rung(Rung::WriteRead, &RUNS),
        rung(Rung::Tuned, &RUNS),
        rung(Rung::Memcpy, &RUNS),
    ]);
    let c = run(&base, &new);
    let inside = change(&c, 0, "write-read").means.unwrap();
    let together = inside.base_half_width + inside.new_half_width;
    assert!((together - 0.478).abs() < 1e-3, "{inside:?}");
    assert!(!inside.significant());
    // Past the half-widths, but a 6% change with one file a side is
    // within the drift between invocations: not called, no verdict.
    assert!(change(&c, 0, "tuned").mmtests_significant());
    assert_eq!(change(&c, 0, "tuned").verdict, Verdict::WithinDrift);
    assert_eq!(change(&c, 0, "memcpy").verdict, Verdict::Faster);
    let mail = render::lkml(&c);
    assert!(
        mail.contains("\nwrite-read  10.00 -> 10.40 (+4.0%)\n"),
        "{mail}"
    );
    assert!(
        mail.contains("\ntuned       10.00 -> 10.60 (+6.0%)?\n"),
        "{mail}"
    );
    assert!(
        mail.contains("\nmemcpy      10.00 -> 13.00  *+30%*\n"),
        "{mail}"
    );
    // One run on a side: never significant, however large the change.
    let one = bench(vec![rung(Rung::WriteRead, &[10.0])]);
    let twice = bench(vec![rung(Rung::WriteRead, &[20.0, 20.0])]);
    let c = run(&one, &twice);
    assert_eq!(change(&c, 0, "write-read").means, None);
    let mail = render::lkml(&c);
    assert!(mail.contains("10.00 -> 20.00 (+100%)?\n"), "{mail}");
    assert!(mail.contains("no verdict: fewer than 2 runs"), "{mail}");
}

#[test]
fn noisy_rows_are_marked_with_the_file_they_are_noisy_in() {
    let base = bench(vec![rung(Rung::WriteRead, &RUNS)]);
    let new = bench(vec![rung(Rung::WriteRead, &[10.0, 14.0, 9.0, 10.5, 10.2])]);
    let c = run(&base, &new);
    assert_eq!(change(&c, 0, "write-read").noisy_in(), Some("new"));
    let text = render::text(&c, 100);
    assert!(
        text_row(&text, "write-read").ends_with("? noisy: new"),
        "{text}"
    );
    assert!(text.contains("\n? noisy: that side's runs"), "{text}");
    let mail = render::lkml(&c);
    assert!(mail.contains("10.00 -> 10.20 (+2.0%)!\n"), "{mail}");
    // Tight on both sides: no mark, no legend line.
    let c = run(&base, &base);
    assert_eq!(change(&c, 0, "write-read").noisy_in(), None);
    assert!(!render::text(&c, 100).contains("noisy"));
}

#[test]
fn a_quiet_and_a_loaded_file_of_the_same_runs_warn_with_both_values() {
    let doc = bench(vec![rung(Rung::WriteRead, &RUNS)]);
    let quiet = with(&doc, |r| r.noise = noise(0.001, 0.02, 1.95));
    let loaded = with(&doc, |r| r.noise = noise(0.0, 1.3, 3.1));
    let c = run(&quiet, &loaded);
    assert_eq!(
        c.warnings(),
        [
            "measured under different noise: a.json: quiet (steal 0.1%, other load 0.02 CPUs, \
             load average 1.95); b.json: loaded (steal 0.0%, other load 1.30 CPUs, load \
             average 3.10): a difference may be the machine's"
        ]
    );
    let text = render::text(&c, 100);
    assert!(text.contains("\nnoise: a.json quiet (steal 0.1%"), "{text}");
    let md = render::markdown(&c);
    assert!(md.contains("\nNoise: a.json quiet (steal 0.1%"), "{md}");
    let mail = render::lkml(&c);
    assert!(
        mail.contains(
            "\nnoise           quiet (steal 0.1%, other load 0.02 CPUs, load average 1.95)\n"
        ),
        "{mail}"
    );
    assert!(
        mail.contains("loaded (steal 0.0%, other load 1.30 CPUs, load average 3.10)\n"),
        "{mail}"
    );
    // Two quiet files, or files that record no noise: nothing to say.
    assert!(run(&quiet, &quiet).warnings().is_empty());
    assert!(run(&doc, &doc).warnings().is_empty());
    assert!(!render::lkml(&run(&doc, &doc)).contains("\nnoise "));
}

#[test]
fn another_profile_is_warned_about_and_another_commit_only_shown() {
    let build = |commit: &str, profile: &str| BuildInfo {
        version: "0.1.0".into(),
        commit: commit.into(),
        rustc: "rustc 1.90.0".into(),
        target: "x86_64-unknown-linux-gnu".into(),
        libc: "glibc 2.41".into(),
        profile: profile.into(),
    };
    let doc = bench(vec![rung(Rung::WriteRead, &RUNS)]);
    let base = with(&doc, |r| r.header.build = Some(build("aaa", "release")));
    let new = with(&doc, |r| r.header.build = Some(build("bbb", "debug")));
    let c = run(&base, &new);
    assert_eq!(
        c.warnings(),
        ["system fact profile differs: release in a.json, debug in b.json"]
    );
    let commit = c.facts.iter().find(|p| p.name == "commit").unwrap();
    assert_eq!((commit.base.as_str(), commit.new.as_str()), ("aaa", "bbb"));
    assert!(render::text(&c, 100).contains("commit aaa -> bbb"));
    // Files without a build: left out, as any fact neither file records.
    assert!(!run(&doc, &doc).facts.iter().any(|p| p.name == "commit"));
}

#[test]
fn a_latency_result_that_records_its_noise_is_judged_too() {
    let runs: &[(u64, u64, f64)] = &[(5000, 9000, 2e5), (5100, 9100, 1.9e5)];
    let doc = latency(&[(64, runs)]);
    let loaded = {
        let Document::Latency(mut r) = doc.clone() else {
            unreachable!()
        };
        let busy = crate::sys::RunNoise {
            wall_s: 1.0,
            other_cpu_s: 1.5,
            ..crate::sys::RunNoise::default()
        };
        r.rows[0].rtt_p50_ns.noise = vec![busy; 2];
        Document::Latency(r)
    };
    let c = run(&doc, &loaded);
    assert_eq!(c.conditions.base, None);
    assert_eq!(c.conditions.new.map(|n| n.other_share), Some(1.5));
    let warnings = c.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(
            "measured under different noise: a.json: noise not recorded; b.json: loaded"
        ),
        "{warnings:?}"
    );
}
