//! pipespeed called `pv` against pv 1.12, case by case: the same command
//! line, stdin and files, run through both, must give the same status,
//! stdout bytes, stderr text and files left behind. The few deliberate
//! differences (docs/pv.md, "Differences from pv 1.12") are checked on
//! both sides: ours as we mean it, and pv 1.12's as it still is.
//!
//! Only what is deterministic is compared: a display drawn once, at the
//! end of a small transfer, with no timer or rate in it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::EXE;
use super::stdio::reference_pv;

/// The files every case starts with, in a directory of its own.
fn fixtures(dir: &Path) {
    std::fs::write(dir.join("a"), "hello\n").unwrap();
    let lines: String = (1..=700).map(|n| format!("{n}\n")).collect();
    std::fs::write(dir.join("b"), lines).unwrap();
    std::fs::write(dir.join("z"), "x\0y\0z\0").unwrap();
    let input: String = (1..=100).map(|n| format!("{n}\n")).collect();
    std::fs::write(dir.join("in"), input).unwrap();
    std::fs::create_dir(dir.join("dir")).unwrap();
}

/// What one run left: status, stdout, stderr (getopt's program name,
/// which is argv[0], as `pv`; a frame drawn again the same, as by a
/// watch that lasted one interval more, once), and every file with its
/// bytes.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    status: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
    files: Vec<(String, Vec<u8>)>,
}

/// Runs `script` with `sh`, `$PV` naming `pv`, in a fresh directory of
/// fixtures, stdin from /dev/null unless the script says otherwise.
fn run(pv: &Path, script: &str) -> Run {
    run_as(pv, script, said_once)
}

/// [`run`], its stderr as `said` makes it.
fn run_as(pv: &Path, script: &str, said: fn(&str) -> String) -> Run {
    let dir = tempfile::tempdir().unwrap();
    fixtures(dir.path());
    let out = Command::new("timeout")
        .args(["20", "sh", "-c", script])
        .env("PV", pv)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (
                name,
                std::fs::read(&path).unwrap_or_else(|_| b"<dir>".to_vec()),
            )
        })
        .collect();
    files.sort();
    let stderr = said(&String::from_utf8_lossy(&out.stderr));
    Run {
        status: out.status.code(),
        stdout: out.stdout,
        stderr,
        files,
    }
}

/// `stderr` with getopt's program name as `pv` (pv 1.12's wrapper runs
/// it by its path), and a frame drawn again the same counted once.
fn said_once(stderr: &str) -> String {
    stderr
        .lines()
        .map(|line| match line.find("/pv: ") {
            // getopt says argv[0]: pv 1.12's wrapper runs it by its path.
            Some(at) if line.starts_with('/') => format!("{}\n", &line[at + 1..]),
            _ => format!("{line}\n"),
        })
        .collect::<String>()
        .split_inclusive('\r')
        .fold(Vec::<&str>::new(), |mut frames, frame| {
            if frames.last() != Some(&frame) {
                frames.push(frame);
            }
            frames
        })
        .concat()
}

/// pipespeed's binary as `pv`: a symlink named pv, so that it speaks as
/// pv (messages `pv:`, bad usage 64).
fn ours() -> (tempfile::TempDir, PathBuf) {
    let bin = tempfile::tempdir().unwrap();
    let pv = bin.path().join("pv");
    std::os::unix::fs::symlink(EXE, &pv).unwrap();
    (bin, pv)
}

/// Cases run through both, compared whole. `$PV` is the pv; the files
/// are `a` ("hello\n"), `b` (700 lines), `z` (three NUL-ended records),
/// `in` (100 lines) and the directory `dir`.
const SAME: &[&str] = &[
    // Copying, files and stdin.
    "$PV -q dir",
    "$PV -q -S -l -s 5 b",
    "$PV -q -S -0 -s 2 z",
    "$PV -q a b",
    "$PV -q <in",
    "$PV -q - a <a",
    "$PV -q a - b <in",
    "$PV -q -- -q",
    "$PV -q nope a nope2 b",
    "$PV -q -C b",
    "$PV -q -Y b",
    "$PV -q -K b | cat",
    "$PV -q -B 1 b",
    "$PV -q -B 0 a",
    "$PV -q -L 0 b",
    "$PV -X b",
    // Stopping at a size, in its every spelling.
    "$PV -q -S -s 100 b",
    "$PV -q -s 0 -S b",
    "$PV -q -S -s 1.5K b",
    "$PV -q -S -s 1,5K b",
    "$PV -q -S -s ' 2K' b",
    "$PV -q -S -s '2 K' b",
    "$PV -q -S -s 1.K b",
    "$PV -q -S -s @a b",
    "$PV -q -k -S -s 1K b",
    "$PV -q -S -s 1K -k b",
    "$PV -q -k -s 1.5K -S b",
    "$PV -q -S -s 1.5K -k b",
    "$PV -q -S -k -s 1.5k b",
    // Every option given twice: the last counts.
    "$PV -q -s 5 -s 100 -S b",
    "$PV -q -S -s 100 -s 5 b",
    "$PV -q -L 1 -L 0 b",
    "$PV -q -B 1 -B 2 b",
    "$PV -f -w 30 -w 20 -p -s 6 a",
    "$PV -f -N n -N m -b a",
    "$PV -f -F %b -F '[%b]' a",
    "$PV -f -b -b -q a",
    // Outputs, stores, pidfiles.
    "$PV -q -o out b",
    "$PV -q -o - b",
    "$PV -q -o nodir/o b",
    "$PV -q -o dir b",
    "$PV -q a >>a",
    "$PV -q <a >>a",
    "$PV -q -U s b",
    "$PV -q -U - b",
    "$PV -q -U a b",
    "$PV -q -U s -o o b",
    "$PV -q -U nodir/x b",
    "$PV -q -U dir b",
    "$PV -q -P pid b",
    "$PV -q -P dir b",
    // A display drawn once, at the end.
    "$PV -f -b a",
    "$PV -f -b a nope b",
    "$PV -f -8 -b a",
    "$PV -f -W -b a",
    "$PV -f -D 5 -b a",
    "$PV -f -m 5 -b a",
    "$PV -f -H 5 -b a",
    "$PV -f -b -N name a",
    "$PV -f -p a",
    "$PV -f -p -s 6 a",
    "$PV -f -w 20 -p -s 6 a",
    "$PV -f -F '%b %N' a",
    "$PV -q -f -b a",
    "$PV -n a",
    "$PV -n -b a",
    "$PV -n -s 100 a",
    "$PV -n -s 1.5G a",
    "$PV -n -b -l b",
    "$PV -n -l b",
    "$PV -n -l a b",
    "$PV -f -T a >o",
    "$PV -f -T -X a",
    "$PV -l -0 -n -b z",
    // Values pv 1.12 takes, spelt its way.
    "$PV -q -w ' 5' a",
    "$PV -q -i ' 1' a",
    "$PV -q -i 1,5 a",
    "$PV -q -i 0 a",
    "$PV -q --size=3 a",
    "$PV -q --siz 3 a",
    // Values refused, in pv's words, status 64.
    "$PV -s x a",
    "$PV -s -1 a",
    "$PV -s 1KB a",
    "$PV -s 1KiB a",
    "$PV -s 1e3 a",
    "$PV -s .5K a",
    "$PV -s 1.5.5 a",
    "$PV -s '' a",
    "$PV -q -S -s '2K ' b",
    "$PV -L x a",
    "$PV -B x a",
    "$PV -Z x a",
    "$PV -J x a",
    "$PV -i x a",
    "$PV -i -1 a",
    "$PV -i 1e3 a",
    "$PV -i 0x10 a",
    "$PV -i nan a",
    "$PV -i '1 ' a",
    "$PV -i '' a",
    "$PV -D x a",
    "$PV -D -1 a",
    "$PV -D 1e9 a",
    "$PV -m x a",
    "$PV -m 1.5 a",
    "$PV -m -3 a",
    "$PV -w x a",
    "$PV -w -1 a",
    "$PV -w +5 a",
    "$PV -w '5 ' a",
    "$PV -w '' a",
    "$PV -H x a",
    "$PV -A x a",
    "$PV -A -1 a",
    "$PV -R x",
    "$PV -R -1",
    "$PV -Q x",
    "$PV -d x",
    "$PV -d :5",
    "$PV -d 0",
    "$PV -M foo a",
    // Missing values, unknown options: getopt's words.
    "$PV -s",
    "$PV -Q",
    "$PV --size",
    "$PV --size=",
    "$PV -z",
    "$PV -qz a",
    "$PV --nope",
    "$PV --nope=3 a",
    // Options that do not go together.
    "$PV -d 999999 -L 5",
    "$PV -d 999999 -l",
    "$PV -d 999999 -S -s 5",
    "$PV -R 999999 -Q 999999",
    // A meter or a process that is not there.
    "$PV -R 999999",
    "$PV -Q 999999",
    "$PV -d 999999",
    "$PV -d 999999:3",
    "$PV -d 999999 a",
    "$PV -d =nomatchxyz",
    "$PV -d =averyveryverylongname",
    "$PV -d @nofile",
    "echo bad >l; $PV -d @l",
    "echo 999999:3 >l; $PV -d @l",
    // A live process's descriptors that cannot be watched (once its
    // stdout is /dev/null: before, the shell that forks it has the
    // test's pipe there).
    "sleep 5 </dev/null >/dev/null 2>&1 & p=$!; sleep 0.3; \
     $PV -d $p:1 2>&1 | sed \"s/$p/PID/g\"; $PV -d $p:7 2>&1 | sed \"s/$p/PID/g\"; kill $p",
    // A descriptor, then a whole process: the watch ends with it.
    "(exec 3<b; sleep 1.2) </dev/null >/dev/null 2>&1 & p=$!; sleep 0.3; \
     $PV -d $p:3 -f -b -i 0.4; wait",
    // (Long enough for two frames of the last file at least: a watch
    // that ends with its process draws no frame then, as pv 1.12's.)
    "(sleep 0.3; exec 3<b; sleep 1.5) </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; \
     $PV -d $p -f -b -i 0.4; wait",
    // (Once sleep has read its locale files.)
    "sleep 1.5 </dev/null >/dev/null 2>&1 & p=$!; sleep 0.4; $PV -d $p -f -b -i 0.3; wait",
    // The help's first line (the rest is ours).
    "$PV --help | head -1",
    "$PV -h | head -1",
];

#[test]
fn every_case_gives_what_pv_1_12_gives() {
    let Some(theirs) = reference_pv() else {
        return;
    };
    let (_bin, pv) = ours();
    let mut differ = Vec::new();
    for case in SAME {
        let (want, got) = (run(Path::new(&*theirs), case), run(&pv, case));
        if want != got {
            differ.push(format!("{case}\n  pv 1.12: {want:?}\n  ours:    {got:?}"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Watches of processes whose descriptors stay where they are: how many
/// frames a watch draws depends on the clock, so a run of frames drawn
/// the same is counted once (see [`squeezed`]); what a frame holds, and
/// how its rows are drawn, must be pv 1.12's byte for byte. The watched
/// processes hold `3<a` as a descriptor the test run inherited reaches
/// them (`/usr/bin/time -o FILE cargo test` leaves FILE open on 3).
const WATCHED: &[&str] = &[
    // A descriptor closed or reused for another file is shown once more
    // as it was: the file found at the start is in the first frame even
    // when it was replaced before it, as pv 1.12 shows it.
    "(sleep 0.6; exec 3<b; sleep 0.8) 3<a </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; \
     $PV -d $p -f -b -i 0.4; wait",
    "(sleep 0.6; exec 3<b; sleep 0.8) 3<a </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; \
     $PV -d $p:3 -f -b -i 0.4; wait",
    "(sleep 0.6; exec 3<&-; sleep 0.8) 3<a </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; \
     $PV -d $p:3 -n -i 0.4; wait",
    // -n: bare numbers for one descriptor; each line named by its
    // descriptor and file for a process watched whole or several
    // descriptors, the rows drawn as the meters' are.
    "(exec 3<b; sleep 1) </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; $PV -d $p:3 -n -i 0.3; wait",
    "(exec 3<b; sleep 1) </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; $PV -d $p -n -i 0.3; wait",
    "(exec 3<b 5<a; sleep 1) </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; \
     $PV -d $p -n -b -i 0.3; wait",
    "(exec 3<b 5<a; sleep 1) </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; \
     $PV -d $p:3 -d $p:5 -n -i 0.3; wait",
    "(exec 3<b 5<a; sleep 1) </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; \
     $PV -d $p -f -b -i 0.3; wait",
    // -F and -N: the name is the descriptor and its file.
    "(exec 3<b; sleep 1) </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; \
     $PV -d $p -n -F '{\"b\":%b}' -i 0.3; wait",
    "(exec 3<b; sleep 1) </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; \
     $PV -d $p -f -F '[%b]' -i 0.3; wait",
    "(exec 3<b; sleep 1) </dev/null >/dev/null 2>&1 & p=$!; sleep 0.1; \
     $PV -d $p:3 -f -N nm -b -i 0.3; wait",
    // A file closed: shown once more, then its row goes, the rows below
    // move up, the last one is blanked.
    "(exec 3<b 5<a 6<in; sleep 0.75; exec 5<&-; sleep 1.5) </dev/null >/dev/null 2>&1 & p=$!; \
     sleep 0.1; $PV -d $p -f -b -i 0.5; wait",
    "(exec 3<b 5<a 6<in; sleep 0.75; exec 5<&-; sleep 1.5) </dev/null >/dev/null 2>&1 & p=$!; \
     sleep 0.1; $PV -d $p -n -b -i 0.5; wait",
];

/// `text` with every run of a block of lines (ended by `\n`, `\r` or a
/// cursor move up) drawn again straight after itself counted once: the
/// frames of a watch, whatever the clock let it draw.
fn squeezed(text: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let end = ["\n", "\r", "\x1b[A"]
            .iter()
            .filter_map(|mark| rest.find(mark).map(|at| at + mark.len()))
            .min()
            .unwrap_or(rest.len());
        lines.push(&rest[..end]);
        rest = &rest[end..];
    }
    let mut squeezed: Vec<&str> = Vec::new();
    for line in lines {
        squeezed.push(line);
        // The newest block of up to 8 lines, if it repeats the one
        // before it.
        for size in 1..=8 {
            let n = squeezed.len();
            if n >= 2 * size && squeezed[n - 2 * size..n - size] == squeezed[n - size..] {
                squeezed.truncate(n - size);
                break;
            }
        }
    }
    squeezed.concat()
}

#[test]
fn squeezed_counts_a_frame_drawn_again_once() {
    assert_eq!(squeezed("0\n0\n0\n  \r"), "0\n  \r");
    assert_eq!(squeezed("x\n\ny\n\x1b[Ax\n\ny\n\x1b[A"), "x\n\ny\n\x1b[A");
    assert_eq!(squeezed("a\rb\ra\r\n"), "a\rb\ra\r\n");
}

#[test]
fn watching_gives_what_pv_1_12_gives() {
    let Some(theirs) = reference_pv() else {
        return;
    };
    let (_bin, pv) = ours();
    let mut differ = Vec::new();
    for case in WATCHED {
        // Both sides race their watched process's sleeps: under a loaded
        // machine one may see a frame more or less (pv 1.12 once drew a
        // row for a process that had exited, not yet reaped). A case
        // fails only when three attempts all differ; a difference of
        // behaviour differs every time.
        let mut last = None;
        for _ in 0..3 {
            let want = run_as(Path::new(&*theirs), case, squeezed);
            let got = run_as(&pv, case, squeezed);
            if want == got {
                last = None;
                break;
            }
            last = Some(format!("{case}\n  pv 1.12: {want:?}\n  ours:    {got:?}"));
        }
        differ.extend(last);
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// A deliberate difference: the case, what ours does, what pv 1.12 does
/// (checked too, so that a pv that changes is noticed), and why.
struct Deliberate {
    case: &'static str,
    ours: fn(&Run) -> bool,
    theirs: fn(&Run) -> bool,
    why: &'static str,
}

fn file<'a>(run: &'a Run, name: &str) -> Option<&'a [u8]> {
    run.files
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, bytes)| bytes.as_slice())
}

fn b_lines() -> Vec<u8> {
    (1..=700)
        .map(|n| format!("{n}\n"))
        .collect::<String>()
        .into()
}

const DELIBERATE: &[Deliberate] = &[
    Deliberate {
        case: "$PV -q -o b b",
        ours: |r| {
            r.status == Some(4)
                && r.stderr == "pv: b: input file is also the output\n"
                && file(r, "b") == Some(&b_lines())
        },
        theirs: |r| r.status == Some(4) && file(r, "b") == Some(b""),
        why: "pv 1.12 empties the output before it finds it is an input: the input is lost",
    },
    Deliberate {
        case: "$PV -q -o a a b",
        ours: |r| r.status == Some(4) && file(r, "a") == Some(b"hello\n"),
        theirs: |r| r.status == Some(4) && file(r, "a") == Some(&b_lines()),
        why: "pv 1.12 empties a (an input) and copies b over it",
    },
    Deliberate {
        case: "$PV -q -U b b",
        ours: |r| r.status == Some(4) && file(r, "b") == Some(&b_lines()),
        theirs: |r| file(r, "b") == Some(b""),
        why: "pv 1.12 empties the store, which is the input",
    },
    Deliberate {
        case: "$PV -q -P b b",
        ours: |r| {
            r.status == Some(1)
                && r.stdout.is_empty()
                && r.stderr == "pv: b: the pidfile (-P) is also an input or the output\n"
                && file(r, "b") == Some(&b_lines())
        },
        theirs: |r| file(r, "b").is_none(),
        why: "pv 1.12 writes its pid over the input, copies that, and removes the file",
    },
    Deliberate {
        case: "$PV -q -K b >o",
        ours: |r| r.status == Some(0) && file(r, "o") == Some(&b_lines()),
        theirs: |r| r.status == Some(16),
        why: "-K is for reading: pv 1.12 also writes a file stdout with O_DIRECT, which fails \
              for a buffer that is not aligned",
    },
    Deliberate {
        case: "$PV -q -s 99999999999999999999 a",
        ours: |r| {
            r.status == Some(64)
                && r.stderr
                    == "pv: -s: 99999999999999999999: too large (at most 18446744073709551615)\n"
        },
        theirs: |r| r.status == Some(0),
        why: "pv 1.12 wraps a number too large for 64 bits, silently",
    },
    Deliberate {
        case: "$PV -q -D 2000000 a",
        ours: |r| {
            r.status == Some(64) && r.stderr == "pv: -D: 2000000: too large (at most 1000000)\n"
        },
        theirs: |r| r.status == Some(0),
        why: "every number is checked against a documented maximum",
    },
    Deliberate {
        case: "$PV -d 999999:x",
        ours: |r| {
            r.status == Some(64) && r.stderr == "pv: -d: process ID or pid:fd pair expected\n"
        },
        theirs: |r| r.status == Some(2),
        why: "pv 1.12 reads 999999:x as a process (5x as 5): a typo watches something else",
    },
    Deliberate {
        case: "$PV -q -x foo a",
        ours: |r| {
            r.status == Some(64)
                && r.stderr == "pv: -x: foo: 'foo' is not windowtitle or processtitle\n"
        },
        theirs: |r| r.status == Some(0),
        why: "pv 1.12 ignores a -x it does not know: the display asked for never comes",
    },
    Deliberate {
        case: "$PV -d '=['",
        ours: |r| {
            r.status == Some(64)
                && r.stderr.starts_with("pgrep: ")
                && r.stderr
                    .ends_with("\npv: -d =[: pgrep failed (exit status: 2)\n")
        },
        theirs: |r| r.status == Some(0) && r.stderr.starts_with("pgrep: "),
        why: "pv 1.12 goes on with nothing to watch when pgrep refuses the pattern",
    },
    Deliberate {
        case: "$PV -d 999999 -U s",
        ours: |r| r.status == Some(64) && r.files.iter().all(|(n, _)| n != "s"),
        theirs: |r| r.status == Some(0) && file(r, "s").is_some(),
        why: "pv 1.12 drops -d when -U is given and copies stdin instead",
    },
    Deliberate {
        case: "$PV -X -o out a",
        ours: |r| r.status == Some(64) && r.files.iter().all(|(n, _)| n != "out"),
        theirs: |r| r.status == Some(0) && file(r, "out") == Some(b""),
        why: "-X (write nothing) and -o (write there) contradict: refused before out is emptied",
    },
    Deliberate {
        case: "$PV -q -E -S -s 5000 dir",
        ours: |r| {
            r.status == Some(16) && r.stdout.is_empty() && r.stderr == "pv: dir: Is a directory\n"
        },
        theirs: |r| r.status == Some(16) && r.stdout.len() == 5000,
        why: "a directory fails every read: pv 1.12 -E makes zeros of it, without end without -S",
    },
    Deliberate {
        case: "$PV -f -c -b a",
        ours: |r| r.stderr == "\r6.00  B\n" || r.stderr.ends_with("6.00  B\n"),
        theirs: |r| r.stderr.is_empty(),
        why: "pv 1.12 -c draws nothing when stderr is not a terminal, even with -f",
    },
    Deliberate {
        case: "$PV -S a",
        ours: |r| r.status == Some(64) && r.stdout.is_empty(),
        theirs: |r| r.status == Some(0) && r.stdout == b"hello\n",
        why: "-S without -s is refused: there is no size to stop at",
    },
    Deliberate {
        case: "$PV -q -s @nofile a",
        ours: |r| r.status == Some(64) && r.stderr.ends_with("nofile: No such file or directory\n"),
        theirs: |r| r.status == Some(64) && r.stderr == "pv: nofile: No such file or directory\n",
        why: "the message names the option too (-s @nofile)",
    },
];

/// Process 0 to -R and -Q. pv 1.12 takes it and signals its own process
/// group (`kill(0, SIGUSR2)`, seen under `strace -e inject=kill:retval=0`),
/// which ends every process of the pipeline it is in, or hangs waiting
/// for an answer: it is not run here.
#[test]
fn pid_0_to_r_and_q_is_refused_not_sent_to_the_process_group() {
    let (_bin, pv) = ours();
    for option in ["-R", "-Q"] {
        let got = run(&pv, &format!("$PV {option} 0"));
        assert_eq!(got.status, Some(64), "{option}: {got:?}");
        assert_eq!(got.stderr, format!("pv: {option}: 0: invalid process ID\n"));
    }
}

#[test]
fn the_deliberate_differences_still_differ_as_documented() {
    let (_bin, pv) = ours();
    let reference = reference_pv();
    for d in DELIBERATE {
        let got = run(&pv, d.case);
        assert!((d.ours)(&got), "ours, {}: {got:?} ({})", d.case, d.why);
        if let Some(theirs) = &reference {
            let want = run(Path::new(&**theirs), d.case);
            assert!((d.theirs)(&want), "pv 1.12, {}: {want:?}", d.case);
        }
    }
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/pv.md")).unwrap();
    assert!(docs.contains("## Differences from pv 1.12"));
}

/// `-V`: the first line names pipespeed (a script that parses it learns
/// what it runs); `--s`: getopt's ambiguity, the candidates in our order.
#[test]
fn version_and_ambiguous_prefix_say_ours() {
    let (_bin, pv) = ours();
    let got = run(&pv, "$PV -V | head -1");
    let first = String::from_utf8_lossy(&got.stdout).into_owned();
    assert!(first.starts_with("pv (pipespeed) "), "{first}");
    let got = run(&pv, "$PV --s 3 a");
    assert_eq!(got.status, Some(64));
    assert!(
        got.stderr
            .starts_with("pv: option '--s' is ambiguous; possibilities: '--"),
        "{}",
        got.stderr
    );
    if let Some(theirs) = reference_pv() {
        let want = run(Path::new(&*theirs), "$PV --s 3 a");
        assert!(
            want.stderr
                .starts_with("pv: option '--s' is ambiguous; possibilities: '--"),
            "{}",
            want.stderr
        );
    }
}

/// `-d PID` follows the files the process opens after the watch began,
/// and ends when the process ends, also without a file at the start
/// (pv 1.12: "all regular files and block devices it opens").
#[test]
fn watching_a_whole_process_shows_the_files_it_opens_later() {
    let (_bin, pv) = ours();
    let got = run(
        &pv,
        "(sleep 0.5; exec 3<b; sleep 1) </dev/null >/dev/null 2>&1 & p=$!; \
         $PV -d $p -f -b -i 0.2; echo \"status $?\"; wait",
    );
    assert_eq!(got.stdout, b"status 0\n", "{got:?}");
    assert!(got.stderr.contains("      3:b: 0.00  B\r"), "{got:?}");
    assert!(got.stderr.ends_with("\n"), "{got:?}");
}
