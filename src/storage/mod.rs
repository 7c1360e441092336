//! Storage: relation files ([`smgr`]) and durable small files ([`fsutil`]).

pub mod fsutil;
pub mod page;
pub mod smgr;

pub use smgr::{BlockNumber, ForkNumber, RelFileNumber, Smgr};
