use super::*;
use crate::pv::meter::Snapshot;

fn snap(count: u64, elapsed: f64, size: Option<u64>) -> Snapshot {
    Snapshot {
        count,
        elapsed,
        rate: count as f64 / elapsed,
        average: count as f64 / elapsed,
        size,
        ..Snapshot::default()
    }
}

#[test]
fn amounts_keep_one_width_across_magnitudes() {
    let cases = [
        (0.0, "0.00  B"),
        (3.0, "3.00  B"),
        (100.0, " 100  B"),
        (999.0 * 1024.0, " 999KiB"),
        (1000.0 * 1024.0, "1000KiB"),
        (1500.0 * 1024.0, "1.46MiB"),
        (1218.0, "1.19KiB"),
        (93.3 * 1048576.0, "93.3MiB"),
        (2.0 * 1073741824.0, "2.00GiB"),
    ];
    for (amount, text) in cases {
        assert_eq!(size_text(amount, "B", true), text, "{amount}");
    }
    assert_eq!(size_text(3.0, "B/s", true), "3.00  B/s");
    assert_eq!(size_text(1024.0, "B/s", true), "1.00KiB/s");
    // Lines: decimal prefixes, one column.
    assert_eq!(size_text(24.0, "", false), "24.0 ");
    assert_eq!(size_text(80_800.0, "", false), "80.8k");
    assert_eq!(size_text(800.0, "b", true), " 800  b");
}

#[test]
fn formats_parse_short_and_long_names_and_keep_the_rest() {
    let f = Format::parse("%b at %{rate}: %% %3A %z %{nope}%");
    assert_eq!(
        f.segments(),
        [
            Segment::Bytes,
            Segment::Literal(" at ".into()),
            Segment::Rate,
            Segment::Literal(": % ".into()),
            Segment::LastWritten(3),
            Segment::Literal(" %z %{nope}%".into()),
        ]
    );
    assert_eq!(f.last_written(), 3);
}

#[test]
fn the_flags_make_pvs_default_format() {
    let f = Format::from_items(&Items {
        name: Some("x".into()),
        last_written: 8,
        ..Items::pv_default()
    });
    assert_eq!(f, Format::parse("%N %b %t %r %p %e %8A"));
}

#[test]
fn the_default_line_with_a_known_size() {
    let s = snap(100 << 20, 1.0, Some(300 << 20));
    let line = Format::from_items(&Items::pv_default()).render(&s, 80, 0);
    assert_eq!(line.len(), 80, "{line:?}");
    assert!(
        line.starts_with(" 100MiB 0:00:01 [ 100MiB/s] ["),
        "{line:?}"
    );
    assert!(line.ends_with("] 33% ETA 0:00:02"), "{line:?}");
}

#[test]
fn the_bar_takes_what_the_rest_leaves_and_the_percentage_passes_100() {
    for width in [20, 80, 400] {
        let mut s = snap(2048, 1.0, Some(1024));
        s.done = true;
        let line = Format::parse("%p").render(&s, width, 0);
        assert_eq!(line.chars().count(), width, "{line:?}");
        assert!(line.ends_with("=>] 200%"), "{line:?}");
    }
}

#[test]
fn the_eta_is_blanked_at_the_end_but_keeps_its_width() {
    let mut s = snap(100, 1.0, Some(300));
    let f = Format::parse("%e");
    assert_eq!(f.render(&s, 80, 0), "ETA 0:00:02");
    s.done = true;
    assert_eq!(f.render(&s, 80, 0), " ".repeat(11));
}

#[test]
fn a_shorter_line_pads_over_the_last_one() {
    let s = snap(1, 1.0, None);
    assert_eq!(Format::parse("ab").render(&s, 80, 5), "ab   ");
    assert_eq!(Format::parse("ab").render(&s, 80, 40).len(), 17);
}

#[test]
fn an_unknown_size_bounces_and_a_gauge_fills() {
    let mut s = snap(1, 1.0, None);
    let f = Format::parse("%p");
    assert_eq!(f.render(&s, 12, 0), "[<=>       ]");
    s.tick = 100;
    assert_eq!(f.render(&s, 12, 0), "[       <=>]");
    s.gauge = Some(50);
    assert_eq!(f.render(&s, 16, 0), "[=====     ] 50%");
}

#[test]
fn last_written_bytes_show_unprintable_ones_as_dots() {
    let mut s = snap(1, 1.0, None);
    s.last_written = b"097\n098\n099\n100\n".to_vec();
    assert_eq!(Format::parse("%16A").render(&s, 80, 0), "097.098.099.100.");
    assert_eq!(Format::parse("%4A").render(&s, 80, 0), "100.");
}
