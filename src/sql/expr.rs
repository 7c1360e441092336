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
    fn holds(self, o: Ordering) -> bool {
        match self {
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::Ne => o != Ordering::Equal,
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Ge => o != Ordering::Less,
        }
    }

    fn sym(self) -> &'static str {
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
    /// A decimal literal (`2.5`, `1e3`): `numeric` in PostgreSQL, which heapstore does not
    /// have. It compares and combines with floats as a float8 (PostgreSQL converts numeric to
    /// float8 there too); cast or assigned to an integer it rounds half away from zero, as
    /// numeric does; numeric arithmetic (with integers or other decimals) is refused.
    Decimal(String),
}

fn undefined_column(name: &str) -> PgError {
    PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{name}\" does not exist"))
}

fn no_operator(op: &str, a: Option<SqlType>, b: Option<SqlType>) -> PgError {
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

fn is_int(t: TypeId) -> bool {
    matches!(t, TypeId::Int2 | TypeId::Int4 | TypeId::Int8)
}
fn is_num(t: TypeId) -> bool {
    is_int(t) || matches!(t, TypeId::Float4 | TypeId::Float8)
}
fn is_text(t: TypeId) -> bool {
    matches!(t, TypeId::Text | TypeId::Varchar | TypeId::Bpchar)
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
                _ => TypeId::Float8,
            }))
        }
        Scalar::Concat(..) => Some(SqlType::new(TypeId::Text)),
        Scalar::Neg(a) => type_of(a),
        Scalar::Cast(_, t) => Some(*t),
        Scalar::Decimal(_) => Some(SqlType::new(TypeId::Float8)),
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
fn coerce(e: Scalar, ty: Option<SqlType>) -> Result<Scalar> {
    let Some(ty) = ty else { return Ok(e) };
    Ok(match e {
        Scalar::Unknown(s) => Scalar::Const(parse_as(&ty, &s)?),
        Scalar::Param(n, None) => Scalar::Param(n, Some(ty)),
        other => other,
    })
}

/// Binds a pair of operands: an untyped one takes the other's type.
fn bind_pair(a: Scalar, b: Scalar) -> Result<(Scalar, Scalar)> {
    let (ta, tb) = (type_of(&a), type_of(&b));
    let b = if tb.is_none() { coerce(b, ta)? } else { b };
    let a = if ta.is_none() { coerce(a, tb)? } else { a };
    Ok((a, b))
}

/// Binds `e` against `table`'s columns.
pub fn bind(e: &Expr, table: &Table) -> Result<Scalar> {
    Ok(match e {
        Expr::Identifier(id) => {
            let n = fold_ident(id);
            let i = table.column_index(&n).ok_or_else(|| undefined_column(&n))?;
            Scalar::Col(i, table.columns[i].ty)
        }
        Expr::CompoundIdentifier(ids) if ids.len() == 2 => {
            let (t, c) = (fold_ident(&ids[0]), fold_ident(&ids[1]));
            if t != table.name {
                return Err(PgError::new(sqlstate::UNDEFINED_TABLE, format!("missing FROM-clause entry for table \"{t}\"")));
            }
            let i = table.column_index(&c).ok_or_else(|| undefined_column(&format!("{t}.{c}")))?;
            Scalar::Col(i, table.columns[i].ty)
        }
        Expr::Value(v) => literal(&v.value)?,
        Expr::Nested(inner) => bind(inner, table)?,
        Expr::UnaryOp { op: UnaryOperator::Not, expr } => {
            Scalar::Not(Box::new(coerce(bind(expr, table)?, Some(SqlType::new(TypeId::Bool)))?))
        }
        Expr::UnaryOp { op: UnaryOperator::Minus, expr } => match bind(expr, table)? {
            Scalar::Const(Value::Int4(v)) => Scalar::Const(Value::Int4(-v)),
            Scalar::Const(Value::Int8(v)) => {
                // -2147483648 is written as minus 2147483648, which alone needs int8.
                let n = -v;
                i32::try_from(n).map(Value::Int4).map(Scalar::Const).unwrap_or(Scalar::Const(Value::Int8(n)))
            }
            Scalar::Const(Value::Float8(v)) => Scalar::Const(Value::Float8(-v)),
            Scalar::Decimal(d) => Scalar::Decimal(match d.strip_prefix('-') {
                Some(pos) => pos.to_string(),
                None => format!("-{d}"),
            }),
            other => Scalar::Neg(Box::new(other)),
        },
        Expr::UnaryOp { op: UnaryOperator::Plus, expr } => bind(expr, table)?,
        Expr::Cast { kind: CastKind::Cast | CastKind::DoubleColon, expr, data_type, format: None } => {
            let ty = crate::sql::ddl::sql_type(data_type)?;
            match bind(expr, table)? {
                // A literal or parameter of unknown type is read with the target type's input
                // function, as PostgreSQL does (`'2024-02-29'::date`, `$1::integer`).
                Scalar::Unknown(t) => Scalar::Const(parse_as(&ty, &t)?),
                Scalar::Param(n, None) => Scalar::Param(n, Some(ty)),
                Scalar::Const(Value::Null) => Scalar::Cast(Box::new(Scalar::Const(Value::Null)), ty),
                Scalar::Decimal(d) => Scalar::Const(decimal_as(&d, &ty)?),
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
            AstValue::SingleQuotedString(t) => Scalar::Const(parse_as(&crate::sql::ddl::sql_type(&ts.data_type)?, t)?),
            other => return Err(PgError::feature(format!("typed literal not supported: {other}"))),
        },
        Expr::IsNull(x) => Scalar::IsNull(Box::new(bind(x, table)?), false),
        Expr::IsNotNull(x) => Scalar::IsNull(Box::new(bind(x, table)?), true),
        Expr::Between { expr, negated, low, high } => {
            let x = bind(expr, table)?;
            let (x1, lo) = bind_pair(x.clone(), bind(low, table)?)?;
            let (x2, hi) = bind_pair(x, bind(high, table)?)?;
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
            let x = bind(expr, table)?;
            let tx = type_of(&x);
            let mut items = Vec::with_capacity(list.len());
            for l in list {
                let b = coerce(bind(l, table)?, tx)?;
                items.push(b);
            }
            Scalar::InList(Box::new(x), items, *negated)
        }
        Expr::BinaryOp { left, op, right } => {
            let (a, b) = (bind(left, table)?, bind(right, table)?);
            let cmp = |o: CmpOp| -> Result<Scalar> {
                let (a, b) = bind_pair(a.clone(), b.clone())?;
                check_comparable(&a, &b, o.sym())?;
                Ok(Scalar::Cmp(o, Box::new(a), Box::new(b)))
            };
            let arith = |o: ArithOp, sym: &str| -> Result<Scalar> {
                let (a, b) = bind_pair(a.clone(), b.clone())?;
                let (ta, tb) = (type_of(&a), type_of(&b));
                // A decimal literal makes the operation numeric unless the other side is a
                // float (PostgreSQL then computes in float8, as heapstore does).
                let float = |x: &Scalar, t: Option<SqlType>| {
                    !matches!(x, Scalar::Decimal(_)) && t.is_some_and(|t| matches!(t.id, TypeId::Float4 | TypeId::Float8))
                };
                if (matches!(a, Scalar::Decimal(_)) && !float(&b, tb)) || (matches!(b, Scalar::Decimal(_)) && !float(&a, ta)) {
                    return Err(PgError::feature(format!(
                        "numeric arithmetic is not supported by heapstore yet ({a_} {sym} {b_} is numeric in PostgreSQL)",
                        a_ = left,
                        b_ = right
                    )));
                }
                let ok = |t: Option<SqlType>| t.is_none_or(|t| is_num(t.id));
                if !ok(ta) || !ok(tb) {
                    return Err(no_operator(sym, ta, tb));
                }
                Ok(Scalar::Arith(o, Box::new(a), Box::new(b)))
            };
            let boolean = |a: Scalar, b: Scalar| -> Result<(Box<Scalar>, Box<Scalar>)> {
                let bt = Some(SqlType::new(TypeId::Bool));
                Ok((Box::new(coerce(a, bt)?), Box::new(coerce(b, bt)?)))
            };
            match op {
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
                BinaryOperator::StringConcat => Scalar::Concat(Box::new(a), Box::new(b)),
                BinaryOperator::And => {
                    let (a, b) = boolean(a, b)?;
                    Scalar::And(a, b)
                }
                BinaryOperator::Or => {
                    let (a, b) = boolean(a, b)?;
                    Scalar::Or(a, b)
                }
                other => return Err(PgError::feature(format!("operator {other} is not supported"))),
            }
        }
        other => return Err(PgError::feature(format!("expression not supported: {other}"))),
    })
}

/// A decimal literal read as `ty`, as PostgreSQL's numeric converts: to an integer rounding
/// half away from zero (22003 out of range), to a float by parsing, to a text type as its
/// digits; other targets fail as their input function does.
pub fn decimal_as(d: &str, ty: &SqlType) -> Result<Value> {
    if is_int(ty.id) {
        let f: f64 = d.parse().map_err(|_| PgError::syntax(format!("invalid number: {d}")))?;
        let r = f.round();
        if !r.is_finite() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
            return Err(out_of_range(ty.id));
        }
        // f64 rounding of the decimal text: exact for the digits a literal written as
        // `x.5` has (halves are exact in binary), and for any integer part below 2^53.
        return int_value(ty.id, r as i64);
    }
    if matches!(ty.id, TypeId::Float4 | TypeId::Float8) {
        return parse_as(ty, d);
    }
    parse_as(ty, &numeric_text(d)?)
}

/// How PostgreSQL's numeric prints a decimal literal written without an exponent: leading
/// zeros of the integer part dropped (one kept), the fraction as written (`00.50` is `0.50`,
/// `-.5` is `-0.5`). A literal with an exponent is refused (heapstore has no numeric yet).
pub fn numeric_text(d: &str) -> Result<String> {
    if d.contains(['e', 'E']) {
        return Err(PgError::feature(format!("numeric constants with an exponent are not supported by heapstore yet: {d}")));
    }
    let (neg, body) = match d.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, d.strip_prefix('+').unwrap_or(d)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let zero = int == "0" && frac.bytes().all(|b| b == b'0');
    let mut out = String::with_capacity(d.len() + 1);
    if neg && !zero {
        out.push('-');
    }
    out.push_str(int);
    if body.contains('.') {
        out.push('.');
        out.push_str(frac);
    }
    Ok(out)
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
fn castable(from: &SqlType, to: &SqlType) -> bool {
    use TypeId::*;
    let (f, t) = (from.id, to.id);
    f == t
        || (is_num(f) && is_num(t))
        || matches!((f, t), (Int4, Bool) | (Bool, Int4) | (Date, Timestamp) | (Timestamp, Date))
        || is_text(f)
        || is_text(t)
}

fn check_castable(from: &SqlType, to: &SqlType) -> Result<()> {
    if castable(from, to) {
        Ok(())
    } else {
        Err(PgError::new("42846", format!("cannot cast type {} to {}", from.name(), to.name())))
    }
}

const USECS_PER_DAY: i64 = 86_400_000_000;

/// Casts a non-NULL value to `to` (a pair [`castable`] allows).
fn cast_value(v: Value, to: &SqlType) -> Result<Value> {
    use TypeId::*;
    let Some(from) = value_type(&v) else { return Ok(Value::Null) };
    check_castable(&from, to)?;
    Ok(match (&v, to.id) {
        (_, t) if is_text(t) => {
            let text = v.to_text(&from).unwrap_or_default();
            parse_as(to, &text)?
        }
        (Value::Text(s), _) => parse_as(to, s)?,
        (Value::Bool(b), Int4) => Value::Int4(i32::from(*b)),
        (_, Bool) => Value::Bool(as_i64(&v).unwrap_or(0) != 0),
        (Value::Date(d), Timestamp) => Value::Timestamp(match *d {
            i32::MIN => i64::MIN,
            i32::MAX => i64::MAX,
            d => i64::from(d) * USECS_PER_DAY,
        }),
        (Value::Timestamp(u), Date) => Value::Date(match *u {
            i64::MIN => i32::MIN,
            i64::MAX => i32::MAX,
            u => i32::try_from(u.div_euclid(USECS_PER_DAY)).map_err(|_| PgError::new("22008", "date out of range"))?,
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

fn check_comparable(a: &Scalar, b: &Scalar, sym: &str) -> Result<()> {
    let (ta, tb) = (type_of(a), type_of(b));
    let (Some(x), Some(y)) = (ta, tb) else { return Ok(()) };
    let ok = x.id == y.id
        || (is_num(x.id) && is_num(y.id))
        || (is_text(x.id) && is_text(y.id))
        || (matches!(x.id, TypeId::Date | TypeId::Timestamp) && matches!(y.id, TypeId::Date | TypeId::Timestamp));
    if ok {
        Ok(())
    } else {
        Err(no_operator(sym, ta, tb))
    }
}

fn literal(v: &AstValue) -> Result<Scalar> {
    Ok(match v {
        AstValue::Number(n, _) => {
            if let Ok(i) = n.parse::<i32>() {
                Scalar::Const(Value::Int4(i))
            } else if let Ok(i) = n.parse::<i64>() {
                Scalar::Const(Value::Int8(i))
            } else if n.bytes().all(|b| b.is_ascii_digit()) {
                // An integer too large for bigint is numeric in PostgreSQL.
                return Err(PgError::feature(format!("numeric constants are not supported by heapstore yet: {n}")));
            } else {
                n.parse::<f64>().map_err(|_| PgError::syntax(format!("invalid number: {n}")))?;
                Scalar::Decimal(n.clone())
            }
        }
        AstValue::SingleQuotedString(s) | AstValue::EscapedStringLiteral(s) => Scalar::Unknown(s.clone()),
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

fn out_of_range(t: TypeId) -> PgError {
    let what = match t {
        TypeId::Int2 => "smallint",
        TypeId::Int4 => "integer",
        _ => "bigint",
    };
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, format!("{what} out of range"))
}

fn int_value(t: TypeId, v: i64) -> Result<Value> {
    match t {
        TypeId::Int2 => i16::try_from(v).map(Value::Int2).map_err(|_| out_of_range(t)),
        TypeId::Int4 => i32::try_from(v).map(Value::Int4).map_err(|_| out_of_range(t)),
        _ => Ok(Value::Int8(v)),
    }
}

fn as_i64(v: &Value) -> Option<i64> {
    match *v {
        Value::Int2(x) => Some(x.into()),
        Value::Int4(x) => Some(x.into()),
        Value::Int8(x) => Some(x),
        _ => None,
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match *v {
        Value::Float4(x) => Some(x.into()),
        Value::Float8(x) => Some(x),
        _ => as_i64(v).map(|i| i as f64),
    }
}

/// Compares two non-NULL values of comparable types.
pub fn compare(a: &Value, b: &Value) -> Result<Ordering> {
    Ok(match (a, b) {
        (Value::Text(x), Value::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Bytea(x), Value::Bytea(y)) => x.cmp(y),
        (Value::Date(x), Value::Date(y)) => x.cmp(y),
        (Value::Timestamp(x), Value::Timestamp(y)) => x.cmp(y),
        (Value::Date(d), Value::Timestamp(t)) => (i64::from(*d) * 86_400_000_000).cmp(t),
        (Value::Timestamp(t), Value::Date(d)) => t.cmp(&(i64::from(*d) * 86_400_000_000)),
        _ => {
            if let (Some(x), Some(y)) = (as_i64(a), as_i64(b)) {
                x.cmp(&y)
            } else if let (Some(x), Some(y)) = (as_f64(a), as_f64(b)) {
                x.total_cmp(&y)
            } else {
                return Err(no_operator("=", value_type(a), value_type(b)));
            }
        }
    })
}

fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

impl Scalar {
    /// Evaluates against a row (`row[i]` = column i; columns not needed may be NULL) and the
    /// statement's parameters (text, None = NULL).
    pub fn eval(&self, row: &[Value], params: &[Option<String>]) -> Result<Value> {
        Ok(match self {
            Scalar::Col(i, _) => row[*i].clone(),
            Scalar::Const(v) => v.clone(),
            Scalar::Unknown(s) => Value::Text(s.clone()),
            Scalar::Decimal(d) => Value::Float8(d.parse().unwrap_or(f64::NAN)),
            Scalar::Param(n, ty) => match params.get(n - 1) {
                None => return Err(PgError::new(sqlstate::UNDEFINED_PARAMETER_NUMBER, format!("there is no parameter ${n}"))),
                Some(None) => Value::Null,
                Some(Some(t)) => match ty {
                    Some(ty) => parse_as(ty, t)?,
                    None => Value::Text(t.clone()),
                },
            },
            Scalar::Arith(op, a, b) => {
                let (x, y) = (a.eval(row, params)?, b.eval(row, params)?);
                if x == Value::Null || y == Value::Null {
                    return Ok(Value::Null);
                }
                arith(*op, &x, &y, type_of(self).map(|t| t.id).unwrap_or(TypeId::Float8))?
            }
            Scalar::Concat(a, b) => {
                let (x, y) = (a.eval(row, params)?, b.eval(row, params)?);
                match (x.to_text(&SqlType::new(TypeId::Text)), y.to_text(&SqlType::new(TypeId::Text))) {
                    (Some(x), Some(y)) => Value::Text(x + &y),
                    _ => Value::Null,
                }
            }
            Scalar::Cast(a, ty) => cast_value(a.eval(row, params)?, ty)?,
            Scalar::Neg(a) => match a.eval(row, params)? {
                Value::Null => Value::Null,
                Value::Int2(v) => v.checked_neg().map(Value::Int2).ok_or_else(|| out_of_range(TypeId::Int2))?,
                Value::Int4(v) => v.checked_neg().map(Value::Int4).ok_or_else(|| out_of_range(TypeId::Int4))?,
                Value::Int8(v) => v.checked_neg().map(Value::Int8).ok_or_else(|| out_of_range(TypeId::Int8))?,
                Value::Float4(v) => Value::Float4(-v),
                Value::Float8(v) => Value::Float8(-v),
                other => {
                    return Err(PgError::new(
                        "42883",
                        format!("operator does not exist: - {}", value_type(&other).map(|t| t.name()).unwrap_or_default()),
                    ))
                }
            },
            Scalar::Cmp(op, a, b) => {
                let (x, y) = (a.eval(row, params)?, b.eval(row, params)?);
                if x == Value::Null || y == Value::Null {
                    return Ok(Value::Null);
                }
                Value::Bool(op.holds(compare(&x, &y)?))
            }
            Scalar::And(a, b) => {
                let x = truth(&a.eval(row, params)?);
                if x == Some(false) {
                    return Ok(Value::Bool(false));
                }
                match (x, truth(&b.eval(row, params)?)) {
                    (_, Some(false)) => Value::Bool(false),
                    (Some(true), Some(true)) => Value::Bool(true),
                    _ => Value::Null,
                }
            }
            Scalar::Or(a, b) => {
                let x = truth(&a.eval(row, params)?);
                if x == Some(true) {
                    return Ok(Value::Bool(true));
                }
                match (x, truth(&b.eval(row, params)?)) {
                    (_, Some(true)) => Value::Bool(true),
                    (Some(false), Some(false)) => Value::Bool(false),
                    _ => Value::Null,
                }
            }
            Scalar::Not(a) => match truth(&a.eval(row, params)?) {
                Some(b) => Value::Bool(!b),
                None => Value::Null,
            },
            Scalar::IsNull(a, negated) => Value::Bool((a.eval(row, params)? == Value::Null) != *negated),
            Scalar::InList(a, items, negated) => {
                let x = a.eval(row, params)?;
                if x == Value::Null {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                for it in items {
                    let y = it.eval(row, params)?;
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
            Scalar::Col(..) | Scalar::Const(_) | Scalar::Unknown(_) | Scalar::Param(..) | Scalar::Decimal(_) => {}
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

fn arith(op: ArithOp, x: &Value, y: &Value, result: TypeId) -> Result<Value> {
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
    let (a, b) = (
        as_f64(x).ok_or_else(|| no_operator("+", value_type(x), value_type(y)))?,
        as_f64(y).ok_or_else(|| no_operator("+", value_type(x), value_type(y)))?,
    );
    let v = match op {
        ArithOp::Add => a + b,
        ArithOp::Sub => a - b,
        ArithOp::Mul => a * b,
        ArithOp::Div => {
            if b == 0.0 {
                return Err(PgError::new("22012", "division by zero"));
            }
            a / b
        }
        ArithOp::Mod => a % b,
    };
    Ok(Value::Float8(v))
}

/// Converts `v` to the stored form of a column of type `ty` (assignment: INSERT values and
/// UPDATE SET). Integers are range-checked; anything else goes through the column type's
/// input function on the value's text form.
pub fn store(v: &Value, ty: &SqlType, out: &mut Vec<u8>) -> Result<()> {
    out.clear();
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
    let text = v.to_text(&value_type(v).unwrap_or(SqlType::new(TypeId::Text))).unwrap_or_default();
    ty.input_text(&text, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Column, Persistence};
    use crate::storage::RelFileNumber;

    fn table() -> Table {
        let col = |n: &str, id| Column { name: n.into(), ty: SqlType::new(id), not_null: false };
        Table {
            oid: 1,
            name: "t".into(),
            columns: vec![col("a", TypeId::Int4), col("b", TypeId::Text), col("c", TypeId::Int8)],
            relfile: RelFileNumber(1),
            toast_relfile: None,
            persistence: Persistence::Permanent,
            indexes: vec![],
        }
    }

    fn expr(sql: &str) -> Expr {
        let d = sqlparser::dialect::PostgreSqlDialect {};
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
