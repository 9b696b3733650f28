//! Kernels without some features, for the attack suite: a seccomp filter, installed in the child
//! just before it starts readbox, makes the Landlock system calls (and, if asked, openat2) fail
//! with ENOSYS, as on a kernel that lacks them. readbox then runs without its second wall, or
//! with its component-by-component resolver, and the user-space checks alone must hold.

use std::sync::Arc;

use crate::support::{ChildSetup, TestEnv};

/// What the kernel lacks for a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// This machine's kernel as it is.
    AsItIs,
    /// Without Landlock.
    NoLandlock,
    /// Without Landlock and without openat2.
    NoLandlockNoOpenat2,
}

/// Every variant that this machine can run: all three where the filter can be built for its
/// architecture, else only [`Kernel::AsItIs`].
pub fn variants() -> Vec<Kernel> {
    if AUDIT_ARCH.is_some() {
        vec![
            Kernel::AsItIs,
            Kernel::NoLandlock,
            Kernel::NoLandlockNoOpenat2,
        ]
    } else {
        eprintln!("note: no seccomp filter for this architecture; only the kernel as it is");
        vec![Kernel::AsItIs]
    }
}

impl Kernel {
    /// Makes every later call of `env` run on this kernel.
    pub fn apply(self, env: &mut TestEnv) {
        let blocked: &[libc::c_long] = match self {
            Kernel::AsItIs => return,
            Kernel::NoLandlock => &LANDLOCK,
            Kernel::NoLandlockNoOpenat2 => {
                &[LANDLOCK[0], LANDLOCK[1], LANDLOCK[2], libc::SYS_openat2]
            }
        };
        env.child_setup(enosys(blocked));
        // The filter must have taken: readbox reports that Landlock is not enforced.
        let sandbox = env.readbox(&["policy"]).json()["sandbox"].to_string();
        assert!(sandbox.contains("not enforced"), "{self:?}: {sandbox}");
    }
}

const LANDLOCK: [libc::c_long; 3] = [
    libc::SYS_landlock_create_ruleset,
    libc::SYS_landlock_add_rule,
    libc::SYS_landlock_restrict_self,
];

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: Option<u32> = Some(0xc000_003e);
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: Option<u32> = Some(0xc000_00b7);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const AUDIT_ARCH: Option<u32> = None;

/// A child setup that installs a seccomp filter answering ENOSYS to the `blocked` system calls
/// (on this architecture; a call from another one is let through) and allowing everything else.
fn enosys(blocked: &[libc::c_long]) -> ChildSetup {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    const ARCH_OFFSET: u32 = 4;
    const NR_OFFSET: u32 = 0;
    let stmt = |code, k| libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |k, jt, jf| libc::sock_filter {
        code: JEQ_K,
        jt,
        jf,
        k,
    };
    let allow = stmt(RET_K, libc::SECCOMP_RET_ALLOW);
    let mut program = vec![
        stmt(LD_W_ABS, ARCH_OFFSET),
        jump(AUDIT_ARCH.expect("a known architecture"), 1, 0),
        allow,
        stmt(LD_W_ABS, NR_OFFSET),
    ];
    for &nr in blocked {
        program.push(jump(nr as u32, 0, 1));
        program.push(stmt(RET_K, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
    }
    program.push(allow);
    install_filter(program)
}

/// A child setup that installs the seccomp filter `program` (built before the fork, so that
/// nothing allocates in the child).
fn install_filter(program: Vec<libc::sock_filter>) -> ChildSetup {
    Arc::new(move || {
        let prog = libc::sock_fprog {
            len: program.len() as u16,
            filter: program.as_ptr().cast_mut(),
        };
        // SAFETY: plain system calls on memory that outlives them; the filter program was built
        // before the fork, so nothing allocates here.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &raw const prog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    })
}

/// A child setup that lowers the limit on open file descriptors to `n`.
pub fn max_open_files(n: u64) -> ChildSetup {
    Arc::new(move || {
        let lim = libc::rlimit {
            rlim_cur: n,
            rlim_max: n,
        };
        // SAFETY: a plain system call on a value on the stack.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const lim) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    })
}

/// A child setup that pins readbox to the first CPU it may run on, so that it sees one core
/// (`available_parallelism` follows the affinity) and searches on one thread.
pub fn one_cpu() -> ChildSetup {
    Arc::new(|| {
        // SAFETY: plain system calls on a set on the stack.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw mut set) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            let first = (0..libc::CPU_SETSIZE as usize)
                .find(|&c| libc::CPU_ISSET(c, &set))
                .unwrap_or(0);
            libc::CPU_ZERO(&mut set);
            libc::CPU_SET(first, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set)
                != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    })
}

/// A child setup under which file permissions bind readbox even when the tests run as root: it
/// drops the capabilities that override them (`CAP_DAC_OVERRIDE`, `CAP_DAC_READ_SEARCH`) from the
/// bounding set, so that the program it starts never has them. Where that is not permitted it does
/// nothing; the caller checks that a file without read permission is refused before it relies on
/// it.
pub fn permissions_bind() -> ChildSetup {
    // linux/capability.h
    const CAP_DAC_OVERRIDE: libc::c_ulong = 1;
    const CAP_DAC_READ_SEARCH: libc::c_ulong = 2;
    Arc::new(|| {
        // SAFETY: plain system calls with integer arguments.
        unsafe {
            if libc::geteuid() == 0 {
                for cap in [CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH] {
                    libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
                }
            }
        }
        Ok(())
    })
}

/// A child setup under which no mapping larger than `limit` bytes can be made (`mmap` and
/// `mremap` fail with ENOMEM) and the heap cannot grow with `brk`: an allocation larger than
/// `limit` fails, as it would with the memory spent, at a size that does not depend on the
/// machine. Where no seccomp filter can be built for this architecture it returns `None`.
pub fn large_allocations_fail(limit: u32) -> Option<ChildSetup> {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const JGT_K: u16 = 0x25;
    const RET_K: u16 = 0x06;
    let arch = AUDIT_ARCH?;
    let stmt = |code, k| libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code, k, jt, jf| libc::sock_filter { code, jt, jf, k };
    let allow = stmt(RET_K, libc::SECCOMP_RET_ALLOW);
    let enomem = stmt(RET_K, libc::SECCOMP_RET_ERRNO | libc::ENOMEM as u32);
    // The length argument's words: seccomp_data's args start at 16, eight bytes each.
    let length_over = |arg: u32| {
        [
            stmt(LD_W_ABS, 16 + 8 * arg + 4),
            jump(JEQ_K, 0, 1, 0),
            enomem,
            stmt(LD_W_ABS, 16 + 8 * arg),
            jump(JGT_K, limit, 0, 1),
            enomem,
            allow,
        ]
    };
    let mut program = vec![
        stmt(LD_W_ABS, 4),
        jump(JEQ_K, arch, 1, 0),
        allow,
        stmt(LD_W_ABS, 0),
        jump(JEQ_K, libc::SYS_brk as u32, 0, 1),
        enomem,
        jump(JEQ_K, libc::SYS_mmap as u32, 0, 7),
    ];
    program.extend(length_over(1));
    program.push(jump(JEQ_K, libc::SYS_mremap as u32, 0, 7));
    program.extend(length_over(2));
    program.push(allow);
    Some(install_filter(program))
}
