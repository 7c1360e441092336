//! The file-system seam: every file operation of the engine goes through [`Vfs`] and
//! [`VfsFile`].
//!
//! Two implementations:
//! - [`RealFs`]: the operating system's files (`pread`/`pwritev`, `fdatasync`, `posix_fallocate`,
//!   `O_DIRECT`, `flock`), with the same system calls the engine made before the seam existed;
//! - [`crate::storage::simdisk::SimDisk`]: a simulated disk that models the page cache (a write
//!   is volatile until its file is synced, a name until its directory is synced), loses or tears
//!   volatile writes at a simulated power loss, and injects I/O errors, all from a seed.
//!
//! Entry points: [`Vfs::open`], [`Vfs::rename`], [`Vfs::remove_file`], [`Vfs::fsync_dir`],
//! [`Vfs::read_dir`], [`Vfs::lock_file`]; on a file [`VfsFile::readv_at`],
//! [`VfsFile::writev_at`], [`VfsFile::sync_data`], [`VfsFile::allocate`], [`VfsFile::set_len`].
//!
//! Invariants:
//! 1. Nothing in the engine opens, renames, removes or syncs a file of the data directory
//!    around this interface (user files named by `COPY ... 'file'` and the CLI's `-f` scripts
//!    are the user's, not the engine's, and use `std::fs`).
//! 2. A file's data is durable only after `sync_data`/`sync_all` on it returned Ok; a name
//!    (create, rename, remove) only after `fsync_dir` of its directory returned Ok. Code that
//!    needs a name to survive a crash syncs the directory (the simulated disk enforces it).
//! 3. `raw_fd` is `Some` only for real files: io_uring reads need a descriptor; anything else
//!    goes through `readv_at`.

use std::io;
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::os::unix::io::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How to open a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenMode {
    pub write: bool,
    /// Create it if missing.
    pub create: bool,
    /// Fail if it exists (implies create).
    pub create_new: bool,
    /// Truncate to 0 on open.
    pub truncate: bool,
    /// `O_DIRECT` (real files; the simulated disk ignores it but keeps the alignment rule).
    pub direct: bool,
    /// `O_DSYNC`: each write returns when it is durable.
    pub dsync: bool,
}

impl OpenMode {
    pub const READ: OpenMode = OpenMode { write: false, create: false, create_new: false, truncate: false, direct: false, dsync: false };
    pub const READ_WRITE: OpenMode = OpenMode { write: true, ..OpenMode::READ };
    pub const CREATE: OpenMode = OpenMode { create: true, ..OpenMode::READ_WRITE };
    pub const CREATE_NEW: OpenMode = OpenMode { create_new: true, ..OpenMode::CREATE };
    pub const REPLACE: OpenMode = OpenMode { truncate: true, ..OpenMode::CREATE };

    pub fn direct(mut self, on: bool) -> OpenMode {
        self.direct = on;
        self
    }
}

/// An open file.
pub trait VfsFile: Send + Sync {
    /// Reads into `bufs` from `offset`; returns bytes read (0 at end of file). May be short.
    fn readv_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize>;
    /// Writes `bufs` at `offset`; returns bytes written. May be short.
    fn writev_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<usize>;
    /// fsync: data and metadata durable.
    fn sync_all(&self) -> io::Result<()>;
    /// fdatasync: data (and the size) durable.
    fn sync_data(&self) -> io::Result<()>;
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// posix_fallocate: the range is allocated (reads as zeros where nothing was written).
    fn allocate(&self, offset: u64, len: u64) -> io::Result<()>;
    fn len(&self) -> io::Result<u64>;
    /// The descriptor of a real file (io_uring needs one).
    fn raw_fd(&self) -> Option<RawFd>;

    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Reads exactly `buf.len()` bytes at `offset` (UnexpectedEof if the file is shorter).
    fn read_exact_at(&self, buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            match self.readv_at(&mut [&mut buf[done..]], offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    done += n;
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Writes all of `bufs` at `offset`, continuing after short writes.
    fn write_all_at(&self, bufs: &[&[u8]], mut offset: u64) -> io::Result<()> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        let mut put = 0usize;
        while put < total {
            if put == 0 {
                // The usual case: one call writes everything, with no copy of the list.
                match self.writev_at(bufs, offset) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(n) => {
                        put = n;
                        offset += n as u64;
                        continue;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
            let mut rest: Vec<&[u8]> = Vec::with_capacity(bufs.len());
            let mut skip = put;
            for b in bufs {
                if skip >= b.len() {
                    skip -= b.len();
                    continue;
                }
                rest.push(&b[skip..]);
                skip = 0;
            }
            match self.writev_at(&rest, offset) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    put += n;
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The whole file.
    fn read_all(&self) -> io::Result<Vec<u8>> {
        let mut v = vec![0u8; self.len()? as usize];
        self.read_exact_at(&mut v, 0)?;
        Ok(v)
    }
}

/// Held while a process owns a data directory (the lock file).
pub trait DirLock: Send + Sync {}

/// A file system.
pub trait Vfs: Send + Sync {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn VfsFile>>;
    /// Creates a directory and its parents (mode 0700).
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// The names in a directory (not `.` or `..`), sorted.
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>>;
    fn exists(&self, path: &Path) -> bool;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Makes the directory's entries (creates, renames, removes) durable.
    fn fsync_dir(&self, path: &Path) -> io::Result<()>;
    /// Takes the data directory's lock file exclusively, writing `contents` into it; on
    /// failure returns what the file says (the owner's pid).
    fn lock_file(&self, path: &Path, contents: &str) -> std::result::Result<Box<dyn DirLock>, LockFailed>;
    /// Removes a lock file this process holds (clean shutdown).
    fn unlock_file(&self, path: &Path) {
        let _ = self.remove_file(path);
    }
    /// True for the simulated disk.
    fn is_simulated(&self) -> bool {
        false
    }

    /// Reads a whole file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.open(path, OpenMode::READ)?.read_all()
    }
}

/// Why a lock file could not be taken.
pub enum LockFailed {
    Held { owner: String },
    Io(io::Error),
}

/// The operating system's files.
#[derive(Default)]
pub struct RealFs;

/// The process-wide real file system.
pub fn real() -> Arc<dyn Vfs> {
    static REAL: std::sync::OnceLock<Arc<dyn Vfs>> = std::sync::OnceLock::new();
    REAL.get_or_init(|| Arc::new(RealFs)).clone()
}

struct RealFile(std::fs::File);

fn iovecs_mut(bufs: &mut [&mut [u8]]) -> Vec<libc::iovec> {
    bufs.iter_mut().map(|b| libc::iovec { iov_base: b.as_mut_ptr() as *mut libc::c_void, iov_len: b.len() }).collect()
}

impl VfsFile for RealFile {
    fn readv_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize> {
        if bufs.len() == 1 {
            return self.0.read_at(bufs[0], offset);
        }
        let iov = iovecs_mut(bufs);
        // SAFETY: each iovec points into a live, exclusively borrowed buffer of the stated
        // length; the descriptor is open for the duration of the call.
        let r = unsafe { libc::preadv(self.0.as_raw_fd(), iov.as_ptr(), iov.len().min(1024) as i32, offset as i64) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }

    fn writev_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<usize> {
        if bufs.len() == 1 {
            return self.0.write_at(bufs[0], offset);
        }
        let iov: Vec<libc::iovec> =
            bufs.iter().map(|b| libc::iovec { iov_base: b.as_ptr() as *mut libc::c_void, iov_len: b.len() }).collect();
        // SAFETY: each iovec points into a live borrowed buffer of the stated length; the
        // kernel only reads through them.
        let r = unsafe { libc::pwritev(self.0.as_raw_fd(), iov.as_ptr(), iov.len().min(1024) as i32, offset as i64) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }

    fn sync_all(&self) -> io::Result<()> {
        self.0.sync_all()
    }

    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn allocate(&self, offset: u64, len: u64) -> io::Result<()> {
        // SAFETY: plain system call on an open descriptor.
        let r = unsafe { libc::posix_fallocate(self.0.as_raw_fd(), offset as libc::off_t, len as libc::off_t) };
        if r != 0 {
            Err(io::Error::from_raw_os_error(r))
        } else {
            Ok(())
        }
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    fn raw_fd(&self) -> Option<RawFd> {
        Some(self.0.as_raw_fd())
    }
}

struct RealLock(#[allow(dead_code)] std::fs::File);
impl DirLock for RealLock {}

impl Vfs for RealFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn VfsFile>> {
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(mode.write).create(mode.create && !mode.create_new).truncate(mode.truncate).mode(0o600);
        if mode.create_new {
            o.create_new(true);
        }
        let flags = if mode.direct { libc::O_DIRECT } else { 0 } | if mode.dsync { libc::O_DSYNC } else { 0 };
        if flags != 0 {
            o.custom_flags(flags);
        }
        Ok(Arc::new(RealFile(o.open(path)?)))
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut v: Vec<String> = std::fs::read_dir(path)?.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        Ok(v)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn fsync_dir(&self, path: &Path) -> io::Result<()> {
        std::fs::File::open(path)?.sync_all()
    }

    fn lock_file(&self, path: &Path, contents: &str) -> std::result::Result<Box<dyn DirLock>, LockFailed> {
        use std::io::{Read, Seek, Write};
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(LockFailed::Io)?;
        // SAFETY: flock on a descriptor we own.
        let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r != 0 {
            let mut s = String::new();
            let _ = f.read_to_string(&mut s);
            return Err(LockFailed::Held { owner: s.lines().next().unwrap_or("?").trim().to_string() });
        }
        f.set_len(0).map_err(LockFailed::Io)?;
        f.rewind().map_err(LockFailed::Io)?;
        f.write_all(contents.as_bytes()).map_err(LockFailed::Io)?;
        Ok(Box::new(RealLock(f)))
    }
}

/// `path` relative to `base` for messages (`pg_wal/000...`), or the path itself.
pub fn display_rel(base: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(base).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
}

impl std::fmt::Debug for dyn Vfs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_simulated() { "SimDisk" } else { "RealFs" })
    }
}
