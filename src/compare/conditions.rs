//! Were the two files measured under the same conditions? Each result
//! records what else the machine did during its runs ([`NoiseSummary`]);
//! a ladder measured on a loaded machine against the same binary on a
//! quiet one gave five rungs "faster" by 33-94%, so `compare` says when
//! the two differ. The load average is shown, not judged: it counts the
//! measurement's own ends.

use crate::bench::core::NoiseSummary;
// A file is loaded past the thresholds at which a noisy row's diagnosis
// names steal or other load, so that the two agree.
pub(crate) use crate::bench::core::noise::{OTHER, STEAL};

/// What a file's noise summary says about its machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Load {
    /// Steal and other load under [`STEAL`] and [`OTHER`].
    Quiet,
    /// Steal or other load above its threshold.
    Loaded,
    /// The file records no noise (written before it was measured).
    NotRecorded,
}

impl Load {
    /// The class of `noise`.
    pub(crate) fn of(noise: Option<&NoiseSummary>) -> Load {
        match noise {
            None => Load::NotRecorded,
            Some(n) if n.steal_share > STEAL || n.other_share > OTHER => Load::Loaded,
            Some(_) => Load::Quiet,
        }
    }

    /// `quiet`, `loaded`, `noise not recorded`.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Load::Quiet => "quiet",
            Load::Loaded => "loaded",
            Load::NotRecorded => "noise not recorded",
        }
    }
}

/// The noise summaries of both files.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Conditions {
    /// Base's, if it records one.
    pub base: Option<NoiseSummary>,
    /// New's, if it records one.
    pub new: Option<NoiseSummary>,
}

/// `quiet (steal 0.1%, other load 0.02 CPUs, load average 1.95)`.
pub(crate) fn describe(noise: Option<&NoiseSummary>) -> String {
    let load = Load::of(noise);
    match noise {
        None => load.word().to_string(),
        Some(n) => format!(
            "{} (steal {:.1}%, other load {:.2} CPUs, load average {:.2})",
            load.word(),
            n.steal_share * 100.0,
            n.other_share,
            n.max_load_avg_1m
        ),
    }
}

impl Conditions {
    /// Whether either file records its noise.
    pub fn recorded(&self) -> bool {
        self.base.is_some() || self.new.is_some()
    }

    /// The warning when a file was measured under load: the two files
    /// measured under different noise (one quiet or not recorded, the
    /// other loaded), or both loaded. `None` when neither is loaded.
    pub fn warning(&self, base: &str, new: &str) -> Option<String> {
        let (b, n) = (Load::of(self.base.as_ref()), Load::of(self.new.as_ref()));
        if b != Load::Loaded && n != Load::Loaded {
            return None;
        }
        let what = if b == n {
            "both measured under load"
        } else {
            "measured under different noise"
        };
        Some(format!(
            "{what}: {base}: {}; {new}: {}: a difference may be the machine's",
            describe(self.base.as_ref()),
            describe(self.new.as_ref())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(steal: f64, other: f64) -> NoiseSummary {
        NoiseSummary {
            runs: 5,
            steal_share: steal,
            other_share: other,
            max_load_avg_1m: 2.0,
        }
    }

    #[test]
    fn steal_or_other_load_past_its_threshold_is_loaded() {
        assert_eq!(Load::of(Some(&noise(0.001, 0.02))), Load::Quiet);
        assert_eq!(Load::of(Some(&noise(STEAL, OTHER))), Load::Quiet);
        assert_eq!(Load::of(Some(&noise(0.03, 0.0))), Load::Loaded);
        assert_eq!(Load::of(Some(&noise(0.0, 1.3))), Load::Loaded);
        assert_eq!(Load::of(None), Load::NotRecorded);
    }

    #[test]
    fn only_a_loaded_side_is_warned_about() {
        let quiet = Some(noise(0.001, 0.02));
        let loaded = Some(noise(0.0, 1.3));
        let c = |base, new| Conditions { base, new };
        assert_eq!(c(quiet, quiet).warning("a", "b"), None);
        assert_eq!(c(None, quiet).warning("a", "b"), None);
        assert_eq!(c(None, None).warning("a", "b"), None);
        assert_eq!(
            c(quiet, loaded).warning("a", "b").unwrap(),
            "measured under different noise: a: quiet (steal 0.1%, other load 0.02 CPUs, load \
             average 2.00); b: loaded (steal 0.0%, other load 1.30 CPUs, load average 2.00): a \
             difference may be the machine's"
        );
        let both = c(loaded, loaded).warning("a", "b").unwrap();
        assert!(
            both.starts_with("both measured under load: a: loaded"),
            "{both}"
        );
        let unknown = c(loaded, None).warning("a", "b").unwrap();
        assert!(unknown.ends_with("b: noise not recorded: a difference may be the machine's"));
    }
}
