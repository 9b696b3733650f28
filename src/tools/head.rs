//! `head PATH [LINES=10]`: the first LINES lines, each with its own line ending.
//!
//! The tool is described in docs/contract.md#tools. Reading stops after the last line shown; only
//! the lines looked at count against the read budget. The printing is cat's too, in
//! [`super::lines`].

use super::params::{FILE, LINE_FLAGS, LINES};
use super::{Runs, Tool};
use crate::call::Ctx;
use crate::envelope::Stop;
use crate::registry::{Args, Outcome, params};

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "head",
    summary: "print the first lines of a file",
    params: &[FILE, LINES],
    example: "src/main.rs 20",
    flags: LINE_FLAGS,
    on_truncate: Outcome::Success,
    stdin: true,
    run: Runs::Tool(run),
};

params! {
    /// head's parameters, by name.
    pub struct Params<'a> of TOOL.params;
    /// The file to read, as the caller named it.
    path: &'a [u8] = bytes,
    /// How many lines to print.
    lines: u64 = int,
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let p = Params::of(args);
    super::lines::print_lines(ctx, "head", p.path, 1, p.lines)
}
