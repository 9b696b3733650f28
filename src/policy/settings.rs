//! The settings, one row each (docs/contract.md#policy): the config key, the environment
//! variable, the default, the kind of value (which says how a file and a variable spell it), how
//! a lock narrows it (docs/contract.md#lock), and how `readbox policy` shows it.
//!
//! Invariant: nothing else spells a setting's key or variable. The layers, the lock and
//! `readbox policy` read them from [`ROWS`]; everything else names a [`Setting`], so a misspelt
//! setting does not compile. A new setting is a variant, its row, and its field in
//! [`Policy`] (declared, and filled where the policy is resolved).

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{DEFAULT_EXCLUDES, Policy};
use crate::envelope::Format;

/// A setting of the policy. The variants are in the order of [`ROWS`], which is the order
/// `readbox policy` shows them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Setting {
    /// `working_directory`, `READBOX_WORKDIR`.
    WorkingDirectory,
    /// `allowed_directories`, `READBOX_ROOTS`.
    AllowedDirectories,
    /// `allowed_tools`, `READBOX_TOOLS`.
    AllowedTools,
    /// `exclude_patterns`, `READBOX_EXCLUDE`.
    ExcludePatterns,
    /// `timeout`, `READBOX_TIMEOUT`.
    Timeout,
    /// `max_output_bytes`, `READBOX_MAX_OUTPUT_BYTES`.
    MaxOutputBytes,
    /// `max_read_bytes`, `READBOX_MAX_READ_BYTES`.
    MaxReadBytes,
    /// `max_entries`, `READBOX_MAX_ENTRIES`.
    MaxEntries,
    /// `format`, `READBOX_FORMAT`.
    Format,
    /// `respect_ignore_files`, `READBOX_RESPECT_IGNORE_FILES`.
    RespectIgnoreFiles,
    /// `audit_log`, config files only.
    AuditLog,
    /// `lock`, config files only.
    Lock,
    /// `hardlinks`, `READBOX_HARDLINKS`.
    Hardlinks,
    /// `cross_mounts`, `READBOX_CROSS_MOUNTS`.
    CrossMounts,
    /// `sandbox`, `READBOX_SANDBOX`.
    Sandbox,
    /// `redact`, `READBOX_REDACT`.
    Redact,
}

impl Setting {
    /// Every setting, in the order `readbox policy` shows them.
    pub fn all() -> impl Iterator<Item = Setting> {
        ROWS.iter().map(|r| r.setting)
    }

    /// The config key (`max_entries`), which `readbox policy` shows.
    pub fn key(self) -> &'static str {
        self.row().key
    }

    /// The environment variable (`READBOX_MAX_ENTRIES`), if the setting has one.
    pub fn var(self) -> Option<&'static str> {
        self.row().var
    }

    /// What the setting means, in one line.
    pub fn help(self) -> &'static str {
        self.row().help
    }

    /// The default in words, where the process decides it or there is none (`the current
    /// directory`, `none`); `None` where the built-in default value says it.
    pub fn default_in_words(self) -> Option<&'static str> {
        self.row().default_in_words
    }

    /// The setting's row of [`ROWS`].
    pub(super) fn row(self) -> &'static Row {
        &ROWS[self as usize]
    }

    /// The row of the setting with config key `key`, if there is one.
    pub(super) fn by_key(key: &str) -> Option<&'static Row> {
        ROWS.iter().find(|r| r.key == key)
    }
}

/// One setting: everything the layers, the lock and `readbox policy` need to know of it.
pub(super) struct Row {
    /// Which setting; rows are in the order of the variants.
    pub(super) setting: Setting,
    /// The config file key.
    pub(super) key: &'static str,
    /// The environment variable, `None` for a setting only config files set.
    pub(super) var: Option<&'static str>,
    /// The values it takes, and how a file and a variable write them.
    pub(super) kind: ValueKind,
    /// The built-in default, `None` where it depends on the process (the working directory and
    /// the roots), on the lock (hardlinks), or is absent (the audit log).
    pub(super) default: Option<fn() -> Value>,
    /// How a later layer may change it under a lock.
    pub(super) narrow: Narrow,
    /// What it means, in one line (for the man page and `readbox help`).
    pub(super) help: &'static str,
    /// The default in words, where it depends on the process (the current directory) or is
    /// absent; `None` where the built-in default says it.
    pub(super) default_in_words: Option<&'static str>,
    /// Its value as `readbox policy` shows it.
    pub(super) show: fn(&Policy) -> serde_json::Value,
}

/// What values a setting takes, which decides how a config file and a variable write them
/// (docs/contract.md#policy).
pub(super) enum ValueKind {
    /// A directory, made canonical against the current directory.
    Dir,
    /// Directories (`:`-separated in a variable), made canonical against the working directory
    /// as it stands at their own layer.
    Dirs,
    /// Tool names of the registry (`,`-separated in a variable, trimmed).
    Tools,
    /// Exclude globs (`:`-separated in a variable, where empty means none).
    Globs,
    /// Seconds, finite and above 0.
    Seconds,
    /// A whole number, 0 or more.
    Count,
    /// An answer format, `json` or `text`.
    Format,
    /// A boolean.
    Flag,
    /// One of two words: the first is off, the second on.
    Choice(&'static str, &'static str),
    /// A file; a relative one is taken from the config file's folder.
    File,
}

/// How a lock narrows a setting: what a later layer may still do to it (docs/contract.md#lock).
pub(super) enum Narrow {
    /// Anything.
    Free,
    /// Name only directories within the locked roots.
    Within,
    /// Name only tools among the locked ones.
    Among,
    /// Only add to the list, which it no longer replaces.
    Added,
    /// Only lower it.
    Lowered,
    /// Nothing: it cannot be changed.
    Fixed,
    /// Not turn it off while the lock has it on, or left it unset; the words say why.
    StaysOn(&'static str),
    /// Not turn it on while the lock has it off.
    StaysOff(&'static str),
    /// As [`Narrow::StaysOn`]; and the lock turns it on unless the locking layer itself sets it.
    TurnsOn(&'static str),
    /// The setting that locks: turning it on freezes the bounds, and it cannot be turned off.
    Locks,
}

/// A setting's value as a layer gives it, parsed but not merged; once merged, directories are
/// canonical.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    /// A directory or a file.
    Path(PathBuf),
    /// Directories.
    Paths(Vec<PathBuf>),
    /// Tool names, as given (merging keeps the registry's order).
    Tools(Vec<&'static str>),
    /// Exclude globs.
    Globs(Vec<String>),
    /// Seconds.
    Seconds(f64),
    /// A whole number.
    Count(u64),
    /// An answer format.
    Format(Format),
    /// On or off.
    Flag(bool),
}

impl Value {
    pub(super) fn path(&self) -> &Path {
        match self {
            Value::Path(p) => p,
            other => other.mismatch("a path"),
        }
    }

    pub(super) fn paths(&self) -> &[PathBuf] {
        match self {
            Value::Paths(p) => p,
            other => other.mismatch("paths"),
        }
    }

    pub(super) fn tools(&self) -> &[&'static str] {
        match self {
            Value::Tools(t) => t,
            other => other.mismatch("tools"),
        }
    }

    pub(super) fn globs(&self) -> &[String] {
        match self {
            Value::Globs(g) => g,
            other => other.mismatch("globs"),
        }
    }

    pub(super) fn seconds(&self) -> f64 {
        match self {
            Value::Seconds(s) => *s,
            other => other.mismatch("seconds"),
        }
    }

    pub(super) fn count(&self) -> u64 {
        match self {
            Value::Count(n) => *n,
            other => other.mismatch("a count"),
        }
    }

    pub(super) fn format(&self) -> Format {
        match self {
            Value::Format(f) => *f,
            other => other.mismatch("a format"),
        }
    }

    pub(super) fn flag(&self) -> bool {
        match self {
            Value::Flag(b) => *b,
            other => other.mismatch("a flag"),
        }
    }

    /// A row whose kind and accessor disagree: a mistake in this module, which the unit tests
    /// of every setting catch.
    fn mismatch(&self, wanted: &str) -> ! {
        unreachable!("expected {wanted}, the setting holds {self:?}")
    }
}

/// How many settings there are.
const COUNT: usize = ROWS.len();

/// Something for each setting, found by the setting's place in [`ROWS`]: what one layer sets,
/// what the layers merged so far hold, or where each came from.
#[derive(Debug, Clone)]
pub(super) struct BySetting<T>([Option<T>; COUNT]);

impl<T> Default for BySetting<T> {
    fn default() -> Self {
        BySetting([const { None }; COUNT])
    }
}

impl<T> BySetting<T> {
    /// The entry of `s`, if it has one.
    pub(super) fn get(&self, s: Setting) -> Option<&T> {
        self.0[s as usize].as_ref()
    }

    pub(super) fn set(&mut self, s: Setting, v: T) {
        self.0[s as usize] = Some(v);
    }
}

/// Settings and their values.
pub(super) type Values = BySetting<Value>;

impl Values {
    /// The built-in defaults of the settings that have one.
    pub(super) fn defaults() -> Values {
        let mut values = Values::default();
        for row in ROWS {
            if let Some(default) = row.default {
                values.set(row.setting, default());
            }
        }
        values
    }

    /// The value of `s`, which has a default and so is always set.
    pub(super) fn value(&self, s: Setting) -> &Value {
        self.get(s)
            .unwrap_or_else(|| unreachable!("{s:?} has a default"))
    }
}

/// A path as `readbox policy` shows it.
fn path_json(p: &Path) -> serde_json::Value {
    serde_json::Value::String(p.to_string_lossy().into_owned())
}

/// The settings, in the order of [`Setting`]'s variants and of `readbox policy`.
pub(super) const ROWS: &[Row] = &[
    Row {
        setting: Setting::WorkingDirectory,
        key: "working_directory",
        var: Some("READBOX_WORKDIR"),
        kind: ValueKind::Dir,
        default: None,
        narrow: Narrow::Free,
        help: "the directory relative paths are taken from; set, it must lie beneath a root",
        default_in_words: Some(
            "the current directory; outside every root, relative paths are denied",
        ),
        show: |p| path_json(&p.workdir),
    },
    Row {
        setting: Setting::AllowedDirectories,
        key: "allowed_directories",
        var: Some("READBOX_ROOTS"),
        kind: ValueKind::Dirs,
        default: None,
        narrow: Narrow::Within,
        help: "the roots, separated by colons; nothing outside them is read",
        default_in_words: Some("the working directory"),
        show: |p| serde_json::Value::Array(p.roots.iter().map(|r| path_json(r)).collect()),
    },
    Row {
        setting: Setting::AllowedTools,
        key: "allowed_tools",
        var: Some("READBOX_TOOLS"),
        kind: ValueKind::Tools,
        default: Some(|| Value::Tools(crate::registry::NAMES.to_vec())),
        narrow: Narrow::Among,
        help: "the enabled tools, separated by commas; another tool answers disabled",
        default_in_words: None,
        show: |p| json!(p.tools),
    },
    Row {
        setting: Setting::ExcludePatterns,
        key: "exclude_patterns",
        var: Some("READBOX_EXCLUDE"),
        kind: ValueKind::Globs,
        default: Some(|| Value::Globs(DEFAULT_EXCLUDES.iter().map(ToString::to_string).collect())),
        narrow: Narrow::Added,
        help: "globs on path components that are never read, separated by colons; empty means none",
        default_in_words: None,
        show: |p| json!(p.excludes),
    },
    Row {
        setting: Setting::Timeout,
        key: "timeout",
        var: Some("READBOX_TIMEOUT"),
        kind: ValueKind::Seconds,
        default: Some(|| Value::Seconds(10.0)),
        narrow: Narrow::Lowered,
        help: "wall time of a call, in seconds (finite, above 0)",
        default_in_words: None,
        show: |p| json!(p.timeout),
    },
    Row {
        setting: Setting::MaxOutputBytes,
        key: "max_output_bytes",
        var: Some("READBOX_MAX_OUTPUT_BYTES"),
        kind: ValueKind::Count,
        default: Some(|| Value::Count(32_768)),
        narrow: Narrow::Lowered,
        help: "the output is cut to this many bytes, and the envelope says truncated",
        default_in_words: None,
        show: |p| json!(p.max_output_bytes),
    },
    Row {
        setting: Setting::MaxReadBytes,
        key: "max_read_bytes",
        var: Some("READBOX_MAX_READ_BYTES"),
        kind: ValueKind::Count,
        default: Some(|| Value::Count(8_388_608)),
        narrow: Narrow::Lowered,
        help: "the bytes of file content one call may read, over all files",
        default_in_words: None,
        show: |p| json!(p.max_read_bytes),
    },
    Row {
        setting: Setting::MaxEntries,
        key: "max_entries",
        var: Some("READBOX_MAX_ENTRIES"),
        kind: ValueKind::Count,
        default: Some(|| Value::Count(10_000)),
        narrow: Narrow::Lowered,
        help: "the directory entries one call may read",
        default_in_words: None,
        show: |p| json!(p.max_entries),
    },
    Row {
        setting: Setting::Format,
        key: "format",
        var: Some("READBOX_FORMAT"),
        kind: ValueKind::Format,
        default: Some(|| Value::Format(Format::Json)),
        narrow: Narrow::Free,
        help: "json (one envelope line) or text (the output as it is, errors on standard error)",
        default_in_words: None,
        show: |p| json!(p.format.name()),
    },
    Row {
        setting: Setting::RespectIgnoreFiles,
        key: "respect_ignore_files",
        var: Some("READBOX_RESPECT_IGNORE_FILES"),
        kind: ValueKind::Flag,
        default: Some(|| Value::Flag(true)),
        narrow: Narrow::Free,
        help: "whether find and grep honour .gitignore, .ignore and .git/info/exclude",
        default_in_words: None,
        show: |p| json!(p.respect_ignore_files),
    },
    Row {
        setting: Setting::AuditLog,
        key: "audit_log",
        var: None,
        kind: ValueKind::File,
        default: None,
        narrow: Narrow::Fixed,
        help: "a file to which each call appends two JSON lines, one as it begins and one as it ends",
        default_in_words: Some("none"),
        show: |p| {
            p.audit_log
                .as_deref()
                .map_or(serde_json::Value::Null, path_json)
        },
    },
    Row {
        setting: Setting::Lock,
        key: "lock",
        var: None,
        kind: ValueKind::Flag,
        default: Some(|| Value::Flag(false)),
        narrow: Narrow::Locks,
        help: "makes every later layer narrow-only: roots within, tools among, excludes added, limits lower, redaction kept on",
        default_in_words: None,
        show: |p| json!(p.lock),
    },
    Row {
        setting: Setting::Hardlinks,
        key: "hardlinks",
        var: Some("READBOX_HARDLINKS"),
        kind: ValueKind::Choice("allow", "deny"),
        // Allow, but deny once a lock is in force.
        default: None,
        narrow: Narrow::StaysOn("cannot allow hardlinks under a lock that denies them"),
        help: "allow or deny regular files with more than one link",
        default_in_words: Some("allow, or deny when a lock is in force"),
        show: |p| json!(if p.deny_hardlinks { "deny" } else { "allow" }),
    },
    Row {
        setting: Setting::CrossMounts,
        key: "cross_mounts",
        var: Some("READBOX_CROSS_MOUNTS"),
        kind: ValueKind::Flag,
        default: Some(|| Value::Flag(false)),
        narrow: Narrow::StaysOff("cannot cross mounts under a lock that does not"),
        help: "whether paths may cross onto filesystems mounted beneath a root",
        default_in_words: None,
        show: |p| json!(p.cross_mounts),
    },
    Row {
        setting: Setting::Sandbox,
        key: "sandbox",
        var: Some("READBOX_SANDBOX"),
        kind: ValueKind::Choice("best-effort", "require"),
        default: Some(|| Value::Flag(false)),
        narrow: Narrow::StaysOn("cannot be relaxed under a lock that requires it"),
        help: "best-effort or require: with require, a kernel without Landlock is a config error",
        default_in_words: None,
        show: |p| {
            json!(if p.require_sandbox {
                "require"
            } else {
                "best-effort"
            })
        },
    },
    Row {
        setting: Setting::Redact,
        key: "redact",
        var: Some("READBOX_REDACT"),
        kind: ValueKind::Flag,
        default: Some(|| Value::Flag(true)),
        narrow: Narrow::TurnsOn("cannot be turned off under a lock"),
        help: "whether credentials in what cat, head, tail, grep and diff read are shown as \
                  [REDACTED:RULE]; under a lock only the locked file may turn it off",
        default_in_words: None,
        show: |p| json!(p.redact),
    },
];
