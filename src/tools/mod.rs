//! The registry: one static table of the ten tools. Dispatch, argument parsing, `list`, `schema`,
//! `help`, the man pages and the completions all derive from it, as BusyBox derives everything
//! from its applet table.
//!
//! Every tool file has the same shape: a `pub const TOOL: Tool` entry and a `run` function that
//! takes the call's [`Ctx`] and parsed [`Args`] and pushes its output into `ctx.out`.

use crate::envelope::{Output, Stop};
use crate::limits::Budget;
use crate::policy::Policy;
use crate::resolve::Gate;

pub mod cat;
pub mod diff;
pub mod find;
pub mod grep;
pub mod head;
pub mod ls;
pub mod pwd;
pub mod stat;
pub mod tail;
pub mod wc;

/// The names of the ten tools, in the registry's order.
pub const NAMES: &[&str] = &[
    "cat", "pwd", "ls", "find", "grep", "head", "tail", "wc", "stat", "diff",
];

/// The registry, in the order of [`NAMES`].
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
];

/// The tool named `name`, if it is one of the ten.
pub fn by_name(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// How a finished tool answers when it did not fail: exit 0 or exit 1 (SPEC §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Success,
    /// Exit 1: a negative answer that is not an error (grep found no line, diff found
    /// differences), as POSIX grep and diff.
    Negative,
}

/// What one call of a tool sees.
pub struct Ctx<'a> {
    /// The effective policy.
    pub policy: &'a Policy,
    /// The only way to reach files.
    pub gate: &'a Gate,
    /// Where the tool writes its output.
    pub out: &'a Output,
    /// The read and entry budgets.
    pub budget: &'a Budget,
}

/// What a reading tool reads: a file named by PATH, or standard input for a PATH of `-`
/// (docs/contract.md#standard-input).
pub struct Input {
    /// Positioned where reading starts: the file's start, or where standard input stood.
    pub file: std::fs::File,
    /// The size of a regular file (which can be read at offsets); `None` for a pipe or socket.
    pub size: Option<u64>,
    /// The offset reading starts at.
    pub offset: u64,
    /// Whether this is standard input.
    pub stdin: bool,
}

impl Input {
    /// A forward reader of the input's lines; `shown` names it in errors.
    ///
    /// # Errors
    /// `io:` when a regular file cannot be positioned.
    pub fn lines(self, shown: &str) -> Result<crate::read::Lines, crate::error::Error> {
        match self.size {
            Some(size) => crate::read::Lines::resume(self.file, size, self.offset, shown),
            None => Ok(crate::read::Lines::new(self.file, None, shown)),
        }
    }
}

impl Ctx<'_> {
    /// Opens the PATH argument `arg` of `tool` for reading through the gate; `-` is standard
    /// input.
    ///
    /// # Errors
    /// What [`Gate::resolve`], [`Gate::open_read`] and [`Gate::stdin`] answer.
    pub fn open_input(&self, arg: &[u8], tool: &str) -> Result<Input, crate::error::Error> {
        use crate::resolve::Stdin;
        if arg == b"-" {
            return Ok(match self.gate.stdin(tool)? {
                Stdin::Stream(file) => Input {
                    file,
                    size: None,
                    offset: 0,
                    stdin: true,
                },
                Stdin::File {
                    node,
                    mut file,
                    offset,
                } => {
                    use std::io::{Seek, SeekFrom};
                    file.seek(SeekFrom::Start(offset))
                        .map_err(|e| crate::error::Error::io("-", &e))?;
                    Input {
                        file,
                        size: Some(u64::try_from(node.stat().st_size).unwrap_or(0)),
                        offset,
                        stdin: true,
                    }
                }
            });
        }
        let shown = crate::error::shown(arg);
        let node = self.gate.resolve(arg)?;
        let file = self.gate.open_read(&node, &shown)?;
        Ok(Input {
            file,
            size: Some(u64::try_from(node.stat().st_size).unwrap_or(0)),
            offset: 0,
            stdin: false,
        })
    }
}

/// A tool's run function: pushes output, answers an [`Outcome`] or stops.
pub type Run = fn(&Ctx<'_>, &Args) -> Result<Outcome, Stop>;

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
    pub run: Run,
}

impl Tool {
    /// The positional signature, e.g. `head PATH [LINES=10]`.
    pub fn signature(&self) -> String {
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

/// The type of a positional parameter (SPEC §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A path, resolved by the gate.
    Path,
    /// A boolean word: `true false 1 0 yes no on off`, any case.
    Bool,
    /// A decimal integer in `min..=max`.
    Int {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// `all`, `file`, `directory` (or `f`, `d`), any case.
    FileType,
    /// Free text (a literal search pattern or a glob).
    Text,
}

/// One positional parameter.
pub struct Param {
    /// The parameter's name, as `readbox call` and `schema` use it (`path`, `lines`, …).
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// The default, as it would be typed; `None` when the parameter is required.
    pub default: Option<&'static str>,
    /// One line for help, schema and man pages.
    pub help: &'static str,
}

/// A flag of the classic tool, and what it becomes in readbox's positional form.
pub struct Flag {
    /// Its spellings (`-i`, `--ignore-case`). A one-letter short flag may be bundled (`-rni`).
    pub names: &'static [&'static str],
    /// What it means here.
    pub effect: Effect,
}

/// The positional equivalent of a flag.
#[derive(Debug, Clone, Copy)]
pub enum Effect {
    /// Sets parameter `param` to the word `value`.
    Set(&'static str, &'static str),
    /// Sets parameter `param` to the next word (or the text after `=`, or after a short flag).
    Takes(&'static str),
    /// What readbox always does (grep's `-n`, diff's `-u`).
    Always,
    /// Left out of the equivalent call, which still answers the question; the text says what
    /// differs (ls's `-l`: names only).
    Dropped(&'static str),
    /// Like `Dropped`, for a flag that takes a value (`stat -c FORMAT`): the value goes too.
    DroppedWithValue(&'static str),
    /// Has no equivalent here; the text says why.
    Never(&'static str),
    /// Answered by another call, a template in which `{param}` stands for the caller's word for
    /// that parameter (`cat -n f` -> `grep '' {path}` -> `grep '' f`).
    Call(&'static str),
}

/// `find`'s FILE_TYPE (SPEC §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    /// Every entry.
    All,
    /// Regular files only.
    File,
    /// Directories only.
    Directory,
}

/// A parsed argument value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Raw bytes of a path or text argument.
    Bytes(Vec<u8>),
    /// A boolean.
    Bool(bool),
    /// An integer within its range.
    Int(u64),
    /// A file type.
    FileType(FileType),
}

/// The parsed arguments of one call, one value per parameter (defaults filled in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    values: Vec<Value>,
    /// How many of the values the caller gave (the rest are defaults).
    given: usize,
}

impl Args {
    /// Arguments from values in parameter order, the first `given` of them from the caller.
    pub fn new(values: Vec<Value>, given: usize) -> Args {
        Args { values, given }
    }

    /// How many parameters the caller gave, in order (the others took their defaults).
    pub fn given(&self) -> usize {
        self.given
    }

    /// The bytes of the path or text parameter at `i`.
    pub fn bytes(&self, i: usize) -> &[u8] {
        match &self.values[i] {
            Value::Bytes(b) => b,
            other => unreachable!("parameter {i} is not text: {other:?}"),
        }
    }

    /// The boolean parameter at `i`.
    pub fn bool(&self, i: usize) -> bool {
        match self.values[i] {
            Value::Bool(b) => b,
            ref other => unreachable!("parameter {i} is not a boolean: {other:?}"),
        }
    }

    /// The integer parameter at `i`.
    pub fn int(&self, i: usize) -> u64 {
        match self.values[i] {
            Value::Int(n) => n,
            ref other => unreachable!("parameter {i} is not an integer: {other:?}"),
        }
    }

    /// The file-type parameter at `i`.
    pub fn file_type(&self, i: usize) -> FileType {
        match self.values[i] {
            Value::FileType(t) => t,
            ref other => unreachable!("parameter {i} is not a file type: {other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn signature_shows_defaults() {
        assert_eq!(by_name("head").unwrap().signature(), "head PATH [LINES=10]");
    }
}
