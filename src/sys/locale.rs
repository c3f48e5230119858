//! The character set of the user's locale, for displays that draw with
//! characters beyond ASCII only where the terminal is told to take them.
#![allow(unsafe_code)]

use std::ffi::CStr;

/// Whether the user's locale has the codeset UTF-8, by pv 1.12's rule
/// (`setlocale(LC_ALL, "")`, `nl_langinfo(CODESET)`): every category must
/// name a locale this machine has, or it stays "C", not UTF-8. Asked with
/// `newlocale` and `nl_langinfo_l`, which leave the process's locale be.
///
/// # References
///  - [newlocale(3)](https://man7.org/linux/man-pages/man3/newlocale.3.html)
///  - [nl_langinfo(3)](https://man7.org/linux/man-pages/man3/nl_langinfo.3.html)
pub(crate) fn ctype_is_utf8() -> bool {
    // SAFETY: the locale name is a valid C string ("" reads the
    // environment); a null base asks for a new object.
    let locale = unsafe { libc::newlocale(libc::LC_ALL_MASK, c"".as_ptr(), std::ptr::null_mut()) };
    if locale.is_null() {
        return false;
    }
    // SAFETY: `locale` is a valid locale object until freed below.
    let codeset = unsafe { libc::nl_langinfo_l(libc::CODESET, locale) };
    // SAFETY: nl_langinfo_l returns a NUL-terminated string that stays
    // valid until the locale is freed; it is copied before that.
    let utf8 = !codeset.is_null() && unsafe { CStr::from_ptr(codeset) }.to_bytes() == b"UTF-8";
    // SAFETY: `locale` came from newlocale and is freed once.
    unsafe { libc::freelocale(locale) };
    utf8
}
