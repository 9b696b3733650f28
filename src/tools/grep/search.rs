//! grep's search of one file (docs/contract.md#tools): PATTERN's [`Search`] over batches of whole
//! lines, as redaction shows them (docs/contract.md#redaction), and a worker's search of a walked
//! file, which holds its matches as [`FileMatches`] until their turn to be printed. The search
//! streamed to the output, on the calling thread, is in [`super::stream`].

use std::borrow::Cow;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::matcher::Matcher;
use super::window::{ELLIPSIS, WINDOW, window_note, windowed};
use crate::call::Ctx;
use crate::envelope::Stop;
use crate::error::Error;
use crate::read::{BINARY_PROBE, BLOCK, Batch, Filter, Lines, is_binary};
use crate::redact::{Shown, Tally};
use crate::resolve::Ticket;

/// How a file's matches are reported.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Report {
    /// `path:line:text` for each matching line.
    Lines,
    /// One `path: binary file matches`, then stop (a binary file named as PATH).
    Binary,
}

/// The most bytes of one file's matches that a worker holds before it hands the file back.
pub(super) const FOUND_MAX: usize = 256 * 1024;

/// The most bytes of matches that all workers together hold, waiting to be printed.
pub(super) const HELD_MAX: usize = 4 << 20;

/// The bytes of output made ready for a file's matches when its first is found.
const FIRST_HOLD: usize = 4096;

/// Where the search of a file stopped when a worker handed it back: the rest is searched, and
/// streamed, when the file's turn comes.
pub(super) struct Rest {
    pub(super) file: File,
    pub(super) size: u64,
    /// The offset of the first line not searched, and its number.
    pub(super) offset: u64,
    pub(super) line_no: u64,
    pub(super) filter: Filter,
}

/// One file's matches as a worker holds them, with how its search ended, before the read budget
/// and the output cap are applied (in file order, by `parallel::Printer`), so the answer does not
/// depend on how the work was split.
#[derive(Default)]
pub(super) struct FileMatches {
    /// The formatted lines.
    pub(super) out: Vec<u8>,
    /// For each line in `out`: the file's bytes looked at through it, and `out`'s length after it.
    pub(super) marks: Vec<(u64, usize)>,
    /// The file's bytes looked at in all.
    pub(super) consumed: u64,
    /// The search goes on from here, on the printing thread (boxed: results are moved between
    /// threads and the printer's queue, and few files are handed back).
    pub(super) rest: Option<Box<Rest>>,
    /// The file was skipped as binary.
    pub(super) binary: bool,
    /// The file could not be opened or read (permission refused, a read error): it is left out
    /// and counted in a note (docs/contract.md#notes).
    pub(super) unreadable: bool,
    /// The process ran short of descriptors or memory on this file: the search ends with this
    /// `io:` error when the file's turn to be printed comes, after the files before it.
    pub(super) shortage: Option<Error>,
    /// The secrets redacted in what was searched.
    pub(super) tally: Option<Tally>,
    /// The read, for the check that must follow it before its lines are printed.
    pub(super) ticket: Option<Ticket>,
}

/// The limits as they stood when a file's search began: the search can stop once it is past
/// them, since the answer will be cut there anyway.
#[derive(Clone, Copy)]
pub(super) struct Snapshot {
    read_left: u64,
    room: usize,
}

impl Snapshot {
    /// The limits as they stand now.
    pub(super) fn now(ctx: &Ctx<'_>) -> Snapshot {
        Snapshot {
            read_left: ctx.budget.read_left(),
            room: ctx.out.room(),
        }
    }
}

/// What searching one batch of whole lines did.
pub(super) struct Scanned {
    /// The lines of the batch that were searched; only those through its last match when the
    /// search was told the count is not needed ([`Search::scan_last`]).
    pub(super) lines: u64,
    /// A match asked to stop.
    pub(super) stopped: bool,
}

/// A matching line: its number, its text (as shown, without its `\n`), and the offset in the batch
/// just past it.
pub(super) type Hit<'h> = dyn FnMut(u64, &[u8], usize) -> Result<bool, Stop> + 'h;

/// PATTERN's search, as every file of a call shares it.
pub(super) struct Search {
    /// PATTERN's matcher.
    pub(super) matcher: Matcher,
    /// Redaction is on and PATTERN could match a `[REDACTED:…]` marker: lines that hold a
    /// secret's keyword are redacted before they are searched, whether they match as read or not.
    pub(super) marker_risk: bool,
    /// Bytes to keep from the end of a piece of a long line, so that a match across pieces is
    /// found.
    pub(super) overlap: usize,
    /// Bytes a match can span, at most.
    pub(super) pattern_len: u64,
}

impl Search {
    /// Searches `batch` (whole lines, the first numbered `first`) as `filter` shows it, and calls
    /// `hit` for each matching line; `hit` answers whether to go on.
    ///
    /// Lines that redaction leaves as they are (no secret's keyword, no key block open, not right
    /// after a name line) are searched as read, at full speed. The others are searched as
    /// redacted, so that a PATTERN never probes a secret: where the PATTERN cannot match a
    /// `[REDACTED:…]` marker, a line that does not match as read cannot match once redacted, so
    /// only the lines that match as read are redacted and searched again (the others only move
    /// the state of key blocks and name lines on); otherwise the lines that hold a keyword, or
    /// follow a name line, are redacted one by one.
    pub(super) fn scan(
        &self,
        filter: &mut Filter,
        batch: &[u8],
        first: u64,
        hit: &mut Hit<'_>,
    ) -> Result<Scanned, Stop> {
        self.scan_counting(filter, batch, first, true, hit)
    }

    /// [`Search::scan`] of a file's last batch, whose line count nothing needs: the lines after
    /// its last match are not counted.
    pub(super) fn scan_last(
        &self,
        filter: &mut Filter,
        batch: &[u8],
        first: u64,
        hit: &mut Hit<'_>,
    ) -> Result<Scanned, Stop> {
        self.scan_counting(filter, batch, first, false, hit)
    }

    /// [`Search::scan`]; `count` says whether the lines after the batch's last match are
    /// counted.
    fn scan_counting(
        &self,
        filter: &mut Filter,
        batch: &[u8],
        first: u64,
        count: bool,
        hit: &mut Hit<'_>,
    ) -> Result<Scanned, Stop> {
        if !filter.redacts() {
            return self.raw(batch, first, 0, count, hit);
        }
        if !self.marker_risk {
            // No keyword search over the batch: the PATTERN's own search finds the lines to
            // redact, and the rest only needs the state of key blocks and name lines moved on.
            return self.redacting_matches(filter, batch, first, count, hit);
        }
        if filter.passes(batch) {
            return self.raw(batch, first, 0, count, hit);
        }
        let (mut pos, mut line_no) = (0, first);
        while pos < batch.len() {
            let rest = &batch[pos..];
            let clean = filter.clean_prefix(rest);
            if clean > 0 {
                let s = self.raw(&rest[..clean], line_no, pos, true, hit)?;
                if s.stopped {
                    return Ok(Scanned {
                        lines: line_no - first + s.lines,
                        stopped: true,
                    });
                }
                line_no += s.lines;
                pos += clean;
                continue;
            }
            let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
            pos += end;
            if let Some(text) = self.redacted_match(filter, &rest[..end], false)
                && !hit(line_no, &text, pos)?
            {
                return Ok(Scanned {
                    lines: line_no - first + 1,
                    stopped: true,
                });
            }
            line_no += 1;
        }
        Ok(Scanned {
            lines: line_no - first,
            stopped: false,
        })
    }

    /// The text of `line` as the filter shows it, without its `\n`, when it matches; a line
    /// hidden in a key block or no longer matching once redacted is dropped, and what redacting it
    /// counted is taken back. `matched` tells that `line` matches as read: a line that redaction
    /// leaves as it is then needs no second search.
    pub(super) fn redacted_match<'l>(
        &self,
        filter: &mut Filter,
        line: &'l [u8],
        matched: bool,
    ) -> Option<Cow<'l, [u8]>> {
        let text = match filter.line(line) {
            Shown::Same if matched => return Some(Cow::Borrowed(without_newline(line))),
            Shown::Same => Cow::Borrowed(without_newline(line)),
            Shown::Replaced(mut t) => {
                t.truncate(without_newline(&t).len());
                Cow::Owned(t)
            }
            Shown::Hidden => return None,
        };
        if self.matcher.find_at(&text, 0).is_some() {
            Some(text)
        } else {
            filter.discard_last();
            None
        }
    }

    /// [`Search::scan`] where the PATTERN cannot match a marker: the batch is searched as read,
    /// and each line that matches is redacted and searched again.
    fn redacting_matches(
        &self,
        filter: &mut Filter,
        batch: &[u8],
        first: u64,
        count: bool,
        hit: &mut Hit<'_>,
    ) -> Result<Scanned, Stop> {
        let mut skipped = 0;
        let mut stopped = false;
        // Where no key block is open or opens, of the lines between matches only the last needs a
        // look (it may be a name line whose value is the match).
        let settled = filter.settled(batch);
        // The lines before `clean_end` hold no keyword and lie outside key blocks (a line that
        // opens one holds a keyword), so a match there is shown as read. One SIMD search of the
        // rest of the batch tells where they end, where the rest is long enough to pay for it;
        // otherwise each matching line is looked at on its own.
        let mut clean_end = 0;
        let s = self.raw(batch, first, 0, count, &mut |n, body, next| {
            let newline = usize::from(batch[..next].ends_with(b"\n"));
            let start = next - newline - body.len();
            // Lines before `clean_end` hold no keyword, so none of them is a name line: a
            // stretch that ends there needs no look.
            match (settled, start <= clean_end) {
                (true, true) => {}
                (true, false) => filter.skip_settled(&batch[skipped..start]),
                (false, _) => filter.skip(&batch[skipped..start]),
            }
            skipped = next;
            if start >= clean_end && batch.len() - start >= CLEAN_AHEAD {
                clean_end = start + filter.clean_prefix(&batch[start..]);
            }
            if start < clean_end {
                let go = hit(n, body, next)?;
                stopped = !go;
                return Ok(go);
            }
            match self.redacted_match(filter, &batch[start..next], true) {
                Some(text) => {
                    let go = hit(n, &text, next)?;
                    stopped = !go;
                    Ok(go)
                }
                None => Ok(true),
            }
        })?;
        if !stopped {
            match (settled, batch.len() <= clean_end) {
                (true, true) => {}
                (true, false) => filter.skip_settled(&batch[skipped..]),
                (false, _) => filter.skip(&batch[skipped..]),
            }
        }
        Ok(s)
    }

    /// Searches `text` as it is (lines that redaction does not change), the first line numbered
    /// `first`; `base` is `text`'s offset in its batch, for `hit`'s end positions. `count` says
    /// whether the lines after the last match are counted.
    fn raw(
        &self,
        text: &[u8],
        first: u64,
        base: usize,
        count: bool,
        hit: &mut Hit<'_>,
    ) -> Result<Scanned, Stop> {
        let unterminated = u64::from(!text.is_empty() && !text.ends_with(b"\n"));
        let (mut pos, mut counted, mut line_no) = (0, 0, first);
        while pos < text.len() {
            let Some(m) = self.matcher.find_at(text, pos) else {
                break;
            };
            let start = memchr::memrchr(b'\n', &text[..m]).map_or(0, |i| i + 1);
            let end = memchr::memchr(b'\n', &text[m..]).map_or(text.len(), |i| m + i);
            line_no += memchr::memchr_iter(b'\n', &text[counted..start]).count() as u64;
            counted = start;
            let next = (end + 1).min(text.len());
            if !hit(line_no, &text[start..end], base + next)? {
                return Ok(Scanned {
                    lines: line_no - first + 1,
                    stopped: true,
                });
            }
            pos = end + 1;
        }
        if !count {
            return Ok(Scanned {
                lines: line_no - first,
                stopped: false,
            });
        }
        line_no += memchr::memchr_iter(b'\n', &text[counted..]).count() as u64;
        Ok(Scanned {
            lines: line_no - first + unterminated,
            stopped: false,
        })
    }

    /// Pushes `records` (grep's output lines, each ending at one of `ends`), where a matched line
    /// longer than the room left under the cap, and longer than the cap itself (so that no
    /// narrower call could show it whole), is shown as a window around its first match, so that
    /// the match reaches the caller (docs/contract.md#tools).
    pub(super) fn push_records(
        &self,
        ctx: &Ctx<'_>,
        records: &[u8],
        ends: &[usize],
        display: &[u8],
    ) -> Result<(), Stop> {
        if records.len() <= ctx.out.room() {
            return ctx.out.push(records);
        }
        let mut start = 0;
        for &end in ends {
            let rec = &records[start..end];
            start = end;
            if rec.len() > ctx.out.room()
                && rec.len() > ctx.out.cap()
                && let Some((windowed, note)) = self.window(rec, display, ctx.out.room())
            {
                ctx.out.push(&windowed)?;
                ctx.out.note(note);
                continue;
            }
            ctx.out.push(rec)?;
        }
        ctx.out.push(&records[start..])
    }

    /// The record `rec` (`path:N:text\n`) cut to a window of its text around the first match,
    /// within `room` bytes (at most [`WINDOW`]), with `…` at each cut end, and the note that
    /// says so; `None` when not even the match fits.
    fn window(&self, rec: &[u8], display: &[u8], room: usize) -> Option<(Vec<u8>, String)> {
        let after_path = rec.get(display.len() + 1..)?;
        let colon = memchr::memchr(b':', after_path)?;
        let header = display.len() + 1 + colon + 1;
        let line_no = String::from_utf8_lossy(&after_path[..colon]).into_owned();
        let text = &rec[header..rec.len() - 1];
        let at = self.matcher.find_at(text, 0)?;
        let span = ShownSpan {
            len: text.len() as u64,
            first_match: at as u64,
        };
        let (from, to) = self.window_span(span, room.checked_sub(header)?)?;
        let mut out = rec[..header].to_vec();
        let (shown, (from, to)) = windowed(text, from as usize, to as usize);
        out.extend_from_slice(&shown);
        out.push(b'\n');
        let note = window_note(&line_no, display, at as u64, from as u64, to as u64);
        Some((out, note))
    }

    /// The byte range of a line's shown text that a window of at most `room` bytes (its `…`
    /// marks and `\n` included) shows around the first match; `None` when the match itself
    /// does not fit.
    pub(super) fn window_span(&self, span: ShownSpan, room: usize) -> Option<(u64, u64)> {
        let width = room.min(WINDOW).checked_sub(2 * ELLIPSIS.len() + 1)? as u64;
        let matched = self.pattern_len;
        if width < matched {
            return None;
        }
        let from = span
            .first_match
            .saturating_sub((width - matched) / 2)
            .min(span.len.saturating_sub(width));
        Some((from, (from + width).min(span.len)))
    }

    /// Searches the file behind `lines` on a worker, holding what it finds: at most [`FOUND_MAX`]
    /// bytes, or less when the workers together hold [`HELD_MAX`]; past that, or at a line longer
    /// than a block, the file is handed back ([`FileMatches::rest`]). Its first `probed` bytes
    /// are known to hold no NUL (the binary probe looked at them).
    #[expect(
        clippy::too_many_arguments,
        reason = "the file, its filter and path, and the limits and state the workers share"
    )]
    pub(super) fn collect(
        &self,
        mut lines: Lines,
        mut filter: Filter,
        display: &[u8],
        probed: usize,
        limits: Snapshot,
        stop: &AtomicBool,
        held: &AtomicUsize,
    ) -> Result<FileMatches, Error> {
        let mut f = FileMatches::default();
        let mut line_no: u64 = 1;
        loop {
            let at = lines.consumed();
            let Some((batch, last)) = lines.next_batch_and_end(BLOCK)? else {
                break;
            };
            let b = match batch {
                Batch::Lines(b) => b,
                Batch::Piece(p) => {
                    // A long line is searched, and printed, on the printing thread.
                    let n = p.len();
                    lines.unread(n);
                    f.rest = Some(Box::new(rest_of(lines, at, line_no, filter)?));
                    f.consumed = at;
                    return Ok(f);
                }
            };
            // A NUL makes the file binary from its line on: the lines before it are searched,
            // and the file is skipped there (docs/contract.md#tools).
            let whole = b.len();
            let clean = usize::try_from((probed as u64).saturating_sub(at))
                .unwrap_or(usize::MAX)
                .min(whole);
            let b = match memchr::memchr(0, &b[clean..]).map(|z| clean + z) {
                Some(z) => {
                    f.binary = true;
                    &b[..memchr::memrchr(b'\n', &b[..z]).map_or(0, |i| i + 1)]
                }
                None => b,
            };
            let out = &mut f.out;
            let marks = &mut f.marks;
            let mut hit = |n, line: &[u8], end: usize| {
                if out.capacity() == 0 {
                    // Room for a file's usual matches at once, not grown a few bytes at a time.
                    out.reserve(FIRST_HOLD);
                    marks.reserve(FIRST_HOLD / 64);
                }
                record(out, display, n, line, Report::Lines);
                marks.push((at + end as u64, out.len()));
                Ok(true)
            };
            // After the last batch, or a NUL, no line is numbered: the lines after the last
            // match need no count.
            let scanned = if last || f.binary {
                self.scan_last(&mut filter, b, line_no, &mut hit)
            } else {
                self.scan(&mut filter, b, line_no, &mut hit)
            };
            let scanned = scanned.map_err(|e| match e {
                Stop::Error(e) => e,
                Stop::Truncated => Error::Io("search stopped".into()),
            })?;
            line_no += scanned.lines;
            f.consumed = at + whole as u64;
            if f.binary {
                break;
            }
            // Past either limit, the answer is cut before the rest of the file matters.
            if f.consumed > limits.read_left
                || f.out.len() > limits.room
                || stop.load(Ordering::Relaxed)
            {
                break;
            }
            // After the last batch nothing is left to hand back.
            if !last
                && (f.out.len() >= FOUND_MAX
                    || held.load(Ordering::Relaxed) + f.out.len() >= HELD_MAX)
            {
                let offset = f.consumed;
                f.rest = Some(Box::new(rest_of(lines, offset, line_no, filter)?));
                return Ok(f);
            }
        }
        f.tally = filter.tally().cloned();
        Ok(f)
    }
}

/// A matched line's shown text: its length, and the offset of its first match.
#[derive(Clone, Copy)]
pub(super) struct ShownSpan {
    /// The text's length.
    pub(super) len: u64,
    /// The offset of its first match.
    pub(super) first_match: u64,
}

/// The hand-back of a file whose search stopped at `offset` (line `line_no`).
fn rest_of(lines: Lines, offset: u64, line_no: u64, filter: Filter) -> Result<Rest, Error> {
    let size = lines.size().unwrap_or(0);
    Ok(Rest {
        file: lines.into_file()?,
        size,
        offset,
        line_no,
        filter,
    })
}

/// The least rest of a batch that grep searches for keywords in one go, ahead of the lines it
/// will show, rather than line by line: below this the SIMD searcher costs more than it saves.
const CLEAN_AHEAD: usize = 4 * 1024;

/// `line` without its `\n`, if it has one.
pub(super) fn without_newline(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}

/// Appends one line of grep's output: `path:N:text`, or `path: binary file matches`.
pub(super) fn record(out: &mut Vec<u8>, display: &[u8], line_no: u64, text: &[u8], report: Report) {
    out.extend_from_slice(display);
    match report {
        Report::Binary => out.extend_from_slice(b": binary file matches\n"),
        Report::Lines => {
            out.push(b':');
            decimal(out, line_no);
            out.push(b':');
            out.extend_from_slice(text);
            out.push(b'\n');
        }
    }
}

/// Appends `n` in decimal (without the allocation of `to_string`: this runs once per match).
fn decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Whether a file is binary: a NUL in its first [`BINARY_PROBE`] bytes (as ripgrep). Returns
/// how many bytes were looked at too.
pub(super) fn probe_binary(lines: &mut Lines) -> Result<(bool, usize), Error> {
    let head = lines.head(BINARY_PROBE)?;
    Ok((is_binary(head), head.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_numbers_lines_and_finds_every_match() {
        let search = Search {
            matcher: Matcher::new(b"x", false).unwrap(),
            overlap: 0,
            pattern_len: 1,
            marker_risk: false,
        };
        let mut filter = Filter::new(false);
        let mut hits = Vec::new();
        let s = search
            .scan(&mut filter, b"ax\nb\ncx x\nd", 5, &mut |n, t, end| {
                hits.push((n, t.to_vec(), end));
                Ok(true)
            })
            .unwrap();
        assert_eq!(
            hits,
            vec![(5, b"ax".to_vec(), 3), (7, b"cx x".to_vec(), 10)]
        );
        assert_eq!((s.lines, s.stopped), (4, false));
    }

    /// A fake token of the GitHub form, built here so that the source holds none.
    fn token() -> String {
        format!(
            "{}{}",
            concat!("gh", "p_"),
            "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
        )
    }

    fn hits(pattern: &[u8], marker_risk: bool, batch: &[u8]) -> Vec<(u64, String)> {
        let search = Search {
            matcher: Matcher::new(pattern, false).unwrap(),
            overlap: 0,
            pattern_len: 1,
            marker_risk,
        };
        let mut filter = Filter::new(true);
        let mut found = Vec::new();
        search
            .scan(&mut filter, batch, 1, &mut |n, t, _| {
                found.push((n, String::from_utf8_lossy(t).into_owned()));
                Ok(true)
            })
            .unwrap();
        found
    }

    #[test]
    fn a_pattern_never_probes_a_secret() {
        let t = token();
        let batch = format!("first\ngithub_token: {t}\nlast {}\n", &t[..10]);
        // A piece of the secret finds only the line where it is not a secret.
        assert_eq!(
            hits(&t.as_bytes()[..10], false, batch.as_bytes()),
            vec![(3, format!("last {}", &t[..10]))]
        );
        // Text around the secret matches the redacted line, with the file's own line number.
        let redacted = "github_token: [REDACTED:github-token]".to_string();
        assert_eq!(
            hits(b"github_token", false, batch.as_bytes()),
            vec![(2, redacted.clone())]
        );
        // A pattern that can match a marker is searched in the redacted text.
        assert_eq!(
            hits(b"REDACTED", true, batch.as_bytes()),
            vec![(2, redacted)]
        );
    }
}
