//! `bench --zero-copy`'s table, Markdown and CSV on fixed data.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::bench::core::{Header, Placement, Series, Warmup};
use crate::bench::zerocopy::{Path, ZeroCopyConfig};
use crate::report::fixtures::machine;

/// Three paths, fixed figures, on a test machine.
fn result() -> ZeroCopyResult {
    let system = machine();
    let row =
        |path: Path, found, rates: &[f64], cpu: &[f64], status, reason: Option<&str>| PathResult {
            path,
            name: path.name().into(),
            found,
            method: path.method().into(),
            status,
            reason: reason.map(String::from),
            gib_s: Series::of(rates),
            cpu_s_per_gib: Series::of(cpu),
            vs_read_write: None,
            cpu_vs_read_write: None,
        };
    let mut r = ZeroCopyResult {
        header: Header {
            schema: crate::bench::zerocopy::SCHEMA.into(),
            pipespeed_version: "0.1.0".into(),
            build: None,
            system,
            interrupted: false,
        },
        config: ZeroCopyConfig {
            bytes: 256 << 20,
            chunk: 64 << 10,
            pipe_size: 1 << 20,
            placement: Placement::Pinned {
                writer_cpu: 0,
                reader_cpu: 1,
            },
            runs: 3,
            max_runs: 5,
            seed: 1,
            warmup: Warmup::default(),
        },
        verdict: vec![
            "on Linux 6.18.0-test: splice file -> pipe moves page references".into(),
            "fastest against read/write: splice file -> pipe (3.8x, 3.6x less CPU per GiB)".into(),
        ],
        paths: vec![
            row(
                Path::ReadWrite,
                None,
                &[1.0, 1.1, 1.2],
                &[1.5, 1.6, 1.7],
                Status::Ok,
                None,
            ),
            row(
                Path::FileToPipe,
                Some(CopyCheck::References),
                &[4.0, 4.4, 4.2],
                &[0.4, 0.5, 0.45],
                Status::Ok,
                None,
            ),
            row(
                Path::UringSplice,
                Some(CopyCheck::Unknown {
                    why: "unavailable: io_uring_setup refused".into(),
                }),
                &[],
                &[],
                Status::Unavailable,
                Some("io_uring_setup refused"),
            ),
        ],
        noise: None,
    };
    r.compare_to_read_write();
    r
}

#[test]
fn the_table_has_a_row_per_path_and_the_verdict_last() {
    let text = String::from_utf8(Text::default().export(&result()).unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("pipespeed 0.1.0 bench --zero-copy: Linux 6.18.0-test"));
    assert_eq!(
        lines[1..3],
        [
            "256MiB a run in 64KiB calls, pipes of 1MiB (vmsplice rows: one call), writer on CPU 0, \
             reader on CPU",
            "1; 3-5 runs a path"
        ]
    );
    // The answer last, where the eye lands; the table right under the
    // header.
    assert!(lines[4].starts_with("path "), "{text}");
    assert_eq!(
        lines[lines.len() - 2..],
        [
            "verdict: on Linux 6.18.0-test: splice file -> pipe moves page references",
            "         fastest against read/write: splice file -> pipe (3.8x, 3.6x less CPU per GiB)"
        ]
    );
    assert_eq!(
        lines[lines.len() - 3],
        "",
        "a blank line before the verdict"
    );
    let row = |name: &str| *lines.iter().find(|l| l.starts_with(name)).unwrap();
    assert_eq!(
        row("path "),
        "path                          moves           GiB/s       spread  CPU s/GiB  x vs read/write"
    );
    assert_eq!(
        row("read/write"),
        "read/write                    copies (plain)   1.10  +-23% noisy      1.600            1.00x"
    );
    assert_eq!(
        row("splice file -> pipe"),
        "splice file -> pipe           references       4.20  +-12% noisy      0.450            3.82x"
    );
    assert_eq!(
        row("io_uring splice"),
        "io_uring splice file -> pipe  unknown             -                       -                -"
    );
    assert!(text.contains(
        "io_uring splice file -> pipe: could not tell: unavailable: io_uring_setup refused"
    ));
    assert!(
        !text.contains("io_uring splice file -> pipe: io_uring_setup"),
        "said once"
    );
    assert!(!text.contains("how: "), "explanations only with --explain");
}

#[test]
fn a_long_verdict_line_wraps_under_its_text_with_or_without_the_label() {
    let line = "on Linux 6.18: ".to_string() + &"splice file -> pipe, ".repeat(12);
    for label in ["verdict: ", ""] {
        let text = labelled(label, line.trim_end(), 100);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() > 2, "{text}");
        assert!(
            lines[0].starts_with(&format!("{label:<9}on Linux")),
            "{text}"
        );
        for l in &lines {
            assert!(l.chars().count() <= 100, "{text}");
        }
        for l in &lines[1..] {
            assert!(
                l.starts_with("         ") && !l.starts_with("          "),
                "{text}"
            );
        }
    }
}

/// At 80 columns every line fits: the spread gives way (to `--explain`'s
/// second table), the paragraphs wrap.
#[test]
fn the_text_fits_the_terminal_s_width() {
    for (width, explain) in [(80, false), (80, true), (120, false), (120, true)] {
        let text = String::from_utf8(Text { explain, width }.export(&result()).unwrap()).unwrap();
        for line in text.lines() {
            assert!(line.chars().count() <= width, "{width}: {line:?}\n{text}");
        }
        let spread = (text.lines())
            .filter(|l| l.starts_with("path ") && l.contains(" spread"))
            .count();
        assert_eq!(spread, usize::from(width > 80 || explain), "{text}");
    }
    let narrow = String::from_utf8(
        Text {
            explain: false,
            width: 80,
        }
        .export(&result())
        .unwrap(),
    );
    let narrow = narrow.unwrap();
    assert!(
        narrow.contains(
            "\npath                          moves           GiB/s  CPU s/GiB  x vs read/write\n"
        ),
        "{narrow}"
    );
}

#[test]
fn explain_says_how_each_path_is_checked_and_why_it_matters() {
    let text = String::from_utf8(Text::new(true).export(&result()).unwrap()).unwrap();
    assert!(text.contains("\nsplice file -> pipe\n  found: references. The pipe takes references"));
    assert!(text.contains("  how: splice a page of a file into a pipe"));
}

#[test]
fn markdown_and_csv_hold_the_same_rows() {
    let md = String::from_utf8(Markdown.export(&result()).unwrap()).unwrap();
    assert!(md.starts_with("- on Linux 6.18.0-test: "), "{md}");
    assert!(md.contains("\n- fastest against read/write: "), "{md}");
    assert!(
        md.contains("| splice file -> pipe | references | 4.20 | 0.450 | 3.82x |"),
        "{md}"
    );
    let csv = String::from_utf8(Csv.export(&result()).unwrap()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 3 + 3, "{csv}");
    assert!(
        lines[4].starts_with("splice file -> pipe,references,ok,1,4,0.4,"),
        "{csv}"
    );
}
