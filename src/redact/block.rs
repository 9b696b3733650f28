//! The private-key block machine: which line opens a block (its BEGIN marker and the padding
//! after it, judged whole or from the last bytes of a line read in pieces), which lines after
//! a marker in a string literal are key material, and what a line inside a block shows
//! (docs/contract.md#redaction).

use std::sync::LazyLock;

use memchr::memmem;

use super::{MAX_LINE, Redactor, Shown, keywords, marker, rules, split_terminator};

/// The longest BEGIN marker: `-----BEGIN`, 32 bytes of label, `PRIVATE KEY BLOCK-----`.
const MARKER_MAX: usize = 10 + 32 + 17 + 5;

/// Whether `text` ends with a BEGIN marker: `-----BEGIN`, at most 32 bytes of ` `, `A`-`Z` and
/// `0`-`9`, `PRIVATE KEY` or `PRIVATE KEY BLOCK`, then `-----` (the regular expression
/// `-----BEGIN[ A-Z0-9]{0,32}PRIVATE KEY(?: BLOCK)?-----$`, matched by hand: a reader of one
/// small file would pay more to compile it than to read the file).
fn marker_at_end(text: &[u8]) -> bool {
    // `rest` ends just after `PRIVATE KEY`.
    let label_before = |rest: &[u8]| {
        let Some(label) = rest.strip_suffix(b"PRIVATE KEY") else {
            return false;
        };
        let class = label
            .iter()
            .rev()
            .take_while(|b| matches!(b, b' ' | b'A'..=b'Z' | b'0'..=b'9'))
            .count();
        (0..=class.min(32)).any(|n| label[..label.len() - n].ends_with(b"-----BEGIN"))
    };
    text.strip_suffix(b"-----").is_some_and(|rest| {
        label_before(rest) || rest.strip_suffix(b" BLOCK").is_some_and(label_before)
    })
}

/// Where the first `-----BEGIN` in `hay` starts (its searcher is built once: grep and tail
/// ask for every stretch of lines they pass over).
pub(super) fn find_begin(hay: &[u8]) -> Option<usize> {
    static FINDER: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"-----BEGIN"));
    FINDER.find(hay)
}

/// Where the first `-----END` in `hay` starts.
pub(super) fn find_end(hay: &[u8]) -> Option<usize> {
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
pub(super) fn opens_block(body: &[u8]) -> bool {
    let end = padding_start(body, None);
    marker_at_end(&body[end.saturating_sub(MARKER_MAX)..end])
}

/// Whether the end of a line, of which only `piece` (its last bytes, without the terminator) is
/// known, could be the end of a BEGIN line: `piece` is one, or is nothing but padding, or a
/// piece of a marker and padding, or starts with an escape's letter whose backslash may end
/// the bytes before it.
pub(super) fn may_end_opener(piece: &[u8]) -> bool {
    let text = &piece[..padding_start(piece, None)];
    opens_block(piece)
        || matches!(text, b"n" | b"r")
        || (text.len() < MARKER_MAX
            && text
                .iter()
                .all(|&b| matches!(b, b'-' | b' ' | b'A'..=b'Z' | b'0'..=b'9')))
}

/// An open private-key block.
#[derive(Debug, Clone, Copy)]
pub(super) struct Block {
    /// Whether the `[REDACTED:private-key]` line was shown for it.
    pub(super) shown: bool,
    /// Its BEGIN marker stands in a string literal or a sentence (a quote, `.` or `)` follows
    /// it): a constant in code
    /// (`"-----BEGIN RSA PRIVATE KEY-----",`, `'-----BEGIN …-----\n'` before code that builds a
    /// key) as often as the first of a key's lines written as literals. Until a line decides
    /// ([`key_line`]), the block hides nothing; a line of code ends it.
    pub(super) tentative: bool,
    /// Opened by a look-back that began inside a line that may have been a BEGIN line
    /// ([`Redactor::skip_window`]): it hides at once, as a block does, but a line of code (as
    /// [`key_line`] judges it) ends it, since its BEGIN line was only a guess.
    pub(super) guessed: bool,
}

impl Block {
    /// What `line` is to this block: key material (`Some(true)`), not yet known (`None`), or
    /// code that ends a tentative block (`Some(false)`), as [`key_line`] judges it; every line of
    /// a block that is not tentative is key material.
    pub(super) fn judge(self, line: &[u8]) -> Option<bool> {
        if self.tentative || self.guessed {
            key_line(line)
        } else {
            Some(true)
        }
    }

    /// The block that the BEGIN line `body` (without its terminator) opens.
    pub(super) fn opened_by(body: &[u8]) -> Block {
        Block::opened(quoted(&body[padding_start(body, None)..]))
    }

    /// A block just opened; `tentative` when its marker stands in a string literal.
    pub(super) fn opened(tentative: bool) -> Block {
        Block {
            shown: false,
            tentative,
            guessed: false,
        }
    }

    /// A block whose BEGIN line is only guessed ([`Block::guessed`]).
    pub(super) fn guessed() -> Block {
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
pub(super) fn key_line(line: &[u8]) -> Option<bool> {
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
    /// A line while a block is open.
    pub(super) fn in_block(
        &mut self,
        mut block: Block,
        line: &[u8],
        body: &[u8],
        term: &[u8],
    ) -> Shown {
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

/// Whether a line read in pieces is a BEGIN line, decided as [`opens_block`] decides for the
/// whole line: from its last bytes before the padding and the terminator. Keeps a few bytes,
/// whatever the line's length.
#[derive(Debug, Clone, Default)]
pub(super) struct Opener {
    /// The last [`MARKER_MAX`] bytes fed.
    pub(super) recent: Vec<u8>,
    /// The [`MARKER_MAX`] bytes that end with the last byte fed that is neither padding nor the
    /// line's `\n`.
    text_end: Vec<u8>,
    /// The last two bytes fed.
    end: [u8; 2],
    /// Whether the padding after the text makes the block tentative ([`quoted`]).
    pub(super) quoted: bool,
}

impl Opener {
    pub(super) fn feed(&mut self, piece: &[u8]) {
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
    pub(super) fn terminator(&self) -> &'static [u8] {
        match self.end {
            [b'\r', b'\n'] => b"\r\n",
            [_, b'\n'] => b"\n",
            _ => b"",
        }
    }

    /// Whether the line, fed whole, opens a block.
    pub(super) fn opens(&self) -> bool {
        marker_at_end(&self.text_end)
    }
}

/// The last `n` bytes of `bytes` (all of them when fewer).
fn last(bytes: &[u8], n: usize) -> &[u8] {
    &bytes[bytes.len().saturating_sub(n)..]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The regular expression that [`marker_at_end`] matches by hand.
    fn oracle() -> regex::bytes::Regex {
        super::super::compile(r"-----BEGIN[ A-Z0-9]{0,32}PRIVATE KEY(?: BLOCK)?-----$")
    }

    #[test]
    fn begin_markers_are_told_as_the_regular_expression_tells_them() {
        let re = oracle();
        for text in [
            "-----BEGIN PRIVATE KEY-----",
            "-----BEGIN RSA PRIVATE KEY-----",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----",
            "x = \"-----BEGIN EC PRIVATE KEY-----",
            "-----BEGIN PRIVATE KEY BLOCK PRIVATE KEY-----",
            "-----BEGIN 0123456789ABCDEFGHIJKLMNOPQRSTUVW PRIVATE KEY-----",
            "-----BEGIN 0123456789ABCDEFGHIJKLMNOPQRSTUVWXY PRIVATE KEY-----",
            "-----BEGIN rsa PRIVATE KEY-----",
            "-----BEGIN PUBLIC KEY-----",
            "-----BEGIN PRIVATE KEY-----x",
            "----BEGIN PRIVATE KEY-----",
            "-----BEGINPRIVATE KEY-----",
            "-----BEGIN-PRIVATE KEY-----",
            "PRIVATE KEY-----",
            "",
        ] {
            assert_eq!(
                marker_at_end(text.as_bytes()),
                re.is_match(text.as_bytes()),
                "{text:?}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Texts made of the marker's pieces, the class's bytes and others.
        #[test]
        fn marker_at_end_agrees_with_the_regular_expression(
            picks in proptest::collection::vec(0usize..12, 0..12),
        ) {
            const PIECES: [&str; 12] = [
                "-----BEGIN", "-----", "PRIVATE KEY", " BLOCK", " ", "RSA", "0", "Z", "-", "a",
                "BEGIN", "\n",
            ];
            let text: String = picks.iter().map(|&i| PIECES[i]).collect();
            proptest::prop_assert_eq!(
                marker_at_end(text.as_bytes()),
                oracle().is_match(text.as_bytes()),
                "{:?}", text
            );
        }
    }
}
