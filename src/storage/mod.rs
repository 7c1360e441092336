//! Storage: the file-system seam ([`vfs`], with the simulated disk [`simdisk`]), relation files
//! ([`smgr`]) and durable small files ([`fsutil`]).

pub mod fsutil;
pub mod page;
pub mod simdisk;
pub mod smgr;
pub mod vfs;

pub use smgr::{BlockNumber, ForkNumber, RelFileNumber, Smgr};
pub use vfs::{OpenMode, Vfs, VfsFile};
