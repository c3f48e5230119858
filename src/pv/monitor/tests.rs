use super::*;

#[test]
fn the_ratio_reads_as_pv_1_12_writes_it() {
    // Each pair as pv 1.12 showed it for `head -c OTHER | pv -M both -F
    // '%{ratio}' -- sh -c 'cat >/dev/null; head -c THIS /dev/zero'`.
    let seen = [
        (1000, 1000, "1:1"),
        (1000, 500, "2:1"),
        (1000, 3, "333.3:1"),
        (1000, 2000, "1:2"),
        (1000, 1500, "1:1.5"),
        (1000, 333, "3.003:1"),
        (1000, 999, "1.001:1"),
        (1000, 1001, "1:1.001"),
        (1000, 10, "100:1"),
        (1000, 400, "2.5:1"),
        (1_000_000, 7, "1.429e+05:1"),
        (7, 1_000_000, "1:1.429e+05"),
        (0, 100, "-:-"),
        (100, 0, "-:-"),
        (0, 0, "-:-"),
    ];
    for (other, this, shown) in seen {
        assert_eq!(ratio_text(other, this), shown, "{other} to {this}");
    }
}

#[test]
fn a_status_reads_as_a_shell_gives_it() {
    let exited = |code: i32| ExitStatus::from_raw(code << 8);
    assert_eq!(shell_status(exited(0)), 0);
    assert_eq!(shell_status(exited(3)), 3);
    assert_eq!(shell_status(exited(255)), 255);
    assert_eq!(shell_status(ExitStatus::from_raw(libc::SIGKILL)), 137);
    assert_eq!(shell_status(ExitStatus::from_raw(libc::SIGPIPE)), 141);
}

#[test]
fn a_program_not_found_is_127_and_one_not_runnable_126() {
    let missing = spawn(
        &["/nonexistent/pipespeed-no-such".into()],
        Metered::Both,
        None,
    );
    assert_eq!(missing.map(|_| ()).unwrap_err().status(), 127);
    let directory = spawn(&["/".into()], Metered::Both, None);
    assert_eq!(directory.map(|_| ()).unwrap_err().status(), 126);
}

#[test]
fn a_metered_side_is_a_pipe_and_the_other_inherited() {
    assert!(Metered::Both.input() && Metered::Both.output());
    assert!(Metered::Input.input() && !Metered::Input.output());
    assert!(!Metered::Output.input() && Metered::Output.output());
}
