//! The shared buffer pool, in PostgreSQL's design with the seeds' fixes built in.
//!
//! Entry points: [`BufferPool::read_buffer`] (pin a page, reading it on a miss),
//! [`BufferPool::extend_by`] (new pages at the end of a fork), [`Buffer::lock_shared`] /
//! [`Buffer::lock_exclusive`] (content locks), [`BufferPool::flush_all`],
//! [`BufferPool::drop_relation_buffers`]. See also `desc.rs` (state word, I/O life),
//! `pins.rs` (per-session pins), `strategy.rs` (rings), `stream.rs` (read streams: look-ahead
//! and combined reads), `aio.rs` (io_method: who executes and completes reads), `memory.rs`
//! (pool memory), `writeback.rs` (filled bulk-load pages written off the session).
//!
//! Rules for callers (as PostgreSQL's src/backend/storage/buffer/README):
//! 1. To read a page one holds a pin and the content lock (shared or exclusive).
//! 2. To change a page one holds a pin and the exclusive content lock, and marks the buffer
//!    dirty before releasing the lock.
//! 3. A pin may be held across other work; content locks are held briefly and never across
//!    waiting for another content lock of a higher block of the same relation.
//! 4. A session pins at most its share of the pool (`shared_buffers / max_connections`, at least
//!    one); `extend_by` takes fewer pages rather than exceed it.
//!
//! Invariants of the pool itself:
//! 1. The mapping table is split into `heapstore.buffer_partitions` partitions (128 by
//!    default), each under its own LWLock; a lookup takes one partition lock shared.
//! 2. Lock order: partition lock, then buffer header lock. Never two partition locks at once.
//! 3. Getting a victim is separate from mapping it: the victim is pinned, written if dirty,
//!    and unmapped on its own, holding no relation-level lock (seed 000's BufferAlloc split).
//! 4. The clock sweep has an atomic hand and no global lock, and examines at most
//!    `heapstore.clock_sweep_max_examined` buffers per search (seed 004). Before sweeping, a
//!    victim search takes a buffer from the free list of buffers DROP / TRUNCATE unmapped (its
//!    mutex is taken only while the list is not empty). A listed buffer is handed out only if
//!    it is still unmapped and unpinned once pinned.
//! 5. A page is written while its writer holds the shared content lock and IO_IN_PROGRESS, so
//!    no one changes it until the write is done and the on-disk image is always one the page
//!    had. Buffered, it goes to the kernel straight from the pool, its checksum a separate piece
//!    of the `pwritev`; with `io_direct`, from an aligned checksummed copy.
//! 6. WAL before data: a page is written only after the WAL up to its LSN is durable — in
//!    eviction, the background writer and checkpoints alike (all go through `flush_buffer`).
//! 7. Write combining: writing block B takes along, in the same `pwritev`, the buffers of B+1,
//!    B+2, … (up to `io_combine_limit`) that are dirty, unpinned, not recently used, whose
//!    content lock is free and that have no I/O in progress; it stops at the first that is not.
//!    It never waits for a neighbour, so it adds no wait to the lock order of rule 3.

pub mod aio;
pub mod bgwriter;
pub mod critical;
pub mod desc;
pub mod memory;
pub mod pins;
pub mod pool;
pub mod strategy;
pub mod stream;
pub mod writeback;

pub use aio::IoMethod;
pub use pins::{Buffer, PageMut, PageRef, Pins};
pub use pool::{BufferId, BufferPool, ScanSettings};
pub use strategy::{Strategy, StrategyKind};
pub use stream::{ReadStream, StreamStats};
