//! The guest's initramfs: busybox (a static one: its shell is `/init`),
//! the pipespeed binary and, given one, the kernel's pipe_bench (static,
//! or with the shared libraries `ldd` names), and `/init`, a shell script that mounts what the measurements
//! need, runs each one, writes each result to the second serial port and
//! powers off. Built with `busybox cpio`, cached by its contents.

use std::fmt::Write as _;
use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use super::{KernelsError, Measurement, Program};

/// What the console says once `/init` runs, before anything else.
pub(crate) const INIT_REACHED: &str = "pipespeed-guest: /init reached";
/// What the console says when every measurement has ended.
pub(crate) const ALL_DONE: &str = "pipespeed-guest: all measurements ended";
/// The second serial port's framing of one result: `BEGIN NAME STATUS`,
/// the JSON, `END NAME`.
pub(crate) const BEGIN: &str = "pipespeed-guest-result-begin";
/// See [`BEGIN`].
pub(crate) const END: &str = "pipespeed-guest-result-end";
/// The results' channel's last line: every measurement has ended.
pub(crate) const DONE: &str = "pipespeed-guest-done";

/// Where the binaries come from.
#[derive(Debug, Clone)]
pub(crate) struct Inputs {
    /// busybox, statically linked.
    pub busybox: PathBuf,
    /// The pipespeed binary the guest runs.
    pub pipespeed: PathBuf,
    /// The kernel's pipe_bench, for [`Program::PipeBench`] measurements
    /// (`/bin/pipe_bench` in the guest).
    pub pipe_bench: Option<PathBuf>,
}

/// Where the guest finds pipe_bench.
const GUEST_PIPE_BENCH: &str = "/bin/pipe_bench";

/// `/init`: mounts, then each measurement in turn, its JSON framed on
/// `/dev/ttyS1`, then power off. A measurement that fails still sends
/// what it wrote (a partial result names its failed rows).
pub(crate) fn init_script(measurements: &[Measurement]) -> String {
    let mut s = String::from(
        "#!/bin/busybox sh\n\
         # pipespeed kernels: the guest's /init (generated).\n\
         /bin/busybox mount -t devtmpfs dev /dev\n\
         exec 0</dev/console 1>/dev/console 2>&1\n\
         /bin/busybox --install -s /bin\n\
         mount -t proc proc /proc\n\
         mount -t sysfs sys /sys\n\
         mount -t tmpfs tmp /tmp\n",
    );
    let _ = writeln!(s, "echo \"{INIT_REACHED} $(cat /proc/uptime)\"");
    s.push_str("stty -F /dev/ttyS1 raw -echo\nexport PATH=/bin HOME=/tmp\n");
    s += &runs(
        measurements,
        ["/bin/pipespeed", GUEST_PIPE_BENCH],
        "/tmp",
        "/dev/ttyS1",
    );
    s.push_str("sync\npoweroff -f\n");
    s
}

/// The script virtme-ng runs in a guest that sees the host's files: the
/// host's `pipespeed`, each result written to `dir` and framed in
/// `dir/results.log`.
pub(crate) fn vng_script(measurements: &[Measurement], inputs: &Inputs, dir: &Path) -> String {
    let dir_text = dir.display().to_string();
    let mut s = format!(
        "#!/bin/sh\n# pipespeed kernels --vng: run in the guest (generated).\n\
         echo \"{INIT_REACHED} $(cat /proc/uptime)\"\n"
    );
    let results = dir.join("results.log").display().to_string();
    let program = |p: &Path| sh_quote(&p.display().to_string());
    let pipe_bench = inputs.pipe_bench.as_deref().map(program);
    s += &runs(
        measurements,
        [
            &program(&inputs.pipespeed),
            pipe_bench.as_deref().unwrap_or(GUEST_PIPE_BENCH),
        ],
        &sh_quote(&dir_text),
        &sh_quote(&results),
    );
    s
}

/// Each measurement: `PIPESPEED ARGS --json DIR/NAME.json`, or
/// `PIPE_BENCH ARGS` its runs times into `DIR/NAME.json` (stdout and
/// stderr, after `#` lines of the guest's facts), its status and its
/// result framed into `results`, then the last line.
fn runs(
    measurements: &[Measurement],
    [pipespeed, pipe_bench]: [&str; 2],
    dir: &str,
    results: &str,
) -> String {
    let mut s = String::new();
    for m in measurements {
        let args: Vec<String> = m.args.iter().map(|a| sh_quote(a)).collect();
        let name = &m.name;
        let run = match m.program {
            Program::Pipespeed => format!(
                "{pipespeed} {} --json {dir}/{name}.json\nst=$?\n",
                args.join(" ")
            ),
            // The status of the last run that failed; every run's output.
            Program::PipeBench { runs } => format!(
                "st=0\n{{ {FACTS}\n  i=0; while [ $i -lt {runs} ]; do i=$((i+1)); {pipe_bench} {} || st=$?; done\n}} >{dir}/{name}.json 2>&1\n",
                args.join(" ")
            ),
        };
        let _ = write!(
            s,
            "echo 'pipespeed-guest: running {name}'\n\
             {run}\
             echo \"pipespeed-guest: {name} ended with status $st\"\n\
             {{ echo \"{BEGIN} {name} $st\"; cat {dir}/{name}.json 2>/dev/null; echo; echo '{END} {name}'; }} >>{results}\n",
        );
    }
    let _ = writeln!(s, "echo '{DONE}' >>{results}\necho '{ALL_DONE}'");
    s
}

/// The guest's facts, as `# key: value` lines before pipe_bench's
/// output (which passes over `#` lines), read by
/// [`crate::bench::contend::pipe_bench::system_of`].
const FACTS: &str = "echo \"# virtualization: qemu\"; echo \"# kernel: $(uname -r)\"; \
    echo \"# kernel_version: $(uname -v)\"; \
    echo \"# arch: $(uname -m)\"; echo \"# cpus: $(nproc)\"; \
    echo \"# pipe_max_size: $(cat /proc/sys/fs/pipe-max-size)\"; \
    echo \"# cpu_model: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)\"";

/// What measurement `name` printed last before it ended, on the console
/// `text` (the line before `/init`'s "ended with status").
pub(crate) fn last_words(text: &str, name: &str) -> String {
    let marker = format!("pipespeed-guest: {name} ended with status");
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let end = lines
        .iter()
        .position(|l| l.starts_with(&marker))
        .unwrap_or(lines.len());
    lines[..end]
        .iter()
        .rev()
        .find(|l| !l.is_empty())
        .map_or_else(|| "(it printed nothing)".to_string(), |l| l.to_string())
}

/// `word` as one word of a POSIX shell's command line.
pub(super) fn sh_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.,/=:+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// An archive of the cache that a run boots from: locked (flock(2),
/// shared) while the run lives, so that another run's [`prune`] leaves
/// it (qemu opens it again at each boot).
#[derive(Debug)]
pub(crate) struct Archive {
    path: PathBuf,
    _lock: fs::File,
}

impl Archive {
    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// The initramfs for `measurements` in `cache` (made if it is not there
/// yet), locked while the [`Archive`] lives.
pub(crate) fn build(
    inputs: &Inputs,
    measurements: &[Measurement],
    cache: &Path,
) -> Result<Archive, KernelsError> {
    let script = init_script(measurements);
    let mut libs = shared_libraries(&inputs.pipespeed)?;
    if let Some(pipe_bench) = &inputs.pipe_bench {
        for lib in shared_libraries(pipe_bench)? {
            if !libs.contains(&lib) {
                libs.push(lib);
            }
        }
    }
    let mut hasher = DefaultHasher::new();
    script.hash(&mut hasher);
    for file in [&inputs.busybox, &inputs.pipespeed]
        .into_iter()
        .chain(&inputs.pipe_bench)
        .chain(&libs)
    {
        file.hash(&mut hasher);
        read(file)?.hash(&mut hasher);
    }
    let path = cache.join(format!("initramfs-{:016x}.cpio", hasher.finish()));
    // What a run killed while it packed left (41 MB for a debug build).
    super::stale::remove(cache, STAGE);
    if let Some(lock) = hold(&path) {
        // Used now: the last the cache would drop.
        let _ = lock.set_modified(SystemTime::now());
        prune(cache, &path);
        return Ok(Archive { path, _lock: lock });
    }
    let made = |e: io::Error| KernelsError::io(format!("cannot create {}", cache.display()), &e);
    fs::create_dir_all(cache).map_err(made)?;
    // Removed when dropped, whatever happens.
    let stage = super::stale::make(cache, STAGE).map_err(made)?;
    let lock = pack(stage.path(), inputs, &libs, &script, &path)?;
    prune(cache, &path);
    Ok(Archive { path, _lock: lock })
}

/// The archive `path`, opened and locked (shared), if it is there; `None`
/// if it is not, or if a [`prune`] removed it while we waited for the
/// lock. Where no lock can be taken (`ENOLCK`) it is used unlocked, as
/// [`prune`] then removes it.
fn hold(path: &Path) -> Option<fs::File> {
    let file = fs::File::open(path).ok()?;
    let _ = rustix::fs::flock(&file, rustix::fs::FlockOperation::LockShared);
    same_file(&file, path).then_some(file)
}

/// Whether `path` names the file open as `file`.
fn same_file(file: &fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// How many initramfs archives the cache keeps: the most recently used
/// (by modification time, set at each use), `keep` among them; older
/// ones are removed, but for those a live run boots from (locked). One holds the guest's pipespeed: about 40 MB for a
/// debug build, a few MB for a static release one.
pub(crate) const CACHE_KEEP: usize = 4;

/// The start of the name of a run's staging directory, where its
/// archive is packed (`stale::make`).
const STAGE: &str = "stage-";

/// Removes the archives of `cache` but the [`CACHE_KEEP`] most recently
/// used, `keep` always among them, and those a live run holds.
fn prune(cache: &Path, keep: &Path) {
    let Ok(entries) = fs::read_dir(cache) else {
        return;
    };
    let mut archives: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with("initramfs-") && n.ends_with(".cpio"))
        })
        .filter(|e| e.path() != keep)
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    // The newest first.
    archives.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    for (_, old) in archives.into_iter().skip(CACHE_KEEP - 1) {
        // Held until it is gone: a run waiting to boot from it then
        // finds it gone and builds it anew.
        let Ok(file) = fs::File::open(&old) else {
            continue;
        };
        // Where no lock can be taken (ENOLCK), by age alone.
        let held = rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive)
            == Err(rustix::io::Errno::WOULDBLOCK);
        if !held && same_file(&file, &old) {
            let _ = fs::remove_file(old);
        }
    }
}

fn read(file: &Path) -> Result<Vec<u8>, KernelsError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    super::open_input(file)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| KernelsError::io(format!("cannot read {}", file.display()), &e))?;
    Ok(bytes)
}

/// Lays the tree out in `stage` and packs it into `out` (through a
/// temporary file in `stage`, on `out`'s file system: a cached archive is
/// whole or absent); `out`, locked as [`hold`] locks it.
fn pack(
    stage: &Path,
    inputs: &Inputs,
    libs: &[PathBuf],
    script: &str,
    out: &Path,
) -> Result<fs::File, KernelsError> {
    let io = |what: &str, e: io::Error| KernelsError::io(format!("initramfs: {what}"), &e);
    let mut names: Vec<String> = Vec::new();
    for dir in ["bin", "proc", "sys", "dev", "tmp"] {
        fs::create_dir_all(stage.join(dir)).map_err(|e| io(dir, e))?;
        names.push(dir.into());
    }
    copy_exe(&inputs.busybox, &stage.join("bin/busybox"))?;
    names.push("bin/busybox".into());
    copy_exe(&inputs.pipespeed, &stage.join("bin/pipespeed"))?;
    names.push("bin/pipespeed".into());
    if let Some(pipe_bench) = &inputs.pipe_bench {
        copy_exe(pipe_bench, &stage.join("bin/pipe_bench"))?;
        names.push("bin/pipe_bench".into());
    }
    for lib in libs {
        let rel = lib.strip_prefix("/").unwrap_or(lib);
        let mut parent = PathBuf::new();
        for part in rel.parent().into_iter().flat_map(Path::components) {
            parent.push(part);
            let name = parent.display().to_string();
            if !names.contains(&name) {
                fs::create_dir_all(stage.join(&parent)).map_err(|e| io(&name, e))?;
                names.push(name);
            }
        }
        copy_exe(lib, &stage.join(rel))?;
        names.push(rel.display().to_string());
    }
    let init = stage.join("init");
    fs::write(&init, script).map_err(|e| io("init", e))?;
    set_executable(&init)?;
    names.push("init".into());
    // A new file of its own, beside the tree (not in its list), renamed
    // over `out` once whole; removed with the stage if dropped before.
    let partial = tempfile::Builder::new()
        .prefix(".archive-")
        .tempfile_in(stage)
        .map_err(|e| io("a temporary file", e))?;
    let file = partial.reopen().map_err(|e| io("a temporary file", e))?;
    let mut cpio = Command::new(&inputs.busybox);
    // Killed with us: a SIGKILL of ours leaves no cpio writing on.
    crate::sys::process::die_with_parent_on_exec(&mut cpio);
    let mut child = cpio
        .args(["cpio", "-o", "-H", "newc"])
        .current_dir(stage)
        .stdin(Stdio::piped())
        .stdout(file)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| io("cannot run busybox cpio", e))?;
    let list = names.join("\n") + "\n";
    let written = child
        .stdin
        .take()
        .map(|mut stdin| stdin.write_all(list.as_bytes()));
    let output = child
        .wait_with_output()
        .map_err(|e| io("busybox cpio", e))?;
    if !output.status.success() || !matches!(written, Some(Ok(()))) {
        return Err(KernelsError::Tool(format!(
            "busybox cpio failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    // Locked before it is named: no prune sees it unheld. Another run
    // that made the same archive meanwhile keeps its own.
    let _ = rustix::fs::flock(partial.as_file(), rustix::fs::FlockOperation::LockShared);
    match partial.persist_noclobber(out) {
        Ok(file) => Ok(file),
        Err(e) => hold(out).ok_or_else(|| io(&out.display().to_string(), e.error)),
    }
}

fn copy_exe(from: &Path, to: &Path) -> Result<(), KernelsError> {
    super::copy_input(from, to).map_err(|e| {
        KernelsError::io(
            format!("cannot copy {} into the initramfs", from.display()),
            &e,
        )
    })?;
    set_executable(to)
}

fn set_executable(path: &Path) -> Result<(), KernelsError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(|e| KernelsError::io(format!("cannot make {} executable", path.display()), &e))
}

/// The shared libraries `ldd` names for `exe` (none for a static
/// binary): copied into the guest at the same paths, they let a
/// dynamically linked pipespeed run there too.
pub(crate) fn shared_libraries(exe: &Path) -> Result<Vec<PathBuf>, KernelsError> {
    let output = Command::new("ldd").arg(exe).output();
    let Ok(output) = output else {
        // No ldd: the binary must be static (checked by running it in the
        // guest: a missing library fails the first boot, clearly).
        return Ok(Vec::new());
    };
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(parse_ldd(&text))
}

/// The absolute paths in `ldd`'s output: `libc.so.6 => /lib/.. (0x..)`
/// and `/lib64/ld-linux-x86-64.so.2 (0x..)`; `linux-vdso.so.1` has none.
fn parse_ldd(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let path = match line.split_once("=>") {
                Some((_, right)) => right.trim(),
                None => line,
            };
            let path = path.split_whitespace().next()?;
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pruning_leaves_an_archive_a_live_run_boots_from() {
        let cache = tempfile::tempdir().unwrap();
        let day = std::time::Duration::from_secs(86400);
        let archives: Vec<PathBuf> = (0..CACHE_KEEP + 2)
            .map(|i| {
                let path = cache.path().join(format!("initramfs-{i:016x}.cpio"));
                let f = fs::File::create(&path).unwrap();
                f.set_modified(SystemTime::now() - day * (10 - i as u32))
                    .unwrap();
                path
            })
            .collect();
        // The oldest, booted from by another run (qemu reopens it at each
        // boot).
        let used = fs::File::open(&archives[0]).unwrap();
        rustix::fs::flock(&used, rustix::fs::FlockOperation::LockShared).unwrap();
        prune(cache.path(), archives.last().unwrap());
        assert!(archives[0].exists(), "a live run's archive is removed");
        // It counts among the kept: the next oldest goes, no other.
        assert!(!archives[1].exists() && archives[2].exists());
        drop(used);
        prune(cache.path(), archives.last().unwrap());
        assert!(!archives[0].exists());
    }

    #[test]
    fn ldd_s_paths_are_the_libraries_and_the_loader() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\
                    \tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f)\n\
                    \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n";
        assert_eq!(
            parse_ldd(text),
            [
                "/lib/x86_64-linux-gnu/libgcc_s.so.1",
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/lib64/ld-linux-x86-64.so.2"
            ]
            .map(PathBuf::from)
        );
        // A static binary.
        assert!(parse_ldd("\tnot a dynamic executable\n").is_empty());
        assert!(parse_ldd("\tstatically linked\n").is_empty());
    }

    #[test]
    fn a_failed_measurement_s_last_words_are_the_line_before_its_end() {
        let console = "pipespeed-guest: running contend\r\n\
                       pipespeed: invalid value '0' for '--warmup-runs <N>'\r\n\
                       pipespeed-guest: contend ended with status 2\r\n\
                       pipespeed-guest: all measurements ended\r\n";
        assert_eq!(
            last_words(console, "contend"),
            "pipespeed: invalid value '0' for '--warmup-runs <N>'"
        );
        assert_eq!(last_words("", "contend"), "(it printed nothing)");
    }

    #[test]
    fn init_runs_every_measurement_with_its_words_quoted() {
        let m = [Measurement {
            name: "contend".into(),
            args: vec!["contend".into(), "--sweep".into(), "it's".into()],
            program: Program::Pipespeed,
        }];
        let s = init_script(&m);
        assert!(
            s.contains("/bin/pipespeed contend --sweep 'it'\\''s' --json /tmp/contend.json"),
            "{s}"
        );
        assert!(s.contains(INIT_REACHED) && s.contains(ALL_DONE));
        assert!(s.ends_with("poweroff -f\n"));
    }
}
