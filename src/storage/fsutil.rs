//! Small file-system helpers with durability: whole files replaced atomically.
//!
//! Invariant: after `write_file_durably` returns, the file holds the new contents after any
//! crash, and before it returns a crash leaves either the old or the new contents (write to a
//! temporary name, fsync it, rename over, fsync the directory).

use super::vfs::{OpenMode, Vfs};
use crate::error::{PgError, Result};
use std::path::Path;

pub fn write_file_durably(vfs: &dyn Vfs, path: &Path, data: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let f = vfs.open(&tmp, OpenMode::REPLACE).map_err(|e| PgError::io("open", &tmp, e))?;
        f.write_all_at(&[data], 0).map_err(|e| PgError::io("write", &tmp, e))?;
        f.sync_all().map_err(|e| PgError::io("fsync", &tmp, e))?;
    }
    vfs.rename(&tmp, path).map_err(|e| PgError::io("rename", &tmp, e))?;
    if let Some(dir) = path.parent() {
        fsync_dir(vfs, dir)?;
    }
    Ok(())
}

pub fn fsync_dir(vfs: &dyn Vfs, dir: &Path) -> Result<()> {
    vfs.fsync_dir(dir).map_err(|e| PgError::io("fsync", dir, e))
}

/// Reads a whole file; `Ok(None)` if it does not exist.
pub fn read_if_exists(vfs: &dyn Vfs, path: &Path) -> Result<Option<Vec<u8>>> {
    match vfs.read(path) {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(PgError::io("read", path, e)),
    }
}
