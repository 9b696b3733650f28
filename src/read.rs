//! Reading file content within the read budget (SPEC §5, §9).
//!
//! [`Lines`] reads a file forward in large blocks and hands out batches of whole lines, so that a
//! tool can charge exactly the lines it looked at and drop the line that would cross the budget.
//! A line longer than the caller's hold limit comes out in pieces, so memory stays bounded by the
//! limits, never by the file.

use std::fs::File;
use std::io::Read;

use crate::error::{Error, Result};
use crate::limits::Budget;

/// Bytes asked of the kernel per read.
pub const BLOCK: usize = 64 * 1024;

/// A batch handed out by [`Lines::next_batch`].
#[derive(Debug, PartialEq, Eq)]
pub enum Batch<'a> {
    /// Whole lines, each ending in `\n`, except the file's last line when it has none.
    Lines(&'a [u8]),
    /// A piece of a line longer than the hold limit; the rest follows in later batches.
    Piece(&'a [u8]),
}

/// Forward reader of whole lines.
pub struct Lines {
    file: File,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// `buf[start..scanned]` holds no `\n`: a long line is searched once, not at every read.
    scanned: usize,
    /// Bytes handed out so far.
    consumed: u64,
    eof: bool,
    shown: String,
}

thread_local! {
    /// The buffer of the last reader on this thread, kept so that the next one (the next file of
    /// a search) need not allocate and zero a new one.
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Drop for Lines {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        if buf.len() <= 4 * BLOCK {
            SPARE.set(buf);
        }
    }
}

impl Lines {
    /// A reader of `file`; `shown` is the caller's path, for errors.
    pub fn new(file: File, shown: &str) -> Lines {
        Lines {
            file,
            buf: SPARE.take(),
            start: 0,
            end: 0,
            scanned: 0,
            consumed: 0,
            eof: false,
            shown: shown.to_string(),
        }
    }

    /// The next batch, or `None` at the end of the file. The previous batch is consumed.
    /// `hold` bounds how long a line may grow before it comes out in pieces (at least 1).
    ///
    /// # Errors
    /// `io:` when a read fails.
    pub fn next_batch(&mut self, hold: usize) -> Result<Option<Batch<'_>>> {
        let hold = hold.max(1);
        loop {
            let from = self.scanned.max(self.start);
            if let Some(last) = memchr::memrchr(b'\n', &self.buf[from..self.end]) {
                return Ok(Some(Batch::Lines(self.hand_out(from + last + 1))));
            }
            self.scanned = self.end;
            let pending = self.end - self.start;
            if self.eof {
                if pending == 0 {
                    return Ok(None);
                }
                return Ok(Some(Batch::Lines(self.hand_out(self.end))));
            }
            if pending >= hold {
                return Ok(Some(Batch::Piece(self.hand_out(self.end))));
            }
            self.fill(hold)?;
        }
    }

    /// Hands out the pending bytes up to `end`.
    fn hand_out(&mut self, end: usize) -> &[u8] {
        let start = self.start;
        self.start = end;
        self.scanned = end;
        self.consumed += (end - start) as u64;
        &self.buf[start..end]
    }

    /// Bytes handed out so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The first `n` bytes of the file (fewer when it is shorter), read ahead without consuming
    /// anything: they come out again in the batches. Call it before the first batch.
    ///
    /// # Errors
    /// `io:` when a read fails.
    pub fn head(&mut self, n: usize) -> Result<&[u8]> {
        while self.end - self.start < n && !self.eof {
            self.fill(usize::MAX)?;
        }
        let end = self.end.min(self.start + n);
        Ok(&self.buf[self.start..end])
    }

    /// Reads one more block after the pending bytes, compacting and growing the buffer as needed
    /// (never reading more than `hold - pending` bytes beyond a long pending line).
    fn fill(&mut self, hold: usize) -> Result<()> {
        let pending = self.end - self.start;
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.scanned -= self.start.min(self.scanned);
            self.start = 0;
            self.end = pending;
        }
        let want = BLOCK.min(hold.saturating_sub(pending)).max(1);
        if self.buf.len() < self.end + want {
            self.buf.resize(self.end + want, 0);
        }
        let n = loop {
            match self.file.read(&mut self.buf[self.end..self.end + want]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&self.shown, &e)),
            }
        };
        // A regular file reads short only at its end: no need to ask again.
        if n < want {
            self.eof = true;
        }
        self.end += n;
        Ok(())
    }
}

/// How long a line may grow before it is handed out in pieces, for a tool that prints what it
/// reads (cat, head): `room` bytes left in the output, `left` in the read budget, `remaining`
/// bytes of the file. When the rest of the file fits the budget, no line can cross it, so a long
/// line can go out piece by piece; otherwise it is held until it is known to fit (or to be cut by
/// the output cap, or to cross the budget), and memory stays bounded by those limits.
pub fn hold(room: usize, left: u64, remaining: u64) -> usize {
    let room = room.saturating_add(1);
    if remaining <= left {
        room.min(BLOCK)
    } else {
        room.min(
            usize::try_from(left)
                .unwrap_or(usize::MAX)
                .saturating_add(1),
        )
    }
}

/// Charges the longest run of whole lines at the start of `lines` that the budget allows, and
/// returns it, with `Some(limit error)` when not all of `lines` fit.
pub fn charge_lines<'a>(budget: &Budget, lines: &'a [u8]) -> (&'a [u8], Option<Error>) {
    if budget.charge_read(lines.len() as u64).is_ok() {
        return (lines, None);
    }
    let left = usize::try_from(budget.read_left()).unwrap_or(usize::MAX);
    let fit = match memchr::memrchr(b'\n', &lines[..left.min(lines.len())]) {
        Some(i) => i + 1,
        None => 0,
    };
    // The fitting prefix is within the budget by construction.
    let _ = budget.charge_read(fit as u64);
    (&lines[..fit], Some(budget.read_exhausted()))
}

/// Reads the whole file, charging every byte, and hands it out in blocks (wc, diff).
///
/// # Errors
/// `limit:` when the file passes the read budget (nothing of the crossing block is handed out),
/// `io:` when a read fails, or what `f` returns.
pub fn for_each_block(
    mut file: File,
    shown: &str,
    budget: &Budget,
    mut f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let mut buf = vec![0u8; BLOCK];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(shown, &e)),
        };
        budget.charge_read(n as u64)?;
        f(&buf[..n])?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, Write};

    fn file_with(data: &[u8]) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(data).unwrap();
        f.rewind().unwrap();
        f
    }

    fn batches(data: &[u8], hold: usize) -> Vec<(bool, Vec<u8>)> {
        let mut r = Lines::new(file_with(data), "f");
        let mut out = Vec::new();
        while let Some(b) = r.next_batch(hold).unwrap() {
            match b {
                Batch::Lines(l) => out.push((true, l.to_vec())),
                Batch::Piece(p) => out.push((false, p.to_vec())),
            }
        }
        out
    }

    #[test]
    fn batches_end_on_line_boundaries_and_keep_the_last_unterminated_line() {
        let b = batches(b"a\nb\nc", 1 << 20);
        assert_eq!(b, vec![(true, b"a\nb\n".to_vec()), (true, b"c".to_vec())]);
    }

    #[test]
    fn long_lines_come_out_in_pieces() {
        let b = batches(b"abcdefgh\nz\n", 4);
        let joined: Vec<u8> = b.iter().flat_map(|(_, v)| v.clone()).collect();
        assert_eq!(joined, b"abcdefgh\nz\n");
        assert!(!b[0].0, "the first batch is a piece of the long line");
    }

    #[test]
    fn a_long_line_is_scanned_once() {
        // 8 MiB without a newline, handed out in one piece: quadratic rescanning would take
        // minutes here.
        let data = vec![b'x'; 8 << 20];
        let mut r = Lines::new(file_with(&data), "f");
        match r.next_batch(usize::MAX).unwrap() {
            Some(Batch::Lines(l)) => assert_eq!(l.len(), data.len()),
            other => panic!("{:?}", other.map(|_| ())),
        }
        assert_eq!(r.consumed(), data.len() as u64);
    }

    #[test]
    fn hold_follows_the_limits() {
        assert_eq!(hold(100, 1000, 500), 101);
        assert_eq!(hold(usize::MAX, u64::MAX, 1 << 40), BLOCK);
        assert_eq!(hold(usize::MAX, 50, 1 << 40), 51);
    }

    #[test]
    fn head_reads_ahead_without_consuming() {
        let mut r = Lines::new(file_with(b"ab\0c\nd\n"), "f");
        assert_eq!(r.head(3).unwrap(), b"ab\0");
        assert_eq!(
            r.next_batch(1 << 20).unwrap(),
            Some(Batch::Lines(&b"ab\0c\nd\n"[..]))
        );
    }

    #[test]
    fn charge_lines_keeps_whole_lines_within_the_budget() {
        let budget = Budget::new(7, 0);
        let (fit, err) = charge_lines(&budget, b"abc\ndef\nghi\n");
        assert_eq!(fit, b"abc\n");
        assert!(err.is_some());
    }
}
