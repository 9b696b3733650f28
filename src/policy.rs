//! The effective settings of one call and where each came from (docs/contract.md#policy).
//!
//! Layers, each overriding the one before: built-in defaults, the system file
//! `/etc/readbox/config.toml` (if it exists), the file named by `READBOX_CONFIG`, the `READBOX_*`
//! environment variables. A file that sets `lock = true` makes every later layer narrow-only.
//! Last, `READBOX_NARROW_ROOTS` may narrow the roots further, and only narrow them.
//! Nothing else is ever read: no file beside the binary, under `$HOME` or `$XDG_*`.
//!
//! Loading is three steps, in the manner of a command line parsed into low-level values and then
//! resolved into high-level ones: each layer is read into the values it sets (`layer`, and `lock`
//! for a file read under a lock), merged over the layers before under the lock's rules (`merge`),
//! and the result resolved into a [`Policy`] here. Every step reads a setting's key, variable,
//! default, parser and lock rule from its one row in `settings`.
//!
//! Invariant: a [`Policy`] exists only when every layer was valid and no locked bound was widened;
//! otherwise loading fails with a `config:` error and nothing is read.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::envelope::Format;
use crate::error::{Error, Result};
use crate::resolve::{Excludes, Gate};
use crate::sandbox::Enforcement;

mod layer;
mod lock;
mod merge;
mod settings;
#[cfg(test)]
mod tests;

use layer::{Layer, canonical_dir, parse_env, parse_file};
pub use layer::{parse_bool, parse_uint};
use lock::{parse_locked_config, read_system_file};
use merge::Merged;
pub use settings::Setting;
use settings::{ROWS, Value};

/// The system-wide config file, read when it exists.
pub const SYSTEM_CONFIG: &str = "/etc/readbox/config.toml";

/// The narrow-only roots layer: a variable that can only narrow the roots.
///
/// Its value is a `:`-separated list of absolute directories, applied after every other layer (set
/// but empty: no root at all). Unlike the other variables it has no config key, and an empty value
/// is not "unset".
pub const NARROW_ROOTS_VAR: &str = "READBOX_NARROW_ROOTS";

/// The default exclude globs (docs/contract.md#policy).
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
    /// For each setting, where its value came from: `default`, a file, or `env READBOX_X`.
    pub sources: BTreeMap<Setting, String>,
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

impl Policy {
    /// Loads the policy of this process (see [`Policy::load_from`]).
    ///
    /// # Errors
    /// `config:` naming the file and key, or the variable.
    pub fn load() -> Result<Policy> {
        Policy::load_from(&Inputs::from_process())
    }

    /// Merges the layers described by `inputs`: each is read, then merged over the ones before
    /// under the lock's rules (a lock in the system file decides how `READBOX_CONFIG` is read),
    /// and the result resolved into a policy, which `READBOX_NARROW_ROOTS` may narrow last.
    ///
    /// # Errors
    /// `config:` for a file that cannot be read or parsed, an unknown key, a bad value, a root or
    /// working directory that does not exist, a working directory outside every root, a later
    /// layer that widens a locked bound, or a locked system file with a loose owner or mode.
    pub fn load_from(inputs: &Inputs) -> Result<Policy> {
        let mut merged = Merged::new(inputs.cwd.as_deref());
        if let Some(system) = read_system_file(&inputs.system_file)? {
            merged.merge(system)?;
        }
        if let Some(config) = read_config_var(inputs, &merged)? {
            merged.merge(config)?;
        }
        merged.merge(parse_env(&inputs.vars)?)?;
        let mut policy = Policy::resolve(merged)?;
        // Last of all, so that no layer can widen what it leaves.
        if let Some(v) = inputs.vars.get(NARROW_ROOTS_VAR) {
            policy.narrow_roots(v)?;
        }
        Ok(policy)
    }

    /// The policy the merged layers describe: the roots (given, else locked, else the working
    /// directory), none beneath an excluded name or path; the working directory within them
    /// when it was given; hard links denied under a lock unless allowed.
    fn resolve(merged: Merged) -> Result<Policy> {
        let Merged {
            values: v,
            origins,
            written,
            cwd,
            bounds,
        } = merged;
        let lock = v.value(Setting::Lock).flag();
        let sources: BTreeMap<Setting, String> = Setting::all()
            .map(|s| (s, origins.get(s).map_or("default".into(), |o| o.source(s))))
            .collect();
        let cwd = match &cwd {
            Some(c) => Some(
                canonical_dir(c, None)
                    .map_err(|m| Error::Config(format!("current directory: {m}")))?,
            ),
            None => None,
        };
        let workdir = v.get(Setting::WorkingDirectory).map(Value::path);
        // Without explicit roots, a lock's roots stay in force; else the working directory is the
        // root.
        let roots = match (v.get(Setting::AllowedDirectories), &bounds) {
            (Some(r), _) => r.paths().to_vec(),
            (None, Some(b)) => b.roots().to_vec(),
            (None, None) => {
                let wd = workdir.or(cwd.as_deref()).ok_or_else(|| {
                    Error::Config("working_directory: there is no current directory".into())
                })?;
                vec![wd.to_path_buf()]
            }
        };
        if roots.is_empty() {
            return Err(Error::Config("allowed_directories: no root is set".into()));
        }
        let excludes = v.value(Setting::ExcludePatterns).globs().to_vec();
        let exclude_matcher = Excludes::new(&excludes).map_err(|(pat, why)| {
            let pat = crate::error::shown(pat.as_bytes());
            Error::Config(format!("exclude_patterns: '{pat}': {why}"))
        })?;
        let locked_roots = bounds.map(|b| b.roots().to_vec()).unwrap_or_default();
        let source = &sources[&Setting::AllowedDirectories];
        refuse_excluded_roots(&roots, &locked_roots, &exclude_matcher, source)?;
        let within = |d: &Path| roots.iter().any(|r| d.starts_with(r));
        let workdir = match workdir {
            Some(w) if within(w) => w.to_path_buf(),
            Some(_) => {
                let s = Setting::WorkingDirectory;
                let given = written.value(s).path().display();
                let origin = origins.get(s).cloned().unwrap_or_default();
                return Err(origin.error(s, format!("{given} is outside every root")));
            }
            // A current directory outside every root stays the working directory, beneath no
            // root: relative paths are then denied, never answered for another directory
            // (docs/contract.md#policy).
            None => match cwd {
                Some(c) => c,
                None => roots[0].clone(),
            },
        };
        let tools = crate::registry::NAMES.iter().copied();
        let enabled = v.value(Setting::AllowedTools).tools();
        Ok(Policy {
            workdir,
            roots,
            tools: tools.filter(|n| enabled.contains(n)).collect(),
            excludes,
            timeout: v.value(Setting::Timeout).seconds(),
            max_output_bytes: v.value(Setting::MaxOutputBytes).count(),
            max_read_bytes: v.value(Setting::MaxReadBytes).count(),
            max_entries: v.value(Setting::MaxEntries).count(),
            format: v.value(Setting::Format).format(),
            respect_ignore_files: v.value(Setting::RespectIgnoreFiles).flag(),
            audit_log: v.get(Setting::AuditLog).map(|p| p.path().to_path_buf()),
            lock,
            // Hardlinks are denied by default once a lock is in force.
            deny_hardlinks: v.get(Setting::Hardlinks).map_or(lock, Value::flag),
            cross_mounts: v.value(Setting::CrossMounts).flag(),
            require_sandbox: v.value(Setting::Sandbox).flag(),
            redact: v.value(Setting::Redact).flag(),
            locked_roots,
            exclude_matcher,
            sources,
        })
    }

    /// Where setting `s` came from: `default`, a config file, or `env READBOX_X`.
    pub fn source(&self, s: Setting) -> &str {
        self.sources.get(&s).map_or("default", String::as_str)
    }

    /// Whether the roots were given (`READBOX_ROOTS`, `allowed_directories` in a config file, or
    /// a lock), rather than taken from the working directory by default. `readbox mcp` never
    /// serves a working directory it did not choose (docs/contract.md#mcp).
    pub fn roots_configured(&self) -> bool {
        self.lock || self.source(Setting::AllowedDirectories) != "default"
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
            if beneath_excluded_name(&dir, &self.exclude_matcher)
                || excluded_below(&dir, &anchors, &self.exclude_matcher)
            {
                return Err(err(format!("{} is excluded", given.display())));
            }
            if !narrowed.contains(&dir) {
                narrowed.push(dir);
            }
        }
        let source = format!("env {NARROW_ROOTS_VAR}");
        self.roots = narrowed;
        self.locked_roots = anchors;
        self.sources
            .insert(Setting::AllowedDirectories, source.clone());
        if !self.roots.iter().any(|r| self.workdir.starts_with(r))
            && let Some(first) = self.roots.first()
        {
            self.workdir = first.clone();
            self.sources.insert(Setting::WorkingDirectory, source);
        }
        Ok(())
    }

    /// The gate this policy confines to: its roots opened, its excludes anchored at the locked
    /// roots they were narrowed from, hard links and mounts as it says
    /// (docs/contract.md#confinement). Every call and `readbox mcp` open theirs here.
    ///
    /// # Errors
    /// `config:` when a root cannot be opened as a directory.
    pub fn open_gate(&self) -> Result<Gate> {
        Gate::anchored(
            &self.roots,
            &self.locked_roots,
            self.exclude_matcher.clone(),
            self.workdir.clone(),
            crate::resolve::Options {
                deny_hardlinks: self.deny_hardlinks,
                cross_mounts: self.cross_mounts,
            },
        )
        .map(|gate| match &self.audit_log {
            // The log holds every call's arguments: no tool reads it (docs/security.md#the-audit-log).
            Some(log) => gate.hide(log),
            None => gate,
        })
    }

    /// Whether what Landlock achieved satisfies the `sandbox` setting (docs/contract.md#policy):
    /// with `"require"`, a restriction that restricts nothing stops the call or the server.
    ///
    /// # Errors
    /// `config:` naming the setting and why Landlock is not enforced.
    pub fn check_sandbox(&self, enforcement: &Enforcement) -> Result<()> {
        if self.require_sandbox && matches!(enforcement, Enforcement::None(_)) {
            return Err(Error::Config(format!(
                "sandbox: \"require\" is set, but Landlock is {}",
                enforcement.describe()
            )));
        }
        Ok(())
    }

    /// The policy as the JSON document `readbox policy` prints: each setting's value and source.
    pub fn to_json(&self, sandbox: serde_json::Value) -> serde_json::Value {
        let settings = ROWS
            .iter()
            .map(|row| {
                let value = (row.show)(self);
                let source = self.source(row.setting);
                (
                    row.key.to_string(),
                    json!({ "value": value, "source": source }),
                )
            })
            .collect();
        let mut doc = serde_json::Map::new();
        doc.insert("settings".into(), serde_json::Value::Object(settings));
        doc.insert("sandbox".into(), sandbox);
        serde_json::Value::Object(doc)
    }
}

/// The file `READBOX_CONFIG` names, if it names one, as a layer: read as any config file, or,
/// under a locked system file, only beneath the locked roots (docs/contract.md#lock).
fn read_config_var(inputs: &Inputs, merged: &Merged) -> Result<Option<Layer>> {
    let Some(f) = inputs.vars.get("READBOX_CONFIG").filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    match &merged.bounds {
        None => parse_file(Path::new(f), false),
        Some(b) => {
            let excludes = merged.values.value(Setting::ExcludePatterns).globs();
            parse_locked_config(f, b, excludes, inputs.cwd.as_deref()).map(Some)
        }
    }
}

/// Fails closed on a root beneath an excluded name (`~/.ssh`), or beneath an excluded path of a
/// locked root (`.git/config` for a root narrowed to `.git`): it would serve what is excluded
/// (docs/security.md#excludes-on-every-component). `source` is where the roots came from.
fn refuse_excluded_roots(
    roots: &[PathBuf],
    locked_roots: &[PathBuf],
    excludes: &Excludes,
    source: &str,
) -> Result<()> {
    let refused =
        |why: &str| Error::Config(format!("allowed_directories ({source}): a root {why}"));
    for r in roots {
        if beneath_excluded_name(r, excludes) {
            return Err(refused("lies beneath an excluded name"));
        }
        if excluded_below(r, locked_roots, excludes) {
            return Err(refused("is excluded from the locked roots"));
        }
    }
    Ok(())
}

/// Whether a directory of `dir` above it has a name `excludes` matches (`~/.ssh` for a root
/// `~/.ssh/keys`). The directory's own name is not matched (docs/contract.md#decisions-on-details).
fn beneath_excluded_name(dir: &Path, excludes: &Excludes) -> bool {
    let ancestors = dir.parent().map(Path::components).into_iter().flatten();
    ancestors
        .into_iter()
        .any(|c| matches!(c, std::path::Component::Normal(n) if excludes.matches_name(n)))
}

/// Whether `dir`, or a directory between it and one of `anchors`, is a path `excludes` matches
/// below that anchor (`.git/config` for a root narrowed to `.git`).
fn excluded_below(dir: &Path, anchors: &[PathBuf], excludes: &Excludes) -> bool {
    anchors.iter().any(|a| {
        dir.strip_prefix(a)
            .is_ok_and(|rel| excludes.matches_any_prefix(rel))
    })
}
