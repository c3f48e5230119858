//! A file that is both an input and the output: refused only when the
//! output stands past where the input will be read (GNU cat 9.6 and
//! later), so that a file can be rewritten in place, as POSIX's example
//! `cat doc doc.end >doc` does.

use super::*;

/// Runs `script` in `sh` in `dir`, with `$cat` the command under test.
fn sh(dir: &Dir, script: &str) -> std::process::Output {
    limit_file_size();
    Command::new("sh")
        .args(["-c", script])
        .env("cat", format!("{EXE} cat"))
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
