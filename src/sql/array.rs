//! Arrays in SQL: `ARRAY[...]`, subscripts and slices, `x op ANY / ALL (array)`, the array
//! operators (`||`, `@>`, `<@`, `&&`; `=`, `<` and the rest compare arrays in
//! `expr::compare`) and functions (`array_length`, `array_lower`, `array_upper`,
//! `array_ndims`, `array_dims`, `cardinality`, `array_to_string`, `string_to_array`,
//! `array_cat`, `array_append`, `array_prepend`, `array_position(s)`, `array_remove`,
//! `array_replace`, `current_schemas`), all with PostgreSQL 15's meaning. `ARRAY(subquery)`
//! is a sublink (`exec::SubKind::Array`), `array_agg` an aggregate, `unnest` and
//! `generate_subscripts` set-returning functions (`sql::srf`).
//!
//! Each is bound into a `Scalar::Func(Func::Array(..), args, type)`.
//!
//! Invariants:
//! 1. Every array a function builds satisfies `types::array`'s invariants: its element
//!    values are of the element type of the result type (`Func`'s type), an empty result has
//!    no dimensions, and bounds stay within `i32` (2202E / 54000 otherwise).
//! 2. NULL handling is PostgreSQL's per function: the operators and most functions are
//!    strict; `array_cat`, `array_append`, `array_prepend`, `array_position(s)`,
//!    `array_remove`, `array_replace` and the 3-argument `array_to_string` /
//!    `string_to_array` take NULLs as PostgreSQL does; `ANY` / `ALL` follow three-valued logic.

use super::expr::{self, coerce, type_of, CmpOp, Scalar};
use super::func::{common_type, Func};
use crate::error::{sqlstate, PgError, Result};
use crate::types::{Array, Dim, SqlType, TypeId, Value};
use std::cmp::Ordering;

/// The array operations (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayFunc {
    /// `ARRAY[a, b, ...]`: the arguments are the elements.
    Ctor,
    /// `ARRAY[ARRAY[..], ARRAY[..]]`: a multidimensional array of the argument arrays.
    CtorNested,
    /// `a[i]`, `a[i:j]`, ...: the arguments are the array, then per subscript its index, or a
    /// slice's lower and upper bounds.
    Subscript(Shape),
    /// `x op ANY (a)` (true) or `x op ALL (a)` (false).
    AnyAll(CmpOp, bool),
    Length,
    Lower,
    Upper,
    Ndims,
    Dims,
    Cardinality,
    ToString,
    StringToArray,
    Cat,
    Append,
    Prepend,
    Position,
    Positions,
    Remove,
    Replace,
    /// `a @> b`.
    Contains,
    /// `a <@ b`.
    ContainedBy,
    /// `a && b`.
    Overlap,
    /// `current_schemas(include_implicit)`.
    CurrentSchemas,
}

/// The subscripts of one subscripting expression: how many, and which are slices (bit i for
/// subscript i) with an omitted lower or upper bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub n: u8,
    pub slices: u8,
    pub no_lower: u8,
    pub no_upper: u8,
}

/// One subscript as written.
pub enum Sub {
    Index(Scalar),
    Slice(Option<Scalar>, Option<Scalar>),
}

fn int4() -> SqlType {
    SqlType::new(TypeId::Int4)
}

fn text() -> SqlType {
    SqlType::new(TypeId::Text)
}

fn call(f: ArrayFunc, args: Vec<Scalar>, ty: SqlType) -> Scalar {
    Scalar::Func(Func::Array(f), args, ty)
}

/// The array type of elements of type `elem` (42704 if heapstore has none).
pub fn array_type_of(elem: SqlType) -> Result<SqlType> {
    if matches!(elem.id, TypeId::Record(_)) {
        return Err(PgError::feature("arrays of records are not supported by heapstore"));
    }
    elem.array_of()
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("could not find array type for data type {}", elem.name())))
}

/// `ARRAY[...]` of bound elements; `hint` is the array type the context asks for (a cast
/// `ARRAY[]::int[]`), needed when there are no elements.
pub fn bind_ctor(elems: Vec<Scalar>, hint: Option<SqlType>) -> Result<Scalar> {
    let types: Vec<Option<SqlType>> = elems.iter().map(type_of).collect();
    let hint_elem = hint.and_then(|h| h.elem());
    if elems.is_empty() {
        return match hint {
            Some(h) if h.is_array() => Ok(Scalar::Const(Value::Array(Box::new(Array::empty(h))))),
            _ => Err(PgError::new("42P18", "cannot determine type of empty array")
                .with_hint("Explicitly cast to the desired type, for example ARRAY[]::integer[].")),
        };
    }
    // Nested ARRAY[...] (or array-valued elements): a multidimensional array of the same type.
    if types.iter().flatten().any(SqlType::is_array) {
        let t = common_type(&types, "ARRAY")?.expect("an array-typed element");
        let t = if t.is_vector() { t.array_of().expect("vectors have arrays") } else { t };
        let elems = elems.into_iter().map(|e| super::func::to_type(e, Some(t))).collect::<Result<Vec<_>>>()?;
        return Ok(call(ArrayFunc::CtorNested, elems, hint.filter(SqlType::is_array).unwrap_or(t)));
    }
    let elem = match common_type(&types, "ARRAY")? {
        Some(t) => t,
        None => hint_elem.unwrap_or_else(text),
    };
    let elem = if elem.id == TypeId::Bpchar { SqlType::new(TypeId::Bpchar) } else { elem };
    let ty = array_type_of(elem)?;
    let elems = elems.into_iter().map(|e| super::func::to_type(e, Some(elem))).collect::<Result<Vec<_>>>()?;
    Ok(call(ArrayFunc::Ctor, elems, ty))
}

/// A subscript's value as an integer (`int4`; an untyped literal is read as one).
fn subscript_arg(e: Scalar) -> Result<Scalar> {
    let e = coerce(e, Some(int4()))?;
    match type_of(&e) {
        Some(t) if t.id == TypeId::Int4 => Ok(e),
        Some(t) if expr::is_num(t.id) => Ok(Scalar::Cast(Box::new(e), int4())),
        Some(t) => Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("array subscript must have type integer, not type {}", t.name()))),
        None => Ok(e),
    }
}

/// `arr[...]`: an element (all subscripts indexes) or an array (any of them a slice).
pub fn bind_subscript(arr: Scalar, subs: Vec<Sub>) -> Result<Scalar> {
    let ty = match type_of(&arr) {
        Some(t) if t.is_array() => t,
        Some(t) if t.id == crate::types::TypeId::Jsonb => {
            return Err(PgError::feature("jsonb subscripting (j['key']) is not supported by heapstore yet; use -> and #>"))
        }
        Some(t) => {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("cannot subscript type {} because it does not support subscripting", t.name()),
            ))
        }
        None => return Err(PgError::new("42804", "cannot subscript type unknown because it does not support subscripting")),
    };
    if subs.len() > crate::types::array::MAXDIM {
        return Err(PgError::new(
            sqlstate::PROGRAM_LIMIT_EXCEEDED,
            format!("number of array dimensions ({}) exceeds the maximum allowed ({})", subs.len(), crate::types::array::MAXDIM),
        ));
    }
    let mut shape = Shape { n: subs.len() as u8, slices: 0, no_lower: 0, no_upper: 0 };
    let mut args = vec![arr];
    for (i, s) in subs.into_iter().enumerate() {
        match s {
            Sub::Index(x) => args.push(subscript_arg(x)?),
            Sub::Slice(lo, hi) => {
                shape.slices |= 1 << i;
                let bound = |b: Option<Scalar>, bit: &mut u8| -> Result<Scalar> {
                    match b {
                        Some(x) => subscript_arg(x),
                        None => {
                            *bit |= 1 << i;
                            Ok(Scalar::Const(Value::Null))
                        }
                    }
                };
                args.push(bound(lo, &mut shape.no_lower)?);
                args.push(bound(hi, &mut shape.no_upper)?);
            }
        }
    }
    let result = if shape.slices != 0 { ty.array_of().expect("array types have arrays") } else { ty.elem().expect("an array type") };
    Ok(call(ArrayFunc::Subscript(shape), args, result))
}

/// `x op ANY (arr)` / `x op ALL (arr)`.
pub fn bind_any_all(op: CmpOp, any: bool, x: Scalar, arr: Scalar) -> Result<Scalar> {
    let (tx, ta) = (type_of(&x), type_of(&arr));
    let (x, arr) = match (tx, ta) {
        (_, Some(t)) if t.is_array() => (x, arr),
        (Some(t), None) => {
            let at = array_type_of(expr::base_type(Some(t)).expect("typed"))?;
            (x, coerce(arr, Some(at))?)
        }
        (None, None) => {
            let at = array_type_of(text())?;
            (coerce(x, Some(text()))?, coerce(arr, Some(at))?)
        }
        (_, Some(t)) => {
            return Err(PgError::new("42809", "op ANY/ALL (array) requires array on right side")
                .with_detail(format!("The right side is of type {}.", t.name())))
        }
    };
    let elem = type_of(&arr).and_then(|t| t.elem()).expect("array typed above");
    // The comparison is typed as `x op element`.
    let probe = expr::compare_scalars(op, x, Scalar::Cast(Box::new(Scalar::Const(Value::Null)), elem))?;
    let Scalar::Cmp(_, x, _) = probe else { unreachable!("compare_scalars gives a comparison") };
    let x = match type_of(&x) {
        Some(t) if t.id == TypeId::Bpchar => expr::unpad(*x),
        _ => *x,
    };
    Ok(call(ArrayFunc::AnyAll(op, any), vec![x, arr], SqlType::new(TypeId::Bool)))
}

/// The operators on arrays: `||` (concatenation, an element appended or prepended), `@>`,
/// `<@`, `&&`. None when neither operand is an array (another operator's business).
pub fn bind_operator(op: &sqlparser::ast::BinaryOperator, a: Scalar, b: Scalar) -> Option<Result<Scalar>> {
    use sqlparser::ast::BinaryOperator as B;
    let (ta, tb) = (type_of(&a), type_of(&b));
    let is_arr = |t: Option<SqlType>| t.is_some_and(|t| t.is_array());
    if !is_arr(ta) && !is_arr(tb) {
        return None;
    }
    let arr_of = |t: SqlType| if t.is_vector() { t.array_of().expect("vectors have arrays") } else { t };
    Some((|| match op {
        B::StringConcat => {
            match (ta, tb) {
                (Some(x), Some(y)) if x.is_array() && y.is_array() => {
                    let t = same_array_type(arr_of(x), arr_of(y), "||")?;
                    Ok(call(ArrayFunc::Cat, vec![to_array(a, t)?, to_array(b, t)?], t))
                }
                // An untyped literal next to an array is an array of the same type.
                (Some(x), None) if x.is_array() => {
                    let t = arr_of(x);
                    Ok(call(ArrayFunc::Cat, vec![to_array(a, t)?, coerce(b, Some(t))?], t))
                }
                (None, Some(y)) if y.is_array() => {
                    let t = arr_of(y);
                    Ok(call(ArrayFunc::Cat, vec![coerce(a, Some(t))?, to_array(b, t)?], t))
                }
                (Some(x), Some(e)) if x.is_array() => {
                    let t = compatible_array(arr_of(x), &[Some(e)]).ok_or_else(|| expr::no_operator("||", ta, tb))?;
                    Ok(call(ArrayFunc::Append, vec![to_array(a, t)?, elem_arg(b, e, t, "||")?], t))
                }
                (Some(e), Some(y)) => {
                    let t = compatible_array(arr_of(y), &[Some(e)]).ok_or_else(|| expr::no_operator("||", ta, tb))?;
                    Ok(call(ArrayFunc::Prepend, vec![elem_arg(a, e, t, "||")?, to_array(b, t)?], t))
                }
                _ => Err(expr::no_operator("||", ta, tb)),
            }
        }
        B::AtArrow | B::ArrowAt | B::PGOverlap => {
            let (a, b, t) = array_pair(a, b, &op.to_string())?;
            let f = match op {
                B::AtArrow => ArrayFunc::Contains,
                B::ArrowAt => ArrayFunc::ContainedBy,
                _ => ArrayFunc::Overlap,
            };
            let _ = t;
            Ok(call(f, vec![a, b], SqlType::new(TypeId::Bool)))
        }
        _ => Err(expr::no_operator(&op.to_string(), ta, tb)),
    })())
}

/// Two operands of one array type (an untyped one takes the other's).
fn array_pair(a: Scalar, b: Scalar, sym: &str) -> Result<(Scalar, Scalar, SqlType)> {
    let (ta, tb) = (type_of(&a), type_of(&b));
    let arr_of = |t: SqlType| if t.is_vector() { t.array_of().expect("vectors have arrays") } else { t };
    let t = match (ta, tb) {
        (Some(x), Some(y)) if x.is_array() && y.is_array() => same_array_type(arr_of(x), arr_of(y), sym)?,
        (Some(x), None) if x.is_array() => arr_of(x),
        (None, Some(y)) if y.is_array() => arr_of(y),
        _ => return Err(expr::no_operator(sym, ta, tb)),
    };
    Ok((to_array(coerce(a, Some(t))?, t)?, to_array(coerce(b, Some(t))?, t)?, t))
}

/// Arrays of one element type family: int2[] and int4[] meet as int4[] (`common_type`).
fn same_array_type(x: SqlType, y: SqlType, sym: &str) -> Result<SqlType> {
    if x.id == y.id {
        return Ok(SqlType::new(x.id));
    }
    let e = common_type(&[x.elem(), y.elem()], "ARRAY").map_err(|_| expr::no_operator(sym, Some(x), Some(y)))?;
    e.and_then(|e| e.array_of()).ok_or_else(|| expr::no_operator(sym, Some(x), Some(y)))
}

/// An array operand as array type `t` (a vector as its array, another element type cast).
fn to_array(e: Scalar, t: SqlType) -> Result<Scalar> {
    match type_of(&e) {
        Some(x) if x.id == t.id => Ok(e),
        Some(_) => Ok(Scalar::Cast(Box::new(e), t)),
        None => coerce(e, Some(t)),
    }
}

/// PostgreSQL 14+'s anycompatiblearray / anycompatible resolution: the array type whose
/// element type is the common type of `t`'s elements and the element arguments `elems` (an
/// integer array with a numeric element is numeric[], with a bigint bigint[]). None when they
/// have no common type.
fn compatible_array(t: SqlType, elems: &[Option<SqlType>]) -> Option<SqlType> {
    let elem = t.elem()?;
    let mut tys = vec![Some(SqlType::new(elem.id))];
    tys.extend(elems.iter().map(|e| expr::base_type(*e)));
    let c = common_type(&tys, "ARRAY").ok()??;
    if c.id == elem.id {
        return Some(t);
    }
    array_type_of(SqlType::new(c.id)).ok()
}

/// An element operand for array type `t`.
fn elem_arg(e: Scalar, et: SqlType, t: SqlType, sym: &str) -> Result<Scalar> {
    let want = t.elem().expect("array type");
    if common_type(&[Some(want), Some(et)], "ARRAY")
        .ok()
        .flatten()
        .is_none_or(|c| c.id != want.id && !(expr::is_num(c.id) && expr::is_num(want.id)))
    {
        return Err(expr::no_operator(sym, Some(t), Some(et)));
    }
    super::func::to_type(e, Some(want))
}

/// The array functions by name: None when `name` is not one of them.
pub fn bind_call(name: &str, args: Vec<Scalar>) -> Option<Result<Scalar>> {
    let f = match name {
        "array_length" => ArrayFunc::Length,
        "array_lower" => ArrayFunc::Lower,
        "array_upper" => ArrayFunc::Upper,
        "array_ndims" => ArrayFunc::Ndims,
        "array_dims" => ArrayFunc::Dims,
        "cardinality" => ArrayFunc::Cardinality,
        "array_to_string" => ArrayFunc::ToString,
        "string_to_array" => ArrayFunc::StringToArray,
        "array_cat" => ArrayFunc::Cat,
        "array_append" => ArrayFunc::Append,
        "array_prepend" => ArrayFunc::Prepend,
        "array_position" => ArrayFunc::Position,
        "array_positions" => ArrayFunc::Positions,
        "array_remove" => ArrayFunc::Remove,
        "array_replace" => ArrayFunc::Replace,
        "current_schemas" => ArrayFunc::CurrentSchemas,
        _ => return None,
    };
    Some(bind_named(f, name, args))
}

fn no_function(name: &str, args: &[Scalar]) -> PgError {
    let types: Vec<String> = args.iter().map(|a| type_of(a).map(|t| t.name()).unwrap_or_else(|| "unknown".into())).collect();
    PgError::new("42883", format!("function {name}({}) does not exist", types.join(", ")))
        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

/// The array argument of a function: typed as an array (a vector counts), or an untyped
/// literal read as `fallback`'s array (text[] when nothing says).
fn array_arg(name: &str, all: &[Scalar], a: Scalar, fallback: Option<SqlType>) -> Result<(Scalar, SqlType)> {
    match type_of(&a) {
        Some(t) if t.is_array() => Ok((a, t)),
        // An array type heapstore does not have, whose values are always NULL (`relacl`):
        // the function's answer for NULL.
        Some(t)
            if t.id == TypeId::NullArray
                && matches!(
                    name,
                    "array_to_string" | "array_length" | "array_lower" | "array_upper" | "array_ndims" | "array_dims" | "cardinality"
                ) =>
        {
            Ok((
                Scalar::Cast(Box::new(Scalar::Const(Value::Null)), SqlType::new(TypeId::Array(crate::types::ArrayElem::Text))),
                SqlType::new(TypeId::Array(crate::types::ArrayElem::Text)),
            ))
        }
        None if !matches!(a, Scalar::Const(Value::Null)) || fallback.is_some() => {
            let t = fallback.unwrap_or(array_type_of(text())?);
            Ok((coerce(a, Some(t))?, t))
        }
        _ => Err(no_function(name, all)),
    }
}

fn int_arg(name: &str, all: &[Scalar], a: Scalar) -> Result<Scalar> {
    let a = coerce(a, Some(int4()))?;
    match type_of(&a) {
        Some(t) if t.id == TypeId::Int4 => Ok(a),
        Some(t) if matches!(t.id, TypeId::Int2) => Ok(Scalar::Cast(Box::new(a), int4())),
        None => Ok(a),
        Some(_) => Err(no_function(name, all)),
    }
}

fn bind_named(f: ArrayFunc, name: &str, args: Vec<Scalar>) -> Result<Scalar> {
    let all = args.clone();
    let n = args.len();
    let mut it = args.into_iter();
    let mut next = || it.next().expect("arity checked");
    let arity = |lo: usize, hi: usize| if n < lo || n > hi { Err(no_function(name, &all)) } else { Ok(()) };
    use ArrayFunc as F;
    Ok(match f {
        F::Length | F::Lower | F::Upper => {
            arity(2, 2)?;
            let (a, _) = array_arg(name, &all, next(), None)?;
            call(f, vec![a, int_arg(name, &all, next())?], int4())
        }
        F::Ndims | F::Dims | F::Cardinality => {
            arity(1, 1)?;
            let (a, _) = array_arg(name, &all, next(), None)?;
            call(f, vec![a], if f == F::Dims { text() } else { int4() })
        }
        F::ToString => {
            arity(2, 3)?;
            let (a, _) = array_arg(name, &all, next(), None)?;
            let mut args = vec![a];
            for _ in 1..n {
                args.push(text_arg(name, &all, next())?);
            }
            call(f, args, text())
        }
        F::StringToArray => {
            arity(2, 3)?;
            let mut args = Vec::new();
            for _ in 0..n {
                args.push(text_arg(name, &all, next())?);
            }
            call(f, args, array_type_of(text())?)
        }
        F::Cat => {
            arity(2, 2)?;
            let (a, b) = (next(), next());
            let ty = match (type_of(&a), type_of(&b)) {
                (Some(x), Some(y)) if x.is_array() && y.is_array() => same_array_type(x, y, name).map_err(|_| no_function(name, &all))?,
                (Some(x), _) if x.is_array() => x,
                (_, Some(y)) if y.is_array() => y,
                _ => return Err(no_function(name, &all)),
            };
            let ty = if ty.is_vector() { ty.array_of().expect("vector") } else { ty };
            call(f, vec![to_array(a, ty)?, to_array(b, ty)?], ty)
        }
        F::Append | F::Position | F::Positions | F::Remove | F::Replace => {
            let (lo, hi) = match f {
                F::Position => (2, 3),
                F::Replace => (3, 3),
                _ => (2, 2),
            };
            arity(lo, hi)?;
            let (a, ty) = array_arg(name, &all, next(), None)?;
            let ty = if ty.is_vector() { ty.array_of().expect("vector") } else { ty };
            let elems: Vec<Scalar> = (0..if f == F::Replace { 2 } else { 1 }).map(|_| next()).collect();
            let ty = compatible_array(ty, &elems.iter().map(type_of).collect::<Vec<_>>()).ok_or_else(|| no_function(name, &all))?;
            let elem = ty.elem().expect("array");
            let mut args = vec![to_array(a, ty)?];
            for e in elems {
                args.push(elem_value(name, &all, e, elem)?);
            }
            if n == 3 && f == F::Position {
                args.push(int_arg(name, &all, next())?);
            }
            let result = match f {
                F::Position => int4(),
                F::Positions => array_type_of(int4())?,
                _ => ty,
            };
            call(f, args, result)
        }
        F::Prepend => {
            arity(2, 2)?;
            let (e, a) = (next(), next());
            let (a, ty) = array_arg(name, &all, a, None)?;
            let ty = if ty.is_vector() { ty.array_of().expect("vector") } else { ty };
            let ty = compatible_array(ty, &[type_of(&e)]).ok_or_else(|| no_function(name, &all))?;
            let elem = ty.elem().expect("array");
            call(f, vec![elem_value(name, &all, e, elem)?, to_array(a, ty)?], ty)
        }
        F::Contains | F::ContainedBy | F::Overlap | F::Ctor | F::CtorNested | F::Subscript(_) | F::AnyAll(..) => {
            return Err(PgError::internal(format!("{name} is not bound by name")))
        }
        F::CurrentSchemas => {
            arity(1, 1)?;
            let b = coerce(next(), Some(SqlType::new(TypeId::Bool)))?;
            if type_of(&b).is_some_and(|t| t.id != TypeId::Bool) {
                return Err(no_function(name, &all));
            }
            call(f, vec![b], array_type_of(SqlType::new(TypeId::Name))?)
        }
    })
}

fn text_arg(name: &str, all: &[Scalar], a: Scalar) -> Result<Scalar> {
    let a = coerce(a, Some(text()))?;
    match type_of(&a) {
        Some(t) if expr::is_text(t.id) => Ok(expr::unpad(a)),
        None => Ok(a),
        Some(_) => Err(no_function(name, all)),
    }
}

/// An element argument: the array's element type (an untyped literal read as it; a numeric
/// type converted as PostgreSQL's anyelement resolution would unify them).
fn elem_value(name: &str, all: &[Scalar], e: Scalar, elem: SqlType) -> Result<Scalar> {
    let e = coerce(e, Some(SqlType::new(elem.id)))?;
    match type_of(&e) {
        None => Ok(e),
        Some(t) if t.id == elem.id => Ok(e),
        Some(t) if (expr::is_num(t.id) && expr::is_num(elem.id)) || (expr::is_text(t.id) && expr::is_text(elem.id)) => {
            Ok(Scalar::Cast(Box::new(e), SqlType::new(elem.id)))
        }
        Some(_) => Err(no_function(name, all)),
    }
}

// ---------------------------------------------------------------------------------------
// Evaluation.

fn arr(v: &Value) -> Option<&Array> {
    match v {
        Value::Array(a) => Some(a),
        _ => None,
    }
}

fn int(v: &Value) -> Option<i64> {
    expr::as_i64(v)
}

fn equal(a: &Value, b: &Value) -> Result<bool> {
    Ok(expr::compare(a, b)? == Ordering::Equal)
}

pub(crate) fn build(ty: SqlType, dims: Vec<Dim>, items: Vec<Value>) -> Result<Value> {
    if items.is_empty() {
        return Ok(Value::Array(Box::new(Array::empty(ty))));
    }
    Array::check_dims(&dims)?;
    debug_assert_eq!(dims.iter().map(|d| d.len as usize).product::<usize>(), items.len());
    Ok(Value::Array(Box::new(Array { ty, dims, items })))
}

/// Evaluates an array operation on its argument values.
pub fn eval(f: ArrayFunc, args: &[Value], ty: &SqlType) -> Result<Value> {
    use ArrayFunc as F;
    let null = Value::Null;
    match f {
        F::Ctor => {
            let n = args.len() as i32;
            build(*ty, vec![Dim { len: n, lower: 1 }], args.to_vec())
        }
        F::CtorNested => ctor_nested(args, ty),
        F::Subscript(shape) => subscript(shape, args, ty),
        F::AnyAll(op, any) => any_all(op, any, &args[0], &args[1]),
        F::Cat => cat(&args[0], &args[1], ty),
        F::Append | F::Prepend => {
            let (a, e) = if f == F::Append { (&args[0], &args[1]) } else { (&args[1], &args[0]) };
            let Some(a) = arr(a) else {
                return build(*ty, vec![Dim { len: 1, lower: 1 }], vec![e.clone()]);
            };
            if a.ndim() > 1 {
                return Err(PgError::new(sqlstate::DATA_EXCEPTION, "argument must be empty or one-dimensional array"));
            }
            let lower = a.dims.first().map_or(1, |d| d.lower);
            let mut items = a.items.clone();
            if f == F::Append {
                items.push(e.clone());
            } else {
                items.insert(0, e.clone());
            }
            build(*ty, vec![Dim { len: items.len() as i32, lower }], items)
        }
        F::Position | F::Positions => {
            let Some(a) = arr(&args[0]) else { return Ok(null) };
            if a.ndim() > 1 {
                return Err(PgError::feature("searching for elements in multidimensional arrays is not supported"));
            }
            let lower = a.dims.first().map_or(1, |d| d.lower);
            let start = match args.get(2) {
                Some(Value::Null) => return Err(PgError::new("22004", "initial position must not be null")),
                Some(v) => int(v).unwrap_or(1),
                None => i64::from(lower),
            };
            let mut found = Vec::new();
            for (i, item) in a.items.iter().enumerate() {
                let pos = i64::from(lower) + i as i64;
                if pos < start {
                    continue;
                }
                let hit = match (item, &args[1]) {
                    (Value::Null, Value::Null) => true,
                    (Value::Null, _) | (_, Value::Null) => false,
                    (x, y) => equal(x, y)?,
                };
                if hit {
                    if f == F::Position {
                        return Ok(Value::Int4(pos as i32));
                    }
                    found.push(Value::Int4(pos as i32));
                }
            }
            if f == F::Position {
                return Ok(null);
            }
            let n = found.len() as i32;
            build(*ty, vec![Dim { len: n, lower: 1 }], found)
        }
        F::Remove | F::Replace => {
            let Some(a) = arr(&args[0]) else { return Ok(null) };
            if f == F::Remove && a.ndim() > 1 {
                return Err(PgError::feature("removing elements from multidimensional arrays is not supported"));
            }
            let mut items = Vec::with_capacity(a.items.len());
            for item in &a.items {
                let hit = match (item, &args[1]) {
                    (Value::Null, Value::Null) => true,
                    (Value::Null, _) | (_, Value::Null) => false,
                    (x, y) => equal(x, y)?,
                };
                match (hit, f) {
                    (true, F::Remove) => {}
                    (true, _) => items.push(args[2].clone()),
                    (false, _) => items.push(item.clone()),
                }
            }
            if f == F::Replace {
                return build(*ty, a.dims.clone(), items);
            }
            let lower = a.dims.first().map_or(1, |d| d.lower);
            build(*ty, vec![Dim { len: items.len() as i32, lower }], items)
        }
        F::ToString => {
            if args[0] == null || args[1] == null {
                return Ok(null);
            }
            let a = arr(&args[0]).expect("array argument");
            let sep = text_of(&args[1]);
            let null_text = args.get(2).filter(|v| **v != null).map(text_of);
            let elem = a.elem();
            let mut out = String::new();
            let mut first = true;
            for item in &a.items {
                let piece = match item {
                    Value::Null => match &null_text {
                        Some(t) => t.clone(),
                        None => continue,
                    },
                    v => v.to_text(&elem).unwrap_or_default(),
                };
                if !first {
                    out.push_str(&sep);
                }
                first = false;
                out.push_str(&piece);
            }
            Ok(Value::Text(out))
        }
        F::StringToArray => {
            if args[0] == null {
                return Ok(null);
            }
            let s = text_of(&args[0]);
            let null_text = args.get(2).filter(|v| **v != null).map(text_of);
            let pieces: Vec<String> = match &args[1] {
                _ if s.is_empty() => Vec::new(),
                Value::Null => s.chars().map(String::from).collect(),
                d => {
                    let d = text_of(d);
                    if d.is_empty() {
                        vec![s.clone()]
                    } else {
                        s.split(d.as_str()).map(str::to_string).collect()
                    }
                }
            };
            let items: Vec<Value> =
                pieces.into_iter().map(|p| if null_text.as_deref() == Some(p.as_str()) { Value::Null } else { Value::Text(p) }).collect();
            let n = items.len() as i32;
            build(*ty, vec![Dim { len: n, lower: 1 }], items)
        }
        _ if args.contains(&null) => Ok(null),
        F::Length | F::Lower | F::Upper => {
            let a = arr(&args[0]).expect("array argument");
            let Some(d) = int(&args[1]).filter(|&d| d >= 1).and_then(|d| a.dims.get(d as usize - 1)) else { return Ok(null) };
            Ok(Value::Int4(match f {
                F::Length => d.len,
                F::Lower => d.lower,
                _ => d.lower + d.len - 1,
            }))
        }
        F::Ndims => {
            let a = arr(&args[0]).expect("array argument");
            Ok(if a.dims.is_empty() { null } else { Value::Int4(a.dims.len() as i32) })
        }
        F::Dims => {
            let a = arr(&args[0]).expect("array argument");
            if a.dims.is_empty() {
                return Ok(null);
            }
            Ok(Value::Text(a.dims.iter().map(|d| format!("[{}:{}]", d.lower, d.lower + d.len - 1)).collect()))
        }
        F::Cardinality => Ok(Value::Int4(arr(&args[0]).expect("array argument").items.len() as i32)),
        F::Contains | F::ContainedBy | F::Overlap => {
            let (a, b) = (arr(&args[0]).expect("array"), arr(&args[1]).expect("array"));
            let has = |hay: &Array, x: &Value| -> Result<bool> {
                for h in &hay.items {
                    if *h != Value::Null && equal(h, x)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            };
            // Every element of `sub` (NULLs never match) is in `sup`.
            let contains = |sup: &Array, sub: &Array| -> Result<bool> {
                for x in &sub.items {
                    if *x == Value::Null || !has(sup, x)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            };
            Ok(Value::Bool(match f {
                F::Contains => contains(a, b)?,
                F::ContainedBy => contains(b, a)?,
                _ => {
                    let mut any = false;
                    for x in &a.items {
                        if *x != Value::Null && has(b, x)? {
                            any = true;
                            break;
                        }
                    }
                    any
                }
            }))
        }
        F::CurrentSchemas => {
            let implicit = args[0] == Value::Bool(true);
            let mut items = Vec::new();
            if implicit {
                // The session's temporary schema, when it has one (`func`'s binding adds it).
                if let Some(Value::Text(t)) = args.get(1) {
                    items.push(Value::Text(t.clone()));
                }
                items.push(Value::Text("pg_catalog".into()));
            }
            items.push(Value::Text("public".into()));
            let n = items.len() as i32;
            build(*ty, vec![Dim { len: n, lower: 1 }], items)
        }
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        other => other.to_text(&other.natural_type().unwrap_or(SqlType::new(TypeId::Text))).unwrap_or_default(),
    }
}

fn mismatched() -> PgError {
    PgError::new("2202E", "multidimensional arrays must have array expressions with matching dimensions")
}

/// `ARRAY[ARRAY[..], ...]`: sub-arrays with identical dimensions (all empty: empty).
fn ctor_nested(args: &[Value], ty: &SqlType) -> Result<Value> {
    let mut inner: Option<&Vec<Dim>> = None;
    let mut items = Vec::new();
    let mut empties = 0;
    for v in args {
        let Some(a) = arr(v) else { return Err(mismatched()) };
        if a.items.is_empty() {
            empties += 1;
            continue;
        }
        match inner {
            None => inner = Some(&a.dims),
            Some(d) if *d == a.dims => {}
            Some(_) => return Err(mismatched()),
        }
        items.extend(a.items.iter().cloned());
    }
    let Some(inner) = inner else {
        return Ok(Value::Array(Box::new(Array::empty(*ty))));
    };
    if empties > 0 {
        return Err(mismatched());
    }
    if inner.len() + 1 > crate::types::array::MAXDIM {
        return Err(PgError::new(
            sqlstate::PROGRAM_LIMIT_EXCEEDED,
            format!("number of array dimensions ({}) exceeds the maximum allowed ({})", inner.len() + 1, crate::types::array::MAXDIM),
        ));
    }
    let mut dims = vec![Dim { len: args.len() as i32, lower: 1 }];
    dims.extend(inner.iter().copied());
    build(*ty, dims, items)
}

/// `a[i][j]` / `a[i:j]`: NULL for a NULL array or subscript, or an index out of range (or
/// fewer indexes than dimensions); slices are clamped to the array and give lower bound 1.
fn subscript(shape: Shape, args: &[Value], ty: &SqlType) -> Result<Value> {
    let Some(a) = arr(&args[0]) else { return Ok(Value::Null) };
    let n = shape.n as usize;
    // (lower, upper) per subscript; an index i is i..i, or 1..i when any subscript is a slice.
    let mut bounds = Vec::with_capacity(n);
    let mut k = 1;
    for i in 0..n {
        let bit = 1u8 << i;
        if shape.slices & bit != 0 {
            let lo = &args[k];
            let hi = &args[k + 1];
            k += 2;
            let d = a.dims.get(i);
            let lo = if shape.no_lower & bit != 0 {
                d.map_or(1, |d| i64::from(d.lower))
            } else {
                match int(lo) {
                    Some(v) => v,
                    None => return Ok(Value::Null),
                }
            };
            let hi = if shape.no_upper & bit != 0 {
                d.map_or(0, |d| i64::from(d.lower) + i64::from(d.len) - 1)
            } else {
                match int(hi) {
                    Some(v) => v,
                    None => return Ok(Value::Null),
                }
            };
            bounds.push((Some(lo), hi));
        } else {
            let Some(v) = int(&args[k]) else { return Ok(Value::Null) };
            k += 1;
            bounds.push((None, v));
        }
    }
    if shape.slices == 0 {
        // An element: exactly one index per dimension.
        if n != a.dims.len() {
            return Ok(Value::Null);
        }
        let mut offset: i64 = 0;
        for (d, &(_, i)) in a.dims.iter().zip(&bounds) {
            let rel = i - i64::from(d.lower);
            if rel < 0 || rel >= i64::from(d.len) {
                return Ok(Value::Null);
            }
            offset = offset * i64::from(d.len) + rel;
        }
        return Ok(a.items[offset as usize].clone());
    }
    // A slice: subscripts beyond the array's dimensions, or an empty array, give {}.
    if a.items.is_empty() || n > a.dims.len() {
        return Ok(Value::Array(Box::new(Array::empty(*ty))));
    }
    let mut ranges = Vec::with_capacity(a.dims.len());
    for (i, d) in a.dims.iter().enumerate() {
        let (first, last) = (i64::from(d.lower), i64::from(d.lower) + i64::from(d.len) - 1);
        let (lo, hi) = match bounds.get(i) {
            Some(&(Some(lo), hi)) => (lo, hi),
            Some(&(None, hi)) => (1, hi),
            None => (first, last),
        };
        let (lo, hi) = (lo.max(first), hi.min(last));
        if lo > hi {
            return Ok(Value::Array(Box::new(Array::empty(*ty))));
        }
        ranges.push((lo - first, hi - first));
    }
    let dims: Vec<Dim> = ranges.iter().map(|&(lo, hi)| Dim { len: (hi - lo + 1) as i32, lower: 1 }).collect();
    let mut items = Vec::new();
    let mut idx: Vec<i64> = ranges.iter().map(|r| r.0).collect();
    loop {
        let mut offset: i64 = 0;
        for (d, &i) in a.dims.iter().zip(&idx) {
            offset = offset * i64::from(d.len) + i;
        }
        items.push(a.items[offset as usize].clone());
        let mut j = idx.len();
        loop {
            if j == 0 {
                return build(*ty, dims, items);
            }
            j -= 1;
            if idx[j] < ranges[j].1 {
                idx[j] += 1;
                break;
            }
            idx[j] = ranges[j].0;
        }
    }
}

/// `x op ANY/ALL (a)` with three-valued logic.
fn any_all(op: CmpOp, any: bool, x: &Value, a: &Value) -> Result<Value> {
    let Some(a) = arr(a) else { return Ok(Value::Null) };
    if a.items.is_empty() {
        return Ok(Value::Bool(!any));
    }
    if *x == Value::Null {
        return Ok(Value::Null);
    }
    let mut saw_null = false;
    for item in &a.items {
        if *item == Value::Null {
            saw_null = true;
            continue;
        }
        let holds = op.holds(expr::compare(x, item)?);
        if holds == any {
            return Ok(Value::Bool(any));
        }
    }
    Ok(if saw_null { Value::Null } else { Value::Bool(!any) })
}

/// `array_cat` / `array || array`: NULL and empty operands give the other; arrays of the
/// same number of dimensions are joined along the first (the others must match); an array
/// of one dimension fewer is appended or prepended as one more slice.
fn cat(a: &Value, b: &Value, ty: &SqlType) -> Result<Value> {
    let (x, y) = match (arr(a), arr(b)) {
        (None, None) => return Ok(Value::Null),
        (Some(x), None) => return Ok(Value::Array(Box::new(Array { ty: *ty, ..x.clone() }))),
        (None, Some(y)) => return Ok(Value::Array(Box::new(Array { ty: *ty, ..y.clone() }))),
        (Some(x), Some(y)) => (x, y),
    };
    if x.items.is_empty() {
        return Ok(Value::Array(Box::new(Array { ty: *ty, ..y.clone() })));
    }
    if y.items.is_empty() {
        return Ok(Value::Array(Box::new(Array { ty: *ty, ..x.clone() })));
    }
    let incompatible = |d: &str| PgError::new("2202E", "cannot concatenate incompatible arrays").with_detail(d.to_string());
    let mut items = x.items.clone();
    let dims = if x.ndim() == y.ndim() {
        if x.dims[1..].iter().map(|d| d.len).ne(y.dims[1..].iter().map(|d| d.len)) {
            return Err(incompatible("Arrays with differing element dimensions are not compatible for concatenation."));
        }
        items.extend(y.items.iter().cloned());
        let mut d = x.dims.clone();
        d[0].len += y.dims[0].len;
        d
    } else if x.ndim() == y.ndim() + 1 {
        if x.dims[1..].iter().map(|d| d.len).ne(y.dims.iter().map(|d| d.len)) {
            return Err(incompatible("Arrays with differing dimensions are not compatible for concatenation."));
        }
        items.extend(y.items.iter().cloned());
        let mut d = x.dims.clone();
        d[0].len += 1;
        d
    } else if x.ndim() + 1 == y.ndim() {
        if y.dims[1..].iter().map(|d| d.len).ne(x.dims.iter().map(|d| d.len)) {
            return Err(incompatible("Arrays with differing dimensions are not compatible for concatenation."));
        }
        items = x.items.clone();
        items.extend(y.items.iter().cloned());
        // The outer array keeps its bounds, one element longer (array_cat does not move
        // the lower bound as array_prepend of an element does).
        let mut d = y.dims.clone();
        d[0].len += 1;
        d
    } else {
        return Err(incompatible(&format!("Arrays of {} and {} dimensions are not compatible for concatenation.", x.ndim(), y.ndim())));
    };
    build(*ty, dims, items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(ty: SqlType, s: &str) -> Value {
        Value::Array(Box::new(crate::types::array::parse_text(&ty, s).unwrap()))
    }

    fn out(v: &Value) -> String {
        v.to_text(&v.natural_type().unwrap()).unwrap_or_else(|| "NULL".into())
    }

    #[test]
    fn subscripts_and_slices_answer_as_postgres() {
        let t = SqlType::new(TypeId::Array(crate::types::ArrayElem::Int4));
        let e = SqlType::new(TypeId::Int4);
        let m = a(t, "{{1,2},{3,4}}");
        let idx = |v: &Value, subs: &[i64]| {
            let shape = Shape { n: subs.len() as u8, slices: 0, no_lower: 0, no_upper: 0 };
            let mut args = vec![v.clone()];
            args.extend(subs.iter().map(|&i| Value::Int4(i as i32)));
            subscript(shape, &args, &e).unwrap()
        };
        assert_eq!(idx(&m, &[1]), Value::Null);
        assert_eq!(idx(&m, &[2, 1]), Value::Int4(3));
        assert_eq!(idx(&m, &[3, 1]), Value::Null);
        let slice = |v: &Value, lo: Option<i32>, hi: Option<i32>| {
            let shape = Shape { n: 1, slices: 1, no_lower: u8::from(lo.is_none()), no_upper: u8::from(hi.is_none()) };
            let args = vec![v.clone(), lo.map_or(Value::Null, Value::Int4), hi.map_or(Value::Null, Value::Int4)];
            out(&subscript(shape, &args, &t).unwrap())
        };
        let v = a(t, "{1,2,3}");
        assert_eq!(slice(&v, Some(2), None), "{2,3}");
        assert_eq!(slice(&v, None, Some(2)), "{1,2}");
        assert_eq!(slice(&v, Some(0), Some(1)), "{1}");
        assert_eq!(slice(&v, Some(5), Some(6)), "{}");
        assert_eq!(slice(&a(t, "[5:7]={1,2,3}"), Some(5), Some(6)), "{1,2}");
        assert_eq!(slice(&m, Some(1), Some(1)), "{{1,2}}");
    }

    #[test]
    fn concatenation_keeps_postgres_bounds() {
        let t = SqlType::new(TypeId::Array(crate::types::ArrayElem::Int4));
        assert_eq!(out(&cat(&a(t, "{{1,2}}"), &a(t, "{3,4}"), &t).unwrap()), "{{1,2},{3,4}}");
        assert_eq!(out(&cat(&a(t, "[5:5]={1}"), &a(t, "{2}"), &t).unwrap()), "[5:6]={1,2}");
        assert_eq!(out(&eval(ArrayFunc::Prepend, &[Value::Int4(0), a(t, "[3:4]={1,2}")], &t).unwrap()), "[3:5]={0,1,2}");
        assert_eq!(out(&eval(ArrayFunc::Append, &[Value::Null, Value::Int4(1)], &t).unwrap()), "{1}");
        assert!(cat(&a(t, "{{1,2}}"), &a(t, "{3}"), &t).is_err());
    }

    #[test]
    fn any_and_all_use_three_valued_logic() {
        let t = SqlType::new(TypeId::Array(crate::types::ArrayElem::Int4));
        assert_eq!(any_all(CmpOp::Eq, true, &Value::Int4(1), &a(t, "{2,NULL}")).unwrap(), Value::Null);
        assert_eq!(any_all(CmpOp::Eq, true, &Value::Int4(2), &a(t, "{2,NULL}")).unwrap(), Value::Bool(true));
        assert_eq!(any_all(CmpOp::Ne, false, &Value::Int4(1), &a(t, "{}")).unwrap(), Value::Bool(true));
        assert_eq!(any_all(CmpOp::Eq, true, &Value::Null, &a(t, "{1}")).unwrap(), Value::Null);
        assert_eq!(any_all(CmpOp::Eq, true, &Value::Int4(1), &Value::Null).unwrap(), Value::Null);
    }
}
