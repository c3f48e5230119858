//! The shape of a result's JSON document that `ipc` and `latency` share.

use serde::Serialize;

use super::{Header, NoiseSummary};

/// A result as its document writes it: the [`Header`] and the settings,
/// their fields flattened, then the noise where the kind records it
/// there, the rows, and last the verdict, which is worked out from the
/// rows (again when the document is read back) rather than kept.
#[derive(Serialize)]
pub(crate) struct Document<'a, C, R, V> {
    #[serde(flatten)]
    header: &'a Header,
    #[serde(flatten)]
    config: &'a C,
    /// `None`: no `noise` field (`latency` works its noise out from the
    /// rows); `Some(None)`: `"noise": null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    noise: Option<Option<NoiseSummary>>,
    rows: &'a [R],
    verdict: V,
}

impl<'a, C, R, V> Document<'a, C, R, V> {
    /// The document of a result with no `noise` field.
    pub(crate) fn new(header: &'a Header, config: &'a C, rows: &'a [R], verdict: V) -> Self {
        Document {
            header,
            config,
            noise: None,
            rows,
            verdict,
        }
    }

    /// With a `noise` field before the rows.
    pub(crate) fn noise(self, noise: Option<NoiseSummary>) -> Self {
        Document {
            noise: Some(noise),
            ..self
        }
    }
}
