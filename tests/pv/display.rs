//! The display options of pv 1.12: `-k`'s amounts, `-u` and the bars of
//! blocks, `-9`'s ConEmu sequences, `%{sgr:...}`, `%L`, `-n` with `-F`.
//! The last line of a finished copy of a regular file, with the timer and
//! rates left out of the format, is the same at every run: those lines
//! are compared with pv 1.12's byte for byte.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::stdio::reference_pv;
use super::{EXE, file_with, pty, read_until_hangup};

/// Runs `program` (`pipespeed pv` when `None`) on `file` with `args`,
/// with the locale `locale` alone set; its stderr.
fn run(program: Option<&str>, locale: &str, args: &[&str], file: &std::path::Path) -> Vec<u8> {
    let mut cmd = match program {
        Some(program) => Command::new(program),
        None => {
            let mut cmd = Command::new(EXE);
            cmd.arg("pv");
            cmd
        }
    };
    cmd.args(args)
        .arg(file)
        .env_remove("LANG")
        .env_remove("LC_CTYPE")
        .env_remove("LC_MESSAGES")
        .env("LC_ALL", locale)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    out.stderr
}

/// pipespeed pv's stderr for a file of 5000 bytes.
fn ours(locale: &str, args: &[&str]) -> String {
    let file = file_with(&[b'x'; 5000]);
    String::from_utf8(run(None, locale, args, file.path())).unwrap()
}

const UTF8: &str = "C.UTF-8";

/// Cases whose last line does not depend on time: the locale, the
/// options.
const SAME_AS_PV: &[(&str, &[&str])] = &[
    ("C", &["-f", "-k", "-F", "%b|%N", "-N", "x"]),
    ("C", &["-f", "-k", "-8", "-F", "%{transferred}"]),
    ("C", &["-f", "-8", "-F", "%b"]),
    (
        "C",
        &[
            "-f",
            "-s",
            "3000",
            "-F",
            "%p|%{progress-amount-only}",
            "-w",
            "30",
        ],
    ),
    (
        "C",
        &[
            "-f",
            "-s",
            "10000",
            "-F",
            "%{bar-block}|%{bar-plain}|%p",
            "-w",
            "40",
        ],
    ),
    (
        "C",
        &[
            "-f",
            "-s",
            "10000",
            "-F",
            "%20p|%5{bar-shaded}|%7p|%6p",
            "-w",
            "80",
        ],
    ),
    (
        UTF8,
        &[
            "-f",
            "-s",
            "10000",
            "-F",
            "%{bar-block}|%{bar-plain}|%p",
            "-w",
            "40",
        ],
    ),
    (
        UTF8,
        &[
            "-f",
            "-s",
            "7000",
            "-F",
            "%{bar-granular}|%{bar-shaded}",
            "-w",
            "41",
        ],
    ),
    (
        UTF8,
        &[
            "-f",
            "-s",
            "8000",
            "-u",
            "shaded",
            "-F",
            "%p|%{progress-bar-only}",
            "-w",
            "50",
        ],
    ),
    (
        UTF8,
        &["-f", "-s", "9000", "-u", "granular", "-p", "-w", "33"],
    ),
    (
        UTF8,
        &["-f", "-s", "4000", "-u", "block", "-F", "%p", "-w", "20"],
    ),
    (
        "C",
        &["-f", "-s", "9000", "-u", "granular", "-p", "-w", "33"],
    ),
    ("C", &["-f", "-9", "-F", "%b", "-s", "3000"]),
    ("C", &["-f", "-9", "-F", "%{progress-conemu}%b"]),
    (
        "C",
        &["-f", "-F", "%b%{progress-conemu}x%{progress-conemu}"],
    ),
    ("C", &["-f", "-9", "-n", "-F", "%b"]),
    ("C", &["-f", "-n", "-s", "3000"]),
    ("C", &["-f", "-n", "-8", "-b"]),
    (
        "C",
        &[
            "-f",
            "-n",
            "-F",
            "{\"b\":%b,\"p\":%{progress-amount-only}}",
            "-s",
            "6000",
        ],
    ),
    (
        "C",
        &["-f", "-n", "-F", "%p|%{bar-block}|%N|%A|%L|%%", "-N", "nm"],
    ),
    (
        "C",
        &["-f", "-F", "%{sgr:red,bold}x%{sgr:reset}|%{sgr:bg-cyan}%b"],
    ),
    (
        "C",
        &[
            "-f",
            "-F",
            "%{sgr:bold,nope,red}%{sgr:38;2;255;0;0}|%{sgr:007,255}",
            "-w",
            "9",
        ],
    ),
    ("C", &["-f", "-F", "%{sgr:red}%{bar-plain}|", "-w", "20"]),
    ("C", &["-f", "-C", "-F", "%L|%5L|", "-w", "20"]),
    ("C", &["-f", "-C", "-F", "%A|%0A|%1A|%3{last-written}|"]),
    (
        "C",
        &[
            "-f",
            "-n",
            "-s",
            "3000",
            "-F",
            "%8p|%A|%3L|%{progress-amount-only}",
        ],
    ),
    ("C", &["-f", "-w", "10", "-F", "%b %b %b %b"]),
    ("C", &["-f", "-v", "-F", "%b"]),
];

#[test]
fn final_lines_are_pv_1_12_s_byte_for_byte() {
    let Some(reference) = reference_pv() else {
        return;
    };
    let file = file_with(&[b'x'; 5000]);
    for (locale, args) in SAME_AS_PV {
        let theirs = run(Some(&reference), locale, args, file.path());
        let ours = run(None, locale, args, file.path());
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs),
            "LC_ALL={locale} pv {args:?}"
        );
    }
}

#[test]
fn si_shows_powers_of_1000() {
    assert_eq!(ours("C", &["-f", "-k", "-F", "%b"]), "5.00kB\r\n");
    assert_eq!(ours("C", &["-f", "-F", "%b"]), "4.88KiB\r\n");
    assert_eq!(ours("C", &["-f", "-k", "-8", "-F", "%b"]), "40.0kb\r\n");
}

#[test]
fn bars_of_blocks_need_a_utf8_locale() {
    let args = ["-f", "-s", "10000", "-u", "block", "-F", "%p", "-w", "14"];
    assert_eq!(ours(UTF8, &args), "[███    ]  50%\r\n");
    assert_eq!(ours("C", &args), "[==>    ]  50%\r\n");
    // A locale this machine lacks leaves the C library in "C".
    assert_eq!(ours("xx_XX.UTF-8", &args), "[==>    ]  50%\r\n");
}

#[test]
fn conemu_sets_the_progress_then_clears_it() {
    assert_eq!(
        ours("C", &["-f", "-9", "-F", "%b", "-s", "10000"]),
        "4.88KiB\x1b]9;4;1;50\x1b\\\r\n\x1b]9;4;0;0\x1b\\"
    );
    assert_eq!(ours("C", &["-f", "-9", "-q"]), "");
}

#[test]
fn sgr_codes_are_written_and_the_line_reset() {
    assert_eq!(
        ours("C", &["-f", "-F", "%{sgr:green,bold}%b"]),
        "\x1b[32;1m4.88KiB\x1b[m\r\n"
    );
}

#[test]
fn numeric_with_a_format_makes_json_lines() {
    let out = ours(
        "C",
        &[
            "-f",
            "-n",
            "-s",
            "10000",
            "-F",
            "{\"bytes\":%b,\"percentage\":%{progress-amount-only}}",
        ],
    );
    assert_eq!(out, "{\"bytes\":5000,\"percentage\":50}\n");
}

#[test]
fn previous_line_shows_the_last_whole_line_once_the_display_runs() {
    // Lines come every 50 ms for a second, after the first frames: the
    // last frame shows the last whole line, padded to the 12 asked for.
    let mut child = Command::new(EXE)
        .args(["pv", "-f", "-C", "-i", "0.1", "-F", "[%12L]"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for n in 0..20 {
        std::thread::sleep(Duration::from_millis(50));
        write!(stdin, "line\t{n}\npart").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.trim_end().rsplit('\r').next().unwrap();
    assert_eq!(last, "[partline 19 ]", "{err:?}");
}

#[test]
fn on_a_terminal_a_bar_of_blocks_fills_its_width() {
    let (controller, terminal) = pty();
    let file = file_with(&[b'x'; 5000]);
    let status = Command::new(EXE)
        .args(["pv", "-F", "%{bar-block}"])
        .arg(file.path())
        .env("LC_ALL", UTF8)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(terminal)
        .status()
        .unwrap();
    assert!(status.success());
    let screen = String::from_utf8(read_until_hangup(&controller)).unwrap();
    assert_eq!(screen, format!("{}\r\n", "█".repeat(100)), "{screen:?}");
}

/// `-T`'s last reading is `{  0%}`, as pv 1.12's: at the end the transfer
/// holds nothing, whatever the reader has yet to read (issue 36: the pipe's
/// fill, 11-98% when the reader lagged); and an output that is no pipe (a
/// file, or none with `-X`) reads 0%, not `{----}`.
#[test]
fn the_buffer_reading_ends_at_0_percent() {
    let input = file_with(&vec![b'x'; 60_000]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // $0: pv; $1: the input; $2: a file. The display goes to $2 and is
    // read from it at the end.
    let cases = [
        // The reader starts a second after the meter has written all.
        (
            "\"$0\" pv -f -T \"$1\" 2>\"$2\" | (sleep 1; cat >/dev/null)",
            "a slow reader",
        ),
        ("\"$0\" pv -f -T \"$1\" 2>\"$2\" >\"$2.out\"", "a file"),
        ("\"$0\" pv -f -T -X \"$1\" 2>\"$2\"", "-X"),
    ];
    for (script, what) in cases {
        let script = format!("{script}; cat \"$2\" >&2");
        let got = Command::new("sh")
            .args(["-c", &script, EXE])
            .arg(input.path())
            .arg(&out)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&got.stderr);
        let last = err
            .split(['\r', '\n'])
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or_default();
        assert_eq!(last.trim(), "{  0%}", "{what}: {err:?}");
    }
}
