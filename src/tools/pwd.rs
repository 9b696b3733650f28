//! `pwd`: the working directory, with a newline, quoted as every name is
//! (docs/contract.md#tools, docs/contract.md#names).

use std::os::unix::ffi::OsStrExt;

use super::{Runs, Tool};
use crate::call::Ctx;
use crate::envelope::Stop;
use crate::error::Error;
use crate::names::quoted;
use crate::registry::{Args, Effect, Flag, Outcome};
use crate::resolve::WORKDIR_OUTSIDE;

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "pwd",
    summary: "print the working directory",
    params: &[],
    example: "",
    flags: &[Flag {
        names: &["-P", "-L", "--physical", "--logical"],
        effect: Effect::Always,
    }],
    on_truncate: Outcome::Success,
    stdin: false,
    run: Runs::Tool(run),
};

fn run(ctx: &Ctx<'_>, _args: &Args) -> Result<Outcome, Stop> {
    // Roots narrowed to none (docs/contract.md#policy): the working directory lies beneath no
    // root, so it is denied like every path.
    if ctx.policy.roots.is_empty() {
        return Err(Error::Denied(".".into()).into());
    }
    // A current directory outside every root (docs/contract.md#policy): denied, and not named.
    if !ctx.gate.workdir_is_beneath_a_root() {
        return Err(Error::Denied(format!(".: {WORKDIR_OUTSIDE}")).into());
    }
    // One record, as every name readbox prints (docs/contract.md#names).
    ctx.out
        .push(&quoted(ctx.gate.workdir().as_os_str().as_bytes()))?;
    ctx.out.push(b"\n")?;
    Ok(Outcome::Success)
}
