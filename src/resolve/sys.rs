//! The resolver's system calls on handles: the one-component `O_PATH | O_NOFOLLOW` open beneath
//! a directory (openat2 where the kernel has it), a symlink's target above the roots, and the
//! mount id and filesystem type of a handle (docs/security.md#the-resolver).

use std::ffi::{OsStr, OsString};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::error::scarce;

/// `e` as an I/O error, for the messages that describe one.
pub(super) fn errno_io(e: Errno) -> std::io::Error {
    std::io::Error::from_raw_os_error(e.raw_os_error())
}

/// Whether this kernel has openat2: unknown, yes, no (it answers ENOSYS, or a seccomp filter
/// answers EPERM).
pub(super) static OPENAT2: AtomicU8 = AtomicU8::new(0);

/// `O_PATH | O_NOFOLLOW` open of the single component `name` beneath `dir`.
pub(super) fn open_beneath(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    no_xdev: bool,
) -> std::result::Result<OwnedFd, Errno> {
    match openat2_beneath(dir, Path::new(name), no_xdev) {
        Some(opened) => opened,
        None => rustix::fs::openat(
            dir,
            name,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ),
    }
}

/// `O_PATH | O_NOFOLLOW` open of the relative `path` beneath `dir` in one
/// `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS [| RESOLVE_NO_XDEV])`:
/// the kernel refuses any symlink on the way and checks, once the lookup is done, that the object
/// lies beneath `dir`. `None` when this kernel has no openat2.
pub(super) fn openat2_beneath(
    dir: BorrowedFd<'_>,
    path: &Path,
    no_xdev: bool,
) -> Option<std::result::Result<OwnedFd, Errno>> {
    use rustix::fs::ResolveFlags;
    if OPENAT2.load(Ordering::Relaxed) == 2 {
        return None;
    }
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    if no_xdev {
        how |= ResolveFlags::NO_XDEV;
    }
    let mut tries = 0;
    loop {
        match rustix::fs::openat2(dir, path, flags, Mode::empty(), how) {
            Err(Errno::NOSYS | Errno::PERM) if OPENAT2.load(Ordering::Relaxed) == 0 => {
                OPENAT2.store(2, Ordering::Relaxed);
                return None;
            }
            // The kernel asks for a retry when a rename raced the lookup.
            Err(Errno::AGAIN) if tries < 8 => tries += 1,
            other => {
                OPENAT2.store(1, Ordering::Relaxed);
                return Some(other);
            }
        }
    }
}

/// The target of `dir/name` when it is a symlink. `dir` is a canonical ancestor of a root, so it
/// is a real directory; nothing outside the roots is ever opened for reading here.
///
/// # Errors
/// The process ran short of descriptors or memory: nothing is known then (never a denial).
pub(super) fn alias_target(
    dir: &Path,
    name: &OsStr,
) -> std::result::Result<Option<PathBuf>, Errno> {
    let short = |e: Errno| if scarce(e) { Err(e) } else { Ok(None) };
    let dir_fd = match rustix::fs::open(
        dir,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(e) => return short(e),
    };
    let target = match rustix::fs::readlinkat(&dir_fd, name, Vec::new()) {
        Ok(t) => t,
        Err(e) => return short(e),
    };
    let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
    Ok((!target.as_os_str().is_empty()).then_some(target))
}

/// The mount id of the object behind `fd` (statx, Linux 5.8 and later).
pub(super) fn mount_id(fd: &OwnedFd) -> Option<u64> {
    use rustix::fs::{AtFlags, StatxFlags};
    let st = rustix::fs::statx(fd, c"", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID).ok()?;
    (st.stx_mask & StatxFlags::MNT_ID.bits() != 0).then_some(st.stx_mnt_id)
}

/// Filesystems whose "files" are kernel interfaces, not content (docs/security.md#two-phase-open).
pub(super) fn on_pseudo_fs(fd: &OwnedFd) -> bool {
    const PSEUDO: &[i64] = &[
        0x9fa0,      // procfs
        0x6265_6572, // sysfs
        0x1cd1,      // devpts
        0x6462_6720, // debugfs
        0x7472_6163, // tracefs
        0x7363_6673, // securityfs
        0x0027_e0eb, // cgroup
        0x6367_7270, // cgroup2
        0xcafe_4a11, // bpf
        0x6265_6570, // configfs
        0x6165_676c, // pstore
        0xde5e_81e4, // efivarfs
    ];
    match rustix::fs::fstatfs(fd) {
        #[allow(clippy::unnecessary_cast)]
        Ok(st) => PSEUDO.contains(&(st.f_type as i64)),
        Err(_) => true,
    }
}
