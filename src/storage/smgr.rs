//! The storage manager: relation forks as files split into 1 GiB segments.
//!
//! A relation's main fork lives in `base/<relfilenumber>`, `base/<relfilenumber>.1`, ...; its
//! free space map fork in `base/<relfilenumber>_fsm`. Block `b` is in segment
//! `b / blocks_per_segment` at byte offset `(b % blocks_per_segment) * block_size`.
//!
//! Entry points: [`Smgr::read`], [`Smgr::readv`], [`Smgr::write`], [`Smgr::writev`],
//! [`Smgr::zero_extend`], [`Smgr::nblocks`], [`Smgr::truncate`], [`Smgr::fsync`],
//! [`Smgr::unlink`].
//!
//! Invariants:
//! 1. Every segment but the last of a fork is exactly `blocks_per_segment` blocks long; the
//!    fork's size is known from its last segment.
//! 2. Zero-extending by 8 or more blocks uses `posix_fallocate` (no data written, the range
//!    reads back as zeros); fewer blocks are written as zeros with `pwritev`, as PostgreSQL 16's
//!    `mdzeroextend` chooses (seed 000).
//! 3. With `io_direct` on, files are opened `O_DIRECT`, and every buffer handed in must be
//!    4096-aligned (asserted): the buffer pool's memory is.
//! 4. A short read past the end of a fork is an error naming the file and block, never
//!    zero-filled silently.
//! 5. `nblocks` is cached per fork and changed only by `zero_extend`, `write` past the end and
//!    `truncate`; callers that extend hold the relation's extension lock, so the cache cannot go
//!    backwards underneath a reader. The first size read from the file system is cached only if
//!    no extender noted a size meanwhile (`settle_nblocks`): a stat taken before an extension
//!    must not replace the size the extension noted.
//! 6. A failed fsync poisons the storage manager: that call and every later write, extend or
//!    fsync fail with an error naming the first failure, until the process restarts and crash
//!    recovery rebuilds what was not durable (PostgreSQL's lesson: a failed fsync is never
//!    retried as if it had worked).
//! 7. A relation file's name is durable before anything depends on it: `create`, a new segment
//!    and a truncation that removes segments fsync `base/` (the file-system seam's rule: a name
//!    is volatile until its directory is synced). Every file operation goes through the
//!    [`Vfs`] seam.

use super::vfs::{OpenMode, Vfs, VfsFile};
use crate::error::{sqlstate, PgError, Result};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// Identifies a relation's files on disk (PostgreSQL's relfilenumber).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct RelFileNumber(pub u32);

/// A relation fork.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ForkNumber {
    Main = 0,
    Fsm = 1,
    /// The visibility map (`access::vm`).
    Vm = 2,
}

impl ForkNumber {
    pub const ALL: [ForkNumber; 3] = [ForkNumber::Main, ForkNumber::Fsm, ForkNumber::Vm];
    fn suffix(self) -> &'static str {
        match self {
            ForkNumber::Main => "",
            ForkNumber::Fsm => "_fsm",
            ForkNumber::Vm => "_vm",
        }
    }
}

pub type BlockNumber = u32;

/// The alignment O_DIRECT needs for memory, offsets and lengths.
pub const DIRECT_IO_ALIGN: usize = 4096;

/// Relation segment files are 1 GiB, as PostgreSQL's.
pub const SEGMENT_BYTES: u64 = 1 << 30;

struct ForkFiles {
    segments: RwLock<Vec<Arc<dyn VfsFile>>>,
    /// Cached size in blocks; `u32::MAX` when not known yet.
    nblocks: AtomicU32,
}

/// Faults the tests inject at the storage boundary.
#[derive(Default)]
pub struct Faults {
    /// The next fsync fails with EIO.
    pub fail_next_fsync: std::sync::atomic::AtomicBool,
    /// Extending a relation fails with ENOSPC while set.
    pub enospc: std::sync::atomic::AtomicBool,
    /// The next write of this (relfile, block) writes only its first half (a torn page).
    pub torn_write: Mutex<Option<(RelFileNumber, BlockNumber)>>,
}

/// Relation files under one data directory.
pub struct Smgr {
    /// Fault injection hooks (tests).
    pub faults: Faults,
    poisoned: Mutex<Option<String>>,
    /// Segments written or extended since the last checkpoint's sync (the sync request queue).
    /// Ordered, so that a checkpoint syncs in the same order every run (the simulated disk
    /// replays a seed exactly).
    pending_sync: Mutex<BTreeSet<(RelFileNumber, ForkNumber, u32)>>,
    base: PathBuf,
    vfs: Arc<dyn Vfs>,
    block_size: usize,
    blocks_per_segment: u32,
    io_direct: bool,
    forks: RwLock<HashMap<(RelFileNumber, ForkNumber), Arc<ForkFiles>>>,
    zeros: crate::buffer::memory::AlignedBuf,
}

impl Smgr {
    pub fn new(datadir: &Path, block_size: usize, io_direct: bool) -> Result<Smgr> {
        Self::with_vfs(super::vfs::real(), datadir, block_size, io_direct, SEGMENT_BYTES)
    }

    /// As `new`, with a smaller segment size (tests exercise segment boundaries with it).
    pub fn with_segment_bytes(datadir: &Path, block_size: usize, io_direct: bool, segment_bytes: u64) -> Result<Smgr> {
        Self::with_vfs(super::vfs::real(), datadir, block_size, io_direct, segment_bytes)
    }

    /// Relation files of `datadir` on the file system `vfs`.
    pub fn with_vfs(vfs: Arc<dyn Vfs>, datadir: &Path, block_size: usize, io_direct: bool, segment_bytes: u64) -> Result<Smgr> {
        assert!(block_size.is_power_of_two() && (4096..=32768).contains(&block_size));
        assert!(segment_bytes % block_size as u64 == 0 && segment_bytes >= block_size as u64);
        let base = datadir.join("base");
        vfs.create_dir_all(&base).map_err(|e| PgError::io("create directory", &base, e))?;
        Ok(Smgr {
            faults: Faults::default(),
            poisoned: Mutex::new(None),
            pending_sync: Mutex::new(BTreeSet::new()),
            base,
            vfs,
            block_size,
            blocks_per_segment: (segment_bytes / block_size as u64) as u32,
            io_direct,
            forks: RwLock::new(HashMap::new()),
            zeros: crate::buffer::memory::AlignedBuf::zeroed(block_size * 16),
        })
    }

    pub fn block_size(&self) -> usize {
        self.block_size
    }

    pub fn io_direct(&self) -> bool {
        self.io_direct
    }

    /// The path of segment `seg` of a fork, relative paths as PostgreSQL prints them.
    pub fn segment_path(&self, rel: RelFileNumber, fork: ForkNumber, seg: u32) -> PathBuf {
        let name = if seg == 0 { format!("{}{}", rel.0, fork.suffix()) } else { format!("{}{}.{}", rel.0, fork.suffix(), seg) };
        self.base.join(name)
    }

    /// The name used in messages: `base/16384`.
    pub fn display_name(&self, rel: RelFileNumber, fork: ForkNumber) -> String {
        format!("base/{}{}", rel.0, fork.suffix())
    }

    /// The file system the relation files live on.
    pub fn vfs(&self) -> &Arc<dyn Vfs> {
        &self.vfs
    }

    fn open_segment(&self, path: &Path, create: bool) -> std::io::Result<Arc<dyn VfsFile>> {
        let mode = if create { OpenMode::CREATE } else { OpenMode::READ_WRITE };
        self.vfs.open(path, mode.direct(self.io_direct))
    }

    /// Makes the names of files created or removed in `base/` durable.
    fn fsync_base_dir(&self) -> Result<()> {
        self.vfs.fsync_dir(&self.base).map_err(|e| {
            let msg = format!("could not fsync directory \"base\": {e}");
            self.poisoned.lock().expect("poisoned").get_or_insert(msg.clone());
            PgError::new(sqlstate::IO_ERROR, msg)
        })
    }

    fn fork(&self, rel: RelFileNumber, fork: ForkNumber) -> Arc<ForkFiles> {
        if let Some(f) = self.forks.read().expect("smgr map poisoned").get(&(rel, fork)) {
            return f.clone();
        }
        let mut m = self.forks.write().expect("smgr map poisoned");
        m.entry((rel, fork))
            .or_insert_with(|| Arc::new(ForkFiles { segments: RwLock::new(Vec::new()), nblocks: AtomicU32::new(u32::MAX) }))
            .clone()
    }

    /// Opens (and with `create`, creates) segments up to and including `seg`.
    fn segment(&self, rel: RelFileNumber, fork: ForkNumber, seg: u32, create: bool) -> Result<Arc<dyn VfsFile>> {
        let ff = self.fork(rel, fork);
        {
            let segs = ff.segments.read().expect("poisoned");
            if let Some(f) = segs.get(seg as usize) {
                return Ok(f.clone());
            }
        }
        let mut segs = ff.segments.write().expect("poisoned");
        while segs.len() <= seg as usize {
            let n = segs.len() as u32;
            let path = self.segment_path(rel, fork, n);
            let existed = !create || self.vfs.exists(&path);
            let f = self.open_segment(&path, create).map_err(|e| PgError::io("open", &path, e))?;
            if !existed {
                // A new segment's name must survive a crash like its data (invariant 7).
                self.fsync_base_dir()?;
            }
            segs.push(f);
        }
        Ok(segs[seg as usize].clone())
    }

    /// Blocks per segment file (a read must not cross a segment boundary).
    pub fn blocks_per_segment(&self) -> u32 {
        self.blocks_per_segment
    }

    /// The open segment file holding `block`, the byte offset of the block in it, and how many
    /// blocks from `block` to the end of the segment (for asynchronous reads issued directly
    /// against the file).
    pub(crate) fn segment_for(&self, rel: RelFileNumber, fork: ForkNumber, block: BlockNumber) -> Result<(Arc<dyn VfsFile>, u64, u32)> {
        let seg = block / self.blocks_per_segment;
        let file = self
            .segment(rel, fork, seg, false)
            .map_err(|e| e.with_context(format!("reading block {block} of relation {}", self.display_name(rel, fork))))?;
        let in_seg = block % self.blocks_per_segment;
        Ok((file, in_seg as u64 * self.block_size as u64, self.blocks_per_segment - in_seg))
    }

    /// True if the fork's first segment exists.
    pub fn exists(&self, rel: RelFileNumber, fork: ForkNumber) -> bool {
        self.vfs.exists(&self.segment_path(rel, fork, 0))
    }

    /// Creates an empty fork (truncating an existing one).
    pub fn create(&self, rel: RelFileNumber, fork: ForkNumber) -> Result<()> {
        self.forget(rel, fork);
        let path = self.segment_path(rel, fork, 0);
        let f = self.open_segment(&path, true).map_err(|e| PgError::io("create", &path, e))?;
        f.set_len(0).map_err(|e| PgError::io("truncate", &path, e))?;
        // The new name is made durable at once (invariant 7): WAL records for this relation
        // may be flushed by a commit long before the next checkpoint.
        self.fsync_base_dir()
    }

    fn forget(&self, rel: RelFileNumber, fork: ForkNumber) {
        self.forks.write().expect("poisoned").remove(&(rel, fork));
    }

    /// The fork's size in blocks (0 if it does not exist).
    pub fn nblocks(&self, rel: RelFileNumber, fork: ForkNumber) -> Result<BlockNumber> {
        let ff = self.fork(rel, fork);
        let cached = ff.nblocks.load(Ordering::Acquire);
        if cached != u32::MAX {
            return Ok(cached);
        }
        let mut seg = 0u32;
        let mut total = 0u64;
        loop {
            let path = self.segment_path(rel, fork, seg);
            match self.vfs.open(&path, OpenMode::READ).and_then(|f| f.len()) {
                Ok(len) => {
                    let blocks = len / self.block_size as u64;
                    total += blocks;
                    if blocks < self.blocks_per_segment as u64 {
                        break;
                    }
                    seg += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => return Err(PgError::io("stat", &path, e)),
            }
        }
        let n = u32::try_from(total).map_err(|_| PgError::internal("relation too large"))?;
        Ok(settle_nblocks(&ff.nblocks, n))
    }

    fn note_extended(&self, rel: RelFileNumber, fork: ForkNumber, end_block: BlockNumber) {
        // Invariant 5: monotonic while the size is known (a larger end only). While it is not
        // known, the end of one write says nothing about the blocks after it (a flush of block
        // 3 of a 10-block fork must not make the size 4): the size is read from the file,
        // which already holds this write.
        let ff = self.fork(rel, fork);
        if ff.nblocks.load(Ordering::Acquire) == u32::MAX && self.nblocks(rel, fork).is_err() {
            return;
        }
        let _ = ff.nblocks.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n != u32::MAX && n < end_block).then_some(end_block));
    }

    fn check_aligned(&self, buf: &[u8]) {
        if self.io_direct {
            assert!(buf.as_ptr() as usize % DIRECT_IO_ALIGN == 0 && buf.len() % DIRECT_IO_ALIGN == 0, "O_DIRECT buffer not aligned");
        }
    }

    /// Reads one block into `buf` (exactly block_size bytes).
    pub fn read(&self, rel: RelFileNumber, fork: ForkNumber, block: BlockNumber, buf: &mut [u8]) -> Result<()> {
        self.readv(rel, fork, block, &mut [buf])
    }

    /// Reads consecutive blocks starting at `block`, one buffer per block, with as few system
    /// calls as segment boundaries allow.
    pub fn readv(&self, rel: RelFileNumber, fork: ForkNumber, block: BlockNumber, bufs: &mut [&mut [u8]]) -> Result<()> {
        let mut done = 0usize;
        while done < bufs.len() {
            let b = block + done as u32;
            let seg = b / self.blocks_per_segment;
            let in_seg = (self.blocks_per_segment - b % self.blocks_per_segment) as usize;
            let n = in_seg.min(bufs.len() - done);
            let file = self
                .segment(rel, fork, seg, false)
                .map_err(|e| e.with_context(format!("reading block {b} of relation {}", self.display_name(rel, fork))))?;
            let offset = (b % self.blocks_per_segment) as u64 * self.block_size as u64;
            let chunk = &mut bufs[done..done + n];
            for c in chunk.iter() {
                debug_assert_eq!(c.len(), self.block_size);
                self.check_aligned(c);
            }
            self.preadv_full(&file, chunk, offset, rel, fork, b)?;
            done += n;
        }
        Ok(())
    }

    fn preadv_full(
        &self,
        file: &Arc<dyn VfsFile>,
        bufs: &mut [&mut [u8]],
        mut offset: u64,
        rel: RelFileNumber,
        fork: ForkNumber,
        first: BlockNumber,
    ) -> Result<()> {
        let want: usize = bufs.iter().map(|b| b.len()).sum();
        let mut got = 0usize;
        while got < want {
            let mut rest: Vec<&mut [u8]> = Vec::with_capacity(bufs.len());
            let mut skip = got;
            for b in bufs.iter_mut() {
                if skip >= b.len() {
                    skip -= b.len();
                    continue;
                }
                rest.push(&mut b[skip..]);
                skip = 0;
            }
            let r = match file.readv_at(&mut rest, offset) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(PgError::new(
                        sqlstate::IO_ERROR,
                        format!("could not read block {first} in file \"{}\": {e}", self.display_name(rel, fork)),
                    ));
                }
            };
            if r == 0 {
                return Err(PgError::new(
                    sqlstate::DATA_CORRUPTED,
                    format!(
                        "could not read block {} in file \"{}\": read only {} of {} bytes",
                        first + (got / self.block_size) as u32,
                        self.display_name(rel, fork),
                        got % self.block_size,
                        self.block_size
                    ),
                ));
            }
            got += r;
            offset += r as u64;
        }
        Ok(())
    }

    /// Writes one block.
    pub fn write(&self, rel: RelFileNumber, fork: ForkNumber, block: BlockNumber, buf: &[u8]) -> Result<()> {
        self.writev(rel, fork, block, &[buf])
    }

    /// Fails if an earlier fsync failed (invariant 6).
    pub fn check_poisoned(&self) -> Result<()> {
        match &*self.poisoned.lock().expect("poisoned") {
            None => Ok(()),
            Some(first) => Err(PgError::new(sqlstate::IO_ERROR, format!("storage is read-only after an earlier fsync failure: {first}"))
                .with_hint("Restart: crash recovery rebuilds what may not be durable.")),
        }
    }

    /// Writes consecutive blocks starting at `block`, one buffer per block.
    pub fn writev(&self, rel: RelFileNumber, fork: ForkNumber, block: BlockNumber, bufs: &[&[u8]]) -> Result<()> {
        self.writev_parts(rel, fork, block, bufs.len(), bufs)
    }

    /// Writes `nblocks` consecutive blocks starting at `block`, each given as `parts.len() /
    /// nblocks` consecutive pieces of `parts` (so a page can be written straight from the
    /// buffer pool with its checksum field taken from elsewhere), with one `pwritev` per
    /// segment the blocks fall in.
    pub fn writev_parts(&self, rel: RelFileNumber, fork: ForkNumber, block: BlockNumber, nblocks: usize, parts: &[&[u8]]) -> Result<()> {
        self.check_poisoned()?;
        assert!(nblocks > 0 && parts.len() % nblocks == 0, "{} parts for {nblocks} blocks", parts.len());
        let per = parts.len() / nblocks;
        let torn_at = {
            let mut torn = self.faults.torn_write.lock().expect("poisoned");
            match *torn {
                Some((r, t)) if r == rel && t >= block && ((t - block) as usize) < nblocks => {
                    *torn = None;
                    Some((t - block) as usize)
                }
                _ => None,
            }
        };
        if let Some(i) = torn_at {
            // The injected fault: the blocks before the torn one are written whole, the torn
            // one only its first half, the rest not at all (the crash the test simulates).
            let whole: Vec<Vec<u8>> = parts.chunks(per).map(|c| c.concat()).collect();
            if i > 0 {
                let before: Vec<&[u8]> = whole[..i].iter().map(|b| b.as_slice()).collect();
                self.writev(rel, fork, block, &before)?;
            }
            let b = block + i as u32;
            let half = &whole[i][..self.block_size / 2];
            let file = self.segment(rel, fork, b / self.blocks_per_segment, true)?;
            let offset = (b % self.blocks_per_segment) as u64 * self.block_size as u64;
            file.write_all_at(&[half], offset).map_err(|e| PgError::io("write", &self.segment_path(rel, fork, 0), e))?;
            return Ok(());
        }
        let mut done = 0usize;
        while done < nblocks {
            let b = block + done as u32;
            let seg = b / self.blocks_per_segment;
            let in_seg = (self.blocks_per_segment - b % self.blocks_per_segment) as usize;
            let n = in_seg.min(nblocks - done);
            let file = self.segment(rel, fork, seg, true)?;
            let offset = (b % self.blocks_per_segment) as u64 * self.block_size as u64;
            let chunk = &parts[done * per..(done + n) * per];
            for c in chunk.chunks(per) {
                debug_assert_eq!(c.iter().map(|p| p.len()).sum::<usize>(), self.block_size);
                for p in c {
                    self.check_aligned(p);
                }
            }
            self.pwritev_full(&file, chunk, offset, rel, fork, b)?;
            self.pending_sync.lock().expect("poisoned").insert((rel, fork, seg));
            done += n;
        }
        self.note_extended(rel, fork, block + nblocks as u32);
        Ok(())
    }

    fn pwritev_full(
        &self,
        file: &Arc<dyn VfsFile>,
        bufs: &[&[u8]],
        offset: u64,
        rel: RelFileNumber,
        fork: ForkNumber,
        first: BlockNumber,
    ) -> Result<()> {
        file.write_all_at(bufs, offset).map_err(|e| {
            let code = if e.raw_os_error() == Some(libc::ENOSPC) { sqlstate::DISK_FULL } else { sqlstate::IO_ERROR };
            PgError::new(code, format!("could not write block {first} in file \"{}\": {e}", self.display_name(rel, fork)))
        })
    }

    /// Extends the fork by `n` zeroed blocks starting at `at` (which must be its current end).
    pub fn zero_extend(&self, rel: RelFileNumber, fork: ForkNumber, at: BlockNumber, n: u32) -> Result<()> {
        self.check_poisoned()?;
        if self.faults.enospc.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(PgError::new(
                sqlstate::DISK_FULL,
                format!("could not extend file \"{}\": No space left on device", self.display_name(rel, fork)),
            )
            .with_hint("Check free disk space."));
        }
        let mut done = 0u32;
        while done < n {
            let b = at + done;
            let seg = b / self.blocks_per_segment;
            let in_seg = self.blocks_per_segment - b % self.blocks_per_segment;
            let k = in_seg.min(n - done);
            let file = self.segment(rel, fork, seg, true)?;
            let offset = (b % self.blocks_per_segment) as u64 * self.block_size as u64;
            let len = k as u64 * self.block_size as u64;
            if k >= 8 {
                if let Err(e) = file.allocate(offset, len) {
                    let code = if e.raw_os_error() == Some(libc::ENOSPC) { sqlstate::DISK_FULL } else { sqlstate::IO_ERROR };
                    return Err(PgError::new(
                        code,
                        format!("could not extend file \"{}\" with FileFallocate(): {e}", self.display_name(rel, fork)),
                    )
                    .with_hint("Check free disk space."));
                }
            } else {
                let zero_blocks = self.zeros.len() / self.block_size;
                let mut left = k as usize;
                let mut off = offset;
                while left > 0 {
                    let m = left.min(zero_blocks);
                    let bufs: Vec<&[u8]> = (0..m).map(|i| &self.zeros[i * self.block_size..(i + 1) * self.block_size]).collect();
                    self.pwritev_full(&file, &bufs, off, rel, fork, b).map_err(|e| {
                        PgError::new(e.code, format!("could not extend file \"{}\": {}", self.display_name(rel, fork), e.message))
                            .with_hint("Check free disk space.")
                    })?;
                    left -= m;
                    off += (m * self.block_size) as u64;
                }
            }
            self.pending_sync.lock().expect("poisoned").insert((rel, fork, seg));
            done += k;
        }
        self.note_extended(rel, fork, at + n);
        Ok(())
    }

    /// Truncates the fork to `nblocks` blocks, removing whole segments past the end.
    pub fn truncate(&self, rel: RelFileNumber, fork: ForkNumber, nblocks: BlockNumber) -> Result<()> {
        let cur = self.nblocks(rel, fork)?;
        if nblocks >= cur {
            return Ok(());
        }
        let last_seg = cur / self.blocks_per_segment;
        let keep_seg = nblocks / self.blocks_per_segment;
        for seg in (keep_seg + 1..=last_seg).rev() {
            let p = self.segment_path(rel, fork, seg);
            match self.vfs.remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(PgError::io("remove", &p, e)),
            }
        }
        let p = self.segment_path(rel, fork, keep_seg);
        let len = (nblocks % self.blocks_per_segment) as u64 * self.block_size as u64;
        if let Ok(f) = self.vfs.open(&p, OpenMode::READ_WRITE) {
            f.set_len(len).map_err(|e| PgError::io("truncate", &p, e))?;
            // A shorter file must stay shorter after a crash: blocks past the end would come
            // back with old contents.
            f.sync_data().map_err(|e| PgError::io("fsync", &p, e))?;
        }
        if keep_seg < last_seg {
            self.fsync_base_dir()?;
        }
        self.forget(rel, fork);
        Ok(())
    }

    /// Makes everything written to the fork durable.
    pub fn fsync(&self, rel: RelFileNumber, fork: ForkNumber) -> Result<()> {
        self.check_poisoned()?;
        let n = self.nblocks(rel, fork)?;
        let segs = if n == 0 { 1 } else { n.div_ceil(self.blocks_per_segment).max(1) };
        for seg in 0..segs {
            let path = self.segment_path(rel, fork, seg);
            if !self.vfs.exists(&path) {
                continue;
            }
            self.fsync_segment(rel, fork, seg)?;
        }
        Ok(())
    }

    /// Fsyncs every segment written or extended since the last call, each once (a checkpoint's
    /// sync phase). Returns (files synced, longest sync).
    pub fn sync_pending(&self) -> Result<(usize, std::time::Duration)> {
        let pending: Vec<_> = std::mem::take(&mut *self.pending_sync.lock().expect("poisoned")).into_iter().collect();
        let mut longest = std::time::Duration::ZERO;
        for (i, &(rel, fork, seg)) in pending.iter().enumerate() {
            if !self.vfs.exists(&self.segment_path(rel, fork, seg)) {
                continue; // dropped since
            }
            let t0 = std::time::Instant::now();
            if let Err(e) = self.fsync_segment(rel, fork, seg) {
                // Keep the rest queued: nothing that was not synced may be forgotten.
                self.pending_sync.lock().expect("poisoned").extend(pending[i..].iter().copied());
                return Err(e);
            }
            longest = longest.max(t0.elapsed());
        }
        Ok((pending.len(), longest))
    }

    fn fsync_segment(&self, rel: RelFileNumber, fork: ForkNumber, seg: u32) -> Result<()> {
        self.check_poisoned()?;
        let path = self.segment_path(rel, fork, seg);
        let f = self.segment(rel, fork, seg, false)?;
        let t0 = std::time::Instant::now();
        let r = if self.faults.fail_next_fsync.swap(false, std::sync::atomic::Ordering::Relaxed) {
            Err(std::io::Error::from_raw_os_error(libc::EIO))
        } else {
            f.sync_data()
        };
        if let Err(e) = r {
            let msg = format!("could not fsync file \"{}\": {e}", path.display());
            self.poisoned.lock().expect("poisoned").get_or_insert(msg.clone());
            return Err(PgError::new(sqlstate::IO_ERROR, msg));
        }
        crate::stats::count_io(crate::stats::IoContext::Normal, crate::stats::IoOp::Fsync, 1, 0, t0.elapsed().as_nanos() as u64);
        Ok(())
    }

    /// Removes every fork and segment of a relation.
    pub fn unlink(&self, rel: RelFileNumber) -> Result<()> {
        self.pending_sync.lock().expect("poisoned").retain(|p| p.0 != rel);
        for fork in ForkNumber::ALL {
            self.forget(rel, fork);
            let mut seg = 0;
            loop {
                let p = self.segment_path(rel, fork, seg);
                match self.vfs.remove_file(&p) {
                    Ok(()) => seg += 1,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                    Err(e) => return Err(PgError::io("remove", &p, e)),
                }
            }
        }
        Ok(())
    }

    /// Relation file numbers present on disk (for cleaning up orphans at start-up).
    pub fn list_relations(&self) -> Result<Vec<RelFileNumber>> {
        let mut out = Vec::new();
        let names = self.vfs.read_dir(&self.base).map_err(|e| PgError::io("read directory", &self.base, e))?;
        for name in names {
            if let Ok(n) = name.parse::<u32>() {
                out.push(RelFileNumber(n));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Reads a file without O_DIRECT (used by tests and tools to inspect raw pages).
    pub fn read_raw(&self, rel: RelFileNumber, fork: ForkNumber, block: BlockNumber) -> Result<Vec<u8>> {
        let seg = block / self.blocks_per_segment;
        let p = self.segment_path(rel, fork, seg);
        let f = self.vfs.open(&p, OpenMode::READ).map_err(|e| PgError::io("open", &p, e))?;
        let mut buf = vec![0u8; self.block_size];
        f.read_exact_at(&mut buf, (block % self.blocks_per_segment) as u64 * self.block_size as u64)
            .map_err(|e| PgError::io("read", &p, e))?;
        Ok(buf)
    }
}

/// Caches `seen`, a size just read from the file system, unless the size became known
/// meanwhile: an extender that noted its new end after our stat must not be overwritten with
/// the older, smaller size (a cache gone backwards sends the next extender onto blocks that
/// already exist and have buffers: "unexpected data beyond EOF"). Returns the cached size.
fn settle_nblocks(cache: &AtomicU32, seen: u32) -> u32 {
    match cache.compare_exchange(u32::MAX, seen, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => seen,
        Err(known) => known,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::memory::AlignedBuf;

    /// The interleaving that made the cache go backwards: a reader stats an unknown fork (0
    /// blocks), an extender extends it and notes 3, then the reader caches what it saw.
    #[test]
    fn a_stale_stat_never_shrinks_the_cached_size() {
        let cache = AtomicU32::new(u32::MAX);
        let _ = cache.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n == u32::MAX || n < 3).then_some(3));
        assert_eq!(settle_nblocks(&cache, 0), 3);
        assert_eq!(cache.load(Ordering::Acquire), 3);
        let fresh = AtomicU32::new(u32::MAX);
        assert_eq!(settle_nblocks(&fresh, 5), 5);
        assert_eq!(fresh.load(Ordering::Acquire), 5);
    }

    /// A write into the middle of a fork whose size nobody has asked for yet (a checkpoint
    /// after a restart flushing block 3 of 10) leaves the size at 10, not 4.
    #[test]
    fn a_write_to_a_fork_of_unknown_size_does_not_shrink_it() {
        let dir = tempfile::tempdir().unwrap();
        let r = RelFileNumber(16390);
        {
            let s = Smgr::with_segment_bytes(dir.path(), 8192, false, 1 << 30).unwrap();
            s.create(r, ForkNumber::Main).unwrap();
            s.zero_extend(r, ForkNumber::Main, 0, 10).unwrap();
            s.fsync(r, ForkNumber::Main).unwrap();
        }
        let s = Smgr::with_segment_bytes(dir.path(), 8192, false, 1 << 30).unwrap();
        let page = AlignedBuf::zeroed(8192);
        s.writev(r, ForkNumber::Main, 3, &[&page[..]]).unwrap();
        assert_eq!(s.nblocks(r, ForkNumber::Main).unwrap(), 10);
    }

    /// The same race through the real calls: readers ask the size of a fork nobody has asked
    /// about yet while it is extended; afterwards every answer is the extended size.
    #[test]
    fn nblocks_of_a_fork_being_extended_settles_at_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let s = Smgr::with_segment_bytes(dir.path(), 8192, false, 1 << 30).unwrap();
        for i in 0..200u32 {
            let r = RelFileNumber(20_000 + i);
            std::thread::scope(|sc| {
                sc.spawn(|| s.zero_extend(r, ForkNumber::Fsm, 0, 3).unwrap());
                for _ in 0..2 {
                    sc.spawn(|| {
                        for _ in 0..50 {
                            s.nblocks(r, ForkNumber::Fsm).unwrap();
                        }
                    });
                }
            });
            assert_eq!(s.nblocks(r, ForkNumber::Fsm).unwrap(), 3, "relation {i}: the cached size went backwards");
        }
    }

    #[test]
    fn segments_extend_read_write_truncate() {
        let dir = tempfile::tempdir().unwrap();
        // 4 blocks per segment, to cross boundaries.
        let s = Smgr::with_segment_bytes(dir.path(), 8192, false, 4 * 8192).unwrap();
        let r = RelFileNumber(16384);
        s.create(r, ForkNumber::Main).unwrap();
        assert_eq!(s.nblocks(r, ForkNumber::Main).unwrap(), 0);
        s.zero_extend(r, ForkNumber::Main, 0, 3).unwrap();
        s.zero_extend(r, ForkNumber::Main, 3, 9).unwrap(); // fallocate path, crosses segments
        assert_eq!(s.nblocks(r, ForkNumber::Main).unwrap(), 12);
        let mut bufs: Vec<AlignedBuf> = (0..12).map(|_| AlignedBuf::zeroed(8192)).collect();
        for (i, b) in bufs.iter_mut().enumerate() {
            b.fill(i as u8 + 1);
        }
        let refs: Vec<&[u8]> = bufs.iter().map(|b| &b[..]).collect();
        s.writev(r, ForkNumber::Main, 0, &refs).unwrap();
        let mut out: Vec<AlignedBuf> = (0..12).map(|_| AlignedBuf::zeroed(8192)).collect();
        let mut outs: Vec<&mut [u8]> = out.iter_mut().map(|b| &mut b[..]).collect();
        s.readv(r, ForkNumber::Main, 0, &mut outs).unwrap();
        for (i, b) in out.iter().enumerate() {
            assert!(b.iter().all(|&x| x == i as u8 + 1), "block {i}");
        }
        assert!(s.vfs().exists(&s.segment_path(r, ForkNumber::Main, 2)));
        s.truncate(r, ForkNumber::Main, 5).unwrap();
        assert_eq!(s.nblocks(r, ForkNumber::Main).unwrap(), 5);
        assert!(!s.vfs().exists(&s.segment_path(r, ForkNumber::Main, 2)));
        let mut one = AlignedBuf::zeroed(8192);
        let err = s.read(r, ForkNumber::Main, 7, &mut one).unwrap_err();
        assert!(err.message.contains("block 7"), "{}", err.message);
        s.unlink(r).unwrap();
        assert!(!s.exists(r, ForkNumber::Main));
    }

    #[test]
    fn direct_io_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let s = match Smgr::new(dir.path(), 8192, true) {
            Ok(s) => s,
            Err(_) => return,
        };
        let r = RelFileNumber(7);
        s.create(r, ForkNumber::Main).unwrap();
        let mut b = AlignedBuf::zeroed(8192);
        b.fill(0xAB);
        s.write(r, ForkNumber::Main, 0, &b).unwrap();
        let mut o = AlignedBuf::zeroed(8192);
        s.read(r, ForkNumber::Main, 0, &mut o).unwrap();
        assert_eq!(&o[..], &b[..]);
    }
}
