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
    let path = shown(args.bytes(0));
    let node = ctx.gate.resolve(args.bytes(0))?;
    let file = ctx.gate.open_read(&node, &path)?;
    let size = u64::try_from(node.stat().st_size).unwrap_or(0);
    let mut left = args.int(1);
    let mut lines = Lines::new(file, &path);
    while left > 0 {
        let Some(batch) = lines.next_batch(hold(
            ctx.out.room(),
            ctx.budget.read_left(),
            size.saturating_sub(lines.consumed()),
        ))?
        else {
            break;
        };
        let wanted = match batch {
            Batch::Piece(p) => p,
            Batch::Lines(b) => {
                // Up to and including the `left`th line ending, or the whole batch.
                let mut end = b.len();
                for (n, i) in memchr::memchr_iter(b'\n', b).enumerate() {
                    if n as u64 + 1 == left {
                        end = i + 1;
                        break;
                    }
                }
                left -= memchr::memchr_iter(b'\n', &b[..end]).count() as u64;
                &b[..end]
            }
        };
        let (fit, over) = charge_lines(ctx.budget, wanted);
        ctx.out.push(fit)?;
        if let Some(e) = over {
            return Err(e.into());
        }
        if !wanted.ends_with(b"\n") && matches!(batch, Batch::Lines(_)) {
            break; // the file's unterminated last line
        }
    }
    Ok(Outcome::Success)
}
