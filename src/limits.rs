//! The per-call budgets (bytes read, directory entries) and the deadline watchdog.
//!
//! Their rules are in docs/contract.md#limits. A `limit:` error names the setting that bounds it
//! and its variable, so that the caller knows what an operator could raise.
//!
//! Budgets are charged for what a tool consumed, never for its buffer sizes
//! (docs/contract.md#decisions-on-details). The watchdog is the only thing that enforces the
//! timeout: it answers for the call at the deadline even when the main thread is blocked in a read,
//! and ends the process soon after even when the answer cannot be written.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use crate::error::{EXIT_ERROR, Error};

/// How long the watchdog (and the panic hook) wait for the output when they answer for the call.
///
/// A writer that holds it longer is blocked on a standard output nobody reads: the envelope cannot
/// be closed then, and is not (docs/contract.md#limits).
pub const LOCK_GRACE: Duration = Duration::from_millis(200);

/// How long after the deadline the process ends with [`EXIT_ERROR`] if it is still there: well
/// within the half second of docs/contract.md#limits, and past [`LOCK_GRACE`].
const EXIT_GRACE: Duration = Duration::from_millis(400);

/// The read and entry budgets of one call.
#[derive(Debug)]
pub struct Budget {
    /// `max_read_bytes`: bytes of file content one call may consume, summed over all files.
    read_max: u64,
    read_used: AtomicU64,
    /// Bytes that one `readbox sh` stage passed to the next through a pipe: reading them again
    /// is not charged (docs/contract.md#readbox-sh), so they raise what may be consumed.
    piped: Arc<AtomicU64>,
    /// `max_entries`: directory entries one call may examine.
    entries_max: u64,
    entries_used: AtomicU64,
    /// The last stage of a `readbox sh` pipeline ended: the stages before it stop at their next
    /// charge, as a program stops on SIGPIPE.
    cancelled: AtomicBool,
}

impl Budget {
    /// A fresh budget of `read_max` bytes and `entries_max` directory entries.
    pub fn new(read_max: u64, entries_max: u64) -> Budget {
        Budget {
            read_max,
            read_used: AtomicU64::new(0),
            piped: Arc::new(AtomicU64::new(0)),
            entries_max,
            entries_used: AtomicU64::new(0),
            cancelled: AtomicBool::new(false),
        }
    }

    /// Bytes that may still be consumed.
    pub fn read_left(&self) -> u64 {
        self.read_limit()
            .saturating_sub(self.read_used.load(Ordering::Relaxed))
    }

    /// `max_read_bytes` and the bytes passed between `readbox sh` stages so far.
    fn read_limit(&self) -> u64 {
        self.read_max
            .saturating_add(self.piped.load(Ordering::SeqCst))
    }

    /// The counter of bytes passed between `readbox sh` stages: a stage's pipe adds what it
    /// writes, so the next stage, which charges what it reads, is not charged for them. Bytes
    /// written but never read (the reader stopped early) stay allowed: at most what the pipe
    /// held when its reader stopped.
    pub fn piped(&self) -> Arc<AtomicU64> {
        self.piped.clone()
    }

    /// Charges `n` bytes of content. A charge that exactly exhausts the budget is fine.
    ///
    /// # Errors
    /// `limit:` when the charge would pass `max_read_bytes`; nothing is charged then.
    pub fn charge_read(&self, n: u64) -> Result<(), Error> {
        self.check_cancelled()?;
        // One atomic step: grep's workers charge the same budget, and a load followed by a store
        // would let two of them both spend the last bytes.
        self.read_used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(n)
                    .filter(|&total| total <= self.read_limit())
            })
            .map(drop)
            .map_err(|_| self.read_exhausted())
    }

    /// Makes every later charge fail, until [`Budget::resume`]: the last stage of a `readbox sh`
    /// pipeline ended, so the stages before it stop, whatever they are doing between writes.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Ends [`Budget::cancel`]: the pipeline's stages are done, and the next one may charge.
    pub fn resume(&self) {
        self.cancelled.store(false, Ordering::Relaxed);
    }

    /// Whether charges fail because a pipeline's last stage ended ([`Budget::cancel`]).
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    fn check_cancelled(&self) -> Result<(), Error> {
        if self.is_cancelled() {
            return Err(Error::Limit(
                "the next stage of the pipeline stopped reading".into(),
            ));
        }
        Ok(())
    }

    /// The error of a read that would pass the budget.
    pub fn read_exhausted(&self) -> Error {
        Error::Limit(format!(
            "read more than max_read_bytes ({} bytes; READBOX_MAX_READ_BYTES)",
            self.read_max
        ))
    }

    /// Charges one directory entry.
    ///
    /// # Errors
    /// `limit:` for the entry after the `max_entries`th.
    pub fn charge_entry(&self) -> Result<(), Error> {
        self.check_cancelled()?;
        let used = self.entries_used.fetch_add(1, Ordering::Relaxed) + 1;
        if used > self.entries_max {
            return Err(Error::Limit(format!(
                "examined more than max_entries ({} directory entries; READBOX_MAX_ENTRIES)",
                self.entries_max
            )));
        }
        Ok(())
    }
}

/// The timeout (docs/contract.md#limits): `seconds` of wall time counted from `start` (process
/// start).
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    at: Instant,
    seconds: f64,
}

impl Deadline {
    /// The deadline `seconds` after `start`. `seconds` is finite and > 0 (the policy checks).
    pub fn new(start: Instant, seconds: f64) -> Deadline {
        let span = Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX);
        let at = start
            .checked_add(span)
            .unwrap_or_else(|| start + Duration::from_secs(86400 * 365));
        Deadline { at, seconds }
    }

    /// The error the call answers with at the deadline.
    pub fn error(&self) -> Error {
        Error::Timeout(format!(
            "the call took longer than {} s",
            format_seconds(self.seconds)
        ))
    }

    /// Starts the watchdog: at the deadline, `on_timeout` runs on its own thread (it writes the
    /// answer and ends the process). Whoever writes the answer, a write can block on a standard
    /// output or error that nobody reads, and then nothing returns: so a process still there
    /// 0.4 s (`EXIT_GRACE`) after the deadline ends with [`EXIT_ERROR`]. The thread is detached; a call
    /// that ends first simply exits, and a `readbox sh` session calls [`Watch::done`] after each
    /// command line, so that the next line has a deadline of its own.
    pub fn watch(self, on_timeout: impl FnOnce(Error) + Send + 'static) -> Watch {
        let done = Arc::new(AtomicBool::new(false));
        let watched = done.clone();
        let spawned = std::thread::Builder::new()
            .name("readbox-watchdog".into())
            .spawn(move || self.guard(&watched, on_timeout));
        // Without a watchdog thread the call still has every other limit; say nothing.
        drop(spawned);
        Watch { done }
    }

    /// The watchdog's work, on its thread: at the deadline, unless `done` is set by then, runs
    /// `on_timeout`, with a last thread that ends the process [`EXIT_GRACE`] later if it is still
    /// there.
    fn guard(self, done: &Arc<AtomicBool>, on_timeout: impl FnOnce(Error)) {
        sleep_until(self.at);
        if done.load(Ordering::SeqCst) {
            return;
        }
        let backstopped = done.clone();
        let backstop = std::thread::Builder::new()
            .name("readbox-backstop".into())
            .spawn(move || {
                sleep_until(self.at.checked_add(EXIT_GRACE).unwrap_or(self.at));
                if !backstopped.load(Ordering::SeqCst) {
                    std::process::exit(EXIT_ERROR);
                }
            });
        drop(backstop);
        on_timeout(self.error());
    }
}

/// The deadline of what runs before the policy is known (reading the config files, opening the
/// roots).
///
/// It is the timeout that `READBOX_TIMEOUT` sets, if it is a valid one below the default, else the
/// default (10 s). A config file may set a longer timeout, but reading it never takes that long
/// (docs/contract.md#limits).
pub fn early_seconds() -> f64 {
    const DEFAULT: f64 = 10.0;
    std::env::var("READBOX_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|t| t.is_finite() && *t > 0.0)
        .map_or(DEFAULT, |t| t.min(DEFAULT))
}

impl Deadline {
    /// Watches the start of a process (see [`early_seconds`]) on a thread of its own. At the
    /// deadline `on_timeout` runs there (it answers and ends the process).
    ///
    /// Landlock restricts only the thread that asks and the threads it starts later, and this one
    /// starts before: so it either ends ([`Early::end`]) or restricts itself and goes on as the
    /// call's watchdog ([`Early::hand_over`]) before the call reads anything.
    pub fn watch_start(self, on_timeout: impl FnOnce(Error) + Send + 'static) -> Early {
        let shared = Arc::new(Start::default());
        let watched = shared.clone();
        let thread = std::thread::Builder::new()
            .name("readbox-watchdog".into())
            .spawn(move || {
                loop {
                    let next = watched.next.lock().ok().and_then(|mut n| n.take());
                    if let Some(next) = next {
                        return Start::take_over(&watched, next);
                    }
                    if watched.done.load(Ordering::SeqCst) {
                        return;
                    }
                    let now = Instant::now();
                    if now >= self.at {
                        break;
                    }
                    std::thread::park_timeout(self.at - now);
                }
                on_timeout(self.error());
            })
            .ok();
        Early { shared, thread }
    }
}

/// The call's watch: at `deadline`, unless `done` is set by then, `on_timeout` runs.
struct Watching {
    deadline: Deadline,
    done: Arc<AtomicBool>,
    on_timeout: Box<dyn FnOnce(Error) + Send>,
}

/// The call's watch, handed to the start's watchdog ([`Early::hand_over`]).
struct Next {
    /// Restricts the calling thread as the main thread was; `false` if it could not.
    enter: Box<dyn FnOnce() -> bool + Send>,
    watching: Watching,
}

/// What the main thread and the start's watchdog share.
#[derive(Default)]
struct Start {
    /// The start is over and the thread ends.
    done: AtomicBool,
    /// The call's watch, when the thread is to go on as its watchdog.
    next: std::sync::Mutex<Option<Next>>,
    /// The thread's word on [`Start::next`]: `Ok` once it restricted itself, or the watch back.
    taken: std::sync::Mutex<Option<Result<(), Watching>>>,
    told: std::sync::Condvar,
}

impl std::fmt::Debug for Start {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Start")
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl Start {
    /// On the watchdog's thread: restricts itself, says so, and watches the call; or, if it could
    /// not restrict itself, gives the watch back and ends.
    fn take_over(&self, next: Next) {
        let Next { enter, watching } = next;
        if enter() {
            self.tell(Ok(()));
            let Watching {
                deadline,
                done,
                on_timeout,
            } = watching;
            deadline.guard(&done, on_timeout);
        } else {
            self.tell(Err(watching));
        }
    }

    fn tell(&self, word: Result<(), Watching>) {
        *self.taken.lock().unwrap_or_else(PoisonError::into_inner) = Some(word);
        self.told.notify_one();
    }
}

/// The watchdog of a process's start ([`Deadline::watch_start`]).
#[derive(Debug)]
pub struct Early {
    shared: Arc<Start>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Early {
    /// The start is over without a call to watch: the watchdog's thread ends, and is gone when
    /// this returns (unless it is answering the timeout, and then the process ends with it).
    pub fn end(self) {
        self.shared.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread {
            t.thread().unpark();
            let _ = t.join();
        }
    }

    /// The start is over and the call begins: the watchdog's thread restricts itself with
    /// `enter` (as the main thread has restricted itself; `enter` answers whether it could) and
    /// goes on as the call's watchdog, running `on_timeout` at `deadline` unless the [`Watch`]
    /// is done by then ([`Deadline::watch`]).
    ///
    /// Returns once the thread has restricted itself, so that no thread outside Landlock is left
    /// when the call reads. A thread that could not is ended, and a new one (started by the
    /// restricted main thread, so restricted too) takes the watch. One thread thus watches the
    /// whole process, with no second thread to start and no first one to wait out.
    pub fn hand_over(
        self,
        enter: impl FnOnce() -> bool + Send + 'static,
        deadline: Deadline,
        on_timeout: impl FnOnce(Error) + Send + 'static,
    ) -> Watch {
        let Some(thread) = self.thread else {
            return deadline.watch(on_timeout);
        };
        let done = Arc::new(AtomicBool::new(false));
        *self
            .shared
            .next
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Next {
            enter: Box::new(enter),
            watching: Watching {
                deadline,
                done: done.clone(),
                on_timeout: Box::new(on_timeout),
            },
        });
        thread.thread().unpark();
        let mut taken = self
            .shared
            .taken
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let word = loop {
            if let Some(word) = taken.take() {
                break word;
            }
            taken = self
                .shared
                .told
                .wait(taken)
                .unwrap_or_else(PoisonError::into_inner);
        };
        drop(taken);
        match word {
            // The thread goes on watching, detached, as every call's watchdog is.
            Ok(()) => Watch { done },
            Err(watching) => {
                let _ = thread.join();
                watching.deadline.watch(watching.on_timeout)
            }
        }
    }
}

/// A running watchdog ([`Deadline::watch`]).
#[derive(Debug)]
pub struct Watch {
    done: Arc<AtomicBool>,
}

impl Watch {
    /// The call it watches has answered: at the deadline, the watchdog does nothing.
    pub fn done(&self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

fn sleep_until(at: Instant) {
    loop {
        let now = Instant::now();
        if now >= at {
            return;
        }
        std::thread::sleep(at - now);
    }
}

/// Seconds as a person writes them: `10`, `0.5`, `2.25`.
pub fn format_seconds(s: f64) -> String {
    if s.fract() == 0.0 && s < 1e15 {
        format!("{}", s as u64)
    } else {
        format!("{s}")
    }
}

/// The allocator of the readbox binary: the system's, except when memory runs out.
///
/// Running out of memory then ends the call with an answer (`io: out of memory`, exit 2) instead of
/// the standard library's abort, which prints to standard error and dies by SIGABRT
/// (docs/contract.md#limits). The answer is given by the function that [`on_out_of_memory`]
/// registered, once a reserve set aside at start was given back, so that it can allocate what it
/// needs.
pub struct Allocator;

/// What answers when an allocation fails (the envelope, or the MCP server's last word).
static ON_OUT_OF_MEMORY: std::sync::OnceLock<fn() -> !> = std::sync::OnceLock::new();

/// Memory set aside at start, given back when an allocation fails.
static RESERVE: std::sync::atomic::AtomicPtr<u8> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// Set once memory ran out: a second failure (while answering the first) ends the process at once.
static OUT_OF_MEMORY: AtomicBool = AtomicBool::new(false);

const RESERVE_LAYOUT: std::alloc::Layout = match std::alloc::Layout::from_size_align(1 << 20, 16) {
    Ok(l) => l,
    Err(_) => panic!("a valid layout"),
};

/// Registers `answer` as what runs when an allocation fails, and sets aside the reserve it runs
/// on. The first registration counts.
pub fn on_out_of_memory(answer: fn() -> !) {
    if ON_OUT_OF_MEMORY.set(answer).is_ok() {
        // SAFETY: the layout has a non-zero size.
        let reserve =
            unsafe { std::alloc::GlobalAlloc::alloc(&std::alloc::System, RESERVE_LAYOUT) };
        RESERVE.store(reserve, Ordering::SeqCst);
    }
}

#[cold]
fn out_of_memory() -> ! {
    if OUT_OF_MEMORY.swap(true, Ordering::SeqCst) {
        std::process::exit(EXIT_ERROR)
    }
    let reserve = RESERVE.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !reserve.is_null() {
        // SAFETY: the reserve was allocated by `System` with this layout, and is freed once.
        unsafe { std::alloc::GlobalAlloc::dealloc(&std::alloc::System, reserve, RESERVE_LAYOUT) };
    }
    match ON_OUT_OF_MEMORY.get() {
        Some(answer) => answer(),
        None => std::process::exit(EXIT_ERROR),
    }
}

// SAFETY: every call goes to `System`, which keeps the GlobalAlloc contract; a failure diverges
// instead of returning null.
unsafe impl std::alloc::GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller keeps `alloc`'s contract.
        let p = unsafe { std::alloc::System.alloc(layout) };
        if p.is_null() {
            out_of_memory()
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller keeps `alloc_zeroed`'s contract.
        let p = unsafe { std::alloc::System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory()
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        // SAFETY: the caller keeps `realloc`'s contract.
        let p = unsafe { std::alloc::System.realloc(ptr, layout, new) };
        if p.is_null() {
            out_of_memory()
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: the caller keeps `dealloc`'s contract.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_budget_allows_exact_fit_and_refuses_more() {
        let b = Budget::new(10, 0);
        assert!(b.charge_read(6).is_ok());
        assert!(b.charge_read(5).is_err());
        assert_eq!(b.read_left(), 4);
        assert!(b.charge_read(4).is_ok());
        assert_eq!(b.read_left(), 0);
    }

    #[test]
    fn concurrent_charges_never_pass_the_budget_and_lose_none() {
        // 8 threads charge 3 bytes at a time, 1.6 million times in all, into a budget of 3
        // million bytes: exactly 1 million charges succeed, whatever the interleaving. A charge
        // lost between a load and a store lets more succeed than the budget holds.
        let b = Budget::new(3_000_000, 0);
        let granted = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..200_000 {
                        if b.charge_read(3).is_ok() {
                            granted.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(granted.load(Ordering::Relaxed), 1_000_000);
        assert_eq!(b.read_left(), 0);
        assert!(b.charge_read(1).is_err());
    }

    #[test]
    fn a_charge_that_overflows_is_refused() {
        let b = Budget::new(u64::MAX, 0);
        assert!(b.charge_read(u64::MAX - 1).is_ok());
        assert!(b.charge_read(2).is_err());
        assert_eq!(b.read_left(), 1);
    }

    #[test]
    fn entry_budget_allows_exactly_max() {
        let b = Budget::new(0, 2);
        assert!(b.charge_entry().is_ok());
        assert!(b.charge_entry().is_ok());
        assert!(matches!(b.charge_entry(), Err(Error::Limit(_))));
    }

    #[test]
    fn seconds_are_written_plainly() {
        assert_eq!(format_seconds(10.0), "10");
        assert_eq!(format_seconds(0.5), "0.5");
    }
}
