//! PostgreSQL's eight table-level lock modes, their conflict table, and sets of modes.
//!
//! The table is PostgreSQL's `LockConflicts` (lock.c), the same as the documentation's
//! "Conflicting Lock Modes" table. Modes are numbered 1..=8 as in PostgreSQL, so a mode's
//! bit in a [`LockMask`] is `1 << mode` (PostgreSQL's `LOCKBIT_ON`).
//!
//! Invariants:
//! 1. The conflict relation is symmetric: `a.conflicts_with(b) == b.conflicts_with(a)`.
//! 2. The weak modes ([`LockMode::is_weak`]) conflict with no weak mode, so while nobody holds
//!    or awaits a strong mode ([`LockMode::is_strong`]) on a relation, weak locks on it need no
//!    shared bookkeeping (the fast path).

use std::fmt;

/// A heavyweight lock mode, numbered as in PostgreSQL's lockdefs.h.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum LockMode {
    AccessShare = 1,
    RowShare = 2,
    RowExclusive = 3,
    ShareUpdateExclusive = 4,
    Share = 5,
    ShareRowExclusive = 6,
    Exclusive = 7,
    AccessExclusive = 8,
}

/// Number of lock modes.
pub const NUM_MODES: usize = 8;

impl LockMode {
    /// All modes, weakest first.
    pub const ALL: [LockMode; NUM_MODES] = [
        LockMode::AccessShare,
        LockMode::RowShare,
        LockMode::RowExclusive,
        LockMode::ShareUpdateExclusive,
        LockMode::Share,
        LockMode::ShareRowExclusive,
        LockMode::Exclusive,
        LockMode::AccessExclusive,
    ];

    /// The name PostgreSQL prints, e.g. `"AccessExclusiveLock"`.
    pub fn name(self) -> &'static str {
        match self {
            LockMode::AccessShare => "AccessShareLock",
            LockMode::RowShare => "RowShareLock",
            LockMode::RowExclusive => "RowExclusiveLock",
            LockMode::ShareUpdateExclusive => "ShareUpdateExclusiveLock",
            LockMode::Share => "ShareLock",
            LockMode::ShareRowExclusive => "ShareRowExclusiveLock",
            LockMode::Exclusive => "ExclusiveLock",
            LockMode::AccessExclusive => "AccessExclusiveLock",
        }
    }

    /// Zero-based index, for per-mode arrays.
    pub fn index(self) -> usize {
        self as usize - 1
    }

    /// This mode as a one-element set.
    pub fn bit(self) -> LockMask {
        LockMask(1 << self as u16)
    }

    /// The set of modes this mode conflicts with (PostgreSQL's `LockConflicts[mode]`).
    pub fn conflicts(self) -> LockMask {
        use LockMode::*;
        let set = |modes: &[LockMode]| modes.iter().fold(LockMask::EMPTY, |m, &x| m.with(x));
        match self {
            AccessShare => set(&[AccessExclusive]),
            RowShare => set(&[Exclusive, AccessExclusive]),
            RowExclusive => set(&[Share, ShareRowExclusive, Exclusive, AccessExclusive]),
            ShareUpdateExclusive => set(&[ShareUpdateExclusive, Share, ShareRowExclusive, Exclusive, AccessExclusive]),
            Share => set(&[RowExclusive, ShareUpdateExclusive, ShareRowExclusive, Exclusive, AccessExclusive]),
            ShareRowExclusive => set(&[RowExclusive, ShareUpdateExclusive, Share, ShareRowExclusive, Exclusive, AccessExclusive]),
            Exclusive => set(&[RowShare, RowExclusive, ShareUpdateExclusive, Share, ShareRowExclusive, Exclusive, AccessExclusive]),
            AccessExclusive => LockMask::ALL,
        }
    }

    /// Whether a holder of `self` and a holder of `other` (two sessions) conflict.
    pub fn conflicts_with(self, other: LockMode) -> bool {
        self.conflicts().contains(other)
    }

    /// The modes eligible for the relation fast path: AccessShare, RowShare, RowExclusive
    /// (PostgreSQL's `EligibleForRelationFastPath`: below ShareUpdateExclusive).
    pub fn is_weak(self) -> bool {
        self < LockMode::ShareUpdateExclusive
    }

    /// The modes that conflict with some weak mode (Share and above, PostgreSQL's
    /// `ConflictsWithRelationFastPath`): taking one moves everyone's fast-path locks on the
    /// relation into the shared table first.
    pub fn is_strong(self) -> bool {
        self.conflicts().intersects(LockMask::WEAK)
    }
}

impl fmt::Display for LockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of lock modes, one bit per mode (bit `1 << mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LockMask(u16);

impl LockMask {
    pub const EMPTY: LockMask = LockMask(0);
    /// Every mode.
    pub const ALL: LockMask = LockMask(0x1fe);
    /// The fast-path-eligible modes.
    pub const WEAK: LockMask = LockMask((1 << 1) | (1 << 2) | (1 << 3));

    pub fn bits(self) -> u16 {
        self.0
    }

    pub fn from_bits(bits: u16) -> LockMask {
        LockMask(bits & Self::ALL.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn contains(self, mode: LockMode) -> bool {
        self.0 & mode.bit().0 != 0
    }

    pub fn intersects(self, other: LockMask) -> bool {
        self.0 & other.0 != 0
    }

    pub fn with(self, mode: LockMode) -> LockMask {
        LockMask(self.0 | mode.bit().0)
    }

    pub fn without(self, mode: LockMode) -> LockMask {
        LockMask(self.0 & !mode.bit().0)
    }

    pub fn insert(&mut self, mode: LockMode) {
        *self = self.with(mode);
    }

    pub fn remove(&mut self, mode: LockMode) {
        *self = self.without(mode);
    }

    /// The modes in the set, weakest first.
    pub fn iter(self) -> impl Iterator<Item = LockMode> {
        LockMode::ALL.into_iter().filter(move |m| self.contains(*m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PostgreSQL's documentation, "Table 13.2. Conflicting Lock Modes": rows are the requested
    /// mode, columns the existing mode, in the order of [`LockMode::ALL`]; 'X' is a conflict.
    const DOC_TABLE: [&str; 8] = [
        ".......X", // ACCESS SHARE
        "......XX", // ROW SHARE
        "....XXXX", // ROW EXCLUSIVE
        "...XXXXX", // SHARE UPDATE EXCLUSIVE
        "..XX.XXX", // SHARE
        "..XXXXXX", // SHARE ROW EXCLUSIVE
        ".XXXXXXX", // EXCLUSIVE
        "XXXXXXXX", // ACCESS EXCLUSIVE
    ];

    #[test]
    fn conflict_table_matches_postgres_for_all_64_pairs() {
        let mut checked = 0;
        for (i, req) in LockMode::ALL.into_iter().enumerate() {
            for (j, held) in LockMode::ALL.into_iter().enumerate() {
                let expected = DOC_TABLE[i].as_bytes()[j] == b'X';
                assert_eq!(req.conflicts_with(held), expected, "{req} vs {held}");
                assert_eq!(req.conflicts_with(held), held.conflicts_with(req), "symmetry {req} {held}");
                checked += 1;
            }
        }
        assert_eq!(checked, 64);
    }

    #[test]
    fn names_and_numbers_are_postgres() {
        assert_eq!(LockMode::AccessExclusive.to_string(), "AccessExclusiveLock");
        assert_eq!(LockMode::ShareUpdateExclusive.name(), "ShareUpdateExclusiveLock");
        assert_eq!(LockMode::AccessShare as u8, 1);
        assert_eq!(LockMode::AccessExclusive as u8, 8);
        for (i, m) in LockMode::ALL.into_iter().enumerate() {
            assert_eq!(m.index(), i);
        }
    }

    #[test]
    fn weak_and_strong_split_as_postgres_fast_path() {
        let weak: Vec<_> = LockMode::ALL.into_iter().filter(|m| m.is_weak()).collect();
        assert_eq!(weak, [LockMode::AccessShare, LockMode::RowShare, LockMode::RowExclusive]);
        let strong: Vec<_> = LockMode::ALL.into_iter().filter(|m| m.is_strong()).collect();
        assert_eq!(strong, [LockMode::Share, LockMode::ShareRowExclusive, LockMode::Exclusive, LockMode::AccessExclusive]);
        for a in weak.iter().copied() {
            assert!(!LockMode::ShareUpdateExclusive.conflicts_with(a));
            for b in weak.iter().copied() {
                assert!(!a.conflicts_with(b));
            }
        }
    }

    #[test]
    fn mask_operations() {
        let m = LockMask::EMPTY.with(LockMode::Share).with(LockMode::AccessShare);
        assert!(m.contains(LockMode::Share) && !m.contains(LockMode::RowShare));
        assert_eq!(m.iter().collect::<Vec<_>>(), [LockMode::AccessShare, LockMode::Share]);
        assert!(m.without(LockMode::Share).without(LockMode::AccessShare).is_empty());
        assert_eq!(LockMask::from_bits(0xffff), LockMask::ALL);
    }
}
