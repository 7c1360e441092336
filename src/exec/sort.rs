//! ORDER BY: sort keys and the sort node (in memory).

use super::{Exec, Node, Row};
use crate::access::heap::Flow;
use crate::error::Result;
use crate::sql::expr::{self, Scalar};
use crate::types::Value;
use std::cmp::Ordering;

/// One sort key: an expression over the input row, its direction and where NULLs go.
#[derive(Clone, Debug)]
pub struct SortKey {
    pub expr: Scalar,
    pub desc: bool,
    pub nulls_first: bool,
}

impl SortKey {
    /// A key with PostgreSQL's defaults: ascending, NULLs last ascending and first descending.
    pub fn new(expr: Scalar, o: &sqlparser::ast::OrderByOptions) -> SortKey {
        let desc = o.asc == Some(false);
        SortKey { expr, desc, nulls_first: o.nulls_first.unwrap_or(desc) }
    }
}

/// Which keys are char(n): PostgreSQL compares those without their trailing blanks
/// (`bpcharcmp`), so a value is sorted by [`sort_value`] of it.
pub fn bpchar_keys(keys: &[SortKey]) -> Vec<bool> {
    keys.iter().map(|k| expr::type_of(&k.expr).is_some_and(|t| t.id == crate::types::TypeId::Bpchar)).collect()
}

/// A key's value as it is compared: a char(n) value without its trailing blanks (`'a'`
/// sorts before `E'a\t'`, as in PostgreSQL, though its padded form would not).
pub fn sort_value(v: Value, bpchar: bool) -> Value {
    match v {
        Value::Text(s) if bpchar && s.ends_with(' ') => Value::Text(s.trim_end_matches(' ').to_string()),
        v => v,
    }
}

/// Compares two non-NULL-or-NULL values as a sort key orders them.
pub fn compare_key(a: &Value, b: &Value, desc: bool, nulls_first: bool) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => {
            if nulls_first {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (_, Value::Null) => {
            if nulls_first {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        _ => {
            let o = expr::compare(a, b).unwrap_or(Ordering::Equal);
            if desc {
                o.reverse()
            } else {
                o
            }
        }
    }
}

/// Compares two rows' evaluated keys.
pub fn compare_keys(a: &[Value], b: &[Value], keys: &[SortKey]) -> Ordering {
    for (i, k) in keys.iter().enumerate() {
        let o = compare_key(&a[i], &b[i], k.desc, k.nulls_first);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Sorts in memory up to `work_mem`; past it, sorted runs go to temporary files and are
/// merged (external merge sort). Equal keys keep their input order (runs are merged with
/// earlier runs first).
pub(super) fn run(
    ex: &Exec<'_>,
    node: &Node,
    input: &Node,
    keys: &[SortKey],
    outer: &[&[Value]],
    sink: &mut dyn FnMut(&[Value]) -> Result<Flow>,
) -> Result<Flow> {
    let nk = keys.len();
    let bpchar = bpchar_keys(keys);
    let mut cur: Vec<(Row, Row)> = Vec::new();
    let (mut mem, mut peak) = (0usize, 0usize);
    let mut runs = Vec::new();
    let spill = |cur: &mut Vec<(Row, Row)>, runs: &mut Vec<_>| -> Result<()> {
        cur.sort_by(|a, b| compare_keys(&a.0, &b.0, keys));
        let mut f = ex.temp.create()?;
        let mut both = Vec::new();
        for (k, r) in cur.drain(..) {
            both.clear();
            both.extend(k);
            both.extend(r);
            f.write_row(&both)?;
        }
        runs.push(f.reader()?);
        Ok(())
    };
    ex.run(input, outer, &mut |row| {
        let mut k = Vec::with_capacity(nk);
        for (key, &b) in keys.iter().zip(&bpchar) {
            k.push(sort_value(ex.eval(&key.expr, row, outer)?, b));
        }
        mem += super::row_bytes(&k) + super::row_bytes(row);
        peak = peak.max(mem);
        cur.push((k, row.to_vec()));
        if mem > ex.work_mem {
            spill(&mut cur, &mut runs)?;
            mem = 0;
        }
        Ok(Flow::Continue)
    })?;
    if runs.is_empty() {
        cur.sort_by(|a, b| compare_keys(&a.0, &b.0, keys));
        ex.note_mem(node, peak as u64);
        for (_, row) in cur {
            if let Flow::Stop = sink(&row)? {
                return Ok(Flow::Stop);
            }
        }
        return Ok(Flow::Continue);
    }
    if !cur.is_empty() {
        spill(&mut cur, &mut runs)?;
    }
    ex.note_disk(node, ex.temp.used.get());
    // Merge: the smallest head of all runs, the earliest run on ties.
    let mut heads: Vec<Option<Row>> = Vec::with_capacity(runs.len());
    for r in runs.iter_mut() {
        heads.push(r.next_row()?);
    }
    loop {
        let mut best: Option<usize> = None;
        for (i, h) in heads.iter().enumerate() {
            let Some(h) = h else { continue };
            best = match best {
                Some(b) if compare_keys(&h[..nk], &heads[b].as_ref().expect("head")[..nk], keys) != std::cmp::Ordering::Less => Some(b),
                _ => Some(i),
            };
        }
        let Some(b) = best else { break };
        let row = heads[b].take().expect("head");
        heads[b] = runs[b].next_row()?;
        if let Flow::Stop = sink(&row[nk..])? {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}
