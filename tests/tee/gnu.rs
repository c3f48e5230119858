//! The same command lines given to GNU tee 9.10 (named by
//! `PIPESPEED_GNU_TEE`; `scripts/references.sh gnu-9.10` fetches it as
//! `target/references/bin/gnu-tee`) and to `pipespeed tee`, called
//! `tee`: the same status, output, files and messages.

use std::path::PathBuf;

use super::*;

/// What a script printed (stdout, then stderr) with `tee` on its PATH
/// being `tee_path`, in a fresh directory; the program name in messages
/// made `tee`.
fn run(tee_path: &Path, script: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(tee_path, bin.join("tee")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("PATH", path)
        .current_dir(&work)
        .output()
        .unwrap();
    let normal = |bytes: &[u8]| {
        text(bytes)
            .lines()
            .map(|line| {
                // `/path/to/tee: ...` and `Try '/path/to/tee --help'`.
                let line = match line.split_once("tee: ") {
                    Some((name, rest)) if !name.contains(' ') => format!("tee: {rest}"),
                    _ => line.to_owned(),
                };
                match line.split_once("Try '") {
                    Some(("", rest)) if rest.ends_with("tee --help' for more information.") => {
                        "Try 'tee --help' for more information.".to_owned()
                    }
                    _ => line,
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    (
        format!("{}status {:?}", normal(&out.stdout), out.status.code()),
        normal(&out.stderr),
    )
}

/// GNU tee 9.10, from `PIPESPEED_GNU_TEE`, or `None`, said.
fn gnu_tee() -> Option<PathBuf> {
    match std::env::var_os("PIPESPEED_GNU_TEE") {
        Some(path) if Path::new(&path).exists() => Some(path.into()),
        _ => {
            common::skip(
                "gnu_tee",
                "PIPESPEED_GNU_TEE does not name GNU tee 9.10 (scripts/references.sh gnu-9.10 fetches it as target/references/bin/gnu-tee)",
            );
            None
        }
    }
}

#[test]
fn the_same_as_gnu_tee_9_10() {
    let Some(gnu) = gnu_tee() else {
        return;
    };
    let scripts = [
        "seq 3 | tee a b; cat a b",
        "seq 3 | tee -z",
        "tee --foo </dev/null",
        "tee --app=x </dev/null",
        "tee --output-error=foo </dev/null",
        "LC_ALL=C tee --output-error=e </dev/null",
        "seq 2 | tee --o a; cat a",
        "echo x >o2; tee --output-error=bad --output-error=warn o2 </dev/null; echo $?; cat o2",
        "tee --output-error=warn --output-e=w o2 </dev/null; echo $?; ls",
        "LC_ALL=C tee --output-e=w --output-error=exit o2 </dev/null; echo $?; ls",
        "tee --output-error=bad --foo o2 </dev/null; echo $?; ls",
        "tee --foo --output-error=bad o2 </dev/null; echo $?; ls",
        "tee $(yes x | head -n 100000) --output-error=bad -z </dev/null; echo $?; ls",
        "tee --output-error=bad --help </dev/null | head -n 1; tee --output-e=w --vers </dev/null",
        "seq 2 | tee --output-error=exit- a; cat a",
        "seq 3 | tee /nonexistent/x a; echo $?; cat a",
        "seq 3 | tee --output-error=exit /nonexistent/x a; echo $?; ls",
        "seq 3 | tee >&-; echo $?",
        ": | tee >&-; echo $?",
        "tee <&-; echo $?",
        "tee a <&-; echo $?; ls",
        "seq 10000 | tee /dev/full b > a; echo $?; seq 10000 | cmp - a && cmp a b",
        "seq 10000 | tee a b > /dev/full; echo $?; seq 10000 | cmp - a && cmp a b",
        "yes | head -c 300000 | tee /dev/full > /dev/full; echo $?",
        "seq 3 | tee --output-error=warn /dev/full; echo $?",
        "seq 3 | tee --output-error=exit-nopipe /dev/full a; echo $?; ls",
        ": | tee -p x/y; echo $?",
        "seq 3 | tee - a; cat ./- a",
        "seq 3 | POSIXLY_CORRECT=1 tee a -p; ls",
        "seq 3 | tee -a a; seq 2 | tee --append a; cat a",
        "{ yes | tee 2>err; echo $? > st; } | head -c1 >/dev/null; cat st err",
        "{ yes | tee -p 2>err; echo $? > st; } | head -c1 >/dev/null; cat st err",
        "{ yes | tee --output-error=warn 2>err; echo $? > st; } | head -c1 >/dev/null; cat st err",
        "{ yes | tee --output-error=exit a 2>err; echo $? > st; } | head -c1 >/dev/null; cat st err",
        "{ yes | tee --output-error=exit-nopipe 2>err; echo $? > st; } | head -c1 >/dev/null; cat st err",
        "trap '' PIPE; { yes | tee 2>err; echo $? > st; } | head -c1 >/dev/null; cat st err",
        "seq 400000 >in; tee a >>a <in; cksum a; tee /dev/stdout >>o <in; cksum o",
        "seq 400000 >in; tee -a a >>a <in; cksum a; tee -a b >b <in; cksum b",
        "seq 400000 | tee -a a a >/dev/null; wc -c <a",
        // (A finite input: a tee that went on would fill the disk.)
        "{ head -c 20M /dev/zero | POSIXLY_CORRECT=1 tee -p --output-error=exit f -p 2>err; echo $? > st; } | head -c1 >/dev/null; cat st err; ls",
    ];
    for script in scripts {
        let want = run(&gnu, script);
        let got = run(Path::new(EXE), script);
        assert_eq!(got, want, "`{script}`: pipespeed tee, then GNU tee 9.10");
    }
}
