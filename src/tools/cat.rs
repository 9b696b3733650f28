//! `cat PATH [FROM_LINE=1]`: the file's content from line FROM_LINE to its end, unchanged.
//!
//! The tool is described in docs/contract.md#tools. With the whole-line cut, `cat PATH K` continues
//! a truncated cat exactly, and the truncation note gives that call.

use super::{Runs, Tool};
use crate::call::Ctx;
use crate::envelope::Stop;
use crate::registry::{Args, Effect, Flag, Outcome, Param, ParamKind, params};

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "cat",
    summary: "print a file's content",
    params: &[
        Param {
            name: "path",
            kind: ParamKind::Path,
            default: None,
            help: "the file to print",
        },
        Param {
            name: "from_line",
            kind: ParamKind::Int {
                min: 1,
                max: u64::MAX,
            },
            default: Some("1"),
            help: "the first line to print (from 1); past the last line prints nothing",
        },
    ],
    example: "README.md",
    flags: &[
        Flag {
            names: &["-n", "--number"],
            // grep with the empty PATTERN prints every line with its number.
            effect: Effect::OtherCall("grep '' {path}"),
        },
        Flag {
            names: &["-b", "--number-nonblank"],
            effect: Effect::Never(
                "readbox numbers blank lines too: grep '' PATH numbers every line",
            ),
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
    stdin: true,
    run: Runs::Tool(run),
};

params! {
    /// cat's parameters, by name.
    pub struct Params<'a> of TOOL.params;
    /// The file to print, as the caller named it.
    path: &'a [u8] = bytes,
    /// The first line to print, from 1.
    from_line: u64 = int,
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let p = Params::of(args);
    super::lines::print_lines(ctx, "cat", p.path, p.from_line, u64::MAX)
}
