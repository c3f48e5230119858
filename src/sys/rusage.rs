//! Resource usage: getrusage(2) (through libc: rustix has none) for this
//! process, this thread, or the children it has waited for.
#![allow(unsafe_code)]

use std::io;
use std::mem::MaybeUninit;
use std::ops::Add;
use std::time::Duration;

/// Whose usage [`getrusage`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageOf {
    /// The calling process, all its threads (`RUSAGE_SELF`).
    Process,
    /// The calling thread only (`RUSAGE_THREAD`).
    Thread,
    /// Every child that has ended and been waited for, with the
    /// descendants they waited for in turn (`RUSAGE_CHILDREN`).
    Children,
}

/// The counters of `struct rusage` that pipespeed uses. Subtract two
/// readings with [`ResourceUsage::since`], add runs with `+`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResourceUsage {
    /// CPU time in user mode (`ru_utime`).
    pub user: Duration,
    /// CPU time in the kernel (`ru_stime`).
    pub system: Duration,
    /// Page faults served without I/O (`ru_minflt`).
    pub minor_faults: u64,
    /// Page faults that needed I/O (`ru_majflt`).
    pub major_faults: u64,
    /// Context switches because the process waited (`ru_nvcsw`).
    pub voluntary_switches: u64,
    /// Context switches because the scheduler preempted it (`ru_nivcsw`).
    pub involuntary_switches: u64,
}

impl ResourceUsage {
    /// What was used between `earlier` and `self`, two readings of the
    /// same `UsageOf`. Counters never go back; if one seems to, its
    /// difference is 0.
    pub fn since(&self, earlier: &ResourceUsage) -> ResourceUsage {
        self.combine(earlier, Duration::saturating_sub, u64::saturating_sub)
    }

    /// Each counter of `self` and `other` combined by `time` or `count`.
    fn combine(
        &self,
        other: &ResourceUsage,
        time: fn(Duration, Duration) -> Duration,
        count: fn(u64, u64) -> u64,
    ) -> ResourceUsage {
        let (a, b) = (self, other);
        ResourceUsage {
            user: time(a.user, b.user),
            system: time(a.system, b.system),
            minor_faults: count(a.minor_faults, b.minor_faults),
            major_faults: count(a.major_faults, b.major_faults),
            voluntary_switches: count(a.voluntary_switches, b.voluntary_switches),
            involuntary_switches: count(a.involuntary_switches, b.involuntary_switches),
        }
    }

    /// Minor and major page faults.
    pub fn page_faults(&self) -> u64 {
        self.minor_faults.saturating_add(self.major_faults)
    }

    /// Voluntary and involuntary context switches.
    pub fn context_switches(&self) -> u64 {
        self.voluntary_switches
            .saturating_add(self.involuntary_switches)
    }
}

impl Add for ResourceUsage {
    type Output = ResourceUsage;

    fn add(self, other: ResourceUsage) -> ResourceUsage {
        self.combine(&other, Duration::saturating_add, u64::saturating_add)
    }
}

/// `int getrusage(int who, struct rusage *usage)`: the resources `who`
/// has used so far.
///
/// `UsageOf::Children` counts a child only once it has been waited for,
/// and counts its whole life, start-up included.
///
/// # References
///  - [getrusage(2)](https://man7.org/linux/man-pages/man2/getrusage.2.html)
#[doc(alias = "RUSAGE_CHILDREN")]
#[doc(alias = "RUSAGE_THREAD")]
pub fn getrusage(who: UsageOf) -> io::Result<ResourceUsage> {
    let raw_who = match who {
        UsageOf::Process => libc::RUSAGE_SELF,
        UsageOf::Thread => libc::RUSAGE_THREAD,
        UsageOf::Children => libc::RUSAGE_CHILDREN,
    };
    let mut usage = MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: the pointer is to a `struct rusage` we own, valid for the
    // call; getrusage only writes through it.
    let rc = unsafe { libc::getrusage(raw_who, usage.as_mut_ptr()) };
    if rc != 0 {
        let err = io::Error::last_os_error();
        let doing = format_args!("cannot read resource usage ({who:?}, getrusage)");
        return Err(super::failed(doing, err));
    }
    // SAFETY: zeroed is a valid `struct rusage` (plain integers), and
    // getrusage filled it in on success.
    let usage = unsafe { usage.assume_init() };
    let count = |n: libc::c_long| u64::try_from(n).unwrap_or(0);
    Ok(ResourceUsage {
        user: duration(usage.ru_utime),
        system: duration(usage.ru_stime),
        minor_faults: count(usage.ru_minflt),
        major_faults: count(usage.ru_majflt),
        voluntary_switches: count(usage.ru_nvcsw),
        involuntary_switches: count(usage.ru_nivcsw),
    })
}

fn duration(t: libc::timeval) -> Duration {
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let micros = u32::try_from(t.tv_usec).unwrap_or(0).min(999_999);
    Duration::new(secs, micros * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_works_uses_cpu_time() {
        let before = getrusage(UsageOf::Thread).unwrap();
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let used = getrusage(UsageOf::Thread).unwrap().since(&before);
        assert!(used.user + used.system > Duration::ZERO, "{used:?}");
        assert!(getrusage(UsageOf::Process).is_ok());
        assert!(getrusage(UsageOf::Children).is_ok());
    }

    #[test]
    fn differences_and_sums_saturate() {
        let a = ResourceUsage {
            user: Duration::from_millis(5),
            minor_faults: 3,
            voluntary_switches: 2,
            involuntary_switches: 1,
            ..ResourceUsage::default()
        };
        let b = ResourceUsage {
            user: Duration::from_millis(2),
            minor_faults: 5,
            major_faults: 1,
            ..ResourceUsage::default()
        };
        let d = a.since(&b);
        assert_eq!(d.user, Duration::from_millis(3));
        assert_eq!(d.minor_faults, 0);
        let s = a + b;
        assert_eq!((s.page_faults(), s.context_switches()), (9, 3));
    }
}
