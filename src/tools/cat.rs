//! `cat PATH`: the file's content, unchanged (SPEC §7).

use super::{Args, Ctx, Effect, Flag, Kind, Outcome, Param, Tool};
use crate::envelope::Stop;

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
    super::head::print_first_lines(ctx, args.bytes(0), u64::MAX)
}
