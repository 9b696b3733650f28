//! The context of one tool call: the effective policy, the gate, the output and the budgets.
//!
//! It also opens what a reading tool reads (a file through the gate, or standard input). The walker
//! and the tools take it from here, below both.

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
    /// What a PATH of `-` reads.
    pub stdin: &'a Stdin,
    /// The call came as `readbox call TOOL JSON` (as every MCP call does): the calls that notes
    /// give are written as the tool's parameters, not as a command line
    /// (docs/contract.md#mcp).
    pub json_calls: bool,
}

/// What a PATH of `-` reads: the process's standard input for a call, or under `readbox sh`
/// the previous stage's output, a `< FILE` redirection, or nothing.
#[derive(Debug)]
pub enum Stdin {
    /// The process's standard input, checked by the gate ([`Gate::stdin`]).
    Process,
    /// Nothing: a `readbox sh` command with no pipe or `<` before it (it never reads the shell's
    /// own input, which holds the command lines of a session).
    Empty,
    /// The read end of a pipe from the previous stage.
    Pipe(std::fs::File),
    /// A regular file opened through the gate by `< FILE`, of `size` bytes.
    File {
        /// The opened file.
        file: std::fs::File,
        /// Its size.
        size: u64,
    },
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
        if arg == b"-" {
            return self.open_stdin(tool);
        }
        self.open_file(arg)
    }

    /// Opens the file named `arg` for reading through the gate (`-` is a file named `-`).
    ///
    /// # Errors
    /// What [`Gate::resolve`] and [`Gate::open_read`] answer.
    pub fn open_file(&self, arg: &[u8]) -> Result<Input, crate::error::Error> {
        let shown = crate::error::shown(arg);
        let node = self.gate.resolve(arg)?;
        let file = self.gate.open_read(&node, &shown)?;
        let size = u64::try_from(node.stat().st_size).unwrap_or(0);
        // Text in UTF-16 or UTF-32 reaches the tool as UTF-8 (docs/contract.md#tools).
        let (file, size, encoding) = crate::read::text_of(file, size, &shown)?;
        if let Some(e) = encoding {
            self.out.note(crate::read::decoded_note(&shown, e));
        }
        Ok(Input {
            file,
            size,
            offset: 0,
            stdin: false,
        })
    }

    /// Whether a PATH of `-` has something to read instead of a tree (grep with PATH left out
    /// refuses then, so that `ls | grep x` never searches the tree silently).
    pub fn stdin_has_input(&self) -> bool {
        match self.stdin {
            Stdin::Process => self.gate.stdin_has_input(),
            Stdin::Empty => false,
            Stdin::Pipe(_) | Stdin::File { .. } => true,
        }
    }

    /// Opens what a PATH of `-` reads.
    fn open_stdin(&self, tool: &str) -> Result<Input, crate::error::Error> {
        use crate::resolve::Stdin as Process;
        let dup = |f: &std::fs::File| f.try_clone().map_err(|e| crate::error::Error::io("-", &e));
        match self.stdin {
            Stdin::Process => {}
            Stdin::Empty => {
                // A pipe whose writer is gone reads as empty at once.
                let (read, _write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
                    .map_err(|e| {
                        crate::error::Error::io(
                            "-",
                            &std::io::Error::from_raw_os_error(e.raw_os_error()),
                        )
                    })?;
                return Ok(Input {
                    file: std::fs::File::from(read),
                    size: None,
                    offset: 0,
                    stdin: true,
                });
            }
            Stdin::Pipe(f) => {
                return Ok(Input {
                    file: dup(f)?,
                    size: None,
                    offset: 0,
                    stdin: true,
                });
            }
            Stdin::File { file, size } => {
                return Ok(Input {
                    file: dup(file)?,
                    size: Some(*size),
                    offset: 0,
                    stdin: true,
                });
            }
        }
        Ok(match self.gate.stdin(tool)? {
            Process::Stream(file) => Input {
                file,
                size: None,
                offset: 0,
                stdin: true,
            },
            Process::File {
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
        })
    }
}
