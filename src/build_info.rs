//! What identifies the pipespeed that measured: recorded by `build.rs`
//! when it was compiled, printed by `pipespeed --version` and stored in
//! every result file.

use serde::{Deserialize, Serialize};

/// The build of this pipespeed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// The package version.
    pub version: String,
    /// The git commit it was built from (`unknown` outside a checkout).
    pub commit: String,
    /// `rustc --version` of the compiler.
    pub rustc: String,
    /// The target triple.
    pub target: String,
    /// The C library: `glibc 2.36` (linked dynamically), or `static`.
    pub libc: String,
    /// The cargo profile: `release` or `debug`.
    pub profile: String,
}

impl BuildInfo {
    /// This binary's.
    pub fn current() -> BuildInfo {
        BuildInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: env!("PIPESPEED_GIT_COMMIT").to_string(),
            rustc: env!("PIPESPEED_RUSTC").to_string(),
            target: env!("PIPESPEED_TARGET").to_string(),
            libc: libc_name(),
            profile: env!("PIPESPEED_PROFILE").to_string(),
        }
    }

    /// The lines `--version` prints after its first.
    pub fn lines(&self) -> String {
        format!(
            "commit: {}\nrustc: {}\ntarget: {}\nlibc: {}\nprofile: {}\n",
            self.commit, self.rustc, self.target, self.libc, self.profile
        )
    }
}

/// `static` for a statically linked binary, else the C library's name and
/// version as it reports them at run time.
fn libc_name() -> String {
    if cfg!(target_feature = "crt-static") {
        return "static".to_string();
    }
    crate::sys::process::libc_version().unwrap_or_else(|| "dynamic".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_filled() {
        let info = BuildInfo::current();
        assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
        assert!(info.rustc.starts_with("rustc "), "{info:?}");
        assert!(info.target.contains("linux"), "{info:?}");
        assert!(
            info.libc.starts_with("glibc ") || info.libc == "static",
            "{info:?}"
        );
        assert!(
            ["debug", "release"].contains(&info.profile.as_str()),
            "{info:?}"
        );
        assert_eq!(info.lines().lines().count(), 5);
    }
}
