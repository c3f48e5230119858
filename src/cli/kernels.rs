//! `pipespeed kernels A B`: boot two kernels in turn, measure in each,
//! pool and compare; parse, call the library, print.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::bench::core::{Cancel, EXIT_UNSUPPORTED};
use crate::compare::Bootstrap;
use crate::kernels::{
    Accel, AccelChoice, Event, Guest, Inputs, KernelsConfig, KernelsError, KernelsResult, Timeouts,
    files_read, open_input, run_kernels, stale,
};
use crate::sys::process::catch_interrupts;
use crate::sys::replace;
use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::cli::UsageError;

mod measure;

use crate::cli::args::{count, seconds, size};
use measure::{Measure, measurements};

/// `pipespeed kernels`.
#[derive(Debug, Args)]
#[command(
    override_usage = "pipespeed kernels [OPTIONS] <VMLINUZ_A> <VMLINUZ_B> [-- <PIPESPEED_ARGS>...]",
    after_help = "Boots A, B, A, B, ... (--rounds of each) with qemu-system-x86_64 and an \
                  initramfs holding busybox (static) and pipespeed, runs the measurement in \
                  each boot, pools each kernel's runs over its boots and prints the table of \
                  `compare --lkml` per measurement. KVM where it boots the kernel (the first \
                  boot probes it), qemu's emulator (TCG) otherwise: then every figure and \
                  table is marked emulated, tens of times slower and noisier than the \
                  machine. After --, the arguments of one pipespeed command to run instead \
                  (`-- contend --writers 5 --readers 5`; --json is added), or with \
                  --pipe-bench FILE, pipe_bench's (`-- -w 2 -r 5 -d 1`). See \
                  docs/kernels.md.\n\nExit status: 0 compared, 1 a boot or a measurement \
                  failed (named, with the console's last line; a stalled worker's dump is in \
                  its result), 2 bad usage, 3 qemu or busybox not installed (the package is \
                  named), 129/130/143 stopped by SIGHUP/SIGINT/SIGTERM (qemu killed)."
)]
pub struct KernelsArgs {
    /// The base kernel image (a bzImage: arch/x86/boot/bzImage,
    /// /boot/vmlinuz-*).
    #[arg(value_name = "VMLINUZ_A")]
    pub a: PathBuf,
    /// The kernel judged against it.
    #[arg(value_name = "VMLINUZ_B")]
    pub b: PathBuf,
    /// A pipespeed command to run in each boot instead of --measure's.
    #[arg(last = true, value_name = "PIPESPEED_ARGS")]
    pub command: Vec<String>,
    /// Boots of each kernel, interleaved A, B, A, B [range: 1-100].
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = count(1, 100))]
    pub rounds: usize,
    /// What each boot measures: pipe-bench (contend's writers x readers
    /// grid, without and with memory pressure, as pipe_bench), contend
    /// (the grid alone), ladder, latency or ipc.
    #[arg(long, value_enum, default_value_t = Measure::PipeBench)]
    pub measure: Measure,
    /// Seconds of each contend run in the guest [range: 0.01-86400].
    #[arg(long, value_name = "SECS", default_value = "1", value_parser = seconds)]
    pub duration: f64,
    /// Measured runs per row in each boot [range: 1-1000]; the runs of
    /// all boots of a kernel are pooled.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = count(1, 1000))]
    pub runs: usize,
    /// The guest's measurements' watchdog.
    #[command(flatten)]
    pub stall: crate::cli::args::StallArgs,
    /// KVM or qemu's emulator (auto: KVM if /dev/kvm opens and boots the
    /// first kernel, TCG otherwise).
    #[arg(long, value_enum, default_value_t = AccelArg::Auto)]
    pub accel: AccelArg,
    /// The guest's CPUs [range: 1-64].
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = count(1, 64))]
    pub cpus: usize,
    /// The guest's memory, as M and G [range: 256M-64G].
    #[arg(long, value_name = "SIZE", default_value = "2G", value_parser = guest_memory)]
    pub memory: u64,
    /// More of the guest kernel's command line, after pipespeed's
    /// `console=ttyS0 panic=-1 loglevel=4` (`mitigations=off`).
    #[arg(long, value_name = "ARGS", default_value = "")]
    pub append: String,
    /// Seconds a boot may take to reach /init [range: 0.01-86400].
    #[arg(long = "boot-timeout", value_name = "SECS", default_value = "120", value_parser = seconds)]
    pub boot_timeout: f64,
    /// Seconds the measurements of a boot may take after /init [range:
    /// 0.01-86400].
    #[arg(long = "run-timeout", value_name = "SECS", default_value = "3600", value_parser = seconds)]
    pub run_timeout: f64,
    /// Write both kernels' pooled runs, every boot and the tables as JSON
    /// to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Keep every boot's results, console and qemu messages in DIR (made
    /// if missing; it must be empty).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run this build of the kernel's pipe_bench in each boot instead,
    /// --runs times, with the arguments after -- (none: its sweep); its
    /// cells are pooled over the boots (a dynamically linked one takes its
    /// libraries along).
    #[arg(long = "pipe-bench", value_name = "FILE")]
    pub pipe_bench: Option<PathBuf>,
    /// The pipespeed binary the guest runs [default: this one; a
    /// dynamically linked one takes its libraries along].
    #[arg(long = "guest-pipespeed", value_name = "FILE")]
    pub guest_pipespeed: Option<PathBuf>,
    /// The static busybox whose shell is the guest's /init.
    #[arg(long, value_name = "FILE", default_value = "busybox")]
    pub busybox: PathBuf,
    /// qemu for x86-64.
    #[arg(long, value_name = "FILE", default_value = "qemu-system-x86_64")]
    pub qemu: PathBuf,
    /// Boot with virtme-ng's vng instead (the guest sees this machine's
    /// files; the kernel's modules must be installed for its 9p root).
    #[arg(long)]
    pub vng: bool,
}

/// `--accel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AccelArg {
    /// KVM if it boots the kernel, else TCG.
    Auto,
    /// KVM only.
    Kvm,
    /// qemu's emulator only.
    Tcg,
}

const MIB: u64 = 1 << 20;

fn guest_memory(text: &str) -> Result<u64, String> {
    match size(text)? {
        n if (256 * MIB..=64 << 30).contains(&n) => Ok(n / MIB),
        _ => Err(format!("'{text}' is not a guest's memory from 256M to 64G")),
    }
}

/// Where the initramfs is kept: `$XDG_CACHE_HOME/pipespeed`, else
/// `$HOME/.cache/pipespeed`, else the temporary directory's.
fn cache_dir() -> PathBuf {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    match (env("XDG_CACHE_HOME"), env("HOME")) {
        (Some(cache), _) => cache.join("pipespeed"),
        (None, Some(home)) => home.join(".cache/pipespeed"),
        (None, None) => std::env::temp_dir().join("pipespeed-cache"),
    }
}

/// The work directory: `--out`, which must be empty or absent, or a new
/// one in the temporary directory, removed when the command ends.
struct Work {
    /// Its absolute path (the guest of `--vng` is told it).
    path: PathBuf,
    /// The temporary directory, removed when dropped.
    temporary: Option<stale::Owned>,
}

impl Work {
    fn kept(&self) -> bool {
        self.temporary.is_none()
    }
}

/// The start of a work directory's name (`pipespeed-kernels-` and
/// random letters and digits, `stale::make`): the next run removes it if
/// its run died without removing it (SIGKILL).
const WORK_PREFIX: &str = "pipespeed-kernels-";

fn work_dir(out: Option<&Path>, vng: bool) -> anyhow::Result<Work> {
    stale::remove(&std::env::temp_dir(), WORK_PREFIX);
    let Some(dir) = out else {
        let temporary = stale::make(&std::env::temp_dir(), WORK_PREFIX)
            .context("cannot create a work directory in the temporary directory")?;
        return Ok(Work {
            path: temporary.path().to_path_buf(),
            temporary: Some(temporary),
        });
    };
    // Made without following a link or using a directory another user
    // planted in /tmp (as the result files are written).
    let refused = |e: std::io::Error| {
        UsageError(format!(
            "--out {}: {}",
            dir.display(),
            crate::cli::strerror(&e)
        ))
    };
    let path = replace::make_dir_all(dir).map_err(refused)?;
    let mut entries = std::fs::read_dir(&path).map_err(refused)?;
    if entries.next().is_some() {
        return Err(UsageError(format!(
            "--out {}: not empty (its files would be replaced)",
            dir.display()
        ))
        .into());
    }
    // vng's --rwdir takes GUEST=HOST.
    if vng && path.to_string_lossy().contains('=') {
        return Err(UsageError(format!(
            "--out {}: vng cannot share a directory whose path has '='",
            path.display()
        ))
        .into());
    }
    Ok(Work {
        path,
        temporary: None,
    })
}

pub(super) fn run(args: KernelsArgs) -> anyhow::Result<ExitCode> {
    let measurements = measurements(&args)?;
    let pipespeed = match &args.guest_pipespeed {
        Some(p) => p.clone(),
        None => {
            std::env::current_exe().context("cannot find the pipespeed binary for the guest")?
        }
    };
    let mut config = KernelsConfig {
        kernels: [args.a.clone(), args.b.clone()],
        rounds: args.rounds,
        measurements,
        guest: Guest {
            cpus: args.cpus,
            memory_mib: args.memory,
        },
        accel: match args.accel {
            AccelArg::Auto => AccelChoice::Auto,
            AccelArg::Kvm => AccelChoice::Only(Accel::Kvm),
            AccelArg::Tcg => AccelChoice::Only(Accel::Tcg),
        },
        timeouts: Timeouts {
            boot: Duration::from_secs_f64(args.boot_timeout),
            run: Duration::from_secs_f64(args.run_timeout),
        },
        append: args.append.clone(),
        qemu: args.qemu.clone(),
        vng: args.vng.then(|| PathBuf::from("vng")),
        inputs: Inputs {
            busybox: args.busybox.clone(),
            pipespeed,
            pipe_bench: args.pipe_bench.clone(),
        },
        cache: cache_dir(),
        // Made below, once the inputs and outputs are checked.
        work: PathBuf::new(),
        keep: false,
        bootstrap: Bootstrap::default(),
    };
    check_inputs(&args, &config)?;
    crate::cli::output::check_outputs([&args.json])?;
    catch_interrupts()?;
    let work = work_dir(args.out.as_deref(), args.vng)?;
    config.work = work.path.clone();
    config.keep = work.kept();
    let bar = crate::cli::progress::steps(args.rounds * 2);
    // What must be read whether or not the bar is drawn.
    let say = |line: String| {
        if bar.is_hidden() {
            eprintln!("{line}");
        } else {
            bar.println(line);
        }
    };
    let mut show = |event: Event<'_>| match event {
        Event::Booting {
            index,
            total,
            kernel,
            accel,
        } => {
            bar.set_position(index as u64 - 1);
            bar.set_message(format!(
                "boot {index}/{total}: kernel {kernel} ({})",
                accel.name()
            ));
        }
        Event::Console(line) => {
            if let Some(said) = line.strip_prefix("pipespeed-guest: ") {
                bar.set_message(said.to_string());
            }
        }
        Event::Booted { init_s, total_s } => {
            bar.inc(1);
            say(format!(
                "pipespeed: boot {}/{}: /init after {init_s:.1} s, done after {total_s:.1} s",
                bar.position(),
                bar.length().unwrap_or_default()
            ));
        }
        Event::FellBack { why } => {
            say(format!(
                "pipespeed: KVM cannot boot this kernel here ({why}): qemu's emulator (TCG) from now on, every figure emulated"
            ));
        }
    };
    let outcome = run_kernels(&config, &Cancel::on_signals(), &mut show);
    bar.finish_and_clear();
    // Stopped by a signal, whatever it broke (a boot, busybox cpio) or
    // after the last boot: qemu is killed, the work directory goes with
    // `work`, and no table is printed.
    if let Some(signal) = crate::sys::process::interrupted() {
        let kept = match work.kept() {
            false => "the work directory removed".to_string(),
            true => format!("the boots' files kept in {}", work.path.display()),
        };
        eprintln!(
            "pipespeed: kernels: interrupted by {}: qemu killed, no table printed, {kept}",
            crate::sys::process::signal_name(signal)
        );
        return Ok(crate::cli::signal_status(signal));
    }
    let result = match outcome {
        Ok(result) => result,
        Err(err @ KernelsError::Missing { .. }) => {
            eprintln!("pipespeed: kernels: {err}");
            return Ok(ExitCode::from(EXIT_UNSUPPORTED as u8));
        }
        Err(err) => {
            if work.kept() {
                eprintln!(
                    "pipespeed: every boot's files are in {}",
                    work.path.display()
                );
            }
            return Err(anyhow::Error::new(err).context("kernels"));
        }
    };
    print(&result, &args.json)?;
    crate::cli::output::write_file(&args.json, || {
        let mut bytes = serde_json::to_vec_pretty(&result)?;
        bytes.push(b'\n');
        Ok(bytes)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Refuses, before anything is made or run, an input that is not a
/// regular file (a FIFO would hold its open(2), a device be read without
/// end), and a `--json` that names a file the command reads or runs, found
/// as the run will find it (busybox and qemu in `PATH`, this binary as the
/// guest's pipespeed, however spelt: a hard link): the result would
/// replace it. A file that cannot be opened is left to the run to say.
fn check_inputs(args: &KernelsArgs, config: &KernelsConfig) -> anyhow::Result<()> {
    let named = [&args.a, &args.b, &config.inputs.pipespeed]
        .into_iter()
        .chain(&args.pipe_bench)
        .chain(Some(&args.busybox).filter(|p| p.components().count() > 1));
    for path in named {
        if let Err(e) = open_input(path)
            && e.kind() == std::io::ErrorKind::InvalidInput
        {
            return Err(UsageError(format!("{}: {e}", path.display())).into());
        }
    }
    let read = files_read(config);
    let read: Vec<&Path> = read.iter().map(PathBuf::as_path).collect();
    crate::cli::output::check_not_inputs(&read, [&args.json])
}

/// The tables, under a line that says how the guests ran.
fn print(result: &KernelsResult, json: &Option<PathBuf>) -> anyhow::Result<()> {
    let mut text = String::new();
    let name = |i: usize| {
        let k = &result.kernels[i];
        let release = k.release.as_deref().unwrap_or("release not recorded");
        format!("{} = {} ({release})", k.label, k.path.display())
    };
    text += &format!("base: {}\npatched: {}\n", name(0), name(1));
    if result.emulated {
        text += "EMULATED: qemu's TCG ran every guest: the figures are tens of times slower and \
                 noisier than this machine's; use them to test the harness, not to judge a patch.\n";
    }
    for m in &result.measurements {
        text += &format!(
            "\n== {}{}\n",
            m.measurement.command_line(),
            if result.emulated { " (emulated)" } else { "" }
        );
        text += &m.lkml;
    }
    crate::cli::output::print_table(text.as_bytes(), [json])
}
