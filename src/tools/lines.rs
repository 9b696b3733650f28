//! The line printer of cat and head: lines `from`.. of one input, each with its own line ending.
//!
//! The lines are as redaction shows them (docs/contract.md#redaction), within the read budget and
//! the output cap (docs/contract.md#limits). Reading stops after the last line printed.

use crate::call::Ctx;
use crate::envelope::Stop;
use crate::error::{Error, shown};
use crate::read::{Ahead, BLOCK, Batch, Filter, HOLD, Lines, charge_lines};
use crate::redact::Shown;
use crate::registry::Outcome;

/// Prints lines `from`.. (1-based) of the file the caller named `arg`, at most `wanted` of them.
///
/// cat passes `u64::MAX` as `wanted`. Each line has its own line ending, as redaction shows it
/// (docs/contract.md#redaction). Reading stops after the last line printed; the lines looked at are
/// charged against the read budget, and the line that would cross it is not printed
/// (docs/contract.md#limits). A truncated output gets a note with the `cat PATH K` call that
/// continues it (docs/contract.md#notes).
///
/// # Errors
/// [`Stop::Truncated`] when the output cap ends the lines (after the note), [`Stop::Error`] when
/// the input cannot be opened or read.
pub fn print_lines(
    ctx: &Ctx<'_>,
    tool: &str,
    arg: &[u8],
    from: u64,
    wanted: u64,
) -> Result<Outcome, Stop> {
    let path = shown(arg);
    let input = ctx.open_input(arg, tool)?;
    if wanted == 0 {
        return Ok(Outcome::Success);
    }
    let mut lines = input.lines(&path)?;
    // cat of a large file shows most of it: with redaction on, a second thread takes half of the
    // reading and the keyword search (read/scout.rs). head and short outputs stop too soon for it.
    if wanted == u64::MAX
        && ctx.policy.redact
        && ctx.out.room() as u64 >= SCOUT_MIN
        && ctx.budget.read_left() >= SCOUT_MIN
    {
        lines.scout(SCOUT_MIN);
    }
    let mut printer = LinePrinter {
        ctx,
        ahead: lines.ahead()?,
        filter: Filter::new(ctx.policy.redact),
        counter: LineCounter {
            at: 0,
            line: 1,
            count_as_we_go: lines.size().is_none(),
        },
        stopped_at: from,
        held: None,
    };
    let result = printer.run(&mut lines, from, wanted);
    printer.filter.report(ctx.out);
    match result {
        Err(Stop::Truncated) => {
            printer.note_stop(arg);
            Err(Stop::Truncated)
        }
        Err(e) => Err(e),
        Ok(()) => {
            // The last line, unterminated and crossing the cap, was left out at the end.
            if ctx.out.is_truncated() {
                printer.note_stop(arg);
            }
            Ok(Outcome::Success)
        }
    }
}

/// The least of the file left to read, of the cap's room and of the read budget left for which
/// cat reads with a scout: a few of its chunks, so that the thread pays for itself.
const SCOUT_MIN: u64 = 1024 * 1024;

/// The file line that the output has reached: the number of the line that starts at input offset
/// `at`. Blocks shown far from the cap are not counted as they go (that would cost a pass over
/// every byte); the count catches up, by reading them again, only when a line number is needed:
/// near the cap, where a note may have to say where the output stopped.
struct LineCounter {
    at: u64,
    line: u64,
    /// An input that cannot be read again (a pipe) is counted as it goes.
    count_as_we_go: bool,
}

impl LineCounter {
    /// Moves past `bytes`, shown from offset `at`, which hold `lines` lines when known.
    fn pass(&mut self, at: u64, bytes: &[u8], lines: Option<u64>) {
        if at != self.at {
            // Behind already: it catches up when asked.
            return;
        }
        let lines = match lines {
            Some(n) => n,
            None if self.count_as_we_go => memchr::memchr_iter(b'\n', bytes).count() as u64,
            None => return,
        };
        self.at += bytes.len() as u64;
        self.line += lines;
    }

    /// The number of the line that starts at offset `to`.
    fn line_at(&mut self, ahead: &Ahead, to: u64) -> Result<u64, Error> {
        if to > self.at {
            self.line += ahead.count_lines(self.at, to)?.unwrap_or(0);
            self.at = to;
        }
        Ok(self.line)
    }
}

/// The offset just after the `n`th `\n` of `b`, and how many lines that prefix holds (the input's
/// last line, without `\n`, counts when the batch ends with it).
pub fn first_lines(b: &[u8], n: u64) -> (usize, u64) {
    let mut seen = 0;
    for i in memchr::memchr_iter(b'\n', b) {
        seen += 1;
        if seen == n {
            return (i + 1, seen);
        }
    }
    let unterminated = u64::from(!b.is_empty() && !b.ends_with(b"\n"));
    (b.len(), seen + unterminated)
}

/// The state of one cat or head call.
struct LinePrinter<'c, 'a> {
    ctx: &'c Ctx<'a>,
    ahead: Ahead,
    filter: Filter,
    counter: LineCounter,
    /// The number of the line being shown when the output stopped.
    stopped_at: u64,
    /// A long line as it will be shown, held back until it is known whether the read budget
    /// or the cap ends it first (see [`HOLD`], and [`LinePrinter::long_piece`]).
    held: Option<Vec<u8>>,
}

impl LinePrinter<'_, '_> {
    fn run(&mut self, lines: &mut Lines, from: u64, wanted: u64) -> Result<(), Stop> {
        if !self.skip(lines, from)? {
            return Ok(());
        }
        self.counter.at = lines.consumed();
        self.counter.line = from;
        let budget = self.ctx.budget;
        let mut left = wanted;
        while left > 0 {
            let at = lines.consumed();
            let Some((batch, keyword_free)) = lines.next_searched(BLOCK)? else {
                break;
            };
            match batch {
                Batch::Piece(p) => self.long_piece(at, p)?,
                Batch::Lines(b) if self.filter.in_long_line() => {
                    // The batch's first line ends the long line.
                    let end = memchr::memchr(b'\n', b).map_or(b.len(), |i| i + 1);
                    self.end_long_line(at, &b[..end])?;
                    let rest = b.len() - end;
                    lines.unread(rest);
                    left -= 1;
                }
                Batch::Lines(b) => {
                    let (end, count) = if left == u64::MAX {
                        (b.len(), None)
                    } else {
                        let (end, n) = first_lines(b, left);
                        left -= n;
                        (end, Some(n))
                    };
                    let (fit, over) = charge_lines(budget, &b[..end]);
                    let count = if over.is_none() { count } else { None };
                    self.show(at, fit, count, keyword_free)?;
                    if let Some(e) = over {
                        return Err(e.into());
                    }
                }
            }
        }
        if self.filter.in_long_line() {
            // The input ended inside a long line: what the redactor held back goes out now.
            let at = lines.consumed();
            self.end_long_line(at, &[])?;
        }
        Ok(())
    }

    /// Reads past the lines before `from` (charging them: they are looked at), keeping the
    /// redaction state. Returns false when the input ends first.
    fn skip(&mut self, lines: &mut Lines, from: u64) -> Result<bool, Stop> {
        let budget = self.ctx.budget;
        let mut line = 1;
        while line < from {
            let Some(batch) = lines.next_batch(BLOCK)? else {
                return Ok(false);
            };
            match batch {
                Batch::Piece(p) => {
                    budget.charge_read(p.len() as u64)?;
                    if !self.filter.in_long_line() {
                        self.filter.start_long_line();
                    }
                    self.filter.skip_long_piece(p);
                }
                Batch::Lines(b) if self.filter.in_long_line() => {
                    let end = memchr::memchr(b'\n', b).map_or(b.len(), |i| i + 1);
                    budget.charge_read(end as u64)?;
                    self.filter.skip_end_long_line(&b[..end]);
                    line += 1;
                    let rest = b.len() - end;
                    lines.unread(rest);
                }
                Batch::Lines(b) => {
                    let (end, n) = first_lines(b, from - line);
                    budget.charge_read(end as u64)?;
                    self.filter.skip(&b[..end]);
                    line += n;
                    let rest = b.len() - end;
                    lines.unread(rest);
                }
            }
        }
        Ok(true)
    }

    /// Shows whole lines `fit`, read from offset `at` (`count` of them, when known; when
    /// `keyword_free`, known to hold no redaction keyword). Runs of lines that redaction leaves
    /// as they are go out whole while no cut can fall in them; a line that holds a secret's
    /// keyword goes through the filter; near the cap every line goes out on its own, so that the
    /// note knows where the output stopped.
    fn show(
        &mut self,
        at: u64,
        fit: &[u8],
        count: Option<u64>,
        keyword_free: bool,
    ) -> Result<(), Stop> {
        let out = self.ctx.out;
        if self.filter.passes_searched(fit, keyword_free) && out.far_from_cap(fit.len()) {
            // No cut can fall here: the batch goes out whole, uncounted.
            out.push(fit)?;
            self.counter.pass(at, fit, count);
            return Ok(());
        }
        let mut pos = 0;
        while pos < fit.len() {
            let rest = &fit[pos..];
            let here = at + pos as u64;
            let clean = self.filter.clean_prefix(rest);
            if clean > 0 && out.far_from_cap(clean) {
                out.push(&rest[..clean])?;
                self.counter.pass(here, &rest[..clean], None);
                pos += clean;
                continue;
            }
            // The clean lines one by one, or else the one line that needs the filter.
            let upto = if clean > 0 {
                clean
            } else {
                memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1)
            };
            let mut n = self.counter.line_at(&self.ahead, here)?;
            for line in rest[..upto].split_inclusive(|&c| c == b'\n') {
                self.stopped_at = n;
                if clean > 0 {
                    out.push(line)?;
                } else {
                    match self.filter.line(line) {
                        Shown::Same => out.push(line)?,
                        Shown::Replaced(text) => out.push(&text)?,
                        Shown::Hidden => {}
                    }
                }
                n += 1;
            }
            self.counter.at = here + upto as u64;
            self.counter.line = n;
            pos += upto;
        }
        Ok(())
    }

    /// A piece of a line longer than a block, read from offset `at`. Before the first piece is
    /// shown, the line must be known to end within the read budget: a line that crosses it is
    /// not shown at all.
    fn long_piece(&mut self, at: u64, piece: &[u8]) -> Result<(), Stop> {
        let budget = self.ctx.budget;
        if !self.filter.in_long_line() {
            // When the cap comes first, the line is cut there (a line this long may be cut
            // inside), and the work ends before the budget matters: certainly so when the line
            // is shown as read; when redaction may shorten it, it is held until that is known.
            let cap_first = (self.ctx.out.room() as u64) < budget.read_left();
            let limit = at.saturating_add(budget.read_left());
            if cap_first {
                if self.filter.redacts() {
                    self.held = Some(Vec::new());
                }
            } else {
                match self.ahead.line_ends_before(at, limit)? {
                    Some(false) => return Err(budget.read_exhausted().into()),
                    Some(true) => {}
                    None => self.held = Some(Vec::new()),
                }
            }
            self.stopped_at = self.counter.line_at(&self.ahead, at)?;
            self.filter.start_long_line();
        }
        self.charge_long(piece.len())?;
        let shown = self.filter.long_piece(piece);
        self.show_long(&shown)
    }

    /// Charges `n` more bytes of a long line: when the budget runs out, what was held of the line
    /// is dropped unseen, and so are the redactions counted in it.
    fn charge_long(&mut self, n: usize) -> Result<(), Stop> {
        let charged = self.ctx.budget.charge_read(n as u64);
        if charged.is_err() && self.held.take().is_some() {
            self.filter.discard_last();
        }
        Ok(charged?)
    }

    /// Shows `shown`, the next part of a long line as the filter shows it, or holds it back:
    /// until the held text reaches the cap (which cuts it there) or [`HOLD`].
    fn show_long(&mut self, shown: &[u8]) -> Result<(), Stop> {
        let Some(held) = &mut self.held else {
            return self.ctx.out.push(shown);
        };
        held.extend_from_slice(shown);
        if held.len() >= self.ctx.out.room() || held.len() >= HOLD {
            self.release()?;
        }
        Ok(())
    }

    /// Shows what was held of a long line, and holds no more.
    fn release(&mut self) -> Result<(), Stop> {
        // In pieces, as a line read in pieces goes out: the output never holds a copy of it.
        for piece in self.held.take().unwrap_or_default().chunks(BLOCK) {
            self.ctx.out.push(piece)?;
        }
        Ok(())
    }

    /// The end of a long line (through its `\n`), read from offset `at`.
    fn end_long_line(&mut self, at: u64, tail: &[u8]) -> Result<(), Stop> {
        self.charge_long(tail.len())?;
        let shown = self.filter.end_long_line(tail);
        if let Some(held) = &mut self.held {
            held.extend_from_slice(&shown);
        } else {
            self.ctx.out.push(&shown)?;
        }
        self.release()?;
        self.counter.at = at + tail.len() as u64;
        self.counter.line = self.stopped_at + 1;
        Ok(())
    }

    /// The note of a truncated output: where it stopped and the call that continues it.
    fn note_stop(&self, arg: &[u8]) {
        let out = self.ctx.out;
        let k = self.stopped_at;
        if arg == b"-" {
            // Standard input cannot be read again: there is no call to continue with.
            out.note_truncation(format!(" at line {k} of standard input"));
            return;
        }
        let cat =
            |from: u64| super::call_text(self.ctx, "cat", &[arg, from.to_string().as_bytes()]);
        out.note_truncation(if out.cut_inside() {
            format!(
                " inside line {k}, which does not fit; the lines after it: {}",
                cat(k + 1)
            )
        } else {
            format!(" before line {k}; continue with: {}", cat(k))
        });
    }
}
