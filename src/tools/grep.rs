//! `grep PATTERN [PATH=.] [RECURSIVE=true] [IGNORE_CASE=false] [FILE_PATTERN=*] [MAX_DEPTH=20]`:
//! lines that contain PATTERN as literal text, as `path:line_number:line` (SPEC §7).
//!
//! The search runs over large batches of whole lines, as ripgrep does: a SIMD substring search
//! (`memchr::memmem`) finds candidates, and only matching lines are delimited and numbered. With
//! IGNORE_CASE the literal is searched with Unicode simple case folding (the `regex` crate's
//! `(?i)`, as `rg -i`). A file is binary when its first 8 KiB hold a NUL byte: skipped in a
//! directory search, reported as `path: binary file matches` when named as PATH (as ripgrep).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};

use memchr::memmem;
use regex::bytes::{Regex, RegexBuilder};

use super::{Args, Ctx, Effect, Flag, Kind, Outcome, Param, Tool, find};
use crate::envelope::Stop;
use crate::error::{Error, shown};
use crate::read::{Batch, Lines};
use crate::resolve::{Kind as K, Node};
use crate::walk::{Entry, Ignores, display_prefix, walk_for_contents};

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

/// What the search of one file found, before the read budget and the output cap are applied.
/// The search reads ahead of those limits (on another thread, possibly); [`emit`] then applies
/// them in file order, so the answer does not depend on how the work was split.
#[derive(Debug, Default)]
struct Found {
    /// The formatted lines.
    out: Vec<u8>,
    /// For each line in `out`: the file's bytes looked at through it, and `out`'s length after it.
    marks: Vec<(u64, usize)>,
    /// The file's bytes looked at in all.
    consumed: u64,
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

struct Search {
    matcher: Matcher,
    /// Bytes to keep from the end of a piece of a long line, so that a match across pieces is
    /// found.
    overlap: usize,
}

impl Search {
    /// Searches the file behind `lines`; `stop` ends the search early when another part of the
    /// call has already ended it.
    fn file(
        &self,
        mut lines: Lines,
        display: &[u8],
        report: Report,
        limits: Snapshot,
        stop: &AtomicBool,
    ) -> Result<Found, Error> {
        let mut f = Found::default();
        let mut line_no: u64 = 1;
        // A line longer than the hold limit: its first piece (printed if it matches), the tail
        // of the last piece searched, and whether it matched already.
        let mut long: Option<(Vec<u8>, Vec<u8>)> = None;
        let record = |f: &mut Found, line_no: u64, text: &[u8], through: u64| {
            if report == Report::Binary {
                f.out.extend_from_slice(display);
                f.out.extend_from_slice(b": binary file matches\n");
            } else {
                f.out.extend_from_slice(display);
                f.out.push(b':');
                f.out.extend_from_slice(line_no.to_string().as_bytes());
                f.out.push(b':');
                f.out.extend_from_slice(text);
                f.out.push(b'\n');
            }
            f.marks.push((through, f.out.len()));
        };
        // Past either limit, the answer is cut before the rest of the file matters.
        let done = |f: &Found| {
            f.consumed > limits.read_left
                || f.out.len() > limits.room
                || stop.load(Ordering::Relaxed)
        };
        let hold = if report == Report::Binary {
            1 << 20
        } else {
            limits.room.saturating_add(1)
        };
        while let Some(batch) = lines.next_batch(hold)? {
            match batch {
                Batch::Piece(piece) => {
                    f.consumed += piece.len() as u64;
                    let (first, mut tail) = long.take().unwrap_or_default();
                    let first = if first.is_empty() {
                        piece.to_vec()
                    } else {
                        first
                    };
                    tail.extend_from_slice(piece);
                    if self.matcher.find_at(&tail, 0).is_some() {
                        // The line is longer than the room left: printing it truncates.
                        let through = f.consumed;
                        record(&mut f, line_no, &first, through);
                        return Ok(f);
                    }
                    let keep = tail.len().saturating_sub(self.overlap);
                    tail.drain(..keep);
                    long = Some((first, tail));
                }
                Batch::Lines(bytes) => {
                    let base = f.consumed;
                    let mut rest = bytes;
                    let mut offset = 0; // of `rest` in `bytes`
                    if let Some((first, mut tail)) = long.take() {
                        // The batch's first line ends the long line.
                        let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
                        tail.extend_from_slice(&rest[..end]);
                        if self.matcher.find_at(&tail, 0).is_some() {
                            record(&mut f, line_no, &first, base + end as u64);
                            f.consumed = base + end as u64;
                            return Ok(f);
                        }
                        line_no += 1;
                        rest = &rest[end..];
                        offset = end;
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
                        let through = base + (offset + (end + 1).min(rest.len())) as u64;
                        record(&mut f, line_no, &rest[start..end], through);
                        if report == Report::Binary {
                            f.consumed = through;
                            return Ok(f);
                        }
                        if f.out.len() > limits.room {
                            f.consumed = through;
                            return Ok(f);
                        }
                        pos = end + 1;
                    }
                    line_no += memchr::memchr_iter(b'\n', &rest[counted..]).count() as u64;
                    f.consumed = base + bytes.len() as u64;
                }
            }
            if done(&f) {
                break;
            }
        }
        Ok(f)
    }
}

/// Applies the read budget and the output cap to one file's result, in file order: the lines
/// looked at within the budget are printed; the line that crossed it is not (SPEC §5). Returns
/// whether a line was printed.
fn emit(ctx: &Ctx<'_>, f: &Found) -> Result<bool, Stop> {
    let left = ctx.budget.read_left();
    if f.consumed <= left {
        ctx.budget.charge_read(f.consumed)?;
        ctx.out.push(&f.out)?;
        return Ok(!f.marks.is_empty());
    }
    let cut = f
        .marks
        .iter()
        .take_while(|(through, _)| *through <= left)
        .last()
        .map_or(0, |&(_, len)| len);
    ctx.out.push(&f.out[..cut])?;
    Err(ctx.budget.read_exhausted().into())
}

/// Whether a file is binary: a NUL in its first [`BINARY_PROBE`] bytes (as ripgrep). Returns
/// how many bytes were looked at too.
fn probe_binary(lines: &mut Lines) -> Result<(bool, usize), Error> {
    let head = lines.head(BINARY_PROBE)?;
    Ok((memchr::memchr(0, head).is_some(), head.len()))
}

/// A file of a directory search, found by the walk.
struct Job {
    index: usize,
    dir: Node,
    name: OsString,
    display: Vec<u8>,
    limits: Snapshot,
}

/// Searches a walked file; a file that vanished, is no longer a regular file or may not be read
/// is skipped, as in any walk, and a binary file costs only the bytes that showed it binary.
fn search_job(ctx: &Ctx<'_>, search: &Search, job: &Job, stop: &AtomicBool) -> Found {
    let Some(node) = ctx.gate.child(&job.dir, &job.name) else {
        return Found::default();
    };
    let Ok(file) = ctx.gate.open_read(&node, "") else {
        return Found::default();
    };
    let mut lines = Lines::new(file, &shown(&job.display));
    let found = match probe_binary(&mut lines) {
        Ok((false, _)) => search
            .file(lines, &job.display, Report::Lines, job.limits, stop)
            .unwrap_or_default(),
        Ok((true, probed)) => Found {
            consumed: probed as u64,
            ..Found::default()
        },
        Err(_) => Found::default(),
    };
    // What was read is used once the directory is found again at its place.
    ctx.gate.read_through(&job.dir);
    found
}

/// Files handed to a worker at once (fewer hand-overs, less waking of threads).
const BATCH: usize = 16;

/// Results that wait for their turn to be printed: at most this many files are searched ahead
/// of the one printed next, which bounds memory.
const MAX_AHEAD: usize = 8 * BATCH;

/// Prints the results of a parallel search in file order.
struct Printer<'c, 'a> {
    ctx: &'c Ctx<'a>,
    /// The caller's PATH, as errors show it.
    shown: &'c str,
    next: usize,
    waiting: BTreeMap<usize, Found>,
    found: bool,
}

impl Printer<'_, '_> {
    fn take_all(&mut self, found: Vec<(usize, Found)>) -> Result<(), Stop> {
        self.waiting.extend(found);
        self.print_ready()
    }

    fn take(&mut self, index: usize, f: Found) -> Result<(), Stop> {
        self.waiting.insert(index, f);
        self.print_ready()
    }

    fn print_ready(&mut self) -> Result<(), Stop> {
        // Lines, or a stop, come only from files whose directory was found again at its place
        // since they were read. Every result waiting here was complete before this call, so one
        // settle covers them all.
        let mut settled = false;
        while let Some(f) = self.waiting.remove(&self.next) {
            self.next += 1;
            let used = !f.out.is_empty() || f.consumed > self.ctx.budget.read_left();
            self.ctx.gate.settle_if(used && !settled, self.shown)?;
            settled |= used;
            if emit(self.ctx, &f)? {
                self.found = true;
            }
        }
        Ok(())
    }
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
        matcher,
    };
    let outcome = |found: bool| {
        if found {
            Outcome::Success
        } else {
            Outcome::Negative
        }
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
        let never = AtomicBool::new(false);
        let f = search.file(lines, args.bytes(1), report, Snapshot::now(ctx), &never)?;
        return Ok(outcome(emit(ctx, &f)?));
    }
    let prefix = display_prefix(args.bytes(1));
    let ignores = if ctx.policy.respect_ignore_files {
        Ignores::Respect
    } else {
        Ignores::Off
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let stop = AtomicBool::new(false);
    let mut printer = Printer {
        ctx,
        shown: &path,
        next: 0,
        waiting: BTreeMap::new(),
        found: false,
    };
    let mut count = 0;
    let job_of = |e: &Entry<'_>, index: usize| Job {
        index,
        dir: e.dir.clone(),
        name: e.listed.name.clone(),
        display: e.display.to_vec(),
        limits: Snapshot::now(ctx),
    };
    let wanted = |e: &Entry<'_>| {
        e.listed.kind == K::File && file_glob.is_match(std::path::Path::new(&e.listed.name))
    };
    if workers == 1 {
        let mut visit = |e: &Entry<'_>| -> Result<(), Stop> {
            if wanted(e) {
                let job = job_of(e, count);
                count += 1;
                printer.take(job.index, search_job(ctx, &search, &job, &stop))?;
            }
            Ok(())
        };
        let walked = walk_for_contents(ctx, &node, &path, &prefix, max_depth, ignores, &mut visit);
        ctx.gate.settle(&path)?;
        walked?;
        return Ok(outcome(printer.found));
    }
    // The walk runs here, in order; the files are searched by the workers; results are printed
    // here, in order. A limit, a truncation or an error stops the workers.
    let (job_tx, job_rx) = mpsc::sync_channel::<Vec<Job>>(workers * 2);
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<Vec<(usize, Found)>>();
    let result = std::thread::scope(|scope| -> Result<(), Stop> {
        for _ in 0..workers {
            let (job_rx, done_tx, search, stop) = (&job_rx, done_tx.clone(), &search, &stop);
            scope.spawn(move || {
                loop {
                    let batch = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(batch) = batch else { return };
                    let found = batch
                        .iter()
                        .map(|job| {
                            let f = if stop.load(Ordering::Relaxed) {
                                Found::default()
                            } else {
                                search_job(ctx, search, job, stop)
                            };
                            (job.index, f)
                        })
                        .collect();
                    if done_tx.send(found).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        let mut batch: Vec<Job> = Vec::with_capacity(BATCH);
        let mut visit = |e: &Entry<'_>| -> Result<(), Stop> {
            if !wanted(e) {
                return Ok(());
            }
            batch.push(job_of(e, count));
            count += 1;
            if batch.len() < BATCH {
                return Ok(());
            }
            if job_tx.send(std::mem::take(&mut batch)).is_err() {
                return Ok(());
            }
            let mut printed = Ok(());
            while printed.is_ok() && count - printer.next > MAX_AHEAD {
                match done_rx.recv() {
                    Ok(found) => printed = printer.take_all(found),
                    Err(_) => break,
                }
            }
            while printed.is_ok()
                && let Ok(found) = done_rx.try_recv()
            {
                printed = printer.take_all(found);
            }
            if printed.is_err() {
                // The answer is complete: the files still queued need no search.
                stop.store(true, Ordering::Relaxed);
            }
            printed
        };
        let walked = walk_for_contents(ctx, &node, &path, &prefix, max_depth, ignores, &mut visit);
        if !batch.is_empty() {
            let _ = job_tx.send(std::mem::take(&mut batch));
        }
        drop(job_tx);
        // The files found before the walk stopped are printed first, as a serial search would
        // have; a stop while printing them comes first too.
        let printed = (|| {
            while printer.next < count {
                match done_rx.recv() {
                    Ok(found) => printer.take_all(found)?,
                    Err(_) => break,
                }
            }
            Ok(())
        })();
        printed.and(walked)
    });
    ctx.gate.settle(&path)?;
    result?;
    Ok(outcome(printer.found))
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
    fn emit_drops_the_line_that_crosses_the_budget() {
        let f = Found {
            out: b"a:1:x\na:2:y\n".to_vec(),
            marks: vec![(2, 6), (4, 12)],
            consumed: 6,
        };
        let cut = f
            .marks
            .iter()
            .take_while(|(t, _)| *t <= 3)
            .last()
            .map_or(0, |m| m.1);
        assert_eq!(&f.out[..cut], b"a:1:x\n");
    }
}
