//! grep's directory search (docs/contract.md#tools): the walk runs on the calling thread, in
//! order, while workers search the files ahead of it (and the calling thread searches queued
//! files too rather than wait); each file's matches are printed in walk order by the [`Printer`],
//! which applies the read budget and the output cap to them, so that the answer does not depend
//! on how the work was split.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, TryLockError, mpsc};

use super::search::{FileMatches, Report, Search, Snapshot, probe_binary};
use super::stream::Stream;
use crate::call::Ctx;
use crate::envelope::Stop;
use crate::error::{Error, shown};
use crate::read::{BINARY_PROBE, Filter, Lines};
use crate::resolve::Node;
use crate::walk::Entry;

/// A file of a directory search, found by the walk.
pub(super) struct Job {
    /// Its place in the walk's order.
    pub(super) index: usize,
    /// Its directory, found by the walk (shared by the directory's files).
    pub(super) dir: Arc<Node>,
    /// Its name in `dir`.
    pub(super) name: OsString,
    /// Its path as the output shows it.
    pub(super) display: Vec<u8>,
    /// The limits when the walk found it.
    pub(super) limits: Snapshot,
}

/// What every file of a directory search shares: the call, PATTERN's search, the caller's PATH
/// (for errors), and the workers' common state.
pub(super) struct DirSearch<'s, 'a> {
    /// The call.
    pub(super) ctx: &'s Ctx<'a>,
    /// PATTERN's search.
    pub(super) search: &'s Search,
    /// The caller's PATH, as errors show it.
    pub(super) shown: &'s str,
    /// The answer is complete: the files still queued need no search.
    pub(super) stop: AtomicBool,
    /// The bytes of matches that the workers hold, waiting to be printed.
    pub(super) held: AtomicUsize,
}

impl DirSearch<'_, '_> {
    /// Searches a walked file. One that vanished, is no longer a regular file or is refused (a hard
    /// link under `hardlinks = "deny"`) is left out without a word, as in any walk; one that cannot
    /// be opened or read is left out and counted; running short of descriptors or memory is kept as
    /// the error the search ends with. A binary file costs only the bytes that showed it binary.
    pub(super) fn search_job(&self, job: &Job) -> FileMatches {
        let ctx = self.ctx;
        let mut found = match self.search_file(job) {
            Ok(f) => f,
            Err(e @ Error::Shortage(_)) => FileMatches {
                shortage: Some(e),
                ..FileMatches::default()
            },
            // What was found before a read error is dropped with the file.
            Err(_) => FileMatches {
                unreadable: true,
                ..FileMatches::default()
            },
        };
        // What was read, and what failed, is used once the directory is found again at its place.
        found.ticket = Some(ctx.gate.read_through(&job.dir));
        found
    }

    /// [`DirSearch::search_job`]'s search, whose errors it sorts.
    fn search_file(&self, job: &Job) -> Result<FileMatches, Error> {
        let (ctx, shown) = (self.ctx, self.shown);
        let Some((file, size)) = ctx.gate.open_child_file(&job.dir, &job.name, shown)? else {
            return Ok(FileMatches::default());
        };
        let mut lines = Lines::new(file, Some(size), shown);
        // Text in UTF-16 or UTF-32 (docs/contract.md#tools): the first block read tells, without a
        // read of its own for every file of the walk.
        if let Some(e) = crate::read::Encoding::of_mark(lines.head(BINARY_PROBE)?) {
            ctx.out.note(crate::read::decoded_note(
                &String::from_utf8_lossy(&job.display),
                e,
            ));
            lines = Lines::new(
                crate::read::decoded(lines.into_file()?, e, shown)?,
                None,
                shown,
            );
        }
        match probe_binary(&mut lines)? {
            (false, probed) => {
                let filter = Filter::new(ctx.policy.redact);
                self.search.collect(
                    lines,
                    filter,
                    &job.display,
                    probed,
                    job.limits,
                    &self.stop,
                    &self.held,
                )
            }
            (true, probed) => Ok(FileMatches {
                consumed: probed as u64,
                binary: true,
                ..FileMatches::default()
            }),
        }
    }

    /// [`DirSearch::search_job`] of `job`, or nothing once the search stopped, as its result is
    /// handed over; its output is held as the printer's until the printer lets it go.
    pub(super) fn searched(&self, job: Job) -> Found {
        let f = if self.stop.load(Ordering::Relaxed) {
            FileMatches::default()
        } else {
            self.search_job(&job)
        };
        self.held.fetch_add(f.out.len(), Ordering::Relaxed);
        (job.index, job.display, f)
    }
}

/// A file's result as a searcher hands it over: its place in the walk's order, its path as the
/// output shows it, and what its search found.
pub(super) type Found = (usize, Vec<u8>, FileMatches);

/// Files handed to a worker at once (fewer hand-overs, less waking of threads), and on one core
/// the files searched before their results are printed (one settle for them all).
pub(super) const BATCH: usize = 16;

/// Results that wait for their turn to be printed: at most this many files are searched ahead
/// of the one printed next, which bounds memory.
const MAX_AHEAD: usize = 8 * BATCH;

/// Prints the results of a search in file order.
pub(super) struct Printer<'c, 'a> {
    dir: &'c DirSearch<'c, 'a>,
    next: usize,
    waiting: BTreeMap<usize, (Vec<u8>, FileMatches)>,
    /// A line matched.
    pub(super) found: bool,
    /// Files skipped as binary.
    pub(super) binary: usize,
    /// Files that could not be opened or read.
    pub(super) unreadable: usize,
    /// Printing stopped: nothing more is printed.
    ended: bool,
}

impl<'c, 'a> Printer<'c, 'a> {
    /// The printer of `dir`'s results, before the first.
    pub(super) fn new(dir: &'c DirSearch<'c, 'a>) -> Printer<'c, 'a> {
        Printer {
            dir,
            next: 0,
            waiting: BTreeMap::new(),
            found: false,
            binary: 0,
            unreadable: 0,
            ended: false,
        }
    }

    /// Takes the result of file `index`, and prints every result whose turn has come. Once
    /// printing has stopped (a limit, the cap, an error), results of later files are let go: the
    /// answer holds only what came before the stop, however the search was split.
    pub(super) fn take(
        &mut self,
        index: usize,
        display: Vec<u8>,
        f: FileMatches,
    ) -> Result<(), Stop> {
        if self.ended {
            self.dir.held.fetch_sub(f.out.len(), Ordering::Relaxed);
            return Ok(());
        }
        let printed = self.print_in_order(index, display, f);
        if printed.is_err() {
            self.ended = true;
            for (_, f) in std::mem::take(&mut self.waiting).into_values() {
                self.dir.held.fetch_sub(f.out.len(), Ordering::Relaxed);
            }
        }
        printed
    }

    /// [`Printer::take`] of each of `results`, in their order; returns the first stop.
    pub(super) fn take_all(&mut self, results: Vec<Found>) -> Result<(), Stop> {
        let mut printed = Ok(());
        for (index, display, f) in results {
            let taken = self.take(index, display, f);
            if printed.is_ok() {
                printed = taken;
            }
        }
        printed
    }

    fn print_in_order(
        &mut self,
        index: usize,
        display: Vec<u8>,
        f: FileMatches,
    ) -> Result<(), Stop> {
        // The result whose turn it is goes out without a stay in the queue.
        let mut now = if index == self.next {
            Some((display, f))
        } else {
            self.waiting.insert(index, (display, f));
            None
        };
        while let Some((display, f)) = now.take().or_else(|| self.waiting.remove(&self.next)) {
            self.next += 1;
            // Lines, or a stop, come only from files whose directory was found again at its
            // place since they were read.
            let used = !f.out.is_empty()
                || f.rest.is_some()
                || f.consumed > self.dir.ctx.budget.read_left()
                || f.unreadable
                || f.shortage.is_some();
            self.dir
                .ctx
                .gate
                .settle_for(f.ticket.filter(|_| used), self.dir.shown)?;
            let held = f.out.len();
            let printed = self.emit(&display, f);
            self.dir.held.fetch_sub(held, Ordering::Relaxed);
            match &printed {
                Err(Stop::Truncated) => self.dir.ctx.out.note_truncation(format!(
                    " in the matches of {}; narrow PATH or FILE_PATTERN, or search for a longer \
                     PATTERN, to see the rest",
                    String::from_utf8_lossy(&display)
                )),
                // The budget is the call's, not the file's: say where it ran out, so that the
                // files after it can be searched by a narrower call.
                Err(Stop::Error(e)) if *e == self.dir.ctx.budget.read_exhausted() => {
                    self.dir.ctx.out.note(format!(
                        "the read budget ran out in {}: the files after it were not searched; \
                         narrow PATH or FILE_PATTERN to search them",
                        String::from_utf8_lossy(&display)
                    ));
                }
                _ => {}
            }
            printed?;
        }
        Ok(())
    }

    /// Applies the read budget and the output cap to one file's result, in file order: the
    /// lines looked at within the budget are printed; the line that crossed it is not
    /// (docs/contract.md#limits). A handed-back file goes on here, streamed.
    fn emit(&mut self, display: &[u8], f: FileMatches) -> Result<(), Stop> {
        let ctx = self.dir.ctx;
        if let Some(e) = f.shortage {
            return Err(e.into());
        }
        if f.binary {
            self.binary += 1;
        }
        if f.unreadable {
            self.unreadable += 1;
        }
        let left = ctx.budget.read_left();
        if f.consumed > left {
            let cut = f
                .marks
                .iter()
                .take_while(|(through, _)| *through <= left)
                .last()
                .map_or(0, |&(_, len)| len);
            self.found |= cut > 0;
            ctx.out.push(&f.out[..cut])?;
            return Err(ctx.budget.read_exhausted().into());
        }
        ctx.budget.charge_read(f.consumed)?;
        self.found |= !f.marks.is_empty();
        let ends: Vec<usize> = f.marks.iter().map(|&(_, len)| len).collect();
        self.dir.search.push_records(ctx, &f.out, &ends, display)?;
        if let Some(t) = &f.tally {
            ctx.out.add_redactions(t);
        }
        if let Some(mut rest) = f.rest {
            let shown_path = shown(display);
            let mut lines = Lines::resume(rest.file, rest.size, rest.offset, &shown_path)?;
            let ahead = lines.ahead()?;
            let stream = Stream {
                search: self.dir.search,
                ctx,
                ahead: &ahead,
                display,
                walked: true,
            };
            let result = stream.run(&mut lines, &mut rest.filter, rest.line_no, Report::Lines);
            rest.filter.report(ctx.out);
            self.found |= result.as_ref().is_ok_and(|s| s.found);
            self.binary += usize::from(result.as_ref().is_ok_and(|s| s.binary));
            match result {
                // A read error part way: the file is counted as one that could not be read
                // (its lines before the error are out already).
                Err(Stop::Error(Error::Io(_))) => self.unreadable += 1,
                other => {
                    other?;
                }
            }
        }
        Ok(())
    }
}

impl DirSearch<'_, '_> {
    /// Searches `batch` on this thread, then hands the results to `printer` together, as a
    /// worker does. Between its files, the workers' results (`done`) go to `printer` as they
    /// come, so that what a worker found is printed as early as while this thread walks. After a
    /// stop, the rest are let go there. Returns the first stop.
    fn search_here(
        &self,
        batch: Vec<Job>,
        printer: &mut Printer<'_, '_>,
        done: &mpsc::Receiver<Vec<Found>>,
    ) -> Result<(), Stop> {
        let mut printed = Ok(());
        let mut found = Vec::with_capacity(batch.len());
        for job in batch {
            found.push(self.searched(job));
            while printed.is_ok()
                && let Ok(results) = done.try_recv()
            {
                printed = printer.take_all(results);
            }
            if printed.is_err() {
                // The answer is complete: the files still to search need no search.
                self.stop.store(true, Ordering::Relaxed);
            }
        }
        let taken = printer.take_all(found);
        printed.and(taken)
    }

    /// The parallel search: the walk runs here, in order (`walk` calls `visit` for each wanted file);
    /// the files are searched by `workers` workers, and by this thread too whenever the workers
    /// have a full queue or it waits for their results, so that no core idles while another has
    /// files queued; results are printed here, in order. A limit, a truncation or an error stops
    /// the workers.
    pub(super) fn parallel(
        &self,
        printer: &mut Printer<'_, '_>,
        workers: usize,
        walk: impl FnOnce(&mut dyn FnMut(&Entry<'_>) -> Result<(), Stop>) -> Result<(), Stop>,
        job_of: &dyn Fn(&Entry<'_>, usize) -> Job,
        count: &mut usize,
    ) -> Result<(), Stop> {
        let stop = &self.stop;
        let (job_tx, job_rx) = mpsc::sync_channel::<Vec<Job>>(workers * 2);
        let job_rx = Mutex::new(job_rx);
        // A batch's results are sent together as soon as it is searched, so that one settle
        // covers the batch's reads (docs/security.md#checks-bracket-the-reads), not one per file,
        // and a batch searched early is printed early (and kept in the answer if the deadline
        // comes during a later one), as on one core.
        let (done_tx, done_rx) = mpsc::channel::<Vec<Found>>();
        // A batch still queued, taken by this thread. A worker that holds the queue waits for a
        // batch (the queue is empty) or is about to take one: this thread then takes none.
        let steal = || match job_rx.try_lock() {
            Ok(rx) => rx.try_recv().ok(),
            // A worker that panicked left the queue to this thread.
            Err(TryLockError::Poisoned(rx)) => rx.into_inner().try_recv().ok(),
            Err(TryLockError::WouldBlock) => None,
        };
        // Queues `batch`; with the queue full, this thread first searches the oldest queued
        // batch itself, which makes room.
        let queue = |job_tx: &mpsc::SyncSender<Vec<Job>>,
                     batch: Vec<Job>,
                     printer: &mut Printer<'_, '_>|
         -> Result<(), Stop> {
            match job_tx.try_send(batch) {
                Ok(()) | Err(mpsc::TrySendError::Disconnected(_)) => Ok(()),
                Err(mpsc::TrySendError::Full(batch)) => {
                    let printed = match steal() {
                        Some(old) => self.search_here(old, printer, &done_rx),
                        None => Ok(()),
                    };
                    // Only this thread queues: the room it made stays until the send.
                    let _ = job_tx.send(batch);
                    printed
                }
            }
        };
        // The next result in any order: a queued batch searched here, else a worker's.
        let next_result = |printer: &mut Printer<'_, '_>| -> Option<Result<(), Stop>> {
            if let Some(batch) = steal() {
                return Some(self.search_here(batch, printer, &done_rx));
            }
            let results = done_rx.recv().ok()?;
            Some(printer.take_all(results))
        };
        std::thread::scope(|scope| -> Result<(), Stop> {
            for _ in 0..workers {
                let (job_rx, done_tx) = (&job_rx, done_tx.clone());
                scope.spawn(move || {
                    loop {
                        let batch = match job_rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok(batch) = batch else { return };
                        let results = batch.into_iter().map(|job| self.searched(job)).collect();
                        if done_tx.send(results).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(done_tx);
            let mut batch: Vec<Job> = Vec::with_capacity(BATCH);
            let mut visit = |e: &Entry<'_>| -> Result<(), Stop> {
                batch.push(job_of(e, *count));
                *count += 1;
                if batch.len() < BATCH {
                    return Ok(());
                }
                let mut printed = queue(
                    &job_tx,
                    std::mem::replace(&mut batch, Vec::with_capacity(BATCH)),
                    printer,
                );
                while printed.is_ok() && *count - printer.next > MAX_AHEAD {
                    match next_result(printer) {
                        Some(p) => printed = p,
                        None => break,
                    }
                }
                while printed.is_ok()
                    && let Ok(results) = done_rx.try_recv()
                {
                    printed = printer.take_all(results);
                }
                if printed.is_err() {
                    // The answer is complete: the files still queued need no search.
                    stop.store(true, Ordering::Relaxed);
                }
                printed
            };
            let walked = walk(&mut visit);
            let mut printed = Ok(());
            if !batch.is_empty() {
                printed = queue(&job_tx, std::mem::take(&mut batch), printer);
            }
            drop(job_tx);
            // The files found before the walk stopped are printed first, as a serial search would
            // have; a stop while printing them comes first too.
            while printed.is_ok() && printer.next < *count {
                match next_result(printer) {
                    Some(p) => printed = p,
                    None => break,
                }
            }
            if printed.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            printed.and(walked)
        })
    }
}
