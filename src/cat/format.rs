//! GNU cat's output formatting (`-b -E -n -s -T -v`) as a streaming
//! transformation without I/O: [`Formatter`] gives coreutils 9.1's bytes
//! for the files fed one after another in chunks of any size.
//!
//! # References
//!  - [cat invocation](https://www.gnu.org/software/coreutils/manual/html_node/cat-invocation.html)
//!  - coreutils `src/cat.c` (`cat`, `next_line_num`), which this module
//!    follows.

/// GNU cat's formatting options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FormatOptions {
    /// `-n`: number all output lines.
    pub number: bool,
    /// `-b`: number nonempty output lines (overrides `-n`).
    pub number_nonblank: bool,
    /// `-s`: suppress repeated empty output lines.
    pub squeeze_blank: bool,
    /// `-E`: `$` at the end of each line (and `^M$` for CR LF).
    pub show_ends: bool,
    /// `-T`: TAB as `^I`.
    pub show_tabs: bool,
    /// `-v`: `^` and `M-` notation for bytes other than LF and TAB.
    pub show_nonprinting: bool,
}

impl FormatOptions {
    /// No option changes the bytes: the copy engine may be used.
    pub(crate) fn is_plain(&self) -> bool {
        *self == FormatOptions::default()
    }
}

/// GNU cat's line counter: the number kept as text and incremented in
/// place, so that printing it is one copy (coreutils' `next_line_num`).
///
/// GNU's buffer has 19 bytes: digits right-aligned up to `LAST`, then a
/// TAB; `print` is where the printed text starts (six columns, or more
/// for a longer number), `start` the first digit. Past 18 digits GNU puts
/// a `>` in front and wraps; so does this. The last 16 bytes are kept in
/// one `u128` (`low`, little-endian) and the first three in `high`: the
/// common increment then adds to the `u128` and printing shifts it, where
/// a byte store followed by a wide copy of the same bytes would wait for
/// the store on every line.
#[derive(Debug, Clone)]
struct LineNumber {
    low: u128,
    high: [u8; 3],
    start: usize,
    print: usize,
}

impl LineNumber {
    /// Bytes in GNU's buffer: 18 digits and a TAB.
    const LEN: usize = 19;
    /// Index of the last digit.
    const LAST: usize = Self::LEN - 2;
    /// Where `low` starts in the buffer.
    const LOW: usize = Self::LEN - 16;
    /// The bit of `low` where the last digit starts.
    const LAST_SHIFT: u32 = 8 * (Self::LAST - Self::LOW) as u32;

    /// The counter at 1: GNU starts at 0 and increments before printing;
    /// this increments after printing.
    fn new() -> LineNumber {
        let mut buf = [b' '; Self::LEN];
        buf[Self::LAST] = b'1';
        buf[Self::LAST + 1] = b'\t';
        let mut number = LineNumber {
            low: 0,
            high: [b' '; 3],
            start: Self::LAST,
            print: Self::LAST - 5,
        };
        number.set_buf(buf);
        number
    }

    fn buf(&self) -> [u8; Self::LEN] {
        let mut buf = [0; Self::LEN];
        buf[..Self::LOW].copy_from_slice(&self.high);
        buf[Self::LOW..].copy_from_slice(&self.low.to_le_bytes());
        buf
    }

    fn set_buf(&mut self, buf: [u8; Self::LEN]) {
        let (high, low) = buf.split_at(Self::LOW);
        self.high.copy_from_slice(high);
        let mut bytes = [0; 16];
        bytes.copy_from_slice(low);
        self.low = u128::from_le_bytes(bytes);
    }

    #[inline]
    fn advance(&mut self) {
        if ((self.low >> Self::LAST_SHIFT) as u8) < b'9' {
            self.low += 1 << Self::LAST_SHIFT;
        } else {
            self.carry();
        }
    }

    /// [`LineNumber::advance`] when the last digit is a 9: GNU's
    /// `next_line_num` on the bytes.
    fn carry(&mut self) {
        let mut buf = self.buf();
        let mut i = Self::LAST;
        loop {
            let digit = buf[i];
            if digit < b'9' {
                buf[i] = digit + 1;
                self.set_buf(buf);
                return;
            }
            buf[i] = b'0';
            if i == self.start {
                break;
            }
            i -= 1;
        }
        if self.start > 0 {
            self.start -= 1;
            buf[self.start] = b'1';
        } else {
            buf[0] = b'>';
        }
        self.print = self.print.min(self.start);
        self.set_buf(buf);
    }

    /// The text printed for the current number.
    #[cfg(test)]
    fn text(&self) -> Vec<u8> {
        self.buf()[self.print..].to_vec()
    }

    /// Appends the text printed for the current number.
    #[inline]
    fn append_to(&self, out: &mut Vec<u8>) {
        match self.print.checked_sub(Self::LOW) {
            Some(skip) => {
                let text = self.low >> (8 * skip);
                append_prefix(out, &text.to_le_bytes(), Self::LEN - self.print);
            }
            None => out.extend_from_slice(&self.buf()[self.print..]),
        }
    }
}

/// Appends the first `len` bytes of `block`: a copy of fixed size, which
/// compiles to a few moves where a copy of `len` bytes would call
/// `memcpy`, and a truncation: most lines and line numbers are short.
fn append_prefix<const N: usize>(out: &mut Vec<u8>, block: &[u8; N], len: usize) {
    out.extend_from_slice(block);
    out.truncate(out.len() - (N - len));
}

/// Streaming formatter; its state carries across chunks and across files
/// exactly as GNU cat's does: line numbers continue from file to file, a
/// last line without newline continues into the next file, and
/// blank-line squeezing sees across files.
///
/// Inside a line, runs of bytes that stay as they are are found eight at
/// a time and copied at once; the bytes shown in `^` and `M-` notation
/// come from a table.
#[derive(Debug, Clone)]
pub(crate) struct Formatter {
    /// `-n` or `-b`.
    number: bool,
    number_nonblank: bool,
    squeeze_blank: bool,
    show_ends: bool,
    /// What ends a line: `$\n` with `-E`, else `\n`, and its length.
    line_end: [u8; 2],
    line_end_len: usize,
    /// The bytes that end a run inside a line.
    specials: Specials,
    /// GNU's `newlines`: -1 inside a line, else the number of empty lines
    /// just ended (at most 2) at the start of a line.
    newlines: i8,
    /// A CR ended the last chunk with `-E` (without `-v`): `^M` if a LF
    /// follows, else the CR itself.
    pending_cr: bool,
    line: LineNumber,
    /// What each byte is shown as: up to four bytes, and how many.
    notation: [[u8; 4]; 256],
    notation_len: [u8; 256],
    /// The bytes shown by the table: specials other than LF and `-E`'s CR.
    shown: [bool; 256],
}

/// The bytes that end a run of bytes copied as they are.
#[derive(Debug, Clone, Copy)]
struct Specials {
    /// TAB (`-T`).
    tab: bool,
    /// CR, which may be the CR of a CR LF (`-E` without `-v`).
    cr: bool,
    /// Control bytes, DEL and bytes with the high bit (`-v`).
    nonprinting: bool,
}

impl Specials {
    fn contains(self, b: u8) -> bool {
        b == b'\n'
            || (self.tab && b == b'\t')
            || (self.cr && b == b'\r')
            || (self.nonprinting && !(b' '..b'\x7f').contains(&b))
    }
}

impl Formatter {
    /// A formatter at the start of the first line.
    pub(crate) fn new(options: FormatOptions) -> Formatter {
        let specials = Specials {
            tab: options.show_tabs,
            cr: options.show_ends && !options.show_nonprinting,
            nonprinting: options.show_nonprinting,
        };
        let mut notation = [[0; 4]; 256];
        let mut notation_len = [1; 256];
        let mut shown = [false; 256];
        for byte in 0..=255u8 {
            let i = usize::from(byte);
            shown[i] = specials.contains(byte) && byte != b'\n' && !(specials.cr && byte == b'\r');
            let mut text = Vec::with_capacity(4);
            if shown[i] {
                put_visible(byte, options.show_tabs, &mut text);
            } else {
                text.push(byte);
            }
            notation[i][..text.len()].copy_from_slice(&text);
            notation_len[i] = text.len() as u8;
        }
        Formatter {
            number: options.number || options.number_nonblank,
            number_nonblank: options.number_nonblank,
            squeeze_blank: options.squeeze_blank,
            show_ends: options.show_ends,
            line_end: if options.show_ends { *b"$\n" } else { *b"\n\n" },
            line_end_len: if options.show_ends { 2 } else { 1 },
            specials,
            newlines: 0,
            pending_cr: false,
            line: LineNumber::new(),
            notation,
            notation_len,
            shown,
        }
    }

    /// Appends to `out` what GNU cat prints for `input`, given everything
    /// formatted before.
    pub(crate) fn format(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let rest = input;
        if self.pending_cr && !rest.is_empty() {
            self.pending_cr = false;
            out.extend_from_slice(if rest[0] == b'\n' { b"^M" } else { b"\r" });
        }
        out.reserve(input.len() + input.len() / 2 + 32);
        // The options decide once which bytes are special; each set gets
        // its own copy of the loop, without tests of the options inside.
        let Specials {
            tab,
            cr,
            nonprinting,
        } = self.specials;
        match (tab, cr, nonprinting) {
            (false, false, false) => self.format_lines::<false, false, false>(rest, out),
            (false, false, true) => self.format_lines::<false, false, true>(rest, out),
            (false, true, false) => self.format_lines::<false, true, false>(rest, out),
            (false, true, true) => self.format_lines::<false, true, true>(rest, out),
            (true, false, false) => self.format_lines::<true, false, false>(rest, out),
            (true, false, true) => self.format_lines::<true, false, true>(rest, out),
            (true, true, false) => self.format_lines::<true, true, false>(rest, out),
            (true, true, true) => self.format_lines::<true, true, true>(rest, out),
        }
    }

    /// [`Formatter::format`] for one set of specials.
    fn format_lines<const TAB: bool, const CR: bool, const NONPRINTING: bool>(
        &mut self,
        mut rest: &[u8],
        out: &mut Vec<u8>,
    ) {
        // Neither -E, -T nor -v: the bytes of a line stay as they are.
        let plain_lines = !(TAB || CR || NONPRINTING || self.show_ends);
        while let Some(&first) = rest.first() {
            if self.newlines >= 0 {
                // At the start of a line.
                if first == b'\n' {
                    self.end_line(out);
                    rest = &rest[1..];
                    continue;
                }
                if self.number {
                    self.put_number(out);
                }
                self.newlines = -1;
            }
            if plain_lines {
                // The rest of the line and its LF, as they are.
                match find_special::<TAB, CR, NONPRINTING>(rest) {
                    Some(end) => {
                        append_run(out, rest, end + 1);
                        self.newlines = 0;
                        rest = &rest[end + 1..];
                    }
                    None => {
                        out.extend_from_slice(rest);
                        rest = &[];
                    }
                }
                continue;
            }
            let Some(at) = find_special::<TAB, CR, NONPRINTING>(rest) else {
                out.extend_from_slice(rest);
                break;
            };
            append_run(out, rest, at);
            rest = &rest[at..];
            match rest[0] {
                b'\n' => {
                    // The end of a nonempty line: nothing to number or
                    // squeeze (the long way is `end_line`).
                    self.newlines = 0;
                    append_prefix(out, &self.line_end, self.line_end_len);
                    rest = &rest[1..];
                }
                b'\r' if CR => {
                    // GNU 9.1 shows the CR of a CR LF as ^M with -E.
                    match rest.get(1) {
                        Some(b'\n') => out.extend_from_slice(b"^M"),
                        Some(_) => out.push(b'\r'),
                        None => self.pending_cr = true,
                    }
                    rest = &rest[1..];
                }
                _ => {
                    let mut shown = 0;
                    for &byte in rest {
                        let i = usize::from(byte);
                        if !self.shown[i] {
                            break;
                        }
                        append_prefix(out, &self.notation[i], usize::from(self.notation_len[i]));
                        shown += 1;
                    }
                    rest = &rest[shown..];
                }
            }
        }
    }

    /// Appends what is still held back: a CR that ended the input. Call
    /// once, after the last file.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        if self.pending_cr {
            self.pending_cr = false;
            out.push(b'\r');
        }
    }

    #[inline]
    fn put_number(&mut self, out: &mut Vec<u8>) {
        self.line.append_to(out);
        self.line.advance();
    }

    /// A LF: numbered if it ends an empty line (`-n`), dropped if it ends
    /// the second empty line in a row (`-s`).
    #[inline]
    fn end_line(&mut self, out: &mut Vec<u8>) {
        self.newlines += 1;
        if self.newlines > 0 {
            if self.newlines >= 2 {
                self.newlines = 2;
                if self.squeeze_blank {
                    return;
                }
            }
            if self.number && !self.number_nonblank {
                self.put_number(out);
            }
        }
        if self.show_ends {
            out.push(b'$');
        }
        out.push(b'\n');
    }
}

/// Appends `rest[..len]`, with one copy of fixed size when it is short.
#[inline]
fn append_run(out: &mut Vec<u8>, rest: &[u8], len: usize) {
    match rest.first_chunk::<16>() {
        Some(block) if len <= 16 => append_prefix(out, block, len),
        _ => out.extend_from_slice(&rest[..len]),
    }
}

const ONES: u64 = u64::from_le_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// Marks the zero bytes of `x`: the lowest byte of the result with its
/// high bit set is the first zero byte of `x` (a borrow only disturbs the
/// bytes above it; higher marks may be false).
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The same for the bytes of `x` below `n` (`n` at most 0x80).
fn bytes_below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS
}

/// The index of the first special byte in `bytes` (LF and the
/// [`Specials`] given as `TAB`, `CR` and `NONPRINTING`), eight bytes at a
/// time. The lowest mark of each test is exact, so the lowest of all of
/// them is the first special byte. No branch depends on where in a word it
/// is.
#[inline]
fn find_special<const TAB: bool, const CR: bool, const NONPRINTING: bool>(
    bytes: &[u8],
) -> Option<usize> {
    let specials = Specials {
        tab: TAB,
        cr: CR,
        nonprinting: NONPRINTING,
    };
    let repeat = |b: u8| u64::from_le_bytes([b; 8]);
    let (words, tail) = bytes.as_chunks::<8>();
    for (i, word) in words.iter().enumerate() {
        let x = u64::from_le_bytes(*word);
        let mut marks = zero_bytes(x ^ repeat(b'\n'));
        if TAB {
            marks |= zero_bytes(x ^ repeat(b'\t'));
        }
        if CR {
            marks |= zero_bytes(x ^ repeat(b'\r'));
        }
        if NONPRINTING {
            marks |= (x & HIGHS) | bytes_below(x, b' ') | zero_bytes(x ^ repeat(0x7f));
        }
        if marks != 0 {
            return Some(i * 8 + (marks.trailing_zeros() / 8) as usize);
        }
    }
    let offset = words.len() * 8;
    tail.iter()
        .position(|&b| specials.contains(b))
        .map(|i| offset + i)
}

/// A byte in `-v` notation: TAB as is unless `show_tabs`, control bytes as
/// `^X`, DEL as `^?`, bytes with the high bit as `M-` and the rest.
fn put_visible(byte: u8, show_tabs: bool, out: &mut Vec<u8>) {
    if byte == b'\t' && !show_tabs {
        out.push(byte);
        return;
    }
    let mut low = byte;
    if byte >= 0x80 {
        out.extend_from_slice(b"M-");
        low = byte - 0x80;
    }
    match low {
        0..=31 => out.extend_from_slice(&[b'^', low + 64]),
        127 => out.extend_from_slice(b"^?"),
        _ => out.push(low),
    }
}

#[cfg(test)]
mod tests;
