//! The layers merged in order under the lock's rules (docs/contract.md#lock): each setting's
//! value so far and the layer it came from. A layer that sets `lock = true` freezes the
//! [`Bounds`] that every later layer may only narrow.
//!
//! Invariant: a setting is merged as its row of [`ROWS`] says (its kind, how a lock narrows it);
//! only the lock, and the working directory and roots it locks to, are named here.

use std::path::{Path, PathBuf};

use super::layer::{Layer, Origin, canonical_dir};
use super::lock::Bounds;
use super::settings::{BySetting, Narrow, ROWS, Row, Setting, Value, ValueKind, Values};
use crate::error::Result;

/// The layers merged so far.
#[derive(Debug)]
pub(super) struct Merged {
    /// Each setting's value: its default, or what the last layer that set it gave, with
    /// directories canonical.
    pub(super) values: Values,
    /// The layer each setting came from; a setting missing here has its default.
    pub(super) origins: BySetting<Origin>,
    /// Each setting as that layer wrote it, for the errors that name it.
    pub(super) written: Values,
    /// The process's current directory, as the inputs gave it.
    pub(super) cwd: Option<PathBuf>,
    /// The lock's bounds, once a layer locked.
    pub(super) bounds: Option<Bounds>,
}

impl Merged {
    /// The built-in defaults, before any layer.
    pub(super) fn new(cwd: Option<&Path>) -> Merged {
        Merged {
            values: Values::defaults(),
            origins: BySetting::default(),
            written: Values::default(),
            cwd: cwd.map(Path::to_path_buf),
            bounds: None,
        }
    }

    /// The working directory a layer set, else the current directory: where relative roots
    /// start.
    pub(super) fn base(&self) -> Option<&Path> {
        self.values
            .get(Setting::WorkingDirectory)
            .map(Value::path)
            .or(self.cwd.as_deref())
    }

    /// Merges `layer` over what is merged so far, setting by setting in the order of [`ROWS`],
    /// then locks if it sets `lock = true`.
    ///
    /// # Errors
    /// `config:` for a root or working directory that is not a directory, a value that widens a
    /// locked bound, or a lock turned off or with no working directory to lock to.
    pub(super) fn merge(&mut self, layer: Layer) -> Result<()> {
        let o = &layer.origin;
        for row in ROWS {
            if matches!(row.narrow, Narrow::Locks) {
                continue;
            }
            let Some(given) = layer.values.get(row.setting) else {
                continue;
            };
            let placed = self.place(row, o, given)?;
            let value = match &self.bounds {
                Some(b) => b.narrow(row, o, given, placed, self.values.get(row.setting))?,
                None => placed,
            };
            self.values.set(row.setting, value);
            self.written.set(row.setting, given.clone());
            self.origins.set(row.setting, o.clone());
        }
        self.lock(&layer)
    }

    /// `given` as the setting holds it: directories made canonical (a working directory against
    /// the current directory, roots against the working directory so far).
    fn place(&self, row: &Row, o: &Origin, given: &Value) -> Result<Value> {
        let canonical = |p: &Path, base: Option<&Path>| {
            canonical_dir(p, base).map_err(|m| o.error(row.setting, m))
        };
        Ok(match row.kind {
            ValueKind::Dir => Value::Path(canonical(given.path(), self.cwd.as_deref())?),
            ValueKind::Dirs => Value::Paths(
                given
                    .paths()
                    .iter()
                    .map(|r| canonical(r, self.base()))
                    .collect::<Result<_>>()?,
            ),
            _ => given.clone(),
        })
    }

    /// Locks, when `layer` (merged) asks to: the bounds become the settings as they now stand,
    /// and the roots those in force.
    fn lock(&mut self, layer: &Layer) -> Result<()> {
        let (o, set) = (&layer.origin, &layer.values);
        let locked = self.bounds.is_some();
        match set.get(Setting::Lock) {
            Some(Value::Flag(false)) if locked => {
                Err(o.error(Setting::Lock, "cannot be turned off once a layer locked"))
            }
            Some(Value::Flag(true)) if !locked => {
                self.values.set(Setting::Lock, Value::Flag(true));
                self.origins.set(Setting::Lock, o.clone());
                // Under a lock redaction is on, unless this very layer turns it off: an earlier,
                // unlocked layer cannot leave it off.
                for row in ROWS {
                    let on = Some(&Value::Flag(true));
                    if matches!(row.narrow, Narrow::TurnsOn(_))
                        && set.get(row.setting).is_none()
                        && self.values.get(row.setting) != on
                    {
                        self.values.set(row.setting, Value::Flag(true));
                        self.origins.set(row.setting, o.clone());
                    }
                }
                let roots = match self.values.get(Setting::AllowedDirectories) {
                    Some(r) => r.paths().to_vec(),
                    None => {
                        let wd = self.base().ok_or_else(|| {
                            o.error(Setting::Lock, "no working directory to lock to")
                        })?;
                        vec![canonical_dir(wd, None).map_err(|m| o.error(Setting::Lock, m))?]
                    }
                };
                self.bounds = Some(Bounds::new(&self.values, roots));
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
