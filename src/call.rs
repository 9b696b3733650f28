//! The context of one tool call: the effective policy, the gate, the output and the budgets, and
//! the opening of what a reading tool reads (a file through the gate, or standard input). The
//! walker and the tools take it from here, below both.

use crate::envelope::Output;
use crate::limits::Budget;
use crate::policy::Policy;
use crate::resolve::Gate;

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
