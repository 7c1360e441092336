//! A simulated disk for crash testing: an in-memory [`Vfs`] that models the page cache.
//!
//! ```text
//!   write(f)    ──► the file's current bytes change; the write joins f's volatile list
//!   fsync(f)    ──► f's volatile writes become durable, in order
//!   create / rename / remove(name) ──► the current names change; the change joins the
//!                                      directory's volatile list
//!   fsync_dir(d)──► d's volatile name changes become durable, in order
//!   power loss  ──► each volatile write survives or not (a seeded coin per write); a
//!                   surviving write may be torn: split at 512-byte or 4 kB boundaries, each
//!                   piece surviving on its own coin; each volatile name change survives or
//!                   not likewise; everything else is lost. The disk then holds exactly the
//!                   durable state, and a new "boot" (epoch) begins.
//! ```
//!
//! It also injects faults: EIO on read, write or fsync, ENOSPC on writes that grow a file, and
//! short writes, each at a seeded rate or at a chosen operation number; and it can cut the power
//! at a chosen operation number, failing that operation and every later one with EIO until
//! [`SimDisk::power_loss`] is called.
//!
//! A failed fsync behaves as Linux's does: the file's volatile writes are marked clean without
//! reaching the disk (reads still see them, a crash loses them, and the next fsync succeeds) —
//! which is why the engine must never retry a failed fsync as if it had worked.
//!
//! Invariants:
//! 1. Everything is decided by the seed and the sequence of calls: the same seed and the same
//!    calls give the same disk, byte for byte.
//! 2. A file handle belongs to the boot (epoch) that opened it: after a power loss, every
//!    handle of the previous boot fails with EIO, so a dead engine cannot write into the next.
//! 3. Directories are created durable (the data directory's folders are made at init and never
//!    removed); files and their names follow the rules above.

use super::vfs::{DirLock, LockFailed, OpenMode, Vfs, VfsFile};
use crate::rng::Rng;
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::os::unix::io::RawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Rates (0.0..=1.0 per operation) of injected faults.
#[derive(Clone, Debug, Default)]
pub struct FaultRates {
    pub eio_read: f64,
    pub eio_write: f64,
    pub eio_fsync: f64,
    /// ENOSPC on a write or allocation that grows a file.
    pub enospc: f64,
    pub short_write: f64,
}

/// One injected fault at a chosen operation number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    EioRead,
    EioWrite,
    EioFsync,
    Enospc,
    ShortWrite,
}

/// How a power loss treats volatile state.
#[derive(Clone, Copy, Debug)]
pub struct PowerLossModel {
    /// Chance that one volatile write (or name change) survives.
    pub survive: f64,
    /// Chance that a surviving write is torn.
    pub tear: f64,
}

impl Default for PowerLossModel {
    fn default() -> Self {
        PowerLossModel { survive: 0.5, tear: 0.3 }
    }
}

/// What the disk did (for the torture's report).
#[derive(Clone, Debug, Default)]
pub struct SimStats {
    pub ops: u64,
    pub writes: u64,
    pub fsyncs: u64,
    pub power_losses: u64,
    pub writes_lost: u64,
    pub writes_torn: u64,
    pub names_lost: u64,
    pub faults_injected: u64,
}

#[derive(Clone)]
enum Pending {
    Write {
        offset: u64,
        data: Vec<u8>,
    },
    SetLen(u64),
    /// posix_fallocate: the size grows to at least this.
    Grow(u64),
}

#[derive(Default, Clone)]
struct Inode {
    durable: Vec<u8>,
    current: Vec<u8>,
    pending: Vec<Pending>,
    /// A failed fsync dropped writes that reads still see: durable and current differ for good.
    lost_writes: bool,
}

fn apply(buf: &mut Vec<u8>, op: &Pending) {
    match op {
        Pending::Write { offset, data } => {
            let end = *offset as usize + data.len();
            if buf.len() < end {
                buf.resize(end, 0);
            }
            buf[*offset as usize..end].copy_from_slice(data);
        }
        Pending::SetLen(n) => buf.resize(*n as usize, 0),
        Pending::Grow(n) => {
            if buf.len() < *n as usize {
                buf.resize(*n as usize, 0);
            }
        }
    }
}

struct State {
    epoch: u64,
    /// Power is cut: every operation fails until `power_loss`.
    dead: bool,
    inodes: BTreeMap<u64, Inode>,
    next_ino: u64,
    names: BTreeMap<PathBuf, u64>,
    durable_names: BTreeMap<PathBuf, u64>,
    /// Per directory, name changes not yet durable: (name, Some(inode) | None = removed).
    dir_pending: BTreeMap<PathBuf, Vec<(PathBuf, Option<u64>)>>,
    dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
    rng: Rng,
    rates: FaultRates,
    planned: BTreeMap<u64, Fault>,
    cut_at_op: Option<u64>,
    /// ENOSPC on every growing write while set.
    disk_full: bool,
    /// Writes to files whose path contains this fail with EIO.
    fail_writes_to: Option<String>,
    stats: SimStats,
}

/// The simulated disk. Cheap to clone (a handle).
#[derive(Clone)]
pub struct SimDisk {
    state: Arc<Mutex<State>>,
}

fn eio() -> io::Error {
    io::Error::from_raw_os_error(libc::EIO)
}

impl State {
    /// Counts an operation; fails it if the power is off or is cut by this operation.
    fn tick(&mut self, epoch: u64) -> io::Result<u64> {
        if self.dead || epoch != self.epoch {
            return Err(eio());
        }
        self.stats.ops += 1;
        let op = self.stats.ops;
        if self.cut_at_op.is_some_and(|n| op >= n) {
            self.cut_at_op = None;
            self.dead = true;
            return Err(eio());
        }
        Ok(op)
    }

    /// Whether `fault` strikes operation `op` (planned, or by its rate).
    fn strikes(&mut self, op: u64, fault: Fault) -> bool {
        if self.planned.get(&op) == Some(&fault) {
            self.planned.remove(&op);
            self.stats.faults_injected += 1;
            return true;
        }
        let rate = match fault {
            Fault::EioRead => self.rates.eio_read,
            Fault::EioWrite => self.rates.eio_write,
            Fault::EioFsync => self.rates.eio_fsync,
            Fault::Enospc => self.rates.enospc,
            Fault::ShortWrite => self.rates.short_write,
        };
        if rate > 0.0 && self.rng.next_f64() < rate {
            self.stats.faults_injected += 1;
            return true;
        }
        false
    }

    fn parent(path: &Path) -> PathBuf {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    }

    fn set_name(&mut self, path: &Path, ino: Option<u64>) {
        match ino {
            Some(i) => {
                self.names.insert(path.to_path_buf(), i);
            }
            None => {
                self.names.remove(path);
            }
        }
        self.dir_pending.entry(Self::parent(path)).or_default().push((path.to_path_buf(), ino));
    }

    fn sync_inode(&mut self, ino: u64) {
        let node = self.inodes.get_mut(&ino).expect("open inode exists");
        for op in std::mem::take(&mut node.pending) {
            apply(&mut node.durable, &op);
        }
        debug_assert!(node.lost_writes || node.durable == node.current, "a synced file's durable bytes equal its current bytes");
    }
}

impl SimDisk {
    /// An empty disk driven by `seed`.
    pub fn new(seed: u64) -> SimDisk {
        SimDisk {
            state: Arc::new(Mutex::new(State {
                epoch: 1,
                dead: false,
                inodes: BTreeMap::new(),
                next_ino: 1,
                names: BTreeMap::new(),
                durable_names: BTreeMap::new(),
                dir_pending: BTreeMap::new(),
                dirs: BTreeSet::new(),
                locks: BTreeSet::new(),
                rng: Rng::new(seed ^ 0xD15C_D15C_D15C_D15C),
                rates: FaultRates::default(),
                planned: BTreeMap::new(),
                cut_at_op: None,
                disk_full: false,
                fail_writes_to: None,
                stats: SimStats::default(),
            })),
        }
    }

    fn st(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_fault_rates(&self, rates: FaultRates) {
        self.st().rates = rates;
    }

    /// Injects `fault` at operation number `op` (counted from the disk's creation).
    pub fn plan_fault(&self, op: u64, fault: Fault) {
        self.st().planned.insert(op, fault);
    }

    /// Every write that grows a file fails with ENOSPC while `full`.
    pub fn set_disk_full(&self, full: bool) {
        self.st().disk_full = full;
    }

    /// Every write to a file whose path contains `part` fails with EIO (None: no longer).
    pub fn fail_writes_to(&self, part: Option<&str>) {
        self.st().fail_writes_to = part.map(str::to_string);
    }

    /// Cuts the power when operation number `op` is reached: it and every later operation
    /// fail with EIO until [`SimDisk::power_loss`].
    pub fn cut_power_at(&self, op: u64) {
        self.st().cut_at_op = Some(op);
    }

    /// Cuts the power now.
    pub fn cut_power(&self) {
        self.st().dead = true;
    }

    /// True once the power is cut.
    pub fn is_dead(&self) -> bool {
        self.st().dead
    }

    pub fn stats(&self) -> SimStats {
        self.st().stats.clone()
    }

    /// Operations so far.
    pub fn ops(&self) -> u64 {
        self.st().stats.ops
    }

    /// The power loss: volatile writes and name changes survive or not (torn or whole) by the
    /// seed, the rest is lost, and a new boot begins (old handles fail, locks are gone).
    pub fn power_loss(&self, model: PowerLossModel) {
        let mut st = self.st();
        let st = &mut *st;
        st.stats.power_losses += 1;
        // Names first: which directory entries exist after the loss.
        let pending = std::mem::take(&mut st.dir_pending);
        for (_, ops) in pending {
            for (name, ino) in ops {
                if st.rng.next_f64() < model.survive {
                    match ino {
                        Some(i) => st.durable_names.insert(name, i),
                        None => st.durable_names.remove(&name),
                    };
                } else {
                    st.stats.names_lost += 1;
                }
            }
        }
        // Then data: each inode's volatile writes.
        for node in st.inodes.values_mut() {
            for op in std::mem::take(&mut node.pending) {
                if st.rng.next_f64() >= model.survive {
                    st.stats.writes_lost += 1;
                    continue;
                }
                match op {
                    Pending::Write { offset, data } if data.len() > 512 && st.rng.next_f64() < model.tear => {
                        st.stats.writes_torn += 1;
                        let unit: u64 = if st.rng.next_f64() < 0.5 { 512 } else { 4096 };
                        let end = offset + data.len() as u64;
                        let mut at = offset;
                        while at < end {
                            let piece_end = ((at / unit) + 1) * unit;
                            let piece_end = piece_end.min(end);
                            if st.rng.next_f64() < 0.5 {
                                let d = data[(at - offset) as usize..(piece_end - offset) as usize].to_vec();
                                apply(&mut node.durable, &Pending::Write { offset: at, data: d });
                            } else if node.durable.len() < piece_end as usize && piece_end == end {
                                // The size change survived though this last piece did not.
                                node.durable.resize(piece_end as usize, 0);
                            }
                            at = piece_end;
                        }
                    }
                    op => apply(&mut node.durable, &op),
                }
            }
            node.current = node.durable.clone();
            node.lost_writes = false;
        }
        let live: BTreeSet<u64> = st.durable_names.values().copied().collect();
        st.inodes.retain(|i, _| live.contains(i));
        st.names = st.durable_names.clone();
        st.locks.clear();
        st.dead = false;
        st.cut_at_op = None;
        st.disk_full = false;
        st.epoch += 1;
    }

    /// Every file name, with its current size (for reports and tests).
    pub fn files(&self) -> Vec<(PathBuf, u64)> {
        let st = self.st();
        st.names.iter().map(|(p, i)| (p.clone(), st.inodes[i].current.len() as u64)).collect()
    }
}

struct SimFile {
    disk: SimDisk,
    path: PathBuf,
    ino: u64,
    epoch: u64,
    writable: bool,
    /// O_DSYNC: every write is durable when it returns.
    dsync: bool,
}

impl VfsFile for SimFile {
    fn readv_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize> {
        let mut st = self.disk.st();
        let op = st.tick(self.epoch)?;
        if st.strikes(op, Fault::EioRead) {
            return Err(eio());
        }
        let data = &st.inodes[&self.ino].current;
        let mut at = offset as usize;
        let mut n = 0;
        for b in bufs.iter_mut() {
            if at >= data.len() {
                break;
            }
            let k = b.len().min(data.len() - at);
            b[..k].copy_from_slice(&data[at..at + k]);
            at += k;
            n += k;
            if k < b.len() {
                break;
            }
        }
        Ok(n)
    }

    fn writev_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<usize> {
        if !self.writable {
            return Err(io::Error::from_raw_os_error(libc::EBADF));
        }
        let mut st = self.disk.st();
        let op = st.tick(self.epoch)?;
        if st.strikes(op, Fault::EioWrite) || st.fail_writes_to.as_ref().is_some_and(|p| self.path.to_string_lossy().contains(p.as_str())) {
            return Err(eio());
        }
        let mut data: Vec<u8> = bufs.concat();
        let grows = offset + data.len() as u64 > st.inodes[&self.ino].current.len() as u64;
        if grows && (st.disk_full || st.strikes(op, Fault::Enospc)) {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        if data.len() > 1 && st.strikes(op, Fault::ShortWrite) {
            let keep = 1 + st.rng.below(data.len() as u64 - 1) as usize;
            data.truncate(keep);
        }
        st.stats.writes += 1;
        let n = data.len();
        let w = Pending::Write { offset, data };
        let node = st.inodes.get_mut(&self.ino).expect("open inode exists");
        apply(&mut node.current, &w);
        node.pending.push(w);
        if self.dsync {
            st.sync_inode(self.ino);
        }
        Ok(n)
    }

    fn sync_all(&self) -> io::Result<()> {
        self.sync_data()
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut st = self.disk.st();
        let op = st.tick(self.epoch)?;
        st.stats.fsyncs += 1;
        if st.strikes(op, Fault::EioFsync) {
            // Linux: the dirty pages are marked clean without reaching the disk.
            let node = st.inodes.get_mut(&self.ino).expect("open inode exists");
            let lost = node.pending.len() as u64;
            node.pending.clear();
            node.lost_writes = true;
            st.stats.writes_lost += lost;
            return Err(eio());
        }
        st.sync_inode(self.ino);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut st = self.disk.st();
        st.tick(self.epoch)?;
        let w = Pending::SetLen(len);
        let node = st.inodes.get_mut(&self.ino).expect("open inode exists");
        apply(&mut node.current, &w);
        node.pending.push(w);
        Ok(())
    }

    fn allocate(&self, offset: u64, len: u64) -> io::Result<()> {
        let mut st = self.disk.st();
        let op = st.tick(self.epoch)?;
        let end = offset + len;
        let grows = end > st.inodes[&self.ino].current.len() as u64;
        if grows && (st.disk_full || st.strikes(op, Fault::Enospc)) {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        let w = Pending::Grow(end);
        let node = st.inodes.get_mut(&self.ino).expect("open inode exists");
        apply(&mut node.current, &w);
        node.pending.push(w);
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        let mut st = self.disk.st();
        st.tick(self.epoch)?;
        Ok(st.inodes[&self.ino].current.len() as u64)
    }

    fn raw_fd(&self) -> Option<RawFd> {
        None
    }
}

struct SimLock {
    disk: SimDisk,
    path: PathBuf,
    epoch: u64,
}

impl DirLock for SimLock {}

impl Drop for SimLock {
    fn drop(&mut self) {
        let mut st = self.disk.st();
        if st.epoch == self.epoch {
            st.locks.remove(&self.path);
        }
    }
}

impl Vfs for SimDisk {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn VfsFile>> {
        let mut st = self.st();
        let epoch = st.epoch;
        st.tick(epoch)?;
        let ino = match st.names.get(path).copied() {
            Some(_) if mode.create_new => return Err(io::ErrorKind::AlreadyExists.into()),
            Some(i) => i,
            None if mode.create || mode.create_new => {
                if !st.dirs.contains(&State::parent(path)) {
                    return Err(io::ErrorKind::NotFound.into());
                }
                let i = st.next_ino;
                st.next_ino += 1;
                st.inodes.insert(i, Inode::default());
                st.set_name(path, Some(i));
                i
            }
            None => return Err(io::ErrorKind::NotFound.into()),
        };
        if mode.truncate {
            let w = Pending::SetLen(0);
            let node = st.inodes.get_mut(&ino).expect("named inode exists");
            apply(&mut node.current, &w);
            node.pending.push(w);
        }
        Ok(Arc::new(SimFile { disk: self.clone(), path: path.to_path_buf(), ino, epoch, writable: mode.write, dsync: mode.dsync }))
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let mut st = self.st();
        let epoch = st.epoch;
        st.tick(epoch)?;
        let mut p = path.to_path_buf();
        loop {
            st.dirs.insert(p.clone());
            if !p.pop() || p.as_os_str().is_empty() {
                break;
            }
        }
        Ok(())
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut st = self.st();
        let epoch = st.epoch;
        st.tick(epoch)?;
        if !st.dirs.contains(path) {
            return Err(io::ErrorKind::NotFound.into());
        }
        let mut v: Vec<String> = st
            .names
            .keys()
            .chain(st.dirs.iter())
            .filter(|p| p.parent() == Some(path))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        v.sort();
        v.dedup();
        Ok(v)
    }

    fn exists(&self, path: &Path) -> bool {
        let st = self.st();
        st.names.contains_key(path) || st.dirs.contains(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = self.st();
        let epoch = st.epoch;
        st.tick(epoch)?;
        let ino = st.names.get(from).copied().ok_or(io::Error::from(io::ErrorKind::NotFound))?;
        st.set_name(from, None);
        st.set_name(to, Some(ino));
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut st = self.st();
        let epoch = st.epoch;
        st.tick(epoch)?;
        if !st.names.contains_key(path) {
            return Err(io::ErrorKind::NotFound.into());
        }
        st.set_name(path, None);
        Ok(())
    }

    fn fsync_dir(&self, path: &Path) -> io::Result<()> {
        let mut st = self.st();
        let epoch = st.epoch;
        let op = st.tick(epoch)?;
        st.stats.fsyncs += 1;
        if st.strikes(op, Fault::EioFsync) {
            return Err(eio());
        }
        if let Some(ops) = st.dir_pending.remove(path) {
            for (name, ino) in ops {
                match ino {
                    Some(i) => st.durable_names.insert(name, i),
                    None => st.durable_names.remove(&name),
                };
            }
        }
        Ok(())
    }

    fn lock_file(&self, path: &Path, contents: &str) -> std::result::Result<Box<dyn DirLock>, LockFailed> {
        {
            let st = self.st();
            if st.locks.contains(path) {
                return Err(LockFailed::Held { owner: "simulated".into() });
            }
        }
        let f = self.open(path, OpenMode::REPLACE).map_err(LockFailed::Io)?;
        f.write_all_at(&[contents.as_bytes()], 0).map_err(LockFailed::Io)?;
        let mut st = self.st();
        st.locks.insert(path.to_path_buf());
        Ok(Box::new(SimLock { disk: self.clone(), path: path.to_path_buf(), epoch: st.epoch }))
    }

    fn is_simulated(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk() -> (SimDisk, PathBuf) {
        let d = SimDisk::new(7);
        let dir = PathBuf::from("/sim/data");
        d.create_dir_all(&dir).unwrap();
        (d, dir)
    }

    #[test]
    fn synced_data_and_names_survive_everything_else_may_not() {
        for seed in 0..50 {
            let d = SimDisk::new(seed);
            let dir = PathBuf::from("/sim/data");
            d.create_dir_all(&dir).unwrap();
            let a = dir.join("a");
            let f = d.open(&a, OpenMode::CREATE).unwrap();
            f.write_all_at(&[&[1u8; 8192]], 0).unwrap();
            f.sync_data().unwrap();
            d.fsync_dir(&dir).unwrap();
            f.write_all_at(&[&[2u8; 8192]], 0).unwrap();
            let b = dir.join("b");
            let g = d.open(&b, OpenMode::CREATE).unwrap();
            g.write_all_at(&[&[3u8; 100]], 0).unwrap();
            g.sync_data().unwrap(); // data synced, name not
            d.power_loss(PowerLossModel::default());
            // The old handle is dead.
            assert!(f.readv_at(&mut [&mut [0u8; 1]], 0).is_err());
            let data = d.read(&a).unwrap();
            assert_eq!(data.len(), 8192);
            // Each 512-byte piece is all old or all new.
            for piece in data.chunks(512) {
                assert!(piece.iter().all(|&x| x == 1) || piece.iter().all(|&x| x == 2), "seed {seed}");
            }
            if d.exists(&b) {
                assert_eq!(d.read(&b).unwrap(), vec![3u8; 100]);
            }
        }
    }

    #[test]
    fn a_failed_fsync_loses_its_writes_and_the_next_fsync_succeeds() {
        let (d, dir) = disk();
        let a = dir.join("a");
        let f = d.open(&a, OpenMode::CREATE).unwrap();
        d.fsync_dir(&dir).unwrap();
        f.write_all_at(&[b"hello"], 0).unwrap();
        let next = d.ops() + 1;
        d.plan_fault(next, Fault::EioFsync);
        assert!(f.sync_data().is_err());
        assert!(f.sync_data().is_ok());
        assert_eq!(d.read(&a).unwrap(), b"hello");
        d.power_loss(PowerLossModel { survive: 1.0, tear: 0.0 });
        assert_eq!(d.read(&a).unwrap(), b"");
    }

    #[test]
    fn power_cut_at_an_operation_fails_it_and_all_later_ones() {
        let (d, dir) = disk();
        let f = d.open(&dir.join("a"), OpenMode::CREATE).unwrap();
        d.cut_power_at(d.ops() + 2);
        f.write_all_at(&[b"x"], 0).unwrap();
        assert!(f.write_all_at(&[b"y"], 1).is_err());
        assert!(f.sync_data().is_err());
        assert!(d.is_dead());
        d.power_loss(PowerLossModel { survive: 1.0, tear: 0.0 });
        assert!(!d.is_dead());
    }

    #[test]
    fn the_same_seed_gives_the_same_disk() {
        let run = |seed| {
            let d = SimDisk::new(seed);
            let dir = PathBuf::from("/x");
            d.create_dir_all(&dir).unwrap();
            for i in 0..20u8 {
                let f = d.open(&dir.join(format!("f{}", i % 3)), OpenMode::CREATE).unwrap();
                f.write_all_at(&[&vec![i; 5000]], i as u64 * 700).unwrap();
                if i % 5 == 0 {
                    f.sync_data().unwrap();
                }
            }
            d.power_loss(PowerLossModel::default());
            d.files().into_iter().map(|(p, _)| (p.clone(), d.read(&p).unwrap())).collect::<Vec<_>>()
        };
        assert_eq!(run(11), run(11));
    }
}
