//! The error type of every call: one variant per error class of the envelope.
//!
//! Guidelines, so that every tool answers alike (docs/contract.md#envelope, #decisions-on-details):
//! - `Usage`: the words of the call are wrong; nothing was read.
//! - `Config`: the policy (a config file or a `READBOX_*` variable) is wrong; nothing was read.
//! - `Denied`: the path is outside the roots, excluded, or leads there through a symlink. The text
//!   is the same whether or not the object exists.
//! - `NotFound`, `NotAFile`, `NotADirectory`: the object, inside the roots, is missing or of the
//!   wrong type.
//! - `Io`: the operating system refused (permission, a symlink loop, a read error).
//! - `Shortage`: the process ran short of file descriptors or memory. Written `io:` too, but it
//!   says nothing about the object: a walk that skips what it cannot read stops on it instead,
//!   and it never becomes a denial. [`Error::io`] picks it from the OS error, so no caller has to.
//! - `Limit`, `Timeout`: a budget of docs/contract.md#limits ran out; the output so far is kept.
//! - `Disabled`: the tool is not enabled by the policy.
//!
//! Every message names a path only as the caller wrote it (never a resolved target), and is a
//! single line: callers pass paths through [`shown`], which replaces line breaks.

use std::fmt;

/// Exit status of a success (docs/contract.md#envelope).
pub const EXIT_SUCCESS: i32 = 0;
/// Exit status of a negative answer (grep found nothing, diff found differences).
pub const EXIT_NEGATIVE: i32 = 1;
/// Exit status of any error.
pub const EXIT_ERROR: i32 = 2;
/// Exit status of an unknown tool (as a shell's for a command not found).
pub const EXIT_UNKNOWN: i32 = 127;

/// An error of one call, rendered in the envelope as `class: message` (docs/contract.md#envelope).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// `usage: …`: bad arguments, a refused flag, an unknown tool (exit 2, or 127 for the latter).
    Usage(String),
    /// `config: …`: a bad policy setting, naming the file and key or the variable.
    Config(String),
    /// `denied: PATH`: outside the roots or excluded.
    Denied(String),
    /// `not found: PATH`.
    NotFound(String),
    /// `not a file: PATH`: a directory, FIFO, socket, device or object of unknown type where a
    /// regular file is needed.
    NotAFile(String),
    /// `not a directory: PATH`.
    NotADirectory(String),
    /// `io: …`: an operating-system error, e.g. `io: PATH: permission denied`.
    Io(String),
    /// `io: …` because the process ran short of file descriptors or memory (`EMFILE`, `ENFILE`,
    /// `ENOMEM`), e.g. `io: PATH: too many open files`. The same class as [`Error::Io`] in the
    /// envelope; apart in the code, since what it says is about the process, not the object.
    Shortage(String),
    /// `limit: …`: the read budget, the entry budget or another fixed bound ran out.
    Limit(String),
    /// `timeout: the call took longer than N s`.
    Timeout(String),
    /// `disabled: TOOL is not enabled`.
    Disabled(String),
}

impl Error {
    /// The stable class word that starts the error text.
    pub fn class(&self) -> &'static str {
        match self {
            Error::Usage(_) => "usage",
            Error::Config(_) => "config",
            Error::Denied(_) => "denied",
            Error::NotFound(_) => "not found",
            Error::NotAFile(_) => "not a file",
            Error::NotADirectory(_) => "not a directory",
            Error::Io(_) | Error::Shortage(_) => "io",
            Error::Limit(_) => "limit",
            Error::Timeout(_) => "timeout",
            Error::Disabled(_) => "disabled",
        }
    }

    fn message(&self) -> &str {
        match self {
            Error::Usage(m)
            | Error::Config(m)
            | Error::Denied(m)
            | Error::NotFound(m)
            | Error::NotAFile(m)
            | Error::NotADirectory(m)
            | Error::Io(m)
            | Error::Shortage(m)
            | Error::Limit(m)
            | Error::Timeout(m)
            | Error::Disabled(m) => m,
        }
    }

    /// `io: PATH: what` for an operating-system error met on the caller's `path`: an
    /// [`Error::Shortage`] when the process ran short of descriptors or memory, else an
    /// [`Error::Io`].
    pub fn io(path: &str, err: &std::io::Error) -> Error {
        let text = format!("{}: {}", path, describe_io(err));
        if is_shortage(err) {
            Error::Shortage(text)
        } else {
            Error::Io(text)
        }
    }
}

/// Whether an OS error says that the process, or the system, ran short of file descriptors or
/// memory: nothing about the object it was met on.
pub fn is_shortage(err: &std::io::Error) -> bool {
    use rustix::io::Errno;
    err.kind() == std::io::ErrorKind::OutOfMemory || Errno::from_io_error(err).is_some_and(scarce)
}

/// [`is_shortage`] for a raw errno.
pub fn scarce(e: rustix::io::Errno) -> bool {
    use rustix::io::Errno;
    matches!(e, Errno::MFILE | Errno::NFILE | Errno::NOMEM)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.class(), self.message())
    }
}

impl std::error::Error for Error {}

/// A short, lower-case description of an OS error without its errno number
/// (`permission denied`, `too many levels of symbolic links`).
pub fn describe_io(err: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match err.kind() {
        ErrorKind::PermissionDenied => "permission denied".to_string(),
        ErrorKind::NotFound => "no such file or directory".to_string(),
        _ => {
            // std renders "Some text (os error N)": keep the text, lower-case its first letter.
            let text = err.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text);
            let mut chars = text.chars();
            match chars.next() {
                Some(c) => c.to_lowercase().chain(chars).collect(),
                None => "input/output error".to_string(),
            }
        }
    }
}

/// The longest argument shown whole in an error; a longer one is cut, with `…`, so that a
/// hostile argument cannot make the answer arbitrarily large.
pub const MAX_SHOWN_BYTES: usize = 4096;

/// A caller's path argument as it may appear in an error: lossily decoded, with line breaks
/// written as `\n`/`\r` so that the error stays one line, and cut after [`MAX_SHOWN_BYTES`].
pub fn shown(path: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(path)
        .replace('\n', "\\n")
        .replace('\r', "\\r");
    if text.len() > MAX_SHOWN_BYTES {
        let mut cut = MAX_SHOWN_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}

/// Shorthand for results whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_short_of_descriptors_or_memory_is_a_shortage_written_as_io() {
        use rustix::io::Errno;
        for e in [Errno::MFILE, Errno::NFILE, Errno::NOMEM] {
            let os = std::io::Error::from_raw_os_error(e.raw_os_error());
            let err = Error::io("d", &os);
            assert!(matches!(err, Error::Shortage(_)), "{err:?}");
            assert!(err.to_string().starts_with("io: d: "), "{err}");
        }
        let eacces = rustix::io::Errno::ACCESS.raw_os_error();
        let err = Error::io("d", &std::io::Error::from_raw_os_error(eacces));
        assert_eq!(err, Error::Io("d: permission denied".into()));
        assert_eq!(
            Error::io(
                "d",
                &std::io::Error::from_raw_os_error(Errno::MFILE.raw_os_error())
            )
            .to_string(),
            "io: d: too many open files"
        );
    }

    #[test]
    fn shown_keeps_one_line_and_a_bounded_length() {
        assert_eq!(shown(b"a\nb\xff"), "a\\nb\u{FFFD}");
        let long = "é".repeat(5000);
        let s = shown(long.as_bytes());
        assert!(s.len() <= MAX_SHOWN_BYTES + '…'.len_utf8() && s.ends_with('…'));
    }
}
