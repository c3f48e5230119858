//! Local wall-clock time, for displays that show when something will end.
#![allow(unsafe_code)]

/// A local date and time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LocalTime {
    /// The year, as written (2026).
    pub year: i32,
    /// 1 to 12.
    pub month: u32,
    /// 1 to 31.
    pub day: u32,
    /// 0 to 23.
    pub hour: u32,
    /// 0 to 59.
    pub minute: u32,
    /// 0 to 60 (a leap second).
    pub second: u32,
}

/// The local time `seconds` from now, from `localtime_r(3)` (the `TZ`
/// environment variable and `/etc/localtime`), or `None` if the C library
/// cannot tell.
///
/// # References
///  - [localtime(3)](https://man7.org/linux/man-pages/man3/localtime.3.html)
pub(crate) fn local_time_after(seconds: i64) -> Option<LocalTime> {
    // SAFETY: `time` with a null pointer only returns the time.
    let now = unsafe { libc::time(std::ptr::null_mut()) };
    let then = now.checked_add(seconds)?;
    // SAFETY: `tm` is plain data; all-zero is a valid value of it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r is the
    // thread-safe form and keeps no reference to them.
    let ok = unsafe { libc::localtime_r(&then, &mut tm) };
    if ok.is_null() {
        return None;
    }
    let field = |v: libc::c_int| u32::try_from(v).ok();
    Some(LocalTime {
        year: tm.tm_year + 1900,
        month: field(tm.tm_mon + 1)?,
        day: field(tm.tm_mday)?,
        hour: field(tm.tm_hour)?,
        minute: field(tm.tm_min)?,
        second: field(tm.tm_sec)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_time_is_a_date_and_a_time_of_day() {
        let t = local_time_after(0).expect("the C library knows the time");
        assert!(t.year >= 2024 && (1..=12).contains(&t.month) && (1..=31).contains(&t.day));
        assert!(t.hour < 24 && t.minute < 60 && t.second <= 60, "{t:?}");
        let tomorrow = local_time_after(86_400).unwrap();
        assert_ne!((tomorrow.month, tomorrow.day), (t.month, t.day));
    }
}
