//! The roots a client offers (docs/contract.md#mcp), narrowed to the configured roots: each
//! `file://` URI's path is decoded, folded lexically and decided by readbox's own gate, and what
//! survives is handed to the calls as `READBOX_NARROW_ROOTS`.
//!
//! Invariants: a client's path reaches the filesystem only through the gate, as any path a call
//! names: confined beneath the configured roots, the excludes applied, and outside the roots
//! nothing followed but a link in a root's ancestor that leads back beneath a root. So whether
//! anything else exists outside cannot change the answer. [`narrow`] returns only canonical
//! directories, each a configured root or a directory that the gate reached beneath one; it can
//! return none. It never widens: the calls' policy checks the same again, and refuses the
//! variable when it would.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::policy::Policy;
use crate::resolve::{Gate, NodeKind, fold};

/// Where a call may read: the configured roots, or the intersection with a client's roots
/// (canonical directories; empty: nothing at all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Narrowing {
    Configured,
    To(Vec<PathBuf>),
}

impl Narrowing {
    /// Where a call may read under both `self` and `other`: each directory of one that lies at
    /// or beneath a directory of the other (all are canonical, compared by whole components).
    pub(super) fn and(&self, other: &Narrowing) -> Narrowing {
        match (self, other) {
            (Narrowing::Configured, n) | (n, Narrowing::Configured) => n.clone(),
            (Narrowing::To(a), Narrowing::To(b)) => {
                let within = |d: &PathBuf, of: &[PathBuf]| of.iter().any(|o| d.starts_with(o));
                let mut both: Vec<PathBuf> = Vec::new();
                for d in a
                    .iter()
                    .filter(|d| within(d, b))
                    .chain(b.iter().filter(|d| within(d, a)))
                {
                    if !both.contains(d) {
                        both.push(d.clone());
                    }
                }
                let nested = |d: &PathBuf| both.iter().any(|o| o != d && d.starts_with(o));
                Narrowing::To(both.iter().filter(|d| !nested(d)).cloned().collect())
            }
        }
    }
}

/// The roots of the handshake session.
#[derive(Debug, Default)]
pub(super) struct RootsState {
    /// The client declared the roots capability in `initialize`.
    pub(super) capability: bool,
    /// The id of the latest `roots/list` we sent, while it is unanswered.
    pub(super) pending: Option<String>,
    /// The last answer, narrowed.
    pub(super) known: Option<Narrowing>,
}

/// The intersection of the client's roots with the configured roots: canonical directories,
/// each the whole of a configured root that a client root holds, or a directory that the gate
/// reaches beneath a configured root (not excluded, not through a symlink that leaves). A root
/// nested in another is left out; so is one with a `:` in its path, which the narrowing variable
/// cannot carry (leaving a root out only narrows).
pub(super) fn narrow(policy: &Policy, gate: &Gate, uris: &[&str]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for uri in uris {
        let Some(path) = file_uri_path(uri) else {
            eprintln!("readbox mcp: a client root that is not a local file:// URI is ignored");
            continue;
        };
        for dir in surviving(policy, gate, &path) {
            if dir.as_os_str().as_bytes().contains(&b':') {
                eprintln!("readbox mcp: a client root with ':' in its path is left out");
            } else if !found.contains(&dir) {
                found.push(dir);
            }
        }
    }
    let nested = |d: &PathBuf| found.iter().any(|o| o != d && d.starts_with(o));
    found.iter().filter(|d| !nested(d)).cloned().collect()
}

/// What survives of one client root (an absolute path, as the URI gave it).
fn surviving(policy: &Policy, gate: &Gate, client: &Path) -> Vec<PathBuf> {
    // A URI's `.` and `..` are removed lexically (RFC 3986, 5.2.4), so the folded path is what
    // the client named, whatever its components are on disk.
    let Some(client) = fold(client) else {
        return Vec::new();
    };
    // At or above configured roots (compared by whole components, touching nothing): they are
    // held whole.
    let held: Vec<PathBuf> = policy
        .roots
        .iter()
        .filter(|r| r.starts_with(&client))
        .cloned()
        .collect();
    if !held.is_empty() {
        return held;
    }
    // Anything else is the gate's to decide, as for a path a call names: outside the roots,
    // excluded, through a link that leaves, missing or not a directory all leave nothing alike.
    match gate.resolve(client.as_os_str().as_bytes()) {
        Ok(node) if node.kind() == NodeKind::Directory => vec![gate.path_of(&node)],
        _ => Vec::new(),
    }
}

/// The URIs of a `roots/list` result (`{"roots": [{"uri": "file:///…"}, …]}`); `None` when it is
/// not one.
pub(super) fn root_uris(result: &Value) -> Option<Vec<&str>> {
    result
        .get("roots")?
        .as_array()?
        .iter()
        .map(|r| r.get("uri").and_then(Value::as_str))
        .collect()
}

/// The local path of a `file://` URI (RFC 8089: an empty host or `localhost`, a percent-encoded
/// absolute path, no query or fragment); `None` for anything else.
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let scheme = uri.get(..7)?;
    if !scheme.eq_ignore_ascii_case("file://") {
        return None;
    }
    let rest = &uri[7..];
    let slash = rest.find('/')?;
    let (host, path) = rest.split_at(slash);
    if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) || path.contains(['?', '#']) {
        return None;
    }
    let mut bytes = Vec::with_capacity(path.len());
    let mut it = path.bytes();
    while let Some(b) = it.next() {
        if b == b'%' {
            let hi = (it.next()? as char).to_digit(16)?;
            let lo = (it.next()? as char).to_digit(16)?;
            bytes.push((hi * 16 + lo) as u8);
        } else {
            bytes.push(b);
        }
    }
    if bytes.contains(&0) {
        return None;
    }
    Some(PathBuf::from(OsString::from_vec(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_local_absolute_paths() {
        assert_eq!(
            file_uri_path("file:///tmp/a%20b/%C3%A9"),
            Some(PathBuf::from("/tmp/a b/é"))
        );
        assert_eq!(
            file_uri_path("file://localhost/etc"),
            Some(PathBuf::from("/etc"))
        );
        assert_eq!(file_uri_path("FILE:///x"), Some(PathBuf::from("/x")));
        assert_eq!(
            file_uri_path("file:///a%ff"),
            Some(PathBuf::from(OsString::from_vec(b"/a\xff".to_vec())))
        );
        for bad in [
            "file://host/etc",
            "http:///etc",
            "file:etc",
            "file://",
            "file:///a%2",
            "file:///a%zz",
            "file:///a%00b",
            "file:///a?b",
            "file:///a#b",
            "/etc",
        ] {
            assert_eq!(file_uri_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn roots_lists_must_be_uris() {
        let v =
            serde_json::json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]});
        assert_eq!(root_uris(&v), Some(vec!["file:///a", "file:///b"]));
        assert_eq!(
            root_uris(&serde_json::json!({"roots": [{"name": "x"}]})),
            None
        );
        assert_eq!(root_uris(&serde_json::json!({"roots": {}})), None);
        assert_eq!(root_uris(&serde_json::json!({})), None);
    }
}
