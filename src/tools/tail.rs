//! `tail PATH [LINES=10]`: the last LINES lines, each with its own line ending
//! (docs/contract.md#tools).
//!
//! tail reads backwards from the end of the file until it has seen LINES line starts: its cost
//! grows with LINES, not with the file's size. Under the output cap it keeps the **end**: the last
//! whole lines that fit, as redaction and decoding show them. So it reads the window forward once
//! to measure each line as it would be shown, then shows the lines that fit. The read budget is
//! charged for the lines shown; the line that would cross it is not shown.

use super::params::{FILE, LINE_FLAGS, LINES};
use super::{Runs, Tool};
use crate::call::Ctx;
use crate::envelope::{LONG_LINE, Measure, Stop};
use crate::error::{Error, shown};
use crate::read::{BLOCK, Batch, Filter, Lines, charge_lines, read_at};
use crate::redact::{self, LOOKBACK, Shown};
use crate::registry::{Args, Outcome, params};

/// The truncation note's detail when the last line alone does not fit (docs/contract.md#notes).
const LAST_LINE_END: &str = ": the last line does not fit, its end is shown";

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "tail",
    summary: "print the last lines of a file",
    params: &[FILE, LINES],
    example: "build.log 50",
    flags: LINE_FLAGS,
    on_truncate: Outcome::Success,
    stdin: true,
    run: Runs::Tool(run),
};

params! {
    /// tail's parameters, by name.
    pub struct Params<'a> of TOOL.params;
    /// The file to read, as the caller named it.
    path: &'a [u8] = bytes,
    /// How many lines to print.
    lines: u64 = int,
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let p = Params::of(args);
    let path = shown(p.path);
    let input = ctx.open_input(p.path, "tail")?;
    let wanted = p.lines;
    if wanted == 0 {
        return Ok(Outcome::Success);
    }
    let Some(size) = input.size else {
        return tail_stream(ctx, input.file, wanted, &path);
    };
    let (file, floor) = (input.file, input.offset);
    let room = ctx.out.room();
    // Past what the cap can show, more bytes from the end could never be shown.
    let reach = u64::try_from(room)
        .unwrap_or(u64::MAX)
        .saturating_add(BLOCK as u64);
    let bounds = Bounds {
        wanted,
        budget: ctx.budget.read_left(),
        reach,
    };
    let found = line_starts(&file, size, floor, bounds, &path)?;
    let over = found.over;
    // A line that starts before what was held is shown from where holding began, never whole;
    // under redaction, from past what could be the end of a secret that began before it.
    let cut = match found.cut {
        Some(c) if ctx.policy.redact => {
            let next = found.starts.first().copied().unwrap_or(size);
            Some(past_secret_run(&file, c, next, &path)?).filter(|&s| s < next)
        }
        other => other,
    };
    if found.cut.is_some() && cut.is_none() && found.starts.is_empty() {
        // Nothing of the one line held can be vouched for.
        ctx.out.truncate_front(HIDDEN_END);
        return Err(Stop::Truncated);
    }
    let partial = usize::from(cut.is_some());
    let starts: Vec<u64> = cut.into_iter().chain(found.starts).collect();
    // The read budget ran out before LINES lines: the lines that fit are shown (as far as the
    // cap allows), and the answer is `limit:`, never a success (docs/contract.md#limits).
    let end = |cut: bool| -> Result<Outcome, Stop> {
        if over {
            Err(ctx.budget.read_exhausted().into())
        } else if cut {
            Err(Stop::Truncated)
        } else {
            Ok(Outcome::Success)
        }
    };
    if starts.is_empty() {
        // Nothing, or not even the last line, fits the read budget: that line is not shown.
        return end(false);
    }
    // The redactor's state where the lines begin is read once (the bytes before them are looked
    // back over, and charged, once), for measuring and for showing from the same line.
    let first = filter_at(ctx, &file, starts[0], &path)?;
    let filter_from = |at: u64| -> Result<Filter, Error> {
        if at == starts[0] {
            Ok(first.clone())
        } else {
            filter_at(ctx, &file, at, &path)
        }
    };
    let sizes = measure(ctx, &file, size, &starts, first.clone(), &path)?;
    // The last lines that fit the cap.
    let mut total = 0usize;
    let mut keep = starts.len();
    while keep > partial && total + sizes[keep - 1] <= room {
        total += sizes[keep - 1];
        keep -= 1;
    }
    if keep == starts.len() {
        // No whole line fits: the end of the last line, cut to the cap.
        let last = starts[starts.len() - 1];
        show_end_of_last_line(ctx, &file, size, last, filter_from(last)?, &path)?;
        return end(true);
    }
    let from = starts[keep];
    ctx.budget.charge_read(size - from)?;
    show(ctx, &file, size, from, filter_from(from)?, &path)?;
    if keep > partial {
        ctx.out.truncate_front(format!(
            ": the last {} of the {} lines read are shown",
            starts.len() - keep,
            starts.len()
        ));
    } else if found.cut.is_some() {
        ctx.out.truncate_front(format!(
            ": the last {} lines are shown; the line before them is longer than the cap",
            starts.len() - keep
        ));
    }
    end(keep > 0 || found.cut.is_some())
}

/// The truncation note's detail when not even the end of the last line can be shown.
const HIDDEN_END: &str = ": the last line is longer than the cap, and its end may continue a secret that \
     began before what tail read, so none of it is shown";

/// Whether `b` may be part of a secret's value (a token, base64, a key's material, a URL's
/// password): the bytes a secret that began before a window could still run on in.
fn secret_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_-+/=.~%!#$&*?^:@".contains(&b)
}

/// Where a window that starts at `at`, inside a line, may begin to be shown under redaction:
/// past the run of bytes that could continue a secret whose start lies before `at`, which the
/// redactor, not having seen that start, could not hide (docs/contract.md#redaction). Reads at
/// most up to `limit` (the next line's start); returns `limit` when the run reaches it.
fn past_secret_run(file: &std::fs::File, at: u64, limit: u64, path: &str) -> Result<u64, Error> {
    let mut buf = vec![0u8; BLOCK];
    let mut pos = at;
    while pos < limit {
        let want = BLOCK.min(usize::try_from(limit - pos).unwrap_or(BLOCK));
        let n = read_at(file, &mut buf[..want], pos, path)?;
        if n == 0 {
            return Ok(limit);
        }
        if let Some(i) = buf[..n].iter().position(|&b| !secret_byte(b)) {
            return Ok(pos + i as u64);
        }
        pos += n as u64;
    }
    Ok(limit)
}

/// The lines [`line_starts`] found from the end of a file.
struct Starts {
    /// The start offsets of the last lines, earliest first.
    starts: Vec<u64>,
    /// The read budget ran out before LINES lines were found.
    over: bool,
    /// The scan stopped at this offset, inside a line, once it held more bytes from the end than
    /// the cap can show (docs/contract.md#tools).
    cut: Option<u64>,
}

/// How far [`line_starts`] scans back from the end of a file.
struct Bounds {
    /// The lines it looks for: LINES.
    wanted: u64,
    /// The bytes from the end that may be shown: the read budget left.
    budget: u64,
    /// The bytes from the end past which the cap could never show more.
    reach: u64,
}

/// The start offsets of the last `wanted` lines of the file after offset `floor` (where reading
/// starts: 0, or where standard input stood), earliest first, scanning backwards, and whether the
/// scan stopped at the read budget: lines that would take the shown bytes past `budget` are left
/// out. The scan also stops once it holds more than `reach` bytes from the end, which the cap
/// could never show ([`Bounds`]). A final `\n` ends the last line and starts none.
fn line_starts(
    file: &std::fs::File,
    size: u64,
    floor: u64,
    bounds: Bounds,
    path: &str,
) -> Result<Starts, Error> {
    let Bounds {
        wanted,
        budget,
        reach,
    } = bounds;
    let mut starts: Vec<u64> = Vec::new();
    let mut over = false;
    let mut cut = None;
    let mut buf = vec![0u8; BLOCK];
    let mut pos = size;
    'scan: loop {
        if pos <= floor {
            // The first line starts where reading starts.
            if size > floor && (starts.len() as u64) < wanted {
                if size - floor > budget {
                    over = true;
                } else {
                    starts.push(floor);
                }
            }
            break;
        }
        let len = BLOCK.min(usize::try_from(pos - floor).unwrap_or(BLOCK));
        let at = pos - len as u64;
        if read_at(file, &mut buf[..len], at, path)? < len {
            return Err(Error::Io(format!(
                "{path}: the file shrank while being read"
            )));
        }
        let mut end = len;
        if pos == size && buf[len - 1] == b'\n' {
            end -= 1;
        }
        while let Some(i) = memchr::memrchr(b'\n', &buf[..end]) {
            let start = at + i as u64 + 1;
            if size - start > budget {
                over = true;
                break 'scan;
            }
            starts.push(start);
            if starts.len() as u64 == wanted {
                break 'scan;
            }
            end = i;
        }
        // The line being scanned reaches back at least to `at`.
        if size - at > budget {
            over = true;
            break;
        }
        if size - at > reach && at > floor {
            cut = Some(at);
            break;
        }
        pos = at;
    }
    starts.reverse();
    Ok(Starts { starts, over, cut })
}

/// A filter whose state (of private-key blocks and name lines) is the one at `offset`, the start
/// of a line: the [`LOOKBACK`] bytes before it are read past without being shown, as the
/// redactor asks.
fn filter_at(
    ctx: &Ctx<'_>,
    file: &std::fs::File,
    offset: u64,
    path: &str,
) -> Result<Filter, Error> {
    let mut filter = Filter::new(ctx.policy.redact);
    if !ctx.policy.redact || offset == 0 {
        return Ok(filter);
    }
    let from = offset.saturating_sub(LOOKBACK as u64);
    let mut before = vec![0u8; (offset - from) as usize];
    let n = read_at(file, &mut before, from, path)?;
    before.truncate(n);
    let inside_line = if from == 0 {
        false
    } else {
        let mut byte = [0u8; 1];
        read_at(file, &mut byte, from - 1, path)? == 1 && byte[0] != b'\n'
    };
    filter.skip_window(&before, inside_line);
    if from > 0
        && redact::may_lie_in_block(&before)
        && block_opened_before(ctx, file, from, &before, inside_line, path)?
    {
        filter.open_block();
    }
    Ok(filter)
}

/// Whether a private-key block opened before offset `from` runs on to it: the lines before
/// `from` are read backwards, a piece at a time (each byte charged to the read budget), up to
/// the first line that decides ([`redact::opened_before`]); a block of any length is followed,
/// with memory bounded by a piece and one line's end. `before` is what was read from `from` on.
fn block_opened_before(
    ctx: &Ctx<'_>,
    file: &std::fs::File,
    from: u64,
    before: &[u8],
    inside_line: bool,
    path: &str,
) -> Result<bool, Error> {
    // The line that `from` cuts, if it cuts one: its start lies further back.
    let mut carry: Vec<u8> = if inside_line {
        before[..memchr::memchr(b'\n', before).map_or(before.len(), |i| i + 1)].to_vec()
    } else {
        Vec::new()
    };
    let mut pos = from;
    loop {
        if pos == 0 {
            return Ok(redact::opened_before(&carry) == Some(true));
        }
        let start = pos.saturating_sub(BLOCK as u64);
        let mut piece = vec![0u8; (pos - start) as usize];
        let n = read_at(file, &mut piece, start, path)?;
        ctx.budget.charge_read(n as u64)?;
        piece.truncate(n);
        piece.extend_from_slice(&carry);
        pos = start;
        let cut = if pos == 0 {
            0
        } else {
            memchr::memchr(b'\n', &piece).map_or(piece.len(), |i| i + 1)
        };
        if let Some(open) = redact::opened_before(&piece[cut..]) {
            return Ok(open);
        }
        piece.truncate(cut);
        // A line this long is no line of a key: only its end, a BEGIN marker, can still open a
        // block.
        if piece.len() >= redact::MAX_LINE {
            let end = &piece[piece.len() - (redact::MAX_LINE - 1)..];
            return Ok(redact::opened_before(end) == Some(true));
        }
        carry = piece;
    }
}

/// Feeds `f` the lines from offset `from` (the start of a line) to the end of the file as they
/// are shown (after redaction, by `filter`, as [`filter_at`] made it for `from`): each line in one
/// or more pieces, the last with `true` (a hidden line is one empty piece). Returns the filter,
/// which holds what was redacted.
fn each_shown(
    file: &std::fs::File,
    size: u64,
    from: u64,
    mut filter: Filter,
    path: &str,
    mut f: impl FnMut(&[u8], bool) -> Result<(), Stop>,
) -> Result<Filter, Stop> {
    let clone = file.try_clone().map_err(|e| Error::io(path, &e))?;
    // The file as it was when its end was found: bytes it grew by since are not shown.
    let mut lines = Lines::resume(clone, size, from, path)?.ending_at(size);
    while let Some(batch) = lines.next_batch(BLOCK)? {
        match batch {
            Batch::Piece(p) => {
                if !filter.in_long_line() {
                    filter.start_long_line();
                }
                f(&filter.long_piece(p), false)?;
            }
            Batch::Lines(b) => {
                let mut rest = b;
                if filter.in_long_line() {
                    let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
                    f(&filter.end_long_line(&rest[..end]), true)?;
                    rest = &rest[end..];
                }
                let clean = filter.passes(rest);
                for line in rest.split_inclusive(|&c| c == b'\n') {
                    if clean {
                        f(line, true)?;
                        continue;
                    }
                    match filter.line(line) {
                        Shown::Same => f(line, true)?,
                        Shown::Replaced(text) => f(&text, true)?,
                        Shown::Hidden => f(&[], true)?,
                    }
                }
            }
        }
    }
    if filter.in_long_line() {
        // The file ended inside a long line: what the filter held back is shown too.
        f(&filter.end_long_line(&[]), true)?;
    }
    Ok(filter)
}

/// Each line's size as it would be shown (after redaction, decoded as the format writes it).
fn measure(
    ctx: &Ctx<'_>,
    file: &std::fs::File,
    size: u64,
    starts: &[u64],
    filter: Filter,
    path: &str,
) -> Result<Vec<usize>, Stop> {
    // Measuring shows nothing: its redactions are not counted.
    let mut sizes = Vec::with_capacity(starts.len());
    let mut measure = Measure::new(ctx.out.format());
    let mut current = 0usize;
    each_shown(file, size, starts[0], filter, path, |text, line_end| {
        current += measure.add(text, line_end);
        if line_end {
            sizes.push(current);
            current = 0;
        }
        Ok(())
    })?;
    sizes.resize(starts.len(), 0);
    Ok(sizes)
}

/// Shows the lines from offset `from` to the end of the file.
fn show(
    ctx: &Ctx<'_>,
    file: &std::fs::File,
    size: u64,
    from: u64,
    filter: Filter,
    path: &str,
) -> Result<(), Stop> {
    let filter = each_shown(file, size, from, filter, path, |text, _| ctx.out.push(text))?;
    filter.report(ctx.out);
    Ok(())
}

/// When not even the last line (which starts at `line_start`) fits, the end of it, cut to the cap
/// on a character boundary: tail keeps the end. The line is redacted from its start, so its end
/// shows what a reader of the whole line sees; only its last bytes are held. Only the bytes shown
/// are charged.
fn show_end_of_last_line(
    ctx: &Ctx<'_>,
    file: &std::fs::File,
    size: u64,
    line_start: u64,
    filter: Filter,
    path: &str,
) -> Result<(), Stop> {
    let room = ctx.out.room();
    // A few bytes more than the room: decoding the held end may not start inside a character.
    let hold = room.saturating_add(8);
    let mut end: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
    let filter = each_shown(file, size, line_start, filter, path, |text, _| {
        end.extend(text);
        if end.len() > hold {
            end.drain(..end.len() - hold);
        }
        Ok(())
    })?;
    filter.report(ctx.out);
    let tail = ctx.out.end_that_fits(end.make_contiguous(), room);
    ctx.budget.charge_read(tail.len() as u64)?;
    ctx.out.push(&tail)?;
    ctx.out.truncate_front(LAST_LINE_END);
    Ok(())
}

/// One line kept by [`tail_stream`]: its text as it will be shown (the end of it, for a line longer
/// than the room) and that text's size in output bytes.
struct Kept {
    text: Vec<u8>,
    shown: usize,
}

/// tail of a pipe or socket, which cannot be read from its end: read forward, as the filter shows
/// it, keeping the last `wanted` lines; lines that could no longer fit the output are let go as
/// reading goes, so memory stays bounded by the cap. Every byte read is charged.
fn tail_stream(
    ctx: &Ctx<'_>,
    file: std::fs::File,
    wanted: u64,
    path: &str,
) -> Result<Outcome, Stop> {
    use std::collections::VecDeque;
    let room = ctx.out.room();
    let bound = room.saturating_add(LONG_LINE);
    let mut lines = Lines::new(file, None, path);
    let mut filter = Filter::new(ctx.policy.redact);
    let mut measure = Measure::new(ctx.out.format());
    let mut kept: VecDeque<Kept> = VecDeque::new();
    let mut total = 0usize;
    let mut current: Option<Kept> = None;
    let mut over = None;
    let keep = |kept: &mut VecDeque<Kept>, total: &mut usize, line: Kept| {
        *total += line.text.len();
        kept.push_back(line);
        while kept.len() as u64 > wanted || (*total > bound && kept.len() > 1) {
            let gone = kept.pop_front().expect("not empty");
            *total -= gone.text.len();
        }
    };
    while over.is_none()
        && let Some(batch) = lines.next_batch(BLOCK)?
    {
        // Of a batch that crosses the budget, the whole lines within it are still kept: only the
        // line being read when the budget ran out is not shown (docs/contract.md#limits).
        let batch = match batch {
            Batch::Piece(p) => match ctx.budget.charge_read(p.len() as u64) {
                Ok(()) => Batch::Piece(p),
                Err(e) => {
                    over = Some(e);
                    break;
                }
            },
            Batch::Lines(b) => {
                let (fit, err) = charge_lines(ctx.budget, b);
                over = err;
                if fit.is_empty() {
                    // Not even the end of a long line in progress fits: that line is not shown.
                    break;
                }
                Batch::Lines(fit)
            }
        };
        match batch {
            Batch::Piece(p) => {
                if !filter.in_long_line() {
                    filter.start_long_line();
                }
                let piece = filter.long_piece(p);
                let line = current.get_or_insert(Kept {
                    text: Vec::new(),
                    shown: 0,
                });
                line.shown += measure.add(&piece, false);
                line.text.extend_from_slice(&piece);
                // Only the end of a long line can ever be shown.
                if line.text.len() > bound {
                    let cut = line.text.len() - bound;
                    line.text.drain(..cut);
                }
            }
            Batch::Lines(b) => {
                let mut rest = b;
                if filter.in_long_line() {
                    let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
                    let tail = filter.end_long_line(&rest[..end]);
                    let mut line = current.take().unwrap_or(Kept {
                        text: Vec::new(),
                        shown: 0,
                    });
                    line.shown += measure.add(&tail, true);
                    line.text.extend_from_slice(&tail);
                    keep(&mut kept, &mut total, line);
                    rest = &rest[end..];
                }
                for raw in rest.split_inclusive(|&c| c == b'\n') {
                    let text = match filter.line(raw) {
                        Shown::Same => raw.to_vec(),
                        Shown::Replaced(t) => t,
                        Shown::Hidden => Vec::new(),
                    };
                    let shown_size = measure.add(&text, true);
                    keep(
                        &mut kept,
                        &mut total,
                        Kept {
                            text,
                            shown: shown_size,
                        },
                    );
                }
            }
        }
    }
    if over.is_some() {
        // The line being read when the budget ran out crossed it: it is not shown.
        current = None;
    } else if filter.in_long_line() {
        let tail = filter.end_long_line(&[]);
        let line = current.get_or_insert(Kept {
            text: Vec::new(),
            shown: 0,
        });
        line.shown += measure.add(&tail, true);
        line.text.extend_from_slice(&tail);
    }
    if let Some(line) = current.take() {
        keep(&mut kept, &mut total, line);
    }
    filter.report(ctx.out);
    // As for a file: once the budget ran out, the answer is `limit:` with the last lines read
    // that fit the cap, never a success, even a truncated one (docs/contract.md#limits).
    let finish = |over: Option<Error>| -> Result<Outcome, Stop> {
        match over {
            Some(e) => Err(e.into()),
            None => Err(Stop::Truncated),
        }
    };
    // The last lines that fit the cap.
    let mut size = 0usize;
    let mut first = kept.len();
    while first > 0 && size + kept[first - 1].shown <= room {
        size += kept[first - 1].shown;
        first -= 1;
    }
    if first == kept.len() {
        if let Some(last) = kept.back() {
            let shown_end = ctx.out.end_that_fits(&last.text, room);
            ctx.out.push(&shown_end)?;
            ctx.out.truncate_front(LAST_LINE_END);
            return finish(over);
        }
    } else {
        for line in kept.range(first..) {
            ctx.out.push(&line.text)?;
        }
        if first > 0 {
            ctx.out.truncate_front(format!(
                ": the last {} of the {} lines kept are shown",
                kept.len() - first,
                kept.len()
            ));
            return finish(over);
        }
    }
    if let Some(e) = over {
        return Err(e.into());
    }
    Ok(Outcome::Success)
}
