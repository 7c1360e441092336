//! WAL record format: assembly in session memory ([`RecordBuilder`]) and decoding
//! ([`decode`], [`DecodedRecord`]).
//!
//! ```text
//!  offset  size  field
//!  ──────  ────  ─────────────────────────────────────────────────────────────────────────────
//!       0     4  total_len   bytes of this record, header included, padding excluded
//!       4     4  crc         CRC32C, see below
//!       8     8  lsn         the record's own start position (replaces PostgreSQL's xl_prev)
//!      16     8  xid         transaction id
//!      24     1  rmgr        resource manager
//!      25     1  info        resource-manager-specific bits
//!      26     1  nblocks     number of block references that follow
//!      27     5  reserved    zero
//!      32        block references, nblocks times:
//!                  rel u32, fork u8, block u32,
//!                  flags u8 (HAS_IMAGE | HAS_DATA | WILL_INIT | COMPRESSED)
//!                  if COMPRESSED: method u8 (1 lz4, 2 zstd)
//!                  if HAS_IMAGE: hole_offset u16, hole_length u16, page_len u16,
//!                                then page_len - hole_length bytes (the page without its hole)
//!                                or, COMPRESSED: stored_len u16, then stored_len bytes that
//!                                decompress to those page_len - hole_length bytes (stored
//!                                as they are when stored_len equals that length)
//!                  if HAS_DATA:  data_len u32, then data_len bytes
//!                                or, COMPRESSED: stored_len u32, data_len u32, then
//!                                stored_len bytes that decompress to data_len bytes (as
//!                                they are when the two lengths are equal)
//!                main data: len u32, then len bytes
//!                (zero padding to the next multiple of 8: the next record starts there)
//! ```
//!
//! `wal_compression` (lz4, zstd) compresses a block reference's image and data when the block
//! carries at least [`COMPRESS_MIN`] bytes of them and compressing saves room
//! ([`RecordBuilder::compress_blocks`], run by the inserter before assembly): full-page images
//! and the whole-page tuple lists of bulk loads. The CRC covers the stored (compressed) bytes.
//!
//! All integers are little-endian. `page_len` is in the format (the brief left open how a
//! decoder learns the page size): images can be restored without knowing the block size.
//!
//! **The CRC** covers every byte of the record except the crc field itself, in this order:
//! bytes `32..total_len` and `16..32` (that is, bytes `16..total_len`), then `total_len`
//! (bytes `0..4`), then `lsn` (bytes `8..16`). The lsn is last because it is known only after
//! space is reserved: [`RecordBuilder::finish`] computes the CRC of everything else in session
//! memory before any lock is taken, and the inserter finishes it with 8 more bytes after its one
//! atomic add ([`RecordBuilder::stamp`]). PostgreSQL does the same for the same reason: it
//! CRCs the record's data first and its header (with xl_prev) last.

use crate::error::{sqlstate, PgError, Result};

use super::{lsn_str, Lsn};

/// Size of the fixed record header.
pub const HEADER_LEN: usize = 32;
/// The smallest valid record: a header and an empty main data length.
pub const MIN_RECORD_LEN: usize = HEADER_LEN + 4;
/// The largest record accepted by the builder and the reader (as PostgreSQL's ~1 GB cap).
pub const MAX_RECORD_LEN: usize = 1 << 30;
/// The largest page image (PostgreSQL's largest BLCKSZ).
pub const MAX_PAGE_LEN: usize = 32768;
/// Records start at multiples of this.
pub const RECORD_ALIGN: u64 = 8;

/// The block reference carries a page image (a full-page write).
pub const BLOCK_HAS_IMAGE: u8 = 0x01;
/// The block reference carries resource-manager data for this block.
pub const BLOCK_HAS_DATA: u8 = 0x02;
/// Redo initializes the page from scratch; its old contents do not matter.
pub const BLOCK_WILL_INIT: u8 = 0x04;
/// The block's image and data are stored compressed (method byte after the flags).
pub const BLOCK_COMPRESSED: u8 = 0x08;
const BLOCK_FLAGS_ALL: u8 = BLOCK_HAS_IMAGE | BLOCK_HAS_DATA | BLOCK_WILL_INIT | BLOCK_COMPRESSED;
/// Blocks carrying fewer bytes of image and data than this are never compressed.
pub const COMPRESS_MIN: usize = 256;

/// `wal_compression`: how block images and data are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalCompression {
    Off,
    Lz4,
    Zstd,
}

impl WalCompression {
    pub fn parse(s: &str) -> Option<WalCompression> {
        match s {
            "off" => Some(WalCompression::Off),
            "lz4" => Some(WalCompression::Lz4),
            "zstd" => Some(WalCompression::Zstd),
            _ => None,
        }
    }

    fn method(self) -> u8 {
        match self {
            WalCompression::Off => 0,
            WalCompression::Lz4 => 1,
            WalCompression::Zstd => 2,
        }
    }
}

/// zstd's level for WAL: the fastest, since compression runs on the inserting session.
const ZSTD_LEVEL: i32 = 1;

/// Appends `src` compressed with `method` to `out`; false (out unchanged) if it would not be
/// smaller than `limit` bytes.
fn compress_append(method: WalCompression, src: &[u8], out: &mut Vec<u8>, limit: usize) -> bool {
    let start = out.len();
    let got = match method {
        WalCompression::Off => return false,
        WalCompression::Lz4 => {
            out.resize(start + lz4_flex::block::get_maximum_output_size(src.len()), 0);
            lz4_flex::block::compress_into(src, &mut out[start..]).ok()
        }
        WalCompression::Zstd => {
            out.resize(start + zstd::zstd_safe::compress_bound(src.len()), 0);
            // One compression context per thread, kept: making one per call costs more than
            // compressing a page.
            thread_local! {
                static ZSTD: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> = const { std::cell::RefCell::new(None) };
            }
            ZSTD.with(|c| {
                let mut c = c.borrow_mut();
                if c.is_none() {
                    *c = zstd::bulk::Compressor::new(ZSTD_LEVEL).ok();
                }
                c.as_mut().and_then(|c| c.compress_to_buffer(src, &mut out[start..]).ok())
            })
        }
    };
    match got {
        Some(n) if n < limit => {
            out.truncate(start + n);
            true
        }
        _ => {
            out.truncate(start);
            false
        }
    }
}

/// Decompresses `src` (method byte `method`) into exactly `len` bytes.
fn decompress(method: u8, src: &[u8], len: usize) -> std::result::Result<Vec<u8>, String> {
    let mut out = vec![0u8; len];
    let n = match method {
        1 => lz4_flex::block::decompress_into(src, &mut out).map_err(|e| format!("lz4: {e}"))?,
        2 => zstd::bulk::decompress_to_buffer(src, &mut out).map_err(|e| format!("zstd: {e}"))?,
        m => return Err(format!("unknown compression method {m}")),
    };
    if n != len {
        return Err(format!("decompressed to {n} bytes, expected {len}"));
    }
    Ok(out)
}

const OFF_TOTAL_LEN: usize = 0;
const OFF_CRC: usize = 4;
const OFF_LSN: usize = 8;
const OFF_XID: usize = 16;
const OFF_RMGR: usize = 24;
const OFF_INFO: usize = 25;
const OFF_NBLOCKS: usize = 26;

/// Rounds a length up to [`RECORD_ALIGN`].
#[inline]
pub const fn align_len(len: u64) -> u64 {
    (len + RECORD_ALIGN - 1) & !(RECORD_ALIGN - 1)
}

/// The CRC of everything but the crc and lsn fields (see the module doc for the order).
#[inline]
fn crc_without_lsn(rec: &[u8]) -> u32 {
    let c = crc32c::crc32c(&rec[OFF_XID..]);
    crc32c::crc32c_append(c, &rec[OFF_TOTAL_LEN..OFF_CRC])
}

/// The record's CRC as stored in its crc field. `rec` is exactly `total_len` bytes.
pub fn record_crc(rec: &[u8]) -> u32 {
    crc32c::crc32c_append(crc_without_lsn(rec), &rec[OFF_LSN..OFF_LSN + 8])
}

/// Reads the `total_len` and `lsn` fields of a header (for the reader's framing checks).
pub(super) fn header_len_and_lsn(hdr: &[u8]) -> (usize, Lsn) {
    (u32_at(hdr, OFF_TOTAL_LEN) as usize, u64_at(hdr, OFF_LSN))
}

/// Assembles one WAL record in session memory.
///
/// Fill it (`begin`, `add_block`..., `set_main`), then hand it to `Wal::insert`, which calls
/// [`RecordBuilder::finish`] (assembly and CRC, before any lock) and, after reserving space,
/// [`RecordBuilder::stamp`]. The builder keeps its buffers between records, so a session that
/// reuses one builder allocates nothing per record in the steady state.
#[derive(Clone, Debug)]
pub struct RecordBuilder {
    /// Header and block references; after `finish` also main data and padding.
    buf: Vec<u8>,
    /// Length of `buf` before `finish` appended main data (so a later `add_block` can undo it).
    blocks_end: usize,
    main: Vec<u8>,
    nblocks: u8,
    /// `Some((total_len, crc without the lsn))` once assembled; cleared by any change.
    finished: Option<(usize, u32)>,
    /// Where [`RecordBuilder::compress_blocks`] builds the compressed block references.
    scratch: Vec<u8>,
}

impl Default for RecordBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl RecordBuilder {
    /// An empty record (rmgr 0, info 0, xid 0) ready to be filled.
    pub fn new() -> Self {
        let mut b = RecordBuilder {
            buf: Vec::with_capacity(256),
            blocks_end: 0,
            main: Vec::new(),
            nblocks: 0,
            finished: None,
            scratch: Vec::new(),
        };
        b.begin(0, 0, 0);
        b
    }

    /// Starts a new record, forgetting the previous one.
    pub fn begin(&mut self, rmgr: u8, info: u8, xid: u64) -> &mut Self {
        self.buf.clear();
        self.buf.resize(HEADER_LEN, 0);
        self.buf[OFF_XID..OFF_XID + 8].copy_from_slice(&xid.to_le_bytes());
        self.buf[OFF_RMGR] = rmgr;
        self.buf[OFF_INFO] = info;
        self.blocks_end = HEADER_LEN;
        self.main.clear();
        self.nblocks = 0;
        self.finished = None;
        self
    }

    fn unfinish(&mut self) {
        if self.finished.take().is_some() {
            self.buf.truncate(self.blocks_end);
        }
    }

    /// Adds a block reference. `image` is `(page, hole_offset, hole_length)`: the page as it is
    /// now and its hole (PostgreSQL's pd_lower and pd_upper - pd_lower; (0, 0) for no hole). The
    /// hole is not stored and reads back as zeros. `data` (may be empty) is the resource
    /// manager's data for this block.
    ///
    /// # Panics
    /// On a programming error: more than 255 blocks, a page larger than [`MAX_PAGE_LEN`], a hole
    /// outside the page, or more than 4 GB of data.
    pub fn add_block(
        &mut self,
        rel: u32,
        fork: u8,
        block: u32,
        image: Option<(&[u8], u16, u16)>,
        data: &[u8],
        will_init: bool,
    ) -> &mut Self {
        assert!(self.nblocks < u8::MAX, "a WAL record can reference at most 255 blocks");
        self.unfinish();
        let mut flags = 0;
        if image.is_some() {
            flags |= BLOCK_HAS_IMAGE;
        }
        if !data.is_empty() {
            flags |= BLOCK_HAS_DATA;
        }
        if will_init {
            flags |= BLOCK_WILL_INIT;
        }
        let b = &mut self.buf;
        b.extend_from_slice(&rel.to_le_bytes());
        b.push(fork);
        b.extend_from_slice(&block.to_le_bytes());
        b.push(flags);
        if let Some((page, hole_off, hole_len)) = image {
            let (off, len) = (hole_off as usize, hole_len as usize);
            assert!(!page.is_empty() && page.len() <= MAX_PAGE_LEN, "page image of {} bytes (at most {MAX_PAGE_LEN})", page.len());
            assert!(off + len <= page.len(), "hole {off}+{len} outside a page of {} bytes", page.len());
            b.extend_from_slice(&hole_off.to_le_bytes());
            b.extend_from_slice(&hole_len.to_le_bytes());
            b.extend_from_slice(&(page.len() as u16).to_le_bytes());
            b.extend_from_slice(&page[..off]);
            b.extend_from_slice(&page[off + len..]);
        }
        if !data.is_empty() {
            let n = u32::try_from(data.len()).expect("block data over 4 GB");
            b.extend_from_slice(&n.to_le_bytes());
            b.extend_from_slice(data);
        }
        self.nblocks += 1;
        self.blocks_end = self.buf.len();
        self
    }

    /// Compresses the image and data of each block reference that carries at least
    /// [`COMPRESS_MIN`] bytes of them, where that saves room (`wal_compression`). Called by the
    /// inserter before assembly; a no-op with `Off` or once done.
    pub fn compress_blocks(&mut self, method: WalCompression) {
        if method == WalCompression::Off || self.nblocks == 0 {
            return;
        }
        self.unfinish();
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let src = &self.buf[HEADER_LEN..self.blocks_end];
        let mut p = 0;
        let mut changed = false;
        for _ in 0..self.nblocks {
            let head = &src[p..p + 10];
            let flags = head[9];
            let mut q = p + 10;
            if flags & BLOCK_COMPRESSED != 0 {
                // Already compressed (compress_blocks ran before): keep as it is.
                let len = compressed_block_len(src, p);
                out.extend_from_slice(&src[p..p + len]);
                p += len;
                continue;
            }
            let image = (flags & BLOCK_HAS_IMAGE != 0).then(|| {
                let hole_len = u16_at(src, q + 2) as usize;
                let page_len = u16_at(src, q + 4) as usize;
                let n = page_len - hole_len;
                let r = (q, q + 6, q + 6 + n);
                q += 6 + n;
                r
            });
            let data = (flags & BLOCK_HAS_DATA != 0).then(|| {
                let n = u32_at(src, q) as usize;
                let r = (q + 4, q + 4 + n);
                q += 4 + n;
                r
            });
            let payload = image.map_or(0, |(_, a, b)| b - a) + data.map_or(0, |(a, b)| b - a);
            let start = out.len();
            let mut ok = payload >= COMPRESS_MIN;
            if ok {
                out.extend_from_slice(&head[..9]);
                out.push(flags | BLOCK_COMPRESSED);
                out.push(method.method());
                if let Some((h, a, b)) = image {
                    out.extend_from_slice(&src[h..h + 6]);
                    let at = out.len();
                    out.extend_from_slice(&[0, 0]);
                    // A part that does not get smaller is stored as it is (stored length =
                    // its length; compressed output is always shorter).
                    if !compress_append(method, &src[a..b], &mut out, b - a) {
                        out.extend_from_slice(&src[a..b]);
                    }
                    let n = (out.len() - at - 2) as u16;
                    out[at..at + 2].copy_from_slice(&n.to_le_bytes());
                }
                if let Some((a, b)) = data {
                    let at = out.len();
                    out.extend_from_slice(&[0; 8]);
                    if !compress_append(method, &src[a..b], &mut out, b - a) {
                        out.extend_from_slice(&src[a..b]);
                    }
                    let n = (out.len() - at - 8) as u32;
                    out[at..at + 4].copy_from_slice(&n.to_le_bytes());
                    out[at + 4..at + 8].copy_from_slice(&((b - a) as u32).to_le_bytes());
                }
                // Only if the whole block got smaller (headers included).
                ok = out.len() - start < q - p;
            }
            if ok {
                changed = true;
            } else {
                out.truncate(start);
                out.extend_from_slice(&src[p..q]);
            }
            p = q;
        }
        debug_assert_eq!(p, src.len());
        if changed {
            self.buf.truncate(HEADER_LEN);
            self.buf.extend_from_slice(&out);
            self.blocks_end = self.buf.len();
        }
        self.scratch = out;
    }

    /// Sets the record's main data (replacing any set before).
    pub fn set_main(&mut self, data: &[u8]) -> &mut Self {
        self.unfinish();
        self.main.clear();
        self.main.extend_from_slice(data);
        self
    }

    /// Number of block references added so far.
    pub fn nblocks(&self) -> usize {
        self.nblocks as usize
    }

    /// Assembles the record and computes its CRC except for the lsn field, which stays zero
    /// until [`RecordBuilder::stamp`]. Returns the record (`total_len` bytes, no padding).
    /// Idempotent; any later change to the builder undoes it.
    pub fn finish(&mut self) -> &[u8] {
        if self.finished.is_none() {
            self.buf.truncate(self.blocks_end);
            let main_len = u32::try_from(self.main.len()).unwrap_or(u32::MAX);
            self.buf.extend_from_slice(&main_len.to_le_bytes());
            self.buf.extend_from_slice(&self.main);
            let len = self.buf.len();
            let stored_len = u32::try_from(len).unwrap_or(u32::MAX);
            self.buf[OFF_TOTAL_LEN..OFF_TOTAL_LEN + 4].copy_from_slice(&stored_len.to_le_bytes());
            self.buf[OFF_CRC..OFF_LSN + 8].fill(0);
            self.buf[OFF_NBLOCKS] = self.nblocks;
            self.buf.resize(align_len(len as u64) as usize, 0);
            let crc = crc_without_lsn(&self.buf[..len]);
            self.finished = Some((len, crc));
        }
        let (len, _) = self.finished.expect("just set");
        &self.buf[..len]
    }

    /// Assembles the record and computes its CRC afresh, even if [`RecordBuilder::finish`] ran
    /// before: the single-lock insertion baseline does this under its lock.
    pub(crate) fn reassemble(&mut self) -> &[u8] {
        self.finished = None;
        self.finish()
    }

    /// Length of the assembled record (calls `finish`).
    pub fn len(&mut self) -> usize {
        self.finish().len()
    }

    /// Always false: a record has at least a header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Writes the record's start position into its lsn field and completes the CRC (8 bytes of
    /// CRC work, done by the inserter after reservation). Returns the record with its padding:
    /// the bytes to copy into the WAL, `align_len(total_len)` long.
    pub fn stamp(&mut self, lsn: Lsn) -> &[u8] {
        self.finish();
        let (_, partial) = self.finished.expect("finished");
        let lsn_bytes = lsn.to_le_bytes();
        let crc = crc32c::crc32c_append(partial, &lsn_bytes);
        self.buf[OFF_LSN..OFF_LSN + 8].copy_from_slice(&lsn_bytes);
        self.buf[OFF_CRC..OFF_CRC + 4].copy_from_slice(&crc.to_le_bytes());
        &self.buf
    }
}

/// A page image in a block reference: the page without its hole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageImage<'a> {
    pub hole_offset: u16,
    pub hole_length: u16,
    /// Size of the full page.
    pub page_len: usize,
    /// The page's bytes: `page[..hole_offset]` then `page[hole_offset + hole_length..]`
    /// (decompressed if the record stored them compressed).
    pub bytes: std::borrow::Cow<'a, [u8]>,
}

impl PageImage<'_> {
    /// Restores the full page into `page` (which must be `page_len` long); the hole is zeroed.
    pub fn restore_into(&self, page: &mut [u8]) {
        assert_eq!(page.len(), self.page_len, "restoring a {}-byte image into a {}-byte page", self.page_len, page.len());
        let off = self.hole_offset as usize;
        let end = off + self.hole_length as usize;
        page[..off].copy_from_slice(&self.bytes[..off]);
        page[off..end].fill(0);
        page[end..].copy_from_slice(&self.bytes[off..]);
    }

    /// The full page, hole zeroed.
    pub fn to_page(&self) -> Vec<u8> {
        let mut p = vec![0u8; self.page_len];
        self.restore_into(&mut p);
        p
    }
}

/// A decoded block reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockRef<'a> {
    pub rel: u32,
    pub fork: u8,
    pub block: u32,
    /// `BLOCK_HAS_IMAGE | BLOCK_HAS_DATA | BLOCK_WILL_INIT` bits.
    pub flags: u8,
    image: Option<PageImage<'a>>,
    data: std::borrow::Cow<'a, [u8]>,
}

impl<'a> BlockRef<'a> {
    pub fn image(&self) -> Option<&PageImage<'a>> {
        self.image.as_ref()
    }

    /// The block's data (empty when the reference has none; decompressed if stored so).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Whether the record stored this block's image and data compressed.
    pub fn compressed(&self) -> bool {
        self.flags & BLOCK_COMPRESSED != 0
    }

    pub fn has_data(&self) -> bool {
        self.flags & BLOCK_HAS_DATA != 0
    }

    pub fn will_init(&self) -> bool {
        self.flags & BLOCK_WILL_INIT != 0
    }
}

/// A record decoded in place: accessors borrow from the record bytes.
#[derive(Clone, Debug)]
pub struct DecodedRecord<'a> {
    raw: &'a [u8],
    lsn: Lsn,
    xid: u64,
    rmgr: u8,
    info: u8,
    blocks: Vec<BlockRef<'a>>,
    main: &'a [u8],
}

impl<'a> DecodedRecord<'a> {
    /// The record's own start position (its lsn field).
    pub fn lsn(&self) -> Lsn {
        self.lsn
    }

    /// Where the next record starts.
    pub fn end_lsn(&self) -> Lsn {
        self.lsn + align_len(self.raw.len() as u64)
    }

    pub fn xid(&self) -> u64 {
        self.xid
    }

    pub fn rmgr(&self) -> u8 {
        self.rmgr
    }

    pub fn info(&self) -> u8 {
        self.info
    }

    pub fn total_len(&self) -> usize {
        self.raw.len()
    }

    pub fn blocks(&self) -> &[BlockRef<'a>] {
        &self.blocks
    }

    pub fn main_data(&self) -> &'a [u8] {
        self.main
    }

    /// The record's bytes (`total_len` of them).
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }
}

/// Length of a compressed block reference at `p` in a builder's (trusted) block area.
fn compressed_block_len(src: &[u8], p: usize) -> usize {
    let flags = src[p + 9];
    let mut q = p + 11;
    if flags & BLOCK_HAS_IMAGE != 0 {
        q += 8 + u16_at(src, q + 6) as usize;
    }
    if flags & BLOCK_HAS_DATA != 0 {
        q += 8 + u32_at(src, q) as usize;
    }
    q - p
}

fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(b[off..off + 2].try_into().expect("2 bytes"))
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

/// Decodes a record, verifying its length, its CRC and its structure. `bytes` may carry
/// padding after `total_len`. Anything malformed is an error (XX001, data corrupted).
pub fn decode(bytes: &[u8]) -> Result<DecodedRecord<'_>> {
    let rec = check_len(bytes)?;
    let stored = u32_at(rec, OFF_CRC);
    let actual = record_crc(rec);
    if stored != actual {
        return Err(corrupt(rec, format!("incorrect checksum (stored {stored:08X}, computed {actual:08X})")));
    }
    parse(rec)
}

fn check_len(bytes: &[u8]) -> Result<&[u8]> {
    if bytes.len() < MIN_RECORD_LEN {
        return Err(PgError::new(
            sqlstate::DATA_CORRUPTED,
            format!("invalid WAL record: {} bytes, expected at least {MIN_RECORD_LEN}", bytes.len()),
        ));
    }
    let len = u32_at(bytes, OFF_TOTAL_LEN) as usize;
    if !(MIN_RECORD_LEN..=MAX_RECORD_LEN).contains(&len) || len > bytes.len() {
        return Err(PgError::new(sqlstate::DATA_CORRUPTED, format!("invalid WAL record length {len} in {} bytes", bytes.len())));
    }
    Ok(&bytes[..len])
}

fn corrupt(rec: &[u8], what: String) -> PgError {
    PgError::new(sqlstate::DATA_CORRUPTED, format!("invalid WAL record at {}: {what}", lsn_str(u64_at(rec, OFF_LSN))))
}

/// Decodes the structure of a record whose length and CRC were already checked (the reader's
/// path; [`decode`] is the checking entry point).
pub(super) fn parse(rec: &[u8]) -> Result<DecodedRecord<'_>> {
    let rec = check_len(rec)?;
    if rec[OFF_NBLOCKS + 1..HEADER_LEN].iter().any(|&b| b != 0) {
        return Err(corrupt(rec, "reserved header bytes are not zero".into()));
    }
    let nblocks = rec[OFF_NBLOCKS] as usize;
    let mut blocks = Vec::with_capacity(nblocks);
    let mut p = HEADER_LEN;
    let short = |what: &str| corrupt(rec, format!("{what} runs past the record's end"));
    for i in 0..nblocks {
        if p + 10 > rec.len() {
            return Err(short(&format!("block reference {i}")));
        }
        let rel = u32_at(rec, p);
        let fork = rec[p + 4];
        let block = u32_at(rec, p + 5);
        let flags = rec[p + 9];
        p += 10;
        if flags & !BLOCK_FLAGS_ALL != 0 {
            return Err(corrupt(rec, format!("block reference {i} has unknown flags {flags:#04x}")));
        }
        let method = if flags & BLOCK_COMPRESSED != 0 {
            if p + 1 > rec.len() {
                return Err(short(&format!("compression method of block reference {i}")));
            }
            p += 1;
            Some(rec[p - 1])
        } else {
            None
        };
        let mut image = None;
        if flags & BLOCK_HAS_IMAGE != 0 {
            if p + 6 > rec.len() {
                return Err(short(&format!("image header of block reference {i}")));
            }
            let hole_offset = u16_at(rec, p);
            let hole_length = u16_at(rec, p + 2);
            let page_len = u16_at(rec, p + 4) as usize;
            p += 6;
            let hole_end = hole_offset as usize + hole_length as usize;
            if page_len == 0 || page_len > MAX_PAGE_LEN || hole_end > page_len {
                return Err(corrupt(rec, format!("block reference {i}: hole {hole_offset}+{hole_length} in a page of {page_len} bytes")));
            }
            let n = page_len - hole_length as usize;
            let bytes = match method {
                None => {
                    if p + n > rec.len() {
                        return Err(short(&format!("image of block reference {i}")));
                    }
                    p += n;
                    std::borrow::Cow::Borrowed(&rec[p - n..p])
                }
                Some(m) => {
                    if p + 2 > rec.len() {
                        return Err(short(&format!("compressed image length of block reference {i}")));
                    }
                    let stored = u16_at(rec, p) as usize;
                    p += 2;
                    if p + stored > rec.len() {
                        return Err(short(&format!("compressed image of block reference {i}")));
                    }
                    p += stored;
                    if stored == n {
                        std::borrow::Cow::Borrowed(&rec[p - n..p])
                    } else {
                        let out = decompress(m, &rec[p - stored..p], n)
                            .map_err(|why| corrupt(rec, format!("block reference {i}: image does not decompress: {why}")))?;
                        std::borrow::Cow::Owned(out)
                    }
                }
            };
            image = Some(PageImage { hole_offset, hole_length, page_len, bytes });
        }
        let mut data = std::borrow::Cow::Borrowed(&[][..]);
        if flags & BLOCK_HAS_DATA != 0 {
            let head = if method.is_some() { 8 } else { 4 };
            if p + head > rec.len() {
                return Err(short(&format!("data length of block reference {i}")));
            }
            let n = u32_at(rec, p) as usize;
            p += head;
            if n == 0 || n > rec.len() - p {
                return Err(corrupt(rec, format!("block reference {i}: data length {n} with {} bytes left", rec.len() - p)));
            }
            p += n;
            data = match method {
                None => std::borrow::Cow::Borrowed(&rec[p - n..p]),
                Some(m) => {
                    let raw = u32_at(rec, p - n - 4) as usize;
                    if raw == 0 || raw > MAX_RECORD_LEN || raw < n {
                        return Err(corrupt(rec, format!("block reference {i}: decompressed data length {raw}")));
                    }
                    if raw == n {
                        std::borrow::Cow::Borrowed(&rec[p - n..p])
                    } else {
                        let out = decompress(m, &rec[p - n..p], raw)
                            .map_err(|why| corrupt(rec, format!("block reference {i}: data does not decompress: {why}")))?;
                        std::borrow::Cow::Owned(out)
                    }
                }
            };
        }
        blocks.push(BlockRef { rel, fork, block, flags, image, data });
    }
    if p + 4 > rec.len() {
        return Err(short("main data length"));
    }
    let main_len = u32_at(rec, p) as usize;
    p += 4;
    if main_len != rec.len() - p {
        return Err(corrupt(rec, format!("main data length {main_len} but {} bytes left", rec.len() - p)));
    }
    Ok(DecodedRecord {
        raw: rec,
        lsn: u64_at(rec, OFF_LSN),
        xid: u64_at(rec, OFF_XID),
        rmgr: rec[OFF_RMGR],
        info: rec[OFF_INFO],
        blocks,
        main: &rec[p..],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: deterministic, good enough for test contents.
    use crate::rng::Rng;

    fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
        (0..n).map(|_| rng.next_u64() as u8).collect()
    }

    #[test]
    fn round_trip_with_and_without_images() {
        let mut page = vec![0u8; 8192];
        for (i, b) in page.iter_mut().enumerate() {
            *b = (i * 7 % 251) as u8 + 1;
        }
        let mut b = RecordBuilder::new();
        b.begin(3, 0x10, 99)
            .add_block(1, 0, 10, Some((&page, 100, 4000)), b"d1", false)
            .add_block(2, 1, 11, None, b"", true)
            .add_block(3, 2, 12, Some((&page, 0, 0)), b"", false)
            .set_main(b"hello");
        let bytes = b.stamp(4096).to_vec();
        assert_eq!(bytes.len() as u64 % RECORD_ALIGN, 0);
        let d = decode(&bytes).unwrap();
        assert_eq!((d.lsn(), d.xid(), d.rmgr(), d.info()), (4096, 99, 3, 0x10));
        assert_eq!(d.end_lsn(), 4096 + bytes.len() as u64);
        assert_eq!(d.blocks().len(), 3);
        let b0 = &d.blocks()[0];
        assert_eq!((b0.rel, b0.fork, b0.block, b0.data()), (1, 0, 10, &b"d1"[..]));
        let restored = b0.image().unwrap().to_page();
        assert_eq!(&restored[..100], &page[..100]);
        assert!(restored[100..4100].iter().all(|&x| x == 0));
        assert_eq!(&restored[4100..], &page[4100..]);
        let b1 = &d.blocks()[1];
        assert!(b1.will_init() && !b1.has_data() && b1.image().is_none());
        assert_eq!(d.blocks()[2].image().unwrap().to_page(), page);
        assert_eq!(d.main_data(), b"hello");
    }

    #[test]
    fn builder_can_be_changed_after_finish() {
        let mut b = RecordBuilder::new();
        b.begin(1, 2, 3).set_main(b"x");
        let n1 = b.finish().len();
        b.add_block(5, 0, 6, None, b"abc", false);
        let bytes = b.stamp(0).to_vec();
        assert!(bytes.len() > n1);
        let d = decode(&bytes).unwrap();
        assert_eq!(d.blocks().len(), 1);
        assert_eq!(d.main_data(), b"x");
    }

    #[test]
    fn random_round_trips_and_corruption_is_rejected() {
        let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
        let mut b = RecordBuilder::new();
        let mut compressed = 0;
        for iter in 0..600 {
            let rmgr = rng.below(256) as u8;
            let info = rng.below(256) as u8;
            let xid = rng.next_u64();
            b.begin(rmgr, info, xid);
            let nblocks = rng.below(5) as usize;
            let mut expect = Vec::new();
            for _ in 0..nblocks {
                let page_len = [512usize, 4096, 8192, 32768][rng.below(4) as usize];
                // Half the pages compressible (a short pattern repeated), as table pages are.
                let page = if rng.below(2) == 0 {
                    random_bytes(&mut rng, page_len)
                } else {
                    let plen = 1 + rng.below(40) as usize;
                    let pat = random_bytes(&mut rng, plen);
                    pat.iter().copied().cycle().take(page_len).collect()
                };
                let image = if rng.below(2) == 0 {
                    let off = rng.below(page_len as u64 + 1) as usize;
                    let len = rng.below((page_len - off) as u64 + 1) as usize;
                    Some((off as u16, len as u16))
                } else {
                    None
                };
                let n = rng.below(300) as usize;
                let data = random_bytes(&mut rng, n);
                let (rel, fork, block, init) = (rng.next_u64() as u32, rng.below(4) as u8, rng.next_u64() as u32, rng.below(2) == 1);
                b.add_block(rel, fork, block, image.map(|(o, l)| (&page[..], o, l)), &data, init);
                expect.push((rel, fork, block, init, data, image.map(|(o, l)| (page.clone(), o, l))));
            }
            let n = rng.below(2000) as usize;
            let main = random_bytes(&mut rng, n);
            b.set_main(&main);
            let method = [WalCompression::Off, WalCompression::Lz4, WalCompression::Zstd][rng.below(3) as usize];
            b.compress_blocks(method);
            let lsn = rng.next_u64() & !7;
            let bytes = b.stamp(lsn).to_vec();
            let d = decode(&bytes).unwrap_or_else(|e| panic!("iteration {iter}: {e}"));
            compressed += d.blocks().iter().filter(|b| b.compressed()).count();
            assert!(method != WalCompression::Off || d.blocks().iter().all(|b| !b.compressed()));
            assert_eq!((d.lsn(), d.xid(), d.rmgr(), d.info(), d.main_data()), (lsn, xid, rmgr, info, &main[..]));
            assert_eq!(d.blocks().len(), expect.len());
            for (got, (rel, fork, block, init, data, image)) in d.blocks().iter().zip(&expect) {
                assert_eq!((got.rel, got.fork, got.block, got.will_init(), got.data()), (*rel, *fork, *block, *init, &data[..]));
                match (got.image(), image) {
                    (None, None) => {}
                    (Some(img), Some((page, off, len))) => {
                        let mut want = page.clone();
                        want[*off as usize..(*off + *len) as usize].fill(0);
                        assert_eq!(img.to_page(), want);
                    }
                    other => panic!("image mismatch: {other:?}"),
                }
            }
            // Any single flipped bit in the record is caught (by the CRC or the length check).
            let len = d.total_len();
            let mut bad = bytes.clone();
            let byte = rng.below(len as u64) as usize;
            bad[byte] ^= 1 << rng.below(8);
            assert!(decode(&bad).is_err(), "iteration {iter}: flipped byte {byte} accepted");
            // Truncation is caught.
            assert!(decode(&bytes[..rng.below(len as u64) as usize]).is_err());
        }
        assert!(compressed > 100, "compressible blocks were compressed ({compressed})");
    }

    #[test]
    fn compressed_blocks_are_smaller_and_garbage_does_not_decompress() {
        let page: Vec<u8> = b"repeat(random()::text, 5) ".iter().copied().cycle().take(8192).collect();
        for method in [WalCompression::Lz4, WalCompression::Zstd] {
            let mut b = RecordBuilder::new();
            b.begin(1, 0, 1).add_block(1, 0, 1, Some((&page, 0, 0)), &page[..4000], false).set_main(b"m");
            let plain = b.len();
            b.compress_blocks(method);
            b.compress_blocks(method); // a second call keeps what the first did
            let bytes = b.stamp(64).to_vec();
            assert!(bytes.len() < plain / 4, "{method:?}: {} of {plain} bytes", bytes.len());
            let d = decode(&bytes).unwrap();
            assert!(d.blocks()[0].compressed());
            assert_eq!(d.blocks()[0].image().unwrap().to_page(), page);
            assert_eq!(d.blocks()[0].data(), &page[..4000]);
            // The stored bytes garbled under a valid CRC: an error naming the block, no panic.
            let len = u32_at(&bytes, 0) as usize;
            let mut bad = bytes.clone();
            for x in &mut bad[HEADER_LEN + 19..len - 8] {
                *x = x.wrapping_mul(31).wrapping_add(7);
            }
            let crc = record_crc(&bad[..len]);
            bad[OFF_CRC..OFF_CRC + 4].copy_from_slice(&crc.to_le_bytes());
            let e = decode(&bad).unwrap_err();
            assert_eq!(e.code, sqlstate::DATA_CORRUPTED, "{e}");
        }
        // Incompressible blocks are stored as they are.
        let mut rng = Rng::new(5);
        let noise = random_bytes(&mut rng, 8192);
        let mut b = RecordBuilder::new();
        b.begin(1, 0, 1).add_block(1, 0, 1, Some((&noise, 0, 0)), b"", false);
        b.compress_blocks(WalCompression::Lz4);
        assert!(!decode(b.stamp(64)).unwrap().blocks()[0].compressed());
    }

    #[test]
    fn structurally_bad_records_with_valid_crc_are_rejected() {
        let mut b = RecordBuilder::new();
        b.begin(1, 0, 1).add_block(1, 0, 1, None, b"abc", false).set_main(b"m");
        let good = b.stamp(64).to_vec();
        let len = u32_at(&good, 0) as usize;
        let fix_crc = |r: &mut Vec<u8>| {
            let c = record_crc(&r[..len]);
            r[OFF_CRC..OFF_CRC + 4].copy_from_slice(&c.to_le_bytes());
        };
        // nblocks says 2 but only one is there
        let mut r = good.clone();
        r[OFF_NBLOCKS] = 2;
        fix_crc(&mut r);
        assert!(decode(&r).is_err());
        // unknown block flag
        let mut r = good.clone();
        r[HEADER_LEN + 9] |= 0x80;
        fix_crc(&mut r);
        assert!(decode(&r).unwrap_err().message.contains("unknown flags"));
        // reserved byte set
        let mut r = good.clone();
        r[30] = 1;
        fix_crc(&mut r);
        assert!(decode(&r).is_err());
        // total_len too small
        let mut r = good.clone();
        r[0..4].copy_from_slice(&4u32.to_le_bytes());
        assert!(decode(&r).is_err());
        assert_eq!(decode(&good).unwrap().main_data(), b"m");
    }
}
