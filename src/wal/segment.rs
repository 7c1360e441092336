//! Segment files: names, creation (preallocated), the start-up cleanup, recycling, and the
//! fault injector.
//!
//! Segment `n` holds WAL positions `n * wal_segment_size ..` and is named as PostgreSQL names
//! it on timeline 1: `TTTTTTTTXXXXXXXXYYYYYYYY`, where `XXXXXXXX = n / (4 GB / size)` and
//! `YYYYYYYY = n % (4 GB / size)` (16 MB segments: `000000010000000000000001` is segment 1).
//!
//! A segment is created as `pg_wal/xlogtemp.<pid>`, preallocated (`posix_fallocate`, which
//! reports ENOSPC before anything is written) and then written full of zeros, so that later
//! `fdatasync`s have no block allocation or extent conversion to record; fsynced; and renamed
//! into place (then the directory is fsynced): a segment never appears half made (invariant
//! 9). ENOSPC on the way removes the temporary file and fails that write or flush with 53100;
//! nothing else changes, so the next attempt starts afresh.
//!
//! Recycling ([`Wal::recycle_before`]) renames segments that lie wholly before a position (the
//! checkpoint's REDO pointer) to future names, so that the writer reuses them instead of
//! creating new files; their old contents are harmless, because every record's lsn field must
//! equal its position and an old record's does not. Beyond `recycle_keep` future segments,
//! old ones are removed.
//!
//! Creating ahead ([`Wal::prepare_ahead`]): the WAL writer's companion thread (`wal prealloc`)
//! creates the [`SEGMENTS_AHEAD`] segments after the one being inserted into, whenever an
//! insertion crosses into a new segment, so that neither a session nor the WAL writer, which
//! hold WALWrite while they write, pays for a segment's zero-fill and fsync (16 MB written
//! and synced: tens of milliseconds on this kind of disk). PostgreSQL creates segments in the
//! writing backend, and ahead of time only at checkpoints (`PreallocXlogFiles`). A segment
//! made ahead is made exactly as the writer would make it (invariant 9), under the install
//! lock; start-up removes it like any other file after the start segment.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::storage::vfs::{OpenMode, VfsFile};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use crate::error::{PgError, Result};

use super::{Counters, Lsn, SyncMethod, Wal};

/// The WAL directory, relative to the data directory.
pub const WAL_DIR: &str = "pg_wal";
const TIMELINE: u64 = 1;
const ZERO_CHUNK: usize = 1 << 20;
/// How many segments after the current insert segment [`Wal::prepare_ahead`] keeps ready.
pub const SEGMENTS_AHEAD: u64 = 2;

fn segments_per_id(seg_size: u64) -> u64 {
    0x1_0000_0000 / seg_size
}

/// The file name of segment `segno`.
pub fn segment_name(segno: u64, seg_size: u64) -> String {
    let per = segments_per_id(seg_size);
    format!("{TIMELINE:08X}{:08X}{:08X}", segno / per, segno % per)
}

/// The segment number of a segment file name (timeline 1), or `None` for other names.
pub fn parse_segment_name(name: &str, seg_size: u64) -> Option<u64> {
    if name.len() != 24 || !name.bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b)) {
        return None;
    }
    let field = |i: usize| u64::from_str_radix(&name[i * 8..i * 8 + 8], 16).ok();
    let (tli, id, seg) = (field(0)?, field(1)?, field(2)?);
    let per = segments_per_id(seg_size);
    (tli == TIMELINE && seg < per).then(|| id * per + seg)
}

/// An open segment file in the writer's state.
pub(crate) struct SegmentFile {
    pub(crate) segno: u64,
    pub(crate) file: Arc<dyn VfsFile>,
    /// `pg_wal/<name>`, for messages.
    pub(crate) rel_path: PathBuf,
    /// Written since its last sync.
    pub(crate) dirty: bool,
}

/// Writes all of `a` then `b` at `offset` with `pwritev`, continuing after short writes.
pub(crate) fn pwritev_all<'a>(file: &dyn VfsFile, mut offset: u64, mut a: &'a [u8], mut b: &'a [u8]) -> std::io::Result<()> {
    while !a.is_empty() || !b.is_empty() {
        if a.is_empty() {
            (a, b) = (b, &[]);
        }
        let r = if b.is_empty() { file.writev_at(&[a], offset) } else { file.writev_at(&[a, b], offset) };
        let n = match r {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        offset += n as u64;
        if n >= a.len() {
            b = &b[n - a.len()..];
            a = &[];
        } else {
            a = &a[n..];
        }
    }
    Ok(())
}

fn rel(name: &str) -> PathBuf {
    Path::new(WAL_DIR).join(name)
}

impl Wal {
    fn disk_full_injected(&self) -> bool {
        self.faults.as_ref().is_some_and(|f| f.disk_full())
    }

    /// Makes segment creations, renames and removals durable. A failure is a PANIC, as in
    /// PostgreSQL (`data_sync_retry = off`): after a failed directory fsync the kernel may have
    /// dropped the change, and a later fsync would not report it, so a recycled segment that
    /// WAL is then written into could vanish at a power loss with acknowledged commits in it.
    fn fsync_dir(&self) -> Result<()> {
        self.vfs.fsync_dir(&self.wal_dir).map_err(|e| self.panic(PgError::io("fsync", Path::new(WAL_DIR), e)))
    }

    /// Segment numbers of the segment files present.
    fn list_segments(&self) -> Result<Vec<u64>> {
        let names = self.vfs.read_dir(&self.wal_dir).map_err(|e| PgError::io("open directory", Path::new(WAL_DIR), e))?;
        let mut v = Vec::new();
        for name in names {
            if let Some(n) = parse_segment_name(&name, self.seg_size) {
                v.push(n);
            }
        }
        v.sort_unstable();
        Ok(v)
    }

    /// Writes zeros over `from..to` of `file`, after preallocating that range.
    fn fill_zeros(&self, file: &dyn VfsFile, rel_path: &Path, from: u64, to: u64) -> Result<()> {
        let enospc = || PgError::io("write to", rel_path, std::io::Error::from_raw_os_error(libc::ENOSPC));
        if self.disk_full_injected() {
            return Err(enospc());
        }
        if let Err(e) = file.allocate(from, to - from) {
            if e.raw_os_error() == Some(libc::ENOSPC) {
                return Err(enospc());
            }
        }
        // Other failures (EOPNOTSUPP, EINVAL on some filesystems) only lose the early warning.
        let zeros = vec![0u8; ZERO_CHUNK];
        let mut off = from;
        while off < to {
            let n = ((to - off) as usize).min(ZERO_CHUNK);
            file.write_all_at(&[&zeros[..n]], off).map_err(|e| PgError::io("write to", rel_path, e))?;
            off += n as u64;
        }
        Ok(())
    }

    fn open_mode(&self) -> OpenMode {
        OpenMode { dsync: self.sync_method == SyncMethod::OpenDatasync, ..OpenMode::READ_WRITE }
    }

    /// Opens segment `segno` for writing, creating it if missing (caller holds no lock but
    /// WALWrite). A complete segment is opened without the install lock, so the writer never
    /// waits for a segment being made ahead of it: nothing renames or removes the segment the
    /// writer is about to write (recycling takes only segments below the flushed position,
    /// start-up runs before any writer), and a segment appears under its name only complete
    /// (invariant 9). A missing or short one is made under the install lock.
    pub(crate) fn open_segment(&self, segno: u64) -> Result<SegmentFile> {
        let name = segment_name(segno, self.seg_size);
        let path = self.wal_dir.join(&name);
        if let Ok(f) = self.vfs.open(&path, self.open_mode()) {
            if f.len().is_ok_and(|len| len >= self.seg_size) {
                self.ready_through.fetch_max(segno, Ordering::AcqRel);
                return Ok(SegmentFile { segno, file: f, rel_path: rel(&name), dirty: false });
            }
        }
        let _install = self.install.lock().unwrap_or_else(|e| e.into_inner());
        self.open_segment_locked(segno)
    }

    fn open_segment_locked(&self, segno: u64) -> Result<SegmentFile> {
        let name = segment_name(segno, self.seg_size);
        let path = self.wal_dir.join(&name);
        let rel_path = rel(&name);
        let file = match self.vfs.open(&path, self.open_mode()) {
            Ok(f) => {
                // A segment shorter than its size (only possible if someone truncated it) is
                // extended with zeros.
                let len = f.len().map_err(|e| PgError::io("stat", &rel_path, e))?;
                if len < self.seg_size {
                    self.fill_zeros(&*f, &rel_path, len, self.seg_size)?;
                    f.sync_all().map_err(|e| PgError::io("fsync", &rel_path, e))?;
                }
                f
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                self.create_segment(&path)?;
                self.vfs.open(&path, self.open_mode()).map_err(|e| PgError::io("open", &rel_path, e))?
            }
            Err(e) => return Err(PgError::io("open", &rel_path, e)),
        };
        self.ready_through.fetch_max(segno, Ordering::AcqRel);
        Ok(SegmentFile { segno, file, rel_path, dirty: false })
    }

    /// Creates a zero-filled segment at `path` via a temporary file (install lock held).
    fn create_segment(&self, path: &Path) -> Result<()> {
        let tmp_name = format!("xlogtemp.{}", std::process::id());
        let tmp = self.wal_dir.join(&tmp_name);
        let rel_tmp = rel(&tmp_name);
        let _ = self.vfs.remove_file(&tmp);
        let f = self.vfs.open(&tmp, OpenMode::CREATE_NEW).map_err(|e| PgError::io("create", &rel_tmp, e))?;
        let res = (|| {
            self.fill_zeros(&*f, &rel_tmp, 0, self.seg_size)?;
            f.sync_all().map_err(|e| PgError::io("fsync", &rel_tmp, e))?;
            self.vfs.rename(&tmp, path).map_err(|e| PgError::io("rename", &rel_tmp, e))?;
            self.fsync_dir()
        })();
        if res.is_err() {
            let _ = self.vfs.remove_file(&tmp);
        } else {
            Counters::add(&self.counters.segments_created, 1);
        }
        res
    }

    /// Makes sure the [`SEGMENTS_AHEAD`] segments after the current insert segment exist,
    /// creating the missing ones (zero-filled, synced, renamed into place: invariant 9). Takes
    /// the install lock for one segment at a time, so the writer, which opens segments under
    /// it, waits for at most one creation. Returns how many it created. Run by the `wal
    /// prealloc` thread; holds neither an insertion slot nor WALWrite (invariant 6).
    pub fn prepare_ahead(&self) -> Result<usize> {
        // After a PANIC or a failed fsync nothing more is written (invariant 8).
        self.check_poison()?;
        let current = self.insert_lsn() / self.seg_size;
        let target = current + SEGMENTS_AHEAD;
        let mut made = 0;
        for segno in current + 1..=target {
            if self.ready_through.load(Ordering::Acquire) >= segno {
                continue;
            }
            let _install = self.install.lock().unwrap_or_else(|e| e.into_inner());
            // Written past while this waited for the lock: the segment exists or was recycled
            // already; making it again would only add a file to recycle.
            if segno < self.written_lsn() / self.seg_size {
                continue;
            }
            let path = self.wal_dir.join(segment_name(segno, self.seg_size));
            if !self.vfs.exists(&path) {
                self.create_segment(&path)?;
                Counters::add(&self.counters.segments_created_ahead, 1);
                made += 1;
            }
            self.ready_through.fetch_max(segno, Ordering::AcqRel);
        }
        Ok(made)
    }

    /// Whether [`Wal::prepare_ahead`] has work: a segment within [`SEGMENTS_AHEAD`] of the
    /// insert position is not known to exist.
    pub(crate) fn wants_segments(&self) -> bool {
        self.ready_through.load(Ordering::Acquire) < self.insert_lsn() / self.seg_size + SEGMENTS_AHEAD
    }

    /// Start-up (invariant 9): removes temporary files, opens (or creates) the segment holding
    /// `start`, zeroes it from `start` on wherever it is not zero already, and removes every
    /// later segment. Returns the open start segment.
    pub(crate) fn prepare_start(&self, start: Lsn) -> Result<SegmentFile> {
        let _install = self.install.lock().unwrap_or_else(|e| e.into_inner());
        let names = self.vfs.read_dir(&self.wal_dir).map_err(|e| PgError::io("open directory", Path::new(WAL_DIR), e))?;
        for name in names.iter().filter(|n| n.starts_with("xlogtemp.")) {
            let _ = self.vfs.remove_file(&self.wal_dir.join(name));
        }
        let segno = start / self.seg_size;
        let f = self.open_segment_locked(segno)?;
        let mut buf = vec![0u8; ZERO_CHUNK];
        let mut off = start % self.seg_size;
        let mut zeroed = false;
        while off < self.seg_size {
            let n = ((self.seg_size - off) as usize).min(ZERO_CHUNK);
            f.file.read_exact_at(&mut buf[..n], off).map_err(|e| PgError::io("read", &f.rel_path, e))?;
            if buf[..n].iter().any(|&b| b != 0) {
                buf[..n].fill(0);
                f.file.write_all_at(&[&buf[..n]], off).map_err(|e| PgError::io("write to", &f.rel_path, e))?;
                zeroed = true;
            }
            off += n as u64;
        }
        if zeroed {
            f.file.sync_data().map_err(|e| PgError::io("fsync", &f.rel_path, e))?;
        }
        let mut removed = false;
        for n in self.list_segments()?.into_iter().filter(|&n| n > segno) {
            let name = segment_name(n, self.seg_size);
            self.vfs.remove_file(&self.wal_dir.join(&name)).map_err(|e| PgError::io("remove", &rel(&name), e))?;
            Counters::add(&self.counters.segments_removed, 1);
            removed = true;
        }
        if removed {
            self.fsync_dir()?;
        }
        self.ready_through.store(segno, Ordering::Release);
        Ok(f)
    }

    /// Recycles or removes every segment that lies wholly before `lsn` (clamped to
    /// [`Wal::flushed_lsn`]: WAL that is not durable is never given up). Up to `recycle_keep`
    /// segments after the current insert segment are kept, renamed to future names; the rest
    /// are removed. Returns how many segments were recycled or removed.
    pub fn recycle_before(&self, lsn: Lsn) -> Result<usize> {
        let cutoff = lsn.min(self.flushed_lsn()) / self.seg_size;
        let _install = self.install.lock().unwrap_or_else(|e| e.into_inner());
        let segs = self.list_segments()?;
        let current = self.insert_lsn() / self.seg_size;
        let mut future = segs.iter().filter(|&&n| n > current).count();
        let mut next = segs.last().copied().unwrap_or(0).max(current) + 1;
        let mut done = 0;
        for &n in segs.iter().filter(|&&n| n < cutoff) {
            let name = segment_name(n, self.seg_size);
            let from = self.wal_dir.join(&name);
            if future < self.recycle_keep {
                let to = self.wal_dir.join(segment_name(next, self.seg_size));
                self.vfs.rename(&from, &to).map_err(|e| PgError::io("rename", &rel(&name), e))?;
                Counters::add(&self.counters.segments_recycled, 1);
                self.ready_through.fetch_max(next, Ordering::AcqRel);
                next += 1;
                future += 1;
            } else {
                self.vfs.remove_file(&from).map_err(|e| PgError::io("remove", &rel(&name), e))?;
                Counters::add(&self.counters.segments_removed, 1);
            }
            done += 1;
        }
        if done > 0 {
            self.fsync_dir()?;
        }
        Ok(done)
    }
}

/// Fault injection for tests (shared, all atomics). Pass it in [`super::WalSettings::faults`].
#[derive(Debug, Default)]
pub struct FaultInjector {
    fsync_failures: AtomicU32,
    disk_full: AtomicBool,
    torn_write_countdown: AtomicU64,
}

impl FaultInjector {
    pub fn new() -> std::sync::Arc<FaultInjector> {
        std::sync::Arc::new(FaultInjector::default())
    }

    /// The next fsync/fdatasync of a segment file fails with EIO.
    pub fn fail_next_fsync(&self) {
        self.fsync_failures.fetch_add(1, Ordering::SeqCst);
    }

    /// While on, creating or extending a segment file fails with ENOSPC.
    pub fn set_disk_full(&self, on: bool) {
        self.disk_full.store(on, Ordering::SeqCst);
    }

    /// The `nth` WAL write from now (1 = the next) writes only its first half and then the WAL
    /// stops, as if the process had crashed mid-write.
    pub fn tear_write(&self, nth: u64) {
        self.torn_write_countdown.store(nth, Ordering::SeqCst);
    }

    pub(crate) fn take_fsync_failure(&self) -> bool {
        self.fsync_failures.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
    }

    pub(crate) fn disk_full(&self) -> bool {
        self.disk_full.load(Ordering::SeqCst)
    }

    pub(crate) fn take_torn_write(&self) -> bool {
        self.torn_write_countdown.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)) == Ok(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_postgres() {
        let s16 = 16 << 20;
        assert_eq!(segment_name(1, s16), "000000010000000000000001");
        assert_eq!(segment_name(0x100, s16), "000000010000000100000000");
        assert_eq!(segment_name(0x1FF, s16), "0000000100000001000000FF");
        assert_eq!(parse_segment_name("0000000100000001000000FF", s16), Some(0x1FF));
        let s1 = 1 << 20;
        assert_eq!(segment_name(4097, s1), "000000010000000100000001");
        assert_eq!(parse_segment_name("000000010000000100000001", s1), Some(4097));
        assert_eq!(parse_segment_name("000000020000000100000001", s1), None);
        assert_eq!(parse_segment_name("00000001000000010000000g", s1), None);
        assert_eq!(parse_segment_name("xlogtemp.12", s1), None);
        for n in [0u64, 1, 255, 256, 4095, 4096, 1 << 30] {
            assert_eq!(parse_segment_name(&segment_name(n, s1), s1), Some(n));
        }
    }

    #[test]
    fn torn_write_countdown() {
        let f = FaultInjector::new();
        assert!(!f.take_torn_write());
        f.tear_write(2);
        assert!(!f.take_torn_write());
        assert!(f.take_torn_write());
        assert!(!f.take_torn_write());
        f.fail_next_fsync();
        assert!(f.take_fsync_failure());
        assert!(!f.take_fsync_failure());
    }
}
