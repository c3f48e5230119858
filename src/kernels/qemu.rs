//! One boot: qemu started on a kernel and the initramfs, its console
//! (the first serial port) and the results (the second) each written to a
//! file, watched until the guest powers off, panics, or runs out of time.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub(crate) use super::console::GuestResult;
use super::console::{Console, clean, read_results};
use super::initramfs::{ALL_DONE, INIT_REACHED};
use crate::bench::core::Cancel;
use crate::child::Group;

/// How the guest's CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Accel {
    /// Hardware virtualization: the guest's figures are the machine's,
    /// give or take the hypervisor.
    Kvm,
    /// qemu's emulator: every figure is emulated, many times slower and
    /// far noisier than the machine.
    Tcg,
}

impl Accel {
    /// Its name, as qemu's `-accel` takes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }

    fn args(self) -> [&'static str; 4] {
        match self {
            Accel::Kvm => ["-accel", "kvm", "-cpu", "host"],
            Accel::Tcg => ["-accel", "tcg,thread=multi", "-cpu", "max"],
        }
    }
}

/// The virtual machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Guest {
    /// Its CPUs.
    pub cpus: usize,
    /// Its memory, in MiB.
    pub memory_mib: u64,
}

/// How long a boot may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Timeouts {
    /// From qemu's start to `/init`.
    pub boot: Duration,
    /// From `/init` to the guest's power-off.
    pub run: Duration,
}

/// What starts the guest.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Launcher<'a> {
    /// qemu-system-x86_64 with pipespeed's initramfs: the guest's root is
    /// that archive, the console the first serial port, the results the
    /// second.
    Qemu {
        /// The program.
        qemu: &'a Path,
        /// The initramfs.
        initramfs: &'a Path,
    },
    /// virtme-ng: the guest sees the host's files read-only and the boot's
    /// directory read-write, and runs `script` there; its console is
    /// vng's output.
    Vng {
        /// The program.
        vng: &'a Path,
        /// The script the guest runs.
        script: &'a Path,
    },
}

/// One boot to make.
#[derive(Debug, Clone)]
pub(crate) struct Boot<'a> {
    /// How the guest is started.
    pub launcher: Launcher<'a>,
    /// The kernel image.
    pub kernel: &'a Path,
    /// KVM or TCG.
    pub accel: Accel,
    /// CPUs and memory.
    pub guest: &'a Guest,
    /// Where the console, the results and qemu's messages are written.
    pub dir: &'a Path,
    /// Its time limits.
    pub timeouts: Timeouts,
    /// More of the kernel's command line, after pipespeed's.
    pub append: &'a str,
}

/// What a boot gave.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Booted {
    /// Seconds from qemu's start to `/init`.
    pub init_s: f64,
    /// Seconds from qemu's start to its end.
    pub total_s: f64,
    /// Every result the guest sent, in order.
    pub results: Vec<GuestResult>,
    /// The console's text.
    pub console: PathBuf,
}

/// Why a boot gave no results. Every message says what was last seen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum BootError {
    /// qemu could not be started (`cannot start PROGRAM: why`).
    #[error("{0}")]
    Start(String),
    /// qemu ended before the guest reached `/init`.
    #[error("qemu ended ({status}) before /init: {said}")]
    Qemu {
        /// How it ended.
        status: String,
        /// Its last message, or the console's last line.
        said: String,
    },
    /// The kernel panicked.
    #[error("the kernel panicked {when}: {line}")]
    Panic {
        /// `before /init` or `after /init`.
        when: &'static str,
        /// The console's panic line.
        line: String,
    },
    /// No `/init` within the boot timeout.
    #[error(
        "the guest did not reach /init within {secs} s (qemu killed); the console's last line: {last}"
    )]
    NoInit {
        /// The timeout.
        secs: f64,
        /// The console's last line.
        last: String,
    },
    /// The measurements did not end within the run timeout.
    #[error(
        "the measurements did not end within {secs} s of /init (qemu killed); the console's last line: {last}"
    )]
    RunTimeout {
        /// The timeout.
        secs: f64,
        /// The console's last line.
        last: String,
    },
    /// The guest powered off or rebooted without finishing.
    #[error(
        "the guest stopped ({status}) before its measurements ended; the console's last line: {last}"
    )]
    Stopped {
        /// How qemu ended.
        status: String,
        /// The console's last line.
        last: String,
    },
    /// SIGINT, SIGTERM or SIGHUP: qemu was killed.
    #[error("interrupted")]
    Interrupted,
    /// A file of the boot could not be read.
    #[error("cannot read {file}: {cause}")]
    Read {
        /// The file.
        file: String,
        /// The system's reason.
        cause: String,
    },
}

impl BootError {
    /// [`BootError::Read`] of `file`, for `err`.
    fn read(file: &Path, err: &std::io::Error) -> BootError {
        BootError::Read {
            file: file.display().to_string(),
            cause: crate::quote::strerror(err),
        }
    }
}

/// The kernel's command line: the console on the first serial port, few
/// messages, and a panic that reboots at once (which ends qemu, started
/// with `-no-reboot`).
pub(crate) const COMMAND_LINE: &str = "console=ttyS0 panic=-1 loglevel=4";

/// How often the console is read.
const POLL: Duration = Duration::from_millis(100);
/// How long a guest that said it is done may take to power off.
const POWER_OFF: Duration = Duration::from_secs(30);

/// Boots `boot.kernel` and waits for its results.
pub(crate) fn boot(
    boot: &Boot<'_>,
    cancel: &Cancel,
    on_line: &mut dyn FnMut(&str),
) -> Result<Booted, BootError> {
    let console = boot.dir.join("console.log");
    let data = boot.dir.join("results.log");
    let messages = boot.dir.join("qemu.log");
    for f in [&console, &data] {
        let _ = fs::remove_file(f);
    }
    let create = |path: &Path| super::create_new(path).map_err(|e| BootError::read(path, &e));
    let log = create(&messages)?;
    let (program, mut cmd) = match boot.launcher {
        Launcher::Qemu { qemu, initramfs } => {
            let mut cmd = Command::new(qemu);
            cmd.args(boot.accel.args())
                .args(["-smp", &boot.guest.cpus.to_string()])
                .args(["-m", &format!("{}M", boot.guest.memory_mib)])
                .arg("-kernel")
                .arg(boot.kernel)
                .arg("-initrd")
                .arg(initramfs)
                .arg("-append")
                .arg(format!("{COMMAND_LINE} {}", boot.append).trim_end())
                .args([
                    "-display",
                    "none",
                    "-no-reboot",
                    "-nodefaults",
                    "-net",
                    "none",
                ])
                .args(["-monitor", "none"])
                .arg("-serial")
                .arg(format!("file:{}", console.display()))
                .arg("-serial")
                .arg(format!("file:{}", data.display()))
                .stdout(Stdio::null());
            (qemu, cmd)
        }
        Launcher::Vng { vng, script } => {
            let mut cmd = Command::new(vng);
            // --verbose: the guest's console, kernel messages and the
            // script's output, on vng's standard output.
            cmd.args(["--verbose", "--run"])
                .arg(boot.kernel)
                .args(["--user", "root", "--cpus", &boot.guest.cpus.to_string()])
                .args(["--memory", &format!("{}M", boot.guest.memory_mib)])
                .arg("--rwdir")
                .arg(boot.dir)
                .args(["--append", "panic=-1"]);
            if !boot.append.is_empty() {
                cmd.args(["--append", boot.append]);
            }
            if boot.accel == Accel::Tcg {
                cmd.arg("--disable-kvm");
            }
            // vng writes the console to stderr: both streams to one file.
            let file = create(&console)?;
            let both = file
                .try_clone()
                .map_err(|e| BootError::read(&console, &e))?;
            cmd.arg("--exec")
                .arg(format!(
                    "sh {}",
                    super::initramfs::sh_quote(&script.display().to_string())
                ))
                .stdout(file)
                .stderr(both);
            (vng, cmd)
        }
    };
    cmd.stdin(Stdio::null());
    if let Launcher::Qemu { .. } = boot.launcher {
        cmd.stderr(log);
    }
    let start = Instant::now();
    // A group of its own, killed whole on every way out (vng's qemu and
    // helpers too) and by the signal handler at once (`Group`).
    let mut group = Group::new();
    // And killed by the kernel if we die without a word (SIGKILL): this
    // runs on the thread that runs every boot.
    crate::sys::process::die_with_parent_on_exec(&mut cmd);
    let qemu = group
        .spawn(&mut cmd, program.display().to_string())
        .map_err(|e| BootError::Start(e.to_string()))?;
    let mut watch = Console::new(console.clone());
    let mut init_at: Option<Duration> = None;
    let mut done_at: Option<Instant> = None;
    loop {
        // Ended, not yet reaped: `Group::wait` reaps it.
        let status = (group.running() == 0)
            .then(|| group.wait(qemu).ok())
            .flatten();
        for line in watch.new_lines() {
            if init_at.is_none() && line.contains(INIT_REACHED) {
                init_at = Some(start.elapsed());
            }
            if line.contains(ALL_DONE) {
                done_at = Some(Instant::now());
            }
            if line.contains("Kernel panic") {
                let when = if init_at.is_some() {
                    "after /init"
                } else {
                    "before /init"
                };
                group.kill_all();
                return Err(BootError::Panic {
                    when,
                    line: clean(&line),
                });
            }
            on_line(&line);
        }
        if let Some(status) = status {
            let total_s = start.elapsed().as_secs_f64();
            // Done is what /init wrote last on the results' channel, which
            // nothing else writes: the console's line may be broken by
            // kernel messages.
            let results = read_results(&data).map_err(|e| BootError::read(&data, &e))?;
            return match (init_at, results.done) {
                (Some(init), true) => Ok(Booted {
                    init_s: init.as_secs_f64(),
                    total_s,
                    results: results.results,
                    console,
                }),
                (Some(_), false) => Err(BootError::Stopped {
                    status: status.to_string(),
                    last: watch.last(),
                }),
                (None, _) => Err(BootError::Qemu {
                    status: status.to_string(),
                    said: match crate::child::last_message(
                        &fs::read_to_string(&messages).unwrap_or_default(),
                    ) {
                        "" => watch.last(),
                        said => said.to_string(),
                    },
                }),
            };
        }
        if cancel.is_cancelled() {
            group.kill_all();
            return Err(BootError::Interrupted);
        }
        let now = start.elapsed();
        match (init_at, done_at) {
            (None, _) if now > boot.timeouts.boot => {
                group.kill_all();
                return Err(BootError::NoInit {
                    secs: boot.timeouts.boot.as_secs_f64(),
                    last: watch.last(),
                });
            }
            (Some(init), None) if now > init + boot.timeouts.run => {
                group.kill_all();
                return Err(BootError::RunTimeout {
                    secs: boot.timeouts.run.as_secs_f64(),
                    last: watch.last(),
                });
            }
            // Said it was done and never powered off: its results are in.
            (Some(init), Some(done)) if done.elapsed() > POWER_OFF => {
                group.kill_all();
                let results = read_results(&data).map_err(|e| BootError::read(&data, &e))?;
                if !results.done {
                    return Err(BootError::Stopped {
                        status: "killed: it did not power off".into(),
                        last: watch.last(),
                    });
                }
                return Ok(Booted {
                    init_s: init.as_secs_f64(),
                    total_s: start.elapsed().as_secs_f64(),
                    results: results.results,
                    console,
                });
            }
            _ => {}
        }
        std::thread::sleep(POLL);
    }
}
