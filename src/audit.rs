//! The audit log (SPEC §8): one JSON line per call, appended with a single `write` to a file
//! opened with `O_APPEND`, so that concurrent calls never interleave their lines.
//!
//! The file is opened before the tool runs: a log that cannot be opened or written makes the
//! call an `io:` error with no output.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;

use crate::envelope::Summary;
use crate::error::Error;

/// An open audit log.
#[derive(Debug)]
pub struct Log {
    file: File,
}

/// What the log says of a call, gathered when it starts.
#[derive(Debug, Clone)]
pub struct Record {
    tool: String,
    arguments: Vec<String>,
    workdir: PathBuf,
    start: Instant,
    time: String,
}

impl Record {
    /// The record of a call of `tool` (or a meta command) with `words`, in `workdir`.
    pub fn new(tool: &str, words: &[OsString], workdir: &Path, start: Instant) -> Record {
        Record {
            tool: tool.to_string(),
            arguments: words
                .iter()
                .map(|w| w.to_string_lossy().into_owned())
                .collect(),
            workdir: workdir.to_path_buf(),
            start,
            time: jiff::Timestamp::now().to_string(),
        }
    }
}

impl Log {
    /// Opens (creating if needed) the log for appending.
    ///
    /// # Errors
    /// `io: audit log: …` when it cannot be opened (a folder, a missing parent, no permission) or
    /// is not a regular file.
    pub fn open(path: &Path) -> Result<Log, Error> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(
                (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
            )
            .open(path)
            .map_err(|e| Error::Io(format!("audit log: {}", crate::error::describe_io(&e))))?;
        // A FIFO or a device is never written to (nor waited on).
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Err(Error::Io("audit log: not a regular file".into()));
        }
        Ok(Log { file })
    }

    /// Appends the line of a finished call. `redactions` is the number of secret values the
    /// call's output shows as `[REDACTED:RULE]` (the total of its redaction tallies).
    ///
    /// # Errors
    /// `io: audit log: …` when the line cannot be written whole.
    pub fn append(
        &self,
        rec: &Record,
        status: i32,
        error: Option<&Error>,
        summary: Summary,
        redactions: u64,
    ) -> Result<(), Error> {
        let line = json!({
            "time": rec.time,
            "tool": rec.tool,
            "arguments": rec.arguments,
            "working_directory": rec.workdir.to_string_lossy(),
            "uid": rustix::process::getuid().as_raw(),
            "exit_status": status,
            "error": error.map(ToString::to_string),
            "output_bytes": summary.output_bytes,
            "truncated": summary.truncated && error.is_none(),
            "redactions": redactions,
            "duration_ms": rec.start.elapsed().as_millis() as u64,
        });
        let mut text = crate::envelope::json_document(&line);
        text.push('\n');
        let written = (&self.file)
            .write(text.as_bytes())
            .map_err(|e| Error::Io(format!("audit log: {}", crate::error::describe_io(&e))))?;
        if written != text.len() {
            return Err(Error::Io("audit log: short write".into()));
        }
        Ok(())
    }
}
