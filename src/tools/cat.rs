//! `cat PATH`: the file's content, unchanged (SPEC §7).

use super::{Args, Ctx, Effect, Flag, Kind, Outcome, Param, Tool};
use crate::envelope::Stop;
use crate::error::shown;
use crate::read::{Batch, Lines, charge_lines, hold};

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "cat",
    summary: "print a file's content",
    params: &[Param {
        name: "path",
        kind: Kind::Path,
        default: None,
        help: "the file to print",
    }],
    example: "README.md",
    flags: &[
        Flag {
            names: &["-n", "--number", "-b", "--number-nonblank"],
            effect: Effect::Never("cat prints content unchanged; grep '' PATH shows line numbers"),
        },
        Flag {
            names: &[
                "-A",
                "-v",
                "-e",
                "-E",
                "-T",
                "-t",
                "--show-all",
                "--show-ends",
            ],
            effect: Effect::Never("cat prints content unchanged"),
        },
        Flag {
            names: &["-s", "--squeeze-blank"],
            effect: Effect::Never("cat prints content unchanged"),
        },
        Flag {
            names: &["-u"],
            effect: Effect::Always,
        },
    ],
    on_truncate: Outcome::Success,
    run,
};

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let path = shown(args.bytes(0));
    let node = ctx.gate.resolve(args.bytes(0))?;
    let file = ctx.gate.open_read(&node, &path)?;
    let size = u64::try_from(node.stat().st_size).unwrap_or(0);
    let mut lines = Lines::new(file, &path);
    while let Some(batch) = lines.next_batch(hold(
        ctx.out.room(),
        ctx.budget.read_left(),
        size.saturating_sub(lines.consumed()),
    ))? {
        let (Batch::Lines(bytes) | Batch::Piece(bytes)) = batch;
        let (fit, over) = charge_lines(ctx.budget, bytes);
        ctx.out.push(fit)?;
        if let Some(e) = over {
            return Err(e.into());
        }
    }
    Ok(Outcome::Success)
}
