//! The grammar of `readbox sh` (docs/contract.md#readbox-sh): a subset of the POSIX shell.
//!
//! It is tokenised and parsed as bash parses it, and every construct outside the subset refused
//! with a `usage:` error that names it.
//!
//! The subset: words with `'…'`, `"…"`, backslash and `$'…'` quoting; `#` comments; pipelines
//! `a | b`; lists with `&&`, `||`, `;` and newlines; `!` before a pipeline; the redirections
//! `< FILE`, `>/dev/null`, `2>/dev/null`, `&>/dev/null` and `2>&1`. Unquoted `*`, `?` and `[`
//! mark a word as a glob, expanded later through the gate.
//!
//! Invariant: a line is parsed whole before anything of it runs, and any byte sequence that bash
//! would read as an expansion, a substitution, a compound command, an assignment, a background
//! job or another redirection makes the whole line an error. Where bash would treat a character
//! as literal but the case is rare or subtle (a `$` before most characters, `{`, `}`), the parser
//! refuses it too: refusing more than bash runs is safe, reading a word differently is not. The
//! differential test against bash in `tests/cli/sh_grammar.rs` is the referee.

use crate::error::Error;

/// One parsed command line: and-or lists separated by `;` or newlines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Line {
    /// The lists, in order; each runs after the one before, whatever its status.
    pub lists: Vec<AndOr>,
}

/// Pipelines joined by `&&` and `||`, which bash evaluates left to right with equal precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AndOr {
    /// The first pipeline.
    pub first: Pipeline,
    /// Each later pipeline with the operator before it.
    pub rest: Vec<(Connector, Pipeline)>,
}

/// `&&` or `||`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// `&&`: runs when the status so far is 0.
    And,
    /// `||`: runs when the status so far is not 0.
    Or,
}

/// Commands joined by `|`, optionally negated with `!`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    /// `! pipeline`: the status is inverted.
    pub negated: bool,
    /// The stages, at least one.
    pub commands: Vec<Command>,
}

/// One simple command: its words and redirections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The words, the command name first; at least one.
    pub words: Vec<Word>,
    /// The redirections, in the order written.
    pub redirects: Vec<Redirect>,
}

/// A word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word's bytes with quotes removed and escapes applied.
    pub text: Vec<u8>,
    /// When the word holds an unquoted `*`, `?` or `[`: the glob pattern, with every quoted
    /// character that a glob treats specially escaped with `\`.
    pub glob: Option<Vec<u8>>,
    /// The word as written in the command line (a word that is not UTF-8 and holds no glob: in
    /// `$'…'` quoting, as it pastes back).
    pub source: String,
}

/// An accepted redirection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    /// `< FILE` (or `0< FILE`): FILE, read through the gate, is standard input.
    Input(Word),
    /// `>/dev/null`, `1>/dev/null`: standard output is discarded.
    DiscardOut,
    /// `2>/dev/null`: standard error is discarded.
    DiscardErr,
    /// `&>/dev/null`: both are discarded.
    DiscardBoth,
    /// `2>&1`: standard error goes where standard output goes.
    ErrToOut,
}

/// Why a line cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The line ends inside a quote, after a `\`, or after `|`, `&&` or `||`: a session reads
    /// the next input line and tries again.
    Incomplete(String),
    /// The line holds a construct outside the subset, or is not valid shell.
    Refused(String),
}

impl ParseError {
    /// The `usage:` error a caller sees.
    pub fn into_error(self) -> Error {
        match self {
            ParseError::Incomplete(m) | ParseError::Refused(m) => Error::Usage(m),
        }
    }
}

type Parsed<T> = Result<T, ParseError>;

fn refuse<T>(what: impl Into<String>) -> Parsed<T> {
    Err(ParseError::Refused(what.into()))
}

/// The shell's reserved words: a command that starts with one is a compound command or a
/// function, none of which readbox sh runs.
const RESERVED: &[&str] = &[
    "if", "then", "elif", "else", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "function", "time", "coproc", "in", "[[", "]]", "{", "}",
];

/// The builtins that would run code or read files around the gate: refused by name.
const REFUSED_BUILTINS: &[&str] = &["exec", "eval", "source", "."];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(Word),
    /// An `IO_NUMBER` (digits written right before `<` or `>`) and its operator.
    Redirect(Option<u32>, RedirOp),
    Pipe,
    And,
    Or,
    Semi,
    Newline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RedirOp {
    /// `<`
    In,
    /// `>`
    Out,
    /// `>&`
    OutDup,
    /// `&>`
    Both,
}

/// The lexer: bytes in, tokens out, quoting applied.
struct Lexer<'a> {
    src: &'a [u8],
    at: usize,
}

/// Bytes that end an unquoted word (bash's metacharacters).
/// The most words and operators one command line may hold: a bound on the memory its parse
/// takes (bash has none; agents' lines hold a few dozen).
pub const MAX_TOKENS: usize = 10_000;

/// The most commands one pipeline may hold: each runs on a thread of its own.
pub const MAX_STAGES: usize = 32;

/// Where a session's input stands, read as bash reads a script.
///
/// It tells whether the command line so far goes on past the end of its last physical line (a quote
/// left open, a final `\`, `|`, `&&` or `||`). Each byte is looked at once, as it arrives, so input
/// of any length costs time in proportion to it and no memory; the parse of the whole command line
/// stays the judge of what it means.
#[derive(Debug, Default)]
pub struct Continuation {
    quote: Quote,
    /// The byte before was a `\` that escapes this one.
    escaped: bool,
    /// The last byte was a newline that a `\` escaped: a line continuation.
    continued: bool,
    /// The byte before was an unquoted `$`: a `'` now opens `$'…'`.
    dollar: bool,
    /// Inside a comment, up to the end of the physical line.
    comment: bool,
    /// At a place where `#` starts a comment: after a blank, an operator or a line's start.
    word_start: bool,
    /// The last two bytes outside quotes, comments and blanks (`&&`, `||` or `|` at the end
    /// means the command goes on).
    last: [u8; 2],
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Quote {
    #[default]
    None,
    Single,
    Double,
    AnsiC,
}

impl Continuation {
    /// A reader at the start of a command line.
    pub fn new() -> Continuation {
        Continuation {
            word_start: true,
            ..Continuation::default()
        }
    }

    /// Reads the next bytes of the input (any part of a physical line).
    pub fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    /// Whether the command line goes on past the newline that ended the bytes pushed so far.
    pub fn goes_on(&self) -> bool {
        self.quote != Quote::None
            || self.escaped
            || self.continued
            || matches!(self.last, [_, b'|'] | [b'&', b'&'])
    }

    fn byte(&mut self, b: u8) {
        self.continued = self.escaped && b == b'\n';
        if self.escaped {
            // The escaped byte is literal (a newline: the line goes on).
            self.escaped = false;
            if self.quote == Quote::None {
                self.last = [self.last[1], b'a'];
                self.word_start = false;
            }
            return;
        }
        match self.quote {
            Quote::Single => {
                if b == b'\'' {
                    self.quote = Quote::None;
                }
                return;
            }
            Quote::Double | Quote::AnsiC => {
                let close = if self.quote == Quote::Double {
                    b'"'
                } else {
                    b'\''
                };
                if b == b'\\' {
                    self.escaped = true;
                } else if b == close {
                    self.quote = Quote::None;
                }
                return;
            }
            Quote::None => {}
        }
        if self.comment {
            if b == b'\n' {
                self.comment = false;
                self.word_start = true;
            }
            return;
        }
        let dollar = std::mem::take(&mut self.dollar);
        match b {
            b' ' | b'\t' | b'\n' => {
                self.word_start = true;
                return;
            }
            b'#' if self.word_start => {
                self.comment = true;
                return;
            }
            b'\\' => self.escaped = true,
            b'\'' if dollar => self.quote = Quote::AnsiC,
            b'\'' => self.quote = Quote::Single,
            b'"' => self.quote = Quote::Double,
            b'$' => self.dollar = true,
            _ => {}
        }
        self.word_start = is_meta(b);
        self.last = [self.last[1], b];
    }
}

fn is_meta(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'|' | b'&' | b';' | b'(' | b')' | b'<' | b'>'
    )
}

/// Characters that a glob treats specially, escaped in a pattern when they were quoted.
fn is_glob_special(b: u8) -> bool {
    matches!(b, b'*' | b'?' | b'[' | b']' | b'\\' | b'!' | b'^' | b'-')
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<u8> {
        self.src.get(self.at + k).copied()
    }

    fn tokens(mut self) -> Parsed<Vec<Token>> {
        let mut out = Vec::new();
        loop {
            if out.len() >= MAX_TOKENS {
                return refuse(format!(
                    "the command line holds more than {MAX_TOKENS} words and operators"
                ));
            }
            // Blanks, and `\` before a newline (a line continuation), separate tokens.
            while let Some(b) = self.peek(0) {
                if b == b' ' || b == b'\t' {
                    self.at += 1;
                } else if b == b'\\' && self.peek(1) == Some(b'\n') {
                    self.at += 2;
                    self.continued()?;
                } else {
                    break;
                }
            }
            let Some(b) = self.peek(0) else {
                return Ok(out);
            };
            match b {
                b'#' => {
                    while self.peek(0).is_some_and(|b| b != b'\n') {
                        self.at += 1;
                    }
                }
                b'\n' => {
                    self.at += 1;
                    out.push(Token::Newline);
                }
                b'|' => match self.peek(1) {
                    Some(b'|') => {
                        self.at += 2;
                        out.push(Token::Or);
                    }
                    Some(b'&') => {
                        return refuse(
                            "readbox sh does not pipe standard error with |&; use 2>&1 |",
                        );
                    }
                    _ => {
                        self.at += 1;
                        out.push(Token::Pipe);
                    }
                },
                b'&' => match self.peek(1) {
                    Some(b'&') => {
                        self.at += 2;
                        out.push(Token::And);
                    }
                    Some(b'>') => {
                        if self.peek(2) == Some(b'>') {
                            return refuse("readbox sh does not append to a file: &>>");
                        }
                        self.at += 2;
                        out.push(Token::Redirect(None, RedirOp::Both));
                    }
                    _ => return refuse("readbox sh does not run background jobs: &"),
                },
                b';' => {
                    if matches!(self.peek(1), Some(b';' | b'&')) {
                        return refuse("readbox sh does not run case statements: ;;");
                    }
                    self.at += 1;
                    out.push(Token::Semi);
                }
                b'(' | b')' => {
                    return refuse(format!(
                        "readbox sh does not run subshells, groups or functions: {}",
                        b as char
                    ));
                }
                b'<' | b'>' => out.push(self.redirect(None)?),
                _ => {
                    let start = self.at;
                    let word = self.word()?;
                    // Digits written right before `<` or `>` name a file descriptor.
                    // A line continuation is gone before bash splits words: `2\<newline>>` is `2>`.
                    let digits = !word.text.is_empty()
                        && word.text.iter().all(u8::is_ascii_digit)
                        && word
                            .source
                            .replace("\\\n", "")
                            .bytes()
                            .all(|c| c.is_ascii_digit());
                    if digits && matches!(self.peek(0), Some(b'<' | b'>')) {
                        let fd = std::str::from_utf8(&word.text)
                            .ok()
                            .and_then(|s| s.parse::<u32>().ok());
                        let Some(fd) = fd else {
                            return refuse(format!(
                                "readbox sh does not redirect file descriptor {}",
                                &word.source
                            ));
                        };
                        out.push(self.redirect(Some(fd))?);
                    } else {
                        debug_assert!(self.at > start);
                        out.push(Token::Word(word));
                    }
                }
            }
        }
    }

    /// After a `\` and newline: one that ends the input means the line goes on.
    fn continued(&self) -> Parsed<()> {
        if self.at >= self.src.len() {
            return Err(ParseError::Incomplete(
                "the line ends with \\: it goes on on the next line".into(),
            ));
        }
        Ok(())
    }

    /// A redirection operator at `self.at` (`<` or `>`), after an optional file descriptor.
    fn redirect(&mut self, fd: Option<u32>) -> Parsed<Token> {
        let b = self.src[self.at];
        let next = self.peek(1);
        let op = match (b, next) {
            (b'<', Some(b'<')) => {
                return refuse(if self.peek(2) == Some(b'<') {
                    "readbox sh does not take here-strings: <<<"
                } else {
                    "readbox sh does not take here-documents: <<"
                });
            }
            (b'<', Some(b'>')) => return refuse("readbox sh does not open files for writing: <>"),
            (b'<', Some(b'&')) => return refuse("readbox sh does not duplicate input: <&"),
            (b'<', Some(b'(')) => {
                return refuse("readbox sh does not run process substitutions: <(…)");
            }
            (b'>', Some(b'(')) => {
                return refuse("readbox sh does not run process substitutions: >(…)");
            }
            (b'>', Some(b'>')) => return refuse("readbox sh does not append to a file: >>"),
            (b'>', Some(b'|')) => return refuse("readbox sh does not write to a file: >|"),
            (b'<', _) => {
                self.at += 1;
                RedirOp::In
            }
            (b'>', Some(b'&')) => {
                self.at += 2;
                RedirOp::OutDup
            }
            _ => {
                self.at += 1;
                RedirOp::Out
            }
        };
        Ok(Token::Redirect(fd, op))
    }

    /// One word at `self.at` (which is not a metacharacter or blank).
    fn word(&mut self) -> Parsed<Word> {
        let start = self.at;
        let mut text = Vec::new();
        // The pattern as a glob reads it: quoted specials escaped.
        let mut pattern = Vec::new();
        let mut globbed = false;
        // The last byte was an unquoted `=` or `:`, after which bash expands `~` in a word that
        // reads as an assignment (`a=~/x`, `a=b:~`).
        let mut after_assign = false;
        while let Some(b) = self.peek(0) {
            if is_meta(b) {
                break;
            }
            let assigning = after_assign;
            after_assign = matches!(b, b'=' | b':');
            match b {
                b'\\' => {
                    match self.peek(1) {
                        // A line continuation inside a word joins it to the next line.
                        Some(b'\n') => {
                            self.at += 2;
                            self.continued()?;
                        }
                        Some(c) => {
                            self.at += 2;
                            push_literal(&mut text, &mut pattern, c);
                        }
                        None => {
                            return Err(ParseError::Incomplete(
                                "the line ends with \\: it goes on on the next line".into(),
                            ));
                        }
                    }
                }
                b'\'' => {
                    self.at += 1;
                    let Some(len) = self.src[self.at..].iter().position(|&c| c == b'\'') else {
                        return Err(ParseError::Incomplete("a ' quote is not closed".into()));
                    };
                    for &c in &self.src[self.at..self.at + len] {
                        push_literal(&mut text, &mut pattern, c);
                    }
                    self.at += len + 1;
                }
                b'"' => {
                    self.at += 1;
                    self.double_quoted(&mut text, &mut pattern)?;
                }
                b'$' => match self.peek(1) {
                    Some(b'\'') => {
                        self.at += 2;
                        self.ansi_c(&mut text, &mut pattern)?;
                    }
                    _ => {
                        self.dollar(b'$')?;
                        self.at += 1;
                        push_literal(&mut text, &mut pattern, b'$');
                    }
                },
                b'`' => {
                    return refuse("readbox sh does not run command substitutions: `…`");
                }
                b'{' | b'}' => {
                    return refuse(format!(
                        "readbox sh does not expand braces or group commands: {}",
                        b as char
                    ));
                }
                b'~' if self.at == start || assigning => {
                    return refuse(
                        "readbox sh does not expand ~: write the path (the roots are the home)",
                    );
                }
                b'*' | b'?' => {
                    self.at += 1;
                    globbed = true;
                    text.push(b);
                    pattern.push(b);
                }
                b'[' => {
                    self.at += 1;
                    globbed = true;
                    text.push(b);
                    pattern.push(b);
                }
                _ => {
                    self.at += 1;
                    text.push(b);
                    pattern.push(b);
                }
            }
        }
        let source = match std::str::from_utf8(&self.src[start..self.at]) {
            Ok(written) => written.to_string(),
            // Bytes that are not UTF-8 are written back in `$'…'` quoting, so that the word
            // pastes back as the same bytes (a glob is kept as written: quoting would stop it).
            Err(_) if !globbed => crate::names::shell_word(&text),
            Err(_) => String::from_utf8_lossy(&self.src[start..self.at]).into_owned(),
        };
        Ok(Word {
            text,
            glob: globbed.then_some(pattern),
            source,
        })
    }

    /// The inside of `"…"`, after the opening quote: `\` escapes only `$`, `` ` ``, `"`, `\`
    /// and a newline (a continuation); `$` and `` ` `` would expand, so they are refused.
    fn double_quoted(&mut self, text: &mut Vec<u8>, pattern: &mut Vec<u8>) -> Parsed<()> {
        loop {
            let Some(b) = self.peek(0) else {
                return Err(ParseError::Incomplete("a \" quote is not closed".into()));
            };
            match b {
                b'"' => {
                    self.at += 1;
                    return Ok(());
                }
                b'\\' => match self.peek(1) {
                    Some(b'\n') => {
                        self.at += 2;
                        self.continued()?;
                    }
                    Some(c @ (b'$' | b'`' | b'"' | b'\\')) => {
                        self.at += 2;
                        push_literal(text, pattern, c);
                    }
                    Some(_) => {
                        self.at += 1;
                        push_literal(text, pattern, b'\\');
                    }
                    None => return Err(ParseError::Incomplete("a \" quote is not closed".into())),
                },
                b'$' => {
                    self.dollar(b'"')?;
                    self.at += 1;
                    push_literal(text, pattern, b'$');
                }
                b'`' => return refuse("readbox sh does not run command substitutions: `…`"),
                _ => {
                    self.at += 1;
                    push_literal(text, pattern, b);
                }
            }
        }
    }

    /// Checks a `$` at `self.at` that is not `$'`: bash takes it literally only when nothing
    /// that could start an expansion follows; anything else is refused, naming the construct.
    /// `close` is the byte that ends the context (`"` inside double quotes).
    fn dollar(&self, close: u8) -> Parsed<()> {
        let next = self.peek(1);
        let literal = match next {
            None => true,
            Some(c) if close == b'"' && c == b'"' => true,
            Some(c) if close != b'"' && is_meta(c) && c != b'(' => true,
            Some(b'/' | b'.' | b',' | b':' | b'%' | b'+' | b'=' | b']' | b'^') => true,
            _ => false,
        };
        if literal {
            return Ok(());
        }
        let rest = &self.src[self.at..];
        let shown: String = {
            let end = rest
                .iter()
                .skip(1)
                .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
                .map_or(rest.len(), |p| p + 1)
                .max(2)
                .min(rest.len());
            String::from_utf8_lossy(&rest[..end]).into_owned()
        };
        match next {
            Some(b'(') if rest.get(2) == Some(&b'(') => {
                refuse("readbox sh does not evaluate arithmetic: $((…))")
            }
            Some(b'(') => refuse("readbox sh does not run command substitutions: $(…)"),
            Some(b'[') => refuse("readbox sh does not evaluate arithmetic: $[…]"),
            Some(b'{') => refuse("readbox sh does not expand parameters: ${…}"),
            Some(b'"') => refuse("readbox sh does not translate strings: $\"…\""),
            Some(b'\'') => refuse("readbox sh does not take $'…' inside double quotes"),
            _ => refuse(format!("readbox sh does not expand variables: {shown}")),
        }
    }

    /// The inside of `$'…'`, after `$'`: bash's ANSI-C escapes.
    fn ansi_c(&mut self, text: &mut Vec<u8>, pattern: &mut Vec<u8>) -> Parsed<()> {
        let unclosed = || Err(ParseError::Incomplete("a $' quote is not closed".into()));
        loop {
            let Some(b) = self.peek(0) else {
                return unclosed();
            };
            self.at += 1;
            if b == b'\'' {
                return Ok(());
            }
            if b != b'\\' {
                push_literal(text, pattern, b);
                continue;
            }
            let Some(e) = self.peek(0) else {
                return unclosed();
            };
            self.at += 1;
            let simple = match e {
                b'a' => Some(0x07),
                b'b' => Some(0x08),
                b'e' | b'E' => Some(0x1B),
                b'f' => Some(0x0C),
                b'n' => Some(b'\n'),
                b'r' => Some(b'\r'),
                b't' => Some(b'\t'),
                b'v' => Some(0x0B),
                b'\\' => Some(b'\\'),
                b'\'' => Some(b'\''),
                b'"' => Some(b'"'),
                b'?' => Some(b'?'),
                _ => None,
            };
            if let Some(c) = simple {
                push_literal(text, pattern, c);
                continue;
            }
            match e {
                b'0'..=b'7' => {
                    let mut v: u32 = u32::from(e - b'0');
                    for _ in 0..2 {
                        match self.peek(0) {
                            Some(d @ b'0'..=b'7') => {
                                v = v * 8 + u32::from(d - b'0');
                                self.at += 1;
                            }
                            _ => break,
                        }
                    }
                    // bash keeps the low eight bits.
                    self.byte(text, pattern, (v & 0xFF) as u8)?;
                }
                b'x' => {
                    let v = self.hex_digits(2);
                    match v {
                        Some(v) => self.byte(text, pattern, v as u8)?,
                        None => {
                            push_literal(text, pattern, b'\\');
                            push_literal(text, pattern, b'x');
                        }
                    }
                }
                b'u' | b'U' => {
                    let v = self.hex_digits(if e == b'u' { 4 } else { 8 });
                    match v {
                        Some(0) => return refuse("readbox sh does not take a NUL byte in a word"),
                        Some(v) => match char::from_u32(v) {
                            Some(c) => {
                                let mut buf = [0u8; 4];
                                for &b in c.encode_utf8(&mut buf).as_bytes() {
                                    push_literal(text, pattern, b);
                                }
                            }
                            None => {
                                return refuse(format!(
                                    "readbox sh does not take \\{}{v:X}: no such character",
                                    e as char
                                ));
                            }
                        },
                        None => {
                            push_literal(text, pattern, b'\\');
                            push_literal(text, pattern, e);
                        }
                    }
                }
                b'c' => {
                    return refuse("readbox sh does not take control escapes: \\c");
                }
                _ => {
                    push_literal(text, pattern, b'\\');
                    push_literal(text, pattern, e);
                }
            }
        }
    }

    /// Up to `max` hex digits at `self.at`; `None` when there is none.
    fn hex_digits(&mut self, max: usize) -> Option<u32> {
        let mut v: u32 = 0;
        let mut n = 0;
        while n < max {
            match self.peek(0).and_then(|d| (d as char).to_digit(16)) {
                Some(d) => {
                    v = v * 16 + d;
                    self.at += 1;
                    n += 1;
                }
                None => break,
            }
        }
        (n > 0).then_some(v)
    }

    fn byte(&self, text: &mut Vec<u8>, pattern: &mut Vec<u8>, b: u8) -> Parsed<()> {
        if b == 0 {
            // bash would cut the word there.
            return refuse("readbox sh does not take a NUL byte in a word");
        }
        push_literal(text, pattern, b);
        Ok(())
    }
}

/// Adds a quoted byte: as it is to the text, escaped in the glob pattern where a glob would
/// read it specially.
fn push_literal(text: &mut Vec<u8>, pattern: &mut Vec<u8>, b: u8) {
    text.push(b);
    if is_glob_special(b) {
        pattern.push(b'\\');
    }
    pattern.push(b);
}

/// Parses `src` as one command line.
///
/// # Errors
/// [`ParseError::Incomplete`] when the line ends inside a quote or after `\`, `|`, `&&` or `||`;
/// [`ParseError::Refused`] for anything outside the subset, naming it, and for a syntax error.
pub fn parse(src: &[u8]) -> Parsed<Line> {
    if src.contains(&0) {
        return refuse("readbox sh does not take a NUL byte in a command line");
    }
    let tokens = Lexer { src, at: 0 }.tokens()?;
    Parser { tokens, at: 0 }.line()
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn line(mut self) -> Parsed<Line> {
        let mut line = Line::default();
        loop {
            while matches!(self.peek(), Some(Token::Newline)) {
                self.at += 1;
            }
            if self.peek().is_none() {
                return Ok(line);
            }
            line.lists.push(self.and_or()?);
            match self.peek() {
                None => return Ok(line),
                Some(Token::Semi | Token::Newline) => self.at += 1,
                Some(t) => return refuse(format!("syntax error near {}", describe(t))),
            }
        }
    }

    fn and_or(&mut self) -> Parsed<AndOr> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            let connector = match self.peek() {
                Some(Token::And) => Connector::And,
                Some(Token::Or) => Connector::Or,
                _ => return Ok(AndOr { first, rest }),
            };
            self.at += 1;
            self.skip_newlines(if connector == Connector::And {
                "&&"
            } else {
                "||"
            })?;
            rest.push((connector, self.pipeline()?));
        }
    }

    /// Newlines after an operator that needs more: the command goes on.
    fn skip_newlines(&mut self, after: &str) -> Parsed<()> {
        while matches!(self.peek(), Some(Token::Newline)) {
            self.at += 1;
        }
        if self.peek().is_none() {
            return Err(ParseError::Incomplete(format!(
                "the line ends with {after}: it goes on on the next line"
            )));
        }
        Ok(())
    }

    fn pipeline(&mut self) -> Parsed<Pipeline> {
        let mut negated = false;
        if let Some(Token::Word(w)) = self.peek()
            && w.source == "!"
        {
            negated = true;
            self.at += 1;
        }
        let mut commands = vec![self.command()?];
        while matches!(self.peek(), Some(Token::Pipe)) {
            self.at += 1;
            self.skip_newlines("|")?;
            commands.push(self.command()?);
            if commands.len() > MAX_STAGES {
                return refuse(format!(
                    "readbox sh runs at most {MAX_STAGES} commands in one pipeline"
                ));
            }
        }
        Ok(Pipeline { negated, commands })
    }

    fn command(&mut self) -> Parsed<Command> {
        let mut words: Vec<Word> = Vec::new();
        let mut redirects = Vec::new();
        loop {
            match self.peek().cloned() {
                Some(Token::Word(w)) => {
                    self.at += 1;
                    if words.is_empty() {
                        check_command_word(&w)?;
                    }
                    words.push(w);
                }
                Some(Token::Redirect(fd, op)) => {
                    self.at += 1;
                    redirects.push(self.redirect(fd, op)?);
                }
                Some(t) if words.is_empty() && redirects.is_empty() => {
                    return refuse(format!("syntax error near {}", describe(&t)));
                }
                None if words.is_empty() && redirects.is_empty() => {
                    return refuse("syntax error: a command is missing");
                }
                _ => break,
            }
        }
        if words.is_empty() {
            return refuse("readbox sh does not run a redirection without a command");
        }
        Ok(Command { words, redirects })
    }

    fn redirect(&mut self, fd: Option<u32>, op: RedirOp) -> Parsed<Redirect> {
        let target = match self.peek().cloned() {
            Some(Token::Word(w)) => {
                self.at += 1;
                w
            }
            Some(t) => return refuse(format!("syntax error near {}", describe(&t))),
            None => return refuse("syntax error: a redirection has no target"),
        };
        let written = |fd: Option<u32>, op: &str| {
            format!(
                "{}{op}{}",
                fd.map(|f| f.to_string()).unwrap_or_default(),
                target.source
            )
        };
        let null = target.text == b"/dev/null" && target.glob.is_none();
        match (fd, op) {
            (None | Some(0), RedirOp::In) => {
                if target.glob.is_some() {
                    return refuse(format!(
                        "readbox sh does not expand a glob in a redirection: {}",
                        written(fd, "<")
                    ));
                }
                Ok(Redirect::Input(target))
            }
            (None | Some(1), RedirOp::Out) if null => Ok(Redirect::DiscardOut),
            (Some(2), RedirOp::Out) if null => Ok(Redirect::DiscardErr),
            (None, RedirOp::Both) if null => Ok(Redirect::DiscardBoth),
            (Some(2), RedirOp::OutDup) if target.text == b"1" && target.source == "1" => {
                Ok(Redirect::ErrToOut)
            }
            (_, RedirOp::In) => refuse(format!(
                "readbox sh does not redirect file descriptor {}: {}",
                fd.unwrap_or(0),
                written(fd, "<")
            )),
            (_, RedirOp::OutDup) => refuse(format!(
                "readbox sh only merges standard error into standard output (2>&1): {}",
                written(fd, ">&")
            )),
            (_, RedirOp::Both) => refuse(format!(
                "readbox sh does not write to a file: {}",
                written(fd, "&>")
            )),
            (_, RedirOp::Out) => refuse(format!(
                "readbox sh does not write to a file (only >/dev/null and 2>/dev/null): {}",
                written(fd, ">")
            )),
        }
    }
}

/// Refuses a first word that makes the command something other than a simple command of ours:
/// a reserved word, an assignment, a builtin that runs code.
fn check_command_word(w: &Word) -> Parsed<()> {
    let plain = w.source.as_bytes() == w.text.as_slice();
    if plain && RESERVED.contains(&w.source.as_str()) {
        return refuse(format!(
            "readbox sh does not run compound commands or functions: {}",
            w.source
        ));
    }
    if w.source == "!" {
        return refuse("readbox sh takes ! only before a whole pipeline");
    }
    if plain && REFUSED_BUILTINS.contains(&w.source.as_str()) {
        return refuse(format!(
            "readbox sh does not run {}: it runs only its tools and builtins",
            w.source
        ));
    }
    if is_assignment(w.source.as_bytes()) {
        return refuse(format!(
            "readbox sh does not take assignments: {}",
            w.source
        ));
    }
    Ok(())
}

/// Whether a word as written is an assignment (`NAME=…`, `NAME+=…`, `NAME[…]=…`), as bash reads
/// the words before a command name.
fn is_assignment(src: &[u8]) -> bool {
    let name = src
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
        .unwrap_or(src.len());
    if name == 0 || src[0].is_ascii_digit() {
        return false;
    }
    matches!(&src[name..], [b'=' | b'[', ..] | [b'+', b'=', ..])
}

fn describe(t: &Token) -> &'static str {
    match t {
        Token::Word(_) => "a word",
        Token::Redirect(..) => "a redirection",
        Token::Pipe => "|",
        Token::And => "&&",
        Token::Or => "||",
        Token::Semi => ";",
        Token::Newline => "a newline",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(src: &str) -> Vec<Vec<String>> {
        let line = parse(src.as_bytes()).expect("parses");
        let mut out = Vec::new();
        for list in &line.lists {
            let pipes = std::iter::once(&list.first).chain(list.rest.iter().map(|(_, p)| p));
            for p in pipes {
                for c in &p.commands {
                    out.push(
                        c.words
                            .iter()
                            .map(|w| String::from_utf8_lossy(&w.text).into_owned())
                            .collect(),
                    );
                }
            }
        }
        out
    }

    fn refused(src: &str) -> String {
        match parse(src.as_bytes()) {
            Err(ParseError::Refused(m)) => m,
            other => panic!("{src:?} was not refused: {other:?}"),
        }
    }

    #[test]
    fn quotes_are_removed_as_bash_removes_them() {
        assert_eq!(
            words(r#"cat 'a b' "c\"d" e\ f $'g\nh' "\x" 'i'"j"k"#),
            vec![vec!["cat", "a b", "c\"d", "e f", "g\nh", "\\x", "ijk"]]
        );
    }

    #[test]
    fn operators_split_words_without_spaces() {
        assert_eq!(
            words("a|b&&c||d;e"),
            vec![vec!["a"], vec!["b"], vec!["c"], vec!["d"], vec!["e"]]
        );
        let line = parse(b"! a | b && c").unwrap();
        assert!(line.lists[0].first.negated);
        assert_eq!(line.lists[0].first.commands.len(), 2);
        assert_eq!(line.lists[0].rest[0].0, Connector::And);
    }

    #[test]
    fn comments_and_continuations() {
        assert_eq!(words("a # b c\nd"), vec![vec!["a"], vec!["d"]]);
        assert_eq!(words("a b#c"), vec![vec!["a", "b#c"]]);
        assert_eq!(words("a \\\n b"), vec![vec!["a", "b"]]);
        assert_eq!(words("a |\n b"), vec![vec!["a"], vec!["b"]]);
    }

    #[test]
    fn globs_keep_their_quoted_parts_literal() {
        let line = parse(b"cat 'a*'b* \\?c").unwrap();
        let w = &line.lists[0].first.commands[0].words;
        assert_eq!(w[1].glob.as_deref(), Some(&b"a\\*b*"[..]));
        assert_eq!(w[2].glob, None);
    }

    #[test]
    fn ansi_c_escapes() {
        assert_eq!(
            words(r"echo $'\x41\101\u00e9\t\'\q\x'"),
            vec![vec!["echo", "AA\u{e9}\t'\\q\\x"]]
        );
    }

    #[test]
    fn constructs_outside_the_subset_are_refused_by_name() {
        assert!(refused("echo $HOME").contains("$HOME"));
        assert!(refused("echo \"a $X\"").contains("$X"));
        assert!(refused("echo $(ls)").contains("$("));
        assert!(refused("echo `ls`").contains('`'));
        assert!(refused("X=1 cat a").contains("X=1"));
        assert!(refused("cat a > b").contains(">b"));
        assert!(refused("cat a &").contains('&'));
        assert!(refused("(cat a)").contains('('));
        assert!(refused("if true; then cat a; fi").contains("if"));
        assert!(refused("cat ~/x").contains('~'));
        assert!(refused("eval cat a").contains("eval"));
        assert!(refused("cat <<EOF").contains("<<"));
        assert!(refused("echo {a,b}").contains('{'));
    }

    #[test]
    fn accepted_redirections() {
        let line = parse(b"cat < a 2>/dev/null >/dev/null 2>&1 &>/dev/null").unwrap();
        let r = &line.lists[0].first.commands[0].redirects;
        assert!(matches!(&r[0], Redirect::Input(w) if w.text == b"a"));
        assert_eq!(
            &r[1..],
            &[
                Redirect::DiscardErr,
                Redirect::DiscardOut,
                Redirect::ErrToOut,
                Redirect::DiscardBoth
            ]
        );
    }

    /// Whether `src`, pushed physical line by physical line, goes on after its last line.
    fn goes_on(src: &str) -> bool {
        let mut c = Continuation::new();
        c.push(src.as_bytes());
        c.push(b"\n");
        c.goes_on()
    }

    #[test]
    fn a_session_reads_on_where_the_parse_would_be_incomplete() {
        for src in [
            "cat 'a",
            "cat \"a",
            "cat a |",
            "cat a &&",
            "cat a ||",
            "cat a \\",
            "cat $'a",
            "cat a && # more",
            "cat \"a\\\"",
            "cat $'a\\'",
            "cat a |\n",
        ] {
            assert!(goes_on(src), "{src:?}");
            assert!(
                matches!(parse(src.as_bytes()), Err(ParseError::Incomplete(_))),
                "{src:?}"
            );
        }
        for src in [
            "cat a",
            "cat 'a'",
            "echo a # it's",
            "echo a#b",
            "cat a; ",
            "echo \\\\",
            "echo '\\'",
            "cat a >&2",
        ] {
            assert!(!goes_on(src), "{src:?}");
        }
    }

    #[test]
    fn unfinished_lines_are_incomplete() {
        for src in [
            "cat 'a", "cat \"a", "cat a |", "cat a &&", "cat a \\", "cat $'a",
        ] {
            assert!(
                matches!(parse(src.as_bytes()), Err(ParseError::Incomplete(_))),
                "{src:?}"
            );
        }
    }

    #[test]
    fn a_dollar_that_expands_nothing_is_literal() {
        assert_eq!(words("grep a$ f"), vec![vec!["grep", "a$", "f"]]);
        assert_eq!(words("echo \"a$\""), vec![vec!["echo", "a$"]]);
    }
}
