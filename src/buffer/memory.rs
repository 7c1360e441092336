//! Page-aligned memory: the pool's one big region (with huge pages when asked) and small
//! aligned scratch buffers for I/O.
//!
//! Invariants:
//! 1. Every region starts on a 4096-byte boundary (O_DIRECT needs it), so block `i` of the
//!    pool starts at `base + i * block_size`, which is aligned for every legal block size.
//! 2. A region is allocated once and never moves until dropped.

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// How huge pages were obtained for the pool (`huge_pages` setting).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HugePages {
    /// MAP_HUGETLB succeeded.
    Explicit,
    /// Normal pages with `madvise(MADV_HUGEPAGE)` (transparent huge pages).
    Transparent,
    /// Normal pages.
    Off,
}

/// An anonymous mmap'd region, zero-filled, page aligned.
pub struct Region {
    ptr: NonNull<u8>,
    len: usize,
    pub huge: HugePages,
}

// SAFETY: the region is plain memory owned by this value; concurrent access to its bytes is
// coordinated by the buffer pool's content locks, not by `Region` itself.
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

impl Region {
    /// Maps `len` bytes. `huge_pages`: "on" fails if MAP_HUGETLB fails, "try" falls back to
    /// transparent huge pages, "off" uses normal pages.
    pub fn map(len: usize, huge_pages: &str) -> std::io::Result<Region> {
        assert!(len > 0);
        const HUGE: usize = 2 << 20;
        if huge_pages != "off" {
            let hlen = len.div_ceil(HUGE) * HUGE;
            // SAFETY: anonymous private mapping with no address hint; the result is checked.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    hlen,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                return Ok(Region { ptr: NonNull::new(p as *mut u8).expect("mmap returned null"), len: hlen, huge: HugePages::Explicit });
            }
            if huge_pages == "on" {
                return Err(std::io::Error::other(format!(
                    "could not map anonymous shared memory with huge pages: {}",
                    std::io::Error::last_os_error()
                )));
            }
        }
        // SAFETY: as above.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let mut huge = HugePages::Off;
        if huge_pages == "try" {
            // SAFETY: advising our own fresh mapping; failure is harmless.
            if unsafe { libc::madvise(p, len, libc::MADV_HUGEPAGE) } == 0 {
                huge = HugePages::Transparent;
            }
        }
        Ok(Region { ptr: NonNull::new(p as *mut u8).expect("mmap returned null"), len, huge })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `map` mapped; no references outlive `self`.
        unsafe {
            libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.len);
        }
    }
}

/// A small heap buffer aligned to 4096 bytes, for I/O scratch space.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: owns its memory exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only reads.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    pub fn zeroed(len: usize) -> AlignedBuf {
        assert!(len > 0);
        let layout = std::alloc::Layout::from_size_align(len, 4096).expect("layout");
        // SAFETY: layout has non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        AlignedBuf { ptr: NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(layout)), len }
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len, 4096).expect("layout");
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_is_aligned_and_zeroed() {
        let r = Region::map(1 << 20, "try").unwrap();
        assert_eq!(r.as_ptr() as usize % 4096, 0);
        // SAFETY: reading inside the mapping.
        assert!(unsafe { std::slice::from_raw_parts(r.as_ptr(), r.len()) }.iter().all(|&b| b == 0));
        let b = AlignedBuf::zeroed(8192);
        assert_eq!(b.as_ptr() as usize % 4096, 0);
    }
}
