//! What `compare` reads from a ladder: a row per rung, its GiB/s.

use super::LadderResult;
use crate::bench::core::Status;
use crate::bench::core::compared::{
    Compared, Extract, Metric, Row, Runs, ends_placement, facts, size,
};
use crate::report::text::serde_name;

impl Compared for LadderResult {
    fn metrics() -> &'static [Metric] {
        &[Metric::GIB_S]
    }

    fn row_label() -> &'static str {
        "rung"
    }

    fn extract(&self) -> Extract {
        let r = self;
        let mut out = Extract {
            facts: facts(&r.header, ends_placement(&r.placement, "")),
            settings: vec![("verify".into(), r.verify.to_string())],
            ..Extract::default()
        };
        for rung in &r.rungs {
            let name = rung.name.name().to_string();
            let reason = rung.reason.as_deref().unwrap_or("no reason given");
            let status = serde_name(rung.status);
            let runs = if rung.gib_s.runs.is_empty() {
                Runs::None(format!("{status}: {reason}"))
            } else {
                if rung.status != Status::Ok {
                    out.notes.push(format!(
                        "rung {name} {status} after {} runs ({reason}); those runs are compared",
                        rung.gib_s.runs.len()
                    ));
                }
                Runs::Measured(vec![rung.gib_s.runs.clone()])
            };
            let pipe = rung.pipe_size.map_or("kernel default".into(), size);
            out.settings
                .push((format!("buf_size of {name}"), size(rung.buf_size)));
            out.settings.push((format!("pipe_size of {name}"), pipe));
            // Against a rung measured in the ladder's placement, the ratio
            // of one measured in its own placement is the placement's.
            let own = match rung.placement {
                Some(p) if p != r.placement => ends_placement(&p, ""),
                _ => "the ladder's".to_string(),
            };
            out.settings.push((format!("placement of {name}"), own));
            out.rows.push(Row { name, runs });
        }
        out
    }
}
