//! The layers of the policy as they are read: a TOML config file or the `READBOX_*` environment,
//! each turned into a [`Layer`] of the settings it sets, with the [`Origin`] that error messages
//! and `readbox policy` name (docs/contract.md#policy). Nothing is merged here.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::envelope::Format;
use crate::error::{Error, Result};
use crate::resolve::Excludes;

/// One layer's settings, before they are merged. `None` leaves a setting as it was.
#[derive(Debug, Default)]
pub(super) struct Layer {
    pub(super) origin: Origin,
    pub(super) workdir: Option<PathBuf>,
    pub(super) roots: Option<Vec<PathBuf>>,
    pub(super) tools: Option<Vec<&'static str>>,
    pub(super) excludes: Option<Vec<String>>,
    pub(super) timeout: Option<f64>,
    pub(super) max_output_bytes: Option<u64>,
    pub(super) max_read_bytes: Option<u64>,
    pub(super) max_entries: Option<u64>,
    pub(super) format: Option<Format>,
    pub(super) respect_ignore_files: Option<bool>,
    pub(super) audit_log: Option<PathBuf>,
    pub(super) lock: Option<bool>,
    pub(super) deny_hardlinks: Option<bool>,
    pub(super) cross_mounts: Option<bool>,
    pub(super) require_sandbox: Option<bool>,
    pub(super) redact: Option<bool>,
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
    /// The prefix of an error about `key` (config key) or `var` (environment variable).
    pub(super) fn error(&self, key: &str, var: &str, msg: impl std::fmt::Display) -> Error {
        match self {
            Origin::File(f) => Error::Config(format!("{}: {key}: {msg}", f.display())),
            Origin::Env => Error::Config(format!("{var}: {msg}")),
            Origin::Default => Error::Config(format!("{key}: {msg}")),
        }
    }

    pub(super) fn source(&self, var: &str) -> String {
        match self {
            Origin::File(f) => f.display().to_string(),
            Origin::Env => format!("env {var}"),
            Origin::Default => "default".to_string(),
        }
    }
}

/// The settings: config key and environment variable, in the order `readbox policy` shows them.
pub(super) const SETTINGS: &[(&str, &str)] = &[
    ("working_directory", "READBOX_WORKDIR"),
    ("allowed_directories", "READBOX_ROOTS"),
    ("allowed_tools", "READBOX_TOOLS"),
    ("exclude_patterns", "READBOX_EXCLUDE"),
    ("timeout", "READBOX_TIMEOUT"),
    ("max_output_bytes", "READBOX_MAX_OUTPUT_BYTES"),
    ("max_read_bytes", "READBOX_MAX_READ_BYTES"),
    ("max_entries", "READBOX_MAX_ENTRIES"),
    ("format", "READBOX_FORMAT"),
    ("respect_ignore_files", "READBOX_RESPECT_IGNORE_FILES"),
    ("audit_log", ""),
    ("lock", ""),
    ("hardlinks", "READBOX_HARDLINKS"),
    ("cross_mounts", "READBOX_CROSS_MOUNTS"),
    ("sandbox", "READBOX_SANDBOX"),
    ("redact", "READBOX_REDACT"),
];

/// Parses `hardlinks`: `allow` or `deny`; returns whether to deny.
pub(super) fn parse_hardlinks(s: &str) -> Option<bool> {
    match s {
        "allow" => Some(false),
        "deny" => Some(true),
        _ => None,
    }
}

/// Parses `sandbox`: `best-effort` or `require`; returns whether it is required.
pub(super) fn parse_sandbox(s: &str) -> Option<bool> {
    match s {
        "best-effort" => Some(false),
        "require" => Some(true),
        _ => None,
    }
}

pub(super) fn var_of(key: &str) -> &'static str {
    SETTINGS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or("", |(_, v)| v)
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

pub(super) fn check_timeout(t: f64) -> std::result::Result<f64, &'static str> {
    if t.is_finite() && t > 0.0 {
        Ok(t)
    } else {
        Err("must be a finite number of seconds greater than 0")
    }
}

pub(super) fn tool_name(name: &str) -> Option<&'static str> {
    crate::registry::NAMES.iter().copied().find(|t| *t == name)
}

pub(super) fn check_excludes(origin: &Origin, patterns: &[String]) -> Result<()> {
    Excludes::new(patterns).map(|_| ()).map_err(|(p, why)| {
        origin.error(
            "exclude_patterns",
            "READBOX_EXCLUDE",
            format!(
                "pattern '{}' is not a valid glob: {why}",
                crate::error::shown(p.as_bytes())
            ),
        )
    })
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
    let folder = path.parent().map(Path::to_path_buf);
    let mut layer = Layer {
        origin: origin.clone(),
        ..Layer::default()
    };
    for (key, value) in &table {
        let bad = |what: &str| origin.error(key, "", format!("expected {what}"));
        let string = || {
            value
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| bad("a string"))
        };
        let strings = || -> Result<Vec<String>> {
            value
                .as_array()
                .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect())
                .ok_or_else(|| bad("an array of strings"))
        };
        let uint = || {
            value
                .as_integer()
                .and_then(|i| u64::try_from(i).ok())
                .ok_or_else(|| bad("an integer >= 0"))
        };
        let boolean = || value.as_bool().ok_or_else(|| bad("true or false"));
        match key.as_str() {
            "working_directory" => layer.workdir = Some(PathBuf::from(string()?)),
            "allowed_directories" => {
                layer.roots = Some(strings()?.into_iter().map(PathBuf::from).collect());
            }
            "allowed_tools" => {
                let mut tools = Vec::new();
                // A config file may be any file the caller names: its values are not echoed.
                for (i, t) in strings()?.iter().enumerate() {
                    tools.push(tool_name(t).ok_or_else(|| {
                        origin.error(
                            key,
                            "",
                            format!(
                                "entry {} is not one of: {}",
                                i + 1,
                                crate::registry::NAMES.join(" ")
                            ),
                        )
                    })?);
                }
                layer.tools = Some(tools);
            }
            "exclude_patterns" => {
                let p = strings()?;
                check_excludes(&origin, &p)?;
                layer.excludes = Some(p);
            }
            "timeout" => {
                let t = value
                    .as_float()
                    .or_else(|| value.as_integer().map(|i| i as f64))
                    .ok_or_else(|| bad("a number of seconds"))?;
                layer.timeout = Some(check_timeout(t).map_err(|m| origin.error(key, "", m))?);
            }
            "max_output_bytes" => layer.max_output_bytes = Some(uint()?),
            "max_read_bytes" => layer.max_read_bytes = Some(uint()?),
            "max_entries" => layer.max_entries = Some(uint()?),
            "format" => {
                let s = string()?;
                layer.format = Some(Format::parse(&s).ok_or_else(|| bad("\"json\" or \"text\""))?);
            }
            "respect_ignore_files" => layer.respect_ignore_files = Some(boolean()?),
            "audit_log" => {
                let p = PathBuf::from(string()?);
                let p = match (&folder, p.is_absolute()) {
                    (Some(f), false) => f.join(p),
                    _ => p,
                };
                layer.audit_log = Some(p);
            }
            "lock" => layer.lock = Some(boolean()?),
            "hardlinks" => {
                layer.deny_hardlinks =
                    Some(parse_hardlinks(&string()?).ok_or_else(|| bad("\"allow\" or \"deny\""))?);
            }
            "cross_mounts" => layer.cross_mounts = Some(boolean()?),
            "redact" => layer.redact = Some(boolean()?),
            "sandbox" => {
                layer.require_sandbox = Some(
                    parse_sandbox(&string()?)
                        .ok_or_else(|| bad("\"best-effort\" or \"require\""))?,
                );
            }
            other => {
                return Err(origin.error(other, "", "unknown setting"));
            }
        }
    }
    Ok(layer)
}

pub(super) fn parse_env(vars: &BTreeMap<String, OsString>) -> Result<Layer> {
    let origin = Origin::Env;
    let mut layer = Layer {
        origin: origin.clone(),
        ..Layer::default()
    };
    let get = |var: &str| -> Result<Option<String>> {
        match vars.get(var) {
            None => Ok(None),
            Some(v) => {
                let s = v
                    .to_str()
                    .ok_or_else(|| Error::Config(format!("{var}: not valid UTF-8")))?;
                Ok(Some(s.to_string()))
            }
        }
    };
    // An empty variable counts as unset, except READBOX_EXCLUDE (empty = no excludes).
    let nonempty =
        |var: &str| -> Result<Option<String>> { Ok(get(var)?.filter(|s| !s.is_empty())) };
    let bad =
        |var: &str, v: &str, what: &str| Error::Config(format!("{var}: '{v}': expected {what}"));
    if let Some(v) = nonempty("READBOX_WORKDIR")? {
        layer.workdir = Some(PathBuf::from(v));
    }
    if let Some(v) = nonempty("READBOX_ROOTS")? {
        layer.roots = Some(
            v.split(':')
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect(),
        );
    }
    if let Some(v) = nonempty("READBOX_TOOLS")? {
        let mut tools = Vec::new();
        for t in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            tools.push(
                tool_name(t)
                    .ok_or_else(|| Error::Config(format!("READBOX_TOOLS: unknown tool '{t}'")))?,
            );
        }
        layer.tools = Some(tools);
    }
    if let Some(v) = get("READBOX_EXCLUDE")? {
        let p: Vec<String> = v
            .split(':')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        check_excludes(&origin, &p)?;
        layer.excludes = Some(p);
    }
    if let Some(v) = nonempty("READBOX_TIMEOUT")? {
        let t: f64 = v
            .trim()
            .parse()
            .map_err(|_| bad("READBOX_TIMEOUT", &v, "a number of seconds"))?;
        layer.timeout = Some(
            check_timeout(t).map_err(|m| Error::Config(format!("READBOX_TIMEOUT: '{v}': {m}")))?,
        );
    }
    for (var, slot) in [
        ("READBOX_MAX_OUTPUT_BYTES", &mut layer.max_output_bytes),
        ("READBOX_MAX_READ_BYTES", &mut layer.max_read_bytes),
        ("READBOX_MAX_ENTRIES", &mut layer.max_entries),
    ] {
        if let Some(v) = nonempty(var)? {
            *slot = Some(parse_uint(&v).ok_or_else(|| bad(var, &v, "a decimal integer >= 0"))?);
        }
    }
    if let Some(v) = nonempty("READBOX_FORMAT")? {
        layer.format =
            Some(Format::parse(&v).ok_or_else(|| bad("READBOX_FORMAT", &v, "json or text"))?);
    }
    if let Some(v) = nonempty("READBOX_RESPECT_IGNORE_FILES")? {
        layer.respect_ignore_files = Some(
            parse_bool(&v).ok_or_else(|| bad("READBOX_RESPECT_IGNORE_FILES", &v, "a boolean"))?,
        );
    }
    if let Some(v) = nonempty("READBOX_HARDLINKS")? {
        layer.deny_hardlinks =
            Some(parse_hardlinks(&v).ok_or_else(|| bad("READBOX_HARDLINKS", &v, "allow or deny"))?);
    }
    if let Some(v) = nonempty("READBOX_CROSS_MOUNTS")? {
        layer.cross_mounts =
            Some(parse_bool(&v).ok_or_else(|| bad("READBOX_CROSS_MOUNTS", &v, "a boolean"))?);
    }
    if let Some(v) = nonempty("READBOX_REDACT")? {
        layer.redact = Some(parse_bool(&v).ok_or_else(|| bad("READBOX_REDACT", &v, "a boolean"))?);
    }
    if let Some(v) = nonempty("READBOX_SANDBOX")? {
        layer.require_sandbox = Some(
            parse_sandbox(&v)
                .ok_or_else(|| bad("READBOX_SANDBOX", &v, "best-effort or require"))?,
        );
    }
    Ok(layer)
}
