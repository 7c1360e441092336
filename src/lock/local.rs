//! The per-session local lock table ([`LocalLocks`]): one entry per (tag, mode) the session
//! holds, counting re-acquisitions, so that only the first take and the last release of a lock
//! touch shared state (PostgreSQL's `LOCALLOCK` hash).
//!
//! Layout (seed 003, David Rowley's "generichash"):
//!
//! ```text
//!  index: HashMap<(tag, mode) → slot>        slot = segment * 64 + offset
//!  segments: [ Some(seg 0) | Some(seg 1) | None | Some(seg 3) ... ]
//!  seg:      used: u64 bitmap  +  entries: [Option<LocalLock>; 64]
//!  nonempty: bitmap over segments (seg.used != 0)
//!  room:     bitmap over segments (allocated and seg.used != !0)
//! ```
//!
//! Invariants:
//! 1. An entry's slot never changes while the entry exists (segments are boxed and never
//!    moved or resized), so a slot id is a stable handle.
//! 2. `index` maps exactly the occupied entries; `seg.used` bit `i` is set iff `entries[i]` is
//!    `Some`; `nonempty` and `room` mirror every segment's `used` word as described above.
//! 3. A new entry takes the lowest free offset in the lowest segment with room (the `room`
//!    bitmap read as a free list, the inverse of `used`), so live entries stay packed at the
//!    front.
//! 4. `LocalLocks::drain` (release-all) visits only occupied entries, found through
//!    `nonempty` and each segment's `used`: its cost is O(entries held now) plus one bitmap word
//!    per 4,096 segments, whatever size the table once reached. The index is only probed,
//!    never scanned, and each entry leaves it by one O(1) removal, so its capacity costs
//!    release-all nothing. In the "old design" mode
//!    (`walk_whole_table`), it instead examines every slot of every segment ever allocated, as
//!    PostgreSQL's `hash_seq_search` over a bloated dynahash does, so a benchmark can show the
//!    difference; that mode also never frees segments.
//! 5. A segment other than segment 0 is freed as soon as it becomes empty, and `index` is
//!    replaced by a fresh map when the table empties with a large capacity: after a transaction
//!    that took 10,000 locks, memory returns to one segment at its end.

use std::collections::HashMap;

use super::mode::LockMode;
use super::tag::{KeyBuild, LockTag};

/// Entries per segment: one `u64` occupancy word.
pub const SEGMENT_SLOTS: usize = 64;

/// An emptied table whose index grew beyond this many buckets gets a fresh index.
const INDEX_RESET_CAPACITY: usize = 1024;

/// One lock held by the session: a (tag, mode) pair and how it was granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LocalLock {
    pub tag: LockTag,
    pub mode: LockMode,
    /// Takes not yet released; the entry exists only while it is positive.
    pub count: u32,
    /// How many of them are the session's, kept past its transaction's end (session-level
    /// advisory locks); never more than `count`.
    pub session: u32,
    /// Granted through the session's fast-path slots (it may since have been transferred to
    /// the shared table by a strong locker; release looks in the slots first).
    pub fast_path: bool,
    /// This take bumped the relation's strong-lock counter; the last release drops it.
    pub strong: bool,
}

/// A stable handle to an entry: `segment * SEGMENT_SLOTS + offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SlotId(u32);

impl SlotId {
    fn new(segment: usize, offset: usize) -> SlotId {
        let id = segment * SEGMENT_SLOTS + offset;
        SlotId(u32::try_from(id).expect("local lock table exceeds 2^32 entries"))
    }

    fn segment(self) -> usize {
        self.0 as usize / SEGMENT_SLOTS
    }

    fn offset(self) -> usize {
        self.0 as usize % SEGMENT_SLOTS
    }
}

struct Segment {
    used: u64,
    entries: [Option<LocalLock>; SEGMENT_SLOTS],
}

/// A growable bitmap, one bit per segment.
#[derive(Default)]
struct Bitmap(Vec<u64>);

impl Bitmap {
    fn set(&mut self, i: usize) {
        let w = i / 64;
        if self.0.len() <= w {
            self.0.resize(w + 1, 0);
        }
        self.0[w] |= 1 << (i % 64);
    }

    fn clear(&mut self, i: usize) {
        if let Some(word) = self.0.get_mut(i / 64) {
            *word &= !(1 << (i % 64));
        }
    }

    fn first_set(&self) -> Option<usize> {
        let (w, word) = self.0.iter().enumerate().find(|(_, word)| **word != 0)?;
        Some(w * 64 + word.trailing_zeros() as usize)
    }

    /// The first set bit in word `w`, re-read each call (callers mutate between calls).
    fn first_in_word(&self, w: usize) -> Option<usize> {
        let word = self.0.get(w).copied().unwrap_or(0);
        (word != 0).then(|| w * 64 + word.trailing_zeros() as usize)
    }

    fn words(&self) -> usize {
        self.0.len()
    }

    fn truncate(&mut self, bits: usize) {
        self.0.truncate(bits.div_ceil(64));
    }
}

/// A session's local lock table. See the module documentation for its layout and invariants.
pub struct LocalLocks {
    segments: Vec<Option<Box<Segment>>>,
    nonempty: Bitmap,
    room: Bitmap,
    index: HashMap<(LockTag, LockMode), SlotId, KeyBuild>,
    len: usize,
    walk_whole_table: bool,
    slots_visited: u64,
}

impl LocalLocks {
    /// An empty table; `walk_whole_table` selects the old release-all design (invariant 4).
    pub(crate) fn new(walk_whole_table: bool) -> LocalLocks {
        LocalLocks {
            segments: Vec::new(),
            nonempty: Bitmap::default(),
            room: Bitmap::default(),
            index: HashMap::default(),
            len: 0,
            walk_whole_table,
            slots_visited: 0,
        }
    }

    /// Number of (tag, mode) entries held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Segments currently allocated (each holds [`SEGMENT_SLOTS`] entries).
    pub fn segments_allocated(&self) -> usize {
        self.segments.iter().filter(|s| s.is_some()).count()
    }

    /// Slots examined by release-all walks so far (cumulative): the cost measure of
    /// invariant 4, countable instead of timed.
    pub fn slots_visited(&self) -> u64 {
        self.slots_visited
    }

    /// How many times the session holds `mode` on `tag` (0 if not held).
    pub fn count(&self, tag: LockTag, mode: LockMode) -> u32 {
        self.find(tag, mode).map_or(0, |slot| self.entry(slot).count)
    }

    /// Every held (tag, mode, takes), in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (LockTag, LockMode, u32)> + '_ {
        self.segments.iter().flatten().flat_map(|seg| seg.entries.iter().flatten()).map(|l| (l.tag, l.mode, l.count))
    }

    pub(crate) fn find(&self, tag: LockTag, mode: LockMode) -> Option<SlotId> {
        self.index.get(&(tag, mode)).copied()
    }

    pub(crate) fn entry(&self, slot: SlotId) -> &LocalLock {
        self.segments[slot.segment()].as_ref().and_then(|seg| seg.entries[slot.offset()].as_ref()).expect("local lock slot is occupied")
    }

    pub(crate) fn entry_mut(&mut self, slot: SlotId) -> &mut LocalLock {
        self.segments[slot.segment()].as_mut().and_then(|seg| seg.entries[slot.offset()].as_mut()).expect("local lock slot is occupied")
    }

    /// Adds an entry for a (tag, mode) not yet in the table; returns its stable slot.
    pub(crate) fn insert(&mut self, lock: LocalLock) -> SlotId {
        debug_assert!(self.find(lock.tag, lock.mode).is_none(), "duplicate local lock");
        let s = self.room.first_set().unwrap_or_else(|| self.new_segment());
        let seg = self.segments[s].as_mut().expect("segment with room is allocated");
        let offset = (!seg.used).trailing_zeros() as usize;
        seg.used |= 1 << offset;
        seg.entries[offset] = Some(lock);
        if seg.used == u64::MAX {
            self.room.clear(s);
        }
        self.nonempty.set(s);
        let slot = SlotId::new(s, offset);
        self.index.insert((lock.tag, lock.mode), slot);
        self.len += 1;
        slot
    }

    /// Removes the entry at `slot` and returns it.
    pub(crate) fn remove(&mut self, slot: SlotId) -> LocalLock {
        let s = slot.segment();
        let seg = self.segments[s].as_mut().expect("segment of a live slot is allocated");
        let lock = seg.entries[slot.offset()].take().expect("local lock slot is occupied");
        seg.used &= !(1 << slot.offset());
        let emptied = seg.used == 0;
        self.room.set(s);
        self.index.remove(&(lock.tag, lock.mode));
        self.len -= 1;
        if emptied {
            self.segment_emptied(s);
        }
        if self.len == 0 && !self.walk_whole_table && self.index.capacity() > INDEX_RESET_CAPACITY {
            self.index = HashMap::default();
        }
        lock
    }

    /// Removes every entry, handing each to `release` (transaction end). Cost: invariant 4.
    pub(crate) fn drain(&mut self, mut release: impl FnMut(LocalLock)) {
        if self.walk_whole_table {
            self.drain_whole_table(&mut release);
            return;
        }
        for w in 0..self.nonempty.words() {
            while let Some(s) = self.nonempty.first_in_word(w) {
                let mut used = self.segments[s].as_ref().map_or(0, |seg| seg.used);
                while used != 0 {
                    let offset = used.trailing_zeros() as usize;
                    used &= used - 1;
                    self.slots_visited += 1;
                    release(self.remove(SlotId::new(s, offset)));
                }
            }
        }
    }

    /// The old design: examine every slot of every segment ever allocated.
    fn drain_whole_table(&mut self, release: &mut impl FnMut(LocalLock)) {
        for s in 0..self.segments.len() {
            for offset in 0..SEGMENT_SLOTS {
                self.slots_visited += 1;
                let occupied = self.segments[s].as_ref().is_some_and(|seg| seg.used & (1 << offset) != 0);
                if occupied {
                    release(self.remove(SlotId::new(s, offset)));
                }
            }
        }
    }

    /// Allocates a segment in the lowest free position; returns its number.
    fn new_segment(&mut self) -> usize {
        let segment = Box::new(Segment { used: 0, entries: [None; SEGMENT_SLOTS] });
        let s = match self.segments.iter().position(Option::is_none) {
            Some(s) => {
                self.segments[s] = Some(segment);
                s
            }
            None => {
                self.segments.push(Some(segment));
                self.segments.len() - 1
            }
        };
        self.room.set(s);
        s
    }

    /// Keeps the bitmaps in step with an emptied segment and frees it (invariant 5).
    fn segment_emptied(&mut self, s: usize) {
        self.nonempty.clear(s);
        if self.walk_whole_table || s == 0 {
            return;
        }
        self.segments[s] = None;
        self.room.clear(s);
        while self.segments.last().is_some_and(Option::is_none) {
            self.segments.pop();
        }
        self.nonempty.truncate(self.segments.len());
        self.room.truncate(self.segments.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(id: u64, mode: LockMode) -> LocalLock {
        LocalLock { tag: LockTag::Object { class: 1, id }, mode, count: 1, session: 0, fast_path: false, strong: false }
    }

    fn fill(t: &mut LocalLocks, n: u64) -> Vec<SlotId> {
        (0..n).map(|i| t.insert(lock(i, LockMode::AccessShare))).collect()
    }

    #[test]
    fn insert_find_remove_keep_slots_stable() {
        let mut t = LocalLocks::new(false);
        let slots = fill(&mut t, 200);
        assert_eq!(t.len(), 200);
        assert_eq!(t.segments_allocated(), 4);
        for (i, slot) in slots.iter().enumerate() {
            assert_eq!(t.find(LockTag::Object { class: 1, id: i as u64 }, LockMode::AccessShare), Some(*slot));
        }
        t.entry_mut(slots[7]).count += 2;
        assert_eq!(t.count(LockTag::Object { class: 1, id: 7 }, LockMode::AccessShare), 3);
        assert_eq!(t.count(LockTag::Object { class: 1, id: 7 }, LockMode::Share), 0);
        // Removing frees the slot; the next insert reuses the lowest free one.
        let removed = t.remove(slots[5]);
        assert_eq!(removed.tag, LockTag::Object { class: 1, id: 5 });
        assert_eq!(t.insert(lock(999, LockMode::Share)), slots[5]);
        assert_eq!(t.entry(slots[150]).tag, LockTag::Object { class: 1, id: 150 });
    }

    #[test]
    fn emptied_segments_are_freed_but_segment_zero_stays() {
        let mut t = LocalLocks::new(false);
        let slots = fill(&mut t, 130);
        assert_eq!(t.segments_allocated(), 3);
        for slot in &slots[64..128] {
            t.remove(*slot);
        }
        assert_eq!(t.segments_allocated(), 2, "middle segment freed");
        // Segment 2 has room for 62 more; the entry after them reuses the hole at segment 1.
        for i in 0..62 {
            assert_eq!(t.insert(lock(1000 + i, LockMode::Share)).segment(), 2);
        }
        assert_eq!(t.insert(lock(2000, LockMode::Share)).segment(), 1);
        t.drain(|_| {});
        assert_eq!(t.segments_allocated(), 1);
        assert!(t.is_empty() && t.iter().next().is_none());
    }

    #[test]
    fn drain_cost_depends_on_entries_held_now_not_on_the_past() {
        let mut t = LocalLocks::new(false);
        fill(&mut t, 10_000);
        let mut released = 0;
        t.drain(|_| released += 1);
        assert_eq!(released, 10_000);
        assert_eq!(t.slots_visited(), 10_000);
        assert_eq!(t.segments_allocated(), 1);
        fill(&mut t, 1);
        let before = t.slots_visited();
        t.drain(|_| {});
        assert_eq!(t.slots_visited() - before, 1);
    }

    #[test]
    fn old_design_walks_every_slot_ever_allocated() {
        let mut t = LocalLocks::new(true);
        fill(&mut t, 10_000);
        t.drain(|_| {});
        fill(&mut t, 1);
        let before = t.slots_visited();
        let mut released = 0;
        t.drain(|_| released += 1);
        assert_eq!(released, 1);
        assert_eq!(t.slots_visited() - before, 10_000u64.div_ceil(64) * 64);
    }
}
