//! Standard input as a PATH of `-`: a stream read as it is, or a regular file that the gate finds
//! again beneath a root (docs/contract.md#standard-input).
//!
//! Invariant: a regular file on standard input is read only when a name the kernel knows it by
//! resolves through the gate, unexcluded, to the very same object.

use std::fs::File;

use super::{Gate, Node, NodeKind, errno_io};
use crate::error::{Error, Result};

/// Standard input as a tool may read it (docs/contract.md#standard-input).
#[derive(Debug)]
pub enum Stdin {
    /// A pipe or a socket, read as it is.
    Stream(File),
    /// A regular file beneath a root and not excluded, re-opened through the gate (the same
    /// object as standard input), to be read from `offset`, where standard input stands.
    File {
        /// The checked object.
        node: Box<Node>,
        /// A handle opened through the gate.
        file: File,
        /// The offset standard input had reached.
        offset: u64,
    },
}

impl Gate {
    /// Standard input, for a PATH of `-` (docs/contract.md#standard-input): a pipe or a socket is
    /// read as it is; a regular file must be an object beneath a root that is not excluded,
    /// found by its identity (the name the kernel knows it by, resolved through this gate to the
    /// same device and inode); anything else is refused before a byte is read.
    ///
    /// # Errors
    /// `usage:` for a terminal (nothing waits for typing), `denied: -` for a regular file that
    /// is outside the roots, excluded, or cannot be found again, `not a file: - (…)` for a device
    /// or a directory (saying so, and that a file named `-` is `./-`), `io:` when standard input
    /// cannot be examined.
    pub fn stdin(&self, tool: &str) -> Result<Stdin> {
        let fd = rustix::stdio::stdin();
        let st = rustix::fs::fstat(fd).map_err(|e| Error::io("-", &errno_io(e)))?;
        match NodeKind::of(&st) {
            NodeKind::CharDevice if rustix::termios::isatty(fd) => Err(Error::Usage(format!(
                "standard input is a terminal: {tool} - reads text piped into it; give a PATH \
                 otherwise"
            ))),
            NodeKind::Fifo | NodeKind::Socket => {
                let own = rustix::io::fcntl_dupfd_cloexec(fd, 3)
                    .map_err(|e| Error::io("-", &errno_io(e)))?;
                Ok(Stdin::Stream(File::from(own)))
            }
            NodeKind::File => {
                let denied = || Error::Denied("-".into());
                // The name the kernel knows the file by; only a name that resolves beneath a root,
                // unexcluded, to this very object lets it be read.
                let name =
                    rustix::fs::readlink(c"/proc/self/fd/0", Vec::new()).map_err(|_| denied())?;
                let node = self.resolve(name.as_bytes()).map_err(|e| match e {
                    // Running short of descriptors says nothing about the file: never a denial.
                    // Only the reason is kept, not the name it was resolved by.
                    Error::Shortage(m) => {
                        Error::Shortage(format!("-: {}", m.rsplit(": ").next().unwrap_or("")))
                    }
                    _ => denied(),
                })?;
                if node.stat.st_dev != st.st_dev || node.stat.st_ino != st.st_ino {
                    return Err(denied());
                }
                let file = self.open_read(&node, "-").map_err(|e| match e {
                    Error::Io(_) | Error::Shortage(_) => e,
                    _ => denied(),
                })?;
                let offset = rustix::fs::seek(fd, rustix::fs::SeekFrom::Current(0)).unwrap_or(0);
                Ok(Stdin::File {
                    node: Box::new(node),
                    file,
                    offset,
                })
            }
            // Over MCP and from most service managers, standard input is `/dev/null`.
            _ => Err(Error::NotAFile(
                "- (standard input here is a device or a directory, not a pipe or a file; a file \
                 named - is ./-)"
                    .into(),
            )),
        }
    }

    /// Whether standard input holds something a tool could read instead of a tree: a pipe, a
    /// socket or a regular file (grep with PATH left out refuses then, so that `ls | grep x`
    /// never searches the tree silently).
    pub fn stdin_has_input(&self) -> bool {
        rustix::fs::fstat(rustix::stdio::stdin()).is_ok_and(|st| {
            matches!(
                NodeKind::of(&st),
                NodeKind::Fifo | NodeKind::Socket | NodeKind::File
            )
        })
    }
}
