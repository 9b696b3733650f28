//! `tail PATH [LINES=10]`: the last LINES lines, each with its own line ending (SPEC §7).
//!
//! tail reads backwards from the end of the file until it has seen LINES line starts, then copies
//! forward: its cost grows with LINES, not with the file's size. The read budget is charged for the
//! lines returned, counted from the end; a line that would cross it is not returned.

use std::os::unix::fs::FileExt;

use super::{Args, Ctx, Outcome, Param, Tool, head};
use crate::envelope::Stop;
use crate::error::{Error, shown};
use crate::read::BLOCK;

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "tail",
    summary: "print the last lines of a file",
    params: &[
        Param {
            name: "path",
            kind: super::Kind::Path,
            default: None,
            help: "the file to read",
        },
        head::LINES,
    ],
    example: "build.log 50",
    flags: head::FLAGS,
    on_truncate: Outcome::Success,
    run,
};

fn read_at(file: &std::fs::File, buf: &mut [u8], at: u64, path: &str) -> Result<usize, Error> {
    loop {
        match file.read_at(buf, at) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(path, &e)),
        }
    }
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let path = shown(args.bytes(0));
    let node = ctx.gate.resolve(args.bytes(0))?;
    let file = ctx.gate.open_read(&node, &path)?;
    let wanted = args.int(1);
    if wanted == 0 {
        return Ok(Outcome::Success);
    }
    let size = file.metadata().map_err(|e| Error::io(&path, &e))?.len();
    let budget_left = ctx.budget.read_left();
    // Scan backwards for the start of the `wanted`th line from the end. A final `\n` ends the
    // last line and starts none.
    let mut buf = vec![0u8; BLOCK];
    let mut pos = size;
    let mut start = size; // start of the lines counted so far
    let mut found = 0u64;
    let mut over = false;
    'scan: loop {
        if pos == 0 {
            // The first line of the file starts at 0.
            if size > budget_left {
                over = true;
            } else {
                start = 0;
            }
            break;
        }
        let len = BLOCK.min(usize::try_from(pos).unwrap_or(BLOCK));
        let at = pos - len as u64;
        if read_at(&file, &mut buf[..len], at, &path)? < len {
            return Err(Error::Io(format!("{path}: the file shrank while being read")).into());
        }
        let mut end = len;
        if pos == size && buf[len - 1] == b'\n' {
            end -= 1;
        }
        while let Some(i) = memchr::memrchr(b'\n', &buf[..end]) {
            let line_start = at + i as u64 + 1;
            if size - line_start > budget_left {
                over = true;
                break 'scan;
            }
            start = line_start;
            found += 1;
            if found == wanted {
                break 'scan;
            }
            end = i;
        }
        // The line being scanned reaches back at least to `at`.
        if size - at > budget_left {
            over = true;
            break;
        }
        pos = at;
    }
    ctx.budget.charge_read(size - start)?;
    let mut at = start;
    while at < size {
        let len = BLOCK.min(usize::try_from(size - at).unwrap_or(BLOCK));
        let n = read_at(&file, &mut buf[..len], at, &path)?;
        if n == 0 {
            break;
        }
        ctx.out.push(&buf[..n])?;
        at += n as u64;
    }
    if over {
        return Err(ctx.budget.read_exhausted().into());
    }
    Ok(Outcome::Success)
}
