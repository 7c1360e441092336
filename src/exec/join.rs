//! Joins: a hash join on equality keys (the right input is the build side), else a nested
//! loop over the materialized right input. LEFT / RIGHT / FULL joins add the unmatched rows
//! of their preserved side, padded with NULLs.
//!
//! A hash join whose build side outgrows `work_mem` becomes a partitioned ("grace") hash
//! join: both inputs are written to temporary files by a hash of their join key, then each
//! pair of partitions is joined in memory. Rows with a NULL key (which match nothing) go to
//! the first partition, where they come out as unmatched rows if the join keeps them.

use super::agg::{partition_of, Source, PARTITIONS};
use super::{key_of, Exec, JoinKind, JoinNode, KeyMap, Node, Row};
use crate::access::heap::Flow;
use crate::error::Result;
use crate::types::Value;

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
    // Build: the right input's rows, in memory while they fit.
    let mut right: Vec<Row> = Vec::new();
    let mut mem = 0usize;
    let mut parts: Vec<super::spill::TempFile<'_>> = Vec::new();
    let mut vals = Vec::new();
    let mut key = Vec::new();
    ex.run(&j.right, outer, &mut |r| {
        if parts.is_empty() {
            right.push(r.to_vec());
            mem += super::row_bytes(r);
            if mem > ex.work_mem && !j.keys.is_empty() {
                for _ in 0..PARTITIONS {
                    parts.push(ex.temp.create()?);
                }
                for r in right.drain(..) {
                    let p = if keys_of(ex, &mut j.keys.iter().map(|k| &k.1), &r, outer, &mut vals)? {
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
        let p = if keys_of(ex, &mut j.keys.iter().map(|k| &k.1), r, outer, &mut vals)? {
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
        let mut left = |f: &mut dyn FnMut(&[Value]) -> Result<Flow>| ex.run(&j.left, outer, f).map(|_| ());
        return join_batch(ex, j, right, &mut left, outer, sink);
    }
    // Partition the probe side the same way.
    let mut lparts: Vec<super::spill::TempFile<'_>> = Vec::with_capacity(PARTITIONS);
    for _ in 0..PARTITIONS {
        lparts.push(ex.temp.create()?);
    }
    ex.run(&j.left, outer, &mut |l| {
        let p = if keys_of(ex, &mut j.keys.iter().map(|k| &k.0), l, outer, &mut vals)? {
            key_of(&vals, &mut key);
            partition_of(&key, 0)
        } else {
            0
        };
        lparts[p].write_row(l)?;
        Ok(Flow::Continue)
    })?;
    ex.note_disk(node, parts.iter().chain(lparts.iter()).map(|p| p.len()).sum());
    for (rp, lp) in parts.into_iter().zip(lparts) {
        let mut rr = rp.reader()?;
        let mut right = Vec::new();
        while let Some(r) = rr.next_row()? {
            right.push(r);
        }
        drop(rr);
        let mut lr = lp.reader()?;
        let mut left = |f: &mut dyn FnMut(&[Value]) -> Result<Flow>| -> Result<()> {
            while let Some(r) = lr.next_row()? {
                if let Flow::Stop = f(&r)? {
                    break;
                }
            }
            Ok(())
        };
        if let Flow::Stop = join_batch(ex, j, right, &mut left, outer, sink)? {
            return Ok(Flow::Stop);
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

/// Joins the rows of `left` with the in-memory `right` rows.
fn join_batch(
    ex: &Exec<'_>,
    j: &JoinNode,
    right: Vec<Row>,
    left: &mut Source<'_>,
    outer: &[&[Value]],
    sink: &mut dyn FnMut(&[Value]) -> Result<Flow>,
) -> Result<Flow> {
    let mut matched = vec![false; right.len()];
    let mut table: KeyMap<Vec<usize>> = KeyMap::default();
    let mut key = Vec::new();
    let mut vals = Vec::with_capacity(j.keys.len());
    if !j.keys.is_empty() {
        for (i, r) in right.iter().enumerate() {
            if !keys_of(ex, &mut j.keys.iter().map(|k| &k.1), r, outer, &mut vals)? {
                continue; // a NULL key matches nothing
            }
            key_of(&vals, &mut key);
            table.entry(key.clone()).or_default().push(i);
        }
    }
    let all: Vec<usize> = (0..right.len()).collect();
    let mut joined: Row = Vec::with_capacity(j.left_width + j.right_width);
    let nulls_right = vec![Value::Null; j.right_width];
    let mut stopped = false;
    left(&mut |l| {
        let candidates: &[usize] = if j.keys.is_empty() {
            &all
        } else if keys_of(ex, &mut j.keys.iter().map(|k| &k.0), l, outer, &mut vals)? {
            key_of(&vals, &mut key);
            table.get(&key).map(Vec::as_slice).unwrap_or(&[])
        } else {
            &[]
        };
        let mut any = false;
        for &i in candidates {
            joined.clear();
            joined.extend_from_slice(l);
            joined.extend_from_slice(&right[i]);
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
        for (i, r) in right.iter().enumerate() {
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
