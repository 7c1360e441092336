//! Joins: a hash join on equality keys (the right input is the build side, or the left with
//! `build_left`), a merge join over inputs sorted on the keys (`merge`), else a nested loop
//! over the materialized right input. LEFT / RIGHT / FULL joins add the unmatched rows of
//! their preserved side, padded with NULLs. Whatever the method, a joined row is the left
//! input's columns, then the right's.
//!
//! A merge join holds its right input's rows in memory (it does not spill).
//!
//! A hash join whose build side outgrows `work_mem` becomes a partitioned ("grace") hash
//! join: both inputs are written to temporary files by a hash of their join key, then each
//! pair of partitions is joined in memory. Rows with a NULL key (which match nothing) go to
//! the first partition, where they come out as unmatched rows if the join keeps them.

use super::agg::{partition_of, Source, PARTITIONS};
use super::{int_key, key_of, Exec, JoinKind, JoinNode, KeyMap, Node, Row};
use crate::access::heap::Flow;
use crate::error::Result;
use crate::types::Value;
use std::collections::HashMap;

/// A single integer key's build rows, (first row, other rows) per key: in a hash map, or,
/// when the keys are dense (their range at most 8 times their count plus 1,024, and at most
/// 4M), in an array indexed by key minus the smallest key, so that a probe is one
/// comparison and one load.
enum IntTable {
    Hash(HashMap<i64, (usize, Vec<usize>), foldhash::fast::RandomState>),
    Dense { min: i64, slots: Vec<u32>, entries: Vec<(usize, Vec<usize>)> },
}

impl IntTable {
    fn new(map: HashMap<i64, (usize, Vec<usize>), foldhash::fast::RandomState>) -> IntTable {
        let (Some(&min), Some(&max)) = (map.keys().min(), map.keys().max()) else { return IntTable::Hash(map) };
        let range = i128::from(max) - i128::from(min) + 1;
        if range > (8 * map.len() as i128 + 1024).min(1 << 22) {
            return IntTable::Hash(map);
        }
        let mut slots = vec![0u32; range as usize];
        let mut entries = Vec::with_capacity(map.len());
        for (k, e) in map {
            entries.push(e);
            slots[(k - min) as usize] = entries.len() as u32;
        }
        IntTable::Dense { min, slots, entries }
    }

    #[inline]
    fn get(&self, n: &i64) -> Option<&(usize, Vec<usize>)> {
        match self {
            IntTable::Hash(m) => m.get(n),
            IntTable::Dense { min, slots, entries } => match n.checked_sub(*min) {
                Some(d) if d >= 0 && (d as u64) < slots.len() as u64 => match slots[d as usize] {
                    0 => None,
                    s => Some(&entries[s as usize - 1]),
                },
                _ => None,
            },
        }
    }
}

/// A table entry as (first row, other rows).
fn found(e: Option<&(usize, Vec<usize>)>) -> (Option<usize>, &[usize]) {
    match e {
        Some((first, more)) => (Some(*first), more),
        None => (None, &[]),
    }
}

fn keys_of(
    ex: &Exec<'_>,
    exprs: &mut dyn Iterator<Item = &crate::sql::expr::Scalar>,
    row: &[Value],
    outer: &[&[Value]],
    vals: &mut Vec<Value>,
) -> Result<bool> {
    vals.clear();
    for e in exprs {
        vals.push(ex.eval(e, row, outer)?);
    }
    Ok(!vals.contains(&Value::Null))
}

pub(super) fn run(
    ex: &Exec<'_>,
    node: &Node,
    j: &JoinNode,
    outer: &[&[Value]],
    sink: &mut dyn FnMut(&[Value]) -> Result<Flow>,
) -> Result<Flow> {
    if j.lateral {
        return lateral(ex, j, outer, sink);
    }
    if j.merge {
        return merge(ex, j, outer, sink);
    }
    if j.inner_index {
        return index_nested_loop(ex, j, outer, sink);
    }
    // The build input (the right one, or the left with `build_left`) and its key side.
    let (build_node, probe_node) = if j.build_left { (&j.left, &j.right) } else { (&j.right, &j.left) };
    let bl = j.build_left;
    let build_keys = || j.keys.iter().map(move |k| if bl { &k.0 } else { &k.1 });
    let probe_keys = || j.keys.iter().map(move |k| if bl { &k.1 } else { &k.0 });
    // Build: the build input's rows, in memory while they fit.
    let mut build: Vec<Row> = Vec::new();
    let mut mem = 0usize;
    let mut parts: Vec<super::spill::TempFile<'_>> = Vec::new();
    let mut vals = Vec::new();
    let mut key = Vec::new();
    ex.run(build_node, outer, &mut |r| {
        if parts.is_empty() {
            build.push(r.to_vec());
            mem += super::row_bytes(r);
            if mem > ex.work_mem && !j.keys.is_empty() {
                for _ in 0..PARTITIONS {
                    parts.push(ex.temp.create()?);
                }
                for r in build.drain(..) {
                    let p = if keys_of(ex, &mut build_keys(), &r, outer, &mut vals)? {
                        key_of(&vals, &mut key);
                        partition_of(&key, 0)
                    } else {
                        0
                    };
                    parts[p].write_row(&r)?;
                }
            }
            return Ok(Flow::Continue);
        }
        let p = if keys_of(ex, &mut build_keys(), r, outer, &mut vals)? {
            key_of(&vals, &mut key);
            partition_of(&key, 0)
        } else {
            0
        };
        parts[p].write_row(r)?;
        Ok(Flow::Continue)
    })?;
    if parts.is_empty() {
        ex.note_mem(node, mem as u64);
        let mut probe = |f: &mut dyn FnMut(&[Value]) -> Result<Flow>| ex.run(probe_node, outer, f).map(|_| ());
        return join_batch(ex, j, build, &mut probe, outer, sink);
    }
    // Partition the probe side the same way.
    let mut pparts: Vec<super::spill::TempFile<'_>> = Vec::with_capacity(PARTITIONS);
    for _ in 0..PARTITIONS {
        pparts.push(ex.temp.create()?);
    }
    ex.run(probe_node, outer, &mut |l| {
        let p = if keys_of(ex, &mut probe_keys(), l, outer, &mut vals)? {
            key_of(&vals, &mut key);
            partition_of(&key, 0)
        } else {
            0
        };
        pparts[p].write_row(l)?;
        Ok(Flow::Continue)
    })?;
    ex.note_disk(node, parts.iter().chain(pparts.iter()).map(|p| p.len()).sum());
    for (bp, pp) in parts.into_iter().zip(pparts) {
        let mut br = bp.reader()?;
        let mut build = Vec::new();
        while let Some(r) = br.next_row()? {
            build.push(r);
        }
        drop(br);
        let mut pr = pp.reader()?;
        let mut probe = |f: &mut dyn FnMut(&[Value]) -> Result<Flow>| -> Result<()> {
            while let Some(r) = pr.next_row()? {
                if let Flow::Stop = f(&r)? {
                    break;
                }
            }
            Ok(())
        };
        if let Flow::Stop = join_batch(ex, j, build, &mut probe, outer, sink)? {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

/// An index nested loop: each left row's key values probe the right table's index (the
/// right input's `Access::Index` equality expressions are over the left row); every pair is
/// checked against the join keys again (an index the snapshot cannot use falls back to a
/// scan, which the check makes exact), then against the join condition.
fn index_nested_loop(ex: &Exec<'_>, j: &JoinNode, outer: &[&[Value]], sink: &mut dyn FnMut(&[Value]) -> Result<Flow>) -> Result<Flow> {
    use crate::sql::dml::Access;
    use crate::sql::expr::Scalar;
    let Node::Scan(p) = &j.right else { unreachable!("an index nested loop's right input is a table scan") };
    let Access::Index { eq, .. } = &p.access else { unreachable!("an index nested loop's right input is an index scan") };
    debug_assert!(matches!(j.kind, JoinKind::Inner | JoinKind::Left), "index nested loops are INNER or LEFT");
    let mut joined: Row = Vec::with_capacity(j.left_width + j.right_width);
    let (mut lk, mut rk, mut kl, mut kr) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut probe: Vec<Scalar> = Vec::with_capacity(eq.len());
    ex.run(&j.left, outer, &mut |l| {
        let mut any = false;
        let mut stopped = false;
        if keys_of(ex, &mut j.keys.iter().map(|k| &k.0), l, outer, &mut lk)? {
            key_of(&lk, &mut kl);
            probe.clear();
            for e in eq {
                probe.push(Scalar::Const(ex.eval(e, l, outer)?));
            }
            let timed = ex.stats.is_some().then(std::time::Instant::now);
            let (mut found, mut first, mut in_sink) = (0u64, None, 0u64);
            let mut each = |tid: crate::access::heap::dml::Tid, r: &[Value]| -> Result<Flow> {
                found += 1;
                if !keys_of(ex, &mut j.keys.iter().map(|k| &k.1), r, outer, &mut rk)? {
                    return Ok(Flow::Continue);
                }
                key_of(&rk, &mut kr);
                if kr != kl {
                    return Ok(Flow::Continue);
                }
                joined.clear();
                joined.extend_from_slice(l);
                joined.extend_from_slice(r);
                if p.tid_col {
                    joined.push(crate::sql::dml::tid_value(tid));
                }
                if let Some(c) = &j.cond {
                    if !ex.truth(c, &joined, outer)? {
                        return Ok(Flow::Continue);
                    }
                }
                any = true;
                let t = timed.map(|t0| (t0, std::time::Instant::now()));
                if let (Some((t0, now)), None) = (t, first) {
                    first = Some((now - t0).as_nanos() as u64);
                }
                let f = sink(&joined)?;
                if let Some((_, now)) = t {
                    in_sink += now.elapsed().as_nanos() as u64;
                }
                stopped = matches!(f, Flow::Stop);
                Ok(f)
            };
            match ex.epq_row(p)? {
                // A LockRows re-check: the slot's one row (the keys are checked above).
                Some(one) => {
                    if let Some(row) = one {
                        let (cols, tid) = row.split_at(p.types.len());
                        each(crate::sql::dml::tid_of(&tid[0])?, cols)?;
                    }
                }
                None => p.for_each_keyed(ex.s, &ex.snap, ex.params, Some(&probe), &mut each)?,
            }
            if let Some(t0) = timed {
                ex.note_loop(&j.right, found, first, (t0.elapsed().as_nanos() as u64).saturating_sub(in_sink));
            }
        } else {
            // A NULL key probes nothing; the loop still counts.
            ex.note_loop(&j.right, 0, None, 0);
        }
        if stopped {
            return Ok(Flow::Stop);
        }
        if !any && j.kind == JoinKind::Left {
            joined.clear();
            joined.extend_from_slice(l);
            joined.resize(j.left_width + j.right_width, Value::Null);
            return sink(&joined);
        }
        Ok(Flow::Continue)
    })
}

/// Compares two non-NULL key tuples as the Sorts under a merge join ordered them.
fn cmp_keys(a: &[Value], b: &[Value]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = super::sort::compare_key(x, y, false, false);
        if o != std::cmp::Ordering::Equal {
            return o;
        }
    }
    std::cmp::Ordering::Equal
}

/// A merge join: the right input's (sorted) rows are held, the left's stream past them. For
/// each left key, the right rows with an equal key are one run; as left keys only grow, the
/// run's start only moves forward. A NULL key matches nothing (NULLs sort last).
fn merge(ex: &Exec<'_>, j: &JoinNode, outer: &[&[Value]], sink: &mut dyn FnMut(&[Value]) -> Result<Flow>) -> Result<Flow> {
    let mut right: Vec<(Option<Vec<Value>>, Row)> = Vec::new();
    let mut vals = Vec::new();
    ex.run(&j.right, outer, &mut |r| {
        let k = keys_of(ex, &mut j.keys.iter().map(|k| &k.1), r, outer, &mut vals)?.then(|| vals.clone());
        right.push((k, r.to_vec()));
        Ok(Flow::Continue)
    })?;
    debug_assert!(
        {
            let keyed: Vec<&Vec<Value>> = right.iter().filter_map(|r| r.0.as_ref()).collect();
            keyed.windows(2).all(|w| cmp_keys(w[0], w[1]) != std::cmp::Ordering::Greater)
        },
        "a merge join's right input is sorted on its keys"
    );
    let mut matched = vec![false; right.len()];
    let mut start = 0usize;
    let mut joined: Row = Vec::with_capacity(j.left_width + j.right_width);
    let nulls_right = vec![Value::Null; j.right_width];
    let mut stopped = false;
    ex.run(&j.left, outer, &mut |l| {
        let mut any = false;
        if keys_of(ex, &mut j.keys.iter().map(|k| &k.0), l, outer, &mut vals)? {
            // A right key with a NULL in any column matches nothing: it is passed over (a NULL
            // in a later key column sorts it among the non-NULL keys, never inside a run of
            // equal keys).
            while start < right.len() && right[start].0.as_ref().is_none_or(|k| cmp_keys(k, &vals) == std::cmp::Ordering::Less) {
                start += 1;
            }
            let mut i = start;
            while i < right.len() && right[i].0.as_ref().is_some_and(|k| cmp_keys(k, &vals) == std::cmp::Ordering::Equal) {
                joined.clear();
                joined.extend_from_slice(l);
                joined.extend_from_slice(&right[i].1);
                let ok = match &j.cond {
                    Some(c) => ex.truth(c, &joined, outer)?,
                    None => true,
                };
                if ok {
                    any = true;
                    matched[i] = true;
                    if let Flow::Stop = sink(&joined)? {
                        stopped = true;
                        return Ok(Flow::Stop);
                    }
                }
                i += 1;
            }
        }
        if !any && matches!(j.kind, JoinKind::Left | JoinKind::Full) {
            joined.clear();
            joined.extend_from_slice(l);
            joined.extend_from_slice(&nulls_right);
            if let Flow::Stop = sink(&joined)? {
                stopped = true;
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    })?;
    if stopped {
        return Ok(Flow::Stop);
    }
    if matches!(j.kind, JoinKind::Right | JoinKind::Full) {
        let nulls_left = vec![Value::Null; j.left_width];
        for (i, (_, r)) in right.iter().enumerate() {
            if matched[i] {
                continue;
            }
            joined.clear();
            joined.extend_from_slice(&nulls_left);
            joined.extend_from_slice(r);
            if let Flow::Stop = sink(&joined)? {
                return Ok(Flow::Stop);
            }
        }
    }
    Ok(Flow::Continue)
}

/// A LATERAL join: the right input runs once per left row, with the left row as its nearest
/// outer row; a LEFT join keeps left rows the right side gave nothing for (the right input
/// is re-evaluated, never materialized across left rows).
fn lateral(ex: &Exec<'_>, j: &JoinNode, outer: &[&[Value]], sink: &mut dyn FnMut(&[Value]) -> Result<Flow>) -> Result<Flow> {
    debug_assert!(matches!(j.kind, JoinKind::Inner | JoinKind::Left), "LATERAL joins are INNER or LEFT");
    debug_assert!(j.keys.is_empty(), "a LATERAL join is a nested loop");
    let mut out: Row = Vec::with_capacity(j.left_width + j.right_width);
    ex.run(&j.left, outer, &mut |l| {
        let mut stack: Vec<&[Value]> = Vec::with_capacity(outer.len() + 1);
        stack.push(l);
        stack.extend_from_slice(outer);
        let mut matched = false;
        let mut stopped = false;
        ex.run(&j.right, &stack, &mut |r| {
            out.clear();
            out.extend_from_slice(l);
            out.extend_from_slice(r);
            if let Some(c) = &j.cond {
                if !ex.truth(c, &out, outer)? {
                    return Ok(Flow::Continue);
                }
            }
            matched = true;
            let f = sink(&out)?;
            stopped = matches!(f, Flow::Stop);
            Ok(f)
        })?;
        if stopped {
            return Ok(Flow::Stop);
        }
        if !matched && j.kind == JoinKind::Left {
            out.clear();
            out.extend_from_slice(l);
            out.resize(j.left_width + j.right_width, Value::Null);
            return sink(&out);
        }
        Ok(Flow::Continue)
    })
}

/// Joins the in-memory `build` rows with the rows of `probe` (the right input's rows are
/// built unless `build_left`); joined rows are always the left's columns, then the right's.
fn join_batch(
    ex: &Exec<'_>,
    j: &JoinNode,
    build: Vec<Row>,
    probe: &mut Source<'_>,
    outer: &[&[Value]],
    sink: &mut dyn FnMut(&[Value]) -> Result<Flow>,
) -> Result<Flow> {
    let bl = j.build_left;
    let mut matched = vec![false; build.len()];
    // Each key's build rows: the first in the table's slot, any others in a list, so that a
    // probe of a unique key (a primary key's) reads no memory outside the table but its row.
    // A single integer key is kept by value in `ints` (key_of gives integers of every width
    // one key by value, equal to no other type's: so which table a key is in follows from
    // its value alone); any other key by its key_of bytes in `table`.
    let mut table: KeyMap<(usize, Vec<usize>)> = KeyMap::default();
    let mut ints: HashMap<i64, (usize, Vec<usize>), foldhash::fast::RandomState> = HashMap::default();
    let mut key = Vec::new();
    let mut vals = Vec::with_capacity(j.keys.len());
    let single = j.keys.len() == 1;
    if !j.keys.is_empty() {
        for (i, r) in build.iter().enumerate() {
            if !keys_of(ex, &mut j.keys.iter().map(|k| if bl { &k.0 } else { &k.1 }), r, outer, &mut vals)? {
                continue; // a NULL key matches nothing
            }
            if let (true, Some(n)) = (single, int_key(&vals[0])) {
                ints.entry(n).and_modify(|(_, more)| more.push(i)).or_insert((i, Vec::new()));
                continue;
            }
            key_of(&vals, &mut key);
            match table.get_mut(&key[..]) {
                Some((_, more)) => more.push(i),
                None => {
                    table.insert(super::Key::new(&key), (i, Vec::new()));
                }
            }
        }
    }
    let ints = IntTable::new(ints);
    // The probe side's key expression when it is a single plain column: read in place.
    let probe_col = match j.keys.as_slice() {
        [k] => match if bl { &k.1 } else { &k.0 } {
            crate::sql::expr::Scalar::Col(c, _) => Some(*c),
            _ => None,
        },
        _ => None,
    };
    // Which unmatched rows a join keeps: of the probe input, and of the build input.
    let (keep_probe, keep_build) = match j.kind {
        JoinKind::Inner => (false, false),
        JoinKind::Full => (true, true),
        JoinKind::Left => (!bl, bl),
        JoinKind::Right => (bl, !bl),
    };
    let (build_w, probe_w) = if bl { (j.left_width, j.right_width) } else { (j.right_width, j.left_width) };
    let all: Vec<usize> = (0..build.len()).collect();
    let mut joined: Row = Vec::with_capacity(j.left_width + j.right_width);
    let nulls_build = vec![Value::Null; build_w];
    // The joined row is rewritten in place, only in the columns the consumer reads (`used`;
    // the others stay NULL); a text value reuses the buffer the slot's last text had, so a
    // match costs no allocation.
    let width = j.left_width + j.right_width;
    debug_assert!(j.used.is_empty() || j.used.len() == width, "the join's used columns are its output's");
    let cols: Vec<usize> = (0..width).filter(|&c| j.used.get(c).copied().unwrap_or(true)).collect();
    let combine = |joined: &mut Row, p: &[Value], b: &[Value]| {
        let (first, second) = if bl { (b, p) } else { (p, b) };
        debug_assert_eq!(first.len() + second.len(), width, "a joined row is the two inputs' columns");
        if joined.len() != width {
            joined.clear();
            joined.resize(width, Value::Null);
        }
        let split = first.len();
        for &c in &cols {
            joined[c].assign_from(if c < split { &first[c] } else { &second[c - split] });
        }
    };
    let mut stopped = false;
    probe(&mut |p| {
        let (first, candidates): (Option<usize>, &[usize]) = if j.keys.is_empty() {
            (None, &all)
        } else if let Some(n) = probe_col.and_then(|c| int_key(&p[c])) {
            found(ints.get(&n))
        } else if keys_of(ex, &mut j.keys.iter().map(|k| if bl { &k.1 } else { &k.0 }), p, outer, &mut vals)? {
            match (single, int_key(&vals[0])) {
                (true, Some(n)) => found(ints.get(&n)),
                _ => {
                    key_of(&vals, &mut key);
                    found(table.get(&key[..]))
                }
            }
        } else {
            (None, &[])
        };
        let mut any = false;
        for i in first.into_iter().chain(candidates.iter().copied()) {
            combine(&mut joined, p, &build[i]);
            if let Some(c) = &j.cond {
                if !ex.truth(c, &joined, outer)? {
                    continue;
                }
            }
            any = true;
            matched[i] = true;
            if let Flow::Stop = sink(&joined)? {
                stopped = true;
                return Ok(Flow::Stop);
            }
        }
        if !any && keep_probe {
            combine(&mut joined, p, &nulls_build);
            if let Flow::Stop = sink(&joined)? {
                stopped = true;
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    })?;
    if stopped {
        return Ok(Flow::Stop);
    }
    if keep_build {
        let nulls_probe = vec![Value::Null; probe_w];
        for (i, r) in build.iter().enumerate() {
            if matched[i] {
                continue;
            }
            combine(&mut joined, &nulls_probe, r);
            if let Flow::Stop = sink(&joined)? {
                return Ok(Flow::Stop);
            }
        }
    }
    Ok(Flow::Continue)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(keys: &[i64]) -> IntTable {
        let mut m: HashMap<i64, (usize, Vec<usize>), foldhash::fast::RandomState> = HashMap::default();
        for (i, &k) in keys.iter().enumerate() {
            m.entry(k).and_modify(|(_, more)| more.push(i)).or_insert((i, Vec::new()));
        }
        IntTable::new(m)
    }

    fn rows(t: &IntTable, n: i64) -> Vec<usize> {
        let (first, more) = found(t.get(&n));
        first.into_iter().chain(more.iter().copied()).collect()
    }

    /// Dense and hashed tables answer alike: every key's rows in build order, nothing for a
    /// key not built, near the ends of i64 too (a probe far below the smallest key must not
    /// wrap round into the array).
    #[test]
    fn dense_and_hashed_integer_tables_find_the_same_rows() {
        let cases: [&[i64]; 5] = [
            &[1, 10, 11, 19, 100, 10, 1],
            &[-5, -3, -5, 0, 2],
            &[i64::MAX - 3, i64::MAX, i64::MAX - 3],
            &[i64::MIN, i64::MIN + 2],
            &[0, 1_000_000_000_000, 7],
        ];
        for keys in cases {
            let t = table(keys);
            let dense = matches!(t, IntTable::Dense { .. });
            assert_eq!(dense, keys != [0, 1_000_000_000_000, 7], "{keys:?}");
            let mut probes: Vec<i64> = keys.to_vec();
            probes.extend([i64::MIN, i64::MIN + 1, i64::MAX, i64::MAX - 1, -6, -4, 0, 3, 12, 101, 6]);
            for n in probes {
                let want: Vec<usize> = keys.iter().enumerate().filter(|(_, &k)| k == n).map(|(i, _)| i).collect();
                assert_eq!(rows(&t, n), want, "keys {keys:?}, probe {n}");
            }
        }
    }
}
