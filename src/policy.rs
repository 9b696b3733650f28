//! The effective settings of one call and where each came from (docs/contract.md#policy).
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
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::envelope::Format;
use crate::error::{Error, Result};
use crate::resolve::{Excludes, Gate};
use crate::sandbox::Enforcement;

mod layer;
mod lock;
#[cfg(test)]
mod tests;

use layer::{Origin, SETTINGS, canonical_dir, parse_env, parse_file, var_of};
pub use layer::{parse_bool, parse_uint};
use lock::{Bounds, check_system_dirs, check_system_owner, parse_locked_config};

/// The system-wide config file, read when it exists.
pub const SYSTEM_CONFIG: &str = "/etc/readbox/config.toml";

/// The narrow-only roots layer: a `:`-separated list of absolute directories, applied after
/// every other layer, that can only narrow the roots (set but empty: no root at all). Unlike the
/// other variables it has no config key, and an empty value is not "unset".
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
            tools: crate::registry::NAMES.to_vec(),
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
        match &system {
            Some(l) if l.lock == Some(true) => {
                check_system_dirs(&inputs.system_file)?;
                check_system_owner(&inputs.system_file)?;
            }
            // An unlocked file locks nothing; a missing one may have been a lock, removed.
            Some(_) => {}
            None => check_system_dirs(&inputs.system_file)?,
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
                if let Some(b) = &bounds {
                    b.check_roots(o, roots, &canon)?;
                }
                explicit_roots = Some(canon);
                set("allowed_directories");
            }
            if let Some(tools) = &layer.tools {
                if let Some(b) = &bounds {
                    b.check_tools(o, tools)?;
                }
                p.tools = crate::registry::NAMES
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
                if let Some(b) = &bounds {
                    b.check_timeout(o, t)?;
                }
                p.timeout = t;
                set("timeout");
            }
            for (key, value, slot) in [
                (
                    "max_output_bytes",
                    layer.max_output_bytes,
                    &mut p.max_output_bytes,
                ),
                (
                    "max_read_bytes",
                    layer.max_read_bytes,
                    &mut p.max_read_bytes,
                ),
                ("max_entries", layer.max_entries, &mut p.max_entries),
            ] {
                if let Some(v) = value {
                    if let Some(b) = &bounds {
                        b.check_limit(o, key, v)?;
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
                if let Some(b) = &bounds {
                    b.check_audit_log(o, a)?;
                }
                p.audit_log = Some(a.clone());
                p.sources.insert("audit_log", o.source(""));
            }
            if let Some(deny) = layer.deny_hardlinks {
                if let Some(b) = &bounds {
                    b.check_hardlinks(o, deny)?;
                }
                explicit_hardlinks = Some(deny);
                p.sources.insert("hardlinks", o.source(var_of("hardlinks")));
            }
            if let Some(cross) = layer.cross_mounts {
                if let Some(b) = &bounds {
                    b.check_cross_mounts(o, cross)?;
                }
                p.cross_mounts = cross;
                p.sources
                    .insert("cross_mounts", o.source(var_of("cross_mounts")));
            }
            if let Some(require) = layer.require_sandbox {
                if let Some(b) = &bounds {
                    b.check_sandbox(o, require)?;
                }
                p.require_sandbox = require;
                p.sources.insert("sandbox", o.source(var_of("sandbox")));
            }
            if let Some(redact) = layer.redact {
                if let Some(b) = &bounds {
                    b.check_redact(o, redact)?;
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
        // fails closed (docs/security.md#excludes-on-every-component).
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
            // The root's own name is not matched (docs/contract.md#decisions-on-details); its
            // ancestors' names are.
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
            // A current directory outside every root stays the working directory, beneath no
            // root: relative paths are then denied, never answered for another directory
            // (docs/contract.md#policy).
            None => match cwd {
                Some(c) => c,
                None => p.roots[0].clone(),
            },
        };
        // Last of all, so that no layer can widen what it leaves.
        if let Some(v) = inputs.vars.get(NARROW_ROOTS_VAR) {
            p.narrow_roots(v)?;
        }
        Ok(p)
    }

    /// Whether the roots were given (`READBOX_ROOTS`, `allowed_directories` in a config file, or
    /// a lock), rather than taken from the working directory by default. `readbox mcp` never
    /// serves a working directory it did not choose (docs/contract.md#mcp).
    pub fn roots_configured(&self) -> bool {
        self.lock
            || self
                .sources
                .get("allowed_directories")
                .is_some_and(|s| s != "default")
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
