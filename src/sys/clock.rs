//! Local wall-clock time, for displays that show when something will end.
#![allow(unsafe_code)]

/// Seconds since local midnight now, from `localtime_r(3)` (the `TZ`
/// environment variable and `/etc/localtime`), or `None` if the C library
/// cannot tell.
///
/// # References
///  - [localtime(3)](https://man7.org/linux/man-pages/man3/localtime.3.html)
pub fn local_seconds_of_day() -> Option<u32> {
    // SAFETY: `time` with a null pointer only returns the time.
    let now = unsafe { libc::time(std::ptr::null_mut()) };
    // SAFETY: `tm` is plain data; all-zero is a valid value of it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r is the
    // thread-safe form and keeps no reference to them.
    let ok = unsafe { libc::localtime_r(&now, &mut tm) };
    if ok.is_null() {
        return None;
    }
    let seconds = tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec;
    u32::try_from(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_of_day_is_within_a_day() {
        let s = local_seconds_of_day().expect("the C library knows the time");
        assert!(s < 86_400 + 1, "{s}"); // a leap second may show as 60
    }
}
