//! Small file-system helpers with durability: whole files replaced atomically.
//!
//! Invariant: after `write_file_durably` returns, the file holds the new contents after any
//! crash, and before it returns a crash leaves either the old or the new contents (write to a
//! temporary name, fsync it, rename over, fsync the directory).

use crate::error::{PgError, Result};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

pub fn write_file_durably(path: &Path, data: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| PgError::io("open", &tmp, e))?;
        f.write_all(data).map_err(|e| PgError::io("write", &tmp, e))?;
        f.sync_all().map_err(|e| PgError::io("fsync", &tmp, e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| PgError::io("rename", &tmp, e))?;
    if let Some(dir) = path.parent() {
        fsync_dir(dir)?;
    }
    Ok(())
}

pub fn fsync_dir(dir: &Path) -> Result<()> {
    let d = std::fs::File::open(dir).map_err(|e| PgError::io("open", dir, e))?;
    d.sync_all().map_err(|e| PgError::io("fsync", dir, e))
}
