//! Scalar expressions of row statements: bound once against a table (column references
//! resolved, untyped literals given the type their context asks for), then evaluated per row.
//!
//! Typing follows PostgreSQL's rule for unknown-type literals: a string literal (and a `$n`
//! parameter, which arrives as text) compared with, or combined with, a typed operand takes
//! that operand's type and is read with that type's input function; alone it is text.
//!
//! Invariants:
//! 1. Evaluation never fails on NULL: comparisons and arithmetic with NULL give NULL, AND/OR
//!    follow three-valued logic, and a WHERE clause keeps a row only when it is true.
//! 2. Integer arithmetic is checked in the result type (int2, int4 or int8, the wider operand's)
//!    and fails with 22003 `smallint/integer/bigint out of range`, as PostgreSQL's.

use crate::catalog::{fold_ident, Table};
use crate::error::{sqlstate, PgError, Result};
use crate::types::{SqlType, TypeId, Value};
use sqlparser::ast::{BinaryOperator, CastKind, Expr, UnaryOperator, Value as AstValue};
use std::cmp::Ordering;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// Whether the operator holds for an ordering of its left operand against its right.
    pub fn holds(self, o: Ordering) -> bool {
        match self {
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::Ne => o != Ordering::Equal,
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Ge => o != Ordering::Less,
        }
    }

    /// The operator's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "<>",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// The operator with its operands swapped (`a < b` is `b > a`).
    pub fn commute(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            o => o,
        }
    }
}

/// A bound expression.
#[derive(Clone, Debug)]
pub enum Scalar {
    Col(usize, SqlType),
    Const(Value),
    /// A string literal whose type the context has not fixed (reads as text).
    Unknown(String),
    /// Parameter `$n` (1-based), with the type its context gave it (None: text).
    Param(usize, Option<SqlType>),
    Arith(ArithOp, Box<Scalar>, Box<Scalar>),
    Concat(Box<Scalar>, Box<Scalar>),
    Neg(Box<Scalar>),
    Cmp(CmpOp, Box<Scalar>, Box<Scalar>),
    And(Box<Scalar>, Box<Scalar>),
    Or(Box<Scalar>, Box<Scalar>),
    Not(Box<Scalar>),
    IsNull(Box<Scalar>, bool),
    InList(Box<Scalar>, Vec<Scalar>, bool),
    /// `x::type` / `CAST(x AS type)` of a typed operand (literals and parameters take the
    /// type directly when bound).
    Cast(Box<Scalar>, SqlType),
    /// A column of an enclosing query's current row (a correlated subquery's reference):
    /// (levels out, 0 = the nearest enclosing query; column; type).
    Outer(usize, usize, SqlType),
    /// A scalar function call, typed when bound (`func`).
    Func(super::func::Func, Vec<Scalar>, SqlType),
    /// `CASE [operand] WHEN .. THEN .. [ELSE ..] END` (with an operand, each WHEN is already
    /// bound as `operand = value`); the result type.
    Case(Vec<(Scalar, Scalar)>, Option<Box<Scalar>>, Option<SqlType>),
    /// `COALESCE(a, b, ...)`.
    Coalesce(Vec<Scalar>, Option<SqlType>),
    /// `NULLIF(a, b)`.
    NullIf(Box<Scalar>, Box<Scalar>),
    /// A value looked up by an OID-like key in a table built when the statement was planned
    /// (the catalog functions: `pg_get_userbyid`, `pg_get_indexdef`, `to_regclass`, ...);
    /// NULL for a NULL or absent key.
    Lookup(Box<Scalar>, Arc<LookupTable>, SqlType),
    /// `~` / `~*` (negated: `!~` / `!~*`) against a pattern compiled when bound.
    Regex(Box<Scalar>, Arc<regex::Regex>, bool),
    /// `GREATEST(...)` (true) or `LEAST(...)` (false): NULLs ignored.
    MinMax(bool, Vec<Scalar>, Option<SqlType>),
    /// `x [NOT] LIKE / ILIKE pattern [ESCAPE c]`: (x, pattern, negated, case-insensitive,
    /// escape character; None = no escape).
    Like(Box<Scalar>, Box<Scalar>, bool, bool, Option<char>),
    /// `a IS [NOT] DISTINCT FROM b` (true = NOT).
    IsDistinct(Box<Scalar>, Box<Scalar>, bool),
    /// `x IS [NOT] TRUE / FALSE / UNKNOWN` (Some(true) / Some(false) / None; true = NOT).
    IsBool(Box<Scalar>, Option<bool>, bool),
    /// A subquery in an expression (run by the executor).
    SubLink(Box<crate::exec::SubLink>),
    /// An aggregate call collected while binding (index into the query's list); replaced by
    /// a column of the aggregation's output before the query runs.
    Agg(usize, SqlType),
    /// A window function call collected while binding, replaced like [`Scalar::Agg`].
    Win(usize, SqlType),
    /// A set-returning function call in a select list, collected while binding and replaced
    /// by a column of the `ProjectSet` node that evaluates it (`sql::srf`).
    Srf(usize, SqlType),
}

/// One column visible to expressions: a FROM item's column.
#[derive(Clone, Debug)]
pub struct ScopeCol {
    /// The FROM item's name or alias (None for a join's merged USING column).
    pub rel: Option<String>,
    pub name: String,
    pub ty: SqlType,
    /// Not found by an unqualified name (the two input copies of a USING column, which the
    /// merged column stands for).
    pub hidden: bool,
    /// The table's OID and the column's number, for RowDescription.
    pub source: Option<(u32, i16)>,
    /// The only column of a FROM function returning a scalar whose output column has its
    /// own name (`jsonb_array_elements(...) AS e` names `value`): the item's name alone
    /// (`e`, PostgreSQL's whole-row reference) reads it too.
    pub whole_row: bool,
    /// On the nullable side of an outer join: NULL in a row the join made up.
    pub nullable: bool,
    /// A base table's NOT NULL column read directly: NULL only in a row an outer join made up.
    pub not_null: bool,
}

impl ScopeCol {
    /// A plain column of FROM item `rel` (found by its name, no table column behind it).
    pub fn new(rel: Option<String>, name: String, ty: SqlType) -> ScopeCol {
        ScopeCol { rel, name, ty, hidden: false, source: None, whole_row: false, nullable: false, not_null: false }
    }
}

/// The columns an expression can name, in the order of the rows it is evaluated on.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// This level is not an enclosing query but the FROM items to the left of a LATERAL item
    /// of the same query (it is an outer level only because that item runs once per left
    /// row). A recursive query's reference to itself may cross such levels, not real ones.
    pub same_query: bool,
    pub cols: Vec<ScopeCol>,
}

impl Scope {
    /// The columns of `table`, named by `alias` or the table's name.
    pub fn of_table(table: &Table, alias: Option<&str>) -> Scope {
        let rel = alias.unwrap_or(&table.name).to_string();
        Scope {
            same_query: false,
            cols: table
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| ScopeCol {
                    rel: Some(rel.clone()),
                    name: c.name.clone(),
                    ty: c.ty,
                    hidden: false,
                    source: Some((table.oid, i as i16 + 1)),
                    whole_row: false,
                    nullable: false,
                    not_null: c.not_null,
                })
                .collect(),
        }
    }

    /// True if some column belongs to FROM item `rel`.
    pub fn has_rel(&self, rel: &str) -> bool {
        self.cols.iter().any(|c| c.rel.as_deref() == Some(rel))
    }

    /// The column `rel.name` (or `name` alone): None if absent, 42702 if ambiguous.
    pub fn resolve(&self, rel: Option<&str>, name: &str) -> Result<Option<usize>> {
        let mut found = None;
        for (i, c) in self.cols.iter().enumerate() {
            let hit = match rel {
                Some(r) => c.rel.as_deref() == Some(r) && c.name == name,
                None => !c.hidden && c.name == name,
            };
            if hit {
                if found.is_some() {
                    let shown = match rel {
                        Some(r) => format!("{r}.{name}"),
                        None => name.to_string(),
                    };
                    return Err(PgError::new("42702", format!("column reference \"{shown}\" is ambiguous")));
                }
                found = Some(i);
            }
        }
        Ok(found)
    }
}

/// Binds the subqueries met inside expressions (the query binder, which knows the catalog).
pub trait SubqueryBinder {
    /// Binds `q` with `outer` (innermost first) visible to its expressions.
    fn subquery(&self, q: &sqlparser::ast::Query, outer: &[&Scope]) -> Result<crate::exec::BoundQuery>;
    /// The planning session, for the catalog functions (None: none available).
    fn session(&self) -> Option<&crate::session::Session> {
        None
    }
    /// Set once the statement binds a C-like `COLLATE` (`func::explicit_collation`) that is
    /// not directly the argument of a case mapping: a column of a subquery, WITH query or
    /// view may then carry that collation, which case mapping would have to follow.
    fn c_collation_seen(&self) -> Option<&std::cell::Cell<bool>> {
        self.session().map(|s| &s.c_collate)
    }
}

/// Where an aggregate or window call is allowed, and the lists they are collected into.
#[derive(Default)]
pub struct Collect {
    pub aggs: std::cell::RefCell<Vec<crate::exec::AggCall>>,
    pub windows: std::cell::RefCell<Vec<crate::exec::WinCall>>,
    /// Set-returning calls of a select list.
    pub srfs: std::cell::RefCell<Vec<super::srf::SrfCall>>,
    /// The query's WINDOW clause: each name with its definition, references to earlier
    /// windows already resolved.
    pub named_windows: Vec<(String, sqlparser::ast::WindowSpec)>,
}

/// Binds expressions against a scope: column names resolved (in enclosing queries' scopes
/// too, as outer references), untyped literals given their context's type, subqueries bound
/// through `queries`, aggregate and window calls collected into `collect` (refused where it
/// is None).
pub struct Binder<'a> {
    pub scope: &'a Scope,
    pub outer: &'a [&'a Scope],
    pub queries: Option<&'a dyn SubqueryBinder>,
    pub collect: Option<&'a Collect>,
    /// Inside an aggregate's arguments (nested aggregates are refused).
    pub in_agg: bool,
    /// The transaction's start (microseconds since 2000-01-01), for `current_date`.
    pub now_us: Option<i64>,
    /// Set when the transaction's start was read (a plan that did cannot be cached).
    pub now_used: Option<&'a std::cell::Cell<bool>>,
    /// The statement's start, for `statement_timestamp()` (read like `now_us`).
    pub stmt_us: Option<i64>,
}

impl<'a> Binder<'a> {
    /// A binder over `scope` alone.
    pub fn new(scope: &'a Scope) -> Binder<'a> {
        Binder { scope, outer: &[], queries: None, collect: None, in_agg: false, now_us: None, now_used: None, stmt_us: None }
    }

    /// A column reference.
    fn column(&self, rel: Option<&str>, name: &str) -> Result<Scalar> {
        if let Some(i) = self.scope.resolve(rel, name)? {
            return Ok(Scalar::Col(i, self.scope.cols[i].ty));
        }
        for (depth, sc) in self.outer.iter().enumerate() {
            if let Some(i) = sc.resolve(rel, name)? {
                return Ok(Scalar::Outer(depth, i, sc.cols[i].ty));
            }
        }
        // A whole-row reference to a scalar function in FROM is its value.
        if rel.is_none() {
            let whole = |sc: &Scope| sc.cols.iter().position(|c| c.whole_row && c.rel.as_deref() == Some(name));
            if let Some(i) = whole(self.scope) {
                return Ok(Scalar::Col(i, self.scope.cols[i].ty));
            }
            for (depth, sc) in self.outer.iter().enumerate() {
                if let Some(i) = whole(sc) {
                    return Ok(Scalar::Outer(depth, i, sc.cols[i].ty));
                }
            }
            if let Some(r) = self.whole_row(name)? {
                return Ok(r);
            }
        }
        // A catalog column of a type heapstore does not have: refused, not "missing".
        for sc in std::iter::once(self.scope).chain(self.outer.iter().copied()) {
            for c in &sc.cols {
                if rel.is_none_or(|r| c.rel.as_deref() == Some(r)) {
                    if let Some(e) = c.source.and_then(|(oid, _)| super::pg_catalog::unsupported_column(oid, name)) {
                        return Err(e);
                    }
                }
            }
        }
        if let Some(r) = rel {
            if !self.scope.has_rel(r) && !self.outer.iter().any(|s| s.has_rel(r)) {
                return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("missing FROM-clause entry for table \"{r}\"")));
            }
            // PostgreSQL names a qualified column without quotes.
            return Err(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column {r}.{name} does not exist")));
        }
        Err(undefined_column(name))
    }
}

impl Binder<'_> {
    /// A whole-row reference: `name` is a FROM item of this query or of an enclosing one,
    /// read as a record of its columns (named and typed as they are). On the nullable side of
    /// an outer join, PostgreSQL's whole row of a row the join made up is NULL, which its
    /// columns alone cannot tell from a row of NULLs: a base table with a NOT NULL column
    /// tells by it (NULL exactly in a made-up row); any other such FROM item is refused.
    fn whole_row(&self, name: &str) -> Result<Option<Scalar>> {
        for (level, sc) in std::iter::once(self.scope).chain(self.outer.iter().copied()).enumerate() {
            let cols: Vec<usize> = (0..sc.cols.len()).filter(|&i| sc.cols[i].rel.as_deref() == Some(name)).collect();
            if cols.is_empty() {
                continue;
            }
            let col = |i: usize| if level == 0 { Scalar::Col(i, sc.cols[i].ty) } else { Scalar::Outer(level - 1, i, sc.cols[i].ty) };
            let made_up = if cols.iter().any(|&i| sc.cols[i].nullable) {
                match cols.iter().find(|&&i| sc.cols[i].not_null) {
                    Some(&i) => Some(Scalar::IsNull(Box::new(col(i)), false)),
                    None => {
                        return Err(PgError::feature(format!(
                            "a whole-row reference to \"{name}\", on the nullable side of an outer join and without a NOT NULL \
                             column to tell a missing row by, is not supported by heapstore"
                        )))
                    }
                }
            } else {
                None
            };
            // A system catalog's row: heapstore models only some of its columns.
            if cols.iter().any(|&i| sc.cols[i].source.is_some_and(|(oid, _)| oid < crate::catalog::FIRST_NORMAL_OID)) {
                return Err(PgError::feature(format!(
                    "a whole-row reference to \"{name}\", which reads a system catalog, is not supported by heapstore"
                )));
            }
            let items: Vec<Scalar> = cols.iter().map(|&i| col(i)).collect();
            let fields = cols.iter().map(|&i| (sc.cols[i].name.clone(), sc.cols[i].ty)).collect();
            let ty = SqlType::new(TypeId::Record(crate::types::RecordKind::row(fields, Some(name), Vec::new())));
            let row = Scalar::Func(super::func::Func::Row, items, ty);
            return Ok(Some(match made_up {
                // NULL for a row the outer join made up.
                Some(missing) => {
                    Scalar::Case(vec![(missing, Scalar::Cast(Box::new(Scalar::Const(Value::Null)), ty))], Some(Box::new(row)), Some(ty))
                }
                None => row,
            }));
        }
        Ok(None)
    }

    /// A row constructor as a value, `ROW(a, b)` / `(a, b)`: an anonymous record with fields
    /// `f1`, `f2`, ... of the items' types (an untyped literal is text).
    pub(super) fn row_value(&self, items: &[&Expr]) -> Result<Scalar> {
        if items.len() > crate::types::record::MAX_FIELDS {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("target lists can have at most {} entries", crate::types::record::MAX_FIELDS),
            ));
        }
        let bound = items.iter().map(|e| self.bind(e)).collect::<Result<Vec<_>>>()?;
        row_of(bound)
    }
}

/// The record of bound items (see [`Binder::row_value`]).
fn row_of(items: Vec<Scalar>) -> Result<Scalar> {
    let text = SqlType::new(TypeId::Text);
    let mut args = Vec::with_capacity(items.len());
    let mut fields = Vec::with_capacity(items.len());
    let mut unknown = Vec::with_capacity(items.len());
    for (i, s) in items.into_iter().enumerate() {
        unknown.push(type_of(&s).is_none());
        let s = if type_of(&s).is_none() { coerce(s, Some(text))? } else { s };
        fields.push((format!("f{}", i + 1), type_of(&s).unwrap_or(text)));
        args.push(s);
    }
    let ty = SqlType::new(TypeId::Record(crate::types::RecordKind::row(fields, None, unknown)));
    Ok(Scalar::Func(super::func::Func::Row, args, ty))
}

pub fn undefined_column(name: &str) -> PgError {
    PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{name}\" does not exist"))
}

/// `operator does not exist` raised by resolving an operator (not by its operands) points at
/// the operator: the first token after the left operand `left` (past blanks, closing
/// parentheses and `::type`), as in PostgreSQL. Operands whose span ends before their text
/// does (`CAST(... AS t)`, a call without arguments or with OVER / FILTER, `IS ...`) give
/// no position rather than a wrong one.
pub(super) fn at_operator(e: PgError, left: &Expr) -> PgError {
    use sqlparser::ast::{CastKind, FunctionArguments, Spanned};
    if e.code != "42883" || !e.message.starts_with("operator does not exist") {
        return e;
    }
    let reliable = match left {
        Expr::Cast { kind, .. } => matches!(kind, CastKind::DoubleColon),
        Expr::Function(f) => {
            f.over.is_none()
                && f.filter.is_none()
                && f.within_group.is_empty()
                && matches!(&f.args, FunctionArguments::List(l) if !l.args.is_empty() && l.clauses.is_empty())
        }
        Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::IsTrue(_)
        | Expr::IsNotTrue(_)
        | Expr::IsFalse(_)
        | Expr::IsNotFalse(_)
        | Expr::IsUnknown(_)
        | Expr::IsNotUnknown(_)
        | Expr::IsDistinctFrom(..)
        | Expr::IsNotDistinctFrom(..)
        | Expr::Collate { .. }
        | Expr::Interval(_)
        | Expr::TypedString(_) => false,
        _ => true,
    };
    if reliable {
        e.at_next(left.span().end)
    } else {
        e
    }
}

pub fn no_operator(op: &str, a: Option<SqlType>, b: Option<SqlType>) -> PgError {
    let n = |t: Option<SqlType>| t.map(|t| t.name()).unwrap_or_else(|| "unknown".into());
    PgError::new("42883", format!("operator does not exist: {} {op} {}", n(a), n(b)))
        .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}

/// The type of a decoded value (None for NULL).
pub fn value_type(v: &Value) -> Option<SqlType> {
    v.natural_type()
}

/// Reads `text` with `ty`'s input function into a value.
pub fn parse_as(ty: &SqlType, text: &str) -> Result<Value> {
    let mut out = Vec::with_capacity(16);
    ty.input_text(text, &mut out)?;
    Ok(Value::decode(ty, &out))
}

pub fn is_int(t: TypeId) -> bool {
    matches!(t, TypeId::Int2 | TypeId::Int4 | TypeId::Int8)
}
pub fn is_num(t: TypeId) -> bool {
    is_int(t) || matches!(t, TypeId::Float4 | TypeId::Float8 | TypeId::Numeric)
}
pub fn is_text(t: TypeId) -> bool {
    matches!(t, TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name | TypeId::Char)
}
/// date, timestamp and timestamp with time zone (compared and cast among each other: a
/// timestamp or date beside a timestamptz is the instant the session's clocks read it).
/// oid, regtype and regclass: OIDs (compared as numbers, cast among each other).
pub fn is_oid_like(t: TypeId) -> bool {
    matches!(t, TypeId::Oid | TypeId::Regtype | TypeId::Regnamespace | TypeId::Regclass)
}
pub fn is_datetime(t: TypeId) -> bool {
    matches!(t, TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz)
}

/// The type binding gives an expression (None: unknown, i.e. text unless the context says).
pub fn type_of(e: &Scalar) -> Option<SqlType> {
    match e {
        Scalar::Col(_, t) => Some(*t),
        Scalar::Const(v) => value_type(v),
        Scalar::Unknown(_) => None,
        Scalar::Param(_, t) => *t,
        Scalar::Arith(_, a, b) => {
            let (ta, tb) = (type_of(a).map(|t| t.id), type_of(b).map(|t| t.id));
            Some(SqlType::new(match (ta, tb) {
                (Some(x), Some(y)) if is_int(x) && is_int(y) => int_rank_max(x, y),
                (Some(x), None) | (None, Some(x)) if is_int(x) => x,
                (Some(TypeId::Float4), Some(TypeId::Float4) | None) | (None, Some(TypeId::Float4)) => TypeId::Float4,
                (Some(x), Some(y)) if x == TypeId::Numeric && (is_int(y) || y == TypeId::Numeric) => TypeId::Numeric,
                (Some(x), Some(y)) if y == TypeId::Numeric && is_int(x) => TypeId::Numeric,
                (Some(TypeId::Numeric), None) | (None, Some(TypeId::Numeric)) => TypeId::Numeric,
                _ => TypeId::Float8,
            }))
        }
        Scalar::Concat(..) => Some(SqlType::new(TypeId::Text)),
        Scalar::Neg(a) => type_of(a),
        Scalar::Cast(_, t) => Some(*t),
        Scalar::Outer(_, _, t) | Scalar::Func(_, _, t) | Scalar::Agg(_, t) | Scalar::Win(_, t) | Scalar::Srf(_, t) => Some(*t),
        Scalar::Case(_, _, t) | Scalar::Coalesce(_, t) | Scalar::MinMax(_, _, t) => *t,
        Scalar::NullIf(a, _) => type_of(a),
        Scalar::Lookup(_, _, t) => Some(*t),
        Scalar::SubLink(l) => l.result_type(),
        _ => Some(SqlType::new(TypeId::Bool)),
    }
}

fn int_rank(t: TypeId) -> u8 {
    match t {
        TypeId::Int2 => 1,
        TypeId::Int4 => 2,
        _ => 3,
    }
}
fn int_rank_max(a: TypeId, b: TypeId) -> TypeId {
    if int_rank(a) >= int_rank(b) {
        a
    } else {
        b
    }
}

/// Gives an untyped operand the type `ty` (a literal is read now; a parameter when bound).
pub fn coerce(e: Scalar, ty: Option<SqlType>) -> Result<Scalar> {
    let Some(ty) = ty else { return Ok(e) };
    Ok(match e {
        Scalar::Unknown(s) => typed_const(parse_as(&ty, &s)?, ty),
        Scalar::Param(n, None) => Scalar::Param(n, Some(ty)),
        other => other,
    })
}

/// A constant of type `ty`: char(n) constants keep their type (a cast of the value), so
/// that comparisons and functions treat their padding as PostgreSQL does.
fn typed_const(v: Value, ty: SqlType) -> Scalar {
    // A value stored as text but typed otherwise keeps its type (char(n), varchar, name, ...).
    if v != Value::Null && v.natural_type().is_some_and(|n| n.id != ty.id) && is_text(ty.id) {
        Scalar::Cast(Box::new(Scalar::Const(v)), ty)
    } else {
        Scalar::Const(v)
    }
}

/// Binds a pair of operands: an untyped one takes the other's type.
/// An untyped literal or parameter takes the other operand's type without its modifier, as in
/// PostgreSQL (`v = 'ab '` with `v varchar(2)` compares with 'ab ', not a cut 'ab').
pub fn bind_pair(a: Scalar, b: Scalar) -> Result<(Scalar, Scalar)> {
    let (ta, tb) = (base_type(type_of(&a)), base_type(type_of(&b)));
    let b = if tb.is_none() { coerce(b, ta)? } else { b };
    let a = if ta.is_none() { coerce(a, tb)? } else { a };
    Ok((a, b))
}

/// A type without its modifier.
pub fn base_type(t: Option<SqlType>) -> Option<SqlType> {
    t.map(|t| if t.id == TypeId::NullArray { t } else { SqlType::new(t.id) })
}

/// The comparison `a op b` of two bound operands: an untyped one takes the other's type,
/// the types must be comparable, and char(n) compares without its padding.
pub fn compare_scalars(o: CmpOp, a: Scalar, b: Scalar) -> Result<Scalar> {
    let (a, b) = bind_pair(a, b)?;
    check_comparable(&a, &b, o.symbol())?;
    let (a, b) = unpad_pair(a, b);
    Ok(Scalar::Cmp(o, Box::new(a), Box::new(b)))
}

/// Binds `e` against `table`'s columns (no subqueries, no aggregates).
pub fn bind(e: &Expr, table: &Table) -> Result<Scalar> {
    bind_as(e, table, None)
}

/// As [`bind`], with the table known by `alias` (`UPDATE t AS x ... WHERE x.a = 1`).
pub fn bind_as(e: &Expr, table: &Table, alias: Option<&str>) -> Result<Scalar> {
    let scope = Scope::of_table(table, alias);
    Binder::new(&scope).bind(e)
}

/// The items of a row constructor, `(a, b, ...)` or `ROW(a, ...)` (None: not a row).
pub(super) fn row_items(e: &Expr) -> Option<Vec<&Expr>> {
    use sqlparser::ast::{FunctionArg, FunctionArgExpr, FunctionArguments};
    match e {
        Expr::Tuple(items) => Some(items.iter().collect()),
        Expr::Nested(inner) => row_items(inner),
        Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("row") && f.filter.is_none() && f.over.is_none() => match &f.args {
            FunctionArguments::List(l) if l.duplicate_treatment.is_none() && l.clauses.is_empty() => l
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect(),
            _ => None,
        },
        _ => None,
    }
}

impl Binder<'_> {
    /// A comparison of two row constructors, PostgreSQL's row-wise comparison: `=` is every
    /// pair equal, `<>` some pair unequal, and `<`, `<=`, `>`, `>=` decided by the first pair
    /// that is not equal (NULL when that pair has a NULL). So `(a, b) < (c, d)` is
    /// `a < c OR (a = c AND b < d)`, which gives the same three-valued answer. The items of
    /// every pair but the last appear twice there, so a volatile one or a subquery among them
    /// is refused (PostgreSQL evaluates each once).
    pub(super) fn row_compare(&self, op: CmpOp, left: &Expr, right: &Expr) -> Result<Scalar> {
        let (Some(l), Some(r)) = (row_items(left), row_items(right)) else {
            // A row against a subquery's row (PostgreSQL's ROWCOMPARE sublink; a subquery on
            // the left is a scalar one, whose columns must then be one).
            if let (Expr::Subquery(q), Some(items)) = (right, row_items(left)) {
                use sqlparser::ast::Spanned;
                return self.sublink_rows(q, &items, crate::exec::SubKind::RowCompare(op)).map_err(|e| {
                    if e.code == sqlstate::SYNTAX_ERROR && e.message.starts_with("subquery has too") {
                        e.at_next(left.span().end)
                    } else {
                        e
                    }
                });
            }
            let side = if row_items(left).is_some() { right } else { left };
            let bound = self.bind(side)?;
            if type_of(&bound).is_some_and(|t| matches!(t.id, TypeId::Record(_))) {
                // A row constructor against a record value: the records compare as values.
                // An untyped literal in the constructor stays `unknown` in PostgreSQL, which
                // record_eq / record_cmp cannot compare with a field.
                let items = row_items(left).or_else(|| row_items(right)).expect("one side is a row");
                let items = items.iter().map(|e| self.bind(e)).collect::<Result<Vec<_>>>()?;
                if let Some(TypeId::Record(k)) = type_of(&bound).map(|t| t.id) {
                    let fields = k.fields();
                    for (i, item) in items.iter().enumerate() {
                        if type_of(item).is_none() {
                            let Some((_, fty)) = fields.get(i) else { break };
                            let (x, y) = if row_items(left).is_some() {
                                ("unknown".to_string(), fty.name())
                            } else {
                                (fty.name(), "unknown".to_string())
                            };
                            let msg = if matches!(op, CmpOp::Eq | CmpOp::Ne) {
                                format!("cannot compare dissimilar column types {x} and {y} at record column {}", i + 1)
                            } else {
                                return Err(PgError::new("42883", "could not identify a comparison function for type unknown"));
                            };
                            return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, msg));
                        }
                    }
                }
                let row = row_of(items)?;
                let (a, b) = if row_items(left).is_some() { (row, bound) } else { (bound, row) };
                return compare_scalars(op, a, b);
            }
            let other = type_of(&bound).map(|t| t.name()).unwrap_or_else(|| "unknown".into());
            let (a, b) = if row_items(left).is_some() { ("record".to_string(), other) } else { (other, "record".to_string()) };
            return Err(PgError::new("42883", format!("operator does not exist: {a} {} {b}", op.symbol()))
                .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."));
        };
        if l.len() != r.len() {
            return Err(PgError::syntax("unequal number of entries in row expressions"));
        }
        if l.is_empty() {
            return Err(PgError::feature("cannot compare rows of zero length"));
        }
        let pair = |o: CmpOp, i: usize| -> Result<Scalar> { compare_scalars(o, self.bind(l[i])?, self.bind(r[i])?) };
        let n = l.len();
        Ok(match op {
            CmpOp::Eq | CmpOp::Ne => {
                let mut acc = pair(op, 0)?;
                for i in 1..n {
                    let next = Box::new(pair(op, i)?);
                    acc = if op == CmpOp::Eq { Scalar::And(Box::new(acc), next) } else { Scalar::Or(Box::new(acc), next) };
                }
                acc
            }
            _ => {
                let strict = match op {
                    CmpOp::Lt | CmpOp::Le => CmpOp::Lt,
                    _ => CmpOp::Gt,
                };
                let mut acc = pair(op, n - 1)?;
                for i in (0..n - 1).rev() {
                    let (first, eq) = (pair(strict, i)?, pair(CmpOp::Eq, i)?);
                    let mut twice = false;
                    first.visit(&mut |x| twice |= matches!(x, Scalar::SubLink(_)));
                    if twice || calls_volatile(&first) {
                        return Err(PgError::feature(
                            "a row comparison with <, <=, > or >= over a volatile function or a subquery is not supported by heapstore yet",
                        ));
                    }
                    acc = Scalar::Or(Box::new(first), Box::new(Scalar::And(Box::new(eq), Box::new(acc))));
                }
                acc
            }
        })
    }

    /// `row IS [NOT] NULL`: every item NULL (every item not NULL), as in PostgreSQL.
    fn row_is_null(&self, items: &[&Expr], not: bool) -> Result<Scalar> {
        let mut acc: Option<Scalar> = None;
        for e in items {
            let t = Scalar::IsNull(Box::new(self.bind(e)?), not);
            acc = Some(match acc {
                None => t,
                Some(a) => Scalar::And(Box::new(a), Box::new(t)),
            });
        }
        // ROW() IS NULL is true, and so is ROW() IS NOT NULL (no item is non-null, or null).
        Ok(acc.unwrap_or(Scalar::Const(Value::Bool(true))))
    }

    /// Binds `e` against this binder's scope.
    pub fn bind(&self, e: &Expr) -> Result<Scalar> {
        Ok(match e {
            Expr::Tuple(items) => self.row_value(&items.iter().collect::<Vec<_>>())?,
            Expr::IsNull(x) | Expr::IsNotNull(x) if row_items(x).is_some() => {
                self.row_is_null(&row_items(x).expect("a row"), matches!(e, Expr::IsNotNull(_)))?
            }
            Expr::InList { expr, list, negated } if row_items(expr).is_some() => {
                let mut acc: Option<Scalar> = None;
                for item in list {
                    let eq = self.row_compare(CmpOp::Eq, expr, item)?;
                    acc = Some(match acc {
                        None => eq,
                        Some(a) => Scalar::Or(Box::new(a), Box::new(eq)),
                    });
                }
                let any = acc.ok_or_else(|| PgError::syntax("syntax error at or near \")\""))?;
                if *negated {
                    Scalar::Not(Box::new(any))
                } else {
                    any
                }
            }
            Expr::BinaryOp { left, op, right }
                if (row_items(left).is_some() || row_items(right).is_some())
                    && matches!(
                        op,
                        BinaryOperator::Eq
                            | BinaryOperator::NotEq
                            | BinaryOperator::Lt
                            | BinaryOperator::LtEq
                            | BinaryOperator::Gt
                            | BinaryOperator::GtEq
                    ) =>
            {
                let o = match op {
                    BinaryOperator::Eq => CmpOp::Eq,
                    BinaryOperator::NotEq => CmpOp::Ne,
                    BinaryOperator::Lt => CmpOp::Lt,
                    BinaryOperator::LtEq => CmpOp::Le,
                    BinaryOperator::Gt => CmpOp::Gt,
                    _ => CmpOp::Ge,
                };
                self.row_compare(o, left, right)?
            }
            // Keywords, not columns (PostgreSQL's grammar reads them so even where a column
            // has the name).
            e @ Expr::Identifier(id) if is_keyword_function(e) => {
                let name = fold_ident(id);
                self.session_function(&name, &[], true)?
                    .ok_or_else(|| PgError::feature(format!("{} is not supported here", name.to_uppercase())))?
            }
            Expr::Identifier(id) => self.column(None, &fold_ident(id)).map_err(|e| e.at(id.span.start))?,
            Expr::CompoundIdentifier(ids) if ids.len() == 2 => {
                self.column(Some(&fold_ident(&ids[0])), &fold_ident(&ids[1])).map_err(|e| e.at(ids[0].span.start))?
            }
            Expr::CompoundIdentifier(ids)
                if ids.len() == 3 && matches!(fold_ident(&ids[0]).as_str(), "public" | "pg_temp" | "pg_catalog" | "information_schema") =>
            {
                self.column(Some(&fold_ident(&ids[1])), &fold_ident(&ids[2]))?
            }
            Expr::Value(v) => literal(&v.value)?,
            Expr::Nested(inner) => self.bind(inner)?,
            Expr::UnaryOp { op: UnaryOperator::Not, expr } => Scalar::Not(Box::new(self.boolean(expr, "NOT")?)),
            Expr::UnaryOp { op: UnaryOperator::Minus, expr } => match self.bind(expr)? {
                Scalar::Const(Value::Int4(v)) => Scalar::Const(Value::Int4(-v)),
                Scalar::Const(Value::Int8(v)) => {
                    // -2147483648 is written as minus 2147483648, which alone needs int8.
                    let n = -v;
                    i32::try_from(n).map(Value::Int4).map(Scalar::Const).unwrap_or(Scalar::Const(Value::Int8(n)))
                }
                Scalar::Const(Value::Float8(v)) => Scalar::Const(Value::Float8(-v)),
                Scalar::Const(Value::Numeric(n)) => Scalar::Const(Value::Numeric(n.neg())),
                // A time negates as an interval (PostgreSQL's implicit cast).
                other if type_of(&other).is_some_and(|t| t.id == TypeId::Time) => {
                    Scalar::Neg(Box::new(Scalar::Cast(Box::new(other), SqlType::new(TypeId::Interval))))
                }
                other => Scalar::Neg(Box::new(other)),
            },
            // Prefix + is a number's (int2up ... numeric_uplus): of another type, 42883.
            Expr::UnaryOp { op: UnaryOperator::Plus, expr } => match self.bind(expr)? {
                // An untyped operand is read as double precision (float8up), as PostgreSQL
                // resolves `+ unknown`.
                x @ (Scalar::Unknown(_) | Scalar::Param(_, None)) => coerce(x, Some(SqlType::new(TypeId::Float8)))?,
                x if type_of(&x).is_some_and(|t| !is_num(t.id)) => {
                    let t = type_of(&x).map(|t| t.name()).unwrap_or_default();
                    return Err(PgError::new("42883", format!("operator does not exist: + {t}"))
                        .with_hint("No operator matches the given name and argument type. You might need to add an explicit type cast."));
                }
                x => x,
            },
            Expr::UnaryOp { op: UnaryOperator::PGBitwiseNot, expr } => super::func::bind_bitwise(5, "~", vec![self.bind(expr)?])?,
            // `@ x`: PostgreSQL's prefix absolute value (int2abs, int4abs, ..., numeric_abs).
            Expr::UnaryOp { op: UnaryOperator::PGAbs, expr } => {
                let x = self.bind(expr)?;
                if !type_of(&x).is_some_and(|t| is_num(t.id)) {
                    return Err(PgError::new(
                        "42883",
                        format!("operator does not exist: @ {}", type_of(&x).map_or("unknown".into(), |t| t.name())),
                    )
                    .with_hint("No operator matches the given name and argument type. You might need to add an explicit type cast."));
                }
                super::func::bind_call("abs", vec![x])?
            }
            // SAFE_CAST marks a parameter the client declared a type for (`sql::declare_param_types`):
            // bound as a cast, which makes `$n` a parameter of that type.
            Expr::Cast { kind: CastKind::Cast | CastKind::DoubleColon | CastKind::SafeCast, expr, data_type, format: None } => {
                let ty = crate::sql::ddl::sql_type(data_type)?;
                // `ARRAY[...]::t[]`: the elements are typed by the cast (`ARRAY[]::int[]`).
                let mut inner = &**expr;
                while let Expr::Nested(x) = inner {
                    inner = x;
                }
                if let (Expr::Array(arr), true) = (inner, ty.is_array()) {
                    let ctor = self.array_ctor(arr, Some(ty))?;
                    return Ok(match type_of(&ctor) {
                        Some(t) if t == ty => ctor,
                        _ => Scalar::Cast(Box::new(ctor), ty),
                    });
                }
                // Bound once: binding it again for each question would take time exponential in
                // the depth of a chain of casts.
                let bound = self.bind(expr)?;
                if let Some(from) = type_of(&bound) {
                    // "char" to and from integers works on the byte value in PostgreSQL.
                    if (from.id == TypeId::Char && is_int(ty.id)) || (is_int(from.id) && ty.id == TypeId::Char) {
                        return Err(PgError::feature("casts between \"char\" and integers (byte values) are not supported by heapstore"));
                    }
                }
                if ty.id == TypeId::Regclass {
                    return self.regclass_cast(bound);
                }
                match bound {
                    // A literal or parameter of unknown type is read with the target type's input
                    // function, as PostgreSQL does (`'2024-02-29'::date`, `$1::integer`).
                    // An input error points at the literal, as in PostgreSQL.
                    Scalar::Unknown(t) => {
                        use sqlparser::ast::Spanned;
                        typed_const(parse_as(&ty, &explicit_length(&t, &ty)).map_err(|e| e.at(expr.span().start))?, ty)
                    }
                    Scalar::Param(n, None) => Scalar::Param(n, Some(ty)),
                    Scalar::Const(Value::Null) => Scalar::Cast(Box::new(Scalar::Const(Value::Null)), ty),
                    Scalar::Const(v @ Value::Numeric(_)) => Scalar::Const(cast_value(v, &ty)?),
                    other => {
                        let from = type_of(&other);
                        if let Some(f) = from {
                            check_castable(&f, &ty)?;
                        }
                        Scalar::Cast(Box::new(other), ty)
                    }
                }
            }
            Expr::TypedString(ts) => match &ts.value.value {
                // `DATE '2024-02-29'`
                AstValue::SingleQuotedString(t) => {
                    Scalar::Const(parse_as(&crate::sql::ddl::sql_type(&ts.data_type)?, t).map_err(|e| e.at(ts.value.span.start))?)
                }
                other => return Err(PgError::feature(format!("typed literal not supported: {other}"))),
            },
            // `INTERVAL '1 day'`; field qualifiers (`INTERVAL '1' DAY`) are not built.
            Expr::Interval(iv) => {
                match (&*iv.value, &iv.leading_field, iv.leading_precision, &iv.last_field, iv.fractional_seconds_precision) {
                    (Expr::Value(v), None, None, None, None) if matches!(v.value, AstValue::SingleQuotedString(_)) => {
                        let AstValue::SingleQuotedString(t) = &v.value else { unreachable!("matched above") };
                        Scalar::Const(parse_as(&SqlType::new(TypeId::Interval), t).map_err(|e| e.at(v.span.start))?)
                    }
                    (Expr::Value(_), ..) => {
                        return Err(PgError::feature(format!(
                            "interval literals with fields or precision ({iv}) are not supported by heapstore yet"
                        )))
                    }
                    _ => return Err(PgError::feature(format!("{iv} is not supported by heapstore yet"))),
                }
            }
            // `ts AT TIME ZONE zone` is PostgreSQL's `timezone(zone, ts)`.
            Expr::AtTimeZone { timestamp, time_zone } => {
                let (zone, ts) = (self.bind(time_zone)?, self.bind(timestamp)?);
                super::func::bind_call("timezone", vec![zone, ts]).map_err(|mut e| {
                    if e.code == "42883" {
                        e.message = e.message.replacen("function timezone(", "function pg_catalog.timezone(", 1);
                    }
                    e
                })?
            }
            Expr::IsNull(x) => Scalar::IsNull(Box::new(self.bind(x)?), false),
            Expr::IsNotNull(x) => Scalar::IsNull(Box::new(self.bind(x)?), true),
            Expr::Between { expr, negated, low, high } => {
                let x = self.bind(expr)?;
                let (x1, lo) = bind_pair(x.clone(), self.bind(low)?)?;
                let (x2, hi) = bind_pair(x, self.bind(high)?)?;
                let both = Scalar::And(
                    Box::new(Scalar::Cmp(CmpOp::Ge, Box::new(x1), Box::new(lo))),
                    Box::new(Scalar::Cmp(CmpOp::Le, Box::new(x2), Box::new(hi))),
                );
                if *negated {
                    Scalar::Not(Box::new(both))
                } else {
                    both
                }
            }
            Expr::InList { expr, list, negated } => {
                let x = self.bind(expr)?;
                let tx = base_type(type_of(&x));
                let bound = list.iter().map(|l| self.bind(l)).collect::<Result<Vec<_>>>()?;
                // PostgreSQL's transformAExprIn: when more than one item reads no column of
                // this query, those items take the common type of the operand and them
                // (`0.1::real IN (0.1::numeric, 2)` compares reals) and become one array;
                // the others, or all when no common type exists, compare one by one.
                let reads_row = |e: &Scalar| {
                    let mut found = false;
                    e.visit(&mut |s| found |= matches!(s, Scalar::Col(..) | Scalar::Agg(..) | Scalar::Win(..) | Scalar::SubLink(..)));
                    found
                };
                let plain: Vec<bool> = bound.iter().map(|b| !reads_row(b)).collect();
                let common = if plain.iter().filter(|p| **p).count() > 1 {
                    let mut tys = vec![type_of(&x)];
                    tys.extend(bound.iter().zip(&plain).filter(|(_, p)| **p).map(|(b, _)| type_of(b)));
                    super::func::common_type(&tys, "IN").ok().flatten().filter(|t| !matches!(t.id, TypeId::Record(_)))
                } else {
                    None
                };
                let mut items = Vec::with_capacity(list.len());
                for (b, p) in bound.into_iter().zip(plain) {
                    let b = match common {
                        Some(ct) if p => super::func::to_type(b, Some(ct))?,
                        _ => coerce(b, tx)?,
                    };
                    // Each item must compare with the operand (`=`, `<>` for NOT IN), checked
                    // when bound as in PostgreSQL, not when a row meets it.
                    compare_scalars(if *negated { CmpOp::Ne } else { CmpOp::Eq }, x.clone(), b.clone())
                        .map_err(|e| at_operator(e, expr))?;
                    items.push(b);
                }
                // char(n) compares without its padding.
                if is_bpchar(&x) || items.iter().any(is_bpchar) {
                    Scalar::InList(Box::new(unpad(x)), items.into_iter().map(unpad).collect(), *negated)
                } else {
                    Scalar::InList(Box::new(x), items, *negated)
                }
            }
            Expr::BinaryOp { left, op, right } => return self.bind_binary(left, op, right),
            Expr::Array(arr) => self.array_ctor(arr, None)?,
            Expr::CompoundFieldAccess { root, access_chain } => {
                use sqlparser::ast::{AccessExpr, Subscript};
                let mut chain = access_chain.as_slice();
                // `t.col[...]`: a qualified column name, then the rest.
                let mut cur = match (&**root, chain.first()) {
                    (Expr::Identifier(t), Some(AccessExpr::Dot(Expr::Identifier(c)))) => {
                        chain = &chain[1..];
                        self.column(Some(&fold_ident(t)), &fold_ident(c))?
                    }
                    _ => self.bind(root)?,
                };
                while let Some(first) = chain.first() {
                    match first {
                        AccessExpr::Dot(Expr::Identifier(id)) => {
                            cur = record_field(cur, &fold_ident(id))?;
                            chain = &chain[1..];
                        }
                        AccessExpr::Subscript(_) => {
                            let mut subs = Vec::new();
                            while let Some(AccessExpr::Subscript(sub)) = chain.first() {
                                subs.push(match sub {
                                    Subscript::Index { index } => super::array::Sub::Index(self.bind(index)?),
                                    Subscript::Slice { lower_bound, upper_bound, stride: None } => super::array::Sub::Slice(
                                        lower_bound.as_ref().map(|x| self.bind(x)).transpose()?,
                                        upper_bound.as_ref().map(|x| self.bind(x)).transpose()?,
                                    ),
                                    other => return Err(PgError::feature(format!("subscript {other} is not supported by heapstore"))),
                                });
                                chain = &chain[1..];
                            }
                            cur = super::array::bind_subscript(cur, subs)?;
                        }
                        other => return Err(PgError::feature(format!("field selection {other} is not supported by heapstore"))),
                    }
                }
                cur
            }
            other => return self.bind_more(other),
        })
    }

    /// A binary operator's expression (see [`Binder::bind`]): the operands bound (their
    /// errors as they are), then the operator resolved, whose `operator does not exist`
    /// points at the operator.
    fn bind_binary(&self, left: &Expr, op: &BinaryOperator, right: &Expr) -> Result<Scalar> {
        if *op == BinaryOperator::Overlaps {
            return self.overlaps(left, right);
        }
        let (a, b) = (self.bind(left)?, self.bind(right)?);
        self.binary_op(left, op, right, a, b).map_err(|e| at_operator(e, left))
    }

    /// `(s1, e1) OVERLAPS (s2, e2)`: each end may be an interval (added to its start); the
    /// four values are brought to one of PostgreSQL's overlaps types (timestamp, timestamptz,
    /// time, timetz; dates as timestamps), as its function resolution does.
    fn overlaps(&self, left: &Expr, right: &Expr) -> Result<Scalar> {
        let side = |e: &Expr, which: &str| -> Result<(Scalar, Scalar)> {
            let items = row_items(e)
                .filter(|i| i.len() == 2)
                .ok_or_else(|| PgError::syntax(format!("wrong number of parameters on {which} side of OVERLAPS expression")))?;
            let start = self.bind(items[0])?;
            let end = self.bind(items[1])?;
            // PostgreSQL's (start, interval) forms: timestamp, timestamptz and time (a date
            // is a timestamp); none for timetz.
            let interval_form =
                type_of(&start).is_some_and(|t| matches!(t.id, TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz | TypeId::Time));
            let end = if type_of(&end).is_some_and(|t| t.id == TypeId::Interval) && interval_form {
                self.binary_op(items[0], &BinaryOperator::Plus, items[1], start.clone(), end)?
            } else {
                end
            };
            Ok((start, end))
        };
        let (s1, e1) = side(left, "left")?;
        let (s2, e2) = side(right, "right")?;
        let args = [s1, e1, s2, e2];
        let types: Vec<Option<SqlType>> = args.iter().map(type_of).collect();
        let shown = || types.iter().map(|t| t.map_or("unknown".to_string(), |t| t.name())).collect::<Vec<_>>().join(", ");
        if types.iter().any(Option::is_none) {
            return Err(PgError::new("42725", format!("function pg_catalog.overlaps({}) is not unique", shown()))
                .with_hint("Could not choose a best candidate function. You might need to add explicit type casts."));
        }
        let common = super::func::common_type(&types, "OVERLAPS").ok().flatten();
        let ty = match common.map(|t| t.id) {
            Some(TypeId::Date | TypeId::Timestamp) => SqlType::new(TypeId::Timestamp),
            Some(id @ (TypeId::Timestamptz | TypeId::Time | TypeId::TimeTz)) => SqlType::new(id),
            _ => {
                return Err(PgError::new("42883", format!("function pg_catalog.overlaps({}) does not exist", shown()))
                    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."))
            }
        };
        let args = args.into_iter().map(|a| super::func::to_type(a, Some(ty))).collect::<Result<Vec<_>>>()?;
        Ok(Scalar::Func(super::func::Func::Overlaps, args, SqlType::new(TypeId::Bool)))
    }

    fn binary_op(&self, left: &Expr, op: &BinaryOperator, right: &Expr, a: Scalar, b: Scalar) -> Result<Scalar> {
        let cmp = |o: CmpOp| -> Result<Scalar> {
            let (a, b) = bind_pair(a.clone(), b.clone())?;
            check_comparable(&a, &b, o.symbol())?;
            // char(n) compares without its padding (as text, PostgreSQL's bpchar rules).
            let (a, b) = unpad_pair(a, b);
            Ok(Scalar::Cmp(o, Box::new(a), Box::new(b)))
        };
        let arith = |o: ArithOp, sym: &str| -> Result<Scalar> {
            if let Some(r) = time_arith(o, &a, &b, sym)? {
                return Ok(r);
            }
            if let Some(r) = interval_arith(o, &a, &b, sym)? {
                return Ok(r);
            }
            let (a, b) = bind_pair(a.clone(), b.clone())?;
            let (ta, tb) = (type_of(&a), type_of(&b));
            if let Some(d) = date_arith(o, &a, &b, ta, tb, sym)? {
                return Ok(d);
            }
            let ok = |t: Option<SqlType>| t.is_none_or(|t| is_num(t.id));
            if !ok(ta) || !ok(tb) {
                return Err(no_operator(sym, ta, tb));
            }
            // There is no % for floats in PostgreSQL.
            let float = |t: Option<SqlType>| t.is_some_and(|t| matches!(t.id, TypeId::Float4 | TypeId::Float8));
            if o == ArithOp::Mod && (float(ta) || float(tb)) {
                return Err(no_operator(sym, ta, tb));
            }
            Ok(Scalar::Arith(o, Box::new(a), Box::new(b)))
        };
        let boolean = |a: Scalar, b: Scalar, what: &str| -> Result<(Box<Scalar>, Box<Scalar>)> {
            let bt = Some(SqlType::new(TypeId::Bool));
            let check = |x: Scalar| -> Result<Box<Scalar>> {
                let x = coerce(x, bt)?;
                match type_of(&x) {
                    Some(t) if t.id != TypeId::Bool => Err(PgError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        format!("argument of {what} must be type boolean, not type {}", t.name()),
                    )),
                    _ => Ok(Box::new(x)),
                }
            };
            Ok((check(a)?, check(b)?))
        };
        let regex_op = match op {
            BinaryOperator::PGRegexMatch => Some((false, false)),
            BinaryOperator::PGRegexIMatch => Some((false, true)),
            BinaryOperator::PGRegexNotMatch => Some((true, false)),
            BinaryOperator::PGRegexNotIMatch => Some((true, true)),
            BinaryOperator::PGCustomBinaryOperator(parts) => {
                let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
                match parts.as_slice() {
                    ["pg_catalog", "~"] | ["~"] => Some((false, false)),
                    ["pg_catalog", "~*"] | ["~*"] => Some((false, true)),
                    ["pg_catalog", "!~"] | ["!~"] => Some((true, false)),
                    ["pg_catalog", "!~*"] | ["!~*"] => Some((true, true)),
                    ["pg_catalog", "="] => {
                        return self.bind(&Expr::BinaryOp {
                            left: Box::new(left.clone()),
                            op: BinaryOperator::Eq,
                            right: Box::new(right.clone()),
                        })
                    }
                    _ => return Err(PgError::feature(format!("operator {op} is not supported by heapstore"))),
                }
            }
            _ => None,
        };
        if let Some((negated, ci)) = regex_op {
            return regex_match(a, b, negated, ci);
        }
        if let Some(r) = super::jsonfn::bind_operator(op, a.clone(), b.clone()) {
            return r;
        }
        if matches!(op, BinaryOperator::StringConcat | BinaryOperator::AtArrow | BinaryOperator::ArrowAt | BinaryOperator::PGOverlap) {
            if let Some(r) = super::array::bind_operator(op, a.clone(), b.clone()) {
                return r;
            }
        }
        Ok(match op {
            BinaryOperator::Eq => cmp(CmpOp::Eq)?,
            BinaryOperator::NotEq => cmp(CmpOp::Ne)?,
            BinaryOperator::Lt => cmp(CmpOp::Lt)?,
            BinaryOperator::LtEq => cmp(CmpOp::Le)?,
            BinaryOperator::Gt => cmp(CmpOp::Gt)?,
            BinaryOperator::GtEq => cmp(CmpOp::Ge)?,
            BinaryOperator::Plus => arith(ArithOp::Add, "+")?,
            BinaryOperator::Minus => arith(ArithOp::Sub, "-")?,
            BinaryOperator::Multiply => arith(ArithOp::Mul, "*")?,
            BinaryOperator::Divide => arith(ArithOp::Div, "/")?,
            BinaryOperator::Modulo => arith(ArithOp::Mod, "%")?,
            BinaryOperator::StringConcat => {
                let (ta, tb) = (type_of(&a), type_of(&b));
                let bytea = |t: Option<SqlType>| t.is_some_and(|t| t.id == TypeId::Bytea);
                // bytea || bytea (an untyped literal beside a bytea is read as bytea).
                if (bytea(ta) || bytea(tb)) && (bytea(ta) || ta.is_none()) && (bytea(tb) || tb.is_none()) {
                    let by = Some(SqlType::new(TypeId::Bytea));
                    return super::func::bind_call("byteacat", vec![coerce(a, by)?, coerce(b, by)?]);
                }
                // Otherwise text || anything: each side as its cast to text gives it (a
                // bytea in its hex form, as PostgreSQL's anynonarray || text).
                let textish = |t: Option<SqlType>| t.is_none_or(|t| is_text(t.id));
                if !textish(ta) && !textish(tb) {
                    return Err(no_operator("||", ta, tb));
                }
                Scalar::Concat(Box::new(unpad(a)), Box::new(unpad(b)))
            }
            BinaryOperator::PGLikeMatch
            | BinaryOperator::PGNotLikeMatch
            | BinaryOperator::PGILikeMatch
            | BinaryOperator::PGNotILikeMatch => {
                let negated = matches!(op, BinaryOperator::PGNotLikeMatch | BinaryOperator::PGNotILikeMatch);
                let ci = matches!(op, BinaryOperator::PGILikeMatch | BinaryOperator::PGNotILikeMatch);
                let c = if ci { super::func::ilike_in_c(left, right)? } else { false };
                if ci && !c {
                    self.collation_unknown("ILIKE", &[left, right])?;
                }
                super::func::like_scalar_c(a, b, negated, ci, Some('\\'), c)?
            }
            BinaryOperator::PGExp => super::func::bind_call("power", vec![a, b])?,
            BinaryOperator::BitwiseAnd => super::func::bind_bitwise(0, "&", vec![a, b])?,
            BinaryOperator::BitwiseOr => super::func::bind_bitwise(1, "|", vec![a, b])?,
            BinaryOperator::PGBitwiseXor => super::func::bind_bitwise(2, "#", vec![a, b])?,
            BinaryOperator::PGBitwiseShiftLeft => super::func::bind_bitwise(3, "<<", vec![a, b])?,
            BinaryOperator::PGBitwiseShiftRight => super::func::bind_bitwise(4, ">>", vec![a, b])?,
            BinaryOperator::And => {
                let (a, b) = boolean(a, b, "AND")?;
                Scalar::And(a, b)
            }
            BinaryOperator::Or => {
                let (a, b) = boolean(a, b, "OR")?;
                Scalar::Or(a, b)
            }
            other => return Err(PgError::feature(format!("operator {other} is not supported"))),
        })
    }

    /// `ARRAY[...]` (nested `[...]` make a multidimensional array); `hint`: the array type a
    /// cast gives it.
    fn array_ctor(&self, arr: &sqlparser::ast::Array, hint: Option<SqlType>) -> Result<Scalar> {
        let mut elems = Vec::with_capacity(arr.elem.len());
        for e in &arr.elem {
            elems.push(match e {
                Expr::Array(inner) => self.array_ctor(inner, hint)?,
                other => {
                    let b = self.bind(other)?;
                    match hint.and_then(|h| h.elem()) {
                        Some(et) if type_of(&b).is_none() => coerce(b, Some(et))?,
                        _ => b,
                    }
                }
            });
        }
        super::array::bind_ctor(elems, hint)
    }
}

/// `(record).field`.
fn record_field(r: Scalar, field: &str) -> Result<Scalar> {
    match type_of(&r) {
        Some(SqlType { id: TypeId::Record(kind), .. }) => match kind.fields().iter().position(|(n, _)| *n == field) {
            Some(i) => Ok(Scalar::Func(super::func::Func::RecordField(i as u16), vec![r], kind.fields()[i].1)),
            None => Err(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("could not identify column \"{field}\" in record data type"))),
        },
        Some(t) => {
            Err(PgError::new("42809", format!("column notation .{field} applied to type {}, which is not a composite type", t.name())))
        }
        None => Err(PgError::new("42809", format!("could not identify column \"{field}\" in record data type"))),
    }
}

/// `~` and friends (POSIX regular expressions): the pattern must be a constant; it is
/// translated to the `regex` crate's syntax once, accepting only what both read the same way
/// (PostgreSQL's ARE under the C collation): literals and escaped punctuation, `.` (which
/// matches a newline in both, made so), `^ $ | ( ) (?: )`, the quantifiers `* + ? {m,n}` (up to
/// 255) and their non-greedy forms, bracket expressions with ranges and `[:class:]`, `\d \w \s`
/// and their negations outside brackets (ASCII, as in C), `\n \t \r \f \v`. Anything else
/// (back-references, look-around, `\b`, `\x`, `\m`, `[[.x.]]`, embedded options, ...) is refused
/// with 0A000 rather than read differently. `~*` folds ASCII letters only, as PostgreSQL under C:
/// a non-ASCII pattern is refused, and non-ASCII text is refused when matched.
pub(super) fn regex_match(a: Scalar, b: Scalar, negated: bool, ci: bool) -> Result<Scalar> {
    let a = coerce(a, Some(SqlType::new(TypeId::Text)))?;
    if let Some(t) = type_of(&a) {
        if !is_text(t.id) {
            return Err(no_operator(if negated { "!~" } else { "~" }, Some(t), type_of(&b)));
        }
    }
    let pattern = match &b {
        Scalar::Unknown(p) | Scalar::Const(Value::Text(p)) => p.clone(),
        Scalar::Const(Value::Null) => return Ok(Scalar::Const(Value::Null)),
        _ => return Err(PgError::feature("a regular expression that is not a constant is not supported by heapstore yet")),
    };
    let translated = translate_regex(&pattern, ci)?;
    let re = regex::Regex::new(&translated)
        .map_err(|e| PgError::feature(format!("regular expression \"{pattern}\" is not supported by heapstore: {e}")))?;
    Ok(Scalar::Regex(Box::new(a), Arc::new(re), negated))
}

/// The `regex` crate's form of a PostgreSQL regular expression (see [`regex_match`]).
fn translate_regex(pattern: &str, ci: bool) -> Result<String> {
    translate_regex_lazy(pattern, ci).map(|(t, _)| t)
}

/// What a pattern holds that decides which matches PostgreSQL's engine and the `regex`
/// crate agree on (`sql::regexp`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RegexShape {
    /// A non-greedy quantifier.
    pub lazy: bool,
    /// A greedy quantifier.
    pub greedy: bool,
    /// `|` outside brackets.
    pub alternation: bool,
    /// A quantifier on a parenthesized group.
    pub quantified_group: bool,
}

/// [`translate_regex`], and the pattern's [`RegexShape`].
pub(super) fn translate_regex_lazy(pattern: &str, ci: bool) -> Result<(String, RegexShape)> {
    let refuse = |what: &str| PgError::feature(format!("regular expression \"{pattern}\": {what} is not supported by heapstore"));
    if ci && !pattern.is_ascii() {
        return Err(refuse("a case-insensitive match of non-ASCII characters"));
    }
    let mut out = String::from(if ci { "(?si)" } else { "(?s)" });
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut in_class = false;
    // The last thing emitted outside brackets was a quantifier (and whether a non-greedy one).
    let mut after_quant = false;
    let mut after_lazy = false;
    let mut shape = RegexShape::default();
    let mut pending_greedy = false;
    // The last atom emitted outside brackets closed a group.
    let mut after_group = false;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        i += 1;
        if in_class {
            match c {
                ']' => {
                    in_class = false;
                    out.push(']');
                }
                '[' if next == Some(':') => {
                    let rest: String = chars[i + 1..].iter().collect();
                    let Some(end) = rest.find(":]") else { return Err(refuse("this bracket expression")) };
                    let name = &rest[..end];
                    const CLASSES: &[&str] =
                        &["alpha", "digit", "alnum", "upper", "lower", "space", "punct", "xdigit", "cntrl", "print", "graph", "blank"];
                    if !CLASSES.contains(&name) {
                        return Err(refuse(&format!("the class [:{name}:]")));
                    }
                    out.push_str(&format!("[:{name}:]"));
                    i += 1 + end + 2;
                }
                '[' if matches!(next, Some('.' | '=')) => return Err(refuse("a collating element or equivalence class")),
                '[' => out.push_str("\\["),
                '\\' => match next {
                    Some(n) if n.is_ascii_punctuation() => {
                        out.push('\\');
                        out.push(n);
                        i += 1;
                    }
                    _ => return Err(refuse("an escape inside brackets")),
                },
                '&' | '~' if next == Some(c) => return Err(refuse("this bracket expression")),
                '-' if next == Some('-') => return Err(refuse("this bracket expression")),
                _ => out.push(c),
            }
            continue;
        }
        let quant = matches!(c, '*' | '+' | '?' | '{');
        if quant && after_quant && (c != '?' || after_lazy) {
            return Err(refuse("a quantifier after a quantifier"));
        }
        let lazy = c == '?' && after_quant;
        shape.alternation |= c == '|';
        shape.quantified_group |= quant && after_group;
        match c {
            '\\' => {
                let Some(n) = next else { return Err(PgError::new("2201B", "invalid regular expression: invalid escape \\ sequence")) };
                i += 1;
                match n {
                    // ASCII classes, as PostgreSQL's under the C collation (a character past
                    // ASCII is neither a digit, a word character nor a space there).
                    'd' => out.push_str("[0-9]"),
                    'D' => out.push_str("[^0-9]"),
                    'w' => out.push_str("[0-9A-Za-z_]"),
                    'W' => out.push_str("[^0-9A-Za-z_]"),
                    's' => out.push_str("[\\t\\n\\x0B\\x0C\\r ]"),
                    'S' => out.push_str("[^\\t\\n\\x0B\\x0C\\r ]"),
                    'n' | 't' | 'r' | 'f' | 'v' => {
                        out.push('\\');
                        out.push(n);
                    }
                    n if n.is_ascii_punctuation() && n != '<' && n != '>' => {
                        out.push('\\');
                        out.push(n);
                    }
                    n => return Err(refuse(&format!("the escape \\{n}"))),
                }
            }
            '[' => {
                in_class = true;
                out.push('[');
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
            }
            '(' if next == Some('?') => {
                if chars.get(i + 1) == Some(&':') {
                    out.push_str("(?:");
                    i += 2;
                } else {
                    return Err(refuse("embedded options or look-around"));
                }
            }
            '{' => {
                let rest: String = chars[i..].iter().collect();
                let Some(end) = rest.find('}') else { return Err(refuse("a '{' that is not a bound")) };
                let bound = &rest[..end];
                let ok = !bound.is_empty()
                    && bound.split(',').count() <= 2
                    && bound.split(',').enumerate().all(|(k, p)| (k == 1 && p.is_empty()) || p.parse::<u32>().is_ok_and(|v| v <= 255));
                if !ok {
                    return Err(refuse(&format!("the bound {{{bound}}}")));
                }
                out.push('{');
                out.push_str(bound);
                out.push('}');
                i += end + 1;
            }
            _ => out.push(c),
        }
        after_quant = quant || lazy;
        after_lazy = lazy;
        shape.lazy |= lazy;
        // A quantifier is greedy until a `?` after it says otherwise.
        if quant && !lazy {
            pending_greedy = true;
        } else if lazy {
            pending_greedy = false;
        } else if pending_greedy {
            shape.greedy = true;
            pending_greedy = false;
        }
        after_group = c == ')' || (after_group && (quant || lazy));
    }
    if in_class {
        return Err(PgError::new("2201B", "invalid regular expression: brackets [] not balanced"));
    }
    shape.greedy |= pending_greedy;
    Ok((out, shape))
}

fn is_bpchar(e: &Scalar) -> bool {
    type_of(e).is_some_and(|t| t.id == TypeId::Bpchar)
}

/// The two sides of a comparison with char(n) on one side, as PostgreSQL compares them: a
/// char(n) without its padding; a varchar beside it is read as char too (varchar converts to
/// bpchar implicitly, so `bpchar = bpchar` is chosen), losing its trailing spaces; text stays
/// text (`bpchar` converts to text, the preferred type).
pub fn unpad_pair(a: Scalar, b: Scalar) -> (Scalar, Scalar) {
    if !is_bpchar(&a) && !is_bpchar(&b) {
        return (a, b);
    }
    let as_char = |x: Scalar| {
        if type_of(&x).is_some_and(|t| t.id == TypeId::Varchar) {
            Scalar::Cast(Box::new(Scalar::Cast(Box::new(x), SqlType::new(TypeId::Bpchar))), SqlType::new(TypeId::Text))
        } else {
            unpad(x)
        }
    };
    (as_char(a), as_char(b))
}

/// A char(n) operand as text (its padding dropped, PostgreSQL's bpchar-to-text cast); other
/// operands unchanged.
pub fn unpad(e: Scalar) -> Scalar {
    if is_bpchar(&e) {
        Scalar::Cast(Box::new(e), SqlType::new(TypeId::Text))
    } else {
        e
    }
}

/// An explicit cast to varchar(n) / char(n) truncates (an assignment would fail with 22001).
fn explicit_length(t: &str, ty: &SqlType) -> String {
    if matches!(ty.id, TypeId::Varchar | TypeId::Bpchar) && ty.typmod >= 0 {
        let n = ty.typmod as usize;
        if t.chars().count() > n {
            return t.chars().take(n).collect();
        }
    }
    t.to_string()
}

/// Interval arithmetic, bound before the operands are paired (an untyped operand takes its
/// type from the operator, as PostgreSQL's operator resolution gives it): interval ± interval,
/// interval * / number, number * interval, timestamp / timestamptz / date ± interval
/// (timestamp + unknown reads the unknown as an interval; date + unknown is ambiguous, as in
/// PostgreSQL). None: no interval is involved.
fn interval_arith(o: ArithOp, a: &Scalar, b: &Scalar, sym: &str) -> Result<Option<Scalar>> {
    use super::func::Func;
    let (ta, tb) = (type_of(a), type_of(b));
    let id = |t: Option<SqlType>| t.map(|t| t.id);
    let (ia, ib) = (id(ta), id(tb));
    let iv = SqlType::new(TypeId::Interval);
    let tsish = |t: Option<TypeId>| matches!(t, Some(TypeId::Timestamp | TypeId::Timestamptz));
    let is_iv = |t: Option<TypeId>| t == Some(TypeId::Interval);
    if !is_iv(ia) && !is_iv(ib) {
        if o == ArithOp::Add {
            if tsish(ia) && ib.is_none() {
                return interval_arith(o, a, &coerce(b.clone(), Some(iv))?, sym);
            }
            if ia.is_none() && tsish(ib) {
                return interval_arith(o, &coerce(a.clone(), Some(iv))?, b, sym);
            }
            if (ia == Some(TypeId::Date) && ib.is_none()) || (ia.is_none() && ib == Some(TypeId::Date)) {
                return Err(PgError::new(
                    "42725",
                    format!(
                        "operator is not unique: {} + {}",
                        ta.map_or("unknown".into(), |t| t.name()),
                        tb.map_or("unknown".into(), |t| t.name())
                    ),
                )
                .with_hint("Could not choose a best candidate operator. You might need to add explicit type casts."));
            }
        }
        return Ok(None);
    }
    // An untyped operand beside an interval: an interval for + and -, a number for * and /.
    let other = if matches!(o, ArithOp::Add | ArithOp::Sub) { iv } else { SqlType::new(TypeId::Float8) };
    let a = if ta.is_none() { coerce(a.clone(), Some(other))? } else { a.clone() };
    let b = if tb.is_none() { coerce(b.clone(), Some(other))? } else { b.clone() };
    let (ta, tb) = (type_of(&a), type_of(&b));
    let (ia, ib) = (id(ta), id(tb));
    let num = |t: Option<TypeId>| t.is_some_and(is_num);
    let f8 = |x: Scalar| {
        if type_of(&x).is_some_and(|t| t.id == TypeId::Float8) {
            x
        } else {
            Scalar::Cast(Box::new(x), SqlType::new(TypeId::Float8))
        }
    };
    let ts_result = |t: Option<TypeId>| SqlType::new(if t == Some(TypeId::Timestamptz) { TypeId::Timestamptz } else { TypeId::Timestamp });
    Ok(Some(match (o, ia, ib) {
        (ArithOp::Add, Some(TypeId::Interval), Some(TypeId::Interval)) => Scalar::Func(Func::IntervalArith(0), vec![a, b], iv),
        (ArithOp::Sub, Some(TypeId::Interval), Some(TypeId::Interval)) => Scalar::Func(Func::IntervalArith(1), vec![a, b], iv),
        (ArithOp::Mul, Some(TypeId::Interval), t) if num(t) => Scalar::Func(Func::IntervalArith(2), vec![a, f8(b)], iv),
        (ArithOp::Mul, t, Some(TypeId::Interval)) if num(t) => Scalar::Func(Func::IntervalArith(2), vec![b, f8(a)], iv),
        (ArithOp::Div, Some(TypeId::Interval), t) if num(t) => Scalar::Func(Func::IntervalArith(3), vec![a, f8(b)], iv),
        (ArithOp::Add, t, Some(TypeId::Interval)) if tsish(t) || t == Some(TypeId::Date) => {
            Scalar::Func(Func::TsInterval(false), vec![a, b], ts_result(t))
        }
        (ArithOp::Add, Some(TypeId::Interval), t) if tsish(t) || t == Some(TypeId::Date) => {
            Scalar::Func(Func::TsInterval(false), vec![b, a], ts_result(t))
        }
        (ArithOp::Sub, t, Some(TypeId::Interval)) if tsish(t) || t == Some(TypeId::Date) => {
            Scalar::Func(Func::TsInterval(true), vec![a, b], ts_result(t))
        }
        _ => return Err(no_operator(sym, ta, tb)),
    }))
}

/// Time arithmetic (PostgreSQL 15's operators): time or timetz ± interval (wrapping within
/// the day), time - time (an interval), date + time (a timestamp), date + timetz (a
/// timestamptz). Elsewhere a time is an interval (an implicit cast in PostgreSQL: `time * 2`,
/// `timestamp - time`). An untyped operand reads as PostgreSQL resolves it: an interval
/// after `time +` / `timetz -` or before `+ time`, a time after `time -`. None: no time is
/// involved.
fn time_arith(o: ArithOp, a: &Scalar, b: &Scalar, sym: &str) -> Result<Option<Scalar>> {
    use super::func::Func;
    use TypeId::{Date, Interval, Time, TimeTz};
    let (ta, tb) = (type_of(a), type_of(b));
    let (ia, ib) = (ta.map(|t| t.id), tb.map(|t| t.id));
    let timeish = |t: Option<TypeId>| matches!(t, Some(Time | TimeTz));
    if !timeish(ia) && !timeish(ib) {
        return Ok(None);
    }
    let iv = SqlType::new(Interval);
    let not_unique = || {
        let n = |t: Option<SqlType>| t.map_or("unknown".into(), |t| t.name());
        PgError::new("42725", format!("operator is not unique: {} {sym} {}", n(ta), n(tb)))
            .with_hint("Could not choose a best candidate operator. You might need to add explicit type casts.")
    };
    let (a, b) = match (o, ia, ib) {
        // Beside a timetz a time is an interval (timetz ± time).
        (ArithOp::Add | ArithOp::Sub, Some(TimeTz), Some(Time)) => (a.clone(), Scalar::Cast(Box::new(b.clone()), iv)),
        (ArithOp::Add, Some(Time), Some(TimeTz)) => (Scalar::Cast(Box::new(a.clone()), iv), b.clone()),
        (ArithOp::Add, Some(Time), None) | (ArithOp::Sub, Some(TimeTz), None) => (a.clone(), coerce(b.clone(), Some(iv))?),
        (ArithOp::Add, None, Some(Time)) => (coerce(a.clone(), Some(iv))?, b.clone()),
        (ArithOp::Sub, Some(Time), None) => (a.clone(), coerce(b.clone(), Some(SqlType::new(Time)))?),
        (ArithOp::Sub, None, Some(Time)) => (coerce(a.clone(), Some(SqlType::new(Time)))?, b.clone()),
        (ArithOp::Add, Some(TimeTz), None) | (ArithOp::Add, None, Some(TimeTz)) => return Err(not_unique()),
        _ => (a.clone(), b.clone()),
    };
    let (ta, tb) = (type_of(&a), type_of(&b));
    let (ia, ib) = (ta.map(|t| t.id), tb.map(|t| t.id));
    let own = |t: Option<SqlType>| t.map_or(SqlType::new(Time), |t| SqlType::new(t.id));
    Ok(Some(match (o, ia, ib) {
        (ArithOp::Add, Some(Time | TimeTz), Some(Interval)) => Scalar::Func(Func::TimeArith(0), vec![a, b], own(ta)),
        (ArithOp::Add, Some(Interval), Some(Time | TimeTz)) => Scalar::Func(Func::TimeArith(0), vec![b, a], own(tb)),
        (ArithOp::Sub, Some(Time | TimeTz), Some(Interval)) => Scalar::Func(Func::TimeArith(1), vec![a, b], own(ta)),
        (ArithOp::Sub, Some(Time), Some(Time)) => Scalar::Func(Func::TimeArith(2), vec![a, b], iv),
        (ArithOp::Add, Some(Date), Some(t @ (Time | TimeTz))) => Scalar::Func(Func::TimeArith(3), vec![a, b], date_time_result(t)),
        (ArithOp::Add, Some(t @ (Time | TimeTz)), Some(Date)) => Scalar::Func(Func::TimeArith(3), vec![b, a], date_time_result(t)),
        (ArithOp::Add, Some(Time), Some(Time)) => return Err(not_unique()),
        // A time elsewhere is an interval (time * 2, timestamp - time, time + timestamp).
        (_, x, y) if (x == Some(Time) || y == Some(Time)) && x != Some(TimeTz) && y != Some(TimeTz) => {
            let as_iv = |e: Scalar, t: Option<TypeId>| if t == Some(Time) { Scalar::Cast(Box::new(e), iv) } else { e };
            let (ca, cb) = (as_iv(a, ia), as_iv(b, ib));
            match interval_arith(o, &ca, &cb, sym) {
                Ok(Some(r)) => r,
                _ => return Err(no_operator(sym, ta, tb)),
            }
        }
        _ => return Err(no_operator(sym, ta, tb)),
    }))
}

fn date_time_result(t: TypeId) -> SqlType {
    SqlType::new(if t == TypeId::TimeTz { TypeId::Timestamptz } else { TypeId::Timestamp })
}

/// Date arithmetic: date ± integer is a date, date - date the days between (integer),
/// timestamp - timestamp an interval.
fn date_arith(o: ArithOp, a: &Scalar, b: &Scalar, ta: Option<SqlType>, tb: Option<SqlType>, sym: &str) -> Result<Option<Scalar>> {
    let dt = |t: Option<SqlType>| t.is_some_and(|t| is_datetime(t.id));
    if !dt(ta) && !dt(tb) {
        return Ok(None);
    }
    let id = |t: Option<SqlType>| t.map(|t| t.id);
    // date ± integer takes int4 (a smallint widens to it; a bigint does not narrow: 42883).
    let int = |t: Option<SqlType>| t.is_some_and(|t| matches!(t.id, TypeId::Int2 | TypeId::Int4));
    let f = super::func::Func::DateAdd;
    let date = SqlType::new(TypeId::Date);
    Ok(Some(match (o, id(ta), id(tb)) {
        (ArithOp::Add, Some(TypeId::Date), _) if int(tb) => Scalar::Func(f, vec![a.clone(), b.clone()], date),
        (ArithOp::Add, _, Some(TypeId::Date)) if int(ta) => Scalar::Func(f, vec![b.clone(), a.clone()], date),
        // Negated as a bigint: the smallest integer has a negation, and the date then says
        // it is out of range.
        (ArithOp::Sub, Some(TypeId::Date), _) if int(tb) => {
            Scalar::Func(f, vec![a.clone(), Scalar::Neg(Box::new(Scalar::Cast(Box::new(b.clone()), SqlType::new(TypeId::Int8))))], date)
        }
        (ArithOp::Sub, Some(TypeId::Date), Some(TypeId::Date)) => {
            Scalar::Func(super::func::Func::DateDiff, vec![a.clone(), b.clone()], SqlType::new(TypeId::Int4))
        }
        // timestamp - timestamp (a date as a timestamp at midnight): an interval.
        (
            ArithOp::Sub,
            Some(TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz),
            Some(TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz),
        ) => Scalar::Func(super::func::Func::TsDiff, vec![a.clone(), b.clone()], SqlType::new(TypeId::Interval)),
        _ => return Err(no_operator(sym, ta, tb)),
    }))
}

/// `CURRENT_TIMESTAMP`, `LOCALTIMESTAMP`, `now()` or `transaction_timestamp()`: the
/// transaction's start time (bound where the target type is known; see `dml::bind_untyped`).
pub fn is_transaction_timestamp(e: &Expr) -> bool {
    let Expr::Function(f) = e else { return false };
    let name = f.name.to_string().to_ascii_lowercase();
    let name = name.strip_prefix("pg_catalog.").unwrap_or(&name);
    let no_args = match &f.args {
        sqlparser::ast::FunctionArguments::None => matches!(name, "current_timestamp" | "localtimestamp"),
        sqlparser::ast::FunctionArguments::List(l) => l.args.is_empty() && matches!(name, "now" | "transaction_timestamp"),
        _ => false,
    };
    no_args && f.filter.is_none() && f.over.is_none() && f.within_group.is_empty()
}

/// PostgreSQL's casts between the types heapstore stores: among integers and floats, int4 and
/// boolean, date and timestamp, and between any type and the text types (through the types'
/// output and input functions). Others fail with 42846, as in PostgreSQL.
pub fn castable(from: &SqlType, to: &SqlType) -> bool {
    use TypeId::*;
    let (f, t) = (from.id, to.id);
    // "char" is not a string type: besides its casts with the text types and int4 (byte
    // values), no cast through its input or output functions.
    if (f == Char) != (t == Char) {
        let other = if f == Char { t } else { f };
        return is_text(other) || other == Int4;
    }
    if from.is_array() && to.is_array() {
        return match (from.elem(), to.elem()) {
            (Some(a), Some(b)) => castable(&a, &b),
            _ => false,
        };
    }
    if from.is_array() || to.is_array() {
        return is_text(f) || is_text(t);
    }
    f == t
        || (is_num(f) && is_num(t))
        || matches!((f, t), (Int4, Bool) | (Bool, Int4) | (Int2 | Int4 | Int8, Oid) | (Oid, Int4 | Int8))
        || (is_oid_like(f) && is_oid_like(t))
        || (is_int(f) && matches!(t, Regtype | Regclass))
        || (is_datetime(f) && is_datetime(t))
        || matches!(
            (f, t),
            (Timestamp | Timestamptz, Time) | (Timestamptz, TimeTz) | (Time, TimeTz) | (TimeTz, Time) | (Time, Interval) | (Interval, Time)
        )
        || matches!((f, t), (Json, Jsonb) | (Jsonb, Json))
        || (f == Jsonb && (is_num(t) || t == Bool))
        || is_text(f)
        || is_text(t)
}

pub fn check_castable(from: &SqlType, to: &SqlType) -> Result<()> {
    if castable(from, to) {
        Ok(())
    } else {
        // Named without their modifiers, as PostgreSQL's format_type_be.
        let (from, to) = (SqlType::new(from.id), SqlType::new(to.id));
        Err(PgError::new("42846", format!("cannot cast type {} to {}", from.name(), to.name())))
    }
}

const USECS_PER_DAY: i64 = 86_400_000_000;

/// Casts a non-NULL value to `to` (a pair [`castable`] allows).
pub fn cast_value(v: Value, to: &SqlType) -> Result<Value> {
    use TypeId::*;
    let Some(from) = value_type(&v) else { return Ok(Value::Null) };
    check_castable(&from, to)?;
    if let (Value::Array(a), true) = (&v, to.is_array()) {
        return cast_array(a, to);
    }
    Ok(match (&v, to.id) {
        (Value::Bool(b), Bool) => Value::Bool(*b),
        (Value::Oid(o), Oid) => Value::Oid(*o),
        // boolean's casts to text, varchar and char(n) spell the word (and an explicit cast
        // cuts it to the length); to name it goes through boolean's output, `t` or `f`.
        (Value::Bool(b), Name) => parse_as(to, if *b { "t" } else { "f" })?,
        (Value::Bool(b), t) if is_text(t) => parse_as(to, &explicit_length(if *b { "true" } else { "false" }, to))?,
        (Value::Jsonb(j), Json) => Value::Json(j.clone()),
        (Value::Jsonb(j), t) if is_num(t) || t == Bool => {
            // jsonb to a scalar type: only a jsonb value of that kind (PostgreSQL 11+).
            use crate::types::jsonb::{cannot_cast, parse_stored, Jsonb};
            match (parse_stored(j), t) {
                (Jsonb::Bool(b), Bool) => Value::Bool(b),
                (Jsonb::Number(n), t) if t != Bool => cast_value(Value::Numeric(n), to)?,
                (other, _) => return Err(cannot_cast(&other, &SqlType::new(t).name())),
            }
        }
        (_, t) if is_text(t) => {
            let text = v.to_text(&from).unwrap_or_default();
            parse_as(to, &explicit_length(&text, to))?
        }
        (Value::Text(s), _) => parse_as(to, s)?,
        (Value::Bool(b), Int4) => Value::Int4(i32::from(*b)),
        (Value::Numeric(n), Int2) => Value::Int2(n.to_i16()?),
        (Value::Numeric(n), Int4) => Value::Int4(n.to_i32()?),
        (Value::Numeric(n), Int8) => Value::Int8(n.to_i64()?),
        (Value::Numeric(n), Float8) => Value::Float8(n.to_f64()?),
        (Value::Numeric(n), Float4) => {
            // numeric_float4 reads the number's text as real: too large or too small (but not
            // zero) is out of range.
            let f = n.to_f64()?;
            let x = f as f32;
            if (n.is_finite() && x.is_infinite()) || (x == 0.0 && !n.is_zero() && n.is_finite()) {
                return Err(PgError::new(
                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    format!("\"{}\" is out of range for type real", n.to_text()),
                ));
            }
            Value::Float4(x)
        }
        (_, Numeric) => Value::Numeric(as_numeric(&v)?.apply_typmod(to.typmod)?),
        (_, Bool) => Value::Bool(as_i64(&v).unwrap_or(0) != 0),
        (Value::Date(d), Timestamp | Timestamptz) => {
            let u = match *d {
                i32::MIN => i64::MIN,
                i32::MAX => i64::MAX,
                // date2timestamp: a date past timestamp's range is an error.
                d => i64::from(d)
                    .checked_mul(USECS_PER_DAY)
                    .filter(|t| (-211_813_488_000_000_000..9_223_371_331_200_000_000).contains(t))
                    .ok_or_else(|| PgError::new("22008", "date out of range for timestamp"))?,
            };
            if to.id == Timestamp {
                Value::Timestamp(u)
            } else {
                // Midnight of that day in the session's time zone.
                Value::Timestamptz(crate::types::tz::utc_of(u)?)
            }
        }
        // The session's time zone turns a wall-clock time into an instant and back.
        (Value::Timestamp(u), Timestamptz) => Value::Timestamptz(crate::types::adjust_timestamp(crate::types::tz::utc_of(*u)?, to.typmod)?),
        (Value::Timestamptz(u), Timestamp) => Value::Timestamp(crate::types::adjust_timestamp(crate::types::tz::local_of(*u)?, to.typmod)?),
        // The time of day (NULL for an infinity, as PostgreSQL's timestamp_time).
        (Value::Timestamp(u), Time) => crate::types::time::of_timestamp(*u).map_or(Value::Null, |t| Value::Time(adjust_time(t, to))),
        (Value::Timestamptz(u), Time) => match crate::types::time::timetz_of_instant(*u)? {
            Some(t) => Value::Time(adjust_time(t.time, to)),
            None => Value::Null,
        },
        (Value::Timestamptz(u), TimeTz) => match crate::types::time::timetz_of_instant(*u)? {
            Some(t) => Value::TimeTz(crate::types::TimeTz { time: adjust_time(t.time, to), ..t }),
            None => Value::Null,
        },
        // time_timetz: the session zone's offset on the transaction's date.
        (Value::Time(t), TimeTz) => {
            let z = crate::types::time::timetz_of_time(*t)?;
            Value::TimeTz(crate::types::TimeTz { time: adjust_time(z.time, to), ..z })
        }
        (Value::TimeTz(t), Time) => Value::Time(adjust_time(t.time, to)),
        (Value::Time(t), Interval) => Value::Interval(crate::types::Interval { months: 0, days: 0, micros: *t }),
        (Value::Interval(iv), Time) => Value::Time(adjust_time(crate::types::time::of_interval(iv), to)),
        (Value::Regtype(o) | Value::Regnamespace(o) | Value::Regclass(o, _), Oid) => Value::Oid(*o),
        (Value::Oid(o) | Value::Regtype(o) | Value::Regclass(o, _), Regnamespace) => Value::Regnamespace(*o),
        (Value::Oid(o) | Value::Regclass(o, _), Regtype) => Value::Regtype(*o),
        (Value::Oid(o) | Value::Regtype(o), Regclass) => Value::Regclass(*o, if *o == 0 { "-".to_string() } else { o.to_string() }),
        (_, Regtype | Regclass) if as_i64(&v).is_some() => {
            let Value::Oid(o) = cast_value(v.clone(), &SqlType::new(Oid))? else { return Ok(Value::Null) };
            cast_value(Value::Oid(o), to)?
        }
        (Value::Oid(o), Int4) => Value::Int4(*o as i32), // PostgreSQL's oid to int4 wraps
        (Value::Oid(o), Int8) => Value::Int8(i64::from(*o)),
        (_, Oid) => {
            let i = as_i64(&v).unwrap_or(0);
            // int2/int4 wrap (int4's oid cast is binary); int8 must be in oid's range.
            let wraps = !matches!(v, Value::Int8(_));
            match u32::try_from(i) {
                Ok(o) => Value::Oid(o),
                Err(_) if wraps && i >= i64::from(i32::MIN) && i < 0 => Value::Oid(i as i32 as u32),
                Err(_) => return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "OID out of range")),
            }
        }
        (Value::Timestamp(u) | Value::Timestamptz(u), Date) => Value::Date(match *u {
            i64::MIN => i32::MIN,
            i64::MAX => i32::MAX,
            u => {
                // A timestamptz's date is the session's wall-clock date.
                let u = if matches!(v, Value::Timestamptz(_)) { crate::types::tz::local_of(u)? } else { u };
                i32::try_from(u.div_euclid(USECS_PER_DAY)).map_err(|_| PgError::new("22008", "date out of range"))?
            }
        }),
        (_, t) if is_int(t) => match as_i64(&v) {
            Some(i) => int_value(t, i)?,
            None => {
                // float to integer rounds half to even (rint), as PostgreSQL.
                let f = as_f64(&v).unwrap_or(f64::NAN).round_ties_even();
                if !f.is_finite() || f < i64::MIN as f64 || f >= i64::MAX as f64 {
                    return Err(out_of_range(t));
                }
                int_value(t, f as i64)?
            }
        },
        (_, Float4) => {
            let f = as_f64(&v).unwrap_or(f64::NAN);
            let x = f as f32;
            if f.is_finite() && x.is_infinite() {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
            }
            Value::Float4(x)
        }
        (_, Float8) => Value::Float8(as_f64(&v).unwrap_or(f64::NAN)),
        // Same type: re-read through the type's input (applies a type modifier).
        _ => parse_as(to, &v.to_text(&from).unwrap_or_default())?,
    })
}

fn adjust_time(t: i64, to: &SqlType) -> i64 {
    crate::types::time::adjust_time(t, to.typmod)
}

/// An array cast element by element (`int4[]` to `int8[]`, `text[]` to `int[]`, a vector to
/// its array type and back), keeping its dimensions.
fn cast_array(a: &crate::types::Array, to: &SqlType) -> Result<Value> {
    let elem = to.elem().expect("an array type");
    let from = a.ty.elem();
    if let Some(from) = from {
        // As for one value (the binder refuses it there): "char" and integers cast by byte value.
        if (from.id == TypeId::Char && is_int(elem.id)) || (is_int(from.id) && elem.id == TypeId::Char) {
            return Err(PgError::feature("casts between \"char\" and integers (byte values) are not supported by heapstore"));
        }
    }
    // char(n) elements lose their padding to another text type, as a char(n) value does.
    let unpad = from.is_some_and(|f| f.id == TypeId::Bpchar) && is_text(elem.id) && elem.id != TypeId::Bpchar;
    let mut items = Vec::with_capacity(a.items.len());
    for v in &a.items {
        items.push(match v {
            Value::Null => Value::Null,
            Value::Text(t) if unpad => cast_value(Value::Text(t.trim_end_matches(' ').to_string()), &elem)?,
            v => cast_value(v.clone(), &elem)?,
        });
    }
    let mut dims = a.dims.clone();
    if to.is_vector() {
        if dims.len() > 1 || items.contains(&Value::Null) {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("array is not a valid {}", to.input_name())));
        }
        if dims.is_empty() {
            dims.push(crate::types::Dim { len: 0, lower: 0 });
        }
        dims[0].lower = 0;
    } else if a.ty.is_vector() && !dims.is_empty() && items.is_empty() {
        dims.clear();
    }
    Ok(Value::Array(Box::new(crate::types::Array { ty: *to, dims, items })))
}

pub fn check_comparable(a: &Scalar, b: &Scalar, sym: &str) -> Result<()> {
    let (ta, tb) = (type_of(a), type_of(b));
    let (Some(x), Some(y)) = (ta, tb) else { return Ok(()) };
    if let (TypeId::Record(k), TypeId::Record(l)) = (x.id, y.id) {
        return records_comparable(k, l, sym);
    }
    let arr = |t: SqlType| if t.is_vector() { t.array_of().expect("vectors have arrays") } else { t };
    // json has no comparison operators (jsonb would).
    let ok = !matches!(x.id, TypeId::Json | TypeId::Void) && x.id == y.id
        || (x.is_array() && y.is_array() && arr(x).id == arr(y).id)
        || (is_num(x.id) && is_num(y.id))
        || (is_text(x.id) && is_text(y.id))
        || (is_datetime(x.id) && is_datetime(y.id))
        // A time beside a timetz is cast to timetz, beside an interval to interval (implicit
        // casts in PostgreSQL).
        || matches!(
            (x.id, y.id),
            (TypeId::Time, TypeId::TimeTz | TypeId::Interval) | (TypeId::TimeTz | TypeId::Interval, TypeId::Time)
        )
        || (is_oid_like(x.id) && (is_int(y.id) || is_oid_like(y.id)))
        || (is_int(x.id) && is_oid_like(y.id));
    if ok {
        Ok(())
    } else {
        Err(no_operator(sym, ta, tb))
    }
}

/// Whether records of kinds `k` and `l` compare (PostgreSQL's record_cmp checks this per
/// row; heapstore when binding): as many fields, pairwise of one type.
fn records_comparable(k: crate::types::RecordKind, l: crate::types::RecordKind, sym: &str) -> Result<()> {
    let (a, b) = (k.fields(), l.fields());
    for (i, ((_, x), (_, y))) in a.iter().zip(b.iter()).enumerate() {
        // A field of type unknown: another type is dissimilar, and unknown has no operators.
        let name = |k: crate::types::RecordKind, t: &SqlType| if k.unknown(i) { "unknown".to_string() } else { t.name() };
        match (k.unknown(i), l.unknown(i)) {
            (false, false) => {}
            (true, true) if matches!(sym, "=" | "<>") => {
                return Err(PgError::new("42883", "could not identify an equality operator for type unknown"));
            }
            (true, true) => return Err(PgError::new("42883", "could not identify a comparison function for type unknown")),
            _ => {
                return Err(PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    format!("cannot compare dissimilar column types {} and {} at record column {}", name(k, x), name(l, y), i + 1),
                ))
            }
        }
        // record_eq / record_cmp compare fields of one type only (int4 with int8 is refused).
        if x.id == y.id && matches!(x.id, TypeId::Json | TypeId::Void) {
            return Err(PgError::new("42883", format!("could not identify an equality operator for type {}", x.name())));
        }
        let same = match (x.id, y.id) {
            (TypeId::Record(p), TypeId::Record(q)) => p.same_field_types(q),
            (p, q) => p == q,
        };
        if !same {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("cannot compare dissimilar column types {} and {} at record column {}", x.name(), y.name(), i + 1),
            ));
        }
    }
    if a.len() != b.len() {
        return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "cannot compare record types with different numbers of columns"));
    }
    Ok(())
}

/// Compares two records as PostgreSQL's record_cmp does for composite values: field by
/// field, two NULLs equal and a NULL above any value; char(n) fields without their padding.
fn compare_records(a: &crate::types::Record, b: &crate::types::Record) -> Result<Ordering> {
    if a.fields.len() != b.fields.len() {
        return Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "cannot compare record types with different numbers of columns"));
    }
    let bpchar = |r: &crate::types::Record, i: usize| match r.ty.id {
        TypeId::Record(k) => k.fields().get(i).is_some_and(|(_, t)| t.id == TypeId::Bpchar),
        _ => false,
    };
    // (fields() of a row kind borrows its registered shape: no lock, no copy.)
    for (i, (x, y)) in a.fields.iter().zip(&b.fields).enumerate() {
        let o = match (x, y) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => Ordering::Greater,
            (_, Value::Null) => Ordering::Less,
            (Value::Text(s), Value::Text(t)) if bpchar(a, i) || bpchar(b, i) => {
                s.trim_end_matches(' ').as_bytes().cmp(t.trim_end_matches(' ').as_bytes())
            }
            (x, y) => compare(x, y)?,
        };
        if o != Ordering::Equal {
            return Ok(o);
        }
    }
    Ok(Ordering::Equal)
}

pub fn literal(v: &AstValue) -> Result<Scalar> {
    Ok(match v {
        AstValue::Number(n, _) => {
            if let Ok(i) = n.parse::<i32>() {
                Scalar::Const(Value::Int4(i))
            } else if let Ok(i) = n.parse::<i64>() {
                Scalar::Const(Value::Int8(i))
            } else {
                // A decimal literal (or an integer too large for bigint) is numeric.
                Scalar::Const(Value::Numeric(crate::types::Numeric::parse(n)?))
            }
        }
        AstValue::SingleQuotedString(s) | AstValue::EscapedStringLiteral(s) => Scalar::Unknown(s.clone()),
        // U&'...': the tokenizer has decoded the escapes; PostgreSQL refuses code point 0.
        AstValue::UnicodeStringLiteral(s) if s.contains('\0') => {
            return Err(PgError::new(sqlstate::SYNTAX_ERROR, "invalid Unicode escape value"));
        }
        AstValue::UnicodeStringLiteral(s) => Scalar::Unknown(s.clone()),
        AstValue::Boolean(b) => Scalar::Const(Value::Bool(*b)),
        AstValue::Null => Scalar::Const(Value::Null),
        AstValue::Placeholder(p) => {
            let n = p
                .strip_prefix('$')
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n >= 1)
                .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_PARAMETER_NUMBER, format!("there is no parameter {p}")))?;
            Scalar::Param(n, None)
        }
        other => return Err(PgError::feature(format!("constant not supported: {other}"))),
    })
}

pub fn out_of_range(t: TypeId) -> PgError {
    let what = match t {
        TypeId::Int2 => "smallint",
        TypeId::Int4 => "integer",
        _ => "bigint",
    };
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, format!("{what} out of range"))
}

pub fn int_value(t: TypeId, v: i64) -> Result<Value> {
    match t {
        TypeId::Int2 => i16::try_from(v).map(Value::Int2).map_err(|_| out_of_range(t)),
        TypeId::Int4 => i32::try_from(v).map(Value::Int4).map_err(|_| out_of_range(t)),
        _ => Ok(Value::Int8(v)),
    }
}

pub fn as_i64(v: &Value) -> Option<i64> {
    match *v {
        Value::Int2(x) => Some(x.into()),
        Value::Int4(x) => Some(x.into()),
        Value::Int8(x) => Some(x),
        _ => None,
    }
}

pub fn as_f64(v: &Value) -> Option<f64> {
    match *v {
        Value::Float4(x) => Some(x.into()),
        Value::Float8(x) => Some(x),
        Value::Numeric(ref n) => n.to_f64().ok(),
        _ => as_i64(v).map(|i| i as f64),
    }
}

/// What expressions are evaluated with besides the row: the parameters, the current rows of
/// enclosing queries (innermost first), and the executor that runs subqueries.
pub struct EvalCx<'a> {
    pub params: &'a [Option<String>],
    pub outer: &'a [&'a [Value]],
    pub runner: Option<&'a dyn SubRunner>,
}

/// Runs subqueries met during evaluation (the executor).
pub trait SubRunner {
    /// The value of `link` for the current `row`.
    fn sublink(&self, link: &crate::exec::SubLink, row: &[Value], cx: &EvalCx<'_>) -> Result<Value>;
    /// The session running the statement (for the sequence functions).
    fn session(&self) -> Option<&crate::session::Session> {
        None
    }
}

/// A runner that has a session and no subqueries (row statements' VALUES, defaults, CHECK
/// constraints).
pub struct SessionRunner<'a>(pub &'a crate::session::Session);

impl SubRunner for SessionRunner<'_> {
    fn sublink(&self, _: &crate::exec::SubLink, _: &[Value], _: &EvalCx<'_>) -> Result<Value> {
        Err(PgError::feature("subqueries are not supported here"))
    }

    fn session(&self) -> Option<&crate::session::Session> {
        Some(self.0)
    }
}

/// Evaluates `e` against `row` with the session available (sequence functions).
pub fn eval_with_session(e: &Scalar, s: &crate::session::Session, row: &[Value], params: &[Option<String>]) -> Result<Value> {
    e.eval_cx(row, &EvalCx { params, outer: &[], runner: Some(&SessionRunner(s)) })
}

/// `CURRENT_SCHEMA` and `CURRENT_ROLE` written without parentheses: keywords that call a
/// function, never column names (sqlparser reads them as identifiers).
pub(crate) fn is_keyword_function(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(id) if id.quote_style.is_none()
        && (id.value.eq_ignore_ascii_case("current_schema") || id.value.eq_ignore_ascii_case("current_role")))
}

/// Whether `e` calls a function evaluated with the session (the sequence and advisory lock
/// functions): it must stay where the executor evaluates it (not in a scan's filter).
pub fn needs_session(e: &Scalar) -> bool {
    let mut found = false;
    e.visit(&mut |x| found |= matches!(x, Scalar::Func(super::func::Func::Seq(_) | super::func::Func::Advisory(_), ..)));
    found
}

/// Whether `e` calls a volatile function, one whose value may change from call to call
/// (the sequence functions, `gen_random_uuid`, `random`, `clock_timestamp`, `timeofday`):
/// such an expression is evaluated for each row, never once per statement.
pub fn calls_volatile(e: &Scalar) -> bool {
    let mut found = false;
    e.visit(&mut |x| found |= matches!(x, Scalar::Func(f, ..) if f.is_volatile()));
    found
}

/// A value converted to a CASE / COALESCE / GREATEST result type (the branches' common type).
fn conform(v: Value, ty: Option<SqlType>) -> Result<Value> {
    match ty {
        Some(t) if v != Value::Null && value_type(&v).is_none_or(|vt| vt.id != t.id) => cast_value(v, &t),
        _ => Ok(v),
    }
}

/// An integer as the oid PostgreSQL's cast makes of it (for comparison; out of range stays
/// out of range, so it equals no oid).
fn oid_of_int(i: i64) -> i128 {
    if (i64::from(i32::MIN)..0).contains(&i) {
        i128::from(i as i32 as u32)
    } else {
        i128::from(i)
    }
}

/// The table of a [`Scalar::Lookup`]: values by integer key (an OID), or by text key.
#[derive(Debug, Default)]
pub struct LookupTable {
    /// The function it implements, for EXPLAIN.
    pub name: String,
    pub map: std::collections::HashMap<i64, Value>,
    pub by_text: std::collections::HashMap<String, Value>,
    /// Text keys are identifiers: folded as PostgreSQL reads names before the lookup.
    pub fold_names: bool,
    /// What an absent integer key gives (`{}` is the key), else NULL.
    pub missing: Option<&'static str>,
    /// Text keys are relation names cast to regclass (`regclassin`): an absent name is an
    /// error (42P01), a number the OID it names (printed as the number if none).
    pub text_is_regclass: bool,
    /// Text keys compare in lower case (setting names).
    pub lower_text: bool,
    /// An absent text key is this error (SQLSTATE, message with `{}` for the key), else NULL.
    pub missing_text: Option<(&'static str, &'static str)>,
}

impl LookupTable {
    fn lookup(&self, k: i64) -> Value {
        match (self.map.get(&k), self.missing) {
            (Some(v), _) => v.clone(),
            (None, Some(m)) => Value::Text(m.replace("{}", &k.to_string())),
            (None, None) => Value::Null,
        }
    }
}

/// A date as a timestamp for comparison (infinities stay infinite; no overflow).
fn date_as_timestamp(d: i32) -> i128 {
    match d {
        i32::MIN => i128::from(i64::MIN),
        i32::MAX => i128::from(i64::MAX),
        d => i128::from(d) * 86_400_000_000,
    }
}

/// PostgreSQL's float ordering: -0 equals 0, NaN equals NaN and sorts above everything.
pub fn float_cmp(x: f64, y: f64) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// The instant at which the session's clocks read `local` (a timestamp, or a date's
/// midnight, possibly past timestamp's range), for comparing with a timestamptz. Past the
/// range it stays where it is (beyond every timestamptz), as PostgreSQL's overflow rule.
fn local_as_instant(local: i128) -> i128 {
    match i64::try_from(local) {
        Ok(l) if l != i64::MIN && l != i64::MAX => crate::types::tz::utc_of(l).map(i128::from).unwrap_or(local),
        _ => local,
    }
}

/// Compares two non-NULL values of comparable types.
pub fn compare(a: &Value, b: &Value) -> Result<Ordering> {
    Ok(match (a, b) {
        (Value::Array(x), Value::Array(y)) => crate::types::array::compare(x, y, &mut |p, q| compare(p, q))?,
        (Value::Record(x), Value::Record(y)) => compare_records(x, y)?,
        (Value::Text(x), Value::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Bytea(x), Value::Bytea(y)) => x.cmp(y),
        (Value::Uuid(x), Value::Uuid(y)) => x.cmp(y),
        (Value::Jsonb(x), Value::Jsonb(y)) => {
            crate::types::jsonb::compare(&crate::types::jsonb::parse_stored(x), &crate::types::jsonb::parse_stored(y))
        }
        (Value::Interval(x), Value::Interval(y)) => x.span().cmp(&y.span()),
        (Value::Time(x), Value::Time(y)) => x.cmp(y),
        (Value::TimeTz(x), Value::TimeTz(y)) => x.order_key().cmp(&y.order_key()),
        (Value::Time(x), Value::TimeTz(y)) => crate::types::time::timetz_of_time(*x)?.order_key().cmp(&y.order_key()),
        (Value::TimeTz(x), Value::Time(y)) => x.order_key().cmp(&crate::types::time::timetz_of_time(*y)?.order_key()),
        (Value::Time(x), Value::Interval(y)) => i128::from(*x).cmp(&y.span()),
        (Value::Interval(x), Value::Time(y)) => x.span().cmp(&i128::from(*y)),
        (Value::Date(x), Value::Date(y)) => x.cmp(y),
        (Value::Timestamp(x), Value::Timestamp(y)) | (Value::Timestamptz(x), Value::Timestamptz(y)) => x.cmp(y),
        // Across the two, the timestamp is the instant the session's clocks read it.
        (Value::Timestamp(x), Value::Timestamptz(y)) => local_as_instant(i128::from(*x)).cmp(&i128::from(*y)),
        (Value::Timestamptz(x), Value::Timestamp(y)) => i128::from(*x).cmp(&local_as_instant(i128::from(*y))),
        (Value::Date(d), Value::Timestamp(t)) => date_as_timestamp(*d).cmp(&i128::from(*t)),
        (Value::Timestamp(t), Value::Date(d)) => i128::from(*t).cmp(&date_as_timestamp(*d)),
        (Value::Date(d), Value::Timestamptz(t)) => local_as_instant(date_as_timestamp(*d)).cmp(&i128::from(*t)),
        (Value::Timestamptz(t), Value::Date(d)) => i128::from(*t).cmp(&local_as_instant(date_as_timestamp(*d))),
        (
            Value::Oid(x) | Value::Regtype(x) | Value::Regnamespace(x) | Value::Regclass(x, _),
            Value::Oid(y) | Value::Regtype(y) | Value::Regnamespace(y) | Value::Regclass(y, _),
        ) => x.cmp(y),
        (Value::Oid(_) | Value::Regtype(_) | Value::Regclass(..), Value::Int8(i))
        | (Value::Int8(i), Value::Oid(_) | Value::Regtype(_) | Value::Regclass(..))
            if u32::try_from(*i).is_err() =>
        {
            return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "OID out of range"));
        }
        (Value::Regtype(x) | Value::Regnamespace(x) | Value::Regclass(x, _), y) if as_i64(y).is_some() => {
            i128::from(*x).cmp(&oid_of_int(as_i64(y).unwrap_or(0)))
        }
        (x, Value::Regtype(y) | Value::Regnamespace(y) | Value::Regclass(y, _)) if as_i64(x).is_some() => {
            oid_of_int(as_i64(x).unwrap_or(0)).cmp(&i128::from(*y))
        }
        // An integer compared with an oid is cast to oid first (negative int4 values wrap).
        (Value::Oid(x), y) if as_i64(y).is_some() => i128::from(*x).cmp(&oid_of_int(as_i64(y).unwrap_or(0))),
        (x, Value::Oid(y)) if as_i64(x).is_some() => oid_of_int(as_i64(x).unwrap_or(0)).cmp(&i128::from(*y)),
        (Value::Numeric(x), Value::Numeric(y)) => x.cmp(y),
        (Value::Numeric(x), y) if as_i64(y).is_some() => x.cmp(&crate::types::Numeric::from_i64(as_i64(y).unwrap_or(0))),
        (x, Value::Numeric(y)) if as_i64(x).is_some() => crate::types::Numeric::from_i64(as_i64(x).unwrap_or(0)).cmp(y),
        _ => {
            if let (Some(x), Some(y)) = (as_i64(a), as_i64(b)) {
                x.cmp(&y)
            } else if let (Some(x), Some(y)) = (as_f64(a), as_f64(b)) {
                float_cmp(x, y)
            } else {
                return Err(no_operator("=", value_type(a), value_type(b)));
            }
        }
    })
}

pub fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

impl Scalar {
    /// Evaluates against a row (`row[i]` = column i; columns not needed may be NULL) and the
    /// statement's parameters (text, None = NULL).
    pub fn eval(&self, row: &[Value], params: &[Option<String>]) -> Result<Value> {
        self.eval_cx(row, &EvalCx { params, outer: &[], runner: None })
    }

    /// This expression's value as an operand: a column's or constant's own value, else the
    /// value evaluated into `slot`.
    #[inline]
    fn operand<'v>(&'v self, row: &'v [Value], cx: &EvalCx<'_>, slot: &'v mut Option<Value>) -> Result<&'v Value> {
        Ok(match self {
            Scalar::Col(i, _) => &row[*i],
            Scalar::Const(v) => v,
            e => slot.insert(e.eval_cx(row, cx)?),
        })
    }

    /// Evaluates against a row with the full context: parameters, the current rows of
    /// enclosing queries (for outer references) and the executor (for subqueries).
    pub fn eval_cx(&self, row: &[Value], cx: &EvalCx<'_>) -> Result<Value> {
        let params = cx.params;
        Ok(match self {
            Scalar::Col(i, _) => row[*i].clone(),
            Scalar::Const(v) => v.clone(),
            Scalar::Unknown(s) => Value::Text(s.clone()),
            Scalar::Param(n, ty) => match params.get(n - 1) {
                None => return Err(PgError::new(sqlstate::UNDEFINED_PARAMETER_NUMBER, format!("there is no parameter ${n}"))),
                Some(None) => Value::Null,
                Some(Some(t)) => match ty {
                    Some(ty) => parse_as(ty, t)?,
                    None => Value::Text(t.clone()),
                },
            },
            Scalar::Arith(op, a, b) => {
                // Column and constant operands are read in place (no copy of their values).
                let (mut xa, mut ya) = (None, None);
                let x = a.operand(row, cx, &mut xa)?;
                let y = b.operand(row, cx, &mut ya)?;
                if *x == Value::Null || *y == Value::Null {
                    return Ok(Value::Null);
                }
                // The result type is type_of's, from the operands' static types; for a column
                // or constant operand of one integer or float8 type on both sides it is read
                // off the two leaves, without walking the tree again for every row.
                let leaf = |s: &Scalar| match s {
                    Scalar::Col(_, t) => Some(t.id),
                    Scalar::Const(Value::Int4(_)) => Some(TypeId::Int4),
                    Scalar::Const(Value::Int8(_)) => Some(TypeId::Int8),
                    Scalar::Const(Value::Float8(_)) => Some(TypeId::Float8),
                    _ => None,
                };
                let result = match (leaf(a), leaf(b)) {
                    (Some(t @ (TypeId::Int4 | TypeId::Int8 | TypeId::Float8)), Some(u)) if t == u => t,
                    _ => type_of(self).map(|t| t.id).unwrap_or(TypeId::Float8),
                };
                debug_assert_eq!(result, type_of(self).map(|t| t.id).unwrap_or(TypeId::Float8), "{self:?}");
                if let (Value::Int4(p), Value::Int4(q), TypeId::Int4) = (x, y, result) {
                    // int4 by int4 in i32: the same answers and errors as `arith`'s i64 path
                    // followed by its range check.
                    let (p, q) = (*p, *q);
                    if q == 0 && matches!(op, ArithOp::Div | ArithOp::Mod) {
                        return Err(PgError::new("22012", "division by zero"));
                    }
                    let v = match op {
                        ArithOp::Add => p.checked_add(q),
                        ArithOp::Sub => p.checked_sub(q),
                        ArithOp::Mul => p.checked_mul(q),
                        ArithOp::Div => p.checked_div(q),
                        ArithOp::Mod => Some(p.wrapping_rem(q)),
                    };
                    return v.map(Value::Int4).ok_or_else(|| out_of_range(TypeId::Int4));
                }
                arith(*op, x, y, result)?
            }
            Scalar::Concat(a, b) => {
                let (x, y) = (a.eval_cx(row, cx)?, b.eval_cx(row, cx)?);
                if x == Value::Null || y == Value::Null {
                    return Ok(Value::Null);
                }
                // Each side as text, as its cast to text gives it (a boolean is `true`).
                let text = SqlType::new(TypeId::Text);
                match (cast_value(x, &text)?, cast_value(y, &text)?) {
                    (Value::Text(x), Value::Text(y)) => Value::Text(x + &y),
                    _ => Value::Null,
                }
            }
            Scalar::Cast(a, ty) => {
                let v = a.eval_cx(row, cx)?;
                // char(n) to another text type drops its padding first; to any other type it
                // goes through its output, padding included (bytea keeps the spaces).
                let v = match v {
                    Value::Text(t) if ty.id != TypeId::Bpchar && is_text(ty.id) && is_bpchar(a) => {
                        Value::Text(t.trim_end_matches(' ').to_string())
                    }
                    v => v,
                };
                cast_value(v, ty)?
            }
            Scalar::Neg(a) => match a.eval_cx(row, cx)? {
                Value::Null => Value::Null,
                Value::Int2(v) => v.checked_neg().map(Value::Int2).ok_or_else(|| out_of_range(TypeId::Int2))?,
                Value::Int4(v) => v.checked_neg().map(Value::Int4).ok_or_else(|| out_of_range(TypeId::Int4))?,
                Value::Int8(v) => v.checked_neg().map(Value::Int8).ok_or_else(|| out_of_range(TypeId::Int8))?,
                Value::Float4(v) => Value::Float4(-v),
                Value::Float8(v) => Value::Float8(-v),
                Value::Numeric(n) => Value::Numeric(n.neg()),
                Value::Interval(i) => Value::Interval(i.neg()?),
                other => {
                    return Err(PgError::new(
                        "42883",
                        format!("operator does not exist: - {}", value_type(&other).map(|t| t.name()).unwrap_or_default()),
                    ))
                }
            },
            Scalar::Cmp(op, a, b) => {
                let (x, y) = (a.eval_cx(row, cx)?, b.eval_cx(row, cx)?);
                if x == Value::Null || y == Value::Null {
                    return Ok(Value::Null);
                }
                Value::Bool(op.holds(compare(&x, &y)?))
            }
            Scalar::And(a, b) => {
                let x = truth(&a.eval_cx(row, cx)?);
                if x == Some(false) {
                    return Ok(Value::Bool(false));
                }
                match (x, truth(&b.eval_cx(row, cx)?)) {
                    (_, Some(false)) => Value::Bool(false),
                    (Some(true), Some(true)) => Value::Bool(true),
                    _ => Value::Null,
                }
            }
            Scalar::Or(a, b) => {
                let x = truth(&a.eval_cx(row, cx)?);
                if x == Some(true) {
                    return Ok(Value::Bool(true));
                }
                match (x, truth(&b.eval_cx(row, cx)?)) {
                    (_, Some(true)) => Value::Bool(true),
                    (Some(false), Some(false)) => Value::Bool(false),
                    _ => Value::Null,
                }
            }
            Scalar::Not(a) => match truth(&a.eval_cx(row, cx)?) {
                Some(b) => Value::Bool(!b),
                None => Value::Null,
            },
            Scalar::IsNull(a, negated) => match a.eval_cx(row, cx)? {
                // A record IS NULL when every field is, IS NOT NULL when none is (PostgreSQL's
                // row-wise test, so both can be false).
                Value::Record(r) => Value::Bool(r.fields.iter().all(|f| (*f == Value::Null) != *negated)),
                v => Value::Bool((v == Value::Null) != *negated),
            },
            Scalar::InList(a, items, negated) => {
                let x = a.eval_cx(row, cx)?;
                if x == Value::Null {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                for it in items {
                    let y = it.eval_cx(row, cx)?;
                    if y == Value::Null {
                        saw_null = true;
                    } else if compare(&x, &y)? == Ordering::Equal {
                        return Ok(Value::Bool(!negated));
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Bool(*negated)
                }
            }
            Scalar::Outer(depth, i, _) => match cx.outer.get(*depth) {
                Some(r) => r[*i].clone(),
                None => return Err(PgError::internal("outer reference evaluated without its row")),
            },
            Scalar::Func(f, args, ty) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(a.eval_cx(row, cx)?);
                }
                if let super::func::Func::Seq(sf) = f {
                    let Some(s) = cx.runner.and_then(|r| r.session()) else {
                        return Err(PgError::feature(format!("{}() is not supported in this part of a statement", sf.name())));
                    };
                    return super::sequence::call(s, *sf, &vals);
                }
                if let super::func::Func::Advisory(af) = f {
                    let Some(s) = cx.runner.and_then(|r| r.session()) else {
                        return Err(PgError::feature("advisory lock functions are not supported in this part of a statement"));
                    };
                    return super::advisory::call(s, *af, &vals);
                }
                super::func::call(*f, &vals, ty)?
            }
            Scalar::Case(whens, els, ty) => {
                for (c, v) in whens {
                    if c.eval_cx(row, cx)? == Value::Bool(true) {
                        return conform(v.eval_cx(row, cx)?, *ty);
                    }
                }
                match els {
                    Some(e) => conform(e.eval_cx(row, cx)?, *ty)?,
                    None => Value::Null,
                }
            }
            Scalar::Coalesce(items, ty) => {
                for it in items {
                    let v = it.eval_cx(row, cx)?;
                    if v != Value::Null {
                        return conform(v, *ty);
                    }
                }
                Value::Null
            }
            Scalar::Lookup(a, table, _) => {
                let k = a.eval_cx(row, cx)?;
                match k {
                    Value::Oid(o) | Value::Regclass(o, _) | Value::Regtype(o) | Value::Regnamespace(o) => table.lookup(i64::from(o)),
                    Value::Text(t) => {
                        let t = if table.lower_text { t.to_ascii_lowercase() } else { t };
                        let key = match (table.fold_names, t.split_once('\u{1}')) {
                            // (relation name, column name): the relation is read as an
                            // identifier, the column kept as written (pg_get_serial_sequence).
                            (true, Some((rel, col))) => {
                                let rel = super::pg_catalog::split_identifiers(rel).map(|p| p.join(".")).unwrap_or_default();
                                format!("{rel}\u{1}{col}")
                            }
                            (true, None) => super::pg_catalog::split_identifiers(&t).map(|p| p.join(".")).unwrap_or_default(),
                            (false, _) => t,
                        };
                        match table.by_text.get(&key) {
                            Some(v) => v.clone(),
                            None if table.text_is_regclass => {
                                let t = key.trim();
                                match t.parse::<u32>() {
                                    Ok(o) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
                                        table.map.get(&i64::from(o)).cloned().unwrap_or(Value::Regclass(o, o.to_string()))
                                    }
                                    _ => return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{key}\" does not exist"))),
                                }
                            }
                            None => match table.missing_text {
                                Some((code, m)) => return Err(PgError::new(code, m.replace("{}", &key))),
                                None => Value::Null,
                            },
                        }
                    }
                    k => match as_i64(&k) {
                        Some(i) => table.lookup(oid_of_int(i) as i64),
                        None => Value::Null,
                    },
                }
            }
            Scalar::Regex(a, re, negated) => match a.eval_cx(row, cx)? {
                Value::Null => Value::Null,
                v => {
                    let text = cast_value(v, &SqlType::new(TypeId::Text))?;
                    let Value::Text(t) = text else { return Ok(Value::Null) };
                    if re.as_str().starts_with("(?si)") && !t.is_ascii() {
                        return Err(PgError::feature(
                            "a case-insensitive regular expression match of non-ASCII text is not supported by heapstore",
                        ));
                    }
                    Value::Bool(re.is_match(&t) != *negated)
                }
            },
            Scalar::NullIf(a, b) => {
                let x = a.eval_cx(row, cx)?;
                let y = b.eval_cx(row, cx)?;
                let equal = match (&x, &y) {
                    // char(n) on either side (the binder has turned a text pairing into
                    // text): bpchareq, without trailing blanks.
                    (Value::Text(p), Value::Text(q)) if is_bpchar(a) || is_bpchar(b) => p.trim_end_matches(' ') == q.trim_end_matches(' '),
                    (Value::Null, _) | (_, Value::Null) => false,
                    _ => compare(&x, &y)? == Ordering::Equal,
                };
                if equal {
                    Value::Null
                } else {
                    x
                }
            }
            Scalar::MinMax(greatest, items, ty) => {
                let mut best = Value::Null;
                for it in items {
                    let v = it.eval_cx(row, cx)?;
                    if v == Value::Null {
                        continue;
                    }
                    let better = best == Value::Null || {
                        // char(n) compares without its padding (bpcharcmp); on a tie the
                        // earlier argument stays, as PostgreSQL's MinMaxExpr keeps it.
                        let o = match (&v, &best, ty) {
                            (Value::Text(p), Value::Text(q), Some(t)) if t.id == TypeId::Bpchar => {
                                p.trim_end_matches(' ').as_bytes().cmp(q.trim_end_matches(' ').as_bytes())
                            }
                            _ => compare(&v, &best)?,
                        };
                        if *greatest {
                            o == Ordering::Greater
                        } else {
                            o == Ordering::Less
                        }
                    };
                    if better {
                        best = v;
                    }
                }
                conform(best, *ty)?
            }
            Scalar::Like(x, p, negated, ci, esc) => {
                let (x, p) = (x.eval_cx(row, cx)?, p.eval_cx(row, cx)?);
                match (x, p) {
                    (Value::Text(x), Value::Text(p)) => Value::Bool(super::func::like(&x, &p, *ci, *esc)? != *negated),
                    _ => Value::Null,
                }
            }
            Scalar::IsDistinct(a, b, not) => {
                let (x, y) = (a.eval_cx(row, cx)?, b.eval_cx(row, cx)?);
                let same = match (&x, &y) {
                    (Value::Null, Value::Null) => true,
                    (Value::Null, _) | (_, Value::Null) => false,
                    _ => compare(&x, &y)? == Ordering::Equal,
                };
                Value::Bool(same == *not)
            }
            Scalar::IsBool(a, which, not) => {
                let v = truth(&a.eval_cx(row, cx)?);
                Value::Bool((v == *which) != *not)
            }
            Scalar::SubLink(l) => match cx.runner {
                Some(r) => r.sublink(l, row, cx)?,
                None => return Err(PgError::feature("subqueries are not supported here")),
            },
            Scalar::Agg(..) | Scalar::Win(..) | Scalar::Srf(..) => {
                return Err(PgError::new("42803", "aggregate or window function calls are not allowed here"))
            }
        })
    }

    /// True if the row passes this WHERE clause (NULL counts as false).
    pub fn matches(&self, row: &[Value], params: &[Option<String>]) -> Result<bool> {
        Ok(self.eval(row, params)? == Value::Bool(true))
    }

    /// Calls `f` on this expression and every expression inside it, outermost first.
    pub fn visit(&self, f: &mut dyn FnMut(&Scalar)) {
        f(self);
        match self {
            Scalar::Col(..)
            | Scalar::Const(_)
            | Scalar::Unknown(_)
            | Scalar::Param(..)
            | Scalar::Outer(..)
            | Scalar::Agg(..)
            | Scalar::Win(..)
            | Scalar::Srf(..) => {}
            Scalar::Func(_, items, _) | Scalar::Coalesce(items, _) | Scalar::MinMax(_, items, _) => {
                for i in items {
                    i.visit(f);
                }
            }
            Scalar::Case(whens, els, _) => {
                for (c, v) in whens {
                    c.visit(f);
                    v.visit(f);
                }
                if let Some(e) = els {
                    e.visit(f);
                }
            }
            Scalar::NullIf(a, b) | Scalar::Like(a, b, ..) | Scalar::IsDistinct(a, b, _) => {
                a.visit(f);
                b.visit(f);
            }
            Scalar::IsBool(a, ..) | Scalar::Lookup(a, ..) | Scalar::Regex(a, ..) => a.visit(f),
            Scalar::SubLink(l) => {
                if let Some(x) = l.lhs() {
                    x.visit(f);
                }
                for x in &l.lhs_row {
                    x.visit(f);
                }
            }
            Scalar::Arith(_, a, b) | Scalar::Concat(a, b) | Scalar::Cmp(_, a, b) | Scalar::And(a, b) | Scalar::Or(a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Scalar::Neg(a) | Scalar::Not(a) | Scalar::IsNull(a, _) | Scalar::Cast(a, _) => a.visit(f),
            Scalar::InList(a, items, _) => {
                a.visit(f);
                for i in items {
                    i.visit(f);
                }
            }
        }
    }

    /// Records the type each parameter `$n` was given by its context into `out[n - 1]` (the
    /// first use that fixes a type wins; `out` grows as needed).
    pub fn param_types(&self, out: &mut Vec<Option<SqlType>>) {
        self.visit(&mut |e| {
            if let Scalar::Param(n, t) = e {
                if out.len() < *n {
                    out.resize(*n, None);
                }
                if out[n - 1].is_none() {
                    out[n - 1] = *t;
                }
            }
        });
    }

    /// Marks the columns this expression reads.
    pub fn columns_used(&self, used: &mut [bool]) {
        self.visit(&mut |e| {
            if let Scalar::Col(i, _) = e {
                used[*i] = true;
            }
        });
    }
}

fn as_numeric(v: &Value) -> Result<crate::types::Numeric> {
    Ok(match v {
        Value::Numeric(n) => n.clone(),
        Value::Float4(f) => crate::types::Numeric::from_f32(*f)?,
        Value::Float8(f) => crate::types::Numeric::from_f64(*f)?,
        other => crate::types::Numeric::from_i64(as_i64(other).unwrap_or(0)),
    })
}

fn arith(op: ArithOp, x: &Value, y: &Value, result: TypeId) -> Result<Value> {
    if result == TypeId::Numeric {
        let (a, b) = (as_numeric(x)?, as_numeric(y)?);
        return Ok(Value::Numeric(match op {
            ArithOp::Add => a.add(&b)?,
            ArithOp::Sub => a.sub(&b)?,
            ArithOp::Mul => a.mul(&b)?,
            ArithOp::Div => a.div(&b)?,
            ArithOp::Mod => a.rem(&b)?,
        }));
    }
    if is_int(result) {
        let (a, b) = (as_i64(x).expect("int operand"), as_i64(y).expect("int operand"));
        let v = match op {
            ArithOp::Add => a.checked_add(b),
            ArithOp::Sub => a.checked_sub(b),
            ArithOp::Mul => a.checked_mul(b),
            ArithOp::Div | ArithOp::Mod => {
                if b == 0 {
                    return Err(PgError::new("22012", "division by zero"));
                }
                if op == ArithOp::Div {
                    a.checked_div(b)
                } else {
                    Some(a.wrapping_rem(b))
                }
            }
        };
        return v.ok_or_else(|| out_of_range(result)).and_then(|v| int_value(result, v));
    }
    // A numeric operand converts as numeric_float8 does (22003 past double precision's range).
    let f = |v: &Value| match v {
        Value::Numeric(n) => n.to_f64().map(Some),
        v => Ok(as_f64(v)),
    };
    let (a, b) = (
        f(x)?.ok_or_else(|| no_operator("+", value_type(x), value_type(y)))?,
        f(y)?.ok_or_else(|| no_operator("+", value_type(x), value_type(y)))?,
    );
    // float8_div / float4_div: NaN divided by zero is NaN, not an error.
    if op == ArithOp::Div && b == 0.0 && !a.is_nan() {
        return Err(PgError::new("22012", "division by zero"));
    }
    if result == TypeId::Float4 {
        let (x, y) = (a as f32, b as f32);
        let v = match op {
            ArithOp::Add => x + y,
            ArithOp::Sub => x - y,
            ArithOp::Mul => x * y,
            ArithOp::Div => x / y,
            ArithOp::Mod => x % y,
        };
        float_range(
            v.is_infinite() && x.is_finite() && y.is_finite(),
            v == 0.0
                && x != 0.0
                && matches!(op, ArithOp::Mul | ArithOp::Div)
                && (if op == ArithOp::Div { y.is_finite() } else { y != 0.0 }),
        )?;
        return Ok(Value::Float4(v));
    }
    let v = match op {
        ArithOp::Add => a + b,
        ArithOp::Sub => a - b,
        ArithOp::Mul => a * b,
        ArithOp::Div => a / b,
        ArithOp::Mod => a % b,
    };
    float_range(
        v.is_infinite() && a.is_finite() && b.is_finite(),
        // float8_div's underflow check spares an infinite divisor (x / Infinity is 0).
        v == 0.0 && a != 0.0 && matches!(op, ArithOp::Mul | ArithOp::Div) && (if op == ArithOp::Div { b.is_finite() } else { b != 0.0 }),
    )?;
    Ok(Value::Float8(v))
}

/// PostgreSQL's float overflow and underflow checks (`float_overflow_error`).
fn float_range(overflow: bool, underflow: bool) -> Result<()> {
    if overflow {
        return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
    }
    if underflow {
        return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow"));
    }
    Ok(())
}

/// Converts `v` to the stored form of a column of type `ty` (assignment: INSERT values and
/// UPDATE SET). Integers are range-checked; anything else goes through the column type's
/// input function on the value's text form.
pub fn store(v: &Value, ty: &SqlType, out: &mut Vec<u8>) -> Result<()> {
    out.clear();
    // The assignment casts into and out of time and timetz are casts, not text round trips
    // (an interval's text is no time's).
    // (Arrays of them element by element.)
    let timeish = |t: &SqlType| matches!(t.elem().unwrap_or(*t).id, TypeId::Time | TypeId::TimeTz);
    let textish = |t: &SqlType| is_text(t.elem().unwrap_or(*t).id);
    if let Some(from) = value_type(v).filter(|f| f.id != ty.id && (timeish(f) || timeish(ty))) {
        if castable(&from, ty) && !textish(&from) && !textish(ty) {
            return match cast_value(v.clone(), ty)? {
                // PostgreSQL stores NULL for an infinite timestamp given to a time column.
                Value::Null => Err(PgError::feature(format!(
                    "storing an infinite {} in a column of type {} (NULL in PostgreSQL) is not supported by heapstore",
                    from.name(),
                    ty.name()
                ))),
                c => {
                    c.encode(out);
                    Ok(())
                }
            };
        }
    }
    if matches!(v, Value::Numeric(_)) && (is_num(ty.id) || ty.id == TypeId::Numeric) {
        cast_value(v.clone(), ty)?.encode(out);
        return Ok(());
    }
    if ty.id == TypeId::Numeric {
        if let Some(i) = as_i64(v) {
            crate::types::Numeric::from_i64(i).apply_typmod(ty.typmod)?.encode_stored(out);
            return Ok(());
        }
    }
    if is_int(ty.id) {
        if let Some(i) = as_i64(v) {
            int_value(ty.id, i)?.encode(out);
            return Ok(());
        }
        if let Some(f) = as_f64(v) {
            let r = f.round_ties_even();
            if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                return Err(out_of_range(ty.id));
            }
            int_value(ty.id, r as i64)?.encode(out);
            return Ok(());
        }
    }
    if matches!(ty.id, TypeId::Float8) {
        if let Some(f) = as_f64(v) {
            Value::Float8(f).encode(out);
            return Ok(());
        }
    }
    let same = value_type(v).is_some_and(|t| t.id == ty.id) && ty.typmod < 0;
    if same {
        v.encode(out);
        return Ok(());
    }
    // boolean to a text type is `true` / `false` (PostgreSQL's booltext), not its output
    // function's `t` / `f`.
    // To name it goes through boolean's output (there is no cast): `t` / `f`.
    if let (Value::Bool(b), true) = (v, matches!(ty.id, TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name)) {
        let word = match (ty.id, *b) {
            (TypeId::Name, true) => "t",
            (TypeId::Name, false) => "f",
            (_, true) => "true",
            (_, false) => "false",
        };
        return ty.input_text(word, out);
    }
    let text = v.to_text(&value_type(v).unwrap_or(SqlType::new(TypeId::Text))).unwrap_or_default();
    ty.input_text(&text, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Column, Persistence};
    use crate::storage::RelFileNumber;

    fn table() -> Table {
        let col = |n: &str, id| Column::new(n.into(), SqlType::new(id), false);
        Table {
            oid: 1,
            name: "t".into(),
            columns: vec![col("a", TypeId::Int4), col("b", TypeId::Text), col("c", TypeId::Int8)],
            relfile: RelFileNumber(1),
            toast_relfile: None,
            persistence: Persistence::Permanent,
            indexes: vec![],
            kind: Default::default(),
            checks: vec![],
            foreign_keys: vec![],
            comment: None,
        }
    }

    fn expr(sql: &str) -> Expr {
        let d = crate::sql::dialect::Pg;
        sqlparser::parser::Parser::new(&d).try_with_sql(sql).unwrap().parse_expr().unwrap()
    }

    fn eval(sql: &str, row: &[Value]) -> Result<Value> {
        bind(&expr(sql), &table())?.eval(row, &[Some("7".into())])
    }

    #[test]
    fn literals_take_the_column_type() {
        let row = [Value::Int4(7), Value::Text("x".into()), Value::Int8(1)];
        assert_eq!(eval("a = '7'", &row).unwrap(), Value::Bool(true));
        assert_eq!(eval("a = $1", &row).unwrap(), Value::Bool(true));
        assert_eq!(eval("b = 'x' AND a BETWEEN 1 AND 10", &row).unwrap(), Value::Bool(true));
        assert_eq!(eval("a IN (1, 2, '7')", &row).unwrap(), Value::Bool(true));
        let e = bind(&expr("a = 'abc'"), &table()).unwrap_err();
        assert_eq!(e.code, sqlstate::INVALID_TEXT_REPRESENTATION);
        assert_eq!(bind(&expr("zz = 1"), &table()).unwrap_err().code, sqlstate::UNDEFINED_COLUMN);
    }

    #[test]
    fn nulls_and_overflow() {
        let row = [Value::Null, Value::Text("x".into()), Value::Int8(1)];
        assert_eq!(eval("a = 1", &row).unwrap(), Value::Null);
        assert_eq!(eval("a = 1 OR b = 'x'", &row).unwrap(), Value::Bool(true));
        assert_eq!(eval("a IS NULL", &row).unwrap(), Value::Bool(true));
        let row = [Value::Int4(i32::MAX), Value::Null, Value::Int8(1)];
        let e = eval("a + 1 = 0", &row).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"));
        assert_eq!(eval("a + c > 0", &row).unwrap(), Value::Bool(true), "int4 + int8 is int8");
        assert_eq!(eval("a / 0 = 1", &row).unwrap_err().code, "22012");
    }
}
