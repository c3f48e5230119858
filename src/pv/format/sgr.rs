//! `%{sgr:colour,...}`: ECMA-48 Select Graphic Rendition codes, by name
//! or number, as pv 1.12 writes them.

/// The names pv 1.12 takes, and their codes (console_codes(4)).
const NAMES: &[(&str, u8)] = &[
    ("reset", 0),
    ("none", 0),
    ("bold", 1),
    ("dim", 2),
    ("italic", 3),
    ("underscore", 4),
    ("underline", 4),
    ("blink", 5),
    ("reverse", 7),
    ("no-bold", 22),
    ("no-dim", 22),
    ("no-italic", 23),
    ("no-underscore", 24),
    ("no-underline", 24),
    ("no-blink", 25),
    ("no-reverse", 27),
    ("black", 30),
    ("red", 31),
    ("green", 32),
    ("brown", 33),
    ("yellow", 33),
    ("blue", 34),
    ("magenta", 35),
    ("cyan", 36),
    ("white", 37),
    ("fg-black", 30),
    ("fg-red", 31),
    ("fg-green", 32),
    ("fg-brown", 33),
    ("fg-yellow", 33),
    ("fg-blue", 34),
    ("fg-magenta", 35),
    ("fg-cyan", 36),
    ("fg-white", 37),
    ("fg-default", 39),
    ("bg-black", 40),
    ("bg-red", 41),
    ("bg-green", 42),
    ("bg-brown", 43),
    ("bg-yellow", 43),
    ("bg-blue", 44),
    ("bg-magenta", 45),
    ("bg-cyan", 46),
    ("bg-white", 47),
    ("bg-default", 49),
];

/// The most codes pv 1.12 puts in one escape sequence; more start
/// another.
const PER_SEQUENCE: usize = 16;

/// The codes of a list of names and numbers, split at `,` and `;`:
/// names as pv 1.12 spells them (lower case), numbers in decimal below
/// 255. What is neither is left out (`bold,nope,red` is `1;31`).
pub(super) fn codes(list: &str) -> Vec<u8> {
    list.split([',', ';'])
        .filter_map(|item| {
            if let Some(&(_, code)) = NAMES.iter().find(|(name, _)| *name == item) {
                return Some(code);
            }
            number(item)
        })
        .collect()
}

/// A decimal number as pv 1.12 reads one (`strtoul` into an unsigned
/// int): digits only, wrapping at 2^32, taken below 255.
fn number(item: &str) -> Option<u8> {
    if item.is_empty() || !item.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // strtoul saturates at 2^64 - 1, which the unsigned int then wraps.
    let wide = item.parse::<u64>().unwrap_or(u64::MAX);
    let value = wide as u32;
    u8::try_from(value).ok().filter(|&v| v < 255)
}

/// The escape sequences for `codes`: `ESC [ 31;1 m`, at most
/// [`PER_SEQUENCE`] codes to a sequence; nothing for no code.
pub(super) fn escape(codes: &[u8]) -> String {
    codes
        .chunks(PER_SEQUENCE)
        .map(|chunk| {
            let list: Vec<String> = chunk.iter().map(u8::to_string).collect();
            format!("\x1b[{}m", list.join(";"))
        })
        .collect()
}

/// What pv 1.12 ends a line with after its last codes: `ESC [ m` unless
/// the last code given was a reset (0).
pub(super) fn closing(last: Option<u8>) -> &'static str {
    match last {
        Some(code) if code != 0 => "\x1b[m",
        _ => "",
    }
}
