//! `pipespeed kernels A B`: two kernel images booted in turn (A, B, A,
//! B, ...) in qemu, the same measurements run in each boot, each kernel's
//! runs pooled over its boots and compared as `compare --lkml` does.
//!
//! qemu uses KVM where KVM boots a stock kernel (probed by the first
//! boot), else its emulator (TCG): TCG's figures are marked emulated.

mod console;
pub(crate) mod initramfs;
pub(crate) mod qemu;
pub(crate) mod result;
pub(crate) mod stale;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::bench::core::Cancel;
use crate::compare::{Bootstrap, CompareError, Comparison, Document, compare_pooled};

pub(crate) use initramfs::Inputs;
pub(crate) use qemu::{Accel, BootError, Guest, Timeouts};
pub(crate) use result::{BootRecord, KernelsResult, MeasuredPair};

/// One measurement the guest runs: `pipespeed ARGS --json FILE`, or
/// the kernel's pipe_bench.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Measurement {
    /// Its name: a word of letters, digits and `-`, unique in the plan.
    pub name: String,
    /// The arguments after `pipespeed` (after `pipe_bench` for
    /// [`Program::PipeBench`]).
    pub args: Vec<String>,
    /// What runs them.
    pub program: Program,
}

/// The program a [`Measurement`] runs in the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Program {
    /// pipespeed, whose `--json` result is compared.
    Pipespeed,
    /// The kernel's pipe_bench (`--pipe-bench FILE`), run `runs` times
    /// a boot, its output parsed
    /// ([`crate::bench::contend::pipe_bench::result_of`]).
    PipeBench {
        /// Runs of it each boot: each one run of every cell.
        runs: usize,
    },
}

impl Measurement {
    /// The command as the tables name it: `contend --sweep ...` (a
    /// pipespeed command), `pipe_bench -d 1`.
    pub(crate) fn command_line(&self) -> String {
        match self.program {
            Program::Pipespeed => self.args.join(" "),
            Program::PipeBench { .. } => {
                let mut words = vec!["pipe_bench".to_string()];
                words.extend(self.args.iter().cloned());
                words.join(" ")
            }
        }
    }
}

/// Which accelerator to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccelChoice {
    /// KVM if the first boot succeeds with it, else TCG.
    Auto,
    /// This one only.
    Only(Accel),
}

/// Everything a comparison of two kernels needs.
#[derive(Debug, Clone)]
pub(crate) struct KernelsConfig {
    /// Kernel A (the base) and kernel B (the one judged).
    pub kernels: [PathBuf; 2],
    /// Boots of each kernel, interleaved A, B, A, B.
    pub rounds: usize,
    /// What each boot runs.
    pub measurements: Vec<Measurement>,
    /// CPUs and memory of the guest.
    pub guest: Guest,
    /// KVM, TCG, or probed.
    pub accel: AccelChoice,
    /// Time limits of every boot.
    pub timeouts: Timeouts,
    /// More of the kernel's command line (`mitigations=off`), after
    /// [`qemu::COMMAND_LINE`].
    pub append: String,
    /// qemu-system-x86_64 (a name is looked up in `PATH`).
    pub qemu: PathBuf,
    /// virtme-ng's `vng`, to boot with it instead of pipespeed's
    /// initramfs (the guest sees the host's files).
    pub vng: Option<PathBuf>,
    /// busybox and pipespeed for the guest.
    pub inputs: Inputs,
    /// Where the initramfs is kept between runs.
    pub cache: PathBuf,
    /// Where each boot's console and results are written while it runs
    /// (a directory of its own, made and removed by the caller).
    pub work: PathBuf,
    /// Whether `work` is kept: the result names its files only then.
    pub keep: bool,
    /// How the pooled runs are compared.
    pub bootstrap: Bootstrap,
}

/// Why the kernels could not be compared.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KernelsError {
    /// A program the command needs is not installed.
    #[error("{program} not found: install the package {package}")]
    Missing {
        /// The program.
        program: String,
        /// The Debian package that has it.
        package: String,
    },
    /// A program is not usable as it is.
    #[error("{0}")]
    Tool(String),
    /// A file could not be read or written.
    #[error("{what}: {cause}")]
    Io {
        /// What was being done.
        what: String,
        /// The system's reason.
        cause: String,
    },
    /// A boot failed.
    #[error("kernel {kernel} ({path}), boot {round} ({accel}): {cause}")]
    Boot {
        /// A or B.
        kernel: char,
        /// The image.
        path: String,
        /// Which round.
        round: usize,
        /// The accelerator.
        accel: &'static str,
        /// Why.
        cause: BootError,
    },
    /// A measurement failed in the guest.
    #[error("kernel {kernel} ({path}), boot {round}: {measurement} {why}")]
    Measurement {
        /// A or B.
        kernel: char,
        /// The image.
        path: String,
        /// Which round.
        round: usize,
        /// Its name.
        measurement: String,
        /// What went wrong.
        why: String,
    },
    /// The pooled results could not be compared.
    #[error(transparent)]
    Compare(#[from] CompareError),
}

impl KernelsError {
    pub(crate) fn io(what: String, err: &std::io::Error) -> KernelsError {
        KernelsError::Io {
            what,
            cause: crate::quote::strerror(err),
        }
    }
}

/// Progress, for a display.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event<'a> {
    /// A boot is starting.
    Booting {
        /// Boots started so far, this one included.
        index: usize,
        /// Boots in all.
        total: usize,
        /// A or B.
        kernel: char,
        /// The accelerator.
        accel: Accel,
    },
    /// A line of the guest's console.
    Console(&'a str),
    /// A boot ended with its results.
    Booted {
        /// Seconds to `/init`.
        init_s: f64,
        /// Seconds in all.
        total_s: f64,
    },
    /// KVM could not boot the kernel: TCG from now on.
    FellBack {
        /// What KVM's boot said.
        why: String,
    },
}

/// Runs the whole comparison: every boot, then the pooled comparison of
/// each measurement. Each boot's results are kept as the guest wrote
/// them (`boots[i].files`, in `config.work`).
pub(crate) fn run_kernels(
    config: &KernelsConfig,
    cancel: &Cancel,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<KernelsResult, KernelsError> {
    let qemu = find_program(&config.qemu, "qemu-system-x86")?;
    // Each boot boots a copy made now: an image rebuilt during the
    // comparison (make bzImage in the tree) must not change a side.
    let mut images = Vec::new();
    for (kernel, letter) in config.kernels.iter().zip(['A', 'B']) {
        let copy = config.work.join(format!("vmlinuz-{letter}"));
        copy_input(kernel, &copy).map_err(|e| {
            KernelsError::io(format!("cannot read the kernel {}", kernel.display()), &e)
        })?;
        images.push(copy);
    }
    let vng = match &config.vng {
        Some(vng) => Some(find_program(vng, "virtme-ng (pip install virtme-ng)")?),
        None => None,
    };
    // Held while the boots run: no other run's prune removes it.
    let initramfs = match vng {
        Some(_) => None,
        None => {
            let busybox = find_program(&config.inputs.busybox, "busybox-static")?;
            if !initramfs::shared_libraries(&busybox)?.is_empty() {
                return Err(KernelsError::Tool(format!(
                    "{} is dynamically linked: the guest needs a static busybox (the package busybox-static)",
                    busybox.display()
                )));
            }
            let inputs = Inputs {
                busybox,
                ..config.inputs.clone()
            };
            Some(initramfs::build(
                &inputs,
                &config.measurements,
                &config.cache,
            )?)
        }
    };
    let mut accel = match config.accel {
        AccelChoice::Only(a) => a,
        AccelChoice::Auto if kvm_usable() => Accel::Kvm,
        AccelChoice::Auto => Accel::Tcg,
    };
    let total = config.rounds * 2;
    let mut boots = Vec::new();
    let mut docs: Vec<[Vec<Document>; 2]> = config
        .measurements
        .iter()
        .map(|_| [Vec::new(), Vec::new()])
        .collect();
    let mut index = 0;
    for round in 1..=config.rounds {
        for (side, (kernel, image)) in config.kernels.iter().zip(&images).enumerate() {
            index += 1;
            let letter = if side == 0 { 'A' } else { 'B' };
            let dir = config.work.join(format!("boot-{round}-{letter}"));
            // A new directory: never one a link put there leads to.
            fs::create_dir(&dir)
                .map_err(|e| KernelsError::io(format!("cannot create {}", dir.display()), &e))?;
            let booted = loop {
                on_event(Event::Booting {
                    index,
                    total,
                    kernel: letter,
                    accel,
                });
                // Only the first boot probes KVM: a later failure is the
                // kernel's, and one comparison never mixes KVM and TCG.
                let probing =
                    config.accel == AccelChoice::Auto && accel == Accel::Kvm && index == 1;
                let mut timeouts = config.timeouts;
                if probing {
                    timeouts.boot = timeouts.boot.min(KVM_PROBE);
                }
                let script = dir.join("run.sh");
                let launcher = match &vng {
                    Some(vng) => {
                        let text =
                            initramfs::vng_script(&config.measurements, &config.inputs, &dir);
                        write_new(&script, text.as_bytes()).map_err(|e| {
                            KernelsError::io(format!("cannot write {}", script.display()), &e)
                        })?;
                        qemu::Launcher::Vng {
                            vng,
                            script: &script,
                        }
                    }
                    None => qemu::Launcher::Qemu {
                        qemu: &qemu,
                        initramfs: initramfs.as_ref().map_or(Path::new(""), |a| a.path()),
                    },
                };
                let boot = qemu::Boot {
                    launcher,
                    kernel: image,
                    accel,
                    guest: &config.guest,
                    dir: &dir,
                    timeouts,
                    append: &config.append,
                };
                match qemu::boot(&boot, cancel, &mut |line| on_event(Event::Console(line))) {
                    Ok(booted) => break booted,
                    Err(err @ (BootError::Qemu { .. } | BootError::NoInit { .. }))
                        if probing && !cancel.is_cancelled() =>
                    {
                        on_event(Event::FellBack {
                            why: err.to_string(),
                        });
                        accel = Accel::Tcg;
                    }
                    Err(cause) => {
                        return Err(KernelsError::Boot {
                            kernel: letter,
                            path: kernel.display().to_string(),
                            round,
                            accel: accel.name(),
                            cause,
                        });
                    }
                }
            };
            on_event(Event::Booted {
                init_s: booted.init_s,
                total_s: booted.total_s,
            });
            let mut files = Vec::new();
            for (m, measurement) in config.measurements.iter().enumerate() {
                let failed = |why: String| KernelsError::Measurement {
                    kernel: letter,
                    path: kernel.display().to_string(),
                    round,
                    measurement: measurement.name.clone(),
                    why,
                };
                let Some(got) = booted.results.iter().find(|r| r.name == measurement.name) else {
                    return Err(failed("sent no result (see the console)".into()));
                };
                // pipe_bench's output is kept as it printed it.
                let extension = match measurement.program {
                    Program::Pipespeed => "json",
                    Program::PipeBench { .. } => "log",
                };
                let file = dir.join(format!("{}.{extension}", measurement.name));
                write_new(&file, got.json.as_bytes()).map_err(|e| {
                    KernelsError::io(format!("cannot write {}", file.display()), &e)
                })?;
                files.push(file.clone());
                if got.status != 0 {
                    let console = fs::read_to_string(&booted.console).unwrap_or_default();
                    return Err(failed(format!(
                        "ended with status {} in the guest: {} (its result: {}; its console: {})",
                        got.status,
                        initramfs::last_words(&console, &measurement.name),
                        file.display(),
                        booted.console.display()
                    )));
                }
                let name = file.display().to_string();
                let doc = match measurement.program {
                    Program::Pipespeed => crate::compare::load(&file, &name)?,
                    Program::PipeBench { .. } => {
                        crate::bench::contend::pipe_bench::result_of(&got.json)
                            .map(|r| Document::Contend(Box::new(r)))
                            .map_err(|e| {
                                failed(format!("printed no pipe_bench output ({name}: {e})"))
                            })?
                    }
                };
                docs[m][side].push(doc);
            }
            boots.push(BootRecord {
                round,
                kernel: letter,
                accel,
                init_s: booted.init_s,
                total_s: booted.total_s,
                dir: config.keep.then_some(dir),
                files: if config.keep { files } else { Vec::new() },
            });
        }
    }
    let mut measured = Vec::new();
    for (measurement, [a, b]) in config.measurements.iter().zip(docs) {
        let comparison: Comparison = compare_pooled(&a, "A", &b, "B", &config.bootstrap)?;
        measured.push(MeasuredPair::new(
            accel == Accel::Tcg,
            measurement.clone(),
            &a,
            &b,
            comparison,
        ));
    }
    Ok(KernelsResult::new(config, accel, boots, measured))
}

/// How long the first boot may take with KVM before it counts as unable
/// (a stock kernel under a nested hypervisor that lacks a feature can
/// stall in its decompressor; KVM boots in 1-2 s).
const KVM_PROBE: Duration = Duration::from_secs(30);

/// Whether `/dev/kvm` can be opened for use.
fn kvm_usable() -> bool {
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok()
}

/// Every file a comparison with `config` reads or runs, found as the run
/// will find it: both images, qemu (or vng), busybox (for pipespeed's
/// initramfs), the guest's pipespeed and the shared libraries it takes
/// along. A program not found is left out: the run says it is missing.
/// A result written over one of them would replace a program or an image
/// the user has (`--json bb/busybox` with `bb` first in `PATH`).
pub(crate) fn files_read(config: &KernelsConfig) -> Vec<PathBuf> {
    let mut files = config.kernels.to_vec();
    let programs = match &config.vng {
        Some(vng) => [&config.qemu, vng],
        None => [&config.qemu, &config.inputs.busybox],
    };
    files.extend(
        programs
            .into_iter()
            .filter_map(|p| find_program(p, "").ok()),
    );
    files.push(config.inputs.pipespeed.clone());
    files.extend(initramfs::shared_libraries(&config.inputs.pipespeed).unwrap_or_default());
    if let Some(pipe_bench) = &config.inputs.pipe_bench {
        files.push(pipe_bench.clone());
        files.extend(initramfs::shared_libraries(pipe_bench).unwrap_or_default());
    }
    files
}

/// Opens `path` for reading if it is a regular file. It is opened with
/// `O_NONBLOCK`, then checked: a FIFO without a writer would hold a
/// plain open(2) without end, and a device would be read without end.
/// Anything but a regular file is [`io::ErrorKind::InvalidInput`],
/// named (`not a regular file (a FIFO)`).
///
/// # References
///  - [open(2)](https://man7.org/linux/man-pages/man2/open.2.html) (`O_NONBLOCK` on a FIFO)
pub(crate) fn open_input(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    let what = match () {
        _ if kind.is_file() => return Ok(file),
        _ if kind.is_dir() => "a directory",
        _ if kind.is_fifo() => "a FIFO",
        _ if kind.is_char_device() => "a character device",
        _ if kind.is_block_device() => "a block device",
        _ if kind.is_socket() => "a socket",
        _ => "not a file",
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("not a regular file ({what})"),
    ))
}

/// Creates `path` anew (what was there removed, a link itself, not what
/// it leads to), with `O_EXCL`: a file of the work directory is never
/// written through a link someone put there.
pub(crate) fn create_new(path: &Path) -> io::Result<fs::File> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// Writes `bytes` to `path` as a new file ([`create_new`]).
fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    create_new(path)?.write_all(bytes)
}

/// Copies the regular file `from` to `to`, a new file (made with
/// `O_EXCL`: never through a link someone put there).
fn copy_input(from: &Path, to: &Path) -> io::Result<()> {
    let mut input = open_input(from)?;
    let mut output = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)?;
    io::copy(&mut input, &mut output).map(drop)
}

/// `program`, or where `PATH` has it; the package to install if nowhere.
pub(crate) fn find_program(program: &Path, package: &str) -> Result<PathBuf, KernelsError> {
    let missing = || KernelsError::Missing {
        program: program.display().to_string(),
        package: package.into(),
    };
    if program.components().count() > 1 {
        return if program.is_file() {
            Ok(program.to_path_buf())
        } else {
            Err(missing())
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    crate::sys::process::find_program(&program.to_string_lossy(), &path).ok_or_else(missing)
}
