//! Standard descriptors closed by the parent, and a `SIGPIPE` it ignored,
//! treated as pv treats them. The shell does the closing (`>&-`) and the
//! ignoring (`trap '' PIPE`), as a user's shell would.

use std::process::Command;

use super::stderr;
pub use crate::common::sh;

/// The pv to compare with: the program `PIPESPEED_PV` names (pv 1.12,
/// the reference: `PIPESPEED_PV=target/references/bin/pv`, from
/// `scripts/references.sh pv`), if it runs and says it is pv. Without it the comparison is
/// skipped, said with `common::skip("pv", ...)` (and failed under
/// `PIPESPEED_REQUIRE_PV=1`). pv on the PATH is not taken: Debian 12's is
/// 1.6, whose words differ from 1.12's.
/// Named by a [`Word`]: scripts hold it unquoted.
pub fn reference_pv() -> Option<crate::common::Word> {
    let Some(program) = std::env::var_os("PIPESPEED_PV").filter(|p| !p.is_empty()) else {
        crate::common::skip("pv", "PIPESPEED_PV names no pv to compare with");
        return None;
    };
    let program = program.to_string_lossy().into_owned();
    let found = Command::new(&program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).starts_with("pv "));
    if !found {
        crate::common::skip("pv", &format!("PIPESPEED_PV={program} does not run as pv"));
        return None;
    }
    Some(crate::common::Word::of(program.as_ref()))
}

/// A directory holding `f`, a short text.
fn files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "hi\n").unwrap();
    dir
}

/// One case: the redirections and operands, what reaches stdout, the
/// status, what pipespeed pv says, and whether pv says the same (with
/// `pv:` for `pipespeed pv:`).
struct Case {
    args: &'static str,
    stdout: &'static str,
    status: i32,
    stderr: &'static str,
    pv_words: bool,
}

const CASES: [Case; 7] = [
    // pv opens f on the free descriptor 1 and refuses it as "input file
    // is output file" (4); the status is pv's, the words say why.
    Case {
        args: "-q f >&-",
        stdout: "",
        status: 4,
        stderr: "pipespeed pv: f: cannot copy to standard output: Bad file descriptor\n",
        pv_words: false,
    },
    Case {
        args: "-q <f >&-",
        stdout: "",
        status: 2,
        stderr: "pipespeed pv: (stdout): Bad file descriptor\n",
        pv_words: true,
    },
    Case {
        args: "-q <&-",
        stdout: "",
        status: 2,
        stderr: "pipespeed pv: -: Bad file descriptor\n",
        pv_words: true,
    },
    Case {
        args: "-q - <&-",
        stdout: "",
        status: 2,
        stderr: "pipespeed pv: -: Bad file descriptor\n",
        pv_words: true,
    },
    Case {
        args: "-q f <&-",
        stdout: "hi\n",
        status: 0,
        stderr: "",
        pv_words: true,
    },
    // Without stderr the data still goes through, display or not.
    Case {
        args: "-q f 2>&-",
        stdout: "hi\n",
        status: 0,
        stderr: "",
        pv_words: true,
    },
    Case {
        args: "-f f 2>&-",
        stdout: "hi\n",
        status: 0,
        stderr: "",
        pv_words: true,
    },
];

#[test]
fn closed_standard_descriptors_are_refused_with_pvs_statuses() {
    let dir = files();
    let reference = reference_pv();
    for case in CASES {
        let out = sh(dir.path(), &format!("\"$P\" pv {}", case.args));
        assert_eq!(
            out.status.code(),
            Some(case.status),
            "{}: {}",
            case.args,
            stderr(&out)
        );
        assert_eq!(stderr(&out), case.stderr, "{}", case.args);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            case.stdout,
            "{}",
            case.args
        );
        let Some(theirs) = &reference else {
            continue;
        };
        let theirs = sh(dir.path(), &format!("timeout 20 {theirs} {}", case.args));
        assert_eq!(theirs.status.code(), Some(case.status), "pv {}", case.args);
        assert_eq!(theirs.stdout, out.stdout, "pv {}", case.args);
        if case.pv_words {
            let words = stderr(&theirs).replace("pv: ", "pipespeed pv: ");
            assert_eq!(words, case.stderr, "pv {}", case.args);
        }
    }
}

/// pv 1.6 catches `SIGPIPE` itself: a reader going away ends it quietly
/// with status 0, whether the parent ignored `SIGPIPE` or not, where GNU
/// cat dies of it (141) or reports a write error. pipespeed pv keeps the
/// runtime's "ignore" for the same result; restoring the inherited
/// disposition, as cat does, would make it die of the signal.
#[test]
fn a_reader_that_goes_away_ends_pv_with_0_and_no_message_sigpipe_ignored_or_not() {
    let dir = files();
    let reference = reference_pv();
    for trap in ["trap '' PIPE; ", ""] {
        for options in ["-q", "-q -C", "-f -i 0.05"] {
            let mut programs = vec!["\"$P\" pv".to_owned()];
            programs.extend(reference.as_ref().map(|r| r.to_string()));
            for program in programs {
                // pv's status is printed by the group it runs in; its
                // stderr goes to a file.
                let script = format!(
                    "{trap}{{ timeout 20 {program} {options} /dev/zero 2>err; echo \"pv=$?\" >&2; }} \
                     | head -c1 >/dev/null"
                );
                let out = sh(dir.path(), &script);
                let what = format!("{script}: {}", stderr(&out));
                assert_eq!(stderr(&out), "pv=0\n", "{what}");
                let said = std::fs::read_to_string(dir.path().join("err")).unwrap();
                // -f's last display line, and nothing more.
                assert!(said.lines().count() <= 1, "{what}: {said}");
                assert!(
                    !said.contains("pipe") && !said.contains("failed"),
                    "{what}: {said}"
                );
            }
        }
    }
}
