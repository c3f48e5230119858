//! A byte stream that can be checked anywhere: `--verify`.
//!
//! Byte `i` of the stream is byte `i % 8` of the little-endian `u64`
//! `i / 8 + 1`. Every 8-byte word names its own position, so a reader that
//! finds a wrong word can tell whether bytes were lost (the word is from
//! further ahead), duplicated or stale (from behind), or corrupted. The
//! `+ 1` keeps untouched, zero-filled pages from ever passing.

use std::fmt;

/// Fills `buf` with the stream bytes starting at stream offset `offset`.
pub(crate) fn fill_pattern(buf: &mut [u8], offset: u64) {
    let misalign = (offset % 8) as usize;
    let mut pos = 0;
    if misalign != 0 {
        let word = word_at(offset / 8).to_le_bytes();
        let take = (8 - misalign).min(buf.len());
        buf[..take].copy_from_slice(&word[misalign..misalign + take]);
        pos = take;
    }
    let mut index = (offset + pos as u64) / 8;
    let mut chunks = buf[pos..].chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&word_at(index).to_le_bytes());
        index += 1;
    }
    let rest = chunks.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&word_at(index).to_le_bytes()[..n]);
}

fn word_at(index: u64) -> u64 {
    index.wrapping_add(1)
}

/// The first place where received bytes differ from the stream.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mismatch {
    /// Stream offset of the first wrong byte.
    pub offset: u64,
    /// The byte that should be there.
    pub expected: u8,
    /// The byte received.
    pub found: u8,
    /// Stream offset the received 8-byte word belongs to, when the aligned
    /// word around `offset` was received whole and is a stream word.
    pub found_word_offset: Option<u64>,
}

impl Mismatch {
    /// What kind of damage this is, judged from the word found.
    pub fn kind(&self) -> &'static str {
        match self.found_word_offset {
            Some(found) if found > self.offset => "lost",
            Some(found) if found < self.offset => "duplicated or stale",
            _ => "wrong",
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "data {} at byte {}: expected 0x{:02x}, found 0x{:02x}",
            self.kind(),
            self.offset,
            self.expected,
            self.found
        )?;
        let aligned = self.offset / 8 * 8;
        match self.found_word_offset {
            Some(found) if found > aligned => write!(
                f,
                " (the bytes of offset {found} arrived: {} bytes missing)",
                found - aligned
            ),
            Some(found) if found < aligned => write!(
                f,
                " (the bytes of offset {found} arrived again, {} bytes behind)",
                aligned - found
            ),
            _ => Ok(()),
        }
    }
}

/// Checks received bytes against the stream, in order, across calls.
#[derive(Debug, Default)]
pub(crate) struct Verifier {
    offset: u64,
    expected: Vec<u8>,
}

impl Verifier {
    /// A verifier expecting the stream from offset 0.
    pub(crate) fn new() -> Verifier {
        Verifier::default()
    }

    /// Bytes checked so far (the double buffer's tests read it).
    #[cfg(test)]
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Checks the next received bytes.
    pub(crate) fn check(&mut self, received: &[u8]) -> Result<(), Mismatch> {
        self.expected.resize(received.len(), 0);
        fill_pattern(&mut self.expected, self.offset);
        if received != &self.expected[..] {
            let i = received
                .iter()
                .zip(&self.expected)
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            let offset = self.offset + i as u64;
            // Decode the aligned word around the bad byte, if we have all of it.
            let word_start = (offset / 8 * 8)
                .checked_sub(self.offset)
                .map(|s| s as usize);
            let found_word_offset = word_start
                .and_then(|s| received.get(s..s + 8))
                .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
                .and_then(|w| w.checked_sub(1))
                .and_then(|index| index.checked_mul(8))
                // A word from more than a TiB away is corruption, not a shift.
                .filter(|&found| found < offset.saturating_add(1 << 40));
            return Err(Mismatch {
                offset,
                expected: self.expected[i],
                found: received[i],
                found_word_offset,
            });
        }
        self.offset += received.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(offset: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        fill_pattern(&mut v, offset);
        v
    }

    #[test]
    fn pattern_is_the_same_however_it_is_cut() {
        let whole = stream(0, 1000);
        for cut in [0, 1, 3, 7, 8, 9, 500, 999, 1000] {
            let mut parts = stream(0, cut);
            parts.extend(stream(cut as u64, 1000 - cut));
            assert_eq!(parts, whole, "cut at {cut}");
        }
        assert_eq!(&whole[..8], &1u64.to_le_bytes());
        assert_eq!(&whole[8..16], &2u64.to_le_bytes());
    }

    #[test]
    fn verifier_accepts_the_stream_in_any_pieces() {
        let whole = stream(0, 100_000);
        let mut v = Verifier::new();
        for piece in whole.chunks(4093) {
            v.check(piece).unwrap();
        }
        assert_eq!(v.offset(), 100_000);
    }

    #[test]
    fn verifier_reports_lost_bytes() {
        let whole = stream(0, 4096);
        let mut received = whole[..1024].to_vec();
        received.extend_from_slice(&whole[2048..]);
        let err = Verifier::new().check(&received).unwrap_err();
        assert_eq!(err.offset, 1024);
        assert_eq!(err.found_word_offset, Some(2048));
        assert_eq!(err.kind(), "lost");
        assert!(err.to_string().contains("1024 bytes missing"), "{err}");
    }

    #[test]
    fn verifier_reports_duplicated_bytes() {
        let whole = stream(0, 4096);
        let mut received = whole[..2048].to_vec();
        received.extend_from_slice(&whole[1024..]);
        let err = Verifier::new().check(&received).unwrap_err();
        assert_eq!((err.offset, err.kind()), (2048, "duplicated or stale"));
    }

    #[test]
    fn verifier_reports_corruption_and_zero_pages() {
        let mut received = stream(0, 64);
        received[13] ^= 0xff;
        let err = Verifier::new().check(&received).unwrap_err();
        assert_eq!((err.offset, err.kind()), (13, "wrong"));
        let zeros = vec![0; 64];
        assert_eq!(Verifier::new().check(&zeros).unwrap_err().offset, 0);
    }
}
