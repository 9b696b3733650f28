//! `grep PATTERN [PATH=.] [RECURSIVE=true] [IGNORE_CASE=false] [FILE_PATTERN=*] [MAX_DEPTH=20]`:
//! lines that contain PATTERN as literal text, as `path:line_number:line` (SPEC §7).
//!
//! The search runs over large batches of whole lines, as ripgrep does: a SIMD substring search
//! (`memchr::memmem`) finds candidates, and only matching lines are delimited and numbered. With
//! IGNORE_CASE the literal is searched with Unicode simple case folding (the `regex` crate's
//! `(?i)`, as `rg -i`). A file is binary when its first 8 KiB hold a NUL byte: skipped in a
//! directory search, reported as `path: binary file matches` when named as PATH (as ripgrep).

use memchr::memmem;
use regex::bytes::{Regex, RegexBuilder};

use super::{Args, Ctx, Effect, Flag, Kind, Outcome, Param, Tool, find};
use crate::envelope::Stop;
use crate::error::{Error, shown};
use crate::read::{Batch, Lines, charge_lines};
use crate::resolve::Kind as K;
use crate::walk::{Entry, Ignores, display_prefix, walk};

/// Bytes at the start of a file that decide whether it is binary (SPEC §7, as ripgrep).
pub const BINARY_PROBE: usize = 8 * 1024;

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
        find::MAX_DEPTH,
    ],
    example: "TODO src true false '*.rs'",
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
        Flag {
            names: &["-E", "-P", "-G", "--extended-regexp", "--perl-regexp"],
            effect: Effect::Never("PATTERN is literal text, never a regular expression"),
        },
        Flag {
            names: &[
                "-w",
                "-x",
                "-v",
                "-c",
                "-l",
                "-L",
                "-o",
                "-q",
                "-A",
                "-B",
                "-C",
                "--color",
                "--colour",
                "--exclude",
                "--count",
                "--files-with-matches",
                "--invert-match",
                "--context",
            ],
            effect: Effect::Never("readbox grep prints matching lines only"),
        },
    ],
    on_truncate: Outcome::Success,
    run,
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

struct Search<'a> {
    ctx: &'a Ctx<'a>,
    matcher: Matcher,
    /// Bytes to keep from the end of a piece of a long line, so that a match across pieces is
    /// found.
    overlap: usize,
}

impl Search<'_> {
    /// Searches `file`; returns whether a line matched.
    fn file(&self, mut lines: Lines, display: &[u8], report: Report) -> Result<bool, Stop> {
        let out = self.ctx.out;
        let mut line_no: u64 = 1;
        let mut found = false;
        let mut emitted: Vec<u8> = Vec::new();
        // A line longer than the hold limit: its first piece (printed if it matches), the tail
        // of the last piece searched, and whether it matched already.
        let mut long: Option<(Vec<u8>, Vec<u8>, bool)> = None;
        let emit = |emitted: &mut Vec<u8>, line_no: u64, text: &[u8]| -> Result<(), Stop> {
            if report == Report::Binary {
                out.push(display)?;
                out.push(b": binary file matches\n")?;
                return Ok(());
            }
            emitted.extend_from_slice(display);
            emitted.push(b':');
            emitted.extend_from_slice(line_no.to_string().as_bytes());
            emitted.push(b':');
            emitted.extend_from_slice(text);
            emitted.push(b'\n');
            if emitted.len() >= 64 * 1024 {
                out.push(emitted)?;
                emitted.clear();
            }
            Ok(())
        };
        loop {
            let hold = if report == Report::Binary {
                1 << 20
            } else {
                out.room().saturating_add(1)
            };
            let Some(batch) = lines.next_batch(hold)? else {
                break;
            };
            match batch {
                Batch::Piece(piece) => {
                    self.ctx.budget.charge_read(piece.len() as u64)?;
                    let (first, mut tail, mut matched) = long.take().unwrap_or_default();
                    let first = if first.is_empty() {
                        piece.to_vec()
                    } else {
                        first
                    };
                    tail.extend_from_slice(piece);
                    matched = matched || self.matcher.find_at(&tail, 0).is_some();
                    if matched {
                        out.push(&emitted)?;
                        emitted.clear();
                        emit(&mut emitted, line_no, &first)?;
                        out.push(&emitted)?;
                        return Ok(true);
                    }
                    let keep = tail.len().saturating_sub(self.overlap);
                    tail.drain(..keep);
                    long = Some((first, tail, matched));
                }
                Batch::Lines(bytes) => {
                    let (fit, over) = charge_lines(self.ctx.budget, bytes);
                    let mut rest = fit;
                    if let Some((first, mut tail, matched)) = long.take() {
                        // The batch's first line ends the long line.
                        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
                        tail.extend_from_slice(&rest[..end]);
                        if matched || self.matcher.find_at(&tail, 0).is_some() {
                            out.push(&emitted)?;
                            emitted.clear();
                            emit(&mut emitted, line_no, &first)?;
                            out.push(&emitted)?;
                            return Ok(true);
                        }
                        line_no += 1;
                        rest = &rest[(end + 1).min(rest.len())..];
                    }
                    let mut pos = 0;
                    let mut counted = 0;
                    while pos < rest.len() {
                        let Some(m) = self.matcher.find_at(rest, pos) else {
                            break;
                        };
                        let start = memchr::memrchr(b'\n', &rest[..m]).map_or(0, |i| i + 1);
                        let end = memchr::memchr(b'\n', &rest[m..]).map_or(rest.len(), |i| m + i);
                        line_no += memchr::memchr_iter(b'\n', &rest[counted..start]).count() as u64;
                        counted = start;
                        found = true;
                        emit(&mut emitted, line_no, &rest[start..end])?;
                        if report == Report::Binary {
                            return Ok(true);
                        }
                        pos = end + 1;
                    }
                    line_no += memchr::memchr_iter(b'\n', &rest[counted..]).count() as u64;
                    if let Some(e) = over {
                        out.push(&emitted)?;
                        return Err(e.into());
                    }
                }
            }
        }
        out.push(&emitted)?;
        Ok(found)
    }
}

/// Whether a file is binary: a NUL in its first [`BINARY_PROBE`] bytes (as ripgrep). Returns
/// how many bytes were looked at too.
fn probe_binary(lines: &mut Lines) -> Result<(bool, usize), Error> {
    let head = lines.head(BINARY_PROBE)?;
    Ok((memchr::memchr(0, head).is_some(), head.len()))
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let pattern = args.bytes(0);
    let path = shown(args.bytes(1));
    let recursive = args.bool(2);
    let file_glob = find::name_glob("FILE_PATTERN", args.bytes(4))?;
    let max_depth = if recursive { args.int(5) as usize } else { 1 };
    let matcher = Matcher::new(pattern, args.bool(3))?;
    let search = Search {
        overlap: matcher.max_len(pattern).saturating_sub(1),
        ctx,
        matcher,
    };
    let node = ctx.gate.resolve(args.bytes(1))?;
    if node.kind() != K::Directory {
        let mut lines = Lines::new(ctx.gate.open_read(&node, &path)?, &path);
        let (binary, _) = probe_binary(&mut lines)?;
        let report = if binary {
            Report::Binary
        } else {
            Report::Lines
        };
        let found = search.file(lines, args.bytes(1), report)?;
        return Ok(if found {
            Outcome::Success
        } else {
            Outcome::Negative
        });
    }
    let prefix = display_prefix(args.bytes(1));
    let ignores = if ctx.policy.respect_ignore_files {
        Ignores::Respect
    } else {
        Ignores::Off
    };
    let mut found = false;
    let mut visit = |e: &Entry<'_>| -> Result<(), Stop> {
        if e.node.kind() != K::File || !file_glob.is_match(std::path::Path::new(e.node.name())) {
            return Ok(());
        }
        // A file that vanished or may not be read is skipped, as in any walk.
        let Ok(file) = ctx.gate.open_read(e.node, "") else {
            return Ok(());
        };
        let shown_entry = shown(e.display);
        let mut lines = Lines::new(file, &shown_entry);
        let Ok((binary, probed)) = probe_binary(&mut lines) else {
            return Ok(());
        };
        if binary {
            ctx.budget.charge_read(probed as u64)?;
            return Ok(());
        }
        if search.file(lines, e.display, Report::Lines)? {
            found = true;
        }
        Ok(())
    };
    walk(ctx, &node, &path, &prefix, max_depth, ignores, &mut visit)?;
    Ok(if found {
        Outcome::Success
    } else {
        Outcome::Negative
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
}
