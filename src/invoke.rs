//! Runs one of the ten tools with its words.
//!
//! In order: the disabled check, a request for its help, the arguments (positional words or
//! `call`'s JSON object), then the tool itself (docs/contract.md#decisions-on-details, the order of
//! checks). A call of the process and each command of `readbox sh` both come through here.

use std::ffi::OsString;

use crate::args;
use crate::call::Ctx;
use crate::envelope::Stop;
use crate::error::{EXIT_ERROR, EXIT_NEGATIVE, EXIT_SUCCESS, Error};
use crate::meta;
use crate::registry::{Args, Outcome};
use crate::tools::{Runs, Tool};

/// The words of a tool call: positional, or `call`'s JSON object.
#[derive(Debug, Clone, Copy)]
pub enum Words<'a> {
    /// The words after the tool's name.
    Positional(&'a [OsString]),
    /// `call`'s JSON object of named parameters.
    Json(&'a [u8]),
}

/// Parses `words` for `tool` as the caller gave them; `ctx` tells the parser whether a word
/// names an existing entry and whether a PATH of `-` has input, only to word a hint.
///
/// # Errors
/// `usage:` as [`args::parse`] and [`args::parse_json`] answer.
pub fn arguments(ctx: &Ctx<'_>, tool: &Tool, words: Words<'_>) -> Result<Args, Error> {
    match words {
        Words::Positional(w) => {
            let world = args::World {
                exists: &|p| ctx.gate.resolve(p).is_ok(),
                is_dir: &|p| {
                    ctx.gate
                        .resolve(p)
                        .is_ok_and(|n| n.kind() == crate::resolve::NodeKind::Directory)
                },
                piped: &|| ctx.stdin_has_input(),
            };
            args::parse(tool, w, &world)
        }
        Words::Json(j) => args::parse_json(tool, j),
    }
}

/// Runs `tool` (one of the ten: `sh` runs through `crate::sh`) and returns the error and the
/// exit status; its output went into `ctx.out`.
pub fn run_tool(ctx: &Ctx<'_>, tool: &'static Tool, words: Words<'_>) -> (Option<Error>, i32) {
    if let Some(answered) = answer_before_arguments(ctx, tool, words) {
        return answered;
    }
    let Runs::Tool(run) = tool.run else {
        return (
            Some(Error::Usage(format!(
                "{} runs a command line: readbox sh -c COMMAND",
                tool.name
            ))),
            EXIT_ERROR,
        );
    };
    let args = match arguments(ctx, tool, words) {
        Ok(a) => a,
        Err(e) => return (Some(e), EXIT_ERROR),
    };
    let status = |o: Outcome| match o {
        Outcome::Success => EXIT_SUCCESS,
        Outcome::Negative => EXIT_NEGATIVE,
    };
    match run(ctx, &args) {
        Ok(o) => (None, status(o)),
        Err(Stop::Truncated) => (None, status(tool.on_truncate)),
        Err(Stop::Error(e)) => (Some(e), EXIT_ERROR),
    }
}

/// What comes before a tool's arguments are read (any tool, `sh` too): `disabled:` for a tool
/// that is not enabled, and the help for `TOOL --help`. `None` when the tool goes on.
pub fn answer_before_arguments(
    ctx: &Ctx<'_>,
    tool: &Tool,
    words: Words<'_>,
) -> Option<(Option<Error>, i32)> {
    if !ctx.policy.tools.contains(&tool.name) {
        return Some((
            Some(Error::Disabled(format!("{} is not enabled", tool.name))),
            EXIT_ERROR,
        ));
    }
    // `TOOL --help` alone asks for the tool's help, as every coreutils tool answers it.
    if let Words::Positional(w) = words
        && is_help_request(w)
    {
        return Some(match ctx.out.push_str(&meta::tool_help(tool)) {
            Ok(()) | Err(Stop::Truncated) => (None, EXIT_SUCCESS),
            Err(Stop::Error(e)) => (Some(e), EXIT_ERROR),
        });
    }
    None
}

/// Whether a tool's words are a request for its help: `--help` or `-h` alone.
pub fn is_help_request(words: &[OsString]) -> bool {
    matches!(words, [w] if w == "--help" || w == "-h")
}
