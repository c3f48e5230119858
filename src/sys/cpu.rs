//! Which CPUs this process may run on, and pinning to one of them.

use std::io;

use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};

/// The CPUs this process may run on (its affinity mask), in increasing
/// order. Under `taskset -c 0` this is `[0]`, whatever the machine has.
///
/// # References
///  - [sched_getaffinity(2)](https://man7.org/linux/man-pages/man2/sched_getaffinity.2.html)
#[doc(alias = "sched_getaffinity")]
pub fn available_cpus() -> io::Result<Vec<usize>> {
    let set = sched_getaffinity(None)?;
    Ok((0..CpuSet::MAX_CPU)
        .filter(|&cpu| set.is_set(cpu))
        .collect())
}

/// Pins the calling thread (the whole process, when it has one thread) to
/// `cpu`. Children started afterwards inherit the pinning.
///
/// # References
///  - [sched_setaffinity(2)](https://man7.org/linux/man-pages/man2/sched_setaffinity.2.html)
#[doc(alias = "sched_setaffinity")]
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    if cpu >= CpuSet::MAX_CPU {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot pin to CPU {cpu}: beyond the largest CPU number"),
        ));
    }
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set).map_err(|errno| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "cannot pin to CPU {cpu}: {} (allowed CPUs: {})",
                io::Error::from(errno),
                cpu_list()
            ),
        )
    })
}

fn cpu_list() -> String {
    match available_cpus() {
        Ok(cpus) => cpus
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
        Err(err) => format!("unknown: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_is_at_least_one_cpu() {
        assert!(!available_cpus().unwrap().is_empty());
    }

    #[test]
    fn pinning_to_a_missing_cpu_is_an_error_naming_it() {
        let err = pin_to_cpu(CpuSet::MAX_CPU - 1).unwrap_err();
        assert!(err.to_string().contains("CPU"), "{err}");
    }
}
