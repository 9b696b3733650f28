//! grep's streamed search (docs/contract.md#tools): one input searched on the calling thread, its
//! matches pushed to the output as they are found: a file named as PATH, standard input, or the
//! rest of a walked file that a worker handed back. Lines longer than a block are searched here,
//! and printed by reading them again (or, from a pipe, from what was kept of them).

use super::search::{Report, Search, ShownSpan, record, without_newline};
use super::window::{mark_cuts, window_note};
use crate::call::Ctx;
use crate::envelope::Stop;
use crate::read::{Ahead, BLOCK, Batch, Filter, HOLD, Lines, charge_lines};

/// One input's streamed search: what each of its batches and long lines shares.
pub(super) struct Stream<'s, 'a> {
    /// PATTERN's search.
    pub(super) search: &'s Search,
    /// The call.
    pub(super) ctx: &'s Ctx<'a>,
    /// The input, to read a long line again.
    pub(super) ahead: &'s Ahead,
    /// The input's path as the output shows it.
    pub(super) display: &'s [u8],
    /// A walked file, skipped at a NUL byte; otherwise an input named as PATH, which reports
    /// `path: binary file matches` there.
    pub(super) walked: bool,
}

impl Stream<'_, '_> {
    /// Searches `lines` from line `line_no` on, on this thread, streaming the matches to the
    /// output (a named file, or the rest of a file that a worker handed back). Each batch is
    /// charged before it is searched. A NUL byte makes the input binary from its line on
    /// (docs/contract.md#tools): a named input then reports `path: binary file matches` at its
    /// next match, a walked file (`walked`) is skipped there. Returns whether a line matched, and
    /// whether a walked file was skipped as binary.
    pub(super) fn run(
        &self,
        lines: &mut Lines,
        filter: &mut Filter,
        mut line_no: u64,
        mut report: Report,
    ) -> Result<Streamed, Stop> {
        let (ctx, display, walked) = (self.ctx, self.display, self.walked);
        let mut found = false;
        let mut text = Vec::new();
        let mut ends = Vec::new();
        let skipped = |found| {
            Ok(Streamed {
                found,
                binary: true,
            })
        };
        loop {
            let at = lines.consumed();
            let Some(batch) = lines.next_batch(BLOCK)? else {
                break;
            };
            match batch {
                Batch::Lines(b) => {
                    let (fit, over) = charge_lines(ctx.budget, b);
                    // The lines before the one that holds a NUL are text; from it on, binary.
                    let (text_part, binary_part) = match memchr::memchr(0, fit) {
                        Some(z) if report == Report::Lines => {
                            let start = memchr::memrchr(b'\n', &fit[..z]).map_or(0, |i| i + 1);
                            fit.split_at(start)
                        }
                        _ => (fit, &fit[fit.len()..]),
                    };
                    text.clear();
                    ends.clear();
                    let scanned =
                        self.search
                            .scan(filter, text_part, line_no, &mut |n, line, _| {
                                found = true;
                                record(&mut text, display, n, line, report);
                                ends.push(text.len());
                                Ok(report == Report::Lines)
                            })?;
                    self.search.push_records(ctx, &text, &ends, display)?;
                    line_no += scanned.lines;
                    if scanned.stopped {
                        return Ok(Streamed::found(found));
                    }
                    if !binary_part.is_empty() {
                        if walked {
                            return skipped(found);
                        }
                        report = Report::Binary;
                        text.clear();
                        let scanned =
                            self.search
                                .scan(filter, binary_part, line_no, &mut |n, line, _| {
                                    found = true;
                                    record(&mut text, display, n, line, report);
                                    Ok(false)
                                })?;
                        ctx.out.push(&text)?;
                        line_no += scanned.lines;
                        if scanned.stopped {
                            return Ok(Streamed::found(found));
                        }
                    }
                    if let Some(e) = over {
                        return Err(e.into());
                    }
                }
                Batch::Piece(p) => {
                    let first = p.to_vec();
                    // The filter as it stood when the line began, to show the line again; a pipe
                    // cannot be read again, so its line is kept as far as the output can take it
                    // (and at most HOLD bytes).
                    let before = filter.clone();
                    let mut kept = (!self.ahead.can_read_again()).then(Kept::default);
                    let mut nul = false;
                    let matched =
                        match self.long_line(lines, filter, at, first, &mut kept, &mut nul) {
                            Ok(m) => m,
                            Err(e) => {
                                // Not shown: neither are the values redacted in it.
                                filter.discard_last();
                                return Err(e);
                            }
                        };
                    if matched.is_none() || nul {
                        filter.discard_last();
                    }
                    if nul && walked {
                        return skipped(found);
                    }
                    if nul {
                        report = Report::Binary;
                    }
                    if let Some((end, first_match)) = matched {
                        found = true;
                        if let Some(kept) = kept {
                            self.print_kept(&kept, line_no, report)?;
                        } else {
                            let span = (at, end);
                            self.print_long_line(&before, span, first_match, line_no, report)?;
                        }
                        if report == Report::Binary {
                            return Ok(Streamed::found(true));
                        }
                    }
                    line_no += 1;
                }
            }
        }
        Ok(Streamed::found(found))
    }

    /// Prints the long line `kept` of a pipe (line `line_no`), which matched: what was kept of
    /// it, and a note when [`HOLD`] cut it.
    fn print_kept(&self, kept: &Kept, line_no: u64, report: Report) -> Result<(), Stop> {
        let (ctx, display) = (self.ctx, self.display);
        let mut head = Vec::new();
        record(&mut head, display, line_no, b"", report);
        if report == Report::Lines {
            // The text goes between the `path:N:` and the `\n`, not copied.
            head.pop();
            ctx.out.push(&head)?;
            for piece in kept.text.chunks(BLOCK) {
                ctx.out.push(piece)?;
            }
            ctx.out.push(b"\n")?;
        } else {
            ctx.out.push(&head)?;
        }
        if kept.cut {
            ctx.out.note(format!(
                "line {line_no} of {} is longer than readbox keeps of a line \
                 it cannot read again ({} MiB): only its start is shown",
                String::from_utf8_lossy(display),
                HOLD >> 20
            ));
        }
        Ok(())
    }

    /// Searches a line longer than a block, which started at offset `at` with the piece `first`,
    /// reading it to its end. Returns where it ends (after its `\n`) and the offset of its first
    /// match in its shown text, when it matches; `nul` tells that it holds a NUL byte. The line
    /// must end within the read budget, or it is not looked at.
    fn long_line(
        &self,
        lines: &mut Lines,
        filter: &mut Filter,
        at: u64,
        first: Vec<u8>,
        kept: &mut Option<Kept>,
        nul: &mut bool,
    ) -> Result<Option<(u64, u64)>, Stop> {
        let (ctx, ahead) = (self.ctx, self.ahead);
        let budget = ctx.budget;
        let limit = at.saturating_add(budget.read_left());
        if ahead.line_ends_before(at, limit)? == Some(false) {
            return Err(budget.read_exhausted().into());
        }
        budget.charge_read(first.len() as u64)?;
        filter.start_long_line();
        let room = ctx.out.room().saturating_add(1);
        let mut keep = |text: &[u8]| {
            if let Some(k) = kept.as_mut() {
                let take = text.len().min(room.min(HOLD).saturating_sub(k.text.len()));
                k.text.extend_from_slice(&text[..take]);
                // Cut by HOLD, not by the cap (which then cuts the output itself).
                k.cut |= take < text.len() && room > HOLD;
            }
        };
        *nul |= memchr::memchr(0, &first).is_some();
        let mut window = filter.long_piece(&first).into_owned();
        keep(&window);
        // `base` is the offset of `window` in the line's shown text.
        let mut base = 0u64;
        let mut matched: Option<u64> = None;
        let look = |window: &[u8], base: u64, matched: &mut Option<u64>| {
            if matched.is_none() {
                *matched = self
                    .search
                    .matcher
                    .find_at(window, 0)
                    .map(|i| base + i as u64);
            }
        };
        look(&window, base, &mut matched);
        loop {
            let searched = window.len().saturating_sub(self.search.overlap);
            window.drain(..searched);
            base += searched as u64;
            let Some(batch) = lines.next_batch(BLOCK)? else {
                // The input ended inside the line: what the filter held back is searched too.
                let tail = filter.end_long_line(&[]);
                keep(&tail);
                window.extend_from_slice(&tail);
                look(&window, base, &mut matched);
                return Ok(matched.map(|m| (lines.consumed(), m)));
            };
            match batch {
                Batch::Piece(p) => {
                    budget.charge_read(p.len() as u64)?;
                    *nul |= memchr::memchr(0, p).is_some();
                    let shown = filter.long_piece(p);
                    keep(&shown);
                    window.extend_from_slice(&shown);
                    look(&window, base, &mut matched);
                }
                Batch::Lines(b) => {
                    let end = memchr::memchr(b'\n', b).map_or(b.len(), |i| i + 1);
                    budget.charge_read(end as u64)?;
                    *nul |= memchr::memchr(0, &b[..end]).is_some();
                    let tail = filter.end_long_line(&b[..end]);
                    let tail = without_newline(&tail);
                    keep(tail);
                    window.extend_from_slice(tail);
                    look(&window, base, &mut matched);
                    let rest = b.len() - end;
                    lines.unread(rest);
                    return Ok(matched.map(|m| (lines.consumed(), m)));
                }
            }
        }
    }

    /// Prints the long line `span` (offsets, its `\n` included) that matched: read again, in
    /// blocks, as the filter showed it when the search began it. A line longer than the room
    /// left under the cap is shown as a window around its first match (`first_match`, an offset
    /// in its shown text).
    fn print_long_line(
        &self,
        filter: &Filter,
        span: (u64, u64),
        first_match: u64,
        line_no: u64,
        report: Report,
    ) -> Result<(), Stop> {
        let (ctx, ahead, display) = (self.ctx, self.ahead, self.display);
        let mut head = Vec::new();
        if report == Report::Binary {
            record(&mut head, display, line_no, b"", report);
            return ctx.out.push(&head);
        }
        head.extend_from_slice(display);
        head.extend_from_slice(format!(":{line_no}:").as_bytes());
        let mut again = filter.clone();
        again.start_long_line();
        let (at, end) = span;
        let room = ctx.out.room().saturating_sub(head.len());
        let cap = ctx.out.cap() as u64;
        if end - at >= room as u64 && end - at + head.len() as u64 > cap {
            let shown = ShownSpan {
                len: end - at,
                first_match,
            };
            if let Some((from, to)) = self.search.window_span(shown, room) {
                let mut text = Vec::new();
                let mut pos = 0u64;
                // The shown text is read from the line's start (redaction needs what comes
                // before), and kept only within the window.
                let read_whole = shown_pieces(ahead, &mut again, at, end, |piece, last| {
                    let piece = if last { without_newline(piece) } else { piece };
                    let (lo, hi) = (pos, pos + piece.len() as u64);
                    if hi > from {
                        let s = from.saturating_sub(lo) as usize;
                        let e = (to.min(hi) - lo) as usize;
                        text.extend_from_slice(&piece[s..e]);
                    }
                    pos = hi;
                    Ok(pos < to)
                })?;
                let whole = read_whole && pos <= to;
                let mut out = head;
                let (shown, (s, e)) = mark_cuts(&text, from > 0, !whole);
                out.extend_from_slice(&shown);
                out.push(b'\n');
                ctx.out.push(&out)?;
                ctx.out.note(window_note(
                    &line_no.to_string(),
                    display,
                    first_match,
                    from + s as u64,
                    from + e as u64,
                ));
                return Ok(());
            }
        }
        ctx.out.push(&head)?;
        // The line's own `\n` goes out after it, alone.
        shown_pieces(ahead, &mut again, at, end, |piece, last| {
            ctx.out
                .push(if last { without_newline(piece) } else { piece })?;
            Ok(true)
        })?;
        ctx.out.push(b"\n")
    }
}

/// Reads the long line at offsets `at..end` again through `ahead`, a block at a time, and hands
/// `f` each piece as `again` shows it, the last one (with the line's `\n`) marked `true`; `f`
/// answers whether to go on. Returns whether the line was read to its end.
fn shown_pieces(
    ahead: &Ahead,
    again: &mut Filter,
    mut at: u64,
    end: u64,
    mut f: impl FnMut(&[u8], bool) -> Result<bool, Stop>,
) -> Result<bool, Stop> {
    let mut block = vec![0u8; BLOCK];
    while at < end {
        let want = BLOCK.min(usize::try_from(end - at).unwrap_or(BLOCK));
        let n = ahead.read(&mut block[..want], at)?;
        if n == 0 {
            break;
        }
        at += n as u64;
        let last = at >= end;
        let shown = if last {
            again.end_long_line(&block[..n])
        } else {
            again.long_piece(&block[..n])
        };
        if !f(&shown, last)? {
            break;
        }
    }
    Ok(at >= end)
}

/// What [`Stream::run`] found: whether a line matched, and whether a walked file was
/// skipped as binary at a NUL byte.
pub(super) struct Streamed {
    /// A line matched.
    pub(super) found: bool,
    /// A walked file was skipped as binary.
    pub(super) binary: bool,
}

impl Streamed {
    fn found(found: bool) -> Streamed {
        Streamed {
            found,
            binary: false,
        }
    }
}

/// What grep keeps of a long line from a pipe, to print it if it matches.
#[derive(Default)]
struct Kept {
    /// The line as shown, without its `\n`, as far as the output can take it and at most
    /// [`HOLD`] bytes.
    text: Vec<u8>,
    /// Whether [`HOLD`] cut it short.
    cut: bool,
}
