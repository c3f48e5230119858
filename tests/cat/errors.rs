//! A system call that fails in the middle of a copy, made to fail by
//! strace's fault injection: after the fast path has moved bytes, the
//! error is cat's (reported, status 1), not a reason to go on another way.

use super::*;

/// `pipespeed cat ARGS` under strace with `inject` (strace's `-e inject=`
/// value), its output read by a pipe until it ends or `cap` bytes came.
/// Returns the bytes read, cat's stderr and status.
fn injected(inject: &str, args: &[&str], cap: usize) -> Option<(usize, String, ExitStatus)> {
    let strace = common::strace()?;
    let mut child = Command::new(strace)
        .args(["-f", "-o", "/dev/null", "-e", &format!("inject={inject}")])
        .arg(EXE)
        .arg("cat")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let errors = thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let mut buf = vec![0u8; 1 << 16];
    let mut got = 0;
    while got < cap {
        match stdout.read(&mut buf).unwrap() {
            0 => break,
            n => got += n,
        }
    }
    // Past the cap, cat is still going: the error was not honoured.
    drop(stdout);
    let status = child.wait().unwrap();
    Some((got, errors.join().unwrap(), status))
}

#[test]
fn an_input_splice_failing_after_bytes_moved_is_a_read_error() {
    // splice calls alternate: into the intermediate pipe, out of it. The
    // third is the second read, after 64 KiB went through.
    let Some((got, stderr, status)) = injected("splice:error=EIO:when=3", &["/dev/zero"], 64 << 20)
    else {
        return;
    };
    assert_eq!(stderr, "pipespeed cat: /dev/zero: Input/output error\n");
    assert_eq!(status.code(), Some(1), "{status:?}");
    assert!(got > 0 && got < 64 << 20, "{got} bytes");
}

#[test]
fn an_output_splice_failing_after_bytes_moved_is_a_write_error() {
    let Some((got, stderr, status)) = injected("splice:error=EIO:when=4", &["/dev/zero"], 64 << 20)
    else {
        return;
    };
    assert_eq!(stderr, "pipespeed cat: write error: Input/output error\n");
    assert_eq!(status.code(), Some(1), "{status:?}");
    assert!(got > 0 && got < 64 << 20, "{got} bytes");
}

#[test]
fn file_to_file_asks_copy_file_range_for_as_much_as_the_kernel_takes() {
    let Some(strace) = common::strace() else {
        return;
    };
    let dir = Dir::new();
    let input = dir.write("in", vec![7u8; 256 << 10]);
    let log = dir.path().join("log");
    let out = File::create(dir.path().join("out")).unwrap();
    // ext4 and tmpfs make no copy of their own: there cat splices
    // through its pipe, of at most 512 KiB, instead.
    let copies_itself = pipespeed::sys::copies_itself(&out);
    let status = Command::new(strace)
        .args(["-f", "-e", "trace=copy_file_range,splice,fcntl", "-o"])
        .arg(&log)
        .arg(EXE)
        .arg("cat")
        .arg(&input)
        .stdout(out)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        fs::read(dir.path().join("out")).unwrap(),
        vec![7u8; 256 << 10]
    );
    let log = fs::read_to_string(log).unwrap();
    let call = |name: &str| log.lines().find(|line| line.contains(name));
    if !copies_itself {
        assert!(call("copy_file_range(").is_none(), "{log}");
        assert!(
            call("splice(3, NULL").is_some(),
            "no splice of the file: {log}"
        );
        if let Some(line) = call("F_SETPIPE_SZ") {
            // fcntl(5, F_SETPIPE_SZ, 262144) = 262144
            let size: u64 = line
                .split(", ")
                .nth(2)
                .unwrap()
                .split(')')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(size <= 512 << 10, "{line}");
        }
        return;
    }
    let first =
        call("copy_file_range(").unwrap_or_else(|| panic!("no copy_file_range call: {log}"));
    // copy_file_range(3, NULL, 1, NULL, LENGTH, 0) = 262144
    let length: u64 = first.split(", ").nth(4).unwrap().parse().unwrap();
    // Linux moves at most 2 GiB less a page a call (MAX_RW_COUNT).
    assert!(length >= (1 << 31) - 4096, "{first}");
}
