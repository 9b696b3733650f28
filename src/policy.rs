//! The effective settings of one call and where each came from (SPEC §4).
//!
//! Layers, each overriding the one before: built-in defaults, the system file
//! `/etc/readbox/config.toml` (if it exists), the file named by `READBOX_CONFIG`, the `READBOX_*`
//! environment variables. A file that sets `lock = true` makes every later layer narrow-only.
//! Last, `READBOX_NARROW_ROOTS` may narrow the roots further, and only narrow them.
//! Nothing else is ever read: no file beside the binary, under `$HOME` or `$XDG_*`.
//!
//! Invariant: a [`Policy`] exists only when every layer was valid and no locked bound was widened;
//! otherwise loading fails with a `config:` error and nothing is read.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::envelope::Format;
use crate::error::{Error, Result};
use crate::resolve::Excludes;

/// The system-wide config file, read when it exists.
pub const SYSTEM_CONFIG: &str = "/etc/readbox/config.toml";

/// The narrow-only roots layer: a `:`-separated list of absolute directories, applied after
/// every other layer, that can only narrow the roots (set but empty: no root at all). Unlike the
/// other variables it has no config key, and an empty value is not "unset".
pub const NARROW_ROOTS_VAR: &str = "READBOX_NARROW_ROOTS";

/// The default exclude globs (SPEC §4).
pub const DEFAULT_EXCLUDES: &[&str] = &[".env", ".env.*", ".ssh", ".aws", "*.pem", "*.key"];

/// The effective policy of one call.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The working directory: canonical, beneath a root.
    pub workdir: PathBuf,
    /// The roots: canonical directories.
    pub roots: Vec<PathBuf>,
    /// The enabled tools, in the registry's order.
    pub tools: Vec<&'static str>,
    /// The exclude globs.
    pub excludes: Vec<String>,
    /// Wall time of the whole call, seconds (finite, > 0).
    pub timeout: f64,
    /// Cap on the UTF-8 bytes of `output`.
    pub max_output_bytes: u64,
    /// Bytes of file content one call may read.
    pub max_read_bytes: u64,
    /// Directory entries one call may examine.
    pub max_entries: u64,
    /// How answers are written.
    pub format: Format,
    /// Whether find and grep honour `.gitignore`, `.ignore` and `.git/info/exclude`.
    pub respect_ignore_files: bool,
    /// The audit log file, if any.
    pub audit_log: Option<PathBuf>,
    /// Whether a config file locked the policy.
    pub lock: bool,
    /// `hardlinks = "deny"`: refuse regular files with more than one link. Defaults to deny when
    /// a lock is in force, else allow.
    pub deny_hardlinks: bool,
    /// `cross_mounts`: follow paths onto filesystems mounted beneath a root (default false).
    pub cross_mounts: bool,
    /// `sandbox = "require"`: a kernel without Landlock is a `config:` error (default
    /// `"best-effort"`).
    pub require_sandbox: bool,
    /// `redact`: credentials in what cat, head, tail, grep and diff read become
    /// `[REDACTED:RULE]` (default true; see [`crate::redact`]). Under a lock it is on unless
    /// the locked file itself turns it off.
    pub redact: bool,
    /// The roots of the lock, if one is in force, else the roots that [`NARROW_ROOTS_VAR`]
    /// narrowed: excludes stay anchored to them.
    pub locked_roots: Vec<PathBuf>,
    /// `excludes`, compiled once (the gate matches with it).
    pub exclude_matcher: Excludes,
    /// For each setting (config key), where its value came from: `default`, a file, or
    /// `env READBOX_X`.
    pub sources: BTreeMap<&'static str, String>,
}

/// What the policy is loaded from: the environment and the process's state, captured once.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// The system file's path (always [`SYSTEM_CONFIG`] in the binary).
    pub system_file: PathBuf,
    /// The `READBOX_*` variables.
    pub vars: BTreeMap<String, OsString>,
    /// The process's current directory, if it has one.
    pub cwd: Option<PathBuf>,
}

impl Inputs {
    /// The inputs of this process: the system file, the environment and the current directory.
    pub fn from_process() -> Inputs {
        Inputs {
            system_file: PathBuf::from(SYSTEM_CONFIG),
            vars: std::env::vars_os()
                .filter_map(|(k, v)| {
                    let k = k.into_string().ok()?;
                    k.starts_with("READBOX_").then_some((k, v))
                })
                .collect(),
            cwd: std::env::current_dir().ok(),
        }
    }
}

/// One layer's settings, before they are merged. `None` leaves a setting as it was.
#[derive(Debug, Default)]
struct Layer {
    origin: Origin,
    workdir: Option<PathBuf>,
    roots: Option<Vec<PathBuf>>,
    tools: Option<Vec<&'static str>>,
    excludes: Option<Vec<String>>,
    timeout: Option<f64>,
    max_output_bytes: Option<u64>,
    max_read_bytes: Option<u64>,
    max_entries: Option<u64>,
    format: Option<Format>,
    respect_ignore_files: Option<bool>,
    audit_log: Option<PathBuf>,
    lock: Option<bool>,
    deny_hardlinks: Option<bool>,
    cross_mounts: Option<bool>,
    require_sandbox: Option<bool>,
    redact: Option<bool>,
}

/// Where a layer came from, for error messages and `readbox policy`.
#[derive(Debug, Clone, Default)]
enum Origin {
    #[default]
    Default,
    File(PathBuf),
    Env,
}

impl Origin {
    /// The prefix of an error about `key` (config key) or `var` (environment variable).
    fn error(&self, key: &str, var: &str, msg: impl std::fmt::Display) -> Error {
        match self {
            Origin::File(f) => Error::Config(format!("{}: {key}: {msg}", f.display())),
            Origin::Env => Error::Config(format!("{var}: {msg}")),
            Origin::Default => Error::Config(format!("{key}: {msg}")),
        }
    }

    fn source(&self, var: &str) -> String {
        match self {
            Origin::File(f) => f.display().to_string(),
            Origin::Env => format!("env {var}"),
            Origin::Default => "default".to_string(),
        }
    }
}

/// The settings: config key and environment variable, in the order `readbox policy` shows them.
const SETTINGS: &[(&str, &str)] = &[
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
fn parse_hardlinks(s: &str) -> Option<bool> {
    match s {
        "allow" => Some(false),
        "deny" => Some(true),
        _ => None,
    }
}

/// Parses `sandbox`: `best-effort` or `require`; returns whether it is required.
fn parse_sandbox(s: &str) -> Option<bool> {
    match s {
        "best-effort" => Some(false),
        "require" => Some(true),
        _ => None,
    }
}

fn var_of(key: &str) -> &'static str {
    SETTINGS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or("", |(_, v)| v)
}

/// Parses a boolean word: `true false 1 0 yes no on off`, any case (SPEC §2).
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Parses a decimal integer of digits only (`[0-9]+`, SPEC §9).
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
    crate::tools::NAMES.iter().copied().find(|t| *t == name)
}

fn check_excludes(origin: &Origin, patterns: &[String]) -> Result<()> {
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
fn canonical_dir(p: &Path, base: Option<&Path>) -> std::result::Result<PathBuf, String> {
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
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Reads a config file: a regular file of at most [`MAX_CONFIG_BYTES`], opened without blocking
/// (a FIFO, a device or standard input named as a config file is refused, never waited on).
fn read_config(path: &Path) -> std::io::Result<Vec<u8>> {
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
fn read_bounded(file: std::fs::File) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    if file.metadata()?.len() > MAX_CONFIG_BYTES {
        return Err(std::io::Error::other("larger than 1 MiB"));
    }
    let mut text = Vec::new();
    file.take(MAX_CONFIG_BYTES).read_to_end(&mut text)?;
    Ok(text)
}

/// `config: PATH: cannot read: WHY`.
fn unreadable(path: &Path, why: &str) -> Error {
    Error::Config(format!("{}: cannot read: {why}", path.display()))
}

fn parse_file(path: &Path, is_system: bool) -> Result<Option<Layer>> {
    match read_config(path) {
        Ok(text) => parse_text(path, text).map(Some),
        Err(e) if is_system && e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(unreadable(path, &crate::error::describe_io(&e))),
    }
}

/// Reads the file that `READBOX_CONFIG` names under a lock (docs/contract.md#lock): only when it
/// lies beneath a locked root and is not excluded, as the gate decides for a tool's path, and
/// through the handle the gate checked. Otherwise the answer is always the same,
/// `config: READBOX_CONFIG: denied`, whether or not the file exists or can be read, and nothing
/// from it appears. Beneath a root, a missing or unreadable file is reported as for any config
/// file. A relative name is taken from the current directory, as an unlocked one is.
fn parse_locked_config(
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
        Error::Io(m) => Ok(m
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

fn parse_text(path: &Path, text: Vec<u8>) -> Result<Layer> {
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
                                crate::tools::NAMES.join(" ")
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

fn parse_env(vars: &BTreeMap<String, OsString>) -> Result<Layer> {
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

/// A locked file must be owned by root and not writable by group or others.
fn check_system_owner(path: &Path) -> Result<()> {
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

/// The bounds a lock set: later layers may only narrow them.
#[derive(Debug, Clone)]
struct Bounds {
    roots: Vec<PathBuf>,
    tools: Vec<&'static str>,
    timeout: f64,
    max_output_bytes: u64,
    max_read_bytes: u64,
    max_entries: u64,
    audit_log: Option<PathBuf>,
    deny_hardlinks: Option<bool>,
    cross_mounts: bool,
    require_sandbox: bool,
    /// Whether redaction may be turned off: only when the locked file itself turned it off.
    redact: bool,
}

impl Policy {
    /// Loads the policy of this process (see [`Policy::load_from`]).
    ///
    /// # Errors
    /// `config:` naming the file and key, or the variable.
    pub fn load() -> Result<Policy> {
        Policy::load_from(&Inputs::from_process())
    }

    /// Merges the layers described by `inputs`.
    ///
    /// # Errors
    /// `config:` for a file that cannot be read or parsed, an unknown key, a bad value, a root or
    /// working directory that does not exist, a working directory outside every root, a later
    /// layer that widens a locked bound, or a locked system file with a loose owner or mode.
    pub fn load_from(inputs: &Inputs) -> Result<Policy> {
        let mut p = Policy {
            workdir: PathBuf::new(),
            roots: Vec::new(),
            tools: crate::tools::NAMES.to_vec(),
            excludes: DEFAULT_EXCLUDES.iter().map(|s| s.to_string()).collect(),
            timeout: 10.0,
            max_output_bytes: 32_768,
            max_read_bytes: 8_388_608,
            max_entries: 10_000,
            format: Format::Json,
            respect_ignore_files: true,
            audit_log: None,
            lock: false,
            deny_hardlinks: false,
            cross_mounts: false,
            require_sandbox: false,
            redact: true,
            locked_roots: Vec::new(),
            exclude_matcher: Excludes::new(&[]).expect("no patterns always compile"),
            sources: SETTINGS
                .iter()
                .map(|(k, _)| (*k, "default".to_string()))
                .collect(),
        };
        let mut explicit_workdir: Option<(PathBuf, Origin, PathBuf)> = None;
        let mut explicit_hardlinks: Option<bool> = None;
        let mut explicit_roots: Option<Vec<PathBuf>> = None;
        let mut bounds: Option<Bounds> = None;

        let mut system = parse_file(&inputs.system_file, true)?;
        if system.as_ref().is_some_and(|l| l.lock == Some(true)) {
            check_system_owner(&inputs.system_file)?;
        }
        let config_var = inputs.vars.get("READBOX_CONFIG").filter(|v| !v.is_empty());
        // Each layer is merged before the next is read: whether the system file locked decides
        // how READBOX_CONFIG may be read.
        for stage in 0.. {
            let layer = match stage {
                0 => system.take(),
                1 => match (config_var, &bounds) {
                    (None, _) => None,
                    (Some(f), None) => parse_file(Path::new(f), false)?,
                    (Some(f), Some(b)) => Some(parse_locked_config(
                        f,
                        b,
                        &p.excludes,
                        inputs.cwd.as_deref(),
                    )?),
                },
                2 => Some(parse_env(&inputs.vars)?),
                _ => break,
            };
            let Some(layer) = layer else { continue };
            let o = &layer.origin;
            let mut set = |key: &'static str| {
                p.sources.insert(key, o.source(var_of(key)));
            };
            if let Some(w) = &layer.workdir {
                let c = canonical_dir(w, inputs.cwd.as_deref())
                    .map_err(|m| o.error("working_directory", "READBOX_WORKDIR", m))?;
                explicit_workdir = Some((c, o.clone(), w.clone()));
                set("working_directory");
            }
            if let Some(roots) = &layer.roots {
                let base = explicit_workdir
                    .as_ref()
                    .map(|(w, _, _)| w.clone())
                    .or_else(|| inputs.cwd.clone());
                let mut canon = Vec::new();
                for r in roots {
                    canon.push(
                        canonical_dir(r, base.as_deref())
                            .map_err(|m| o.error("allowed_directories", "READBOX_ROOTS", m))?,
                    );
                }
                // The error names the root as written, never where a link led.
                if let Some(b) = &bounds
                    && let Some(wide) = roots
                        .iter()
                        .zip(&canon)
                        .find(|(_, r)| !b.roots.iter().any(|l| r.starts_with(l)))
                {
                    return Err(o.error(
                        "allowed_directories",
                        "READBOX_ROOTS",
                        format!("{} is not within the locked roots", wide.0.display()),
                    ));
                }
                explicit_roots = Some(canon);
                set("allowed_directories");
            }
            if let Some(tools) = &layer.tools {
                if let Some(b) = &bounds
                    && let Some(t) = tools.iter().find(|t| !b.tools.contains(t))
                {
                    return Err(o.error(
                        "allowed_tools",
                        "READBOX_TOOLS",
                        format!("{t} is not among the locked tools"),
                    ));
                }
                p.tools = crate::tools::NAMES
                    .iter()
                    .copied()
                    .filter(|n| tools.contains(n))
                    .collect();
                set("allowed_tools");
            }
            if let Some(ex) = &layer.excludes {
                if bounds.is_some() {
                    // Locked: excludes are only ever added to.
                    p.excludes.extend(ex.iter().cloned());
                } else {
                    p.excludes = ex.clone();
                }
                set("exclude_patterns");
            }
            if let Some(t) = layer.timeout {
                if let Some(b) = &bounds
                    && t > b.timeout
                {
                    return Err(o.error(
                        "timeout",
                        "READBOX_TIMEOUT",
                        format!("{t} is above the locked {}", b.timeout),
                    ));
                }
                p.timeout = t;
                set("timeout");
            }
            for (key, value, slot, bound) in [
                (
                    "max_output_bytes",
                    layer.max_output_bytes,
                    &mut p.max_output_bytes,
                    bounds.as_ref().map(|b| b.max_output_bytes),
                ),
                (
                    "max_read_bytes",
                    layer.max_read_bytes,
                    &mut p.max_read_bytes,
                    bounds.as_ref().map(|b| b.max_read_bytes),
                ),
                (
                    "max_entries",
                    layer.max_entries,
                    &mut p.max_entries,
                    bounds.as_ref().map(|b| b.max_entries),
                ),
            ] {
                if let Some(v) = value {
                    if let Some(limit) = bound
                        && v > limit
                    {
                        return Err(o.error(
                            key,
                            var_of(key),
                            format!("{v} is above the locked {limit}"),
                        ));
                    }
                    *slot = v;
                    p.sources.insert(key, o.source(var_of(key)));
                }
            }
            if let Some(f) = layer.format {
                p.format = f;
                p.sources.insert("format", o.source(var_of("format")));
            }
            if let Some(r) = layer.respect_ignore_files {
                p.respect_ignore_files = r;
                p.sources.insert(
                    "respect_ignore_files",
                    o.source(var_of("respect_ignore_files")),
                );
            }
            if let Some(a) = &layer.audit_log {
                if let Some(b) = &bounds
                    && b.audit_log.as_ref() != Some(a)
                {
                    return Err(o.error("audit_log", "", "cannot be changed under a lock"));
                }
                p.audit_log = Some(a.clone());
                p.sources.insert("audit_log", o.source(""));
            }
            if let Some(deny) = layer.deny_hardlinks {
                if let Some(b) = &bounds
                    && b.deny_hardlinks != Some(false)
                    && !deny
                {
                    return Err(o.error(
                        "hardlinks",
                        var_of("hardlinks"),
                        "cannot allow hardlinks under a lock that denies them",
                    ));
                }
                explicit_hardlinks = Some(deny);
                p.sources.insert("hardlinks", o.source(var_of("hardlinks")));
            }
            if let Some(cross) = layer.cross_mounts {
                if let Some(b) = &bounds
                    && cross
                    && !b.cross_mounts
                {
                    return Err(o.error(
                        "cross_mounts",
                        var_of("cross_mounts"),
                        "cannot cross mounts under a lock that does not",
                    ));
                }
                p.cross_mounts = cross;
                p.sources
                    .insert("cross_mounts", o.source(var_of("cross_mounts")));
            }
            if let Some(require) = layer.require_sandbox {
                if let Some(b) = &bounds
                    && b.require_sandbox
                    && !require
                {
                    return Err(o.error(
                        "sandbox",
                        var_of("sandbox"),
                        "cannot be relaxed under a lock that requires it",
                    ));
                }
                p.require_sandbox = require;
                p.sources.insert("sandbox", o.source(var_of("sandbox")));
            }
            if let Some(redact) = layer.redact {
                if let Some(b) = &bounds
                    && b.redact
                    && !redact
                {
                    return Err(o.error(
                        "redact",
                        var_of("redact"),
                        "cannot be turned off under a lock",
                    ));
                }
                p.redact = redact;
                p.sources.insert("redact", o.source(var_of("redact")));
            }
            match layer.lock {
                Some(false) if bounds.is_some() => {
                    return Err(o.error("lock", "", "cannot be turned off once a layer locked"));
                }
                Some(true) if bounds.is_none() => {
                    p.lock = true;
                    p.sources.insert("lock", o.source(""));
                    // Under a lock redaction is on, unless this very file turns it off: an
                    // earlier, unlocked layer cannot leave it off.
                    if layer.redact.is_none() && !p.redact {
                        p.redact = true;
                        p.sources.insert("redact", o.source(""));
                    }
                    let roots = match &explicit_roots {
                        Some(r) => r.clone(),
                        None => {
                            let wd = explicit_workdir
                                .as_ref()
                                .map(|(w, _, _)| w.clone())
                                .or_else(|| inputs.cwd.clone());
                            let wd = wd.ok_or_else(|| {
                                o.error("lock", "", "no working directory to lock to")
                            })?;
                            vec![canonical_dir(&wd, None).map_err(|m| o.error("lock", "", m))?]
                        }
                    };
                    bounds = Some(Bounds {
                        roots,
                        tools: p.tools.clone(),
                        timeout: p.timeout,
                        max_output_bytes: p.max_output_bytes,
                        max_read_bytes: p.max_read_bytes,
                        max_entries: p.max_entries,
                        audit_log: p.audit_log.clone(),
                        deny_hardlinks: explicit_hardlinks,
                        cross_mounts: p.cross_mounts,
                        require_sandbox: p.require_sandbox,
                        redact: p.redact,
                    });
                }
                _ => {}
            }
        }

        // Hardlinks are denied by default once a lock is in force.
        p.deny_hardlinks = explicit_hardlinks.unwrap_or(p.lock);
        let cwd = match &inputs.cwd {
            Some(c) => Some(
                canonical_dir(c, None)
                    .map_err(|m| Error::Config(format!("current directory: {m}")))?,
            ),
            None => None,
        };
        // Without explicit roots, a lock's roots stay in force; else the working directory is the
        // root.
        p.roots = match (explicit_roots, &bounds) {
            (Some(r), _) => r,
            (None, Some(b)) => b.roots.clone(),
            (None, None) => {
                let wd = explicit_workdir
                    .as_ref()
                    .map(|(w, _, _)| w.clone())
                    .or_else(|| cwd.clone())
                    .ok_or_else(|| {
                        Error::Config("working_directory: there is no current directory".into())
                    })?;
                vec![wd]
            }
        };
        if p.roots.is_empty() {
            return Err(Error::Config("allowed_directories: no root is set".into()));
        }
        // A root beneath an excluded name (`~/.ssh`), or beneath an excluded path of a locked
        // root (`.git/config` for a root narrowed to `.git`), would serve what is excluded: it
        // fails closed (THREATS.md point 5).
        let excludes = Excludes::new(&p.excludes).map_err(|(pat, why)| {
            let pat = crate::error::shown(pat.as_bytes());
            Error::Config(format!("exclude_patterns: '{pat}': {why}"))
        })?;
        for r in &p.roots {
            let shown = |why: &str| {
                let source = p
                    .sources
                    .get("allowed_directories")
                    .cloned()
                    .unwrap_or_default();
                Error::Config(format!("allowed_directories ({source}): a root {why}"))
            };
            // The root's own name is not matched (SPEC §9); its ancestors' names are.
            let ancestors = r.parent().map(Path::components).into_iter().flatten();
            if ancestors
                .into_iter()
                .any(|c| matches!(c, std::path::Component::Normal(n) if excludes.matches_name(n)))
            {
                return Err(shown("lies beneath an excluded name"));
            }
            if let Some(b) = &bounds
                && b.roots.iter().any(|l| {
                    r.strip_prefix(l)
                        .is_ok_and(|rel| excludes.matches_any_prefix(rel))
                })
            {
                return Err(shown("is excluded from the locked roots"));
            }
        }
        if let Some(b) = &bounds {
            p.locked_roots = b.roots.clone();
        }
        p.exclude_matcher = excludes;
        let within = |d: &Path| p.roots.iter().any(|r| d.starts_with(r));
        p.workdir = match explicit_workdir {
            Some((w, _, _)) if within(&w) => w,
            Some((_, origin, given)) => {
                return Err(origin.error(
                    "working_directory",
                    "READBOX_WORKDIR",
                    format!("{} is outside every root", given.display()),
                ));
            }
            None => match cwd {
                Some(c) if within(&c) => c,
                _ => p.roots[0].clone(),
            },
        };
        // Last of all, so that no layer can widen what it leaves.
        if let Some(v) = inputs.vars.get(NARROW_ROOTS_VAR) {
            p.narrow_roots(v)?;
        }
        Ok(p)
    }

    /// Applies the narrow-only roots layer ([`NARROW_ROOTS_VAR`]): the roots become the listed
    /// directories, each of which must lie within a root the layers before allowed, and neither
    /// be nor lie beneath an excluded path. An empty list leaves no root, so every path is
    /// denied. The working directory moves to the first listed root when it falls outside them.
    ///
    /// This is how `readbox mcp` hands the roots a client offered to each call it runs: the
    /// variable can only narrow, so a server that computed them wrongly still cannot widen the
    /// policy (docs/contract.md#mcp).
    fn narrow_roots(&mut self, value: &OsStr) -> Result<()> {
        let err = |m: String| Error::Config(format!("{NARROW_ROOTS_VAR}: {m}"));
        // Excludes stay anchored where they were: at the lock's roots, else at the roots being
        // narrowed, so that `docs/private` still applies beneath a narrowed `docs`.
        let anchors = if self.locked_roots.is_empty() {
            self.roots.clone()
        } else {
            self.locked_roots.clone()
        };
        let mut narrowed: Vec<PathBuf> = Vec::new();
        for entry in value.as_bytes().split(|b| *b == b':') {
            if entry.is_empty() {
                continue;
            }
            let given = Path::new(OsStr::from_bytes(entry));
            if !given.is_absolute() {
                return Err(err(format!("{}: not an absolute path", given.display())));
            }
            let dir = canonical_dir(given, None).map_err(err)?;
            if !self.roots.iter().any(|r| dir.starts_with(r)) {
                return Err(err(format!(
                    "{} is not within the allowed directories",
                    given.display()
                )));
            }
            let ancestors = dir.parent().map(Path::components).into_iter().flatten();
            let beneath_excluded_name = ancestors.into_iter().any(|c| {
                matches!(c, std::path::Component::Normal(n) if self.exclude_matcher.matches_name(n))
            });
            let excluded = anchors.iter().any(|a| {
                dir.strip_prefix(a)
                    .is_ok_and(|rel| self.exclude_matcher.matches_any_prefix(rel))
            });
            if beneath_excluded_name || excluded {
                return Err(err(format!("{} is excluded", given.display())));
            }
            if !narrowed.contains(&dir) {
                narrowed.push(dir);
            }
        }
        let source = format!("env {NARROW_ROOTS_VAR}");
        self.roots = narrowed;
        self.locked_roots = anchors;
        self.sources.insert("allowed_directories", source.clone());
        if !self.roots.iter().any(|r| self.workdir.starts_with(r))
            && let Some(first) = self.roots.first()
        {
            self.workdir = first.clone();
            self.sources.insert("working_directory", source);
        }
        Ok(())
    }

    /// The policy as the JSON document `readbox policy` prints: each setting's value and source.
    pub fn to_json(&self, sandbox: Value) -> Value {
        let path = |p: &Path| Value::String(p.to_string_lossy().into_owned());
        let mut settings = serde_json::Map::new();
        let mut put = |key: &'static str, value: Value| {
            let source = self
                .sources
                .get(key)
                .cloned()
                .unwrap_or_else(|| "default".into());
            settings.insert(key.to_string(), json!({ "value": value, "source": source }));
        };
        put("working_directory", path(&self.workdir));
        put(
            "allowed_directories",
            Value::Array(self.roots.iter().map(|r| path(r)).collect()),
        );
        put("allowed_tools", json!(self.tools));
        put("exclude_patterns", json!(self.excludes));
        put("timeout", json!(self.timeout));
        put("max_output_bytes", json!(self.max_output_bytes));
        put("max_read_bytes", json!(self.max_read_bytes));
        put("max_entries", json!(self.max_entries));
        put("format", json!(self.format.name()));
        put("respect_ignore_files", json!(self.respect_ignore_files));
        put(
            "audit_log",
            self.audit_log.as_deref().map_or(Value::Null, path),
        );
        put("lock", json!(self.lock));
        put(
            "hardlinks",
            json!(if self.deny_hardlinks { "deny" } else { "allow" }),
        );
        put("cross_mounts", json!(self.cross_mounts));
        put(
            "sandbox",
            json!(if self.require_sandbox {
                "require"
            } else {
                "best-effort"
            }),
        );
        put("redact", json!(self.redact));
        let mut doc = serde_json::Map::new();
        doc.insert("settings".into(), Value::Object(settings));
        doc.insert("sandbox".into(), sandbox);
        Value::Object(doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    struct Fixture {
        dir: tempfile::TempDir,
    }

    impl Fixture {
        fn new() -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("root/sub")).unwrap();
            std::fs::create_dir_all(dir.path().join("outside")).unwrap();
            Fixture { dir }
        }
        fn p(&self, rel: &str) -> PathBuf {
            self.dir.path().canonicalize().unwrap().join(rel)
        }
        fn file(&self, name: &str, text: &str) -> PathBuf {
            let p = self.p(name);
            std::fs::File::create(&p)
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            p
        }
        fn inputs(&self, vars: &[(&str, &str)]) -> Inputs {
            Inputs {
                system_file: self.p("no-system.toml"),
                vars: vars
                    .iter()
                    .map(|(k, v)| (k.to_string(), OsString::from(v)))
                    .collect(),
                cwd: Some(self.p("root")),
            }
        }
    }

    #[test]
    fn defaults_root_at_the_current_directory() {
        let f = Fixture::new();
        let p = Policy::load_from(&f.inputs(&[])).unwrap();
        assert_eq!(p.roots, vec![f.p("root")]);
        assert_eq!(p.workdir, f.p("root"));
        assert_eq!(p.excludes.len(), DEFAULT_EXCLUDES.len());
        assert_eq!(p.sources["timeout"], "default");
    }

    #[test]
    fn environment_overrides_the_config_file() {
        let f = Fixture::new();
        let cfg = f.file("c.toml", "max_output_bytes = 5\ntimeout = 3\n");
        let p = Policy::load_from(&f.inputs(&[
            ("READBOX_CONFIG", cfg.to_str().unwrap()),
            ("READBOX_MAX_OUTPUT_BYTES", "7"),
        ]))
        .unwrap();
        assert_eq!(p.max_output_bytes, 7);
        assert_eq!(p.timeout, 3.0);
        assert_eq!(
            p.sources["max_output_bytes"],
            "env READBOX_MAX_OUTPUT_BYTES"
        );
        assert_eq!(p.sources["timeout"], cfg.display().to_string());
    }

    #[test]
    fn lock_refuses_wider_roots_and_higher_limits() {
        let f = Fixture::new();
        let cfg = f.file(
            "c.toml",
            &format!(
                "lock = true\nallowed_directories = [{:?}]\nmax_entries = 10\n",
                f.p("root")
            ),
        );
        let c = cfg.to_str().unwrap();
        let wider = f.p("").display().to_string();
        let e = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", c), ("READBOX_ROOTS", &wider)]));
        assert!(matches!(e, Err(Error::Config(m)) if m.contains("READBOX_ROOTS")));
        let e =
            Policy::load_from(&f.inputs(&[("READBOX_CONFIG", c), ("READBOX_MAX_ENTRIES", "11")]));
        assert!(matches!(e, Err(Error::Config(_))));
        let sub = f.p("root/sub").display().to_string();
        let p = Policy::load_from(&f.inputs(&[
            ("READBOX_CONFIG", c),
            ("READBOX_ROOTS", &sub),
            ("READBOX_MAX_ENTRIES", "9"),
        ]))
        .unwrap();
        assert_eq!(p.roots, vec![f.p("root/sub")]);
        assert_eq!(p.max_entries, 9);
    }

    #[test]
    fn lock_adds_excludes_instead_of_replacing() {
        let f = Fixture::new();
        let cfg = f.file("c.toml", "lock = true\nexclude_patterns = [\"*.md\"]\n");
        let p = Policy::load_from(&f.inputs(&[
            ("READBOX_CONFIG", cfg.to_str().unwrap()),
            ("READBOX_EXCLUDE", "*.txt"),
        ]))
        .unwrap();
        assert_eq!(p.excludes, vec!["*.md".to_string(), "*.txt".to_string()]);
    }

    #[test]
    fn unlocked_exclude_variable_replaces_and_empty_means_none() {
        let f = Fixture::new();
        let p = Policy::load_from(&f.inputs(&[("READBOX_EXCLUDE", "")])).unwrap();
        assert!(p.excludes.is_empty());
    }

    #[test]
    fn bad_values_name_the_file_and_key() {
        let f = Fixture::new();
        let cfg = f.file("c.toml", "format = \"xml\"\n");
        let e =
            Policy::load_from(&f.inputs(&[("READBOX_CONFIG", cfg.to_str().unwrap())])).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("config: ") && text.contains("c.toml") && text.contains("format"),
            "{text}"
        );
        let e = Policy::load_from(&f.inputs(&[("READBOX_TIMEOUT", "nan")])).unwrap_err();
        assert!(e.to_string().starts_with("config: READBOX_TIMEOUT"));
    }

    #[test]
    fn workdir_outside_roots_is_a_config_error_and_cwd_outside_uses_first_root() {
        let f = Fixture::new();
        let root = f.p("root").display().to_string();
        let out = f.p("outside").display().to_string();
        let e =
            Policy::load_from(&f.inputs(&[("READBOX_ROOTS", &root), ("READBOX_WORKDIR", &out)]));
        assert!(matches!(e, Err(Error::Config(_))));
        let mut i = f.inputs(&[("READBOX_ROOTS", &root)]);
        i.cwd = Some(f.p("outside"));
        assert_eq!(Policy::load_from(&i).unwrap().workdir, f.p("root"));
    }

    #[test]
    fn hardlinks_default_to_deny_under_a_lock_and_cannot_be_allowed_again() {
        let f = Fixture::new();
        assert!(!Policy::load_from(&f.inputs(&[])).unwrap().deny_hardlinks);
        let cfg = f.file("l.toml", "lock = true\n");
        let c = cfg.to_str().unwrap();
        assert!(
            Policy::load_from(&f.inputs(&[("READBOX_CONFIG", c)]))
                .unwrap()
                .deny_hardlinks
        );
        let e =
            Policy::load_from(&f.inputs(&[("READBOX_CONFIG", c), ("READBOX_HARDLINKS", "allow")]));
        assert!(matches!(e, Err(Error::Config(m)) if m.contains("READBOX_HARDLINKS")));
        let e =
            Policy::load_from(&f.inputs(&[("READBOX_CONFIG", c), ("READBOX_CROSS_MOUNTS", "yes")]));
        assert!(matches!(e, Err(Error::Config(_))));
    }

    #[test]
    fn a_locked_file_may_allow_hardlinks_explicitly() {
        let f = Fixture::new();
        let cfg = f.file("l.toml", "lock = true\nhardlinks = \"allow\"\n");
        let p = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", cfg.to_str().unwrap())])).unwrap();
        assert!(!p.deny_hardlinks);
    }

    #[test]
    fn narrowing_roots_only_narrows_and_moves_the_working_directory() {
        let f = Fixture::new();
        let sub = f.p("root/sub").display().to_string();
        let p = Policy::load_from(&f.inputs(&[(NARROW_ROOTS_VAR, &sub)])).unwrap();
        assert_eq!(p.roots, vec![f.p("root/sub")]);
        assert_eq!(p.workdir, f.p("root/sub"));
        assert_eq!(p.locked_roots, vec![f.p("root")]);
        assert_eq!(p.sources["allowed_directories"], "env READBOX_NARROW_ROOTS");
        // Outside the roots the layers before allowed: refused, never widened.
        let out = f.p("outside").display().to_string();
        let e = Policy::load_from(&f.inputs(&[(NARROW_ROOTS_VAR, &out)])).unwrap_err();
        assert!(
            e.to_string().starts_with("config: READBOX_NARROW_ROOTS: ")
                && e.to_string().contains("not within the allowed directories"),
            "{e}"
        );
        let e = Policy::load_from(&f.inputs(&[(NARROW_ROOTS_VAR, "root/sub")])).unwrap_err();
        assert!(e.to_string().contains("not an absolute path"), "{e}");
    }

    #[test]
    fn narrowing_to_nothing_leaves_no_root() {
        let f = Fixture::new();
        let p = Policy::load_from(&f.inputs(&[(NARROW_ROOTS_VAR, "")])).unwrap();
        assert!(p.roots.is_empty());
        // The working directory stays, beneath no root: every relative path is denied.
        assert_eq!(p.workdir, f.p("root"));
        let e = Policy::load_from(&f.inputs(&[("READBOX_ROOTS", "")])).unwrap();
        assert_eq!(e.roots, vec![f.p("root")], "READBOX_ROOTS empty is unset");
    }

    #[test]
    fn narrowing_keeps_the_excludes_anchored() {
        let f = Fixture::new();
        std::fs::create_dir_all(f.p("root/docs/private")).unwrap();
        std::fs::create_dir_all(f.p("root/.ssh")).unwrap();
        let i = |v: &str, excl: &str| {
            Policy::load_from(&f.inputs(&[(NARROW_ROOTS_VAR, v), ("READBOX_EXCLUDE", excl)]))
        };
        let private = f.p("root/docs/private").display().to_string();
        let e = i(&private, "docs/private").unwrap_err();
        assert!(e.to_string().contains("is excluded"), "{e}");
        let ssh = f.p("root/.ssh").display().to_string();
        assert!(i(&ssh, ".ssh").is_err());
        let docs = f.p("root/docs").display().to_string();
        let p = i(&docs, "docs/private").unwrap();
        assert_eq!(p.roots, vec![f.p("root/docs")]);
        assert_eq!(p.locked_roots, vec![f.p("root")]);
    }

    #[test]
    fn narrowing_under_a_lock_stays_within_the_locked_roots() {
        let f = Fixture::new();
        let cfg = f.file(
            "l.toml",
            &format!(
                "lock = true\nallowed_directories = [{:?}]\n",
                f.p("root/sub")
            ),
        );
        let root = f.p("root").display().to_string();
        let e = Policy::load_from(&f.inputs(&[
            ("READBOX_CONFIG", cfg.to_str().unwrap()),
            (NARROW_ROOTS_VAR, &root),
        ]));
        assert!(matches!(e, Err(Error::Config(m)) if m.contains("not within")));
    }

    #[test]
    fn a_lock_without_roots_keeps_its_working_directory_as_the_root() {
        let f = Fixture::new();
        let cfg = f.file("l.toml", "lock = true\n");
        let out = f.p("outside").display().to_string();
        let e = Policy::load_from(&f.inputs(&[
            ("READBOX_CONFIG", cfg.to_str().unwrap()),
            ("READBOX_WORKDIR", &out),
        ]));
        assert!(matches!(e, Err(Error::Config(m)) if m.starts_with("READBOX_WORKDIR: ")));
    }

    #[test]
    fn a_root_beneath_an_excluded_name_or_locked_path_fails_closed() {
        let f = Fixture::new();
        std::fs::create_dir_all(f.p("root/.ssh/sub")).unwrap();
        std::fs::create_dir_all(f.p("root/.git")).unwrap();
        let mut i = f.inputs(&[]);
        i.cwd = Some(f.p("root/.ssh/sub"));
        assert!(
            matches!(Policy::load_from(&i), Err(Error::Config(m)) if m.contains("excluded name"))
        );
        let cfg = f.file(
            "l.toml",
            &format!(
                "lock = true\nallowed_directories = [{:?}]\nexclude_patterns = [\".git/config\"]\n",
                f.p("root")
            ),
        );
        let git = f.p("root/.git").display().to_string();
        let e = Policy::load_from(&f.inputs(&[
            ("READBOX_CONFIG", cfg.to_str().unwrap()),
            ("READBOX_ROOTS", &git),
        ]));
        // Narrowing to .git is allowed, but .git/config stays excluded: the excludes keep their
        // anchor at the locked root.
        assert_eq!(e.unwrap().locked_roots, vec![f.p("root")]);
        let private = f.file(
            "p.toml",
            &format!("lock = true\nallowed_directories = [{:?}]\nexclude_patterns = [\"docs/private\"]\n", f.p("root")),
        );
        std::fs::create_dir_all(f.p("root/docs/private")).unwrap();
        let docs = f.p("root/docs/private").display().to_string();
        let e = Policy::load_from(&f.inputs(&[
            ("READBOX_CONFIG", private.to_str().unwrap()),
            ("READBOX_ROOTS", &docs),
        ]));
        assert!(
            matches!(&e, Err(Error::Config(m)) if m.contains("excluded")),
            "{e:?}"
        );
    }

    #[test]
    fn under_a_locked_system_file_readbox_config_is_read_only_beneath_its_roots() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: a locked system file must be owned by root");
            return;
        }
        let f = Fixture::new();
        let mut base = f.inputs(&[]);
        base.system_file = f.file(
            "system.toml",
            &format!("lock = true\nallowed_directories = [{:?}]\n", f.p("root")),
        );
        let with = |config: &str| {
            let mut i = base.clone();
            i.vars
                .insert("READBOX_CONFIG".into(), OsString::from(config));
            Policy::load_from(&i)
        };
        let outside = f.file(
            "outside/c.toml",
            "max_output_bytes = 5\nSECRET_KEY_NAME = 1\n",
        );
        let broken = f.file("outside/broken.toml", "not toml at all [\n");
        f.file("root/.env", "max_output_bytes = 5\n");
        std::os::unix::fs::symlink(&outside, f.p("root/link.toml")).unwrap();
        std::fs::create_dir(f.p("root/dir.toml")).unwrap();
        let missing_outside = f.p("outside/missing.toml");
        for config in [
            outside.to_str().unwrap(),
            broken.to_str().unwrap(),
            missing_outside.to_str().unwrap(),
            "/proc/self/environ",
            f.p("root/.env").to_str().unwrap(),
            ".env",
            "link.toml",
            "../outside/c.toml",
        ] {
            match with(config) {
                Err(Error::Config(m)) => assert_eq!(m, "READBOX_CONFIG: denied", "{config}"),
                other => panic!("READBOX_CONFIG={config}: {other:?}"),
            }
        }
        // Beneath the root it is read, by absolute or relative name, and reported as any file.
        f.file("root/narrow.toml", "max_output_bytes = 5\n");
        assert_eq!(with("narrow.toml").unwrap().max_output_bytes, 5);
        let inside = f.p("root/narrow.toml");
        assert_eq!(with(inside.to_str().unwrap()).unwrap().max_output_bytes, 5);
        let e = with("missing.toml").unwrap_err().to_string();
        assert_eq!(
            e,
            "config: missing.toml: cannot read: no such file or directory"
        );
        let e = with("dir.toml").unwrap_err().to_string();
        assert_eq!(e, "config: dir.toml: cannot read: not a regular file");
        f.file("root/wide.toml", "max_output_bytes = 99999999\n");
        let e = with("wide.toml").unwrap_err().to_string();
        assert!(e.contains("above the locked"), "{e}");
        // Without a lock, READBOX_CONFIG may name any file.
        let mut free = f.inputs(&[("READBOX_CONFIG", outside.to_str().unwrap())]);
        free.cwd = Some(f.p("root"));
        let e = Policy::load_from(&free).unwrap_err().to_string();
        assert!(e.contains("SECRET_KEY_NAME: unknown setting"), "{e}");
    }

    #[test]
    fn redaction_is_on_by_default_and_either_layer_turns_it_off() {
        let f = Fixture::new();
        let p = Policy::load_from(&f.inputs(&[])).unwrap();
        assert!(p.redact);
        assert_eq!(p.sources["redact"], "default");
        let p = Policy::load_from(&f.inputs(&[("READBOX_REDACT", "off")])).unwrap();
        assert!(!p.redact);
        assert_eq!(p.sources["redact"], "env READBOX_REDACT");
        let cfg = f.file("r.toml", "redact = false\n");
        let p = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", cfg.to_str().unwrap())])).unwrap();
        assert!(!p.redact);
        let e = Policy::load_from(&f.inputs(&[("READBOX_REDACT", "perhaps")])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "config: READBOX_REDACT: 'perhaps': expected a boolean"
        );
        let bad = f.file("b.toml", "redact = \"no\"\n");
        let e =
            Policy::load_from(&f.inputs(&[("READBOX_CONFIG", bad.to_str().unwrap())])).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("b.toml: redact: expected true or false"),
            "{e}"
        );
    }

    #[test]
    fn a_lock_keeps_redaction_on_unless_the_locked_file_turns_it_off() {
        let f = Fixture::new();
        let locked = f.file("l.toml", "lock = true\n");
        let l = locked.to_str().unwrap();
        assert!(
            Policy::load_from(&f.inputs(&[("READBOX_CONFIG", l)]))
                .unwrap()
                .redact
        );
        for v in ["false", "0", "off", "no"] {
            let e = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", l), ("READBOX_REDACT", v)]));
            assert!(
                matches!(&e, Err(Error::Config(m)) if m == "READBOX_REDACT: cannot be turned off under a lock"),
                "{e:?}"
            );
        }
        let p = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", l), ("READBOX_REDACT", "yes")]))
            .unwrap();
        assert!(p.redact);
        // The locked file itself may turn it off; later layers may then choose.
        let off = f.file("o.toml", "lock = true\nredact = false\n");
        let o = off.to_str().unwrap();
        let p = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", o)])).unwrap();
        assert!(!p.redact);
        assert_eq!(p.sources["redact"], off.display().to_string());
        let p = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", o), ("READBOX_REDACT", "on")]))
            .unwrap();
        assert!(p.redact);
    }

    #[test]
    fn a_lock_turns_on_redaction_that_an_earlier_unlocked_layer_turned_off() {
        let f = Fixture::new();
        let mut i = f.inputs(&[]);
        i.system_file = f.file("system.toml", "redact = false\n");
        assert!(!Policy::load_from(&i).unwrap().redact);
        let locked = f.file("l.toml", "lock = true\n");
        i.vars
            .insert("READBOX_CONFIG".into(), OsString::from(locked.as_os_str()));
        let p = Policy::load_from(&i).unwrap();
        assert!(p.redact);
        assert_eq!(p.sources["redact"], locked.display().to_string());
        i.vars
            .insert("READBOX_REDACT".into(), OsString::from("false"));
        assert!(matches!(Policy::load_from(&i), Err(Error::Config(_))));
    }

    #[test]
    fn lock_cannot_be_turned_off_and_tools_only_narrow() {
        let f = Fixture::new();
        let a = f.file(
            "a.toml",
            "lock = true\nallowed_tools = [\"cat\", \"head\"]\n",
        );
        let i = f.inputs(&[
            ("READBOX_CONFIG", a.to_str().unwrap()),
            ("READBOX_TOOLS", "cat,grep"),
        ]);
        assert!(matches!(Policy::load_from(&i), Err(Error::Config(_))));
        let i = f.inputs(&[
            ("READBOX_CONFIG", a.to_str().unwrap()),
            ("READBOX_TOOLS", "cat"),
        ]);
        assert_eq!(Policy::load_from(&i).unwrap().tools, vec!["cat"]);
    }
}
