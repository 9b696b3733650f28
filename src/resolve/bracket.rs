//! Checks that bracket the reads (docs/security.md#checks-bracket-the-reads): an object is
//! checked once while it is reached, and again after it was used. After the gate has opened a
//! path, and after a walk has listed a directory or read files through a directory's handle, the
//! object is found again from its root's handle by the same root-relative path, and must be the
//! same (device, inode). The excludes' verdict depends only on that path, so it still holds.
//! What came from an object that fails this is dropped, and the call answers `denied: PATH`.
//!
//! Invariant: nothing read through a handle (content, names, metadata, or an error other than
//! `denied:`) reaches the answer unless the object behind the handle, or a directory whose handle
//! it was reached through, was found again at its place after the read.
//!
//! With openat2 the second check is one `openat2(root, rel, O_PATH, RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS [| RESOLVE_NO_XDEV])` call: the kernel follows no
//! link and verifies, once the lookup is done, that the object lies beneath the root. Without
//! openat2 (and for paths longer than the kernel takes in one call) it goes component by
//! component from the root, as a resolution does. The window left is an object moved out of its
//! place and back between the two checks.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;

use rustix::fs::Stat;
use rustix::io::Errno;

use super::{Gate, Node, Step, errno_io, openat2_beneath, scarce};
use crate::error::{Error, Result};

/// The longest root-relative path found again in one openat2 call (the kernel's `PATH_MAX`,
/// with its terminating NUL).
const ONE_CALL_MAX: usize = 4095;

/// Directories waiting to be found again beyond which they are, whatever the reads gave: the
/// list stays small however many directories a search meets without a match.
const MAX_PENDING: usize = 64;

/// Where a directory was read through: its root, its path below it, its identity. No handle is
/// kept, so waiting directories hold no file descriptor.
#[derive(Debug)]
pub(super) struct Place {
    root: usize,
    rel: PathBuf,
    stat: Stat,
}

fn same(a: &Stat, b: &Stat) -> bool {
    a.st_dev == b.st_dev && a.st_ino == b.st_ino
}

impl Gate {
    /// Finds the object at `rel` beneath root `root` again from the root's handle, without
    /// following links or crossing mounts (unless mounts may be crossed). `Ok(true)` when it is
    /// the object `want` describes, `Ok(false)` when it is another one or cannot be found there.
    ///
    /// # Errors
    /// The process ran short of descriptors or memory, or the kernel kept asking for a retry:
    /// nothing could be concluded.
    pub(super) fn refind(
        &self,
        root: usize,
        rel: &Path,
        want: &Stat,
    ) -> std::result::Result<bool, Errno> {
        let r = &self.roots[root];
        if rel.as_os_str().is_empty() {
            return Ok(same(&r.stat, want));
        }
        let verdict = |e: Errno| {
            if scarce(e) || e == Errno::AGAIN {
                Err(e)
            } else {
                Ok(false)
            }
        };
        if rel.as_os_str().len() <= ONE_CALL_MAX
            && let Some(opened) = openat2_beneath(r.fd.as_fd(), rel, !self.options.cross_mounts)
        {
            return match opened.and_then(|fd| rustix::fs::fstat(&fd)) {
                Ok(st) => Ok(same(&st, want)),
                Err(e) => verdict(e),
            };
        }
        let mut here = Step {
            fd: r.fd.clone(),
            name: Default::default(),
            stat: r.stat,
        };
        for name in rel.iter() {
            match self.step(here.fd.as_fd(), name, root) {
                Ok((fd, stat)) => {
                    here = Step {
                        fd: fd.into(),
                        name: Default::default(),
                        stat,
                    }
                }
                Err(e) => return verdict(e),
            }
        }
        Ok(same(&here.stat, want))
    }

    /// Finds `node` again at its place (see [`Gate::refind`]); `shown` is the caller's path.
    ///
    /// # Errors
    /// `denied: SHOWN` when the object is no longer there; `io:` when the process ran short of
    /// descriptors or memory.
    pub fn confirm(&self, node: &Node, shown: &str) -> Result<()> {
        match self.refind(node.root, &node.rel, &node.stat) {
            Ok(true) => Ok(()),
            Ok(false) => Err(Error::Denied(shown.into())),
            Err(e) => Err(Error::io(shown, &errno_io(e))),
        }
    }

    /// Records that a walk read a file through the handle of directory `dir`. What came from the
    /// read may be used once [`Gate::settle`] has found `dir` again; until then it is pending.
    /// Safe to call from several threads.
    pub fn read_through(&self, dir: &Node) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let known = pending
            .iter()
            .any(|d| same(&d.stat, &dir.stat) && d.root == dir.root && d.rel == dir.rel);
        if !known {
            pending.push(Place {
                root: dir.root,
                rel: dir.rel.clone(),
                stat: dir.stat,
            });
        }
    }

    /// Finds again every directory that files were read through since the last settle (one
    /// lookup per directory, however many files), so that what was read before this call may be
    /// used. `shown` is the caller's path.
    ///
    /// # Errors
    /// `denied: SHOWN` for the first directory that is no longer at its place; `io:` when the
    /// process ran short of descriptors or memory.
    pub fn settle(&self, shown: &str) -> Result<()> {
        let places =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner));
        for p in &places {
            match self.refind(p.root, &p.rel, &p.stat) {
                Ok(true) => {}
                Ok(false) => return Err(Error::Denied(shown.into())),
                Err(e) => return Err(Error::io(shown, &errno_io(e))),
            }
        }
        Ok(())
    }

    /// [`Gate::settle`] when `now` (something read is about to be used), or when many
    /// directories wait; else nothing yet.
    ///
    /// # Errors
    /// As [`Gate::settle`].
    pub fn settle_if(&self, now: bool, shown: &str) -> Result<()> {
        let waiting = || {
            self.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .len()
        };
        if now || waiting() >= MAX_PENDING {
            self.settle(shown)
        } else {
            Ok(())
        }
    }

    /// The error of a resolution that stopped in the directory on top of `stack` (beneath root
    /// `root`), once that directory was found again at its place: a missing entry, a refusal or
    /// a mount point met in a directory that had been moved out of the root must not be told.
    /// The stack's handles are given back first, so that a resolution that ran out of them can
    /// still check.
    pub(super) fn unless_moved(
        &self,
        root: usize,
        stack: &mut Vec<Step>,
        err: Error,
        shown: &str,
    ) -> Error {
        if matches!(&err, Error::Denied(m) if m == shown) {
            return err;
        }
        let rel: std::path::PathBuf = stack[1..].iter().map(|s| s.name.as_os_str()).collect();
        let stat = stack.last().expect("the root is always on the stack").stat;
        stack.truncate(1);
        match self.refind(root, &rel, &stat) {
            Ok(true) => err,
            Ok(false) => Error::Denied(shown.into()),
            Err(e) => Error::io(shown, &errno_io(e)),
        }
    }
}
