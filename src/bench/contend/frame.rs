//! `--verify` for many writers and readers on one pipe: self-describing
//! messages, and each reader's account of them.
//!
//! A message is a run of 16-byte cells, each naming its writer, message
//! and position with a check: with several readers a large message is
//! shared out between their reads, so no reader can find message
//! boundaries by counting bytes, but every cell still names its message.
//! Each reader keeps a [`Tally`]; `tally::check` merges them. What counts
//! as interleaved, split, torn, lost or reordered: docs/contend.md.

use serde::{Deserialize, Serialize};

/// Bytes per cell; `--verify` message sizes are multiples of it.
pub(crate) const CELL: usize = 16;

/// The largest message sequence number a tally accepts: a larger one in
/// a cell whose check passed by chance is treated as a bad cell rather
/// than growing a bitmap without bound.
const MAX_SEQ: u64 = 1 << 36;

/// The 16-bit check of a cell (a splitmix64 finaliser over its fields).
/// Never matches an all-zero cell.
fn check_bits(writer: u16, seq: u64, index: u32) -> u16 {
    let mut x = seq ^ ((writer as u64) << 48 | (index as u64) << 8) ^ 0x5DEE_CE66_D1CE_F00D;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x >> 48) as u16
}

/// Fills `msg` (a multiple of [`CELL`] bytes) as message `seq` of writer
/// `writer`.
pub(crate) fn fill_message(msg: &mut [u8], writer: u16, seq: u64) {
    for (index, cell) in msg.chunks_exact_mut(CELL).enumerate() {
        let index = index as u32;
        let tag =
            (writer as u64) << 48 | (index as u64) << 16 | check_bits(writer, seq, index) as u64;
        cell[..8].copy_from_slice(&seq.to_le_bytes());
        cell[8..].copy_from_slice(&tag.to_le_bytes());
    }
}

/// The (writer, seq, index) a cell names, if its check holds.
fn decode(cell: &[u8]) -> Option<(u16, u64, u32)> {
    let seq = u64::from_le_bytes(cell[..8].try_into().ok()?);
    let tag = u64::from_le_bytes(cell[8..16].try_into().ok()?);
    let writer = (tag >> 48) as u16;
    let index = (tag >> 16) as u32;
    (check_bits(writer, seq, index) == tag as u16).then_some((writer, seq, index))
}

/// Consecutive cells of one message, as one reader received them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Piece {
    /// The writer.
    pub writer: u16,
    /// The message's sequence number.
    pub seq: u64,
    /// The first cell received.
    pub first: u32,
    /// How many consecutive cells.
    pub cells: u32,
}

/// The run of cells a reader is in the middle of.
#[derive(Debug, Clone, Copy)]
struct Run {
    piece: Piece,
    /// Whether the run continued across a `read` boundary.
    spans_reads: bool,
}

/// One reader's account of what it received.
#[derive(Debug, Clone)]
pub(crate) struct Tally {
    writers: usize,
    cells_per_msg: u32,
    sole_reader: bool,
    report: TallyReport,
    last_seq: Vec<Option<u64>>,
    run: Option<Run>,
    carry: Vec<u8>,
}

/// What one reader received, once its input ended (see [`Tally::finish`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TallyReport {
    /// Per writer, a bitmap (bit `seq`) of messages received whole.
    pub whole: Vec<Vec<u64>>,
    /// Messages received in part, or in several parts.
    pub pieces: Vec<Piece>,
    /// Whole messages that came in more than one `read`.
    pub split_whole: u64,
    /// Whole messages received a second time by this reader.
    pub duplicated_whole: u64,
    /// Cells whose check failed or that name no existing writer or cell.
    pub bad_cells: u64,
    /// Bytes at the end of the input that do not make a whole cell.
    pub stray_bytes: u64,
    /// Places inside one `read` where two messages were woven together.
    pub interleavings: u64,
    /// Messages older than one already seen from the same writer.
    pub reordered: u64,
}

impl Tally {
    /// A tally for `writers` writers sending messages of `msg_size` bytes
    /// (a multiple of [`CELL`]). A `sole_reader` sees the whole stream, so
    /// its read boundaries hide nothing: interleavings are counted across
    /// them too.
    pub(crate) fn new(writers: usize, msg_size: usize, sole_reader: bool) -> Tally {
        Tally {
            writers,
            cells_per_msg: (msg_size / CELL) as u32,
            sole_reader,
            report: TallyReport {
                whole: vec![Vec::new(); writers],
                ..TallyReport::default()
            },
            last_seq: vec![None; writers],
            run: None,
            carry: Vec::new(),
        }
    }

    /// Accounts for the bytes one `read` returned.
    pub(crate) fn feed(&mut self, mut data: &[u8]) {
        match &mut self.run {
            // A finished message cannot grow: account for it now, so it
            // does not count as spanning this read.
            Some(run) if run.piece.first + run.piece.cells == self.cells_per_msg => self.flush(),
            Some(run) => run.spans_reads = true,
            None => {}
        }
        // With other readers, what came before this read may be in their
        // hands: a switch of message here proves nothing.
        let mut at_read_start = !self.sole_reader;
        if !self.carry.is_empty() {
            let need = CELL - self.carry.len();
            let take = need.min(data.len());
            self.carry.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.carry.len() < CELL {
                return;
            }
            let cell = std::mem::take(&mut self.carry);
            self.cell(&cell, at_read_start);
            at_read_start = false;
        }
        let mut cells = data.chunks_exact(CELL);
        for cell in &mut cells {
            self.cell(cell, at_read_start);
            at_read_start = false;
        }
        self.carry.extend_from_slice(cells.remainder());
    }

    fn cell(&mut self, cell: &[u8], at_read_start: bool) {
        let decoded = decode(cell).filter(|&(w, seq, i)| {
            (w as usize) < self.writers && i < self.cells_per_msg && seq < MAX_SEQ
        });
        let Some((writer, seq, index)) = decoded else {
            self.report.bad_cells += 1;
            self.flush();
            return;
        };
        if let Some(run) = &mut self.run {
            let p = &mut run.piece;
            if p.writer == writer && p.seq == seq && p.first + p.cells == index {
                p.cells += 1;
                return;
            }
            let unfinished = p.first + p.cells < self.cells_per_msg;
            if !at_read_start && (unfinished || index != 0) {
                self.report.interleavings += 1;
            }
        } else if !at_read_start && index != 0 {
            self.report.interleavings += 1;
        }
        self.flush();
        let last = &mut self.last_seq[writer as usize];
        if last.is_some_and(|l| seq < l) {
            self.report.reordered += 1;
        }
        *last = Some(last.map_or(seq, |l| l.max(seq)));
        self.run = Some(Run {
            piece: Piece {
                writer,
                seq,
                first: index,
                cells: 1,
            },
            spans_reads: false,
        });
    }

    /// Ends the current run: a whole message goes into the bitmap, a part
    /// into the pieces.
    fn flush(&mut self) {
        let Some(Run { piece, spans_reads }) = self.run.take() else {
            return;
        };
        if piece.first != 0 || piece.cells != self.cells_per_msg {
            self.report.pieces.push(piece);
            return;
        }
        if spans_reads {
            self.report.split_whole += 1;
        }
        let bits = &mut self.report.whole[piece.writer as usize];
        let (word, bit) = ((piece.seq / 64) as usize, piece.seq % 64);
        if bits.len() <= word {
            bits.resize(word + 1, 0);
        }
        if bits[word] & (1 << bit) != 0 {
            self.report.duplicated_whole += 1;
        }
        bits[word] |= 1 << bit;
    }

    /// The account, once the input has ended.
    pub(crate) fn finish(mut self) -> TallyReport {
        self.flush();
        self.report.stray_bytes += self.carry.len() as u64;
        self.report
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::bench::contend) const MSG: usize = 64;

    pub(in crate::bench::contend) fn msg(writer: u16, seq: u64) -> Vec<u8> {
        let mut m = vec![0; MSG];
        fill_message(&mut m, writer, seq);
        m
    }

    pub(in crate::bench::contend) fn tally(reads: &[Vec<u8>], writers: usize) -> TallyReport {
        let mut t = Tally::new(writers, MSG, false);
        for r in reads {
            t.feed(r);
        }
        t.finish()
    }

    #[test]
    fn cells_name_their_place_and_zeros_never_pass() {
        let m = msg(3, 77);
        assert_eq!(decode(&m[16..32]), Some((3, 77, 1)));
        assert_eq!(decode(&[0; 16]), None);
        let mut bad = m.clone();
        bad[20] ^= 1;
        assert_eq!(decode(&bad[16..32]), None);
    }

    #[test]
    fn a_sole_reader_sees_interleaving_across_its_reads() {
        let (a, b) = (msg(0, 0), msg(1, 0));
        let reads = [a[..32].to_vec(), b.clone(), a[32..].to_vec()];
        let mut sole = Tally::new(2, MSG, true);
        for r in &reads {
            sole.feed(r);
        }
        assert_eq!(sole.finish().interleavings, 2);
        assert_eq!(
            tally(&reads, 2).interleavings,
            0,
            "one of several readers cannot tell"
        );
    }
}
