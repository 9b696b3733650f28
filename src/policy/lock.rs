//! The lock (docs/contract.md#lock): the bounds a locked layer set, which every later layer may
//! only narrow as each setting's row says; the owner and mode a locked system file and its
//! directories must have; and how `READBOX_CONFIG` is read under a locked system file (only
//! beneath a locked root, through the gate, and otherwise denied in words that say nothing of
//! the file).

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::layer::{Layer, Origin, parse_file, parse_text, read_bounded, unreadable};
use super::settings::{Narrow, Row, Setting, Value, Values};
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

/// Reads the system file, if it exists. A file that locks must be owned by root and not
/// writable by group or others, and so must its directories; they are checked too when the file
/// is missing, since a lock may have been removed.
pub(super) fn read_system_file(path: &Path) -> Result<Option<Layer>> {
    let system = parse_file(path, true)?;
    match &system {
        Some(l) if l.locks() => {
            check_system_dirs(path)?;
            check_system_owner(path)?;
        }
        // An unlocked file locks nothing.
        Some(_) => {}
        None => check_system_dirs(path)?,
    }
    Ok(system)
}

/// The bounds a lock set: the settings as they stood when a layer locked, with the roots then in
/// force. Later layers may only narrow them, each setting as its row's [`Narrow`] says.
#[derive(Debug, Clone)]
pub(super) struct Bounds {
    values: Values,
}

impl Bounds {
    /// The bounds of `values`, locked to `roots`.
    pub(super) fn new(values: &Values, roots: Vec<PathBuf>) -> Bounds {
        let mut values = values.clone();
        values.set(Setting::AllowedDirectories, Value::Paths(roots));
        Bounds { values }
    }

    /// The locked roots: canonical directories.
    pub(super) fn roots(&self) -> &[PathBuf] {
        self.values.value(Setting::AllowedDirectories).paths()
    }

    /// Whether the lock denies hard links: unless a layer up to the lock allowed them.
    pub(super) fn deny_hardlinks(&self) -> bool {
        self.values.get(Setting::Hardlinks) != Some(&Value::Flag(false))
    }

    /// Whether the lock crosses mounts.
    pub(super) fn cross_mounts(&self) -> bool {
        self.values.value(Setting::CrossMounts).flag()
    }

    /// The value `row`'s setting takes when a layer of origin `o` sets it to `placed` (`given`
    /// as the layer wrote it, and `current` before it): `placed`, or the two lists joined where
    /// the lock only adds. The error names the value as written, never where a link led.
    ///
    /// # Errors
    /// `config:` naming the file and key, or the variable, when `placed` widens the lock.
    pub(super) fn narrow(
        &self,
        row: &Row,
        o: &Origin,
        given: &Value,
        placed: Value,
        current: Option<&Value>,
    ) -> Result<Value> {
        let locked = self.values.get(row.setting);
        let refused = |msg: String| Err(o.error(row.setting, msg));
        match &row.narrow {
            Narrow::Free | Narrow::Locks => {}
            Narrow::Within => {
                let roots = self.roots();
                let wide = given
                    .paths()
                    .iter()
                    .zip(placed.paths())
                    .find(|(_, r)| !roots.iter().any(|l| r.starts_with(l)));
                if let Some((wide, _)) = wide {
                    return refused(format!("{} is not within the locked roots", wide.display()));
                }
            }
            Narrow::Among => {
                let locked = locked.map_or(&[][..], Value::tools);
                if let Some(t) = placed.tools().iter().find(|t| !locked.contains(t)) {
                    return refused(format!("{t} is not among the locked tools"));
                }
            }
            Narrow::Added => {
                let mut all = current.map_or(&[][..], Value::globs).to_vec();
                all.extend(placed.globs().iter().cloned());
                return Ok(Value::Globs(all));
            }
            Narrow::Lowered => match (&placed, locked) {
                (Value::Seconds(v), Some(Value::Seconds(l))) if v > l => {
                    return refused(format!("{v} is above the locked {l}"));
                }
                (Value::Count(v), Some(Value::Count(l))) if v > l => {
                    return refused(format!("{v} is above the locked {l}"));
                }
                _ => {}
            },
            Narrow::Fixed => {
                if locked != Some(&placed) {
                    return refused("cannot be changed under a lock".into());
                }
            }
            Narrow::StaysOn(why) | Narrow::TurnsOn(why) => {
                if !placed.flag() && locked != Some(&Value::Flag(false)) {
                    return refused(why.to_string());
                }
            }
            Narrow::StaysOff(why) => {
                if placed.flag() && locked != Some(&Value::Flag(true)) {
                    return refused(why.to_string());
                }
            }
        }
        Ok(placed)
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
        deny_hardlinks: bounds.deny_hardlinks(),
        cross_mounts: bounds.cross_mounts(),
    };
    let gate = crate::resolve::Gate::new(bounds.roots(), excludes, workdir, options)
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
