//! `wc PATH`: `{"lines": L, "words": W, "bytes": B}` (docs/contract.md#tools).
//!
//! The counts are `\n` bytes, words separated by Unicode White_Space in the lossily decoded text,
//! raw bytes; in text format one line as GNU `wc PATH` writes it. Streams with bounded memory. wc
//! reports the raw file: redaction does not apply.

use std::io::Read;

use super::{Runs, Tool};
use crate::call::Ctx;
use crate::envelope::{Format, Stop};
use crate::error::{Error, shown};
use crate::names::quoted;
use crate::read::BLOCK;
use crate::registry::{Args, Effect, Flag, Outcome, Param, ParamKind, params};

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "wc",
    summary: "count lines, words and bytes of a file",
    params: &[Param {
        name: "path",
        kind: ParamKind::Path,
        default: None,
        help: "the file to count",
    }],
    example: "src/lib.rs",
    flags: &[
        Flag {
            names: &[
                "-l", "--lines", "-w", "--words", "-c", "--bytes", "-m", "--chars",
            ],
            effect: Effect::Dropped("wc always prints lines, words and bytes"),
        },
        Flag {
            names: &["-L", "--max-line-length"],
            effect: Effect::Never("readbox does not measure line length"),
        },
    ],
    on_truncate: Outcome::Success,
    stdin: true,
    run: Runs::Tool(run),
};

/// Counts of one file.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// `\n` bytes.
    pub lines: u64,
    /// Maximal runs of characters that are not Unicode White_Space.
    pub words: u64,
    /// Raw bytes.
    pub bytes: u64,
}

/// Byte classes for the word counter: the ASCII White_Space bytes, the lead bytes of the other
/// White_Space characters (U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F,
/// U+3000, all 2 or 3 bytes in UTF-8), and everything else (a word byte: invalid UTF-8 decodes to
/// U+FFFD, which is not white space).
const WORD: u8 = 0;
const SPACE: u8 = 1;
const LEAD: u8 = 2;

const CLASS: [u8; 256] = {
    let mut t = [WORD; 256];
    t[b'\t' as usize] = SPACE;
    t[b'\n' as usize] = SPACE;
    t[0x0B] = SPACE;
    t[0x0C] = SPACE;
    t[b'\r' as usize] = SPACE;
    t[b' ' as usize] = SPACE;
    t[0xC2] = LEAD;
    t[0xE1] = LEAD;
    t[0xE2] = LEAD;
    t[0xE3] = LEAD;
    t
};

/// The length of the White_Space character that starts `b` (which begins with a LEAD byte), or 0.
fn space_len(b: &[u8]) -> usize {
    match b {
        [0xC2, 0x85 | 0xA0, ..] => 2,
        [0xE1, 0x9A, 0x80, ..] => 3,
        [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..] => 3,
        [0xE2, 0x81, 0x9F, ..] => 3,
        [0xE3, 0x80, 0x80, ..] => 3,
        _ => 0,
    }
}

/// The streaming counter.
#[derive(Debug, Default)]
pub struct Counter {
    counts: Counts,
    in_word: bool,
}

impl Counter {
    /// Counts `data`, all but up to two trailing bytes that may begin a White_Space character
    /// completed by the next block; returns how many bytes were consumed. With `last`, everything
    /// is consumed.
    pub fn feed(&mut self, data: &[u8], last: bool) -> usize {
        self.counts.lines += memchr::memchr_iter(b'\n', data).count() as u64;
        // Without a lead byte of a multi-byte space, every byte is a space or a word byte by
        // itself: count the starts of words in one branch-free pass.
        if memchr::memchr3(0xC2, 0xE2, 0xE3, data).is_none() && memchr::memchr(0xE1, data).is_none()
        {
            // ASCII White_Space: TAB, LF, VT, FF, CR and SPACE. Each pair of neighbours is
            // looked at independently, so the loop vectorises.
            let space = |b: u8| u8::from(b == b' ' || b.wrapping_sub(b'\t') < 5);
            if let (Some(&first), Some(&end)) = (data.first(), data.last()) {
                let mut words = u64::from(!self.in_word) & u64::from(space(first) ^ 1);
                // Word starts (a space, then a word byte) counted 255 pairs at a time in u8.
                let (before, after) = (&data[..data.len() - 1], &data[1..]);
                for (x, y) in before.chunks(255).zip(after.chunks(255)) {
                    let n: u8 = x
                        .iter()
                        .zip(y)
                        .map(|(&p, &c)| space(p) & (space(c) ^ 1))
                        .sum();
                    words += u64::from(n);
                }
                self.counts.words += words;
                self.in_word = space(end) == 0;
            }
            self.counts.bytes += data.len() as u64;
            return data.len();
        }
        let mut i = 0;
        let n = data.len();
        while i < n {
            match CLASS[data[i] as usize] {
                SPACE => {
                    self.in_word = false;
                    i += 1;
                }
                WORD => {
                    if !self.in_word {
                        self.in_word = true;
                        self.counts.words += 1;
                    }
                    i += 1;
                }
                _ => {
                    if !last && n - i < 3 {
                        break; // may be completed by the next block
                    }
                    let len = space_len(&data[i..]);
                    if len > 0 {
                        self.in_word = false;
                        i += len;
                    } else {
                        if !self.in_word {
                            self.in_word = true;
                            self.counts.words += 1;
                        }
                        i += 1;
                    }
                }
            }
        }
        // Lines were counted over all of `data`; take back the newlines of the bytes kept.
        self.counts.lines -= memchr::memchr_iter(b'\n', &data[i..]).count() as u64;
        self.counts.bytes += i as u64;
        i
    }

    /// The counts so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }
}

params! {
    /// wc's parameters, by name.
    pub struct Params<'a> of TOOL.params;
    /// The file to count, as the caller named it.
    path: &'a [u8] = bytes,
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let p = Params::of(args);
    let path = shown(p.path);
    let input = ctx.open_input(p.path, "wc")?;
    let regular = input.size.is_some();
    let mut file = input.file;
    let mut counter = Counter::default();
    let mut buf = vec![0u8; BLOCK + 2];
    let mut kept = 0;
    loop {
        let n = match file.read(&mut buf[kept..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(&path, &e).into()),
        };
        ctx.budget.charge_read(n as u64)?;
        let len = kept + n;
        let used = counter.feed(&buf[..len], n == 0);
        buf.copy_within(used..len, 0);
        kept = len - used;
        if n == 0 {
            break;
        }
    }
    let c = counter.counts();
    match ctx.out.style() {
        Format::Json => ctx.out.push_str(&format!(
            "{{\"lines\": {}, \"words\": {}, \"bytes\": {}}}\n",
            c.lines, c.words, c.bytes
        ))?,
        Format::Text => {
            let mut line = gnu_line(c, regular).into_bytes();
            line.push(b' ');
            line.extend_from_slice(&quoted(p.path));
            line.push(b'\n');
            ctx.out.push(&line)?;
        }
    }
    Ok(Outcome::Success)
}

/// The counts as GNU `wc FILE` writes them (coreutils' `wc.c`): right-aligned to one width, the
/// digits of the largest count (for a regular file, its size) or 7 for a pipe, whose size is not
/// known in advance.
fn gnu_line(c: Counts, regular: bool) -> String {
    let width = if regular {
        c.bytes.max(1).ilog10() as usize + 1
    } else {
        7
    };
    format!(
        "{:>width$} {:>width$} {:>width$}",
        c.lines, c.words, c.bytes
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(data: &[u8]) -> Counts {
        let mut c = Counter::default();
        assert_eq!(c.feed(data, true), data.len());
        c.counts()
    }

    fn count_split(data: &[u8], at: usize) -> Counts {
        let mut c = Counter::default();
        let used = c.feed(&data[..at], false);
        let mut rest = data[used..at].to_vec();
        rest.extend_from_slice(&data[at..]);
        c.feed(&rest, true);
        c.counts()
    }

    #[test]
    fn counts_like_the_contract() {
        assert_eq!(
            count(b"hello world\nsecond line\nlast"),
            Counts {
                lines: 2,
                words: 5,
                bytes: 28
            }
        );
        assert_eq!(
            count("a\u{a0}b\u{3000}c\u{2028}d\u{85}e".as_bytes()).words,
            5
        );
        assert_eq!(count("a\u{200b}b\u{1c}c\u{feff}d".as_bytes()).words, 1);
        assert_eq!(count(b"\xff \xfe").words, 2);
    }

    #[test]
    fn the_fast_path_counts_like_the_careful_one() {
        // Plain ASCII (fast path) and the same text with one NBSP (careful path) agree.
        let text = b"  one two\tthree\n\nfour\x0bfive \xff six";
        let mut careful = text.to_vec();
        careful.extend_from_slice("\u{a0}".as_bytes());
        let (a, b) = (count(text), count(&careful));
        assert_eq!((a.lines, a.words), (b.lines, b.words));
        assert_eq!(a.words, 7);
    }

    #[test]
    fn a_space_split_across_blocks_is_still_a_space() {
        let data = "ab\u{3000}cd".as_bytes();
        for at in 0..=data.len() {
            assert_eq!(count_split(data, at), count(data), "split at {at}");
        }
    }
}
