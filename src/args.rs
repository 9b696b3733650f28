//! Positional arguments (docs/contract.md#arguments): the one parser of every tool's words, the
//! refusal of flags with the equivalent positional call, and the named form of `readbox call`.
//!
//! Invariant: a tool's `run` only ever sees [`Args`] that this module built and checked against
//! the tool's parameters; nothing is read before that.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use serde_json::Value as Json;

use crate::error::{Error, Result};
use crate::names::{command, shell_word};
use crate::policy::{parse_bool, parse_uint};
use crate::registry::{Args, Effect, FileType, Param, ParamKind, Value};
use crate::tools::Tool;

/// What the parser may learn of the caller's surroundings, only to word a usage hint.
pub struct World<'a> {
    /// Whether a word names an existing entry the caller may reach (the gate's answer): tells a
    /// second path from a bad value.
    pub exists: &'a dyn Fn(&[u8]) -> bool,
    /// Whether a word names a directory the caller may reach: find's further PATHs must be
    /// (a file there is `not a directory:`).
    pub is_dir: &'a dyn Fn(&[u8]) -> bool,
    /// Whether standard input holds input (a pipe, socket or regular file, not a terminal). A
    /// flag-style call that leaves PATH out then reads it, as POSIX tools do: `ls | head -3`
    /// is `head - 3`, and `ls | grep -i x` is `grep x - true true`, never a search of the tree.
    pub piped: &'a dyn Fn() -> bool,
}

/// Parses the words after the tool name.
///
/// # Errors
/// `usage:` for a word that starts with `-` before `--` (naming it, with the equivalent
/// positional call where the flag has one), for several paths where the tool takes one (with the
/// per-path calls), for too many or too few words, and for a bad value.
pub fn parse(tool: &Tool, words: &[OsString], world: &World<'_>) -> Result<Args> {
    let positional =
        positional(words).map_err(|flag| Error::Usage(refusal(tool, words, flag, world)))?;
    if let Some(calls) = per_path_calls(tool, &positional, world) {
        return Err(Error::Usage(format!(
            "several paths given, but {} takes one PATH; one call per path is equivalent: {calls}",
            tool.name
        )));
    }
    from_words(tool, &positional)
}

/// The call that does what a refused call of `tool` with `words` asks, as its usage error offers.
///
/// It is the positional equivalent of its flags, or the per-path calls joined by `; `; `None` when
/// the words are accepted or the refusal offers no call. `readbox sh` rewrites a whole command line
/// from these (docs/contract.md#readbox-sh).
pub fn equivalent_call(tool: &Tool, words: &[OsString], world: &World<'_>) -> Option<String> {
    match positional(words) {
        Ok(positional) => per_path_calls(tool, &positional, world),
        Err(_) => equivalent(tool, words, world).ok(),
    }
}

/// The positional words, `--` taken out; the first flag-like word (one that starts with `-`,
/// other than `-` alone, before `--`) as the error.
pub(crate) fn positional(words: &[OsString]) -> std::result::Result<Vec<&[u8]>, &[u8]> {
    let mut positional: Vec<&[u8]> = Vec::new();
    let mut literal = false;
    for w in words {
        let b = w.as_bytes();
        if !literal && b == b"--" {
            literal = true;
        } else if !literal && b.len() > 1 && b[0] == b'-' {
            return Err(b);
        } else {
            positional.push(b);
        }
    }
    Ok(positional)
}

/// The most per-path calls a hint lists.
const MAX_CALLS: usize = 8;

/// The index of `tool`'s one PATH parameter; `None` for a tool with none or two (diff).
fn one_path_param(tool: &Tool) -> Option<usize> {
    let mut path_params = tool
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kind == ParamKind::Path);
    match (path_params.next(), path_params.next()) {
        (Some((p, _)), None) => Some(p),
        _ => None,
    }
}

/// Whether `word` can be a further PATH of `tool`: it names an entry the caller may reach (for
/// find, a directory: a file there answers `not a directory:`).
fn further_path(tool: &Tool, word: &[u8], world: &World<'_>) -> bool {
    if tool.name == "find" {
        (world.is_dir)(word)
    } else {
        (world.exists)(word)
    }
}

/// When `words` hold several paths where `tool` takes one (`cat a.py b.py`, a shell glob that
/// expanded), the runnable per-path calls joined by `; `, at most [`MAX_CALLS`]
/// (docs/contract.md#arguments). The words after PATH that name an existing entry are further
/// paths, and the others must make a valid call after the first path (`head a.py b.py 3`:
/// `head a.py 3; head b.py 3`); failing that, a word after the last parameter, or one that is not
/// a valid value for its position but names an entry, is a further path. The caller's other
/// words go with every call.
fn per_path_calls(tool: &Tool, words: &[&[u8]], world: &World<'_>) -> Option<String> {
    let p = one_path_param(tool)?;
    if words.len() <= p + 1 || from_words(tool, words).is_ok() {
        // A single word is no second path, and words that make a valid call are what they say
        // (`grep x . true false s`, whatever `s` names).
        return None;
    }
    let parses = |paths: &[&[u8]], others: &[&[u8]]| {
        let mut probe: Vec<&[u8]> = words[..p].to_vec();
        probe.push(paths[0]);
        probe.extend(others);
        from_words(tool, &probe).is_ok()
    };
    let (mut paths, mut others) = (vec![words[p]], Vec::new());
    for w in &words[p + 1..] {
        if further_path(tool, w, world) {
            paths.push(w);
        } else {
            others.push(*w);
        }
    }
    if paths.len() < 2 || !parses(&paths, &others) {
        (paths, others) = (vec![words[p]], Vec::new());
        for (i, w) in words.iter().enumerate().skip(p + 1) {
            let beyond = match tool.params.get(i) {
                None => tool.name != "find" || further_path(tool, w, world),
                Some(param) => value_of(tool, param, w).is_err() && further_path(tool, w, world),
            };
            if beyond {
                paths.push(w);
            } else {
                others.push(*w);
            }
        }
        if paths.len() < 2 || !parses(&paths, &others) {
            return None;
        }
    }
    let call = |path: &[u8]| {
        let words: Vec<&[u8]> = words[..p]
            .iter()
            .copied()
            .chain(std::iter::once(path))
            .chain(others.iter().copied())
            .collect();
        command(tool.name, &words)
    };
    let mut text = paths
        .iter()
        .take(MAX_CALLS)
        .map(|path| call(path))
        .collect::<Vec<_>>()
        .join("; ");
    if paths.len() > MAX_CALLS {
        text.push_str(&format!(" (and {} more)", paths.len() - MAX_CALLS));
    }
    // The folder's own files of that extension, when no other word would be dropped.
    if tool.name == "grep"
        && others.is_empty()
        && let Some(folder) = one_folder_call(&words[..p], &paths)
    {
        text.push_str(&format!(
            "; or, for all the folder's files of that extension: {folder}"
        ));
    }
    Some(text)
}

/// For grep given several files of one folder with one extension: the single call that searches
/// the folder's own files of that extension.
fn one_folder_call(before: &[&[u8]], paths: &[&[u8]]) -> Option<String> {
    use std::path::Path;
    let split = |p: &[u8]| {
        let path = Path::new(std::ffi::OsStr::from_bytes(p));
        let dir = path.parent()?.as_os_str().as_bytes().to_vec();
        let ext = path.extension()?.as_bytes().to_vec();
        Some((dir, ext))
    };
    let (dir, ext) = split(paths[0])?;
    if !paths
        .iter()
        .all(|p| split(p).as_ref() == Some(&(dir.clone(), ext.clone())))
    {
        return None;
    }
    let dir = if dir.is_empty() { b".".to_vec() } else { dir };
    let mut glob = b"*.".to_vec();
    glob.extend_from_slice(&ext);
    let words: Vec<&[u8]> = before
        .iter()
        .copied()
        .chain([dir.as_slice(), b"false", b"false", glob.as_slice()])
        .collect();
    Some(command("grep", &words))
}

/// Builds the arguments from positional words, filling in defaults.
fn from_words(tool: &Tool, words: &[&[u8]]) -> Result<Args> {
    let required = tool.params.iter().filter(|p| p.default.is_none()).count();
    if words.len() < required || words.len() > tool.params.len() {
        let what = if words.len() < required {
            "too few"
        } else {
            "too many"
        };
        let stdin = if tool.stdin && words.len() < required {
            format!("; {} - reads standard input", tool.name)
        } else {
            String::new()
        };
        return Err(Error::Usage(format!(
            "{what} arguments ({} given); usage: {}{stdin}",
            words.len(),
            tool.signature()
        )));
    }
    let mut values = Vec::with_capacity(tool.params.len());
    for (i, p) in tool.params.iter().enumerate() {
        let word = match words.get(i) {
            Some(w) => *w,
            None => p.default.unwrap_or_default().as_bytes(),
        };
        let value = value_of(tool, p, word).map_err(|e| match (e, from_line_of(tool, word)) {
            // `tail f +K`, as `tail -n +K f` would be: the file from line K on is cat's.
            (Error::Usage(m), Some(k)) => Error::Usage(format!(
                "{m}; from line {} on: {}",
                String::from_utf8_lossy(k),
                command("cat", &[words[0], k])
            )),
            (e, _) => e,
        })?;
        values.push(value);
    }
    Ok(Args::new(values, words.len()))
}

fn value_of(tool: &Tool, p: &Param, word: &[u8]) -> Result<Value> {
    let text = || String::from_utf8_lossy(word).into_owned();
    let bad = |what: &str| {
        Error::Usage(format!(
            "{}: '{}' is not {what}; usage: {}",
            p.name.to_ascii_uppercase(),
            crate::error::shown(word),
            tool.signature()
        ))
    };
    match p.kind {
        ParamKind::Path | ParamKind::Text => Ok(Value::Bytes(word.to_vec())),
        ParamKind::Bool => parse_bool(&text())
            .map(Value::Bool)
            .ok_or_else(|| bad("a boolean (true false 1 0 yes no on off)")),
        ParamKind::Int { min, max } => match parse_uint(&text()) {
            Some(n) if (min..=max).contains(&n) => Ok(Value::Int(n)),
            _ => Err(bad(&int_range(min, max))),
        },
        ParamKind::FileType => parse_file_type(&text())
            .map(Value::FileType)
            .ok_or_else(|| bad("a file type (all, file, directory, f, d)")),
    }
}

/// tail's LINES written `+K` (K from 1), as POSIX tail's `-n +K` means "from line K on".
fn from_line_of<'w>(tool: &Tool, word: &'w [u8]) -> Option<&'w [u8]> {
    let k = word.strip_prefix(b"+")?;
    let valid = std::str::from_utf8(k)
        .ok()
        .and_then(parse_uint)
        .is_some_and(|k| k >= 1);
    (tool.name == "tail" && valid).then_some(k)
}

/// How a usage error describes an integer range: `an integer from 0 to 100`, `an integer from 1
/// up` when there is no upper bound.
fn int_range(min: u64, max: u64) -> String {
    if max == u64::MAX {
        format!("an integer from {min} up")
    } else {
        format!("an integer from {min} to {max}")
    }
}

/// Parses `all`, `file`, `directory`, `f`, `d` in any case.
pub fn parse_file_type(s: &str) -> Option<FileType> {
    match s.to_ascii_lowercase().as_str() {
        "all" => Some(FileType::All),
        "file" | "f" => Some(FileType::File),
        "directory" | "d" => Some(FileType::Directory),
        _ => None,
    }
}

/// The text of a usage error for the flag-like `word`: it names the word, shows the signature
/// and, when every flag of the call has a positional equivalent, the equivalent call. A word
/// that is no flag the tool knows may be a name: the text says how to pass one.
fn refusal(tool: &Tool, words: &[OsString], word: &[u8], world: &World<'_>) -> String {
    let name = word.split(|&b| b == b'=').next().unwrap_or(word);
    let mut text = format!(
        "'{}' is not accepted: {} takes positional arguments only ({})",
        crate::error::shown(name),
        tool.name,
        tool.signature()
    );
    match equivalent(tool, words, world) {
        Ok(call) => text.push_str(&format!("; equivalent: {call}")),
        Err(why) => text.push_str(&format!("; {why}")),
    }
    if !is_flag(tool, name) {
        text.push_str("; use -- before a path that starts with -");
    }
    text
}

/// A refused call's words, read flag by flag ([`equivalent`]'s first step).
struct FlagWords {
    /// Each parameter's value as a flag set it.
    set: Vec<Option<String>>,
    /// What the flags that were dropped leave out, one note each.
    notes: Vec<String>,
    /// A call of another tool that answers what a flag asks (`cat -n f` -> `grep '' f`).
    instead: Option<String>,
    /// The words that are not flags, in order.
    positional: Vec<String>,
    /// The flags met, for grep's regular-expression modes.
    seen: Vec<String>,
}

/// The position of `tool`'s parameter `name`.
fn index(tool: &Tool, name: &str) -> Option<usize> {
    tool.params.iter().position(|p| p.name == name)
}

/// Reads `words` flag by flag into what each flag sets, drops or asks for instead.
///
/// # Errors
/// Why no call does what a flag asks (an unknown flag, one without an equivalent, a value
/// missing, a flag given twice with values that cannot be joined).
fn read_flags(tool: &Tool, words: &[OsString]) -> std::result::Result<FlagWords, String> {
    let mut set: Vec<Option<String>> = vec![None; tool.params.len()];
    let mut notes: Vec<String> = Vec::new();
    let mut instead: Option<String> = None;
    let mut positional: Vec<String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut i = 0;
    let mut literal = false;
    while i < words.len() {
        let w = words[i].to_string_lossy().into_owned();
        i += 1;
        if literal || w == "-" || !w.starts_with('-') {
            positional.push(w);
            continue;
        }
        if w == "--" {
            literal = true;
            continue;
        }
        // `-5` is head's and tail's `-n 5`.
        if w.len() > 1
            && w[1..].bytes().all(|b| b.is_ascii_digit())
            && let Some(p) = index(tool, "lines")
        {
            set[p] = Some(w[1..].to_string());
            continue;
        }
        let (name, attached) = match w.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (w.clone(), None),
        };
        let flags: Vec<(String, Option<String>)> = if find_flag(tool, &name).is_some() {
            vec![(name, attached)]
        } else if !name.starts_with("--") && name.len() > 2 {
            short_bundle(tool, &name)
                .ok_or_else(|| format!("{} has no equivalent of {name}", tool.name))?
        } else {
            return Err(format!("{} has no equivalent of {name}", tool.name));
        };
        for (flag, attached) in flags {
            seen.push(flag.clone());
            match find_flag(tool, &flag).expect("checked above") {
                Effect::Set(param, value) => {
                    if let Some(p) = index(tool, param) {
                        set[p] = Some(value.to_string());
                    }
                }
                Effect::Takes(param) => {
                    let v = match attached {
                        Some(v) => v,
                        None if i < words.len() => {
                            i += 1;
                            words[i - 1].to_string_lossy().into_owned()
                        }
                        None => return Err(format!("{flag} needs a value")),
                    };
                    // `tail -n +K` shows the file from line K on: that is cat's FROM_LINE.
                    if tool.name == "tail"
                        && let Some(k) = v.strip_prefix('+')
                        && parse_uint(k).is_some_and(|k| k >= 1)
                    {
                        instead = Some(format!("cat {{path}} {k}"));
                        continue;
                    }
                    if let Some(p) = index(tool, param) {
                        set[p] = Some(match set[p].take() {
                            None => v,
                            Some(before) => twice(tool, &flag, param, before, v)?,
                        });
                    }
                }
                Effect::OtherCall(template) => instead = Some(template.to_string()),
                Effect::Always => {}
                Effect::Dropped(why) => notes.push(format!("{flag} dropped: {why}")),
                Effect::DroppedWithValue(why) => {
                    // The flag's own value (`stat -c %s`) goes with it.
                    if attached.is_none() && i < words.len() {
                        i += 1;
                    }
                    notes.push(format!("{flag} dropped: {why}"));
                }
                Effect::Never(why) => return Err(format!("{flag}: {why}")),
            }
        }
    }
    Ok(FlagWords {
        set,
        notes,
        instead,
        positional,
        seen,
    })
}

/// The calls, one per path, for several paths where `tool` takes one at parameter `p`
/// (`head -n 5 src/*.rs`, as the classic tool takes them): every word after the ones before PATH
/// (grep's PATTERN) is a path. One call per path, each with the flags' values, when every
/// further word names an entry the caller may reach; `None` when the words are not several
/// such paths.
///
/// # Errors
/// Why the per-path calls would not do what the call asks.
fn several_path_calls(
    tool: &Tool,
    words: &[OsString],
    world: &World<'_>,
    f: &FlagWords,
    p: usize,
) -> Option<std::result::Result<String, String>> {
    let FlagWords {
        set,
        notes,
        instead,
        positional,
        ..
    } = f;
    let before = (0..p).filter(|&i| set[i].is_none()).count();
    let paths = positional.get(before..).unwrap_or_default();
    if paths.len() <= 1
        || !paths[1..]
            .iter()
            .all(|w| further_path(tool, w.as_bytes(), world))
    {
        return None;
    }
    if instead.is_some() && tool.name == "cat" {
        // `cat -n a b` numbers the lines of all the files in one sequence.
        return Some(Err(format!(
            "{} numbers the lines of all the files in one sequence, and grep '' PATH \
             numbers each file's own",
            words
                .iter()
                .map(|w| w.to_string_lossy())
                .find(|w| w.starts_with('-'))
                .unwrap_or_default()
        )));
    }
    let mut calls = Vec::new();
    for path in paths.iter().take(MAX_CALLS) {
        let mut lead = positional[..before].iter();
        let values: Vec<Option<String>> = (0..tool.params.len())
            .map(|i| match &set[i] {
                _ if i == p => Some(path.clone()),
                Some(v) => Some(v.clone()),
                None if i < p => lead.next().cloned(),
                None => None,
            })
            .collect();
        match call_of_values(tool, &values, instead.as_deref()) {
            Ok(call) => calls.push(call),
            Err(e) => return Some(Err(e)),
        }
    }
    let mut text = calls.join("; ");
    if paths.len() > MAX_CALLS {
        text.push_str(&format!(" (and {} more)", paths.len() - MAX_CALLS));
    }
    for note in notes {
        text.push_str("; ");
        text.push_str(note);
    }
    Some(Ok(text))
}

/// Rewrites a flag-style call as the positional call (or the other call that does what the flag
/// asks, built from the caller's own words), or says why it cannot be. Every call given runs as
/// written.
fn equivalent(
    tool: &Tool,
    words: &[OsString],
    world: &World<'_>,
) -> std::result::Result<String, String> {
    // The calls are built as text: a word that is not UTF-8 could not be written back as itself.
    if let Some(w) = words.iter().find(|w| w.to_str().is_none()) {
        return Err(format!(
            "{} is not UTF-8, so no call is written in its place",
            crate::names::shell_word(w.as_bytes())
        ));
    }
    let mut f = read_flags(tool, words)?;
    // A process substitution (`<(…)`) reaches a program as a pipe of the shell's, which
    // readbox does not open: no call here reads it.
    if let Some(w) = f.positional.iter().find(|w| is_shell_pipe(w)) {
        return Err(format!(
            "{w} is a process substitution, which readbox does not open: pipe the command into \
             {} - instead",
            tool.name
        ));
    }
    // GNU grep reads its PATTERN as a regular expression (unless -F): the literal call is the
    // same only when the PATTERN holds nothing a regular expression treats specially.
    let sign = if tool.name == "grep" {
        let pattern = f.set[0]
            .as_deref()
            .or(f.positional.first().map(String::as_str));
        pattern.and_then(|p| regex_sign(p, &f.seen))
    } else {
        None
    };
    let finish = |text: String| match &sign {
        None => Ok(text),
        Some(sign) => Err(format!(
            "PATTERN holds {sign}, which GNU grep reads as a regular expression, and readbox grep \
             matches literal text only (as grep -F does); the literal search: {text}"
        )),
    };
    // grep -r with no PATH searches the working directory, as GNU grep does, piped or not.
    let tree = index(tool, "recursive").is_some_and(|p| f.set[p].is_some());
    // Several paths (`head -n 5 src/*.rs`): one call per path.
    if let Some(p) = one_path_param(tool)
        && let Some(calls) = several_path_calls(tool, words, world, &f, p)
    {
        return finish(calls?);
    }
    // Fill the parameters that no flag set with the positional words, in order.
    let mut words_left = f.positional.iter();
    let mut values: Vec<Option<String>> = Vec::with_capacity(f.set.len());
    for s in std::mem::take(&mut f.set) {
        values.push(s.or_else(|| words_left.next().cloned()));
    }
    if words_left.next().is_some() {
        return Err("too many arguments".to_string());
    }
    // PATH left out reads the piped input, as it would for the tool the caller had in mind.
    if tool.stdin
        && (world.piped)()
        && !tree
        && let Some(p) = tool.params.iter().position(|p| p.kind == ParamKind::Path)
        && values[p].is_none()
    {
        values[p] = Some("-".to_string());
        // What comes down the pipe may be cut already: a count, an end or a search of it is
        // then one of the cut text (`cat README.md | wc -l` after a readbox cat).
        if matches!(tool.name, "wc" | "tail" | "grep") {
            f.notes.push(format!(
                "- reads the pipe as it comes, which a readbox cat before it cuts at its cap: \
                 {} FILE reads a file whole",
                tool.name
            ));
        }
    }
    let mut text = call_of_values(tool, &values, f.instead.as_deref())?;
    // Notes follow the call as parts of their own, so that the call can be copied as it is.
    for note in f.notes {
        text.push_str("; ");
        text.push_str(&note);
    }
    finish(text)
}

/// What in grep's PATTERN `p` a regular expression would treat specially, under the mode that
/// the flags `seen` choose: none with -F, basic (`\ . [ *`, `^` first, `$` last) by default,
/// extended with -E or -P (also `+ ? ( ) { } |`, and `^ $` anywhere).
fn regex_sign(p: &str, seen: &[String]) -> Option<String> {
    let any = |names: &[&str]| seen.iter().any(|f| names.contains(&f.as_str()));
    if any(&["-F", "--fixed-strings"]) {
        return None;
    }
    let extended = any(&["-E", "-P", "--extended-regexp", "--perl-regexp"]);
    let special = |c: char| {
        matches!(c, '\\' | '.' | '[' | '*')
            || (extended && matches!(c, '+' | '?' | '(' | ')' | '{' | '}' | '|' | '^' | '$'))
    };
    if let Some(c) = p.chars().find(|&c| special(c)) {
        return Some(format!("`{c}`"));
    }
    if p.starts_with('^') {
        return Some("`^` first".to_string());
    }
    if p.len() > 1 && p.ends_with('$') {
        return Some("`$` last".to_string());
    }
    None
}

/// Whether `word` names a pipe of the shell's, as a process substitution (`<(…)`) hands one to
/// a program: `/dev/fd/N`, `/proc/self/fd/N`.
fn is_shell_pipe(word: &str) -> bool {
    ["/dev/fd/", "/proc/self/fd/"].iter().any(|prefix| {
        word.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// A flag that takes a value, given twice for `param`: `--include` globs add up, as GNU grep
/// takes them (`{*.rs,*.py}`); a second count (`head -n 3 -n 5`) replaces the first, as the
/// classic tools take it; two PATTERNs (`grep -e A -e B`) or two of find's tests have no one call.
fn twice(
    tool: &Tool,
    flag: &str,
    param: &str,
    before: String,
    v: String,
) -> std::result::Result<String, String> {
    match param {
        "lines" | "context_lines" => Ok(v),
        "file_pattern" => {
            let plain = |g: &str| !g.contains(['{', '}', ',', '\\']);
            let alternatives = before
                .strip_prefix('{')
                .and_then(|b| b.strip_suffix('}'))
                .unwrap_or(&before);
            if plain(&v) && alternatives.split(',').all(plain) {
                Ok(format!("{{{alternatives},{v}}}"))
            } else {
                Err(format!(
                    "{flag} given twice: FILE_PATTERN takes one glob, and these do not join as \
                     {{a,b}}"
                ))
            }
        }
        _ => Err(format!(
            "{flag} given twice: {} takes one {}, and no one call does what both ask",
            tool.name,
            param.to_ascii_uppercase()
        )),
    }
}

/// The call of `tool` with `values` (one per parameter, `None` for those not given), or of the
/// other tool's `template` built from them.
fn call_of_values(
    tool: &Tool,
    values: &[Option<String>],
    template: Option<&str>,
) -> std::result::Result<String, String> {
    let missing = |p: &Param| format!("no {} given", p.name.to_ascii_uppercase());
    if let Some(template) = template {
        let mut call = template.to_string();
        let mut dash = false;
        for (p, v) in tool.params.iter().zip(values) {
            let key = format!("{{{}}}", p.name);
            if call.contains(&key) {
                let v = v.as_ref().ok_or_else(|| missing(p))?;
                dash |= v.starts_with('-') && v != "-";
                call = call.replace(&key, &shell_word(v.as_bytes()));
            }
        }
        // A value that starts with `-` needs `--` after the template's tool name.
        if dash && let Some((name, rest)) = call.split_once(' ') {
            call = format!("{name} -- {rest}");
        }
        return Ok(call);
    }
    let last = values.iter().rposition(Option::is_some);
    let mut call: Vec<String> = Vec::new();
    if let Some(last) = last {
        for (p, v) in tool.params.iter().zip(values).take(last + 1) {
            match (v, p.default) {
                (Some(v), _) => call.push(v.clone()),
                (None, Some(d)) => call.push(d.to_string()),
                (None, None) => return Err(missing(p)),
            }
        }
    }
    if let Some((p, _)) = tool
        .params
        .iter()
        .zip(values)
        .find(|(p, v)| p.default.is_none() && v.is_none())
    {
        return Err(missing(p));
    }
    // Offer only a call that the parser accepts (`tail -n +2` and `head -n -2` have none).
    let words: Vec<&[u8]> = call.iter().map(String::as_bytes).collect();
    if from_words(tool, &words).is_err() {
        return Err("this call has no positional equivalent".to_string());
    }
    // A word that starts with `-` gets `--` before it (`--` may stand first).
    Ok(command(tool.name, &words))
}

/// Whether `word` is a flag of `tool`: a flag of its table, head's and tail's `-5`, or a bundle
/// of its short flags (`-rn`, `-n5`).
fn is_flag(tool: &Tool, word: &[u8]) -> bool {
    let Ok(word) = std::str::from_utf8(word) else {
        return false;
    };
    if find_flag(tool, word).is_some() {
        return true;
    }
    let Some(rest) = word
        .strip_prefix('-')
        .filter(|r| !r.is_empty() && !r.starts_with('-'))
    else {
        return false;
    };
    if rest.bytes().all(|b| b.is_ascii_digit()) {
        return tool.params.iter().any(|p| p.name == "lines");
    }
    // A flag that takes a value and ends the word waits for the next word: the word alone is
    // not a whole call of it.
    let waits = |(flag, value): &(String, Option<String>)| {
        value.is_none() && matches!(find_flag(tool, flag), Some(Effect::Takes(_)))
    };
    short_bundle(tool, word).is_some_and(|flags| !flags.last().is_some_and(waits))
}

/// The short flags of `word`, `-` and their letters (`-rni`), each with the value attached to
/// it: a flag that takes a value takes the rest of the word (`-n5`), if any. `None` when a
/// letter is no flag of `tool`.
fn short_bundle(tool: &Tool, word: &str) -> Option<Vec<(String, Option<String>)>> {
    let chars: Vec<char> = word.strip_prefix('-')?.chars().collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        let short = format!("-{}", chars[k]);
        let digits = k + 1 < chars.len() && chars[k + 1..].iter().all(char::is_ascii_digit);
        match find_flag(tool, &short)? {
            Effect::Takes(_) if k + 1 < chars.len() => {
                out.push((short, Some(chars[k + 1..].iter().collect())));
                k = chars.len();
            }
            // A flag of the classic tool that takes a number, with it attached (`-A3`).
            Effect::Never(_) if digits => {
                out.push((short, Some(chars[k + 1..].iter().collect())));
                k = chars.len();
            }
            _ => {
                out.push((short, None));
                k += 1;
            }
        }
    }
    Some(out)
}

fn find_flag(tool: &Tool, name: &str) -> Option<Effect> {
    tool.flags
        .iter()
        .find(|f| f.names.contains(&name))
        .map(|f| f.effect)
}

/// The fields of `call`'s JSON object, each name at most once. serde_json's own map keeps the
/// last of repeated names silently; a call that names a parameter twice is ambiguous, so it is
/// refused. Values are kept as JSON (serde_json bounds their nesting).
struct Fields(serde_json::Map<String, Json>);

/// Why `call`'s JSON was refused, before it is put in words.
#[derive(Debug)]
enum Refusal {
    NotAnObject,
    Duplicate(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotAnObject => f.write_str("expected a JSON object of named parameters"),
            Refusal::Duplicate(k) => write!(f, "field '{k}' is given twice"),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Fields {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Fields, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Fields;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object of named parameters")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Fields, A::Error> {
                let mut fields = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value: Json = map.next_value()?;
                    if fields.contains_key(&key) {
                        return Err(serde::de::Error::custom(Refusal::Duplicate(key)));
                    }
                    fields.insert(key, value);
                }
                Ok(Fields(fields))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// A key that a JSON document names twice in one object, and how deep that object lies (0: the
/// document itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The key named twice.
    pub key: String,
    /// How deep its object lies (0: the document itself).
    pub depth: usize,
}

/// The first key that `text` names twice in one object, at any depth, if any.
///
/// serde_json keeps the last of repeated keys silently, so a reader that checks the first and a
/// reader that acts on the last disagree; readbox refuses such a document instead
/// (docs/contract.md#arguments). Text that is not JSON gives `None`: its parser says why.
pub fn duplicate_key(text: &[u8]) -> Option<DuplicateKey> {
    use serde::de::DeserializeSeed;
    let found = std::cell::RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(text);
    let _ = Unique {
        depth: 0,
        found: &found,
    }
    .deserialize(&mut de);
    found.into_inner()
}

/// One JSON value walked by [`duplicate_key`]; a repeated key is recorded in `found` and stops
/// the walk.
#[derive(Clone, Copy)]
struct Unique<'a> {
    depth: usize,
    found: &'a std::cell::RefCell<Option<DuplicateKey>>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Unique<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Unique<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<(), A::Error> {
        let inner = Unique {
            depth: self.depth + 1,
            ..self
        };
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<(), A::Error> {
        let inner = Unique {
            depth: self.depth + 1,
            ..self
        };
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                *self.found.borrow_mut() = Some(DuplicateKey {
                    key,
                    depth: self.depth,
                });
                return Err(serde::de::Error::custom("a key is given twice"));
            }
            map.next_value_seed(inner)?;
            seen.insert(key);
        }
        Ok(())
    }
}

/// Reads `call`'s JSON text as an object of fields.
fn fields_of(text: &[u8]) -> std::result::Result<serde_json::Map<String, Json>, String> {
    use serde_json::error::Category;
    // Within a value too: the object is handed on whole.
    if let Some(DuplicateKey { key, .. }) = duplicate_key(text) {
        return Err(Refusal::Duplicate(key).to_string());
    }
    match serde_json::from_slice::<Fields>(text) {
        Ok(Fields(fields)) => Ok(fields),
        // The visitor's own refusals and a document that is not an object.
        Err(e) if e.classify() == Category::Data => {
            let text = e.to_string();
            let text = text.split(" at line ").next().unwrap_or(&text);
            if text.starts_with("invalid type") {
                Err(Refusal::NotAnObject.to_string())
            } else {
                Err(text.to_string())
            }
        }
        Err(e) => Err(format!("not valid JSON: {e}")),
    }
}

/// Parses the named form of `readbox call TOOL JSON` (docs/contract.md#arguments): one JSON object
/// whose fields are the parameter names with JSON types; `null` means the default.
///
/// # Errors
/// `usage:` for text that is not a JSON object, an unknown, repeated or mistyped field, a missing
/// required field, or a value out of range.
pub fn parse_json(tool: &Tool, text: &[u8]) -> Result<Args> {
    let usage = |msg: String| Error::Usage(format!("call {}: {msg}", tool.name));
    let fields = fields_of(text).map_err(usage)?;
    if let Some(k) = fields
        .keys()
        .find(|k| !tool.params.iter().any(|p| p.name == k.as_str()))
    {
        return Err(usage(format!("unknown field '{k}'")));
    }
    let mut values = Vec::with_capacity(tool.params.len());
    for p in tool.params {
        let field = fields.get(p.name).filter(|v| !v.is_null());
        let Some(v) = field else {
            match p.default {
                Some(d) => {
                    values.push(value_of(tool, p, d.as_bytes())?);
                    continue;
                }
                None => return Err(usage(format!("missing required field '{}'", p.name))),
            }
        };
        let mistyped = |want: &str| usage(format!("field '{}' must be {want}", p.name));
        let value = match p.kind {
            ParamKind::Path | ParamKind::Text => Value::Bytes(
                v.as_str()
                    .ok_or_else(|| mistyped("a string"))?
                    .as_bytes()
                    .to_vec(),
            ),
            ParamKind::Bool => Value::Bool(v.as_bool().ok_or_else(|| mistyped("a boolean"))?),
            ParamKind::Int { min, max } => {
                let n = v.as_u64().filter(|n| (min..=max).contains(n));
                Value::Int(n.ok_or_else(|| mistyped(&int_range(min, max)))?)
            }
            ParamKind::FileType => Value::FileType(
                v.as_str()
                    .and_then(parse_file_type)
                    .ok_or_else(|| mistyped("\"all\", \"file\" or \"directory\""))?,
            ),
        };
        values.push(value);
    }
    // The named form is a machine's: every parameter counts as given, so that nothing depends
    // on what standard input happens to be (grep's rule for a left-out PATH is for shells).
    let given = tool.params.len();
    Ok(Args::new(values, given))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::by_name;

    /// A world of no entries, with a terminal on standard input.
    const NONE: World<'static> = World {
        exists: &|_| false,
        is_dir: &|_| false,
        piped: &|| false,
    };

    /// The same world with a pipe on standard input.
    const PIPED: World<'static> = World {
        exists: &|_| false,
        is_dir: &|_| false,
        piped: &|| true,
    };

    fn words(ws: &[&str]) -> Vec<OsString> {
        ws.iter().map(OsString::from).collect()
    }

    fn usage_of(tool: &str, ws: &[&str]) -> String {
        match parse(by_name(tool).unwrap(), &words(ws), &NONE) {
            Err(Error::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn flags_get_their_positional_equivalent() {
        assert!(
            usage_of("grep", &["-i", "foo", "src"]).contains("equivalent: grep foo src true true")
        );
        assert!(usage_of("head", &["-n", "5", "f"]).contains("equivalent: head f 5"));
        assert!(usage_of("head", &["-5", "f"]).contains("equivalent: head f 5"));
        assert!(usage_of("tail", &["-n20", "f"]).contains("equivalent: tail f 20"));
        assert!(
            usage_of("grep", &["-rni", "TODO", "."]).contains("equivalent: grep TODO . true true")
        );
        assert!(
            usage_of("find", &[".", "-name", "*.rs", "-type", "f"])
                .contains("equivalent: find . '*.rs' f")
        );
        assert!(usage_of("ls", &["-la"]).contains("equivalent: ls . true"));
        assert!(usage_of("wc", &["-l", "f"]).contains("equivalent: wc f; -l dropped"));
        assert!(usage_of("stat", &["-c", "%s", "f"]).contains("equivalent: stat f;"));
        assert!(usage_of("stat", &["--format=%s", "f"]).contains("equivalent: stat f;"));
    }

    #[test]
    fn hints_keep_dash_words_literal_and_offer_only_valid_calls() {
        assert!(usage_of("head", &["-n", "1", "--", "-f"]).contains("equivalent: head -- -f 1"));
        // `tail -n +2` has no tail equivalent; cat from line 2 does it.
        let m = usage_of("tail", &["-n", "+2", "f"]);
        assert!(
            m.contains("equivalent: cat f 2") && !m.contains("equivalent: tail"),
            "{m}"
        );
        let m = usage_of("head", &["-n", "-2", "f"]);
        assert!(!m.contains("equivalent: head"), "{m}");
    }

    #[test]
    fn flags_answered_by_another_call_give_it_with_the_callers_words() {
        let m = usage_of("cat", &["-n", "a b.txt"]);
        assert!(m.contains("equivalent: grep '' 'a b.txt'"), "{m}");
        let m = usage_of("tail", &["-f", "app.log"]);
        assert!(m.contains("equivalent: tail app.log;"), "{m}");
        let m = usage_of("tail", &["-n", "+45", "app.log"]);
        assert!(m.contains("equivalent: cat app.log 45"), "{m}");
        let m = usage_of("cat", &["-A", "a.txt"]);
        assert!(m.contains("'-A'") && !m.contains("equivalent:"), "{m}");
    }

    #[test]
    fn several_paths_give_one_call_per_path() {
        // Names that look like files exist; numbers do not.
        let all = World {
            exists: &|w| !w.iter().all(u8::is_ascii_digit),
            is_dir: &|_| false,
            piped: &|| false,
        };
        let usage = |tool: &str, ws: &[&str]| match parse(by_name(tool).unwrap(), &words(ws), &all)
        {
            Err(Error::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        };
        assert!(usage("cat", &["a.py", "b.py"]).ends_with("cat a.py; cat b.py"));
        assert!(usage("head", &["a.py", "b.py"]).ends_with("head a.py; head b.py"));
        assert!(usage("head", &["a.py", "5", "b.py"]).ends_with("head a.py 5; head b.py 5"));
        let m = usage("grep", &["fn main", "src/a.rs", "src/b.rs"]);
        assert!(
            m.contains(
                "grep 'fn main' src/a.rs; grep 'fn main' src/b.rs; or, for all the folder's files of \
                 that extension: \
                        grep 'fn main' src false false '*.rs'"
            ),
            "{m}"
        );
        assert!(!m.contains("boolean"), "{m}");
        let ten: Vec<String> = (0..10).map(|i| format!("f{i}")).collect();
        let ten: Vec<&str> = ten.iter().map(String::as_str).collect();
        let m = usage("wc", &ten);
        assert!(
            m.contains("wc f7 (and 2 more)") && !m.contains("wc f8"),
            "{m}"
        );
        assert!(
            usage("wc", &["-l", "a", "b"])
                .contains("equivalent: wc a; wc b; -l dropped: wc always prints")
        );
        // A bad value that names no entry is the value's error.
        match parse(by_name("cat").unwrap(), &words(&["a.py", "5x"]), &NONE) {
            Err(Error::Usage(m)) => assert!(m.starts_with("FROM_LINE: '5x'"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_missing_path_names_the_standard_input_form() {
        assert!(usage_of("cat", &[]).ends_with("cat - reads standard input"));
        assert!(usage_of("wc", &[]).ends_with("wc - reads standard input"));
        assert!(!usage_of("stat", &[]).contains("standard input"));
    }

    #[test]
    fn a_flag_call_without_path_reads_piped_input() {
        let piped =
            |tool: &str, ws: &[&str]| match parse(by_name(tool).unwrap(), &words(ws), &PIPED) {
                Err(Error::Usage(m)) => m,
                other => panic!("expected a usage error, got {other:?}"),
            };
        assert!(piped("head", &["-3"]).contains("equivalent: head - 3"));
        assert!(piped("tail", &["-n", "5"]).contains("equivalent: tail - 5"));
        assert!(piped("wc", &["-l"]).contains("equivalent: wc -; -l dropped"));
        assert!(piped("cat", &["-n"]).contains("equivalent: grep '' -"));
        // `ls | grep -i x` searches the pipe, never the tree; `grep -r x` the tree, as GNU grep.
        assert!(piped("grep", &["-i", "x"]).contains("equivalent: grep x - true true"));
        assert!(piped("grep", &["-r", "x"]).ends_with("equivalent: grep x . true"));
        // A PATH given stays; stat reads no standard input.
        assert!(piped("head", &["-3", "f"]).contains("equivalent: head f 3"));
        assert!(!piped("stat", &["-L"]).contains("equivalent:"));
        // With a terminal there is nothing to read: the missing PATH is named once, not the
        // signature again.
        let m = usage_of("head", &["-3"]);
        assert!(m.ends_with("(head PATH [LINES=10]); no PATH given"), "{m}");
        assert!(usage_of("grep", &["-i", "x"]).contains("equivalent: grep x . true true"));
    }

    #[test]
    fn only_a_word_that_is_no_known_flag_is_told_of_double_dash() {
        assert!(!usage_of("head", &["-n", "5", "f"]).contains("use --"));
        assert!(!usage_of("head", &["-5", "f"]).contains("use --"));
        assert!(
            usage_of("cat", &["-weird.txt"]).ends_with("use -- before a path that starts with -")
        );
    }

    #[test]
    fn tail_from_a_line_is_told_the_cat_call() {
        let m = usage_of("tail", &["big log", "+5"]);
        assert!(m.ends_with("; from line 5 on: cat 'big log' 5"), "{m}");
        assert!(!usage_of("tail", &["f", "+0"]).contains("cat"));
        assert!(!usage_of("head", &["f", "+5"]).contains("cat"));
    }

    #[test]
    fn double_dash_ends_the_check() {
        let a = parse(by_name("cat").unwrap(), &words(&["--", "-n"]), &NONE).unwrap();
        assert_eq!(a.bytes(0), b"-n");
        assert!(parse(by_name("head").unwrap(), &words(&["-x", "--"]), &NONE).is_err());
    }

    #[test]
    fn values_are_checked() {
        let head = by_name("head").unwrap();
        assert!(parse(head, &words(&["a", "10001"]), &NONE).is_err());
        assert!(parse(head, &words(&["a", "0x10"]), &NONE).is_err());
        assert_eq!(
            parse(head, &words(&["a", "10000"]), &NONE).unwrap().int(1),
            10000
        );
        assert!(parse(by_name("ls").unwrap(), &words(&[".", "maybe"]), &NONE).is_err());
        assert!(parse(by_name("find").unwrap(), &words(&[".", "*", "D"]), &NONE).is_ok());
    }

    #[test]
    fn json_form_checks_types() {
        let head = by_name("head").unwrap();
        assert_eq!(
            parse_json(head, br#"{"path":"f","lines":2}"#)
                .unwrap()
                .int(1),
            2
        );
        for bad in [
            r#"{"path":"f","lines":"2"}"#,
            r#"{"path":"f","lines":2.5}"#,
            "{}",
            "[1]",
            r#"{"x":1,"path":"f"}"#,
            r#"{"path":"f","path":"g"}"#,
        ] {
            assert!(parse_json(head, bad.as_bytes()).is_err(), "{bad}");
        }
        assert_eq!(
            parse_json(head, br#"{"path":"-n","lines":null}"#)
                .unwrap()
                .int(1),
            10
        );
    }

    #[test]
    fn json_form_refuses_repeated_fields_and_non_objects_by_name() {
        let cat = by_name("cat").unwrap();
        let m = |text: &str| match parse_json(cat, text.as_bytes()) {
            Err(Error::Usage(m)) => m,
            other => panic!("expected a usage error for {text}, got {other:?}"),
        };
        assert_eq!(
            m(r#"{"path":"a","path":"b"}"#),
            "call cat: field 'path' is given twice"
        );
        // Also when the first value is null (the default) or of another type.
        assert_eq!(
            m(r#"{"path":null,"from_line":1,"path":"b"}"#),
            "call cat: field 'path' is given twice"
        );
        assert_eq!(
            m("[1]"),
            "call cat: expected a JSON object of named parameters"
        );
        assert_eq!(
            m("\"x\""),
            "call cat: expected a JSON object of named parameters"
        );
        assert!(m("{").starts_with("call cat: not valid JSON: "));
        let deep = format!("{{\"path\":{}{}}}", "[".repeat(60_000), "]".repeat(60_000));
        assert!(m(&deep).contains("recursion limit"), "{}", m(&deep));
    }
}
