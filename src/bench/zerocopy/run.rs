//! `bench --zero-copy`: every path's check first, then a slot per timed
//! path on the one schedule ([`schedule`]), each run's CPU per GiB kept
//! beside its rate.

use std::time::Duration;

use super::check::check_all;
use super::ends::{Shape, run};
use super::path::Path;
use super::result::{PathResult, SCHEMA, ZeroCopyConfig, ZeroCopyResult};
use super::verdict::verdict;
use crate::bench::core::{
    Cancel, CopyCheck, Event, Figure, Phase, Plan, RunError, Sample, Series, Slot, Status, schedule,
};
use crate::sys::{NoiseProbe, SystemFacts};
use crate::units::GIB;

/// Bytes a measured run moves unless told: enough to take a few tenths
/// of a second on the slowest path here (read/write, 1.2-1.5 GiB/s), so
/// that every path's runs fit in well under a minute.
pub const DEFAULT_BYTES: u64 = 256 << 20;

/// The pipe size asked for unless told: 1 MiB, or `pipe-max-size` if
/// smaller.
pub fn default_pipe_size(facts: &SystemFacts) -> usize {
    match facts.pipe_max_size_bytes {
        0 => 1 << 20,
        max => max.min(1 << 20),
    }
}

/// Why the reused buffer is not timed.
pub const NOT_TIMED: &str = "not timed: the same calls as vmsplice; its question is which bytes \
                             arrive";

/// Checks every path, then times those that are timed, as `config`
/// says. Once `cancel` is set no run starts; the result holds the runs
/// made before, marked `interrupted`.
pub fn run_zero_copy(
    config: &ZeroCopyConfig,
    facts: &SystemFacts,
    cancel: &Cancel,
    progress: &mut dyn FnMut(Event<'_>),
) -> ZeroCopyResult {
    let found = check_all();
    let shape = Shape {
        bytes: config.bytes,
        chunk: config.chunk,
        pipe_size: config.pipe_size,
        placement: config.placement,
    };
    let slots: Vec<Slot> = found
        .iter()
        .map(|(p, found)| {
            let mut slot = Slot::new(p.name());
            slot.unavailable = unavailable(*p, found.as_ref());
            slot
        })
        .collect();
    let plan = Plan {
        runs: config.runs,
        max_runs: config.max_runs,
        seed: config.seed,
        ends: config.placement.ends(facts),
        warmup: config.warmup,
    };
    let cpus = config.placement.cpu_list();
    let mut cpu_per_gib: Vec<Vec<f64>> = vec![Vec::new(); slots.len()];
    let done = schedule(&slots, &plan, cancel, progress, &mut |i, phase| {
        let probe = NoiseProbe::start();
        let r = run(Path::ALL[i], &shape).map_err(|e| RunError::from_io(&e))?;
        let gib = shape.bytes as f64 / GIB as f64;
        let gib_s = gib / r.seconds.max(f64::MIN_POSITIVE);
        if phase == Phase::Measure {
            cpu_per_gib[i].push(r.cpu_seconds / gib);
        }
        let own = Duration::from_secs_f64(r.cpu_seconds);
        Ok(Sample {
            value: gib_s,
            figure: Figure::GibPerS(gib_s),
            noise: Some(probe.finish(own, r.usage.involuntary_switches, &cpus)),
        })
    });
    let header = done.header(SCHEMA, facts.clone());
    let paths: Vec<PathResult> = Path::ALL
        .iter()
        .zip(found)
        .zip(done.rows)
        .zip(&cpu_per_gib)
        .map(|(((path, (_, found)), row), cpu)| PathResult {
            path: *path,
            name: path.name().to_string(),
            found,
            method: path.method().to_string(),
            status: row.status,
            reason: row.reason,
            gib_s: row.series,
            cpu_s_per_gib: Series::of(cpu),
            vs_read_write: None,
            cpu_vs_read_write: None,
        })
        .collect();
    let mut result = ZeroCopyResult {
        header,
        config: config.clone(),
        verdict: Vec::new(),
        paths,
        noise: done.noise,
    };
    result.compare_to_read_write();
    result.verdict = verdict(&facts.kernel, &result.paths);
    result
}

/// Why `path` is not timed here (`None`: it is): the reused buffer never
/// is, and io_uring's splice not where its check could not run it (io_uring
/// disabled, or a kernel without `IORING_OP_SPLICE`): that is this
/// machine's answer, not a failure.
fn unavailable(path: Path, found: Option<&CopyCheck>) -> Option<String> {
    match (path, found) {
        (Path::ReusedBuffer, _) => Some(NOT_TIMED.to_string()),
        (Path::UringSplice, Some(CopyCheck::Unknown { why })) => Some(why.clone()),
        _ => None,
    }
}

/// Whether a path's row is one that failed (for the exit status).
pub fn failed(result: &ZeroCopyResult) -> Vec<&str> {
    result
        .paths
        .iter()
        .filter(|p| p.status == Status::Failed)
        .map(|p| p.name.as_str())
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::bench::core::{Placement, Warmup};

    #[test]
    fn io_uring_unchecked_is_not_timed_and_the_reused_buffer_never() {
        let off = CopyCheck::Unknown {
            why: "unavailable: io_uring_setup refused".into(),
        };
        assert_eq!(
            unavailable(Path::UringSplice, Some(&off)).as_deref(),
            Some("unavailable: io_uring_setup refused")
        );
        assert_eq!(
            unavailable(Path::UringSplice, Some(&CopyCheck::References)),
            None
        );
        assert_eq!(
            unavailable(Path::ReusedBuffer, None).as_deref(),
            Some(NOT_TIMED)
        );
        // Any other path that could not be checked is still timed, and
        // says what failed there.
        assert_eq!(unavailable(Path::FileToPipe, Some(&off)), None);
    }

    #[test]
    fn a_tiny_measurement_has_every_path_checked_and_the_timed_ones_measured() {
        let facts = SystemFacts::collect();
        let config = ZeroCopyConfig {
            bytes: 1 << 20,
            chunk: 64 << 10,
            pipe_size: default_pipe_size(&facts),
            placement: Placement::Unpinned,
            runs: 1,
            max_runs: 1,
            seed: 1,
            warmup: Warmup::exactly(1),
        };
        let result = run_zero_copy(&config, &facts, &Cancel::never(), &mut |_| {});
        assert_eq!(result.paths.len(), Path::ALL.len());
        for p in &result.paths {
            match p.path {
                Path::ReusedBuffer => assert_eq!(p.status, Status::Unavailable),
                Path::UringSplice if p.status == Status::Unavailable => {}
                _ => assert_eq!(
                    (p.status, p.gib_s.runs.len()),
                    (Status::Ok, 1),
                    "{}",
                    p.name
                ),
            }
        }
        assert_eq!(result.paths[0].vs_read_write, Some(1.0));
        assert!(
            result.verdict[0].starts_with("on Linux "),
            "{:?}",
            result.verdict
        );
        assert!(failed(&result).is_empty());
    }
}
