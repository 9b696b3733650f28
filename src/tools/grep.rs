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
//! search walks in order on the calling thread while a worker per other core searches files ahead,
//! and the walking thread searches queued files too whenever the queue is full or it waits for
//! results; each file's matches are printed in walk order. A searcher holds at most
//! `search::FOUND_MAX` bytes of one file's matches (and all of them at most `HELD_MAX`); a file
//! with more, or with a line longer than a block, is handed back at that point and its search goes
//! on, streamed, when its turn comes. So memory stays bounded whatever the caps, and the answer
//! does not depend on how the work was split.
//!
//! This file holds the registry entry, the parameters and `run`; the pieces, as ripgrep splits
//! its crates: [`matcher`] (PATTERN as literal or folded text), [`search`] (one file's search, as
//! redaction shows it), [`stream`] (the search streamed to the output, long lines included),
//! [`parallel`] (the walk's workers and the in-order printer), [`window`] (a window around the
//! match of a line longer than the cap), [`literal`] (the note on a PATTERN that reads as a
//! regular expression).

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

use globset::GlobSet;

mod literal;
mod matcher;
mod parallel;
mod search;
mod stream;
mod window;

use super::params::MAX_DEPTH;
use super::{Runs, Tool};
use crate::call::Ctx;
use crate::envelope::Stop;
use crate::error::{Error, shown};
use crate::names::quoted;
use crate::read::{Filter, Lines};
use crate::registry::{Args, Effect, Flag, Outcome, Param, ParamKind, params};
use crate::resolve::{Node, NodeKind};
use crate::walk::{Entry, Ignores, Skipped, Walk, display_prefix};
use literal::note_literal;
use matcher::Matcher;
use parallel::{BATCH, DirSearch, Job, Printer};
use search::{FileMatches, Report, Search, Snapshot, probe_binary};
use stream::Stream;

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "grep",
    summary: "print the lines that contain a literal text, as path:line:text",
    params: &[
        Param {
            name: "pattern",
            kind: ParamKind::Text,
            default: None,
            help: "the literal text to look for (not a regular expression)",
        },
        Param {
            name: "path",
            kind: ParamKind::Path,
            default: Some("."),
            help: "a file, or a directory to search",
        },
        Param {
            name: "recursive",
            kind: ParamKind::Bool,
            default: Some("true"),
            help: "search subdirectories (false: the directory's own files only)",
        },
        Param {
            name: "ignore_case",
            kind: ParamKind::Bool,
            default: Some("false"),
            help: "match regardless of case (Unicode simple case folding)",
        },
        Param {
            name: "file_pattern",
            kind: ParamKind::Text,
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
    let file_glob = crate::walk::name_glob("FILE_PATTERN", p.file_pattern, &|folder, name| {
        let path = crate::walk::join(p.path, folder);
        args.call_with(
            "grep",
            &[(Params::PATH, &path), (Params::FILE_PATTERN, name)],
        )
    })?;
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
    if node.kind() != NodeKind::Directory {
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
    search_tree(ctx, args, &p, &search, &node, &file_glob).map(outcome)
}

/// Searches the directory `node`, the caller's PATH, for the files whose names `file_glob`
/// matches: the walk runs on this thread, in order, and the files are searched on this thread too,
/// with more than one core beside a worker per other core ([`DirSearch::parallel`]); the matches
/// are printed in walk order. Returns whether a line matched.
fn search_tree(
    ctx: &Ctx<'_>,
    args: &Args,
    p: &Params<'_>,
    search: &Search,
    node: &Node,
    file_glob: &GlobSet,
) -> Result<bool, Stop> {
    let path = shown(p.path);
    let recursive = p.recursive;
    let max_depth = if recursive { p.max_depth as usize } else { 1 };
    let prefix = display_prefix(p.path);
    let ignores = if ctx.policy.respect_ignore_files {
        Ignores::Respect
    } else {
        Ignores::Off
    };
    let cores = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(8);
    // The walking thread searches too, whenever it would wait: one worker fewer than cores.
    let workers = cores - 1;
    let dir = DirSearch {
        ctx,
        search,
        shown: &path,
        stop: AtomicBool::new(false),
        held: AtomicUsize::new(0),
    };
    let mut printer = Printer::new(&dir);
    let mut count = 0;
    // The directory of the last file found, shared with the next one when it is the same.
    let last_dir: RefCell<Option<Arc<Node>>> = RefCell::new(None);
    let job_of = |e: &Entry<'_>, index: usize| Job {
        index,
        dir: {
            let mut last = last_dir.borrow_mut();
            match &*last {
                Some(d) if d.is(e.dir) => Arc::clone(d),
                _ => Arc::clone(last.insert(Arc::new(e.dir.clone()))),
            }
        },
        name: e.listed.name.clone(),
        display: quoted(e.display).into_owned(),
        limits: Snapshot::now(ctx),
    };
    let wanted = |e: &Entry<'_>| {
        e.listed.kind == NodeKind::File && file_glob.is_match(std::path::Path::new(&e.listed.name))
    };
    let mut skipped = Skipped::default();
    let walk = Walk {
        start: node,
        shown: &path,
        prefix: &prefix,
        max_depth,
        ignores,
    };
    let result = if cores == 1 {
        // Results wait for a batch of files, as a worker's would, so that one settle covers the
        // batch's reads (docs/security.md#checks-bracket-the-reads), not one per file.
        let mut ready = Vec::with_capacity(BATCH);
        let mut visit = |e: &Entry<'_>| -> Result<(), Stop> {
            if wanted(e) {
                let job = job_of(e, count);
                count += 1;
                ready.push(dir.searched(job));
                if ready.len() == BATCH {
                    print_ready(&mut printer, &mut ready)?;
                }
            }
            Ok(())
        };
        let walked = walk.run_for_contents(ctx, &mut skipped, &mut visit);
        // The files found before the walk stopped are printed first, as in the parallel search.
        print_ready(&mut printer, &mut ready).and(walked)
    } else {
        dir.parallel(
            &mut printer,
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
    Ok(printer.found)
}

/// Hands `ready`'s results to the printer, in order; after a stop, the rest are let go there.
fn print_ready(
    printer: &mut Printer<'_, '_>,
    ready: &mut Vec<(usize, Vec<u8>, FileMatches)>,
) -> Result<(), Stop> {
    let mut printed = Ok(());
    for (index, display, found) in ready.drain(..) {
        let taken = printer.take(index, display, found);
        if printed.is_ok() {
            printed = taken;
        }
    }
    printed
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
    let stream = Stream {
        search,
        ctx,
        ahead: &ahead,
        display,
        walked: false,
    };
    let result = stream
        .run(&mut lines, &mut filter, 1, report)
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
