//! `-o FILE` and `-U FILE`: a target that is an input (by name, by hard
//! link, by /dev/stdin, by `<`), or a store that is the output, is refused
//! before anything is written or truncated; the store must be a regular
//! file, and a store that cannot be written ends the run with nothing
//! forwarded.

use std::path::Path;

use super::stderr;
use super::stdio::{reference_pv, sh};

/// 588895 bytes, `seq 100000`'s.
fn numbers() -> Vec<u8> {
    (1..=100_000)
        .map(|i| format!("{i}\n"))
        .collect::<String>()
        .into_bytes()
}

/// A directory holding `f` (the numbers), `g` (a short text) and `h`, a
/// hard link to `f`.
fn files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), numbers()).unwrap();
    std::fs::write(dir.path().join("g"), "g\n").unwrap();
    std::fs::hard_link(dir.path().join("f"), dir.path().join("h")).unwrap();
    dir
}

/// The arguments, the names said to be the output, and whether pv 1.12
/// refuses the case with status 4 too (it truncates first, though).
const SAME: [(&str, &[&str], bool); 13] = [
    ("-q -o f f", &["f"], true),
    ("-q -o f - <f", &["-"], true),
    ("-q -o f <f", &["-"], true),
    ("-q -o h f", &["f"], true),
    ("-q -o f /dev/stdin <f", &["/dev/stdin"], true),
    ("-q -o f g f", &["f"], true),
    ("-q -U f f >/dev/null", &["f"], true),
    ("-q -U f <f >/dev/null", &["-"], true),
    ("-q -U h g f >/dev/null", &["f"], true),
    // pv 1.12 exits 0 and leaves f empty.
    ("-q -U - -o f f", &["f"], false),
    // The store is the output, or an input will be when forwarded.
    ("-q -U /dev/stdout g >>f", &["/dev/stdout"], true),
    ("-q -U s f >>f", &["f"], false),
    // pv 1.12 empties f, then refuses.
    ("-q -o /dev/stdout f >>f", &["f"], true),
];

#[test]
fn an_output_or_store_that_is_an_input_is_refused_and_nothing_is_truncated() {
    let reference = reference_pv();
    for (args, names, pv_refuses) in SAME {
        let dir = files();
        let out = sh(dir.path(), &format!("timeout 20 \"$P\" pv {args}"));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(4), "{args}: {err}");
        let want: String = names
            .iter()
            .map(|n| format!("pipespeed pv: {n}: input file is also the output\n"))
            .collect();
        assert_eq!(err, want, "{args}");
        assert!(out.stdout.is_empty(), "{args}");
        assert!(
            std::fs::read(dir.path().join("f")).unwrap() == numbers(),
            "{args}: f was changed"
        );
        assert!(!dir.path().join("s").exists(), "{args}: the store stayed");
        if let Some(theirs) = reference.as_deref().filter(|_| pv_refuses) {
            let dir = files();
            let theirs = sh(dir.path(), &format!("timeout 20 {theirs} {args}"));
            assert_eq!(theirs.status.code(), Some(4), "pv 1.12 {args}");
            assert!(
                stderr(&theirs).contains(": input file is also the output\n"),
                "pv 1.12 {args}: {}",
                stderr(&theirs)
            );
        }
    }
}

#[test]
fn a_store_that_is_not_a_regular_file_is_refused_before_anything_is_written() {
    let dir = files();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    crate::common::fifo::mkfifo(dir.path().join("fifo"));
    // /dev/stdout on a pipe; a FIFO would wait for a reader, /dev/null
    // and /dev/full could not be read back.
    for store in ["/dev/null", "/dev/full", "fifo", "d", "/dev/stdout"] {
        let script = format!("timeout 20 \"$P\" pv -q -U {store} f | wc -c");
        let out = sh(dir.path(), &script);
        let err = stderr(&out);
        // A directory in pv 1.12's words (its open fails so).
        let why = match store {
            "d" => "Is a directory",
            _ => "the store (-U) must be a regular file",
        };
        assert_eq!(err, format!("pipespeed pv: {store}: {why}\n"), "{script}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0", "{script}");
        let status = sh(
            dir.path(),
            &format!("timeout 20 \"$P\" pv -q -U {store} f >/dev/null; echo $?"),
        );
        assert_eq!(String::from_utf8_lossy(&status.stdout), "2\n", "{script}");
    }
}

#[test]
fn a_store_that_fails_part_way_forwards_nothing_and_says_so() {
    let dir = files();
    // A file size limit of 100 blocks (51200 bytes), its signal ignored:
    // the store's write fails with EFBIG past it.
    let script = "trap '' XFSZ; ulimit -f 100; timeout 20 \"$P\" pv -q -U s f >out; echo $? >&2";
    let out = sh(dir.path(), script);
    assert_eq!(
        stderr(&out),
        "pipespeed pv: s: write failed: File too large\n16\n"
    );
    assert_eq!(std::fs::metadata(dir.path().join("out")).unwrap().len(), 0);
}

#[test]
fn a_store_named_dash_is_a_temporary_file_and_dash_as_output_is_stdout() {
    let dir = files();
    for args in ["-q -U - f", "-q -o - f", "-q -U s -o - f"] {
        let out = sh(dir.path(), &format!("timeout 20 \"$P\" pv {args}"));
        assert!(out.status.success(), "{args}: {}", stderr(&out));
        assert!(out.stdout == numbers(), "{args}");
        assert!(!dir.path().join("-").exists(), "{args}");
    }
    assert!(std::fs::read(dir.path().join("s")).unwrap() == numbers());
    // -o FILE: written whole, over a longer file.
    let out = sh(dir.path(), "\"$P\" pv -q -o f g");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(Path::new(dir.path()).join("f")).unwrap(),
        b"g\n"
    );
}

/// `-P FILE` is written only once it is known to be no file of the copy
/// and a regular file: otherwise the ID would replace an input, go into
/// the output, or land in what a symlink points at, and the removal at
/// the end would delete the link (or, as root, a device node).
#[test]
fn a_pidfile_that_is_a_file_of_the_copy_or_not_a_regular_file_is_refused() {
    for (args, said) in [
        (
            "-q -P f f",
            "f: the pidfile (-P) is also an input or the output",
        ),
        (
            "-q -P f <f",
            "f: the pidfile (-P) is also an input or the output",
        ),
        ("-q -P h g", "h: the pidfile (-P) must be a regular file"),
        (
            "-q -P o -o o g",
            "o: the pidfile (-P) is also an input or the output",
        ),
        (
            "-q -P o g >>o",
            "o: the pidfile (-P) is also an input or the output",
        ),
        // Refused before the output or the store is emptied.
        (
            "-q -P f -o f g",
            "f: the pidfile (-P) is also an input or the output",
        ),
        (
            "-q -P o -U o g >/dev/null",
            "o: the pidfile (-P) is also an input or the output",
        ),
        (
            "-q -P h -o o g",
            "h: the pidfile (-P) must be a regular file",
        ),
        (
            "-q -P h -U o g >/dev/null",
            "h: the pidfile (-P) must be a regular file",
        ),
    ] {
        let dir = files();
        // h: a symlink to f, here.
        std::fs::remove_file(dir.path().join("h")).unwrap();
        std::os::unix::fs::symlink("f", dir.path().join("h")).unwrap();
        std::fs::write(dir.path().join("o"), "o\n").unwrap();
        let out = sh(
            dir.path(),
            &format!("timeout 20 \"$P\" pv {args}; echo $? >&2"),
        );
        assert_eq!(stderr(&out), format!("pipespeed pv: {said}\n1\n"), "{args}");
        assert!(
            std::fs::read(dir.path().join("f")).unwrap() == numbers(),
            "{args}: f was changed"
        );
        assert!(
            dir.path().join("h").symlink_metadata().is_ok(),
            "{args}: h went"
        );
        for (name, was) in [("g", "g\n"), ("o", "o\n")] {
            let now = std::fs::read_to_string(dir.path().join(name)).unwrap();
            assert_eq!(now, was, "{args}: {name} was changed");
        }
    }
}

/// `-o` and `-U` naming a dangling symlink make the file it points to,
/// as pv 1.12 does.
#[test]
fn an_output_or_store_through_a_dangling_symlink_makes_its_target() {
    let reference = reference_pv();
    for (program, theirs) in [(Some("\"$P\" pv"), false), (reference.as_deref(), true)] {
        let Some(program) = program else { continue };
        let dir = files();
        std::os::unix::fs::symlink("t", dir.path().join("dang")).unwrap();
        std::os::unix::fs::symlink("u", dir.path().join("dung")).unwrap();
        for (args, made) in [("-q -o dang g", "t"), ("-q -U dung g >/dev/null", "u")] {
            let out = sh(dir.path(), &format!("timeout 20 {program} {args}"));
            assert_eq!(
                out.status.code(),
                Some(0),
                "{theirs} {args}: {}",
                stderr(&out)
            );
            if made == "t" {
                let now = std::fs::read_to_string(dir.path().join(made)).unwrap();
                assert_eq!(now, "g\n", "{theirs} {args}");
            } else {
                assert!(dir.path().join(made).is_file(), "{theirs} {args}");
            }
        }
    }
}

/// `-o /dev/stdout` (or /dev/fd/1, /proc/self/fd/1) is stdout as `-o -`
/// is: a file opened with `>>` is appended to, not emptied (pv 1.12
/// reopens the name and empties it).
#[test]
fn output_to_dev_stdout_appends_where_stdout_appends() {
    for name in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "-"] {
        let dir = files();
        std::fs::write(dir.path().join("o"), "o\n").unwrap();
        let out = sh(
            dir.path(),
            &format!("timeout 20 \"$P\" pv -q -o {name} g >>o"),
        );
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let now = std::fs::read_to_string(dir.path().join("o")).unwrap();
        assert_eq!(now, "o\ng\n", "{name}");
    }
}

/// With `-o` or `-X`, a closed standard output is not where the bytes go.
#[test]
fn a_closed_stdout_does_not_matter_with_o_or_x() {
    let reference = reference_pv();
    let dir = files();
    for (program, args) in [("\"$P\" pv", "-q -o o g >&-"), ("\"$P\" pv", "-q -X g >&-")] {
        let out = sh(dir.path(), &format!("timeout 20 {program} {args}"));
        assert_eq!(out.status.code(), Some(0), "{args}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args}");
    }
    assert_eq!(std::fs::read(dir.path().join("o")).unwrap(), b"g\n");
    if let Some(theirs) = reference {
        let out = sh(dir.path(), &format!("timeout 20 {theirs} -q -o o2 g >&-"));
        assert_eq!(out.status.code(), Some(0), "pv 1.12: {}", stderr(&out));
        assert_eq!(std::fs::read(dir.path().join("o2")).unwrap(), b"g\n");
    }
}

/// A pipe that is an input and the output would feed pv what it wrote,
/// for ever (pv 1.12 hangs on `pv - /dev/stdout`): refused, status 4.
#[test]
fn a_pipe_that_is_an_input_and_the_output_is_refused() {
    let dir = files();
    crate::common::fifo::mkfifo(dir.path().join("fifo"));
    for (script, out_want, said) in [
        ("echo hi | timeout 20 \"$P\" pv -q -o /dev/stdin", "", "-"),
        ("timeout 20 \"$P\" pv -q -o fifo fifo", "", "fifo"),
        (
            "echo hi | timeout 20 \"$P\" pv -q - /dev/stdout | cat",
            "hi\n",
            "/dev/stdout",
        ),
    ] {
        let out = sh(dir.path(), &format!("{script}; echo $? >&2"));
        let err = stderr(&out);
        // The status of the pipeline's pv: the last line, but for `| cat`,
        // whose own status is 0 and whose pv said its words before.
        assert!(
            err.starts_with(&format!(
                "pipespeed pv: {said}: input file is also the output\n"
            )),
            "{script}: {err}"
        );
        if !script.ends_with("cat") {
            assert!(err.ends_with("\n4\n"), "{script}: {err}");
        }
        assert_eq!(String::from_utf8_lossy(&out.stdout), out_want, "{script}");
    }
}

/// Options are checked whole before any file is made or truncated (issue
/// 36: `-B 1T -o out` emptied `out`, then refused the buffer, 64): a
/// buffer the system cannot give leaves `-o`'s file, `-U`'s store and
/// `-P`'s pidfile as they were.
#[test]
fn a_buffer_refused_leaves_the_output_store_and_pidfile_untouched() {
    for args in [
        "-B 1T -o g f",
        "-B 2T -o g f",
        "-B 1T -U s f",
        "-B 1T -P p -o g f",
        "-B 1T -M out -o g -- cat",
    ] {
        let dir = files();
        let out = sh(
            dir.path(),
            &format!("timeout 20 \"$P\" pv {args} </dev/null"),
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(64), "{args}: {err}");
        assert_eq!(err.lines().count(), 1, "{args}: {err}");
        assert!(err.contains("buffer allocation failed"), "{args}: {err}");
        assert_eq!(
            std::fs::read(dir.path().join("g")).unwrap(),
            b"g\n",
            "{args}: g was changed"
        );
        assert!(!dir.path().join("s").exists(), "{args}: the store was made");
        assert!(
            !dir.path().join("p").exists(),
            "{args}: the pidfile was made"
        );
    }
}
