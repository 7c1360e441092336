//! The query executor: a tree of plan nodes ([`Node`]) run against a snapshot.
//!
//! **Rows are pushed, not pulled.** Each node runs its input with a consumer ("sink") that
//! receives one row at a time and answers [`Flow::Continue`] or [`Flow::Stop`]. Heap scans
//! are page-at-a-time callbacks over a read stream (`access::heap::scan`), so pushing rows
//! keeps the scan loop tight: no per-row virtual `next()` chain, no state machine to resume a
//! scan in the middle of a page. A LIMIT answers `Stop` and the scan ends at once. Blocking
//! nodes (sort, hash aggregate, the build side of a hash join, window aggregation)
//! consume their input fully and then push their output. The top-level sink writes rows out
//! (to the client, or into the result) as they come, so a plain scan streams. What pushing
//! cannot do is suspend mid-scan (the protocol's Execute with a row limit); a portal that is
//! suspended holds its remaining rows instead.
//!
//! Rows are `Vec<Value>` of the node's output columns; expressions (`sql::expr::Scalar`)
//! index into them. A join's row is its left input's columns followed by its right input's.
//!
//! Invariants:
//! 1. A node pushes rows of exactly its output width (`Node::width`), and stops pushing as
//!    soon as its sink answers `Stop`, propagating `Stop` to its caller.
//! 2. NULLs follow PostgreSQL: a NULL join key matches nothing; NULLs group together and are
//!    one value for DISTINCT and set operations; they sort last ascending and first
//!    descending unless NULLS FIRST / LAST says otherwise.
//! 3. Every table a plan reads is locked (AccessShareLock, to transaction end) before the plan
//!    runs, and every scan reads with the statement's one snapshot. A plan that locks rows
//!    ([`lockrows`]) also takes RowShareLock on their tables and gets its transaction an xid
//!    first ([`lock_tables`]).
//! 4. A subquery that reads no column of an enclosing query runs once per statement (its
//!    result cached); a correlated one runs once per outer row.

pub mod agg;
pub mod fk;
mod join;
pub mod lockrows;
pub mod rows;
pub(crate) mod sort;
pub mod spill;
pub mod window;

pub use agg::{AggCall, AggFunc};
pub use sort::SortKey;
pub use window::{Frame, FrameBound, WinCall, WinFunc};

use crate::access::heap::Flow;
use crate::error::{sqlstate, PgError, Result};
use crate::session::Session;
use crate::sql::dml;
use crate::sql::expr::{self, CmpOp, EvalCx, Scalar, SubRunner};
use crate::txn::Snapshot;
use crate::types::{SqlType, TypeId, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// A row flowing between nodes.
pub type Row = Vec<Value>;

/// A LockRows re-check's rows by lock slot ([`Exec::epq`]).
pub(crate) type EpqRows = Rc<Vec<(usize, Option<Row>)>>;

/// One output column of a query.
#[derive(Clone, Debug)]
pub struct OutCol {
    pub name: String,
    pub ty: SqlType,
    /// The table's OID and column number when the column is a table's column.
    pub source: Option<(u32, i16)>,
}

/// A bound query: its plan and output columns.
#[derive(Clone, Debug)]
pub struct BoundQuery {
    pub node: Node,
    pub columns: Vec<OutCol>,
    /// Whether the query reads a column of an enclosing query.
    pub correlated: bool,
}

/// What a subquery in an expression computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SubKind {
    Exists,
    /// A scalar subquery: its one row's one column (NULL for no row; 21000 for more).
    Scalar,
    /// `lhs op ANY (subquery)` (`IN` is `= ANY`).
    Any(CmpOp),
    /// `lhs op ALL (subquery)`.
    All(CmpOp),
    /// `ARRAY(subquery)`: the column's values as a one-dimensional array ({} for no rows).
    Array,
    /// `(a, b) op (subquery)`: the row (`lhs_row`) compared row-wise with the subquery's one
    /// row (NULL for no row; 21000 for more).
    RowCompare(CmpOp),
}

/// A subquery inside an expression.
#[derive(Clone, Debug)]
pub struct SubLink {
    pub kind: SubKind,
    pub lhs: Option<Scalar>,
    /// `(a, b) IN (subquery)`: the row compared with each of the subquery's rows (`lhs` is
    /// then None and the kind `Any(=)`); empty otherwise.
    pub lhs_row: Vec<Scalar>,
    pub plan: Arc<Node>,
    pub correlated: bool,
    /// The subquery's column type (of the scalar result).
    pub col_ty: Option<SqlType>,
}

impl SubLink {
    pub fn new(kind: SubKind, lhs: Option<Scalar>, q: BoundQuery, col_ty: Option<SqlType>) -> SubLink {
        SubLink { kind, lhs, lhs_row: Vec::new(), plan: Arc::new(q.node), correlated: q.correlated, col_ty }
    }

    /// The type of the expression's value.
    pub fn result_type(&self) -> Option<SqlType> {
        match self.kind {
            SubKind::Scalar => self.col_ty,
            SubKind::Array => self.col_ty.and_then(|t| t.array_of()),
            _ => Some(SqlType::new(TypeId::Bool)),
        }
    }

    /// The left operand of IN / ANY / ALL.
    pub fn lhs(&self) -> Option<&Scalar> {
        self.lhs.as_ref()
    }
}

/// The kind of a join.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
}

/// A join of two inputs; its rows are the left row followed by the right row.
#[derive(Clone, Debug)]
pub struct JoinNode {
    pub kind: JoinKind,
    pub left: Node,
    pub right: Node,
    /// Equality keys (left expression over the left row, right expression over the right
    /// row): a hash join when not empty, else a nested loop.
    pub keys: Vec<(Scalar, Scalar)>,
    /// The rest of the join condition, over the joined row.
    pub cond: Option<Scalar>,
    pub left_width: usize,
    pub right_width: usize,
    /// The right input reads the left row (LATERAL): it runs once per left row, with that row
    /// as its nearest outer row (a nested loop; only INNER and LEFT joins).
    pub lateral: bool,
    /// A hash join that hashes the left input and probes with the right (the planner hashes
    /// the smaller input; `sql::cost`). Rows are still the left's columns, then the right's.
    pub build_left: bool,
    /// A merge join: both inputs arrive sorted on their keys (ascending, NULLs last; the
    /// planner puts a Sort under each), and equal keys are matched in one pass.
    pub merge: bool,
    /// An index nested loop: the right input is a table scan whose index access takes its
    /// equality values from each left row (the `eq` expressions of its `Access::Index` are
    /// over the left row's columns); the keys are checked again on every pair.
    pub inner_index: bool,
    /// Which columns of the joined row its consumer and `cond` read (set by the planner's
    /// column pruning; empty: all). A hash join writes only these into the rows it emits;
    /// the others are NULL.
    pub used: Vec<bool>,
}

/// UNION / INTERSECT / EXCEPT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOpKind {
    Union,
    Intersect,
    Except,
}

/// A plan node (see the module doc).
#[derive(Clone, Debug)]
pub enum Node {
    /// One row of no columns (a SELECT without FROM).
    Unit,
    /// Rows given by expressions (VALUES).
    Values(Vec<Vec<Scalar>>, usize),
    /// A table's visible rows (sequential or index scan, with the conditions pushed into it).
    Scan(Box<dml::Plan>),
    Filter(Box<Node>, Scalar),
    Project(Box<Node>, Vec<Scalar>),
    Join(Box<JoinNode>),
    /// Grouping and aggregates: output is the group expressions' values, then the aggregates'.
    Agg(Box<Node>, Vec<Scalar>, Vec<AggCall>),
    Sort(Box<Node>, Vec<SortKey>),
    /// LIMIT / OFFSET (each a constant or parameter expression); with `FETCH ... WITH TIES`
    /// the ORDER BY keys (over the input's rows): rows equal to the last one counted in the
    /// limit under them are sent too.
    Limit(Box<Node>, Option<Scalar>, Option<Scalar>, Option<Vec<SortKey>>),
    /// The first row of each distinct value of the first `n` columns.
    Distinct(Box<Node>, usize),
    SetOp(SetOpKind, bool, Box<Node>, Box<Node>),
    /// Appends one column per window call.
    Window(Box<Node>, Vec<WinCall>),
    /// A WITH query's rows, computed once per statement.
    Cte(Arc<CteDef>),
    /// Set-returning functions in FROM (`sql::srf`): their rows zipped side by side (a
    /// shorter one padded with NULLs), then the ordinality when asked for.
    Function(Box<FunctionScan>),
    /// The rows of a recursive query's current iteration (`RecursiveUnion`): (id, width).
    WorkTable(usize, usize),
    /// A recursive query (see [`RecursiveUnion`]).
    RecursiveUnion(Box<RecursiveUnion>),
    /// Set-returning functions in a select list (`sql::srf`): each input row followed by one
    /// column per function, advancing the functions in lockstep.
    ProjectSet(Box<Node>, Vec<crate::sql::srf::SrfCall>),
    /// `FOR UPDATE` and the other row locks ([`lockrows`]): its input's rows end with a TID
    /// column, which it drops.
    LockRows(Box<lockrows::LockRows>),
}

/// A function scan: the calls, and whether `WITH ORDINALITY` adds a bigint column.
#[derive(Clone, Debug)]
pub struct FunctionScan {
    pub calls: Vec<crate::sql::srf::SrfCall>,
    pub ordinality: bool,
}

/// A WITH query.
#[derive(Debug)]
pub struct CteDef {
    pub name: String,
    /// Its column names.
    pub columns: Vec<String>,
    pub node: Node,
    pub width: usize,
    /// Reads columns of an enclosing query (its rows depend on the outer row: never cached).
    pub correlated: bool,
    /// WITH RECURSIVE: its rows stream from the recursion as they are made (a LIMIT above
    /// can end a recursion that would not end by itself), never cached.
    pub recursive: bool,
}

/// `WITH RECURSIVE`'s `non-recursive UNION [ALL] recursive` evaluation: the non-recursive
/// term's rows start the working table; the recursive term, reading the working table
/// ([`Node::WorkTable`]), runs until it adds no row. UNION drops rows already produced.
#[derive(Clone, Debug)]
pub struct RecursiveUnion {
    pub nonrec: Node,
    pub rec: Node,
    pub all: bool,
    /// The working table's id (what the recursive term's `WorkTable` reads).
    pub work: usize,
    pub width: usize,
}

impl Node {
    /// The number of columns of this node's rows.
    pub fn width(&self) -> usize {
        match self {
            Node::Unit => 0,
            Node::Values(_, w) => *w,
            Node::Scan(p) => p.types.len() + usize::from(p.tid_col),
            Node::Filter(i, _) | Node::Sort(i, _) | Node::Limit(i, ..) | Node::Distinct(i, _) => i.width(),
            Node::Project(_, e) => e.len(),
            Node::Join(j) => j.left_width + j.right_width,
            Node::Agg(_, g, a) => g.len() + a.len(),
            Node::SetOp(_, _, l, _) => l.width(),
            Node::Window(i, w) => i.width() + w.len(),
            Node::Cte(c) => c.width,
            Node::Function(f) => f.calls.iter().map(|c| c.width()).sum::<usize>() + usize::from(f.ordinality),
            Node::WorkTable(_, w) => *w,
            Node::RecursiveUnion(r) => r.width,
            Node::ProjectSet(i, calls) => i.width() + calls.len(),
            Node::LockRows(l) if l.targets.is_empty() => l.input.width() - 1,
            Node::LockRows(l) => l.input.width(),
        }
    }

    /// The tables this plan (and its subqueries) reads.
    pub fn tables(&self, out: &mut Vec<Arc<crate::catalog::Table>>) {
        let exprs = |e: &Scalar, out: &mut Vec<Arc<crate::catalog::Table>>| {
            e.visit(&mut |x| {
                if let Scalar::SubLink(l) = x {
                    l.plan.tables(out);
                }
            })
        };
        match self {
            Node::Unit => {}
            Node::Values(rows, _) => rows.iter().flatten().for_each(|e| exprs(e, out)),
            Node::Scan(p) => {
                out.push(p.table.clone());
                if let Some(f) = &p.filter {
                    exprs(f, out);
                }
            }
            Node::Filter(i, e) => {
                i.tables(out);
                exprs(e, out);
            }
            Node::Project(i, es) => {
                i.tables(out);
                es.iter().for_each(|e| exprs(e, out));
            }
            Node::Join(j) => {
                j.left.tables(out);
                j.right.tables(out);
                for (a, b) in &j.keys {
                    exprs(a, out);
                    exprs(b, out);
                }
                if let Some(c) = &j.cond {
                    exprs(c, out);
                }
            }
            Node::Agg(i, g, a) => {
                i.tables(out);
                g.iter().for_each(|e| exprs(e, out));
                for c in a {
                    c.args.iter().for_each(|e| exprs(e, out));
                    c.filter.iter().for_each(|e| exprs(e, out));
                    c.order.iter().for_each(|k| exprs(&k.expr, out));
                }
            }
            Node::Sort(i, k) => {
                i.tables(out);
                k.iter().for_each(|k| exprs(&k.expr, out));
            }
            Node::Limit(i, l, o, ties) => {
                i.tables(out);
                l.iter().chain(o.iter()).for_each(|e| exprs(e, out));
                ties.iter().flatten().for_each(|k| exprs(&k.expr, out));
            }
            Node::Distinct(i, _) => i.tables(out),
            Node::SetOp(_, _, l, r) => {
                l.tables(out);
                r.tables(out);
            }
            Node::Window(i, w) => {
                i.tables(out);
                for c in w {
                    c.args.iter().for_each(|e| exprs(e, out));
                    c.partition.iter().for_each(|e| exprs(e, out));
                    c.filter.iter().for_each(|e| exprs(e, out));
                    c.order.iter().for_each(|k| exprs(&k.expr, out));
                }
            }
            Node::Cte(c) => c.node.tables(out),
            Node::Function(f) => f.calls.iter().flat_map(|c| &c.args).for_each(|e| exprs(e, out)),
            Node::WorkTable(..) => {}
            Node::RecursiveUnion(r) => {
                r.nonrec.tables(out);
                r.rec.tables(out);
            }
            Node::ProjectSet(i, calls) => {
                i.tables(out);
                calls.iter().flat_map(|c| &c.args).for_each(|e| exprs(e, out));
            }
            Node::LockRows(l) => l.input.tables(out),
        }
    }

    /// Calls `f` on this node and every node below it, subqueries' plans and WITH queries
    /// included.
    pub fn visit_nodes(&self, f: &mut dyn FnMut(&Node)) {
        self.walk_nodes(f);
        // The subqueries in the tree's expressions (each visits its own).
        crate::sql::query::visit_exprs(self, &mut |e| {
            e.visit(&mut |x| {
                if let Scalar::SubLink(l) = x {
                    l.plan.visit_nodes(f);
                }
            })
        });
    }

    /// Calls `f` on this node and every node of its tree (not inside subqueries).
    fn walk_nodes(&self, f: &mut dyn FnMut(&Node)) {
        f(self);
        self.visit_children(&mut |c| c.walk_nodes(f));
    }

    /// Calls `f` on each input of this node (a WITH query's plan included; not subqueries).
    pub fn visit_children(&self, f: &mut dyn FnMut(&Node)) {
        match self {
            Node::Unit | Node::Values(..) | Node::Scan(_) | Node::Function(_) | Node::WorkTable(..) => {}
            Node::Filter(i, _)
            | Node::Project(i, _)
            | Node::Agg(i, ..)
            | Node::Sort(i, _)
            | Node::Limit(i, ..)
            | Node::Distinct(i, _)
            | Node::Window(i, _)
            | Node::ProjectSet(i, _) => f(i),
            Node::Join(j) => {
                f(&j.left);
                f(&j.right);
            }
            Node::SetOp(_, _, l, r) => {
                f(l);
                f(r);
            }
            Node::Cte(c) => f(&c.node),
            Node::RecursiveUnion(r) => {
                f(&r.nonrec);
                f(&r.rec);
            }
            Node::LockRows(l) => f(&l.input),
        }
    }

    /// The tables whose rows this plan or a subquery of it locks (its [`Node::LockRows`]),
    /// with the lock's strength.
    pub fn row_locked_tables(&self, out: &mut Vec<(Arc<crate::catalog::Table>, crate::txn::rowlock::RowLockMode)>) -> Result<()> {
        let mut bad = None;
        self.visit_nodes(&mut |n| {
            if let Node::LockRows(l) = n {
                if !l.targets.is_empty() {
                    out.extend(l.targets.iter().filter_map(|t| t.lock.map(|(m, _)| (t.table.clone(), m))));
                    return;
                }
                match lockrows::spine(&l.input) {
                    Ok((p, _)) => out.push((p.table.clone(), l.mode)),
                    Err(e) => bad = Some(e),
                }
            }
        });
        bad.map_or(Ok(()), Err)
    }
}

/// A hash table keyed by [`key_of`] bytes (grouping, hash joins, set operations), with a fast
/// non-cryptographic hasher seeded per table (std's SipHash costs more than the rest of a
/// grouped row's work). Look keys up by slice (`map.get(&key[..])`).
pub type KeyMap<V> = HashMap<Key, V, foldhash::fast::RandomState>;

/// A [`key_of`] key as a hash table stores it: keys of up to [`Key::INLINE`] bytes (one or two
/// integers, a date, a short string) in the table's own slot, so that comparing a probe with
/// an entry reads no other memory; longer keys on the heap.
///
/// Invariant: equality and hashing are those of the key's bytes (`[u8]`'s), whichever way it
/// is stored, so a table of `Key`s is looked up with a `&[u8]` ([`Borrow`](std::borrow::Borrow)).
#[derive(Clone, Debug)]
pub enum Key {
    Inline(u8, [u8; Key::INLINE]),
    Heap(Box<[u8]>),
}

impl Key {
    pub const INLINE: usize = 22;

    pub fn new(bytes: &[u8]) -> Key {
        if bytes.len() <= Key::INLINE {
            let mut b = [0u8; Key::INLINE];
            b[..bytes.len()].copy_from_slice(bytes);
            Key::Inline(bytes.len() as u8, b)
        } else {
            Key::Heap(bytes.into())
        }
    }

    #[inline]
    pub fn bytes(&self) -> &[u8] {
        match self {
            Key::Inline(n, b) => &b[..*n as usize],
            Key::Heap(b) => b,
        }
    }
}

impl PartialEq for Key {
    #[inline]
    fn eq(&self, other: &Key) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for Key {}

impl std::hash::Hash for Key {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.bytes().hash(state)
    }
}

impl std::borrow::Borrow<[u8]> for Key {
    #[inline]
    fn borrow(&self) -> &[u8] {
        self.bytes()
    }
}

/// Encodes values as a byte key that is equal exactly when the values are equal as
/// PostgreSQL's hashing operators see them: integers by value whatever their width, floats
/// with -0 = 0 and all NaNs one value, NULL as its own value (grouping and DISTINCT treat
/// NULLs as equal; joins check for NULL keys before they look a key up).
pub fn key_of(vals: &[Value], out: &mut Vec<u8>) {
    out.clear();
    for v in vals {
        key_one(v, out);
    }
}

/// An integer's [`key_of`] key by value, for tables that keep a single integer key apart
/// (NULL and other types: None). Two integers have equal key_of keys exactly when these are
/// equal, and an integer's key equals no other type's.
#[inline]
fn int_key(v: &Value) -> Option<i64> {
    match *v {
        Value::Int2(n) => Some(n.into()),
        Value::Int4(n) => Some(n.into()),
        Value::Int8(n) => Some(n),
        _ => None,
    }
}

/// Appends one value's key (see [`key_of`]); an array's key is its dimensions and its
/// elements' keys, so arrays are equal exactly when PostgreSQL's `array_eq` says so.
fn key_one(v: &Value, out: &mut Vec<u8>) {
    {
        match v {
            Value::Array(a) => {
                out.push(11);
                out.push(a.dims.len() as u8);
                for d in &a.dims {
                    out.extend_from_slice(&d.len.to_le_bytes());
                    out.extend_from_slice(&d.lower.to_le_bytes());
                }
                for item in &a.items {
                    key_one(item, out);
                }
            }
            // Fields' keys in order (two NULL fields equal, as record_eq has them); a char(n)
            // field without its padding.
            Value::Record(r) => {
                out.push(15);
                out.extend_from_slice(&(r.fields.len() as u32).to_le_bytes());
                let kinds = match r.ty.id {
                    TypeId::Record(k) => k.fields(),
                    _ => std::borrow::Cow::Owned(Vec::new()),
                };
                for (i, f) in r.fields.iter().enumerate() {
                    match f {
                        Value::Text(s) if kinds.get(i).is_some_and(|(_, t)| t.id == TypeId::Bpchar) => {
                            key_one(&Value::Text(s.trim_end_matches(' ').to_string()), out)
                        }
                        f => key_one(f, out),
                    }
                }
            }
            Value::Null => out.push(0),
            Value::Bool(b) => out.extend_from_slice(&[1, u8::from(*b)]),
            Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => {
                out.push(2);
                out.extend_from_slice(&expr::as_i64(v).unwrap_or(0).to_le_bytes());
            }
            Value::Float4(_) | Value::Float8(_) => {
                let f = expr::as_f64(v).unwrap_or(0.0);
                let f = if f == 0.0 {
                    0.0
                } else if f.is_nan() {
                    f64::NAN
                } else {
                    f
                };
                out.push(3);
                out.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            Value::Text(s) => {
                out.push(4);
                out.extend_from_slice(&(s.len() as u64).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            Value::Bytea(b) => {
                out.push(5);
                out.extend_from_slice(&(b.len() as u64).to_le_bytes());
                out.extend_from_slice(b);
            }
            Value::Date(d) => {
                out.push(6);
                out.extend_from_slice(&d.to_le_bytes());
            }
            Value::Timestamp(t) | Value::Timestamptz(t) => {
                out.push(7);
                out.extend_from_slice(&t.to_le_bytes());
            }
            Value::Oid(o) => {
                out.push(10);
                out.extend_from_slice(&o.to_le_bytes());
            }
            Value::Uuid(u) => {
                out.push(12);
                out.extend_from_slice(u);
            }
            // Equal jsonb values (1.0 and 1 as numbers) share the B-tree key.
            Value::Jsonb(j) => {
                out.push(14);
                let start = out.len();
                out.extend_from_slice(&[0; 4]);
                crate::types::jsonb::sort_key(&crate::types::jsonb::parse_stored(j), out);
                let n = (out.len() - start - 4) as u32;
                out[start..start + 4].copy_from_slice(&n.to_le_bytes());
            }
            // Equal spans ('1 mon' and '30 days') are equal, as interval_eq and interval_hash say.
            Value::Interval(i) => {
                out.push(13);
                out.extend_from_slice(&i.span().to_le_bytes());
            }
            Value::Numeric(n) => {
                // Equal values with different display scales (1.0, 1.00) get one key.
                let mut stored = Vec::new();
                n.encode_stored(&mut stored);
                out.push(9);
                let start = out.len();
                out.extend_from_slice(&[0; 4]);
                crate::types::Numeric::sort_key(&stored, out);
                let n = (out.len() - start - 4) as u32;
                out[start..start + 4].copy_from_slice(&n.to_le_bytes());
            }
            #[allow(unreachable_patterns)]
            other => {
                out.push(8);
                let text = other.to_text(&expr::value_type(other).unwrap_or(SqlType::new(TypeId::Text))).unwrap_or_default();
                out.extend_from_slice(&(text.len() as u64).to_le_bytes());
                out.extend_from_slice(text.as_bytes());
            }
        }
    }
}

/// An estimate of the memory a row takes (for work_mem accounting and EXPLAIN).
pub fn row_bytes(row: &[Value]) -> usize {
    std::mem::size_of::<Row>()
        + row
            .iter()
            .map(|v| {
                std::mem::size_of::<Value>()
                    + match v {
                        Value::Text(s) => s.len(),
                        Value::Bytea(b) => b.len(),
                        _ => 0,
                    }
            })
            .sum::<usize>()
}

/// Runs plans for one statement: the session, its snapshot, the parameters, and the results
/// of WITH queries and uncorrelated subqueries (computed once, invariant 4).
pub struct Exec<'a> {
    pub s: &'a Session,
    pub snap: Snapshot,
    pub params: &'a [Option<String>],
    cache: RefCell<HashMap<usize, Rc<Vec<Row>>>>,
    /// Recursive queries' working tables, by id.
    work: RefCell<HashMap<usize, Rc<Vec<Row>>>>,
    /// `work_mem` in bytes (sorts and hashes keep this much in memory).
    pub work_mem: usize,
    /// Per-node figures for EXPLAIN ANALYZE (keyed by the node's address), when collected.
    pub stats: Option<RefCell<HashMap<usize, NodeStats>>>,
    /// Temporary files for sorts and hashes past `work_mem`.
    pub temp: spill::TempSpace,
    /// While a multi-table LockRows node re-checks a row (`lockrows`, PostgreSQL's
    /// EvalPlanQual): for each of its lock slots, the one row that slot's scan gives (its
    /// columns, then its TID), or None where it gives none (the row was NULL-extended
    /// there). Scans of other slots (a subquery's own locking clause) are not affected.
    pub(crate) epq: RefCell<Option<EpqRows>>,
}

/// What one plan node did (EXPLAIN ANALYZE): rows pushed, runs, time to the first row and in
/// total, both without the time its consumers spent on its rows; the scans' own figures.
#[derive(Clone, Debug, Default)]
pub struct NodeStats {
    pub rows: u64,
    pub loops: u64,
    pub first_ns: Option<u64>,
    pub total_ns: u64,
    pub scans: Vec<crate::access::heap::ScanTrace>,
    /// Peak memory a sort or hash held (bytes, estimated).
    pub mem_bytes: u64,
    /// Bytes a sort or hash wrote to temporary files.
    pub disk_bytes: u64,
}

impl<'a> Exec<'a> {
    pub fn new(s: &'a Session, snap: Snapshot, params: &'a [Option<String>]) -> Exec<'a> {
        let temp = spill::TempSpace::new(s.shared.vfs.clone(), &s.shared.dir, s.temp_file_limit_kb());
        Exec {
            s,
            snap,
            params,
            cache: RefCell::new(HashMap::new()),
            work: RefCell::new(HashMap::new()),
            work_mem: s.work_mem_bytes() as usize,
            stats: None,
            temp,
            epq: RefCell::new(None),
        }
    }

    /// The row a lock slot's scan gives while a LockRows node re-checks a row: Some(row or
    /// none) for a scan with a slot during the re-check, None otherwise (scan the table).
    /// The row passed the scan's filter.
    pub(crate) fn epq_row(&self, p: &dml::Plan) -> Result<Option<Option<Row>>> {
        let Some(slot) = p.lock_slot else { return Ok(None) };
        let Some(rows) = self.epq.borrow().clone() else { return Ok(None) };
        let Some((_, row)) = rows.iter().find(|(s, _)| *s == slot) else { return Ok(None) };
        let Some(row) = row.clone() else { return Ok(Some(None)) };
        debug_assert!(p.tid_col && row.len() == p.types.len() + 1, "a slot's row holds its columns and TID");
        if let Some(w) = &p.filter {
            if !w.matches(&row[..p.types.len()], self.params)? {
                return Ok(Some(None));
            }
        }
        Ok(Some(Some(row)))
    }

    fn cx<'c>(&'c self, outer: &'c [&'c [Value]]) -> EvalCx<'c> {
        EvalCx { params: self.params, outer, runner: Some(self) }
    }

    /// Evaluates `e` on `row`.
    pub fn eval(&self, e: &Scalar, row: &[Value], outer: &[&[Value]]) -> Result<Value> {
        e.eval_cx(row, &self.cx(outer))
    }

    fn truth(&self, e: &Scalar, row: &[Value], outer: &[&[Value]]) -> Result<bool> {
        Ok(self.eval(e, row, outer)? == Value::Bool(true))
    }

    /// Runs `node`, pushing each row to `sink`; `outer` holds the current rows of enclosing
    /// queries (innermost first). Returns `Stop` if the sink stopped it.
    pub fn run(&self, node: &Node, outer: &[&[Value]], sink: &mut dyn FnMut(&[Value]) -> Result<Flow>) -> Result<Flow> {
        let Some(stats) = &self.stats else { return self.run_node(node, outer, sink) };
        // A LockRows re-check's runs are not the plan's (PostgreSQL runs them in a copy).
        if self.epq.borrow().is_some() {
            return self.run_node(node, outer, sink);
        }
        let t0 = std::time::Instant::now();
        let (mut rows, mut first, mut in_sink) = (0u64, None, 0u64);
        let mut counted = |r: &[Value]| {
            rows += 1;
            let t = std::time::Instant::now();
            if first.is_none() {
                first = Some((t - t0).as_nanos() as u64 - in_sink);
            }
            let f = sink(r);
            in_sink += t.elapsed().as_nanos() as u64;
            f
        };
        let (r, traces) = if matches!(node, Node::Scan(_)) {
            crate::access::heap::traced(|| self.run_node(node, outer, &mut counted))
        } else {
            (self.run_node(node, outer, &mut counted), Vec::new())
        };
        let total = (t0.elapsed().as_nanos() as u64).saturating_sub(in_sink);
        let mut m = stats.borrow_mut();
        let st = m.entry(node as *const Node as usize).or_default();
        st.rows += rows;
        st.loops += 1;
        st.first_ns = st.first_ns.or(first);
        st.total_ns += total;
        st.scans.extend(traces);
        r
    }

    /// Records one run of `node` that did not go through [`Exec::run`] (the inner scan of an
    /// index nested loop), for EXPLAIN ANALYZE.
    pub(crate) fn note_loop(&self, node: &Node, rows: u64, first_ns: Option<u64>, total_ns: u64) {
        if let (Some(stats), false) = (&self.stats, self.epq.borrow().is_some()) {
            let mut m = stats.borrow_mut();
            let st = m.entry(node as *const Node as usize).or_default();
            st.rows += rows;
            st.loops += 1;
            st.first_ns = st.first_ns.or(first_ns);
            st.total_ns += total_ns;
        }
    }

    /// Records a sort's or hash's memory for EXPLAIN ANALYZE.
    pub(crate) fn note_mem(&self, node: &Node, bytes: u64) {
        if let Some(stats) = &self.stats {
            let mut m = stats.borrow_mut();
            let st = m.entry(node as *const Node as usize).or_default();
            st.mem_bytes = st.mem_bytes.max(bytes);
        }
    }

    /// Records what a sort or hash wrote to temporary files, for EXPLAIN ANALYZE.
    pub(crate) fn note_disk(&self, node: &Node, bytes: u64) {
        if let Some(stats) = &self.stats {
            let mut m = stats.borrow_mut();
            let st = m.entry(node as *const Node as usize).or_default();
            st.disk_bytes = st.disk_bytes.max(bytes);
        }
    }

    fn run_node(&self, node: &Node, outer: &[&[Value]], sink: &mut dyn FnMut(&[Value]) -> Result<Flow>) -> Result<Flow> {
        match node {
            Node::Unit => sink(&[]),
            Node::Values(rows, _) => {
                let mut out = Vec::new();
                for r in rows {
                    out.clear();
                    for e in r {
                        out.push(self.eval(e, &[], outer)?);
                    }
                    if let Flow::Stop = sink(&out)? {
                        return Ok(Flow::Stop);
                    }
                }
                Ok(Flow::Continue)
            }
            Node::Scan(p) => {
                if let Some(one) = self.epq_row(p)? {
                    return match one {
                        Some(row) => sink(&row),
                        None => Ok(Flow::Continue),
                    };
                }
                let mut stopped = false;
                let mut with_tid = Vec::new();
                p.for_each(self.s, &self.snap, self.params, |tid, row| {
                    let f = if p.tid_col {
                        with_tid.clear();
                        with_tid.extend_from_slice(row);
                        with_tid.push(dml::tid_value(tid));
                        sink(&with_tid)?
                    } else {
                        sink(row)?
                    };
                    stopped = matches!(f, Flow::Stop);
                    Ok(f)
                })?;
                Ok(if stopped { Flow::Stop } else { Flow::Continue })
            }
            Node::Filter(input, cond) => {
                self.run(input, outer, &mut |row| if self.truth(cond, row, outer)? { sink(row) } else { Ok(Flow::Continue) })
            }
            Node::Project(input, exprs) => {
                let mut out = Vec::with_capacity(exprs.len());
                self.run(input, outer, &mut |row| {
                    out.clear();
                    for e in exprs {
                        out.push(self.eval(e, row, outer)?);
                    }
                    sink(&out)
                })
            }
            Node::Join(j) => join::run(self, node, j, outer, sink),
            Node::LockRows(l) => lockrows::run(self, l, outer, sink),
            Node::Agg(input, group, aggs) => agg::run(self, node, input, group, aggs, outer, sink),
            Node::Sort(input, keys) => sort::run(self, node, input, keys, outer, sink),
            Node::Limit(input, limit, offset, ties) => {
                let lim = match limit {
                    None => None,
                    Some(e) => match self.eval(e, &[], outer)? {
                        Value::Null if ties.is_some() => {
                            return Err(PgError::new("2201W", "row count cannot be null in FETCH FIRST ... WITH TIES clause"));
                        }
                        Value::Null => None,
                        v => {
                            let n = expr::as_i64(&v)
                                .ok_or_else(|| PgError::new(sqlstate::DATATYPE_MISMATCH, "argument of LIMIT must be type bigint"))?;
                            if n < 0 {
                                return Err(PgError::new("2201W", "LIMIT must not be negative"));
                            }
                            Some(n as u64)
                        }
                    },
                };
                let off = match offset {
                    None => 0,
                    Some(e) => match self.eval(e, &[], outer)? {
                        Value::Null => 0,
                        v => {
                            let n = expr::as_i64(&v)
                                .ok_or_else(|| PgError::new(sqlstate::DATATYPE_MISMATCH, "argument of OFFSET must be type bigint"))?;
                            if n < 0 {
                                return Err(PgError::new("2201X", "OFFSET must not be negative"));
                            }
                            n as u64
                        }
                    },
                };
                if lim == Some(0) {
                    return Ok(Flow::Continue);
                }
                let (mut seen, mut sent, mut sink_stopped) = (0u64, 0u64, false);
                // WITH TIES: the sort key of the last row inside the limit.
                let mut last_key: Option<Vec<Value>> = None;
                let bpchar = ties.as_ref().map(|k| sort::bpchar_keys(k)).unwrap_or_default();
                let key_of_row = |row: &[Value], keys: &[SortKey]| -> Result<Vec<Value>> {
                    keys.iter().zip(&bpchar).map(|(k, &b)| Ok(sort::sort_value(self.eval(&k.expr, row, outer)?, b))).collect()
                };
                self.run(input, outer, &mut |row| {
                    if sink_stopped {
                        return Ok(Flow::Stop);
                    }
                    if lim.is_some_and(|l| sent >= l) {
                        // Past the limit: only a tie of the last row counted goes through; an
                        // input that does not stop when told (a set operation's next arm)
                        // gets nothing more.
                        let (Some(keys), Some(last)) = (ties, &last_key) else { return Ok(Flow::Stop) };
                        if sort::compare_keys(&key_of_row(row, keys)?, last, keys) != std::cmp::Ordering::Equal {
                            return Ok(Flow::Stop);
                        }
                        if let Flow::Stop = sink(row)? {
                            sink_stopped = true;
                            return Ok(Flow::Stop);
                        }
                        return Ok(Flow::Continue);
                    }
                    seen += 1;
                    if seen <= off {
                        return Ok(Flow::Continue);
                    }
                    sent += 1;
                    if let Flow::Stop = sink(row)? {
                        sink_stopped = true;
                        return Ok(Flow::Stop);
                    }
                    if lim.is_some_and(|l| sent >= l) {
                        match ties {
                            Some(keys) => last_key = Some(key_of_row(row, keys)?),
                            None => return Ok(Flow::Stop),
                        }
                    }
                    Ok(Flow::Continue)
                })?;
                // Reaching the limit stops the input, not the caller; the caller's own stop
                // goes up.
                Ok(if sink_stopped { Flow::Stop } else { Flow::Continue })
            }
            Node::Distinct(input, n) => {
                let mut seen = std::collections::HashSet::new();
                let mut key = Vec::new();
                self.run(input, outer, &mut |row| {
                    key_of(&row[..*n], &mut key);
                    if seen.insert(key.clone()) {
                        sink(row)
                    } else {
                        Ok(Flow::Continue)
                    }
                })
            }
            Node::SetOp(kind, all, l, r) => self.set_op(*kind, *all, l, r, outer, sink),
            Node::Window(input, calls) => window::run(self, input, calls, outer, sink),
            Node::Cte(def) if def.recursive || def.correlated => self.run(&def.node, outer, sink),
            Node::WorkTable(id, _) => {
                let rows = self.work.borrow().get(id).cloned().unwrap_or_default();
                for r in rows.iter() {
                    if let Flow::Stop = sink(r)? {
                        return Ok(Flow::Stop);
                    }
                }
                Ok(Flow::Continue)
            }
            Node::RecursiveUnion(r) => self.recursive_union(r, outer, sink),
            Node::Cte(def) => {
                let rows = self.cached(Arc::as_ptr(def) as *const u8 as usize, &def.node, outer)?;
                for r in rows.iter() {
                    if let Flow::Stop = sink(r)? {
                        return Ok(Flow::Stop);
                    }
                }
                Ok(Flow::Continue)
            }
            Node::Function(f) => {
                let mut ord = 0i64;
                let mut emit = |mut row: Row| -> Result<Flow> {
                    if f.ordinality {
                        ord += 1;
                        row.push(Value::Int8(ord));
                    }
                    sink(&row)
                };
                if let [call] = f.calls.as_slice() {
                    let args = self.eval_args(&call.args, &[], outer)?;
                    return crate::sql::srf::rows(call, &args, &mut emit);
                }
                let sets = self.srf_sets(&f.calls, &[], outer)?;
                zip_sets(&f.calls, &sets, &[], &mut emit)
            }
            Node::ProjectSet(input, calls) => self.run(input, outer, &mut |row| {
                let base = row.to_vec();
                if let [call] = calls.as_slice() {
                    let args = self.eval_args(&call.args, row, outer)?;
                    return crate::sql::srf::rows(call, &args, &mut |vals| {
                        let mut out = base.clone();
                        out.extend(vals);
                        sink(&out)
                    });
                }
                let sets = self.srf_sets(calls, row, outer)?;
                zip_sets(calls, &sets, &base, &mut |r| sink(&r))
            }),
        }
    }

    /// Runs a recursive query: rows go to `sink` as each iteration makes them. The
    /// recursion ends when an iteration adds no row (or the sink stops it); a recursion that
    /// never ends is ended by a cancel, as in PostgreSQL.
    fn recursive_union(&self, r: &RecursiveUnion, outer: &[&[Value]], sink: &mut dyn FnMut(&[Value]) -> Result<Flow>) -> Result<Flow> {
        let mut seen: KeyMap<()> = KeyMap::default();
        let mut key = Vec::new();
        let mut working: Vec<Row> = Vec::new();
        let mut stopped = false;
        let mut take = |row: &[Value], working: &mut Vec<Row>| -> Result<Flow> {
            if !r.all {
                key_of(row, &mut key);
                if seen.insert(Key::new(&key), ()).is_some() {
                    return Ok(Flow::Continue);
                }
            }
            working.push(row.to_vec());
            sink(row)
        };
        self.run(&r.nonrec, outer, &mut |row| {
            let f = take(row, &mut working)?;
            stopped = matches!(f, Flow::Stop);
            Ok(f)
        })?;
        while !stopped && !working.is_empty() {
            crate::interrupt::check_for_interrupts()?;
            self.work.borrow_mut().insert(r.work, Rc::new(std::mem::take(&mut working)));
            let mut next = Vec::new();
            self.run(&r.rec, outer, &mut |row| {
                let f = take(row, &mut next)?;
                stopped = matches!(f, Flow::Stop);
                Ok(f)
            })?;
            working = next;
        }
        self.work.borrow_mut().remove(&r.work);
        Ok(if stopped { Flow::Stop } else { Flow::Continue })
    }

    fn eval_args(&self, args: &[Scalar], row: &[Value], outer: &[&[Value]]) -> Result<Vec<Value>> {
        args.iter().map(|a| self.eval(a, row, outer)).collect()
    }

    /// Every row of each call (several set-returning functions advance together).
    fn srf_sets(&self, calls: &[crate::sql::srf::SrfCall], row: &[Value], outer: &[&[Value]]) -> Result<Vec<Vec<Row>>> {
        let mut sets = Vec::with_capacity(calls.len());
        for c in calls {
            let args = self.eval_args(&c.args, row, outer)?;
            let mut rows = Vec::new();
            crate::sql::srf::rows(c, &args, &mut |r| {
                rows.push(r);
                Ok(Flow::Continue)
            })?;
            sets.push(rows);
        }
        Ok(sets)
    }

    /// All rows of `node` (materialized).
    pub fn collect(&self, node: &Node, outer: &[&[Value]]) -> Result<Vec<Row>> {
        let mut rows = Vec::new();
        self.run(node, outer, &mut |r| {
            rows.push(r.to_vec());
            Ok(Flow::Continue)
        })?;
        Ok(rows)
    }

    /// The rows of `node`, computed once per statement under `id`.
    fn cached(&self, id: usize, node: &Node, outer: &[&[Value]]) -> Result<Rc<Vec<Row>>> {
        if let Some(r) = self.cache.borrow().get(&id) {
            return Ok(r.clone());
        }
        let rows = Rc::new(self.collect(node, outer)?);
        self.cache.borrow_mut().insert(id, rows.clone());
        Ok(rows)
    }

    fn set_op(
        &self,
        kind: SetOpKind,
        all: bool,
        l: &Node,
        r: &Node,
        outer: &[&[Value]],
        sink: &mut dyn FnMut(&[Value]) -> Result<Flow>,
    ) -> Result<Flow> {
        let mut key = Vec::new();
        match kind {
            SetOpKind::Union if all => {
                if let Flow::Stop = self.run(l, outer, sink)? {
                    return Ok(Flow::Stop);
                }
                self.run(r, outer, sink)
            }
            SetOpKind::Union => {
                let mut seen = std::collections::HashSet::new();
                let mut emit = |row: &[Value]| {
                    key_of(row, &mut key);
                    if seen.insert(key.clone()) {
                        sink(row)
                    } else {
                        Ok(Flow::Continue)
                    }
                };
                if let Flow::Stop = self.run(l, outer, &mut emit)? {
                    return Ok(Flow::Stop);
                }
                self.run(r, outer, &mut emit)
            }
            SetOpKind::Intersect | SetOpKind::Except => {
                // Count the right side's rows per value, then walk the left side.
                let mut counts: KeyMap<i64> = KeyMap::default();
                self.run(r, outer, &mut |row| {
                    key_of(row, &mut key);
                    *counts.entry(Key::new(&key)).or_insert(0) += 1;
                    Ok(Flow::Continue)
                })?;
                let mut emitted: std::collections::HashSet<Vec<u8>> = std::collections::HashSet::new();
                self.run(l, outer, &mut |row| {
                    key_of(row, &mut key);
                    let c = counts.get_mut(&key[..]);
                    let keep = match (kind, all) {
                        (SetOpKind::Intersect, true) => match c {
                            Some(n) if *n > 0 => {
                                *n -= 1;
                                true
                            }
                            _ => false,
                        },
                        (SetOpKind::Intersect, false) => c.is_some() && emitted.insert(key.clone()),
                        (_, true) => match c {
                            Some(n) if *n > 0 => {
                                *n -= 1;
                                false
                            }
                            _ => true,
                        },
                        (_, false) => c.is_none() && emitted.insert(key.clone()),
                    };
                    if keep {
                        sink(row)
                    } else {
                        Ok(Flow::Continue)
                    }
                })
            }
        }
    }
}

impl SubRunner for Exec<'_> {
    fn session(&self) -> Option<&crate::session::Session> {
        Some(self.s)
    }

    fn sublink(&self, link: &SubLink, row: &[Value], cx: &EvalCx<'_>) -> Result<Value> {
        let mut stack: Vec<&[Value]> = Vec::with_capacity(cx.outer.len() + 1);
        stack.push(row);
        stack.extend_from_slice(cx.outer);
        let lhs = match &link.lhs {
            Some(e) => Some(e.eval_cx(row, cx)?),
            None => None,
        };
        let id = Arc::as_ptr(&link.plan) as *const u8 as usize;
        match link.kind {
            SubKind::Exists => {
                if !link.correlated {
                    let rows = self.cached_first(id, &link.plan, &stack)?;
                    return Ok(Value::Bool(!rows.is_empty()));
                }
                let mut found = false;
                self.run(&link.plan, &stack, &mut |_| {
                    found = true;
                    Ok(Flow::Stop)
                })?;
                Ok(Value::Bool(found))
            }
            SubKind::Scalar => {
                let rows =
                    if link.correlated { Rc::new(self.first_two(&link.plan, &stack)?) } else { self.cached_first(id, &link.plan, &stack)? };
                if rows.len() > 1 {
                    return Err(PgError::new("21000", "more than one row returned by a subquery used as an expression"));
                }
                Ok(rows.first().map(|r| r[0].clone()).unwrap_or(Value::Null))
            }
            SubKind::Array => {
                let rows = if link.correlated { Rc::new(self.collect(&link.plan, &stack)?) } else { self.cached(id, &link.plan, &stack)? };
                let ty = link.result_type().ok_or_else(|| PgError::internal("ARRAY(subquery) without an array type"))?;
                let items: Vec<Value> = rows.iter().map(|r| r[0].clone()).collect();
                if items.iter().any(|v| matches!(v, Value::Array(_))) {
                    return crate::sql::array::eval(crate::sql::array::ArrayFunc::CtorNested, &items, &ty);
                }
                Ok(Value::Array(Box::new(crate::types::Array::from_items(ty, items))))
            }
            SubKind::RowCompare(op) => {
                let xs = link.lhs_row.iter().map(|e| e.eval_cx(row, cx)).collect::<Result<Vec<_>>>()?;
                let rows =
                    if link.correlated { Rc::new(self.first_two(&link.plan, &stack)?) } else { self.cached_first(id, &link.plan, &stack)? };
                if rows.len() > 1 {
                    return Err(PgError::new("21000", "more than one row returned by a subquery used as an expression"));
                }
                let Some(r) = rows.first() else { return Ok(Value::Null) };
                row_compare(op, &xs, r)
            }
            SubKind::Any(op) | SubKind::All(op) if !link.lhs_row.is_empty() => {
                let any = matches!(link.kind, SubKind::Any(_));
                let xs = link.lhs_row.iter().map(|e| e.eval_cx(row, cx)).collect::<Result<Vec<_>>>()?;
                let rows = if link.correlated { Rc::new(self.collect(&link.plan, &stack)?) } else { self.cached(id, &link.plan, &stack)? };
                let mut saw_null = false;
                for r in rows.iter() {
                    // Each row compared row-wise (`row_compare`), then combined as ANY / ALL
                    // combine single comparisons.
                    let holds = match row_compare(op, &xs, r)? {
                        Value::Bool(h) => h,
                        _ => {
                            saw_null = true;
                            continue;
                        }
                    };
                    if any && holds {
                        return Ok(Value::Bool(true));
                    }
                    if !any && !holds {
                        return Ok(Value::Bool(false));
                    }
                }
                Ok(if saw_null { Value::Null } else { Value::Bool(!any) })
            }
            SubKind::Any(op) | SubKind::All(op) => {
                let any = matches!(link.kind, SubKind::Any(_));
                let x = lhs.unwrap_or(Value::Null);
                let rows = if link.correlated { Rc::new(self.collect(&link.plan, &stack)?) } else { self.cached(id, &link.plan, &stack)? };
                // Three-valued: ANY is true if some comparison is true, else NULL if some is
                // NULL, else false; ALL mirrors it.
                let mut saw_null = false;
                for r in rows.iter() {
                    let y = &r[0];
                    if x == Value::Null || *y == Value::Null {
                        saw_null = true;
                        continue;
                    }
                    let holds = cmp_holds(op, expr::compare(&x, y)?);
                    if any && holds {
                        return Ok(Value::Bool(true));
                    }
                    if !any && !holds {
                        return Ok(Value::Bool(false));
                    }
                }
                Ok(if saw_null { Value::Null } else { Value::Bool(!any) })
            }
        }
    }
}

/// PostgreSQL's row-wise comparison of two rows of values (SQL's, NULL-aware): `=` is false
/// at the first unequal pair, else NULL if some pair has a NULL, else true (`<>` its
/// negation); `<`, `<=`, `>`, `>=` are decided by the first pair that is not equal, NULL if
/// that pair has a NULL, and by `=` when every pair is equal.
pub fn row_compare(op: CmpOp, xs: &[Value], ys: &[Value]) -> Result<Value> {
    let mut null = false;
    for (x, y) in xs.iter().zip(ys) {
        if *x == Value::Null || *y == Value::Null {
            if !matches!(op, CmpOp::Eq | CmpOp::Ne) {
                return Ok(Value::Null);
            }
            null = true;
            continue;
        }
        let o = expr::compare(x, y)?;
        if o != std::cmp::Ordering::Equal {
            return Ok(Value::Bool(cmp_holds(op, o)));
        }
    }
    Ok(if null { Value::Null } else { Value::Bool(matches!(op, CmpOp::Eq | CmpOp::Le | CmpOp::Ge)) })
}

/// Rows of several set-returning functions side by side after `base`: as many rows as the
/// longest, the others' columns NULL once they run out.
fn zip_sets(
    calls: &[crate::sql::srf::SrfCall],
    sets: &[Vec<Row>],
    base: &[Value],
    emit: &mut dyn FnMut(Row) -> Result<Flow>,
) -> Result<Flow> {
    let n = sets.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..n {
        let mut row = base.to_vec();
        for (c, set) in calls.iter().zip(sets) {
            match set.get(i) {
                Some(r) => row.extend(r.iter().cloned()),
                None => row.extend(std::iter::repeat_n(Value::Null, c.width())),
            }
        }
        if let Flow::Stop = emit(row)? {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

fn cmp_holds(op: CmpOp, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        CmpOp::Eq => o == Equal,
        CmpOp::Ne => o != Equal,
        CmpOp::Lt => o == Less,
        CmpOp::Le => o != Greater,
        CmpOp::Gt => o == Greater,
        CmpOp::Ge => o != Less,
    }
}

impl Exec<'_> {
    /// Up to two rows (enough to tell a scalar subquery's one row from too many).
    fn first_two(&self, node: &Node, outer: &[&[Value]]) -> Result<Vec<Row>> {
        let mut rows = Vec::new();
        self.run(node, outer, &mut |r| {
            rows.push(r.to_vec());
            Ok(if rows.len() >= 2 { Flow::Stop } else { Flow::Continue })
        })?;
        Ok(rows)
    }

    fn cached_first(&self, id: usize, node: &Node, outer: &[&[Value]]) -> Result<Rc<Vec<Row>>> {
        if let Some(r) = self.cache.borrow().get(&id) {
            return Ok(r.clone());
        }
        let rows = Rc::new(self.first_two(node, outer)?);
        self.cache.borrow_mut().insert(id, rows.clone());
        Ok(rows)
    }
}

/// The text of a value for output (None = NULL) in the column's type.
pub fn output_text(v: &Value, ty: &SqlType) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Text(s) => Some(s.clone()),
        _ => v.to_text(&expr::value_type(v).filter(|vt| vt.id != ty.id).unwrap_or(*ty)),
    }
}

/// Locks every table `node` reads (invariant 3). A plan that locks rows (`lockrows`) is
/// refused in a READ ONLY transaction (25006, as PostgreSQL's) unless every table whose rows
/// it locks is temporary, takes ROW SHARE on each such table, and gets the transaction an
/// xid to hold them by.
pub fn lock_tables(s: &mut Session, node: &Node) -> Result<()> {
    let mut tables = Vec::new();
    node.tables(&mut tables);
    for t in tables {
        s.lock_table(&t, crate::lock::LockMode::AccessShare)?;
    }
    let mut locked = Vec::new();
    node.row_locked_tables(&mut locked)?;
    if let Some((_, mode)) = locked.first() {
        crate::sql::query::check_lock_rows_placement(node)?;
        let temp = locked.iter().all(|(t, _)| t.is_temp());
        s.check_writable_unless_temp(&format!("SELECT {}", mode.clause()), temp)?;
        for (t, _) in &locked {
            s.lock_table(t, crate::lock::LockMode::RowShare)?;
        }
        s.xid();
    }
    Ok(())
}
