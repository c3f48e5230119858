//! The formatter against GNU cat's behaviour, on fixed bytes.

use super::*;

fn options(flags: &str) -> FormatOptions {
    let mut o = FormatOptions::default();
    for flag in flags.chars() {
        match flag {
            'n' => o.number = true,
            'b' => o.number_nonblank = true,
            's' => o.squeeze_blank = true,
            'E' => o.show_ends = true,
            'T' => o.show_tabs = true,
            'v' => o.show_nonprinting = true,
            'A' => {
                o.show_nonprinting = true;
                o.show_ends = true;
                o.show_tabs = true;
            }
            _ => panic!("no option {flag}"),
        }
    }
    o
}

/// What cat prints for `chunks`, fed one after another.
fn cat(flags: &str, chunks: &[&[u8]]) -> Vec<u8> {
    let mut f = Formatter::new(options(flags));
    let mut out = Vec::new();
    for chunk in chunks {
        f.format(chunk, &mut out);
    }
    f.finish(&mut out);
    out
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap()
}

#[test]
fn plain_means_no_option_changes_bytes() {
    assert!(FormatOptions::default().is_plain());
    for flag in ["n", "b", "s", "E", "T", "v"] {
        assert!(!options(flag).is_plain(), "{flag}");
    }
}

#[test]
fn numbers_every_line_in_six_columns() {
    assert_eq!(
        text(cat("n", &[b"a\n\nb"])),
        "     1\ta\n     2\t\n     3\tb"
    );
}

#[test]
fn number_nonblank_skips_empty_lines_and_overrides_number() {
    let expected = "     1\ta\n\n     2\tb\n";
    assert_eq!(text(cat("b", &[b"a\n\nb\n"])), expected);
    assert_eq!(text(cat("nb", &[b"a\n\nb\n"])), expected);
}

/// What `n` prints for its current number.
fn printed(n: &LineNumber) -> Vec<u8> {
    let mut out = Vec::new();
    n.append_to(&mut out);
    out
}

/// A counter whose first `LAST + 1` bytes are `digits`, printed from
/// `start`.
fn counter_at(digits: &[u8; 18], start: usize) -> LineNumber {
    let mut n = LineNumber::new();
    let mut buf = n.buf();
    buf[..=LineNumber::LAST].copy_from_slice(digits);
    n.set_buf(buf);
    n.start = start;
    n.print = start;
    n
}

#[test]
fn numbers_grow_past_six_digits_as_gnu_does() {
    let mut n = LineNumber::new();
    assert_eq!(n.text(), b"     1\t");
    for _ in 1..999_999 {
        n.advance();
    }
    assert_eq!(n.text(), b"999999\t");
    n.advance();
    assert_eq!(n.text(), b"1000000\t");
    let mut out = b"x".to_vec();
    n.append_to(&mut out);
    assert_eq!(out, b"x1000000\t");
}

#[test]
fn numbers_past_fifteen_digits_print_in_full() {
    let mut n = counter_at(b"   999999999999999", 3);
    assert_eq!(printed(&n), b"999999999999999\t");
    n.advance();
    assert_eq!(n.text(), b"1000000000000000\t");
    assert_eq!(printed(&n), b"1000000000000000\t");
}

#[test]
fn numbers_past_eighteen_digits_wrap_behind_a_marker() {
    let mut n = counter_at(&[b'9'; 18], 0);
    n.advance();
    assert_eq!(n.text(), b">00000000000000000\t");
    n.advance();
    assert_eq!(n.text(), b">00000000000000001\t");
}

#[test]
fn squeezes_runs_of_empty_lines_to_one() {
    assert_eq!(text(cat("s", &[b"\n\n\na\n\n\n\nb\n\n"])), "\na\n\nb\n\n");
    assert_eq!(
        text(cat("sn", &[b"a\n\n\n\nb\n"])),
        "     1\ta\n     2\t\n     3\tb\n"
    );
}

#[test]
fn shows_ends_and_a_cr_before_lf_as_caret_m() {
    assert_eq!(
        text(cat("E", &[b"a\r\nb\rc\n\r\r\n"])),
        "a^M$\nb\rc$\n\r^M$\n"
    );
    assert_eq!(text(cat("E", &[b"a\r"])), "a\r");
    assert_eq!(text(cat("", &[b"a\r\n"])), "a\r\n");
}

#[test]
fn a_cr_at_a_chunk_end_waits_for_the_next_chunk() {
    assert_eq!(text(cat("E", &[b"a\r", b"\n"])), "a^M$\n");
    assert_eq!(text(cat("E", &[b"a\r", b"b\n"])), "a\rb$\n");
    assert_eq!(text(cat("E", &[b"a\r", b"", b"\n"])), "a^M$\n");
    assert_eq!(text(cat("E", &[b"a\r", b""])), "a\r");
}

#[test]
fn shows_tabs() {
    assert_eq!(text(cat("T", &[b"\ta\tb\t\n"])), "^Ia^Ib^I\n");
}

#[test]
fn shows_nonprinting_bytes_in_caret_and_meta_notation() {
    let all: Vec<u8> = (0..=255u8).filter(|&b| b != b'\n').collect();
    let out = text(cat("v", &[&all]));
    let mut expected =
        String::from("^@^A^B^C^D^E^F^G^H\t^K^L^M^N^O^P^Q^R^S^T^U^V^W^X^Y^Z^[^\\^]^^^_");
    expected.push_str(" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ");
    expected.push_str("[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~^?");
    for low in 0..128u8 {
        expected.push_str("M-");
        match low {
            0..=31 => {
                expected.push('^');
                expected.push((low + 64) as char);
            }
            127 => expected.push_str("^?"),
            _ => expected.push(low as char),
        }
    }
    assert_eq!(out, expected);
    assert!(out.contains("M-^I"));
    assert_eq!(text(cat("vT", &[b"\t\x89"])), "^IM-^I");
    assert_eq!(text(cat("A", &[b"a\tb\r\n\xff\n"])), "a^Ib^M$\nM-^?$\n");
}

#[test]
fn state_carries_across_files() {
    // The last line of one file continues into the next, unnumbered;
    // empty lines at the end of one and the start of the next squeeze.
    assert_eq!(
        text(cat("ns", &[b"a", b"b\n\n", b"\n\nc\n"])),
        "     1\tab\n     2\t\n     3\tc\n"
    );
}

#[test]
fn empty_input_prints_nothing() {
    assert_eq!(cat("nEsTv", &[b"", b""]), b"");
}

/// Inputs with every tricky feature, for the split tests.
const CORPUS: &[&[u8]] = &[
    b"",
    b"\n",
    b"a",
    b"one\ntwo\n",
    b"\n\n\nx\n\n\n\ny\n\n",
    b"no newline at end",
    b"crlf\r\nline\r\n\r\n\r\rlone\rcr\r",
    b"\t\ttabs\tand\x00nul\x01\x1f\x7f\x80\x9f\xa0\xfe\xff\n",
    b"long line with no newline at all, long enough to take the word-at-a-time path",
    b"\r",
];

const FLAG_SETS: &[&str] = &[
    "", "n", "b", "s", "E", "T", "v", "nE", "bs", "ns", "sE", "vT", "A", "nA", "bsA", "ET",
];

#[test]
fn any_split_into_two_chunks_gives_the_same_output_as_one_chunk() {
    for flags in FLAG_SETS {
        for input in CORPUS {
            let whole = cat(flags, &[input]);
            for cut in 0..=input.len() {
                let (a, b) = input.split_at(cut);
                assert_eq!(
                    cat(flags, &[a, b]),
                    whole,
                    "flags {flags:?}, input {input:?} cut at {cut}"
                );
            }
        }
    }
}

#[test]
fn byte_by_byte_gives_the_same_output_as_one_chunk() {
    for flags in FLAG_SETS {
        let input: Vec<u8> = CORPUS.concat();
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(cat(flags, &bytes), cat(flags, &[&input]), "{flags:?}");
    }
}

fn find_newline(bytes: &[u8]) -> Option<usize> {
    find_special::<false, false, false>(bytes)
}

fn find_special_of(bytes: &[u8], specials: Specials) -> Option<usize> {
    match (specials.tab, specials.cr, specials.nonprinting) {
        (false, false, false) => find_special::<false, false, false>(bytes),
        (false, false, true) => find_special::<false, false, true>(bytes),
        (false, true, false) => find_special::<false, true, false>(bytes),
        (false, true, true) => find_special::<false, true, true>(bytes),
        (true, false, false) => find_special::<true, false, false>(bytes),
        (true, false, true) => find_special::<true, false, true>(bytes),
        (true, true, false) => find_special::<true, true, false>(bytes),
        (true, true, true) => find_special::<true, true, true>(bytes),
    }
}

#[test]
fn finds_newlines_at_every_position() {
    for len in 0..40 {
        for at in 0..len {
            let mut bytes = vec![b'x'; len];
            bytes[at] = b'\n';
            assert_eq!(find_newline(&bytes), Some(at), "len {len} at {at}");
            if at + 1 < len {
                bytes[len - 1] = b'\n';
                assert_eq!(find_newline(&bytes), Some(at));
            }
        }
        assert_eq!(find_newline(&vec![b'x'; len]), None);
    }
    // A byte one above LF must not fool the word test.
    assert_eq!(find_newline(&[0x0b; 40]), None);
    assert_eq!(find_newline(&[0x8a; 40]), None);
}

#[test]
fn finds_the_first_special_byte_as_a_byte_loop_does() {
    // Every pair of byte values, at a position inside the first word
    // and across the boundary of two words, for every set of specials.
    for bits in 0..8 {
        let specials = Specials {
            tab: bits & 1 != 0,
            cr: bits & 2 != 0,
            nonprinting: bits & 4 != 0,
        };
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                for at in [3, 7] {
                    let mut bytes = [b'x'; 20];
                    bytes[at] = a;
                    bytes[at + 1] = b;
                    let expected = bytes.iter().position(|&c| specials.contains(c));
                    assert_eq!(
                        find_special_of(&bytes, specials),
                        expected,
                        "{specials:?} {a:#x} {b:#x} at {at}"
                    );
                }
            }
        }
    }
}
