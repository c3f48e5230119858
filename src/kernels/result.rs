//! What `kernels --json` writes: the two kernels, every boot, and per
//! measurement each kernel's runs pooled over its boots, with the table
//! `compare --lkml` prints for them.

use std::path::PathBuf;

use serde::Serialize;

use super::{Accel, Guest, KernelsConfig, Measurement};
use crate::bench::core::Header;
use crate::compare::{Comparison, Document, PooledRow, pooled_rows, render};
use crate::sys::SystemFacts;

/// The format of the document.
pub(crate) const SCHEMA: &str = "pipespeed.kernels/1";

/// The first line of a table measured under TCG.
pub(crate) const EMULATED: &str =
    "EMULATED (qemu's TCG): tens of times slower and noisier than the machine";

/// One kernel compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Kernel {
    /// `A` (the base) or `B`.
    pub label: char,
    /// The image booted.
    pub path: PathBuf,
    /// `uname -r` in its guest, as its results record it.
    pub release: Option<String>,
}

/// One boot made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct BootRecord {
    /// Which round (1 is the first A and B).
    pub round: usize,
    /// `A` or `B`.
    pub kernel: char,
    /// KVM or TCG.
    pub accel: Accel,
    /// Seconds from qemu's start to `/init`.
    pub init_s: f64,
    /// Seconds from qemu's start to its end.
    pub total_s: f64,
    /// Its console, results and qemu's messages (kept with `--out`
    /// only).
    pub dir: Option<PathBuf>,
    /// Each measurement's result, as the guest wrote it (kept with
    /// `--out` only).
    pub files: Vec<PathBuf>,
}

/// One measurement, both kernels pooled.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct MeasuredPair {
    /// What the guest ran.
    pub measurement: Measurement,
    /// Kernel A's rows: per metric, the runs of every boot.
    pub a: Vec<PooledRow>,
    /// Kernel B's.
    pub b: Vec<PooledRow>,
    /// The comparison of the two, as `compare --lkml` prints it.
    pub lkml: String,
    /// The comparison.
    #[serde(skip)]
    pub comparison: Comparison,
}

impl MeasuredPair {
    /// Both kernels' results of `measurement` and their comparison;
    /// `emulated`: measured under TCG, which the table's first line says.
    pub(crate) fn new(
        emulated: bool,
        measurement: Measurement,
        a: &[Document],
        b: &[Document],
        mut comparison: Comparison,
    ) -> MeasuredPair {
        let boots = if a.len() == 1 { "boot" } else { "boots" };
        comparison.command = Some(format!(
            "pipespeed kernels: {} {boots} of A and {} of B pooled, `{}` in each",
            a.len(),
            b.len(),
            measurement.command_line()
        ));
        MeasuredPair {
            a: pooled_rows(a),
            b: pooled_rows(b),
            lkml: match emulated {
                true => format!("{EMULATED}\n{}", render::lkml(&comparison)),
                false => render::lkml(&comparison),
            },
            measurement,
            comparison,
        }
    }
}

/// The whole result.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct KernelsResult {
    /// Format, version, build and the host.
    #[serde(flatten)]
    pub header: Header,
    /// How the guests ran.
    pub accel: Accel,
    /// Whether the figures come from qemu's emulator (TCG): not the
    /// machine's speed, and far noisier.
    pub emulated: bool,
    /// The guest's CPUs and memory.
    pub guest: Guest,
    /// Boots of each kernel.
    pub rounds: usize,
    /// A and B.
    pub kernels: [Kernel; 2],
    /// Every boot, in order.
    pub boots: Vec<BootRecord>,
    /// Every measurement, both kernels pooled.
    pub measurements: Vec<MeasuredPair>,
}

impl KernelsResult {
    pub(crate) fn new(
        config: &KernelsConfig,
        accel: Accel,
        boots: Vec<BootRecord>,
        measurements: Vec<MeasuredPair>,
    ) -> KernelsResult {
        let release = |side: usize| {
            let c = &measurements.first()?.comparison;
            let fact = c.facts.iter().find(|p| p.name == "kernel")?;
            Some(if side == 0 {
                fact.base.clone()
            } else {
                fact.new.clone()
            })
        };
        let kernel = |side: usize| Kernel {
            label: if side == 0 { 'A' } else { 'B' },
            path: config.kernels[side].clone(),
            release: release(side),
        };
        KernelsResult {
            header: Header::new(SCHEMA, SystemFacts::collect()),
            accel,
            emulated: accel == Accel::Tcg,
            guest: config.guest.clone(),
            rounds: config.rounds,
            kernels: [kernel(0), kernel(1)],
            boots,
            measurements,
        }
    }
}
