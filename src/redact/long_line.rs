//! Lines longer than [`MAX_LINE`](super::MAX_LINE): redacted as a stream of pieces, with memory
//! bounded by the pieces fed, showing what is settled and holding back what a match may still
//! cover.

use super::block::{Block, Opener, find_begin, find_end};
use super::scan::Scan;
use super::{MAX_MATCH, Redactor, marker, rules, split_terminator};

/// Bytes of already shown text kept before a stream's pending bytes: `\b` looks at one.
pub(super) const CONTEXT: usize = 8;

/// Bytes kept before a stream's context only for a token's start to look back at
/// ([`rules::starts_token`]: its longest escape, a control sequence with 16 parameters, takes
/// 24): no match is looked for in them, so a piece judges a match as the whole line does.
pub(super) const LOOK_BEHIND: usize = 32;

/// One line longer than [`MAX_LINE`](super::MAX_LINE), redacted as a stream.
///
/// [`LongLine::feed`] gives what can be shown so far, holding back the last 2 x [`MAX_MATCH`] bytes
/// (a match that starts before them is whole, and so is any that starts before its secret; so what
/// is shown never changes once shown), and [`LongLine::finish`] the rest. Memory stays bounded by
/// the pieces fed, whatever the line's length. The block state after the line is the one
/// [`Redactor::line`] leaves after the whole line (a hidden line is hidden whole, even past an
/// `END` in it).
#[derive(Debug, Clone)]
pub struct LongLine {
    /// The line is key material inside an open block.
    hidden: bool,
    /// The block's marker was shown by this line.
    marked: bool,
    /// A hidden line holds `-----END` or `-----BEGIN`: the block ends after it.
    ends_block: bool,
    /// Up to [`CONTEXT`] bytes already shown, then the pending bytes.
    buf: Vec<u8>,
    ctx: usize,
    scan: Scan,
    /// Whether the line is a BEGIN line, and its terminator.
    opener: Opener,
}

impl LongLine {
    /// A long line that starts `hidden` (as key material inside an open block) or is scanned,
    /// with the values of the rules in `pairs` (one bit per rule) looked for at its start.
    pub(super) fn new(hidden: bool, pairs: u32) -> LongLine {
        LongLine {
            hidden,
            marked: false,
            ends_block: false,
            buf: Vec::new(),
            ctx: 0,
            scan: Scan::new(pairs),
            opener: Opener::default(),
        }
    }

    /// Takes the next piece of the line, read by `red`; returns what may be shown now.
    pub fn feed(&mut self, red: &mut Redactor, piece: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        if self.hidden {
            self.hide(red, piece, &mut out);
            self.opener.feed(piece);
            return out;
        }
        self.opener.feed(piece);
        self.buf.extend_from_slice(piece);
        // Small pieces wait until there is more to show than the hold-back: each scan then
        // moves the line on by at least MAX_MATCH bytes, and the work stays linear.
        if self.buf.len() - self.ctx < 3 * MAX_MATCH {
            return out;
        }
        let pos = self
            .scan
            .run(&self.buf, self.ctx, false, None, &mut out, red);
        let back = CONTEXT.max(self.scan.lookback);
        let keep = pos.saturating_sub(back + LOOK_BEHIND);
        self.buf.drain(..keep);
        self.ctx = pos - keep;
        // What lies before the context was searched with all it follows, by the last scan.
        self.scan.floor = self.ctx.saturating_sub(back);
        out
    }

    /// Ends the line; returns the rest of what to show, with the line's terminator.
    pub fn finish(mut self, red: &mut Redactor) -> Vec<u8> {
        let mut out = Vec::new();
        if self.hidden {
            if self.ends_block {
                red.block = None;
            }
            if self.marked {
                out.extend_from_slice(self.opener.terminator());
            }
        } else {
            let (body, term) = split_terminator(&self.buf[self.ctx..]);
            let (len, term) = (self.ctx + body.len(), term.to_vec());
            self.scan
                .run(&self.buf[..len], self.ctx, true, None, &mut out, red);
            out.extend_from_slice(&term);
        }
        if self.opener.opens() {
            red.block = Some(Block::opened(self.opener.quoted));
        }
        out
    }

    fn hide(&mut self, red: &mut Redactor, piece: &[u8], out: &mut Vec<u8>) {
        let Some(block) = &mut red.block else {
            return;
        };
        if !block.shown {
            block.shown = true;
            self.marked = true;
            out.extend_from_slice(marker(rules::private_key()).as_bytes());
            red.count(rules::private_key());
        }
        if !self.ends_block {
            // A marker may straddle two pieces: look at the seam too.
            let seam = &self.opener.recent[self.opener.recent.len().saturating_sub(9)..];
            let mut joint = seam.to_vec();
            joint.extend_from_slice(&piece[..piece.len().min(9)]);
            self.ends_block = [&joint[..], piece]
                .iter()
                .any(|h| find_end(h).is_some() || find_begin(h).is_some());
        }
    }
}
