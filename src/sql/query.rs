//! The query planner: a parsed query (sqlparser's `Query`) bound against the catalog and
//! turned into an executor plan (`exec::Node`).
//!
//! Binding follows PostgreSQL's analysis order for one SELECT block: FROM (tables, WITH
//! queries, subqueries, joins), WHERE, GROUP BY, aggregates, HAVING, window functions, the
//! select list, DISTINCT [ON], ORDER BY, LIMIT / OFFSET. Names in ORDER BY resolve to output
//! columns first (a bare name or an ordinal), then to input columns; names in GROUP BY to
//! input columns first, then to output columns. Set operations unify their columns' types as
//! PostgreSQL's UNION does.
//!
//! Planning decisions (simple, without statistics yet):
//! - each WHERE conjunct is pushed as far down the join tree as the join kinds allow (through
//!   inner joins; into the preserved side of an outer join), into the table scan itself when
//!   it reads one table, where `dml::Plan` picks an index for it;
//! - an equality between the two sides of a join (same type family) makes the join a hash
//!   join (the right side is built); otherwise a nested loop;
//! - a conjunct holding a subquery or an outer reference stays where it was written (its
//!   subquery reads the row layout of that level).
//!
//! Invariants:
//! 1. Every clause of `Query` and `Select` is destructured here without `..`: a field is
//!    either implemented or refused with 0A000 (the structural gate for queries).
//! 2. A column reference in a grouped query outside an aggregate must be a GROUP BY
//!    expression (42803), as PostgreSQL requires; it is never taken from an arbitrary row.

use super::expr::{self, type_of, Binder, Collect, Scalar, Scope, ScopeCol, SubqueryBinder};
use super::func::{common_type, to_type};
use crate::access::heap::Flow;
use crate::catalog::fold_ident;
use crate::error::{sqlstate, PgError, Result};
use crate::exec::lockrows::LockWait;
use crate::exec::{self, BoundQuery, CteDef, JoinKind, JoinNode, Node, OutCol, SetOpKind, SortKey};
use crate::session::{QueryResult, Session};
use crate::txn::rowlock::RowLockMode;
use crate::types::{SqlType, TypeId, Value};
use sqlparser::ast::{
    Distinct, Expr, GroupByExpr, JoinConstraint, JoinOperator, LimitClause, OrderByKind, Query, Select, SelectFlavor, SelectItem, SetExpr,
    SetOperator, SetQuantifier, TableFactor, TableWithJoins, Value as AstValue,
};
use std::cell::RefCell;
use std::sync::Arc;

use super::check::{need, refuse};

/// A WITH query in scope: its name, plan, columns, and how many enclosing query levels the
/// query that defined it had (a correlated WITH query is read only at that level).
type CteEntry = (String, Arc<CteDef>, Vec<OutCol>, usize);

/// Rewrites an expression into a later stage's row layout.
type Rewrite<'a> = Box<dyn FnMut(&Scalar) -> Result<Scalar> + 'a>;

/// Binds queries of one statement: the session's catalog, the WITH queries in scope.
pub struct Planner<'a> {
    s: &'a Session,
    ctes: RefCell<Vec<CteEntry>>,
    now_us: Option<i64>,
    now_used: std::cell::Cell<bool>,
    /// The views the statement named (their oids), expanded as subqueries.
    views: RefCell<Vec<u32>>,
    /// How many views' stored queries are being bound: their relation names mean permanent
    /// relations only (a view never reads a temporary one, so a session's temporary table of
    /// the same name does not stand in for it).
    in_view: std::cell::Cell<usize>,
    /// How many times the recursive term being bound named its own query.
    work_refs: std::cell::Cell<usize>,
    /// How many outer joins' nullable sides the FROM item being bound is inside (within the
    /// recursive term being bound), where it may not name its own query.
    nullable: std::cell::Cell<usize>,
    /// Inside a side of INTERSECT ALL / EXCEPT [ALL] where the recursive term being bound may
    /// not name its own query: which.
    setop: std::cell::Cell<Option<&'static str>>,
    /// How many times the FROM clause of the SELECT being bound named its recursive query
    /// itself (not through a subquery), where aggregates are refused.
    level_refs: std::cell::Cell<usize>,
    /// The next working-table id.
    next_work: std::cell::Cell<usize>,
    /// The lock slots of the SELECT being bound when its locking clause covers several FROM
    /// items (`exec::lockrows`): set by `query` for its own FROM list only.
    lock_slots: RefCell<Option<LockSlots>>,
    /// The next lock slot: slots are numbered across the statement, so that a subquery's own
    /// locking clause never shares one with the query around it.
    next_lock_slot: std::cell::Cell<usize>,
}

/// A multi-item `FOR UPDATE` query's table scans (`exec::lockrows`, module doc).
#[derive(Default)]
struct LockSlots {
    /// The slot, the table and the name FROM knows it by, in FROM order.
    tables: Vec<(usize, Arc<crate::catalog::Table>, String)>,
    /// A FROM item other than a table (no slot): what it is, for the refusal.
    other: Option<&'static str>,
    /// Per slot whose TID the select list carries: (slot, column of the projection, on the
    /// nullable side of an outer join).
    cols: Vec<(usize, usize, bool)>,
}

/// The hidden column holding a lock slot's TID.
const LOCK_SLOT_COL: &str = "\u{0}lock";

/// The name a working table's `CteDef` carries (the user's name is the CTE entry's).
const WORK_TABLE_MARK: &str = "\u{0}worktable";

/// Whether a WITH query names `name` anywhere in its FROM clauses (it is recursive).
/// `(a JOIN b ...) AS j [(c1, ...)]`: the join's output columns are `j`'s (renamed by the
/// list, in order), and the names inside it are no longer visible outside. The input copies
/// of USING columns, which the merged ones stand for, become unreachable by any name.
fn alias_join(scope: &mut Scope, a: &sqlparser::ast::TableAlias) -> Result<()> {
    need(a.columns.iter().all(|c| c.data_type.is_none()), "a column definition list on a join")?;
    let name = fold_ident(&a.name);
    let visible = scope.cols.iter().filter(|c| !c.hidden).count();
    if a.columns.len() > visible {
        return Err(PgError::new(
            "42P10",
            format!("join expression \"{name}\" has {visible} columns available but {} columns specified", a.columns.len()),
        ));
    }
    let mut k = 0;
    for c in &mut scope.cols {
        c.whole_row = false;
        if c.hidden {
            c.rel = None;
            continue;
        }
        c.rel = Some(name.clone());
        if let Some(n) = a.columns.get(k) {
            c.name = fold_ident(&n.name);
        }
        k += 1;
    }
    Ok(())
}

fn outer_join_recursion(name: &str) -> PgError {
    PgError::new("42P19", format!("recursive reference to query \"{name}\" must not appear within an outer join"))
}

/// One more level of a depth counter while it lives.
struct Depth<'a>(&'a std::cell::Cell<usize>);

impl<'a> Depth<'a> {
    fn enter(c: &'a std::cell::Cell<usize>) -> Depth<'a> {
        c.set(c.get() + 1);
        Depth(c)
    }
}

impl Drop for Depth<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

fn names_itself(q: &Query, name: &str) -> bool {
    use sqlparser::ast::{visit_relations, ObjectName};
    let mut found = false;
    let _ = visit_relations(q, |r: &ObjectName| {
        if r.0.len() == 1 && r.0[0].as_ident().map(fold_ident).as_deref() == Some(name) {
            found = true;
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    found
}

impl SubqueryBinder for Planner<'_> {
    fn subquery(&self, q: &Query, outer: &[&Scope]) -> Result<BoundQuery> {
        self.query(q, outer)
    }

    fn session(&self) -> Option<&Session> {
        Some(self.s)
    }
}

/// A FROM item being planned: a planned node with its columns, or a join of two (kept apart
/// so that WHERE conjuncts can be pushed into its inputs).
enum Rel {
    /// A planned item, its width, and whether it is LATERAL: it reads the current row of the
    /// items to its left (as the nearest outer row), so it runs once per such row.
    Leaf(Node, usize, bool),
    Join(JoinKind, Box<Rel>, Box<Rel>, Vec<Scalar>),
}

impl Rel {
    fn width(&self) -> usize {
        match self {
            Rel::Leaf(_, w, _) => *w,
            Rel::Join(_, l, r, _) => l.width() + r.width(),
        }
    }

    /// Whether this item reads the row of the items to its left: a LATERAL leaf, or a join
    /// whose first item is one (it was bound with the left items as its outer scope).
    fn leftmost_lateral(&self) -> bool {
        match self {
            Rel::Leaf(_, _, l) => *l,
            Rel::Join(_, l, _, _) => l.leftmost_lateral(),
        }
    }
}

/// Which of a join's inputs an expression reads (columns of `[0, lw)` are the left's).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    None,
    Left,
    Right,
    Both,
}

/// Whether an expression can be moved to another row layout: no subquery, no outer
/// reference, no aggregate or window placeholder.
fn movable(e: &Scalar) -> bool {
    let mut ok = true;
    e.visit(&mut |x| {
        if matches!(x, Scalar::SubLink(_) | Scalar::Outer(..) | Scalar::Agg(..) | Scalar::Win(..) | Scalar::Srf(..)) {
            ok = false;
        }
    });
    // A call evaluated with the session stays where the executor evaluates it.
    ok && !expr::needs_session(e)
}

fn side(e: &Scalar, lw: usize) -> Side {
    let (mut l, mut r) = (false, false);
    e.visit(&mut |x| {
        if let Scalar::Col(i, _) = x {
            if *i < lw {
                l = true;
            } else {
                r = true;
            }
        }
    });
    match (l, r) {
        (false, false) => Side::None,
        (true, false) => Side::Left,
        (false, true) => Side::Right,
        (true, true) => Side::Both,
    }
}

/// Rewrites every column index of `e` with `f`.
fn remap(e: &Scalar, f: &dyn Fn(usize) -> usize) -> Scalar {
    map_scalar(e, &mut |x| match x {
        Scalar::Col(i, t) => Some(Scalar::Col(f(*i), *t)),
        _ => None,
    })
}

/// Rebuilds `e` bottom-up... top-down: where `f` returns a replacement, it is used (and not
/// descended into); elsewhere the node is kept with its children rebuilt.
pub(crate) fn map_scalar(e: &Scalar, f: &mut dyn FnMut(&Scalar) -> Option<Scalar>) -> Scalar {
    if let Some(r) = f(e) {
        return r;
    }
    let mut m = |x: &Scalar| Box::new(map_scalar(x, f));
    match e {
        Scalar::Arith(op, a, b) => Scalar::Arith(*op, m(a), m(b)),
        Scalar::Concat(a, b) => Scalar::Concat(m(a), m(b)),
        Scalar::Neg(a) => Scalar::Neg(m(a)),
        Scalar::Cmp(op, a, b) => Scalar::Cmp(*op, m(a), m(b)),
        Scalar::And(a, b) => Scalar::And(m(a), m(b)),
        Scalar::Or(a, b) => Scalar::Or(m(a), m(b)),
        Scalar::Not(a) => Scalar::Not(m(a)),
        Scalar::IsNull(a, n) => Scalar::IsNull(m(a), *n),
        Scalar::InList(a, items, n) => {
            let a = m(a);
            Scalar::InList(a, items.iter().map(|i| map_scalar(i, f)).collect(), *n)
        }
        Scalar::Cast(a, t) => Scalar::Cast(m(a), *t),
        Scalar::Func(fun, args, t) => Scalar::Func(*fun, args.iter().map(|i| map_scalar(i, f)).collect(), *t),
        Scalar::Case(whens, els, t) => {
            let whens = whens.iter().map(|(c, v)| (map_scalar(c, f), map_scalar(v, f))).collect();
            let els = els.as_ref().map(|e| Box::new(map_scalar(e, f)));
            Scalar::Case(whens, els, *t)
        }
        Scalar::Coalesce(items, t) => Scalar::Coalesce(items.iter().map(|i| map_scalar(i, f)).collect(), *t),
        Scalar::NullIf(a, b) => Scalar::NullIf(m(a), m(b)),
        Scalar::Lookup(a, t, ty) => Scalar::Lookup(m(a), t.clone(), *ty),
        Scalar::Regex(a, re, n) => Scalar::Regex(m(a), re.clone(), *n),
        Scalar::MinMax(g, items, t) => Scalar::MinMax(*g, items.iter().map(|i| map_scalar(i, f)).collect(), *t),
        Scalar::Like(a, b, n, ci, esc) => Scalar::Like(m(a), m(b), *n, *ci, *esc),
        Scalar::IsDistinct(a, b, n) => Scalar::IsDistinct(m(a), m(b), *n),
        Scalar::IsBool(a, w, n) => Scalar::IsBool(m(a), *w, *n),
        Scalar::SubLink(l) => {
            let mut l2 = (**l).clone();
            l2.lhs = l.lhs.as_ref().map(|x| map_scalar(x, f));
            l2.lhs_row = l.lhs_row.iter().map(|x| map_scalar(x, f)).collect();
            Scalar::SubLink(Box::new(l2))
        }
        other => other.clone(),
    }
}

fn conjuncts(e: Scalar, out: &mut Vec<Scalar>) {
    match e {
        Scalar::And(a, b) => {
            conjuncts(*a, out);
            conjuncts(*b, out);
        }
        other => out.push(other),
    }
}

fn and_all(mut cs: Vec<Scalar>) -> Option<Scalar> {
    let first = cs.pop()?;
    Some(cs.into_iter().rev().fold(first, |acc, c| Scalar::And(Box::new(c), Box::new(acc))))
}

/// The strength a locking clause asks for and the relation it names (`OF`). The front end
/// spells `FOR NO KEY UPDATE` and `FOR KEY SHARE`, which sqlparser does not know, as `FOR
/// UPDATE` / `FOR SHARE` with a marker first in the `OF` name (`dialect::LOCK_MARKER_*`).
pub(crate) fn lock_strength(l: &sqlparser::ast::LockClause) -> (RowLockMode, Option<String>) {
    let mut parts: Vec<sqlparser::ast::Ident> =
        l.of.iter()
            .flat_map(|n| n.0.iter())
            .map(|p| p.as_ident().cloned().unwrap_or_else(|| sqlparser::ast::Ident::new(p.to_string())))
            .collect();
    let weaker = parts.first().is_some_and(|p| p.value == super::dialect::LOCK_MARKER_WEAKER && p.quote_style.is_some());
    if weaker {
        parts.remove(0);
    }
    let mode = match (&l.lock_type, weaker) {
        (sqlparser::ast::LockType::Update, false) => RowLockMode::Update,
        (sqlparser::ast::LockType::Update, true) => RowLockMode::NoKeyUpdate,
        (sqlparser::ast::LockType::Share, false) => RowLockMode::Share,
        (sqlparser::ast::LockType::Share, true) => RowLockMode::KeyShare,
    };
    // More than one part: a qualified name, which PostgreSQL refuses (the caller's 42601).
    let of = match parts.len() {
        0 => None,
        1 => Some(fold_ident(&parts[0])),
        _ => Some(String::new()),
    };
    (mode, of)
}

/// A query's locking clauses as [`Planner::locking_clause`] reads them.
struct LockingClause {
    /// The strongest strength named, and the wait policy.
    mode: RowLockMode,
    wait: LockWait,
    /// The first clause's words (`FOR UPDATE`, ...), as PostgreSQL's errors name it.
    what: &'static str,
    /// Whether there are rows to lock (false: FROM names nothing lockable; only the checks
    /// on the query's shape apply).
    lock: bool,
    /// Several FROM items: the lock slots' targets (`exec::lockrows`).
    targets: Option<Vec<exec::lockrows::LockTarget>>,
}

/// Why a plan cannot take a LockRows node, in PostgreSQL's words where it has them.
enum NoLock {
    Agg,
    Window,
    Srf,
    Other,
}

/// Refuses a plan with a LockRows node anywhere but where the planner puts one: at the top of
/// a query (under its LIMIT and final projection), of a WITH query or of a subquery in an
/// expression. Elsewhere (a join's input, a set operation's arm) other nodes could filter or
/// repeat rows below it, and the rows locked would not be the rows returned.
pub(crate) fn check_lock_rows_placement(node: &Node) -> Result<()> {
    fn walk(node: &Node, top: bool, bad: &mut bool) {
        match node {
            Node::LockRows(l) => {
                *bad |= !top;
                walk(&l.input, false, bad);
            }
            Node::Project(i, _) | Node::Limit(i, ..) | Node::Filter(i, _) | Node::Sort(i, _) => walk(i, top, bad),
            Node::Cte(c) => walk(&c.node, true, bad),
            other => other.visit_children(&mut |k| walk(k, false, bad)),
        }
    }
    let mut bad = false;
    walk(node, true, &mut bad);
    visit_exprs(node, &mut |e| {
        e.visit(&mut |x| {
            if let Scalar::SubLink(l) = x {
                bad |= check_lock_rows_placement(&l.plan).is_err();
            }
        })
    });
    if bad {
        return Err(PgError::feature("FOR UPDATE / FOR SHARE inside a join, a set operation or a subquery in FROM is not supported"));
    }
    Ok(())
}

fn refuse_lock(what: &str, n: NoLock) -> Option<PgError> {
    let why = match n {
        NoLock::Agg => "aggregate functions",
        NoLock::Window => "window functions",
        NoLock::Srf => "set-returning functions in the target list",
        NoLock::Other => return None,
    };
    Some(PgError::feature(format!("{what} is not allowed with {why}")))
}

/// The aggregate, window function or set-returning function under the top of a plan that
/// PostgreSQL's locking clause refuses, if any (checked also where nothing is locked).
fn lock_shape_error(node: &Node) -> Option<NoLock> {
    let mut n = node;
    loop {
        match n {
            Node::Limit(i, ..) | Node::Project(i, _) | Node::Filter(i, _) | Node::Sort(i, _) => n = i,
            Node::Agg(..) => return Some(NoLock::Agg),
            Node::Window(..) => return Some(NoLock::Window),
            Node::ProjectSet(..) => return Some(NoLock::Srf),
            _ => return None,
        }
    }
}

/// Puts a LockRows node (`exec::lockrows`) into a one-table plan: right below its (top) LIMIT,
/// as PostgreSQL does, so only the rows returned are locked, with the scan's TID carried up
/// to it through the projections on the way. Between it and the scan there may be only
/// projections, filters and sorts (a view's own LIMIT there is refused).
fn lock_rows(node: Node, mode: RowLockMode, wait: LockWait) -> std::result::Result<Node, NoLock> {
    if let Some(e) = lock_shape_error(&node) {
        return Err(e);
    }
    let mut limits = 0;
    let mut n = &node;
    loop {
        match n {
            Node::Limit(i, ..) if limits == 0 => {
                limits = 1;
                n = i;
            }
            Node::Project(i, _) | Node::Filter(i, _) | Node::Sort(i, _) => n = i,
            Node::Scan(_) => break,
            _ => return Err(NoLock::Other),
        }
    }
    /// Carries the TID from the scan up through `node` as its last column.
    fn carry_tid(node: Node) -> Node {
        match node {
            Node::Scan(mut p) => {
                p.tid_col = true;
                p.index_only = false;
                Node::Scan(p)
            }
            Node::Project(i, mut es) => {
                let i = carry_tid(*i);
                es.push(Scalar::Col(i.width() - 1, SqlType::new(TypeId::Int8)));
                Node::Project(Box::new(i), es)
            }
            Node::Filter(i, c) => Node::Filter(Box::new(carry_tid(*i)), c),
            Node::Sort(i, k) => Node::Sort(Box::new(carry_tid(*i)), k),
            other => unreachable!("checked above: {other:?}"),
        }
    }
    fn place(node: Node, limits: usize, mode: RowLockMode, wait: LockWait) -> Node {
        if limits == 0 {
            return Node::LockRows(Box::new(exec::lockrows::LockRows { input: carry_tid(node), mode, wait, targets: Vec::new() }));
        }
        match node {
            Node::Limit(i, l, o, t) => {
                let lock = exec::lockrows::LockRows { input: carry_tid(*i), mode, wait, targets: Vec::new() };
                Node::Limit(Box::new(Node::LockRows(Box::new(lock))), l, o, t)
            }
            Node::Project(i, es) => Node::Project(Box::new(place(*i, limits, mode, wait)), es),
            Node::Filter(i, c) => Node::Filter(Box::new(place(*i, limits, mode, wait)), c),
            Node::Sort(i, k) => Node::Sort(Box::new(place(*i, limits, mode, wait)), k),
            other => unreachable!("checked above: {other:?}"),
        }
    }
    Ok(place(node, limits, mode, wait))
}

/// The wait policy of clauses so far (`wait`) and one more: NOWAIT if any says it, else SKIP
/// LOCKED if any does (PostgreSQL's rule for clauses naming the same table).
fn stronger_wait(wait: LockWait, nonblock: &Option<sqlparser::ast::NonBlock>) -> LockWait {
    match (wait, nonblock) {
        (LockWait::NoWait, _) | (_, Some(sqlparser::ast::NonBlock::Nowait)) => LockWait::NoWait,
        (LockWait::SkipLocked, _) | (_, Some(sqlparser::ast::NonBlock::SkipLocked)) => LockWait::SkipLocked,
        _ => LockWait::Block,
    }
}

/// Puts a multi-item LockRows node (`lock`, its input left empty) into a SELECT's plan: the
/// projection dropping the TID columns on top, then the LIMIT if any, then the node over the
/// rest, so only the rows returned are locked, in ORDER BY order.
fn place_multi_lock(node: Node, mut lock: exec::lockrows::LockRows) -> Result<Node> {
    let Node::Project(i, es) = node else {
        return Err(PgError::internal("a multi-table FOR UPDATE plan without its final projection"));
    };
    Ok(match *i {
        Node::Limit(x, l, o, t) => {
            lock.input = *x;
            Node::Project(Box::new(Node::Limit(Box::new(Node::LockRows(Box::new(lock))), l, o, t)), es)
        }
        other => {
            lock.input = other;
            Node::Project(Box::new(Node::LockRows(Box::new(lock))), es)
        }
    })
}

/// `FETCH FIRST n ROWS WITH TIES`: the limit takes the ORDER BY keys of the sort beneath it
/// (under the final projection).
fn with_ties(node: &mut Node) -> Result<()> {
    match node {
        Node::Project(i, _) => with_ties(i),
        Node::Limit(i, _, _, ties) => match &**i {
            Node::Sort(_, keys) => {
                *ties = Some(keys.clone());
                Ok(())
            }
            _ => Err(refuse("FETCH ... WITH TIES with DISTINCT ON")),
        },
        _ => Err(refuse("FETCH ... WITH TIES here")),
    }
}

/// A WINDOW clause's definitions, each resolved against the ones before it (PostgreSQL's
/// rules: a definition may name an earlier window, take its PARTITION BY and ORDER BY, add an
/// ORDER BY it lacks and a frame, never override either clause nor copy a frame).
fn named_windows(defs: &[sqlparser::ast::NamedWindowDefinition]) -> Result<Vec<(String, sqlparser::ast::WindowSpec)>> {
    let mut out: Vec<(String, sqlparser::ast::WindowSpec)> = Vec::new();
    for sqlparser::ast::NamedWindowDefinition(name, e) in defs {
        let name = fold_ident(name);
        let sqlparser::ast::NamedWindowExpr::WindowSpec(spec) = e else {
            return Err(PgError::syntax(format!("WINDOW {name} AS <name> is not PostgreSQL syntax; write WINDOW {name} AS (<name>)")));
        };
        if out.iter().any(|(n, _)| *n == name) {
            return Err(PgError::new("42P20", format!("window \"{name}\" is already defined")));
        }
        let spec = resolve_window(spec, &out)?;
        out.push((name, spec));
    }
    Ok(out)
}

/// A window specification with its reference to a named window (`OVER (w ORDER BY x)`)
/// resolved into one self-contained specification.
pub fn resolve_window(
    spec: &sqlparser::ast::WindowSpec,
    defined: &[(String, sqlparser::ast::WindowSpec)],
) -> Result<sqlparser::ast::WindowSpec> {
    let Some(base_name) = &spec.window_name else { return Ok(spec.clone()) };
    let base_name = fold_ident(base_name);
    let base = lookup_window(&base_name, defined)?;
    if !spec.partition_by.is_empty() {
        return Err(PgError::new("42P20", format!("cannot override PARTITION BY clause of window \"{base_name}\"")));
    }
    if !spec.order_by.is_empty() && !base.order_by.is_empty() {
        return Err(PgError::new("42P20", format!("cannot override ORDER BY clause of window \"{base_name}\"")));
    }
    if base.window_frame.is_some() {
        let e = PgError::new("42P20", format!("cannot copy window \"{base_name}\" because it has a frame clause"));
        // `OVER (w)` alone means `OVER w`, which may use w's frame.
        let bare = spec.order_by.is_empty() && spec.window_frame.is_none();
        return Err(if bare { e.with_hint("Omit the parentheses in this OVER clause.") } else { e });
    }
    Ok(sqlparser::ast::WindowSpec {
        window_name: None,
        partition_by: base.partition_by.clone(),
        order_by: if spec.order_by.is_empty() { base.order_by.clone() } else { spec.order_by.clone() },
        window_frame: spec.window_frame.clone(),
    })
}

/// A named window of the query (`OVER w`).
pub fn lookup_window<'a>(name: &str, defined: &'a [(String, sqlparser::ast::WindowSpec)]) -> Result<&'a sqlparser::ast::WindowSpec> {
    defined
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s)
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("window \"{name}\" does not exist")))
}

/// Type families whose values hash alike (the join key encoding in `exec::key_of`).
/// json has no equality or ordering operator in PostgreSQL: it cannot be grouped, made
/// distinct, set-operated (without ALL) or sorted (42883).
pub fn need_operator(t: Option<SqlType>, ordering: bool) -> Result<()> {
    match t {
        // A record needs its fields' operators.
        Some(SqlType { id: TypeId::Record(k), .. }) => {
            let fields = k.fields();
            if (0..fields.len()).any(|i| k.unknown(i)) {
                return Err(PgError::new("42883", "could not identify a comparison function for type unknown"));
            }
            fields.iter().try_for_each(|(_, f)| need_operator(Some(*f), ordering))
        }
        Some(t) if matches!(t.id, TypeId::Json | TypeId::Void) => Err(PgError::new(
            "42883",
            format!("could not identify an {} operator for type {}", if ordering { "ordering" } else { "equality" }, t.name()),
        )),
        _ => Ok(()),
    }
}

fn hash_family(t: Option<SqlType>) -> Option<u8> {
    Some(match t?.id {
        TypeId::Int2 | TypeId::Int4 | TypeId::Int8 => 0,
        TypeId::Float4 | TypeId::Float8 => 1,
        TypeId::Text | TypeId::Varchar | TypeId::Name | TypeId::Char => 2,
        TypeId::Bool => 3,
        TypeId::Date => 4,
        // A timestamp equals a timestamptz as the instant the session's clocks read it: not
        // the same number, so the two never share a hash key.
        TypeId::Timestamp => 5,
        TypeId::Timestamptz => 12,
        TypeId::Oid => 8,
        TypeId::Bytea => 6,
        TypeId::Numeric => 7,
        TypeId::Uuid => 9,
        TypeId::Interval => 10,
        TypeId::Jsonb => 11,
        TypeId::Time => 13,
        TypeId::TimeTz => 14,
        _ => return None,
    })
}

/// The two sides of an equality as hash keys of one type: a date or timestamp beside a
/// timestamptz becomes the instant the session's clocks read it, a date beside a timestamp
/// its midnight (as the comparison itself reads them).
fn datetime_keys(a: &Scalar, b: &Scalar) -> (Scalar, Scalar) {
    let cast = |x: &Scalar, id: TypeId| Scalar::Cast(Box::new(x.clone()), SqlType::new(id));
    match (type_of(a).map(|t| t.id), type_of(b).map(|t| t.id)) {
        (Some(TypeId::Date | TypeId::Timestamp), Some(TypeId::Timestamptz)) => (cast(a, TypeId::Timestamptz), b.clone()),
        (Some(TypeId::Timestamptz), Some(TypeId::Date | TypeId::Timestamp)) => (a.clone(), cast(b, TypeId::Timestamptz)),
        (Some(TypeId::Date), Some(TypeId::Timestamp)) => (cast(a, TypeId::Timestamp), b.clone()),
        (Some(TypeId::Timestamp), Some(TypeId::Date)) => (a.clone(), cast(b, TypeId::Timestamp)),
        // A time beside a timetz or an interval is cast to that type, as it compares.
        (Some(TypeId::Time), Some(other @ (TypeId::TimeTz | TypeId::Interval))) => (cast(a, other), b.clone()),
        (Some(other @ (TypeId::TimeTz | TypeId::Interval)), Some(TypeId::Time)) => (a.clone(), cast(b, other)),
        _ => (a.clone(), b.clone()),
    }
}

/// Applies `filters` (in the leaf's own layout) to a planned leaf: merged into a table scan
/// (where an index may serve them), else a filter node.
fn filter_leaf(node: Node, filters: Vec<Scalar>) -> Node {
    // The scan evaluates its filter without the executor (no subqueries, no outer rows).
    let (inner, above): (Vec<Scalar>, Vec<Scalar>) =
        if matches!(node, Node::Scan(_)) { filters.into_iter().partition(movable) } else { (filters, Vec::new()) };
    let node = filter_into(node, inner);
    match and_all(above) {
        Some(c) => Node::Filter(Box::new(node), c),
        None => node,
    }
}

fn filter_into(node: Node, filters: Vec<Scalar>) -> Node {
    let Some(cond) = and_all(filters) else { return node };
    match node {
        Node::Scan(p) => {
            let p = *p;
            let filter = match p.filter {
                Some(f) => Scalar::And(Box::new(f), Box::new(cond)),
                None => cond,
            };
            let mut plan = super::dml::Plan::new(p.table, Some(filter), p.needed);
            plan.tid_col = p.tid_col;
            plan.lock_slot = p.lock_slot;
            Node::Scan(Box::new(plan))
        }
        other => Node::Filter(Box::new(other), cond),
    }
}

/// Turns a FROM tree into a plan, pushing `filters` (WHERE conjuncts, in `rel`'s layout) down;
/// `types` are the layout's column types. A tree of three or more inner joins over analyzed
/// tables is first put in the order the cost model prefers ([`reorder`]).
fn plan_rel(est: &super::cost::Estimator<'_>, rel: Rel, filters: Vec<Scalar>, types: &[SqlType]) -> Node {
    debug_assert_eq!(types.len(), rel.width(), "a FROM tree's layout and its column types");
    match reorder(est, rel, filters, types) {
        Ok(node) => node,
        Err(back) => {
            let (rel, filters) = *back;
            plan_tree(est, rel, filters, types, true)
        }
    }
}

/// The inner joins of a FROM tree flattened: the items (outer joins and LATERAL items stay
/// whole) and the join conditions, in the tree's layout.
fn flatten(rel: Rel, base: usize, items: &mut Vec<Rel>, conds: &mut Vec<Scalar>) {
    match rel {
        Rel::Join(JoinKind::Inner, l, r, on) if !r.leftmost_lateral() => {
            let lw = l.width();
            conds.extend(on.iter().map(|c| remap(c, &|i| i + base)));
            flatten(*l, base, items, conds);
            flatten(*r, base + lw, items, conds);
        }
        other => items.push(other),
    }
}

/// Whether a join condition that [`flatten`] would move to a wider layout (one of a join
/// that is not leftmost, whose columns do not start the tree's row) cannot be moved: a
/// subquery's references to the row it runs for are positions in the join's own layout, which
/// [`remap`] does not rewrite.
fn shifted_unmovable(rel: &Rel, base: usize) -> bool {
    match rel {
        Rel::Join(JoinKind::Inner, l, r, on) if !r.leftmost_lateral() => {
            (base > 0 && on.iter().any(|c| !movable(c))) || shifted_unmovable(l, base) || shifted_unmovable(r, base + l.width())
        }
        _ => false,
    }
}

/// How many items [`flatten`] would make, and whether each has only analyzed tables.
fn flat_items(rel: &Rel, est: &super::cost::Estimator<'_>) -> (usize, bool) {
    match rel {
        Rel::Join(JoinKind::Inner, l, r, _) if !r.leftmost_lateral() => {
            let (a, x) = flat_items(l, est);
            let (b, y) = flat_items(r, est);
            (a + b, x && y)
        }
        Rel::Leaf(node, _, lateral) => (1, !lateral && est.decides(node)),
        Rel::Join(..) => (1, false),
    }
}

/// Join order by cost for a tree of three or more inner joins (up to ten items) whose tables
/// all have ANALYZE statistics (or when a planner setting is changed): every left-deep order
/// is costed by dynamic programming over item sets, the cost being the sum of the estimated
/// rows of every join's inputs and output; the written order is kept unless another costs
/// less than 90% of it. The chosen order is planned as written joins would be, then a
/// projection puts the columns back in the written order; conditions with a subquery or an
/// outer reference are applied above it. Err hands `rel` back when it is not reordered.
fn reorder(
    est: &super::cost::Estimator<'_>,
    rel: Rel,
    filters: Vec<Scalar>,
    types: &[SqlType],
) -> std::result::Result<Node, Box<(Rel, Vec<Scalar>)>> {
    let (n, known) = flat_items(&rel, est);
    if !matches!(rel, Rel::Join(JoinKind::Inner, ..))
        || !(3..=10).contains(&n)
        || !known
        || rel.leftmost_lateral()
        || shifted_unmovable(&rel, 0)
    {
        return Err(Box::new((rel, filters)));
    }
    let mut items = Vec::new();
    let mut conds = filters;
    flatten(rel, 0, &mut items, &mut conds);
    let widths: Vec<usize> = items.iter().map(Rel::width).collect();
    let offs: Vec<usize> = widths
        .iter()
        .scan(0, |acc, w| {
            let o = *acc;
            *acc += w;
            Some(o)
        })
        .collect();
    let item_of = |col: usize| offs.iter().rposition(|&o| o <= col).expect("a column of an item");
    let set_of = |e: &Scalar| {
        let mut set = 0u32;
        e.visit(&mut |x| {
            if let Scalar::Col(i, _) = x {
                set |= 1 << item_of(*i);
            }
        });
        set
    };
    // Conditions on one item go into it; the rest join items; unmovable ones stay above.
    let mut own: Vec<Vec<Scalar>> = vec![Vec::new(); n];
    let mut joins: Vec<(u32, Scalar)> = Vec::new();
    let mut above: Vec<Scalar> = Vec::new();
    for c in conds {
        if !movable(&c) {
            above.push(c);
            continue;
        }
        let set = set_of(&c);
        if set.count_ones() == 1 {
            let k = set.trailing_zeros() as usize;
            own[k].push(remap(&c, &|i| i - offs[k]));
        } else {
            joins.push((set, c));
        }
    }
    let mut nodes: Vec<Node> = Vec::with_capacity(n);
    for (k, (item, f)) in items.into_iter().zip(own).enumerate() {
        nodes.push(plan_tree(est, item, f, &types[offs[k]..offs[k] + widths[k]], true));
    }
    let rows: Vec<f64> = nodes.iter().map(|x| est.rows(x)).collect();
    // Each join condition's selectivity: an equality of two items' columns is one over the
    // larger number of distinct values, others PostgreSQL's defaults.
    let sels: Vec<f64> = joins
        .iter()
        .map(|(_, c)| match c {
            Scalar::Cmp(expr::CmpOp::Eq, a, b) => {
                let nd = |e: &Scalar| {
                    let mut cols = Vec::new();
                    e.visit(&mut |x| {
                        if let Scalar::Col(i, _) = x {
                            cols.push(*i);
                        }
                    });
                    let k = item_of(*cols.first()?);
                    let local = remap(e, &|i| i - offs[k]);
                    Some(est.distinct_of(&nodes[k], &local).unwrap_or(200f64.min(rows[k])))
                };
                match (nd(a), nd(b)) {
                    (Some(x), Some(y)) => 1.0 / x.max(y).max(1.0),
                    _ => 0.005,
                }
            }
            _ => 1.0 / 3.0,
        })
        .collect();
    let set_rows = |s: u32| -> f64 {
        let mut r: f64 = (0..n).filter(|k| s & (1 << k) != 0).map(|k| rows[k]).product();
        for ((set, _), sel) in joins.iter().zip(&sels) {
            if set & s == *set {
                r *= sel;
            }
        }
        r.max(1.0)
    };
    let cost_of = |order: &[usize]| -> f64 {
        let mut s = 1u32 << order[0];
        let mut c = 0.0;
        for &j in &order[1..] {
            c += set_rows(s) + rows[j];
            s |= 1 << j;
            c += set_rows(s);
        }
        c
    };
    let full = (1u32 << n) - 1;
    let mut best: Vec<Option<(f64, Vec<usize>)>> = vec![None; 1 << n];
    for k in 0..n {
        best[1 << k] = Some((0.0, vec![k]));
    }
    for s in 1..=full {
        if s.count_ones() < 2 {
            continue;
        }
        let out = set_rows(s);
        for (j, rj) in rows.iter().enumerate() {
            if s & (1 << j) == 0 {
                continue;
            }
            let rest = s & !(1 << j);
            let Some((c, order)) = &best[rest as usize] else { continue };
            let c = c + set_rows(rest) + rj + out;
            if best[s as usize].as_ref().is_none_or(|(b, _)| c < *b) {
                let mut o = order.clone();
                o.push(j);
                best[s as usize] = Some((c, o));
            }
        }
    }
    let written: Vec<usize> = (0..n).collect();
    let (bc, border) = best[full as usize].clone().expect("every set is costed");
    let order = if bc < 0.9 * cost_of(&written) { border } else { written };
    // The chosen order's layout.
    let mut new_off = vec![0usize; n];
    let mut at = 0;
    for &k in &order {
        new_off[k] = at;
        at += widths[k];
    }
    let mut new_types = Vec::with_capacity(types.len());
    for &k in &order {
        new_types.extend_from_slice(&types[offs[k]..offs[k] + widths[k]]);
    }
    let to_new = |i: usize| {
        let k = item_of(i);
        new_off[k] + (i - offs[k])
    };
    let mut nodes: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
    let mut tree: Option<Rel> = None;
    for &k in &order {
        let leaf = Rel::Leaf(nodes[k].take().expect("each item once"), widths[k], false);
        tree = Some(match tree {
            None => leaf,
            Some(t) => Rel::Join(JoinKind::Inner, Box::new(t), Box::new(leaf), Vec::new()),
        });
    }
    let conds: Vec<Scalar> = joins.iter().map(|(_, c)| remap(c, &to_new)).collect();
    let mut node = plan_tree(est, tree.expect("items"), conds, &new_types, false);
    if order.iter().enumerate().any(|(i, &k)| i != k) {
        let exprs = (0..types.len()).map(|i| Scalar::Col(to_new(i), types[i])).collect();
        node = Node::Project(Box::new(node), exprs);
    }
    Ok(match and_all(above) {
        Some(c) => Node::Filter(Box::new(node), c),
        None => node,
    })
}

/// [`plan_rel`] for a tree in its written order (`reorder_below`: whether its subtrees may
/// still be reordered).
fn plan_tree(est: &super::cost::Estimator<'_>, rel: Rel, filters: Vec<Scalar>, types: &[SqlType], reorder_below: bool) -> Node {
    let sub = |rel: Rel, filters: Vec<Scalar>, types: &[SqlType]| {
        if reorder_below {
            plan_rel(est, rel, filters, types)
        } else {
            plan_tree(est, rel, filters, types, false)
        }
    };
    match rel {
        Rel::Leaf(node, ..) => filter_leaf(node, filters),
        Rel::Join(kind, l, r, on) => {
            let (lw, rw) = (l.width(), r.width());
            let lateral = r.leftmost_lateral();
            let shift = |e: &Scalar| remap(e, &|i| i - lw);
            let (mut lf, mut rf, mut above, mut join_conds) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for f in filters {
                let sd = if movable(&f) { side(&f, lw) } else { Side::None };
                match (kind, sd) {
                    _ if !movable(&f) => above.push(f),
                    (JoinKind::Inner | JoinKind::Left, Side::Left) => lf.push(f),
                    (JoinKind::Inner | JoinKind::Right, Side::Right) => rf.push(shift(&f)),
                    (JoinKind::Inner, _) => join_conds.push(f),
                    _ => above.push(f),
                }
            }
            for c in on {
                let sd = if movable(&c) { side(&c, lw) } else { Side::Both };
                match (kind, sd) {
                    (JoinKind::Inner | JoinKind::Right, Side::Left) if movable(&c) => lf.push(c),
                    (JoinKind::Inner | JoinKind::Left, Side::Right) if movable(&c) => rf.push(shift(&c)),
                    _ => join_conds.push(c),
                }
            }
            let mut keys = Vec::new();
            let mut residual = Vec::new();
            for c in join_conds {
                if let Scalar::Cmp(expr::CmpOp::Eq, a, b) = &c {
                    if movable(&c) {
                        let (sa, sb) = (side(a, lw), side(b, lw));
                        let (a, b) = datetime_keys(a, b);
                        let (a, b) = (&a, &b);
                        // A LATERAL right side depends on the left row: a nested loop, no hash.
                        let same = !lateral && hash_family(type_of(a)).is_some() && hash_family(type_of(a)) == hash_family(type_of(b));
                        if same && sa == Side::Left && sb == Side::Right {
                            keys.push((a.clone(), shift(b)));
                            continue;
                        }
                        if same && sa == Side::Right && sb == Side::Left {
                            keys.push((b.clone(), shift(a)));
                            continue;
                        }
                    }
                }
                residual.push(c);
            }
            let join = Node::Join(Box::new(JoinNode {
                kind,
                left: sub(*l, lf, &types[..lw]),
                right: sub(*r, rf, &types[lw..]),
                keys,
                cond: and_all(residual),
                left_width: lw,
                right_width: rw,
                lateral,
                build_left: false,
                merge: false,
                inner_index: false,
                used: Vec::new(),
            }));
            let join = match join {
                Node::Join(mut j) => {
                    choose_join(est, &mut j);
                    Node::Join(j)
                }
                other => other,
            };
            match and_all(above) {
                Some(c) => Node::Filter(Box::new(join), c),
                None => join,
            }
        }
    }
}

/// The grouping sets of a GROUP BY list: the distinct expressions it names (in order of first
/// appearance), and, when it has ROLLUP, CUBE, GROUPING SETS or `()`, every grouping set (the
/// cross product of its items' sets, as PostgreSQL expands them). Nested ROLLUP / CUBE /
/// GROUPING SETS inside GROUPING SETS are refused (0A000).
/// A GROUP BY list's distinct expressions, and its grouping sets when it has any.
type GroupingSets<'e> = (Vec<&'e Expr>, Option<Vec<Vec<&'e Expr>>>);

fn grouping_sets(items: &[Expr]) -> Result<GroupingSets<'_>> {
    let mut sets: Vec<Vec<&Expr>> = vec![Vec::new()];
    let mut plain = true;
    for g in items {
        let options: Vec<Vec<&Expr>> = match g {
            Expr::Rollup(lists) => {
                plain = false;
                (0..=lists.len()).rev().map(|k| lists[..k].iter().flatten().collect()).collect()
            }
            Expr::Cube(lists) => {
                plain = false;
                let n = lists.len();
                if n > 12 {
                    return Err(PgError::new("54001", "CUBE is limited to 12 elements"));
                }
                (0..1usize << n)
                    .rev()
                    .map(|mask| (0..n).filter(|i| mask & (1 << (n - 1 - i)) != 0).flat_map(|i| lists[i].iter()).collect())
                    .collect()
            }
            Expr::GroupingSets(lists) => {
                plain = false;
                for e in lists.iter().flatten() {
                    need(
                        !matches!(e, Expr::Rollup(_) | Expr::Cube(_) | Expr::GroupingSets(_)),
                        "ROLLUP, CUBE or GROUPING SETS inside GROUPING SETS",
                    )?;
                }
                lists.iter().map(|l| l.iter().collect()).collect()
            }
            Expr::Tuple(list) => {
                plain &= !list.is_empty();
                vec![list.iter().collect()]
            }
            other => vec![vec![other]],
        };
        sets = sets
            .iter()
            .flat_map(|s| {
                options.iter().map(move |o| {
                    let mut x = s.clone();
                    x.extend(o.iter().copied());
                    x
                })
            })
            .collect();
        if sets.len() > 4096 {
            return Err(PgError::new("54001", "too many grouping sets present (maximum 4096)"));
        }
    }
    let mut flat: Vec<&Expr> = Vec::new();
    for e in sets.iter().flatten() {
        if !flat.iter().any(|f| f.to_string() == e.to_string()) {
            flat.push(e);
        }
    }
    Ok((flat, (!plain).then_some(sets)))
}

/// Grouping sets as one aggregation per set over the same input, appended (UNION ALL): each
/// set's rows have every GROUP BY column (NULL where the set leaves it out) and every
/// aggregate, in the layout a plain aggregation has; `GROUPING(...)` is each set's constant.
/// The input runs once per set, so one that calls a volatile function is refused (0A000).
fn grouping_set_union(input: Node, groups: &[Scalar], aggs: &[exec::AggCall], sets: &[Vec<usize>]) -> Result<Node> {
    let mut volatile = false;
    visit_exprs(&input, &mut |e| volatile |= expr::calls_volatile(e));
    if volatile && sets.len() > 1 {
        return Err(refuse("grouping sets over rows that call a volatile function (nextval, setval, gen_random_uuid, random)"));
    }
    let shown: Vec<String> = groups.iter().map(|g| format!("{g:?}")).collect();
    let text = SqlType::new(TypeId::Text);
    let mut branches = Vec::with_capacity(sets.len());
    for members in sets {
        let kept: Vec<exec::AggCall> = aggs.iter().filter(|a| a.func != exec::AggFunc::Grouping).cloned().collect();
        let agg = Node::Agg(Box::new(input.clone()), members.iter().map(|&k| groups[k].clone()).collect(), kept);
        let mut exprs = Vec::with_capacity(groups.len() + aggs.len());
        for (k, g) in groups.iter().enumerate() {
            exprs.push(match members.iter().position(|&m| m == k) {
                Some(p) => Scalar::Col(p, type_of(g).unwrap_or(text)),
                None => Scalar::Const(Value::Null),
            });
        }
        let mut next = members.len();
        for a in aggs {
            if a.func != exec::AggFunc::Grouping {
                exprs.push(Scalar::Col(next, a.ty));
                next += 1;
                continue;
            }
            let mut mask = 0i32;
            for arg in &a.args {
                let Some(k) = shown.iter().position(|s| *s == format!("{arg:?}")) else {
                    return Err(PgError::new("42803", "arguments to GROUPING must be grouping expressions of the associated query level"));
                };
                mask = (mask << 1) | i32::from(!members.contains(&k));
            }
            exprs.push(Scalar::Const(Value::Int4(mask)));
        }
        branches.push(Node::Project(Box::new(agg), exprs));
    }
    Ok(branches
        .into_iter()
        .reduce(|l, r| Node::SetOp(exec::SetOpKind::Union, true, Box::new(l), Box::new(r)))
        .expect("at least one grouping set"))
}

/// Chooses a hash join's method by the estimates (`sql::cost`): a merge join when hash joins
/// are disabled and merge joins are not, else hash the smaller input. Joins over tables
/// never analyzed keep the right input as the build side.
fn choose_join(est: &super::cost::Estimator<'_>, j: &mut JoinNode) {
    if j.lateral || j.keys.is_empty() || !est.decides(&j.left) || !est.decides(&j.right) {
        return;
    }
    if matches!(j.kind, JoinKind::Inner | JoinKind::Left) {
        if let Some((idx, eq)) = est.index_probe(j) {
            let Node::Scan(p) = &mut j.right else { unreachable!("index_probe needs a scan") };
            p.access = super::dml::Access::Index { idx, eq, lo: None, hi: None, not_null: false };
            j.inner_index = true;
            return;
        }
    }
    if !est.costs.enable_hashjoin && est.costs.enable_mergejoin {
        let asc = |e: &Scalar| SortKey { expr: e.clone(), desc: false, nulls_first: false };
        let lk: Vec<SortKey> = j.keys.iter().map(|k| asc(&k.0)).collect();
        let rk: Vec<SortKey> = j.keys.iter().map(|k| asc(&k.1)).collect();
        let left = std::mem::replace(&mut j.left, Node::Unit);
        let right = std::mem::replace(&mut j.right, Node::Unit);
        j.left = Node::Sort(Box::new(left), lk);
        j.right = Node::Sort(Box::new(right), rk);
        j.merge = true;
        return;
    }
    j.build_left = est.rows(&j.left) < est.rows(&j.right);
}

/// PostgreSQL's internal name of a type (what it names a cast's column).
pub(crate) fn pg_type_name(sql_name: &str) -> String {
    // The type without its modifier: `timestamp(0) with time zone` is timestamptz.
    let base = match (sql_name.find('('), sql_name.find(')')) {
        (Some(open), Some(close)) if close > open => format!("{}{}", &sql_name[..open], &sql_name[close + 1..]),
        _ => sql_name.to_string(),
    };
    match base.trim() {
        "integer" => "int4",
        "smallint" => "int2",
        "bigint" => "int8",
        "real" => "float4",
        "double precision" => "float8",
        "boolean" => "bool",
        "character varying" => "varchar",
        "character" => "bpchar",
        "timestamp without time zone" => "timestamp",
        "timestamp with time zone" => "timestamptz",
        "time without time zone" => "time",
        "time with time zone" => "timetz",
        "\"char\"" => "char",
        other => other,
    }
    .to_string()
}

/// PostgreSQL's name for an unaliased select-list expression (FigureColname).
fn figure_colname(e: &Expr) -> Option<String> {
    figure(e).map(|(n, _)| n)
}

/// PostgreSQL's `FigureColnameInternal`: a name and its strength (2: a column, function,
/// subquery or constructor name; 1: a cast's type name or `case`, which an outer cast
/// overrides).
fn figure(e: &Expr) -> Option<(String, u8)> {
    Some(match e {
        Expr::Identifier(id) => (fold_ident(id), 2),
        Expr::CompoundIdentifier(ids) => (fold_ident(ids.last()?), 2),
        Expr::Function(f) => {
            let n = f.name.0.last()?.to_string();
            let n = n.trim_matches('"');
            if f.name.0.last().and_then(|p| p.as_ident()).is_some_and(|i| i.quote_style.is_some()) {
                (n.to_string(), 2)
            } else {
                (n.to_lowercase(), 2)
            }
        }
        // A declared parameter type (`sql::declare_param_types`) does not name the column.
        Expr::Cast { kind: sqlparser::ast::CastKind::SafeCast, expr, .. } => return figure(expr),
        Expr::Cast { expr, data_type, .. } => match figure(expr) {
            Some(n) if n.1 > 1 => n,
            _ => {
                let t = super::ddl::sql_type(data_type).map(|t| t.name()).unwrap_or_else(|_| data_type.to_string().to_lowercase());
                (pg_type_name(t.trim_end_matches("[]")), 1)
            }
        },
        Expr::TypedString(ts) => (pg_type_name(&super::ddl::sql_type(&ts.data_type).map(|t| t.name()).unwrap_or_default()), 1),
        Expr::Nested(inner) => return figure(inner),
        // `x AT TIME ZONE z` is the function timezone(z, x).
        Expr::AtTimeZone { .. } => ("timezone".into(), 2),
        // `(a, b) OVERLAPS (c, d)` is the function overlaps(a, b, c, d).
        Expr::BinaryOp { op: sqlparser::ast::BinaryOperator::Overlaps, .. } => ("overlaps".into(), 2),
        Expr::Case { .. } => ("case".into(), 1),
        Expr::Interval(_) => ("interval".into(), 1),
        Expr::Exists { .. } => ("exists".into(), 2),
        Expr::Value(v) if matches!(v.value, AstValue::Boolean(_)) => ("bool".into(), 1),
        Expr::Substring { shorthand, .. } => (if *shorthand { "substr" } else { "substring" }.into(), 2),
        Expr::Position { .. } => ("position".into(), 2),
        Expr::Overlay { .. } => ("overlay".into(), 2),
        Expr::Trim { trim_where, .. } => (
            match trim_where {
                Some(sqlparser::ast::TrimWhereField::Leading) => "ltrim",
                Some(sqlparser::ast::TrimWhereField::Trailing) => "rtrim",
                _ => "btrim",
            }
            .into(),
            2,
        ),
        Expr::Extract { .. } => ("extract".into(), 2),
        Expr::Ceil { .. } => ("ceil".into(), 2),
        Expr::Floor { .. } => ("floor".into(), 2),
        Expr::Array(_) => ("array".into(), 2),
        Expr::Tuple(_) => ("row".into(), 2),
        // Subscripts are skipped: `tags[1]` is named `tags`; a field selection is named by
        // its field.
        Expr::CompoundFieldAccess { root, access_chain } => {
            match access_chain.iter().rev().find_map(|a| match a {
                sqlparser::ast::AccessExpr::Dot(Expr::Identifier(id)) => Some(fold_ident(id)),
                _ => None,
            }) {
                Some(field) => (field, 2),
                None => return figure(root),
            }
        }
        Expr::Subquery(q) => match &*q.body {
            SetExpr::Select(s) => match s.projection.first()? {
                SelectItem::ExprWithAlias { alias, .. } => (fold_ident(alias), 2),
                SelectItem::UnnamedExpr(e) => return figure(e),
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    })
}

fn limit_expr(b: &Binder<'_>, e: &Expr, what: &str) -> Result<Scalar> {
    let x = b.bind(e)?;
    let x = to_type(x, Some(SqlType::new(TypeId::Int8)))?;
    match type_of(&x) {
        Some(t) if expr::is_int(t.id) => {}
        Some(t) if matches!(t.id, TypeId::Float4 | TypeId::Float8) => {}
        Some(t) => {
            return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("argument of {what} must be type bigint, not type {}", t.name())))
        }
        None => {}
    }
    let mut reads = false;
    x.visit(&mut |s| reads |= matches!(s, Scalar::Col(..) | Scalar::Agg(..) | Scalar::Win(..) | Scalar::Srf(..)));
    if reads {
        return Err(PgError::new("42P10", format!("argument of {what} must not contain variables")));
    }
    Ok(if type_of(&x).is_some_and(|t| t.id != TypeId::Int8) { Scalar::Cast(Box::new(x), SqlType::new(TypeId::Int8)) } else { x })
}

/// An ORDER BY / DISTINCT ON / GROUP BY item resolved against a select list.
enum Target {
    /// Output column `i`.
    Output(usize),
    /// An expression over the input.
    Expr(Scalar),
}

struct SelectItemB {
    name: String,
    expr: Scalar,
    source: Option<(u32, i16)>,
}

impl<'a> Planner<'a> {
    /// A planner for session `s`; `now_us` is the transaction's start (outside a transaction,
    /// when a statement is only described or its parameters typed, the current time stands in:
    /// only its type matters there).
    pub fn new(s: &'a Session, now_us: Option<i64>) -> Planner<'a> {
        let now_us = now_us.or_else(|| {
            let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64);
            Some(unix - 946_684_800_000_000)
        });
        Planner {
            s,
            ctes: RefCell::new(Vec::new()),
            now_us,
            now_used: std::cell::Cell::new(false),
            views: RefCell::new(Vec::new()),
            in_view: std::cell::Cell::new(0),
            work_refs: std::cell::Cell::new(0),
            nullable: std::cell::Cell::new(0),
            setop: std::cell::Cell::new(None),
            level_refs: std::cell::Cell::new(0),
            next_work: std::cell::Cell::new(0),
            lock_slots: RefCell::new(None),
            next_lock_slot: std::cell::Cell::new(0),
        }
    }

    /// The oids of the views the bound statement named.
    pub fn views_used(&self) -> Vec<u32> {
        self.views.borrow().clone()
    }

    /// A view named in FROM: its stored query planned as a subquery, its columns renamed to
    /// the view's (`sql::view`). A plan reading a view is not cached (the view may be
    /// replaced).
    fn view(
        &self,
        table: &crate::catalog::Table,
        def: &crate::catalog::ViewDef,
        alias_name: Option<String>,
        alias: Option<&sqlparser::ast::TableAlias>,
    ) -> Result<(Rel, Scope)> {
        self.now_used.set(true);
        self.views.borrow_mut().push(table.oid);
        let q = super::view::parse_query(&def.query)?;
        // The view's query sees no WITH query of the statement naming it.
        let saved = std::mem::take(&mut *self.ctes.borrow_mut());
        self.in_view.set(self.in_view.get() + 1);
        let sub = {
            let _stored = crate::types::tz::stored_definition();
            self.query(&q, &[])
        };
        self.in_view.set(self.in_view.get() - 1);
        *self.ctes.borrow_mut() = saved;
        let sub = sub?;
        let mut cols = sub.columns;
        if cols.len() != table.columns.len() || cols.iter().zip(&table.columns).any(|(a, b)| a.ty != b.ty) {
            return Err(PgError::internal(format!("view \"{}\" no longer matches its stored columns", table.name)));
        }
        for (c, vc) in cols.iter_mut().zip(&table.columns) {
            c.name = vc.name.clone();
        }
        let rel = alias_name.unwrap_or_else(|| table.name.clone());
        if let Some(a) = alias {
            rename_columns(&mut cols, &a.columns, &rel)?;
        }
        let scope =
            Scope { same_query: false, cols: cols.iter().map(|c| ScopeCol::new(Some(rel.clone()), c.name.clone(), c.ty)).collect() };
        Ok((Rel::Leaf(sub.node, cols.len(), false), scope))
    }

    /// Whether a bound query holds values of this moment (the transaction's start time, the
    /// locks held now): its plan cannot be reused.
    pub fn used_now(&self) -> bool {
        self.now_used.get()
    }

    /// Binds an UPDATE's or DELETE's expression against its table's `scope`: subqueries are
    /// planned (a correlated one reads the row being changed); aggregates are not allowed.
    pub(crate) fn bind_for_change(&self, e: &Expr, scope: &Scope) -> Result<Scalar> {
        self.binder(scope, &[], None).bind(e)
    }

    /// Plans the rows an `UPDATE ... FROM` or `DELETE ... USING` changes: the target `table`
    /// (known by `alias`) joined with the `from` items under `selection`, planned as a
    /// SELECT's FROM and WHERE are (join order, hash or merge joins, index probes). The
    /// FROM items cannot read the target (it is not one of them, as in PostgreSQL).
    pub(crate) fn change_join(
        &self,
        table: &Arc<crate::catalog::Table>,
        alias: Option<&str>,
        from: &[TableWithJoins],
        selection: Option<&Expr>,
    ) -> Result<ChangeJoin> {
        let n = table.columns.len();
        let mut scope = Scope::of_table(table, alias);
        let mut tid = ScopeCol::new(None, "\u{0}tid".into(), SqlType::new(TypeId::Int8));
        tid.hidden = true;
        scope.cols.push(tid);
        let mut plan = super::dml::Plan::new(table.clone(), None, vec![true; n]);
        plan.tid_col = true;
        let target = Rel::Leaf(Node::Scan(Box::new(plan)), n + 1, false);
        let refname = alias.unwrap_or(&table.name);
        // A FROM item that names the target: PostgreSQL's errors, not "missing" (42P10 from
        // a LATERAL item, else 42P01 for `t.col` and 42703 for `col`, with a hint).
        let names_target = |e: PgError, lateral: bool| -> PgError {
            let entry = || format!("There is an entry for table \"{refname}\", but it cannot be referenced from this part of the query.");
            match e.code {
                sqlstate::UNDEFINED_TABLE
                    if e.message == format!("missing FROM-clause entry for table \"{refname}\"")
                        || e.message == format!("missing FROM-clause entry for table \"{}\"", table.name) =>
                {
                    let code = if lateral { "42P10" } else { sqlstate::UNDEFINED_TABLE };
                    PgError::new(code, format!("invalid reference to FROM-clause entry for table \"{refname}\"")).with_hint(entry())
                }
                sqlstate::UNDEFINED_COLUMN => {
                    let col = e.message.strip_prefix("column \"").and_then(|m| m.strip_suffix("\" does not exist")).map(str::to_string);
                    match col.filter(|c| scope.resolve(None, c).ok().flatten().is_some()) {
                        Some(_) if lateral => PgError::new("42P10", format!("invalid reference to FROM-clause entry for table \"{refname}\""))
                            .with_hint(entry()),
                        Some(c) => e.with_hint(format!(
                            "There is a column named \"{c}\" in table \"{refname}\", but it cannot be referenced from this part of the query."
                        )),
                        None => e,
                    }
                }
                _ => e,
            }
        };
        // Whether a FROM item holds a LATERAL subquery or a function (which may read the items
        // to its left).
        let lateral = |t: &TableWithJoins| {
            std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)).any(|f| {
                matches!(
                    f,
                    TableFactor::Derived { lateral: true, .. }
                        | TableFactor::Function { .. }
                        | TableFactor::Table { args: Some(_), .. }
                        | TableFactor::UNNEST { .. }
                )
            })
        };
        let mut items: Option<(Rel, Scope)> = None;
        for t in from {
            let (left, mut is) = match items.take() {
                Some((rel, is)) => (Some(rel), Some(is)),
                None => (None, None),
            };
            let (r, s) =
                self.bind_from(t, &[], is.as_ref().zip(left).map(|(s, r)| (s, Some(r)))).map_err(|e| names_target(e, lateral(t)))?;
            for c in &s.cols {
                if let Some(rn) = &c.rel {
                    if scope.has_rel(rn) || is.as_ref().is_some_and(|is| is.has_rel(rn)) {
                        return Err(PgError::new("42712", format!("table name \"{rn}\" specified more than once")));
                    }
                }
            }
            items = Some(match is.take() {
                // The first item has nothing to its left to read: not a per-row loop.
                None => (not_lateral(r), s),
                Some(mut is) => {
                    is.cols.extend(s.cols);
                    (r, is)
                }
            });
        }
        let (items, item_scope) = items.ok_or_else(|| PgError::internal("UPDATE ... FROM without FROM items"))?;
        scope.cols.extend(item_scope.cols);
        let rel = Rel::Join(JoinKind::Inner, Box::new(target), Box::new(items), Vec::new());
        let cond = match selection {
            Some(w) => Some(self.binder(&scope, &[], None).boolean(w, "WHERE").map_err(agg_in("WHERE"))?),
            None => None,
        };
        let mut filters = Vec::new();
        if let Some(c) = &cond {
            conjuncts(c.clone(), &mut filters);
        }
        let types: Vec<SqlType> = scope.cols.iter().map(|c| c.ty).collect();
        let mut node = plan_rel(&super::cost::Estimator::new(self.s), rel, filters, &types);
        super::cost::choose_access(self.s, &mut node);
        Ok(ChangeJoin { node, scope, cond })
    }

    fn binder<'b>(&'b self, scope: &'b Scope, outer: &'b [&'b Scope], collect: Option<&'b Collect>) -> Binder<'b> {
        Binder {
            scope,
            outer,
            queries: Some(self),
            collect,
            in_agg: false,
            now_us: self.now_us,
            now_used: Some(&self.now_used),
            stmt_us: Some(self.s.statement_start_us()),
        }
    }

    /// Binds a whole query (WITH, body, ORDER BY, LIMIT) with `outer` scopes visible.
    pub fn query(&self, q: &Query, outer: &[&Scope]) -> Result<BoundQuery> {
        let Query { with, body, order_by, limit_clause, fetch, locks, for_clause, settings, format_clause, pipe_operators } = q;
        need(for_clause.is_none() && settings.is_none() && format_clause.is_none() && pipe_operators.is_empty(), "this query clause")?;
        let saved = self.ctes.borrow().len();
        // A locking clause over several FROM items: the table scans get lock slots.
        let multi_lock = !locks.is_empty()
            && matches!(&**body, SetExpr::Select(sel) if sel.from.len() > 1
                || sel.from.iter().any(|t| !t.joins.is_empty() || matches!(t.relation, TableFactor::NestedJoin { .. })));
        let saved_slots = self.lock_slots.replace(None);
        let r = (|| {
            if let Some(w) = with {
                for cte in &w.cte_tables {
                    need(cte.from.is_none(), "WITH ... FROM")?;
                    let name = fold_ident(&cte.alias.name);
                    if self.ctes.borrow()[saved..].iter().any(|(n, ..)| *n == name) {
                        return Err(PgError::new("42712", format!("WITH query name \"{name}\" specified more than once")));
                    }
                    let (node, cols, correlated, recursive) = if w.recursive && names_itself(&cte.query, &name) {
                        self.recursive_cte(&name, cte, outer)?
                    } else {
                        let sub = self.query(&cte.query, outer)?;
                        let mut cols = sub.columns.clone();
                        rename_columns(&mut cols, &cte.alias.columns, &name)?;
                        (sub.node, cols, sub.correlated, false)
                    };
                    // heapstore computes a WITH query once (MATERIALIZED). NOT MATERIALIZED
                    // lets PostgreSQL evaluate it at each reference instead, which gives the
                    // same rows unless it calls a volatile function (heapstore's: the
                    // sequence functions and gen_random_uuid): refused then.
                    if matches!(cte.materialized, Some(sqlparser::ast::CteAsMaterialized::NotMaterialized)) {
                        let mut volatile = false;
                        visit_exprs(&node, &mut |e| volatile |= expr::calls_volatile(e));
                        if volatile {
                            return Err(refuse(
                                "NOT MATERIALIZED on a WITH query that calls a volatile function (nextval, setval, gen_random_uuid, random)",
                            ));
                        }
                    }
                    let def = Arc::new(CteDef {
                        name: name.clone(),
                        columns: cols.iter().map(|c| c.name.clone()).collect(),
                        width: cols.len(),
                        node,
                        correlated,
                        recursive,
                    });
                    self.ctes.borrow_mut().push((name, def, cols, outer.len()));
                }
            }
            let order: Vec<sqlparser::ast::OrderByExpr> = match order_by {
                None => Vec::new(),
                Some(o) => {
                    need(o.interpolate.is_none(), "INTERPOLATE")?;
                    match &o.kind {
                        OrderByKind::Expressions(v) => v.clone(),
                        OrderByKind::All(_) => return Err(refuse("ORDER BY ALL")),
                    }
                }
            };
            for o in &order {
                need(o.with_fill.is_none(), "WITH FILL")?;
            }
            let empty = Scope::default();
            let lb = self.binder(&empty, outer, None);
            let (mut limit, mut offset) = (None, None);
            match limit_clause {
                None => {}
                Some(LimitClause::LimitOffset { limit: l, offset: o, limit_by }) => {
                    need(limit_by.is_empty(), "LIMIT BY")?;
                    limit = l.as_ref().map(|e| limit_expr(&lb, e, "LIMIT")).transpose()?;
                    offset = o.as_ref().map(|o| limit_expr(&lb, &o.value, "OFFSET")).transpose()?;
                }
                Some(LimitClause::OffsetCommaLimit { .. }) => return Err(refuse("LIMIT offset, count")),
            }
            let ties = fetch.as_ref().is_some_and(|f| f.with_ties);
            if ties && order.is_empty() {
                return Err(PgError::syntax("WITH TIES cannot be specified without ORDER BY clause"));
            }
            if let Some(f) = fetch {
                need(!f.percent, "FETCH ... PERCENT")?;
                if limit.is_some() {
                    return Err(PgError::syntax("syntax error: LIMIT and FETCH cannot both be given"));
                }
                limit = Some(match &f.quantity {
                    Some(e) => limit_expr(&lb, e, "LIMIT")?,
                    None => Scalar::Const(Value::Int8(1)),
                });
            }
            *self.lock_slots.borrow_mut() = multi_lock.then(LockSlots::default);
            let mut b = match &**body {
                SetExpr::Select(sel) => self.select(sel, &order, limit, offset, outer)?,
                other => {
                    let b = self.set_expr(other, outer)?;
                    self.finish_order_limit(b, &order, limit, offset, outer)?
                }
            };
            if ties {
                with_ties(&mut b.node)?;
            }
            Ok(b)
        })();
        let slots = self.lock_slots.replace(saved_slots);
        let row_locks = match r {
            Ok(_) if !locks.is_empty() => self.locking_clause(q, slots.as_ref()),
            _ => Ok(None),
        };
        self.ctes.borrow_mut().truncate(saved);
        let mut r = r?;
        let row_locks = row_locks?;
        r.correlated = refs_outside(&r.node, 0);
        // Several FROM items: the LockRows node goes in before column pruning, which must
        // keep the TID columns it reads.
        let mut row_locks = row_locks;
        if let Some(LockingClause { mode, wait, what, targets: Some(targets), .. }) = row_locks.take_if(|l| l.targets.is_some()) {
            if let Some(n) = lock_shape_error(&r.node) {
                return Err(refuse_lock(what, n).unwrap_or_else(|| PgError::feature(format!("{what} on this query is not supported"))));
            }
            if targets.is_empty() {
                return Err(PgError::feature(format!("{what} on this query is not supported")));
            }
            r.node = place_multi_lock(
                std::mem::replace(&mut r.node, Node::Unit),
                exec::lockrows::LockRows { input: Node::Unit, mode, wait, targets },
            )?;
        }
        let width = r.node.width();
        prune(&mut r.node, &vec![true; width]);
        super::cost::choose_access(self.s, &mut r.node);
        if let Some(LockingClause { mode, wait, what, lock, .. }) = row_locks {
            let refused =
                |n: NoLock| refuse_lock(what, n).unwrap_or_else(|| PgError::feature(format!("{what} on this query is not supported")));
            if lock {
                r.node = lock_rows(std::mem::replace(&mut r.node, Node::Unit), mode, wait).map_err(refused)?;
            } else if let Some(n) = lock_shape_error(&r.node) {
                return Err(refused(n));
            }
        }
        Ok(r)
    }

    /// The row locks a query's locking clauses ask for (`FOR UPDATE` ...: `exec::lockrows`),
    /// checked as PostgreSQL checks them: the strongest strength named, NOWAIT if any clause
    /// says it, else SKIP LOCKED if any does. None when the query has no FROM (nothing to
    /// lock, as in PostgreSQL). heapstore locks the rows of a query over one table (or a
    /// view over one table), or over several FROM items that are all tables (`slots`: each
    /// table's strength and wait policy then come from the clauses naming it); a subquery in
    /// FROM is refused with 0A000. Runs while the query's WITH names are in scope.
    fn locking_clause(&self, q: &Query, slots: Option<&LockSlots>) -> Result<Option<LockingClause>> {
        let mut mode = RowLockMode::KeyShare;
        let mut wait = LockWait::Block;
        let mut of_names = Vec::new();
        for l in &q.locks {
            let (m, of) = lock_strength(l);
            mode = mode.max(m);
            wait = stronger_wait(wait, &l.nonblock);
            of_names.extend(of);
        }
        let what = q.locks.iter().map(|l| lock_strength(l).0).next().unwrap_or(mode).clause();
        let sel = match &*q.body {
            SetExpr::Select(sel) => sel,
            SetExpr::SetOperation { .. } => {
                return Err(PgError::feature(format!("{what} is not allowed with UNION/INTERSECT/EXCEPT")));
            }
            SetExpr::Values(_) => return Err(PgError::feature(format!("{what} cannot be applied to VALUES"))),
            _ => return Err(PgError::feature(format!("{what} on this query is not supported"))),
        };
        if sel.distinct.is_some() {
            return Err(PgError::feature(format!("{what} is not allowed with DISTINCT clause")));
        }
        if !matches!(&sel.group_by, sqlparser::ast::GroupByExpr::Expressions(v, m) if v.is_empty() && m.is_empty()) {
            return Err(PgError::feature(format!("{what} is not allowed with GROUP BY clause")));
        }
        if sel.having.is_some() {
            return Err(PgError::feature(format!("{what} is not allowed with HAVING clause")));
        }
        let names: Vec<(String, Option<String>)> = sel
            .from
            .iter()
            .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)))
            .map(|f| match f {
                TableFactor::Table { name, alias, .. } => (
                    name.0.last().and_then(|p| p.as_ident()).map(fold_ident).unwrap_or_default(),
                    alias.as_ref().map(|a| fold_ident(&a.name)),
                ),
                TableFactor::Derived { alias, .. } | TableFactor::Function { alias, .. } | TableFactor::UNNEST { alias, .. } => {
                    (String::new(), alias.as_ref().map(|a| fold_ident(&a.name)))
                }
                _ => (String::new(), None),
            })
            .collect();
        for of in &of_names {
            if of.is_empty() {
                return Err(PgError::syntax(format!("{what} must specify unqualified relation names")));
            }
            let found = names.iter().any(|(n, a)| a.as_deref().unwrap_or(n) == of)
                || slots.is_some_and(|sl| sl.tables.iter().any(|(_, _, r)| r == of));
            if !found {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_TABLE,
                    format!("relation \"{of}\" in {what} clause not found in FROM clause"),
                ));
            }
        }
        let nothing = Ok(Some(LockingClause { mode, wait, what, lock: false, targets: None }));
        if sel.from.is_empty() {
            return nothing;
        }
        if let Some(sl) = slots {
            // Several FROM items: each table's strength and wait policy from the clauses that
            // name it (or name none), as PostgreSQL's row marks.
            if let Some(kind) = sl.other {
                return Err(PgError::feature(format!("{what} on a join with {kind} in FROM is not supported")));
            }
            let mut per: Vec<Option<(RowLockMode, LockWait)>> = vec![None; sl.tables.len()];
            for l in &q.locks {
                let (m, of) = lock_strength(l);
                for (k, (_, _, refname)) in sl.tables.iter().enumerate() {
                    if of.as_ref().is_none_or(|o| o == refname) {
                        let (pm, pw) = per[k].unwrap_or((RowLockMode::KeyShare, LockWait::Block));
                        per[k] = Some((pm.max(m), stronger_wait(pw, &l.nonblock)));
                    }
                }
            }
            let mut targets = Vec::with_capacity(sl.cols.len());
            for &(slot, col, nullable) in &sl.cols {
                let k = sl.tables.iter().position(|t| t.0 == slot).ok_or_else(|| PgError::internal("a TID column of no lock slot"))?;
                let lock = per[k];
                if lock.is_some() && nullable {
                    return Err(PgError::feature(format!("{what} cannot be applied to the nullable side of an outer join")));
                }
                targets.push(exec::lockrows::LockTarget { slot, col, table: sl.tables[k].1.clone(), lock });
            }
            return Ok(Some(LockingClause { mode, wait, what, lock: true, targets: Some(targets) }));
        }
        if sel.from.len() > 1 || !sel.from[0].joins.is_empty() {
            return Err(PgError::internal(format!("{what} over several FROM items planned without lock slots")));
        }
        // Without OF, a clause applies to the tables in FROM, and a WITH query's or a
        // function's rows are not locked (as PostgreSQL); named in OF, they are refused.
        match &sel.from[0].relation {
            TableFactor::Table { name, args: None, .. } => {
                let n = names[0].0.clone();
                if name.0.len() == 1 && self.ctes.borrow().iter().any(|(c, ..)| *c == n) {
                    if of_names.is_empty() {
                        return nothing;
                    }
                    return Err(PgError::feature(format!("{what} cannot be applied to a WITH query")));
                }
            }
            TableFactor::Table { .. } | TableFactor::Function { .. } | TableFactor::TableFunction { .. } | TableFactor::UNNEST { .. } => {
                if of_names.is_empty() {
                    return nothing;
                }
                return Err(PgError::feature(format!("{what} cannot be applied to a function")));
            }
            // VALUES in FROM: nothing to lock (PostgreSQL pushes the clause into the
            // subquery, whose VALUES list it skips), named in OF or not.
            TableFactor::Derived { subquery, .. } if matches!(&*subquery.body, SetExpr::Values(_)) => return nothing,
            _ => return Err(PgError::feature(format!("{what} on a subquery or join in FROM is not supported"))),
        }
        Ok(Some(LockingClause { mode, wait, what, lock: true, targets: None }))
    }

    /// ORDER BY / LIMIT over a set operation's (or VALUES') output columns.
    fn finish_order_limit(
        &self,
        b: BoundQuery,
        order: &[sqlparser::ast::OrderByExpr],
        limit: Option<Scalar>,
        offset: Option<Scalar>,
        outer: &[&Scope],
    ) -> Result<BoundQuery> {
        let BoundQuery { mut node, columns, correlated } = b;
        if !order.is_empty() {
            let scope = Scope { same_query: false, cols: columns.iter().map(|c| ScopeCol::new(None, c.name.clone(), c.ty)).collect() };
            let binder = self.binder(&scope, outer, None);
            let mut keys = Vec::new();
            for o in order {
                let e = match ordinal(&o.expr, columns.len(), "ORDER BY")? {
                    Some(i) => Scalar::Col(i, columns[i].ty),
                    None => binder.bind(&o.expr).map_err(|e| {
                        if e.code == sqlstate::UNDEFINED_COLUMN || e.code == sqlstate::UNDEFINED_TABLE {
                            PgError::feature("ORDER BY on a UNION/INTERSECT/EXCEPT result must be on one of the result columns")
                        } else {
                            e
                        }
                    })?,
                };
                need_operator(type_of(&e), true)?;
                keys.push(SortKey::new(e, &o.options));
            }
            node = Node::Sort(Box::new(node), keys);
        }
        if limit.is_some() || offset.is_some() {
            node = Node::Limit(Box::new(node), limit, offset, None);
        }
        Ok(BoundQuery { node, columns, correlated })
    }

    /// A query body other than a plain SELECT block: set operations, VALUES, parentheses.
    /// `WITH RECURSIVE name AS (non-recursive UNION [ALL] recursive)`: the non-recursive term
    /// fixes the columns and their types; the recursive term reads the working table where
    /// it names `name` (once, not inside a subquery), and must give the same types.
    /// Returns (plan, columns, correlated, recursive).
    fn recursive_cte(&self, name: &str, cte: &sqlparser::ast::Cte, outer: &[&Scope]) -> Result<(Node, Vec<OutCol>, bool, bool)> {
        let q = &cte.query;
        if q.order_by.is_some() {
            return Err(PgError::feature("ORDER BY in a recursive query is not implemented"));
        }
        if q.limit_clause.is_some() || q.fetch.is_some() {
            // PostgreSQL names OFFSET first.
            let offset = match &q.limit_clause {
                Some(LimitClause::LimitOffset { offset, .. }) => offset.is_some(),
                Some(LimitClause::OffsetCommaLimit { .. }) => true,
                None => false,
            };
            let what = if offset { "OFFSET" } else { "LIMIT" };
            return Err(PgError::feature(format!("{what} in a recursive query is not implemented")));
        }
        need(q.with.is_none(), "a WITH clause inside a recursive query")?;
        need(q.locks.is_empty(), "FOR UPDATE in a recursive query")?;
        let bad = || {
            PgError::new(
                "42P19",
                format!("recursive query \"{name}\" does not have the form non-recursive-term UNION [ALL] recursive-term"),
            )
        };
        let SetExpr::SetOperation { op: SetOperator::Union, set_quantifier, left, right } = &*q.body else { return Err(bad()) };
        let all = match set_quantifier {
            SetQuantifier::All => true,
            SetQuantifier::Distinct | SetQuantifier::None => false,
            other => return Err(refuse(&format!("UNION {other}"))),
        };
        let probe = Query { body: left.clone(), ..(**q).clone() };
        if names_itself(&probe, name) {
            return Err(PgError::new(
                "42P19",
                format!("recursive reference to query \"{name}\" must not appear within its non-recursive term"),
            ));
        }
        let nonrec = self.set_expr(left, outer)?;
        let mut cols = nonrec.columns.clone();
        rename_columns(&mut cols, &cte.alias.columns, name)?;
        let width = cols.len();
        let id = self.next_work.get();
        self.next_work.set(id + 1);
        let work = Arc::new(CteDef {
            name: WORK_TABLE_MARK.into(),
            columns: cols.iter().map(|c| c.name.clone()).collect(),
            width,
            node: Node::WorkTable(id, width),
            correlated: false,
            recursive: false,
        });
        self.ctes.borrow_mut().push((name.to_string(), work, cols.clone(), outer.len()));
        let saved_refs = self.work_refs.replace(0);
        let saved_nullable = self.nullable.replace(0);
        let saved_setop = self.setop.replace(None);
        let rec = self.set_expr(right, outer);
        self.nullable.set(saved_nullable);
        self.setop.set(saved_setop);
        let refs = self.work_refs.replace(saved_refs);
        self.ctes.borrow_mut().pop();
        let rec = rec?;
        if refs > 1 {
            return Err(PgError::new("42P19", format!("recursive reference to query \"{name}\" must not appear more than once")));
        }
        if rec.columns.len() != width {
            return Err(PgError::syntax("each UNION query must have the same number of columns"));
        }
        let mut casts = Vec::with_capacity(width);
        let mut cast_needed = false;
        for (k, (a, b)) in cols.iter().zip(&rec.columns).enumerate() {
            if a.ty.id != b.ty.id {
                return Err(PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "recursive query \"{name}\" column {} has type {} in non-recursive term but type {} overall",
                        k + 1,
                        a.ty.name(),
                        b.ty.name()
                    ),
                )
                .with_hint("Cast the output of the non-recursive term to the correct type."));
            }
            cast_needed |= a.ty != b.ty;
            casts.push(if a.ty == b.ty { Scalar::Col(k, b.ty) } else { Scalar::Cast(Box::new(Scalar::Col(k, b.ty)), a.ty) });
        }
        let rec_node = if cast_needed { Node::Project(Box::new(rec.node), casts) } else { rec.node };
        let correlated = refs_outside(&nonrec.node, 0) || refs_outside(&rec_node, 0);
        let node = Node::RecursiveUnion(Box::new(exec::RecursiveUnion { nonrec: nonrec.node, rec: rec_node, all, work: id, width }));
        Ok((node, cols, correlated, true))
    }

    fn set_expr(&self, body: &SetExpr, outer: &[&Scope]) -> Result<BoundQuery> {
        match body {
            SetExpr::Select(sel) => self.select(sel, &[], None, None, outer),
            SetExpr::Query(q) => self.query(q, outer),
            SetExpr::Values(v) => self.values(v, outer),
            SetExpr::SetOperation { op, set_quantifier, left, right } => {
                let all = match set_quantifier {
                    SetQuantifier::All => true,
                    SetQuantifier::Distinct | SetQuantifier::None => false,
                    other => return Err(refuse(&format!("{op} {other}"))),
                };
                let kind = match op {
                    SetOperator::Union => SetOpKind::Union,
                    SetOperator::Intersect => SetOpKind::Intersect,
                    SetOperator::Except => SetOpKind::Except,
                    other => return Err(refuse(&other.to_string())),
                };
                let what = match kind {
                    SetOpKind::Union => "UNION",
                    SetOpKind::Intersect => "INTERSECT",
                    SetOpKind::Except => "EXCEPT",
                };
                // Where a recursive term may not name its own query (PostgreSQL's rule):
                // either side of INTERSECT ALL or EXCEPT ALL, the right side of EXCEPT.
                let (l_ctx, r_ctx) = match (kind, all) {
                    (SetOpKind::Intersect, true) => (Some("INTERSECT"), Some("INTERSECT")),
                    (SetOpKind::Except, true) => (Some("EXCEPT"), Some("EXCEPT")),
                    (SetOpKind::Except, false) => (None, Some("EXCEPT")),
                    _ => (None, None),
                };
                let side = |e: &SetExpr, ctx: Option<&'static str>| {
                    let saved = ctx.map(|c| self.setop.replace(Some(c)));
                    let r = self.set_expr(e, outer);
                    if let Some(s) = saved {
                        self.setop.set(s);
                    }
                    r
                };
                let l = side(left, l_ctx)?;
                let r = side(right, r_ctx)?;
                if l.columns.len() != r.columns.len() {
                    return Err(PgError::syntax(format!("each {what} query must have the same number of columns")));
                }
                let mut cols = Vec::with_capacity(l.columns.len());
                let mut lx = Vec::new();
                let mut rx = Vec::new();
                let mut lcast = false;
                let mut rcast = false;
                // A branch's untyped literal ('2', NULL) takes the other branch's type, as in
                // PostgreSQL: it was read as text, and text converts to any type by its input
                // function, which is how PostgreSQL reads the literal.
                let (lu, ru) = (untyped_literal_columns(left), untyped_literal_columns(right));
                for (i, (a, b)) in l.columns.iter().zip(&r.columns).enumerate() {
                    let known = |t: SqlType, u: &[bool]| (!(u.get(i).copied().unwrap_or(false) && t.id == TypeId::Text)).then_some(t);
                    let ty = common_type(&[known(a.ty, &lu), known(b.ty, &ru)], what)?.unwrap_or(SqlType::new(TypeId::Text));
                    // char(n) values of different lengths (or text beside char(n)) compare equal
                    // without their padding, and which padding a deduplicated row keeps is
                    // PostgreSQL's plan's choice: only UNION ALL, which compares nothing, runs.
                    if ty.id == TypeId::Bpchar && a.ty != b.ty && !(all && kind == SetOpKind::Union) {
                        return Err(refuse(&format!("{what} of char columns of different lengths")));
                    }
                    let ty = if a.ty.id == ty.id && b.ty.id == ty.id && a.ty.typmod == b.ty.typmod { a.ty } else { SqlType::new(ty.id) };
                    // Such a literal becomes a timestamptz as the rows run, on the session's
                    // clocks: in a view, PostgreSQL fixed it in the zone the view was made in
                    // (UTC for heapstore, which keeps the view as text).
                    let lit = lu.get(i).copied().unwrap_or(false) || ru.get(i).copied().unwrap_or(false);
                    // (timetz text without an offset too, and arrays of either.)
                    let zoned = |t: TypeId| matches!(t, TypeId::Timestamptz | TypeId::TimeTz);
                    if (zoned(ty.id) || ty.elem().is_some_and(|e| zoned(e.id)))
                        && lit
                        && crate::types::tz::in_stored_definition()
                        && !crate::types::tz::session_is_utc()
                    {
                        return Err(refuse(&format!(
                            "an untyped literal read as {} by a set operation in a view, outside TimeZone UTC",
                            ty.name()
                        )));
                    }
                    lcast |= a.ty != ty;
                    rcast |= b.ty != ty;
                    lx.push(to_type(Scalar::Col(i, a.ty), Some(ty))?);
                    rx.push(to_type(Scalar::Col(i, b.ty), Some(ty))?);
                    if !all {
                        need_operator(Some(ty), false)?;
                    }
                    cols.push(OutCol { name: a.name.clone(), ty, source: None });
                }
                let ln = if lcast { Node::Project(Box::new(l.node), lx) } else { l.node };
                let rn = if rcast { Node::Project(Box::new(r.node), rx) } else { r.node };
                Ok(BoundQuery { node: Node::SetOp(kind, all, Box::new(ln), Box::new(rn)), columns: cols, correlated: false })
            }
            SetExpr::Table(_) => Err(refuse("TABLE name as a query")),
            _ => Err(refuse("a data-modifying statement as a query")),
        }
    }

    /// `VALUES (...), (...)`: columns column1, column2, ... of the rows' common types.
    fn values(&self, v: &sqlparser::ast::Values, outer: &[&Scope]) -> Result<BoundQuery> {
        need(!v.explicit_row, "VALUES ROW(...)")?;
        let empty = Scope::default();
        let b = self.binder(&empty, outer, None);
        let mut rows: Vec<Vec<Scalar>> = Vec::with_capacity(v.rows.len());
        for r in &v.rows {
            rows.push(r.iter().map(|e| b.bind(e)).collect::<Result<Vec<_>>>()?);
        }
        let width = rows.first().map(|r| r.len()).unwrap_or(0);
        if rows.iter().any(|r| r.len() != width) {
            return Err(PgError::syntax("VALUES lists must all be the same length"));
        }
        let mut cols = Vec::with_capacity(width);
        for c in 0..width {
            let ty = common_type(&rows.iter().map(|r| type_of(&r[c])).collect::<Vec<_>>(), "VALUES")?.unwrap_or(SqlType::new(TypeId::Text));
            for r in rows.iter_mut() {
                let e = std::mem::replace(&mut r[c], Scalar::Const(Value::Null));
                r[c] = to_type(e, Some(ty))?;
            }
            cols.push(OutCol { name: format!("column{}", c + 1), ty, source: None });
        }
        Ok(BoundQuery { node: Node::Values(rows, width), columns: cols, correlated: false })
    }

    /// One FROM item: a table, a WITH query, a subquery, or a parenthesized join.
    /// One FROM item. `left`: the columns of the items before it that it may read when it is
    /// LATERAL (an explicit `LATERAL (subquery)`, or a function, which PostgreSQL makes
    /// lateral implicitly).
    fn bind_from_item(&self, t: &TableFactor, outer: &[&Scope], left: Option<&Scope>) -> Result<(Rel, Scope)> {
        let before = self.lock_slots.borrow().as_ref().map(|sl| sl.tables.len());
        let r = self.bind_from_item_inner(t, outer, left)?;
        if let (Some(before), Some(sl)) = (before, self.lock_slots.borrow_mut().as_mut()) {
            // A FROM item that got no lock slot: nothing a re-check could read again.
            if sl.tables.len() == before && !matches!(t, TableFactor::NestedJoin { .. }) && sl.other.is_none() {
                sl.other = Some(match t {
                    TableFactor::Derived { .. } => "a subquery",
                    TableFactor::Table { args: None, .. } => "a view, a WITH query or a system catalog",
                    _ => "a function",
                });
            }
        }
        Ok(r)
    }

    fn bind_from_item_inner(&self, t: &TableFactor, outer: &[&Scope], left: Option<&Scope>) -> Result<(Rel, Scope)> {
        match t {
            TableFactor::Table {
                name,
                alias,
                args: Some(fargs),
                with_hints,
                version,
                with_ordinality,
                partitions,
                json_path,
                sample,
                index_hints,
            } => {
                need(sample.is_none(), "TABLESAMPLE")?;
                need(
                    with_hints.is_empty() && version.is_none() && partitions.is_empty() && json_path.is_none() && index_hints.is_empty(),
                    "this table clause",
                )?;
                need(fargs.settings.is_none(), "SETTINGS")?;
                let parts: Vec<String> = name.0.iter().filter_map(|p| p.as_ident().map(fold_ident)).collect();
                let fname = match parts.as_slice() {
                    [f] if f != "_pg_expandarray" => f.as_str(),
                    [s, f] if s == "pg_catalog" && f != "_pg_expandarray" => f.as_str(),
                    [s, f] if s == "information_schema" && f == "_pg_expandarray" => f.as_str(),
                    _ => return Err(PgError::feature(format!("function {name}() in FROM is not supported by heapstore"))),
                };
                if !super::srf::is_srf(fname) {
                    return Err(PgError::feature(format!("function {fname}() in FROM is not supported by heapstore yet")));
                }
                let exprs = fargs
                    .args
                    .iter()
                    .map(|a| match a {
                        sqlparser::ast::FunctionArg::Unnamed(sqlparser::ast::FunctionArgExpr::Expr(e)) => Ok(e),
                        other => Err(PgError::feature(format!("function argument {other} is not supported"))),
                    })
                    .collect::<Result<Vec<_>>>()?;
                self.function_scan(fname, &exprs, alias.as_ref(), *with_ordinality, outer, left)
            }
            // `LATERAL f(...)`: a function in FROM may read earlier FROM items with or without
            // the keyword, as in PostgreSQL.
            TableFactor::Function { lateral: true, name, args, alias } => {
                let parts: Vec<String> = name.0.iter().filter_map(|p| p.as_ident().map(fold_ident)).collect();
                let fname = match parts.as_slice() {
                    [f] if f != "_pg_expandarray" => f.as_str(),
                    [s, f] if s == "pg_catalog" && f != "_pg_expandarray" => f.as_str(),
                    _ => return Err(PgError::feature(format!("function {name}() in FROM is not supported by heapstore"))),
                };
                if !super::srf::is_srf(fname) {
                    return Err(PgError::feature(format!("function {fname}() in FROM is not supported by heapstore yet")));
                }
                let exprs = args
                    .iter()
                    .map(|a| match a {
                        sqlparser::ast::FunctionArg::Unnamed(sqlparser::ast::FunctionArgExpr::Expr(e)) => Ok(e),
                        other => Err(PgError::feature(format!("function argument {other} is not supported"))),
                    })
                    .collect::<Result<Vec<_>>>()?;
                self.function_scan(fname, &exprs, alias.as_ref(), false, outer, left)
            }
            TableFactor::UNNEST { alias, array_exprs, with_offset, with_offset_alias, with_ordinality } => {
                need(!with_offset && with_offset_alias.is_none(), "WITH OFFSET")?;
                let exprs: Vec<&Expr> = array_exprs.iter().collect();
                self.function_scan("unnest", &exprs, alias.as_ref(), *with_ordinality, outer, left)
            }
            TableFactor::Table {
                name,
                alias,
                args: None,
                with_hints,
                version,
                with_ordinality,
                partitions,
                json_path,
                sample,
                index_hints,
            } => {
                need(sample.is_none(), "TABLESAMPLE")?;
                need(!with_ordinality, "WITH ORDINALITY")?;
                need(
                    with_hints.is_empty() && version.is_none() && partitions.is_empty() && json_path.is_none() && index_hints.is_empty(),
                    "this table clause",
                )?;
                let alias_name = alias.as_ref().map(|a| fold_ident(&a.name));
                // A system catalog (pg_catalog is searched first, as in PostgreSQL).
                let parts: Vec<String> = name.0.iter().filter_map(|p| p.as_ident().map(fold_ident)).collect();
                let (schema, last) = match parts.as_slice() {
                    [s, r] => (Some(s.as_str()), r.as_str()),
                    [r] => (None, r.as_str()),
                    _ => (None, ""),
                };
                let cte_named = schema.is_none() && self.ctes.borrow().iter().any(|(n, ..)| n == last);
                if !cte_named {
                    if let Some(rel) = super::pg_catalog::relation(self.s, schema, last) {
                        // Generated now from the catalog: a plan holding it is not reused.
                        self.now_used.set(true);
                        let relname = alias_name.clone().unwrap_or(last.to_string());
                        let mut cols: Vec<OutCol> = rel
                            .cols
                            .iter()
                            .enumerate()
                            .map(|(i, (n, t))| OutCol { name: n.clone(), ty: *t, source: Some((rel.oid, i as i16 + 1)) })
                            .collect();
                        if let Some(a) = alias {
                            rename_columns(&mut cols, &a.columns, &relname)?;
                        }
                        let scope = Scope {
                            same_query: false,
                            cols: cols
                                .iter()
                                .map(|c| ScopeCol {
                                    rel: Some(relname.clone()),
                                    name: c.name.clone(),
                                    ty: c.ty,
                                    hidden: false,
                                    source: c.source,
                                    whole_row: false,
                                    nullable: false,
                                    not_null: false,
                                })
                                .collect(),
                        };
                        let width = cols.len();
                        let rows = rel.rows.into_iter().map(|r| r.into_iter().map(Scalar::Const).collect()).collect();
                        return Ok((Rel::Leaf(Node::Values(rows, width), width, false), scope));
                    }
                    if let Some(sch) = schema.filter(|s| super::pg_catalog::is_system_schema(s)) {
                        return Err(PgError::feature(format!("the catalog relation {sch}.{last} is not supported by heapstore")));
                    }
                }
                let tname = super::ddl::table_name(name)?;
                // A WITH query of that name (unqualified names only).
                if name.0.len() == 1 {
                    let found =
                        self.ctes.borrow().iter().rev().find(|(n, ..)| *n == tname).map(|(_, d, c, level)| (d.clone(), c.clone(), *level));
                    if let Some((def, mut cols, level)) = found {
                        // A WITH query reading an enclosing query's row is evaluated with the
                        // outer rows of the level that defined it.
                        if def.correlated && level != outer.len() {
                            return Err(refuse("a WITH query that reads an outer query's columns, named from a subquery"));
                        }
                        let node = match &def.node {
                            // The recursive term's reference to its own query.
                            Node::WorkTable(id, w) if def.name == WORK_TABLE_MARK => Node::WorkTable(*id, *w),
                            _ => Node::Cte(def.clone()),
                        };
                        if matches!(node, Node::WorkTable(..)) {
                            self.work_refs.set(self.work_refs.get() + 1);
                            self.level_refs.set(self.level_refs.get() + 1);
                            // Levels a LATERAL item adds are the same query's (a FROM
                            // subquery is too, and adds none); any other is a subquery.
                            if self.nullable.get() > 0 {
                                return Err(outer_join_recursion(&tname));
                            }
                            if let Some(op) = self.setop.get() {
                                return Err(PgError::new(
                                    "42P19",
                                    format!("recursive reference to query \"{tname}\" must not appear within {op}"),
                                ));
                            }
                            if outer[..outer.len() - level].iter().any(|l| !l.same_query) {
                                return Err(PgError::new(
                                    "42P19",
                                    format!("recursive reference to query \"{tname}\" must not appear within a subquery"),
                                ));
                            }
                        }
                        let rel = alias_name.clone().unwrap_or(tname.clone());
                        if let Some(a) = alias {
                            rename_columns(&mut cols, &a.columns, &rel)?;
                        }
                        let scope = Scope {
                            same_query: false,
                            cols: cols
                                .iter()
                                .map(|c| ScopeCol {
                                    rel: Some(rel.clone()),
                                    name: c.name.clone(),
                                    ty: c.ty,
                                    hidden: false,
                                    source: c.source,
                                    whole_row: false,
                                    nullable: false,
                                    not_null: false,
                                })
                                .collect(),
                        };
                        return Ok((Rel::Leaf(node, cols.len(), false), scope));
                    }
                }
                if tname == "pg_locks" && self.s.lookup_table("pg_locks").is_none() {
                    // The locks of this moment: a plan holding them is not reused.
                    self.now_used.set(true);
                    let (node, cols) = pg_locks(self.s);
                    let rel = alias_name.unwrap_or(tname);
                    let scope = Scope {
                        same_query: false,
                        cols: cols.iter().map(|c| ScopeCol::new(Some(rel.clone()), c.name.clone(), c.ty)).collect(),
                    };
                    return Ok((Rel::Leaf(node, cols.len(), false), scope));
                }
                let mut key = crate::catalog::relation_key(name)?;
                if self.in_view.get() > 0 && crate::catalog::split_key(&key).0.is_none() {
                    key = format!("\0public\0{key}");
                }
                let table = self.s.relation_for_query(&key).map_err(|e| match name.0.first().and_then(|p| p.as_ident()) {
                    Some(id) if e.code == sqlstate::UNDEFINED_TABLE => e.at(id.span.start),
                    _ => e,
                })?;
                if let crate::catalog::RelKind::View(def) = &table.kind {
                    return self.view(&table, def, alias_name, alias.as_ref());
                }
                let mut scope = Scope::of_table(&table, alias_name.as_deref());
                if let Some(a) = alias {
                    if a.columns.len() > scope.cols.len() {
                        return Err(PgError::new(
                            "42P10",
                            format!(
                                "table \"{}\" has {} columns available but {} columns specified",
                                fold_ident(&a.name),
                                scope.cols.len(),
                                a.columns.len()
                            ),
                        ));
                    }
                    for (c, n) in scope.cols.iter_mut().zip(&a.columns) {
                        c.name = fold_ident(&n.name);
                    }
                }
                let width = table.columns.len();
                let mut plan = super::dml::Plan::new(table.clone(), None, vec![true; width]);
                if let (Some(sl), true) = (self.lock_slots.borrow_mut().as_mut(), table.is_table()) {
                    // A FOR UPDATE over several FROM items: the scan's TID, in a hidden column.
                    let slot = self.next_lock_slot.get();
                    self.next_lock_slot.set(slot + 1);
                    sl.tables.push((slot, table.clone(), alias_name.clone().unwrap_or_else(|| table.name.clone())));
                    plan.tid_col = true;
                    plan.lock_slot = Some(slot);
                    let mut c = ScopeCol::new(None, format!("{LOCK_SLOT_COL}{slot}"), SqlType::new(TypeId::Int8));
                    c.hidden = true;
                    scope.cols.push(c);
                    return Ok((Rel::Leaf(Node::Scan(Box::new(plan)), width + 1, false), scope));
                }
                Ok((Rel::Leaf(Node::Scan(Box::new(plan)), width, false), scope))
            }
            TableFactor::Derived { lateral, subquery, alias } => {
                // A subquery in FROM may read enclosing queries' columns; a LATERAL one also
                // the items to its left (the nearest outer row).
                // (With nothing to its left, a LATERAL subquery is a plain one.)
                let lateral = *lateral && left.is_some();
                let left_level = left.filter(|_| lateral).map(|l| Scope { same_query: true, cols: l.cols.clone() });
                let mut lateral_outer: Vec<&Scope> = Vec::with_capacity(outer.len() + 1);
                lateral_outer.extend(left_level.as_ref());
                lateral_outer.extend_from_slice(outer);
                need(subquery.locks.is_empty(), "FOR UPDATE / FOR SHARE in a subquery in FROM")?;
                let sub = self.query(subquery, &lateral_outer)?;
                let mut cols = sub.columns;
                let rel = alias.as_ref().map(|a| fold_ident(&a.name));
                if let Some(a) = alias {
                    rename_columns(&mut cols, &a.columns, rel.as_deref().unwrap_or(""))?;
                }
                let scope =
                    Scope { same_query: false, cols: cols.iter().map(|c| ScopeCol::new(rel.clone(), c.name.clone(), c.ty)).collect() };
                Ok((Rel::Leaf(sub.node, cols.len(), lateral), scope))
            }
            TableFactor::NestedJoin { table_with_joins, alias } => {
                let (rel, mut scope) = match left {
                    // LATERAL items inside may read the items to its left: the whole join
                    // runs once per row of those, bound as such ([`Planner::bind_from`]).
                    Some(l) if contains_lateral(table_with_joins) => {
                        let (rel, scope) = self.bind_from(table_with_joins, outer, Some((l, None)))?;
                        let types: Vec<SqlType> = scope.cols.iter().map(|c| c.ty).collect();
                        let est = super::cost::Estimator::new(self.s);
                        let node = plan_rel(&est, rel, Vec::new(), &types);
                        (Rel::Leaf(node, scope.cols.len(), true), scope)
                    }
                    _ => self.bind_from(table_with_joins, outer, None)?,
                };
                if let Some(a) = alias {
                    alias_join(&mut scope, a)?;
                }
                Ok((rel, scope))
            }
            TableFactor::Function { .. } | TableFactor::TableFunction { .. } => Err(refuse("a function in FROM")),
            _ => Err(refuse("this FROM item")),
        }
    }

    /// A set-returning function in FROM: `unnest` of several arrays zips them (PostgreSQL's
    /// `ROWS FROM`), each array its own column. Its arguments may read enclosing queries'
    /// columns and, as functions in FROM are LATERAL (keyword or not), earlier FROM items.
    fn function_scan(
        &self,
        fname: &str,
        exprs: &[&Expr],
        alias: Option<&sqlparser::ast::TableAlias>,
        ordinality: bool,
        outer: &[&Scope],
        left: Option<&Scope>,
    ) -> Result<(Rel, Scope)> {
        let empty = Scope::default();
        // Functions in FROM are implicitly LATERAL: arguments that name a column of an item
        // to the left read it from the left row (the nearer one: an enclosing query's column
        // of the same name is hidden by it). Arguments that read none are bound again
        // without it: the function then runs once, not per left row.
        let plain = |outer: &[&Scope]| {
            let b = self.binder(&empty, outer, None);
            exprs.iter().map(|e| b.bind(e)).collect::<Result<Vec<_>>>()
        };
        let (args, lateral) = match left {
            Some(l) => {
                let mut lateral_outer: Vec<&Scope> = vec![l];
                lateral_outer.extend_from_slice(outer);
                let args = plain(&lateral_outer)?;
                let mut reads = false;
                for a in &args {
                    outer_refs_in(a, 0, &mut |_| reads = true);
                }
                if reads {
                    (args, true)
                } else {
                    (plain(outer)?, false)
                }
            }
            None => (plain(outer)?, false),
        };
        // jsonb_to_record[set]: typed by the alias's column definition list, which no other
        // function in FROM takes.
        let defined = alias.is_some_and(|a| !a.columns.is_empty() && a.columns.iter().all(|c| c.data_type.is_some()));
        let calls = if matches!(fname, "jsonb_to_record" | "jsonb_to_recordset") {
            let Some(a) = alias.filter(|_| defined) else {
                return Err(PgError::syntax("a column definition list is required for functions returning \"record\""));
            };
            if ordinality {
                return Err(PgError::syntax("WITH ORDINALITY cannot be used with a column definition list")
                    .with_hint("Put the column definition list inside ROWS FROM()."));
            }
            let mut names = Vec::new();
            let mut types = Vec::new();
            for c in &a.columns {
                let n = fold_ident(&c.name);
                if names.contains(&n) {
                    return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column name \"{n}\" specified more than once")));
                }
                names.push(n);
                types.push(super::ddl::sql_type(c.data_type.as_ref().expect("checked"))?);
            }
            vec![super::srf::bind_to_record(fname, args, names, types)?]
        } else if fname == "unnest" && args.len() > 1 {
            args.into_iter().map(|a| super::srf::bind("unnest", vec![a], false)).collect::<Result<Vec<_>>>()?
        } else {
            vec![super::srf::bind(fname, args, false)?]
        };
        let mut cols: Vec<OutCol> = Vec::new();
        for c in &calls {
            let names = c.columns.clone().unwrap_or_else(|| super::srf::column_names(c));
            for (n, t) in names.into_iter().zip(&c.types) {
                cols.push(OutCol { name: n, ty: *t, source: None });
            }
        }
        if ordinality {
            cols.push(OutCol { name: "ordinality".into(), ty: SqlType::new(TypeId::Int8), source: None });
        }
        let rel = alias.map(|a| fold_ident(&a.name)).unwrap_or_else(|| fname.to_string());
        // A function returning a scalar whose output column has its own name
        // (jsonb_array_elements' `value`): the alias names the item, not the column, and the
        // item's name alone reads the value.
        let names_its_column = calls.len() == 1 && matches!(calls[0].func, super::srf::SrfFunc::JsonbElements { .. });
        let named_value = names_its_column && cols.len() == 1;
        let to_record = calls.iter().any(|c| c.columns.is_some());
        if let Some(a) = alias.filter(|_| !to_record) {
            // A function of one column named only by a table alias: the column takes the
            // alias's name too, as in PostgreSQL (unless it names its own, above).
            let scalar = calls.len() == 1 && calls[0].width() == 1 && !names_its_column;
            if a.columns.is_empty() && scalar {
                cols[0].name = rel.clone();
            }
            rename_columns(&mut cols, &a.columns, &rel)?;
        }
        let scope = Scope {
            same_query: false,
            cols: cols
                .iter()
                .map(|c| ScopeCol {
                    rel: Some(rel.clone()),
                    name: c.name.clone(),
                    ty: c.ty,
                    hidden: false,
                    source: None,
                    whole_row: named_value,
                    nullable: false,
                    not_null: false,
                })
                .collect(),
        };
        let width = cols.len();
        Ok((Rel::Leaf(Node::Function(Box::new(exec::FunctionScan { calls, ordinality })), width, lateral), scope))
    }

    /// A FROM item with its joins, left to right. `left`: the comma-separated FROM items
    /// before it, their columns and their tree: its LATERAL items may read them. The answer
    /// is the tree of `left`'s items and this one's, and this item's own columns (which
    /// follow `left`'s in the tree's rows).
    ///
    /// A LATERAL item inside the joins (`FROM a, b JOIN LATERAL (... a.x ...) s ON ...`)
    /// that reads `left`'s items runs once per row of `left` × the joins before it: from that
    /// join on, the tree is `(left × b) JOIN s ...` rather than `left × (b JOIN s ...)`, the
    /// same rows when the joins from there on are INNER or LEFT (each row of `left` is
    /// paired with every row of `b`, before and after). The item is first bound as reading
    /// this item's own columns only (the cheaper tree); only if a name is missing then is it
    /// bound again with `left`'s columns too. `left`'s columns stay out of reach of the ON
    /// conditions, as in PostgreSQL.
    ///
    /// `left` without a tree: a parenthesized join holding a LATERAL item, which the caller
    /// runs once per row of `left` as a whole (everything inside bound so).
    fn bind_from(&self, twj: &TableWithJoins, outer: &[&Scope], left: Option<(&Scope, Option<Rel>)>) -> Result<(Rel, Scope)> {
        let nested = matches!(left, Some((_, None)));
        let (left_scope, mut before) = match left {
            Some((s, r)) => (Some(s), r),
            None => (None, None),
        };
        let unnamed = |ty: SqlType| ScopeCol { hidden: true, ..ScopeCol::new(None, String::new(), ty) };
        let left_hidden = Scope { same_query: true, cols: left_scope.iter().flat_map(|ls| &ls.cols).map(|c| unnamed(c.ty)).collect() };
        let first_outer: Vec<&Scope> = match left_scope {
            Some(_) if nested && !lateral_factor(&twj.relation) => std::iter::once(&left_hidden).chain(outer.iter().copied()).collect(),
            _ => outer.to_vec(),
        };
        let refs_at_start = self.work_refs.get();
        let (mut rel, mut scope) = self.bind_from_item(&twj.relation, &first_outer, left_scope)?;
        // Once `left`'s tree is joined in below the joins (`before` taken), `rel` holds
        // `left`'s columns first, then this item's: `xw` of them.
        let xw = left_scope.map_or(0, |s| s.cols.len());
        // When the first relation reads `left` (a LATERAL one), this whole item is the right
        // input of a LATERAL join and runs once per row of `left`, which its parts then see
        // one outer level out: its LATERAL items may read it there; its ON conditions and
        // other items are bound with that level present but unnamed, so that their outer
        // references count it.
        let per_left_row = left_scope.is_some() && (nested || rel.leftmost_lateral());
        let left_level = left_scope.map(|ls| Scope { same_query: true, cols: ls.cols.clone() });
        let (outer_lateral, outer_other): (Vec<&Scope>, Vec<&Scope>) = match &left_level {
            Some(ls) if per_left_row => (
                std::iter::once(ls).chain(outer.iter().copied()).collect(),
                std::iter::once(&left_hidden).chain(outer.iter().copied()).collect(),
            ),
            _ => (outer.to_vec(), outer.to_vec()),
        };
        for (jn, j) in twj.joins.iter().enumerate() {
            need(!j.global, "GLOBAL JOIN")?;
            let (kind, constraint) = match &j.join_operator {
                JoinOperator::Join(c) | JoinOperator::Inner(c) => (JoinKind::Inner, c),
                JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (JoinKind::Left, c),
                JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (JoinKind::Right, c),
                JoinOperator::FullOuter(c) => (JoinKind::Full, c),
                JoinOperator::CrossJoin(c) => (JoinKind::Inner, c),
                other => return Err(refuse(&format!("this join ({other:?})"))),
            };
            // `left`'s columns then this item's: what a LATERAL item reads once `left` is
            // joined in below.
            let wide = |ls: &Scope| Scope { same_query: true, cols: ls.cols.iter().chain(&scope.cols).cloned().collect() };
            let item_outer = if lateral_factor(&j.relation) { &outer_lateral } else { &outer_other };
            // A recursive query may name itself only where an outer join cannot fill its
            // rows with NULLs (PostgreSQL's rule): not left of a RIGHT or FULL join, not right
            // of a LEFT or FULL one.
            if matches!(kind, JoinKind::Right | JoinKind::Full) && self.work_refs.get() > refs_at_start {
                let ctes = self.ctes.borrow();
                let name = ctes.iter().rev().find(|(_, d, ..)| d.name == WORK_TABLE_MARK).map_or("", |(n, ..)| n.as_str());
                return Err(outer_join_recursion(name));
            }
            let _nullable = matches!(kind, JoinKind::Left | JoinKind::Full).then(|| Depth::enter(&self.nullable));
            let (r, rscope) = match (left_scope, before.is_some()) {
                // Joined in below already: LATERAL items read `left`'s columns and this item's.
                (Some(ls), false) if !nested => self.bind_from_item(&j.relation, outer, Some(&wide(ls)))?,
                // A LATERAL item may read `left`'s columns (nearer than an enclosing query's):
                // bound with them first; one that reads none is bound again without them
                // (the cheaper tree), one that does makes `left` join in below from here.
                (Some(ls), true) if !per_left_row && lateral_factor(&j.relation) => {
                    let refs = self.work_refs.get();
                    let got = self.bind_from_item(&j.relation, outer, Some(&wide(ls)))?;
                    if !reads_left(&got.0, xw) {
                        // Bound again: its references to a recursive query count once.
                        self.work_refs.set(refs);
                        self.bind_from_item(&j.relation, outer, Some(&scope))?
                    } else {
                        // This join and those after it must keep every row of `left`.
                        let reassociable = twj.joins[jn..].iter().all(|k| match &k.join_operator {
                            JoinOperator::Join(c)
                            | JoinOperator::Inner(c)
                            | JoinOperator::Left(c)
                            | JoinOperator::LeftOuter(c)
                            | JoinOperator::CrossJoin(c) => {
                                matches!(c, JoinConstraint::On(_) | JoinConstraint::None)
                            }
                            _ => false,
                        });
                        if !reassociable {
                            return Err(PgError::feature(
                                "a LATERAL item that reads an earlier comma-separated FROM item, in a join followed by RIGHT / FULL JOIN, USING or NATURAL, is not supported by heapstore",
                            ));
                        }
                        let l = before.take().expect("checked");
                        rel = Rel::Join(JoinKind::Inner, Box::new(l), Box::new(rel), Vec::new());
                        got
                    }
                }
                _ => self.bind_from_item(&j.relation, item_outer, Some(&scope))?,
            };
            drop(_nullable);
            if r.leftmost_lateral() && matches!(kind, JoinKind::Right | JoinKind::Full) {
                return Err(PgError::new("42P10", "invalid reference to FROM-clause entry for a LATERAL subquery")
                    .with_detail("The combining JOIN type must be INNER or LEFT for a LATERAL reference."));
            }
            for c in &rscope.cols {
                if let Some(rn) = &c.rel {
                    // Every FROM item of the right side (a nested join holds several).
                    if scope.has_rel(rn) {
                        return Err(PgError::new("42712", format!("table name \"{rn}\" specified more than once")));
                    }
                }
            }
            let lw = scope.cols.len();
            let mut joined = Scope { same_query: false, cols: scope.cols.clone() };
            joined.cols.extend(rscope.cols.iter().cloned());
            // The sides an outer join may fill with NULLs.
            let (left_nulls, right_nulls) = match kind {
                JoinKind::Inner => (false, false),
                JoinKind::Left => (false, true),
                JoinKind::Right => (true, false),
                JoinKind::Full => (true, true),
            };
            for (i, c) in joined.cols.iter_mut().enumerate() {
                c.nullable |= if i < lw { left_nulls } else { right_nulls };
            }
            let using: Option<Vec<String>> = match constraint {
                JoinConstraint::Using(names) => Some(
                    names
                        .iter()
                        .map(|n| match n.0.as_slice() {
                            [p] => p.as_ident().map(fold_ident).ok_or_else(|| refuse("this USING column")),
                            _ => Err(PgError::syntax("syntax error in USING")),
                        })
                        .collect::<Result<Vec<_>>>()?,
                ),
                JoinConstraint::Natural => Some(
                    scope
                        .cols
                        .iter()
                        .filter(|c| !c.hidden && rscope.cols.iter().any(|r| !r.hidden && r.name == c.name))
                        .map(|c| c.name.clone())
                        .collect(),
                ),
                _ => None,
            };
            match (constraint, using) {
                (_, Some(names)) => {
                    // USING / NATURAL: equality of each named column; the merged columns come
                    // first in the result, the inputs' copies are hidden from unqualified names.
                    let mut on = Vec::new();
                    let mut merged = Vec::new();
                    for n in &names {
                        let li = scope.resolve(None, n)?.ok_or_else(|| {
                            PgError::new(
                                sqlstate::UNDEFINED_COLUMN,
                                format!("column \"{n}\" specified in USING clause does not exist in left table"),
                            )
                        })?;
                        let ri = rscope.resolve(None, n)?.ok_or_else(|| {
                            PgError::new(
                                sqlstate::UNDEFINED_COLUMN,
                                format!("column \"{n}\" specified in USING clause does not exist in right table"),
                            )
                        })?;
                        let (lt, rt) = (scope.cols[li].ty, rscope.cols[ri].ty);
                        let ty = common_type(&[Some(lt), Some(rt)], "JOIN/USING")?.unwrap_or(lt);
                        let a = to_type(Scalar::Col(li, lt), Some(ty))?;
                        let b = to_type(Scalar::Col(lw + ri, rt), Some(ty))?;
                        expr::check_comparable(&a, &b, "=")?;
                        // char(n) compares without its padding.
                        on.push(Scalar::Cmp(expr::CmpOp::Eq, Box::new(expr::unpad(a.clone())), Box::new(expr::unpad(b.clone()))));
                        let m = match kind {
                            JoinKind::Inner | JoinKind::Left => a,
                            JoinKind::Right => b,
                            JoinKind::Full => Scalar::Coalesce(vec![a, b], Some(ty)),
                        };
                        merged.push((n.clone(), m, ty));
                        joined.cols[li].hidden = true;
                        joined.cols[lw + ri].hidden = true;
                    }
                    let width = joined.cols.len();
                    let types: Vec<SqlType> = joined.cols.iter().map(|c| c.ty).collect();
                    let est = super::cost::Estimator::new(self.s);
                    // A first item that reads the items to this one's left keeps the whole
                    // join reading them (run per row of them).
                    let lat = rel.leftmost_lateral();
                    let join = plan_rel(&est, Rel::Join(kind, Box::new(rel), Box::new(r), on), Vec::new(), &types);
                    let mut exprs: Vec<Scalar> = merged.iter().map(|(_, e, _)| e.clone()).collect();
                    exprs.extend(joined.cols.iter().enumerate().map(|(i, c)| Scalar::Col(i, c.ty)));
                    let mut cols: Vec<ScopeCol> = merged.iter().map(|(n, _, ty)| ScopeCol::new(None, n.clone(), *ty)).collect();
                    cols.extend(joined.cols);
                    let w = merged.len() + width;
                    rel = Rel::Leaf(Node::Project(Box::new(join), exprs), w, lat);
                    scope = Scope { same_query: false, cols };
                }
                (JoinConstraint::On(e), None) => {
                    // With `left` joined in below, the condition's row starts with `left`'s
                    // columns, which it may not name.
                    let unnamed = ScopeCol { hidden: true, ..ScopeCol::new(None, String::new(), SqlType::new(TypeId::Text)) };
                    let mut on_scope = Scope { same_query: false, cols: Vec::new() };
                    if before.is_none() && !nested {
                        on_scope.cols.extend(left_scope.iter().flat_map(|ls| &ls.cols).map(|c| ScopeCol { ty: c.ty, ..unnamed.clone() }));
                    }
                    on_scope.cols.extend(joined.cols.iter().cloned());
                    let b = self.binder(&on_scope, &outer_other, None);
                    let cond = b.boolean(e, "JOIN/ON").map_err(agg_in("JOIN conditions")).map_err(|e| match left_scope {
                        Some(ls) => out_of_reach(e, ls),
                        None => e,
                    })?;
                    let mut on = Vec::new();
                    conjuncts(cond, &mut on);
                    rel = Rel::Join(kind, Box::new(rel), Box::new(r), on);
                    scope = joined;
                }
                (JoinConstraint::None, None) => {
                    if kind != JoinKind::Inner || !matches!(j.join_operator, JoinOperator::CrossJoin(_)) {
                        return Err(PgError::syntax("syntax error: a JOIN needs ON or USING"));
                    }
                    rel = Rel::Join(kind, Box::new(rel), Box::new(r), Vec::new());
                    scope = joined;
                }
                _ => unreachable!("USING and NATURAL are handled above"),
            }
        }
        debug_assert_eq!(
            rel.width(),
            scope.cols.len() + if before.is_none() && !nested { xw } else { 0 },
            "the tree's rows are the scope's columns"
        );
        Ok(match before {
            Some(l) => (Rel::Join(JoinKind::Inner, Box::new(l), Box::new(rel), Vec::new()), scope),
            None => (rel, scope),
        })
    }

    /// One SELECT block with the enclosing query's ORDER BY and LIMIT.
    /// FROM: a cross join of the comma-separated items.
    fn select_from(&self, from: &[TableWithJoins], outer: &[&Scope]) -> Result<(Rel, Scope)> {
        if from.is_empty() {
            Ok((Rel::Leaf(Node::Unit, 0, false), Scope::default()))
        } else {
            let mut it = from.iter();
            let (mut rel, mut scope) = self.bind_from(it.next().expect("not empty"), outer, None)?;
            for t in it {
                let (r, s) = self.bind_from(t, outer, Some((&scope, Some(rel))))?;
                for c in &s.cols {
                    if let Some(rn) = &c.rel {
                        if scope.has_rel(rn) {
                            return Err(PgError::new("42712", format!("table name \"{rn}\" specified more than once")));
                        }
                    }
                }
                rel = r;
                scope.cols.extend(s.cols);
            }
            Ok((rel, scope))
        }
    }

    fn select(
        &self,
        sel: &Select,
        order: &[sqlparser::ast::OrderByExpr],
        limit: Option<Scalar>,
        offset: Option<Scalar>,
        outer: &[&Scope],
    ) -> Result<BoundQuery> {
        let Select {
            select_token: _,
            distinct,
            top,
            top_before_distinct: _,
            projection,
            exclude,
            into,
            from,
            lateral_views,
            prewhere,
            selection,
            group_by,
            cluster_by,
            distribute_by,
            sort_by,
            having,
            named_window,
            qualify,
            window_before_qualify: _,
            value_table_mode,
            connect_by,
            flavor,
        } = sel;
        need(top.is_none(), "TOP")?;
        if into.is_some() {
            // A statement's own first SELECT ... INTO runs as CREATE TABLE AS (`sql::run_one`);
            // anywhere else PostgreSQL refuses it so.
            return Err(PgError::syntax("SELECT ... INTO is not allowed here"));
        }
        need(exclude.is_none(), "EXCLUDE")?;
        need(lateral_views.is_empty(), "LATERAL VIEW")?;
        need(prewhere.is_none(), "PREWHERE")?;
        need(cluster_by.is_empty() && distribute_by.is_empty() && sort_by.is_empty(), "CLUSTER BY / DISTRIBUTE BY / SORT BY")?;
        need(qualify.is_none(), "QUALIFY")?;
        need(value_table_mode.is_none(), "SELECT AS VALUE / STRUCT")?;
        need(connect_by.is_none(), "CONNECT BY")?;
        need(matches!(flavor, SelectFlavor::Standard), "FROM-first SELECT")?;
        let (group_exprs, group_sets) = match group_by {
            GroupByExpr::Expressions(e, m) => {
                need(m.is_empty(), "GROUP BY ... WITH ROLLUP / CUBE (PostgreSQL writes ROLLUP (...) and CUBE (...))")?;
                grouping_sets(e)?
            }
            GroupByExpr::All(_) => return Err(refuse("GROUP BY ALL")),
        };

        let saved_level_refs = self.level_refs.replace(0);
        let from_bound = self.select_from(from, outer);
        let names_itself = self.level_refs.replace(saved_level_refs) > 0;
        let (rel, scope) = from_bound?;

        // WHERE, pushed down into the FROM tree.
        let mut filters = Vec::new();
        if let Some(w) = selection {
            let b = self.binder(&scope, outer, None);
            let cond = match b.boolean(w, "WHERE").map_err(agg_in("WHERE")) {
                Ok(c) => c,
                Err(e) => {
                    // PostgreSQL binds the select list before WHERE: an error there comes first.
                    let collect = Collect { named_windows: named_windows(named_window).unwrap_or_default(), ..Collect::default() };
                    let lb = self.binder(&scope, outer, Some(&collect));
                    for it in projection {
                        match it {
                            SelectItem::UnnamedExpr(x) | SelectItem::ExprWithAlias { expr: x, .. } => match lb.bind(x) {
                                // Windows are resolved after WHERE.
                                Err(first) if first.code == "42P20" || first.message.starts_with("window \"") => {}
                                Err(first) => return Err(first),
                                Ok(_) => {}
                            },
                            SelectItem::QualifiedWildcard(sqlparser::ast::SelectItemQualifiedWildcardKind::ObjectName(n), _) => {
                                let rel = super::ddl::table_name(n)?;
                                if !scope.has_rel(&rel) {
                                    return Err(PgError::new(
                                        sqlstate::UNDEFINED_TABLE,
                                        format!("missing FROM-clause entry for table \"{rel}\""),
                                    ));
                                }
                            }
                            _ => {}
                        }
                    }
                    return Err(e);
                }
            };
            conjuncts(cond, &mut filters);
        }
        let types: Vec<SqlType> = scope.cols.iter().map(|c| c.ty).collect();
        let mut node = plan_rel(&super::cost::Estimator::new(self.s), rel, filters, &types);

        // The select list, HAVING and ORDER BY, collecting aggregates and window calls.
        let collect = Collect { named_windows: named_windows(named_window)?, ..Collect::default() };
        let b = self.binder(&scope, outer, Some(&collect));
        let mut items: Vec<SelectItemB> = Vec::new();
        for it in projection {
            match it {
                SelectItem::Wildcard(w) => {
                    wildcard_options(w)?;
                    if scope.cols.is_empty() {
                        return Err(PgError::syntax("SELECT * with no tables specified is not valid"));
                    }
                    for (i, c) in scope.cols.iter().enumerate() {
                        if !c.hidden {
                            items.push(SelectItemB { name: c.name.clone(), expr: Scalar::Col(i, c.ty), source: c.source });
                        }
                    }
                }
                SelectItem::QualifiedWildcard(kind, w) => {
                    wildcard_options(w)?;
                    let rel = match kind {
                        sqlparser::ast::SelectItemQualifiedWildcardKind::ObjectName(n) => super::ddl::table_name(n)?,
                        _ => return Err(refuse("this qualified wildcard")),
                    };
                    if !scope.has_rel(&rel) {
                        return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("missing FROM-clause entry for table \"{rel}\"")));
                    }
                    for (i, c) in scope.cols.iter().enumerate() {
                        if c.rel.as_deref() == Some(rel.as_str()) {
                            items.push(SelectItemB { name: c.name.clone(), expr: Scalar::Col(i, c.ty), source: c.source });
                        }
                    }
                }
                SelectItem::UnnamedExpr(e) => {
                    let x = b.bind(e)?;
                    let source = match &x {
                        Scalar::Col(i, _) => scope.cols[*i].source,
                        _ => None,
                    };
                    let name = figure_colname(e).unwrap_or_else(|| "?column?".into());
                    items.push(SelectItemB { name, expr: x, source });
                }
                SelectItem::ExprWithAlias { expr: e, alias } => {
                    // sqlparser takes a string constant as an alias (`SELECT 'a' 'b'`, `SELECT 1
                    // AS 'x'`); PostgreSQL's grammar has none there.
                    if alias.quote_style == Some('\'') {
                        return Err(PgError::syntax(format!("syntax error at or near \"'{}'\"", alias.value)));
                    }
                    let x = b.bind(e)?;
                    let source = match &x {
                        Scalar::Col(i, _) => scope.cols[*i].source,
                        _ => None,
                    };
                    items.push(SelectItemB { name: fold_ident(alias), expr: x, source });
                }
            }
        }
        // Untyped literals in the select list are text.
        for it in items.iter_mut() {
            if type_of(&it.expr).is_none() {
                it.expr = to_type(std::mem::replace(&mut it.expr, Scalar::Const(Value::Null)), Some(SqlType::new(TypeId::Text)))?;
            }
        }
        let nvis = items.len();
        let having_s = having.as_ref().map(|h| b.boolean(h, "HAVING")).transpose()?;
        if let Some(h) = &having_s {
            let mut srf = false;
            h.visit(&mut |x| srf |= matches!(x, Scalar::Srf(..)));
            if srf {
                return Err(PgError::feature("set-returning functions are not allowed in HAVING"));
            }
        }

        // ORDER BY and DISTINCT ON: output columns by name or ordinal, else expressions.
        let resolve = |e: &Expr, what: &str, items: &[SelectItemB]| -> Result<Target> {
            if let Some(i) = ordinal(e, items.len(), what)? {
                return Ok(Target::Output(i));
            }
            if let Expr::Identifier(id) = e {
                let n = fold_ident(id);
                let hits: Vec<usize> = items.iter().enumerate().filter(|(_, it)| it.name == n).map(|(i, _)| i).collect();
                if hits.len() > 1 {
                    let first = format!("{:?}", items[hits[0]].expr);
                    if hits.iter().any(|&h| format!("{:?}", items[h].expr) != first) {
                        return Err(PgError::new("42702", format!("{what} \"{n}\" is ambiguous")));
                    }
                }
                if let Some(&i) = hits.first() {
                    return Ok(Target::Output(i));
                }
            }
            let x = b.bind(e)?;
            let shown = format!("{x:?}");
            if let Some(i) = items.iter().position(|it| format!("{:?}", it.expr) == shown) {
                return Ok(Target::Output(i));
            }
            Ok(Target::Expr(x))
        };
        let mut order_t: Vec<(Target, &sqlparser::ast::OrderByOptions)> = Vec::new();
        for o in order {
            order_t.push((resolve(&o.expr, "ORDER BY", &items)?, &o.options));
        }
        let distinct_on: Option<Vec<Target>> = match distinct {
            None => None,
            Some(Distinct::Distinct) => Some(Vec::new()),
            Some(Distinct::On(es)) => Some(es.iter().map(|e| resolve(e, "DISTINCT ON", &items)).collect::<Result<Vec<_>>>()?),
        };
        let is_distinct_on = matches!(distinct, Some(Distinct::On(_)));

        // GROUP BY: input columns first, then output names, ordinals.
        let gb = self.binder(&scope, outer, None);
        let mut groups: Vec<Scalar> = Vec::new();
        for g in group_exprs.iter().copied() {
            // A bare name that is no column of this query's FROM items but an output name is
            // that output (before an enclosing query's column, and before a FROM item's whole
            // row: PostgreSQL's findTargetlistEntrySQL92); two different outputs of the name
            // are ambiguous.
            let output_named = match g {
                Expr::Identifier(id) => {
                    let n = fold_ident(id);
                    if scope.cols.iter().any(|c| !c.hidden && c.name == n) {
                        None
                    } else {
                        let found: Vec<&SelectItemB> = items.iter().filter(|it| it.name == n).collect();
                        if found.iter().any(|it| format!("{:?}", it.expr) != format!("{:?}", found[0].expr)) {
                            return Err(PgError::new("42702", format!("GROUP BY \"{n}\" is ambiguous")).at(id.span.start));
                        }
                        found.first().copied()
                    }
                }
                _ => None,
            };
            let x = if let Some(i) = ordinal(g, nvis, "GROUP BY")? {
                items[i].expr.clone()
            } else if let Some(it) = output_named {
                it.expr.clone()
            } else {
                match gb.bind(g) {
                    Ok(x) => x,
                    Err(e) if e.code == sqlstate::UNDEFINED_COLUMN => match g {
                        Expr::Identifier(id) => match items.iter().find(|it| it.name == fold_ident(id)) {
                            Some(it) => it.expr.clone(),
                            None => return Err(e),
                        },
                        _ => return Err(e),
                    },
                    Err(e) if e.code == "42803" => return Err(PgError::new("42803", "aggregate functions are not allowed in GROUP BY")),
                    Err(e) => return Err(e),
                }
            };
            let mut bad = false;
            x.visit(&mut |s| bad |= matches!(s, Scalar::Agg(..)));
            if bad {
                return Err(PgError::new("42803", "aggregate functions are not allowed in GROUP BY"));
            }
            if matches!(x, Scalar::Win(..)) {
                return Err(PgError::new("42P20", "window functions are not allowed in GROUP BY"));
            }
            need_operator(type_of(&x), false)?;
            groups.push(x);
        }
        let aggs = collect.aggs.take();
        if names_itself && !aggs.is_empty() {
            return Err(PgError::new("42P19", "aggregate functions are not allowed in a recursive query's recursive term"));
        }
        let mut windows = collect.windows.take();
        let grouped = !groups.is_empty() || !aggs.is_empty() || having_s.is_some() || group_sets.is_some();
        // Rows a multi-item FOR UPDATE may lock (the shapes it refuses carry no TIDs).
        let lockable = !grouped && windows.is_empty() && distinct.is_none();
        for c in &aggs {
            let mut win = false;
            for a in &c.args {
                a.visit(&mut |s| win |= matches!(s, Scalar::Win(..)));
            }
            if win {
                return Err(PgError::new("42803", "aggregate function calls cannot contain window function calls"));
            }
        }

        // Everything evaluated after grouping now reads the aggregation's output.
        let mut post: Rewrite<'_> = Box::new(|e: &Scalar| -> Result<Scalar> { Ok(e.clone()) });
        if grouped {
            let ng = groups.len();
            let group_shown: Vec<String> = groups.iter().map(|g| format!("{g:?}")).collect();
            let gtypes: Vec<Option<SqlType>> = groups.iter().map(type_of).collect();
            let scope_ref = &scope;
            let grouped_rewrite = move |e: &Scalar| -> Result<Scalar> {
                let mut err: Option<PgError> = None;
                let r = map_scalar(e, &mut |x| {
                    let shown = format!("{x:?}");
                    if let Some(k) = group_shown.iter().position(|g| *g == shown) {
                        return Some(Scalar::Col(k, gtypes[k].unwrap_or(SqlType::new(TypeId::Text))));
                    }
                    match x {
                        Scalar::Agg(j, t) => Some(Scalar::Col(ng + j, *t)),
                        Scalar::Col(i, _) => {
                            let c = &scope_ref.cols[*i];
                            let shown = match &c.rel {
                                Some(r) => format!("{r}.{}", c.name),
                                None => c.name.clone(),
                            };
                            err.get_or_insert(PgError::new(
                                "42803",
                                format!("column \"{shown}\" must appear in the GROUP BY clause or be used in an aggregate function"),
                            ));
                            Some(x.clone())
                        }
                        Scalar::SubLink(l) if l.correlated => {
                            err.get_or_insert(refuse("a correlated subquery in a grouped query's select list or HAVING"));
                            Some(x.clone())
                        }
                        _ => None,
                    }
                });
                match err {
                    Some(e) => Err(e),
                    None => Ok(r),
                }
            };
            let uses_grouping = aggs.iter().any(|a| a.func == exec::AggFunc::Grouping);
            node = match (&group_sets, uses_grouping) {
                (None, false) => Node::Agg(Box::new(node), groups, aggs),
                (sets, _) => {
                    let all: Vec<Vec<usize>> = vec![(0..ng).collect()];
                    let sets: Vec<Vec<usize>> = match sets {
                        Some(sets) => sets
                            .iter()
                            .map(|set| {
                                let mut members: Vec<usize> = Vec::new();
                                for e in set {
                                    let k = group_exprs
                                        .iter()
                                        .position(|g| g.to_string() == e.to_string())
                                        .expect("a grouping set's expression is a GROUP BY expression");
                                    if !members.contains(&k) {
                                        members.push(k);
                                    }
                                }
                                members
                            })
                            .collect(),
                        None => all,
                    };
                    grouping_set_union(node, &groups, &aggs, &sets)?
                }
            };
            if let Some(h) = &having_s {
                let h = grouped_rewrite(h)?;
                node = Node::Filter(Box::new(node), h);
            }
            post = Box::new(grouped_rewrite);
        }
        // Window functions: over the (grouped) rows; their results are appended columns.
        let base = node.width();
        if !windows.is_empty() {
            for w in windows.iter_mut() {
                w.args = w.args.iter().map(&mut post).collect::<Result<Vec<_>>>()?;
                w.partition = w.partition.iter().map(&mut post).collect::<Result<Vec<_>>>()?;
                w.filter = w.filter.as_ref().map(&mut post).transpose()?;
                for k in w.order.iter_mut() {
                    k.expr = post(&k.expr)?;
                }
            }
            node = Node::Window(Box::new(node), windows);
        }
        let win = |e: Scalar| -> Scalar {
            map_scalar(&e, &mut |x| match x {
                Scalar::Win(k, t) => Some(Scalar::Col(base + k, *t)),
                _ => None,
            })
        };
        // Set-returning functions: after grouping and windows, before sorting; their values
        // are appended columns.
        let srfs = collect.srfs.take();
        let lockable = lockable && srfs.is_empty();
        let srf_base = node.width();
        if !srfs.is_empty() {
            let mut calls = Vec::with_capacity(srfs.len());
            for mut c in srfs {
                c.args = c.args.iter().map(|a| post(a).map(win)).collect::<Result<Vec<_>>>()?;
                calls.push(c);
            }
            node = Node::ProjectSet(Box::new(node), calls);
        }
        let mut fin = |e: &Scalar| -> Result<Scalar> {
            let e = win(post(e)?);
            Ok(map_scalar(&e, &mut |x| match x {
                Scalar::Srf(k, t) => Some(Scalar::Col(srf_base + k, *t)),
                _ => None,
            }))
        };
        // The projection: the select list, then the ORDER BY / DISTINCT ON expressions that
        // are not in it (dropped after sorting).
        let mut exprs: Vec<Scalar> = Vec::with_capacity(items.len());
        for it in &items {
            exprs.push(fin(&it.expr)?);
        }
        let mut idx_of = |t: &Target, exprs: &mut Vec<Scalar>| -> Result<usize> {
            Ok(match t {
                Target::Output(i) => *i,
                Target::Expr(x) => {
                    let x = fin(x)?;
                    let shown = format!("{x:?}");
                    match exprs.iter().position(|e| format!("{e:?}") == shown) {
                        Some(i) => i,
                        None => {
                            exprs.push(x);
                            exprs.len() - 1
                        }
                    }
                }
            })
        };
        let mut sort_keys: Vec<SortKey> = Vec::new();
        for (t, opts) in &order_t {
            let i = idx_of(t, &mut exprs)?;
            need_operator(type_of(&exprs[i]), true)?;
            sort_keys.push(SortKey::new(Scalar::Col(i, type_of(&exprs[i]).unwrap_or(SqlType::new(TypeId::Text))), opts));
        }
        let mut on_cols: Vec<usize> = Vec::new();
        if let Some(ts) = &distinct_on {
            for t in ts {
                on_cols.push(idx_of(t, &mut exprs)?);
            }
        }
        if lockable {
            // A FOR UPDATE over several FROM items: the lock slots' TIDs ride along to the
            // LockRows node (`exec::lockrows`); the final projection drops them.
            if let Some(sl) = self.lock_slots.borrow_mut().as_mut() {
                for (i, c) in scope.cols.iter().enumerate() {
                    if let Some(slot) = c.name.strip_prefix(LOCK_SLOT_COL).and_then(|n| n.parse::<usize>().ok()) {
                        sl.cols.push((slot, exprs.len(), c.nullable));
                        exprs.push(Scalar::Col(i, SqlType::new(TypeId::Int8)));
                    }
                }
            }
        }
        let junk = exprs.len() > nvis;
        if distinct.is_some() && !is_distinct_on && junk {
            return Err(PgError::new("42P10", "for SELECT DISTINCT, ORDER BY expressions must appear in select list"));
        }
        node = Node::Project(Box::new(node), exprs.clone());
        if is_distinct_on {
            // The ORDER BY must start with the DISTINCT ON expressions (in any order); ON
            // expressions missing from it sort after those it names.
            let mut on_set = on_cols.clone();
            on_set.sort_unstable();
            on_set.dedup();
            let sort_col = |k: &SortKey| if let Scalar::Col(i, _) = k.expr { i } else { usize::MAX };
            let lead_n = sort_keys.len().min(on_set.len());
            let bad_lead = sort_keys[..lead_n].iter().any(|k| !on_set.contains(&sort_col(k)));
            let bad_late = sort_keys[lead_n..].iter().any(|k| on_set.contains(&sort_col(k)));
            if bad_lead || bad_late {
                return Err(PgError::new("42P10", "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"));
            }
            // Sort by the DISTINCT ON columns (those the ORDER BY does not lead with first),
            // then the ORDER BY; keep each group's first row.
            let mut keys: Vec<SortKey> = Vec::new();
            for &c in &on_cols {
                if !sort_keys.iter().take(on_cols.len()).any(|k| matches!(k.expr, Scalar::Col(i, _) if i == c)) {
                    keys.push(SortKey {
                        expr: Scalar::Col(c, type_of(&exprs[c]).unwrap_or(SqlType::new(TypeId::Text))),
                        desc: false,
                        nulls_first: false,
                    });
                }
            }
            let mut all_keys = sort_keys.clone();
            let split = all_keys.len().min(on_cols.len());
            let rest = all_keys.split_off(split);
            all_keys.extend(keys);
            all_keys.extend(rest);
            node = Node::Sort(Box::new(node), all_keys);
            // Distinct over the chosen columns: project them first, keep first per key.
            node = distinct_on_cols(node, &on_cols, exprs.len());
        } else if distinct.is_some() {
            for e in &exprs[..nvis] {
                need_operator(type_of(e), false)?;
            }
            node = Node::Distinct(Box::new(node), nvis);
            if !sort_keys.is_empty() {
                node = Node::Sort(Box::new(node), sort_keys);
            }
        } else if !sort_keys.is_empty() {
            node = Node::Sort(Box::new(node), sort_keys);
        }
        if limit.is_some() || offset.is_some() {
            node = Node::Limit(Box::new(node), limit, offset, None);
        }
        let width = if is_distinct_on { exprs.len() } else { node.width() };
        if width > nvis {
            node = Node::Project(
                Box::new(node),
                (0..nvis).map(|i| Scalar::Col(i, type_of(&exprs[i]).unwrap_or(SqlType::new(TypeId::Text)))).collect(),
            );
        }
        let columns = items
            .iter()
            .zip(&exprs)
            .map(|(it, e)| OutCol { name: it.name.clone(), ty: type_of(e).unwrap_or(SqlType::new(TypeId::Text)), source: it.source })
            .collect();
        Ok(BoundQuery { node, columns, correlated: false })
    }
}

/// Keeps the first row of each distinct value of columns `cols` (rows arrive sorted so that
/// the wanted row comes first): the distinct key columns are moved to the front, then moved
/// back.
fn distinct_on_cols(node: Node, cols: &[usize], width: usize) -> Node {
    let mut front: Vec<usize> = cols.to_vec();
    front.dedup();
    let order: Vec<usize> = front.iter().copied().chain((0..width).filter(|i| !front.contains(i))).collect();
    let to_front = Node::Project(Box::new(node), order.iter().map(|&i| Scalar::Col(i, SqlType::new(TypeId::Text))).collect());
    let d = Node::Distinct(Box::new(to_front), front.len());
    // Back to the original layout.
    let back: Vec<Scalar> =
        (0..width).map(|i| Scalar::Col(order.iter().position(|&o| o == i).expect("every column"), SqlType::new(TypeId::Text))).collect();
    Node::Project(Box::new(d), back)
}

fn agg_in(what: &'static str) -> impl Fn(PgError) -> PgError {
    move |e| {
        if e.code == "42803" && e.message.starts_with("aggregate functions are not allowed") {
            PgError::new("42803", format!("aggregate functions are not allowed in {what}"))
        } else if e.code == "42P20" {
            PgError::new("42P20", format!("window functions are not allowed in {what}"))
        } else {
            e
        }
    }
}

fn wildcard_options(w: &sqlparser::ast::WildcardAdditionalOptions) -> Result<()> {
    let sqlparser::ast::WildcardAdditionalOptions { wildcard_token: _, opt_ilike, opt_exclude, opt_except, opt_replace, opt_rename } = w;
    need(
        opt_ilike.is_none() && opt_exclude.is_none() && opt_except.is_none() && opt_replace.is_none() && opt_rename.is_none(),
        "options after *",
    )
}

/// An integer constant in ORDER BY / GROUP BY / DISTINCT ON: a 1-based position in the
/// select list.
fn ordinal(e: &Expr, n: usize, what: &str) -> Result<Option<usize>> {
    let Expr::Value(v) = e else { return Ok(None) };
    let AstValue::Number(s, _) = &v.value else { return Ok(None) };
    let Ok(i) = s.parse::<i64>() else { return Ok(None) };
    if i < 1 || i as usize > n {
        return Err(PgError::new("42P10", format!("{what} position {i} is not in select list")));
    }
    Ok(Some(i as usize - 1))
}

/// Applies a column alias list (`AS t(a, b)`).
fn rename_columns(cols: &mut [OutCol], names: &[sqlparser::ast::TableAliasColumnDef], rel: &str) -> Result<()> {
    if names.len() > cols.len() {
        return Err(PgError::new(
            "42P10",
            format!("table \"{rel}\" has {} columns available but {} columns specified", cols.len(), names.len()),
        ));
    }
    for (c, n) in cols.iter_mut().zip(names) {
        if n.data_type.is_some() {
            return Err(refuse("column types in an alias list"));
        }
        c.name = fold_ident(&n.name);
    }
    Ok(())
}

/// Marks the columns of the row `e` is evaluated on that it reads, including those read by
/// its subqueries as outer references.
fn cols_used(e: &Scalar, used: &mut [bool]) {
    e.visit(&mut |x| match x {
        Scalar::Col(i, _) => {
            if let Some(u) = used.get_mut(*i) {
                *u = true;
            }
        }
        Scalar::SubLink(l) => outer_refs(&l.plan, 0, &mut |i| {
            if let Some(u) = used.get_mut(i) {
                *u = true;
            }
        }),
        _ => {}
    });
}

/// Calls `f` with the column of every outer reference in `node` (its subqueries' included)
/// to the row `level` outer levels out: `Outer(level, i, _)` at `node`'s own level.
fn outer_refs(node: &Node, level: usize, f: &mut dyn FnMut(usize)) {
    visit_exprs_at(node, level, &mut |x, level| outer_refs_in(x, level, f));
}

/// [`outer_refs`] in one expression evaluated `level` levels in.
fn outer_refs_in(e: &Scalar, level: usize, f: &mut dyn FnMut(usize)) {
    e.visit(&mut |y| match y {
        Scalar::Outer(d, i, _) if *d == level => f(*i),
        Scalar::SubLink(l) => outer_refs(&l.plan, level + 1, f),
        _ => {}
    })
}

/// Whether a FROM item bound as LATERAL reads one of the first `xw` columns of the row to
/// its left (its nearest outer row).
fn reads_left(rel: &Rel, xw: usize) -> bool {
    match rel {
        Rel::Leaf(node, _, true) => {
            let mut found = false;
            outer_refs(node, 0, &mut |i| found |= i < xw);
            found
        }
        Rel::Leaf(..) => false,
        Rel::Join(_, l, _, _) => reads_left(l, xw),
    }
}

/// Whether a FROM item is LATERAL by its syntax: `LATERAL (subquery)`, or a function (which
/// PostgreSQL makes lateral implicitly).
fn lateral_factor(f: &TableFactor) -> bool {
    match f {
        TableFactor::NestedJoin { table_with_joins, .. } => contains_lateral(table_with_joins),
        _ => matches!(
            f,
            TableFactor::Derived { lateral: true, .. }
                | TableFactor::Function { .. }
                | TableFactor::Table { args: Some(_), .. }
                | TableFactor::UNNEST { .. }
        ),
    }
}

/// Whether a FROM item holds a LATERAL one anywhere (in parenthesized joins too).
fn contains_lateral(twj: &TableWithJoins) -> bool {
    lateral_factor(&twj.relation) || twj.joins.iter().any(|j| lateral_factor(&j.relation))
}

/// Tells each table scan which columns the plan above it reads (`needed`: the node's output
/// columns its consumer reads), so that the others are not decoded or fetched from TOAST.
fn prune(node: &mut Node, needed: &[bool]) {
    let w = node.width();
    let mut need = vec![false; w];
    for (i, n) in needed.iter().enumerate().take(w) {
        need[i] = *n;
    }
    match node {
        Node::Unit | Node::Values(..) | Node::Cte(_) => {}
        Node::Scan(p) => {
            if let Some(f) = &p.filter {
                cols_used(f, &mut need);
            }
            // The access path stays as chosen; only what is decoded changes. (A TID column
            // is not decoded.)
            need.truncate(p.types.len());
            p.needed = need;
        }
        Node::Filter(i, c) => {
            cols_used(c, &mut need);
            prune(i, &need);
        }
        Node::Project(i, es) => {
            // An output nobody reads is not computed (its inputs may be NULL now), unless it
            // calls a volatile function, which runs as in PostgreSQL, which keeps such
            // outputs.
            let mut n = vec![false; i.width()];
            for (k, e) in es.iter_mut().enumerate() {
                if need.get(k).copied().unwrap_or(true) || scalar_calls_volatile(e) {
                    cols_used(e, &mut n);
                } else if !matches!(e, Scalar::Const(_)) {
                    *e = match type_of(e) {
                        Some(ty) => Scalar::Cast(Box::new(Scalar::Const(Value::Null)), ty),
                        None => Scalar::Const(Value::Null),
                    };
                }
            }
            prune(i, &n);
        }
        Node::Sort(i, keys) => {
            for k in keys.iter() {
                cols_used(&k.expr, &mut need);
            }
            prune(i, &need);
        }
        Node::Limit(i, _, _, ties) => {
            for k in ties.iter().flatten() {
                cols_used(&k.expr, &mut need);
            }
            prune(i, &need);
        }
        Node::Distinct(i, n) => {
            for x in need.iter_mut().take(*n) {
                *x = true;
            }
            prune(i, &need);
        }
        Node::SetOp(_, _, l, r) => {
            let (lw, rw) = (l.width(), r.width());
            prune(l, &vec![true; lw]);
            prune(r, &vec![true; rw]);
        }
        Node::Join(j) => {
            let (lw, rw) = (j.left_width, j.right_width);
            let mut all = need.clone();
            if let Some(c) = &j.cond {
                cols_used(c, &mut all);
            }
            let mut ln = all[..lw].to_vec();
            let mut rn = all[lw..lw + rw].to_vec();
            for (a, b) in &j.keys {
                cols_used(a, &mut ln);
                cols_used(b, &mut rn);
            }
            if j.lateral {
                // The right side reads left columns as outer references: keep them all.
                ln = vec![true; lw];
            }
            j.used = all;
            prune(&mut j.left, &ln);
            prune(&mut j.right, &rn);
        }
        Node::Agg(i, g, a) => {
            let mut n = vec![false; i.width()];
            for e in g.iter() {
                cols_used(e, &mut n);
            }
            for c in a.iter() {
                c.args.iter().for_each(|e| cols_used(e, &mut n));
                if let Some(f) = &c.filter {
                    cols_used(f, &mut n);
                }
                c.order.iter().for_each(|k| cols_used(&k.expr, &mut n));
            }
            prune(i, &n);
        }
        Node::Window(i, calls) => {
            let iw = i.width();
            let mut n = need[..iw].to_vec();
            for c in calls.iter() {
                c.args.iter().for_each(|e| cols_used(e, &mut n));
                c.partition.iter().for_each(|e| cols_used(e, &mut n));
                c.filter.iter().for_each(|e| cols_used(e, &mut n));
                c.order.iter().for_each(|k| cols_used(&k.expr, &mut n));
            }
            prune(i, &n);
        }
        Node::Function(_) | Node::WorkTable(..) => {}
        Node::RecursiveUnion(r) => {
            let w = r.width;
            prune(&mut r.nonrec, &vec![true; w]);
            prune(&mut r.rec, &vec![true; w]);
        }
        Node::ProjectSet(i, calls) => {
            let iw = i.width();
            let mut n = need[..iw].to_vec();
            calls.iter().flat_map(|c| &c.args).for_each(|e| cols_used(e, &mut n));
            prune(i, &n);
        }
        Node::LockRows(l) => {
            // The TID columns are always read.
            if l.targets.is_empty() {
                need.push(true);
            }
            for t in &l.targets {
                need[t.col] = true;
            }
            prune(&mut l.input, &need);
        }
    }
}

/// Whether `node` reads a column of a query enclosing it: an outer reference that reaches
/// past `level` subquery levels.
fn refs_outside(node: &Node, level: usize) -> bool {
    let mut found = false;
    visit_exprs_at(node, level, &mut |e, level| {
        e.visit(&mut |x| match x {
            Scalar::Outer(d, ..) if *d >= level => found = true,
            Scalar::SubLink(l) if refs_outside(&l.plan, level + 1) => found = true,
            _ => {}
        })
    });
    found
}

/// Calls `f` on every expression of `node`'s tree (not inside subqueries).
pub(crate) fn visit_exprs(node: &Node, f: &mut dyn FnMut(&Scalar)) {
    visit_exprs_at(node, 0, &mut |e, _| f(e));
}

/// [`visit_exprs`] with each expression's outer level: how many rows its `Scalar::Outer`
/// depths count before `node`'s enclosing query. The right input of a LATERAL join is one
/// level deeper than the join (its nearest outer row is the join's left row), so an outer
/// reference `Outer(d, ..)` met at level `l` reads the query enclosing `node` when `d >= l`.
pub(crate) fn visit_exprs_at(node: &Node, level: usize, f: &mut dyn FnMut(&Scalar, usize)) {
    match node {
        Node::Unit => {}
        Node::Values(rows, _) => rows.iter().flatten().for_each(|e| f(e, level)),
        Node::Scan(p) => {
            if let Some(x) = &p.filter {
                f(x, level);
            }
        }
        Node::Filter(i, e) => {
            visit_exprs_at(i, level, f);
            f(e, level);
        }
        Node::Project(i, es) => {
            visit_exprs_at(i, level, f);
            es.iter().for_each(|e| f(e, level));
        }
        Node::Join(j) => {
            visit_exprs_at(&j.left, level, f);
            visit_exprs_at(&j.right, level + usize::from(j.lateral), f);
            for (a, b) in &j.keys {
                f(a, level);
                f(b, level);
            }
            if let Some(c) = &j.cond {
                f(c, level);
            }
        }
        Node::Agg(i, g, a) => {
            visit_exprs_at(i, level, f);
            g.iter().for_each(|e| f(e, level));
            for c in a {
                c.args.iter().for_each(|e| f(e, level));
                if let Some(x) = &c.filter {
                    f(x, level);
                }
                c.order.iter().for_each(|k| f(&k.expr, level));
            }
        }
        Node::Sort(i, k) => {
            visit_exprs_at(i, level, f);
            k.iter().for_each(|k| f(&k.expr, level));
        }
        Node::Limit(i, l, o, ties) => {
            visit_exprs_at(i, level, f);
            ties.iter().flatten().for_each(|k| f(&k.expr, level));
            if let Some(x) = l {
                f(x, level);
            }
            if let Some(x) = o {
                f(x, level);
            }
        }
        Node::Distinct(i, _) => visit_exprs_at(i, level, f),
        Node::SetOp(_, _, l, r) => {
            visit_exprs_at(l, level, f);
            visit_exprs_at(r, level, f);
        }
        Node::Window(i, w) => {
            visit_exprs_at(i, level, f);
            for c in w {
                c.args.iter().for_each(|e| f(e, level));
                c.partition.iter().for_each(|e| f(e, level));
                c.filter.iter().for_each(|e| f(e, level));
                c.order.iter().for_each(|k| f(&k.expr, level));
            }
        }
        Node::Cte(c) => visit_exprs_at(&c.node, level, f),
        Node::Function(fs) => fs.calls.iter().flat_map(|c| &c.args).for_each(|e| f(e, level)),
        Node::WorkTable(..) => {}
        Node::RecursiveUnion(r) => {
            visit_exprs_at(&r.nonrec, level, f);
            visit_exprs_at(&r.rec, level, f);
        }
        Node::ProjectSet(i, calls) => {
            visit_exprs_at(i, level, f);
            calls.iter().flat_map(|c| &c.args).for_each(|e| f(e, level));
        }
        Node::LockRows(l) => visit_exprs_at(&l.input, level, f),
    }
}

/// The types the query's parameters get from their context (`$n` in WHERE, LIMIT, ...).
pub(crate) fn param_types(s: &Session, q: &Query, out: &mut Vec<Option<SqlType>>) -> Result<()> {
    let p = Planner::new(s, None);
    let b = p.query(q, &[])?;
    fn walk(node: &Node, out: &mut Vec<Option<SqlType>>) {
        visit_exprs(node, &mut |e| scalar_param_types(e, out));
    }
    walk(&b.node, out);
    Ok(())
}

/// The parameter types of `e` and of the subqueries inside it ([`Scalar::param_types`] stops at
/// a subquery's plan).
pub(crate) fn scalar_param_types(e: &Scalar, out: &mut Vec<Option<SqlType>>) {
    e.param_types(out);
    e.visit(&mut |x| {
        if let Scalar::SubLink(l) = x {
            visit_exprs(&l.plan, &mut |y| scalar_param_types(y, out));
        }
    });
}

/// A table with no columns.
pub(crate) fn no_table() -> crate::catalog::Table {
    crate::catalog::Table {
        oid: 0,
        name: String::new(),
        columns: Vec::new(),
        relfile: crate::storage::RelFileNumber(0),
        toast_relfile: None,
        persistence: crate::catalog::Persistence::Permanent,
        indexes: Vec::new(),
        kind: Default::default(),
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        comment: None,
    }
}

/// `pg_locks`: the heavyweight locks held and awaited now, as PostgreSQL's view (`pid` is the
/// session id).
fn pg_locks(s: &Session) -> (Node, Vec<OutCol>) {
    let text = |x: Option<String>| Scalar::Const(x.map(Value::Text).unwrap_or(Value::Null));
    let rows: Vec<Vec<Scalar>> = s
        .shared
        .locks
        .locks()
        .into_iter()
        .map(|l| {
            // PostgreSQL's classid / objid / objsubid: an advisory lock's key (its high and
            // low halves, or the two integer keys), 1 for a bigint key and 2 for two keys.
            let (locktype, relation, obj) = match l.tag {
                crate::lock::LockTag::Relation(oid) => ("relation", Some(Value::Oid(oid)), None),
                crate::lock::LockTag::Transaction(_) => ("transactionid", None, None),
                crate::lock::LockTag::Object { class, id } => ("object", None, Some((class, id as u32, 0))),
                crate::lock::LockTag::Advisory { key, pair } => {
                    ("advisory", None, Some(((key >> 32) as u32, key as u32, 1 + i16::from(pair))))
                }
            };
            let (classid, objid, objsubid) = match obj {
                Some((c, o, s)) => (Value::Oid(c), Value::Oid(o), Value::Int2(s)),
                None => (Value::Null, Value::Null, Value::Null),
            };
            let waitstart =
                l.waitstart.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| format!("{:.3}", d.as_secs_f64()));
            vec![
                text(Some(locktype.to_string())),
                Scalar::Const(relation.unwrap_or(Value::Null)),
                Scalar::Const(Value::Int4(l.session as i32)),
                text(Some(l.mode.name().to_string())),
                Scalar::Const(Value::Bool(l.granted)),
                Scalar::Const(Value::Bool(l.fastpath)),
                text(waitstart),
                Scalar::Const(classid),
                Scalar::Const(objid),
                Scalar::Const(objsubid),
                // The database of a lock on one of its objects (not of a transaction's).
                Scalar::Const(if locktype == "transactionid" { Value::Null } else { Value::Oid(super::pg_catalog::DATABASE_OID) }),
            ]
        })
        .collect();
    let cols = [
        ("locktype", TypeId::Text),
        ("relation", TypeId::Oid),
        ("pid", TypeId::Int4),
        ("mode", TypeId::Text),
        ("granted", TypeId::Bool),
        ("fastpath", TypeId::Bool),
        ("waitstart", TypeId::Text),
        ("classid", TypeId::Oid),
        ("objid", TypeId::Oid),
        ("objsubid", TypeId::Int2),
        ("database", TypeId::Oid),
    ];
    (Node::Values(rows, cols.len()), cols.iter().map(|(n, t)| OutCol { name: n.to_string(), ty: SqlType::new(*t), source: None }).collect())
}

/// Plans and runs a query, collecting its rows as text.
pub fn run_query(s: &mut Session, q: &Query, params: &[Option<String>]) -> Result<QueryResult> {
    run_query_to(s, q, params, None)
}

/// Plans and runs a query; its rows go to `sink` as they are produced when one is given,
/// else into the result.
pub fn run_query_to<'k>(
    s: &mut Session,
    q: &Query,
    params: &[Option<String>],
    sink: Option<&mut (dyn super::RowSink + 'k)>,
) -> Result<QueryResult> {
    let now = s.txn.as_ref().map(|t| t.start_us);
    let b = Planner::new(s, now).query(q, &[])?;
    run_bound_to(s, &b, params, sink)
}

/// Runs a bound query, collecting its rows as text.
pub fn run_bound(s: &mut Session, b: &BoundQuery, params: &[Option<String>]) -> Result<QueryResult> {
    run_bound_to(s, b, params, None)
}

/// Runs a bound query; its rows go to `sink` as they are produced when one is given.
pub(crate) fn run_bound_sink<'k>(
    s: &mut Session,
    b: &BoundQuery,
    params: &[Option<String>],
    sink: Option<&mut (dyn super::RowSink + 'k)>,
) -> Result<QueryResult> {
    run_bound_to(s, b, params, sink)
}

/// `COPY (query) TO STDOUT | 'file'`: the query runs through the executor and each row is
/// written in the COPY format (text, csv or binary) as it is produced, one CopyData message per
/// row to a client.
pub fn copy_query_to(
    s: &mut Session,
    q: &Query,
    target: sqlparser::ast::CopyTarget,
    options: &[sqlparser::ast::CopyOption],
    legacy: &[sqlparser::ast::CopyLegacyOption],
    force_quote_all: bool,
    io: &mut super::CopyIo<'_>,
) -> Result<QueryResult> {
    use crate::copy::{CopyFormat, CopyWriter};
    use sqlparser::ast::CopyTarget;
    let (mut opts, forces) = crate::copy::exec::copy_options(options, legacy, force_quote_all, false)?;
    if opts.freeze {
        return Err(PgError::feature("COPY FREEZE cannot be used with COPY TO"));
    }
    let now = s.txn.as_ref().map(|t| t.start_us);
    let b = Planner::new(s, now).query(q, &[])?;
    let binary = opts.format == CopyFormat::Binary;
    let names: Vec<String> = b.columns.iter().map(|c| c.name.clone()).collect();
    forces.resolve(&mut opts, &names, |n| match names.iter().any(|c| c == n) {
        true => Ok(()),
        false => Err(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" does not exist"))),
    })?;
    let types: Vec<SqlType> = b.columns.iter().map(|c| c.ty).collect();
    let werr = |e: std::io::Error| PgError::new(sqlstate::IO_ERROR, format!("could not write COPY data: {e}"));
    let mut file_out;
    let (dst, framed): (&mut dyn std::io::Write, bool) = match target {
        CopyTarget::Stdout => (
            io.stdout
                .as_deref_mut()
                .ok_or_else(|| PgError::feature("COPY TO STDOUT needs a destination (the library's Session::execute_with_io)"))?,
            true,
        ),
        CopyTarget::File { filename } => {
            let f = std::fs::File::create(&filename)
                .map_err(|e| PgError::new(sqlstate::IO_ERROR, format!("could not open file \"{filename}\" for writing: {e}")))?;
            file_out = std::io::BufWriter::with_capacity(1 << 20, f);
            (&mut file_out, false)
        }
        CopyTarget::Stdin => return Err(PgError::syntax("COPY (query) TO STDIN is not valid: use STDOUT")),
        CopyTarget::Program { .. } => return Err(PgError::feature("COPY ... PROGRAM is not supported")),
    };
    let mut w = CopyWriter::new(dst, opts);
    if framed {
        w = w.framed();
    }
    w.begin(&names).map_err(werr)?;
    exec::lock_tables(s, &b.node)?;
    let snap = s.snapshot();
    let ex = exec::Exec::new(s, snap, &[]);
    let mut n = 0u64;
    let mut line: Vec<u8> = Vec::new();
    let mut spans: Vec<Option<(usize, usize)>> = Vec::with_capacity(types.len());
    let mut stored = Vec::new();
    ex.run(&b.node, &[], &mut |r| {
        line.clear();
        spans.clear();
        for (v, ty) in r.iter().zip(&types) {
            if *v == Value::Null {
                spans.push(None);
                continue;
            }
            let start = line.len();
            if binary {
                stored.clear();
                let v = crate::sql::expr::cast_value(v.clone(), ty)?;
                v.encode(&mut stored);
                ty.send_binary(&stored, &mut line);
            } else if let Some(t) = exec::output_text(v, ty) {
                line.extend_from_slice(t.as_bytes());
            }
            spans.push(Some((start, line.len())));
        }
        let fields: Vec<Option<&[u8]>> = spans.iter().map(|sp| sp.map(|(a, b)| &line[a..b])).collect();
        w.write_row(&fields).map_err(werr)?;
        n += 1;
        Ok(Flow::Continue)
    })?;
    let inner = w.finish().map_err(werr)?;
    inner.flush().map_err(werr)?;
    let mut r = QueryResult { tag: format!("COPY {n}"), ..Default::default() };
    r.wrote_to_client = framed;
    Ok(r)
}

fn run_bound_to<'k>(
    s: &mut Session,
    b: &BoundQuery,
    params: &[Option<String>],
    mut sink: Option<&mut (dyn super::RowSink + 'k)>,
) -> Result<QueryResult> {
    exec::lock_tables(s, &b.node)?;
    let snap = s.snapshot();
    let ex = exec::Exec::new(s, snap, params);
    let columns: Vec<(String, String)> = b.columns.iter().map(|c| (c.name.clone(), c.ty.name())).collect();
    let sources: Vec<Option<(u32, i16)>> = b.columns.iter().map(|c| c.source).collect();
    let types: Vec<SqlType> = b.columns.iter().map(|c| c.ty).collect();
    if let Some(k) = sink.as_deref_mut() {
        k.columns(&columns, &sources)?;
    }
    let mut rows = Vec::new();
    let mut n = 0u64;
    let mut text: Vec<Option<String>> = Vec::with_capacity(types.len());
    ex.run(&b.node, &[], &mut |r| {
        n += 1;
        match sink.as_deref_mut() {
            Some(k) => {
                text.clear();
                text.extend(r.iter().zip(&types).map(|(v, t)| exec::output_text(v, t)));
                k.row(&text)?;
            }
            None => rows.push(r.iter().zip(&types).map(|(v, t)| exec::output_text(v, t)).collect()),
        }
        Ok(Flow::Continue)
    })?;
    let streamed = sink.is_some();
    Ok(QueryResult {
        tag: format!("SELECT {n}"),
        columns: if streamed { Vec::new() } else { columns },
        rows,
        returns_rows: !streamed,
        notices: vec![],
        wrote_to_client: false,
        column_sources: if streamed { Vec::new() } else { sources },
    })
}

/// An output column: its name, expression and source (table oid, column number).
pub(crate) type OutItem = (String, Scalar, Option<(u32, i16)>);

/// A name missing from a JOIN's ON condition that is a column of an earlier comma-separated
/// FROM item (`ls`), which the condition may not read: PostgreSQL's error and hint.
fn out_of_reach(e: PgError, ls: &Scope) -> PgError {
    match e.code {
        sqlstate::UNDEFINED_TABLE => {
            let rel =
                e.message.strip_prefix("missing FROM-clause entry for table \"").and_then(|m| m.strip_suffix('"')).map(str::to_string);
            match rel.filter(|r| ls.has_rel(r)) {
                Some(r) => PgError::new(sqlstate::UNDEFINED_TABLE, format!("invalid reference to FROM-clause entry for table \"{r}\""))
                    .with_hint(format!("There is an entry for table \"{r}\", but it cannot be referenced from this part of the query.")),
                None => e,
            }
        }
        sqlstate::UNDEFINED_COLUMN => {
            let col = e.message.strip_prefix("column \"").and_then(|m| m.strip_suffix("\" does not exist"));
            match col.and_then(|c| ls.cols.iter().find(|s| !s.hidden && s.name == c)) {
                Some(s) => {
                    let hint = format!(
                        "There is a column named \"{}\" in table \"{}\", but it cannot be referenced from this part of the query.",
                        s.name,
                        s.rel.as_deref().unwrap_or("")
                    );
                    e.with_hint(hint)
                }
                None => e,
            }
        }
        _ => e,
    }
}

/// A FROM tree whose first item is marked LATERAL with nothing to its left: unmarked.
fn not_lateral(rel: Rel) -> Rel {
    match rel {
        Rel::Leaf(n, w, _) => Rel::Leaf(n, w, false),
        Rel::Join(k, l, r, on) => Rel::Join(k, Box::new(not_lateral(*l)), r, on),
    }
}

impl ChangeJoin {
    /// Decodes only what the statement reads: the target's columns and TID, and the FROM
    /// items' columns that `exprs` (WHERE, SET, RETURNING) name.
    pub(crate) fn narrow<'e>(&mut self, table_width: usize, exprs: impl Iterator<Item = &'e Scalar>) {
        let mut used = vec![false; self.scope.cols.len()];
        used[..=table_width].iter_mut().for_each(|u| *u = true);
        if let Some(c) = &self.cond {
            cols_used(c, &mut used);
        }
        for e in exprs {
            cols_used(e, &mut used);
        }
        prune(&mut self.node, &used);
    }
}

/// Whether a plan calls a volatile function anywhere, its subqueries' plans included.
pub(crate) fn plan_calls_volatile(node: &Node) -> bool {
    let mut found = false;
    visit_exprs(node, &mut |e| found |= scalar_calls_volatile(e));
    found
}

/// Whether an expression calls a volatile function, its subqueries' plans included.
fn scalar_calls_volatile(e: &Scalar) -> bool {
    let mut found = false;
    e.visit(&mut |x| match x {
        Scalar::SubLink(l) => found |= plan_calls_volatile(&l.plan),
        other => found |= matches!(other, Scalar::Func(f, ..) if f.is_volatile()),
    });
    found
}

/// The rows an `UPDATE ... FROM` / `DELETE ... USING` changes ([`Planner::change_join`]).
pub(crate) struct ChangeJoin {
    /// Rows: the target's columns, the TID of the target row's version (a hidden column),
    /// then the FROM items' columns, as `scope` names them.
    pub node: Node,
    pub scope: Scope,
    /// The whole WHERE clause over those rows: rechecked, with the same FROM rows, on a
    /// newer version of a target row that a concurrent transaction changed (READ
    /// COMMITTED's EvalPlanQual).
    pub cond: Option<Scalar>,
}

/// Binds a RETURNING list over `table`'s columns: `*`, `t.*`, expressions with or without
/// an alias (named as a select list names them). Untyped literals are text. Subqueries and
/// aggregates are refused.
pub(crate) fn bind_returning(
    s: &Session,
    table: &crate::catalog::Table,
    alias: Option<&str>,
    items: &[SelectItem],
) -> Result<Vec<OutItem>> {
    bind_returning_in(s, &Scope::of_table(table, alias), items)
}

/// [`bind_returning`] over any scope (UPDATE ... FROM's: the target's columns, then the FROM
/// items'; `*` is every visible column of them all, as in PostgreSQL).
pub(crate) fn bind_returning_in(s: &Session, scope: &Scope, items: &[SelectItem]) -> Result<Vec<OutItem>> {
    let now = s.txn.as_ref().map(|t| t.start_us);
    let p = Planner::new(s, now);
    let b = p.binder(scope, &[], None);
    let mut out = Vec::new();
    let col = |i: usize| (scope.cols[i].name.clone(), Scalar::Col(i, scope.cols[i].ty), scope.cols[i].source);
    for it in items {
        match it {
            SelectItem::Wildcard(w) => {
                wildcard_options(w)?;
                out.extend((0..scope.cols.len()).filter(|&i| !scope.cols[i].hidden).map(col));
            }
            SelectItem::QualifiedWildcard(kind, w) => {
                wildcard_options(w)?;
                let rel = match kind {
                    sqlparser::ast::SelectItemQualifiedWildcardKind::ObjectName(n) => super::ddl::table_name(n)?,
                    _ => return Err(refuse("this qualified wildcard")),
                };
                if !scope.has_rel(&rel) {
                    return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("missing FROM-clause entry for table \"{rel}\"")));
                }
                out.extend((0..scope.cols.len()).filter(|&i| scope.cols[i].rel.as_deref() == Some(rel.as_str())).map(col));
            }
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                let mut x = b.bind(e)?;
                if type_of(&x).is_none() {
                    x = to_type(x, Some(SqlType::new(TypeId::Text)))?;
                }
                let source = match &x {
                    Scalar::Col(i, _) => scope.cols[*i].source,
                    _ => None,
                };
                let name = match it {
                    SelectItem::ExprWithAlias { alias, .. } => fold_ident(alias),
                    _ => figure_colname(e).unwrap_or_else(|| "?column?".into()),
                };
                out.push((name, x, source));
            }
        }
    }
    Ok(out)
}

/// Which output columns of a set operation's branch are untyped literals (a quoted string or
/// NULL, unaliased or aliased) in a plain SELECT: their type comes from the other branch.
fn untyped_literal_columns(body: &SetExpr) -> Vec<bool> {
    use sqlparser::ast::{Expr, SelectItem, Value as AstValue};
    let SetExpr::Select(sel) = body else { return Vec::new() };
    // A `*` stands for several columns: positions are known only without one.
    sel.projection
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                Some(matches!(e, Expr::Value(v) if matches!(v.value, AstValue::SingleQuotedString(_) | AstValue::Null)))
            }
            _ => None,
        })
        .collect::<Option<Vec<bool>>>()
        .unwrap_or_default()
}
