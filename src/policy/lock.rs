//! The lock (docs/contract.md#lock): the bounds a locked layer set, which every later layer may
//! only narrow; the owner and mode a locked system file must have; and how `READBOX_CONFIG` is
//! read under a locked system file (only beneath a locked root, through the gate, and otherwise
//! denied in words that say nothing of the file).

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::layer::{Layer, Origin, parse_text, read_bounded, unreadable, var_of};
use crate::error::{Error, Result};
use crate::resolve::Excludes;

/// A locked file must be owned by root and not writable by group or others.
pub(super) fn check_system_owner(path: &Path) -> Result<()> {
    let md = std::fs::metadata(path).map_err(|e| {
        Error::Config(format!(
            "{}: {}",
            path.display(),
            crate::error::describe_io(&e)
        ))
    })?;
    if md.uid() != 0 || md.mode() & 0o022 != 0 {
        return Err(Error::Config(format!(
            "{}: lock: a locked system file must be owned by root and not writable by group or others",
            path.display()
        )));
    }
    Ok(())
}

/// The directories that hold the system file, from its own up to `/`, as OpenSSH's StrictModes
/// checks a key's: each that exists must be owned by root and not writable by group or others
/// (unless sticky, as `/tmp`, where no one else may remove or rename root's entries), so that no
/// one but root can remove, rename or replace a locked file. Checked whether or not the file
/// exists: a lock that anyone could delete would end without a word (docs/security.md#the-locks-directories).
pub(super) fn check_system_dirs(file: &Path) -> Result<()> {
    for dir in file.ancestors().skip(1) {
        if dir.as_os_str().is_empty() {
            break;
        }
        let md = match std::fs::symlink_metadata(dir) {
            Ok(md) => md,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(Error::Config(format!(
                    "{}: {}",
                    dir.display(),
                    crate::error::describe_io(&e)
                )));
            }
        };
        let loose = md.uid() != 0
            || !md.file_type().is_dir()
            || (md.mode() & 0o022 != 0 && md.mode() & 0o1000 == 0);
        if loose {
            return Err(Error::Config(format!(
                "{}: lock: the directories of the system file {} must be owned by root and not \
                 writable by group or others",
                dir.display(),
                file.display()
            )));
        }
    }
    Ok(())
}

/// The bounds a lock set: later layers may only narrow them.
#[derive(Debug, Clone)]
pub(super) struct Bounds {
    pub(super) roots: Vec<PathBuf>,
    pub(super) tools: Vec<&'static str>,
    pub(super) timeout: f64,
    pub(super) max_output_bytes: u64,
    pub(super) max_read_bytes: u64,
    pub(super) max_entries: u64,
    pub(super) audit_log: Option<PathBuf>,
    pub(super) deny_hardlinks: Option<bool>,
    pub(super) cross_mounts: bool,
    pub(super) require_sandbox: bool,
    /// Whether redaction may be turned off: only when the locked file itself turned it off.
    pub(super) redact: bool,
}

impl Bounds {
    /// Roots must lie within the locked roots. The error names the root as written, never where
    /// a link led.
    pub(super) fn check_roots(
        &self,
        o: &Origin,
        given: &[PathBuf],
        canon: &[PathBuf],
    ) -> Result<()> {
        match given
            .iter()
            .zip(canon)
            .find(|(_, r)| !self.roots.iter().any(|l| r.starts_with(l)))
        {
            Some((wide, _)) => Err(o.error(
                "allowed_directories",
                "READBOX_ROOTS",
                format!("{} is not within the locked roots", wide.display()),
            )),
            None => Ok(()),
        }
    }

    /// Tools must be among the locked tools.
    pub(super) fn check_tools(&self, o: &Origin, tools: &[&str]) -> Result<()> {
        match tools.iter().find(|t| !self.tools.contains(t)) {
            Some(t) => Err(o.error(
                "allowed_tools",
                "READBOX_TOOLS",
                format!("{t} is not among the locked tools"),
            )),
            None => Ok(()),
        }
    }

    /// The timeout may only go down.
    pub(super) fn check_timeout(&self, o: &Origin, t: f64) -> Result<()> {
        if t > self.timeout {
            return Err(o.error(
                "timeout",
                "READBOX_TIMEOUT",
                format!("{t} is above the locked {}", self.timeout),
            ));
        }
        Ok(())
    }

    /// A byte or entry limit (`key`) may only go down.
    pub(super) fn check_limit(&self, o: &Origin, key: &str, v: u64) -> Result<()> {
        let limit = match key {
            "max_output_bytes" => self.max_output_bytes,
            "max_read_bytes" => self.max_read_bytes,
            _ => self.max_entries,
        };
        if v > limit {
            return Err(o.error(key, var_of(key), format!("{v} is above the locked {limit}")));
        }
        Ok(())
    }

    /// The audit log cannot be changed.
    pub(super) fn check_audit_log(&self, o: &Origin, log: &Path) -> Result<()> {
        if self.audit_log.as_deref() != Some(log) {
            return Err(o.error("audit_log", "", "cannot be changed under a lock"));
        }
        Ok(())
    }

    /// Hardlinks cannot be allowed again once the lock denies them (as it does by default).
    pub(super) fn check_hardlinks(&self, o: &Origin, deny: bool) -> Result<()> {
        if self.deny_hardlinks != Some(false) && !deny {
            return Err(o.error(
                "hardlinks",
                var_of("hardlinks"),
                "cannot allow hardlinks under a lock that denies them",
            ));
        }
        Ok(())
    }

    /// Mounts cannot be crossed where the lock does not cross them.
    pub(super) fn check_cross_mounts(&self, o: &Origin, cross: bool) -> Result<()> {
        if cross && !self.cross_mounts {
            return Err(o.error(
                "cross_mounts",
                var_of("cross_mounts"),
                "cannot cross mounts under a lock that does not",
            ));
        }
        Ok(())
    }

    /// A required sandbox cannot be relaxed.
    pub(super) fn check_sandbox(&self, o: &Origin, require: bool) -> Result<()> {
        if self.require_sandbox && !require {
            return Err(o.error(
                "sandbox",
                var_of("sandbox"),
                "cannot be relaxed under a lock that requires it",
            ));
        }
        Ok(())
    }

    /// Redaction cannot be turned off, unless the locked file itself turned it off.
    pub(super) fn check_redact(&self, o: &Origin, redact: bool) -> Result<()> {
        if self.redact && !redact {
            return Err(o.error(
                "redact",
                var_of("redact"),
                "cannot be turned off under a lock",
            ));
        }
        Ok(())
    }
}

/// Reads the file that `READBOX_CONFIG` names under a lock (docs/contract.md#lock): only when it
/// lies beneath a locked root and is not excluded, as the gate decides for a tool's path, and
/// through the handle the gate checked. Otherwise the answer is always the same,
/// `config: READBOX_CONFIG: denied`, whether or not the file exists or can be read, and nothing
/// from it appears. Beneath a root, a missing or unreadable file is reported as for any config
/// file. A relative name is taken from the current directory, as an unlocked one is.
pub(super) fn parse_locked_config(
    given: &OsStr,
    bounds: &Bounds,
    excludes: &[String],
    cwd: Option<&Path>,
) -> Result<Layer> {
    use std::os::unix::ffi::OsStrExt;
    let denied = || Error::Config("READBOX_CONFIG: denied".into());
    let path = Path::new(given);
    let workdir = match cwd.map(std::fs::canonicalize) {
        Some(Ok(c)) => c,
        _ if path.is_absolute() => PathBuf::from("/"),
        _ => return Err(denied()),
    };
    let excludes = Excludes::new(excludes).map_err(|_| denied())?;
    let options = crate::resolve::Options {
        deny_hardlinks: bounds.deny_hardlinks != Some(false),
        cross_mounts: bounds.cross_mounts,
    };
    let gate = crate::resolve::Gate::new(&bounds.roots, excludes, workdir, options)
        .map_err(|_| denied())?;
    // The gate's errors name the path as given: what follows it is the reason.
    let reason = |e: Error, shown: &str| match e {
        Error::NotFound(_) => Ok("no such file or directory".to_string()),
        Error::NotADirectory(_) => Ok("not a directory".to_string()),
        Error::NotAFile(_) => Ok("not a regular file".to_string()),
        Error::Io(m) | Error::Shortage(m) => Ok(m
            .strip_prefix(&format!("{shown}: "))
            .unwrap_or("input/output error")
            .to_string()),
        _ => Err(denied()),
    };
    let shown = crate::error::shown(given.as_bytes());
    let node = match gate.resolve(given.as_bytes()) {
        Ok(node) => node,
        Err(e) => return Err(unreadable(path, &reason(e, &shown)?)),
    };
    let file = match gate.open_read(&node, &shown) {
        Ok(file) => file,
        Err(e) => return Err(unreadable(path, &reason(e, &shown)?)),
    };
    let text = read_bounded(file).map_err(|e| unreadable(path, &crate::error::describe_io(&e)))?;
    parse_text(path, text)
}
