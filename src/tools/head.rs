//! `head PATH [LINES=10]`: the first LINES lines, each with its own line ending (SPEC §7).
//! Reading stops after the last line shown; only those lines count against the read budget.

use super::{Args, Ctx, Effect, Flag, Kind, Outcome, Param, Tool};
use crate::envelope::Stop;
use crate::error::shown;
use crate::read::{Batch, Lines, charge_lines, hold};

/// The LINES parameter, shared with tail.
pub const LINES: Param = Param {
    name: "lines",
    kind: Kind::Int {
        min: 0,
        max: 10_000,
    },
    default: Some("10"),
    help: "how many lines to print (0 to 10000)",
};

/// The flags head and tail share.
pub const FLAGS: &[Flag] = &[
    Flag {
        names: &["-n", "--lines"],
        effect: Effect::Takes("lines"),
    },
    Flag {
        names: &["-c", "--bytes"],
        effect: Effect::Never("readbox counts lines only"),
    },
    Flag {
        names: &["-q", "--quiet", "--silent", "-v", "--verbose"],
        effect: Effect::Always,
    },
    Flag {
        names: &["-f", "-F", "--follow", "--retry"],
        effect: Effect::Never("readbox never follows a growing file"),
    },
];

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "head",
    summary: "print the first lines of a file",
    params: &[
        Param {
            name: "path",
            kind: Kind::Path,
            default: None,
            help: "the file to read",
        },
        LINES,
    ],
    example: "src/main.rs 20",
    flags: FLAGS,
    on_truncate: Outcome::Success,
    run,
};

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    print_first_lines(ctx, args.bytes(0), args.int(1))
}

/// Prints the first `wanted` lines of the file the caller named `arg` (cat passes `u64::MAX`),
/// each with its own line ending. Reading stops after the last line printed, and only the lines
/// printed are charged against the read budget; the line that would cross it is not printed.
pub fn print_first_lines(ctx: &Ctx<'_>, arg: &[u8], wanted: u64) -> Result<Outcome, Stop> {
    let path = shown(arg);
    let node = ctx.gate.resolve(arg)?;
    let file = ctx.gate.open_read(&node, &path)?;
    let size = u64::try_from(node.stat().st_size).unwrap_or(0);
    let mut left = wanted;
    let mut lines = Lines::new(file, &path);
    while left > 0 {
        let room = ctx.out.room();
        let remaining = size.saturating_sub(lines.consumed());
        let Some(batch) = lines.next_batch(hold(room, ctx.budget.read_left(), remaining))? else {
            break;
        };
        let (chunk, last) = match batch {
            Batch::Piece(p) => (p, false),
            Batch::Lines(b) => {
                // Up to and including the `left`th line ending, or the whole batch.
                let mut end = b.len();
                let mut seen = 0;
                for i in memchr::memchr_iter(b'\n', b) {
                    seen += 1;
                    if seen == left {
                        end = i + 1;
                        break;
                    }
                }
                left -= seen;
                // A batch that does not end a line ends the file.
                (&b[..end], !b.ends_with(b"\n"))
            }
        };
        let (fit, over) = charge_lines(ctx.budget, chunk);
        ctx.out.push(fit)?;
        if let Some(e) = over {
            return Err(e.into());
        }
        if last {
            break;
        }
    }
    Ok(Outcome::Success)
}
