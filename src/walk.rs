//! The one directory walker of ls, find and grep (docs/contract.md#confinement, #tools).
//!
//! Depth-first, siblings in byte order of their names, a directory's entries right after it. It
//! never follows a symlink, never descends into an excluded directory, leaves out FIFOs, sockets
//! and devices, skips what it may not read, and charges every entry a directory read returns
//! against `max_entries`. Every child is reached through [`Gate::child`], relative to its parent's
//! handle, so no path string is ever re-opened.
//!
//! Checks bracket the reads (docs/security.md#checks-bracket-the-reads): a directory's entries
//! and its ignore files are used only after the directory was found again at its place from the
//! root ([`Gate::confirm`]); a directory moved out of its root, or into an excluded one, while it
//! was read yields nothing, and the walk answers `denied: PATH`.
//!
//! In recursive walks (find, grep) it also skips `.git`, `.hg`, `.svn` and what `.gitignore`,
//! `.ignore` and `.git/info/exclude` files beneath the root ignore, with git's semantics (the
//! `ignore` crate's matcher, as ripgrep and fd use it), with ripgrep's precedence: `.ignore` over
//! `.gitignore` over `.git/info/exclude`, deeper over shallower.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::call::Ctx;
use crate::envelope::Stop;
use crate::error::Error;
use crate::resolve::{Gate, Node, NodeKind};

/// Version-control metadata that recursive walks skip.
pub const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn"];

/// The largest ignore file read; the rest of a larger one is left out.
const MAX_IGNORE_FILE: u64 = 1 << 20;

/// The largest MAX_DEPTH that find and grep accept.
pub const MAX_DEPTH_LIMIT: u64 = 100;

/// Compiles a name glob (find's PATTERN, grep's FILE_PATTERN) as globset does, with case.
///
/// `in_folder` gives the call that looks in a folder instead (its PATH joined with `folder`) for
/// the names `glob` matches, for the error below.
///
/// # Errors
/// `usage:` when the glob is out of bounds ([`crate::glob::check`]) or does not compile, and
/// when it holds a `/` that keeps it from matching any name (`src/*.rs`; a leading `**/` matches
/// names): such a glob would find nothing, without a word. The error gives the call that looks
/// in the folder when the glob's part before its last `/` is plain text.
pub fn name_glob(
    param: &str,
    pattern: &[u8],
    in_folder: &dyn Fn(&[u8], &[u8]) -> String,
) -> Result<GlobSet, Error> {
    let text = String::from_utf8_lossy(pattern);
    let bad = |why: String| {
        Error::Usage(format!(
            "{param}: '{}' is not a valid glob: {why}",
            crate::error::shown(pattern)
        ))
    };
    let mut rest = pattern;
    while let Some(r) = rest.strip_prefix(b"**/") {
        rest = r;
    }
    if let Some(slash) = memchr::memrchr(b'/', rest) {
        let (folder, glob) = (&rest[..slash], &rest[slash + 1..]);
        let plain = |b: &[u8]| !b.iter().any(|c| b"*?[]{}\\".contains(c));
        let hint = if rest.len() == pattern.len()
            && !folder.is_empty()
            && !folder.starts_with(b"/")
            && plain(folder)
            && !glob.is_empty()
        {
            format!("; to look in the folder: {}", in_folder(folder, glob))
        } else {
            String::new()
        };
        return Err(Error::Usage(format!(
            "{param}: '{}' never matches: it is matched against each entry's name, which holds \
             no '/'{hint}",
            crate::error::shown(pattern)
        )));
    }
    crate::glob::check(&text).map_err(bad)?;
    let glob = GlobBuilder::new(&text)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| bad(e.kind().to_string()))?;
    // A set reports a glob too large to compile as an error, where a single matcher panics.
    let mut set = GlobSetBuilder::new();
    set.add(glob);
    set.build().map_err(|_| bad("it is too large".into()))
}

/// The PATH that reaches `folder` beneath the caller's `path`: `folder` itself when `path` is `.`.
pub fn join(path: &[u8], folder: &[u8]) -> Vec<u8> {
    let path = match path {
        b"." | b"./" => return folder.to_vec(),
        p => p.strip_suffix(b"/").unwrap_or(p),
    };
    [path, b"/", folder].concat()
}

/// An entry of a directory listing: its name and its type, as the directory read reports it
/// (`d_type`, or `fstatat` without following links where the filesystem does not say).
#[derive(Debug, Clone)]
pub struct Listed {
    /// The entry's name.
    pub name: OsString,
    /// A regular file, a directory or a symlink; other types are never listed.
    pub kind: NodeKind,
}

/// Reads the entries of the directory `dir` and returns the ones a walk may show, sorted.
///
/// Each entry is charged against `max_entries`; the ones returned are sorted by name bytes:
/// excluded entries and special files (FIFOs, sockets, devices) are left out. Nothing is opened:
/// the types come from the listing, and an entry is reached through the gate only when a tool
/// descends into it or reads it. The listing is returned only once `dir` was found again at its
/// place.
///
/// # Errors
/// `limit:` past `max_entries` (nothing of this directory is returned then), `io:` when the
/// directory cannot be read, `not a directory:`, `denied:` when it was moved away while it was
/// read.
pub fn list(ctx: &Ctx<'_>, dir: &Node, shown: &str) -> Result<Vec<Listed>, Error> {
    Ok(open_level(ctx, dir, shown, Ignores::Off, Check::Now)??.0)
}

/// When a walk finds a directory again after it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Right after listing it: its names may be shown at once.
    Now,
    /// With the files read through it, when the caller settles ([`Gate::settle`]) before it
    /// shows anything: one lookup per directory instead of two.
    Deferred,
}

/// A directory's entries and, when ignore files are respected, its ignore matchers.
type Listing = (Vec<Listed>, Option<Level>);

/// Lists `dir` and, with `ignores`, reads its ignore files; then finds `dir` again at its place
/// (or, deferred, records it for the caller's settle), so that both come from the directory that
/// lies beneath the root now. An error is told only once `dir` was found again too (else it is
/// `denied:`).
///
/// The inner result is the reading's: the listing, or why `dir` could not be read (a walk skips
/// such a directory below its start, unless the error is a limit or a [`Error::Shortage`]). The
/// outer error is the check's, which always ends the walk: `denied:` for a directory moved away,
/// `io:` when the check could not be made.
fn open_level(
    ctx: &Ctx<'_>,
    dir: &Node,
    shown: &str,
    ignores: Ignores,
    check: Check,
) -> Result<Result<Listing, Error>, Error> {
    let read = read_entries(ctx, dir, shown).and_then(|children| {
        let level = if ignores == Ignores::Respect {
            // Only the ignore files that the listing shows are opened.
            let present = |name: &str| children.iter().any(|c| c.name == name);
            Some(load_level(ctx.gate, dir, shown, &present)?)
        } else {
            None
        };
        Ok((children, level))
    });
    match check {
        Check::Now => ctx.gate.confirm(dir, shown)?,
        Check::Deferred => {
            ctx.gate.listed(dir);
            if read.is_err() {
                ctx.gate.settle(shown)?;
            } else {
                ctx.gate.settle_for(None, shown)?;
            }
        }
    }
    Ok(read)
}

fn read_entries(ctx: &Ctx<'_>, dir: &Node, shown: &str) -> Result<Vec<Listed>, Error> {
    let entries = ctx.gate.open_dir(dir, shown)?;
    let mut listed: Vec<Listed> = Vec::new();
    for entry in entries {
        let entry = entry
            .map_err(|e| Error::io(shown, &std::io::Error::from_raw_os_error(e.raw_os_error())))?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let name = OsStr::from_bytes(name);
        if ctx.gate.excluded_child(dir, name, entry.ino()) {
            continue;
        }
        // Charged once it is known not to be excluded, so that the budget never tells whether
        // an excluded name exists (docs/security.md#excludes-on-every-component).
        ctx.budget.charge_entry()?;
        let kind = match NodeKind::from_file_type(entry.file_type()) {
            Some(k) => Some(k),
            None => ctx.gate.kind_of_child(dir, name, shown)?,
        };
        if let Some(kind @ (NodeKind::File | NodeKind::Directory | NodeKind::Symlink)) = kind {
            listed.push(Listed {
                name: name.to_os_string(),
                kind,
            });
        }
    }
    listed.sort_unstable_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    Ok(listed)
}

/// One entry met by a [`Walk`].
pub struct Entry<'a> {
    /// The directory that holds it.
    pub dir: &'a Node,
    /// Its name and type.
    pub listed: &'a Listed,
    /// 1 for the start directory's children.
    pub depth: usize,
    /// The path to print: the caller's PATH joined with the entry's path below it (no trailing
    /// `/`).
    pub display: &'a [u8],
}

/// How a walk treats ignore files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ignores {
    /// Skip VCS metadata and what ignore files beneath the root ignore.
    Respect,
    /// Walk everything that is not excluded.
    Off,
}

/// The matchers of one directory level.
#[derive(Default)]
struct Level {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    git_exclude: Option<Gitignore>,
    /// The directory holds `.git` (a folder, or a file that says `gitdir:`): a repository starts
    /// here, and the git ignore files above it no longer apply.
    repo: bool,
}

/// What a walk left out, for the notes of the tool (docs/contract.md#notes).
///
/// Excluded and outside entries are never counted. Running short of descriptors or memory is never
/// counted here: it ends the walk with an `io:` error, since it says nothing about the entry.
#[derive(Debug, Default)]
pub struct Skipped {
    /// Entries that ignore files left out.
    pub ignored: u64,
    /// Directories that could not be examined or listed (permission refused, a read error).
    pub unreadable: u64,
    /// Mount points listed but not entered, as the caller would reach them.
    pub mount_points: Vec<Vec<u8>>,
    /// Directories at MAX_DEPTH, listed but not entered.
    pub deep: u64,
}

impl Skipped {
    /// Adds the notes of what was skipped: mount points not entered and directories that could not
    /// be read. The tool adds its own notes (binary files, ignore rules that filtered everything).
    pub fn note(&self, out: &crate::envelope::Output) {
        if !self.mount_points.is_empty() {
            const SHOWN: usize = 8;
            let names: Vec<String> = self
                .mount_points
                .iter()
                .take(SHOWN)
                .map(|m| String::from_utf8_lossy(&crate::names::quoted(m)).into_owned())
                .collect();
            let more = self.mount_points.len().saturating_sub(SHOWN);
            let (what, verb) = if self.mount_points.len() == 1 {
                ("mount point", "is")
            } else {
                ("mount points", "are")
            };
            out.note(format!(
                "not entered: the {what} {}{} {verb} listed but not searched (cross_mounts is \
                 off; READBOX_CROSS_MOUNTS)",
                names.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
        }
        if self.unreadable > 0 {
            let dirs = if self.unreadable == 1 {
                "directory"
            } else {
                "directories"
            };
            out.note(format!(
                "{} {dirs} could not be read and {} skipped",
                self.unreadable,
                if self.unreadable == 1 { "was" } else { "were" }
            ));
        }
    }

    /// The note of a walk that left directories unentered at `max_depth`: how many, and `deeper`,
    /// the call that goes further (docs/contract.md#tools).
    pub fn note_depth(&self, out: &crate::envelope::Output, max_depth: usize, deeper: &str) {
        if self.deep == 0 {
            return;
        }
        let (dirs, were) = if self.deep == 1 {
            ("directory", "was")
        } else {
            ("directories", "were")
        };
        let then = if max_depth < MAX_DEPTH_LIMIT as usize {
            format!("{deeper} goes deeper")
        } else {
            "MAX_DEPTH is at its largest: name a deeper directory as PATH".to_string()
        };
        out.note(format!(
            "{} {dirs} at MAX_DEPTH {max_depth} {were} not entered; {then}",
            self.deep
        ));
    }

    /// The note of a walk whose ignore rules left out entries while nothing was found.
    pub fn note_ignored_when_empty(&self, out: &crate::envelope::Output, what: &str) {
        if self.ignored > 0 {
            let entries = if self.ignored == 1 {
                "entry"
            } else {
                "entries"
            };
            out.note(format!(
                "no {what}; {} {entries} left out by .gitignore, .ignore or .git/info/exclude \
                 rules were not looked at: READBOX_RESPECT_IGNORE_FILES=false includes them",
                self.ignored
            ));
        }
    }
}

/// What a walk covers: the directory it starts at and how deep it goes below it, how it shows
/// paths, and whether ignore files count (docs/contract.md#ignore-files).
pub struct Walk<'a> {
    /// The start directory.
    pub start: &'a Node,
    /// The caller's PATH, as errors show it.
    pub shown: &'a str,
    /// What printed paths start with: the caller's PATH ([`display_prefix`]), empty for `.`.
    pub prefix: &'a [u8],
    /// How many levels below the start are listed.
    pub max_depth: usize,
    /// Whether ignore files count, and how.
    pub ignores: Ignores,
}

impl Walk<'_> {
    /// Walks below the start, calling `visit` for every entry in order. Each directory is found
    /// again at its place before `visit` sees its entries.
    ///
    /// What the walk left out (ignored entries, unreadable directories, mount points) is counted
    /// in `skipped`.
    ///
    /// # Errors
    /// What `list` returns for the start directory, and what `visit` returns; unreadable
    /// directories below the start are skipped; `denied:` for a directory moved away while it was
    /// read; `io:` ([`Error::Shortage`]) when the process runs short of descriptors or memory
    /// anywhere.
    pub fn run(
        &self,
        ctx: &Ctx<'_>,
        skipped: &mut Skipped,
        visit: &mut dyn FnMut(&Entry<'_>) -> Result<(), Stop>,
    ) -> Result<(), Stop> {
        self.walker(ctx, Check::Now, skipped, visit).run(self.start)
    }

    /// [`Walk::run`] for a caller that shows nothing of the entries themselves, only what it
    /// reads from files, and that settles ([`Gate::settle`]) before it shows anything, stops, or
    /// answers (grep): a directory is then found again once, with the files read through it,
    /// instead of also right after it was listed.
    ///
    /// # Errors
    /// As [`Walk::run`], except that a directory moved away is told by the caller's settle.
    pub fn run_for_contents(
        &self,
        ctx: &Ctx<'_>,
        skipped: &mut Skipped,
        visit: &mut dyn FnMut(&Entry<'_>) -> Result<(), Stop>,
    ) -> Result<(), Stop> {
        self.walker(ctx, Check::Deferred, skipped, visit)
            .run(self.start)
    }

    fn walker<'w, 'c>(
        &'w self,
        ctx: &'w Ctx<'c>,
        check: Check,
        skipped: &'w mut Skipped,
        visit: &'w mut dyn FnMut(&Entry<'_>) -> Result<(), Stop>,
    ) -> Walker<'w, 'c> {
        Walker {
            ctx,
            shown: self.shown,
            max_depth: self.max_depth,
            ignores: self.ignores,
            check,
            levels: Vec::new(),
            display: self.prefix.to_vec(),
            skipped,
            visit,
        }
    }
}

/// The state of one walk below its start.
struct Walker<'w, 'c> {
    ctx: &'w Ctx<'c>,
    /// The caller's PATH, as errors show it.
    shown: &'w str,
    max_depth: usize,
    ignores: Ignores,
    check: Check,
    /// The ignore matchers from the root down to the directory being walked.
    levels: Vec<Level>,
    /// The printed path of the entry being visited.
    display: Vec<u8>,
    skipped: &'w mut Skipped,
    visit: &'w mut dyn FnMut(&Entry<'_>) -> Result<(), Stop>,
}

impl Walker<'_, '_> {
    fn run(mut self, start: &Node) -> Result<(), Stop> {
        let ctx = self.ctx;
        if self.max_depth == 0 {
            // Nothing to list, but the start must still be a readable directory.
            let opened = ctx.gate.open_dir(start, self.shown).map(drop);
            ctx.gate.confirm(start, self.shown)?;
            return Ok(opened?);
        }
        if self.ignores == Ignores::Respect {
            // Read through the ancestors' handles; the start's check below finds them again too.
            for dir in ctx.gate.ancestors(start, self.shown)? {
                self.levels
                    .push(load_level(ctx.gate, &dir, self.shown, &|_| true)?);
            }
        }
        let (children, level) = open_level(ctx, start, self.shown, self.ignores, self.check)??;
        self.descend(start, children, level, 1)
    }

    fn descend(
        &mut self,
        dir: &Node,
        children: Vec<Listed>,
        level: Option<Level>,
        depth: usize,
    ) -> Result<(), Stop> {
        let ctx = self.ctx;
        let pushed = level.is_some();
        self.levels.extend(level);
        let base_len = self.display.len();
        // The path the ignore rules see of each entry: the directory's, made once, and the name.
        let mut at = (self.ignores == Ignores::Respect).then(|| match_path(dir.rel()));
        for child in &children {
            let is_dir = child.kind == NodeKind::Directory;
            if let Some(at) = &mut at {
                if is_vcs(&child.name) {
                    continue;
                }
                at.push(&child.name);
                let ignored = is_ignored(&self.levels, at, is_dir);
                at.pop();
                if ignored {
                    self.skipped.ignored += 1;
                    continue;
                }
            }
            let display = &mut self.display;
            if !display.is_empty() && !display.ends_with(b"/") {
                display.push(b'/');
            }
            display.extend_from_slice(child.name.as_bytes());
            (self.visit)(&Entry {
                dir,
                listed: child,
                depth,
                display,
            })?;
            // Descend only into what is a directory now, on the root's filesystem. A directory
            // that cannot be examined or read is skipped and counted
            // (docs/contract.md#confinement); one moved away is not, and neither is running short
            // of descriptors or memory, which says nothing about the directory.
            if is_dir && depth < self.max_depth {
                match ctx.gate.child(dir, &child.name, self.shown) {
                    Ok(Some(sub)) if sub.kind() == NodeKind::Directory => {
                        if sub.is_mount_point() {
                            self.skipped.mount_points.push(self.display.clone());
                        } else {
                            match open_level(ctx, &sub, self.shown, self.ignores, self.check)? {
                                Ok((grandchildren, level)) => {
                                    self.descend(&sub, grandchildren, level, depth + 1)?;
                                }
                                Err(e @ (Error::Limit(_) | Error::Shortage(_))) => {
                                    return Err(e.into());
                                }
                                Err(_) => self.skipped.unreadable += 1,
                            }
                        }
                    }
                    // Gone or replaced since the listing, or excluded.
                    Ok(_) => {}
                    Err(e @ Error::Shortage(_)) => return Err(e.into()),
                    Err(_) => self.skipped.unreadable += 1,
                }
            } else if is_dir {
                self.skipped.deep += 1;
            }
            self.display.truncate(base_len);
        }
        if pushed {
            self.levels.pop();
        }
        Ok(())
    }
}

/// Whether `name` is version-control metadata, which recursive walks skip.
fn is_vcs(name: &OsStr) -> bool {
    name.to_str().is_some_and(|n| VCS_DIRS.contains(&n))
}

/// Whether the entry at `path` (its [`match_path`]) is matched by the ignore files of the levels
/// (the last level is its directory's own).
fn is_ignored(levels: &[Level], path: &Path, is_dir: bool) -> bool {
    let decide = |levels: &[Level], pick: fn(&Level) -> Option<&Gitignore>| -> Option<bool> {
        levels
            .iter()
            .rev()
            .find_map(|l| match pick(l)?.matched(path, is_dir) {
                Match::None => None,
                Match::Ignore(_) => Some(true),
                Match::Whitelist(_) => Some(false),
            })
    };
    // git's own files stop at the nearest repository's root; `.ignore` files keep applying
    // across it, as in ripgrep and fd.
    let repo = levels.iter().rposition(|l| l.repo).unwrap_or(0);
    decide(levels, |l| l.ignore.as_ref())
        .or_else(|| decide(&levels[repo..], |l| l.gitignore.as_ref()))
        .or_else(|| decide(&levels[repo..], |l| l.git_exclude.as_ref()))
        .unwrap_or(false)
}

/// Ignore matchers work on paths; ours are root-relative, under a fixed stand-in for the root.
fn match_path(rel: &Path) -> PathBuf {
    Path::new("/").join(rel)
}

/// The ignore files of directory `dir`, read through the gate (never outside the roots, never
/// through a symlink, not charged against the read budget) as git reads them: a UTF-8 byte order
/// mark at the start is skipped and one `\r` before a line's `\n` is dropped. `present` says
/// which names the directory may hold, so that absent files cost no lookup. An ignore file that
/// cannot be read is left out (ignore rules only ever hide entries).
///
/// # Errors
/// [`Error::Shortage`] naming `shown` when the process ran short of descriptors or memory: the
/// rules are not known then, and the walk stops rather than show what they would hide.
fn load_level(
    gate: &Gate,
    dir: &Node,
    shown: &str,
    present: &dyn Fn(&str) -> bool,
) -> Result<Level, Error> {
    let root = match_path(dir.rel());
    let contents = |names: &[&str], limit: u64| -> Result<Option<Vec<u8>>, Error> {
        if !present(names[0]) {
            return Ok(None);
        }
        let mut node = dir.clone();
        for name in names {
            match unless_short(gate.child(&node, OsStr::new(name), shown))? {
                Some(Some(n)) => node = n,
                _ => return Ok(None),
            }
        }
        let Some(file) = unless_short(gate.open_read(&node, shown))? else {
            return Ok(None);
        };
        let mut text = Vec::new();
        let read = file
            .take(limit)
            .read_to_end(&mut text)
            .map_err(|e| Error::io(shown, &e));
        Ok(unless_short(read)?.map(|_| text))
    };
    let read = |names: &[&str]| -> Result<Option<Gitignore>, Error> {
        let Some(text) = contents(names, MAX_IGNORE_FILE)? else {
            return Ok(None);
        };
        Ok(rules(&root, &text))
    };
    // A repository's root holds `.git`: a folder, or a file that points to one (`gitdir: …`, as
    // worktrees and submodules have).
    let git = if present(".git") {
        unless_short(gate.child(dir, OsStr::new(".git"), shown))?.flatten()
    } else {
        None
    };
    let (repo, git_exclude) = match git.as_ref().map(Node::kind) {
        Some(NodeKind::Directory) => (true, read(&[".git", "info", "exclude"])?),
        Some(NodeKind::File) => match contents(&[".git"], MAX_GITDIR_FILE)? {
            Some(text) if text.starts_with(b"gitdir:") => {
                let exclude = linked_exclude(gate, dir, &text, shown)?;
                (true, exclude.and_then(|t| rules(&root, &t)))
            }
            _ => (false, None),
        },
        _ => (false, None),
    };
    Ok(Level {
        ignore: read(&[".ignore"])?,
        gitignore: read(&[".gitignore"])?,
        git_exclude,
        repo,
    })
}

/// The longest `.git` file read (`gitdir: PATH`).
const MAX_GITDIR_FILE: u64 = 4096;

/// The rules of one ignore file's `text`, anchored at `root`, read as git reads them: a UTF-8
/// byte order mark at the start is skipped, exactly one `\r` before each `\n` (and at the end)
/// is dropped, and trailing spaces, not tabs, are dropped unless escaped with `\`.
fn rules(root: &Path, text: &[u8]) -> Option<Gitignore> {
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    let mut b = GitignoreBuilder::new(root);
    for line in text.split(|c| *c == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = git_line(&String::from_utf8_lossy(line));
        // A line that the tree's author nested too deep would crash the glob compiler: it is
        // left out, as a line that does not parse is (ignore rules only ever hide entries).
        if crate::glob::check(&line).is_ok() {
            let _ = b.add_line(None, &line);
        }
    }
    b.build().ok().filter(|g| !g.is_empty())
}

/// One ignore-file line as git keeps it, written so that the glob parser keeps it too: git drops
/// trailing spaces unless the last is escaped (`c\ `), and keeps every other trailing white
/// space (a tab). The parser would trim those, so the last of them goes in a class (`a[\t]`).
fn git_line(line: &str) -> String {
    let mut last_space = None;
    let mut chars = line.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            ' ' => {
                last_space.get_or_insert(i);
            }
            '\\' => {
                last_space = None;
                chars.next();
            }
            _ => last_space = None,
        }
    }
    let kept = &line[..last_space.unwrap_or(line.len())];
    match kept.chars().next_back() {
        Some(c) if c.is_whitespace() && c != ' ' => {
            let mut body = &kept[..kept.len() - c.len_utf8()];
            // An escaped tab is a tab: the class holds it as well.
            let escapes = body.len() - body.trim_end_matches('\\').len();
            if escapes % 2 == 1 {
                body = &body[..body.len() - 1];
            }
            format!("{body}[{c}]")
        }
        _ => kept.to_string(),
    }
}

/// The text of the `info/exclude` that applies to the repository whose `.git` file in `dir` says
/// `gitdir: PATH` (`text`): in a linked worktree, whose git directory holds `commondir`, the main
/// repository's; else the git directory's own. Read through the gate like every path: a git
/// directory outside the roots or excluded is not read, and its rules are left out.
fn linked_exclude(
    gate: &Gate,
    dir: &Node,
    text: &[u8],
    shown: &str,
) -> Result<Option<Vec<u8>>, Error> {
    let given = text["gitdir:".len()..].trim_ascii();
    let given = Path::new(OsStr::from_bytes(given));
    let git_dir = gate.path_of(dir).join(given);
    let read = |path: &Path, limit: u64| -> Result<Option<Vec<u8>>, Error> {
        let Some(node) = unless_short(gate.resolve(path.as_os_str().as_bytes()))? else {
            return Ok(None);
        };
        let Some(file) = unless_short(gate.open_read(&node, shown))? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        let read = file
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(shown, &e));
        Ok(unless_short(read)?.map(|_| bytes))
    };
    let common = match read(&git_dir.join("commondir"), MAX_GITDIR_FILE)? {
        Some(c) => git_dir.join(OsStr::from_bytes(
            c.strip_suffix(b"\n").unwrap_or(&c).trim_ascii_end(),
        )),
        None => git_dir,
    };
    read(&common.join("info").join("exclude"), MAX_IGNORE_FILE)
}

/// `r`'s value, or `None` for an error other than a [`Error::Shortage`], which is passed on.
fn unless_short<T>(r: Result<T, Error>) -> Result<Option<T>, Error> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e @ Error::Shortage(_)) => Err(e),
        Err(_) => Ok(None),
    }
}

/// The caller's PATH as the start of printed paths (docs/contract.md#tools, as ripgrep and fd).
///
/// `.` prints nothing, trailing slashes are dropped (`./src/` prints `./src/a.rs`, `./` prints
/// `./a.rs`), `/` stays `/`.
pub fn display_prefix(path: &[u8]) -> Vec<u8> {
    if path == b"." {
        return Vec::new();
    }
    let mut p = path;
    while p.len() > 1 && p.ends_with(b"/") {
        p = &p[..p.len() - 1];
    }
    p.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_follow_ripgrep_and_fd() {
        assert_eq!(display_prefix(b"."), b"");
        assert_eq!(display_prefix(b"./"), b".");
        assert_eq!(display_prefix(b"./src/"), b"./src");
        assert_eq!(display_prefix(b"sub//"), b"sub");
        assert_eq!(display_prefix(b"/"), b"/");
    }
}
