//! `sh -c COMMAND`: the registry entry of `readbox sh`, the agent's shell.
//!
//! It is described in docs/contract.md#readbox-sh. It takes one parameter, the command line, and
//! runs the other tools; `crate::sh` holds its grammar and its pipelines, above the tools it runs.

use super::{Runs, Tool};
use crate::registry::{Outcome, Param, ParamKind};

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: crate::registry::SHELL,
    summary: "run a command line of the read-only tools, with pipes, && || ; and globs",
    params: &[Param {
        name: "command",
        kind: ParamKind::Text,
        default: None,
        help: "the command line: the tools with positional arguments, joined by | && || ; \
               or newlines, with quotes, globs and ! (grep TODO src | head - 20)",
    }],
    example: "-c 'grep TODO src | head - 5'",
    flags: &[],
    on_truncate: Outcome::Success,
    stdin: false,
    run: Runs::Shell,
};
