//! pv 1.12's transfer options: `-J` (the output pipe's size), `-O` (holes
//! for zeros, never over bytes a file holds), `-k` (sizes after it in
//! powers of 1000), `-d =NAME` and `-d @LISTFILE`.

use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{data, file_with, pv, pv_piped, stderr};

/// The size of the pipe pv wrote to, read on our end once pv has exited.
fn output_pipe_size_after(args: &[&str], input: &[u8]) -> (usize, Vec<u8>) {
    let f = file_with(input);
    let mut child = pv(&[args, &[f.path().to_str().unwrap()]].concat())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut stdout, &mut bytes).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{args:?}");
    let size = pipespeed::sys::fcntl_getpipe_size(stdout.as_fd()).unwrap();
    (size, bytes)
}

#[test]
fn j_sets_the_output_pipe_to_its_size_smaller_or_larger_and_an_impossible_one_is_ignored() {
    let input = data(300_000);
    for (args, want) in [
        (&["-q", "-J", "16K"][..], Some(16384)),
        (&["-q", "-J", "128K"][..], Some(131072)),
        (&["-q", "-C", "-J", "8K"][..], Some(8192)),
        // Past any pipe-max-size, or past what F_SETPIPE_SZ takes: pv 1.12
        // goes on silently, and so does this.
        (&["-q", "-J", "1T"][..], None),
    ] {
        let (size, bytes) = output_pipe_size_after(args, &input);
        assert!(bytes == input, "{args:?}: {} bytes", bytes.len());
        if let Some(want) = want {
            assert_eq!(size, want, "{args:?}");
        }
    }
}

#[test]
fn o_makes_holes_of_zeros_and_keeps_every_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = vec![0u8; 2 << 20];
    input[5000] = 1;
    input.extend(b"end");
    let src = dir.path().join("src");
    std::fs::write(&src, &input).unwrap();
    // -o FILE, and stdout redirected to a file: the same bytes, mostly
    // holes (tmpfs and ext4 both have them).
    let out = dir.path().join("out");
    let run = pv(&[
        "-q",
        "-O",
        "-o",
        out.to_str().unwrap(),
        src.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(std::fs::read(&out).unwrap() == input);
    let blocks = std::fs::metadata(&out).unwrap().blocks() * 512;
    assert!(blocks < input.len() as u64 / 4, "{blocks} bytes of blocks");
    // Zeros at the very end: the file still has its length.
    let tail_zeros = [&b"x"[..], &[0u8; 100_000]].concat();
    let run = pv_piped(&["-q", "-O", "-o", out.to_str().unwrap()], &tail_zeros);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(std::fs::read(&out).unwrap() == tail_zeros);
    // From a pipe to a pipe: nothing to seek in, every byte written.
    let run = pv_piped(&["-q", "-O"], &input);
    assert!(run.stdout == input);
}

/// Runs `pv -q -O` with `input` on stdin and stdout opened by the shell
/// redirection `redirect`.
fn sparse_into(redirect: &str, input: &[u8]) {
    let run = Command::new("sh")
        .args(["-c", &format!("\"$P\" pv -q -O {redirect}")])
        .env("P", super::EXE)
        .stdin(Stdio::from(file_with(input).reopen().unwrap()))
        .output()
        .unwrap();
    assert!(run.status.success(), "{redirect}: {}", stderr(&run));
}

/// pv 1.12 -O loses what it seeks over in both of these: in a file opened
/// for appending (`>>`) its zeros never arrive, and over a file's own bytes
/// (`1<>`) they stay where zeros were sent and the rest is cut off.
#[test]
fn o_writes_zeros_over_a_files_bytes_and_into_an_appending_file() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = vec![0u8; 64 * 1024];
    // 1<>FILE: the file's bytes under the zeros are replaced, those past
    // them stay.
    let file = dir.path().join("kept");
    std::fs::write(&file, vec![0xffu8; 100_000]).unwrap();
    sparse_into(&format!("1<>'{}'", file.display()), &zeros);
    let mut want = zeros.clone();
    want.extend(vec![0xffu8; 100_000 - zeros.len()]);
    assert!(std::fs::read(&file).unwrap() == want, "1<>: bytes differ");
    // >>FILE: every zero appended.
    let file = dir.path().join("appended");
    std::fs::write(&file, b"head").unwrap();
    sparse_into(&format!(">>'{}'", file.display()), &zeros);
    let want = [&b"head"[..], &zeros].concat();
    assert!(std::fs::read(&file).unwrap() == want, ">>: bytes differ");
}

#[test]
fn k_makes_the_sizes_after_it_powers_of_1000_and_not_those_before() {
    let input = data(5000);
    for (args, want) in [
        (&["-q", "-k", "-S", "-s", "1K"][..], 1000),
        (&["-q", "-S", "-s", "1K", "-k"][..], 1024),
        (&["-q", "-k", "-S", "-s", "1.5K"][..], 1500),
        (&["-q", "--si", "-S", "--size=2k"][..], 2000),
        (&["-q", "-S", "-s", "2K"][..], 2048),
    ] {
        let out = pv_piped(args, &input);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(
            out.stdout == input[..want],
            "{args:?}: {} bytes",
            out.stdout.len()
        );
    }
}

/// A process of a name no other has: a symbolic link to sleep(1) named
/// after this test, reading a file on its standard input.
fn named_sleeper(dir: &std::path::Path, name: &str) -> std::process::Child {
    let sleep = dir.join(name);
    let real = ["/bin/sleep", "/usr/bin/sleep"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap();
    std::os::unix::fs::symlink(real, &sleep).unwrap();
    let input = file_with(&data(10_000));
    Command::new(&sleep)
        .arg("1.5")
        .stdin(Stdio::from(input.reopen().unwrap()))
        .spawn()
        .unwrap()
}

#[test]
fn d_finds_processes_by_name_and_in_list_files_and_says_what_is_wrong() {
    if Command::new("pgrep").arg("-V").output().is_err() {
        crate::common::skip(
            "pgrep",
            "pgrep(1) is not installed: -d =NAME cannot be checked",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let name = format!("pvw{}", std::process::id() % 100_000);
    let mut sleeper = named_sleeper(dir.path(), &name);
    std::thread::sleep(Duration::from_millis(200));
    // =NAME: its stdin (a file of 10000 bytes), watched until it exits.
    let out = pv(&["-d", &format!("={name}"), "-n", "-i", "0.2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).lines().count() >= 1, "{}", stderr(&out));
    sleeper.wait().unwrap();
    // A name no process has: nothing to watch, status 0, as pv 1.12.
    let out = pv(&["-d", "=zqxpvnone"]).output().unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );
    // @LISTFILE: a missing file, a bad line.
    let missing = dir.path().join("missing");
    let out = pv(&["-d", &format!("@{}", missing.display())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "pipespeed pv: -d @: {}: No such file or directory\n",
            missing.display()
        )
    );
    let list = dir.path().join("list");
    std::fs::write(&list, "\ngarbage\n").unwrap();
    let out = pv(&["-d", &format!("@{}", list.display())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(&format!(
            "pipespeed pv: {}:2: garbage: process ID or pid:fd pair expected",
            list.display()
        )),
        "{}",
        stderr(&out)
    );
    // A list that names itself is refused, not followed for ever.
    std::fs::write(&list, format!("@{}\n", list.display())).unwrap();
    let out = pv(&["-d", &format!("@{}", list.display())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // @LISTFILE with a live process, and an operand as one more target.
    let mut sleeper = named_sleeper(dir.path(), &format!("{name}b"));
    std::fs::write(&list, format!("{}:0\n", sleeper.id())).unwrap();
    let out = pv(&[
        "-d",
        &format!("@{}", list.display()),
        &sleeper.id().to_string(),
        "-n",
    ])
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    sleeper.wait().unwrap();
}

/// A directory as an input fails every read with EISDIR: with -E, pv 1.12
/// "skips" it for ever, writing zeros without end (past `-S` too, where
/// pipespeed pv once wrote 5119 bytes for `-S -s 5000`). Nothing there is
/// a damaged stretch to skip: it is said once, as without -E, and the copy
/// goes on with the next input.
#[test]
fn e_does_not_make_zeros_of_a_directory_and_s_holds_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let after = file_with(b"after");
    let after = after.path().to_str().unwrap();
    for args in [
        &["-q", "-E", d, after][..],
        &["-q", "-EE", d, after],
        &["-q", "-E", "-S", "-s", "5000", d, after],
        &["-q", "-E", "-Z", "1K", d, after],
    ] {
        // stderr to a file: read from a pipe only at the end, endless
        // warnings would fill it and stop pv before 1 MiB.
        let errors = tempfile::NamedTempFile::new().unwrap();
        let mut child = pv(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(errors.reopen().unwrap()))
            .spawn()
            .unwrap();
        // Read at most 1 MiB: an endless stream of zeros must not hang
        // the test.
        let mut out = Vec::new();
        let mut stdout = child.stdout.take().unwrap();
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut stdout, 1 << 20), &mut out)
            .unwrap();
        drop(stdout);
        let status = child.wait().unwrap();
        assert!(out == b"after", "{args:?}: {} bytes", out.len());
        assert_eq!(status.code(), Some(16), "{args:?}");
        assert_eq!(
            std::fs::read_to_string(errors.path()).unwrap(),
            format!("pipespeed pv: {d}: Is a directory\n"),
            "{args:?}"
        );
    }
}

/// `-S` with `-l` (or `-0`, which implies it, as in pv 1.12) stops after
/// `-s` lines, cut at the end of the last one, with `-L` too.
#[test]
fn s_with_l_stops_after_that_many_lines() {
    let lines = b"1\n2\n3\n4\n5\n6\n";
    for args in [
        &["-q", "-S", "-l", "-s", "3"][..],
        &["-q", "-S", "-l", "-s", "3", "-L", "100"],
        &["-q", "-l", "-S", "-s", "3", "-C"],
    ] {
        let out = pv_piped(args, lines);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(
            out.stdout == b"1\n2\n3\n",
            "{args:?}: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let out = pv_piped(&["-q", "-S", "-0", "-s", "2"], b"a\0b\0c\0");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        out.stdout == b"a\0b\0",
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    // More lines asked than there are: all of them.
    let out = pv_piped(&["-q", "-S", "-l", "-s", "99"], lines);
    assert!(out.stdout == lines);
}

/// `-O -L`: the bytes arrive at the rate, not all at the end (a whole
/// buffer was read at once and held until the rate allowed all of it).
#[test]
fn o_under_a_rate_limit_writes_as_the_rate_allows() {
    let dir = tempfile::tempdir().unwrap();
    let input = file_with(&data(6000));
    let out = dir.path().join("out");
    let mut child = pv(&["-q", "-O", "-L", "1000", "-o", out.to_str().unwrap()])
        .arg(input.path())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let size = || std::fs::metadata(&out).map_or(0, |m| m.len());
    while size() == 0 && start.elapsed() < Duration::from_secs(4) {
        std::thread::sleep(Duration::from_millis(50));
    }
    // 6000 bytes at 1000 a second take 6 s: some have come, not all.
    let (seen, running) = (size(), child.try_wait().unwrap().is_none());
    let status = child.wait().unwrap();
    assert!(status.success());
    assert!(
        seen > 0 && seen < 6000 && running,
        "{seen} bytes, running {running}"
    );
    assert!(std::fs::read(&out).unwrap() == data(6000));
}

/// A `-d @LIST` has a bound (issue 36: `pv -d @/dev/zero` took 4 GB in
/// 3 s): a list longer than 1 MiB, or lists naming lists that would add
/// up to more than 65536 targets, are refused in one line (status 2),
/// at once, and no pidfile is made.
#[test]
fn a_watch_list_has_a_bound() {
    let dir = tempfile::tempdir().unwrap();
    // 300 lines that name a list of 300 targets: 90,000.
    let inner = dir.path().join("inner");
    std::fs::write(&inner, "1\n".repeat(300)).unwrap();
    let list = dir.path().join("list");
    std::fs::write(&list, format!("@{}\n", inner.display()).repeat(300)).unwrap();
    let big = dir.path().join("big");
    std::fs::write(&big, "1\n".repeat(600_000)).unwrap();
    let pid = dir.path().join("pid");
    for (source, bound) in [
        ("/dev/zero".to_owned(), "1 MiB"),
        (big.display().to_string(), "1 MiB"),
        (list.display().to_string(), "65536"),
    ] {
        let script = format!(
            "ulimit -v 4000000; exec timeout 20 \"$P\" pv -P {} -d @{source}",
            pid.display()
        );
        let out = super::stdio::sh(dir.path(), &script);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "@{source}: {err}");
        assert_eq!(err.lines().count(), 1, "@{source}: {err}");
        assert!(err.contains(bound), "@{source}: {err}");
        assert!(!pid.exists(), "@{source}: the pidfile was made");
    }
}
