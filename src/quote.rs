//! File names quoted as GNU tools quote them in messages (gnulib's
//! `quotef`, in `lib/quotearg.c`), errors worded as `strerror` words them,
//! and text read from a file made harmless to show ([`escape_controls`]).

/// The system's text for an error, as `strerror` gives it: without the
/// ` (os error N)` Rust adds.
pub fn strerror(err: &std::io::Error) -> String {
    let text = err.to_string();
    match err.raw_os_error() {
        Some(code) => match text.strip_suffix(&format!(" (os error {code})")) {
            Some(bare) => bare.to_owned(),
            None => text,
        },
        None => text,
    }
}

/// A file name as GNU tools quote it in a diagnostic (gnulib's `quotef`:
/// the `shell-escape` quoting style, with `:` quoted too): as is when
/// nothing in it is special to a shell or a message, else in single quotes,
/// with `$'\n'`-style escapes for unprintable bytes, or in double quotes
/// when that avoids escaping a single quote.
///
/// With `multibyte` (a UTF-8 locale), printable non-ASCII characters stay
/// as they are: all but control characters and line or paragraph
/// separators (GNU also escapes unassigned code points, unknown here).
pub(crate) fn quote_file_name(name: &[u8], multibyte: bool) -> Vec<u8> {
    if !needs_quotes(name, multibyte) {
        return name.to_vec();
    }
    let quoted = ShellQuoted::new(name, multibyte);
    if quoted.single_quote && quoted.all_compatible {
        // Plain text with an apostrophe: "it's" rather than 'it'\''s'.
        let mut out = Vec::with_capacity(name.len() + 2);
        out.push(b'"');
        out.extend_from_slice(name);
        out.push(b'"');
        return out;
    }
    quoted.text
}

/// Bytes no quoting style treats specially.
fn is_safe(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"%+,-./:]_".contains(&c)
}

/// One character of a name: its length in bytes and whether it is
/// printable. Invalid or truncated UTF-8 is one unprintable byte, or (cut
/// short by the end of the name) all the bytes left.
fn next_char(rest: &[u8], multibyte: bool) -> (usize, bool) {
    let c = rest[0];
    if !multibyte || c.is_ascii() {
        return (1, (b' '..b'\x7f').contains(&c));
    }
    // A character is at most 4 bytes long.
    let rest = &rest[..rest.len().min(4)];
    match std::str::from_utf8(rest) {
        Ok(text) => char_of(text),
        Err(err) if err.valid_up_to() > 0 => {
            char_of(std::str::from_utf8(&rest[..err.valid_up_to()]).unwrap_or_default())
        }
        Err(err) => match err.error_len() {
            Some(_) => (1, false),
            None => (rest.len(), false),
        },
    }
}

fn char_of(text: &str) -> (usize, bool) {
    match text.chars().next() {
        // Line and paragraph separators are not printable for glibc either.
        Some(ch) => (
            ch.len_utf8(),
            !ch.is_control() && !matches!(ch, '\u{2028}' | '\u{2029}'),
        ),
        None => (1, false),
    }
}

/// gnulib's first pass (`shell-escape` with outer quotes elided): whether
/// anything forces quoting.
fn needs_quotes(name: &[u8], multibyte: bool) -> bool {
    if name.is_empty() {
        return true;
    }
    let mut i = 0;
    while i < name.len() {
        let c = name[i];
        let special = match c {
            b'\x07' | b'\x08' | b'\x0b' | b'\x0c' | b'\n' | b'\r' | b'\t' | b'\\' | b'?' => true,
            b'{' | b'}' => name.len() == 1,
            b'#' | b'~' => i == 0,
            b' ' | b'!' | b'"' | b'$' | b'&' | b'(' | b')' | b'*' | b';' | b'<' | b'=' | b'>'
            | b'[' | b'^' | b'`' | b'|' | b'\'' | b':' => true,
            _ if is_safe(c) => false,
            _ => {
                let (len, printable) = next_char(&name[i..], multibyte);
                if !printable {
                    return true;
                }
                i += len;
                continue;
            }
        };
        if special {
            return true;
        }
        i += 1;
    }
    false
}

/// gnulib's `shell-escape-always` pass: the name in single quotes, with
/// `'$'\ooo'`-style escapes, and what decides whether double quotes do
/// better.
struct ShellQuoted {
    text: Vec<u8>,
    /// The name has a `'`.
    single_quote: bool,
    /// Every character would read the same in double quotes.
    all_compatible: bool,
}

impl ShellQuoted {
    fn new(name: &[u8], multibyte: bool) -> ShellQuoted {
        let mut q = ShellQuoted {
            text: Vec::with_capacity(name.len() + 8),
            single_quote: false,
            all_compatible: true,
        };
        // Inside a $'...' escape started by an earlier byte.
        let mut in_escape = false;
        q.text.push(b'\'');
        let mut i = 0;
        while i < name.len() {
            let c = name[i];
            let escape = match c {
                b'\x07' => Some(b'a'),
                b'\x08' => Some(b'b'),
                b'\x0c' => Some(b'f'),
                b'\x0b' => Some(b'v'),
                b'\n' => Some(b'n'),
                b'\r' => Some(b'r'),
                b'\t' => Some(b't'),
                _ => None,
            };
            if let Some(esc) = escape {
                q.start_escape(&mut in_escape);
                q.text.push(esc);
                q.all_compatible = false;
                i += 1;
                continue;
            }
            let compatible = match c {
                b'{' | b'}' => name.len() == 1,
                b'#' | b'~' => i == 0,
                b' ' => true,
                b'\'' => {
                    q.single_quote = true;
                    q.text.extend_from_slice(b"'\\'");
                    in_escape = false;
                    true
                }
                _ if is_safe(c) => true,
                b'!' | b'"' | b'$' | b'&' | b'(' | b')' | b'*' | b';' | b'<' | b'=' | b'>'
                | b'[' | b'^' | b'`' | b'|' | b'?' | b'\\' => false,
                _ => {
                    let (len, printable) = next_char(&name[i..], multibyte);
                    if printable {
                        q.end_escape(&mut in_escape);
                        q.text.extend_from_slice(&name[i..i + len]);
                    } else {
                        for &byte in &name[i..i + len] {
                            q.start_escape(&mut in_escape);
                            q.text.extend_from_slice(&[
                                b'0' + (byte >> 6),
                                b'0' + ((byte >> 3) & 7),
                                b'0' + (byte & 7),
                            ]);
                        }
                        q.all_compatible = false;
                    }
                    q.all_compatible &= printable;
                    i += len;
                    continue;
                }
            };
            q.end_escape(&mut in_escape);
            q.text.push(c);
            q.all_compatible &= compatible;
            i += 1;
        }
        q.text.push(b'\'');
        q
    }

    fn start_escape(&mut self, in_escape: &mut bool) {
        if !*in_escape {
            self.text.extend_from_slice(b"'$'");
            *in_escape = true;
        }
        self.text.push(b'\\');
    }

    fn end_escape(&mut self, in_escape: &mut bool) {
        if *in_escape {
            self.text.extend_from_slice(b"''");
            *in_escape = false;
        }
    }
}

/// `text` with its control characters escaped, to be shown on a
/// terminal, which would obey `ESC[2J` or a bidirectional override read
/// from a file: controls become `\t`, `\n`, `\r`, `\xHH` or (above
/// `\x7f`, and the bidirectional marks) `\u{202e}`.
pub(crate) fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let special = |c: char| c.is_control() || bidi(c);
    if !text.chars().any(special) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() && (c as u32) < 0x80 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if special(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Unicode's bidirectional formatting characters (UAX #9): the marks,
/// embeddings, overrides and isolates that reorder the text after them.
fn bidi(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(name: &[u8], multibyte: bool) -> String {
        String::from_utf8(quote_file_name(name, multibyte)).unwrap()
    }

    #[test]
    fn quotes_file_names_as_gnu_does() {
        // Each pair is what GNU cat 9.1 prints in C.UTF-8.
        for (name, expected) in [
            ("plain.txt", "plain.txt"),
            ("dir/x-1_2,3+4%5", "dir/x-1_2,3+4%5"),
            ("", "''"),
            ("a b", "'a b'"),
            ("a:b", "'a:b'"),
            ("it's", "\"it's\""),
            ("a\nb", "'a'$'\\n''b'"),
            ("a\"b", "'a\"b'"),
            ("$x", "'$x'"),
            ("a\\b", "'a\\b'"),
            ("~x", "'~x'"),
            ("x~", "x~"),
            ("#a", "'#a'"),
            ("a#", "a#"),
            ("{", "'{'"),
            ("a{", "a{"),
            ("]", "]"),
            ("?", "'?'"),
            ("@", "@"),
            ("é", "é"),
            ("it's $", "'it'\\''s $'"),
            ("a\n", "'a'$'\\n'"),
            ("\t\t", "''$'\\t\\t'"),
        ] {
            assert_eq!(quoted(name.as_bytes(), true), expected, "{name:?}");
        }
    }

    #[test]
    fn quotes_unprintable_bytes_in_octal() {
        assert_eq!(quoted(b"\xff", true), "''$'\\377'");
        assert_eq!(quoted(b"a\xffb", true), "'a'$'\\377''b'");
        // Not UTF-8 text in the C locale.
        assert_eq!(quoted("é".as_bytes(), false), "''$'\\303\\251'");
        // A UTF-8 sequence cut short by the end of the name.
        assert_eq!(quoted(b"a\xc3", true), "'a'$'\\303'");
        assert_eq!(quoted(b"a\x01b", true), "'a'$'\\001''b'");
        assert_eq!(quoted("\u{2028}".as_bytes(), true), "''$'\\342\\200\\250'");
        assert_eq!(quoted("\u{200b}".as_bytes(), true), "\u{200b}");
        assert_eq!(quoted(b"it's@", true), "\"it's@\"");
        assert_eq!(quoted(b"it's{x", true), "'it'\\''s{x'");
    }

    #[test]
    fn controls_are_escaped_and_the_rest_kept() {
        assert_eq!(escape_controls("6.1.0 é ü"), "6.1.0 é ü");
        assert_eq!(escape_controls("\u{1b}[2Jx"), "\\x1b[2Jx");
        assert_eq!(escape_controls("a\tb\nc\rd\u{7f}"), "a\\tb\\nc\\rd\\x7f");
        assert_eq!(escape_controls("\u{9b}2J\u{202e}"), "\\u{9b}2J\\u{202e}");
    }
}
