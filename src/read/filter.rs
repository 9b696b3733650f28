//! The redaction adapter of the readers: [`Filter`] puts file content through the secret
//! detector when redaction is on (docs/contract.md#redaction), or passes it as it is.

use crate::envelope::Output;
use crate::redact::{LongLine, Redactor, Shown, Tally};

/// File content as the tools show it: through the secret detector when redaction is on.
///
/// It passes through the detector (docs/contract.md#redaction) before any tool logic sees it. One
/// filter per input: it carries the state of an open private-key block and of a name line whose
/// value may follow from line to line, and of a line longer than a block from piece to piece.
#[derive(Clone)]
pub struct Filter {
    red: Option<Redactor>,
    /// The redaction of a line longer than a block, which comes in pieces.
    long: Option<LongLine>,
    /// Inside a long line (also when redaction is off).
    in_long: bool,
}

impl Filter {
    /// A filter that redacts when `redact` is set, else shows content as it is.
    pub fn new(redact: bool) -> Filter {
        Filter {
            red: redact.then(Redactor::new),
            long: None,
            in_long: false,
        }
    }

    /// Whether this filter redacts at all.
    pub fn redacts(&self) -> bool {
        self.red.is_some()
    }

    /// Whether the whole lines `lines` come out unchanged (checked at memory speed).
    pub fn passes(&self, lines: &[u8]) -> bool {
        self.red.as_ref().is_none_or(|r| r.passes(lines))
    }

    /// [`Filter::passes`] of lines known to hold no keyword when `keyword_free` is set
    /// ([`Lines::next_searched`](super::Lines::next_searched)): then only the state is looked at.
    pub fn passes_searched(&self, lines: &[u8], keyword_free: bool) -> bool {
        self.red
            .as_ref()
            .is_none_or(|r| r.passes_searched(lines, keyword_free))
    }

    /// How many bytes at the start of `lines` (whole lines) come out unchanged: they may be shown
    /// as they are, the next line goes through [`Filter::line`], and the rest is asked again.
    pub fn clean_prefix(&self, lines: &[u8]) -> usize {
        self.red
            .as_ref()
            .map_or(lines.len(), |r| r.clean_prefix(lines))
    }

    /// What to show for one whole line.
    pub fn line(&mut self, line: &[u8]) -> Shown {
        match &mut self.red {
            Some(r) => r.line(line),
            None => Shown::Same,
        }
    }

    /// Whether no private-key block is open and none opens in `lines`: then [`Filter::skip`] of
    /// any of them only looks at the last one, and a reader may call
    /// [`Filter::skip_settled`] instead.
    pub fn settled(&self, lines: &[u8]) -> bool {
        self.red.as_ref().is_none_or(|r| r.settled(lines))
    }

    /// [`Filter::skip`] of lines that [`Filter::settled`] approved: a look at the last of them
    /// (a name line of a name/value pair puts its value on the next line).
    pub fn skip_settled(&mut self, lines: &[u8]) {
        if let Some(r) = &mut self.red {
            r.skip_settled(lines);
        }
    }

    /// Reads past whole lines without showing them: only the state of private-key blocks and name
    /// lines moves on, and nothing is counted.
    pub fn skip(&mut self, lines: &[u8]) {
        if let Some(r) = &mut self.red {
            r.skip(lines);
        }
    }

    /// Moves past the bytes before a window that a reader starts at without reading the input
    /// from its start (see [`Redactor::skip_window`]).
    pub fn skip_window(&mut self, before: &[u8], inside_line: bool) {
        if let Some(r) = &mut self.red {
            r.skip_window(before, inside_line);
        }
    }

    /// Takes the input as inside a private-key block (see [`Redactor::open_block`]).
    pub fn open_block(&mut self) {
        if let Some(r) = &mut self.red {
            r.open_block();
        }
    }

    /// Whether a long line is being read in pieces.
    pub fn in_long_line(&self) -> bool {
        self.in_long
    }

    /// A line longer than a block begins.
    pub fn start_long_line(&mut self) {
        self.in_long = true;
        self.long = self.red.as_mut().map(Redactor::long_line);
    }

    /// What to show for a piece of a long line (the redactor may hold back the end of it, to see
    /// a secret whole; it comes out with a later piece).
    pub fn long_piece<'a>(&mut self, piece: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        match (&mut self.red, &mut self.long) {
            (Some(r), Some(l)) => l.feed(r, piece).into(),
            _ => piece.into(),
        }
    }

    /// What to show for the end of a long line (through its `\n`).
    pub fn end_long_line<'a>(&mut self, tail: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        self.in_long = false;
        match (&mut self.red, self.long.take()) {
            (Some(r), Some(mut l)) => {
                let mut shown = l.feed(r, tail);
                shown.extend(l.finish(r));
                shown.into()
            }
            _ => tail.into(),
        }
    }

    /// Reads past a piece of a long line without showing it.
    pub fn skip_long_piece(&mut self, piece: &[u8]) {
        let _ = self.long_piece(piece);
    }

    /// Reads past the end of a long line without showing it: nothing of it is counted.
    pub fn skip_end_long_line(&mut self, tail: &[u8]) {
        let _ = self.end_long_line(tail);
        if let Some(r) = &mut self.red {
            r.discard_last();
        }
    }

    /// Takes back what the last line counted (grep drops a redacted line that no longer matches).
    pub fn discard_last(&mut self) {
        if let Some(r) = &mut self.red {
            r.discard_last();
        }
    }

    /// What was redacted so far.
    pub fn tally(&self) -> Option<&Tally> {
        self.red.as_ref().map(Redactor::tally)
    }

    /// Adds this input's redactions to the call's (for the note and the audit log).
    pub fn report(&self, out: &Output) {
        if let Some(t) = self.tally() {
            out.add_redactions(t);
        }
    }
}
