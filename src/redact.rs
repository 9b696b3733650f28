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

mod keywords;
mod rules;

use std::sync::{LazyLock, OnceLock};

use memchr::memmem;
use regex::bytes::{Regex, RegexBuilder};

pub use rules::{Groups, MAX_MATCH, RULE_COUNT, RULES, Rule};

/// Bytes of key material written on one line (`"-----BEGIN …-----\nMII…"` in a JSON string)
/// after which that key ends even without its `END`: the bound keeps a stray marker in a long
/// line of code from hiding the rest of it. A block of lines has no such bound.
pub const MAX_KEY_BLOCK: usize = 64 * 1024;

/// Lines up to this long (with their terminator) go to [`Redactor::line`] whole; longer ones go
/// through [`Redactor::long_line`] in pieces.
pub const MAX_LINE: usize = 64 * 1024;

/// Bytes before a window that a reader starting there (tail) passes to [`Redactor::skip_window`]
/// to learn whether a private-key block is open at its start. A block open at the window began
/// with a BEGIN line that ends less than [`MAX_KEY_BLOCK`] bytes before it (the bound ends it
/// otherwise); the [`MAX_LINE`] bytes more hold that line's marker unless the marker and the
/// padding after it are longer, and then the look-back starts inside that padding, which
/// `skip_window` takes for the end of a BEGIN line (when unsure, hide).
pub const LOOKBACK: usize = MAX_KEY_BLOCK + MAX_LINE;

/// The longest keyword of the rules, in bytes: a keyword that lies across the seam of two
/// texts starts less than this many bytes before it and ends less than this many after it.
pub const KEYWORD_MAX: usize = keywords::LONGEST;

/// Whether any rule's keyword occurs in `text`. When none does, [`Redactor::line`] leaves each
/// of its lines as it is, unless a private-key block or a name line's value carries over into
/// them ([`Redactor::passes`]). A reader may search text as it reads it, and ask
/// [`Redactor::passes_searched`] later.
pub fn holds_keyword(text: &[u8]) -> bool {
    keywords::any(text)
}

/// The longest BEGIN marker: `-----BEGIN`, 32 bytes of label, `PRIVATE KEY BLOCK-----`.
const MARKER_MAX: usize = 10 + 32 + 17 + 5;

/// The note diff adds when it shows redacted lines.
pub const PATCH_NOTE: &str =
    "the redacted lines are not the files' text, so this diff no longer applies with patch";

/// Bytes of already shown text kept before a stream's pending bytes: `\b` looks at one.
const CONTEXT: usize = 8;

/// Bytes kept before a stream's context only for a token's start to look back at
/// ([`rules::starts_token`]: its longest escape, a control sequence with 16 parameters, takes
/// 24): no match is looked for in them, so a piece judges a match as the whole line does.
const LOOK_BEHIND: usize = 32;

/// Bytes a stream in a secret's tail or in inline key material holds back: enough for the
/// line terminator and for a `-----END` that a piece boundary cuts.
const HOLD: usize = 8;

/// Each rule's pattern, compiled on first use ([`regex()`]).
static REGEXES: [OnceLock<Regex>; RULE_COUNT] = [const { OnceLock::new() }; RULE_COUNT];
/// Each rule's name pattern ([`Rule::name`]), compiled on first use ([`names`]).
static NAMES: [OnceLock<Regex>; RULE_COUNT] = [const { OnceLock::new() }; RULE_COUNT];

// The sets of rules (the prefilter's answer, the pairs, the live slots) are `u32` bit masks.
const _: () = assert!(RULE_COUNT <= 32, "one bit per rule in a u32");

/// Rule `i`'s pattern, compiled on first use.
fn regex(i: usize) -> &'static Regex {
    REGEXES[i].get_or_init(|| compile(RULES[i].pattern))
}

/// The rules whose values follow a name line ([`Rule::name`]), one bit per index into [`RULES`]:
/// their patterns are looked for only at the start of the line after one.
static PAIRS: u32 = {
    let (mut bits, mut i) = (0, 0);
    while i < RULE_COUNT {
        if RULES[i].name.is_some() {
            bits |= 1 << i;
        }
        i += 1;
    }
    bits
};

/// The longest name line ([`Rule::name`]), in bytes without its terminator: a longer line is
/// none (the tests check that no name pattern matches more).
const NAME_MAX: usize = 256;

/// The rules with a name pattern in `mask` (the rules whose keywords occur in `body`, one bit
/// per index into [`RULES`]) of which `body`, a line without its terminator, is the name line,
/// in the same form.
fn names(body: &[u8], mask: u32) -> u32 {
    match mask & PAIRS != 0 && may_name(body) {
        true => name_matches(body, mask & PAIRS),
        false => 0,
    }
}

/// The rules among `pairs` (rules with a name pattern, one bit per index into [`RULES`]) whose
/// name pattern `body` matches.
fn name_matches(body: &[u8], pairs: u32) -> u32 {
    let mut found = pairs;
    let mut bits = pairs;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let pattern = RULES[i].name.expect("a rule in PAIRS has a name pattern");
        if !NAMES[i].get_or_init(|| compile(pattern)).is_match(body) {
            found &= !(1 << i);
        }
    }
    found
}

/// Whether `body` (a line without its terminator) could be a name line, at a glance, as every
/// name pattern requires: it is at most [`NAME_MAX`] bytes long, and the text before its first
/// `:`, less the spaces, tabs and quotes at its end, ends in `name` or `key`, or is a header
/// name that ends in `authorization` (folded over two lines), ignoring ASCII case. Most lines
/// fail here, before any pattern.
fn may_name(body: &[u8]) -> bool {
    if body.len() > NAME_MAX {
        return false;
    }
    let Some(colon) = memchr::memchr(b':', body) else {
        return false;
    };
    let field = body[..colon]
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t' | b'"' | b'\''))
        .map_or(&b""[..], |i| &body[..=i]);
    let ends = |word: &[u8]| {
        field.len() >= word.len() && field[field.len() - word.len()..].eq_ignore_ascii_case(word)
    };
    ends(b"name") || ends(b"key") || ends(b"authorization")
}

/// The rules of which the last line of `lines` (whole lines) is the name line, one bit per
/// index into [`RULES`]. The keyword scan runs only on a line that [`may_name`] lets through.
fn names_at_end(lines: &[u8]) -> u32 {
    let head = &lines[..lines.len().saturating_sub(1)];
    let start = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
    let (body, _) = split_terminator(&lines[start..]);
    match may_name(body) {
        true => name_matches(body, keywords::rules_in(body) & PAIRS),
        false => 0,
    }
}

fn compile(pattern: &str) -> Regex {
    // The patterns are constants that the tests compile: failing here is a bug in the table.
    RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .expect("every rule's pattern compiles (tested)")
}

/// The BEGIN marker at the end of a text.
fn marker_at_end() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| compile(r"-----BEGIN[ A-Z0-9]{0,32}PRIVATE KEY(?: BLOCK)?-----$"))
}

/// Where the first `-----BEGIN` in `hay` starts (its searcher is built once: grep and tail
/// ask for every stretch of lines they pass over).
fn find_begin(hay: &[u8]) -> Option<usize> {
    static FINDER: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"-----BEGIN"));
    FINDER.find(hay)
}

/// Where the first `-----END` in `hay` starts.
fn find_end(hay: &[u8]) -> Option<usize> {
    static FINDER: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"-----END"));
    FINDER.find(hay)
}

/// Padding a BEGIN line may hold after its marker: spaces, `\r` (a file converted to CRLF
/// twice ends its lines `\r\r\n`), quotes, separators, a continuation backslash, and what joins
/// or passes on the string literals of a key written in code: `+`, `.` and `)`
/// (`"-----BEGIN …-----\n" +`, PHP's `.`, Lua's `..`, Java's `sb.append("…\n");`).
fn is_padding(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\r' | b'"' | b'\'' | b',' | b';' | b'\\' | b'+' | b'.' | b')'
    )
}

/// Where the [padding](is_padding) at the end of `bytes` starts, counting as padding too the
/// escaped line breaks of a key written as string literals (`\n`, `\r`: Go, Python, Java and
/// JavaScript write `"-----BEGIN …-----\n"`). `before` is the byte before `bytes`, for a line
/// read in pieces (a backslash is padding itself, so an escape split between two pieces is
/// padding on both sides).
fn padding_start(bytes: &[u8], before: Option<u8>) -> usize {
    let mut end = bytes.len();
    while end > 0 {
        let b = bytes[end - 1];
        let prev = if end >= 2 {
            Some(bytes[end - 2])
        } else {
            before
        };
        if matches!(b, b'n' | b'r') && prev == Some(b'\\') {
            end = end.saturating_sub(2);
        } else if is_padding(b) {
            end -= 1;
        } else {
            break;
        }
    }
    end
}

/// Whether `body` (a line without its terminator) opens a private-key block: it ends with the
/// BEGIN marker and then nothing but [padding](padding_start), however long the line. Only its
/// last bytes decide, so a line read in pieces is judged alike ([`Opener`]).
fn opens_block(body: &[u8]) -> bool {
    let end = padding_start(body, None);
    marker_at_end().is_match(&body[end.saturating_sub(MARKER_MAX)..end])
}

/// Whether the end of a line, of which only `piece` (its last bytes, without the terminator) is
/// known, could be the end of a BEGIN line: `piece` is one, or is nothing but padding, or a
/// piece of a marker and padding, or starts with an escape's letter whose backslash may end
/// the bytes before it.
fn may_end_opener(piece: &[u8]) -> bool {
    let text = &piece[..padding_start(piece, None)];
    opens_block(piece)
        || matches!(text, b"n" | b"r")
        || (text.len() < MARKER_MAX
            && text
                .iter()
                .all(|&b| matches!(b, b'-' | b' ' | b'A'..=b'Z' | b'0'..=b'9')))
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

/// An open private-key block.
#[derive(Debug, Clone, Copy)]
struct Block {
    /// Whether the `[REDACTED:private-key]` line was shown for it.
    shown: bool,
    /// Its BEGIN marker stands in a string literal or a sentence (a quote, `.` or `)` follows
    /// it): a constant in code
    /// (`"-----BEGIN RSA PRIVATE KEY-----",`, `'-----BEGIN …-----\n'` before code that builds a
    /// key) as often as the first of a key's lines written as literals. Until a line decides
    /// ([`key_line`]), the block hides nothing; a line of code ends it.
    tentative: bool,
    /// Opened by a look-back that began inside a line that may have been a BEGIN line
    /// ([`Redactor::skip_window`]): it hides at once, as a block does, but a line of code (as
    /// [`key_line`] judges it) ends it, since its BEGIN line was only a guess.
    guessed: bool,
}

impl Block {
    /// What `line` is to this block: key material (`Some(true)`), not yet known (`None`), or
    /// code that ends a tentative block (`Some(false)`), as [`key_line`] judges it; every line of
    /// a block that is not tentative is key material.
    fn judge(&self, line: &[u8]) -> Option<bool> {
        if self.tentative || self.guessed {
            key_line(line)
        } else {
            Some(true)
        }
    }

    /// The block that the BEGIN line `body` (without its terminator) opens.
    fn opened_by(body: &[u8]) -> Block {
        Block::opened(quoted(&body[padding_start(body, None)..]))
    }

    /// A block just opened; `tentative` when its marker stands in a string literal.
    fn opened(tentative: bool) -> Block {
        Block {
            shown: false,
            tentative,
            guessed: false,
        }
    }

    /// A block whose BEGIN line is only guessed ([`Block::guessed`]).
    fn guessed() -> Block {
        Block {
            guessed: true,
            ..Block::opened(false)
        }
    }
}

/// Whether `padding` (what follows a BEGIN marker) holds a quote, or the `.` or `)` that end a
/// sentence or a call: then the marker may be text about keys, not the start of one
/// ([`Block::tentative`]).
fn quoted(padding: &[u8]) -> bool {
    padding
        .iter()
        .any(|&b| matches!(b, b'"' | b'\'' | b'.' | b')'))
}

/// The header names of an encrypted PEM key (RFC 1421: `Proc-Type`, `DEK-Info`) and of an
/// OpenPGP armored key (RFC 4880: `Version`, `Comment`, `Hash`, `Charset`, `MessageID`): a line
/// that holds one is key material.
const KEY_HEADERS: [&[u8]; 7] = [
    b"Proc-Type:",
    b"DEK-Info:",
    b"Version:",
    b"Comment:",
    b"Hash:",
    b"Charset:",
    b"MessageID:",
];

/// Base64 characters in a row, among them a digit, `+` or `/`, that make a line key material
/// after a marker in a string literal: a PEM or OpenSSH line holds 64 or 70, and keys wrapped
/// narrower still hold this many; a line of code rarely does (identifiers break on `_`, calls on
/// `(` and `.`, and a long name is mostly letters).
const KEY_RUN: usize = 16;

/// Base64 characters in a row that make a line key material whatever they are: no name in code
/// runs this long, and 40 random base64 characters hold a digit, `+` or `/` but for one line in
/// four thousand.
const KEY_RUN_ANY: usize = 40;

/// Whether `line` (with its terminator), a line after a BEGIN marker in a string literal, is
/// key material: `Some(true)` when it holds [`KEY_RUN`] base64 characters in a row with a digit,
/// `+` or `/` among them, or [`KEY_RUN_ANY`] of any kind (counting JSON's escaped `\/` and
/// `\u002B`-style escapes of `+`, `/` and `=` as the characters they stand for), holds a key's
/// header (`b"Proc-Type: …`, `sb.append("DEK-Info: …`), or is too long to be judged whole (every reader hides such a line after an open block); `None` when it
/// is blank (spaces, quotes and separators) or a comment, so that the next line decides;
/// `Some(false)` otherwise: code, which ends the block. When unsure, it is key material.
fn key_line(line: &[u8]) -> Option<bool> {
    if line.len() >= MAX_LINE {
        return Some(true);
    }
    let (body, _) = split_terminator(line);
    let (mut i, mut run, mut random) = (0, 0, false);
    while i < body.len() {
        let rest = &body[i..];
        let escaped = match rest {
            [b'\\', b'/', ..] => 2,
            [b'\\', b'u', b'0', b'0', b'2' | b'3', x, ..]
                if matches!(x.to_ascii_lowercase(), b'b' | b'f' | b'd') =>
            {
                6
            }
            [b, ..] if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=') => 1,
            _ => 0,
        };
        if escaped == 0 {
            (run, random) = (0, false);
        } else {
            run += 1;
            random |= escaped > 1 || !rest[0].is_ascii_alphabetic();
        }
        if run >= KEY_RUN_ANY || (run >= KEY_RUN && random) {
            return Some(true);
        }
        i += escaped.max(1);
    }
    if KEY_HEADERS
        .iter()
        .any(|h| memchr::memmem::find(body, h).is_some())
    {
        return Some(true);
    }
    let text = body.trim_ascii_start();
    let comment = [
        &b"#"[..],
        b"//",
        b"/*",
        b"*",
        b"--",
        b";",
        b"<!--",
        b"%",
        b"'",
        b"REM ",
    ]
    .iter()
    .any(|c| text.starts_with(c));
    if comment || padding_start(text, None) == 0 {
        return None;
    }
    Some(false)
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
        LongLine {
            hidden,
            marked: false,
            ends_block: false,
            buf: Vec::new(),
            ctx: 0,
            scan: Scan {
                pairs,
                ..Scan::default()
            },
            opener: Opener::default(),
        }
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
        let mut scan = Scan {
            pairs,
            ..Scan::default()
        };
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

    /// A line while a block is open.
    fn in_block(&mut self, mut block: Block, line: &[u8], body: &[u8], term: &[u8]) -> Shown {
        if let Some(i) = find_end(body) {
            self.block = None;
            let indent = body.iter().take_while(|b| b.is_ascii_whitespace()).count();
            let material = body[indent..i]
                .iter()
                .any(|&b| !matches!(b, b'"' | b'\'' | b' ' | b'\t' | b'\\'))
                && !(block.tentative && key_line(&body[indent..i]) == Some(false));
            if !material {
                return self.plain(body, term, keywords::rules_of(body), 0);
            }
            // Key material before the END marker on the same line: it goes too.
            let mut out = body[..indent].to_vec();
            if !block.shown {
                out.extend_from_slice(marker(rules::private_key()).as_bytes());
                self.count(rules::private_key());
            }
            match self.plain(&body[i..], term, keywords::rules_of(&body[i..]), 0) {
                Shown::Replaced(rest) => out.extend_from_slice(&rest),
                _ => {
                    out.extend_from_slice(&body[i..]);
                    out.extend_from_slice(term);
                }
            }
            return Shown::Replaced(out);
        }
        let key = block.judge(line);
        if find_begin(body).is_some() || key == Some(false) {
            // A new BEGIN without an END, or code after a marker in a string literal: the
            // block ends before this line.
            self.block = None;
            return self.unblocked(line, body, term);
        }
        if key.is_none() {
            // A blank line or a comment: shown as any line is (a comment may hold a token),
            // and the next line decides.
            self.block = Some(block);
            let shown = self.unblocked(line, body, term);
            // No name/value pair runs across a block, even one not yet decided.
            self.pairs = 0;
            return shown;
        }
        block.tentative = false;
        let first = !block.shown;
        block.shown = true;
        self.block = Some(block);
        if !first {
            return Shown::Hidden;
        }
        self.count(rules::private_key());
        let indent = body
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count();
        let mut out = body[..indent].to_vec();
        out.extend_from_slice(marker(rules::private_key()).as_bytes());
        out.extend_from_slice(term);
        Shown::Replaced(out)
    }
}

/// Whether `before`, the bytes a reader skipped over before its window ([`Redactor::skip_window`]),
/// may lie wholly inside a private-key block that opened further back: it holds no marker and
/// no line of code, only lines that could be key material (base64, a key's headers, blank
/// lines), each shorter than [`MAX_LINE`] as a key's lines are (a longer one, as a file of
/// zeros, is no block of lines). Then the reader must look further back ([`opened_before`]).
pub fn may_lie_in_block(before: &[u8]) -> bool {
    find_begin(before).is_none()
        && find_end(before).is_none()
        && before
            .split_inclusive(|&b| b == b'\n')
            .all(|line| line.len() < MAX_LINE && key_line(line) != Some(false))
}

/// Looking back through `lines` (whole lines, read backwards from a reader's window in pieces),
/// what the last line that decides tells: `Some(true)` when it opens a private-key block (the
/// window lies inside that block), `Some(false)` when it ends one, holds another marker or is a
/// line of code (no block runs into the window), `None` when no line of them decides.
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

/// One line longer than [`MAX_LINE`], redacted as a stream: [`LongLine::feed`] gives what can
/// be shown so far, holding back the last 2 x [`MAX_MATCH`] bytes (a match that starts before
/// them is whole, and so is any that starts before its secret; so what is shown never changes
/// once shown), and [`LongLine::finish`] the rest.
/// Memory stays bounded by the pieces fed, whatever the line's length. The block state after
/// the line is the one [`Redactor::line`] leaves after the whole line (a hidden line is hidden
/// whole, even past an `END` in it).
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

/// Whether a line read in pieces is a BEGIN line, decided as [`opens_block`] decides for the
/// whole line: from its last bytes before the padding and the terminator. Keeps a few bytes,
/// whatever the line's length.
#[derive(Debug, Clone, Default)]
struct Opener {
    /// The last [`MARKER_MAX`] bytes fed.
    recent: Vec<u8>,
    /// The [`MARKER_MAX`] bytes that end with the last byte fed that is neither padding nor the
    /// line's `\n`.
    text_end: Vec<u8>,
    /// The last two bytes fed.
    end: [u8; 2],
    /// Whether the padding after the text makes the block tentative ([`quoted`]).
    quoted: bool,
}

impl Opener {
    fn feed(&mut self, piece: &[u8]) {
        // Only the last piece ends in `\n`, and a `\r` anywhere is padding.
        let body = piece.strip_suffix(b"\n").unwrap_or(piece);
        match padding_start(body, self.recent.last().copied()) {
            0 => self.quoted |= quoted(piece),
            i => {
                let mut text = self.recent.clone();
                text.extend_from_slice(&piece[..i]);
                self.text_end = last(&text, MARKER_MAX).to_vec();
                self.quoted = quoted(&piece[i..]);
            }
        }
        self.recent.extend_from_slice(last(piece, MARKER_MAX));
        let cut = self.recent.len().saturating_sub(MARKER_MAX);
        self.recent.drain(..cut);
        for &b in last(piece, 2) {
            self.end = [self.end[1], b];
        }
    }

    /// The line's terminator: `\r\n`, `\n` or nothing.
    fn terminator(&self) -> &'static [u8] {
        match self.end {
            [b'\r', b'\n'] => b"\r\n",
            [_, b'\n'] => b"\n",
            _ => b"",
        }
    }

    /// Whether the line, fed whole, opens a block.
    fn opens(&self) -> bool {
        marker_at_end().is_match(&self.text_end)
    }
}

/// The last `n` bytes of `bytes` (all of them when fewer).
fn last(bytes: &[u8], n: usize) -> &[u8] {
    &bytes[bytes.len().saturating_sub(n)..]
}

/// Characters a token goes on with: base64 in both alphabets, and `-._~`.
fn token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"+/=-._~".contains(&b)
}

/// Where a scan of one line stands between two pieces.
#[derive(Debug, Default, Clone, Copy)]
enum Inline {
    /// Looking for the next match.
    #[default]
    Plain,
    /// In the tail of an open-ended token, which goes on while its bytes are of this class.
    Tail(fn(u8) -> bool),
    /// In private-key material written on one line, up to `-----END`.
    Key {
        /// Bytes dropped so far.
        material: usize,
        /// The last two bytes dropped (a `\n` escape before `-----END` is shown again).
        last: [u8; 2],
    },
}

/// The scan of one line, whole or in pieces.
#[derive(Debug, Default, Clone)]
struct Scan {
    state: Inline,
    /// The rules whose values may start the text ([`Rule::name`]: the line before was their
    /// name line), for the first [`Scan::run`] only.
    pairs: u32,
    /// Bytes before the position the last [`Scan::run`] returned that the next piece's text
    /// must start with (on top of [`CONTEXT`]): a match found there whose secret is not over.
    lookback: usize,
    /// Bytes at the start of the text that are there only to be looked back at
    /// ([`LOOK_BEHIND`]): no match is looked for in them.
    floor: usize,
    /// The rule of the token whose tail is being passed, if the tail is a token's.
    tail_rule: Option<usize>,
    /// Open-ended tokens (one bit per rule) found to hide text after the position the last run
    /// returned, but starting too far back for the next piece to find them again (inside a long
    /// tail), whose own tail class has held on every byte since: when no tail is passed any
    /// more, the one whose tail goes on furthest hides the rest of it, as on a whole line
    /// ([`Scan::take_deferred`]).
    deferred: u32,
}

/// One accepted match.
#[derive(Debug, Clone, Copy)]
struct Found {
    start: usize,
    rule: usize,
    secret: (usize, usize),
    /// Where what the match hides ends, as far as the text goes: its secret, then the tail of an
    /// open-ended token, or a one-line key's material up to `-----END`.
    reach: usize,
}

impl Found {
    /// The match of `rule` at `start` with `secret`, and how far it reaches in `hay`. `run` is
    /// the last stretch of `hay` found to be of the rule's tail class up to where the class stops
    /// (`(from, end)`): a match whose secret ends inside it reaches its end without walking it
    /// again, so the matches of one long token are looked at in linear time.
    fn new(
        rule: usize,
        hay: &[u8],
        start: usize,
        secret: (usize, usize),
        run: &mut Option<(usize, usize)>,
    ) -> Found {
        let r = &RULES[rule];
        let reach = if r.inline_key {
            let bound = hay.len().min(secret.0.saturating_add(MAX_KEY_BLOCK));
            find_end(&hay[secret.0..bound]).map_or(bound, |i| secret.0 + i)
        } else if let Some(class) = r.tail {
            match *run {
                Some((from, end)) if (from..=end).contains(&secret.1) => end,
                _ => {
                    let end = secret.1 + hay[secret.1..].iter().take_while(|&&b| class(b)).count();
                    *run = Some((secret.1, end));
                    end
                }
            }
        } else {
            secret.1
        };
        Found {
            start,
            rule,
            secret,
            reach: reach.max(secret.1),
        }
    }
}

impl Scan {
    /// Redacts `hay[pos..]` as far as it can be decided, appending what to show to `out`, and
    /// returns the position up to which it is done. `hay[..pos]` is context already shown.
    /// Unless `at_end`, more bytes follow `hay`, and the end is held back: 2 x [`MAX_MATCH`]
    /// bytes while looking for matches, [`HOLD`] in a secret. `mask` names the rules whose keywords
    /// occur in `hay`, when the caller knows them.
    fn run(
        &mut self,
        hay: &[u8],
        mut pos: usize,
        at_end: bool,
        mask: Option<u32>,
        out: &mut Vec<u8>,
        red: &mut Redactor,
    ) -> usize {
        let len = hay.len();
        let held = |n: usize| if at_end { len } else { len.saturating_sub(n) };
        // A rule of a pair is looked for only where the line after its name line starts; its
        // keywords are the name line's.
        let pairs = std::mem::take(&mut self.pairs);
        let rules = |mask: u32| mask & !PAIRS | pairs;
        let floor = self.floor;
        let mut next: Option<Next> = mask.map(|m| Next::new(rules(m), floor));
        self.lookback = 0;
        loop {
            match self.state {
                Inline::Tail(class) => {
                    let stop = held(HOLD).max(pos);
                    let from = pos;
                    while pos < stop && class(hay[pos]) {
                        pos += 1;
                    }
                    self.keep_deferred(&hay[from..pos]);
                    if pos == stop && !at_end {
                        // Every match that hides text after `pos` is known, also when this run
                        // began inside the tail and searched nothing yet: one that starts too
                        // far back for the next piece is carried on as deferred.
                        let n = next.get_or_insert_with(|| {
                            Next::new(rules(keywords::rules_of(hay)), floor)
                        });
                        let _ = n.first(hay, pos);
                        self.lookback = in_secret_lookback(Some(n), pos);
                        self.deferred |= n.lost(pos, self.lookback, self.tail_rule);
                        return pos;
                    }
                    // The Plain arm takes a deferred token first.
                    self.tail_rule = None;
                    self.state = Inline::Plain;
                }
                Inline::Key { material, last } => {
                    let room = MAX_KEY_BLOCK - material;
                    let (take, end) = match find_end(&hay[pos..]) {
                        Some(i) => (i, true),
                        None => (held(HOLD).max(pos) - pos, at_end),
                    };
                    if take >= room {
                        // The bound: what follows is shown as text, once the run of token
                        // characters in progress is over (a token that began inside the
                        // material may go on past the bound).
                        pos += room;
                        self.tail_rule = None;
                        self.state = Inline::Tail(token_char);
                        continue;
                    }
                    let mut last = last;
                    for &b in &hay[pos..pos + take] {
                        last = [last[1], b];
                    }
                    pos += take;
                    if !end {
                        self.state = Inline::Key {
                            material: material + take,
                            last,
                        };
                        self.lookback = in_secret_lookback(next.as_ref(), pos);
                        return pos;
                    }
                    if &last == b"\\n" {
                        out.extend_from_slice(b"\\n");
                    }
                    self.state = Inline::Plain;
                }
                Inline::Plain => {
                    // A token found hiding text from `pos` on (where a tail just ended, or where
                    // the last piece stopped) but starting too far back to be found again: it
                    // goes first, as on a whole line. Its secret is over: the marker stands for
                    // the rest of its tail.
                    if let Some(rule) = self.take_deferred(&hay[pos.min(len)..]) {
                        out.extend_from_slice(marker(rule).as_bytes());
                        red.count(rule);
                        self.tail_rule = Some(rule);
                        self.state = Inline::Tail(RULES[rule].tail.expect("deferred: a tail"));
                        continue;
                    }
                    // A match that starts before `whole` lies whole in `hay`, so every secret
                    // that starts before `whole` is known (a match starts before its secret),
                    // and the first of them can go. Text is shown up to `limit`, where every
                    // match that starts before it has its secret before `whole`.
                    let whole = held(MAX_MATCH);
                    let limit = held(2 * MAX_MATCH);
                    if pos >= len {
                        return pos;
                    }
                    // A stream's window without any keyword (most of a long line) needs no
                    // finer look.
                    let n = next
                        .get_or_insert_with(|| Next::new(rules(keywords::rules_of(hay)), floor));
                    match n.first(hay, pos) {
                        Some(f) if f.secret.0 < whole => {
                            out.extend_from_slice(&hay[pos..f.secret.0]);
                            out.extend_from_slice(marker(f.rule).as_bytes());
                            red.count(f.rule);
                            pos = f.secret.1;
                            let rule = &RULES[f.rule];
                            if rule.inline_key {
                                self.state = Inline::Key {
                                    material: f.secret.1 - f.secret.0,
                                    last: [0; 2],
                                };
                            } else if let Some(class) = rule.tail {
                                self.tail_rule = Some(f.rule);
                                self.state = Inline::Tail(class);
                            }
                        }
                        _ => {
                            if pos < limit {
                                out.extend_from_slice(&hay[pos..limit]);
                                pos = limit;
                            }
                            // A match that starts before `pos` and still hides text after it
                            // is found again in the next piece, and so is one that may start
                            // between `whole` and `pos`, cut by the end of `hay`.
                            self.lookback = n.pending(pos).max(pos.saturating_sub(whole));
                            self.deferred |= n.lost(pos, self.lookback, None);
                            return pos;
                        }
                    }
                }
            }
        }
    }
}

impl Scan {
    /// Keeps of the deferred tokens those whose tail class holds on all of `passed`, bytes of
    /// the tail being passed.
    fn keep_deferred(&mut self, passed: &[u8]) {
        let mut d = self.deferred;
        while d != 0 {
            let rule = d.trailing_zeros() as usize;
            d &= d - 1;
            let class = RULES[rule].tail.expect("deferred: a tail");
            if !passed.iter().all(|&b| class(b)) {
                self.deferred &= !(1 << rule);
            }
        }
    }

    /// When the tail being passed ends at the start of `rest`: the deferred token whose tail
    /// goes on furthest into `rest`, if one goes on at all (on a tie, the earlier rule). The
    /// others end no later, so none is deferred any more.
    fn take_deferred(&mut self, rest: &[u8]) -> Option<usize> {
        let mut best: Option<(usize, usize)> = None;
        let mut d = std::mem::take(&mut self.deferred);
        while d != 0 {
            let rule = d.trailing_zeros() as usize;
            d &= d - 1;
            let class = RULES[rule].tail.expect("deferred: a tail");
            let run = rest.iter().take_while(|&&b| class(b)).count();
            if run > 0 && best.is_none_or(|(_, r)| run > r) {
                best = Some((rule, run));
            }
        }
        best.map(|(rule, _)| rule)
    }
}

/// Where one rule's search stands in one text.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// None of its keywords occurs: it cannot match.
    Out,
    /// Not searched from the current position yet.
    Unknown,
    /// Its next accepted match.
    Found(Found),
    /// It has no further match.
    Done,
}

thread_local! {
    /// The capture slots of each rule, kept from one line to the next.
    static LOCS: std::cell::RefCell<Vec<Option<regex::bytes::CaptureLocations>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The next accepted match of each rule whose keyword occurs in the text, found once and kept
/// until the scan passes its start: a line dense with secrets is searched once per rule, not
/// once per secret.
struct Next {
    slots: [Slot; RULE_COUNT],
    /// The rules whose slots are neither [`Slot::Out`] nor [`Slot::Done`], one bit each.
    live: u32,
    /// Where matches are first looked for ([`Scan::floor`]).
    floor: usize,
    locs: Vec<Option<regex::bytes::CaptureLocations>>,
}

impl Next {
    /// The search of a text whose keywords name the rules in `mask` (one bit per rule), from
    /// `floor` on.
    fn new(mask: u32, floor: usize) -> Next {
        let mut locs = LOCS.take();
        locs.resize_with(RULE_COUNT, || None);
        let mut slots = [Slot::Out; RULE_COUNT];
        for (i, s) in slots.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *s = Slot::Unknown;
            }
        }
        Next {
            slots,
            live: mask,
            locs,
            floor,
        }
    }

    /// The accepted match whose secret comes first among those that hide text after `pos`,
    /// with its secret cut to start at `pos` at the earliest; on a tie, the one that reaches
    /// furthest (with its token's tail or key material), then the one that starts first, then
    /// the earlier rule.
    ///
    /// The order is the secrets', not the matches': what a match shows before its secret (a
    /// URL's user name) may hold another rule's secret (`https://ghp_…:x-oauth-basic@host`).
    /// That secret goes first, and the longer match stays found for its own secret after it.
    /// A match that reaches further than the one taken stays found too, and hides the rest
    /// after it.
    fn first(&mut self, hay: &[u8], pos: usize) -> Option<Found> {
        let mut best: Option<Found> = None;
        let mut live = self.live;
        while live != 0 {
            let rule = live.trailing_zeros() as usize;
            live &= live - 1;
            let mut f = match self.slots[rule] {
                Slot::Out | Slot::Done => continue,
                Slot::Found(f) if f.reach > pos => f,
                slot => {
                    // A rule not searched yet looks from the start of `hay` (past the bytes
                    // kept only to look back at): in a piece of a long line, a match may start
                    // in the text already shown and hide text after `pos`. After its match
                    // was passed, it looks on from inside that match: another may start in
                    // it (in its token's tail) and have its secret after `pos`, and then it
                    // starts at most [`MAX_MATCH`] bytes before (a match of the same rule that
                    // starts further back has the same tail, which ends at `pos`). The bound
                    // keeps a run of matches in one tail from being searched again and again.
                    let from = match slot {
                        Slot::Unknown => self.floor.min(pos),
                        Slot::Found(old) => {
                            (old.start + 1).max(pos.saturating_sub(MAX_MATCH)).min(pos)
                        }
                        _ => pos,
                    };
                    let locs =
                        self.locs[rule].get_or_insert_with(|| regex(rule).capture_locations());
                    match find(rule, hay, from, pos, locs) {
                        Some(f) => {
                            self.slots[rule] = Slot::Found(f);
                            f
                        }
                        None => {
                            self.slots[rule] = Slot::Done;
                            self.live &= !(1 << rule);
                            continue;
                        }
                    }
                }
            };
            f.secret.0 = f.secret.0.max(pos);
            f.secret.1 = f.secret.1.max(f.secret.0);
            let key = |f: &Found| (f.secret.0, std::cmp::Reverse(f.reach), f.start);
            if best.is_none_or(|b| key(&f) < key(&b)) {
                best = Some(f);
            }
        }
        best
    }
}

/// How far back from `pos`, inside a token's tail or a one-line key's material, the next piece
/// must start: where the earliest pending match starts, and at least [`MAX_MATCH`] bytes,
/// since a match whose secret begins after the tail or the material may start that far inside
/// it, and the rules not searched yet (a run that began inside the secret searched none) look
/// for it from the piece's start.
fn in_secret_lookback(next: Option<&Next>, pos: usize) -> usize {
    next.map_or(0, |n| n.pending(pos)).max(MAX_MATCH)
}

impl Next {
    /// How far before `pos` the earliest match found starts that hides text after `pos`, at
    /// most 2 x [`MAX_MATCH`], which bounds what a piece keeps. A match that starts further back
    /// has its secret before `pos` and reaches past it only by a token's tail or key material,
    /// which the scan's state carries on (and after a one-line key's bound, the run of token
    /// characters in progress).
    fn pending(&self, pos: usize) -> usize {
        let starts = self.slots.iter().filter_map(|s| match s {
            Slot::Found(f) if f.reach > pos && f.start < pos => Some(pos - f.start),
            _ => None,
        });
        starts.max().unwrap_or(0).min(2 * MAX_MATCH)
    }
}

impl Next {
    /// The open-ended tokens (one bit per rule, not `current`'s) found to hide text after `pos`
    /// that start more than `lookback` bytes before it: the next piece keeps only `lookback`
    /// bytes, so it cannot find them again.
    fn lost(&self, pos: usize, lookback: usize, current: Option<usize>) -> u32 {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(rule, s)| match s {
                Slot::Found(f)
                    if f.reach > pos
                        && f.start + lookback < pos
                        && Some(rule) != current
                        && RULES[rule].tail.is_some() =>
                {
                    Some(1 << rule)
                }
                _ => None,
            })
            .fold(0, |m, b| m | b)
    }
}

impl Drop for Next {
    fn drop(&mut self) {
        LOCS.set(std::mem::take(&mut self.locs));
    }
}

/// Rule `rule`'s first accepted match in `hay` that starts at or after `from` and hides text
/// after `after`.
fn find(
    rule: usize,
    hay: &[u8],
    mut from: usize,
    after: usize,
    locs: &mut regex::bytes::CaptureLocations,
) -> Option<Found> {
    let re = regex(rule);
    let r = &RULES[rule];
    let mut run = None;
    while from <= hay.len() {
        // A secret that is the whole match needs no capture engine.
        let (whole, locs) = if r.secret == 0 {
            let m = re.find_at(hay, from)?;
            ((m.start(), m.end()), None)
        } else {
            let m = re.captures_read_at(locs, hay, from)?;
            ((m.start(), m.end()), Some(&*locs))
        };
        if r.token_start && !rules::starts_token(hay, whole.0) {
            from = whole.0 + 1;
            continue;
        }
        let groups = Groups { hay, whole, locs };
        let secret = match r.secret {
            0 => Some(whole),
            i => locs.and_then(|l| l.get(i)),
        };
        if let Some(secret) = secret
            && secret.1 > secret.0
            && (r.accept)(&groups)
        {
            let f = Found::new(rule, hay, whole.0, secret, &mut run);
            if f.reach > after {
                return Some(f);
            }
        }
        from = whole.0 + 1;
    }
    None
}

/// Whether grep's PATTERN could match a redacted line where it does not match the line as
/// read. It can only by overlapping a `[REDACTED:…]` marker, so only when it holds `[` or `]`
/// or is a piece of a marker (`REDACTED`, `private-key`); `ignore_case` compares ignoring
/// case, and with it any non-ASCII pattern counts as possible (case folding is Unicode's).
/// When false, a line that does not match as read cannot match once redacted: grep may search
/// the text as read and redact only the lines that match.
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

/// How many values each rule replaced. Mergeable: grep redacts files on several threads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    counts: [u64; RULE_COUNT],
}

impl Tally {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Tally) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
    }

    /// The counts added since `earlier`, a tally this one has grown from.
    pub fn since(&self, earlier: &Tally) -> Tally {
        let mut counts = self.counts;
        for (a, b) in counts.iter_mut().zip(earlier.counts) {
            *a -= b;
        }
        Tally { counts }
    }

    /// Whether these counts hold a private-key block.
    pub fn has_key_block(&self) -> bool {
        self.counts[rules::private_key()] > 0
    }

    /// The number of replaced values (a private-key block counts once).
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The rules that replaced values and how many each, in table order; the entries of one
    /// rule id (a family found in two forms) count together.
    pub fn by_rule(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        RULES
            .iter()
            .enumerate()
            .filter(|&(i, r)| RULES[..i].iter().all(|e| e.id != r.id))
            .map(|(_, r)| {
                let n = RULES.iter().zip(self.counts);
                (r.id, n.filter(|(e, _)| e.id == r.id).map(|(_, n)| n).sum())
            })
            .filter(|&(_, n)| n > 0)
    }

    /// The note that tells the caller what was redacted (docs/contract.md#notes), or `None`
    /// when nothing was: how many values and which rules, never anything of the values.
    /// E.g. `redacted 3 secret values (github-token 2, jwt 1); each reads [REDACTED:RULE]`.
    pub fn note(&self) -> Option<String> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rules: Vec<String> = self.by_rule().map(|(id, n)| format!("{id} {n}")).collect();
        let values = if total == 1 { "value" } else { "values" };
        Some(format!(
            "redacted {total} secret {values} ({}); each reads [REDACTED:RULE]",
            rules.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests;
