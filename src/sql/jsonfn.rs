//! The json and jsonb operators and functions (`types::json`, `types::jsonb` hold the
//! values): `->`, `->>`, `#>`, `#>>` on both types; on jsonb also `@>`, `<@`, `?`, `?|`,
//! `?&`, `||` and `-`; `jsonb_typeof` / `json_typeof`, `jsonb_array_length` /
//! `json_array_length`, `jsonb_extract_path[_text]` / `json_extract_path[_text]`,
//! `jsonb_strip_nulls`, `jsonb_pretty`, `to_jsonb`, `to_json`, `jsonb_build_object`,
//! `jsonb_build_array`, `jsonb_set`, `jsonb_insert`, and `#-` (delete at a path).
//!
//! Operator resolution follows PostgreSQL's for an untyped operand: the key of `->` / `->>`
//! and `?` is text (an integer literal is already an integer); the path of `#>` / `#>>` and
//! the keys of `?|` / `?&` are `text[]`; the other side of `@>`, `<@` and `||` is jsonb; of
//! `-` text. `jsonb || text` is the text concatenation PostgreSQL picks (not handled here).
//!
//! Invariants:
//! 1. Every function is strict (NULL in, NULL out) except `jsonb_build_object` and
//!    `jsonb_build_array`, whose NULL arguments are JSON nulls (a NULL key is an error).
//! 2. json operators answer with the original text of the part they select (white space and
//!    repeated keys kept; `->` finds the last of a repeated key); jsonb operators with
//!    canonical jsonb.
//! 3. An operator on json or jsonb that is not listed is refused when bound (42883 where
//!    PostgreSQL has no such operator, 0A000 where heapstore lacks it).

use super::expr::{self, coerce, is_int, is_text, type_of, Scalar};
use super::func::Func;
use crate::error::{sqlstate, PgError, Result};
use crate::types::json::{self, Node, NodeKind};
use crate::types::jsonb::{self, Jsonb};
use crate::types::{ArrayElem, SqlType, TypeId, Value};
use sqlparser::ast::BinaryOperator;

/// The json / jsonb operations; `jsonb`: which of the two types the first operand is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonFunc {
    /// `->` (`text`: `->>`) with a text key (`index`: false) or an integer index.
    Get {
        jsonb: bool,
        text: bool,
        index: bool,
    },
    /// `#>` (`text`: `#>>`) and `json[b]_extract_path[_text]` (a variadic path).
    Path {
        jsonb: bool,
        text: bool,
        variadic: bool,
    },
    Contains,
    ContainedBy,
    /// `?`.
    Exists,
    /// `?|` (`all`: false) and `?&`.
    ExistsAnyAll {
        all: bool,
    },
    Concat,
    /// `-` a text key, a text[] of keys, an integer index.
    Delete(u8),
    Typeof {
        jsonb: bool,
    },
    ArrayLength {
        jsonb: bool,
    },
    StripNulls,
    Pretty,
    ToJsonb,
    /// `to_json(anyelement)`: the value as json text (PostgreSQL's datum_to_json).
    ToJson,
    /// `row_to_json(record [, pretty])` (row: true) and `array_to_json(anyarray [, pretty])`:
    /// to_json's text, with `,\n ` between top-level fields or elements when pretty.
    ToJsonPretty {
        row: bool,
    },
    BuildObject,
    BuildArray,
    /// `jsonb_set(target, path, new_value [, create_if_missing])`.
    Set,
    /// `jsonb_insert(target, path, new_value [, insert_after])`.
    Insert,
    /// `#-`: the document without the value at a path.
    DeletePath,
}

fn jsonb_t() -> SqlType {
    SqlType::new(TypeId::Jsonb)
}

fn text_array() -> SqlType {
    SqlType::new(TypeId::Array(ArrayElem::Text))
}

fn is_json(t: Option<SqlType>) -> Option<bool> {
    match t?.id {
        TypeId::Json => Some(false),
        TypeId::Jsonb => Some(true),
        _ => None,
    }
}

fn call(f: JsonFunc, args: Vec<Scalar>, ty: SqlType) -> Scalar {
    Scalar::Func(Func::Json(f), args, ty)
}

/// An operand that must be `ty`: an untyped one is read as it; a typed one must be it.
fn operand(sym: &str, ta: Option<SqlType>, tb: Option<SqlType>, e: Scalar, ty: SqlType) -> Result<Scalar> {
    match type_of(&e) {
        None => coerce(e, Some(ty)),
        Some(t) if t.id == ty.id => Ok(e),
        Some(t) if is_text(t.id) && is_text(ty.id) => Ok(expr::unpad(e)),
        Some(t) if t.is_array() && ty.is_array() && t.elem().is_some_and(|e| is_text(e.id)) => Ok(e),
        Some(_) => Err(expr::no_operator(sym, ta, tb)),
    }
}

/// Binds a binary operator with a json or jsonb operand; `None` when neither side is one
/// (or for `||` with a typed text side, which is text concatenation).
pub fn bind_operator(op: &BinaryOperator, a: Scalar, b: Scalar) -> Option<Result<Scalar>> {
    use BinaryOperator as B;
    let (ta, tb) = (type_of(&a), type_of(&b));
    let left = is_json(ta);
    if left.is_none() && is_json(tb).is_none() {
        // A parameter of no known type left of a json-only operator: its declared type is not
        // known here, and json and jsonb answer differently, so it must be cast.
        // `?` exists for jsonb only: an untyped literal left of it is jsonb (`?|` has geometric
        // forms too, so PostgreSQL finds two candidates there).
        // `#-` too: `jsonb #- text[]` is its only form.
        if matches!(op, B::Question | B::HashMinus) && matches!(a, Scalar::Unknown(_)) {
            return match coerce(a, Some(jsonb_t())) {
                Ok(a) => bind_operator(op, a, b),
                Err(e) => Some(Err(e)),
            };
        }
        let json_only =
            matches!(op, B::Arrow | B::LongArrow | B::HashArrow | B::HashLongArrow | B::Question | B::QuestionPipe | B::QuestionAnd);
        if matches!(op, B::HashMinus) {
            return Some(Err(expr::no_operator("#-", ta, tb)));
        }
        if json_only && matches!(a, Scalar::Param(_, None)) {
            return Some(Err(PgError::feature(format!(
                "a parameter of unknown type left of {op} is not supported by heapstore: cast it ($n::jsonb or $n::json)"
            ))));
        }
        return None;
    }
    let sym = op.to_string();
    let no_op = || Err(expr::no_operator(&sym, ta, tb));
    let jsonb_only = |f: JsonFunc, b_ty: SqlType, ret: SqlType| -> Result<Scalar> {
        if left != Some(true) {
            return no_op();
        }
        Ok(call(f, vec![a.clone(), operand(&sym, ta, tb, b.clone(), b_ty)?], ret))
    };
    Some(match op {
        B::Arrow | B::LongArrow => {
            let Some(jsonb) = left else { return Some(no_op()) };
            let text = matches!(op, B::LongArrow);
            let ret = if text { SqlType::new(TypeId::Text) } else { ta.unwrap_or(jsonb_t()) };
            match tb {
                Some(t) if matches!(t.id, TypeId::Int2 | TypeId::Int4) => {
                    Ok(call(JsonFunc::Get { jsonb, text, index: true }, vec![a, b], ret))
                }
                Some(t) if is_int(t.id) => no_op(),
                _ => operand(&sym, ta, tb, b, SqlType::new(TypeId::Text))
                    .map(|b| call(JsonFunc::Get { jsonb, text, index: false }, vec![a, b], ret)),
            }
        }
        B::HashArrow | B::HashLongArrow => {
            let Some(jsonb) = left else { return Some(no_op()) };
            let text = matches!(op, B::HashLongArrow);
            let ret = if text { SqlType::new(TypeId::Text) } else { ta.unwrap_or(jsonb_t()) };
            operand(&sym, ta, tb, b, text_array()).map(|b| call(JsonFunc::Path { jsonb, text, variadic: false }, vec![a, b], ret))
        }
        B::AtArrow | B::ArrowAt => {
            // Both sides jsonb (an untyped one read as jsonb); json has no containment.
            if is_json(ta) == Some(false) || is_json(tb) == Some(false) {
                return Some(no_op());
            }
            let f = if matches!(op, B::AtArrow) { JsonFunc::Contains } else { JsonFunc::ContainedBy };
            (|| Ok(call(f, vec![operand(&sym, ta, tb, a.clone(), jsonb_t())?, operand(&sym, ta, tb, b.clone(), jsonb_t())?], bool_t())))()
        }
        B::Question => jsonb_only(JsonFunc::Exists, SqlType::new(TypeId::Text), bool_t()),
        B::QuestionPipe => jsonb_only(JsonFunc::ExistsAnyAll { all: false }, text_array(), bool_t()),
        B::QuestionAnd => jsonb_only(JsonFunc::ExistsAnyAll { all: true }, text_array(), bool_t()),
        B::StringConcat => {
            // jsonb || jsonb (an untyped side read as jsonb); with a typed text side it is
            // text concatenation, and json has no || of its own.
            let textish = |t: Option<SqlType>| t.is_some_and(|t| is_text(t.id) || t.id == TypeId::Json);
            if textish(ta) || textish(tb) {
                return None;
            }
            (|| {
                Ok(call(
                    JsonFunc::Concat,
                    vec![operand(&sym, ta, tb, a.clone(), jsonb_t())?, operand(&sym, ta, tb, b.clone(), jsonb_t())?],
                    jsonb_t(),
                ))
            })()
        }
        B::Minus => {
            if left != Some(true) {
                return Some(no_op());
            }
            match tb {
                Some(t) if matches!(t.id, TypeId::Int2 | TypeId::Int4) => Ok(call(JsonFunc::Delete(2), vec![a, b], jsonb_t())),
                Some(t) if is_int(t.id) => no_op(),
                Some(t) if t.is_array() => operand(&sym, ta, tb, b, text_array()).map(|b| call(JsonFunc::Delete(1), vec![a, b], jsonb_t())),
                _ => operand(&sym, ta, tb, b, SqlType::new(TypeId::Text)).map(|b| call(JsonFunc::Delete(0), vec![a, b], jsonb_t())),
            }
        }
        B::HashMinus => jsonb_only(JsonFunc::DeletePath, text_array(), jsonb_t()),
        _ => return None,
    })
}

fn bool_t() -> SqlType {
    SqlType::new(TypeId::Bool)
}

/// Binds a json / jsonb function call; `None` when `name` is not one.
pub fn bind_call(name: &str, args: Vec<Scalar>) -> Option<Result<Scalar>> {
    let one = |f: JsonFunc, ty: SqlType, arg_ty: SqlType, ret: SqlType| -> Result<Scalar> {
        let [a] = <[Scalar; 1]>::try_from(args.clone()).map_err(|_| no_function(name, &args))?;
        let a = match type_of(&a) {
            None => coerce(a, Some(arg_ty))?,
            Some(t) if t.id == ty.id => a,
            Some(_) => return Err(no_function(name, &args)),
        };
        Ok(call(f, vec![a], ret))
    };
    let text = SqlType::new(TypeId::Text);
    let json = SqlType::new(TypeId::Json);
    Some(match name {
        "jsonb_typeof" => one(JsonFunc::Typeof { jsonb: true }, jsonb_t(), jsonb_t(), text),
        "json_typeof" => one(JsonFunc::Typeof { jsonb: false }, json, json, text),
        "jsonb_array_length" => one(JsonFunc::ArrayLength { jsonb: true }, jsonb_t(), jsonb_t(), SqlType::new(TypeId::Int4)),
        "json_array_length" => one(JsonFunc::ArrayLength { jsonb: false }, json, json, SqlType::new(TypeId::Int4)),
        "jsonb_strip_nulls" => one(JsonFunc::StripNulls, jsonb_t(), jsonb_t(), jsonb_t()),
        "jsonb_pretty" => one(JsonFunc::Pretty, jsonb_t(), jsonb_t(), text),
        "jsonb_extract_path" | "jsonb_extract_path_text" | "json_extract_path" | "json_extract_path_text" => {
            let jsonb = name.starts_with("jsonb");
            let text_out = name.ends_with("_text");
            let doc_ty = if jsonb { jsonb_t() } else { json };
            (|| {
                if args.len() < 2 {
                    return Err(no_function(name, &args));
                }
                let mut it = args.clone().into_iter();
                let doc = it.next().ok_or_else(|| no_function(name, &args))?;
                let doc = match type_of(&doc) {
                    None => coerce(doc, Some(doc_ty))?,
                    Some(t) if t.id == doc_ty.id => doc,
                    Some(_) => return Err(no_function(name, &args)),
                };
                let mut out = vec![doc];
                for p in it {
                    out.push(match type_of(&p) {
                        None => coerce(p, Some(text))?,
                        Some(t) if is_text(t.id) => expr::unpad(p),
                        Some(_) => return Err(no_function(name, &args)),
                    });
                }
                Ok(call(JsonFunc::Path { jsonb, text: text_out, variadic: true }, out, if text_out { text } else { doc_ty }))
            })()
        }
        "row_to_json" | "array_to_json" => (|| {
            let row = name == "row_to_json";
            let typed = |t: SqlType| if row { matches!(t.id, TypeId::Record(_)) } else { t.is_array() };
            if args.is_empty() || args.len() > 2 || !type_of(&args[0]).is_some_and(typed) {
                return Err(no_function(name, &args));
            }
            let mut a = args.clone();
            if a.len() == 2 {
                a[1] = coerce(a[1].clone(), Some(bool_t()))?;
                if type_of(&a[1]).is_none_or(|t| t.id != TypeId::Bool) {
                    return Err(no_function(name, &args));
                }
            }
            Ok(call(JsonFunc::ToJsonPretty { row }, a, json))
        })(),
        // Any argument type (untyped literals are text), as PostgreSQL's anyelement / "any".
        "to_jsonb" | "to_json" => {
            if args.len() != 1 {
                return Some(Err(no_function(name, &args)));
            }
            if let Err(e) = polymorphic(&args[0]) {
                return Some(Err(e));
            }
            Ok(if name == "to_json" { call(JsonFunc::ToJson, args, json) } else { call(JsonFunc::ToJsonb, args, jsonb_t()) })
        }
        "jsonb_delete_path" => (|| {
            let [d, p] = <[Scalar; 2]>::try_from(args.clone()).map_err(|_| no_function(name, &args))?;
            let d = match type_of(&d) {
                None => coerce(d, Some(jsonb_t()))?,
                Some(t) if t.id == TypeId::Jsonb => d,
                Some(_) => return Err(no_function(name, &args)),
            };
            let p = match type_of(&p) {
                None => coerce(p, Some(text_array()))?,
                Some(t) if t.is_array() && t.elem().is_some_and(|e| is_text(e.id)) => p,
                Some(_) => return Err(no_function(name, &args)),
            };
            Ok(call(JsonFunc::DeletePath, vec![d, p], jsonb_t()))
        })(),
        "jsonb_set" | "jsonb_insert" => (|| {
            if !(3..=4).contains(&args.len()) {
                return Err(no_function(name, &args));
            }
            let want = [jsonb_t(), text_array(), jsonb_t(), bool_t()];
            let mut out = Vec::with_capacity(args.len());
            for (a, w) in args.iter().zip(want) {
                out.push(match type_of(a) {
                    None => coerce(a.clone(), Some(w))?,
                    Some(t) if t.id == w.id => a.clone(),
                    // char(n)[] and varchar[] paths are text[] (an implicit cast in PostgreSQL).
                    Some(t) if w.is_array() && t.elem().is_some_and(|e| is_text(e.id)) => a.clone(),
                    Some(_) => return Err(no_function(name, &args)),
                });
            }
            Ok(call(if name == "jsonb_set" { JsonFunc::Set } else { JsonFunc::Insert }, out, jsonb_t()))
        })(),
        "jsonb_build_object" | "jsonb_build_array" => {
            let f = if name == "jsonb_build_object" { JsonFunc::BuildObject } else { JsonFunc::BuildArray };
            variadic_any(args).map(|args| call(f, args, jsonb_t()))
        }
        _ => return None,
    })
}

/// The arguments of a VARIADIC "any" function: an untyped literal is text; an untyped
/// parameter has no type to take (42P18, as in PostgreSQL).
pub fn variadic_any(args: Vec<Scalar>) -> Result<Vec<Scalar>> {
    args.into_iter()
        .map(|a| match (&a, type_of(&a)) {
            (Scalar::Param(k, _), None) => Err(PgError::new("42P18", format!("could not determine data type of parameter ${k}"))),
            (_, None) => coerce(a, Some(SqlType::new(TypeId::Text))),
            _ => Ok(a),
        })
        .collect()
}

/// An argument of a polymorphic (anyelement) parameter must have a type: an untyped literal
/// or parameter is PostgreSQL's 42804 / 42P18.
pub fn polymorphic(a: &Scalar) -> Result<()> {
    match (a, type_of(a)) {
        (Scalar::Param(k, _), None) => Err(PgError::new("42P18", format!("could not determine data type of parameter ${k}"))),
        (_, None) => Err(PgError::new(sqlstate::DATATYPE_MISMATCH, "could not determine polymorphic type because input has type unknown")),
        _ => Ok(()),
    }
}

fn no_function(name: &str, args: &[Scalar]) -> PgError {
    let types: Vec<String> = args.iter().map(|a| type_of(a).map(|t| t.name()).unwrap_or_else(|| "unknown".into())).collect();
    PgError::new("42883", format!("function {name}({}) does not exist", types.join(", ")))
        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

fn doc(v: &Value) -> &str {
    match v {
        Value::Json(s) | Value::Jsonb(s) | Value::Text(s) => s,
        _ => "",
    }
}

fn jsonb_value(v: &Jsonb) -> Value {
    Value::Jsonb(v.to_text())
}

/// A text[] argument's elements (char(n)[] without the padding, as its cast to text[] gives).
fn text_items(v: &Value) -> Vec<Option<String>> {
    match v {
        Value::Array(a) => {
            let padded = a.ty.elem().is_some_and(|e| e.id == TypeId::Bpchar);
            a.items
                .iter()
                .map(|i| match i {
                    Value::Text(s) if padded => Some(s.trim_end_matches(' ').to_string()),
                    Value::Text(s) => Some(s.clone()),
                    _ => None,
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

fn int(v: &Value) -> i64 {
    expr::as_i64(v).unwrap_or(0)
}

/// Evaluates a bound call (`ty`: its result type).
pub fn eval(f: JsonFunc, args: &[Value], _ty: &SqlType) -> Result<Value> {
    match f {
        JsonFunc::BuildObject | JsonFunc::BuildArray | JsonFunc::ToJsonb => {
            let typed: Vec<(Value, SqlType)> =
                args.iter().map(|v| (v.clone(), v.natural_type().unwrap_or(SqlType::new(TypeId::Text)))).collect();
            let text = match f {
                JsonFunc::BuildObject => {
                    if typed.len() % 2 != 0 {
                        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "argument list must have even number of elements")
                            .with_hint("The arguments of jsonb_build_object() must consist of alternating keys and values."));
                    }
                    let mut pairs = Vec::with_capacity(typed.len() / 2);
                    for (i, kv) in typed.chunks(2).enumerate() {
                        if kv[0].0 == Value::Null {
                            return Err(PgError::new(
                                sqlstate::INVALID_PARAMETER_VALUE,
                                format!("argument {}: key must not be null", 2 * i + 1),
                            ));
                        }
                        let key = json::key_text(&kv[0].0, &kv[0].1)?;
                        let mut value = String::new();
                        json::to_json(&kv[1].0, &kv[1].1, &mut value);
                        pairs.push((key, jsonb::parse(&value)?));
                    }
                    return Ok(jsonb_value(&Jsonb::Object(jsonb::normalize(pairs))));
                }
                JsonFunc::BuildArray => match json::build_array(&typed) {
                    Value::Json(s) => s,
                    _ => unreachable!("json_build_array makes json"),
                },
                _ => {
                    if args[0] == Value::Null {
                        return Ok(Value::Null);
                    }
                    let mut out = String::new();
                    json::to_json(&typed[0].0, &typed[0].1, &mut out);
                    out
                }
            };
            return Ok(jsonb_value(&jsonb::parse(&text)?));
        }
        _ => {}
    }
    if args.contains(&Value::Null) {
        return Ok(Value::Null);
    }
    let text_or_null = |s: Option<String>| s.map_or(Value::Null, Value::Text);
    match f {
        JsonFunc::Get { jsonb: true, text, index } => {
            let d = jsonb::parse_stored(doc(&args[0]));
            let got = if index { d.element(int(&args[1]), true) } else { d.field(doc(&args[1])) };
            Ok(match got {
                None => Value::Null,
                Some(v) if text => text_or_null(v.as_text()),
                Some(v) => jsonb_value(v),
            })
        }
        JsonFunc::Get { jsonb: false, text, index } => {
            let s = doc(&args[0]);
            let n = json::parse_nodes(s, true)?;
            let got = if index { n.element(int(&args[1])) } else { n.field(doc(&args[1])) };
            Ok(json_result(got, s, text))
        }
        JsonFunc::Path { jsonb, text, variadic } => {
            let steps: Vec<Option<String>> =
                if variadic { args[1..].iter().map(|v| Some(doc(v).to_string())).collect() } else { text_items(&args[1]) };
            if jsonb {
                let d = jsonb::parse_stored(doc(&args[0]));
                Ok(match d.path(&steps) {
                    None => Value::Null,
                    Some(v) if text => text_or_null(v.as_text()),
                    Some(v) => jsonb_value(v),
                })
            } else {
                let s = doc(&args[0]);
                let n = json::parse_nodes(s, true)?;
                if steps.is_empty() {
                    // The whole document: a top-level scalar from the start of the text (its
                    // leading white space kept, as PostgreSQL's get_path_all does), except the
                    // de-escaped string or NULL of `#>>`.
                    let decoded = text && matches!(n.kind, NodeKind::Scalar(json::Scalar::String | json::Scalar::Null, _));
                    return Ok(match &n.kind {
                        NodeKind::Scalar(..) if !decoded => {
                            let t = s[..n.span.1].to_string();
                            if text {
                                Value::Text(t)
                            } else {
                                Value::Json(t)
                            }
                        }
                        _ => json_result(Some(&n), s, text),
                    });
                }
                Ok(json_result(json_path(&n, &steps), s, text))
            }
        }
        JsonFunc::Contains | JsonFunc::ContainedBy => {
            let (a, b) = (jsonb::parse_stored(doc(&args[0])), jsonb::parse_stored(doc(&args[1])));
            Ok(Value::Bool(if f == JsonFunc::Contains { jsonb::contains(&a, &b) } else { jsonb::contains(&b, &a) }))
        }
        JsonFunc::Exists => Ok(Value::Bool(jsonb::parse_stored(doc(&args[0])).exists(doc(&args[1])))),
        JsonFunc::ExistsAnyAll { all } => {
            let d = jsonb::parse_stored(doc(&args[0]));
            // NULL keys never match (and do not count against ?&).
            let keys: Vec<String> = text_items(&args[1]).into_iter().flatten().collect();
            Ok(Value::Bool(if all { keys.iter().all(|k| d.exists(k)) } else { keys.iter().any(|k| d.exists(k)) }))
        }
        JsonFunc::Concat => {
            let v = jsonb::concat(jsonb::parse_stored(doc(&args[0])), jsonb::parse_stored(doc(&args[1])));
            check_depth(&v)?;
            Ok(jsonb_value(&v))
        }
        JsonFunc::Delete(kind) => {
            let d = jsonb::parse_stored(doc(&args[0]));
            let v = match kind {
                0 => jsonb::delete_key(d, doc(&args[1]))?,
                1 => {
                    if matches!(&args[1], Value::Array(a) if a.dims.len() > 1) {
                        return Err(PgError::new("2202E", "wrong number of array subscripts"));
                    }
                    let mut d = d;
                    for k in text_items(&args[1]).into_iter().flatten() {
                        d = jsonb::delete_key(d, &k)?;
                    }
                    if d.is_scalar() {
                        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "cannot delete from scalar"));
                    }
                    d
                }
                _ => jsonb::delete_index(d, int(&args[1]))?,
            };
            Ok(jsonb_value(&v))
        }
        JsonFunc::Typeof { jsonb: true } => Ok(Value::Text(jsonb::parse_stored(doc(&args[0])).type_name().into())),
        JsonFunc::Typeof { jsonb: false } => Ok(Value::Text(json::parse_nodes(doc(&args[0]), false)?.type_name().into())),
        JsonFunc::ArrayLength { jsonb } => {
            let (kind, len) = if jsonb {
                match jsonb::parse_stored(doc(&args[0])) {
                    Jsonb::Array(items) => (0, items.len()),
                    Jsonb::Object(_) => (2, 0),
                    _ => (1, 0),
                }
            } else {
                match json::parse_nodes(doc(&args[0]), false)?.kind {
                    NodeKind::Array(items) => (0, items.len()),
                    NodeKind::Object(_) => (2, 0),
                    NodeKind::Scalar(..) => (1, 0),
                }
            };
            match kind {
                0 => Ok(Value::Int4(len as i32)),
                1 => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "cannot get array length of a scalar")),
                _ => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "cannot get array length of a non-array")),
            }
        }
        JsonFunc::StripNulls => Ok(jsonb_value(&jsonb::parse_stored(doc(&args[0])).strip_nulls())),
        JsonFunc::Pretty => Ok(Value::Text(jsonb::parse_stored(doc(&args[0])).pretty())),
        JsonFunc::ToJsonPretty { .. } => {
            let pretty = matches!(args.get(1), Some(Value::Bool(true)));
            let mut text = String::new();
            match &args[0] {
                Value::Record(r) => json::record_to_json(r, pretty, &mut text),
                Value::Array(a) => json::array_to_json(a, pretty, &mut text),
                v => json::to_json(v, &v.natural_type().unwrap_or(SqlType::new(TypeId::Text)), &mut text),
            }
            Ok(Value::Json(text))
        }
        JsonFunc::ToJson => {
            let mut text = String::new();
            json::to_json(&args[0], &args[0].natural_type().unwrap_or(SqlType::new(TypeId::Text)), &mut text);
            Ok(Value::Json(text))
        }
        JsonFunc::Set | JsonFunc::Insert | JsonFunc::DeletePath => {
            if matches!(&args[1], Value::Array(a) if a.dims.len() > 1) {
                return Err(PgError::new("2202E", "wrong number of array subscripts"));
            }
            let target = jsonb::parse_stored(doc(&args[0]));
            if target.is_scalar() {
                let what = if f == JsonFunc::DeletePath { "cannot delete path in scalar" } else { "cannot set path in scalar" };
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, what));
            }
            let flag = !matches!(args.get(3), Some(Value::Bool(false)));
            let op = match f {
                JsonFunc::Set if flag => PathOp::Create,
                JsonFunc::Set => PathOp::Replace,
                JsonFunc::Insert if matches!(args.get(3), Some(Value::Bool(true))) => PathOp::InsertAfter,
                JsonFunc::Insert => PathOp::InsertBefore,
                _ => PathOp::Delete,
            };
            let path = text_items(&args[1]);
            let empty = matches!(&target, Jsonb::Array(v) if v.is_empty()) || matches!(&target, Jsonb::Object(v) if v.is_empty());
            // jsonb_set without create_if_missing and #- leave an empty document alone.
            if path.is_empty() || (empty && matches!(op, PathOp::Replace | PathOp::Delete)) {
                return Ok(args[0].clone());
            }
            let new = match args.get(2) {
                Some(v) if f != JsonFunc::DeletePath => jsonb::parse_stored(doc(v)),
                _ => Jsonb::Null,
            };
            let v = set_path(target, &path, 0, new, op)?;
            check_depth(&v)?;
            Ok(jsonb_value(&v))
        }
        JsonFunc::BuildObject | JsonFunc::BuildArray | JsonFunc::ToJsonb => unreachable!("handled above"),
    }
}

/// What [`set_path`] does at the end of the path (PostgreSQL's JB_PATH_* operations).
#[derive(Clone, Copy, PartialEq, Eq)]
enum PathOp {
    /// `jsonb_set(..., false)`: replace an existing value only.
    Replace,
    /// `jsonb_set`: replace, or add a missing key or an element past either end.
    Create,
    /// `jsonb_insert`: before (after) the element, or a missing key; an existing key is an
    /// error.
    InsertBefore,
    InsertAfter,
    /// `#-`: remove the key or element.
    Delete,
}

/// PostgreSQL's setPath: applies `op` with `new` at `path[level..]` inside `v`. An object key
/// missing before the last step, or a scalar met before it, leaves the document unchanged;
/// an array step is an integer (negative counts from the end; past either end, the last step
/// adds at that end when `op` adds).
fn set_path(v: Jsonb, path: &[Option<String>], level: usize, new: Jsonb, op: PathOp) -> Result<Jsonb> {
    let adds = matches!(op, PathOp::Create | PathOp::InsertBefore | PathOp::InsertAfter);
    let Some(step) = path.get(level) else { return Ok(v) };
    let last = level + 1 == path.len();
    let null_step = || PgError::new("22004", format!("path element at position {} is null", level + 1));
    // Checked on entering each level, whatever the value there (PostgreSQL's setPath).
    if step.is_none() {
        return Err(null_step());
    }
    match v {
        Jsonb::Object(mut pairs) => {
            let key = step.as_deref().ok_or_else(null_step)?;
            match pairs.iter().position(|(k, _)| k == key) {
                Some(_) if last && matches!(op, PathOp::InsertBefore | PathOp::InsertAfter) => {
                    return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "cannot replace existing key")
                        .with_hint("Try using the function jsonb_set to replace key value."));
                }
                Some(i) if last && op == PathOp::Delete => {
                    pairs.remove(i);
                }
                Some(i) if last => pairs[i].1 = new,
                Some(i) => {
                    let old = std::mem::replace(&mut pairs[i].1, Jsonb::Null);
                    pairs[i].1 = set_path(old, path, level + 1, new, op)?;
                }
                None if last && adds => {
                    pairs.push((key.to_string(), new));
                    return Ok(Jsonb::Object(jsonb::normalize(pairs)));
                }
                None => {}
            }
            Ok(Jsonb::Object(pairs))
        }
        Jsonb::Array(mut items) => {
            let s = step.as_deref().ok_or_else(null_step)?;
            let idx: i64 = s.trim_start().parse::<i32>().map(i64::from).map_err(|_| {
                PgError::new(
                    sqlstate::INVALID_TEXT_REPRESENTATION,
                    format!("path element at position {} is not an integer: \"{s}\"", level + 1),
                )
            })?;
            let n = items.len() as i64;
            // Before the first element (a negative index past the start), or an empty array.
            if (idx < -n || n == 0) && last && adds {
                items.insert(0, new);
                return Ok(Jsonb::Array(items));
            }
            let at = if idx < 0 { idx + n } else { idx };
            if (0..n).contains(&at) {
                let i = at as usize;
                match op {
                    _ if !last => {
                        let old = std::mem::replace(&mut items[i], Jsonb::Null);
                        items[i] = set_path(old, path, level + 1, new, op)?;
                    }
                    PathOp::Replace | PathOp::Create => items[i] = new,
                    PathOp::InsertBefore => items.insert(i, new),
                    PathOp::InsertAfter => items.insert(i + 1, new),
                    PathOp::Delete => {
                        items.remove(i);
                    }
                }
            } else if at >= n && last && adds {
                items.push(new);
            }
            Ok(Jsonb::Array(items))
        }
        scalar => Ok(scalar),
    }
}

/// A bound call as EXPLAIN shows it: operators as `(a -> b)`, functions by name.
pub fn show(f: JsonFunc, args: &[String]) -> String {
    let op = |sym: &str| format!("({} {sym} {})", args[0], args.get(1).map_or("", String::as_str));
    let call = |name: &str| format!("{name}({})", args.join(", "));
    match f {
        JsonFunc::Get { text: false, .. } => op("->"),
        JsonFunc::Get { text: true, .. } => op("->>"),
        JsonFunc::Path { jsonb, text, variadic: true } => {
            call(&format!("{}_extract_path{}", if jsonb { "jsonb" } else { "json" }, if text { "_text" } else { "" }))
        }
        JsonFunc::Path { text: false, .. } => op("#>"),
        JsonFunc::Path { text: true, .. } => op("#>>"),
        JsonFunc::Contains => op("@>"),
        JsonFunc::ContainedBy => op("<@"),
        JsonFunc::Exists => op("?"),
        JsonFunc::ExistsAnyAll { all: false } => op("?|"),
        JsonFunc::ExistsAnyAll { all: true } => op("?&"),
        JsonFunc::Concat => op("||"),
        JsonFunc::Delete(_) => op("-"),
        JsonFunc::Typeof { jsonb } => call(if jsonb { "jsonb_typeof" } else { "json_typeof" }),
        JsonFunc::ArrayLength { jsonb } => call(if jsonb { "jsonb_array_length" } else { "json_array_length" }),
        JsonFunc::StripNulls => call("jsonb_strip_nulls"),
        JsonFunc::Pretty => call("jsonb_pretty"),
        JsonFunc::ToJsonb => call("to_jsonb"),
        JsonFunc::ToJson => call("to_json"),
        JsonFunc::ToJsonPretty { row: true } => call("row_to_json"),
        JsonFunc::ToJsonPretty { row: false } => call("array_to_json"),
        JsonFunc::Set => call("jsonb_set"),
        JsonFunc::Insert => call("jsonb_insert"),
        JsonFunc::DeletePath => op("#-"),
        JsonFunc::BuildObject => call("jsonb_build_object"),
        JsonFunc::BuildArray => call("jsonb_build_array"),
    }
}

fn check_depth(v: &Jsonb) -> Result<()> {
    if v.depth() > jsonb::MAX_DEPTH {
        return Err(PgError::feature(format!("jsonb nesting deeper than {} levels is not supported by heapstore", jsonb::MAX_DEPTH)));
    }
    Ok(())
}

fn json_result(got: Option<&Node>, doc: &str, text: bool) -> Value {
    match got {
        None => Value::Null,
        Some(n) if text => n.as_text(doc).map_or(Value::Null, Value::Text),
        Some(n) => Value::Json(n.text(doc).to_string()),
    }
}

/// `#>` over json: keys through objects, indexes (strtol's reading) through arrays. With
/// repeated keys every path is followed and the last match in the text wins, as PostgreSQL's
/// get_path_all finds it.
fn json_path<'a>(n: &'a Node, steps: &[Option<String>]) -> Option<&'a Node> {
    let Some((step, rest)) = steps.split_first() else { return Some(n) };
    let step = step.as_deref()?;
    match &n.kind {
        NodeKind::Object(pairs) => pairs.iter().rev().filter(|(k, _)| k == step).find_map(|(_, v)| json_path(v, rest)),
        NodeKind::Array(_) => json_path(n.element(jsonb::path_index(step)?)?, rest),
        NodeKind::Scalar(..) => None,
    }
}
