//! The answer in a few lines, made from the findings and the figures:
//! never written in advance.

use super::path::Path;
use super::result::PathResult;
use crate::bench::core::CopyCheck;

/// The verdict's lines: which paths move references and which copy on
/// `kernel`, which could not be told, and the fastest path against
/// read/write.
pub(crate) fn verdict(kernel: &str, paths: &[PathResult]) -> Vec<String> {
    let named = |want: fn(&CopyCheck) -> bool| -> Vec<&str> {
        paths
            .iter()
            .filter(|p| p.found.as_ref().is_some_and(want))
            .map(|p| p.name.as_str())
            .collect()
    };
    let references = named(|c| *c == CopyCheck::References);
    let copies = named(|c| *c == CopyCheck::Copies);
    let unknown = named(|c| matches!(c, CopyCheck::Unknown { .. }));
    let mut parts = Vec::new();
    if !references.is_empty() {
        parts.push(format!(
            "{} {} page references",
            list(&references),
            verb(&references, "moves", "move")
        ));
    }
    if !copies.is_empty() {
        parts.push(format!(
            "{} {}",
            list(&copies),
            verb(&copies, "copies", "copy")
        ));
    }
    if !unknown.is_empty() {
        parts.push(format!("{} could not be told", list(&unknown)));
    }
    let mut lines = vec![match parts.is_empty() {
        true => format!("on Linux {kernel}: no path was checked"),
        false => format!("on Linux {kernel}: {}", parts.join("; ")),
    }];
    if paths
        .iter()
        .any(|p| p.path == Path::Vmsplice && p.found == Some(CopyCheck::References))
    {
        lines.push(
            "a vmsplice writer must not touch its buffer until the reader has read it \
             (double buffering, the pipe sized to one half)"
                .into(),
        );
    }
    let fastest = paths
        .iter()
        .filter(|p| p.path != Path::ReadWrite)
        .filter_map(|p| Some((p, p.vs_read_write?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((p, x)) = fastest {
        let cpu = p
            .cpu_vs_read_write
            .map_or(String::new(), |c| format!(", {c:.1}x less CPU per GiB"));
        lines.push(format!(
            "fastest against read/write: {} ({x:.1}x{cpu})",
            p.name
        ));
    }
    lines
}

fn verb<'a>(names: &[&str], one: &'a str, many: &'a str) -> &'a str {
    if names.len() == 1 { one } else { many }
}

/// `a`, `a and b`, `a, b and c`.
fn list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::core::{Series, Status};

    fn row(path: Path, found: Option<CopyCheck>, x: Option<f64>) -> PathResult {
        PathResult {
            path,
            name: path.name().to_string(),
            found,
            method: String::new(),
            status: Status::Ok,
            reason: None,
            gib_s: Series::new(),
            cpu_s_per_gib: Series::new(),
            vs_read_write: x,
            cpu_vs_read_write: x.map(|x| x * 2.0),
        }
    }

    #[test]
    fn the_verdict_names_what_references_and_what_copies() {
        let paths = [
            row(Path::ReadWrite, None, Some(1.0)),
            row(Path::Vmsplice, Some(CopyCheck::Copies), Some(1.1)),
            row(Path::FileToPipe, Some(CopyCheck::References), Some(4.0)),
            row(Path::Tee, Some(CopyCheck::References), Some(2.0)),
            row(
                Path::UringSplice,
                Some(CopyCheck::Unknown {
                    why: "unavailable: off".into(),
                }),
                None,
            ),
        ];
        let lines = verdict("7.1", &paths);
        assert_eq!(
            lines,
            [
                "on Linux 7.1: splice file -> pipe and tee pipe -> pipe move page references; \
                 vmsplice buffer -> pipe copies; io_uring splice file -> pipe could not be told",
                "fastest against read/write: splice file -> pipe (4.0x, 8.0x less CPU per GiB)",
            ]
        );
    }

    #[test]
    fn a_vmsplice_that_references_brings_the_buffer_rule() {
        let paths = [row(Path::Vmsplice, Some(CopyCheck::References), None)];
        let lines = verdict("6.18", &paths);
        assert_eq!(
            lines[0],
            "on Linux 6.18: vmsplice buffer -> pipe moves page references"
        );
        assert!(
            lines[1].starts_with("a vmsplice writer must not touch"),
            "{lines:?}"
        );
    }

    #[test]
    fn nothing_checked_is_said() {
        assert_eq!(verdict("6.18", &[]), ["on Linux 6.18: no path was checked"]);
    }
}
