//! From the process's arguments to what to run (docs/contract.md#invocation): a tool named by
//! `argv[0]`'s file name (a link named `cat`), else by the first argument (`readbox cat`), or a meta
//! command.
//!
//! Matching is by exact name only: `cat.exe`, `uu-cat` or `CAT` are not `cat`
//! (docs/security.md#strict-dispatch-and-arguments).

use std::ffi::{OsStr, OsString};
use std::path::Path;

use crate::tools::{self, Tool};

/// The meta commands of the multicall form (docs/contract.md#invocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meta {
    /// `help [TOOL]`, `--help`, `-h`.
    Help,
    /// `version`, `--version`, `-V`.
    Version,
    /// `list`: the enabled tools, one per line.
    List,
    /// `policy`: the effective policy as JSON.
    Policy,
    /// `schema`: tool definitions for function calling.
    Schema,
    /// `call TOOL JSON`: a tool with named parameters.
    Call,
    /// `install DIR`: a symlink per enabled tool.
    Install,
    /// `mcp`: the tools as a Model Context Protocol server on stdin/stdout.
    Mcp,
}

impl Meta {
    /// The command's name, as the audit log records it (`help` for `--help` too).
    pub fn name(self) -> &'static str {
        match self {
            Meta::Help => "help",
            Meta::Version => "version",
            Meta::List => "list",
            Meta::Policy => "policy",
            Meta::Schema => "schema",
            Meta::Call => "call",
            Meta::Install => "install",
            Meta::Mcp => "mcp",
        }
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// A tool, with the words after its name.
    Tool(&'static str, Vec<OsString>),
    /// A meta command, with the words after it.
    Meta(Meta, Vec<OsString>),
    /// `readbox` alone.
    Bare,
    /// A first argument that names neither a tool nor a meta command.
    Unknown(OsString),
}

/// Decides what `argv` asks for.
pub fn dispatch(argv: &[OsString]) -> Invocation {
    let invoked = argv
        .first()
        .and_then(|a0| Path::new(a0).file_name())
        .and_then(OsStr::to_str)
        .and_then(tools::by_name);
    if let Some(tool) = invoked {
        return Invocation::Tool(tool.name, argv[1..].to_vec());
    }
    let Some(first) = argv.get(1) else {
        return Invocation::Bare;
    };
    let rest = argv[2..].to_vec();
    let meta = match first.to_str() {
        Some("help" | "--help" | "-h") => Some(Meta::Help),
        Some("version" | "--version" | "-V") => Some(Meta::Version),
        Some("list") => Some(Meta::List),
        Some("policy") => Some(Meta::Policy),
        Some("schema") => Some(Meta::Schema),
        Some("call") => Some(Meta::Call),
        Some("install") => Some(Meta::Install),
        Some("mcp") => Some(Meta::Mcp),
        _ => None,
    };
    if let Some(m) = meta {
        return Invocation::Meta(m, rest);
    }
    match first.to_str().and_then(tools::by_name) {
        Some(tool) => Invocation::Tool(tool.name, rest),
        None => Invocation::Unknown(first.clone()),
    }
}

/// The registry entry of a tool name that [`dispatch`] returned.
///
/// # Panics
/// When `name` is not a registered tool's name.
pub fn tool(name: &str) -> &'static Tool {
    tools::by_name(name).expect("dispatch only returns registered names")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(ws: &[&str]) -> Vec<OsString> {
        ws.iter().map(OsString::from).collect()
    }

    #[test]
    fn argv0_file_name_picks_the_tool() {
        assert_eq!(
            dispatch(&argv(&["/usr/local/bin/cat", "a"])),
            Invocation::Tool("cat", argv(&["a"]))
        );
    }

    #[test]
    fn other_names_use_the_first_argument() {
        assert_eq!(
            dispatch(&argv(&["readbox-1.2", "wc", "a"])),
            Invocation::Tool("wc", argv(&["a"]))
        );
        assert_eq!(
            dispatch(&argv(&["cat.exe", "a.txt"])),
            Invocation::Unknown(OsString::from("a.txt"))
        );
        assert_eq!(dispatch(&argv(&["readbox"])), Invocation::Bare);
    }

    #[test]
    fn meta_commands_only_in_multicall_form() {
        assert_eq!(
            dispatch(&argv(&["readbox", "-V"])),
            Invocation::Meta(Meta::Version, vec![])
        );
        assert_eq!(
            dispatch(&argv(&["ls", "list"])),
            Invocation::Tool("ls", argv(&["list"]))
        );
    }
}
