//! The registry: one static table of the ten tools.
//!
//! Dispatch, argument parsing, `list`, `schema`, `help`, the man pages and the completions all
//! derive from it, as BusyBox derives everything from its applet table.
//!
//! Every tool file has the same shape: a `pub const TOOL: Tool` entry; its `Params`, one named
//! field per row of the entry's parameter table, declared beside it with
//! `registry::params!`; and a `run` function that takes the call's [`Ctx`] and parsed
//! [`Args`], reads its `Params` from them once, and pushes its output into `ctx.out`. Two files
//! are no tool: [`params`], the parameter rows and flags that several tools share, and
//! [`lines`], the line printer of cat and head.

use crate::call::Ctx;
use crate::envelope::Stop;
use crate::registry::{Args, Flag, Outcome, Param, ParamKind};

pub mod cat;
pub mod diff;
pub mod find;
pub mod grep;
pub mod head;
pub mod lines;
pub mod ls;
pub mod params;
pub mod pwd;
pub mod sh;
pub mod stat;
pub mod tail;
pub mod wc;

/// The registry, in the order of [`crate::registry::NAMES`] (the names live in [`crate::registry`], below the
/// policy and the walker, which need them without the tools).
pub static TOOLS: &[Tool] = &[
    cat::TOOL,
    pwd::TOOL,
    ls::TOOL,
    find::TOOL,
    grep::TOOL,
    head::TOOL,
    tail::TOOL,
    wc::TOOL,
    stat::TOOL,
    diff::TOOL,
    sh::TOOL,
];

/// The tool named `name`, if it is one of the ten.
pub fn by_name(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The call of `tool` with `words` (its positional words, in order) as the caller writes calls.
///
/// That is a command line, or under `readbox call` (and so MCP) the tool's parameters as one JSON
/// object, `{"path": "README.md", "from_line": 525}` (docs/contract.md#mcp).
pub fn call_text(ctx: &Ctx<'_>, tool: &str, words: &[&[u8]]) -> String {
    let Some(t) = by_name(tool).filter(|_| ctx.json_calls) else {
        return crate::names::command(tool, words);
    };
    let mut object = serde_json::Map::new();
    for (param, word) in t.params.iter().zip(words) {
        let text = String::from_utf8_lossy(word);
        let value = match param.kind {
            ParamKind::Int { .. } => text
                .parse::<u64>()
                .map_or_else(|_| text.as_ref().into(), serde_json::Value::from),
            ParamKind::Bool => crate::policy::parse_bool(&text)
                .map_or_else(|| text.as_ref().into(), serde_json::Value::from),
            _ => text.as_ref().into(),
        };
        object.insert(param.name.to_string(), value);
    }
    // `{"path": "README.md", "from_line": 525}`: one space after each `:` and `,`, for a reader.
    let mut text = String::from("{");
    for (i, (k, v)) in object.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&format!("{}: {}", serde_json::Value::from(k.as_str()), v));
    }
    text.push('}');
    text
}

/// [`call_text`] of `tool` with `args`, some replaced (`(index, word)`), as
/// [`Args::call_with`] chooses the words.
pub fn call_with(ctx: &Ctx<'_>, tool: &str, args: &Args, replaced: &[(usize, &[u8])]) -> String {
    let words = args.words_with(replaced);
    let words: Vec<&[u8]> = words.iter().map(Vec::as_slice).collect();
    call_text(ctx, tool, &words)
}

/// A tool's run function: pushes output, answers an [`Outcome`] or stops.
pub type Run = fn(&Ctx<'_>, &Args) -> Result<Outcome, Stop>;

/// What a registry entry runs.
#[derive(Clone, Copy)]
pub enum Runs {
    /// One of the ten tools: its run function.
    Tool(Run),
    /// `sh`, which runs the other tools: `crate::sh`, above the tools and their parser, runs it.
    Shell,
}

/// One tool of the registry.
pub struct Tool {
    /// The tool's name, as typed and as a link's file name.
    pub name: &'static str,
    /// One line: what the tool prints.
    pub summary: &'static str,
    /// The positional parameters, in order.
    pub params: &'static [Param],
    /// An example call (without the tool name).
    pub example: &'static str,
    /// The common flags of the coreutils/GNU tool of the same name, and their positional
    /// equivalents, for the hint of a usage error.
    pub flags: &'static [Flag],
    /// The exit status of a call whose output was truncated: the output shows a positive
    /// answer for most tools, and differences for diff.
    pub on_truncate: Outcome,
    /// Whether a PATH of `-` reads standard input (docs/contract.md#standard-input).
    pub stdin: bool,
    /// Runs the tool.
    pub run: Runs,
}

impl Tool {
    /// The positional signature, e.g. `head PATH [LINES=10]`; `sh -c COMMAND` for the shell,
    /// whose one flag is the one every program starts a shell with.
    pub fn signature(&self) -> String {
        if matches!(self.run, Runs::Shell) {
            return format!("{} -c COMMAND", self.name);
        }
        let mut s = self.name.to_string();
        for p in self.params {
            s.push(' ');
            match p.default {
                None => s.push_str(&p.name.to_ascii_uppercase()),
                Some(d) => {
                    s.push_str(&format!("[{}={}]", p.name.to_ascii_uppercase(), d));
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{FileType, NAMES, Value};

    #[test]
    fn names_match_the_registry() {
        let names: Vec<_> = TOOLS.iter().map(|t| t.name).collect();
        assert_eq!(names, NAMES);
    }

    #[test]
    fn required_parameters_come_first() {
        for t in TOOLS {
            let first_optional = t.params.iter().position(|p| p.default.is_some());
            if let Some(i) = first_optional {
                assert!(
                    t.params[i..].iter().all(|p| p.default.is_some()),
                    "{}",
                    t.name
                );
            }
        }
    }

    #[test]
    fn every_tool_reads_its_params_with_the_accessor_of_each_kind() {
        // A field read with the accessor of another kind would fail on every call.
        fn args_of(t: &Tool) -> Args {
            let values = t.params.iter().map(|p| match p.kind {
                ParamKind::Path | ParamKind::Text => Value::Bytes(b"x".to_vec()),
                ParamKind::Bool => Value::Bool(true),
                ParamKind::Int { min, .. } => Value::Int(min),
                ParamKind::FileType => Value::FileType(FileType::All),
            });
            Args::new(values.collect(), t.params.len())
        }
        let _ = cat::Params::of(&args_of(&cat::TOOL));
        let _ = diff::Params::of(&args_of(&diff::TOOL));
        let _ = find::Params::of(&args_of(&find::TOOL));
        let _ = grep::Params::of(&args_of(&grep::TOOL));
        let _ = head::Params::of(&args_of(&head::TOOL));
        let _ = ls::Params::of(&args_of(&ls::TOOL));
        let _ = stat::Params::of(&args_of(&stat::TOOL));
        let _ = tail::Params::of(&args_of(&tail::TOOL));
        let _ = wc::Params::of(&args_of(&wc::TOOL));
        assert!(pwd::TOOL.params.is_empty());
    }

    #[test]
    fn signature_shows_defaults() {
        assert_eq!(by_name("head").unwrap().signature(), "head PATH [LINES=10]");
    }
}
