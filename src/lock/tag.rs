//! What a heavyweight lock is taken on ([`LockTag`]), how PostgreSQL names it in messages, and
//! the hashing the lock manager uses for tags (partition choice, strong-lock counters,
//! fast-path groups and its hash maps).

use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// The object a heavyweight lock protects (PostgreSQL's `LOCKTAG`, without the database:
/// heapstore has one database per data directory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockTag {
    /// A whole relation (table or index) by OID. Only these use the fast path.
    Relation(u32),
    /// A transaction id: its owner holds ExclusiveLock for its lifetime, so that others can
    /// wait for it to end by asking for ShareLock (PostgreSQL's `XactLockTableWait`).
    Transaction(u64),
    /// Any other object, by catalog class and id (PostgreSQL's `LOCKTAG_OBJECT`).
    Object { class: u32, id: u64 },
    /// An advisory lock (`pg_advisory_lock` ...): a bigint key, or two integer keys in one
    /// (`pair`: the first in the high half), which are different locks, as in PostgreSQL.
    Advisory { key: u64, pair: bool },
}

impl LockTag {
    /// The relation OID, for relation locks.
    pub fn relation(self) -> Option<u32> {
        match self {
            LockTag::Relation(oid) => Some(oid),
            _ => None,
        }
    }

    /// A well-mixed 64-bit hash of the tag, stable within a process run.
    pub(crate) fn hash_code(self) -> u64 {
        let (kind, a, b) = match self {
            LockTag::Relation(oid) => (1u64, u64::from(oid), 0),
            LockTag::Transaction(xid) => (2, xid, 0),
            LockTag::Object { class, id } => (3, u64::from(class), id),
            LockTag::Advisory { key, pair } => (4 + u64::from(pair), key, 0),
        };
        mix64(mix64((kind << 56) ^ a) ^ b)
    }
}

/// As PostgreSQL's `DescribeLockTag` words it (less "of database N").
impl fmt::Display for LockTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LockTag::Relation(oid) => write!(f, "relation {oid}"),
            LockTag::Transaction(xid) => write!(f, "transaction {xid}"),
            LockTag::Object { class, id } => write!(f, "object {id} of class {class}"),
            LockTag::Advisory { key, pair } => write!(f, "advisory lock [{},{},{}]", key >> 32, key & 0xffff_ffff, 1 + u8::from(pair)),
        }
    }
}

/// splitmix64's finalizer: a cheap bijective mixer with good avalanche.
pub(crate) fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A small, fast hasher for lock-manager keys (tags, modes, session ids): no DoS resistance is
/// needed, keys are chosen by the engine, not by clients.
#[derive(Default, Clone, Copy)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_isize(&mut self, n: isize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        mix64(self.0)
    }
}

/// `BuildHasher` for the lock manager's hash maps.
pub(crate) type KeyBuild = BuildHasherDefault<KeyHasher>;

/// Hash of any key with [`KeyHasher`].
#[cfg(test)]
pub(crate) fn key_hash(key: &impl Hash) -> u64 {
    let mut h = KeyHasher::default();
    key.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_as_postgres_describes_tags() {
        assert_eq!(LockTag::Relation(16385).to_string(), "relation 16385");
        assert_eq!(LockTag::Transaction(742).to_string(), "transaction 742");
        assert_eq!(LockTag::Object { class: 1259, id: 7 }.to_string(), "object 7 of class 1259");
    }

    #[test]
    fn hashes_spread_and_distinguish_kinds() {
        assert_ne!(LockTag::Relation(5).hash_code(), LockTag::Transaction(5).hash_code());
        assert_ne!(LockTag::Object { class: 5, id: 0 }.hash_code(), LockTag::Relation(5).hash_code());
        let mut buckets = [0u32; 16];
        for oid in 16384..16384 + 1600 {
            buckets[(LockTag::Relation(oid).hash_code() % 16) as usize] += 1;
        }
        assert!(buckets.iter().all(|&n| (60..=140).contains(&n)), "{buckets:?}");
        assert_ne!(key_hash(&(LockTag::Relation(1), 1u8)), key_hash(&(LockTag::Relation(1), 2u8)));
    }
}
