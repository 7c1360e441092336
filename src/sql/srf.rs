//! Set-returning functions: `generate_series`, `unnest`, `generate_subscripts`,
//! `pg_partition_ancestors`, `information_schema._pg_expandarray` and the jsonb ones
//! (`jsonb_array_elements[_text]`, `jsonb_object_keys`, `jsonb_each[_text]`), in FROM (a function scan, `exec::Node::Function`,
//! with column aliases, `WITH ORDINALITY` and several `unnest` arguments zipped) and in the
//! select list (`exec::Node::ProjectSet`: the functions of one select list advance in
//! lockstep, a shorter one padded with NULLs, and an input row whose functions all return no
//! row gives no output row, as PostgreSQL 10 and later do).
//!
//! Invariants:
//! 1. A call's rows all have [`SrfCall::width`] values, of [`SrfCall::types`].
//! 2. A NULL argument gives no rows (the functions are strict), except `unnest`'s and
//!    `_pg_expandarray`'s NULL array, which is no rows too; `generate_series` with a zero
//!    step fails (22023).
//! 3. Rows are produced on demand: a consumer that answers `Stop` ends the series, so
//!    `generate_series(1, 1e9) LIMIT 3` does not build a billion rows.

use super::expr::{self, coerce, type_of, Scalar};
use crate::access::heap::Flow;
use crate::error::{PgError, Result};
use crate::types::{Numeric, SqlType, TypeId, Value};

/// The set-returning functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrfFunc {
    /// generate_series over int4, int8 or numeric (the type in `types[0]`).
    GenerateSeries,
    /// unnest(array): its elements in storage order.
    Unnest,
    /// generate_subscripts(array, dim [, reverse]).
    GenerateSubscripts,
    /// information_schema._pg_expandarray(array): (x element, n position from 1).
    ExpandArray,
    /// pg_partition_ancestors(regclass): a partition's ancestors and itself; heapstore has no
    /// partitions, so no rows (what PostgreSQL returns for a relation that is not one).
    PartitionAncestors,
    /// jsonb_array_elements / jsonb_array_elements_text (`text`): an array's elements.
    JsonbElements { text: bool },
    /// jsonb_object_keys: an object's keys in jsonb's key order.
    JsonbKeys,
    /// jsonb_each / jsonb_each_text (`text`): an object's (key, value) pairs.
    JsonbEach { text: bool },
    /// jsonb_to_record (one row from an object) / jsonb_to_recordset (`set`: one row per
    /// object of an array), its columns named and typed by the FROM item's column definition
    /// list: each the object's value of that key, NULL when absent (PostgreSQL's
    /// populate_record rules, [`record_field`]).
    JsonbToRecord { set: bool },
    /// regexp_split_to_table(string, pattern [, flags]): the pieces between matches
    /// (`sql::regexp`).
    RegexpSplit,
    /// regexp_matches(string, pattern [, flags]): each match (the first, or all with `g`) as
    /// a one-element text[] (a pattern without subexpressions).
    RegexpMatches,
}

/// A bound call.
#[derive(Clone, Debug)]
pub struct SrfCall {
    pub func: SrfFunc,
    pub args: Vec<Scalar>,
    /// The types of the values of each row (one column; `_pg_expandarray` in FROM: two).
    pub types: Vec<SqlType>,
    /// The function's name (EXPLAIN, column names).
    pub name: &'static str,
    /// The column definition list's names (jsonb_to_record[set]: the keys read).
    pub columns: Option<Vec<String>>,
}

impl SrfCall {
    pub fn width(&self) -> usize {
        self.types.len()
    }
}

/// Whether `name` (without schema) is a set-returning function heapstore has.
pub fn is_srf(name: &str) -> bool {
    matches!(
        name,
        "generate_series"
            | "unnest"
            | "generate_subscripts"
            | "_pg_expandarray"
            | "pg_partition_ancestors"
            | "jsonb_array_elements"
            | "jsonb_array_elements_text"
            | "jsonb_object_keys"
            | "jsonb_each"
            | "jsonb_each_text"
            | "jsonb_to_record"
            | "jsonb_to_recordset"
            | "regexp_split_to_table"
            | "regexp_matches"
    )
}

fn no_function(name: &str, args: &[Scalar]) -> PgError {
    let types: Vec<String> = args.iter().map(|a| type_of(a).map(|t| t.name()).unwrap_or_else(|| "unknown".into())).collect();
    PgError::new("42883", format!("function {name}({}) does not exist", types.join(", ")))
        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

fn int4() -> SqlType {
    SqlType::new(TypeId::Int4)
}

/// The array argument (a vector counts; an untyped literal is refused, as PostgreSQL cannot
/// tell its type: 42P18... 42725 there, "could not determine polymorphic type").
fn array_arg(name: &str, all: &[Scalar], a: Scalar) -> Result<(Scalar, SqlType)> {
    match type_of(&a) {
        Some(t) if t.is_array() => Ok((a, t)),
        None if !matches!(a, Scalar::Const(Value::Null)) => Err(PgError::new("42725", format!("function {name}(unknown) is not unique"))
            .with_hint("Could not choose a best candidate function. You might need to add explicit type casts.")),
        _ => Err(no_function(name, all)),
    }
}

/// Binds a set-returning call. `record`: the select-list form of `_pg_expandarray`, one
/// record-typed column; otherwise one column per field.
pub fn bind(name: &str, args: Vec<Scalar>, record: bool) -> Result<SrfCall> {
    let all = args.clone();
    let (func, args, types, name): (SrfFunc, Vec<Scalar>, Vec<SqlType>, &'static str) = match name {
        "generate_series" => {
            if !(2..=3).contains(&args.len()) {
                return Err(no_function(name, &all));
            }
            // Timestamps with an interval step: timestamp when the bounds are timestamps,
            // else timestamptz (dates and untyped bounds, as PostgreSQL resolves them).
            let datetime = |a: &Scalar| type_of(a).is_some_and(|t| matches!(t.id, TypeId::Timestamp | TypeId::Timestamptz | TypeId::Date));
            let interval_step = args.get(2).is_some_and(|a| type_of(a).is_some_and(|t| t.id == TypeId::Interval));
            if args.len() == 3 && (datetime(&args[0]) || datetime(&args[1]) || interval_step) {
                let bound = |a: &Scalar| type_of(a).map(|t| t.id);
                // timestamp when a bound is one and neither is timestamptz (a date beside a
                // timestamp is cast to it); otherwise timestamptz.
                let bounds = [bound(&args[0]), bound(&args[1])];
                let all_ts = bounds.contains(&Some(TypeId::Timestamp)) && !bounds.contains(&Some(TypeId::Timestamptz));
                let t = SqlType::new(if all_ts { TypeId::Timestamp } else { TypeId::Timestamptz });
                let mut it = args.into_iter();
                let mut conv = |ty: SqlType| -> Result<Scalar> {
                    let a = it.next().expect("three arguments");
                    match type_of(&a).map(|x| x.id) {
                        None => coerce(a, Some(ty)),
                        Some(x) if x == ty.id => Ok(a),
                        Some(TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz) if ty.id != TypeId::Interval => {
                            Ok(Scalar::Cast(Box::new(a), ty))
                        }
                        Some(_) => Err(no_function(name, &all)),
                    }
                };
                let args = vec![conv(t)?, conv(t)?, conv(SqlType::new(TypeId::Interval))?];
                return Ok(SrfCall { func: SrfFunc::GenerateSeries, args, types: vec![t], name: "generate_series", columns: None });
            }
            // int4 unless an argument is int8 (then int8) or numeric (then numeric).
            let mut ty = TypeId::Int4;
            for a in &args {
                match type_of(a).map(|t| t.id) {
                    None | Some(TypeId::Int2 | TypeId::Int4) => {}
                    Some(TypeId::Int8) if ty != TypeId::Numeric => ty = TypeId::Int8,
                    Some(TypeId::Int8) => {}
                    Some(TypeId::Numeric) => ty = TypeId::Numeric,
                    Some(TypeId::Float4 | TypeId::Float8) => ty = TypeId::Numeric,
                    Some(_) => return Err(no_function(name, &all)),
                }
            }
            // Only smallints (and untyped literals): the integer and bigint forms fit alike.
            if args.iter().any(|a| type_of(a).is_some()) && args.iter().all(|a| type_of(a).is_none_or(|x| x.id == TypeId::Int2)) {
                let shown: Vec<String> = args.iter().map(|a| type_of(a).map(|t| t.name()).unwrap_or_else(|| "unknown".into())).collect();
                return Err(PgError::new("42725", format!("function {name}({}) is not unique", shown.join(", ")))
                    .with_hint("Could not choose a best candidate function. You might need to add explicit type casts."));
            }
            let t = SqlType::new(ty);
            if args.iter().any(|a| type_of(a).is_some_and(|x| matches!(x.id, TypeId::Float4 | TypeId::Float8))) {
                return Err(no_function(name, &all));
            }
            let args = args.into_iter().map(|a| super::func::to_type(coerce(a, Some(t))?, Some(t))).collect::<Result<Vec<_>>>()?;
            (SrfFunc::GenerateSeries, args, vec![t], "generate_series")
        }
        "unnest" => {
            if args.len() != 1 {
                return Err(no_function(name, &all));
            }
            let (a, t) = array_arg(name, &all, args.into_iter().next().expect("one"))?;
            (SrfFunc::Unnest, vec![a], vec![t.elem().expect("array")], "unnest")
        }
        "generate_subscripts" => {
            if !(2..=3).contains(&args.len()) {
                return Err(no_function(name, &all));
            }
            let mut it = args.into_iter();
            let (a, _) = array_arg(name, &all, it.next().expect("two"))?;
            let dim = coerce(it.next().expect("two"), Some(int4()))?;
            if type_of(&dim).is_some_and(|t| !expr::is_int(t.id)) {
                return Err(no_function(name, &all));
            }
            let mut args = vec![a, super::func::to_type(dim, Some(int4()))?];
            if let Some(r) = it.next() {
                let r = coerce(r, Some(SqlType::new(TypeId::Bool)))?;
                if type_of(&r).is_some_and(|t| t.id != TypeId::Bool) {
                    return Err(no_function(name, &all));
                }
                args.push(r);
            }
            (SrfFunc::GenerateSubscripts, args, vec![int4()], "generate_subscripts")
        }
        "_pg_expandarray" => {
            if args.len() != 1 {
                return Err(no_function(name, &all));
            }
            let (a, t) = array_arg(name, &all, args.into_iter().next().expect("one"))?;
            let elem = t.elem().expect("array");
            let e = crate::types::ArrayElem::of(elem.id).ok_or_else(|| no_function(name, &all))?;
            let types =
                if record { vec![SqlType::new(TypeId::Record(crate::types::RecordKind::ExpandArray(e)))] } else { vec![elem, int4()] };
            (SrfFunc::ExpandArray, vec![a], types, "_pg_expandarray")
        }
        "pg_partition_ancestors" => {
            if args.len() != 1 {
                return Err(no_function(name, &all));
            }
            let a = args.into_iter().next().expect("one");
            match (&a, type_of(&a).map(|t| t.id)) {
                (_, Some(TypeId::Regclass | TypeId::Oid)) => {}
                // psql passes the relation's OID as a literal.
                (Scalar::Unknown(t), None) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {}
                _ => return Err(PgError::feature("pg_partition_ancestors of a relation name is not supported by heapstore: pass its OID")),
            }
            (SrfFunc::PartitionAncestors, vec![a], vec![SqlType::new(TypeId::Regclass)], "pg_partition_ancestors")
        }
        "jsonb_array_elements" | "jsonb_array_elements_text" | "jsonb_object_keys" | "jsonb_each" | "jsonb_each_text" => {
            let [a] = <[Scalar; 1]>::try_from(args).map_err(|_| no_function(name, &all))?;
            let jsonb = SqlType::new(TypeId::Jsonb);
            let a = match type_of(&a) {
                None => coerce(a, Some(jsonb))?,
                Some(t) if t.id == TypeId::Jsonb => a,
                Some(_) => return Err(no_function(name, &all)),
            };
            let text = name.ends_with("_text");
            let value = SqlType::new(if text { TypeId::Text } else { TypeId::Jsonb });
            match name {
                "jsonb_array_elements" => (SrfFunc::JsonbElements { text }, vec![a], vec![value], "jsonb_array_elements"),
                "jsonb_array_elements_text" => (SrfFunc::JsonbElements { text }, vec![a], vec![value], "jsonb_array_elements_text"),
                "jsonb_object_keys" => (SrfFunc::JsonbKeys, vec![a], vec![SqlType::new(TypeId::Text)], "jsonb_object_keys"),
                _ => {
                    let types = if record {
                        vec![SqlType::new(TypeId::Record(crate::types::RecordKind::JsonbEach { text }))]
                    } else {
                        vec![SqlType::new(TypeId::Text), value]
                    };
                    (SrfFunc::JsonbEach { text }, vec![a], types, if text { "jsonb_each_text" } else { "jsonb_each" })
                }
            }
        }
        "regexp_split_to_table" | "regexp_matches" => {
            if !(2..=3).contains(&args.len()) {
                return Err(no_function(name, &all));
            }
            let text = SqlType::new(TypeId::Text);
            let args = args
                .into_iter()
                .map(|a| match type_of(&a) {
                    None => coerce(a, Some(text)),
                    Some(t) if matches!(t.id, TypeId::Text | TypeId::Varchar | TypeId::Name) => Ok(a),
                    Some(t) if t.id == TypeId::Bpchar => Ok(expr::unpad(a)),
                    Some(_) => Err(no_function(name, &all)),
                })
                .collect::<Result<Vec<_>>>()?;
            if name == "regexp_split_to_table" {
                (SrfFunc::RegexpSplit, args, vec![text], "regexp_split_to_table")
            } else {
                (SrfFunc::RegexpMatches, args, vec![text.array_of().expect("text[]")], "regexp_matches")
            }
        }
        // Typed by a column definition list in FROM (`query::function_scan`); elsewhere
        // PostgreSQL cannot type them either.
        "jsonb_to_record" | "jsonb_to_recordset" => {
            return Err(PgError::feature(format!("could not determine row type for result of {name}"))
                .with_hint("Provide a non-null record argument, or call the function in the FROM clause using a column definition list."))
        }
        other => return Err(PgError::feature(format!("function {other}() in FROM is not supported by heapstore"))),
    };
    Ok(SrfCall { func, args, types, name, columns: None })
}

/// A jsonb_to_record[set] call with its column definition list (name, type): the argument
/// must be jsonb (an untyped literal is read as jsonb).
pub fn bind_to_record(name: &str, args: Vec<Scalar>, names: Vec<String>, types: Vec<SqlType>) -> Result<SrfCall> {
    let all = args.clone();
    let [a] = <[Scalar; 1]>::try_from(args).map_err(|_| no_function(name, &all))?;
    let a = match type_of(&a) {
        None => coerce(a, Some(SqlType::new(TypeId::Jsonb)))?,
        Some(t) if t.id == TypeId::Jsonb => a,
        Some(_) => return Err(no_function(name, &all)),
    };
    for t in &types {
        // A JSON array into an array column (populate_array) is not built.
        if t.is_array() {
            return Err(PgError::feature(format!("an array column in {name}'s column definition list is not supported by heapstore")));
        }
    }
    let set = name == "jsonb_to_recordset";
    let name = if set { "jsonb_to_recordset" } else { "jsonb_to_record" };
    Ok(SrfCall { func: SrfFunc::JsonbToRecord { set }, args: vec![a], types, name, columns: Some(names) })
}

/// One column of jsonb_to_record's row (populate_record_field): JSON null or no value is
/// NULL; a json or jsonb column takes the value as it is; any other type reads the value's
/// text (a string unescaped, anything else as jsonb prints it) with its input function and
/// the column's modifier, as an assignment would (22P02 for `1.5` into integer, 22001 for a
/// string too long for varchar(n)).
fn record_field(v: Option<&crate::types::jsonb::Jsonb>, ty: &SqlType) -> Result<Value> {
    use crate::types::jsonb::Jsonb;
    let Some(v) = v.filter(|v| !matches!(v, Jsonb::Null)) else { return Ok(Value::Null) };
    match ty.id {
        TypeId::Jsonb => Ok(Value::Jsonb(v.to_text())),
        TypeId::Json => Ok(Value::Json(v.to_text())),
        _ => {
            let text = v.as_text().unwrap_or_default();
            expr::parse_as(ty, &text)
        }
    }
}

/// `generate_series(start, stop, step interval)` over timestamps: each value plus the step
/// (`timestamp_pl_interval`), while not past `stop` in the step's direction.
fn timestamp_series(tz: bool, args: &[Value], each: &mut dyn FnMut(Vec<Value>) -> Result<Flow>) -> Result<Flow> {
    let ts = |v: &Value| match *v {
        Value::Timestamp(t) | Value::Timestamptz(t) => Ok(t),
        ref other => Err(PgError::internal(format!("a timestamp was expected, not {other:?}"))),
    };
    let (mut cur, stop) = (ts(&args[0])?, ts(&args[1])?);
    let Value::Interval(step) = args[2] else { return Err(PgError::internal("an interval step was expected")) };
    let sign = step.span().signum();
    if sign == 0 {
        return Err(PgError::new("22023", "step size cannot equal zero"));
    }
    let mut made = 0u32;
    while (sign > 0 && cur <= stop) || (sign < 0 && cur >= stop) {
        made = made.wrapping_add(1);
        if made % 4096 == 0 {
            crate::interrupt::check_for_interrupts()?;
        }
        if let Flow::Stop = each(vec![if tz { Value::Timestamptz(cur) } else { Value::Timestamp(cur) }])? {
            return Ok(Flow::Stop);
        }
        cur = crate::types::interval::plus(cur, &step, tz)?;
    }
    Ok(Flow::Continue)
}

/// The column names of a call in FROM without a column alias list (`_pg_expandarray`: x, n).
pub fn column_names(call: &SrfCall) -> Vec<String> {
    match call.func {
        SrfFunc::ExpandArray if call.types.len() == 2 => vec!["x".into(), "n".into()],
        SrfFunc::JsonbEach { .. } if call.types.len() == 2 => vec!["key".into(), "value".into()],
        SrfFunc::JsonbElements { .. } => vec!["value".into()],
        _ => vec![call.name.to_string()],
    }
}

/// Produces the rows of `call` for its evaluated arguments, each to `each` (which may
/// answer `Stop`).
pub fn rows(call: &SrfCall, args: &[Value], each: &mut dyn FnMut(Vec<Value>) -> Result<Flow>) -> Result<Flow> {
    let record = matches!(call.types.first().map(|t| t.id), Some(TypeId::Record(_)));
    match call.func {
        SrfFunc::GenerateSeries => {
            if args.contains(&Value::Null) {
                return Ok(Flow::Continue);
            }
            if call.types[0].id == TypeId::Numeric {
                return numeric_series(args, each);
            }
            if matches!(call.types[0].id, TypeId::Timestamp | TypeId::Timestamptz) {
                return timestamp_series(call.types[0].id == TypeId::Timestamptz, args, each);
            }
            let n = |v: &Value| expr::as_i64(v).unwrap_or(0);
            let (start, stop) = (n(&args[0]), n(&args[1]));
            let step = args.get(2).map_or(1, n);
            if step == 0 {
                return Err(PgError::new("22023", "step size cannot equal zero"));
            }
            let int4 = call.types[0].id == TypeId::Int4;
            let mut cur = start;
            let mut made = 0u32;
            while (step > 0 && cur <= stop) || (step < 0 && cur >= stop) {
                // A long series is a long statement: a cancel request or statement_timeout
                // stops it (checked every 4,096 rows).
                made = made.wrapping_add(1);
                if made % 4096 == 0 {
                    crate::interrupt::check_for_interrupts()?;
                }
                let v = if int4 { Value::Int4(cur as i32) } else { Value::Int8(cur) };
                if let Flow::Stop = each(vec![v])? {
                    return Ok(Flow::Stop);
                }
                let Some(next) = cur.checked_add(step) else { break };
                // int4's series stops where int4 would overflow, as PostgreSQL's does.
                if int4 && i32::try_from(next).is_err() {
                    break;
                }
                cur = next;
            }
            Ok(Flow::Continue)
        }
        SrfFunc::PartitionAncestors => Ok(Flow::Continue),
        SrfFunc::RegexpSplit | SrfFunc::RegexpMatches => {
            if args.contains(&Value::Null) {
                return Ok(Flow::Continue);
            }
            let text = |v: &Value| match v {
                Value::Text(s) => s.clone(),
                _ => String::new(),
            };
            let (s, pattern) = (text(&args[0]), text(&args[1]));
            let split = call.func == SrfFunc::RegexpSplit;
            let flags = super::regexp::flags(&args.get(2).map(text).unwrap_or_default(), split.then_some("regexp_split_to_table"))?;
            let re = super::regexp::compiled(&pattern, flags.ci)?;
            if split {
                for piece in re.split(&s)? {
                    if let Flow::Stop = each(vec![Value::Text(piece.to_string())])? {
                        return Ok(Flow::Stop);
                    }
                }
                return Ok(Flow::Continue);
            }
            for (a, b) in re.matches(&s, 0, flags.global, false)? {
                let groups = re.groups(&s, a, b, "regexp_matches")?;
                let items = super::regexp::Match { whole: (a, b), groups }.elements(&s);
                let m = super::array::build(call.types[0], vec![crate::types::array::Dim { len: items.len() as i32, lower: 1 }], items)?;
                if let Flow::Stop = each(vec![m])? {
                    return Ok(Flow::Stop);
                }
            }
            Ok(Flow::Continue)
        }
        SrfFunc::JsonbElements { .. } | SrfFunc::JsonbKeys | SrfFunc::JsonbEach { .. } => jsonb_rows(call, args, record, each),
        SrfFunc::JsonbToRecord { set } => {
            use crate::types::jsonb::{self, Jsonb};
            let bad = |m: String| PgError::new(crate::error::sqlstate::INVALID_PARAMETER_VALUE, m);
            let doc = match &args[0] {
                Value::Jsonb(d) => jsonb::parse_stored(d),
                // jsonb_to_record(NULL) is one row of NULLs; the set form, no rows.
                _ if set => return Ok(Flow::Continue),
                _ => return each(vec![Value::Null; call.types.len()]),
            };
            let names = call.columns.as_deref().unwrap_or(&[]);
            let row_of =
                |obj: &Jsonb| -> Result<Vec<Value>> { call.types.iter().zip(names).map(|(t, n)| record_field(obj.field(n), t)).collect() };
            match (&doc, set) {
                (Jsonb::Object(_), false) => each(row_of(&doc)?),
                (Jsonb::Array(_), false) => Err(bad("cannot call populate_composite on an array".into())),
                (_, false) => Err(bad("cannot call populate_composite on a scalar".into())),
                (Jsonb::Array(items), true) => {
                    for item in items {
                        if !matches!(item, Jsonb::Object(_)) {
                            return Err(bad("argument of jsonb_to_recordset must be an array of objects".into()));
                        }
                        if let Flow::Stop = each(row_of(item)?)? {
                            return Ok(Flow::Stop);
                        }
                    }
                    Ok(Flow::Continue)
                }
                (_, true) => Err(bad("cannot call jsonb_to_recordset on a non-array".into())),
            }
        }
        SrfFunc::Unnest => {
            let Value::Array(a) = &args[0] else { return Ok(Flow::Continue) };
            for v in &a.items {
                if let Flow::Stop = each(vec![v.clone()])? {
                    return Ok(Flow::Stop);
                }
            }
            Ok(Flow::Continue)
        }
        SrfFunc::GenerateSubscripts => {
            let (Value::Array(a), Some(dim)) = (&args[0], expr::as_i64(&args[1])) else { return Ok(Flow::Continue) };
            let reverse = args.get(2) == Some(&Value::Bool(true));
            if args.get(2) == Some(&Value::Null) {
                return Ok(Flow::Continue);
            }
            let Some(d) = usize::try_from(dim).ok().filter(|&d| d >= 1).and_then(|d| a.dims.get(d - 1)) else { return Ok(Flow::Continue) };
            let (lo, hi) = (d.lower, d.lower + d.len - 1);
            let mut i = if reverse { hi } else { lo };
            for _ in 0..d.len {
                if let Flow::Stop = each(vec![Value::Int4(i)])? {
                    return Ok(Flow::Stop);
                }
                i = if reverse { i - 1 } else { i + 1 };
            }
            Ok(Flow::Continue)
        }
        SrfFunc::ExpandArray => {
            // PostgreSQL's body: `select $1[s], s - array_lower($1,1) + 1 from
            // generate_series(array_lower($1,1), array_upper($1,1), 1) as g(s)`.
            let Value::Array(a) = &args[0] else { return Ok(Flow::Continue) };
            let Some(d) = a.dims.first() else { return Ok(Flow::Continue) };
            for k in 0..d.len {
                let x = if a.dims.len() == 1 { a.items[k as usize].clone() } else { Value::Null };
                let n = Value::Int4(k + 1);
                let row = if record {
                    vec![Value::Record(Box::new(crate::types::Record { ty: call.types[0], fields: vec![x, n] }))]
                } else {
                    vec![x, n]
                };
                if let Flow::Stop = each(row)? {
                    return Ok(Flow::Stop);
                }
            }
            Ok(Flow::Continue)
        }
    }
}

/// The rows of the jsonb set-returning functions (NULL input: no rows), with PostgreSQL's
/// errors for a document of the wrong kind.
fn jsonb_rows(call: &SrfCall, args: &[Value], record: bool, each: &mut dyn FnMut(Vec<Value>) -> Result<Flow>) -> Result<Flow> {
    use crate::types::jsonb::{self, Jsonb};
    let Value::Jsonb(doc) = &args[0] else { return Ok(Flow::Continue) };
    let doc = jsonb::parse_stored(doc);
    let bad = |m: String| Err(PgError::new(crate::error::sqlstate::INVALID_PARAMETER_VALUE, m));
    let as_value = |v: &Jsonb, text: bool| if text { v.as_text().map_or(Value::Null, Value::Text) } else { Value::Jsonb(v.to_text()) };
    let mut rows: Vec<Vec<Value>> = Vec::new();
    match (call.func, &doc) {
        (SrfFunc::JsonbElements { text }, Jsonb::Array(items)) => rows.extend(items.iter().map(|v| vec![as_value(v, text)])),
        (SrfFunc::JsonbElements { .. }, Jsonb::Object(_)) => return bad("cannot extract elements from an object".into()),
        (SrfFunc::JsonbElements { .. }, _) => return bad("cannot extract elements from a scalar".into()),
        (SrfFunc::JsonbKeys, Jsonb::Object(pairs)) => rows.extend(pairs.iter().map(|(k, _)| vec![Value::Text(k.clone())])),
        (SrfFunc::JsonbKeys, Jsonb::Array(_)) => return bad("cannot call jsonb_object_keys on an array".into()),
        (SrfFunc::JsonbKeys, _) => return bad("cannot call jsonb_object_keys on a scalar".into()),
        (SrfFunc::JsonbEach { text }, Jsonb::Object(pairs)) => {
            for (k, v) in pairs {
                let fields = vec![Value::Text(k.clone()), as_value(v, text)];
                rows.push(if record { vec![Value::Record(Box::new(crate::types::Record { ty: call.types[0], fields }))] } else { fields });
            }
        }
        (SrfFunc::JsonbEach { .. }, _) => return bad(format!("cannot call {} on a non-object", call.name)),
        _ => return Ok(Flow::Continue),
    }
    for row in rows {
        if let Flow::Stop = each(row)? {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

fn numeric_series(args: &[Value], each: &mut dyn FnMut(Vec<Value>) -> Result<Flow>) -> Result<Flow> {
    let num = |v: &Value| -> Result<Numeric> {
        match v {
            Value::Numeric(n) => Ok(n.clone()),
            other => Ok(Numeric::from_i64(expr::as_i64(other).unwrap_or(0))),
        }
    };
    let (start, stop) = (num(&args[0])?, num(&args[1])?);
    let step = match args.get(2) {
        Some(v) => num(v)?,
        None => Numeric::from_i64(1),
    };
    let special = |n: &Numeric| n.is_nan() || n.is_infinite();
    if special(&start) || special(&stop) || special(&step) {
        let which = if start.is_nan() || stop.is_nan() || step.is_nan() { "NaN" } else { "infinity" };
        let arg = if special(&start) {
            "start"
        } else if special(&stop) {
            "stop"
        } else {
            "step size"
        };
        return Err(PgError::new("22023", format!("{arg} value cannot be {which}")));
    }
    let zero = Numeric::zero();
    let up = match step.cmp(&zero) {
        std::cmp::Ordering::Equal => return Err(PgError::new("22023", "step size cannot equal zero")),
        o => o == std::cmp::Ordering::Greater,
    };
    let mut cur = start;
    let mut made = 0u32;
    while (up && cur <= stop) || (!up && cur >= stop) {
        made = made.wrapping_add(1);
        if made % 4096 == 0 {
            crate::interrupt::check_for_interrupts()?;
        }
        if let Flow::Stop = each(vec![Value::Numeric(cur.clone())])? {
            return Ok(Flow::Stop);
        }
        cur = cur.add(&step)?;
    }
    Ok(Flow::Continue)
}
