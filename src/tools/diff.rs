//! `diff PATH_A PATH_B [CONTEXT_LINES=3]`: a unified diff of two files.
//!
//! It is one that `patch` applies to PATH_A to give PATH_B, with hunk headers as GNU
//! `diff -u --label PATH_A --label PATH_B` writes them (docs/contract.md#tools). Lines are compared
//! with their terminators, as the files hold them, and printed as redaction shows them (the diff
//! then no longer applies with `patch`, and a note says so). With standard input as a side, the
//! lines are compared as redaction shows them: text piped in is the caller's own, and comparing it
//! with a file's secret would confirm a guessed secret by the exit status
//! (docs/contract.md#redaction).
//! Identical files give empty output and exit 0; differences exit 1, as POSIX diff. A binary file
//! (a NUL in its first 8 KiB) is compared as bytes: `Binary files A and B differ`, as GNU diff;
//! with standard input as a side and redaction on, a binary side is refused instead.

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::{Runs, Tool};
use crate::call::Ctx;
use crate::envelope::Stop;
use crate::error::{Error, shown};
use crate::names::quoted;
use crate::read::{BINARY_PROBE, BLOCK, Filter, for_each_block, is_binary, read_at};
use crate::redact::{Shown, Tally, key_marker};
use crate::registry::{Args, Effect, Flag, Outcome, Param, ParamKind, params};

/// The note of a diff with standard input as a side when redaction replaced a value.
pub const STDIN_NOTE: &str = "standard input is a side, so the lines were compared as redacted: \
                              values that redaction hides were not compared";

/// The refusal of a binary side when standard input is a side and redaction is on.
pub const BINARY_STDIN: &str = "with standard input as a side, diff compares only text, whose \
                                secrets redaction can hide";

/// Lines per file that diff compares at most.
pub const MAX_LINES: usize = 2000;

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "diff",
    summary: "compare two files line by line, as a unified diff",
    params: &[
        Param {
            name: "path_a",
            kind: ParamKind::Path,
            default: None,
            help: "the old file",
        },
        Param {
            name: "path_b",
            kind: ParamKind::Path,
            default: None,
            help: "the new file",
        },
        Param {
            name: "context_lines",
            kind: ParamKind::Int { min: 0, max: 100 },
            default: Some("3"),
            help: "unchanged lines shown around each change (0 to 100)",
        },
    ],
    example: "old.txt new.txt 3",
    flags: &[
        Flag {
            names: &["-u", "--unified", "-N"],
            effect: Effect::Always,
        },
        Flag {
            names: &["-U"],
            effect: Effect::Takes("context_lines"),
        },
        Flag {
            names: &[
                "-r",
                "--recursive",
                "-q",
                "--brief",
                "-y",
                "--side-by-side",
                "-c",
                "-w",
                "-b",
                "-i",
                "-B",
                "--color",
            ],
            effect: Effect::Never("readbox diff compares two files as a unified diff only"),
        },
    ],
    on_truncate: Outcome::Negative,
    stdin: true,
    run: Runs::Tool(run),
};

/// An opened side of the comparison: a file, read at offsets, or standard input read whole (a
/// pipe cannot be read twice; diff holds its inputs anyway, within the read budget).
struct Side {
    path: String,
    content: Content,
    /// Whether this side is standard input, text the caller chose.
    stdin: bool,
}

enum Content {
    File { file: std::fs::File, size: u64 },
    Bytes(Vec<u8>),
}

fn open(ctx: &Ctx<'_>, arg: &[u8]) -> Result<Side, Error> {
    let path = shown(arg);
    let input = ctx.open_input(arg, "diff")?;
    let content = match input.size {
        Some(size) if !input.stdin => Content::File {
            file: input.file,
            size,
        },
        _ => {
            let mut data = Vec::new();
            for_each_block(input.file, &path, ctx.budget, |block| {
                data.extend_from_slice(block);
                Ok(())
            })?;
            Content::Bytes(data)
        }
    };
    Ok(Side {
        path,
        content,
        stdin: input.stdin,
    })
}

impl Side {
    fn size(&self) -> u64 {
        match &self.content {
            Content::File { size, .. } => *size,
            Content::Bytes(data) => data.len() as u64,
        }
    }

    /// Fills `buf` from offset `at` (fewer bytes only at the end: two sides of the same size
    /// compare block for block even where one reads short); what was read of a file is charged
    /// (standard input was charged when it was read).
    fn read_at(&self, ctx: &Ctx<'_>, buf: &mut [u8], at: u64) -> Result<usize, Error> {
        match &self.content {
            Content::File { file, .. } => {
                let n = read_at(file, buf, at, &self.path)?;
                ctx.budget.charge_read(n as u64)?;
                Ok(n)
            }
            Content::Bytes(data) => {
                let from = usize::try_from(at).unwrap_or(usize::MAX).min(data.len());
                let n = buf.len().min(data.len() - from);
                buf[..n].copy_from_slice(&data[from..from + n]);
                Ok(n)
            }
        }
    }

    /// Whether this side is binary: a NUL in its first 8 KiB, as grep decides it (GNU diff looks
    /// at the start of the file too). The probe is not charged: the comparison reads these bytes
    /// again and charges them then.
    fn is_binary(&self) -> Result<bool, Error> {
        let head = match &self.content {
            Content::File { file, .. } => {
                let mut probe = vec![0u8; BINARY_PROBE];
                let n = read_at(file, &mut probe, 0, &self.path)?;
                probe.truncate(n);
                probe
            }
            Content::Bytes(data) => data[..data.len().min(BINARY_PROBE)].to_vec(),
        };
        Ok(is_binary(&head))
    }
}

/// Whether two sides hold the same bytes, read block by block (every byte read is charged;
/// sides of different sizes differ without a read).
fn same_bytes(ctx: &Ctx<'_>, a: &Side, b: &Side) -> Result<bool, Error> {
    if a.size() != b.size() {
        // Different without reading further; the probes were looked at.
        let probe = BINARY_PROBE as u64;
        let probed = |s: &Side| match s.content {
            Content::File { size, .. } => size.min(probe),
            Content::Bytes(_) => 0,
        };
        ctx.budget.charge_read(probed(a) + probed(b))?;
        return Ok(false);
    }
    let (mut x, mut y) = (vec![0u8; BLOCK], vec![0u8; BLOCK]);
    let mut at = 0u64;
    while at < a.size() {
        let want = BLOCK.min(usize::try_from(a.size() - at).unwrap_or(BLOCK));
        let n = a.read_at(ctx, &mut x[..want], at)?;
        let m = b.read_at(ctx, &mut y[..want], at)?;
        if n != m || x[..n] != y[..m] {
            return Ok(false);
        }
        if n == 0 {
            break;
        }
        at += n as u64;
    }
    Ok(true)
}

/// Reads the whole side, charging every byte: the lines that diff compares.
fn read_all(ctx: &Ctx<'_>, side: Side) -> Result<Vec<u8>, Error> {
    let Side { path, content, .. } = side;
    let (data, newlines) = match content {
        Content::File { file, size } => {
            // Room for the file as it was when opened (at most 16 MiB up front): no copy as it grows.
            let mut data = Vec::with_capacity(usize::try_from(size.min(1 << 24)).unwrap_or(0));
            let mut newlines = 0;
            for_each_block(file, &path, ctx.budget, |block| {
                newlines += memchr::memchr_iter(b'\n', block).count();
                if newlines > MAX_LINES {
                    return Err(too_long(&path));
                }
                data.extend_from_slice(block);
                Ok(())
            })?;
            (data, newlines)
        }
        Content::Bytes(data) => {
            let newlines = memchr::memchr_iter(b'\n', &data).count();
            (data, newlines)
        }
    };
    let unterminated = usize::from(!data.is_empty() && !data.ends_with(b"\n"));
    if newlines + unterminated > MAX_LINES {
        return Err(too_long(&path));
    }
    Ok(data)
}

/// A line as redaction shows it, with the values its redaction replaced; for a line a key block
/// hides, those of the block's marker line, which a hunk that shows the hidden line alone repeats.
type ShownLine = (Shown, Tally);

/// How each line of `data` is shown, as redaction shows it (docs/contract.md#redaction); `None`
/// when redaction leaves the whole side as it is.
fn shown_lines(filter: &mut Filter, data: &[u8]) -> Option<Vec<ShownLine>> {
    if filter.passes(data) {
        return None;
    }
    let mut before = filter.tally().cloned().unwrap_or_default();
    // The hidden lines of a key block follow its marker line.
    let mut marker = Tally::default();
    Some(
        lines(data)
            .into_iter()
            .map(|line| {
                let shown = filter.line(line);
                let now = filter.tally().cloned().unwrap_or_default();
                let replaced = now.since(&before);
                before = now;
                if shown == Shown::Hidden {
                    return (shown, marker.clone());
                }
                marker.clone_from(&replaced);
                (shown, replaced)
            })
            .collect(),
    )
}

fn too_long(path: &str) -> Error {
    Error::Limit(format!(
        "{path}: diff compares files of at most {MAX_LINES} lines"
    ))
}

/// The lines of `data`, each with its terminator (the last one may have none).
fn lines(data: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::with_capacity(memchr::memchr_iter(b'\n', data).count() + 1);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', data) {
        lines.push(&data[start..=end]);
        start = end + 1;
    }
    if start < data.len() {
        lines.push(&data[start..]);
    }
    lines
}

/// A hunk range as GNU diff writes it: `start,count`, `start` alone when count is 1, and the
/// line before the hunk with count 0 when the range is empty.
fn range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        n => format!("{},{n}", start + 1),
    }
}

/// What the printed hunks hold of redaction's work.
#[derive(Debug, Default)]
struct Printed {
    /// The values replaced in the lines printed.
    tally: Tally,
    /// Whether a printed line differs from the file's own (then patch cannot apply the diff).
    altered: bool,
}

/// Appends one line of a hunk, `mark` first, as `shown` says. `block` is the mark of the key block
/// whose marker line the hunk printed last (a line that follows is hidden in it), else `None`:
/// a hidden line starts a block of its own only where the hunk has not shown its marker, and then
/// stands for it, so that a hunk never prints a changed key line as nothing.
fn push_line(
    text: &mut Vec<u8>,
    (mark, line): (u8, &[u8]),
    shown: Option<&ShownLine>,
    block: &mut Option<u8>,
    printed: &mut Printed,
) {
    let line = match shown {
        None => line,
        Some((Shown::Hidden, _)) if *block == Some(mark) => {
            printed.altered = true;
            return;
        }
        Some((shown, replaced)) => {
            printed.tally.add(replaced);
            printed.altered |= *shown != Shown::Same;
            let in_block = *shown == Shown::Hidden || replaced.has_key_block();
            *block = in_block.then_some(mark);
            match shown {
                Shown::Same => line,
                Shown::Replaced(t) => t.as_slice(),
                Shown::Hidden => {
                    text.push(mark);
                    text.extend_from_slice(key_marker().as_bytes());
                    text.push(b'\n');
                    return;
                }
            }
        }
    };
    text.push(mark);
    text.extend_from_slice(line);
    if !line.ends_with(b"\n") {
        text.extend_from_slice(b"\n\\ No newline at end of file\n");
    }
}

/// One line of the edit script: kept, deleted from A, or inserted from B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    Keep,
    Delete,
    Insert,
}

/// The line-level edit script of `old` -> `new` (Myers, via `similar`).
///
/// Each step has the line it concerns and the counts of old and new lines before it. Positions
/// come from running counters over the ops' lengths, never from an op's start index on the side
/// it does not touch (the test `hunk_ranges_stay_right_when_a_change_shifts_repeated_lines`
/// holds a case where that index is wrong).
fn script<'a>(old: &[&'a [u8]], new: &[&'a [u8]]) -> Vec<(Edit, &'a [u8], usize, usize)> {
    let mut steps = Vec::with_capacity(old.len().max(new.len()));
    let (mut o, mut n) = (0, 0);
    for op in capture_diff_slices(Algorithm::Myers, old, new) {
        let (old_len, new_len) = (op.old_range().len(), op.new_range().len());
        if let DiffOp::Equal { .. } = op {
            for k in 0..old_len {
                steps.push((Edit::Keep, old[o + k], o + k, n + k));
            }
        } else {
            for k in 0..old_len {
                steps.push((Edit::Delete, old[o + k], o + k, n));
            }
            for k in 0..new_len {
                steps.push((Edit::Insert, new[n + k], o + old_len, n + k));
            }
        }
        o += old_len;
        n += new_len;
    }
    steps
}

/// The unified diff of `a` and `b` (empty when they are equal), as GNU `diff -U context` writes
/// it: hunks merge when at most `2 * context` kept lines separate two changes.
pub fn unified(label_a: &[u8], label_b: &[u8], a: &[u8], b: &[u8], context: usize) -> Vec<u8> {
    unified_shown(
        label_a,
        label_b,
        (a, None),
        (b, None),
        context,
        Compare::Raw,
        &mut Printed::default(),
    )
}

/// What two lines are compared by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    /// The files' own lines.
    Raw,
    /// The lines as redaction shows them; the lines a key block hides compare equal to each
    /// other, and line numbers still count the files' own lines.
    Shown,
}

/// Stands in, when lines are compared as shown, for each line that a key block hides.
const HIDDEN: &[u8] = b"\0hidden by redaction\n";

/// The lines of `data` as `compare` compares them.
fn keys<'a>(data: &'a [u8], shown: Option<&'a [ShownLine]>, compare: Compare) -> Vec<&'a [u8]> {
    let raw = lines(data);
    match (compare, shown) {
        (Compare::Shown, Some(shown)) => raw
            .iter()
            .zip(shown)
            .map(|(line, (s, _))| match s {
                Shown::Same => line,
                Shown::Replaced(text) => text.as_slice(),
                Shown::Hidden => HIDDEN,
            })
            .collect(),
        _ => raw,
    }
}

/// [`unified`] of the lines of `a` and `b` compared as `compare` says, each line printed as
/// `shown` says (redacted) when given; `printed` gathers what redaction changed in the lines
/// printed.
fn unified_shown(
    label_a: &[u8],
    label_b: &[u8],
    (a, shown_a): (&[u8], Option<&[ShownLine]>),
    (b, shown_b): (&[u8], Option<&[ShownLine]>),
    context: usize,
    compare: Compare,
    printed: &mut Printed,
) -> Vec<u8> {
    if a == b {
        return Vec::new();
    }
    let (old, new) = (keys(a, shown_a, compare), keys(b, shown_b, compare));
    if old == new {
        return Vec::new();
    }
    let steps = script(&old, &new);
    let changes: Vec<usize> = (0..steps.len())
        .filter(|&i| steps[i].0 != Edit::Keep)
        .collect();
    let mut text = Vec::new();
    text.extend_from_slice(b"--- ");
    text.extend_from_slice(label_a);
    text.extend_from_slice(b"\n+++ ");
    text.extend_from_slice(label_b);
    text.push(b'\n');
    let mut c = 0;
    while c < changes.len() {
        // Extend the hunk while the next change is close enough.
        let first = changes[c];
        let mut last = first;
        while c + 1 < changes.len() && changes[c + 1] - last - 1 <= 2 * context {
            c += 1;
            last = changes[c];
        }
        c += 1;
        let start = first.saturating_sub(context);
        let end = (last + 1 + context).min(steps.len());
        let hunk = &steps[start..end];
        let old_len = hunk.iter().filter(|s| s.0 != Edit::Insert).count();
        let new_len = hunk.iter().filter(|s| s.0 != Edit::Delete).count();
        let (old_start, new_start) = (hunk[0].2, hunk[0].3);
        text.extend_from_slice(
            format!(
                "@@ -{} +{} @@\n",
                range(old_start, old_len),
                range(new_start, new_len)
            )
            .as_bytes(),
        );
        let mut block = None;
        for &(edit, line, o, n) in hunk {
            let (mark, shown) = match edit {
                Edit::Keep | Edit::Delete => (
                    if edit == Edit::Keep { b' ' } else { b'-' },
                    shown_a.and_then(|s| s.get(o)),
                ),
                Edit::Insert => (b'+', shown_b.and_then(|s| s.get(n))),
            };
            push_line(&mut text, (mark, line), shown, &mut block, printed);
        }
    }
    text
}

params! {
    /// diff's parameters, by name.
    pub struct Params<'a> of TOOL.params;
    /// The first file, as the caller named it.
    path_a: &'a [u8] = bytes,
    /// The second file, as the caller named it.
    path_b: &'a [u8] = bytes,
    /// How many unchanged lines to show around each change.
    context_lines: u64 = int,
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let p = Params::of(args);
    if p.path_a == b"-" && p.path_b == b"-" {
        return Err(Error::Usage(
            "diff reads standard input for one side at most: diff - PATH_B, or diff PATH_A -"
                .into(),
        )
        .into());
    }
    let a = open(ctx, p.path_a)?;
    let b = open(ctx, p.path_b)?;
    let (label_a, label_b) = (quoted(p.path_a), quoted(p.path_b));
    // Binary files are compared as bytes, before the line limit applies (as GNU diff).
    let binary = [a.is_binary()?, b.is_binary()?];
    if binary[0] || binary[1] {
        if ctx.policy.redact && (a.stdin || b.stdin) {
            // Redaction finds secrets in text; a binary file's bytes (a DER key, a keystore, a
            // database page) are no redacted content, and comparing them with bytes the caller
            // chose would confirm a guess of the whole file by the exit status.
            // Name the file when it is binary, else standard input.
            let (file, piped) = if a.stdin { (1, 0) } else { (0, 1) };
            let sides = [&a.path, &b.path];
            let side = sides[if binary[file] { file } else { piped }];
            let e = format!("{side} is binary (a NUL in its first 8 KiB): {BINARY_STDIN}");
            return Err(Error::Usage(e).into());
        }
        if same_bytes(ctx, &a, &b)? {
            return Ok(Outcome::Success);
        }
        let mut line = b"Binary files ".to_vec();
        line.extend_from_slice(&label_a);
        line.extend_from_slice(b" and ");
        line.extend_from_slice(&label_b);
        line.extend_from_slice(b" differ\n");
        ctx.out.push(&line)?;
        return Ok(Outcome::Negative);
    }
    // Two files' own lines are compared, so that files that differ never read as the same; each
    // line is shown as redaction shows it. Text piped in is compared as shown, or it would be an
    // oracle for a guessed secret.
    let compare = if a.stdin || b.stdin {
        Compare::Shown
    } else {
        Compare::Raw
    };
    let text_a = read_all(ctx, a)?;
    let text_b = read_all(ctx, b)?;
    let (mut filter_a, mut filter_b) = (
        Filter::new(ctx.policy.redact),
        Filter::new(ctx.policy.redact),
    );
    let shown_a = shown_lines(&mut filter_a, &text_a);
    let shown_b = shown_lines(&mut filter_b, &text_b);
    let mut printed = Printed::default();
    let text = unified_shown(
        &label_a,
        &label_b,
        (&text_a, shown_a.as_deref()),
        (&text_b, shown_b.as_deref()),
        p.context_lines as usize,
        compare,
        &mut printed,
    );
    if compare == Compare::Shown
        && filter_a.tally().map_or(0, Tally::total) + filter_b.tally().map_or(0, Tally::total) > 0
    {
        // Given whether or not the lines differ: a note only on a difference would tell as much
        // as the exit status. So it counts the whole of both sides, not the lines printed.
        filter_a.report(ctx.out);
        filter_b.report(ctx.out);
        ctx.out.note(STDIN_NOTE);
    } else {
        // Two files: the values replaced in the lines printed, not in the whole files.
        ctx.out.add_redactions(&printed.tally);
    }
    if text.is_empty() {
        return Ok(Outcome::Success);
    }
    if printed.altered {
        ctx.out.note(crate::redact::PATCH_NOTE);
    }
    if let Err(stop) = ctx.out.push(&text) {
        if stop == Stop::Truncated {
            ctx.out.note_truncation(
                ": the diff is incomplete and does not apply with patch; a smaller CONTEXT_LINES \
                 shortens it",
            );
        }
        return Err(stop);
    }
    Ok(Outcome::Negative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_their_terminators_and_an_unterminated_last_line() {
        for data in [
            &b""[..],
            b"\n",
            b"a",
            b"a\n",
            b"a\nb",
            b"a\n\nb\n",
            b"\r\n\r\nx\r",
        ] {
            let expected: Vec<&[u8]> = data.split_inclusive(|&c| c == b'\n').collect();
            assert_eq!(lines(data), expected, "{data:?}");
        }
    }

    #[test]
    fn ranges_as_gnu_diff() {
        assert_eq!(range(4, 1), "5");
        assert_eq!(range(0, 0), "0,0");
        assert_eq!(range(1, 7), "2,7");
    }

    #[test]
    fn missing_newline_is_marked() {
        let d = unified(b"a", b"b", b"foo", b"foo\n", 3);
        assert_eq!(
            String::from_utf8(d).unwrap(),
            "--- a\n+++ b\n@@ -1 +1 @@\n-foo\n\\ No newline at end of file\n+foo\n"
        );
    }
}
