//! `--verify`'s judgement: the readers' tallies merged against what
//! each writer sent (see [`super::frame`] for what is counted).

use serde::{Deserialize, Serialize};

use super::frame::{CELL, Piece, TallyReport};

/// The verdict of `--verify` on one run (or, summed, on several).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// Whether every check passed.
    pub ok: bool,
    /// Whether messages are at most `PIPE_BUF` bytes, so atomic.
    pub atomic: bool,
    /// Messages the writers finished writing.
    pub messages_sent: u64,
    /// Messages received whole, exactly once (across all readers).
    pub messages_received: u64,
    /// Messages sent but not entirely received.
    pub lost: u64,
    /// Messages some part of which was received more than once.
    pub duplicated: u64,
    /// Messages received (in part) that no writer reported sending.
    pub unexpected: u64,
    /// Cells that fail their check or name no existing writer or cell.
    pub bad_cells: u64,
    /// Bytes left over that do not make a whole cell.
    pub stray_bytes: u64,
    /// Messages of a writer received after a newer one of the same writer.
    pub reordered: u64,
    /// Places inside one `read` where two messages were woven together.
    /// Allowed for messages larger than `PIPE_BUF` with several writers.
    pub interleavings: u64,
    /// Messages whose bytes came in more than one `read`. For atomic
    /// messages, these are torn.
    pub split_messages: u64,
}

impl VerifyReport {
    /// The sum of several runs' reports (`ok` only if all were).
    pub fn sum(reports: &[VerifyReport]) -> Option<VerifyReport> {
        let first = reports.first()?;
        let mut total = VerifyReport {
            ok: true,
            atomic: first.atomic,
            ..VerifyReport::default()
        };
        for r in reports {
            total.ok &= r.ok;
            total.messages_sent += r.messages_sent;
            total.messages_received += r.messages_received;
            total.lost += r.lost;
            total.duplicated += r.duplicated;
            total.unexpected += r.unexpected;
            total.bad_cells += r.bad_cells;
            total.stray_bytes += r.stray_bytes;
            total.reordered += r.reordered;
            total.interleavings += r.interleavings;
            total.split_messages += r.split_messages;
        }
        Some(total)
    }

    /// Messages torn: split messages, when messages are atomic.
    pub fn torn(&self) -> u64 {
        if self.atomic { self.split_messages } else { 0 }
    }
}

/// Merges the readers' tallies against what each writer sent
/// (`sent[w]` messages, numbered from 0) and judges the run.
///
/// `atomic`: messages are at most `PIPE_BUF` bytes. With one writer, or
/// atomic messages, any interleaving is an error; with atomic messages,
/// any split is.
pub(crate) fn check(
    tallies: &[TallyReport],
    sent: &[u64],
    msg_size: usize,
    atomic: bool,
) -> VerifyReport {
    let cells = (msg_size / CELL) as u32;
    let mut r = VerifyReport {
        atomic,
        messages_sent: sent.iter().sum(),
        ..VerifyReport::default()
    };
    for t in tallies {
        r.duplicated += t.duplicated_whole;
        r.bad_cells += t.bad_cells;
        r.stray_bytes += t.stray_bytes;
        r.interleavings += t.interleavings;
        r.reordered += t.reordered;
        r.split_messages += t.split_whole;
    }
    let mut pieces: Vec<Piece> = tallies
        .iter()
        .flat_map(|t| t.pieces.iter().copied())
        .collect();
    pieces.sort_unstable_by_key(|p| (p.writer, p.seq, p.first));
    for (w, &sent_w) in sent.iter().enumerate() {
        let whole = whole_counts(tallies, w);
        let mine_start = pieces.partition_point(|p| (p.writer as usize) < w);
        let mine_end = pieces.partition_point(|p| (p.writer as usize) <= w);
        let mine = &pieces[mine_start..mine_end];
        let mut next_piece = 0;
        let seqs = sent_w
            .max(whole.len() as u64)
            .max(mine.last().map_or(0, |p| p.seq + 1));
        for seq in 0..seqs {
            let start = next_piece;
            while next_piece < mine.len() && mine[next_piece].seq == seq {
                next_piece += 1;
            }
            let parts = &mine[start..next_piece];
            let times_whole = whole.get(seq as usize).copied().unwrap_or(0);
            if seq >= sent_w {
                r.unexpected += u64::from(times_whole > 0 || !parts.is_empty());
                continue;
            }
            match (times_whole, parts.is_empty()) {
                (1, true) => r.messages_received += 1,
                (0, true) => r.lost += 1,
                (0, false) => {
                    r.split_messages += 1;
                    match coverage(parts, cells) {
                        Coverage::Exact => r.messages_received += 1,
                        Coverage::Gaps => r.lost += 1,
                        Coverage::Overlaps => r.duplicated += 1,
                    }
                }
                _ => r.duplicated += 1,
            }
        }
    }
    let several_writers = sent.len() > 1;
    r.ok = r.lost == 0
        && r.duplicated == 0
        && r.unexpected == 0
        && r.bad_cells == 0
        && r.stray_bytes == 0
        && r.reordered == 0
        && r.messages_received == r.messages_sent
        && (r.interleavings == 0 || (several_writers && !atomic))
        && r.torn() == 0;
    r
}

/// How many readers received each message of writer `w` whole.
fn whole_counts(tallies: &[TallyReport], w: usize) -> Vec<u32> {
    let mut counts = Vec::new();
    for bits in tallies.iter().filter_map(|t| t.whole.get(w)) {
        if counts.len() < bits.len() * 64 {
            counts.resize(bits.len() * 64, 0);
        }
        for (i, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let bit = word.trailing_zeros() as usize;
                counts[i * 64 + bit] += 1;
                word &= word - 1;
            }
        }
    }
    counts
}

enum Coverage {
    Exact,
    Gaps,
    Overlaps,
}

/// Whether `parts` (sorted by first cell) tile cells `0..cells` exactly.
fn coverage(parts: &[Piece], cells: u32) -> Coverage {
    let mut pos = 0u32;
    let mut overlaps = false;
    for p in parts {
        if p.first > pos {
            return Coverage::Gaps;
        }
        overlaps |= p.first < pos;
        pos = pos.max(p.first + p.cells);
    }
    match (pos < cells, overlaps) {
        (true, _) => Coverage::Gaps,
        (false, true) => Coverage::Overlaps,
        (false, false) => Coverage::Exact,
    }
}

#[cfg(test)]
mod tests {
    use super::super::frame::tests::{MSG, msg, tally};
    use super::*;

    #[test]
    fn whole_messages_from_one_reader_pass() {
        let reads: Vec<_> = (0..5).map(|s| msg(0, s)).collect();
        let r = check(&[tally(&reads, 1)], &[5], MSG, true);
        assert!(r.ok, "{r:?}");
        assert_eq!((r.messages_received, r.split_messages), (5, 0));
    }

    #[test]
    fn a_lost_and_a_duplicated_message_are_found() {
        let reads = vec![msg(0, 0), msg(0, 2), msg(0, 2)];
        let r = check(&[tally(&reads, 1)], &[3], MSG, true);
        assert!(!r.ok);
        assert_eq!((r.lost, r.duplicated), (1, 1), "{r:?}");
    }

    #[test]
    fn duplicates_across_readers_are_found() {
        let a = tally(&[msg(0, 0), msg(0, 1)], 1);
        let b = tally(&[msg(0, 1)], 1);
        let r = check(&[a, b], &[2], MSG, true);
        assert_eq!((r.duplicated, r.messages_received), (1, 1), "{r:?}");
    }

    #[test]
    fn a_message_shared_between_two_readers_is_split_not_lost() {
        let m = msg(0, 0);
        let a = tally(&[m[..32].to_vec()], 1);
        let b = tally(&[[&m[32..], &msg(0, 1)[..]].concat()], 1);
        let r = check(&[a, b], &[2], MSG, false);
        assert!(r.ok, "{r:?}");
        assert_eq!((r.split_messages, r.interleavings), (1, 0));
        // The same split is tearing when messages are atomic.
        let a = tally(&[m[..32].to_vec()], 1);
        let b = tally(&[m[32..].to_vec()], 1);
        assert!(!check(&[a, b], &[1], MSG, true).ok);
    }

    #[test]
    fn interleaving_inside_one_read_is_seen_and_allowed_only_when_it_may_happen() {
        let (a, b) = (msg(0, 0), msg(1, 0));
        let woven = [&a[..32], &b[..], &a[32..]].concat();
        let t = tally(std::slice::from_ref(&woven), 2);
        assert_eq!(t.interleavings, 2, "{t:?}");
        let r = check(&[t], &[1, 1], MSG, false);
        assert!(r.ok, "{r:?}");
        assert_eq!((r.messages_received, r.split_messages), (2, 1));
        // Not allowed for atomic sizes.
        assert!(!check(&[tally(&[woven], 2)], &[1, 1], MSG, true).ok);
    }

    #[test]
    fn one_writer_may_not_interleave_with_itself() {
        let (a, b) = (msg(0, 0), msg(0, 1));
        let woven = [&a[..32], &b[..], &a[32..]].concat();
        let r = check(&[tally(&[woven], 1)], &[2], MSG, false);
        assert!(!r.ok);
        assert!(r.reordered > 0 && r.interleavings > 0, "{r:?}");
    }

    #[test]
    fn corruption_reads_as_bad_cells_and_loss() {
        let mut m = msg(0, 0);
        m[40] ^= 0x80;
        let r = check(&[tally(&[m], 1)], &[1], MSG, true);
        assert_eq!(r.bad_cells, 1, "{r:?}");
        assert_eq!(r.lost, 1);
        assert!(!r.ok);
    }

    #[test]
    fn messages_never_sent_are_unexpected() {
        let r = check(&[tally(&[msg(0, 0), msg(0, 1)], 1)], &[1], MSG, true);
        assert_eq!((r.unexpected, r.messages_received), (1, 1), "{r:?}");
        assert!(!r.ok);
    }

    #[test]
    fn reads_that_end_inside_a_cell_are_reassembled() {
        let m = msg(0, 0);
        let r = check(
            &[tally(&[m[..5].to_vec(), m[5..].to_vec()], 1)],
            &[1],
            MSG,
            false,
        );
        assert!(r.ok, "{r:?}");
        let t = tally(&[m[..5].to_vec()], 1);
        assert_eq!(t.stray_bytes, 5);
    }

    #[test]
    fn reports_of_runs_add_up() {
        let one = VerifyReport {
            ok: true,
            messages_sent: 3,
            interleavings: 1,
            ..VerifyReport::default()
        };
        let bad = VerifyReport {
            ok: false,
            lost: 2,
            ..one
        };
        let sum = VerifyReport::sum(&[one, bad]).unwrap();
        assert!(!sum.ok);
        assert_eq!((sum.messages_sent, sum.lost, sum.interleavings), (6, 2, 2));
        assert_eq!(VerifyReport::sum(&[]), None);
    }
}
