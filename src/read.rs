//! Reading file content within the read budget (docs/contract.md#limits).
//!
//! [`Lines`] reads forward in large blocks and hands out batches of whole lines, so that a tool can
//! charge exactly the lines it looked at and leave out the line that would cross the budget. A
//! line longer than a block comes out in pieces, so memory stays bounded by the block size, never
//! by the file or the limits: whether such a line fits the budget is learnt by looking ahead with
//! positioned reads ([`Ahead::line_ends_before`]), not by holding it.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;

use crate::error::{Error, Result};
use crate::limits::Budget;
use crate::redact::{KEYWORD_MAX, holds_keyword};

mod decode;
mod filter;
mod scout;

pub use decode::Encoding;
pub use filter::Filter;
use scout::Scout;

/// A regular file of `size` bytes as the tools read its text.
///
/// It is the file itself, or, when it starts with a UTF-16 or UTF-32 byte order mark, its text
/// decoded to UTF-8 (a stream, whose size is not known: `None`). Returns the reader, its size, and
/// the encoding it was decoded from.
///
/// # Errors
/// `io:` naming `shown` when the file cannot be read or no thread can decode it.
pub fn text_of(
    file: File,
    size: u64,
    shown: &str,
) -> Result<(File, Option<u64>, Option<Encoding>)> {
    match decode::sniff(&file, shown)? {
        None => Ok((file, Some(size), None)),
        Some(e) => Ok((decode::decoded(file, e, shown)?, None, Some(e))),
    }
}

/// The text of `file`, whose first bytes declared `encoding`, decoded to UTF-8 (see
/// [`text_of`]), for a reader that found the mark in what it had read already.
///
/// # Errors
/// `io:` naming `shown` when no pipe or thread can decode it.
pub fn decoded(file: File, encoding: Encoding, shown: &str) -> Result<File> {
    decode::decoded(file, encoding, shown)
}

/// The note of a file read through [`text_of`] that was decoded from `encoding`.
pub fn decoded_note(shown: &str, encoding: Encoding) -> String {
    format!(
        "{shown}: decoded from {} (the file starts with its byte order mark)",
        encoding.name()
    )
}

/// Bytes asked of the kernel per read.
pub const BLOCK: usize = 64 * 1024;

/// The least a read of a regular file asks for: one page.
const PAGE: usize = 4096;

/// How much of a line longer than a block a reader holds at the most, as it will be shown.
///
/// A line is held when the reader cannot tell in advance whether it ends (or reaches the cap)
/// before the read budget runs out (a line that crosses the budget is not shown, one that reaches
/// the cap first is cut there; docs/contract.md#limits), and grep keeps a matching line of a pipe,
/// which it cannot read again, to print it. A pipe cannot be looked ahead in; and where redaction
/// shortens a line, a cap smaller than the budget left need not be reached first. A held line goes
/// out when it reaches the cap, so under the default cap (32 KiB) this bound is never reached; past
/// it, possible only with a cap raised above it, cat and head show the line as it comes and grep
/// shows its start with a note, so that memory stays well within its bound
/// (docs/contract.md#limits) whatever the limits.
pub const HOLD: usize = 4 * 1024 * 1024;

/// Bytes at the start of a file that decide whether it is binary, for grep and diff alike
/// (docs/contract.md#tools; ripgrep and GNU diff look at the start of a file too).
pub const BINARY_PROBE: usize = 8 * 1024;

/// Whether `head`, the first [`BINARY_PROBE`] bytes of a file (or all of a shorter one), marks
/// the file as binary: it holds a NUL byte, as ripgrep and GNU grep decide.
pub fn is_binary(head: &[u8]) -> bool {
    memchr::memchr(0, head).is_some()
}

/// A batch handed out by [`Lines::next_batch`].
#[derive(Debug, PartialEq, Eq)]
pub enum Batch<'a> {
    /// Whole lines, each ending in `\n`, except the input's last line when it has none.
    Lines(&'a [u8]),
    /// A piece of a line longer than the hold limit; the rest follows in later batches.
    Piece(&'a [u8]),
}

/// Forward reader of whole lines, from a regular file or from standard input.
pub struct Lines {
    file: File,
    /// The file's size when it is a regular file (positioned reads are possible then).
    size: Option<u64>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// `buf[start..scanned]` holds no `\n`: a long line is searched once, not at every read.
    scanned: usize,
    /// Bytes handed out so far (the input's offset of `buf[start]`).
    consumed: u64,
    eof: bool,
    shown: String,
    /// No redaction keyword lies wholly within `buf[free..end]`: what the search of the bytes as
    /// they were read found ([`Lines::scout`]; without a scout nothing is searched, and this is
    /// `end`).
    free: usize,
    /// The second thread that reads and searches every other chunk, when there is one.
    scout: Option<Scout>,
    /// The offset where the input ends for this reader ([`Lines::ending_at`]).
    stop_at: Option<u64>,
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
    /// A reader of the regular file `file` of `size` bytes (or of a pipe when `size` is `None`);
    /// `shown` is the caller's path, for errors.
    pub fn new(file: File, size: Option<u64>, shown: &str) -> Lines {
        Lines {
            file,
            size,
            buf: SPARE.take(),
            start: 0,
            end: 0,
            scanned: 0,
            consumed: 0,
            eof: false,
            shown: shown.to_string(),
            free: 0,
            scout: None,
            stop_at: None,
        }
    }

    /// From here on, reads the regular file in chunks and searches each for redaction keywords
    /// as it is read, with every other chunk read and searched on a second thread (see
    /// `read/scout.rs`): [`Lines::next_searched`] tells which batches hold none. Does nothing
    /// for a pipe, for a file with less than `at_least` bytes left, on a machine with a single
    /// core, or when the thread cannot start.
    pub fn scout(&mut self, at_least: u64) {
        let left = self
            .size
            .map_or(0, |size| size.saturating_sub(self.read_to()));
        if self.scout.is_none()
            && left >= at_least
            && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
        {
            self.start_scout(scout::CHUNK);
        }
    }

    /// Starts a scout in chunks of `chunk` bytes from where reading goes on.
    fn start_scout(&mut self, chunk: usize) {
        self.scout = Scout::start(&self.file, self.read_to(), chunk);
    }

    /// The input's offset of the next byte to read (after the pending bytes).
    fn read_to(&self) -> u64 {
        self.consumed + (self.end - self.start) as u64
    }

    /// A reader of the regular file `file` of `size` bytes from `offset` on, as a reader that had
    /// handed out `offset` bytes would go on.
    ///
    /// # Errors
    /// `io:` when the file cannot be positioned.
    pub fn resume(mut file: File, size: u64, offset: u64, shown: &str) -> Result<Lines> {
        use std::io::{Seek, SeekFrom};
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| Error::io(shown, &e))?;
        let mut lines = Lines::new(file, Some(size), shown);
        lines.consumed = offset;
        Ok(lines)
    }

    /// This reader, ending at offset `end` however far the file goes on: what tail shows is the
    /// file as it was when tail found its end, also while it grows (docs/contract.md#tools).
    pub fn ending_at(mut self, end: u64) -> Lines {
        self.stop_at = Some(end);
        self
    }

    /// The next batch, or `None` at the end of the input. The previous batch is consumed.
    /// `hold` bounds how long a line may grow before it comes out in pieces (at least 1).
    ///
    /// # Errors
    /// `io:` when a read fails.
    pub fn next_batch(&mut self, hold: usize) -> Result<Option<Batch<'_>>> {
        Ok(self.next_searched(hold)?.map(|(batch, _)| batch))
    }

    /// [`Lines::next_batch`], and whether the batch is known to hold no redaction keyword: its
    /// lines were searched as they were read ([`Lines::scout`]). False when that is not known,
    /// and for a piece of a long line.
    ///
    /// # Errors
    /// `io:` when a read fails.
    pub fn next_searched(&mut self, hold: usize) -> Result<Option<(Batch<'_>, bool)>> {
        let hold = hold.max(1);
        loop {
            // A batch ends within `hold` bytes of its start, also when a scout's chunk put more
            // in the buffer: a line as long as `hold` comes out in pieces, whoever read it.
            let limit = self.end.min(self.start.saturating_add(hold));
            let from = self.scanned.max(self.start).min(limit);
            let keyword_free = self.free <= self.start;
            if let Some(last) = memchr::memrchr(b'\n', &self.buf[from..limit]) {
                let lines = self.hand_out(from + last + 1);
                return Ok(Some((Batch::Lines(lines), keyword_free)));
            }
            self.scanned = self.scanned.max(limit);
            let pending = self.end - self.start;
            if self.eof {
                if pending == 0 {
                    return Ok(None);
                }
                return Ok(Some((Batch::Lines(self.hand_out(self.end)), keyword_free)));
            }
            if pending >= hold {
                let start = self.start;
                self.start += hold;
                self.consumed += hold as u64;
                return Ok(Some((Batch::Piece(&self.buf[start..self.start]), false)));
            }
            self.fill(hold)?;
        }
    }

    /// [`Lines::next_batch`], and whether the batch is known to be the input's last. A regular
    /// file read up to the size it had when opened is read on once before the batch is handed
    /// out: the read that tells its end (a read of 0) then comes before its last batch rather
    /// than after it, and the file is read as often as it would be anyway. So the last batch of
    /// a regular file whose lines fit a block is known as such; otherwise (a pipe, a file that
    /// grew, a line longer than a block) the batch after it is `None`.
    ///
    /// # Errors
    /// `io:` when a read fails.
    pub fn next_batch_and_end(&mut self, hold: usize) -> Result<Option<(Batch<'_>, bool)>> {
        if !self.eof
            && self.scout.is_none()
            && self.stop_at.is_none()
            && let Some(size) = self.size
        {
            // The read the batch needs first, as `next_searched` would make it.
            if self.start == self.end && self.read_to() < size {
                self.fill(hold.max(1))?;
            }
            if !self.eof && self.read_to() >= size {
                self.fill(hold.max(1))?;
            }
        }
        let (piece, len) = match self.next_searched(hold)? {
            None => return Ok(None),
            Some((Batch::Lines(b), _)) => (false, b.len()),
            Some((Batch::Piece(b), _)) => (true, b.len()),
        };
        let last = self.eof && self.start == self.end;
        let bytes = &self.buf[self.start - len..self.start];
        let batch = if piece {
            Batch::Piece(bytes)
        } else {
            Batch::Lines(bytes)
        };
        Ok(Some((batch, last)))
    }

    /// Hands out the pending bytes up to `end`.
    fn hand_out(&mut self, end: usize) -> &[u8] {
        let start = self.start;
        self.start = end;
        self.scanned = end;
        self.consumed += (end - start) as u64;
        &self.buf[start..end]
    }

    /// Gives back the last `n` bytes of the batch just handed out: the next batch starts with
    /// them.
    pub fn unread(&mut self, n: usize) {
        let n = n.min(self.start);
        self.start -= n;
        self.scanned = self.start;
        self.consumed -= n as u64;
    }

    /// Bytes handed out so far: the offset, in the input, of the next batch.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The input itself, for a reader that [`Lines::resume`]s later where this one stopped (a
    /// second handle: this reader may have read ahead, so the resumer positions it).
    ///
    /// # Errors
    /// `io:` when the handle cannot be duplicated.
    pub fn into_file(self) -> Result<File> {
        self.file
            .try_clone()
            .map_err(|e| Error::io(&self.shown, &e))
    }

    /// The input's size, when it is a regular file.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// The first `n` bytes of the input (fewer when it is shorter), read ahead without consuming
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

    /// A second handle on the input for positioned reads that do not disturb this reader: looking
    /// ahead and counting lines again ([`Ahead`]).
    ///
    /// # Errors
    /// `io:` when the handle cannot be duplicated.
    pub fn ahead(&self) -> Result<Ahead> {
        let file = self
            .file
            .try_clone()
            .map_err(|e| Error::io(&self.shown, &e))?;
        Ok(Ahead {
            file,
            size: self.size,
            shown: self.shown.clone(),
        })
    }

    /// Reads one more block after the pending bytes, compacting and growing the buffer as needed
    /// (never reading more than `hold - pending` bytes beyond a long pending line), or with a
    /// scout, the next chunk whole ([`Lines::next_searched`] still hands out at most `hold`
    /// bytes at a time).
    fn fill(&mut self, hold: usize) -> Result<()> {
        let pending = self.end - self.start;
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.scanned -= self.start.min(self.scanned);
            self.free = self.free.max(self.start) - self.start;
            self.start = 0;
            self.end = pending;
        }
        if self.scout.is_some() {
            return self.fill_chunk();
        }
        let mut want = BLOCK.min(hold.saturating_sub(pending)).max(1);
        if let Some(size) = self.size {
            // A small file needs no whole block made and zeroed; one byte past its size still
            // tells its end, and a page is the least a read is worth (the file may grow).
            let left = usize::try_from(size.saturating_sub(self.read_to())).unwrap_or(usize::MAX);
            want = want.min(left.saturating_add(1).max(PAGE));
        }
        if let Some(stop) = self.stop_at {
            want = want.min(usize::try_from(stop.saturating_sub(self.read_to())).unwrap_or(want));
            if want == 0 {
                self.eof = true;
                return Ok(());
            }
        }
        if self.buf.len() < self.end + want {
            self.buf.resize(self.end + want, 0);
        }
        let n = loop {
            match self.file.read(&mut self.buf[self.end..self.end + want]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(&self.shown, &e)),
            }
        };
        // Only a read of 0 ends the input. A pipe reads short whenever its writer paused, and so
        // may a regular file before its end (FUSE, NFS, a file that grows while it is read).
        if n == 0 {
            self.eof = true;
        }
        self.end += n;
        self.free = self.end;
        Ok(())
    }

    /// Appends the scout's next chunk, searched. A chunk that ends short ends the scout: the
    /// reader goes on with plain reads from there, which alone tell the end of the input.
    fn fill_chunk(&mut self) -> Result<()> {
        let Some(scout) = &mut self.scout else {
            return Ok(());
        };
        let size = scout.size();
        if self.buf.len() < self.end + size {
            self.buf.resize(self.end + size, 0);
        }
        let from = self.end;
        let (n, keyword_free) = scout
            .next_chunk(&self.file, &mut self.buf[from..])
            .map_err(|e| Error::io(&self.shown, &e))?;
        self.end += n;
        if keyword_free {
            // The chunk and the bytes before it each hold no keyword: one may still lie across
            // the seam between them.
            let seam = &self.buf[self.free.max(from.saturating_sub(KEYWORD_MAX - 1))
                ..self.end.min(from + KEYWORD_MAX - 1)];
            if holds_keyword(seam) {
                self.free = from;
            }
        } else {
            self.free = self.end;
        }
        if n < size {
            use std::io::{Seek, SeekFrom};
            // Where this chunk's bytes end: the scout's offset is the next chunk's.
            let at = scout.offset() - (size - n) as u64;
            self.scout = None;
            self.file
                .seek(SeekFrom::Start(at))
                .map_err(|e| Error::io(&self.shown, &e))?;
        }
        Ok(())
    }
}

/// Positioned reads of a regular file beside a [`Lines`] reader of it.
pub struct Ahead {
    file: File,
    size: Option<u64>,
    shown: String,
}

impl Ahead {
    /// Whether the line that starts or continues at input offset `from` (its bytes before `from`
    /// hold no `\n`) ends, with its `\n` or the end of the input, at an offset of at most `limit`.
    /// Looks ahead in blocks without holding the line: this is how a line longer than a block is
    /// known to fit the read budget before any of it is shown. `None` for an input that cannot be
    /// read at offsets (a pipe).
    ///
    /// # Errors
    /// `io:` when a read fails.
    pub fn line_ends_before(&self, from: u64, limit: u64) -> Result<Option<bool>> {
        let Some(size) = self.size else {
            return Ok(None);
        };
        if size <= limit {
            return Ok(Some(true));
        }
        let mut block = vec![0u8; BLOCK];
        let mut at = from;
        while at < limit {
            let want = BLOCK.min(usize::try_from(limit - at).unwrap_or(BLOCK));
            let n = read_at(&self.file, &mut block[..want], at, &self.shown)?;
            if n == 0 {
                return Ok(Some(true));
            }
            if memchr::memchr(b'\n', &block[..n]).is_some() {
                return Ok(Some(true));
            }
            at += n as u64;
        }
        Ok(Some(false))
    }

    /// Whether the input can be read again at offsets (a regular file; not a pipe).
    pub fn can_read_again(&self) -> bool {
        self.size.is_some()
    }

    /// Fills `buf` from offset `at` ([`read_at`]: fewer bytes only at the end of the input); 0 at
    /// the end of the input or for an input that cannot be read at offsets.
    ///
    /// # Errors
    /// `io:` when the read fails.
    pub fn read(&self, buf: &mut [u8], at: u64) -> Result<usize> {
        if self.size.is_none() {
            return Ok(0);
        }
        read_at(&self.file, buf, at, &self.shown)
    }

    /// Counts the `\n` bytes of the input between offsets `from` and `to`, reading them again: a
    /// tool that showed blocks without counting learns its line number only when it needs it.
    /// `None` for an input that cannot be read again (a pipe).
    ///
    /// # Errors
    /// `io:` when a read fails.
    pub fn count_lines(&self, from: u64, to: u64) -> Result<Option<u64>> {
        if self.size.is_none() {
            return Ok(None);
        }
        let mut block = vec![0u8; BLOCK];
        let (mut at, mut count) = (from, 0u64);
        while at < to {
            let want = BLOCK.min(usize::try_from(to - at).unwrap_or(BLOCK));
            let n = read_at(&self.file, &mut block[..want], at, &self.shown)?;
            if n == 0 {
                break;
            }
            count += memchr::memchr_iter(b'\n', &block[..n]).count() as u64;
            at += n as u64;
        }
        Ok(Some(count))
    }
}

/// Positioned reads at offset `at` until `buf` is full or the input ends.
///
/// An interrupted read is retried. Returns the bytes read: fewer than `buf.len()` only at the end
/// of the input. One short read says nothing about the end (a regular file may read short before it
/// on FUSE or NFS, or while it grows); only a read of 0 does.
///
/// # Errors
/// `io:` naming `shown` when a read fails.
pub fn read_at(file: &File, buf: &mut [u8], at: u64, shown: &str) -> Result<usize> {
    fill_at(buf, at, |b, o| file.read_at(b, o)).map_err(|e| Error::io(shown, &e))
}

/// [`read_at`]'s loop over any positioned `read`.
fn fill_at(
    buf: &mut [u8],
    at: u64,
    mut read: impl FnMut(&mut [u8], u64) -> std::io::Result<usize>,
) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match read(&mut buf[done..], at + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
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

/// Reads the whole input, charging every byte, and hands it out in blocks (wc, diff).
///
/// # Errors
/// `limit:` when the input passes the read budget (nothing of the crossing block is handed out),
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

    fn file_with(data: &[u8]) -> (File, Option<u64>) {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(data).unwrap();
        f.rewind().unwrap();
        (f, Some(data.len() as u64))
    }

    fn reader(data: &[u8]) -> Lines {
        let (f, size) = file_with(data);
        Lines::new(f, size, "f")
    }

    fn batches(data: &[u8], hold: usize) -> Vec<(bool, Vec<u8>)> {
        let mut r = reader(data);
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
    fn the_last_batch_is_told_and_a_file_grown_since_it_was_opened_is_read_on() {
        let ends = |r: &mut Lines| {
            let mut out = Vec::new();
            while let Some((b, last)) = r.next_batch_and_end(1 << 20).unwrap() {
                let (Batch::Lines(l) | Batch::Piece(l)) = b;
                out.push((l.to_vec(), last));
            }
            out
        };
        assert_eq!(
            ends(&mut reader(b"a\nb\n")),
            vec![(b"a\nb\n".to_vec(), true)]
        );
        // An unterminated last line comes after the lines before it.
        assert_eq!(
            ends(&mut reader(b"a\nb")),
            vec![(b"a\n".to_vec(), false), (b"b".to_vec(), true)]
        );
        // The size known at the open is not the end: what the file holds past it is read too.
        let (f, _) = file_with(b"a\nb\nc\n");
        let mut r = Lines::new(f, Some(2), "f");
        let got = ends(&mut r);
        let joined: Vec<u8> = got.iter().flat_map(|(l, _)| l.clone()).collect();
        assert_eq!(joined, b"a\nb\nc\n");
        assert!(got.last().unwrap().1 && got.iter().rev().skip(1).all(|(_, last)| !last));
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
        let mut r = reader(&data);
        match r.next_batch(usize::MAX).unwrap() {
            Some(Batch::Lines(l)) => assert_eq!(l.len(), data.len()),
            other => panic!("{:?}", other.map(|_| ())),
        }
        assert_eq!(r.consumed(), data.len() as u64);
    }

    #[test]
    fn unread_gives_back_the_end_of_a_batch() {
        let mut r = reader(b"a\nb\nc\n");
        assert_eq!(
            r.next_batch(BLOCK).unwrap(),
            Some(Batch::Lines(&b"a\nb\nc\n"[..]))
        );
        r.unread(4);
        assert_eq!(r.consumed(), 2);
        assert_eq!(
            r.next_batch(BLOCK).unwrap(),
            Some(Batch::Lines(&b"b\nc\n"[..]))
        );
    }

    #[test]
    fn look_ahead_finds_where_a_long_line_ends() {
        let mut data = vec![b'x'; 3 * BLOCK];
        data.push(b'\n');
        data.extend_from_slice(b"next\n");
        let mut r = reader(&data);
        assert!(matches!(
            r.next_batch(BLOCK).unwrap(),
            Some(Batch::Piece(_))
        ));
        let ahead = r.ahead().unwrap();
        let end = 3 * BLOCK as u64 + 1;
        assert_eq!(
            ahead.line_ends_before(BLOCK as u64, end).unwrap(),
            Some(true)
        );
        assert_eq!(
            ahead.line_ends_before(BLOCK as u64, end - 1).unwrap(),
            Some(false)
        );
        assert_eq!(ahead.count_lines(0, data.len() as u64).unwrap(), Some(2));
    }

    #[test]
    fn head_reads_ahead_without_consuming() {
        let mut r = reader(b"ab\0c\nd\n");
        assert_eq!(r.head(3).unwrap(), b"ab\0");
        assert_eq!(
            r.next_batch(1 << 20).unwrap(),
            Some(Batch::Lines(&b"ab\0c\nd\n"[..]))
        );
    }

    /// A file whose every read returns one of `pieces` (a `SOCK_SEQPACKET` socket hands out one
    /// message per read), then 0: it reads short before its end, as a file on FUSE or NFS may.
    fn short_reads(pieces: &[&[u8]]) -> File {
        let mut fds = [0; 2];
        // SAFETY: socketpair writes two new descriptors into `fds`, which we then own.
        let made = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        assert_eq!(made, 0, "socketpair: {}", std::io::Error::last_os_error());
        // SAFETY: the descriptors are fresh and owned by nothing else.
        let (reader, writer) = unsafe {
            use std::os::fd::FromRawFd;
            (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1]))
        };
        for p in pieces {
            assert_eq!((&writer).write(p).unwrap(), p.len());
        }
        reader
    }

    #[test]
    fn a_short_read_is_not_the_end_of_a_file() {
        let pieces: &[&[u8]] = &[b"one\ntw", b"o\nthr", b"ee\nfour"];
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        let mut r = Lines::new(short_reads(pieces), Some(total as u64), "f");
        let mut joined = Vec::new();
        while let Some(b) = r.next_batch(BLOCK).unwrap() {
            match b {
                Batch::Lines(l) | Batch::Piece(l) => joined.extend_from_slice(l),
            }
        }
        assert_eq!(joined, b"one\ntwo\nthree\nfour");
        // The binary probe reads past short reads too.
        let mut r = Lines::new(short_reads(&[b"ab", b"c\0d"]), Some(5), "f");
        assert_eq!(r.head(BINARY_PROBE).unwrap(), b"abc\0d");
    }

    #[test]
    fn positioned_reads_go_on_past_a_short_read() {
        let data: Vec<u8> = (0..=255).collect();
        // At most 7 bytes per read, as a filesystem that reads short might answer.
        let read = |buf: &mut [u8], at: u64| -> std::io::Result<usize> {
            let from = (at as usize).min(data.len());
            let n = buf.len().min(7).min(data.len() - from);
            buf[..n].copy_from_slice(&data[from..from + n]);
            Ok(n)
        };
        let mut buf = [0u8; 100];
        assert_eq!(fill_at(&mut buf, 10, read).unwrap(), 100);
        assert_eq!(buf[..], data[10..110]);
        // Fewer only at the end of the input.
        assert_eq!(fill_at(&mut buf, 200, read).unwrap(), 56);
        assert_eq!(buf[..56], data[200..]);
    }

    #[test]
    fn charge_lines_keeps_whole_lines_within_the_budget() {
        let budget = Budget::new(7, 0);
        let (fit, err) = charge_lines(&budget, b"abc\ndef\nghi\n");
        assert_eq!(fit, b"abc\n");
        assert!(err.is_some());
    }

    /// The batches of `data` from offset `from` on as a reader with a scout in chunks of `chunk`
    /// bytes hands them out: whether each is whole lines, whether the reader called it free of
    /// keywords, and its bytes.
    fn scouted(data: &[u8], from: u64, chunk: usize, hold: usize) -> Vec<(bool, bool, Vec<u8>)> {
        let (f, size) = file_with(data);
        let mut r = Lines::resume(f, size.unwrap(), from, "f").unwrap();
        r.start_scout(chunk);
        assert!(r.scout.is_some(), "the scout starts");
        let mut out = Vec::new();
        while let Some((b, free)) = r.next_searched(hold).unwrap() {
            match b {
                Batch::Lines(l) => out.push((true, free, l.to_vec())),
                Batch::Piece(p) => out.push((false, free, p.to_vec())),
            }
        }
        out
    }

    /// `count` lines, each its number right-aligned to `width`.
    fn numbered(count: usize, width: usize) -> Vec<u8> {
        (0..count)
            .flat_map(|i| format!("{i:>width$}\n").into_bytes())
            .collect()
    }

    /// The `i`th keyword of the redaction rules (in turn).
    fn keyword(i: usize) -> &'static str {
        let rule = &crate::redact::RULES[i % crate::redact::RULES.len()];
        rule.keywords[i / crate::redact::RULES.len() % rule.keywords.len()]
    }

    #[test]
    fn a_scout_calls_every_batch_of_clean_text_free_of_keywords() {
        // 40 chunks, the last one full: the reader learns the end from a read of 0 after it.
        let data = numbered(4000, 9);
        let got = scouted(&data, 0, 1000, BLOCK);
        assert_eq!(got.concat_bytes(), data);
        assert!(got.iter().all(|&(lines, free, _)| lines && free));
    }

    #[test]
    fn a_keyword_across_a_seam_is_never_called_absent() {
        for word in 0..crate::redact::RULES.len() {
            let word = keyword(word).as_bytes();
            for cut in 1..word.len() {
                // Chunks of 64 bytes; the keyword starts `cut` bytes before the seam at 128.
                let mut data = b"a b c d e f g h i j\n".repeat(7)[..128 - cut - 1].to_vec();
                data.push(b' ');
                data.extend_from_slice(word);
                data.extend_from_slice(b" k l m\n".repeat(30).as_slice());
                let got = scouted(&data, 0, 64, BLOCK);
                assert_eq!(got.concat_bytes(), data);
                let with = got
                    .iter()
                    .find(|b| b.2.windows(word.len()).any(|w| w == word));
                assert!(
                    !with.unwrap().1,
                    "{} cut at {cut}",
                    String::from_utf8_lossy(word)
                );
            }
        }
    }

    #[test]
    fn a_scout_starts_where_a_resumed_reader_does() {
        let data = numbered(500, 0);
        let got = scouted(&data, 7, 50, BLOCK);
        assert_eq!(got.concat_bytes(), data[7..]);
    }

    /// What a reader of `batches` sees: each piece of a long line, and each line of a batch of
    /// whole lines (where a batch ends depends on how much was read, which differs with a scout).
    fn pieces_and_lines(batches: &[(bool, Vec<u8>)]) -> Vec<(bool, Vec<u8>)> {
        let mut out = Vec::new();
        for (lines, b) in batches {
            if *lines {
                out.extend(
                    b.split_inclusive(|&c| c == b'\n')
                        .map(|l| (true, l.to_vec())),
                );
            } else {
                out.push((false, b.clone()));
            }
        }
        out
    }

    trait Concat {
        fn concat_bytes(&self) -> Vec<u8>;
    }

    impl Concat for Vec<(bool, bool, Vec<u8>)> {
        fn concat_bytes(&self) -> Vec<u8> {
            self.iter().flat_map(|b| b.2.iter().copied()).collect()
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// A reader with a scout hands out the input as a reader alone does: the same lines
        /// whole, and the same pieces of `hold` bytes of a line that long (the redactor takes a
        /// long line only in pieces); and it calls a batch free of keywords only when it holds
        /// none, whatever the seams of the chunks cut.
        #[test]
        fn a_scouted_reader_hands_out_its_input_and_calls_free_only_what_holds_no_keyword(
            parts in proptest::collection::vec((0usize..4, 0usize..80), 1..120),
            chunk in 3usize..300,
            hold in 1usize..200,
        ) {
            let mut data = Vec::new();
            for (kind, n) in parts {
                match kind {
                    0 => data.extend_from_slice(&b"lorem ipsum dolor sit amet "[..n % 28]),
                    1 => data.extend_from_slice(keyword(n).as_bytes()),
                    2 => data.push(b'\n'),
                    _ => data.extend(std::iter::repeat_n(b'x', n * 3)),
                }
            }
            let got = scouted(&data, 0, chunk, hold);
            let shapes: Vec<(bool, Vec<u8>)> =
                got.iter().map(|(lines, _, b)| (*lines, b.clone())).collect();
            proptest::prop_assert_eq!(pieces_and_lines(&shapes), pieces_and_lines(&batches(&data, hold)));
            for (_, free, b) in &got {
                if *free {
                    proptest::prop_assert!(!holds_keyword(b));
                }
            }
        }
    }
}
