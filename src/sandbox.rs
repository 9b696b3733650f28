//! Landlock self-restriction (docs/security.md#landlock).
//!
//! After the policy is loaded and the roots are open, and before any other thread starts, the
//! process gives up every filesystem right but reading files and listing directories beneath the
//! roots, and every TCP right.
//!
//! This is a second wall behind the gate, not a replacement: excludes, `stat` and hardlinks are
//! still the gate's job, since Landlock cannot express them. Where the kernel has no Landlock the
//! restriction is best effort, unless the policy says `sandbox = "require"`.
//!
//! The three system calls are made here, after the kernel's `linux/landlock.h`, rather than
//! through the `landlock` crate: that crate builds two procedural macros, and a procedural macro
//! cannot be built where the whole build links statically, as readbox's does (README,
//! Performance). What the crate would add, a right dropped where the kernel's ABI lacks it, is
//! [`fs_rights`] and [`net_rights`] below.

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

/// The Landlock ABI whose rights readbox handles (Linux 6.10: filesystem, ioctl on devices,
/// TCP). Rights of newer ABIs stay unhandled, so the ruleset means the same on every kernel.
pub const PINNED_ABI: u32 = 5;

/// What the restriction achieved, as `readbox policy` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enforcement {
    /// Every handled right is restricted.
    Full,
    /// The kernel's Landlock is older than [`PINNED_ABI`]: the rights it knows are restricted.
    Partial,
    /// Nothing is restricted; the text says why.
    None(String),
}

impl Enforcement {
    /// One line for `readbox policy`.
    pub fn describe(&self) -> String {
        match self {
            Enforcement::Full => "enforced: read-only beneath the roots, no TCP".to_string(),
            Enforcement::Partial => {
                "partially enforced (older kernel ABI): read-only beneath the roots".to_string()
            }
            Enforcement::None(why) => format!("not enforced: {why}"),
        }
    }
}

/// The filesystem rights (`LANDLOCK_ACCESS_FS_*`), one bit each.
mod fs {
    pub const EXECUTE: u64 = 1 << 0;
    pub const WRITE_FILE: u64 = 1 << 1;
    pub const READ_FILE: u64 = 1 << 2;
    pub const READ_DIR: u64 = 1 << 3;
    /// `REMOVE_DIR` (bit 4) to `MAKE_SYM` (bit 12): ABI 1's other rights.
    pub const ABI1_REST: u64 = 0x1ff0;
    pub const REFER: u64 = 1 << 13;
    pub const TRUNCATE: u64 = 1 << 14;
    pub const IOCTL_DEV: u64 = 1 << 15;
}

/// The TCP rights of ABI 4 (`LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP`).
const NET_TCP: u64 = 0b11;

/// Every filesystem right that ABI `abi` knows: 1 brought 13, 2 `REFER`, 3 `TRUNCATE`,
/// 5 `IOCTL_DEV`.
fn fs_rights(abi: u32) -> u64 {
    let mut rights = fs::EXECUTE | fs::WRITE_FILE | fs::READ_FILE | fs::READ_DIR | fs::ABI1_REST;
    for (since, right) in [(2, fs::REFER), (3, fs::TRUNCATE), (5, fs::IOCTL_DEV)] {
        if abi >= since {
            rights |= right;
        }
    }
    rights
}

/// Every network right that ABI `abi` knows (TCP from ABI 4).
fn net_rights(abi: u32) -> u64 {
    if abi >= 4 { NET_TCP } else { 0 }
}

/// `struct landlock_ruleset_attr` up to ABI 5.
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's header).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

const CREATE_RULESET_VERSION: u32 = 1 << 0;
const RULE_PATH_BENEATH: libc::c_long = 1;

/// Restricts the calling thread, and the threads it starts later, to reading files and listing
/// directories beneath `roots` (directory handles; `O_PATH` handles are fine).
///
/// Call it before starting any thread: threads that already run keep their rights.
pub fn restrict<F: AsFd>(roots: &[F]) -> Enforcement {
    Ruleset::read_only(roots).enter()
}

/// Restricts the calling thread and what it starts to writing only the files `writable`, no TCP.
///
/// What it starts: the threads it starts later and every process they start. The files `writable`
/// are opened for writing; only `write` is allowed to them, not truncation. Reading and executing
/// are left alone.
///
/// Call it before starting any thread.
pub fn restrict_writes<F: AsFd>(writable: &[F]) -> Enforcement {
    let writes = |abi| fs_rights(abi) & !(fs::EXECUTE | fs::READ_FILE | fs::READ_DIR);
    Ruleset::new(writes, writable, fs::WRITE_FILE).enter()
}

/// A Landlock ruleset, made once and entered by each thread that restricts itself with it.
///
/// Those threads ([`Ruleset::enter`]) are the main thread and one that was already there, the
/// start's watchdog (docs/security.md#budgets-and-the-watchdog).
#[derive(Debug)]
pub struct Ruleset {
    /// `None` where nothing can be restricted, and `enforcement` says why.
    fd: Option<OwnedFd>,
    /// What entering it achieves.
    enforcement: Enforcement,
}

impl Ruleset {
    /// Reading files and listing directories beneath `roots`, as [`restrict`] grants.
    pub fn read_only<F: AsFd>(roots: &[F]) -> Ruleset {
        Ruleset::new(fs_rights, roots, fs::READ_FILE | fs::READ_DIR)
    }

    /// A ruleset that restricts nothing, for the reason `why`.
    pub fn none(why: String) -> Ruleset {
        Ruleset {
            fd: None,
            enforcement: Enforcement::None(why),
        }
    }

    /// Handles the rights `handled(abi)` of the kernel's ABI (at most [`PINNED_ABI`]) and every
    /// TCP right it knows, and grants `granted` beneath each of `beneath`.
    fn new<F: AsFd>(handled: fn(u32) -> u64, beneath: &[F], granted: u64) -> Ruleset {
        match abi_version() {
            Ok(abi) => Ruleset::new_as(abi, handled, beneath, granted),
            Err(e) => Ruleset::none(match e.raw_os_error() {
                Some(libc::ENOSYS) => "this kernel has no Landlock".into(),
                Some(libc::EOPNOTSUPP) => "Landlock is not enabled in this kernel".into(),
                _ => format!("the kernel refused Landlock ({e})"),
            }),
        }
    }

    /// [`Ruleset::new`] on a kernel whose Landlock ABI is `abi`.
    fn new_as<F: AsFd>(abi: u32, handled: fn(u32) -> u64, beneath: &[F], granted: u64) -> Ruleset {
        let known = abi.min(PINNED_ABI);
        let attr = RulesetAttr {
            handled_access_fs: handled(known),
            handled_access_net: net_rights(known),
        };
        match create(&attr, beneath, granted) {
            Ok(fd) => Ruleset {
                fd: Some(fd),
                enforcement: if abi >= PINNED_ABI {
                    Enforcement::Full
                } else {
                    Enforcement::Partial
                },
            },
            Err(e) => Ruleset::none(format!("the kernel refused the ruleset ({e})")),
        }
    }

    /// Restricts the calling thread, and the threads it starts later, by this ruleset (after
    /// `no_new_privs`, which Landlock requires of an unprivileged thread); answers what that
    /// achieved.
    pub fn enter(&self) -> Enforcement {
        let Some(fd) = &self.fd else {
            return self.enforcement.clone();
        };
        // SAFETY: prctl with integer arguments only; then the ruleset's open descriptor, no flags.
        let refused = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0
            || unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) }
                != 0;
        if refused {
            let e = io::Error::last_os_error();
            return Enforcement::None(format!("the kernel refused the ruleset ({e})"));
        }
        self.enforcement.clone()
    }
}

/// The kernel's Landlock ABI version.
fn abi_version() -> io::Result<u32> {
    // SAFETY: the version query takes no attribute (NULL, size 0) and only the version flag.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    match u32::try_from(v) {
        Ok(v) if v > 0 => Ok(v),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Creates the ruleset `attr` with a rule granting `granted` beneath each of `beneath`.
fn create<F: AsFd>(attr: &RulesetAttr, beneath: &[F], granted: u64) -> io::Result<OwnedFd> {
    // An ABI without network rights refuses an attribute that names them (E2BIG for the larger
    // size): then only the filesystem half is passed.
    let size = if attr.handled_access_net == 0 {
        std::mem::size_of::<u64>()
    } else {
        std::mem::size_of::<RulesetAttr>()
    };
    // SAFETY: `attr` is a live `landlock_ruleset_attr` of at least `size` bytes.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::from_ref(attr),
            size,
            0u32,
        )
    };
    let fd = libc::c_int::try_from(fd)
        .ok()
        .filter(|fd| *fd >= 0)
        .ok_or_else(io::Error::last_os_error)?;
    // SAFETY: the kernel just returned this descriptor, and nothing else owns it.
    let ruleset = unsafe { OwnedFd::from_raw_fd(fd) };
    for dir in beneath {
        let rule = PathBeneathAttr {
            allowed_access: granted & attr.handled_access_fs,
            parent_fd: dir.as_fd().as_raw_fd(),
        };
        // SAFETY: `rule` is a live `landlock_path_beneath_attr`; both descriptors are open.
        let r = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                RULE_PATH_BENEATH,
                std::ptr::from_ref(&rule),
                0u32,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(ruleset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_abi_adds_its_rights_and_the_pinned_one_handles_sixteen() {
        // The values of linux/landlock.h: ABI 1 handled bits 0..=12.
        assert_eq!(fs_rights(1), 0x1fff);
        assert_eq!(fs_rights(2), 0x3fff);
        assert_eq!(fs_rights(3), 0x7fff);
        assert_eq!(fs_rights(4), 0x7fff);
        assert_eq!(fs_rights(PINNED_ABI), 0xffff);
        assert_eq!((net_rights(3), net_rights(4)), (0, 0b11));
    }

    #[test]
    fn a_ruleset_of_an_older_abi_is_sized_for_it_and_still_confines() {
        // Landlock restricts only the calling thread: one started here, so that this one can
        // still remove the files afterwards.
        let Ok(abi) = abi_version() else {
            eprintln!("note: this kernel has no Landlock; nothing to check");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let (inside, outside) = (dir.path().join("inside"), dir.path().join("outside"));
        std::fs::create_dir(&inside).unwrap();
        std::fs::write(inside.join("a"), "a").unwrap();
        std::fs::write(&outside, "b").unwrap();
        let root = std::fs::File::open(&inside).unwrap();
        let confined = std::thread::spawn(move || {
            // ABI 3 has no network rights: the attribute is the 8 bytes of its filesystem half.
            let read = fs::READ_FILE | fs::READ_DIR;
            let enforced = Ruleset::new_as(abi.min(3), fs_rights, &[root], read).enter();
            let outside = std::fs::read(&outside).map_err(|e| e.kind());
            (enforced, std::fs::read(inside.join("a")).ok(), outside)
        });
        let (enforced, inside, outside) = confined.join().unwrap();
        assert_eq!(enforced, Enforcement::Partial);
        assert_eq!(inside.as_deref(), Some(&b"a"[..]));
        assert_eq!(outside, Err(io::ErrorKind::PermissionDenied));
    }

    #[test]
    fn the_attributes_have_the_kernels_layout() {
        assert_eq!(std::mem::size_of::<RulesetAttr>(), 16);
        assert_eq!(std::mem::size_of::<PathBeneathAttr>(), 12);
    }
}
