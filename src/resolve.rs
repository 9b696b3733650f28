//! The only way to reach an object on disk: confinement beneath the roots, the excludes, and
//! the safe open (docs/contract.md#confinement, docs/security.md#the-resolver).
//!
//! Invariant: every file descriptor a tool reads from comes from this module, and every one of
//! them was reached from a root's directory handle one component at a time, with
//! `O_PATH | O_NOFOLLOW`, testing each component against the excludes before touching it.
//!
//! How a path is resolved:
//! 1. The argument is made absolute (relative to the working directory) and folded lexically; if
//!    that lands beneath a root, its components are tested against the excludes first, so that a
//!    denial does not depend on what exists.
//! 2. The components are walked: above the roots only lexically (the roots are canonical, so
//!    their ancestors are real directories and `..` over them is exact; any other component there
//!    is denied); beneath a root with `openat(dir, name, O_PATH | O_NOFOLLOW)` relative to the
//!    directory handle reached so far. `..` pops a stack of ancestor handles, so it never asks the
//!    kernel for a parent and a directory renamed away cannot lead out. Symlinks are expanded here,
//!    at most [`MAX_SYMLINK_HOPS`] times; an absolute target is mapped onto a root by comparing
//!    whole components, never string prefixes.
//! 3. Each component met on the way, including those of symlink targets, is tested against the
//!    excludes by its name and by its root-relative path.
//! 4. Content is read only through [`Gate::open_read`]: the object must be a regular file on a
//!    real filesystem; it is re-opened for reading by name relative to its parent handle with
//!    `O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`, and must be the same (device, inode) that was checked.
//!    Directories are opened through their own handle (`openat(handle, ".")`).
//! 5. Checks bracket the reads (`resolve/bracket.rs`): once resolved, the object is found again from its
//!    root's handle by its root-relative path and must be the same (device, inode), so that a
//!    directory moved out of the root while the path was resolved through it yields nothing; an
//!    error met on the way is told only once the directory it was met in was found again. Walks
//!    do the same for each directory after reading through it.
//!
//! Errors name the path as the caller gave it, never a resolved target; every denial has the same
//! text, `denied: PATH`, whether or not the object exists. Running out of file descriptors is
//! `io:`, never a denial. A path through a mount point that is not crossed is denied with the
//! mount point named as the caller reaches it.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

use rustix::fs::{Mode, OFlags, Stat};
use rustix::io::Errno;

use crate::error::{Error, Result, scarce, shown};

mod aliases;
mod bracket;
mod excludes;
mod kind;
mod lexical;
mod stdin;
mod sys;

pub use bracket::Ticket;
pub use excludes::Excludes;
pub use kind::NodeKind;
pub use lexical::fold;
pub use stdin::Stdin;

use lexical::{Part, crosses_mount, parent_or_self, push_argument, push_components, push_target};
use sys::{OPENAT2, alias_target, errno_io, mount_id, on_pseudo_fs, open_beneath, openat2_beneath};

/// Components left in a path that cannot be walked further, beyond which the rest is not
/// examined (a path the kernel accepts holds at most 4096 bytes, so at most 2048 components).
const MAX_COMPONENTS: usize = 4096;

/// Symlinks expanded in one resolution before it fails with `io:` (as Linux's `ELOOP` limit).
pub const MAX_SYMLINK_HOPS: u32 = 40;

/// Why a relative path is denied when the working directory lies beneath no root; the error
/// never names the working directory (docs/contract.md#policy).
pub const WORKDIR_OUTSIDE: &str = "the working directory is outside the roots";

/// A root: its canonical path and a directory handle opened once at start.
#[derive(Debug)]
struct Root {
    path: PathBuf,
    fd: Arc<OwnedFd>,
    stat: Stat,
    /// Whether the root's own filesystem is a pseudo filesystem (checked once).
    pseudo: bool,
    /// The root's mount id, where statx reports it: without openat2, it is how a bind mount of
    /// the same filesystem (same device) is told apart.
    mnt_id: Option<u64>,
    /// Whether the root's filesystem may resolve a name to an entry of another name
    /// (`resolve/aliases.rs`).
    aliasing: bool,
    /// The root's path below the locked root it was narrowed from (empty otherwise): excludes
    /// are matched on paths relative to the locked root, so narrowing cannot re-anchor them.
    anchor: PathBuf,
}

/// How strictly the gate confines, beyond the roots and the excludes (docs/contract.md#policy,
/// docs/security.md#hard-links and #mounts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Refuse regular files with more than one link (a hardlink can give a second name, inside
    /// the roots, to a file that lives outside or is excluded).
    pub deny_hardlinks: bool,
    /// Follow paths onto other filesystems mounted beneath a root.
    pub cross_mounts: bool,
}

/// An object beneath a root, reached through the gate. It holds an `O_PATH` handle of the object
/// itself and of its parent directory, so later opens concern the very object that was checked.
#[derive(Debug, Clone)]
pub struct Node {
    root: usize,
    fd: Arc<OwnedFd>,
    parent: Option<Arc<OwnedFd>>,
    name: OsString,
    rel: PathBuf,
    stat: Stat,
    /// A mount point met in a walk while mounts are not crossed: listed, never entered or read.
    mount_point: bool,
}

impl Node {
    /// Whether `other` is this node or a clone of it (the same handle): while one of them is
    /// held, no other node can have that handle.
    pub fn is(&self, other: &Node) -> bool {
        Arc::ptr_eq(&self.fd, &other.fd)
    }

    /// The object's metadata (`fstat` of its handle; symlinks are never followed here).
    pub fn stat(&self) -> &Stat {
        &self.stat
    }

    /// Whether this is a mount point that the walk lists but does not enter (as `find -xdev`).
    pub fn is_mount_point(&self) -> bool {
        self.mount_point
    }

    /// The object's kind.
    pub fn kind(&self) -> NodeKind {
        NodeKind::of(&self.stat)
    }

    /// The object's file name (empty for a root).
    pub fn name(&self) -> &OsStr {
        &self.name
    }

    /// The object's path relative to its root (empty for the root itself).
    pub fn rel(&self) -> &Path {
        &self.rel
    }
}

/// The gate: the roots, their handles, the excludes and the working directory.
#[derive(Debug)]
pub struct Gate {
    roots: Vec<Root>,
    excludes: Excludes,
    /// Changed only by `readbox sh`'s `cd`, between commands.
    workdir: std::sync::RwLock<PathBuf>,
    options: Options,
    /// Directories that a walk read entries or files through, not yet found again at their place
    /// since (see [`Gate::settle`]).
    pending: Mutex<bracket::Waiting>,
    /// Objects no tool may reach whatever the excludes say (see [`Gate::hide`]).
    hidden: Hidden,
}

/// The objects a gate never hands out, listed nor opened (docs/security.md#the-audit-log): each
/// by its canonical path (so that it is denied whether or not it exists yet) and by its
/// (device, inode) (so that no other name of it, a hard link or a name the filesystem folds,
/// reaches it either).
#[derive(Debug, Default)]
struct Hidden {
    paths: Vec<PathBuf>,
    ids: Vec<(u64, u64)>,
}

impl Hidden {
    fn has_id(&self, st: &Stat) -> bool {
        self.ids
            .iter()
            .any(|&(dev, ino)| dev == st.st_dev && ino == st.st_ino)
    }
}

/// Where the walk of a path stands.
enum Pos {
    /// Above the roots: a canonical ancestor of at least one root, known only lexically.
    Above(PathBuf),
    /// Beneath root `root`: the stack of handles from the root down to the current directory.
    Beneath { root: usize, stack: Vec<Step> },
}

struct Step {
    fd: Arc<OwnedFd>,
    name: OsString,
    stat: Stat,
}

/// The root-relative path of the directory at the top of `stack` (its first step is the root).
fn rel_of(stack: &[Step]) -> PathBuf {
    stack[1..].iter().map(|s| s.name.as_os_str()).collect()
}

impl Gate {
    /// Opens a handle on each root. `roots` and `workdir` must be canonical (the policy
    /// canonicalises them once at start).
    ///
    /// # Errors
    /// `config:` when a root cannot be opened as a directory.
    pub fn new(
        roots: &[PathBuf],
        excludes: Excludes,
        workdir: PathBuf,
        options: Options,
    ) -> Result<Gate> {
        Gate::anchored(roots, &[], excludes, workdir, options)
    }

    /// A gate whose roots were narrowed from `locked` roots: a root's excludes are matched on
    /// paths relative to the locked root that holds it.
    ///
    /// # Errors
    /// `config:` when a root cannot be opened as a directory.
    pub fn anchored(
        roots: &[PathBuf],
        locked: &[PathBuf],
        excludes: Excludes,
        workdir: PathBuf,
        options: Options,
    ) -> Result<Gate> {
        let mut opened = Vec::with_capacity(roots.len());
        for path in roots {
            let anchor = locked
                .iter()
                .filter_map(|l| path.strip_prefix(l).ok())
                .max_by_key(|rel| rel.as_os_str().len())
                .map(Path::to_path_buf)
                .unwrap_or_default();
            let fd = rustix::fs::open(
                path.as_path(),
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| {
                Error::Config(format!(
                    "root {}: {}",
                    path.display(),
                    crate::error::describe_io(&errno_io(e))
                ))
            })?;
            let stat = rustix::fs::fstat(&fd).map_err(|e| {
                Error::Config(format!(
                    "root {}: {}",
                    path.display(),
                    crate::error::describe_io(&errno_io(e))
                ))
            })?;
            opened.push(Root {
                path: path.clone(),
                mnt_id: mount_id(&fd),
                anchor,
                pseudo: on_pseudo_fs(&fd),
                aliasing: aliases::may_alias(fd.as_fd()),
                fd: Arc::new(fd),
                stat,
            });
        }
        Ok(Gate {
            roots: opened,
            excludes,
            workdir: std::sync::RwLock::new(workdir),
            options,
            pending: Mutex::new(bracket::Waiting::default()),
            hidden: Hidden::default(),
        })
    }

    /// Makes `path` unreachable through this gate, whatever the excludes say: it is denied as an
    /// excluded object is, and left out of every listing (docs/security.md#the-audit-log). The
    /// file name is taken as it is and its directory canonicalised, as the audit log is opened
    /// (without following a final symlink).
    pub fn hide(mut self, path: &Path) -> Gate {
        let canonical = match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => {
                std::fs::canonicalize(dir).map_or_else(|_| path.to_path_buf(), |d| d.join(name))
            }
            _ => path.to_path_buf(),
        };
        if let Ok(st) = rustix::fs::lstat(&canonical) {
            self.hidden.ids.push((st.st_dev, st.st_ino));
        }
        self.hidden.paths.push(canonical);
        self
    }

    /// The canonical path of `node`: its root's path and the names the walk reached it by, each
    /// a real entry (symlinks met on the way were expanded, `..` popped), so no symlink is in it.
    pub fn path_of(&self, node: &Node) -> PathBuf {
        let root = &self.roots[node.root].path;
        if node.rel.as_os_str().is_empty() {
            // `join("")` would add a trailing slash.
            root.clone()
        } else {
            root.join(&node.rel)
        }
    }

    /// The roots' directory handles (for the Landlock rules).
    pub fn root_handles(&self) -> Vec<Arc<OwnedFd>> {
        self.roots.iter().map(|r| r.fd.clone()).collect()
    }

    /// Opens the entry `name` of the directory `dir` as an `O_PATH` handle without following a
    /// symlink, refusing to land on another filesystem unless mounts may be crossed. The kernel
    /// enforces this with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV)` where
    /// it has openat2; the device check below holds everywhere.
    fn step(
        &self,
        dir: BorrowedFd<'_>,
        name: &OsStr,
        root: usize,
    ) -> std::result::Result<(OwnedFd, Stat), Errno> {
        let fd = open_beneath(dir, name, !self.options.cross_mounts)?;
        let stat = rustix::fs::fstat(&fd)?;
        if !self.options.cross_mounts {
            let r = &self.roots[root];
            if stat.st_dev != r.stat.st_dev {
                return Err(Errno::XDEV);
            }
            // Without openat2's RESOLVE_NO_XDEV, a bind mount of the same filesystem shows only
            // in its mount id.
            if OPENAT2.load(Ordering::Relaxed) == 2
                && let Some(id) = r.mnt_id
                && mount_id(&fd).is_some_and(|m| m != id)
            {
                return Err(Errno::XDEV);
            }
        }
        Ok((fd, stat))
    }

    /// Whether the filesystem of the directory `dir` beneath root `root` may resolve a name to
    /// an entry of another name (the root's answer is reused on its device).
    fn may_alias(&self, root: usize, dir: &Step) -> bool {
        let r = &self.roots[root];
        if dir.stat.st_dev == r.stat.st_dev {
            r.aliasing
        } else {
            aliases::may_alias(dir.fd.as_fd())
        }
    }

    /// Whether `node` lies on a pseudo filesystem (the root's answer is reused on its device).
    fn pseudo(&self, node: &Node) -> bool {
        let root = &self.roots[node.root];
        if node.stat.st_dev == root.stat.st_dev {
            root.pseudo
        } else {
            on_pseudo_fs(&node.fd)
        }
    }

    /// Whether the entry `name` at root-relative path `rel` beneath root `root` is excluded.
    fn excluded(&self, root: usize, name: &OsStr, rel: &Path) -> bool {
        if !self.hidden.paths.is_empty() {
            let path = self.roots[root].path.join(rel);
            if self.hidden.paths.contains(&path) {
                return true;
            }
        }
        let anchor = &self.roots[root].anchor;
        if anchor.as_os_str().is_empty() {
            self.excludes.matches(name, rel)
        } else {
            self.excludes.matches(name, &anchor.join(rel))
        }
    }

    /// [`Gate::excluded`] of the entry `name` of the directory at `dir_rel` beneath root `root`,
    /// without making the entry's path where neither a path pattern nor a hidden path can meet
    /// it (a hidden path meets it only if it ends with `name`).
    fn excluded_entry(&self, root: usize, dir_rel: &Path, name: &OsStr) -> bool {
        if self.excludes.on_paths()
            || self
                .hidden
                .paths
                .iter()
                .any(|h| h.file_name() == Some(name))
        {
            return self.excluded(root, name, &dir_rel.join(name));
        }
        self.excludes.matches_name(name)
    }

    /// Whether a regular file must be refused for its extra links.
    fn refused_hardlink(&self, stat: &Stat) -> bool {
        self.options.deny_hardlinks && NodeKind::of(stat) == NodeKind::File && stat.st_nlink > 1
    }

    /// The working directory (canonical, beneath a root).
    pub fn workdir(&self) -> PathBuf {
        self.workdir
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether the working directory lies beneath a root. When it does not (the current
    /// directory was outside every root), relative paths are denied (docs/contract.md#policy).
    pub fn workdir_is_beneath_a_root(&self) -> bool {
        self.root_of(&self.workdir()).is_some()
    }

    /// Puts back a working directory that [`Gate::workdir`] returned: `readbox sh` plans a line
    /// through its `cd`s, then runs it from where the line started, which may lie beneath no
    /// root.
    pub fn restore_workdir(&self, saved: PathBuf) {
        *self.workdir.write().unwrap_or_else(PoisonError::into_inner) = saved;
    }

    /// Makes `node`, a directory this gate resolved, the working directory: `readbox sh`'s `cd`
    /// (docs/contract.md#readbox-sh). Relative paths resolve from it from now on.
    pub fn set_workdir(&self, node: &Node) {
        *self.workdir.write().unwrap_or_else(PoisonError::into_inner) = self.path_of(node);
    }

    /// Resolves the caller's `arg` to the object it names, following symlinks (the last one
    /// too), as the kernel would, but confined beneath the roots and checked against the excludes.
    /// The object is then found again from its root's handle (see [`Gate::confirm`]), so that a
    /// directory moved out of the root while the path was resolved through it yields nothing.
    ///
    /// # Errors
    /// `denied:` (outside the roots, excluded, through a link that leads there, moved away while
    /// it was resolved, or across a mount point that is not crossed), `not found:`,
    /// `not a directory:` (`file/x`, `file/`), `io:` (permission refused, a symlink loop, no file
    /// descriptor left).
    pub fn resolve(&self, arg: &[u8]) -> Result<Node> {
        let shown_arg = shown(arg);
        if arg.is_empty() {
            return Err(Error::NotFound(shown_arg));
        }
        let written = Path::new(OsStr::from_bytes(arg));
        if !written.is_absolute() && !self.roots.is_empty() && !self.workdir_is_beneath_a_root() {
            return Err(Error::Denied(format!("{shown_arg}: {WORKDIR_OUTSIDE}")));
        }
        // The path as written, folded: excluded there means denied, whatever exists.
        let absolute = if written.is_absolute() {
            written.to_path_buf()
        } else {
            self.workdir().join(written)
        };
        if let Some(folded) = fold(&absolute)
            && let Some((root, rel)) = self.root_of(&folded)
            && self
                .excludes
                .matches_any_prefix(&self.roots[root].anchor.join(rel))
        {
            return Err(Error::Denied(shown_arg));
        }
        // The queue is a stack: the next component is at the end. `x/` and `x/.` must name a
        // directory: a `.` that the walk checks is kept.
        let mut queue: Vec<Part> = Vec::new();
        if arg.ends_with(b"/") {
            queue.push((OsString::from("."), arg.len()));
        }
        push_argument(&mut queue, arg);
        if !written.is_absolute() {
            push_components(&mut queue, &self.workdir(), 0);
        }
        let node = self.walk(queue, arg, &shown_arg)?;
        self.confirm(&node, &shown_arg)?;
        Ok(node)
    }

    fn walk(&self, mut queue: Vec<Part>, arg: &[u8], shown_arg: &str) -> Result<Node> {
        let mut pos = self
            .enter(PathBuf::from("/"))
            .ok_or_else(|| Error::Denied(shown_arg.into()))?;
        let mut hops = 0u32;
        while let Some((c, origin)) = queue.pop() {
            match &mut pos {
                Pos::Above(p) => {
                    let mut next = p.clone();
                    if c == ".." {
                        next.pop();
                    } else if c != "." {
                        next.push(&c);
                    }
                    if let Some(entered) = self.enter(next) {
                        pos = entered;
                        continue;
                    }
                    // Not on the way to a root. Only a symlink (an alias such as `/link-to-root`)
                    // can still lead beneath one; anything else is outside.
                    let target = alias_target(p, &c)
                        .map_err(|e| Error::io(shown_arg, &errno_io(e)))?
                        .ok_or_else(|| Error::Denied(shown_arg.into()))?;
                    hops += 1;
                    if hops > MAX_SYMLINK_HOPS {
                        return Err(Error::Denied(shown_arg.into()));
                    }
                    push_target(&mut queue, &target, origin);
                    if target.is_absolute() {
                        pos = self
                            .enter(PathBuf::from("/"))
                            .ok_or_else(|| Error::Denied(shown_arg.into()))?;
                    }
                }
                Pos::Beneath { root, stack } => {
                    let root = *root;
                    let top = stack.last().expect("the root is always on the stack");
                    let top_kind = NodeKind::of(&top.stat);
                    if c == "." || c == ".." {
                        if top_kind != NodeKind::Directory {
                            let e = Error::NotADirectory(shown_arg.into());
                            let e = self.cannot_continue(root, stack, &queue, e, shown_arg, true);
                            return Err(self.unless_moved(root, stack, e, shown_arg));
                        }
                        if c == ".." {
                            if stack.len() == 1 {
                                let above = parent_or_self(&self.roots[root].path);
                                pos = self
                                    .enter(above)
                                    .ok_or_else(|| Error::Denied(shown_arg.into()))?;
                            } else {
                                stack.pop();
                            }
                        }
                        continue;
                    }
                    let rel = rel_of(stack).join(&c);
                    if self.excluded(root, &c, &rel) {
                        return Err(Error::Denied(shown_arg.into()));
                    }
                    if top_kind != NodeKind::Directory {
                        let e = Error::NotADirectory(shown_arg.into());
                        let e = self.cannot_continue(root, stack, &queue, e, shown_arg, true);
                        return Err(self.unless_moved(root, stack, e, shown_arg));
                    }
                    let (fd, stat) = match self.step(top.fd.as_fd(), &c, root) {
                        Ok(opened) => opened,
                        Err(e) => {
                            let err = match e {
                                Errno::XDEV => crosses_mount(arg, origin, shown_arg),
                                Errno::NOENT | Errno::NAMETOOLONG => {
                                    Error::NotFound(shown_arg.into())
                                }
                                Errno::NOTDIR => Error::NotADirectory(shown_arg.into()),
                                other => Error::io(shown_arg, &errno_io(other)),
                            };
                            let err = if matches!(err, Error::Denied(_)) {
                                err
                            } else {
                                queue.push((c, origin));
                                // Running out of handles says nothing about the path: its rest
                                // is examined however long it is.
                                let cap = !scarce(e);
                                self.cannot_continue(root, stack, &queue, err, shown_arg, cap)
                            };
                            return Err(self.unless_moved(root, stack, err, shown_arg));
                        }
                    };
                    if self.hidden.has_id(&stat) {
                        return Err(Error::Denied(shown_arg.into()));
                    }
                    // A name the filesystem resolved to an excluded entry of another name.
                    let dir_rel = rel_of(stack);
                    if self.may_alias(root, top)
                        && aliases::aliases_excluded(top.fd.as_fd(), &c, &stat, |name| {
                            self.excluded(root, name, &dir_rel.join(name))
                        })
                    {
                        return Err(Error::Denied(shown_arg.into()));
                    }
                    if NodeKind::of(&stat) == NodeKind::Symlink {
                        hops += 1;
                        if hops > MAX_SYMLINK_HOPS {
                            let e = Error::Io(format!(
                                "{shown_arg}: too many levels of symbolic links"
                            ));
                            return Err(self.unless_moved(root, stack, e, shown_arg));
                        }
                        let target =
                            // The link is read through the handle that was checked, so a swap
                            // in the meantime cannot substitute another target.
                            rustix::fs::readlinkat(&fd, c"", Vec::new()).map_err(|e| {
                                if scarce(e) {
                                    Error::io(shown_arg, &errno_io(e))
                                } else {
                                    Error::Denied(shown_arg.into())
                                }
                            })?;
                        let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
                        if target.as_os_str().is_empty() {
                            let e = Error::NotFound(shown_arg.into());
                            return Err(self.unless_moved(root, stack, e, shown_arg));
                        }
                        push_target(&mut queue, &target, origin);
                        if target.is_absolute() {
                            pos = self
                                .enter(PathBuf::from("/"))
                                .ok_or_else(|| Error::Denied(shown_arg.into()))?;
                        }
                        continue;
                    }
                    stack.push(Step {
                        fd: Arc::new(fd),
                        name: c,
                        stat,
                    });
                }
            }
        }
        match pos {
            Pos::Above(_) => Err(Error::Denied(shown_arg.into())),
            Pos::Beneath { root, mut stack } => {
                let rel = rel_of(&stack);
                let last = stack.pop().expect("the root is always on the stack");
                if self.refused_hardlink(&last.stat) {
                    return Err(Error::Denied(shown_arg.into()));
                }
                Ok(Node {
                    root,
                    fd: last.fd,
                    parent: stack.last().map(|s| s.fd.clone()),
                    name: last.name,
                    rel,
                    stat: last.stat,
                    mount_point: false,
                })
            }
        }
    }

    /// A resolution that cannot go on (a missing component, a file used as a directory, a
    /// permission refusal) is still `denied:` when the rest of the path, followed lexically,
    /// would leave the root or name an excluded entry: the answer must not tell whether a
    /// denied object exists. With `cap`, a rest longer than [`MAX_COMPONENTS`] is denied
    /// unexamined.
    fn cannot_continue(
        &self,
        root: usize,
        stack: &[Step],
        queue: &[Part],
        err: Error,
        shown_arg: &str,
        cap: bool,
    ) -> Error {
        // Beyond what any kernel path can hold, there is nothing to find: deny.
        if cap && queue.len() > MAX_COMPONENTS {
            return Error::Denied(shown_arg.into());
        }
        let mut rel = rel_of(stack);
        for (c, _) in queue.iter().rev() {
            if c == "." {
                continue;
            }
            if c == ".." {
                if !rel.pop() {
                    return Error::Denied(shown_arg.into());
                }
                continue;
            }
            if Path::new(c).is_absolute() {
                return Error::Denied(shown_arg.into());
            }
            rel.push(c);
            if self.excluded(root, c, &rel) {
                return Error::Denied(shown_arg.into());
            }
        }
        err
    }

    /// The position at the lexical, canonical path `p` above or at the roots: beneath a root when
    /// `p` is one, above when `p` is an ancestor of one, else `None` (outside: denied).
    fn enter(&self, p: PathBuf) -> Option<Pos> {
        if let Some(i) = self.roots.iter().position(|r| r.path == p) {
            let r = &self.roots[i];
            return Some(Pos::Beneath {
                root: i,
                stack: vec![Step {
                    fd: r.fd.clone(),
                    name: OsString::new(),
                    stat: r.stat,
                }],
            });
        }
        if self.roots.iter().any(|r| r.path.starts_with(&p)) {
            return Some(Pos::Above(p));
        }
        None
    }

    /// The root that the folded absolute path `p` lies beneath (comparing whole components), and
    /// `p` relative to it.
    fn root_of(&self, p: &Path) -> Option<(usize, PathBuf)> {
        self.roots
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                p.strip_prefix(&r.path)
                    .ok()
                    .map(|rel| (i, rel.to_path_buf()))
            })
            .max_by_key(|(i, _)| self.roots[*i].path.as_os_str().len())
    }

    /// Opens a regular file for reading (docs/contract.md#confinement: only regular files are read;
    /// a FIFO, socket or device gets `not a file:` at once and is never opened).
    ///
    /// # Errors
    /// `not a file:`, `denied:` (a pseudo filesystem such as procfs, or the object was swapped
    /// since it was checked), `io:` (permission refused).
    pub fn open_read(&self, node: &Node, shown_arg: &str) -> Result<File> {
        if node.kind() != NodeKind::File {
            return Err(Error::NotAFile(shown_arg.into()));
        }
        if node.mount_point
            || self.pseudo(node)
            || self.refused_hardlink(&node.stat)
            || self.hidden.has_id(&node.stat)
        {
            return Err(Error::Denied(shown_arg.into()));
        }
        let parent = node
            .parent
            .as_ref()
            .ok_or_else(|| Error::NotAFile(shown_arg.into()))?;
        let fd = rustix::fs::openat(
            parent.as_fd(),
            node.name.as_os_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::ACCESS | Errno::PERM => Error::io(shown_arg, &errno_io(e)),
            e if scarce(e) => Error::io(shown_arg, &errno_io(e)),
            // Gone or replaced by a symlink since the check.
            _ => Error::Denied(shown_arg.into()),
        })?;
        let st = rustix::fs::fstat(&fd).map_err(|e| Error::io(shown_arg, &errno_io(e)))?;
        if st.st_dev != node.stat.st_dev || st.st_ino != node.stat.st_ino {
            return Err(Error::Denied(shown_arg.into()));
        }
        Ok(File::from(fd))
    }

    /// Opens a directory for listing, through the node's own handle.
    ///
    /// # Errors
    /// `not a directory:`, `io:` (permission refused).
    pub fn open_dir(&self, node: &Node, shown_arg: &str) -> Result<rustix::fs::Dir> {
        if node.kind() != NodeKind::Directory {
            return Err(Error::NotADirectory(shown_arg.into()));
        }
        if node.mount_point {
            return Err(Error::Denied(shown_arg.into()));
        }
        let fd = rustix::fs::openat(
            node.fd.as_fd(),
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| Error::io(shown_arg, &errno_io(e)))?;
        rustix::fs::Dir::new(fd).map_err(|e| Error::io(shown_arg, &errno_io(e)))
    }

    /// Whether the entry `name` of the directory `dir`, whose inode the listing gave as `ino`, is
    /// excluded (by name or root-relative path) or hidden.
    pub fn excluded_child(&self, dir: &Node, name: &OsStr, ino: u64) -> bool {
        self.excluded_entry(dir.root, &dir.rel, name)
            || self
                .hidden
                .ids
                .iter()
                .any(|&(dev, i)| dev == dir.stat.st_dev && i == ino)
    }

    /// The kind of the entry `name` of `dir`, without following a symlink and without opening it
    /// (for listings on filesystems that do not report types). `None` when it cannot be examined
    /// (gone since the listing): a walk leaves it out.
    ///
    /// # Errors
    /// [`Error::Shortage`] naming `shown` when the process ran short of memory.
    pub fn kind_of_child(&self, dir: &Node, name: &OsStr, shown: &str) -> Result<Option<NodeKind>> {
        match rustix::fs::statat(dir.fd.as_fd(), name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(NodeKind::of(&st))),
            Err(e) if scarce(e) => Err(Error::io(shown, &errno_io(e))),
            Err(_) => Ok(None),
        }
    }

    /// The entry `name` of the directory `dir`, for a walk: tested against the excludes, then
    /// opened without following a symlink. `Ok(None)` when it is excluded, or gone or replaced
    /// (by a symlink, by a file where a directory was) since the listing: a walk leaves it out
    /// without a word. `shown` is the caller's PATH, for errors.
    ///
    /// # Errors
    /// `io:` when it cannot be examined (permission refused: a walk counts it as skipped), and
    /// [`Error::Shortage`] when the process ran short of descriptors or memory (a walk stops:
    /// that says nothing about the entry).
    pub fn child(&self, dir: &Node, name: &OsStr, shown: &str) -> Result<Option<Node>> {
        let rel = dir.rel.join(name);
        if self.excluded(dir.root, name, &rel) {
            return Ok(None);
        }
        let failed = |e: Errno| match e {
            Errno::NOENT | Errno::LOOP | Errno::NOTDIR => Ok(None),
            e => Err(Error::io(shown, &errno_io(e))),
        };
        let (fd, stat, mount_point) = match self.step(dir.fd.as_fd(), name, dir.root) {
            Ok((fd, stat)) => (fd, stat, false),
            // A mount point: the handle is only ever used to describe it (as `find -xdev`).
            Err(Errno::XDEV) => {
                let opened = rustix::fs::openat(
                    dir.fd.as_fd(),
                    name,
                    OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .and_then(|fd| rustix::fs::fstat(&fd).map(|st| (fd, st)));
                match opened {
                    Ok((fd, stat)) => (fd, stat, true),
                    Err(e) => return failed(e),
                }
            }
            Err(e) => return failed(e),
        };
        if self.hidden.has_id(&stat) {
            return Ok(None);
        }
        Ok(Some(Node {
            root: dir.root,
            fd: Arc::new(fd),
            parent: Some(dir.fd.clone()),
            name: name.to_os_string(),
            rel,
            stat,
            mount_point,
        }))
    }
}

impl Gate {
    /// The regular file `name` of the directory `dir`, for a walk that reads what it finds
    /// (grep): tested against the excludes, then opened for reading from `dir`'s handle with one
    /// `openat` (`O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC`) and examined with one
    /// `statx` (docs/security.md#two-phase-open). Returns the file and its size, or `Ok(None)`
    /// when it is excluded or hidden, gone or replaced by a symlink, not a regular file now, on
    /// another filesystem or mount than its root (unless mounts are crossed), on a pseudo
    /// filesystem, or a hard link the policy refuses: a walk leaves it out without a word. Where
    /// the kernel does not tell a file's mount, the file is reached as [`Gate::child`] and
    /// [`Gate::open_read`] reach it.
    ///
    /// # Errors
    /// `io:` when it cannot be opened (permission refused: a walk counts it as unreadable), and
    /// [`Error::Shortage`] when the process ran short of descriptors or memory.
    pub fn open_child_file(
        &self,
        dir: &Node,
        name: &OsStr,
        shown: &str,
    ) -> Result<Option<(File, u64)>> {
        use rustix::fs::{AtFlags, FileType, StatxFlags};
        let root = &self.roots[dir.root];
        if !self.options.cross_mounts && root.mnt_id.is_none() {
            let Some(node) = self.child(dir, name, shown)? else {
                return Ok(None);
            };
            let size = u64::try_from(node.stat.st_size).unwrap_or(0);
            return match self.open_read(&node, shown) {
                Ok(file) => Ok(Some((file, size))),
                Err(Error::Denied(_) | Error::NotAFile(_)) => Ok(None),
                Err(e) => Err(e),
            };
        }
        if self.excluded_entry(dir.root, &dir.rel, name) {
            return Ok(None);
        }
        let fd = match rustix::fs::openat(
            dir.fd.as_fd(),
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(e @ (Errno::ACCESS | Errno::PERM)) => return Err(Error::io(shown, &errno_io(e))),
            Err(e) if scarce(e) => return Err(Error::io(shown, &errno_io(e))),
            // Gone, a symlink (ELOOP), a socket (ENXIO), or anything else that is no file to read.
            Err(_) => return Ok(None),
        };
        let sx = rustix::fs::statx(
            &fd,
            c"",
            AtFlags::EMPTY_PATH,
            StatxFlags::BASIC_STATS | StatxFlags::MNT_ID,
        )
        .map_err(|e| Error::io(shown, &errno_io(e)))?;
        let dev = rustix::fs::makedev(sx.stx_dev_major, sx.stx_dev_minor);
        let regular = FileType::from_raw_mode(u32::from(sx.stx_mode)) == FileType::RegularFile;
        let other_mount = !self.options.cross_mounts
            && (dev != root.stat.st_dev
                || (sx.stx_mask & StatxFlags::MNT_ID.bits() != 0
                    && Some(sx.stx_mnt_id) != root.mnt_id));
        let pseudo = if dev == root.stat.st_dev {
            root.pseudo
        } else {
            on_pseudo_fs(&fd)
        };
        let refused = self.options.deny_hardlinks && sx.stx_nlink > 1;
        let hidden = self
            .hidden
            .ids
            .iter()
            .any(|&(d, i)| d == dev && i == sx.stx_ino);
        if !regular || other_mount || pseudo || refused || hidden {
            return Ok(None);
        }
        Ok(Some((File::from(fd), sx.stx_size)))
    }

    /// The directories from `node`'s root down to its parent, for a walk that needs the ignore
    /// files above its start. Stops early (with fewer nodes) at anything that is not a directory
    /// any more, is excluded or cannot be examined.
    ///
    /// # Errors
    /// [`Error::Shortage`] naming `shown` when the process ran short of descriptors or memory.
    #[expect(
        clippy::missing_panics_doc,
        reason = "the chain starts at the root, never empty"
    )]
    pub fn ancestors(&self, node: &Node, shown: &str) -> Result<Vec<Node>> {
        let root = &self.roots[node.root];
        let mut chain = vec![Node {
            root: node.root,
            fd: root.fd.clone(),
            parent: None,
            name: OsString::new(),
            rel: PathBuf::new(),
            stat: root.stat,
            mount_point: false,
        }];
        let names: Vec<&OsStr> = node.rel.iter().collect();
        for name in names.iter().take(names.len().saturating_sub(1)) {
            let dir = chain.last().expect("the chain starts at the root");
            match self.child(dir, name, shown) {
                Ok(Some(n)) if n.kind() == NodeKind::Directory => chain.push(n),
                Err(e @ Error::Shortage(_)) => return Err(e),
                _ => break,
            }
        }
        if node.rel.as_os_str().is_empty() {
            chain.clear();
        }
        Ok(chain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(p: &[&str]) -> Excludes {
        Excludes::new(&p.iter().map(ToString::to_string).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn excludes_match_name_or_relative_path_regardless_of_case() {
        let e = ex(&[".env", "*.key", "docs/private"]);
        assert!(e.matches(OsStr::new(".ENV"), Path::new("a/.ENV")));
        assert!(e.matches(OsStr::new("ID.KEY"), Path::new("ID.KEY")));
        assert!(e.matches(OsStr::new("private"), Path::new("docs/private")));
        assert!(!e.matches(OsStr::new("private"), Path::new("other/private")));
        assert!(e.matches_any_prefix(Path::new("docs/private/x")));
        assert!(!e.matches_any_prefix(Path::new("docs/privateer/x")));
    }

    #[test]
    fn excludes_match_names_without_their_trailing_dots_and_spaces() {
        let e = ex(&[".env", "*.pem", "docs/private"]);
        for name in [".env ", ".env.", ".ENV. .", "server.pem.", "server.pem  "] {
            assert!(e.matches(OsStr::new(name), Path::new(name)), "{name:?}");
        }
        assert!(e.matches_any_prefix(Path::new("docs./private /x")));
        assert!(!e.matches(OsStr::new(".envy."), Path::new(".envy.")));
        assert!(!e.matches(OsStr::new("..."), Path::new("...")));
    }

    #[test]
    fn star_does_not_cross_slash() {
        let e = ex(&["src/*.py"]);
        assert!(e.matches_any_prefix(Path::new("src/a.py")));
        assert!(!e.matches_any_prefix(Path::new("src/sub/b.py")));
    }

    #[test]
    fn invalid_utf8_names_are_matched_on_bytes() {
        let e = ex(&["*.pem"]);
        let name = OsStr::from_bytes(b"\xff.PEM");
        assert!(e.matches(name, Path::new(name)));
    }

    #[test]
    fn excludes_see_through_unicode_case_variants() {
        let e = ex(&["*.key", ".ssh", "*.pem", "straße"]);
        for name in [
            "id.\u{212A}ey",
            ".\u{17F}sh",
            "\u{17F}erver.PEM",
            "STRASSE",
            "stra\u{1E9E}e",
        ] {
            assert!(e.matches(OsStr::new(name), Path::new(name)), "{name}");
        }
        assert!(!e.matches(OsStr::new("key.txt"), Path::new("key.txt")));
    }

    #[test]
    fn the_gate_does_not_open_an_object_of_unknown_kind_for_reading() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "content\n").unwrap();
        let root = dir.path().canonicalize().unwrap();
        let opts = Options {
            deny_hardlinks: false,
            cross_mounts: false,
        };
        let gate = Gate::new(std::slice::from_ref(&root), ex(&[]), root.clone(), opts).unwrap();
        let mut node = gate.resolve(b"f").unwrap();
        assert!(gate.open_read(&node, "f").is_ok());
        // The same regular file, as a filesystem that reports an unknown mode would show it.
        node.stat.st_mode = 0o160_644;
        assert_eq!(
            gate.open_read(&node, "f").unwrap_err(),
            Error::NotAFile("f".into())
        );
    }

    /// A walk's entry is tested by name alone where no rule needs its path: the answer is the
    /// one its path gives, for name patterns, path patterns and a hidden path alike.
    #[test]
    fn an_entry_is_excluded_as_its_path_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let options = Options {
            deny_hardlinks: false,
            cross_mounts: false,
        };
        let names = [
            ".env",
            ".ENV. ",
            "a.pem",
            "private",
            "log",
            "x",
            "\u{17F}erver.pem",
        ];
        for patterns in [
            &[][..],
            &[".env", "*.pem"],
            &["docs/private"],
            &["*.pem", "a/*/x"],
        ] {
            let gate = Gate::new(
                std::slice::from_ref(&root),
                ex(patterns),
                root.clone(),
                options,
            )
            .unwrap()
            .hide(&root.join("a/b/log"));
            for dir_rel in ["", "docs", "a/b", "a/c"] {
                for name in names {
                    let name = OsStr::new(name);
                    let want = gate.excluded(0, name, &Path::new(dir_rel).join(name));
                    let got = gate.excluded_entry(0, Path::new(dir_rel), name);
                    assert_eq!(got, want, "{patterns:?} {dir_rel:?} {name:?}");
                }
            }
            assert!(gate.excluded_entry(0, Path::new("a/b"), OsStr::new("log")));
            assert!(!gate.excluded_entry(0, Path::new("a/c"), OsStr::new("log")));
        }
    }

    #[test]
    fn path_of_names_the_directory_reached_without_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::os::unix::fs::symlink("a/b", root.join("link")).unwrap();
        let options = Options {
            deny_hardlinks: false,
            cross_mounts: false,
        };
        let gate = Gate::new(std::slice::from_ref(&root), ex(&[]), root.clone(), options).unwrap();
        let path_of = |arg: &str| gate.path_of(&gate.resolve(arg.as_bytes()).unwrap());
        // The root itself, without a trailing slash (the narrowing variable carries it as is).
        assert_eq!(path_of(".").as_os_str(), root.as_os_str());
        assert_eq!(path_of("link"), root.join("a/b"));
        assert_eq!(path_of("link/../b/."), root.join("a/b"));
    }
}
