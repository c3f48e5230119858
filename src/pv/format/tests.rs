use super::*;
use crate::pv::meter::{BarStyle, Items, MAX_COLUMNS, Snapshot};

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
    // The percentage in 3 columns: pv 1.12's `]  50%`.
    assert!(line.ends_with("]  33% ETA 0:00:02"), "{line:?}");
}

#[test]
fn the_bar_takes_what_the_rest_leaves_and_the_percentage_passes_100() {
    for width in [20, 80, 400] {
        let mut s = snap(2048, 1.0, Some(1024));
        s.done = true;
        let line = Format::parse("%p").render(&s, width, 0);
        assert_eq!(line.chars().count(), width, "{line:?}");
        // Past the end: all `=`, no `>` (pv 1.12: `[============] 150%`).
        assert!(line.ends_with("==] 200%"), "{line:?}");
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
    // -g: the rate against the highest, which follows the bar (pv
    // 1.12: `[█████████████████]/9.75KiB/s`).
    s.gauge = Some(50);
    s.max_rate = 2048.0;
    assert_eq!(f.render(&s, 20, 0), "[===>    ]/2.00KiB/s");
    assert_eq!(
        Format::parse("%{progress-amount-only}").render(&s, 20, 0),
        "2.00KiB/s"
    );
}

#[test]
fn last_written_bytes_show_unprintable_ones_as_dots() {
    let mut s = snap(1, 1.0, None);
    s.last_written = b"097\n098\n099\n100\n".to_vec();
    assert_eq!(Format::parse("%16A").render(&s, 80, 0), "097.098.099.100.");
    assert_eq!(Format::parse("%4A").render(&s, 80, 0), "100.");
}

/// A finished transfer of `count` out of `size` (unknown: `None`).
fn done(count: u64, size: Option<u64>) -> Snapshot {
    Snapshot {
        done: true,
        utf8: true,
        ..snap(count, 1.0, size)
    }
}

#[test]
fn si_amounts_are_in_powers_of_1000_with_a_one_column_prefix() {
    // pv 1.12 -k: `0.00 B`, ` 999 B`, `1.00kB`, `  99kB` (99.949 kB).
    let cases = [
        (0.0, "0.00 B"),
        (999.0, " 999 B"),
        (1000.0, "1.00kB"),
        (1023.0, "1.02kB"),
        (9999.0, "10.0kB"),
        (99_949.0, "  99kB"),
        (970_000.0, " 970kB"),
        (1_000_000.0, "1.00MB"),
    ];
    for (amount, text) in cases {
        assert_eq!(size_text(amount, "B", false), text, "{amount}");
    }
    let mut s = done(5000, Some(5000));
    s.si = true;
    let f = Format::parse("%b|%r|%a");
    s.rate = 25_300_000.0;
    s.average = 0.0;
    assert_eq!(f.render(&s, 80, 0), "5.00kB|[25.3MB/s]|(0.00 B/s)");
    s.bits = true;
    assert_eq!(Format::parse("%b").render(&s, 80, 0), "40.0kb");
    // Lines are counted in powers of 1000 with or without -k.
    s.lines = true;
    s.bits = false;
    assert_eq!(Format::parse("%b").render(&s, 80, 0), "5.00k");
}

#[test]
fn the_bars_in_each_style_as_pv_1_12_draws_them() {
    // pv 1.12 -w 10 -s 1000, finished at each count.
    let cases = [
        (0, ">         ", "          ", "          ", "░░░░░░░░░░"),
        (13, ">         ", "          ", "▏         ", "░░░░░░░░░░"),
        (34, ">         ", "          ", "▎         ", "▒░░░░░░░░░"),
        (67, ">         ", "          ", "▋         ", "▓░░░░░░░░░"),
        (150, ">         ", "█         ", "█▌        ", "█▒░░░░░░░░"),
        (200, "=>        ", "██        ", "██        ", "██░░░░░░░░"),
        (999, "========> ", "█████████ ", "█████████▉", "█████████▓"),
        (1000, "=========>", "██████████", "██████████", "██████████"),
        (1500, "==========", "██████████", "██████████", "██████████"),
    ];
    for (count, plain, block, granular, shaded) in cases {
        let s = done(count, Some(1000));
        for (style, text) in [
            ("plain", plain),
            ("block", block),
            ("granular", granular),
            ("shaded", shaded),
        ] {
            let f = Format::parse(&format!("%{{bar-{style}}}"));
            assert_eq!(f.render(&s, 10, 0), text, "{style} at {count}");
        }
    }
}

#[test]
fn without_utf8_every_style_is_plain() {
    let mut s = done(500, Some(1000));
    s.utf8 = false;
    assert_eq!(Format::parse("%{bar-shaded}").render(&s, 6, 0), "==>   ");
    s.bar_style = BarStyle::Block;
    assert_eq!(Format::parse("%p").render(&s, 12, 0), "[=>   ]  50%");
    s.utf8 = true;
    assert_eq!(Format::parse("%p").render(&s, 12, 0), "[██   ]  50%");
    assert_eq!(
        Format::parse("%{progress-bar-only}").render(&s, 6, 0),
        "███   "
    );
}

#[test]
fn an_unknown_size_moves_a_marker_of_each_style() {
    let mut s = done(1500, None);
    s.tick = 2;
    let cases = [
        (BarStyle::Plain, "[<=>               ]"),
        (BarStyle::Block, "[◀▶                ]"),
        (BarStyle::Granular, "[◀▶                ]"),
        (BarStyle::Shaded, "[▒▓▒░░░░░░░░░░░░░░░]"),
    ];
    for (style, text) in cases {
        s.bar_style = style;
        assert_eq!(Format::parse("%p").render(&s, 20, 0), text, "{style:?}");
    }
    s.bar_style = BarStyle::Plain;
    s.tick = 100;
    assert_eq!(Format::parse("%{bar-block}").render(&s, 6, 0), "    ◀▶");
}

#[test]
fn bars_share_the_room_and_a_number_sets_one_width() {
    let s = done(5000, Some(10_000));
    // pv 1.12 -w 40: 38 columns left, 12 each.
    let f = Format::parse("%{bar-block}|%{bar-plain}|%p");
    assert_eq!(
        f.render(&s, 40, 0),
        "██████      |=====>      |[=>   ]  50%"
    );
    let f = Format::parse("%20p|%5{progress-bar-only}|%2{bar-plain}");
    assert_eq!(f.render(&s, 80, 0), "[=====>       ]  50%|=>   |> ");
    // `%p` needs 7 columns for `[]  50%`; with less, nothing.
    assert_eq!(Format::parse("%7p|%6p|").render(&s, 80, 0), "[]  50%||");
    // Nothing is cut: a line wider than the width is drawn whole.
    assert_eq!(Format::parse("%b %b %b %b").render(&s, 10, 0).len(), 31);
}

#[test]
fn sgr_codes_by_name_and_number_close_the_line() {
    let s = done(5000, Some(5000));
    let cases = [
        ("%{sgr:red,bold}x%{sgr:reset}", "\x1b[31;1mx\x1b[0m"),
        ("%{sgr:red}%b", "\x1b[31m4.88KiB\x1b[m"),
        ("%{sgr:reset,red}x", "\x1b[0;31mx\x1b[m"),
        ("%{sgr:red,reset}x", "\x1b[31;0mx"),
        ("%{sgr:bold,nope,red}", "\x1b[1;31m\x1b[m"),
        ("%{sgr:38;2;255;0;0}", "\x1b[38;2;0;0m"),
        ("%{sgr:007,254,255,4294967297}", "\x1b[7;254;1m\x1b[m"),
        (
            "%{sgr:bg-yellow,no-underline,fg-default}",
            "\x1b[43;24;39m\x1b[m",
        ),
        ("%{sgr:}%{sgr:RED}", ""),
        ("%{sgr:red", "\x1b[31m\x1b[m"),
        ("%{SGR:red}", "%{SGR:red}"),
    ];
    for (format, text) in cases {
        assert_eq!(Format::parse(format).render(&s, 80, 0), text, "{format}");
    }
    let many: Vec<String> = (1..=17).map(|n| n.to_string()).collect();
    let f = Format::parse(&format!("%{{sgr:{}}}", many.join(",")));
    assert_eq!(
        f.render(&s, 80, 0),
        "\x1b[1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16m\x1b[17m\x1b[m"
    );
    // Codes take no column: the bar still fills the width.
    let f = Format::parse("%{sgr:red}%{bar-plain}|");
    assert_eq!(f.render(&s, 20, 0), "\x1b[31m==================>|\x1b[m");
}

#[test]
fn conemu_gives_the_percentage_or_the_bounce() {
    let f = Format::parse("%b%{progress-conemu}").with_conemu();
    assert_eq!(f.segments().len(), 2);
    let s = done(5000, Some(3000));
    assert_eq!(f.render(&s, 80, 0), "4.88KiB\x1b]9;4;1;167\x1b\\");
    let mut s = done(5000, None);
    s.tick = 2;
    assert_eq!(f.render(&s, 80, 0), "4.88KiB\x1b]9;4;3;2\x1b\\");
    assert_eq!(
        Format::parse("%b").with_conemu().render(&s, 80, 0),
        "4.88KiB\x1b]9;4;3;2\x1b\\"
    );
}

#[test]
fn numeric_lines_as_pv_1_12_writes_them() {
    let mut s = done(3_000_000, Some(6_000_000));
    s.elapsed = 0.00031;
    s.rate = 10_329_689_248.515_1;
    let f = Format::parse(r#"{"b":%b,"t":%t,"r":%r,"p":%{progress-amount-only}}"#);
    assert_eq!(
        f.render_numeric(&s, 80),
        r#"{"b":3000000,"t":0.0003,"r":10329689248.5151,"p":50}"#
    );
    let items = |timer, bytes, rate| Items {
        timer,
        bytes,
        rate,
        ..Items::default()
    };
    assert_eq!(
        Format::numeric(&items(false, false, false)).render_numeric(&s, 80),
        "50"
    );
    assert_eq!(
        Format::numeric(&items(true, false, true)).render_numeric(&s, 80),
        "0.0003 10329689248.5151"
    );
    // The other items as drawn (pv 1.12 -n -s 3000), the percentage
    // rounded.
    let s = done(5000, Some(3000));
    assert_eq!(
        Format::parse("%8p|%A|%3L|%{progress-amount-only}").render_numeric(&s, 80),
        "[>] 166%||   |167"
    );
}

#[test]
fn previous_line_shows_the_first_bytes_as_spaces_when_unprintable() {
    let mut s = done(1, None);
    s.previous_line = b"first\tline".to_vec();
    assert_eq!(Format::parse("%L|").render(&s, 14, 0), "first line   |");
    assert_eq!(
        Format::parse("%3L|%{previous-line}|").render(&s, 20, 0),
        "fir|first line     |"
    );
    assert_eq!(Format::parse("%12L").previous_line(), Some(12));
    assert_eq!(Format::parse("%12L%L").previous_line(), Some(0));
    assert_eq!(Format::parse("%b").previous_line(), None);
    assert_eq!(Format::parse("%{transferred}"), Format::parse("%b"));
}

/// A bar's width in the format (`%NUMp`, `%NUM{bar-block}`) is held to
/// the widest line drawn, as `-w` is: `%999999999999p` once built a line
/// of that many characters every frame (an abort past the memory there
/// is, or a hang).
#[test]
fn a_bar_is_never_wider_than_the_widest_line() {
    for text in [
        "%999999999999p",
        "%9999999999{bar-block}",
        "%99999{progress-bar-only}",
    ] {
        let format = Format::parse(text);
        for segment in format.segments() {
            if let Segment::Bar(bar) = segment {
                assert!(bar.width <= MAX_COLUMNS, "{text}: {}", bar.width);
            }
        }
        let line = format.render(&snap(10, 1.0, Some(100)), 80, 0);
        assert!(line.len() <= 4 * MAX_COLUMNS, "{text}: {}", line.len());
    }
}

#[test]
fn numeric_output() {
    let s = snap(209_715_200, 1.0554, Some(314_572_800));
    let percent_only = Items::default();
    // Rounded, as pv 1.12's (`pv -n -s 3000` of 5000 bytes: 167).
    assert_eq!(render_numeric(&s, &percent_only), "67");
    let timed_bytes = Items {
        timer: true,
        bytes: true,
        ..Items::default()
    };
    assert_eq!(render_numeric(&s, &timed_bytes), "1.0554 209715200");
    // More than the size said: past 100.
    assert_eq!(
        render_numeric(&snap(100, 1.0, Some(50)), &percent_only),
        "200"
    );
    let bits = Snapshot {
        bits: true,
        ..snap(100, 1.0, None)
    };
    let bytes = Items {
        bytes: true,
        ..Items::default()
    };
    assert_eq!(render_numeric(&bits, &bytes), "800");
}

#[test]
fn the_ratio_reads_as_pv_1_12_writes_it() {
    // Each pair as pv 1.12 showed it for `head -c OTHER | pv -M both -F
    // '%{ratio}' -- sh -c 'cat >/dev/null; head -c THIS /dev/zero'`.
    let seen = [
        (1000, 1000, "1:1"),
        (1000, 500, "2:1"),
        (1000, 3, "333.3:1"),
        (1000, 2000, "1:2"),
        (1000, 1500, "1:1.5"),
        (1000, 333, "3.003:1"),
        (1000, 999, "1.001:1"),
        (1000, 1001, "1:1.001"),
        (1000, 10, "100:1"),
        (1000, 400, "2.5:1"),
        (1_000_000, 7, "1.429e+05:1"),
        (7, 1_000_000, "1:1.429e+05"),
        (0, 100, "-:-"),
        (100, 0, "-:-"),
        (0, 0, "-:-"),
    ];
    for (other, this, shown) in seen {
        assert_eq!(ratio_text(other, this), shown, "{other} to {this}");
    }
}
