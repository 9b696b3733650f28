//! The resolver's lexical path helpers, which touch nothing on disk: folding an absolute path,
//! the stack of components a walk pops, and the mount point a denial names.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, shown};

/// The denial of a path that crosses a mount point with `cross_mounts` off: it names the mount
/// point as the caller would reach it, the caller's argument up to `origin` (see [`Part`]),
/// its slashes folded (docs/contract.md#confinement). A mount point met before the argument's
/// own words (on the way to the working directory) is not named.
pub(super) fn crosses_mount(arg: &[u8], origin: usize, shown_arg: &str) -> Error {
    let words = &arg[..origin.min(arg.len())];
    let mut prefix: Vec<u8> = if words.starts_with(b"/") {
        b"/".to_vec()
    } else {
        Vec::new()
    };
    for (i, part) in words
        .split(|&b| b == b'/')
        .filter(|p| !p.is_empty())
        .enumerate()
    {
        if i > 0 {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(part);
    }
    if prefix.is_empty() || prefix == b"/" {
        return Error::Denied(shown_arg.into());
    }
    Error::Denied(format!(
        "{shown_arg}: crosses the mount point {} (cross_mounts is off)",
        shown(&prefix)
    ))
}

/// Folds `.`, `..` and repeated slashes of an absolute path lexically (`..` at `/` stays at `/`),
/// touching nothing on disk; `None` for a path with a prefix (none on Unix).
pub fn fold(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// A component waiting to be walked, with where it came from: the end, in the caller's
/// argument, of the component that led to it (itself, or the symlink whose target holds it); 0
/// for a component of the working directory. The caller's argument up to there is how the caller
/// reaches the object (for the mount point named in a denial).
pub(super) type Part = (OsString, usize);

/// Pushes the components of `p` on the stack `queue` so that the first component is popped
/// first, all from `origin`. `.` components are kept (they check that the current object is a
/// directory).
pub(super) fn push_components(queue: &mut Vec<Part>, p: &Path, origin: usize) {
    let bytes = p.as_os_str().as_bytes();
    let parts: Vec<&[u8]> = bytes
        .split(|&b| b == b'/')
        .filter(|s| !s.is_empty())
        .collect();
    for part in parts.into_iter().rev() {
        queue.push((OsStr::from_bytes(part).to_os_string(), origin));
    }
}

/// Pushes the components of the caller's argument, each with its own end as its origin.
pub(super) fn push_argument(queue: &mut Vec<Part>, arg: &[u8]) {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, &b) in arg
        .iter()
        .enumerate()
        .chain(std::iter::once((arg.len(), &b'/')))
    {
        if b == b'/' {
            if i > start {
                parts.push((start, i));
            }
            start = i + 1;
        }
    }
    for (from, to) in parts.into_iter().rev() {
        queue.push((OsStr::from_bytes(&arg[from..to]).to_os_string(), to));
    }
}

/// Pushes a symlink's target for the walk to follow next, its components from the link's
/// `origin`. A target that ends in `/` must name a directory, as the kernel requires: a `.` after
/// it checks that.
pub(super) fn push_target(queue: &mut Vec<Part>, target: &Path, origin: usize) {
    if target.as_os_str().as_bytes().ends_with(b"/") {
        queue.push((OsString::from("."), origin));
    }
    push_components(queue, target, origin);
}

pub(super) fn parent_or_self(p: &Path) -> PathBuf {
    p.parent()
        .map_or_else(|| p.to_path_buf(), Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_handles_dots_and_slashes() {
        assert_eq!(fold(Path::new("/a/./b//../c")), Some(PathBuf::from("/a/c")));
        assert_eq!(fold(Path::new("/../x")), Some(PathBuf::from("/x")));
    }

    #[test]
    fn components_pop_in_order() {
        let mut q = Vec::new();
        push_components(&mut q, Path::new("/a//b/./c"), 7);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let want: Vec<Part> = ["a", "b", ".", "c"]
            .iter()
            .map(|c| (OsString::from(c), 7))
            .collect();
        assert_eq!(order, want);
    }

    #[test]
    fn argument_components_remember_where_they_end() {
        let mut q = Vec::new();
        push_argument(&mut q, b"mnt//x/");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [(OsString::from("mnt"), 3), (OsString::from("x"), 6)]
        );
        let named = |arg: &[u8], origin| crosses_mount(arg, origin, "P").to_string();
        assert_eq!(
            named(b"a//mnt/x", 6),
            "denied: P: crosses the mount point a/mnt (cross_mounts is off)"
        );
        assert!(named(b"/r/mnt/x", 6).contains("mount point /r/mnt "));
        assert_eq!(named(b"x", 0), "denied: P");
    }
}
