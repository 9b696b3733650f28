//! Names that a filesystem resolves to an entry of another name (docs/security.md#excludes-on-every-component):
//! vfat and exFAT drop trailing dots and spaces and fold case, and answer to a short name
//! (`SSH~1` for `.ssh`); a Windows share (cifs) and ntfs3 do much the same; a FUSE filesystem may do
//! anything. There the name as typed says too little: `.ENV.` opens `.env`. The excludes see the
//! typed name already folded and trimmed; on such a filesystem the gate also makes sure that the
//! object a name opened is not an entry of the same directory that an exclude names.
//!
//! Invariant: when the answer cannot be known (the directory cannot be listed, or is longer
//! than [`MAX_ENTRIES`]), the name is taken for an excluded one.

use std::ffi::OsStr;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{AtFlags, Mode, OFlags, Stat};

/// Entries of one directory looked through for an excluded alias: a directory longer than this
/// cannot be confirmed, and its aliased names are denied.
const MAX_ENTRIES: usize = 1 << 16;

/// Whether the filesystem behind `fd` may resolve a name to an entry of another name.
pub(super) fn may_alias(fd: BorrowedFd<'_>) -> bool {
    const ALIASING: &[i64] = &[
        0x4d44,      // vfat (msdos)
        0x2011_bab0, // exfat
        0x7366_746e, // ntfs3
        0x5346_544e, // ntfs (the old driver)
        0xff53_4d42, // cifs
        0xfe53_4d42, // smb2
        0x517b,      // smbfs
        0x6573_5546, // fuse, fuseblk (ntfs-3g, sshfs, ...)
        0x3153_464a, // jfs (its case-insensitive option)
        0x9660,      // iso9660 (Joliet names)
    ];
    match rustix::fs::fstatfs(fd) {
        #[allow(clippy::unnecessary_cast)]
        Ok(st) => ALIASING.contains(&(st.f_type as i64)),
        Err(_) => true,
    }
}

/// Whether `opened`, the object that the name `typed` opened in the directory `dir`, is also an
/// entry of `dir` under another name that `excluded` names: then `typed` is an alias of an
/// excluded entry. When `dir` cannot be listed, or holds more than [`MAX_ENTRIES`] entries, the
/// answer is yes.
pub(super) fn aliases_excluded(
    dir: BorrowedFd<'_>,
    typed: &OsStr,
    opened: &Stat,
    excluded: impl Fn(&OsStr) -> bool,
) -> bool {
    let Ok(fd) = rustix::fs::openat(
        dir,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return true;
    };
    let Ok(entries) = rustix::fs::Dir::new(fd) else {
        return true;
    };
    for (n, entry) in entries.enumerate() {
        let Ok(entry) = entry else { return true };
        if n > MAX_ENTRIES {
            return true;
        }
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == typed || name == "." || name == ".." || !excluded(name) {
            continue;
        }
        match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if st.st_dev == opened.st_dev && st.st_ino == opened.st_ino => return true,
            Ok(_) => {}
            // An excluded entry that cannot be examined may be the one opened.
            Err(_) => return true,
        }
    }
    false
}
