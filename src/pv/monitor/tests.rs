use super::*;

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
