//! `grep PATTERN [PATH=.] [RECURSIVE=true] [IGNORE_CASE=false] [FILE_PATTERN=*] [MAX_DEPTH=20]`:
//! lines that contain PATTERN as literal text, as `path:line_number:line`
//! (docs/contract.md#tools).
//!
//! The search runs over large batches of whole lines, as ripgrep does: a SIMD substring search
//! (`memchr::memmem`) finds candidates, and only matching lines are delimited and numbered. With
//! IGNORE_CASE the literal is searched with Unicode simple case folding (the `regex` crate's
//! `(?i)`, as `rg -i`). A file is binary when its first 8 KiB hold a NUL byte: skipped in a
//! directory search, reported as `path: binary file matches` when named as PATH (as ripgrep).
//! Content is searched as redaction shows it (docs/contract.md#redaction), so a PATTERN can never
//! probe a secret; line numbers are the file's own.
//!
//! A named file is searched on the calling thread, its matches streamed to the output. A directory
//! search walks in order on the calling thread while workers search files ahead; each file's
//! matches are printed in walk order. A worker holds at most `FOUND_MAX` bytes of one file's
//! matches (and all workers at most `HELD_MAX`); a file with more, or with a line longer than a
//! block, is handed back at that point and its search goes on, streamed, when its turn comes. So
//! memory stays bounded whatever the caps, and the answer does not depend on how the work was
//! split.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};

use memchr::memmem;
use regex::bytes::{Regex, RegexBuilder};

mod literal;
mod window;

use super::params::MAX_DEPTH;
use super::{Runs, Tool};
use crate::call::Ctx;
use crate::envelope::Stop;
use crate::error::{Error, shown};
use crate::names::quoted;
use crate::read::{
    Ahead, BINARY_PROBE, BLOCK, Batch, Filter, HOLD, Lines, charge_lines, is_binary,
};
use crate::redact::{Shown, Tally};
use crate::registry::{Args, Effect, Flag, Kind, Outcome, Param, params};
use crate::resolve::{Kind as K, Node, Ticket};
use crate::walk::{Entry, Ignores, Skipped, Walk, display_prefix};
use literal::note_literal;
use window::{ELLIPSIS, WINDOW, mark_cuts, window_note, windowed};

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "grep",
    summary: "print the lines that contain a literal text, as path:line:text",
    params: &[
        Param {
            name: "pattern",
            kind: Kind::Text,
            default: None,
            help: "the literal text to look for (not a regular expression)",
        },
        Param {
            name: "path",
            kind: Kind::Path,
            default: Some("."),
            help: "a file, or a directory to search",
        },
        Param {
            name: "recursive",
            kind: Kind::Bool,
            default: Some("true"),
            help: "search subdirectories (false: the directory's own files only)",
        },
        Param {
            name: "ignore_case",
            kind: Kind::Bool,
            default: Some("false"),
            help: "match regardless of case (Unicode simple case folding)",
        },
        Param {
            name: "file_pattern",
            kind: Kind::Text,
            default: Some("*"),
            help: "glob on the names of the files a directory search reads",
        },
        MAX_DEPTH,
    ],
    example: "unwrap src true false '*.rs'",
    flags: &[
        Flag {
            names: &["-i", "--ignore-case"],
            effect: Effect::Set("ignore_case", "true"),
        },
        Flag {
            names: &["-r", "-R", "--recursive", "--dereference-recursive"],
            effect: Effect::Set("recursive", "true"),
        },
        Flag {
            names: &[
                "-n",
                "--line-number",
                "-H",
                "--with-filename",
                "-F",
                "--fixed-strings",
                "-s",
                "--no-messages",
                "-I",
            ],
            effect: Effect::Always,
        },
        Flag {
            names: &["--include"],
            effect: Effect::Takes("file_pattern"),
        },
        Flag {
            names: &["-e", "--regexp"],
            effect: Effect::Takes("pattern"),
        },
        // A regular expression without special characters is its literal text: the hint is
        // given only for such a PATTERN (see `regex_sign` in src/args.rs), as for every flag
        // call of GNU grep, whose PATTERN is a regular expression unless -F.
        Flag {
            names: &[
                "-E",
                "-P",
                "-G",
                "--extended-regexp",
                "--perl-regexp",
                "--basic-regexp",
            ],
            effect: Effect::Always,
        },
        Flag {
            names: &["-q", "--quiet", "--silent"],
            effect: Effect::Dropped("the exit status is the same (0: a line matched, 1: none)"),
        },
        Flag {
            names: &["--color", "--colour"],
            effect: Effect::Dropped("readbox prints no colour"),
        },
        Flag {
            names: &["-w", "--word-regexp", "-x", "--line-regexp"],
            effect: Effect::Never(
                "PATTERN matches anywhere in a line, not as a whole word or line",
            ),
        },
        Flag {
            names: &["-l", "-L", "--files-with-matches", "--files-without-match"],
            effect: Effect::Never(
                "readbox grep prints matching lines only, each after its file's name",
            ),
        },
        Flag {
            names: &[
                "-v",
                "-c",
                "-o",
                "--invert-match",
                "--count",
                "--only-matching",
            ],
            effect: Effect::Never("readbox grep prints matching lines only"),
        },
        Flag {
            names: &[
                "-A",
                "-B",
                "-C",
                "--context",
                "--after-context",
                "--before-context",
            ],
            effect: Effect::Never(
                "readbox grep prints no context lines; cat PATH FROM_LINE reads on from a match",
            ),
        },
        Flag {
            names: &["-m", "--max-count"],
            effect: Effect::Never(
                "readbox grep prints every matching line; in readbox sh, `| head - N` keeps the \
                 first N",
            ),
        },
        Flag {
            names: &["--exclude", "--exclude-dir"],
            effect: Effect::Never(
                "FILE_PATTERN chooses the files to search; none are left out by name",
            ),
        },
    ],
    on_truncate: Outcome::Success,
    stdin: true,
    run: Runs::Tool(run),
};

/// How lines are matched.
enum Matcher {
    /// The pattern holds a newline: no line can contain it.
    Never,
    /// The empty pattern: every line.
    Every,
    /// Case-sensitive literal.
    Literal(Box<memmem::Finder<'static>>),
    /// Literal under Unicode simple case folding.
    Folded(Regex),
}

impl Matcher {
    fn new(pattern: &[u8], ignore_case: bool) -> Result<Matcher, Error> {
        if pattern.contains(&b'\n') {
            return Ok(Matcher::Never);
        }
        if pattern.is_empty() {
            return Ok(Matcher::Every);
        }
        if !ignore_case {
            return Ok(Matcher::Literal(Box::new(
                memmem::Finder::new(pattern).into_owned(),
            )));
        }
        let mut re = String::new();
        for chunk in pattern.utf8_chunks() {
            re.push_str(&regex::escape(chunk.valid()));
            for b in chunk.invalid() {
                re.push_str(&format!("(?-u:\\x{b:02X})"));
            }
        }
        RegexBuilder::new(&re)
            .case_insensitive(true)
            .unicode(true)
            .build()
            .map(Matcher::Folded)
            .map_err(|e| {
                Error::Usage(format!(
                    "PATTERN: cannot search for it regardless of case: {e}"
                ))
            })
    }

    /// The start of the first match at or after `at`.
    fn find_at(&self, hay: &[u8], at: usize) -> Option<usize> {
        match self {
            Matcher::Never => None,
            Matcher::Every => (at <= hay.len()).then_some(at),
            Matcher::Literal(f) => f.find(&hay[at..]).map(|i| i + at),
            Matcher::Folded(r) => r.find_at(hay, at).map(|m| m.start()),
        }
    }

    /// Bytes a match can span, at most: a folded character may take up to 4 bytes.
    fn max_len(&self, pattern: &[u8]) -> usize {
        match self {
            Matcher::Folded(_) => 4 * pattern.len(),
            _ => pattern.len(),
        }
    }
}

/// How a file's matches are reported.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Report {
    /// `path:line:text` for each matching line.
    Lines,
    /// One `path: binary file matches`, then stop (a binary file named as PATH).
    Binary,
}

/// The most bytes of one file's matches that a worker holds before it hands the file back.
const FOUND_MAX: usize = 256 * 1024;

/// The most bytes of matches that all workers together hold, waiting to be printed.
const HELD_MAX: usize = 4 << 20;

/// Where the search of a file stopped when a worker handed it back: the rest is searched, and
/// streamed, when the file's turn comes.
struct Rest {
    file: File,
    size: u64,
    /// The offset of the first line not searched, and its number.
    offset: u64,
    line_no: u64,
    filter: Filter,
}

/// What a worker's search of one file found, before the read budget and the output cap are
/// applied (in file order, by [`Printer`]), so the answer does not depend on how the work was
/// split.
#[derive(Default)]
struct Found {
    /// The formatted lines.
    out: Vec<u8>,
    /// For each line in `out`: the file's bytes looked at through it, and `out`'s length after it.
    marks: Vec<(u64, usize)>,
    /// The file's bytes looked at in all.
    consumed: u64,
    /// The search goes on from here, on the printing thread.
    rest: Option<Rest>,
    /// The file was skipped as binary.
    binary: bool,
    /// The file could not be opened or read (permission refused, a read error): it is left out
    /// and counted in a note (docs/contract.md#notes).
    unreadable: bool,
    /// The process ran short of descriptors or memory on this file: the search ends with this
    /// `io:` error when the file's turn to be printed comes, after the files before it.
    shortage: Option<Error>,
    /// The secrets redacted in what was searched.
    tally: Option<Tally>,
    /// The read, for the check that must follow it before its lines are printed.
    ticket: Option<Ticket>,
}

/// The limits as they stood when a file's search began: the search can stop once it is past
/// them, since the answer will be cut there anyway.
#[derive(Clone, Copy)]
struct Snapshot {
    read_left: u64,
    room: usize,
}

impl Snapshot {
    fn now(ctx: &Ctx<'_>) -> Snapshot {
        Snapshot {
            read_left: ctx.budget.read_left(),
            room: ctx.out.room(),
        }
    }
}

/// What searching one batch of whole lines did.
struct Scanned {
    /// The lines of the batch that were searched.
    lines: u64,
    /// A match asked to stop.
    stopped: bool,
}

/// A matching line: its number, its text (as shown, without its `\n`), and the offset in the batch
/// just past it.
type Hit<'h> = dyn FnMut(u64, &[u8], usize) -> Result<bool, Stop> + 'h;

struct Search {
    matcher: Matcher,
    /// Redaction is on and PATTERN could match a `[REDACTED:…]` marker: lines that hold a
    /// secret's keyword are redacted before they are searched, whether they match as read or not.
    marker_risk: bool,
    /// Bytes to keep from the end of a piece of a long line, so that a match across pieces is
    /// found.
    overlap: usize,
    /// Bytes a match can span, at most.
    pattern_len: u64,
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
    fn scan(
        &self,
        filter: &mut Filter,
        batch: &[u8],
        first: u64,
        hit: &mut Hit<'_>,
    ) -> Result<Scanned, Stop> {
        if !filter.redacts() {
            return self.raw(batch, first, 0, hit);
        }
        if !self.marker_risk {
            // No keyword search over the batch: the PATTERN's own search finds the lines to
            // redact, and the rest only needs the state of key blocks and name lines moved on.
            return self.redacting_matches(filter, batch, first, hit);
        }
        if filter.passes(batch) {
            return self.raw(batch, first, 0, hit);
        }
        let (mut pos, mut line_no) = (0, first);
        while pos < batch.len() {
            let rest = &batch[pos..];
            let clean = filter.clean_prefix(rest);
            if clean > 0 {
                let s = self.raw(&rest[..clean], line_no, pos, hit)?;
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
    fn redacted_match<'l>(
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
        let s = self.raw(batch, first, 0, &mut |n, body, next| {
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
    /// `first`; `base` is `text`'s offset in its batch, for `hit`'s end positions.
    fn raw(
        &self,
        text: &[u8],
        first: u64,
        base: usize,
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
        line_no += memchr::memchr_iter(b'\n', &text[counted..]).count() as u64;
        Ok(Scanned {
            lines: line_no - first + unterminated,
            stopped: false,
        })
    }

    /// Searches `lines` from line `line_no` on, on this thread, streaming the matches to the
    /// output (a named file, or the rest of a file that a worker handed back). Each batch is
    /// charged before it is searched. A NUL byte makes the input binary from its line on
    /// (docs/contract.md#tools): a named input then reports `path: binary file matches` at its
    /// next match, a walked file (`walked`) is skipped there. Returns whether a line matched, and
    /// whether a walked file was skipped as binary.
    #[allow(clippy::too_many_arguments)]
    fn stream(
        &self,
        ctx: &Ctx<'_>,
        lines: &mut Lines,
        ahead: &Ahead,
        filter: &mut Filter,
        mut line_no: u64,
        display: &[u8],
        mut report: Report,
        walked: bool,
    ) -> Result<Streamed, Stop> {
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
                    let scanned = self.scan(filter, text_part, line_no, &mut |n, line, _| {
                        found = true;
                        record(&mut text, display, n, line, report);
                        ends.push(text.len());
                        Ok(report == Report::Lines)
                    })?;
                    self.push_records(ctx, &text, &ends, display)?;
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
                            self.scan(filter, binary_part, line_no, &mut |n, line, _| {
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
                    let mut kept = (!ahead.can_read_again()).then(Kept::default);
                    let mut nul = false;
                    let matched = match self
                        .long_line(ctx, lines, ahead, filter, at, first, &mut kept, &mut nul)
                    {
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
                        } else {
                            let span = (at, end);
                            self.print_long_line(
                                ctx,
                                ahead,
                                &before,
                                span,
                                first_match,
                                line_no,
                                display,
                                report,
                            )?;
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

    /// Pushes `records` (grep's output lines, each ending at one of `ends`), where a matched line
    /// longer than the room left under the cap, and longer than the cap itself (so that no
    /// narrower call could show it whole), is shown as a window around its first match, so that
    /// the match reaches the caller (docs/contract.md#tools).
    fn push_records(
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
    fn window_span(&self, span: ShownSpan, room: usize) -> Option<(u64, u64)> {
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

    /// Searches a line longer than a block, which started at offset `at` with the piece `first`,
    /// reading it to its end. Returns where it ends (after its `\n`) and the offset of its first
    /// match in its shown text, when it matches; `nul` tells that it holds a NUL byte. The line
    /// must end within the read budget, or it is not looked at.
    #[allow(clippy::too_many_arguments)]
    fn long_line(
        &self,
        ctx: &Ctx<'_>,
        lines: &mut Lines,
        ahead: &Ahead,
        filter: &mut Filter,
        at: u64,
        first: Vec<u8>,
        kept: &mut Option<Kept>,
        nul: &mut bool,
    ) -> Result<Option<(u64, u64)>, Stop> {
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
                *matched = self.matcher.find_at(window, 0).map(|i| base + i as u64);
            }
        };
        look(&window, base, &mut matched);
        loop {
            let searched = window.len().saturating_sub(self.overlap);
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
    #[allow(clippy::too_many_arguments)]
    fn print_long_line(
        &self,
        ctx: &Ctx<'_>,
        ahead: &Ahead,
        filter: &Filter,
        span: (u64, u64),
        first_match: u64,
        line_no: u64,
        display: &[u8],
        report: Report,
    ) -> Result<(), Stop> {
        let mut head = Vec::new();
        if report == Report::Binary {
            record(&mut head, display, line_no, b"", report);
            return ctx.out.push(&head);
        }
        head.extend_from_slice(display);
        head.extend_from_slice(format!(":{line_no}:").as_bytes());
        let mut again = filter.clone();
        again.start_long_line();
        let (mut at, end) = span;
        let room = ctx.out.room().saturating_sub(head.len());
        let cap = ctx.out.cap() as u64;
        if end - at >= room as u64 && end - at + head.len() as u64 > cap {
            let shown = ShownSpan {
                len: end - at,
                first_match,
            };
            if let Some((from, to)) = self.window_span(shown, room) {
                let mut text = Vec::new();
                let mut pos = 0u64;
                let mut block = vec![0u8; BLOCK];
                // The shown text is read from the line's start (redaction needs what comes
                // before), and kept only within the window.
                while at < end && pos < to {
                    let want = BLOCK.min(usize::try_from(end - at).unwrap_or(BLOCK));
                    let n = ahead.read(&mut block[..want], at)?;
                    if n == 0 {
                        break;
                    }
                    at += n as u64;
                    let piece = if at < end {
                        again.long_piece(&block[..n]).into_owned()
                    } else {
                        without_newline(&again.end_long_line(&block[..n])).to_vec()
                    };
                    let (lo, hi) = (pos, pos + piece.len() as u64);
                    if hi > from {
                        let s = from.saturating_sub(lo) as usize;
                        let e = (to.min(hi) - lo) as usize;
                        text.extend_from_slice(&piece[s..e]);
                    }
                    pos = hi;
                }
                let whole = at >= end && pos <= to;
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
        let mut block = vec![0u8; BLOCK];
        while at < end {
            let want = BLOCK.min(usize::try_from(end - at).unwrap_or(BLOCK));
            let n = ahead.read(&mut block[..want], at)?;
            if n == 0 {
                break;
            }
            at += n as u64;
            let shown = if at < end {
                again.long_piece(&block[..n]).into_owned()
            } else {
                again.end_long_line(&block[..n]).into_owned()
            };
            // The line's own `\n` goes out after it, alone.
            ctx.out.push(if at >= end {
                without_newline(&shown)
            } else {
                &shown
            })?;
        }
        ctx.out.push(b"\n")
    }

    /// Searches the file behind `lines` on a worker, holding what it finds: at most [`FOUND_MAX`]
    /// bytes, or less when the workers together hold [`HELD_MAX`]; past that, or at a line longer
    /// than a block, the file is handed back ([`Found::rest`]).
    fn collect(
        &self,
        mut lines: Lines,
        mut filter: Filter,
        display: &[u8],
        limits: Snapshot,
        stop: &AtomicBool,
        held: &AtomicUsize,
    ) -> Result<Found, Error> {
        let mut f = Found::default();
        let mut line_no: u64 = 1;
        loop {
            let at = lines.consumed();
            let Some(batch) = lines.next_batch(BLOCK)? else {
                break;
            };
            let b = match batch {
                Batch::Lines(b) => b,
                Batch::Piece(p) => {
                    // A long line is searched, and printed, on the printing thread.
                    let n = p.len();
                    lines.unread(n);
                    f.rest = Some(rest_of(lines, at, line_no, filter)?);
                    f.consumed = at;
                    return Ok(f);
                }
            };
            // A NUL makes the file binary from its line on: the lines before it are searched,
            // and the file is skipped there (docs/contract.md#tools).
            let whole = b.len();
            let b = match memchr::memchr(0, b) {
                Some(z) => {
                    f.binary = true;
                    &b[..memchr::memrchr(b'\n', &b[..z]).map_or(0, |i| i + 1)]
                }
                None => b,
            };
            let out = &mut f.out;
            let marks = &mut f.marks;
            let scanned = self
                .scan(&mut filter, b, line_no, &mut |n, line, end| {
                    record(out, display, n, line, Report::Lines);
                    marks.push((at + end as u64, out.len()));
                    Ok(true)
                })
                .map_err(|e| match e {
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
            if f.out.len() >= FOUND_MAX || held.load(Ordering::Relaxed) + f.out.len() >= HELD_MAX {
                let offset = f.consumed;
                f.rest = Some(rest_of(lines, offset, line_no, filter)?);
                return Ok(f);
            }
        }
        f.tally = filter.tally().cloned();
        Ok(f)
    }
}

/// What [`Search::stream`] found: whether a line matched, and whether a walked file was
/// skipped as binary at a NUL byte.
struct Streamed {
    found: bool,
    binary: bool,
}

impl Streamed {
    fn found(found: bool) -> Streamed {
        Streamed {
            found,
            binary: false,
        }
    }
}

/// A matched line's shown text: its length, and the offset of its first match.
#[derive(Clone, Copy)]
struct ShownSpan {
    len: u64,
    first_match: u64,
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

/// What grep keeps of a long line from a pipe, to print it if it matches.
#[derive(Default)]
struct Kept {
    /// The line as shown, without its `\n`, as far as the output can take it and at most
    /// [`HOLD`] bytes.
    text: Vec<u8>,
    /// Whether [`HOLD`] cut it short.
    cut: bool,
}

/// `line` without its `\n`, if it has one.
fn without_newline(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}

/// Appends one line of grep's output: `path:N:text`, or `path: binary file matches`.
fn record(out: &mut Vec<u8>, display: &[u8], line_no: u64, text: &[u8], report: Report) {
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
fn probe_binary(lines: &mut Lines) -> Result<(bool, usize), Error> {
    let head = lines.head(BINARY_PROBE)?;
    Ok((is_binary(head), head.len()))
}

/// A file of a directory search, found by the walk.
struct Job {
    index: usize,
    dir: Node,
    name: OsString,
    display: Vec<u8>,
    limits: Snapshot,
}

/// Searches a walked file. One that vanished, is no longer a regular file or is refused (a hard
/// link under `hardlinks = "deny"`) is left out without a word, as in any walk; one that cannot
/// be opened or read is left out and counted; running short of descriptors or memory is kept as
/// the error the search ends with. A binary file costs only the bytes that showed it binary.
/// `shown` is the caller's PATH, for errors.
fn search_job(
    ctx: &Ctx<'_>,
    search: &Search,
    job: &Job,
    shown: &str,
    stop: &AtomicBool,
    held: &AtomicUsize,
) -> Found {
    let mut found = match search_file(ctx, search, job, shown, stop, held) {
        Ok(f) => f,
        Err(e @ Error::Shortage(_)) => Found {
            shortage: Some(e),
            ..Found::default()
        },
        // What was found before a read error is dropped with the file.
        Err(_) => Found {
            unreadable: true,
            ..Found::default()
        },
    };
    // What was read, and what failed, is used once the directory is found again at its place.
    found.ticket = Some(ctx.gate.read_through(&job.dir));
    found
}

fn search_file(
    ctx: &Ctx<'_>,
    search: &Search,
    job: &Job,
    shown: &str,
    stop: &AtomicBool,
    held: &AtomicUsize,
) -> Result<Found, Error> {
    let Some((file, size)) = ctx.gate.open_child_file(&job.dir, &job.name, shown)? else {
        return Ok(Found::default());
    };
    let mut lines = Lines::new(file, Some(size), shown);
    // Text in UTF-16 or UTF-32 (docs/contract.md#tools): the first block read tells, without a
    // read of its own for every file of the walk.
    if let Some(e) = crate::read::Encoding::of_mark(lines.head(BINARY_PROBE)?) {
        ctx.out.note(crate::read::decoded_note(
            &String::from_utf8_lossy(&job.display),
            e,
        ));
        lines = Lines::new(
            crate::read::decoded(lines.into_file()?, e, shown)?,
            None,
            shown,
        );
    }
    match probe_binary(&mut lines)? {
        (false, _) => {
            let filter = Filter::new(ctx.policy.redact);
            search.collect(lines, filter, &job.display, job.limits, stop, held)
        }
        (true, probed) => Ok(Found {
            consumed: probed as u64,
            binary: true,
            ..Found::default()
        }),
    }
}

/// Files handed to a worker at once (fewer hand-overs, less waking of threads).
const BATCH: usize = 16;

/// Results that wait for their turn to be printed: at most this many files are searched ahead
/// of the one printed next, which bounds memory.
const MAX_AHEAD: usize = 8 * BATCH;

/// Prints the results of a search in file order.
struct Printer<'c, 'a> {
    ctx: &'c Ctx<'a>,
    /// The caller's PATH, as errors show it.
    shown: &'c str,
    search: &'c Search,
    held: &'c AtomicUsize,
    next: usize,
    waiting: BTreeMap<usize, (Vec<u8>, Found)>,
    found: bool,
    binary: usize,
    /// Files that could not be opened or read.
    unreadable: usize,
    /// Printing stopped: nothing more is printed.
    ended: bool,
}

impl Printer<'_, '_> {
    /// Takes the result of file `index`, and prints every result whose turn has come. Once
    /// printing has stopped (a limit, the cap, an error), results of later files are let go: the
    /// answer holds only what came before the stop, however the search was split.
    fn take(&mut self, index: usize, display: Vec<u8>, f: Found) -> Result<(), Stop> {
        if self.ended {
            self.held.fetch_sub(f.out.len(), Ordering::Relaxed);
            return Ok(());
        }
        let printed = self.print_in_order(index, display, f);
        if printed.is_err() {
            self.ended = true;
            for (_, f) in std::mem::take(&mut self.waiting).into_values() {
                self.held.fetch_sub(f.out.len(), Ordering::Relaxed);
            }
        }
        printed
    }

    fn print_in_order(&mut self, index: usize, display: Vec<u8>, f: Found) -> Result<(), Stop> {
        self.waiting.insert(index, (display, f));
        while let Some((display, f)) = self.waiting.remove(&self.next) {
            self.next += 1;
            // Lines, or a stop, come only from files whose directory was found again at its
            // place since they were read.
            let used = !f.out.is_empty()
                || f.rest.is_some()
                || f.consumed > self.ctx.budget.read_left()
                || f.unreadable
                || f.shortage.is_some();
            self.ctx
                .gate
                .settle_for(f.ticket.filter(|_| used), self.shown)?;
            let held = f.out.len();
            let printed = self.emit(&display, f);
            self.held.fetch_sub(held, Ordering::Relaxed);
            match &printed {
                Err(Stop::Truncated) => self.ctx.out.note_truncation(format!(
                    " in the matches of {}; narrow PATH or FILE_PATTERN, or search for a longer \
                     PATTERN, to see the rest",
                    String::from_utf8_lossy(&display)
                )),
                // The budget is the call's, not the file's: say where it ran out, so that the
                // files after it can be searched by a narrower call.
                Err(Stop::Error(e)) if *e == self.ctx.budget.read_exhausted() => {
                    self.ctx.out.note(format!(
                        "the read budget ran out in {}: the files after it were not searched; \
                         narrow PATH or FILE_PATTERN to search them",
                        String::from_utf8_lossy(&display)
                    ));
                }
                _ => {}
            }
            printed?;
        }
        Ok(())
    }

    /// Applies the read budget and the output cap to one file's result, in file order: the
    /// lines looked at within the budget are printed; the line that crossed it is not
    /// (docs/contract.md#limits). A handed-back file goes on here, streamed.
    fn emit(&mut self, display: &[u8], f: Found) -> Result<(), Stop> {
        let ctx = self.ctx;
        if let Some(e) = f.shortage {
            return Err(e.into());
        }
        if f.binary {
            self.binary += 1;
        }
        if f.unreadable {
            self.unreadable += 1;
        }
        let left = ctx.budget.read_left();
        if f.consumed > left {
            let cut = f
                .marks
                .iter()
                .take_while(|(through, _)| *through <= left)
                .last()
                .map_or(0, |&(_, len)| len);
            self.found |= cut > 0;
            ctx.out.push(&f.out[..cut])?;
            return Err(ctx.budget.read_exhausted().into());
        }
        ctx.budget.charge_read(f.consumed)?;
        self.found |= !f.marks.is_empty();
        let ends: Vec<usize> = f.marks.iter().map(|&(_, len)| len).collect();
        self.search.push_records(ctx, &f.out, &ends, display)?;
        if let Some(t) = &f.tally {
            ctx.out.add_redactions(t);
        }
        if let Some(mut rest) = f.rest {
            let shown_path = shown(display);
            let mut lines = Lines::resume(rest.file, rest.size, rest.offset, &shown_path)?;
            let ahead = lines.ahead()?;
            let result = self.search.stream(
                ctx,
                &mut lines,
                &ahead,
                &mut rest.filter,
                rest.line_no,
                display,
                Report::Lines,
                true,
            );
            rest.filter.report(ctx.out);
            self.found |= result.as_ref().is_ok_and(|s| s.found);
            self.binary += usize::from(result.as_ref().is_ok_and(|s| s.binary));
            match result {
                // A read error part way: the file is counted as one that could not be read
                // (its lines before the error are out already).
                Err(Stop::Error(Error::Io(_))) => self.unreadable += 1,
                other => {
                    other?;
                }
            }
        }
        Ok(())
    }
}

params! {
    /// grep's parameters, by name.
    pub struct Params<'a> of TOOL.params;
    /// The literal text to look for.
    pattern @ PATTERN: &'a [u8] = bytes,
    /// The file or directory to search, as the caller named it.
    path @ PATH: &'a [u8] = bytes,
    /// Whether a directory search goes into subdirectories.
    recursive: bool = bool,
    /// Whether to match regardless of case.
    ignore_case: bool = bool,
    /// The glob on the names of the files a directory search reads.
    file_pattern @ FILE_PATTERN: &'a [u8] = bytes,
    /// How deep a recursive search goes.
    max_depth @ MAX_DEPTH: u64 = int,
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let p = Params::of(args);
    let pattern = p.pattern;
    let path = shown(p.path);
    let recursive = p.recursive;
    let file_glob = crate::walk::name_glob("FILE_PATTERN", p.file_pattern, &|folder, name| {
        let path = crate::walk::join(p.path, folder);
        args.call_with(
            "grep",
            &[(Params::PATH, &path), (Params::FILE_PATTERN, name)],
        )
    })?;
    let max_depth = if recursive { p.max_depth as usize } else { 1 };
    let matcher = Matcher::new(pattern, p.ignore_case)?;
    let search = Search {
        overlap: matcher.max_len(pattern).saturating_sub(1),
        pattern_len: matcher.max_len(pattern) as u64,
        marker_risk: ctx.policy.redact && crate::redact::may_match_marker(pattern, p.ignore_case),
        matcher,
    };
    let outcome = |found: bool| {
        if found {
            Outcome::Success
        } else {
            note_literal(ctx, args);
            Outcome::Negative
        }
    };
    if args.given() < 2 && ctx.stdin_has_input() {
        // `ls | grep x` must not search the tree instead of the piped text.
        let call = |path: &[u8]| crate::names::command("grep", &[pattern, path]);
        return Err(Error::Usage(format!(
            "grep reads standard input only when PATH is -: {} searches the piped text, {} \
             searches the tree",
            call(b"-"),
            call(b".")
        ))
        .into());
    }
    if p.path == b"-" {
        let input = ctx.open_input(b"-", "grep")?;
        let lines = input.lines(&path)?;
        return search_one(ctx, &search, lines, b"(standard input)").map(outcome);
    }
    let node = ctx.gate.resolve(p.path)?;
    if node.kind() != K::Directory {
        let file = ctx.gate.open_read(&node, &path)?;
        let size = u64::try_from(node.stat().st_size).unwrap_or(0);
        let (file, size, encoding) = crate::read::text_of(file, size, &path)?;
        if let Some(e) = encoding {
            ctx.out.note(crate::read::decoded_note(&path, e));
        }
        let lines = Lines::new(file, size, &path);
        let display = quoted(p.path).into_owned();
        return search_one(ctx, &search, lines, &display).map(outcome);
    }
    let prefix = display_prefix(p.path);
    let ignores = if ctx.policy.respect_ignore_files {
        Ignores::Respect
    } else {
        Ignores::Off
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let stop = AtomicBool::new(false);
    let held = AtomicUsize::new(0);
    let mut printer = Printer {
        ctx,
        shown: &path,
        search: &search,
        held: &held,
        next: 0,
        waiting: BTreeMap::new(),
        found: false,
        binary: 0,
        unreadable: 0,
        ended: false,
    };
    let mut count = 0;
    let job_of = |e: &Entry<'_>, index: usize| Job {
        index,
        dir: e.dir.clone(),
        name: e.listed.name.clone(),
        display: quoted(e.display).into_owned(),
        limits: Snapshot::now(ctx),
    };
    let wanted = |e: &Entry<'_>| {
        e.listed.kind == K::File && file_glob.is_match(std::path::Path::new(&e.listed.name))
    };
    let mut skipped = Skipped::default();
    let walk = Walk {
        start: &node,
        shown: &path,
        prefix: &prefix,
        max_depth,
        ignores,
    };
    let result = if workers == 1 {
        let mut visit = |e: &Entry<'_>| -> Result<(), Stop> {
            if wanted(e) {
                let job = job_of(e, count);
                count += 1;
                let found = search_job(ctx, &search, &job, &path, &stop, &held);
                // Held as a worker's result is, until the printer lets it go.
                held.fetch_add(found.out.len(), Ordering::Relaxed);
                printer.take(job.index, job.display, found)?;
            }
            Ok(())
        };
        walk.run_for_contents(ctx, &mut skipped, &mut visit)
    } else {
        parallel(
            ctx,
            &search,
            &mut printer,
            &stop,
            &held,
            workers,
            |visit| {
                walk.run_for_contents(ctx, &mut skipped, &mut |e| {
                    if wanted(e) { visit(e) } else { Ok(()) }
                })
            },
            &job_of,
            &mut count,
        )
    };
    // The notes and the answer depend on every directory read: all are found again first.
    ctx.gate.settle(&path)?;
    note_skipped(ctx, printer.binary, printer.unreadable);
    skipped.note(ctx.out);
    if recursive {
        let deeper = crate::walk::MAX_DEPTH_LIMIT.to_string();
        skipped.note_depth(
            ctx.out,
            max_depth,
            &super::call_with(ctx, "grep", args, &[(Params::MAX_DEPTH, deeper.as_bytes())]),
        );
    }
    if result.is_ok() && !printer.found {
        skipped.note_ignored_when_empty(ctx.out, "line matched");
    }
    result?;
    Ok(outcome(printer.found))
}

/// Searches one input named as PATH (a file, or standard input) on this thread, streaming its
/// matches; a binary input answers `PATH: binary file matches` at its first match.
fn search_one(
    ctx: &Ctx<'_>,
    search: &Search,
    mut lines: Lines,
    display: &[u8],
) -> Result<bool, Stop> {
    let (binary, _) = probe_binary(&mut lines)?;
    let report = if binary {
        Report::Binary
    } else {
        Report::Lines
    };
    let ahead = lines.ahead()?;
    let mut filter = Filter::new(ctx.policy.redact);
    let result = search
        .stream(
            ctx,
            &mut lines,
            &ahead,
            &mut filter,
            1,
            display,
            report,
            false,
        )
        .map(|s| s.found);
    filter.report(ctx.out);
    if let Err(Stop::Truncated) = &result {
        ctx.out.note_truncation(format!(
            " in the matches of {}; search for a longer PATTERN to see fewer lines",
            String::from_utf8_lossy(display)
        ));
    }
    result
}

/// The notes of a directory search that skipped binary files, or files it could not open or
/// read (docs/contract.md#notes).
fn note_skipped(ctx: &Ctx<'_>, binary: usize, unreadable: usize) {
    let files = |n: usize| if n == 1 { "file" } else { "files" };
    if binary > 0 {
        ctx.out.note(format!(
            "{binary} binary {} skipped (a NUL byte); name one as PATH to search it",
            files(binary)
        ));
    }
    if unreadable > 0 {
        ctx.out.note(format!(
            "{unreadable} {} could not be read and {} skipped",
            files(unreadable),
            if unreadable == 1 { "was" } else { "were" }
        ));
    }
}

/// The parallel search: the walk runs here, in order (`walk` calls `visit` for each wanted file);
/// the files are searched by the workers; results are printed here, in order. A limit, a
/// truncation or an error stops the workers.
#[allow(clippy::too_many_arguments)]
fn parallel<'a>(
    ctx: &Ctx<'a>,
    search: &Search,
    printer: &mut Printer<'_, 'a>,
    stop: &AtomicBool,
    held: &AtomicUsize,
    workers: usize,
    walk: impl FnOnce(&mut dyn FnMut(&Entry<'_>) -> Result<(), Stop>) -> Result<(), Stop>,
    job_of: &dyn Fn(&Entry<'_>, usize) -> Job,
    count: &mut usize,
) -> Result<(), Stop> {
    let shown = printer.shown;
    let (job_tx, job_rx) = mpsc::sync_channel::<Vec<Job>>(workers * 2);
    let job_rx = Mutex::new(job_rx);
    // Each file's result is sent as soon as it is searched, so that a file searched early is
    // printed early (and kept in the answer if the deadline comes during a later file).
    let (done_tx, done_rx) = mpsc::channel::<(usize, Vec<u8>, Found)>();
    std::thread::scope(|scope| -> Result<(), Stop> {
        for _ in 0..workers {
            let (job_rx, done_tx) = (&job_rx, done_tx.clone());
            scope.spawn(move || {
                loop {
                    let batch = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(batch) = batch else { return };
                    for job in batch {
                        let f = if stop.load(Ordering::Relaxed) {
                            Found::default()
                        } else {
                            search_job(ctx, search, &job, shown, stop, held)
                        };
                        held.fetch_add(f.out.len(), Ordering::Relaxed);
                        if done_tx.send((job.index, job.display, f)).is_err() {
                            return;
                        }
                    }
                }
            });
        }
        drop(done_tx);
        let mut batch: Vec<Job> = Vec::with_capacity(BATCH);
        let mut visit = |e: &Entry<'_>| -> Result<(), Stop> {
            batch.push(job_of(e, *count));
            *count += 1;
            if batch.len() < BATCH {
                return Ok(());
            }
            if job_tx.send(std::mem::take(&mut batch)).is_err() {
                return Ok(());
            }
            let mut printed = Ok(());
            while printed.is_ok() && *count - printer.next > MAX_AHEAD {
                match done_rx.recv() {
                    Ok((i, d, f)) => printed = printer.take(i, d, f),
                    Err(_) => break,
                }
            }
            while printed.is_ok()
                && let Ok((i, d, f)) = done_rx.try_recv()
            {
                printed = printer.take(i, d, f);
            }
            if printed.is_err() {
                // The answer is complete: the files still queued need no search.
                stop.store(true, Ordering::Relaxed);
            }
            printed
        };
        let walked = walk(&mut visit);
        if !batch.is_empty() {
            let _ = job_tx.send(std::mem::take(&mut batch));
        }
        drop(job_tx);
        // The files found before the walk stopped are printed first, as a serial search would
        // have; a stop while printing them comes first too.
        let printed = (|| {
            while printer.next < *count {
                match done_rx.recv() {
                    Ok((i, d, f)) => printer.take(i, d, f)?,
                    Err(_) => break,
                }
            }
            Ok(())
        })();
        if printed.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        printed.and(walked)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_matcher_uses_simple_case_folding() {
        let m = Matcher::new("300k".as_bytes(), true).unwrap();
        assert!(m.find_at("temp 300\u{212A}".as_bytes(), 0).is_some());
        let m = Matcher::new("straße".as_bytes(), true).unwrap();
        assert!(m.find_at(b"STRASSE", 0).is_none());
    }

    #[test]
    fn literal_matcher_is_not_a_regex() {
        let m = Matcher::new(b"a.c", false).unwrap();
        assert!(m.find_at(b"abc", 0).is_none());
        assert_eq!(m.find_at(b"xa.c", 0), Some(1));
        assert!(
            Matcher::new(b"a\nb", false)
                .unwrap()
                .find_at(b"a\nb", 0)
                .is_none()
        );
    }

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
