//! The layers of the policy as they are read: a TOML config file or the `READBOX_*` environment,
//! each turned into a [`Layer`] of the settings it sets, with the [`Origin`] that error messages
//! and `readbox policy` name (docs/contract.md#policy). Each value is parsed as its row's
//! [`ValueKind`] says; nothing is merged here.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::settings::{ROWS, Setting, Value, ValueKind, Values};
use crate::envelope::Format;
use crate::error::{Error, Result};
use crate::resolve::Excludes;

/// One layer's settings, before they are merged: those it leaves out stay as they were.
#[derive(Debug, Default)]
pub(super) struct Layer {
    pub(super) origin: Origin,
    pub(super) values: Values,
}

impl Layer {
    /// Whether the layer sets `lock = true`.
    pub(super) fn locks(&self) -> bool {
        self.values.get(Setting::Lock) == Some(&Value::Flag(true))
    }
}

/// Where a layer came from, for error messages and `readbox policy`.
#[derive(Debug, Clone, Default)]
pub(super) enum Origin {
    #[default]
    Default,
    File(PathBuf),
    Env,
}

impl Origin {
    /// An error about setting `s`, prefixed by the file and key or by the variable.
    pub(super) fn error(&self, s: Setting, msg: impl std::fmt::Display) -> Error {
        match self {
            Origin::File(f) => Error::Config(format!("{}: {}: {msg}", f.display(), s.key())),
            Origin::Env => Error::Config(format!("{}: {msg}", s.var().unwrap_or_default())),
            Origin::Default => Error::Config(format!("{}: {msg}", s.key())),
        }
    }

    /// Where setting `s` came from, as `readbox policy` shows it.
    pub(super) fn source(&self, s: Setting) -> String {
        match self {
            Origin::File(f) => f.display().to_string(),
            Origin::Env => format!("env {}", s.var().unwrap_or_default()),
            Origin::Default => "default".to_string(),
        }
    }
}

/// Parses a boolean word: `true false 1 0 yes no on off`, any case (docs/contract.md#arguments).
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Parses a decimal integer of digits only (`[0-9]+`, docs/contract.md#decisions-on-details).
pub fn parse_uint(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn check_timeout(t: f64) -> std::result::Result<f64, &'static str> {
    if t.is_finite() && t > 0.0 {
        Ok(t)
    } else {
        Err("must be a finite number of seconds greater than 0")
    }
}

fn tool_name(name: &str) -> Option<&'static str> {
    crate::registry::NAMES.iter().copied().find(|t| *t == name)
}

/// Globs that all compile, else why the first does not.
fn globs(patterns: Vec<String>) -> std::result::Result<Value, String> {
    match Excludes::new(&patterns) {
        Ok(_) => Ok(Value::Globs(patterns)),
        Err((p, why)) => Err(format!(
            "pattern '{}' is not a valid glob: {why}",
            crate::error::shown(p.as_bytes())
        )),
    }
}

impl ValueKind {
    /// Parses a config file's value of this kind. The error is what follows `FILE: KEY: `.
    pub(super) fn parse_toml(
        &self,
        value: &toml::Value,
        file: &Path,
    ) -> std::result::Result<Value, String> {
        let expected = |what: &str| format!("expected {what}");
        let string = || value.as_str().ok_or_else(|| expected("a string"));
        let strings = || -> std::result::Result<Vec<String>, String> {
            value
                .as_array()
                .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect())
                .ok_or_else(|| expected("an array of strings"))
        };
        match self {
            ValueKind::Dir => Ok(Value::Path(PathBuf::from(string()?))),
            ValueKind::Dirs => Ok(Value::Paths(
                strings()?.into_iter().map(PathBuf::from).collect(),
            )),
            ValueKind::Tools => {
                // A config file may be any file the caller names: its values are not echoed.
                let names = strings()?;
                let mut tools = Vec::new();
                for (i, t) in names.iter().enumerate() {
                    tools.push(tool_name(t).ok_or_else(|| {
                        format!(
                            "entry {} is not one of: {}",
                            i + 1,
                            crate::registry::NAMES.join(" ")
                        )
                    })?);
                }
                Ok(Value::Tools(tools))
            }
            ValueKind::Globs => globs(strings()?),
            ValueKind::Seconds => {
                let t = value
                    .as_float()
                    .or_else(|| value.as_integer().map(|i| i as f64))
                    .ok_or_else(|| expected("a number of seconds"))?;
                Ok(Value::Seconds(check_timeout(t)?))
            }
            ValueKind::Count => value
                .as_integer()
                .and_then(|i| u64::try_from(i).ok())
                .map(Value::Count)
                .ok_or_else(|| expected("an integer >= 0")),
            ValueKind::Format => Format::parse(string()?)
                .map(Value::Format)
                .ok_or_else(|| expected("\"json\" or \"text\"")),
            ValueKind::Flag => value
                .as_bool()
                .map(Value::Flag)
                .ok_or_else(|| expected("true or false")),
            ValueKind::Choice(off, on) => {
                let word = string()?;
                choice(word, off, on).ok_or_else(|| expected(&format!("\"{off}\" or \"{on}\"")))
            }
            ValueKind::File => {
                let p = Path::new(string()?);
                Ok(Value::Path(match file.parent() {
                    Some(folder) if !p.is_absolute() => folder.join(p),
                    _ => p.to_path_buf(),
                }))
            }
        }
    }

    /// Parses a variable's value of this kind, `None` when it counts as unset: an empty variable
    /// does, except for globs, where it means none. The error is what follows `VAR: `.
    pub(super) fn parse_var(&self, v: &str) -> std::result::Result<Option<Value>, String> {
        if v.is_empty() && !matches!(self, ValueKind::Globs) {
            return Ok(None);
        }
        let expected = |what: &str| format!("'{v}': expected {what}");
        let value = match self {
            ValueKind::Dir | ValueKind::File => Value::Path(PathBuf::from(v)),
            ValueKind::Dirs => Value::Paths(
                v.split(':')
                    .filter(|s| !s.is_empty())
                    .map(PathBuf::from)
                    .collect(),
            ),
            ValueKind::Tools => {
                let mut tools = Vec::new();
                for t in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    tools.push(tool_name(t).ok_or_else(|| format!("unknown tool '{t}'"))?);
                }
                Value::Tools(tools)
            }
            ValueKind::Globs => globs(
                v.split(':')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            )?,
            ValueKind::Seconds => {
                let t: f64 = v
                    .trim()
                    .parse()
                    .map_err(|_| expected("a number of seconds"))?;
                Value::Seconds(check_timeout(t).map_err(|m| format!("'{v}': {m}"))?)
            }
            ValueKind::Count => {
                Value::Count(parse_uint(v).ok_or_else(|| expected("a decimal integer >= 0"))?)
            }
            ValueKind::Format => {
                Value::Format(Format::parse(v).ok_or_else(|| expected("json or text"))?)
            }
            ValueKind::Flag => Value::Flag(parse_bool(v).ok_or_else(|| expected("a boolean"))?),
            ValueKind::Choice(off, on) => {
                choice(v, off, on).ok_or_else(|| expected(&format!("{off} or {on}")))?
            }
        };
        Ok(Some(value))
    }
}

/// `off` or `on`, spelt exactly.
fn choice(word: &str, off: &str, on: &str) -> Option<Value> {
    match word {
        w if w == off => Some(Value::Flag(false)),
        w if w == on => Some(Value::Flag(true)),
        _ => None,
    }
}

/// Makes `p` absolute against `base` and canonical; it must be a directory.
pub(super) fn canonical_dir(p: &Path, base: Option<&Path>) -> std::result::Result<PathBuf, String> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        match base {
            Some(b) => b.join(p),
            None => return Err("relative path, but there is no current directory".into()),
        }
    };
    let c = std::fs::canonicalize(&abs)
        .map_err(|e| format!("{}: {}", p.display(), crate::error::describe_io(&e)))?;
    if !c.is_dir() {
        return Err(format!("{}: not a directory", p.display()));
    }
    Ok(c)
}

/// Config files larger than this are refused.
pub(super) const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Reads a config file: a regular file of at most [`MAX_CONFIG_BYTES`], opened without blocking
/// (a FIFO, a device or standard input named as a config file is refused, never waited on).
pub(super) fn read_config(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    read_bounded(file)
}

/// Reads an open config file, refusing one larger than [`MAX_CONFIG_BYTES`].
pub(super) fn read_bounded(file: std::fs::File) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    if file.metadata()?.len() > MAX_CONFIG_BYTES {
        return Err(std::io::Error::other("larger than 1 MiB"));
    }
    let mut text = Vec::new();
    file.take(MAX_CONFIG_BYTES).read_to_end(&mut text)?;
    Ok(text)
}

/// `config: PATH: cannot read: WHY`.
pub(super) fn unreadable(path: &Path, why: &str) -> Error {
    Error::Config(format!("{}: cannot read: {why}", path.display()))
}

pub(super) fn parse_file(path: &Path, is_system: bool) -> Result<Option<Layer>> {
    match read_config(path) {
        Ok(text) => parse_text(path, text).map(Some),
        Err(e) if is_system && e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(unreadable(path, &crate::error::describe_io(&e))),
    }
}

pub(super) fn parse_text(path: &Path, text: Vec<u8>) -> Result<Layer> {
    let origin = Origin::File(path.to_path_buf());
    let text = String::from_utf8(text)
        .map_err(|_| Error::Config(format!("{}: not valid UTF-8", path.display())))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        let msg = e.message().replace('\n', " ");
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        match line {
            Some(n) => Error::Config(format!("{}: line {n}: invalid TOML: {msg}", path.display())),
            None => Error::Config(format!("{}: invalid TOML: {msg}", path.display())),
        }
    })?;
    let mut layer = Layer {
        origin,
        values: Values::default(),
    };
    for (key, value) in &table {
        let Some(row) = Setting::by_key(key) else {
            return Err(Error::Config(format!(
                "{}: {key}: unknown setting",
                path.display()
            )));
        };
        let v = row
            .kind
            .parse_toml(value, path)
            .map_err(|m| layer.origin.error(row.setting, m))?;
        layer.values.set(row.setting, v);
    }
    Ok(layer)
}

/// The layer of the `READBOX_*` variables, read in the order of [`ROWS`], except that
/// `READBOX_SANDBOX` is read last: with it and `READBOX_REDACT` both wrong, the error names
/// `READBOX_REDACT`.
pub(super) fn parse_env(vars: &BTreeMap<String, OsString>) -> Result<Layer> {
    let origin = Origin::Env;
    let mut values = Values::default();
    let rows = ROWS
        .iter()
        .filter(|r| r.setting != Setting::Sandbox)
        .chain([Setting::Sandbox.row()]);
    for row in rows {
        let Some((var, v)) = row.var.and_then(|var| Some((var, vars.get(var)?))) else {
            continue;
        };
        let v = v
            .to_str()
            .ok_or_else(|| Error::Config(format!("{var}: not valid UTF-8")))?;
        if let Some(v) = row
            .kind
            .parse_var(v)
            .map_err(|m| origin.error(row.setting, m))?
        {
            values.set(row.setting, v);
        }
    }
    Ok(Layer { origin, values })
}
