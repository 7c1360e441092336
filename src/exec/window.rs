//! Window functions: row_number, rank, dense_rank, percent_rank, cume_dist, ntile, lag,
//! lead, first_value, last_value, nth_value, and the aggregates (count, sum, avg, min, max,
//! bool_and, bool_or, string_agg, array_agg, jsonb_agg, ...) over a frame, with FILTER: a
//! row the filter does not pass is in the frame but not in the aggregate.
//!
//! Frames are PostgreSQL's: without ORDER BY the whole partition; with ORDER BY and no frame
//! clause, RANGE UNBOUNDED PRECEDING to CURRENT ROW, where the current row's peers (rows
//! equal in the ORDER BY) are in the frame; `ROWS` frames with offsets count rows, `GROUPS`
//! frames count peer groups (`n PRECEDING` starts at the first row of the group `n` before
//! the current row's, and ends after the last row of that group).
//!
//! `RANGE` frames with an offset compare values: with one ORDER BY column `x` (ascending),
//! `k PRECEDING` starts at the first row whose `x >= current x - k`, and `k FOLLOWING` ends
//! after the last row whose `x <= current x + k` (PostgreSQL's `in_range` support functions:
//! integers with integer offsets, floats with a float8 offset, numeric with numeric, and
//! date / timestamp / timestamptz with an interval). Descending order flips both. A NULL in
//! the column is a peer of the NULLs only, placed where NULLS FIRST / LAST puts it. Both
//! bounds only move forward as the current row does (the column is sorted), so a partition's
//! frames cost one pass each.

use super::agg::{AggCall, AggFunc};
use super::sort::{compare_keys, SortKey};
use super::{Exec, Node, Row};
use crate::access::heap::Flow;
use crate::error::{PgError, Result};
use crate::sql::expr::{coerce, is_int, type_of, Scalar};
use crate::types::{SqlType, TypeId, Value};
use std::cmp::Ordering;

/// A window function that is not an aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WinFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
}

impl WinFunc {
    pub fn named(name: &str) -> Option<WinFunc> {
        Some(match name {
            "row_number" => WinFunc::RowNumber,
            "rank" => WinFunc::Rank,
            "dense_rank" => WinFunc::DenseRank,
            "percent_rank" => WinFunc::PercentRank,
            "cume_dist" => WinFunc::CumeDist,
            "ntile" => WinFunc::Ntile,
            "lag" => WinFunc::Lag,
            "lead" => WinFunc::Lead,
            "first_value" => WinFunc::FirstValue,
            "last_value" => WinFunc::LastValue,
            "nth_value" => WinFunc::NthValue,
            _ => return None,
        })
    }
}

/// A frame bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameBound {
    Unbounded,
    Current,
    Preceding(i64),
    Following(i64),
}

/// An explicit frame clause.
#[derive(Clone, Debug)]
pub struct Frame {
    /// ROWS (true) or RANGE / GROUPS.
    pub rows: bool,
    /// GROUPS: offsets count peer groups (`rows` is false).
    pub groups: bool,
    pub start: FrameBound,
    pub end: FrameBound,
    /// The start bound is `n FOLLOWING` (Unbounded start means UNBOUNDED PRECEDING).
    pub start_following: bool,
    /// The end bound is `n PRECEDING` (Unbounded end means UNBOUNDED FOLLOWING).
    pub end_preceding: bool,
    /// RANGE mode's offsets (`start` / `end` are then `Preceding(0)` or `Following(0)`):
    /// expressions that read no column, of the ORDER BY column's offset type, evaluated once
    /// per partition.
    pub start_offset: Option<Scalar>,
    pub end_offset: Option<Scalar>,
}

/// What a window call computes.
#[derive(Clone, Debug)]
pub enum WinKind {
    Func(WinFunc),
    Agg(AggCall),
}

/// A bound window call.
#[derive(Clone, Debug)]
pub struct WinCall {
    pub kind: WinKind,
    pub args: Vec<Scalar>,
    pub partition: Vec<Scalar>,
    pub order: Vec<SortKey>,
    pub frame: Option<Frame>,
    pub ty: SqlType,
    /// An aggregate's FILTER (WHERE ...).
    pub filter: Option<Scalar>,
}

impl WinCall {
    pub fn bind(
        name: &str,
        args: Vec<Scalar>,
        star: bool,
        partition: Vec<Scalar>,
        order: Vec<SortKey>,
        frame: Option<Frame>,
        filter: Option<Scalar>,
    ) -> Result<WinCall> {
        let t = SqlType::new;
        if let Some(f) = WinFunc::named(name) {
            let n = args.len();
            let bad = || PgError::new("42883", format!("function {name} with {n} arguments does not exist"));
            let mut args = args;
            let ty = match f {
                WinFunc::RowNumber | WinFunc::Rank | WinFunc::DenseRank if n == 0 => t(TypeId::Int8),
                WinFunc::PercentRank | WinFunc::CumeDist if n == 0 => t(TypeId::Float8),
                WinFunc::Ntile if n == 1 => {
                    let a0 = args.remove(0);
                    args.insert(0, coerce(a0, Some(t(TypeId::Int4)))?);
                    t(TypeId::Int4)
                }
                WinFunc::Lag | WinFunc::Lead if (1..=3).contains(&n) => {
                    let a0 = args.remove(0);
                    args.insert(0, coerce(a0, Some(t(TypeId::Text)))?);
                    if n >= 2 {
                        let a1 = args.remove(1);
                        args.insert(1, coerce(a1, Some(t(TypeId::Int4)))?);
                    }
                    let ty = type_of(&args[0]).unwrap_or(t(TypeId::Text));
                    if n == 3 {
                        let a2 = args.remove(2);
                        args.push(crate::sql::func::to_type(a2, Some(ty))?);
                    }
                    ty
                }
                WinFunc::FirstValue | WinFunc::LastValue if n == 1 => {
                    let a0 = args.remove(0);
                    args.insert(0, coerce(a0, Some(t(TypeId::Text)))?);
                    type_of(&args[0]).unwrap_or(t(TypeId::Text))
                }
                WinFunc::NthValue if n == 2 => {
                    let a0 = args.remove(0);
                    args.insert(0, coerce(a0, Some(t(TypeId::Text)))?);
                    let a1 = args.remove(1);
                    args.push(coerce(a1, Some(t(TypeId::Int4)))?);
                    type_of(&args[0]).unwrap_or(t(TypeId::Text))
                }
                _ => return Err(bad()),
            };
            if let Some(a) = args.get(1) {
                if matches!(f, WinFunc::Lag | WinFunc::Lead | WinFunc::NthValue) && !type_of(a).is_some_and(|t| is_int(t.id)) {
                    return Err(bad());
                }
            }
            return Ok(WinCall { kind: WinKind::Func(f), args, partition, order, frame, ty, filter: None });
        }
        let agg = AggFunc::named(name).ok_or_else(|| PgError::new("42883", format!("function {name} does not exist")))?;
        let call = AggCall::bind(agg, name, args, star, false, None, Vec::new())?;
        let ty = call.ty;
        Ok(WinCall { args: call.args.clone(), kind: WinKind::Agg(call), partition, order, frame, ty, filter })
    }
}

pub(super) fn run(
    ex: &Exec<'_>,
    input: &Node,
    calls: &[WinCall],
    outer: &[&[Value]],
    sink: &mut dyn FnMut(&[Value]) -> Result<Flow>,
) -> Result<Flow> {
    let mut rows: Vec<Row> = ex.collect(input, outer)?;
    let width = rows.first().map(|r| r.len()).unwrap_or(0);
    for r in rows.iter_mut() {
        r.reserve(calls.len());
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    for (ci, c) in calls.iter().enumerate() {
        // Sort keys: partition expressions (ascending), then the window's ORDER BY.
        let mut keys: Vec<SortKey> = c.partition.iter().map(|e| SortKey { expr: e.clone(), desc: false, nulls_first: false }).collect();
        keys.extend(c.order.iter().cloned());
        let mut kv: Vec<Row> = Vec::with_capacity(rows.len());
        let bpchar = super::sort::bpchar_keys(&keys);
        for r in &rows {
            let mut k = Vec::with_capacity(keys.len());
            for (key, &b) in keys.iter().zip(&bpchar) {
                k.push(super::sort::sort_value(ex.eval(&key.expr, &r[..width], outer)?, b));
            }
            kv.push(k);
        }
        order = (0..rows.len()).collect();
        order.sort_by(|&a, &b| compare_keys(&kv[a], &kv[b], &keys));
        let np = c.partition.len();
        let part_keys = &keys[..np];
        let ord_keys = &keys[np..];
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len() && compare_keys(&kv[order[start]][..np], &kv[order[end]][..np], part_keys) == Ordering::Equal {
                end += 1;
            }
            let part = &order[start..end];
            let peers = |a: usize, b: usize| compare_keys(&kv[a][np..], &kv[b][np..], ord_keys) == Ordering::Equal;
            let vals = partition_values(ex, c, &rows, width, part, &peers, outer)?;
            for (i, v) in part.iter().zip(vals) {
                debug_assert_eq!(rows[*i].len(), width + ci);
                rows[*i].push(v);
            }
            start = end;
        }
    }
    for i in order {
        if let Flow::Stop = sink(&rows[i])? {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

/// A partition's peer groups: the group of each position, and where each group starts (one
/// more entry: the partition's end).
struct PeerGroups {
    of: Vec<usize>,
    start: Vec<usize>,
}

/// Where each row's RANGE frame with an offset starts (`lo`) and ends (`hi`, exclusive), for
/// the bounds that have an offset.
struct RangeBounds {
    lo: Vec<usize>,
    hi: Vec<usize>,
}

/// The frame [lo, hi) of the row at position `i` of a partition of `n` rows.
fn frame_of(
    c: &WinCall,
    i: usize,
    n: usize,
    peer_lo: usize,
    peer_hi: usize,
    groups: &PeerGroups,
    range: Option<&RangeBounds>,
) -> (usize, usize) {
    let Some(f) = &c.frame else {
        return if c.order.is_empty() { (0, n) } else { (0, peer_hi) };
    };
    let pos = |b: FrameBound, is_start: bool| -> usize {
        match b {
            FrameBound::Preceding(_) | FrameBound::Following(_) if !f.rows && !f.groups => {
                let r = range.expect("RANGE offsets are computed per partition");
                if is_start {
                    r.lo[i]
                } else {
                    r.hi[i]
                }
            }
            FrameBound::Unbounded => {
                if is_start {
                    0
                } else {
                    n
                }
            }
            FrameBound::Current => {
                if f.rows {
                    if is_start {
                        i
                    } else {
                        i + 1
                    }
                } else if is_start {
                    peer_lo
                } else {
                    peer_hi
                }
            }
            // GROUPS: the start (end) of the peer group `k` groups before or after the row's.
            FrameBound::Preceding(k) | FrameBound::Following(k) if f.groups => {
                let g = groups.of[i] as i64 + if matches!(b, FrameBound::Preceding(_)) { -k } else { k };
                let last = groups.start.len() as i64 - 2;
                if g < 0 {
                    0
                } else if g > last {
                    n
                } else if is_start {
                    groups.start[g as usize]
                } else {
                    groups.start[g as usize + 1]
                }
            }
            FrameBound::Preceding(k) => {
                let p = i as i64 - k;
                (if is_start { p } else { p + 1 }).clamp(0, n as i64) as usize
            }
            FrameBound::Following(k) => {
                let p = i as i64 + k;
                (if is_start { p } else { p + 1 }).clamp(0, n as i64) as usize
            }
        }
    };
    let lo = pos(f.start, true);
    let hi = pos(f.end, false);
    (lo, hi.max(lo))
}

/// The RANGE frame bounds with an offset of each row of a partition (see the module doc),
/// as nodeWindowAgg.c moves its frame head and tail: the head is the first row in range of
/// the current one, the tail the first row past it.
fn range_bounds(
    ex: &Exec<'_>,
    c: &WinCall,
    f: &Frame,
    rows: &[Row],
    width: usize,
    part: &[usize],
    outer: &[&[Value]],
) -> Result<RangeBounds> {
    let n = part.len();
    let key = &c.order[0];
    let offset = |o: &Option<Scalar>, what: &str| -> Result<Option<Value>> {
        match o {
            None => Ok(None),
            Some(s) => match ex.eval(s, &[], outer)? {
                Value::Null => Err(PgError::new("22004", format!("frame {what} offset must not be null"))),
                v => Ok(Some(v)),
            },
        }
    };
    let (start, end) = (offset(&f.start_offset, "starting")?, offset(&f.end_offset, "ending")?);
    let vals = (0..n).map(|k| ex.eval(&key.expr, &rows[part[k]][..width], outer)).collect::<Result<Vec<_>>>()?;
    let mut b = RangeBounds { lo: vec![0; n], hi: vec![n; n] };
    if let Some(off) = &start {
        // The head is at or past `cur - off` (ascending): in_range(head, cur, off, sub, less).
        let (mut sub, mut less) = (matches!(f.start, FrameBound::Preceding(_)), false);
        if key.desc {
            (sub, less) = (!sub, true);
        }
        let mut h = 0;
        for i in 0..n {
            while h < n {
                let (hv, cv) = (&vals[h], &vals[i]);
                let here = if *hv == Value::Null || *cv == Value::Null {
                    if key.nulls_first {
                        *hv != Value::Null || *cv == Value::Null
                    } else {
                        *hv == Value::Null || *cv != Value::Null
                    }
                } else {
                    in_range(hv, cv, off, sub, less)?
                };
                if here {
                    break;
                }
                h += 1;
            }
            b.lo[i] = h;
        }
    }
    if let Some(off) = &end {
        // The tail moves past every row at or before `cur + off` (ascending).
        let (mut sub, mut less) = (matches!(f.end, FrameBound::Preceding(_)), true);
        if key.desc {
            (sub, less) = (!sub, false);
        }
        let mut t = 0;
        for i in 0..n {
            while t < n {
                let (tv, cv) = (&vals[t], &vals[i]);
                let inside = if *tv == Value::Null || *cv == Value::Null {
                    if key.nulls_first {
                        *tv == Value::Null
                    } else {
                        *cv == Value::Null
                    }
                } else {
                    in_range(tv, cv, off, sub, less)?
                };
                if !inside {
                    break;
                }
                t += 1;
            }
            b.hi[i] = t;
        }
    }
    Ok(b)
}

/// PostgreSQL's `in_range(val, base, offset, sub, less)`: whether `val` is at or before
/// (`less`) / at or after `base - offset` (`sub`) or `base + offset`, for non-null `val` and
/// `base` of the ORDER BY column's type and `offset` of its offset type. A negative (or NaN)
/// offset is `invalid preceding or following size in window function` (22013). NaN sorts
/// after every number; an infinite offset from an infinite base of the other sign takes in
/// every value, as in PostgreSQL.
fn in_range(val: &Value, base: &Value, offset: &Value, sub: bool, less: bool) -> Result<bool> {
    use crate::sql::expr::as_i64;
    use crate::types::Numeric;
    let bad = || PgError::new("22013", "invalid preceding or following size in window function");
    let holds = |o: Ordering| if less { o != Ordering::Greater } else { o != Ordering::Less };
    let float = |v: &Value| match *v {
        Value::Float4(x) => f64::from(x),
        Value::Float8(x) => x,
        _ => as_i64(v).unwrap_or(0) as f64,
    };
    match offset {
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => {
            let o = i128::from(as_i64(offset).unwrap_or(0));
            if o < 0 {
                return Err(bad());
            }
            let (v, b) = (i128::from(as_i64(val).unwrap_or(0)), i128::from(as_i64(base).unwrap_or(0)));
            // Exact: a sum past the column type's range is past every value, as PostgreSQL
            // decides on overflow.
            Ok(holds(v.cmp(&if sub { b - o } else { b + o })))
        }
        Value::Float8(o) => {
            if o.is_nan() || *o < 0.0 {
                return Err(bad());
            }
            let (v, b) = (float(val), float(base));
            if v.is_nan() {
                return Ok(b.is_nan() || !less);
            }
            if b.is_nan() {
                return Ok(less);
            }
            if o.is_infinite() && b.is_infinite() && (if sub { b > 0.0 } else { b < 0.0 }) {
                return Ok(true);
            }
            let sum = if sub { b - o } else { b + o };
            Ok(if less { v <= sum } else { v >= sum })
        }
        Value::Numeric(o) => {
            if o.is_nan() || *o < Numeric::zero() {
                return Err(bad());
            }
            let (Value::Numeric(v), Value::Numeric(b)) = (val, base) else {
                return Err(PgError::internal("a numeric RANGE offset over a column that is not numeric"));
            };
            if v.is_nan() {
                return Ok(b.is_nan() || !less);
            }
            if b.is_nan() {
                return Ok(less);
            }
            if o.is_infinite() {
                let (pinf, ninf) = (Numeric::infinity(), Numeric::neg_infinity());
                if (sub && *b == pinf) || (!sub && *b == ninf) {
                    return Ok(true);
                }
                // base - Infinity is -Infinity; base + Infinity is +Infinity.
                return Ok(match (sub, less) {
                    (true, true) => *v == ninf,
                    (true, false) | (false, true) => true,
                    (false, false) => *v == pinf,
                });
            }
            let sum = if sub { b.sub(o)? } else { b.add(o)? };
            Ok(holds(v.cmp(&sum)))
        }
        // in_range_time_interval / in_range_timetz_interval: the offset's time part alone,
        // added without wrapping at midnight.
        Value::Interval(iv) if matches!(base, Value::Time(_) | Value::TimeTz(_)) => {
            if iv.micros < 0 {
                return Err(bad());
            }
            let o = i128::from(iv.micros);
            let sum = |b: i64| if sub { i128::from(b) - o } else { i128::from(b) + o };
            Ok(match (val, base) {
                (Value::Time(v), Value::Time(b)) => holds(i128::from(*v).cmp(&sum(*b))),
                (Value::TimeTz(v), Value::TimeTz(b)) => {
                    let key = |time: i128, zone: i32| (time + i128::from(zone) * 1_000_000, zone);
                    holds(key(i128::from(v.time), v.zone).cmp(&key(sum(b.time), b.zone)))
                }
                _ => return Err(PgError::internal("an interval RANGE offset over times of two kinds")),
            })
        }
        Value::Interval(iv) => {
            if iv.span() < 0 {
                return Err(bad());
            }
            let ts = |v: &Value| -> Result<i64> {
                Ok(match *v {
                    Value::Timestamp(t) | Value::Timestamptz(t) => t,
                    Value::Date(d) if d == i32::MIN => i64::MIN,
                    Value::Date(d) if d == i32::MAX => i64::MAX,
                    // PostgreSQL's date2timestamp: a date past the timestamp range is an error.
                    Value::Date(d) => i64::from(d)
                        .checked_mul(86_400_000_000)
                        .filter(|t| (-211_813_488_000_000_000..9_223_371_331_200_000_000).contains(t))
                        .ok_or_else(|| PgError::new("22008", "date out of range for timestamp"))?,
                    _ => return Err(PgError::internal("an interval RANGE offset over a column that is not a date or timestamp")),
                })
            };
            let (v, b) = (ts(val)?, ts(base)?);
            let tz = matches!(base, Value::Timestamptz(_));
            let sum = if sub { crate::types::interval::minus(b, iv, tz)? } else { crate::types::interval::plus(b, iv, tz)? };
            Ok(holds(v.cmp(&sum)))
        }
        _ => Err(PgError::internal("a RANGE offset of a type without in_range")),
    }
}

fn partition_values(
    ex: &Exec<'_>,
    c: &WinCall,
    rows: &[Row],
    width: usize,
    part: &[usize],
    peers: &dyn Fn(usize, usize) -> bool,
    outer: &[&[Value]],
) -> Result<Vec<Value>> {
    let n = part.len();
    // Peer groups: [lo, hi) of each position.
    let mut peer_lo = vec![0; n];
    let mut peer_hi = vec![0; n];
    let mut s = 0;
    while s < n {
        let mut e = s + 1;
        while e < n && peers(part[s], part[e]) {
            e += 1;
        }
        for k in s..e {
            peer_lo[k] = s;
            peer_hi[k] = e;
        }
        s = e;
    }
    let mut groups = PeerGroups { of: vec![0; n], start: Vec::new() };
    for (k, &lo) in peer_lo.iter().enumerate() {
        if lo == k {
            groups.start.push(k);
        }
        groups.of[k] = groups.start.len() - 1;
    }
    groups.start.push(n);
    let range = match &c.frame {
        Some(f) if !f.rows && !f.groups && (f.start_offset.is_some() || f.end_offset.is_some()) => {
            Some(range_bounds(ex, c, f, rows, width, part, outer)?)
        }
        _ => None,
    };
    let range = range.as_ref();
    let arg = |k: usize, a: usize| -> Result<Value> { ex.eval(&c.args[a], &rows[part[k]][..width], outer) };
    let mut out = Vec::with_capacity(n);
    match &c.kind {
        WinKind::Func(f) => {
            let mut dense = 0i64;
            for i in 0..n {
                if peer_lo[i] == i {
                    dense += 1;
                }
                out.push(match f {
                    WinFunc::RowNumber => Value::Int8(i as i64 + 1),
                    WinFunc::Rank => Value::Int8(peer_lo[i] as i64 + 1),
                    WinFunc::DenseRank => Value::Int8(dense),
                    WinFunc::PercentRank => Value::Float8(if n <= 1 { 0.0 } else { peer_lo[i] as f64 / (n - 1) as f64 }),
                    WinFunc::CumeDist => Value::Float8(peer_hi[i] as f64 / n as f64),
                    WinFunc::Ntile => {
                        let buckets = match arg(i, 0)? {
                            Value::Int4(b) if b > 0 => b as usize,
                            Value::Null => return Ok(vec![Value::Null; n]),
                            _ => return Err(PgError::new("22014", "argument of ntile must be greater than zero")),
                        };
                        let per = n / buckets;
                        let extra = n % buckets;
                        // The first `extra` buckets hold per + 1 rows.
                        let big = extra * (per + 1);
                        let b = if i < big { i / (per + 1) } else { extra + (i - big) / per.max(1) };
                        Value::Int4(b as i32 + 1)
                    }
                    WinFunc::Lag | WinFunc::Lead => {
                        let off = if c.args.len() >= 2 {
                            match arg(i, 1)? {
                                Value::Null => {
                                    out.push(Value::Null);
                                    continue;
                                }
                                v => crate::sql::expr::as_i64(&v).unwrap_or(1),
                            }
                        } else {
                            1
                        };
                        let target = if *f == WinFunc::Lag { i as i64 - off } else { i as i64 + off };
                        if target >= 0 && (target as usize) < n {
                            arg(target as usize, 0)?
                        } else if c.args.len() == 3 {
                            arg(i, 2)?
                        } else {
                            Value::Null
                        }
                    }
                    WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                        let (lo, hi) = frame_of(c, i, n, peer_lo[i], peer_hi[i], &groups, range);
                        let pick = match f {
                            WinFunc::FirstValue => (lo < hi).then_some(lo),
                            WinFunc::LastValue => (lo < hi).then(|| hi - 1),
                            _ => {
                                let k = match arg(i, 1)? {
                                    Value::Int4(k) if k > 0 => k as usize,
                                    Value::Null => {
                                        out.push(Value::Null);
                                        continue;
                                    }
                                    _ => return Err(PgError::new("22016", "argument of nth_value must be greater than zero")),
                                };
                                (lo + k - 1 < hi).then(|| lo + k - 1)
                            }
                        };
                        match pick {
                            Some(p) => arg(p, 0)?,
                            None => Value::Null,
                        }
                    }
                });
            }
        }
        WinKind::Agg(call) => {
            let vals: Vec<Row> = (0..n)
                .map(|k| c.args.iter().map(|a| ex.eval(a, &rows[part[k]][..width], outer)).collect::<Result<Row>>())
                .collect::<Result<Vec<_>>>()?;
            // Rows the FILTER passes (all without one).
            let passes: Vec<bool> = match &c.filter {
                None => vec![true; n],
                Some(f) => (0..n)
                    .map(|k| Ok(crate::sql::expr::truth(&ex.eval(f, &rows[part[k]][..width], outer)?) == Some(true)))
                    .collect::<Result<Vec<_>>>()?,
            };
            // Frames that start at the partition's start grow monotonically: fold as we go.
            let mut running: Option<(usize, super::agg::Running)> = None;
            for i in 0..n {
                let (lo, hi) = frame_of(c, i, n, peer_lo[i], peer_hi[i], &groups, range);
                if lo == 0 {
                    let (upto, acc) = running.get_or_insert_with(|| (0, super::agg::Running::new(call)));
                    while *upto < hi {
                        if passes[*upto] {
                            acc.step(&vals[*upto])?;
                        }
                        *upto += 1;
                    }
                    out.push(acc.value()?);
                } else {
                    let mut acc = super::agg::Running::new(call);
                    for k in lo..hi {
                        if passes[k] {
                            acc.step(&vals[k])?;
                        }
                    }
                    out.push(acc.value()?);
                }
            }
        }
    }
    Ok(out)
}
