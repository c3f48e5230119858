//! The SVG charts, on fixed results: they parse as XML, hold what they
//! claim (a bar per measured rung, whiskers, the memcpy mark, the series
//! and labels), and match the committed snapshots in tests/snapshots/
//! (`PIPESPEED_UPDATE_SNAPSHOTS=1 cargo test --test tests charts::`
//! rewrites this module's; then review `git diff tests/snapshots`).

#![allow(clippy::unwrap_used)]

use crate::fixtures;

use pipespeed::bench::core::Status;

use pipespeed::bench::contend::contend_svg;
use pipespeed::bench::ladder::Rung;
use pipespeed::bench::ladder::ladder_svg;
use pipespeed::bench::latency::latency_svg;
use pipespeed::bench::scan::{ScanParam, ScanPoint, ScanResult};
use pipespeed::bench::scan::{scan_result_svg, scan_svg};
use pipespeed::report::svg::{BAR_FILL, LIMIT_FILL, LIMIT_STROKE, SERIES_STROKES, WHISKER_STROKE};
use roxmltree::{Document, Node};

fn parse(svg: &str) -> Document<'_> {
    let doc = Document::parse(svg).unwrap_or_else(|e| panic!("not XML: {e}\n{svg}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc
}

/// The elements `tag` whose `attr` is `value`.
fn with<'a>(doc: &'a Document<'a>, tag: &str, attr: &str, value: &str) -> Vec<Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.has_tag_name(tag) && n.attribute(attr) == Some(value))
        .collect()
}

/// Every `<text>`'s content, trimmed, unescaped.
fn texts(doc: &Document<'_>) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

fn has_text(doc: &Document<'_>, wanted: &str) -> bool {
    texts(doc).iter().any(|t| t.contains(wanted))
}

fn size(doc: &Document<'_>) -> (u32, u32) {
    let root = doc.root_element();
    let px = |a| root.attribute(a).unwrap().parse().unwrap();
    (px("width"), px("height"))
}

fn width(rect: &Node<'_, '_>) -> f64 {
    rect.attribute("width").unwrap().parse().unwrap()
}

#[test]
fn ladder_has_one_bar_per_measured_rung_and_the_memcpy_bar_apart() {
    let result = fixtures::ladder();
    let svg = ladder_svg(&result).unwrap();
    let doc = parse(&svg);
    assert_eq!(size(&doc), (900, 80 + 40 * 7));
    let measured = result.rungs.iter().filter(|r| r.median().is_some()).count();
    assert_eq!(measured, 6);
    assert_eq!(with(&doc, "rect", "fill", BAR_FILL).len(), measured - 1);
    assert_eq!(with(&doc, "rect", "fill", LIMIT_FILL).len(), 1);
    for rung in &result.rungs {
        assert!(
            texts(&doc).contains(&rung.name.to_string()),
            "{} has no label",
            rung.name
        );
    }
}

#[test]
fn ladder_bars_are_as_long_as_their_medians() {
    let result = fixtures::ladder();
    let svg = ladder_svg(&result).unwrap();
    let doc = parse(&svg);
    let bars = with(&doc, "rect", "fill", BAR_FILL);
    // In order: write-read, vmsplice-read, vmsplice-splice, busy, tuned.
    let medians: Vec<f64> = result
        .rungs
        .iter()
        .filter(|r| r.name != Rung::Memcpy)
        .filter_map(|r| r.median())
        .collect();
    // The longest bar as the scale: rounding to pixels matters least.
    let per_gib = width(&bars[4]) / medians[4];
    for (bar, median) in bars.iter().zip(&medians) {
        let want = median * per_gib;
        assert!(
            (width(bar) - want).abs() <= 2.0,
            "a {median} GiB/s bar is {} px wide, expected {want:.0}",
            width(bar)
        );
    }
}

#[test]
fn ladder_marks_whiskers_speedups_and_the_memcpy_limit() {
    let svg = ladder_svg(&fixtures::ladder()).unwrap();
    let doc = parse(&svg);
    // A line and two caps per measured rung.
    assert_eq!(
        with(&doc, "polyline", "stroke", WHISKER_STROKE).len(),
        6 * 3
    );
    assert!(!with(&doc, "polyline", "stroke", LIMIT_STROKE).is_empty());
    assert!(has_text(&doc, "memcpy 9.80 GiB/s: the limit of copying"));
    assert!(has_text(&doc, "62.00 GiB/s, 20.7× write-read"));
    assert!(has_text(&doc, "3.00 GiB/s, 1.0× write-read"));
    // memcpy is a limit, not a speed-up.
    assert!(has_text(&doc, "9.80 GiB/s"));
    assert!(
        !texts(&doc)
            .iter()
            .any(|t| t.starts_with("9.80") && t.contains('×'))
    );
    // The unavailable rung: an empty row saying why, its markup escaped.
    assert!(has_text(
        &doc,
        "unavailable: transparent huge pages are <never> & off here"
    ));
}

#[test]
fn ladder_without_memcpy_or_runs_still_draws() {
    let mut result = fixtures::ladder();
    result.rungs.retain(|r| r.name != Rung::Memcpy);
    let svg = ladder_svg(&result).unwrap();
    let doc = parse(&svg);
    assert!(with(&doc, "polyline", "stroke", LIMIT_STROKE).is_empty());
    assert_eq!(with(&doc, "rect", "fill", BAR_FILL).len(), 5);
    for r in &mut result.rungs {
        r.gib_s = Default::default();
        r.status = Status::Failed;
        r.reason = Some("no sample".into());
    }
    let svg = ladder_svg(&result).unwrap();
    let doc = parse(&svg);
    assert!(with(&doc, "rect", "fill", BAR_FILL).is_empty());
    assert_eq!(
        texts(&doc)
            .iter()
            .filter(|t| *t == "failed: no sample")
            .count(),
        6
    );
}

#[test]
fn latency_has_a_line_per_size_through_its_percentiles() {
    let result = fixtures::latency();
    let svg = latency_svg(&result).unwrap();
    let doc = parse(&svg);
    // The plot, and a legend of two rows under it.
    assert_eq!(size(&doc), (900, 480 + 10 + 2 * 20 + 6));
    for legend in ["1B messages", "4KiB messages", "64KiB messages"] {
        assert!(has_text(&doc, legend), "no legend {legend}");
    }
    for label in ["p50", "p90", "p99", "p99.9", "max"] {
        assert!(
            texts(&doc).contains(&label.to_string()),
            "no axis label {label}"
        );
    }
    let dots = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(dots, 3 * 5);
    assert!(has_text(&doc, "round trip, µs (log scale)"));
}

#[test]
fn contend_has_one_bar_per_cell() {
    let result = fixtures::contend();
    let svg = contend_svg(&result).unwrap();
    let doc = parse(&svg);
    assert_eq!(size(&doc), (900, 80 + 40 * 9));
    assert_eq!(with(&doc, "rect", "fill", BAR_FILL).len(), 9);
    assert_eq!(
        with(&doc, "polyline", "stroke", WHISKER_STROKE).len(),
        9 * 3
    );
    assert!(has_text(&doc, "1 writer, 1 reader"));
    assert!(has_text(&doc, "5 writers, 10 readers"));
    assert!(has_text(&doc, "40.0k writes/s, 2500.0 MiB/s"));
}

#[test]
fn scan_has_a_line_per_rung_with_data_on_a_log2_axis() {
    let svg = scan_svg("buf-size", &fixtures::scan()).unwrap();
    let doc = parse(&svg);
    // The plot, and a legend of three rows under it.
    assert_eq!(size(&doc), (900, 480 + 10 + 3 * 20 + 6));
    for rung in Rung::ALL {
        let legend = texts(&doc).contains(&rung.name().to_string());
        let in_fixture = !matches!(rung, Rung::VmspliceSpliceHuge | Rung::SpliceLimit);
        assert_eq!(legend, in_fixture, "{rung}");
    }
    for tick in ["64KiB", "256KiB", "1MiB"] {
        assert!(texts(&doc).contains(&tick.to_string()), "no tick {tick}");
    }
    // Six rungs at three values, less busy's failure at 256 KiB.
    let dots = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(dots, 6 * 3 - 1);
    assert!(has_text(&doc, "buf-size (log2 scale)"));
}

#[test]
fn a_scan_result_names_the_rungs_it_does_not_vary() {
    let points = fixtures::scan()
        .into_iter()
        .map(|(value, result)| ScanPoint {
            value,
            label: String::new(),
            result,
        })
        .collect();
    let scan = ScanResult::new(fixtures::system(), ScanParam::BufSize, points);
    let svg = scan_result_svg(&scan).unwrap();
    let doc = parse(&svg);
    assert!(texts(&doc).contains(&"tuned (does not depend on buf-size)".to_string()));
    assert!(texts(&doc).contains(&"write-read".to_string()));
}

#[test]
fn scan_refuses_nothing_to_chart() {
    let err = scan_svg("pipe-size", &[]).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("pipe-size"), "{err}");
}

/// Whether an SVG colour is one of the figures': a bar, a whisker, the
/// limit line, a series' line or dot (and a legend's swatch, which is
/// drawn in its series' colour: a label over it is as bad).
fn is_data(colour: &str) -> bool {
    [BAR_FILL, LIMIT_FILL, WHISKER_STROKE, LIMIT_STROKE].contains(&colour)
        || SERIES_STROKES.contains(&colour)
}

/// A scan whose fastest point is memcpy at the smallest value: top left,
/// where the legend used to be drawn (issue 25).
fn scan_with_memcpy_on_top() -> Vec<(u64, pipespeed::bench::ladder::LadderResult)> {
    let mut points = fixtures::scan();
    let smallest = points.iter_mut().min_by_key(|p| p.0).unwrap();
    for r in &mut smallest.1.rungs {
        if r.name == Rung::Memcpy {
            r.gib_s = pipespeed::bench::core::Series::of(&[99.0, 100.0, 101.0]);
        }
    }
    points
}

#[test]
fn every_chart_stays_in_its_view_box_and_no_label_covers_a_figure() {
    use fixtures::browser::check_layout;
    let mut long_notes = fixtures::ladder();
    for r in &mut long_notes.rungs {
        r.speedup_vs_write_read = r.speedup_vs_write_read.map(|x| x * 1000.0);
    }
    let scan_result = |param, points: Vec<(u64, _)>| {
        let points = points
            .into_iter()
            .map(|(value, result)| ScanPoint {
                value,
                label: String::new(),
                result,
            })
            .collect();
        ScanResult::new(fixtures::system(), param, points)
    };
    let placements: Vec<_> = fixtures::scan()
        .into_iter()
        .zip([3, 2, 1])
        .map(|((_, result), value)| (value, result))
        .collect();
    let charts = [
        ("ladder", ladder_svg(&fixtures::ladder()).unwrap()),
        (
            "checked ladder",
            ladder_svg(&fixtures::ladder_checked()).unwrap(),
        ),
        ("ladder with long notes", ladder_svg(&long_notes).unwrap()),
        ("latency", latency_svg(&fixtures::latency()).unwrap()),
        ("contend", contend_svg(&fixtures::contend()).unwrap()),
        ("scan", scan_svg("buf-size", &fixtures::scan()).unwrap()),
        (
            "scan, memcpy on top",
            scan_svg("buf-size", &scan_with_memcpy_on_top()).unwrap(),
        ),
        (
            "scan result",
            scan_result_svg(&scan_result(ScanParam::BufSize, scan_with_memcpy_on_top())).unwrap(),
        ),
        (
            "placement scan",
            scan_result_svg(&scan_result(ScanParam::Placement, placements)).unwrap(),
        ),
    ];
    for (name, svg) in &charts {
        check_layout(name, svg, &is_data);
    }
}

#[test]
fn the_layout_check_catches_a_label_over_a_bar_and_one_off_the_chart() {
    use fixtures::browser::check_layout;
    let svg = ladder_svg(&fixtures::ladder()).unwrap();
    // The first bar's note moved onto its bar; the title moved off.
    let note = svg.find(">\n9.80 GiB/s").unwrap();
    let start = svg[..note].rfind("<text x=\"").unwrap() + "<text x=\"".len();
    let end = start + svg[start..].find('"').unwrap();
    let over = format!("{}225{}", &svg[..start], &svg[end..]);
    let caught = std::panic::catch_unwind(|| check_layout("moved note", &over, &is_data));
    assert!(caught.is_err(), "a note over its bar was not caught");
    let off = svg.replacen("<text x=\"", "<text x=\"-400", 1);
    let caught = std::panic::catch_unwind(|| check_layout("moved title", &off, &is_data));
    assert!(caught.is_err(), "a title off the chart was not caught");
}

#[test]
fn charts_match_their_snapshots() {
    use fixtures::snapshot;
    snapshot("ladder.svg", &ladder_svg(&fixtures::ladder()).unwrap());
    snapshot("latency.svg", &latency_svg(&fixtures::latency()).unwrap());
    snapshot("contend.svg", &contend_svg(&fixtures::contend()).unwrap());
    snapshot(
        "scan.svg",
        &scan_svg("buf-size", &fixtures::scan()).unwrap(),
    );
}

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

fn pipespeed(args: &[&str]) -> std::process::Output {
    std::process::Command::new(EXE).args(args).output().unwrap()
}

#[test]
fn latency_and_contend_write_their_charts() {
    let dir = tempfile::tempdir().unwrap();
    let lat = dir.path().join("lat.svg");
    let out = pipespeed(&[
        "latency",
        "--threads",
        "--sizes",
        "1,4K",
        "--round-trips",
        "50",
        "--warmup",
        "0",
        "--runs",
        "1",
        "--svg",
        lat.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&lat).unwrap();
    let doc = parse(&svg);
    assert!(has_text(&doc, "1B messages") && has_text(&doc, "4KiB messages"));
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("circle"))
            .count(),
        2 * 5
    );

    let cells = dir.path().join("contend.svg");
    let out = pipespeed(&[
        "contend",
        "--duration",
        "0.05",
        "--svg",
        cells.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&cells).unwrap();
    let doc = parse(&svg);
    assert_eq!(with(&doc, "rect", "fill", BAR_FILL).len(), 1);
    assert!(has_text(&doc, "1 writer, 1 reader"));
}

#[test]
fn an_unwritable_chart_is_a_one_line_error() {
    let path = "/nonexistent-pipespeed-dir/chart.svg";
    for args in [
        &[
            "latency",
            "--threads",
            "--round-trips",
            "10",
            "--warmup",
            "0",
            "--runs",
            "1",
        ][..],
        &["contend", "--duration", "0.02"][..],
    ] {
        let out = pipespeed(&[args, &["--svg", path]].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("pipespeed: cannot write {path}: No such file")),
            "{err}"
        );
    }
}
