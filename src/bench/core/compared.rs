//! What `compare` compares in each kind of result: its rows, the metrics
//! each command leads with (each run's value), the machine's facts and
//! the measurement's settings. Each kind implements [`Compared`] in its
//! own folder (`bench/K/compare.rs`); what is here is shared by them.
use crate::bench::core::Placement;
use crate::bench::core::harness::Header;
use crate::build_info::BuildInfo;
use crate::units::Size;

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// A rate: more is faster.
    Higher,
    /// A latency: less is faster.
    Lower,
}

/// What a metric's values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// GiB (2^30 bytes) per second.
    GibPerS,
    /// Nanoseconds.
    Nanoseconds,
    /// Events (round trips, writes) per second.
    PerSecond,
}

/// One thing measured per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// Its name in the output.
    pub name: &'static str,
    /// What its values are.
    pub unit: Unit,
    /// Which way is faster.
    pub better: Better,
}

impl Metric {
    /// The rate of a stream, in GiB/s (the ladder's rungs, `ipc`'s).
    pub const GIB_S: Metric = Metric {
        name: "GiB/s",
        unit: Unit::GibPerS,
        better: Better::Higher,
    };
    /// The round trip's median (`latency`'s, `ipc`'s).
    pub const RTT_P50: Metric = Metric {
        name: "round trip p50",
        unit: Unit::Nanoseconds,
        better: Better::Lower,
    };
}

/// A kind of result as `compare` reads it: its metrics, what its rows
/// are, and from one result its rows, facts, settings and notes. The
/// header and the noise, which every kind records, `compare` reads from
/// the document itself.
pub(crate) trait Compared {
    /// The metrics compared, in the order shown.
    fn metrics() -> &'static [Metric]
    where
        Self: Sized;

    /// What a row is, as a column heading.
    fn row_label() -> &'static str
    where
        Self: Sized;

    /// The rows, the facts (but the build's, which [`extract`] adds),
    /// the settings and the notes.
    fn extract(&self) -> Extract;
}

/// A row's runs: per metric of its kind, each run's value, or why it has
/// none.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Runs {
    /// One vector per metric, one value per run.
    Measured(Vec<Vec<f64>>),
    /// Nothing was measured, and why.
    None(String),
    /// Per metric, its runs or why it has none: a row whose metrics ran
    /// apart (`ipc`'s throughput and round trips).
    Each(Vec<Result<Vec<f64>, String>>),
}

/// One row of a result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    /// The rung, the message size or the cell.
    pub name: String,
    /// Its runs.
    pub runs: Runs,
}

/// Everything `compare` takes from one result.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Extract {
    /// The rows, in the file's order.
    pub rows: Vec<Row>,
    /// The machine's facts (and the placement, and the version), by name.
    pub facts: Vec<(String, String)>,
    /// The measurement's settings, by name.
    pub settings: Vec<(String, String)>,
    /// Things to warn about in this file alone.
    pub notes: Vec<String>,
}

/// The rows, facts, settings and notes of `result`, whose header is
/// `header`.
pub(crate) fn extract(result: &dyn Compared, header: &Header) -> Extract {
    let mut out = result.extract();
    out.facts.extend(build_facts(header.build.as_ref()));
    if header.interrupted {
        out.notes.push(
            "interrupted by SIGINT, SIGTERM or SIGHUP: it holds only the runs made before"
                .to_string(),
        );
    }
    out
}

/// The writers and readers of a contend row's name (`WxR`), or `None`
/// for a name that is not one (`contend`'s cells are named `WxR`).
pub(crate) fn parse_cell_name(name: &str) -> Option<(usize, usize)> {
    let (writers, readers) = name.split_once('x')?;
    Some((writers.parse().ok()?, readers.parse().ok()?))
}

/// The build facts that differ only between two builds worth telling
/// apart: the commit (expected to differ, shown not warned about), the
/// profile and the compiler (a debug build or another rustc explains a
/// difference on its own). [`NOT_RECORDED`] in files written before the
/// build was recorded.
fn build_facts(build: Option<&BuildInfo>) -> Vec<(String, String)> {
    let field = |f: fn(&BuildInfo) -> &str| build.map_or(NOT_RECORDED.to_string(), |b| f(b).into());
    vec![
        ("commit".into(), field(|b| &b.commit)),
        ("profile".into(), field(|b| &b.profile)),
        ("compiler".into(), field(|b| &b.rustc)),
    ]
}

/// The facts expected to differ between base and patched: shown, not
/// warned about.
pub(crate) const EXPECTED_TO_DIFFER: [&str; 1] = ["commit"];

/// The value of a fact the file does not record: `virtualization` in
/// files written before it was measured. A fact neither file records is
/// left out of the comparison.
pub(crate) const NOT_RECORDED: &str = "not recorded";

/// The facts every result carries (in its header), in a fixed order, its
/// ends placed as `placement` says.
pub(crate) fn facts(header: &Header, placement: String) -> Vec<(String, String)> {
    let s = &header.system;
    let allowed: Vec<String> = s.cpus_allowed.iter().map(|c| c.to_string()).collect();
    // No machine has none of them: 0 is a count not recorded (a result
    // read from the kernel's pipe_bench output says little of its system).
    let count = |n: usize| match n {
        0 => String::new(),
        n => n.to_string(),
    };
    [
        ("pipespeed_version", header.pipespeed_version.clone()),
        ("kernel", s.kernel.clone()),
        ("arch", s.arch.clone()),
        ("cpu_model", s.cpu_model.clone()),
        ("cpus_online", count(s.cpus_online)),
        ("cpus_allowed", allowed.join(",")),
        (
            "virtualization",
            s.virtualization.clone().unwrap_or_default(),
        ),
        ("thp", s.thp.to_string()),
        ("pipe_max_size_bytes", count(s.pipe_max_size_bytes)),
        ("page_size_bytes", count(s.page_size_bytes)),
        ("placement", placement),
    ]
    .into_iter()
    .map(|(k, v)| match v.is_empty() {
        true => (k.to_string(), NOT_RECORDED.to_string()),
        false => (k.to_string(), v),
    })
    .collect()
}

/// Where the writer and the reader ran; `plural` is `"s"` for
/// contend's many ends.
pub(crate) fn ends_placement(p: &Placement, plural: &str) -> String {
    match p {
        Placement::Pinned {
            writer_cpu,
            reader_cpu,
        } => format!("writer{plural} on CPU {writer_cpu}, reader{plural} on CPU {reader_cpu}"),
        Placement::Unpinned => "unpinned".into(),
    }
}

/// `65536` as `64KiB`.
pub(crate) fn size(bytes: usize) -> String {
    Size(bytes as u64).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_as_on_the_command_line() {
        assert_eq!(size(65536), "64KiB");
        let pinned = Placement::Pinned {
            writer_cpu: 0,
            reader_cpu: 1,
        };
        assert_eq!(
            ends_placement(&pinned, "s"),
            "writers on CPU 0, readers on CPU 1"
        );
    }

    #[test]
    fn a_cell_name_reads_back() {
        assert_eq!(parse_cell_name("5x10"), Some((5, 10)));
        for bad in ["5", "x10", "5x", "axb", "5x10x1", ""] {
            assert_eq!(parse_cell_name(bad), None, "{bad}");
        }
    }
}
