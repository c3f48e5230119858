//! A file that is both an input and the output: refused only when the
//! output stands past where the input will be read (GNU cat 9.6 and
//! later), so that a file can be rewritten in place, as POSIX's example
//! `cat doc doc.end >doc` does.

use super::*;

/// Runs `script` in `sh` in `dir`, with `$cat` the command under test:
/// a function that runs the binary by its quoted path (the checkout may
/// lie at a path holding spaces), so `$cat` splits into two plain words.
fn sh(dir: &Dir, script: &str) -> std::process::Output {
    limit_file_size();
    Command::new("sh")
        .args([
            "-c",
            &format!("pipespeed() {{ \"$EXE\" \"$@\"; }}; {script}"),
        ])
        .env("EXE", EXE)
        .env("cat", "pipespeed cat")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn read(dir: &Dir, name: &str) -> String {
    String::from_utf8(fs::read(dir.path().join(name)).unwrap()).unwrap()
}

#[test]
fn an_output_at_the_inputs_position_rewrites_the_file_in_place() {
    let dir = Dir::new();
    for (name, script) in [
        ("one", "$cat - end <one 1<>one"),
        ("two", "$cat two end 1<>two"),
    ] {
        dir.write(name, "first\n");
        dir.write("end", "end\n");
        let out = sh(&dir, script);
        assert!(out.status.success(), "{script}: {out:?}");
        assert_eq!(out.stderr, b"", "{script}");
        assert_eq!(read(&dir, name), "first\nend\n", "{script}");
    }
    // POSIX's example: the shell empties doc before cat reads it.
    dir.write("doc", "doc\n");
    dir.write("doc.end", "doc.end\n");
    let out = sh(&dir, "$cat doc doc.end >doc");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(&dir, "doc"), "doc.end\n");
}

#[test]
fn an_output_ahead_of_the_input_is_refused_and_the_rest_still_goes() {
    let dir = Dir::new();
    for (name, shown, script) in [
        ("three", "three", "$cat x three 1<>three"),
        ("four", "four", "$cat - four <x 1<>four"),
        ("five", "five", "$cat five >>five"),
        ("six", "-", "$cat <six >>six"),
    ] {
        dir.write("x", "x\n");
        dir.write(name, "old\n");
        let out = sh(&dir, script);
        assert_eq!(out.status.code(), Some(1), "{script}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("pipespeed cat: {shown}: input file is output file\n"),
            "{script}"
        );
        // What came before the refused input was written over its start;
        // nothing of it was copied.
        let expected = match name {
            "three" | "four" => "x\nd\n",
            _ => "old\n",
        };
        assert_eq!(read(&dir, name), expected, "{script}");
    }
}

#[test]
fn an_input_read_to_its_end_is_no_input_even_to_an_appending_output() {
    let dir = Dir::new();
    dir.write("file", "foo\n");
    let out = sh(
        &dir,
        "exec 3<file 4>>file; $cat <&3 >/dev/null && $cat <&3 >&4",
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(&dir, "file"), "foo\n");
}

/// Every option of cat that changes the bytes, short and long.
const FORMATTING: [&str; 16] = [
    "-b",
    "-e",
    "-n",
    "-s",
    "-t",
    "-v",
    "-A",
    "-E",
    "-T",
    "--number-nonblank",
    "--number",
    "--squeeze-blank",
    "--show-nonprinting",
    "--show-ends",
    "--show-tabs",
    "--show-all",
];

/// Blank lines to squeeze, a TAB, a control byte: every option changes
/// this text.
const TEXT: &str = "a\n\n\n\n\tb\x01\n";

#[test]
fn an_option_that_changes_the_bytes_refuses_the_output_file_wherever_it_stands() {
    let dir = Dir::new();
    // `s` is read from its start (output at it), `-` from stdin, `g` is a
    // hard link and `l` a symbolic link to the output, `/proc/self/fd/0`
    // reopens stdin, and `b` is read from its third byte, past the
    // output: GNU cat 9.10 rewrites or grows them all (`-n` until the
    // disk is full); a formatted copy has no position that is safe.
    let cases = [
        ("f", "$cat OPT f 1<>f", "f"),
        ("f", "$cat OPT - <f 1<>f", "-"),
        ("f", "$cat OPT g 1<>f", "g"),
        ("f", "$cat OPT l 1<>f", "l"),
        ("f", "$cat OPT /proc/self/fd/0 <f 1<>f", "/proc/self/fd/0"),
        (
            "f",
            "exec 3<f; dd bs=3 count=1 <&3 >/dev/null 2>&1; $cat OPT <&3 1<>f",
            "-",
        ),
        ("f", "$cat OPT f >>f", "f"),
    ];
    for option in FORMATTING {
        for (file, script, shown) in cases {
            dir.write(file, TEXT);
            let _ = fs::remove_file(dir.path().join("g"));
            let _ = fs::remove_file(dir.path().join("l"));
            fs::hard_link(dir.path().join("f"), dir.path().join("g")).unwrap();
            std::os::unix::fs::symlink("f", dir.path().join("l")).unwrap();
            let script = script.replace("OPT", option);
            let out = sh(&dir, &script);
            assert_eq!(
                String::from_utf8_lossy(&out.stderr),
                format!("pipespeed cat: {shown}: input file is output file\n"),
                "{script}"
            );
            assert_eq!(out.status.code(), Some(1), "{script}");
            assert_eq!(read(&dir, file), TEXT, "{script}");
        }
    }
}

#[test]
fn u_changes_no_byte_and_rewrites_in_place_as_a_plain_copy() {
    let dir = Dir::new();
    for script in ["$cat -u f 1<>f", "$cat f 1<>f", "$cat -u - <f 1<>f"] {
        dir.write("f", TEXT);
        let out = sh(&dir, script);
        assert!(out.status.success(), "{script}: {out:?}");
        assert_eq!(read(&dir, "f"), TEXT, "{script}");
    }
}

#[test]
fn a_formatted_input_with_nothing_left_to_read_is_no_input() {
    let dir = Dir::new();
    dir.write("f", TEXT);
    let out = sh(
        &dir,
        "exec 3<f 4>>f; $cat <&3 >/dev/null && $cat -n <&3 >&4 && $cat -s <&3 1<>f",
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(&dir, "f"), TEXT);
    // An output past its end is still refused, as GNU cat refuses it.
    for options in ["", "-n"] {
        let script = format!(
            "exec 3<f; $cat <&3 >/dev/null; exec 4<>f; dd bs=1 skip=100 count=0 <&4 2>/dev/null; \
             $cat {options} <&3 >&4"
        );
        dir.write("f", TEXT);
        let out = sh(&dir, &script);
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "pipespeed cat: -: input file is output file\n",
            "{script}"
        );
        assert_eq!(out.status.code(), Some(1), "{script}");
    }
}

/// Stdin and stdout one open file (`<>f >&0`) share one position: each
/// read moves the output past what was read, so the copy writes over
/// bytes it has not read yet. GNU cat 9.10 copies a 1 MiB file of four
/// 256 KiB runs `A B C D` into `A A C C` so, with status 0.
#[test]
fn stdin_and_stdout_sharing_one_position_are_refused_even_for_a_plain_copy() {
    let dir = Dir::new();
    let text: Vec<u8> = (b'A'..=b'D').flat_map(|c| vec![c; 256 * 1024]).collect();
    for options in ["", "-u", "-n"] {
        fs::write(dir.path().join("f"), &text).unwrap();
        let script = format!("$cat {options} <>f >&0");
        let out = sh(&dir, &script);
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "pipespeed cat: -: input file is output file\n",
            "{script}"
        );
        assert_eq!(out.status.code(), Some(1), "{script}");
        assert!(fs::read(dir.path().join("f")).unwrap() == text, "{script}");
    }
    // Read to its end, the shared file gives nothing, and is no input.
    fs::write(dir.path().join("f"), &text).unwrap();
    let out = sh(&dir, "exec 3<>f; $cat <&3 >/dev/null; $cat <&3 >&3");
    assert!(out.status.success(), "{out:?}");
    assert!(fs::read(dir.path().join("f")).unwrap() == text);
}
