//! `-d`'s targets: `PID[:FD]`, `=NAME` (the processes pgrep(1) finds by
//! that name, as pv 1.12 finds them) and `@LISTFILE` (more targets, one
//! a line), from the options and the operands.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::args::{WatchSpec, watch_spec};
use crate::cli::strerror;

/// How deep `@LISTFILE`s may name other list files: a list that names
/// itself is refused, not followed for ever.
const MAX_LIST_DEPTH: usize = 8;

/// The most a `@LISTFILE` may hold: 1 MiB, some 100,000 targets. More is
/// refused, not read (`-d @/dev/zero` would fill the memory).
const MAX_LIST_BYTES: u64 = 1 << 20;

/// The most targets (list files included) lists may add up to: lists
/// naming lists multiply.
const MAX_TARGETS: usize = 65536;

/// Every `(pid, fd)` to watch: the `-d` options, then the operands, each
/// a spec too; `Err` says which one is wrong and why. A name no process
/// has adds nothing (pv 1.12: nothing shown, status 0).
pub(super) fn resolve(
    specs: &[WatchSpec],
    operands: &[PathBuf],
) -> Result<Vec<(u32, Option<u32>)>, String> {
    let mut all = specs.to_vec();
    for operand in operands {
        let text = operand
            .to_str()
            .ok_or_else(|| format!("{}: not a process ID", operand.display()))?;
        // pv 1.12's words: `a: process ID or pid:fd pair expected`.
        all.push(watch_spec(text).map_err(|why| format!("{text}: {}", why.pv))?);
    }
    let mut targets = Vec::new();
    let mut named = 0;
    for spec in &all {
        add(spec, 0, &mut targets, &mut named)?;
    }
    Ok(targets)
}

fn add(
    spec: &WatchSpec,
    depth: usize,
    targets: &mut Vec<(u32, Option<u32>)>,
    named: &mut usize,
) -> Result<(), String> {
    *named += 1;
    if *named > MAX_TARGETS {
        return Err(format!(
            "-d: the lists name more than {MAX_TARGETS} targets"
        ));
    }
    match spec {
        WatchSpec::Process(pid, fd) => targets.push((*pid, *fd)),
        WatchSpec::Name(name) => targets.extend(pgrep(name)?.into_iter().map(|pid| (pid, None))),
        WatchSpec::List(path) => {
            if depth >= MAX_LIST_DEPTH {
                return Err(format!(
                    "-d @{}: lists name lists more than {MAX_LIST_DEPTH} deep",
                    path.display()
                ));
            }
            for spec in list(path)? {
                add(&spec, depth + 1, targets, named)?;
            }
        }
    }
    Ok(())
}

/// The specs in a list file: one a line, blank lines skipped.
fn list(path: &Path) -> Result<Vec<WatchSpec>, String> {
    use std::io::Read;
    let failed = |err: std::io::Error| format!("-d @: {}: {}", path.display(), strerror(&err));
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_LIST_BYTES + 1).read_to_end(&mut bytes))
        .map_err(failed)?;
    if bytes.len() as u64 > MAX_LIST_BYTES {
        return Err(format!(
            "-d @{}: longer than 1 MiB, the most a list may hold",
            path.display()
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| failed(std::io::Error::from(std::io::ErrorKind::InvalidData)))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let line = line.trim();
            watch_spec(line)
                .map_err(|why| format!("{}:{}: {line}: {}", path.display(), i + 1, why.pv))
        })
        .collect()
}

/// The processes pgrep(1) finds for `pattern` (pgrep leaves itself out;
/// this process is left out too). pgrep's own words (a bad pattern, a
/// name longer than the 15 characters the kernel keeps) reach stderr as
/// pv 1.12 lets them; a pgrep that fails is refused, where pv 1.12 goes
/// on with nothing to watch and status 0.
fn pgrep(pattern: &str) -> Result<Vec<u32>, String> {
    let output = Command::new("pgrep")
        .arg("--")
        .arg(OsStr::new(pattern))
        .stderr(Stdio::inherit())
        .output()
        .map_err(|err| format!("-d ={pattern}: cannot run pgrep: {}", strerror(&err)))?;
    // pgrep: 0 found, 1 none found, 2 and 3 a bad pattern or a failure.
    match output.status.code() {
        Some(0 | 1) => {}
        _ => return Err(format!("-d ={pattern}: pgrep failed ({})", output.status)),
    }
    let me = std::process::id();
    Ok(String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .filter_map(|pid| pid.parse().ok())
        .filter(|&pid| pid != me)
        .collect())
}
