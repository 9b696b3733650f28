//! Reading a large regular file on two threads while redaction searches it for keywords.
//!
//! With redaction on, every byte that cat shows is searched for the rules' keywords first
//! ([`holds_keyword`]): about as long again as the kernel takes to copy the file into memory.
//! A [`Scout`] takes half of both on a second thread. The file is read in chunks of a fixed
//! size; the reader reads and searches the even chunks itself, and a scout thread reads and
//! searches the odd ones and hands each over, searched, in order. Each thread reads into its own
//! memory and searches it there, while it is still in that core's cache; the reader copies the
//! scout's chunks after its own, which costs far less than a search. The reader learns no more
//! than what a search of each chunk would tell it, and tells the redactor no more either (see
//! [`Lines`](super::Lines)): what is shown is the same with a scout or without one.
//!
//! The scout reads ahead at most two chunks, and stops at the end of the file, at a read error
//! (which the reader meets when it reaches that chunk), or when the reader drops it. If the
//! thread cannot start, or is gone without a chunk the reader waits for, the reader reads the
//! chunks itself. (A panic there ends the call through the panic hook, as on any thread.)

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use crate::redact::holds_keyword;

/// The size of a chunk, in bytes: large enough that handing one over costs little beside reading
/// and searching it, and small enough to stay in a core's cache between the two.
pub const CHUNK: usize = 256 * 1024;

/// A chunk read and searched by the scout thread.
struct Chunk {
    /// The chunk's bytes: fewer than the chunk size only at the end of the file.
    data: Vec<u8>,
    /// No keyword lies wholly within `data`.
    keyword_free: bool,
}

/// The reader's side of a scout: which chunk comes next, and the scout's chunks as they come.
pub struct Scout {
    /// The offset of chunk 0 in the file.
    origin: u64,
    /// The chunk size.
    size: usize,
    /// The index of the next chunk the reader takes.
    next: u64,
    /// The odd chunks, in order; `None` once the thread is gone.
    chunks: Option<Receiver<io::Result<Chunk>>>,
    /// Buffers given back to the thread, to read the next chunks into.
    spare: SyncSender<Vec<u8>>,
}

impl Scout {
    /// Starts a scout thread on `file`, whose chunks of `size` bytes start at offset `origin`.
    /// `None` when the thread cannot start (the reader then reads alone).
    pub fn start(file: &File, origin: u64, size: usize) -> Option<Scout> {
        let file = file.try_clone().ok()?;
        let (chunks_in, chunks) = sync_channel(1);
        let (spare, spare_out) = sync_channel::<Vec<u8>>(2);
        std::thread::Builder::new()
            .name("scout".into())
            .spawn(move || {
                let mut fresh = 2;
                let mut k: u64 = 1;
                loop {
                    let mut data = if fresh > 0 {
                        fresh -= 1;
                        Vec::new()
                    } else {
                        match spare_out.recv() {
                            Ok(data) => data,
                            Err(_) => return,
                        }
                    };
                    data.resize(size, 0);
                    let at = origin + k * size as u64;
                    let read = super::fill_at(&mut data, at, |b, o| file.read_at(b, o));
                    let last = !matches!(read, Ok(n) if n == size);
                    let chunk = read.map(|n| {
                        data.truncate(n);
                        Chunk {
                            keyword_free: !holds_keyword(&data),
                            data,
                        }
                    });
                    if chunks_in.send(chunk).is_err() || last {
                        return;
                    }
                    k += 2;
                }
            })
            .ok()?;
        Some(Scout {
            origin,
            size,
            next: 0,
            chunks: Some(chunks),
            spare,
        })
    }

    /// The chunk size.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The offset of the next chunk in the file.
    pub fn offset(&self) -> u64 {
        self.origin + self.next * self.size as u64
    }

    /// Reads the next chunk into `buf` (of the chunk size): the reader's own, or the scout's.
    /// Returns how many bytes it holds (fewer than the chunk size only at the end of the file)
    /// and whether no keyword lies wholly within them.
    ///
    /// # Errors
    /// The read's error, when reading the chunk failed.
    pub fn next_chunk(&mut self, file: &File, buf: &mut [u8]) -> io::Result<(usize, bool)> {
        let buf = &mut buf[..self.size];
        let at = self.offset();
        let k = self.next;
        self.next += 1;
        if k % 2 == 1
            && let Some(chunks) = &self.chunks
        {
            match chunks.recv() {
                Ok(chunk) => {
                    let chunk = chunk?;
                    let n = chunk.data.len();
                    buf[..n].copy_from_slice(&chunk.data);
                    // The thread may be gone already: then the buffer is not needed.
                    let _ = self.spare.try_send(chunk.data);
                    return Ok((n, chunk.keyword_free));
                }
                // The thread ended before this chunk: the reader goes on alone.
                Err(_) => self.chunks = None,
            }
        }
        let n = super::fill_at(buf, at, |b, o| file.read_at(b, o))?;
        Ok((n, !holds_keyword(&buf[..n])))
    }
}
