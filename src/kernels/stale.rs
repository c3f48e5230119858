//! What a run leaves when it dies without a chance to clean (SIGKILL, a
//! crash, a power cut): its work directory, the initramfs being staged or
//! packed. Each is named with its process's tag (ID and start time), and
//! the next run removes those whose process is gone.

use std::fs;
use std::path::Path;

/// `PID-START` of this process: its ID and its start time in clock ticks
/// after boot (`/proc/self/stat`, field 22), which tell it apart from a
/// later process given the same ID.
pub fn tag() -> String {
    let pid = std::process::id();
    format!("{pid}-{}", start_time(pid).unwrap_or(0))
}

/// The start time of process `pid` (`/proc/PID/stat`, field 22), if it
/// runs.
///
/// # References
///  - [proc_pid_stat(5)](https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html)
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (field 2) may hold spaces and parentheses: count from
    // the last ')'. Field 3 is the first after it.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// Whether the process that `tag` names is gone: no process has its ID,
/// or one started at another time has. Without `/proc` no one is gone.
fn gone(tag: &str) -> bool {
    let Some((pid, start)) = tag.split_once('-') else {
        return false;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return false;
    };
    if !Path::new("/proc/self/stat").exists() {
        return false;
    }
    start_time(pid) != Some(start)
}

/// Removes the entries of `dir` named `PREFIX` `PID-START` `-...` whose
/// process is gone and that are ours (in `/tmp` anyone may make one: root
/// must not remove another user's). What cannot be removed stays.
pub fn remove(dir: &Path, prefix: &str) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let euid = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
            continue;
        };
        let mut parts = rest.splitn(3, '-');
        let (Some(pid), Some(start)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if meta.uid() != euid || !gone(&format!("{pid}-{start}")) {
            continue;
        }
        let _ = match meta.is_dir() {
            true => fs::remove_dir_all(entry.path()),
            false => fs::remove_file(entry.path()),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_not_gone_and_another_start_is() {
        let ours = tag();
        assert!(!gone(&ours), "{ours}");
        let pid = std::process::id();
        assert!(gone(&format!("{pid}-1")));
        assert!(!gone("not-a-tag"));
    }

    #[test]
    fn only_a_dead_process_s_entries_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join(format!("work-{}-abc", tag()));
        // Process IDs stop well below this one (pid_max is 2^22).
        let dead = dir.path().join("work-4194999-5-abc");
        let other = dir.path().join("other-4194999-5-abc");
        for d in [&ours, &dead, &other] {
            fs::create_dir(d).unwrap();
            fs::write(d.join("f"), b"x").unwrap();
        }
        remove(dir.path(), "work-");
        assert!(ours.exists() && other.exists());
        assert!(!dead.exists());
    }
}
