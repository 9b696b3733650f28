//! Landlock self-restriction (docs/security.md#landlock).
//!
//! After the policy is loaded and the roots are open, and before any other thread starts, the
//! process gives up every filesystem right but reading files and listing directories beneath the
//! roots, and every TCP right.
//!
//! This is a second wall behind the gate, not a replacement: excludes, `stat` and hardlinks are
//! still the gate's job, since Landlock cannot express them. Where the kernel has no Landlock the
//! restriction is best effort, unless the policy says `sandbox = "require"`.

use std::os::fd::AsFd;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, PathBeneath,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
};

/// The Landlock ABI whose rights readbox handles (Linux 6.10: filesystem, ioctl on devices,
/// TCP). Rights of newer ABIs stay unhandled, so the ruleset means the same on every kernel.
pub const PINNED_ABI: ABI = ABI::V5;

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

/// Restricts the calling thread, and the threads it starts later, to reading files and listing
/// directories beneath `roots` (directory handles; `O_PATH` handles are fine).
///
/// Call it before starting any thread: threads that already run keep their rights.
pub fn restrict<F: AsFd>(roots: &[F]) -> Enforcement {
    match try_restrict(roots) {
        Ok(e) => e,
        Err(e) => Enforcement::None(e.to_string()),
    }
}

/// Restricts the calling thread and what it starts to writing only the files `writable`, no TCP.
///
/// What it starts: the threads it starts later and every process they start. The files `writable`
/// are opened for writing; only `write` is allowed to them, not truncation. Reading and executing
/// are left alone.
///
/// Call it before starting any thread.
pub fn restrict_writes<F: AsFd>(writable: &[F]) -> Enforcement {
    let attempt = || -> Result<Enforcement, landlock::RulesetError> {
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_write(PINNED_ABI))?
            .handle_access(AccessNet::from_all(PINNED_ABI))?
            .create()?;
        for fd in writable {
            ruleset = ruleset.add_rule(PathBeneath::new(fd.as_fd(), AccessFs::WriteFile))?;
        }
        Ok(status_of(ruleset.restrict_self()?))
    };
    attempt().unwrap_or_else(|e| Enforcement::None(e.to_string()))
}

fn try_restrict<F: AsFd>(roots: &[F]) -> Result<Enforcement, landlock::RulesetError> {
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(PINNED_ABI))?
        .handle_access(AccessNet::from_all(PINNED_ABI))?
        .create()?;
    for fd in roots {
        ruleset = ruleset.add_rule(PathBeneath::new(fd.as_fd(), read))?;
    }
    Ok(status_of(ruleset.restrict_self()?))
}

/// What the kernel said of a ruleset.
fn status_of(status: landlock::RestrictionStatus) -> Enforcement {
    match (status.ruleset, status.landlock) {
        (RulesetStatus::FullyEnforced, _) => Enforcement::Full,
        (RulesetStatus::PartiallyEnforced, _) => Enforcement::Partial,
        (RulesetStatus::NotEnforced, LandlockStatus::NotEnabled) => {
            Enforcement::None("Landlock is not enabled in this kernel".into())
        }
        (RulesetStatus::NotEnforced, LandlockStatus::NotImplemented) => {
            Enforcement::None("this kernel has no Landlock".into())
        }
        (RulesetStatus::NotEnforced, _) => {
            Enforcement::None("the kernel refused the ruleset".into())
        }
    }
}
