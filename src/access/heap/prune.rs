//! HOT chains and pruning: updates that leave every indexed column alone stay on their page and
//! add no index entry, and a page's dead versions are removed under its exclusive lock when an
//! update needs the room and a version on the page may have died ([`worth_pruning`]), when a
//! scan meets a dead version, or by VACUUM (PostgreSQL's heap-only tuples and pruneheap.c).
//!
//! ```text
//!  index entry ──► lp 1 (root)          after pruning:   lp 1 REDIRECT ──► lp 3
//!                  xmax=A HOT_UPDATED                     lp 2 UNUSED (reusable at once)
//!                   │ ctid                                lp 3 xmin=B (live)
//!                   ▼
//!                  lp 2 (heap-only) xmin=A xmax=B HOT_UPDATED
//!                   │ ctid
//!                   ▼
//!                  lp 3 (heap-only) xmin=B (live)
//! ```
//!
//! Invariants:
//! 1. An update is HOT only when the new version goes on the old version's page and no column
//!    of any index changed (stored bytes compared); then the old version gets HEAP_HOT_UPDATED
//!    and the new one HEAP_ONLY_TUPLE, in the same record, and no index entry is added. Every
//!    index entry names a chain's *root*: a tuple that is not heap-only, or a redirect.
//! 2. A chain is followed from a member to the next only while the member is HOT_UPDATED, its
//!    ctid stays on the page, the next line pointer is a normal heap-only tuple and that
//!    tuple's xmin equals the member's xmax; so a reused line pointer is never taken for a
//!    chain member, and a chain never leaves its page.
//! 3. Members die in chain order: if a member is dead to everyone (`vacuum::is_dead`: its
//!    creator aborted, or its deleter committed below the horizon), so is every member before
//!    it, because each member's deleter is the next one's creator and an update waits for the
//!    version's creator to end. Pruning walks a chain only while its members are dead or
//!    deleted by a committed transaction (a member updated by an aborted transaction is live,
//!    and the aborted new version after it is judged alone), and removes the walked prefix up
//!    to its *last* dead member: the root becomes a redirect to the first member left, or LP_DEAD when none is
//!    left; removed heap-only members become LP_UNUSED at once (no index entry names them); an
//!    ordinary dead version becomes LP_DEAD (its storage is freed; VACUUM removes its index
//!    entries and only then makes it unused). A heap-only tuple that no chain reaches and that
//!    is dead (an aborted update's new version) becomes unused too.
//! 4. Pruning runs under the page's exclusive content lock, is decided first ([`prune_ops`]),
//!    then applied and WAL-logged as one HEAP_PRUNE record in the critical section through the
//!    same [`super::dml::apply_ops`] that redo runs; the compaction it ends with depends only on
//!    the page, so redo rebuilds the same page.
//! 5. An unused line pointer may be reused by an insert. A snapshot scan that took the TID from
//!    an index before VACUUM removed the entry cannot see the new tuple (it was inserted after
//!    the scan's snapshot); unique checks hold the index leaf's lock, which VACUUM needs to
//!    remove the entry; update chains check xmin against the previous xmax (invariant 2).

use super::dml::{xid_state, XidState};
use super::tuple;
use super::vacuum::is_dead;
use crate::storage::page::{self, OffsetNumber};
use crate::storage::BlockNumber;
use crate::txn::{TxnManager, Xid, INVALID_XID};

/// Redo operation code of a prune in a heap record's block data (see `dml` module doc).
pub(crate) const OP_PRUNE: u8 = 4;

/// What pruning one page does to its line pointers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PruneOps {
    /// Roots redirected to the first member still needed: (root, target).
    pub redirect: Vec<(OffsetNumber, OffsetNumber)>,
    /// Line pointers made LP_DEAD (index entries may still name them).
    pub dead: Vec<OffsetNumber>,
    /// Heap-only tuples' line pointers made unused.
    pub unused: Vec<OffsetNumber>,
}

impl PruneOps {
    pub fn is_empty(&self) -> bool {
        self.redirect.is_empty() && self.dead.is_empty() && self.unused.is_empty()
    }

    /// Versions whose storage this prune frees.
    pub fn versions_removed(&self) -> usize {
        self.dead.len() + self.unused.len()
    }

    /// Appends the operation: `4, n u16, (from u16, to u16)*n, n u16, off u16*n, n u16, off*n`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(OP_PRUNE);
        out.extend_from_slice(&(self.redirect.len() as u16).to_le_bytes());
        for (a, b) in &self.redirect {
            out.extend_from_slice(&a.to_le_bytes());
            out.extend_from_slice(&b.to_le_bytes());
        }
        for list in [&self.dead, &self.unused] {
            out.extend_from_slice(&(list.len() as u16).to_le_bytes());
            for o in list {
                out.extend_from_slice(&o.to_le_bytes());
            }
        }
    }

    /// Reads an operation encoded by [`PruneOps::encode`] (after its code); returns the rest.
    pub fn decode(mut b: &[u8]) -> std::result::Result<(PruneOps, &[u8]), &'static str> {
        let u16_at = |b: &mut &[u8]| -> std::result::Result<u16, &'static str> {
            let v = b.get(..2).ok_or("truncated prune operation")?;
            let v = u16::from_le_bytes([v[0], v[1]]);
            *b = &b[2..];
            Ok(v)
        };
        let mut ops = PruneOps::default();
        let n = u16_at(&mut b)?;
        for _ in 0..n {
            let from = u16_at(&mut b)?;
            let to = u16_at(&mut b)?;
            ops.redirect.push((from, to));
        }
        for i in 0..2 {
            let n = u16_at(&mut b)?;
            for _ in 0..n {
                let o = u16_at(&mut b)?;
                if i == 0 { &mut ops.dead } else { &mut ops.unused }.push(o);
            }
        }
        Ok((ops, b))
    }

    /// Applies the operation to a page (do and redo alike: invariant 4). Every offset is
    /// checked before anything changes, so a bad operation leaves the page as it was.
    pub fn apply(&self, pg: &mut [u8]) -> std::result::Result<(), &'static str> {
        let max = page::max_offset(pg);
        let ok = |o: OffsetNumber| o >= 1 && o <= max;
        if !self.redirect.iter().all(|&(from, to)| ok(from) && ok(to)) {
            return Err("prune redirect outside the line pointer array");
        }
        if !self.dead.iter().chain(&self.unused).all(|&o| ok(o)) {
            return Err("prune of a missing line pointer");
        }
        for &(from, to) in &self.redirect {
            page::set_item_id(pg, from, page::LP_REDIRECT, to as usize, 0);
        }
        for &o in &self.dead {
            page::set_item_id(pg, o, page::LP_DEAD, 0, 0);
        }
        for &o in &self.unused {
            page::set_item_id(pg, o, page::LP_UNUSED, 0, 0);
        }
        if !self.unused.is_empty() {
            page::set_flags(pg, page::flags(pg) | page::PD_HAS_FREE_LINES);
        }
        page::repair_fragmentation(pg);
        Ok(())
    }
}

/// The chain member after `off` (tuple `t`), by invariant 2.
#[inline]
pub fn next_member(pg: &[u8], block: BlockNumber, t: &[u8]) -> Option<OffsetNumber> {
    if !tuple::is_hot_updated(t) {
        return None;
    }
    let (b, next) = tuple::ctid(t);
    if b != block || next == 0 || next > page::max_offset(pg) {
        return None;
    }
    let n = page::item(pg, next)?;
    (n.len() >= tuple::HEADER_SIZE && tuple::is_heap_only(n) && tuple::xmin(n) == tuple::xmax(t)).then_some(next)
}

/// The first member of the chain whose root is line pointer `root`: itself when it is a
/// normal tuple that is not heap-only, the target of a redirect. None otherwise (unused,
/// dead, or a heap-only tuple reached through a stale index entry).
#[inline]
pub fn chain_start(pg: &[u8], root: OffsetNumber) -> Option<OffsetNumber> {
    if root == 0 || root > page::max_offset(pg) {
        return None;
    }
    match page::item_id(pg, root) {
        (page::LP_NORMAL, _, len) => {
            let t = page::item(pg, root)?;
            (len >= tuple::HEADER_SIZE && !tuple::is_heap_only(t)).then_some(root)
        }
        (page::LP_REDIRECT, to, _) => {
            let to = to as OffsetNumber;
            let t = (to >= 1 && to <= page::max_offset(pg)).then(|| page::item(pg, to)).flatten()?;
            (t.len() >= tuple::HEADER_SIZE && tuple::is_heap_only(t)).then_some(to)
        }
        _ => None,
    }
}

/// The members of the chain rooted at `root`, in order (bounded by the page's line pointers).
pub fn chain_members(pg: &[u8], block: BlockNumber, root: OffsetNumber, out: &mut Vec<OffsetNumber>) {
    out.clear();
    let Some(mut off) = chain_start(pg, root) else { return };
    for _ in 0..page::max_offset(pg) {
        out.push(off);
        let t = page::item(pg, off).expect("chain members are normal tuples");
        match next_member(pg, block, t) {
            Some(n) => off = n,
            None => return,
        }
    }
}

/// For every line pointer of a page, the root of the chain it belongs to (0 for none): what
/// index builds and checks use to name a heap-only version by its index entry's TID.
pub fn roots(pg: &[u8], block: BlockNumber) -> Vec<OffsetNumber> {
    let max = page::max_offset(pg);
    let mut root_of = vec![0; max as usize + 1];
    let mut members = Vec::new();
    for root in 1..=max {
        chain_members(pg, block, root, &mut members);
        for &m in &members {
            root_of[m as usize] = root;
        }
    }
    root_of
}

/// Whether an update that needs room should prune the page (PostgreSQL prunes only pages
/// whose `pd_prune_xid` says a version may have died): some version on it was deleted or
/// updated by a transaction older than `bound`, the oldest running transaction (or the next
/// xid), which every pruning horizon is at most. Reads tuple headers only, no commit log: a
/// full page whose versions all belong to running transactions (a bulk update's) is not
/// pruned again for each row. Versions that aborted inserts left are not looked for here;
/// VACUUM removes them.
pub fn worth_pruning(pg: &[u8], bound: Xid) -> bool {
    (1..=page::max_offset(pg)).any(|off| {
        page::item(pg, off).is_some_and(|t| t.len() >= tuple::HEADER_SIZE && tuple::xmax(t) != INVALID_XID && tuple::xmax(t) < bound)
    })
}

/// Decides how to prune a page against `horizon` (invariant 3). Reads only.
pub fn prune_ops(txns: &TxnManager, pg: &[u8], block: BlockNumber, horizon: Xid) -> PruneOps {
    let max = page::max_offset(pg);
    let mut ops = PruneOps::default();
    if max == 0 || page::is_new(pg) {
        return ops;
    }
    let mut seen = vec![false; max as usize + 1];
    let mut members = Vec::new();
    let dead = |off: OffsetNumber| {
        let t = page::item(pg, off).expect("chain members are normal tuples");
        is_dead(txns, tuple::xmin(t), tuple::xmax(t), horizon)
    };
    for root in 1..=max {
        let (flags, _, _) = page::item_id(pg, root);
        if flags != page::LP_NORMAL && flags != page::LP_REDIRECT {
            continue;
        }
        chain_members(pg, block, root, &mut members);
        if members.is_empty() {
            if flags == page::LP_REDIRECT {
                ops.dead.push(root); // its chain is gone: only index entries may still name it
            }
            continue;
        }
        // Walk while members are dead or recently dead (deleted by a committed transaction);
        // the first member that is neither (live, being changed, or deleted by an aborted
        // transaction) ends the part pruning may touch: what follows it is judged on its own
        // below (an aborted update's new version is dead although its predecessor lives).
        let mut last_dead = None;
        for (i, &m) in members.iter().enumerate() {
            seen[m as usize] = true;
            if dead(m) {
                last_dead = Some(i);
                continue;
            }
            let t = page::item(pg, m).expect("chain members are normal tuples");
            let xmax = tuple::xmax(t);
            if xmax == INVALID_XID || xid_state(txns, xmax) != XidState::Committed {
                break;
            }
        }
        let Some(k) = last_dead else { continue };
        if k + 1 == members.len() {
            ops.dead.push(root);
            ops.unused.extend(members.iter().copied().filter(|&m| m != root));
        } else {
            ops.redirect.push((root, members[k + 1]));
            ops.unused.extend(members[..=k].iter().copied().filter(|&m| m != root));
        }
    }
    for off in 1..=max {
        if seen[off as usize] {
            continue;
        }
        if let Some(t) = page::item(pg, off) {
            if t.len() >= tuple::HEADER_SIZE && tuple::is_heap_only(t) && dead(off) {
                ops.unused.push(off);
            }
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip() {
        let ops = PruneOps { redirect: vec![(1, 3), (4, 9)], dead: vec![2], unused: vec![5, 6, 7] };
        let mut b = Vec::new();
        ops.encode(&mut b);
        b.push(0xAA);
        assert_eq!(b[0], OP_PRUNE);
        let (back, rest) = PruneOps::decode(&b[1..]).unwrap();
        assert_eq!(back, ops);
        assert_eq!(rest, &[0xAA]);
        assert!(PruneOps::decode(&b[1..4]).is_err());
    }
}
