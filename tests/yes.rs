//! `pipespeed yes`, called `yes`, against GNU yes 9.12 itself (named by
//! `PIPESPEED_GNU12_YES`; `scripts/references.sh gnu-9.12` fetches it as
//! `target/references/bin/gnu12-yes`): for 50 operand lists the same
//! first 10 MB and status with a reader that stops, and the same
//! messages and statuses for help, a bad option, a full or closed output
//! and a reader that goes away.

#![allow(clippy::unwrap_used)]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

/// How much of each output is compared: the 10 MB.
const HEAD: usize = 10_000_000;

/// GNU yes 9.12, from `PIPESPEED_GNU12_YES`, or `None`, said (a failure
/// with `PIPESPEED_REQUIRE_GNU12=1`).
fn gnu12_yes() -> Option<PathBuf> {
    match std::env::var_os("PIPESPEED_GNU12_YES") {
        Some(path) if Path::new(&path).exists() => Some(path.into()),
        _ => {
            common::skip(
                "gnu12",
                "PIPESPEED_GNU12_YES does not name GNU yes 9.12 (scripts/references.sh gnu-9.12 fetches it as target/references/bin/gnu12-yes)",
            );
            None
        }
    }
}

/// A directory whose `bin/yes` is `yes_path` (a symlink) and a `work`
/// directory to run in.
struct Place {
    dir: tempfile::TempDir,
    path: OsString,
}

impl Place {
    fn new(yes_path: &Path) -> Place {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(yes_path, bin.join("yes")).unwrap();
        std::fs::create_dir(dir.path().join("work")).unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        Place {
            dir,
            path: path.into(),
        }
    }

    /// What `sh -c script sh ARGS...` printed (stdout, stderr) and its
    /// status, `yes` on the PATH, in `work`, `TERM` as given.
    fn sh(&self, script: &str, args: &[OsString], term: Option<&str>) -> (Vec<u8>, Vec<u8>, i32) {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(script)
            .arg("sh")
            .args(args)
            .env("PATH", &self.path)
            .current_dir(self.dir.path().join("work"));
        match term {
            Some(term) => cmd.env("TERM", term),
            None => cmd.env_remove("TERM"),
        };
        let out = cmd.output().unwrap();
        (out.stdout, out.stderr, out.status.code().unwrap_or(-1))
    }
}

/// `bytes` with every `name` (GNU's program name: the path its wrapper
/// runs) made `yes`, as ours is called: only in short outputs (help and
/// messages), never in the 10 MB of lines.
fn named_yes(bytes: Vec<u8>, name: &[u8]) -> Vec<u8> {
    if name == b"yes" || bytes.len() > 100_000 {
        return bytes;
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = &bytes[..];
    while let Some(at) = rest.windows(name.len()).position(|w| w == name) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(b"yes");
        rest = &rest[at + name.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// The name GNU yes calls itself in its messages (its wrapper execs the
/// binary by its path).
fn program_name(gnu: &Place) -> Vec<u8> {
    let (_, err, _) = gnu.sh("yes --foo", &[], None);
    let err = String::from_utf8(err).unwrap();
    let (name, _) = err.split_once(": unrecognized option").unwrap();
    name.as_bytes().to_vec()
}

fn bytes(s: &[u8]) -> OsString {
    OsString::from_vec(s.to_vec())
}

/// The 50 operand lists: each a list of words, given to `yes` as they
/// are (non-UTF-8 bytes too).
fn operand_lists() -> Vec<Vec<OsString>> {
    let w = |words: &[&[u8]]| words.iter().map(|w| bytes(w)).collect::<Vec<_>>();
    let long = |len: usize| vec![bytes(&vec![b'x'; len])];
    let words = |n: usize, len: usize| vec![bytes(&vec![b'x'; len]); n];
    let many: Vec<OsString> = (0..1000).map(|i| format!("w{i}").into()).collect();
    let ys: Vec<OsString> = (0..10_000).map(|_| "y".into()).collect();
    let lists = vec![
        w(&[]),
        w(&[b"a"]),
        w(&[b"a", b"b", b"c"]),
        many,
        ys,
        w(&[b"ab"]),  // 3-byte line
        w(&[b"abc"]), // 4-byte line
        w(&[b"abcdef"]),
        long(4095), // a line of a page
        long(4096),
        long(4097),
        long(8193), // past 8 KiB
        long(65535),
        long(65536),
        long(131_071),
        // (A word is 128 KiB at most, the command line 2 MiB.)
        words(8, 131_071),  // a line of 1 MiB
        words(12, 100_000), // longer than the write buffer
        words(14, 131_000),
        w(&[b"\xff\xfe", b"\x80"]), // not UTF-8
        w(&[b"caf\xc3\xa9"]),
        w(&[b"--"]),
        w(&[b"-"]),
        w(&[b"--", b"--"]),
        w(&[b"--", b"--", b"--"]),
        w(&[b"-", b"--"]),
        w(&[b"a", b"--", b"b", b"--"]),
        w(&[b"--", b"--help"]),
        w(&[b"--", b"-x"]),
        w(&[b"a", b"--", b"--version"]),
        w(&[b"a", b"-x"]), // options after operands
        w(&[b"a", b"--foo"]),
        w(&[b"a", b"--help"]),
        w(&[b"a", b"b", b"--he"]),
        w(&[b"--help", b"-x"]),
        w(&[b"-x", b"--help"]),
        w(&[b"--help=x"]),
        w(&[b"---"]),
        w(&[b"-h"]),
        w(&[b"-"]),
        w(&[b""]), // empty strings
        w(&[b"", b""]),
        w(&[b"a", b""]),
        w(&[b"", b"a"]),
        w(&[b" "]), // lone spaces
        w(&[b" ", b" "]),
        w(&[b"\t"]),
        w(&[b"a\nb"]), // newlines inside
        w(&[b"\n"]),
        w(&[b"a\n", b"\nb"]),
        w(&[b"\r\n"]),
    ];
    assert_eq!(lists.len(), 50);
    lists
}

#[test]
fn the_first_10_mb_and_status_are_gnu_yes_9_12s_for_50_operand_lists() {
    let Some(gnu) = gnu12_yes() else {
        return;
    };
    let (ours, gnu) = (Place::new(Path::new(EXE)), Place::new(&gnu));
    let name = program_name(&gnu);
    // The status of yes itself, its reader stopping at 10 MB (SIGPIPE at
    // its default: 141 from sh, or its own exit status before that).
    let script = format!("{{ yes \"$@\"; echo $? >&2; }} | head -c {HEAD}");
    for (i, args) in operand_lists().iter().enumerate() {
        let (out, err, status) = gnu.sh(&script, args, None);
        let want = (named_yes(out, &name), named_yes(err, &name), status);
        let got = ours.sh(&script, args, None);
        let shown: Vec<_> = args.iter().take(3).map(|a| a.len()).collect();
        assert!(
            got.2 == want.2 && got.1 == want.1,
            "list {i} ({} words, lengths {shown:?}...): pipespeed {:?} {:?}, GNU yes 9.12 {:?} {:?}",
            args.len(),
            got.2,
            String::from_utf8_lossy(&got.1),
            want.2,
            String::from_utf8_lossy(&want.1),
        );
        assert!(
            got.0 == want.0,
            "list {i} ({} words, lengths {shown:?}...): {} bytes of output, GNU yes 9.12's {} (first difference at {:?})",
            args.len(),
            got.0.len(),
            want.0.len(),
            got.0.iter().zip(&want.0).position(|(a, b)| a != b),
        );
    }
}

#[test]
fn messages_and_statuses_are_gnu_yes_9_12s() {
    let Some(gnu) = gnu12_yes() else {
        return;
    };
    let (ours, gnu) = (Place::new(Path::new(EXE)), Place::new(&gnu));
    let name = program_name(&gnu);
    let scripts = [
        "yes --help; echo $?",
        "yes --he a b; echo $?",
        "yes a b --help; echo $?",
        "yes -x; echo $?",
        "yes --foo; echo $?",
        "yes --help=x; echo $?",
        "yes --version=x; echo $?",
        "LC_ALL=C yes -x; echo $?",
        "POSIXLY_CORRECT=1 yes a --help | head -n 2; echo $?",
        "yes >/dev/full; echo $?",
        "yes a b >/dev/full; echo $?",
        "yes >&-; echo $?",
        "yes a >&-; echo $?",
        "yes --help >/dev/full; echo $?",
        "yes --help >&-; echo $?",
        // A reader that goes away, SIGPIPE ignored and not.
        "{ yes 2>err; echo $? >st; } | head -c1 >/dev/null; cat st err",
        "trap '' PIPE; { yes 2>err; echo $? >st; } | head -c1 >/dev/null; cat st err",
        "trap '' PIPE; { yes abc 2>err; echo $? >st; } | head -c 3000000 >/dev/null; cat st err",
        "trap '' PIPE; { yes $(head -c 5000 /dev/zero | tr '\\0' x) 2>err; echo $? >st; } | head -c 3000000 | cksum; cat st err",
        // Into a file and /dev/null, stopped by a file size limit.
        "(ulimit -f 100; trap '' XFSZ; yes ab >f 2>err; echo $? >st); cat st err; wc -c <f; sort -u f",
    ];
    for term in [None, Some("xterm")] {
        for script in scripts {
            let (out, err, status) = gnu.sh(script, &[], term);
            let want = (named_yes(out, &name), named_yes(err, &name), status);
            let got = ours.sh(script, &[], term);
            assert!(
                got == want,
                "`{script}` (TERM {term:?}): pipespeed yes\n{}{}{}\nGNU yes 9.12\n{}{}{}",
                String::from_utf8_lossy(&got.0),
                String::from_utf8_lossy(&got.1),
                got.2,
                String::from_utf8_lossy(&want.0),
                String::from_utf8_lossy(&want.1),
                want.2,
            );
        }
    }
    // --version: ours says whose it is, in GNU's form, wherever it stands.
    for script in ["yes --version", "yes a --vers b"] {
        let script = format!("{script} | head -n 1");
        let (out, err, status) = ours.sh(&script, &[], None);
        let (gnu_out, _, gnu_status) = gnu.sh(&script, &[], None);
        assert!(
            String::from_utf8_lossy(&out).starts_with("yes (pipespeed) "),
            "{script}: {out:?}"
        );
        assert!(String::from_utf8_lossy(&gnu_out).starts_with("yes (GNU coreutils) 9.12"));
        assert_eq!((err.as_slice(), status), (&b""[..], gnu_status));
    }
}
