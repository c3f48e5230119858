//! Records what identifies this build, for `pipespeed --version` and every
//! result file: the git commit, the compiler, the target and the profile,
//! and the date of the commit (for the manual pages).

use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    let date = git(&["log", "-1", "--format=%cs"]);
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc_version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string());
    let env = |name: &str| std::env::var(name).unwrap_or_else(|_| "unknown".into());
    println!(
        "cargo:rustc-env=PIPESPEED_GIT_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    println!(
        "cargo:rustc-env=PIPESPEED_BUILD_DATE={}",
        date.as_deref().unwrap_or("")
    );
    println!(
        "cargo:rustc-env=PIPESPEED_RUSTC={}",
        rustc_version.as_deref().unwrap_or("unknown")
    );
    println!("cargo:rustc-env=PIPESPEED_TARGET={}", env("TARGET"));
    println!("cargo:rustc-env=PIPESPEED_PROFILE={}", env("PROFILE"));
    // Rebuild when HEAD moves: a checkout changes HEAD, a commit the
    // branch it names (a loose ref in refs/heads, or packed-refs). The paths
    // come from git, so a worktree (where .git is a file) works too; only
    // existing files are named, or cargo would rebuild every time.
    // (A directory is scanned whole: a ref written loose again after a
    // pack is seen too.)
    let watched =
        ["HEAD", "refs/heads", "packed-refs"].map(|path| git(&["rev-parse", "--git-path", path]));
    for path in watched.into_iter().flatten() {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
