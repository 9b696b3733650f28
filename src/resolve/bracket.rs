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

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;

use rustix::fs::Stat;
use rustix::io::Errno;

use super::{Gate, Node, Step, errno_io, openat2_beneath};
use crate::error::{Error, Result, scarce};

/// The longest root-relative path found again in one openat2 call (the kernel's `PATH_MAX`,
/// with its terminating NUL).
const ONE_CALL_MAX: usize = 4095;

/// Directories waiting to be found again beyond which they all are, whatever they were read
/// for: the list stays small however many directories a walk meets.
const MAX_PENDING: usize = 256;

/// A directory waiting to be found again: its root, its path below it and its identity. No
/// handle is kept, so waiting directories hold no file descriptor.
#[derive(Debug)]
struct Place {
    root: usize,
    rel: PathBuf,
    stat: Stat,
}

impl Place {
    fn is(&self, dir: &Node) -> bool {
        same(&self.stat, &dir.stat) && self.root == dir.root && self.rel == dir.rel
    }
}

/// The directories a walk read through and has not found again yet, and the tickets of reads.
/// Those that files were read through and those only listed are kept apart, so that finding the
/// first kind again before output never moves the second.
#[derive(Debug, Default)]
pub(super) struct Waiting {
    /// Directories that files were read through.
    read: Vec<Place>,
    /// Directories only listed so far.
    listed: Vec<Place>,
    /// The ticket of the next read.
    next: u64,
    /// Every read with a ticket below this was covered by a settle.
    covered: u64,
}

impl Waiting {
    fn add(&mut self, dir: &Node, files_read: bool) {
        // The files of a directory are read one after another: its place is most often the last.
        if self.read.last().is_some_and(|p| p.is(dir)) || self.read.iter().any(|p| p.is(dir)) {
            return;
        }
        if let Some(i) = self.listed.iter().position(|p| p.is(dir)) {
            if files_read {
                let place = self.listed.swap_remove(i);
                self.read.push(place);
            }
            return;
        }
        let place = Place {
            root: dir.root,
            rel: dir.rel.clone(),
            stat: dir.stat,
        };
        if files_read {
            self.read.push(place);
        } else {
            self.listed.push(place);
        }
    }

    fn len(&self) -> usize {
        self.read.len() + self.listed.len()
    }
}

/// A read made through a directory's handle, in the order reads were recorded
/// ([`Gate::read_through`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

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
            name: OsString::new(),
            stat: r.stat,
        };
        for name in rel {
            match self.step(here.fd.as_fd(), name, root) {
                Ok((fd, stat)) => {
                    here = Step {
                        fd: fd.into(),
                        name: OsString::new(),
                        stat,
                    }
                }
                Err(e) => return verdict(e),
            }
        }
        Ok(same(&here.stat, want))
    }

    /// Finds `node` again at its place: from its root's handle, by its root-relative path, without
    /// following links, the same (device, inode). `shown` is the caller's path.
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

    /// Records that a walk read a file through the handle of directory `dir`, and returns the
    /// read's ticket. What came from the read may be used once `dir` was found again since
    /// ([`Gate::settle_for`], [`Gate::settle`]); until then it is pending. Safe to call from
    /// several threads.
    pub fn read_through(&self, dir: &Node) -> Ticket {
        let mut waiting = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        waiting.add(dir, true);
        waiting.next += 1;
        Ticket(waiting.next - 1)
    }

    /// Records that a walk listed directory `dir` and will use the listing only through files
    /// read in it and through its subdirectories (each found again on its own): it waits, as
    /// after [`Gate::read_through`], but output needs it found again only once files were read
    /// through it; the final [`Gate::settle`] finds it again in any case.
    pub fn listed(&self, dir: &Node) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(dir, false);
    }

    /// Finds again every waiting directory (one lookup per directory, however many files were
    /// read through it), so that whatever was read before this call may be used. Call it before
    /// the answer, and before an error that what was read could have caused. `shown` is the
    /// caller's path.
    ///
    /// # Errors
    /// `denied: SHOWN` for the first directory that is no longer at its place; `io:` when the
    /// process ran short of descriptors or memory.
    pub fn settle(&self, shown: &str) -> Result<()> {
        self.settle_where(shown, true)
    }

    /// Before output that came from the read with `ticket` (if any): finds again the waiting
    /// directories that files were read through, unless a settle begun after that read already
    /// did (one settle covers every read done before it, however late its result is printed);
    /// and every waiting directory once many wait.
    ///
    /// # Errors
    /// As [`Gate::settle`].
    pub fn settle_for(&self, ticket: Option<Ticket>, shown: &str) -> Result<()> {
        let (many, covered) = {
            let waiting = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            (
                waiting.len() >= MAX_PENDING,
                ticket.is_none_or(|t| t.0 < waiting.covered),
            )
        };
        if many {
            self.settle(shown)
        } else if !covered {
            self.settle_where(shown, false)
        } else {
            Ok(())
        }
    }

    /// Finds again the directories that files were read through, and with `listed` those only
    /// listed too.
    fn settle_where(&self, shown: &str, listed: bool) -> Result<()> {
        let (places, through) = {
            let mut waiting = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            let mut due = std::mem::take(&mut waiting.read);
            if listed {
                due.append(&mut waiting.listed);
            }
            (due, waiting.next)
        };
        for p in &places {
            match self.refind(p.root, &p.rel, &p.stat) {
                Ok(true) => {}
                Ok(false) => return Err(Error::Denied(shown.into())),
                Err(e) => return Err(Error::io(shown, &errno_io(e))),
            }
        }
        // Every read with a ticket below `through` was waiting then, or had been settled.
        let mut waiting = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        waiting.covered = waiting.covered.max(through);
        Ok(())
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
