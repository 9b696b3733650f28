//! Redaction: credentials in file content become `[REDACTED:RULE]` before any tool looks at
//! them (docs/contract.md#redaction).
//!
//! The readers (cat, head, tail, grep, diff) pass each stream they read (one file, or standard
//! input) through one [`Redactor`]: a batch of whole lines that holds no rule's keyword, outside
//! a private-key block and not right after a name line, goes through as it is
//! ([`Redactor::passes`], the fast path); otherwise each line is redacted on its own
//! ([`Redactor::line`]). The rules are data, in [`RULES`]; their patterns are compiled
//! on first use, one by one, only when a line holds one of their keywords, so a call that
//! meets no keyword never compiles a regular expression.
//!
//! What a line becomes:
//! - each secret value is replaced by `[REDACTED:RULE]`; the rest of the line stays
//!   (`Authorization: Bearer [REDACTED:authorization]`, `https://deploy:[REDACTED:url-password]@host`);
//! - in a private-key block the `BEGIN` and `END` lines stay and the lines between become one
//!   line `[REDACTED:private-key]` (with the first key line's indentation and terminator); the
//!   block ends at its `END` line or at the end of the stream, however long it is: the state is
//!   one flag, not a buffer, so memory stays bounded (a reader that starts inside the stream,
//!   tail, looks back for the line that opened the block: [`opened_before`]);
//! - a key written on one line (`"-----BEGIN …-----\nMII…\n-----END …-----\n"` in a JSON
//!   file) keeps its markers and loses what is between them.
//!
//! Invariant: nothing of a secret reaches the output (no prefix, suffix, length hint or hash):
//! a match's secret is replaced whole, and a token whose length is open-ended is replaced
//! through its last byte, however long. Line numbers are the caller's: a hidden line still
//! counts as a line of the file.
//!
//! The machines behind [`Redactor`] each have their file: `redact/block.rs` private-key blocks,
//! `redact/pairs.rs` name/value pairs, `redact/scan.rs` the per-line scan, `redact/long_line.rs`
//! lines longer than [`MAX_LINE`], and `redact/tally.rs` the tally; the rules are data in
//! `redact/rules.rs`, their keywords' prefilter in `redact/keywords.rs`.

mod block;
mod keywords;
mod long_line;
mod pairs;
mod rules;
mod scan;
mod tally;

use memchr::memmem;
use regex::bytes::{Regex, RegexBuilder};

pub use long_line::LongLine;
pub use rules::{Groups, MAX_MATCH, RULE_COUNT, RULES, Rule};
pub use tally::Tally;

use block::{Block, find_begin, find_end, key_line, may_end_opener, opens_block};
use pairs::{names, names_at_end};
use scan::Scan;

/// Bytes of key material on one line after which that key ends even without its `END`.
///
/// The key material is written on one line (`"-----BEGIN …-----\nMII…"` in a JSON string); the
/// bound keeps a stray marker in a long line of code from hiding the rest of it. A block of lines
/// has no such bound.
pub const MAX_KEY_BLOCK: usize = 64 * 1024;

/// Lines up to this long (with their terminator) go to [`Redactor::line`] whole; longer ones go
/// through [`Redactor::long_line`] in pieces.
pub const MAX_LINE: usize = 64 * 1024;

/// Bytes before a window that a reader starting there passes to [`Redactor::skip_window`].
///
/// A reader such as tail learns from them whether a private-key block is open at its start. A block
/// open at the window began with a BEGIN line that ends less than [`MAX_KEY_BLOCK`] bytes before it
/// (the bound ends it otherwise); the [`MAX_LINE`] bytes more hold that line's marker unless the
/// marker and the padding after it are longer, and then the look-back starts inside that padding,
/// which `skip_window` takes for the end of a BEGIN line (when unsure, hide).
pub const LOOKBACK: usize = MAX_KEY_BLOCK + MAX_LINE;

/// The longest keyword of the rules, in bytes: a keyword that lies across the seam of two
/// texts starts less than this many bytes before it and ends less than this many after it.
pub const KEYWORD_MAX: usize = keywords::LONGEST;

/// Whether any rule's keyword occurs in `text`.
///
/// When none does, [`Redactor::line`] leaves each of its lines as it is, unless a private-key block
/// or a name line's value carries over into them ([`Redactor::passes`]). A reader may search text
/// as it reads it, and ask [`Redactor::passes_searched`] later.
pub fn holds_keyword(text: &[u8]) -> bool {
    keywords::any(text)
}

/// The note diff adds when it shows redacted lines.
pub const PATCH_NOTE: &str =
    "the redacted lines are not the files' text, so this diff no longer applies with patch";

// The sets of rules (the prefilter's answer, the pairs, the live slots) are `u32` bit masks.
const _: () = assert!(RULE_COUNT <= 32, "one bit per rule in a u32");

/// A rule's pattern (or a marker's), compiled on bytes without Unicode classes.
fn compile(pattern: &str) -> Regex {
    // The patterns are constants that the tests compile: failing here is a bug in the table.
    RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .expect("every rule's pattern compiles (tested)")
}

/// What to show for one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// The line as it is.
    Same,
    /// The line with its secrets replaced: the whole line, its terminator kept.
    Replaced(Vec<u8>),
    /// Nothing: a line of a private-key block after the one that shows its marker.
    Hidden,
}

/// The redaction state of one stream (a file, or standard input): an open private-key block,
/// whether the last line was a name line whose value may follow, and the tally of what was
/// replaced.
#[derive(Debug, Default, Clone)]
pub struct Redactor {
    block: Option<Block>,
    /// The rules of which the last line was the name line ([`Rule::name`]), one bit per index
    /// into [`RULES`]: the next line may hold their values.
    pairs: u32,
    tally: Tally,
    /// The rules counted for the last line, for [`Redactor::discard_last`].
    last: Vec<usize>,
}

impl Redactor {
    /// A redactor at the start of a stream.
    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// Whether `lines` (one or more whole lines, the last maybe without `\n`) would all come
    /// out of [`Redactor::line`] unchanged: no rule's keyword occurs in them (as its rule
    /// compares it, see [`Rule::any_case`]), no private-key block is open, and the line before
    /// them was no name line of a name/value pair. A true answer leaves the state as it was, so
    /// the caller may show the lines as they are without calling `line`.
    pub fn passes(&self, lines: &[u8]) -> bool {
        self.at_rest() && !keywords::any(lines)
    }

    /// [`Redactor::passes`] of `lines` that are known to hold no keyword when `keyword_free` is
    /// set (the reader searched them with [`holds_keyword`] as it read them): then only the
    /// state is looked at.
    pub fn passes_searched(&self, lines: &[u8], keyword_free: bool) -> bool {
        if keyword_free {
            self.at_rest()
        } else {
            self.passes(lines)
        }
    }

    /// How many bytes at the start of `lines` (whole lines, the last maybe without `\n`) are
    /// whole lines that [`Redactor::line`] would all leave unchanged, as [`Redactor::passes`]
    /// decides for a batch: the start of the first line that holds a keyword (0 while a block
    /// is open or the line before was a name line), or all of `lines`. A reader shows that much
    /// as it is, gives the next line to `line`, and asks again from the line after it; each byte
    /// is searched once, so a batch with a keyword in one line costs little more than one that
    /// has none.
    pub fn clean_prefix(&self, lines: &[u8]) -> usize {
        if !self.at_rest() {
            return 0;
        }
        match keywords::find(lines) {
            None => lines.len(),
            Some(i) => memchr::memrchr(b'\n', &lines[..i]).map_or(0, |n| n + 1),
        }
    }

    /// What to show for `line`, one line of the stream with its terminator (`\n` or `\r\n`) if
    /// it has one, at most [`MAX_LINE`] bytes in practice (longer lines go through
    /// [`Redactor::long_line`]). Counts what it replaces.
    pub fn line(&mut self, line: &[u8]) -> Shown {
        self.last.clear();
        let pairs = std::mem::take(&mut self.pairs);
        let (body, term) = split_terminator(line);
        if let Some(block) = self.block {
            let shown = self.in_block(block, line, body, term);
            // A line that ends a block is judged whole as a name line, as `skip` judges the
            // last line it passes over.
            if self.block.is_none() {
                self.pairs = names(body, keywords::rules_of(body));
            }
            return shown;
        }
        match keywords::rules_of(line) {
            0 if pairs == 0 => Shown::Same,
            mask => self.plain(body, term, mask, pairs),
        }
    }

    /// Whether no private-key block is open and the last line was no name line: the state in
    /// which a line without keywords comes out unchanged.
    fn at_rest(&self) -> bool {
        self.block.is_none() && self.pairs == 0
    }

    /// Whether no private-key block is open and none opens in `lines`, so that
    /// [`Redactor::skip`] of any of them only moves on what the last of them tells
    /// ([`Redactor::skip_settled`] does that alone; a line that opens a block holds
    /// `-----BEGIN`).
    pub fn settled(&self, lines: &[u8]) -> bool {
        self.block.is_none() && find_begin(lines).is_none()
    }

    /// [`Redactor::skip`] of `lines` for which [`Redactor::settled`] holds: only whether the
    /// last of them is a name line ([`Rule::name`]) moves on, at the cost of a look at that
    /// line alone.
    pub fn skip_settled(&mut self, lines: &[u8]) {
        debug_assert!(
            self.settled(lines),
            "skip_settled of lines that move a key block on"
        );
        if !lines.is_empty() {
            self.pairs = names_at_end(lines);
        }
    }

    /// Moves past `lines` (whole lines) that the caller will not show, following private-key
    /// blocks without counting anything: grep, which shows only the lines that match, and
    /// tail, which starts from a window before the lines it shows, keep the block state right
    /// at a fraction of the cost of [`Redactor::line`]. A block whose marker line was skipped
    /// shows its marker on the first of its lines that is shown, and a value whose name line
    /// was skipped last goes as it would after that line was shown. Skipping nothing changes
    /// nothing.
    pub fn skip(&mut self, lines: &[u8]) {
        if self.settled(lines) {
            self.skip_settled(lines);
            return;
        }
        self.pairs = 0;
        for line in lines.split_inclusive(|&b| b == b'\n') {
            let (body, _) = split_terminator(line);
            if let Some(block) = &mut self.block {
                let ends = find_end(body).is_some() || find_begin(body).is_some();
                let key = block.judge(line);
                if !ends && key != Some(false) {
                    block.tentative &= key.is_none();
                    continue;
                }
                self.block = None;
            }
            if opens_block(body) {
                self.block = Some(Block::opened_by(body));
            }
        }
        if self.block.is_none() {
            self.pairs = names_at_end(lines);
        }
    }

    /// Moves past `before`, the bytes just before a window that a reader starts at without
    /// having read the stream from its start (tail): at most [`LOOKBACK`] of them, ending at the
    /// window's start, which is the start of a line. `inside_line` tells that `before` begins
    /// inside a line (it does not start the stream or follow a `\n`): that piece of a line is
    /// taken for the end of a BEGIN line when it could be one ([`LOOKBACK`] says why). A reader
    /// from the window on then shows no key material that a reader from the start hides, and no
    /// value whose name line lies before the window. The redactor is a new one, of the stream's
    /// start.
    pub fn skip_window(&mut self, before: &[u8], inside_line: bool) {
        debug_assert!(self.at_rest(), "skip_window starts a stream");
        let mut rest = before;
        if inside_line {
            let end = memchr::memchr(b'\n', before).map_or(before.len(), |i| i + 1);
            let (body, _) = split_terminator(&before[..end]);
            // Whether a quote followed the marker is not known: the block hides at once, and
            // ends at a line of code.
            self.block = may_end_opener(body).then_some(Block::guessed());
            rest = &before[end..];
        }
        self.skip(rest);
    }

    /// Takes the stream as inside a private-key block whose marker was not shown yet: for a
    /// reader that found, looking back past its window ([`opened_before`]), the line that opened
    /// the block.
    pub fn open_block(&mut self) {
        self.block = Some(Block::opened(false));
        self.pairs = 0;
    }

    /// A stream of one line longer than [`MAX_LINE`], to be fed in pieces, each with this
    /// redactor (the stream's own state stays in the [`LongLine`], so a reader can keep it from
    /// one block to the next).
    pub fn long_line(&mut self) -> LongLine {
        self.last.clear();
        let pairs = std::mem::take(&mut self.pairs);
        let hidden = match &mut self.block {
            // A line too long to be judged whole is key material ([`key_line`]).
            Some(b) => {
                b.tentative = false;
                true
            }
            None => false,
        };
        LongLine::new(hidden, pairs)
    }

    /// The tally of this stream so far.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// Takes back what the last call of [`Redactor::line`] (or the last long line) counted:
    /// for grep, which drops a redacted line that no longer matches, so that the tally counts
    /// the values that were shown.
    pub fn discard_last(&mut self) {
        for &r in &self.last {
            self.tally.counts[r] -= 1;
        }
        self.last.clear();
    }

    fn count(&mut self, rule: usize) {
        self.tally.counts[rule] += 1;
        self.last.push(rule);
    }

    /// A line outside any block that holds a keyword or follows a name line (`mask` names the
    /// rules whose keywords occur in it, `pairs` those whose name the line before was): its
    /// secrets, and whether it opens a block or is a name line. A line that opens a block does
    /// so whatever the state before it (an `END` before its marker closes the old block first),
    /// so that [`Redactor::skip_window`], which starts without knowing that state, agrees.
    fn plain(&mut self, body: &[u8], term: &[u8], mask: u32, pairs: u32) -> Shown {
        if opens_block(body) {
            self.block = Some(Block::opened_by(body));
        } else {
            self.pairs = names(body, mask);
        }
        let mut out = Vec::new();
        let mut scan = Scan::new(pairs);
        let before = self.last.len();
        scan.run(body, 0, true, Some(mask), &mut out, self);
        if self.last.len() == before {
            return Shown::Same;
        }
        out.extend_from_slice(term);
        Shown::Replaced(out)
    }

    /// A line shown as text while a block stands open or has just ended before it (its
    /// secrets, or the line as it is when no keyword occurs).
    fn unblocked(&mut self, line: &[u8], body: &[u8], term: &[u8]) -> Shown {
        match keywords::rules_of(line) {
            0 => Shown::Same,
            mask => self.plain(body, term, mask, 0),
        }
    }
}

/// Whether `before` may lie wholly inside a private-key block that opened further back.
///
/// `before` is the bytes a reader skipped over before its window ([`Redactor::skip_window`]). It
/// may when it holds no marker and no line of code, only lines that could be key material (base64,
/// a key's headers, blank lines), each shorter than [`MAX_LINE`] as a key's lines are (a longer
/// one, as a file of zeros, is no block of lines). Then the reader must look further back
/// ([`opened_before`]).
pub fn may_lie_in_block(before: &[u8]) -> bool {
    find_begin(before).is_none()
        && find_end(before).is_none()
        && before
            .split_inclusive(|&b| b == b'\n')
            .all(|line| line.len() < MAX_LINE && key_line(line) != Some(false))
}

/// What the last line of `lines` that decides tells, looking back from a reader's window.
///
/// `lines` are whole lines, read backwards from a reader's window in pieces. The answer is
/// `Some(true)` when that line opens a private-key block (the window lies inside that block),
/// `Some(false)` when it ends one, holds another marker or is a line of code (no block runs into
/// the window), `None` when no line of them decides.
pub fn opened_before(lines: &[u8]) -> Option<bool> {
    for line in lines.split_inclusive(|&b| b == b'\n').rev() {
        let (body, _) = split_terminator(line);
        if opens_block(body) {
            return Some(true);
        }
        // A key's lines are short: a line this long is no part of a block of lines.
        if find_begin(body).is_some()
            || find_end(body).is_some()
            || line.len() >= MAX_LINE
            || key_line(line) == Some(false)
        {
            return Some(false);
        }
    }
    None
}

/// The line that stands for a private-key block's material: `[REDACTED:private-key]`.
pub fn key_marker() -> String {
    marker(rules::private_key())
}

/// `[REDACTED:ID]` for rule `rule`.
fn marker(rule: usize) -> String {
    format!("[REDACTED:{}]", RULES[rule].id)
}

/// A line's text and its terminator (`\r\n`, `\n` or nothing).
fn split_terminator(line: &[u8]) -> (&[u8], &[u8]) {
    let n = match line {
        [.., b'\r', b'\n'] => 2,
        [.., b'\n'] => 1,
        _ => 0,
    };
    line.split_at(line.len() - n)
}

/// Whether grep's PATTERN could match a redacted line where it does not match the line as read.
///
/// It can only by overlapping a `[REDACTED:…]` marker, so only when it holds `[` or `]` or is a
/// piece of a marker (`REDACTED`, `private-key`); `ignore_case` compares ignoring case, and with it
/// any non-ASCII pattern counts as possible (case folding is Unicode's). When false, a line that
/// does not match as read cannot match once redacted: grep may search the text as read and redact
/// only the lines that match.
pub fn may_match_marker(pattern: &[u8], ignore_case: bool) -> bool {
    if pattern.contains(&b'[') || pattern.contains(&b']') {
        return true;
    }
    if ignore_case && !pattern.is_ascii() {
        return true;
    }
    RULES.iter().enumerate().any(|(i, _)| {
        let m = marker(i);
        if ignore_case {
            m.as_bytes()
                .windows(pattern.len().max(1))
                .any(|w| w.eq_ignore_ascii_case(pattern))
                || pattern.is_empty()
        } else {
            memmem::find(m.as_bytes(), pattern).is_some()
        }
    })
}

#[cfg(test)]
mod tests;
