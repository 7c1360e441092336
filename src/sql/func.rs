//! Scalar functions and the expression forms beyond operators: function calls, CASE,
//! COALESCE / NULLIF / GREATEST / LEAST, LIKE / ILIKE, IS [NOT] DISTINCT FROM, IS TRUE /
//! FALSE / UNKNOWN, the SQL-standard forms `SUBSTRING(x FROM a FOR b)`, `POSITION(a IN b)`,
//! `TRIM(...)`, `EXTRACT(f FROM x)`, `CEIL` / `FLOOR`, subqueries (`EXISTS`, `IN`, scalar,
//! `ANY` / `ALL`), and aggregate and window calls (collected for the executor).
//!
//! Function resolution follows PostgreSQL's for the types heapstore has: an untyped literal
//! argument takes the parameter's type; integers passed to a float function are converted
//! (`round(5)` is `round(double precision)`, as PostgreSQL resolves it); the result type is
//! PostgreSQL's (`abs(int)` is integer, `sqrt(int)` double precision, `length` integer).
//!
//! Invariants:
//! 1. Every function returns NULL for a NULL argument except `concat`, `concat_ws` (which skip
//!    NULLs) — PostgreSQL's strictness.
//! 2. A function or form not listed here is refused with 0A000 when bound, never evaluated
//!    with another meaning. Forms whose PostgreSQL resolution heapstore does not follow yet
//!    are refused. (`date_trunc` of a date is PostgreSQL's timestamptz form, in UTC.)
//! 3. Interval arithmetic (`types::interval`) is bound by `expr::interval_arith` before the
//!    operands are paired, so an untyped operand takes the type PostgreSQL's operator
//!    resolution gives it (timestamp + unknown: interval; interval * unknown: float8).

use super::expr::{self, bind_pair, coerce, is_int, is_num, is_text, type_of, Binder, CmpOp, Scalar};
use crate::error::{sqlstate, PgError, Result};
use crate::exec::{AggCall, AggFunc, SortKey, SubKind, SubLink, WinCall, WinFunc};
use crate::types::{SqlType, TypeId, Value};
use sqlparser::ast::{
    BinaryOperator, CeilFloorKind, DateTimeField, Expr, FunctionArg, FunctionArgExpr, FunctionArgumentClause, FunctionArguments,
    TrimWhereField, WindowFrameBound, WindowFrameUnits, WindowType,
};

/// The scalar functions heapstore evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Length,
    OctetLength,
    Lower,
    Upper,
    Initcap,
    /// `lower`, `upper`, `initcap` under the C collation (`x COLLATE "C"`, also "POSIX" and
    /// "ucs_basic"): ASCII letters only, as PostgreSQL's `asc_tolower` / `asc_initcap`.
    LowerC,
    UpperC,
    InitcapC,
    Substr,
    StrPos,
    Replace,
    /// btrim / ltrim / rtrim: (leading, trailing).
    Trim(bool, bool),
    Concat,
    ConcatWs,
    Left,
    Right,
    Lpad,
    Rpad,
    Repeat,
    Reverse,
    Abs,
    Round,
    Trunc,
    Floor,
    Ceil,
    Power,
    Sqrt,
    Exp,
    Ln,
    Mod,
    Sign,
    DatePart,
    DateTrunc,
    ToChar,
    /// `quote_literal(x)`: x as a string literal ('...' with quotes doubled; E'...' with
    /// backslashes doubled too when it has any).
    QuoteLiteral,
    /// `quote_ident(text)`: double-quoted unless a plain lower-case identifier that is not a
    /// reserved keyword.
    QuoteIdent,
    /// `quote_nullable(x)`: as quote_literal, and `NULL` for NULL.
    QuoteNullable,
    /// `pg_size_pretty(bigint)`: bytes, kB, MB, GB or TB, rounded half away from zero.
    SizePretty,
    /// `format_type(type oid, typmod)`: not strict in the type modifier.
    FormatType,
    /// `to_regtype(text)`: the type's OID, or NULL.
    ToRegtype,
    Md5,
    /// date + integer days (the second argument).
    DateAdd,
    /// date - date: days.
    DateDiff,
    Cbrt,
    Gcd,
    Lcm,
    Div,
    Degrees,
    Radians,
    /// sin, cos, tan, asin, acos, atan, cot.
    Trig(u8),
    Atan2,
    Log10,
    /// `log(b, x)`: numeric only.
    Log,
    /// `factorial(bigint)`: numeric.
    Factorial,
    /// `width_bucket(operand, low, high, count)`: float8 or numeric bounds.
    WidthBucket,
    /// `bytea || bytea` (PostgreSQL's byteacat).
    ByteaCat,
    /// `to_number(text, format)`: numeric (`sql::numfmt`).
    ToNumber,
    /// `to_date(text, format)` (`sql::datefmt`).
    ToDate,
    /// `to_timestamp(text, format)`: timestamptz.
    ToTimestamp,
    /// `to_timestamp(double precision)`: seconds since 1970-01-01 00:00 UTC.
    ToTimestampEpoch,
    Ascii,
    Chr,
    SplitPart,
    StartsWith,
    Translate,
    ToHex,
    MakeDate,
    /// `make_interval(years, months, weeks, days, hours, mins, secs)`.
    MakeInterval,
    /// EXTRACT(field FROM x): numeric.
    Extract,
    /// `nextval` / `currval` / `setval` / `lastval`: evaluated with the session
    /// (`sql::sequence`), never folded.
    Seq(super::sequence::SeqFunc),
    /// The advisory lock functions: evaluated with the session (`sql::advisory`), volatile.
    Advisory(super::advisory::AdvisoryFunc),
    /// The array constructors, subscripts, operators and functions (`sql::array`).
    Array(super::array::ArrayFunc),
    /// `(record).field`: the field's position.
    RecordField(u16),
    /// A row constructor or whole-row reference: its arguments are the fields of a record of
    /// the call's type (not strict: NULL fields make a record, not NULL).
    Row,
    /// Integer bitwise operators: `&` (0), `|` (1), `#` (2), `<<` (3), `>>` (4), `~` (5, one
    /// argument).
    Bit(u8),
    /// `json_build_object(k, v, ...)` (not strict).
    JsonBuildObject,
    /// `json_build_array(v, ...)` (not strict).
    JsonBuildArray,
    /// The json / jsonb operators and functions (`sql::jsonfn`).
    Json(super::jsonfn::JsonFunc),
    /// `gen_random_uuid()`: volatile (evaluated for each row, never once per statement).
    GenRandomUuid,
    /// `random()`: volatile, a double precision in [0, 1) with 53 random bits.
    Random,
    /// `clock_timestamp()`: volatile, the time when it is called.
    ClockTimestamp,
    /// `timeofday()`: volatile, the time when it is called, as text.
    TimeOfDay,
    /// `pg_sleep(seconds)` (0), `pg_sleep_for(interval)` (1), `pg_sleep_until(timestamptz)`
    /// (2): volatile, return void; the sleep stops with 57014 at a cancel request.
    PgSleep(u8),
    /// `num_nulls(...)` (false) / `num_nonnulls(...)` (true): any arguments, not strict.
    NumNulls(bool),
    /// `(s1, e1) OVERLAPS (s2, e2)` over one date/time type (ends given as intervals already
    /// added): PostgreSQL's `overlaps_timestamp`, with its NULL rules (not strict).
    Overlaps,
    /// `isfinite(date | timestamp | timestamptz | interval)`.
    IsFinite,
    /// `bit_length(text | bytea)`.
    BitLength,
    /// `sha224` / `sha256` / `sha384` / `sha512(bytea)`: the digest (its size in bits).
    Sha(u16),
    /// `encode(bytea, format)`.
    Encode,
    /// `decode(text, format)`.
    Decode,
    /// `convert_to(text, encoding)`: the text's bytes in the encoding.
    ConvertTo,
    /// `convert_from(bytea, encoding)`: bytes in the encoding read as text.
    ConvertFrom,
    /// `date_bin(stride, source, origin)` over timestamp or timestamptz.
    DateBin,
    /// `regexp_replace(source, pattern, replacement [, flags])` (`sql::regexp`).
    RegexpReplace,
    /// `regexp_like(string, pattern [, flags])`.
    RegexpLike,
    /// `regexp_count(string, pattern [, start [, flags]])`.
    RegexpCount,
    /// `regexp_match(string, pattern [, flags])`: the match as a one-element text[] (a
    /// pattern without subexpressions).
    RegexpMatch,
    /// `regexp_split_to_array(string, pattern [, flags])`.
    RegexpSplit,
    /// `substring(string FROM pattern)` / `substring(string, pattern)`: the first match (a
    /// pattern without subexpressions).
    RegexpSubstring,
    /// `make_timestamptz(..., zone)`: the timestamp (second argument) at the wall clock of
    /// the zone named by the first, read as PostgreSQL's `parse_sane_timezone` (`+2` is two
    /// hours east).
    TimestampAtSaneZone,
    /// `timezone(zone, ts)` / `ts AT TIME ZONE zone`: zone as text or interval; a timestamptz
    /// gives the wall-clock timestamp there, a timestamp the timestamptz it reads there
    /// (`types::tz`).
    Timezone,
    /// `make_timestamp(year, month, mday, hour, min, sec)`.
    MakeTimestamp,
    /// `make_time(hour, min, sec)`.
    MakeTime,
    /// time / timetz plus (0) or minus (1) an interval, time minus time (2), date plus time
    /// or timetz (3): `types::time`.
    TimeArith(u8),
    /// `overlay(s PLACING r FROM n [FOR m])` of text.
    Overlay,
    /// `format(fmt, args...)` (`sql::strformat`; not strict).
    Format,
    /// `scale(numeric)` (0), `min_scale(numeric)` (1), `trim_scale(numeric)` (2).
    NumScale(u8),
    /// timestamp / timestamptz / date plus (false) or minus (true) an interval
    /// (`types::interval::timestamp_plus`); a date is a timestamp at midnight first.
    TsInterval(bool),
    /// timestamp minus timestamp (dates at midnight): an interval of days and time.
    TsDiff,
    /// interval `+`, `-` (0, 1) with an interval, `*`, `/` (2, 3) with a number.
    IntervalArith(u8),
    /// `age(a, b)`.
    Age,
    /// `justify_days` (0), `justify_hours` (1), `justify_interval` (2).
    Justify(u8),
}

/// The functions of the transaction, statement and session (the clock, the user, the
/// backend): evaluated when bound, stable or volatile in PostgreSQL, never part of a stored
/// definition that must be immutable.
pub(crate) const TRANSACTION_FUNCTIONS: &[&str] = &[
    "now",
    "current_timestamp",
    "current_date",
    "current_time",
    "localtimestamp",
    "localtime",
    "transaction_timestamp",
    "statement_timestamp",
    "current_user",
    "session_user",
    "current_role",
    "user",
    "current_schema",
    "current_database",
    "current_catalog",
    "pg_backend_pid",
    "version",
    "inet_client_addr",
    "txid_current",
    "pg_current_xact_id",
];

impl Func {
    /// A volatile function: its value may change from call to call, so a call is evaluated
    /// for each row, never once per statement (nor folded, nor skipped when unread).
    pub fn is_volatile(&self) -> bool {
        matches!(
            self,
            Func::Seq(_)
                | Func::Advisory(_)
                | Func::GenRandomUuid
                | Func::Random
                | Func::ClockTimestamp
                | Func::TimeOfDay
                | Func::PgSleep(_)
        )
    }
}

fn t(id: TypeId) -> SqlType {
    SqlType::new(id)
}

fn text() -> SqlType {
    t(TypeId::Text)
}

fn f8() -> SqlType {
    t(TypeId::Float8)
}

fn numeric() -> SqlType {
    t(TypeId::Numeric)
}

/// Whether a math function resolves to its numeric form: some argument is numeric and none
/// is a float (PostgreSQL converts integers to numeric, and numeric to float8 beside a float).
fn numeric_call(args: &[Scalar]) -> bool {
    let ids: Vec<Option<TypeId>> = args.iter().map(|a| type_of(a).map(|t| t.id)).collect();
    ids.contains(&Some(TypeId::Numeric)) && !ids.iter().any(|t| matches!(t, Some(TypeId::Float4 | TypeId::Float8)))
}

fn arity(name: &str, args: &[Scalar], lo: usize, hi: usize) -> Result<()> {
    if args.len() < lo || args.len() > hi {
        return Err(no_function(name, args));
    }
    Ok(())
}

fn no_function(name: &str, args: &[Scalar]) -> PgError {
    let types: Vec<String> = args.iter().map(|a| type_of(a).map(|t| t.name()).unwrap_or_else(|| "unknown".into())).collect();
    PgError::new("42883", format!("function {name}({}) does not exist", types.join(", ")))
        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

/// Gives argument `a` the type `ty`: an untyped literal or parameter is read as `ty`; a typed
/// value of another type must be implicitly convertible (integers to floats, text types to
/// text), else the function does not exist for it.
fn arg_as(name: &str, all: &[Scalar], a: Scalar, ty: SqlType) -> Result<Scalar> {
    match type_of(&a) {
        None => coerce(a, Some(ty)),
        Some(at) if at.id == TypeId::Bpchar && ty.id != TypeId::Bpchar && is_text(ty.id) => Ok(expr::unpad(a)),
        Some(at) if at.id == ty.id => Ok(a),
        Some(at) if is_text(at.id) && is_text(ty.id) => Ok(a),
        Some(at) if is_num(at.id) && matches!(ty.id, TypeId::Float8) => Ok(Scalar::Cast(Box::new(a), ty)),
        Some(at) if is_int(at.id) && ty.id == TypeId::Numeric => Ok(Scalar::Cast(Box::new(a), ty)),
        // Integers widen implicitly (smallint to integer to bigint), never narrow.
        Some(at) if is_int(at.id) && is_int(ty.id) && int_rank(at.id) <= int_rank(ty.id) => Ok(Scalar::Cast(Box::new(a), ty)),
        Some(at) if at.id == TypeId::Date && ty.id == TypeId::Timestamp => Ok(Scalar::Cast(Box::new(a), ty)),
        // time converts to interval implicitly (justify_hours(time) is an interval).
        Some(at) if at.id == TypeId::Time && ty.id == TypeId::Interval => Ok(Scalar::Cast(Box::new(a), ty)),
        Some(_) => Err(no_function(name, all)),
    }
}

/// Binds a call of scalar function `name` to `args` (already bound).
pub fn bind_call(name: &str, args: Vec<Scalar>) -> Result<Scalar> {
    let all = args.clone();
    let mut args = args;
    let each = |args: Vec<Scalar>, tys: &[SqlType]| -> Result<Vec<Scalar>> {
        args.into_iter()
            .zip(tys.iter().chain(std::iter::repeat(tys.last().unwrap_or(&text()))))
            .map(|(a, ty)| arg_as(name, &all, a, *ty))
            .collect()
    };
    if let Some(r) = super::array::bind_call(name, args.clone()) {
        return r;
    }
    if let Some(r) = super::jsonfn::bind_call(name, args.clone()) {
        return r;
    }
    if matches!(name, "json_build_object" | "json_build_array") {
        // Variadic "any": untyped literals are text.
        let args = super::jsonfn::variadic_any(args)?;
        let f = if name == "json_build_object" { Func::JsonBuildObject } else { Func::JsonBuildArray };
        return Ok(Scalar::Func(f, args, t(TypeId::Json)));
    }
    let int4 = t(TypeId::Int4);
    let (f, args, ty) = match name {
        "length" | "char_length" | "character_length" => {
            arity(name, &args, 1, 1)?;
            match type_of(&args[0]).map(|t| t.id) {
                Some(TypeId::Bytea) => (Func::OctetLength, args, int4),
                _ => (Func::Length, each(args, &[text()])?, int4),
            }
        }
        "octet_length" => {
            arity(name, &args, 1, 1)?;
            match type_of(&args[0]).map(|t| t.id) {
                Some(TypeId::Bytea) => (Func::OctetLength, args, int4),
                _ => (Func::OctetLength, each(args, &[text()])?, int4),
            }
        }
        "pg_size_pretty" => {
            arity(name, &args, 1, 1)?;
            let a = args.into_iter().next().expect("one argument");
            (Func::SizePretty, vec![coerce(a, Some(t(TypeId::Int8)))?], text())
        }
        "quote_literal" | "quote_nullable" => {
            arity(name, &args, 1, 1)?;
            // Any type: its text form, quoted (quote_literal(anyelement) casts to text).
            let a = args.into_iter().next().expect("one argument");
            let a = match type_of(&a) {
                Some(ty) if ty.id == TypeId::Text => a,
                _ => coerce(Scalar::Cast(Box::new(a), text()), Some(text()))?,
            };
            let f = if name == "quote_literal" { Func::QuoteLiteral } else { Func::QuoteNullable };
            (f, vec![a], text())
        }
        "quote_ident" => {
            arity(name, &args, 1, 1)?;
            (Func::QuoteIdent, each(args, &[text()])?, text())
        }
        "lower" | "upper" | "initcap" | "reverse" | "md5" => {
            arity(name, &args, 1, 1)?;
            let f = match name {
                "lower" => Func::Lower,
                "upper" => Func::Upper,
                "initcap" => Func::Initcap,
                "md5" => Func::Md5,
                _ => Func::Reverse,
            };
            (f, each(args, &[text()])?, text())
        }
        // An untyped or text pattern: the regular expression form, as PostgreSQL resolves
        // `substring(text, unknown)`.
        "substring" if args.len() == 2 && type_of(&args[1]).is_none_or(|t| is_text(t.id)) => {
            (Func::RegexpSubstring, each(args, &[text(), text()])?, text())
        }
        "substring"
            if args.len() == 3 && type_of(&args[1]).is_none_or(|t| is_text(t.id)) && type_of(&args[2]).is_none_or(|t| is_text(t.id)) =>
        {
            return Err(PgError::feature(
                "substring(string FROM pattern FOR escape) (SQL regular expressions) is not supported by heapstore yet",
            ));
        }
        "regexp_replace" => {
            arity(name, &args, 3, 4)?;
            if args.get(3).is_some_and(|a| type_of(a).is_some_and(|t| is_int(t.id))) {
                return Err(PgError::feature("regexp_replace with a start position is not supported by heapstore yet"));
            }
            (Func::RegexpReplace, each(args, &[text()])?, text())
        }
        "regexp_like" => {
            arity(name, &args, 2, 3)?;
            (Func::RegexpLike, each(args, &[text()])?, t(TypeId::Bool))
        }
        "regexp_count" => {
            arity(name, &args, 2, 4)?;
            (Func::RegexpCount, each(args, &[text(), text(), int4, text()])?, int4)
        }
        "regexp_match" | "regexp_split_to_array" => {
            arity(name, &args, 2, 3)?;
            let f = if name == "regexp_match" { Func::RegexpMatch } else { Func::RegexpSplit };
            (f, each(args, &[text()])?, text().array_of().expect("text[]"))
        }
        "substr" | "substring" => {
            arity(name, &args, 2, 3)?;
            (Func::Substr, each(args, &[text(), int4, int4])?, text())
        }
        "strpos" => {
            arity(name, &args, 2, 2)?;
            (Func::StrPos, each(args, &[text(), text()])?, int4)
        }
        "replace" => {
            arity(name, &args, 3, 3)?;
            (Func::Replace, each(args, &[text()])?, text())
        }
        "btrim" | "ltrim" | "rtrim" => {
            arity(name, &args, 1, 2)?;
            let f = match name {
                "btrim" => Func::Trim(true, true),
                "ltrim" => Func::Trim(true, false),
                _ => Func::Trim(false, true),
            };
            (f, each(args, &[text()])?, text())
        }
        "concat" => {
            // Any argument types: each is printed with its output function.
            let args = args.into_iter().map(|a| coerce(a, Some(text()))).collect::<Result<Vec<_>>>()?;
            (Func::Concat, args, text())
        }
        "concat_ws" => {
            if args.is_empty() {
                return Err(no_function(name, &args));
            }
            let args = args.into_iter().map(|a| coerce(a, Some(text()))).collect::<Result<Vec<_>>>()?;
            (Func::ConcatWs, args, text())
        }
        "left" | "right" => {
            arity(name, &args, 2, 2)?;
            (if name == "left" { Func::Left } else { Func::Right }, each(args, &[text(), int4])?, text())
        }
        "lpad" | "rpad" => {
            arity(name, &args, 2, 3)?;
            (if name == "lpad" { Func::Lpad } else { Func::Rpad }, each(args, &[text(), int4, text()])?, text())
        }
        "repeat" => {
            arity(name, &args, 2, 2)?;
            (Func::Repeat, each(args, &[text(), int4])?, text())
        }
        "abs" => {
            arity(name, &args, 1, 1)?;
            let a = args.pop().expect("one argument");
            let ty = match type_of(&a) {
                Some(ty) if is_num(ty.id) => ty,
                None => f8(),
                Some(_) => return Err(no_function(name, &all)),
            };
            (Func::Abs, vec![coerce(a, Some(ty))?], ty)
        }
        "round" | "trunc" | "floor" | "ceil" | "ceiling" | "sqrt" | "exp" | "ln" | "sign" => {
            let (lo, hi) = if matches!(name, "round" | "trunc") { (1, 2) } else { (1, 1) };
            arity(name, &args, lo, hi)?;
            let f = match name {
                "round" => Func::Round,
                "trunc" => Func::Trunc,
                "floor" => Func::Floor,
                "ceil" | "ceiling" => Func::Ceil,
                "sqrt" => Func::Sqrt,
                "exp" => Func::Exp,
                "ln" => Func::Ln,
                _ => Func::Sign,
            };
            // round(x, n) and trunc(x, n) exist for numeric only (an integer is converted).
            if numeric_call(&args) || args.len() == 2 {
                if args.len() == 2 && type_of(&args[0]).is_some_and(|t| matches!(t.id, TypeId::Float4 | TypeId::Float8)) {
                    return Err(no_function(name, &all));
                }
                let mut v = vec![arg_as(name, &all, args.remove(0), numeric())?];
                if let Some(n) = args.pop() {
                    v.push(arg_as(name, &all, n, int4)?);
                }
                return Ok(Scalar::Func(f, v, numeric()));
            }
            let a = args.pop().expect("one argument");
            (f, vec![arg_as(name, &all, a, f8())?], f8())
        }
        "power" | "pow" => {
            arity(name, &args, 2, 2)?;
            if numeric_call(&args) {
                (Func::Power, each(args, &[numeric(), numeric()])?, numeric())
            } else {
                (Func::Power, each(args, &[f8(), f8()])?, f8())
            }
        }
        "mod" | "div" if numeric_call(&args) => {
            arity(name, &args, 2, 2)?;
            (if name == "mod" { Func::Mod } else { Func::Div }, each(args, &[numeric(), numeric()])?, numeric())
        }
        "div" => {
            arity(name, &args, 2, 2)?;
            if args.iter().any(|a| type_of(a).is_some_and(|t| !is_int(t.id))) {
                return Err(no_function(name, &all));
            }
            (Func::Div, each(args, &[numeric(), numeric()])?, numeric())
        }
        "mod" => {
            arity(name, &args, 2, 2)?;
            let (a, b) = bind_pair(args[0].clone(), args[1].clone())?;
            let ty = match (type_of(&a), type_of(&b)) {
                (Some(x), Some(y)) if is_int(x.id) && is_int(y.id) => {
                    if int_rank(x.id) >= int_rank(y.id) {
                        x
                    } else {
                        y
                    }
                }
                (None, None) => int4,
                _ => return Err(no_function(name, &all)),
            };
            (Func::Mod, vec![coerce(a, Some(ty))?, coerce(b, Some(ty))?], ty)
        }
        "date_part" => {
            arity(name, &args, 2, 2)?;
            let x = args.pop().expect("two arguments");
            let field = args.pop().expect("two arguments");
            let x = match type_of(&x) {
                // A timestamptz's fields are the session's wall clock (`timestamptz_part`).
                Some(t)
                    if matches!(
                        t.id,
                        TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz | TypeId::Interval | TypeId::Time | TypeId::TimeTz
                    ) =>
                {
                    x
                }
                None => coerce(x, Some(t(TypeId::Timestamp)))?,
                Some(_) => return Err(no_function(name, &all)),
            };
            (Func::DatePart, vec![arg_as(name, &all, field, text())?, x], f8())
        }
        "date_trunc" => {
            arity(name, &args, 2, 3)?;
            if args.len() == 3 {
                // date_trunc(unit, timestamptz, zone): truncated on that zone's clocks.
                let zone = args.pop().expect("three arguments");
                let x = args.pop().expect("three arguments");
                let field = args.pop().expect("three arguments");
                let x = match type_of(&x).map(|t| t.id) {
                    Some(TypeId::Timestamptz) => x,
                    None => coerce(x, Some(t(TypeId::Timestamptz)))?,
                    Some(TypeId::Date | TypeId::Timestamp) => Scalar::Cast(Box::new(x), t(TypeId::Timestamptz)),
                    Some(_) => return Err(no_function(name, &all)),
                };
                let args = vec![arg_as(name, &all, field, text())?, x, arg_as(name, &all, zone, text())?];
                return Ok(Scalar::Func(Func::DateTrunc, args, t(TypeId::Timestamptz)));
            }
            let x = args.pop().expect("two arguments");
            let field = args.pop().expect("two arguments");
            if type_of(&x).is_some_and(|t| matches!(t.id, TypeId::Timestamptz | TypeId::Date)) {
                // A timestamptz is truncated on the session's wall clock (`date_trunc`). A date
                // is read as timestamptz (midnight there), as PostgreSQL resolves
                // date_trunc(text, date), so the result is a timestamptz.
                let x =
                    if type_of(&x).is_some_and(|t| t.id == TypeId::Date) { Scalar::Cast(Box::new(x), t(TypeId::Timestamptz)) } else { x };
                return Ok(Scalar::Func(Func::DateTrunc, vec![arg_as(name, &all, field, text())?, x], t(TypeId::Timestamptz)));
            }
            match type_of(&x).map(|t| t.id) {
                Some(TypeId::Timestamp) | None => {}
                // date_trunc(text, interval); a time is read as an interval (PostgreSQL's
                // implicit cast), so the result is an interval.
                Some(TypeId::Interval | TypeId::Time) => {
                    let x =
                        if type_of(&x).is_some_and(|t| t.id == TypeId::Time) { Scalar::Cast(Box::new(x), t(TypeId::Interval)) } else { x };
                    return Ok(Scalar::Func(Func::DateTrunc, vec![arg_as(name, &all, field, text())?, x], t(TypeId::Interval)));
                }
                Some(_) => return Err(no_function(name, &all)),
            }
            let x = coerce(x, Some(t(TypeId::Timestamp)))?;
            (Func::DateTrunc, vec![arg_as(name, &all, field, text())?, x], t(TypeId::Timestamp))
        }
        "to_char" => {
            arity(name, &args, 2, 2)?;
            let fmt = args.pop().expect("two arguments");
            let x = args.pop().expect("two arguments");
            match type_of(&x).map(|t| t.id) {
                Some(
                    TypeId::Timestamp
                    | TypeId::Date
                    | TypeId::Timestamptz
                    | TypeId::Int2
                    | TypeId::Int4
                    | TypeId::Int8
                    | TypeId::Float4
                    | TypeId::Float8
                    | TypeId::Numeric
                    | TypeId::Interval,
                ) => {}
                // time converts to interval implicitly: to_char(time) is to_char(interval).
                Some(TypeId::Time) => {
                    let fmt = arg_as(name, &all, fmt, text())?;
                    return Ok(Scalar::Func(Func::ToChar, vec![Scalar::Cast(Box::new(x), t(TypeId::Interval)), fmt], text()));
                }
                None => return Err(PgError::new("42725", "function to_char(unknown, unknown) is not unique")),
                Some(_) => return Err(no_function(name, &all)),
            }
            let fmt = arg_as(name, &all, fmt, text())?;
            (Func::ToChar, vec![x, fmt], text())
        }
        "byteacat" if args.len() == 2 => (Func::ByteaCat, each(args, &[t(TypeId::Bytea), t(TypeId::Bytea)])?, t(TypeId::Bytea)),
        "to_timestamp" if args.len() == 1 => (Func::ToTimestampEpoch, each(args, &[f8()])?, t(TypeId::Timestamptz)),
        "to_number" | "to_date" | "to_timestamp" if args.len() == 2 => {
            let (f, ty) = match name {
                "to_number" => (Func::ToNumber, numeric()),
                "to_date" => (Func::ToDate, t(TypeId::Date)),
                _ => (Func::ToTimestamp, t(TypeId::Timestamptz)),
            };
            (f, each(args, &[text(), text()])?, ty)
        }
        "log" | "log10" if args.len() == 1 && numeric_call(&args) => {
            // log(numeric) is log(10, x) in PostgreSQL: a numeric, scaled as log(b, x) is.
            (Func::Log10, each(args, &[numeric()])?, numeric())
        }
        "log" if args.len() == 2 => {
            // Only log(numeric, numeric) exists: integers convert, floats do not.
            (Func::Log, each(args, &[numeric(), numeric()])?, numeric())
        }
        "width_bucket" if args.len() == 4 => {
            // The count is an integer: a bigint (or anything else) has no function.
            if type_of(&args[3]).is_some_and(|t| !matches!(t.id, TypeId::Int2 | TypeId::Int4)) {
                return Err(no_function(name, &all));
            }
            let ty = if numeric_call(&args[..3]) { numeric() } else { f8() };
            (Func::WidthBucket, each(args, &[ty, ty, ty, int4])?, int4)
        }
        "factorial" => {
            arity(name, &args, 1, 1)?;
            (Func::Factorial, each(args, &[t(TypeId::Int8)])?, numeric())
        }
        "cbrt" | "degrees" | "radians" | "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "cot" | "log10" => {
            arity(name, &args, 1, 1)?;
            let f = match name {
                "cbrt" => Func::Cbrt,
                "degrees" => Func::Degrees,
                "radians" => Func::Radians,
                "log10" => Func::Log10,
                "sin" => Func::Trig(0),
                "cos" => Func::Trig(1),
                "tan" => Func::Trig(2),
                "asin" => Func::Trig(3),
                "acos" => Func::Trig(4),
                "atan" => Func::Trig(5),
                _ => Func::Trig(6),
            };
            (f, each(args, &[f8()])?, f8())
        }
        "log" if args.len() == 1 => {
            // log(x) of an integer or float is log(double precision) in PostgreSQL.
            (Func::Log10, each(args, &[f8()])?, f8())
        }
        "atan2" => {
            arity(name, &args, 2, 2)?;
            (Func::Atan2, each(args, &[f8(), f8()])?, f8())
        }
        "pi" => {
            arity(name, &args, 0, 0)?;
            return Ok(Scalar::Const(Value::Float8(std::f64::consts::PI)));
        }
        "gcd" | "lcm" if args.len() == 2 && args.iter().all(|a| type_of(a).is_none_or(|t| is_int(t.id))) => {
            if args.iter().any(|a| type_of(a).is_some()) && args.iter().all(|a| type_of(a).is_none_or(|t| t.id == TypeId::Int2)) {
                // Smallints fit the integer and bigint forms alike.
                let shown: Vec<String> = args.iter().map(|a| type_of(a).map(|t| t.name()).unwrap_or_else(|| "unknown".into())).collect();
                return Err(PgError::new("42725", format!("function {name}({}) is not unique", shown.join(", ")))
                    .with_hint("Could not choose a best candidate function. You might need to add explicit type casts."));
            }
            let (a, b) = bind_pair(args[0].clone(), args[1].clone())?;
            let ty = match (type_of(&a), type_of(&b)) {
                (Some(x), Some(y)) if int_rank(x.id) >= int_rank(y.id) && x.id != TypeId::Int2 => x,
                (Some(x), Some(y)) if y.id != TypeId::Int2 && int_rank(y.id) > int_rank(x.id) => y,
                _ => int4,
            };
            let f = if name == "gcd" { Func::Gcd } else { Func::Lcm };
            (f, vec![to_type(a, Some(ty))?, to_type(b, Some(ty))?], ty)
        }
        "ascii" => {
            arity(name, &args, 1, 1)?;
            (Func::Ascii, each(args, &[text()])?, int4)
        }
        "chr" => {
            arity(name, &args, 1, 1)?;
            (Func::Chr, each(args, &[int4])?, text())
        }
        "split_part" => {
            arity(name, &args, 3, 3)?;
            (Func::SplitPart, each(args, &[text(), text(), int4])?, text())
        }
        "gen_random_uuid" => {
            arity(name, &args, 0, 0)?;
            (Func::GenRandomUuid, args, t(TypeId::Uuid))
        }
        "random" => {
            arity(name, &args, 0, 0)?;
            (Func::Random, args, t(TypeId::Float8))
        }
        "clock_timestamp" => {
            arity(name, &args, 0, 0)?;
            (Func::ClockTimestamp, args, t(TypeId::Timestamptz))
        }
        "timeofday" => {
            arity(name, &args, 0, 0)?;
            (Func::TimeOfDay, args, text())
        }
        _ if super::advisory::AdvisoryFunc::lookup(name).is_some() => {
            let f = super::advisory::AdvisoryFunc::lookup(name).expect("matched");
            let args = match (f, args.len()) {
                (super::advisory::AdvisoryFunc::UnlockAll, 0) => args,
                (super::advisory::AdvisoryFunc::UnlockAll, _) => return Err(no_function(name, &args)),
                (_, 1) => each(args, &[t(TypeId::Int8)])?,
                (_, 2) => each(args, &[int4, int4])?,
                _ => return Err(no_function(name, &args)),
            };
            let ty = if f.returns_bool() { t(TypeId::Bool) } else { t(TypeId::Void) };
            (Func::Advisory(f), args, ty)
        }
        "pg_sleep" => {
            arity(name, &args, 1, 1)?;
            (Func::PgSleep(0), each(args, &[t(TypeId::Float8)])?, t(TypeId::Void))
        }
        "pg_sleep_for" => {
            arity(name, &args, 1, 1)?;
            (Func::PgSleep(1), each(args, &[t(TypeId::Interval)])?, t(TypeId::Void))
        }
        "pg_sleep_until" => {
            arity(name, &args, 1, 1)?;
            (Func::PgSleep(2), each(args, &[t(TypeId::Timestamptz)])?, t(TypeId::Void))
        }
        "starts_with" => {
            arity(name, &args, 2, 2)?;
            (Func::StartsWith, each(args, &[text(), text()])?, t(TypeId::Bool))
        }
        "translate" => {
            arity(name, &args, 3, 3)?;
            (Func::Translate, each(args, &[text()])?, text())
        }
        "to_hex" => {
            arity(name, &args, 1, 1)?;
            let ty = match type_of(&args[0]) {
                Some(x) if x.id == TypeId::Int8 => x,
                // A smallint converts to both forms (integer, bigint) alike: 42725.
                Some(x) if x.id == TypeId::Int2 => {
                    return Err(PgError::new("42725", "function to_hex(smallint) is not unique")
                        .with_hint("Could not choose a best candidate function. You might need to add explicit type casts."))
                }
                Some(x) if is_int(x.id) => int4,
                None => int4,
                Some(_) => return Err(no_function(name, &args)),
            };
            (Func::ToHex, each(args, &[ty])?, text())
        }
        "make_date" => {
            arity(name, &args, 3, 3)?;
            (Func::MakeDate, each(args, &[int4, int4, int4])?, t(TypeId::Date))
        }
        "scale" | "min_scale" | "trim_scale" => {
            arity(name, &args, 1, 1)?;
            let (which, ty) = match name {
                "scale" => (0, int4),
                "min_scale" => (1, int4),
                _ => (2, t(TypeId::Numeric)),
            };
            (Func::NumScale(which), each(args, &[t(TypeId::Numeric)])?, ty)
        }
        "format" => {
            if args.is_empty() {
                return Err(no_function(name, &args));
            }
            let mut it = args.into_iter();
            let mut out = vec![arg_as(name, &all, it.next().expect("a format"), text())?];
            for a in it {
                out.push(coerce(a, Some(text()))?);
            }
            (Func::Format, out, text())
        }
        "overlay" => {
            arity(name, &args, 3, 4)?;
            if type_of(&args[0]).is_some_and(|t| t.id == TypeId::Bytea) {
                return Err(PgError::feature("overlay() of bytea is not supported by heapstore yet"));
            }
            (Func::Overlay, each(args, &[text(), text(), int4, int4])?, text())
        }
        "make_time" => {
            arity(name, &args, 3, 3)?;
            (Func::MakeTime, each(args, &[int4, int4, t(TypeId::Float8)])?, t(TypeId::Time))
        }
        "make_timestamp" => {
            arity(name, &args, 6, 6)?;
            (Func::MakeTimestamp, each(args, &[int4, int4, int4, int4, int4, t(TypeId::Float8)])?, t(TypeId::Timestamp))
        }
        // make_timestamptz(...): that wall-clock time in the session's time zone, or in the
        // zone a seventh argument names (as `timestamp AT TIME ZONE zone`).
        "make_timestamptz" => {
            arity(name, &args, 6, 7)?;
            let zone = if args.len() == 7 { args.pop() } else { None };
            let ts =
                Scalar::Func(Func::MakeTimestamp, each(args, &[int4, int4, int4, int4, int4, t(TypeId::Float8)])?, t(TypeId::Timestamp));
            return match zone {
                None => Ok(Scalar::Cast(Box::new(ts), t(TypeId::Timestamptz))),
                Some(z) => Ok(Scalar::Func(Func::TimestampAtSaneZone, vec![arg_as(name, &all, z, text())?, ts], t(TypeId::Timestamptz))),
            };
        }
        "num_nulls" | "num_nonnulls" => {
            if args.is_empty() {
                return Err(no_function(name, &args));
            }
            // VARIADIC "any": untyped literals are text.
            let args = args.into_iter().map(|a| coerce(a, Some(text()))).collect::<Result<Vec<_>>>()?;
            (Func::NumNulls(name == "num_nonnulls"), args, int4)
        }
        "isfinite" => {
            arity(name, &args, 1, 1)?;
            match type_of(&args[0]).map(|t| t.id) {
                Some(TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz | TypeId::Interval) => (Func::IsFinite, args, t(TypeId::Bool)),
                // isfinite(interval) of a time (the implicit cast): true.
                Some(TypeId::Time) => (Func::IsFinite, vec![Scalar::Cast(Box::new(args[0].clone()), t(TypeId::Interval))], t(TypeId::Bool)),
                None if matches!(args[0], Scalar::Unknown(_) | Scalar::Const(Value::Null) | Scalar::Param(_, None)) => {
                    return Err(PgError::new("42725", format!("function {name}(unknown) is not unique"))
                        .with_hint("Could not choose a best candidate function. You might need to add explicit type casts."))
                }
                _ => return Err(no_function(name, &args)),
            }
        }
        "bit_length" => {
            arity(name, &args, 1, 1)?;
            match type_of(&args[0]).map(|t| t.id) {
                Some(TypeId::Bytea) => (Func::BitLength, args, int4),
                _ => (Func::BitLength, each(args, &[text()])?, int4),
            }
        }
        "sha224" | "sha256" | "sha384" | "sha512" => {
            arity(name, &args, 1, 1)?;
            let bits = name[3..].parse().expect("a digest size");
            (Func::Sha(bits), each(args, &[t(TypeId::Bytea)])?, t(TypeId::Bytea))
        }
        "encode" => {
            arity(name, &args, 2, 2)?;
            (Func::Encode, each(args, &[t(TypeId::Bytea), text()])?, text())
        }
        "decode" => {
            arity(name, &args, 2, 2)?;
            (Func::Decode, each(args, &[text(), text()])?, t(TypeId::Bytea))
        }
        "convert_to" => {
            arity(name, &args, 2, 2)?;
            (Func::ConvertTo, each(args, &[text(), text()])?, t(TypeId::Bytea))
        }
        "convert_from" => {
            arity(name, &args, 2, 2)?;
            (Func::ConvertFrom, each(args, &[t(TypeId::Bytea), text()])?, text())
        }
        "timezone" => {
            arity(name, &args, 2, 2)?;
            let mut it = args.into_iter();
            let (zone, ts) = (it.next().expect("two arguments"), it.next().expect("two arguments"));
            let zone = match type_of(&zone).map(|t| t.id) {
                Some(TypeId::Interval) => zone,
                _ => arg_as(name, &all, zone, text())?,
            };
            // timezone(text, timestamptz) is the form an untyped literal, a NULL or a date
            // resolves to (timestamptz is its category's preferred type).
            let (ts, ty) = match type_of(&ts).map(|t| t.id) {
                Some(TypeId::Timestamp) => (ts, t(TypeId::Timestamptz)),
                Some(TypeId::Timestamptz) => (ts, t(TypeId::Timestamp)),
                Some(TypeId::Date) => (Scalar::Cast(Box::new(ts), t(TypeId::Timestamptz)), t(TypeId::Timestamp)),
                // timezone(zone, timetz); a time is read as a timetz (the session's zone).
                Some(TypeId::TimeTz) => (ts, t(TypeId::TimeTz)),
                Some(TypeId::Time) => (Scalar::Cast(Box::new(ts), t(TypeId::TimeTz)), t(TypeId::TimeTz)),
                None => (coerce(ts, Some(t(TypeId::Timestamptz)))?, t(TypeId::Timestamp)),
                Some(_) => return Err(no_function(name, &all)),
            };
            (Func::Timezone, vec![zone, ts], ty)
        }
        "date_bin" => {
            arity(name, &args, 3, 3)?;
            // date_bin(interval, timestamp, timestamp) when a timestamp without time zone is
            // given and nothing needs timestamptz; otherwise the timestamptz form (its
            // category's preferred type: dates and untyped literals resolve to it).
            let ids: Vec<Option<TypeId>> = args[1..].iter().map(|a| type_of(a).map(|t| t.id)).collect();
            for id in ids.iter().flatten() {
                if !matches!(id, TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz) {
                    return Err(no_function(name, &args));
                }
            }
            let plain = ids.contains(&Some(TypeId::Timestamp)) && !ids.contains(&Some(TypeId::Timestamptz));
            let ty = t(if plain { TypeId::Timestamp } else { TypeId::Timestamptz });
            let mut it = args.into_iter();
            let stride = arg_as(name, &all, it.next().expect("three arguments"), t(TypeId::Interval))?;
            let mut out = vec![stride];
            for a in it {
                out.push(match type_of(&a) {
                    None => coerce(a, Some(ty))?,
                    Some(x) if x.id == ty.id => a,
                    Some(_) => Scalar::Cast(Box::new(a), ty),
                });
            }
            (Func::DateBin, out, ty)
        }
        "age" => {
            arity(name, &args, 2, 2)?;
            let ty = if args.iter().any(|a| type_of(a).is_some_and(|t| t.id == TypeId::Timestamptz)) {
                t(TypeId::Timestamptz)
            } else {
                t(TypeId::Timestamp)
            };
            let args = args
                .into_iter()
                .map(|a| match type_of(&a).map(|t| t.id) {
                    None => coerce(a, Some(ty)),
                    // Both arguments of the one type (a timestamp beside a timestamptz is the
                    // instant the session's clocks read it).
                    Some(id) if id == ty.id => Ok(a),
                    Some(TypeId::Date | TypeId::Timestamp) => Ok(Scalar::Cast(Box::new(a), ty)),
                    Some(_) => Err(no_function(name, &all)),
                })
                .collect::<Result<Vec<_>>>()?;
            (Func::Age, args, t(TypeId::Interval))
        }
        "justify_days" | "justify_hours" | "justify_interval" => {
            arity(name, &args, 1, 1)?;
            let k = match name {
                "justify_days" => 0,
                "justify_hours" => 1,
                _ => 2,
            };
            (Func::Justify(k), each(args, &[t(TypeId::Interval)])?, t(TypeId::Interval))
        }
        "extract" => {
            return Err(PgError::feature("extract() called as a function is not supported by heapstore yet (write EXTRACT(field FROM x))"))
        }
        _ if KNOWN_ELSEWHERE.contains(&name) => {
            return Err(PgError::feature(format!("function {name}() is not supported by heapstore yet")));
        }
        _ => return Err(no_function(name, &args)),
    };
    Ok(Scalar::Func(f, args, ty))
}

/// PostgreSQL functions heapstore does not have yet: refused with 0A000 (PostgreSQL would
/// run them), not 42883 (which would say they do not exist).
const KNOWN_ELSEWHERE: &[&str] = &[
    "to_timestamp",
    "width_bucket",
    "div",
    "exp",
    "string_to_array",
    "array_agg",
    "array_length",
    "unnest",
    "generate_series",
    "json_build_object",
    "json_array_elements",
    "json_array_elements_text",
    "json_object_keys",
    "json_each",
    "json_each_text",
    "jsonb_exists",
    "jsonb_exists_any",
    "jsonb_exists_all",
    "jsonb_contains",
    "jsonb_contained",
    "jsonb_concat",
    "jsonb_delete",
    "jsonb_object_field",
    "jsonb_object_field_text",
    "jsonb_array_element",
    "jsonb_array_element_text",
    "json_object_field",
    "json_object_field_text",
    "json_array_element",
    "json_array_element_text",
    "jsonb_cmp",
    "jsonb_eq",
    "jsonb_ne",
    "jsonb_lt",
    "jsonb_gt",
    "jsonb_le",
    "jsonb_ge",
    "jsonb_hash",
    "jsonb_in",
    "jsonb_out",
    "json_in",
    "json_out",
    "jsonb_set_lax",
    "jsonb_object",
    "json_object",
    "json_strip_nulls",
    "jsonb_to_record",
    "jsonb_to_recordset",
    "jsonb_populate_record",
    "jsonb_populate_recordset",
    "jsonb_path_query",
    "jsonb_path_query_array",
    "jsonb_path_query_first",
    "jsonb_path_exists",
    "jsonb_path_match",
    "setseed",
    "make_interval",
    "char_length",
    "cardinality",
    "xmlagg",
    "json_agg",
];

fn int_rank(t: TypeId) -> u8 {
    match t {
        TypeId::Int2 => 1,
        TypeId::Int4 => 2,
        _ => 3,
    }
}

fn text_arg(v: &Value) -> &str {
    match v {
        Value::Text(s) => s,
        _ => "",
    }
}

fn int_arg(v: &Value) -> i64 {
    expr::as_i64(v).unwrap_or(0)
}

fn float_arg(v: &Value) -> f64 {
    expr::as_f64(v).unwrap_or(f64::NAN)
}

fn char_count(s: &str) -> i64 {
    s.chars().count() as i64
}

/// `substr(s, start, len)` with PostgreSQL's rules: positions count from 1, a start before 1
/// shortens the length, a negative length is an error.
fn substr(s: &str, start: i64, len: Option<i64>) -> Result<String> {
    let end = match len {
        Some(l) if l < 0 => return Err(PgError::new("22011", "negative substring length not allowed")),
        Some(l) => Some(start.saturating_add(l)),
        None => None,
    };
    let from = start.max(1);
    let out: String = s
        .chars()
        .enumerate()
        .filter(|(i, _)| {
            let pos = *i as i64 + 1;
            pos >= from && end.is_none_or(|e| pos < e)
        })
        .map(|(_, c)| c)
        .collect();
    Ok(out)
}

fn pad(s: &str, len: i64, fill: &str, left: bool) -> String {
    let len = len.max(0) as usize;
    let chars: Vec<char> = s.chars().collect();
    if chars.len() >= len {
        return chars[..len].iter().collect();
    }
    let fill: Vec<char> = fill.chars().collect();
    if fill.is_empty() {
        return s.to_string();
    }
    let padding: String = fill.iter().cycle().take(len - chars.len()).collect();
    if left {
        padding + s
    } else {
        s.to_string() + &padding
    }
}

fn trim(s: &str, set: &str, leading: bool, trailing: bool) -> String {
    let set: Vec<char> = set.chars().collect();
    let mut r = s;
    if leading {
        r = r.trim_start_matches(|c| set.contains(&c));
    }
    if trailing {
        r = r.trim_end_matches(|c| set.contains(&c));
    }
    r.to_string()
}

/// A character's lower case as PostgreSQL's `lower` finds it under a UTF-8 locale
/// (`towlower`, one character for one): Unicode's simple mapping, so `İ` becomes `i` (not
/// `i` and a combining dot) and `Σ` is `σ` wherever it stands (no final-sigma rule).
pub(crate) fn lower_char(c: char) -> char {
    let mut l = c.to_lowercase();
    match (l.next(), l.next()) {
        (Some(x), None) => x,
        // U+0130 is the one character whose full lower case is longer.
        _ => 'i',
    }
}

/// A character's upper case as PostgreSQL's `upper` finds it (`towupper`): Unicode's simple
/// mapping, so `ß` and `ŉ` stay as they are (their full upper case is two characters) and the
/// Greek letters with ypogegrammeni take their one-character capital (`ᾳ` is `ᾼ`).
pub(crate) fn upper_char(c: char) -> char {
    let mut u = c.to_uppercase();
    match (u.next(), u.next()) {
        (Some(x), None) => x,
        _ => match c as u32 {
            0x1F80..=0x1F87 | 0x1F90..=0x1F97 | 0x1FA0..=0x1FA7 => char::from_u32(c as u32 + 8).unwrap_or(c),
            0x1FB3 | 0x1FC3 | 0x1FF3 => char::from_u32(c as u32 + 9).unwrap_or(c),
            _ => c,
        },
    }
}

/// `lower(s)`, character by character ([`lower_char`]).
pub(crate) fn pg_lower(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    s.chars().map(lower_char).collect()
}

/// `upper(s)`, character by character ([`upper_char`]).
pub(crate) fn pg_upper(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_uppercase();
    }
    s.chars().map(upper_char).collect()
}

/// A character encoding named as PostgreSQL names them (`pg_char_to_encoding`: case and
/// punctuation ignored, so `utf-8`, `Latin-1` and `iso_8859_1` are names too).
#[derive(Clone, Copy, PartialEq, Eq)]
enum CharEncoding {
    Utf8,
    SqlAscii,
    Latin1,
    /// One of PostgreSQL's other encodings, which heapstore does not convert.
    Other,
}

fn char_encoding(name: &str) -> Option<CharEncoding> {
    let clean: String = name.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect();
    Some(match clean.as_str() {
        "utf8" | "unicode" => CharEncoding::Utf8,
        "sqlascii" => CharEncoding::SqlAscii,
        "latin1" | "iso88591" => CharEncoding::Latin1,
        "abc" | "alt" | "big5" | "euccn" | "eucjis2004" | "eucjp" | "euckr" | "euctw" | "gb18030" | "gbk" | "johab" | "koi8" | "koi8r"
        | "koi8u" | "mskanji" | "muleinternal" | "shiftjis" | "shiftjis2004" | "sjis" | "tcvn" | "tcvn5712" | "uhc" | "vscii" | "win"
        | "win866" | "win874" | "win932" | "win936" | "win949" | "win950" | "windows866" | "windows874" | "windows932" | "windows936"
        | "windows949" | "windows950" | "iso88595" | "iso88596" | "iso88597" | "iso88598" => CharEncoding::Other,
        c if ["latin", "iso8859", "win125", "windows125"].iter().any(|p| {
            c.strip_prefix(p).and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| match *p {
                "latin" => (2..=10).contains(&n),
                "iso8859" => (2..=16).contains(&n) && n != 11 && n != 12,
                _ => n <= 8,
            })
        }) =>
        {
            CharEncoding::Other
        }
        _ => return None,
    })
}

fn unconverted(name: &str) -> PgError {
    PgError::feature(format!(
        "conversion between UTF8 and encoding \"{name}\" is not supported by heapstore (UTF8, SQL_ASCII and LATIN1 are)"
    ))
}

/// `convert_to(text, encoding)`.
fn convert_to(s: &str, name: &str) -> Result<Vec<u8>> {
    match char_encoding(name) {
        None => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid destination encoding name \"{name}\""))),
        Some(CharEncoding::Utf8 | CharEncoding::SqlAscii) => Ok(s.as_bytes().to_vec()),
        Some(CharEncoding::Latin1) => s
            .chars()
            .map(|c| {
                u8::try_from(c as u32).map_err(|_| {
                    let mut buf = [0u8; 4];
                    let bytes: Vec<String> = c.encode_utf8(&mut buf).bytes().map(|b| format!("0x{b:02x}")).collect();
                    PgError::new(
                        "22P05",
                        format!(
                            "character with byte sequence {} in encoding \"UTF8\" has no equivalent in encoding \"LATIN1\"",
                            bytes.join(" ")
                        ),
                    )
                })
            })
            .collect(),
        Some(CharEncoding::Other) => Err(unconverted(name)),
    }
}

/// `convert_from(bytea, encoding)`: the bytes must be valid in the encoding (SQL_ASCII's are
/// checked as UTF8, the database's encoding), and hold no zero byte.
fn convert_from(b: &[u8], name: &str) -> Result<String> {
    let invalid = |enc: &str, bad: &[u8]| {
        let bytes: Vec<String> = bad.iter().map(|b| format!("0x{b:02x}")).collect();
        PgError::new("22021", format!("invalid byte sequence for encoding \"{enc}\": {}", bytes.join(" ")))
    };
    match char_encoding(name) {
        None => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid source encoding name \"{name}\""))),
        Some(CharEncoding::Utf8 | CharEncoding::SqlAscii) => {
            let bad_at = match std::str::from_utf8(b) {
                Ok(s) => match s.find('\0') {
                    None => return Ok(s.to_string()),
                    Some(i) => i,
                },
                Err(e) => e.valid_up_to(),
            };
            // As PostgreSQL reports it: the bytes of the character that starts there, as long
            // as its first byte says (and the input holds).
            let len = match b[bad_at] {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            Err(invalid("UTF8", &b[bad_at..(bad_at + len).min(b.len())]))
        }
        Some(CharEncoding::Latin1) => match b.iter().position(|&x| x == 0) {
            Some(i) => Err(invalid("LATIN1", &b[i..i + 1])),
            None => Ok(b.iter().map(|&x| char::from(x)).collect()),
        },
        Some(CharEncoding::Other) => Err(unconverted(name)),
    }
}

/// `initcap` under the C collation: words are runs of ASCII letters and digits (any other
/// character, non-ASCII ones included, separates them), and only ASCII letters change.
fn initcap_c(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut word = false;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(if word { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() });
            word = true;
        } else {
            out.push(c);
            word = false;
        }
    }
    out
}

/// The collation written with `COLLATE` directly on an argument (parentheses aside), folded
/// (`c`, `posix`, `ucs_basic`, `default`), or None. A C-like collation written deeper inside
/// the argument (`lower(a || b COLLATE "C")`) is refused (0A000): heapstore does not derive
/// collations through expressions, and case mapping depends on them.
pub(super) fn explicit_collation(e: &Expr) -> Result<Option<String>> {
    let fold = |c: &sqlparser::ast::ObjectName| {
        let c = c.to_string().to_ascii_lowercase().replace('"', "");
        c.strip_prefix("pg_catalog.").unwrap_or(&c).to_string()
    };
    let mut inner = e;
    while let Expr::Nested(x) = inner {
        inner = x;
    }
    let (direct, rest) = match inner {
        Expr::Collate { expr, collation } => (Some(fold(collation)), &**expr),
        other => (None, other),
    };
    let mut deeper = false;
    let _ = sqlparser::ast::visit_expressions(rest, |x| {
        if let Expr::Collate { collation, .. } = x {
            deeper |= fold(collation) != "default";
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    if deeper {
        return Err(PgError::feature(
            "a COLLATE clause inside the argument of a case-insensitive operation or case-mapping function is not supported by heapstore",
        )
        .with_hint("Write COLLATE directly on the argument: lower(x COLLATE \"C\")."));
    }
    Ok(direct)
}

/// Whether a folded collation name maps case as the C locale does (ASCII only).
pub(super) fn c_like(collation: Option<&str>) -> bool {
    matches!(collation, Some("c" | "posix" | "ucs_basic"))
}

fn initcap(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut word = false;
    for c in s.chars() {
        if c.is_alphanumeric() {
            if word {
                out.push(lower_char(c));
            } else {
                out.push(upper_char(c));
            }
            word = true;
        } else {
            out.push(c);
            word = false;
        }
    }
    out
}

/// PostgreSQL's reserved keywords (and the type/function names it also quotes): an identifier
/// spelled as one of these is quoted by `quote_ident`.
const RESERVED: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "between",
    "bigint",
    "binary",
    "bit",
    "boolean",
    "both",
    "case",
    "cast",
    "char",
    "character",
    "check",
    "coalesce",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "dec",
    "decimal",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "float",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "grant",
    "greatest",
    "group",
    "grouping",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "inout",
    "int",
    "integer",
    "intersect",
    "interval",
    "into",
    "is",
    "isnull",
    "join",
    "lateral",
    "leading",
    "least",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "national",
    "natural",
    "nchar",
    "none",
    "normalize",
    "not",
    "notnull",
    "null",
    "nullif",
    "numeric",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "out",
    "outer",
    "overlaps",
    "overlay",
    "placing",
    "position",
    "precision",
    "primary",
    "real",
    "references",
    "returning",
    "right",
    "row",
    "select",
    "session_user",
    "setof",
    "similar",
    "smallint",
    "some",
    "substring",
    "symmetric",
    "table",
    "tablesample",
    "then",
    "time",
    "timestamp",
    "to",
    "trailing",
    "treat",
    "trim",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "values",
    "varchar",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
    "xmlattributes",
    "xmlconcat",
    "xmlelement",
    "xmlexists",
    "xmlforest",
    "xmlnamespaces",
    "xmlparse",
    "xmlpi",
    "xmlroot",
    "xmlserialize",
    "xmltable",
];

/// `quote_ident`: as PostgreSQL's quote_identifier.
/// `quote_literal_cstr`: `'...'` with quotes doubled; `E'...'` with backslashes doubled too
/// when there is any.
pub fn quote_literal(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 3);
    if v.contains('\\') {
        out.push('E');
    }
    out.push('\'');
    for c in v.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

pub fn quote_ident(v: &str) -> String {
    let plain = v.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && v.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !RESERVED.contains(&v);
    if plain {
        return v.to_string();
    }
    format!("\"{}\"", v.replace('"', "\"\""))
}

/// Evaluates scalar function `f` on non-NULL-checked arguments (`ty`: the bound result type).
pub fn call(f: Func, args: &[Value], ty: &SqlType) -> Result<Value> {
    if let Func::Array(af) = f {
        return super::array::eval(af, args, ty);
    }
    if let Func::Json(jf) = f {
        return super::jsonfn::eval(jf, args, ty);
    }
    if matches!(f, Func::JsonBuildObject | Func::JsonBuildArray) {
        let typed: Vec<(Value, SqlType)> =
            args.iter().map(|v| (v.clone(), v.natural_type().unwrap_or(SqlType::new(TypeId::Text)))).collect();
        return if f == Func::JsonBuildObject {
            crate::types::json::build_object(&typed)
        } else {
            Ok(crate::types::json::build_array(&typed))
        };
    }
    if f == Func::Row {
        return Ok(Value::Record(Box::new(crate::types::Record { ty: *ty, fields: args.to_vec() })));
    }
    if let Func::RecordField(i) = f {
        return Ok(match &args[0] {
            Value::Record(r) => r.fields.get(usize::from(i)).cloned().unwrap_or(Value::Null),
            _ => Value::Null,
        });
    }
    if f == Func::GenRandomUuid {
        return Ok(Value::Uuid(crate::types::uuid::random()?));
    }
    if f == Func::Random {
        return Ok(Value::Float8(random_f64()?));
    }
    if f == Func::ClockTimestamp {
        return Ok(Value::Timestamptz(crate::types::datetime::now_us()));
    }
    if f == Func::TimeOfDay {
        return Ok(Value::Text(crate::types::datetime::time_of_day()));
    }
    if let Func::Seq(sf) = f {
        return Err(PgError::feature(format!("{}() is not supported here", sf.name())));
    }
    if let Func::Advisory(_) = f {
        return Err(PgError::feature("advisory lock functions are not supported here"));
    }
    if f == Func::Format {
        return super::strformat::format(args);
    }
    if f == Func::Overlaps {
        return Ok(overlaps(args));
    }
    if let Func::NumNulls(non) = f {
        let nulls = args.iter().filter(|v| **v == Value::Null).count();
        return Ok(Value::Int4(if non { args.len() - nulls } else { nulls } as i32));
    }
    let strict = !matches!(f, Func::Concat | Func::ConcatWs | Func::FormatType | Func::QuoteNullable);
    if f == Func::QuoteNullable && args[0] == Value::Null {
        return Ok(Value::Text("NULL".into()));
    }
    if strict && args.contains(&Value::Null) {
        return Ok(Value::Null);
    }
    if let Some(v) = interval_call(f, args)? {
        return Ok(v);
    }
    if let Func::PgSleep(kind) = f {
        pg_sleep(kind, &args[0])?;
        return Ok(Value::Text(String::new()));
    }
    if f == Func::FormatType {
        let oid = match &args[0] {
            Value::Null => return Ok(Value::Null),
            Value::Oid(o) | Value::Regtype(o) => *o,
            v => match expr::as_i64(v).and_then(|i| u32::try_from(i).ok()) {
                Some(o) => o,
                None => return Ok(Value::Null),
            },
        };
        return Ok(Value::Text(format_type(oid, if args[1] == Value::Null { None } else { Some(int_arg(&args[1]) as i32) })));
    }
    if let Some(Value::Numeric(n)) = args.first() {
        if let Some(v) = numeric_call_eval(f, n, args)? {
            return Ok(v);
        }
    }
    if let Func::Bit(op) = f {
        let a = expr::as_i64(&args[0]).unwrap_or(0);
        let b = args.get(1).and_then(expr::as_i64).unwrap_or(0);
        let v = match op {
            0 => a & b,
            1 => a | b,
            2 => a ^ b,
            // Shifts are in the left operand's width, as PostgreSQL's int2shl/int4shl/int8shl
            // (the count taken modulo the width, as C does on x86).
            3 | 4 => {
                let bits = match ty.id {
                    TypeId::Int2 => 16,
                    TypeId::Int4 => 32,
                    _ => 64,
                };
                let n = (b.rem_euclid(bits)) as u32;
                let r = match (op, ty.id) {
                    (3, TypeId::Int2) => i64::from((a as i16).wrapping_shl(n)),
                    (3, TypeId::Int4) => i64::from((a as i32).wrapping_shl(n)),
                    (3, _) => a.wrapping_shl(n),
                    (_, TypeId::Int2) => i64::from((a as i16).wrapping_shr(n)),
                    (_, TypeId::Int4) => i64::from((a as i32).wrapping_shr(n)),
                    _ => a.wrapping_shr(n),
                };
                return expr::int_value(ty.id, r);
            }
            _ => !a,
        };
        return expr::int_value(ty.id, v);
    }
    let s0 = || text_arg(&args[0]);
    Ok(match f {
        Func::Seq(_)
        | Func::Advisory(_)
        | Func::Overlaps
        | Func::Array(_)
        | Func::Json(_)
        | Func::RecordField(_)
        | Func::Row
        | Func::JsonBuildObject
        | Func::JsonBuildArray
        | Func::GenRandomUuid
        | Func::Random
        | Func::ClockTimestamp
        | Func::TimeOfDay
        | Func::PgSleep(_)
        | Func::TsInterval(_)
        | Func::TimeArith(_)
        | Func::TsDiff
        | Func::IntervalArith(_)
        | Func::Age
        | Func::Justify(_)
        | Func::Log
        | Func::Bit(_) => {
            unreachable!("handled above")
        }
        Func::Length => Value::Int4(char_count(s0()) as i32),
        Func::OctetLength => Value::Int4(match &args[0] {
            Value::Bytea(b) => b.len() as i32,
            v => text_arg(v).len() as i32,
        }),
        Func::Lower => Value::Text(pg_lower(s0())),
        Func::Upper => Value::Text(pg_upper(s0())),
        Func::Initcap => Value::Text(initcap(s0())),
        Func::LowerC => Value::Text(s0().to_ascii_lowercase()),
        Func::UpperC => Value::Text(s0().to_ascii_uppercase()),
        Func::InitcapC => Value::Text(initcap_c(s0())),
        Func::Reverse => Value::Text(s0().chars().rev().collect()),
        Func::Md5 => Value::Text(md5_hex(s0().as_bytes())),
        Func::NumNulls(_) | Func::Format => unreachable!("handled above"),
        Func::NumScale(_) => unreachable!("numeric_call_eval answers it"),
        Func::IsFinite => Value::Bool(match &args[0] {
            Value::Date(d) => *d != i32::MIN && *d != i32::MAX,
            Value::Timestamp(t) | Value::Timestamptz(t) => *t != i64::MIN && *t != i64::MAX,
            _ => true,
        }),
        Func::BitLength => {
            let bytes = match &args[0] {
                Value::Bytea(b) => b.len(),
                v => text_arg(v).len(),
            };
            let bits = i32::try_from(bytes).ok().and_then(|n| n.checked_mul(8));
            Value::Int4(bits.ok_or_else(|| PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))?)
        }
        Func::Sha(bits) => {
            use sha2::Digest;
            let Value::Bytea(b) = &args[0] else { return Err(PgError::internal("sha2 of a non-bytea")) };
            Value::Bytea(match bits {
                224 => sha2::Sha224::digest(b).to_vec(),
                256 => sha2::Sha256::digest(b).to_vec(),
                384 => sha2::Sha384::digest(b).to_vec(),
                _ => sha2::Sha512::digest(b).to_vec(),
            })
        }
        Func::Encode => {
            let Value::Bytea(b) = &args[0] else { return Err(PgError::internal("encode of a non-bytea")) };
            let enc = crate::types::bytea::Encoding::named(text_arg(&args[1]))?;
            Value::Text(crate::types::bytea::encode(b, enc))
        }
        Func::Decode => {
            let enc = crate::types::bytea::Encoding::named(text_arg(&args[1]))?;
            Value::Bytea(crate::types::bytea::decode(s0(), enc)?)
        }
        Func::ConvertTo => Value::Bytea(convert_to(s0(), text_arg(&args[1]))?),
        Func::ConvertFrom => {
            let Value::Bytea(b) = &args[0] else { return Err(PgError::internal("convert_from of a non-bytea")) };
            Value::Text(convert_from(b, text_arg(&args[1]))?)
        }
        Func::DateBin => date_bin(args)?,
        Func::RegexpReplace | Func::RegexpLike | Func::RegexpCount | Func::RegexpMatch | Func::RegexpSplit | Func::RegexpSubstring => {
            regexp_call(f, args, ty)?
        }
        Func::TimestampAtSaneZone => match args[1] {
            Value::Timestamp(t) => Value::Timestamptz(crate::types::tz::Zone::sane(text_arg(&args[0]))?.from_local(t)?),
            _ => return Err(PgError::internal("make_timestamptz without a timestamp")),
        },
        Func::Timezone => {
            let zone = match &args[0] {
                Value::Interval(iv) => crate::types::tz::Zone::interval(iv)?,
                other => zone_named(text_arg(other))?,
            };
            match args[1] {
                Value::Timestamptz(t) => Value::Timestamp(zone.to_local(t)?),
                Value::Timestamp(t) => Value::Timestamptz(zone.from_local(t)?),
                // timetz_zone / timetz_izone: the same instant of the day in the zone, at the
                // zone's offset when the transaction started.
                Value::TimeTz(t) => {
                    let now = crate::types::tz::transaction_start().unwrap_or_else(crate::types::datetime::now_us);
                    let east = ((zone.to_local(now)? - now) / 1_000_000) as i32;
                    let time = (t.time + (i64::from(t.zone) + i64::from(east)) * 1_000_000).rem_euclid(USECS_PER_DAY);
                    Value::TimeTz(crate::types::TimeTz { time, zone: -east })
                }
                _ => return Err(PgError::internal("timezone() of a non-timestamp")),
            }
        }
        Func::MakeTimestamp => make_timestamp(args)?,
        Func::MakeTime => {
            let [h, mi] = [0, 1].map(|i| int_arg(&args[i]));
            Value::Time(time_of_fields(h, mi, float_arg(&args[2]))?)
        }
        Func::Overlay => {
            let (s, r) = (s0(), text_arg(&args[1]));
            let start = int_arg(&args[2]);
            let len = if args.len() > 3 { int_arg(&args[3]) } else { char_count(r) };
            overlay(s, r, start, len)?
        }
        Func::SizePretty => Value::Text(size_pretty(int_arg(&args[0]))),
        Func::QuoteIdent => Value::Text(quote_ident(s0())),
        Func::QuoteLiteral | Func::QuoteNullable => Value::Text(quote_literal(s0())),
        Func::Substr => Value::Text(substr(s0(), int_arg(&args[1]), args.get(2).map(int_arg))?),
        Func::StrPos => {
            let (h, n) = (s0(), text_arg(&args[1]));
            Value::Int4(match h.find(n) {
                Some(b) => h[..b].chars().count() as i32 + 1,
                None => 0,
            })
        }
        Func::Replace => {
            let from = text_arg(&args[1]);
            if from.is_empty() {
                Value::Text(s0().to_string())
            } else {
                Value::Text(s0().replace(from, text_arg(&args[2])))
            }
        }
        Func::Trim(l, r) => Value::Text(trim(s0(), args.get(1).map(text_arg).unwrap_or(" "), l, r)),
        Func::Concat => {
            let mut out = String::new();
            for a in args {
                if let Some(t) = a.to_text(&expr::value_type(a).unwrap_or(text())) {
                    out.push_str(&t);
                }
            }
            Value::Text(out)
        }
        Func::ConcatWs => {
            let Some(sep) = args[0].to_text(&text()) else { return Ok(Value::Null) };
            let parts: Vec<String> = args[1..].iter().filter_map(|a| a.to_text(&expr::value_type(a).unwrap_or(text()))).collect();
            Value::Text(parts.join(&sep))
        }
        Func::Left | Func::Right => {
            let chars: Vec<char> = s0().chars().collect();
            let n = int_arg(&args[1]);
            let len = chars.len() as i64;
            let keep = if n >= 0 { n.min(len) } else { (len + n).max(0) } as usize;
            Value::Text(if f == Func::Left { chars[..keep].iter().collect() } else { chars[chars.len() - keep..].iter().collect() })
        }
        Func::Lpad | Func::Rpad => Value::Text(pad(s0(), int_arg(&args[1]), args.get(2).map(text_arg).unwrap_or(" "), f == Func::Lpad)),
        Func::Repeat => {
            let n = int_arg(&args[1]).max(0) as usize;
            if s0().len().saturating_mul(n) > (1 << 30) - 1 {
                return Err(PgError::new("54000", "requested length too large"));
            }
            Value::Text(s0().repeat(n))
        }
        Func::Abs => match &args[0] {
            Value::Int2(v) => v.checked_abs().map(Value::Int2).ok_or_else(|| expr::out_of_range(TypeId::Int2))?,
            Value::Int4(v) => v.checked_abs().map(Value::Int4).ok_or_else(|| expr::out_of_range(TypeId::Int4))?,
            Value::Int8(v) => v.checked_abs().map(Value::Int8).ok_or_else(|| expr::out_of_range(TypeId::Int8))?,
            Value::Float4(v) => Value::Float4(v.abs()),
            v => Value::Float8(float_arg(v).abs()),
        },
        Func::Round => Value::Float8(float_arg(&args[0]).round_ties_even()),
        Func::Trunc => Value::Float8(float_arg(&args[0]).trunc()),
        Func::Floor => Value::Float8(float_arg(&args[0]).floor()),
        Func::Ceil => Value::Float8(float_arg(&args[0]).ceil()),
        Func::Sign => {
            let x = float_arg(&args[0]);
            Value::Float8(if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            })
        }
        Func::Sqrt => {
            let x = float_arg(&args[0]);
            if x < 0.0 {
                return Err(PgError::new("2201F", "cannot take square root of a negative number"));
            }
            Value::Float8(x.sqrt())
        }
        Func::Exp => {
            let r = float_arg(&args[0]).exp();
            if r.is_infinite() && float_arg(&args[0]).is_finite() {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
            }
            Value::Float8(r)
        }
        Func::Ln => {
            let x = float_arg(&args[0]);
            if x == 0.0 {
                return Err(PgError::new("2201E", "cannot take logarithm of zero"));
            }
            if x < 0.0 {
                return Err(PgError::new("2201E", "cannot take logarithm of a negative number"));
            }
            Value::Float8(x.ln())
        }
        Func::Power => {
            let (x, y) = (float_arg(&args[0]), float_arg(&args[1]));
            if x == 0.0 && y < 0.0 {
                return Err(PgError::new("2201F", "zero raised to a negative power is undefined"));
            }
            if x < 0.0 && y.fract() != 0.0 {
                return Err(PgError::new("2201F", "a negative number raised to a non-integer power yields a complex result"));
            }
            let r = x.powf(y);
            if r.is_infinite() && x.is_finite() && y.is_finite() {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
            }
            if r == 0.0 && x != 0.0 && x.is_finite() && y.is_finite() {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow"));
            }
            Value::Float8(r)
        }
        Func::Mod => {
            let (a, b) = (int_arg(&args[0]), int_arg(&args[1]));
            if b == 0 {
                return Err(PgError::new("22012", "division by zero"));
            }
            expr::int_value(ty.id, a.wrapping_rem(b))?
        }
        Func::DatePart => {
            // date_part(text, date) is date_part(text, date::timestamp) in PostgreSQL: a date
            // past timestamp's range is an error there (EXTRACT reads dates natively).
            if let Value::Date(d) = args[1] {
                let in_range = d == i32::MIN
                    || d == i32::MAX
                    || i64::from(d)
                        .checked_mul(USECS_PER_DAY)
                        .is_some_and(|t| (-211_813_488_000_000_000..9_223_371_331_200_000_000).contains(&t));
                if !in_range {
                    return Err(PgError::new("22008", "date out of range for timestamp"));
                }
            }
            date_part(text_arg(&args[0]), &args[1])?
        }
        Func::Extract => extract(text_arg(&args[0]), &args[1])?,
        Func::DateTrunc if args.len() == 3 && matches!(args[1], Value::Timestamptz(i64::MIN | i64::MAX)) => args[1].clone(),
        Func::DateTrunc if args.len() == 3 => {
            let zone = crate::types::tz::SessionZone::new(zone_named(text_arg(&args[2]))?);
            let _in_zone = crate::types::tz::scope(Some(zone));
            date_trunc(text_arg(&args[0]), &args[1])?
        }
        Func::DateTrunc => date_trunc(text_arg(&args[0]), &args[1])?,
        Func::ToChar => to_char(&args[0], text_arg(&args[1]))?,
        Func::ToNumber => {
            let fmt = text_arg(&args[1]);
            if fmt.is_empty() {
                // PostgreSQL's to_number with an empty format is NULL.
                Value::Null
            } else {
                let s = super::numfmt::to_number(text_arg(&args[0]), fmt).map_err(|e| fmt_error(e.code, e.message, e.detail, e.hint))?;
                Value::Numeric(crate::types::Numeric::parse(&s)?)
            }
        }
        Func::ByteaCat => match (&args[0], &args[1]) {
            (Value::Bytea(a), Value::Bytea(b)) => Value::Bytea([a.as_slice(), b.as_slice()].concat()),
            _ => return Err(PgError::internal("byteacat of values that are not bytea")),
        },
        Func::ToTimestampEpoch => Value::Timestamptz(timestamp_from_epoch(float_arg(&args[0]))?),
        Func::ToDate => parse_datetime(text_arg(&args[0]), text_arg(&args[1]), true)?,
        Func::ToTimestamp => parse_datetime(text_arg(&args[0]), text_arg(&args[1]), false)?,
        Func::ToRegtype => crate::types::regtype_oid(s0()).map_or(Value::Null, Value::Regtype),
        Func::FormatType => unreachable!("handled above"),
        Func::DateAdd => {
            let Value::Date(d) = args[0] else { return Ok(Value::Null) };
            if d == i32::MIN || d == i32::MAX {
                return Ok(Value::Date(d));
            }
            let r = i64::from(d) + int_arg(&args[1]);
            // PostgreSQL's date range: 4714-11-24 BC .. 5874897-12-31.
            if !(-2_451_545..=2_145_031_948).contains(&r) {
                return Err(PgError::new("22008", "date out of range"));
            }
            Value::Date(r as i32)
        }
        Func::DateDiff => match (&args[0], &args[1]) {
            (Value::Date(a), Value::Date(b)) => {
                if [*a, *b].iter().any(|d| *d == i32::MIN || *d == i32::MAX) {
                    return Err(PgError::new("22008", "cannot subtract infinite dates"));
                }
                Value::Int4(a - b)
            }
            _ => Value::Null,
        },
        Func::Cbrt => Value::Float8(libm_cbrt(float_arg(&args[0]))),
        // float8_div / float8_mul by RADIANS_PER_DEGREE, with their overflow and underflow
        // checks (Rust's to_degrees multiplies by 180/π, which rounds differently).
        Func::Degrees => {
            let x = float_arg(&args[0]);
            let r = x / RADIANS_PER_DEGREE;
            if r.is_infinite() && x.is_finite() {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
            }
            Value::Float8(r)
        }
        Func::Radians => {
            let x = float_arg(&args[0]);
            let r = x * RADIANS_PER_DEGREE;
            if r == 0.0 && x != 0.0 {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow"));
            }
            Value::Float8(r)
        }
        Func::WidthBucket => {
            Value::Int4(width_bucket_float8(float_arg(&args[0]), float_arg(&args[1]), float_arg(&args[2]), int_arg(&args[3]) as i32)?)
        }
        Func::Factorial => Value::Numeric(crate::types::Numeric::factorial(int_arg(&args[0]))?),
        Func::Log10 => {
            let x = float_arg(&args[0]);
            if x == 0.0 {
                return Err(PgError::new("2201E", "cannot take logarithm of zero"));
            }
            if x < 0.0 {
                return Err(PgError::new("2201E", "cannot take logarithm of a negative number"));
            }
            Value::Float8(x.log10())
        }
        Func::Trig(k) => {
            let x = float_arg(&args[0]);
            if matches!(k, 3 | 4) && !(-1.0..=1.0).contains(&x) {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "input is out of range"));
            }
            Value::Float8(match k {
                0 => x.sin(),
                1 => x.cos(),
                2 => x.tan(),
                3 => x.asin(),
                4 => x.acos(),
                5 => x.atan(),
                _ => 1.0 / x.tan(),
            })
        }
        Func::Atan2 => Value::Float8(float_arg(&args[0]).atan2(float_arg(&args[1]))),
        Func::Gcd | Func::Lcm => {
            let (a, b) = (int_arg(&args[0]), int_arg(&args[1]));
            let g = {
                let (mut x, mut y) = (a.unsigned_abs(), b.unsigned_abs());
                while y != 0 {
                    (x, y) = (y, x % y);
                }
                x
            };
            let r: i128 = if f == Func::Gcd {
                g as i128
            } else if a == 0 || b == 0 {
                0
            } else {
                ((a as i128) / (g as i128) * (b as i128)).abs()
            };
            let r = i64::try_from(r).map_err(|_| expr::out_of_range(ty.id))?;
            expr::int_value(ty.id, r)?
        }
        Func::Div => Value::Null,
        Func::Ascii => Value::Int4(s0().chars().next().map(|c| c as i32).unwrap_or(0)),
        Func::Chr => {
            let n = int_arg(&args[0]);
            // PostgreSQL's checks, in its order.
            if n < 0 {
                return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "character number must be positive"));
            }
            match u32::try_from(n).ok().and_then(char::from_u32) {
                Some('\0') => return Err(PgError::new("54000", "null character not permitted")),
                Some(c) => Value::Text(c.to_string()),
                None if (0xD800..=0xDFFF).contains(&n) => {
                    return Err(PgError::new("54000", format!("requested character not valid for encoding: {n}")))
                }
                None => return Err(PgError::new("54000", format!("requested character too large for encoding: {n}"))),
            }
        }
        Func::SplitPart => {
            let (sep, n) = (text_arg(&args[1]), int_arg(&args[2]));
            if n == 0 {
                return Err(PgError::new("22023", "field position must not be zero"));
            }
            let parts: Vec<&str> = if sep.is_empty() { vec![s0()] } else { s0().split(sep).collect() };
            let idx = if n > 0 { n - 1 } else { parts.len() as i64 + n };
            Value::Text(if idx >= 0 { parts.get(idx as usize).copied().unwrap_or("").to_string() } else { String::new() })
        }
        Func::StartsWith => Value::Bool(s0().starts_with(text_arg(&args[1]))),
        Func::Translate => {
            let from: Vec<char> = text_arg(&args[1]).chars().collect();
            let to: Vec<char> = text_arg(&args[2]).chars().collect();
            Value::Text(
                s0().chars()
                    .filter_map(|c| match from.iter().position(|&x| x == c) {
                        Some(i) => to.get(i).copied(),
                        None => Some(c),
                    })
                    .collect(),
            )
        }
        Func::ToHex => match args[0] {
            Value::Int8(v) => Value::Text(format!("{:x}", v as u64)),
            ref v => Value::Text(format!("{:x}", int_arg(v) as i32 as u32)),
        },
        Func::MakeInterval => {
            // PostgreSQL 17's make_interval: an overflow is 22008 (15 wrapped silently).
            let range = || PgError::new("22008", "interval out of range");
            let i = |k: usize| int_arg(&args[k]);
            let secs = match args[6] {
                Value::Float8(f) => f,
                ref v => expr::as_f64(v).unwrap_or(0.0),
            };
            if !secs.is_finite() {
                return Err(range());
            }
            let months = i(0).checked_mul(12).and_then(|y| y.checked_add(i(1))).and_then(|m| i32::try_from(m).ok()).ok_or_else(range)?;
            let days = i(2).checked_mul(7).and_then(|w| w.checked_add(i(3))).and_then(|d| i32::try_from(d).ok()).ok_or_else(range)?;
            let us = secs * 1e6;
            if us.is_infinite() {
                return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
            }
            let us = us.round_ties_even();
            if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&us) {
                return Err(range());
            }
            let micros = i(4)
                .checked_mul(3_600_000_000)
                .and_then(|h| i(5).checked_mul(60_000_000).and_then(|m| h.checked_add(m)))
                .and_then(|t| t.checked_add(us as i64))
                .ok_or_else(range)?;
            // PostgreSQL 17's infinite intervals are all-minimum and all-maximum fields.
            if (months, days, micros) == (i32::MIN, i32::MIN, i64::MIN) || (months, days, micros) == (i32::MAX, i32::MAX, i64::MAX) {
                return Err(range());
            }
            Value::Interval(crate::types::Interval { months, days, micros })
        }
        Func::MakeDate => {
            // PostgreSQL's make_date names the year after its BC conversion (-4714 is -4713).
            let (y, m, d) = (int_arg(&args[0]), int_arg(&args[1]), int_arg(&args[2]));
            let yy = if y < 0 { y + 1 } else { y };
            let range = || PgError::new("22008", format!("date out of range: {yy}-{m:02}-{d:02}"));
            let days = civil_date(y, m, d).map_err(|e| match e {
                CivilErr::Field => PgError::new("22008", format!("date field value out of range: {yy}-{m:02}-{d:02}")),
                CivilErr::Range => range(),
            })?;
            // IS_VALID_DATE: from 4714-11-24 BC (Julian day 0) to 5874897-12-31.
            let date = days - 10957;
            if !(-2_451_545..=2_145_031_948).contains(&date) {
                return Err(range());
            }
            Value::Date(date as i32)
        }
    })
}

const USECS_PER_DAY: i64 = 86_400_000_000;

/// PostgreSQL's RADIANS_PER_DEGREE (0.0174532925199432957692 as a double).
const RADIANS_PER_DEGREE: f64 = 0.017_453_292_519_943_295;

/// `random()`: the top 53 bits of a per-thread xoshiro256** generator, seeded from the
/// operating system the first time a thread draws, scaled to [0, 1) as PostgreSQL's
/// pg_prng_double does. (`setseed` is not supported: sessions do not own a generator.)
fn random_f64() -> Result<f64> {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<Option<[u64; 4]>> = const { Cell::new(None) };
    }
    let mut s = match STATE.with(Cell::get) {
        Some(s) => s,
        None => {
            let mut seed = [0u8; 32];
            getrandom::getrandom(&mut seed).map_err(|e| PgError::internal(format!("could not generate random values: {e}")))?;
            let mut s = [0u64; 4];
            for (i, w) in s.iter_mut().enumerate() {
                *w = u64::from_le_bytes(seed[i * 8..i * 8 + 8].try_into().expect("eight bytes"));
            }
            if s == [0; 4] {
                s[0] = 1;
            }
            s
        }
    };
    let r = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
    let t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s[3].rotate_left(45);
    STATE.with(|c| c.set(Some(s)));
    Ok((r >> 11) as f64 * (1.0 / (1u64 << 53) as f64))
}

/// The regular expression functions (`sql::regexp`), their arguments not NULL.
fn regexp_call(f: Func, args: &[Value], ty: &SqlType) -> Result<Value> {
    use super::regexp;
    let s = text_arg(&args[0]);
    let (name, flags_at) = match f {
        Func::RegexpReplace => ("regexp_replace", 3),
        Func::RegexpLike => ("regexp_like", 2),
        Func::RegexpCount => ("regexp_count", 3),
        Func::RegexpMatch => ("regexp_match", 2),
        Func::RegexpSplit => ("regexp_split_to_array", 2),
        _ => ("substring", usize::MAX),
    };
    let flags = regexp::flags(args.get(flags_at).map_or("", text_arg), (f != Func::RegexpReplace).then_some(name))?;
    let re = regexp::compiled(text_arg(&args[1]), flags.ci)?;
    let text_array = |items: Vec<Value>| {
        let n = items.len() as i32;
        super::array::build(*ty, vec![crate::types::array::Dim { len: n, lower: 1 }], items)
    };
    Ok(match f {
        Func::RegexpReplace => Value::Text(re.replace(s, text_arg(&args[2]), flags.global)?),
        Func::RegexpLike => Value::Bool(re.is_match(s)?),
        Func::RegexpCount => {
            let start = args.get(2).map_or(1, int_arg);
            let start = i32::try_from(start).unwrap_or(i32::MAX);
            match regexp::char_start(s, start)? {
                Some(from) => Value::Int4(re.matches(s, from, true, false)?.len() as i32),
                None => Value::Int4(0),
            }
        }
        Func::RegexpMatch => match re.first_match(s, "regexp_match")? {
            Some(m) => text_array(m.elements(s))?,
            None => Value::Null,
        },
        Func::RegexpSplit => text_array(re.split(s)?.into_iter().map(|p| Value::Text(p.to_string())).collect())?,
        _ => match re.first_match(s, "substring")?.and_then(|m| m.substring(s)) {
            Some(m) => Value::Text(m),
            None => Value::Null,
        },
    })
}

/// The zone `name` names, remembered per thread for the next row (a query converts many
/// values to one zone; reading it from the time zone database each time would dominate).
fn zone_named(name: &str) -> Result<crate::types::tz::Zone> {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(String, crate::types::tz::Zone)>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with(|l| {
        if let Some((n, z)) = &*l.borrow() {
            if n == name {
                return Ok(z.clone());
            }
        }
        let z = crate::types::tz::Zone::named(name)?;
        *l.borrow_mut() = Some((name.to_string(), z.clone()));
        Ok(z)
    })
}

/// `date_bin(stride, source, origin)` (timestamp_bin / timestamptz_bin, which read no time
/// zone): the start of the stride-wide bin, counted from `origin`, that holds `source`. An
/// infinite source is returned as it is; an infinite origin, a stride with months, a stride
/// not above zero and overflow are errors, as in PostgreSQL.
fn date_bin(args: &[Value]) -> Result<Value> {
    let Value::Interval(stride) = &args[0] else { return Err(PgError::internal("date_bin without an interval")) };
    let (ts, tz) = match &args[1] {
        Value::Timestamp(t) => (*t, false),
        Value::Timestamptz(t) => (*t, true),
        _ => return Err(PgError::internal("date_bin of a non-timestamp")),
    };
    let origin = match &args[2] {
        Value::Timestamp(t) | Value::Timestamptz(t) => *t,
        _ => return Err(PgError::internal("date_bin from a non-timestamp")),
    };
    let wrap = |t: i64| if tz { Value::Timestamptz(t) } else { Value::Timestamp(t) };
    if ts == i64::MIN || ts == i64::MAX {
        return Ok(wrap(ts));
    }
    let range = |m: &str| PgError::new("22008", m.to_string());
    if origin == i64::MIN || origin == i64::MAX {
        return Err(range("origin out of range"));
    }
    if stride.months != 0 {
        return Err(PgError::feature("timestamps cannot be binned into intervals containing months or years"));
    }
    let stride_us = i64::from(stride.days)
        .checked_mul(USECS_PER_DAY)
        .and_then(|d| d.checked_add(stride.micros))
        .ok_or_else(|| range("interval out of range"))?;
    if stride_us <= 0 {
        return Err(range("stride must be greater than zero"));
    }
    let diff = ts.checked_sub(origin).ok_or_else(|| range("interval out of range"))?;
    // The bin's start at or before the source, also when the origin is after it (in i128:
    // the bin may start before the smallest i64 while the source does not).
    let delta = i128::from(diff) - i128::from(diff).rem_euclid(i128::from(stride_us));
    let r = i64::try_from(i128::from(origin) + delta).ok().filter(|&r| crate::types::datetime::is_valid_timestamp(r));
    Ok(wrap(r.ok_or_else(|| range("timestamp out of range"))?))
}

/// C's `%02g` of a seconds value (for make_timestamp's messages): six significant digits,
/// trailing zeros dropped, an exponent outside 1e-4..1e6, zero-padded to two characters.
fn c_g2(x: f64) -> String {
    // A negative value is already two characters wide.
    format!("{:0>2}", c_format_g(x))
}

/// `make_timestamp(year, month, mday, hour, min, sec)` (make_timestamp_internal): a year
/// above zero and a real date (22008 `date field value out of range`), a time of day up to
/// 24:00:00 (22008 `time field value out of range`), seconds rounded to microseconds half to
/// even, and the result within timestamp's range.
fn make_timestamp(args: &[Value]) -> Result<Value> {
    let [y, m, d, h, mi] = [0, 1, 2, 3, 4].map(|i| int_arg(&args[i]));
    let sec = float_arg(&args[5]);
    // A negative year is BC, as make_date reads it; the messages name the year as given.
    let days = civil_date(y, m, d).map_err(|e| match e {
        CivilErr::Field => PgError::new("22008", format!("date field value out of range: {y}-{m:02}-{d:02}")),
        CivilErr::Range => PgError::new("22008", format!("date out of range: {y}-{m:02}-{d:02}")),
    })?;
    let time = time_of_fields(h, mi, sec)?;
    let date = days - 10957;
    let r = date.checked_mul(USECS_PER_DAY).and_then(|x| x.checked_add(time)).filter(|&r| crate::types::datetime::is_valid_timestamp(r));
    r.map(Value::Timestamp)
        .ok_or_else(|| PgError::new("22008", format!("timestamp out of range: {y}-{m:02}-{d:02} {h}:{mi:02}:{}", c_g2(sec))))
}

/// A time of day from its fields (`make_time`, the time of `make_timestamp`): up to 24:00:00
/// (22008 `time field value out of range` otherwise, PostgreSQL's `float_time_overflows`),
/// the seconds rounded to microseconds half to even first.
fn time_of_fields(h: i64, mi: i64, sec: f64) -> Result<i64> {
    let time_err = || PgError::new("22008", format!("time field value out of range: {h}:{mi:02}:{}", c_g2(sec)));
    if !(0..=24).contains(&h) || !(0..60).contains(&mi) || sec.is_nan() || !(-1.0..=61.0).contains(&sec) {
        return Err(time_err());
    }
    let us = (sec * 1e6).round_ties_even() as i64;
    if !(0..=60_000_000).contains(&us) || (h == 24 && (mi > 0 || us > 0)) {
        return Err(time_err());
    }
    Ok((h * 60 + mi) * 60 * 1_000_000 + us)
}

/// Why a date's fields are refused: ValidateDate's field check, or IS_VALID_JULIAN's range.
enum CivilErr {
    Field,
    Range,
}

/// The days since 1970-01-01 of SQL's year (negative: BC; there is no year 0), month and day,
/// checked as PostgreSQL's ValidateDate (a real calendar date) and IS_VALID_JULIAN (4713 BC
/// November to 5874898 May, by month) check them.
fn civil_date(y: i64, m: i64, d: i64) -> std::result::Result<i64, CivilErr> {
    if y == 0 || !(1..=12).contains(&m) || d < 1 {
        return Err(CivilErr::Field);
    }
    let yy = if y < 0 { y + 1 } else { y };
    let days = days_from_civil(yy, m as u32, d as u32);
    if civil_from_days(days) != (yy, m as u32, d as u32) {
        return Err(CivilErr::Field);
    }
    if yy > 5_874_898 || (yy == 5_874_898 && m >= 6) || yy < -4713 || (yy == -4713 && m < 11) {
        return Err(CivilErr::Range);
    }
    Ok(days)
}

/// `overlay(s PLACING r FROM start FOR len)` (textoverlay): the characters of `s` before
/// `start`, then `r`, then those from `start + len` on.
fn overlay(s: &str, r: &str, start: i64, len: i64) -> Result<Value> {
    // A start before the first character is the spec's negative substring length; a
    // negative `len` is allowed (the tail then starts before `start`).
    if start <= 0 {
        return Err(PgError::new("22011", "negative substring length not allowed"));
    }
    let end = i32::try_from(start + len).map_err(|_| PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))?;
    let head: String = s.chars().take((start - 1) as usize).collect();
    let tail: String = if end <= 1 { s.to_string() } else { s.chars().skip((end - 1) as usize).collect() };
    Ok(Value::Text(format!("{head}{r}{tail}")))
}

fn width_bucket_error(msg: &str) -> PgError {
    PgError::new("2201G", msg)
}

/// `width_bucket(float8, float8, float8, int)`: the bucket, 1 to `count`, of `operand` among
/// `count` equal-width buckets from `b1` to `b2` (reversed when `b1 > b2`); 0 below the
/// range, `count + 1` at or past its end. The quotient is taken before the multiplication
/// and capped below 1, and halved operands avoid overflow on huge ranges: PostgreSQL 16 and
/// later's rule (18 is the reference). PostgreSQL 15 multiplied first, which rounds some
/// values into the next bucket (`width_bucket(15, 0, 22, 22)` is 16 there, 15 in 18) and
/// overflows on ranges near the float8 limit.
fn width_bucket_float8(operand: f64, b1: f64, b2: f64, count: i32) -> Result<i32> {
    if count <= 0 {
        return Err(width_bucket_error("count must be greater than zero"));
    }
    if operand.is_nan() || b1.is_nan() || b2.is_nan() {
        return Err(width_bucket_error("operand, lower bound, and upper bound cannot be NaN"));
    }
    if b1.is_infinite() || b2.is_infinite() {
        return Err(width_bucket_error("lower and upper bounds must be finite"));
    }
    let past_end = || count.checked_add(1).ok_or_else(|| expr::out_of_range(TypeId::Int4));
    let inside = |lo: f64, hi: f64, x: f64| -> i32 {
        // lo, hi and x in the order that makes the quotient (x - lo) / (hi - lo) in [0, 1).
        let q = if (hi - lo).is_finite() { (x - lo) / (hi - lo) } else { (x / 2.0 - lo / 2.0) / (hi / 2.0 - lo / 2.0) };
        let r = (f64::from(count) * q) as i32;
        r.min(count - 1) + 1
    };
    if b1 < b2 {
        if operand < b1 {
            Ok(0)
        } else if operand >= b2 {
            past_end()
        } else {
            Ok(inside(b1, b2, operand))
        }
    } else if b1 > b2 {
        if operand > b1 {
            Ok(0)
        } else if operand <= b2 {
            past_end()
        } else {
            Ok(inside(-b1, -b2, -operand))
        }
    } else {
        Err(width_bucket_error("lower bound cannot equal upper bound"))
    }
}

/// `width_bucket(numeric, numeric, numeric, int)`: as the float8 form, computed exactly
/// (floor((operand - b1) × count / (b2 - b1)) + 1).
fn width_bucket_numeric(
    operand: &crate::types::Numeric,
    b1: &crate::types::Numeric,
    b2: &crate::types::Numeric,
    count: i32,
) -> Result<i32> {
    use crate::types::Numeric;
    if count <= 0 {
        return Err(width_bucket_error("count must be greater than zero"));
    }
    if operand.is_nan() || b1.is_nan() || b2.is_nan() {
        return Err(width_bucket_error("operand, lower bound, and upper bound cannot be NaN"));
    }
    if !b1.is_finite() || !b2.is_finite() {
        return Err(width_bucket_error("lower and upper bounds must be finite"));
    }
    let past_end = || count.checked_add(1).ok_or_else(|| expr::out_of_range(TypeId::Int4));
    let bucket = |num: Numeric, den: Numeric| -> Result<i32> {
        let q = num.mul(&Numeric::from_i64(i64::from(count)))?.div_trunc(&den)?;
        Ok(q.to_i32()?.min(count - 1) + 1)
    };
    match b1.cmp(b2) {
        std::cmp::Ordering::Less => {
            if operand < b1 {
                Ok(0)
            } else if operand >= b2 {
                past_end()
            } else {
                bucket(operand.sub(b1)?, b2.sub(b1)?)
            }
        }
        std::cmp::Ordering::Greater => {
            if operand > b1 {
                Ok(0)
            } else if operand <= b2 {
                past_end()
            } else {
                bucket(b1.sub(operand)?, b1.sub(b2)?)
            }
        }
        std::cmp::Ordering::Equal => Err(width_bucket_error("lower bound cannot equal upper bound")),
    }
}

/// The numeric forms of the math functions (None: not a numeric function).
fn numeric_call_eval(f: Func, n: &crate::types::Numeric, args: &[Value]) -> Result<Option<Value>> {
    if let Func::NumScale(which) = f {
        // The places shown (dscale), the fewest that keep the value (trailing zeros
        // dropped), or the value with those places. NaN and the infinities have no scale.
        if !n.is_finite() {
            return Ok(Some(if which == 2 { Value::Numeric(n.clone()) } else { Value::Null }));
        }
        let text = n.to_text();
        let min = text.split_once('.').map_or(0, |(_, frac)| frac.trim_end_matches('0').len() as i32);
        return Ok(Some(match which {
            0 => Value::Int4(n.dscale()),
            1 => Value::Int4(min),
            _ => Value::Numeric(n.round(min)?),
        }));
    }
    let other = || match args.get(1) {
        Some(Value::Numeric(m)) => Ok(m.clone()),
        Some(v) => Ok(crate::types::Numeric::from_i64(int_arg(v))),
        None => Err(PgError::internal("missing argument")),
    };
    let scale = || args.get(1).map(int_arg).unwrap_or(0).clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    Ok(Some(Value::Numeric(match f {
        Func::Round => n.round(scale())?,
        Func::Trunc => n.trunc(scale())?,
        Func::Floor => n.floor()?,
        Func::Ceil => n.ceil()?,
        Func::Abs => n.abs(),
        Func::Sign => n.sign(),
        Func::Sqrt => n.sqrt()?,
        Func::Exp => n.exp()?,
        Func::Ln => n.ln()?,
        Func::Log10 => crate::types::Numeric::from_i64(10).log(n)?,
        Func::Log => n.log(&other()?)?,
        Func::WidthBucket => {
            let num = |i: usize| match &args[i] {
                Value::Numeric(m) => m.clone(),
                v => crate::types::Numeric::from_i64(int_arg(v)),
            };
            return Ok(Some(Value::Int4(width_bucket_numeric(n, &num(1), &num(2), int_arg(&args[3]) as i32)?)));
        }
        Func::Power => n.power(&other()?)?,
        Func::Mod => n.rem(&other()?)?,
        Func::Div => n.div_trunc(&other()?)?,
        _ => return Ok(None),
    })))
}

/// The C library's cube root, which PostgreSQL's `cbrt` calls (its last bit can differ from
/// the Rust runtime's own `cbrt`, e.g. for 27). Looked up in libm at run time, because the
/// linker resolves a plain `cbrt` to the runtime's copy; Rust's if libm is missing.
fn libm_cbrt(x: f64) -> f64 {
    type Cbrt = unsafe extern "C" fn(f64) -> f64;
    static CBRT: std::sync::OnceLock<Option<Cbrt>> = std::sync::OnceLock::new();
    let f = CBRT.get_or_init(|| {
        // SAFETY: dlopen/dlsym with NUL-terminated names; the handle is kept open for the
        // process's lifetime, so the function pointer stays valid. `cbrt` has the C type
        // `double cbrt(double)`, which `Cbrt` matches.
        unsafe {
            let h = libc::dlopen(c"libm.so.6".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if h.is_null() {
                return None;
            }
            let p = libc::dlsym(h, c"cbrt".as_ptr());
            (!p.is_null()).then(|| std::mem::transmute::<*mut libc::c_void, Cbrt>(p))
        }
    });
    match f {
        // SAFETY: a pure C math function of one double, defined for every input.
        Some(f) => unsafe { f(x) },
        None => x.cbrt(),
    }
}

/// PostgreSQL 15's `pg_size_pretty(bigint)`: under 10240 bytes in bytes, then each unit while
/// the value is under 20480 of it (kB, MB, GB, TB), rounded half away from zero.
fn size_pretty(size: i64) -> String {
    const LIMIT: i64 = 10 * 1024;
    const LIMIT2: i64 = LIMIT * 2 - 1;
    let half_rounded = |x: i64| (x + if x < 0 { -1 } else { 1 }) / 2;
    if size.abs() < LIMIT {
        return format!("{size} bytes");
    }
    // One extra bit kept for rounding (division truncates toward zero, as PostgreSQL's).
    let mut size = size / (1 << 9);
    for unit in ["kB", "MB", "GB"] {
        if size.abs() < LIMIT2 {
            return format!("{} {unit}", half_rounded(size));
        }
        size /= 1 << 10;
    }
    format!("{} TB", half_rounded(size))
}

/// `format_type(oid, typmod)`: the type's SQL name with its modifier (PostgreSQL's encoding:
/// varchar/char length + 4), `???` for an OID that names no type, as PostgreSQL prints it.
fn format_type(oid: u32, typmod: Option<i32>) -> String {
    if oid == 0 {
        return "-".to_string();
    }
    if let Some(name) = crate::types::other_type_name(oid) {
        return name.to_string();
    }
    let Some(id) = crate::types::BUILTIN.iter().copied().find(|&id| SqlType::new(id).pg_oid() == oid) else {
        return "???".to_string();
    };
    // An array's modifier is its element's.
    let elem = SqlType::new(id).elem().filter(|_| !SqlType::new(id).is_vector()).map_or(id, |e| e.id);
    let n = match (elem, typmod) {
        (TypeId::Varchar | TypeId::Bpchar, Some(m)) if m > 4 => m - 4,
        (_, Some(m)) if m >= 0 && !matches!(elem, TypeId::Varchar | TypeId::Bpchar) => m,
        _ => -1,
    };
    match (id, typmod) {
        // char with no modifier given is "character"; with -1 given, "bpchar".
        (TypeId::Bpchar, None) => "character".to_string(),
        (TypeId::Array(crate::types::ArrayElem::Bpchar), None) => "character[]".to_string(),
        _ => SqlType::with_typmod(id, n).name(),
    }
}

/// (year, month, day, hour, minute, second, microsecond) of a timestamp; None for infinities.
fn civil(v: &Value) -> Option<(i64, u32, u32, u32, u32, u32, u32)> {
    // A date counts days (its microseconds may pass i64's range).
    let (days, rem) = match *v {
        Value::Timestamp(u) if u != i64::MIN && u != i64::MAX => (u.div_euclid(USECS_PER_DAY), u.rem_euclid(USECS_PER_DAY)),
        Value::Date(d) if d != i32::MIN && d != i32::MAX => (i64::from(d), 0),
        _ => return None,
    };
    let (y, m, d) = civil_from_days(days + 10957);
    let secs = rem / 1_000_000;
    Some((y, m, d, (secs / 3600) as u32, (secs / 60 % 60) as u32, (secs % 60) as u32, (rem % 1_000_000) as u32))
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Howard Hinnant's method).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) to days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn bad_unit(unit: &str, ty: &str) -> PgError {
    PgError::new("0A000", format!("unit \"{unit}\" not supported for type {ty}"))
}

/// EXTRACT / date_part of an interval (`interval_part_common`): numeric with PostgreSQL 15's
/// scales for EXTRACT, float8 for date_part.
fn interval_part(field: &str, iv: &crate::types::Interval, numeric: bool) -> Result<Value> {
    let f = field.to_ascii_lowercase();
    let (year, mon, mday, hour, min, sec, usec) = iv.fields();
    let scaled = |units: i128, scale: u32| scaled_part(units, scale, numeric);
    let int = |v: i64| scaled(i128::from(v), 0);
    match f.as_str() {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "usecond" | "useconds" => int(sec * 1_000_000 + usec),
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "msecond" | "mseconds" => {
            if numeric {
                scaled(i128::from(sec * 1_000_000 + usec), 3)
            } else {
                Ok(Value::Float8(sec as f64 * 1000.0 + usec as f64 / 1000.0))
            }
        }
        "second" | "seconds" | "s" | "sec" | "secs" => {
            if numeric {
                scaled(i128::from(sec * 1_000_000 + usec), 6)
            } else {
                Ok(Value::Float8(sec as f64 + usec as f64 / 1_000_000.0))
            }
        }
        "minute" | "minutes" | "m" | "min" | "mins" => int(min),
        "hour" | "hours" | "h" | "hr" | "hrs" => int(hour),
        "day" | "days" | "d" => int(mday.into()),
        "month" | "months" | "mon" | "mons" => int(mon.into()),
        "quarter" | "qtr" => int((mon / 3 + 1).into()),
        "year" | "years" | "y" | "yr" | "yrs" => int(year.into()),
        "decade" | "decades" | "dec" | "decs" => int((year / 10).into()),
        "century" | "centuries" | "c" | "cent" => int((year / 100).into()),
        "millennium" | "millennia" | "mil" | "mils" => int((year / 1000).into()),
        "epoch" => {
            if numeric {
                let m = i128::from(iv.months);
                let secs = (1461 * (m / 12) + 120 * (m % 12) + 4 * i128::from(iv.days)) * (86_400 / 4);
                scaled(secs * 1_000_000 + i128::from(iv.micros), 6)
            } else {
                let mut r = iv.micros as f64 / 1e6;
                r += 365.25 * 86_400.0 * f64::from(iv.months / 12);
                r += 30.0 * 86_400.0 * f64::from(iv.months % 12);
                r += 86_400.0 * f64::from(iv.days);
                Ok(Value::Float8(r))
            }
        }
        "week" | "weeks" | "w" | "dow" | "isodow" | "doy" | "isoyear" | "julian" | "timezone" | "timezone_hour" | "timezone_minute" => {
            Err(bad_unit(&f, "interval"))
        }
        _ => Err(PgError::new("22023", format!("unit \"{f}\" not recognized for type interval"))),
    }
}

/// A unit name as PostgreSQL's unit tables match it (`DecodeUnits`): its first 10 characters
/// (`TOKMAXLEN`), so `microseconds` is the table's `microsecon` and `timezone_hour` its
/// `timezone_h`.
fn unit_token(lower: &str) -> String {
    lower.chars().take(10).collect()
}

/// `units` as a number of `10^-scale`: numeric (EXTRACT) or float8 (date_part).
fn scaled_part(units: i128, scale: u32, numeric: bool) -> Result<Value> {
    if !numeric {
        return Ok(Value::Float8(units as f64 / 10f64.powi(scale as i32)));
    }
    let neg = units < 0;
    let a = units.unsigned_abs();
    let p = 10u128.pow(scale);
    let text = if scale == 0 {
        format!("{}{}", if neg { "-" } else { "" }, a)
    } else {
        format!("{}{}.{:0w$}", if neg { "-" } else { "" }, a / p, a % p, w = scale as usize)
    };
    Ok(Value::Numeric(crate::types::Numeric::parse(&text)?))
}

/// EXTRACT / date_part of a time, or of a timetz (`zone`: seconds west of UTC) as PostgreSQL
/// 15's `time_part_common` / `timetz_part_common`: numeric with its scales for EXTRACT,
/// float8 for date_part.
fn time_part(field: &str, time: i64, zone: Option<i32>, numeric: bool) -> Result<Value> {
    let f = field.to_ascii_lowercase();
    let key = unit_token(&f);
    let tyname = if zone.is_some() { "time with time zone" } else { "time without time zone" };
    let (_, min, sec, usec) = crate::types::time::fields(time);
    let hour = time / 3_600_000_000;
    let (sec, usec) = (i64::from(sec), i64::from(usec));
    let int = |v: i64| scaled_part(i128::from(v), 0, numeric);
    let east = zone.map(|z| -i64::from(z));
    match (key.as_str(), east) {
        ("microsecon" | "us" | "usec" | "usecs" | "usecond" | "useconds", _) => int(sec * 1_000_000 + usec),
        ("millisecon" | "ms" | "msec" | "msecs" | "msecond" | "mseconds", _) if !numeric => {
            Ok(Value::Float8(sec as f64 * 1000.0 + usec as f64 / 1000.0))
        }
        ("millisecon" | "ms" | "msec" | "msecs" | "msecond" | "mseconds", _) => scaled_part(i128::from(sec * 1_000_000 + usec), 3, true),
        ("second" | "seconds" | "s" | "sec" | "secs", _) if !numeric => Ok(Value::Float8(sec as f64 + usec as f64 / 1_000_000.0)),
        ("second" | "seconds" | "s" | "sec" | "secs", _) => scaled_part(i128::from(sec * 1_000_000 + usec), 6, true),
        ("minute" | "minutes" | "m" | "min" | "mins", _) => int(i64::from(min)),
        ("hour" | "hours" | "h" | "hr" | "hrs", _) => int(hour),
        ("timezone", Some(e)) => int(e),
        ("timezone_h", Some(e)) => int(e / 3600),
        ("timezone_m", Some(e)) => int(e / 60 % 60),
        // The epoch of a timetz counts from its instant (the zone's offset taken away).
        ("epoch", e) if !numeric => Ok(Value::Float8(time as f64 / 1_000_000.0 - e.unwrap_or(0) as f64)),
        ("epoch", e) => scaled_part(i128::from(time) - i128::from(e.unwrap_or(0)) * 1_000_000, 6, true),
        (
            "day" | "days" | "d" | "month" | "months" | "mon" | "mons" | "quarter" | "qtr" | "year" | "years" | "y" | "yr" | "yrs"
            | "decade" | "decades" | "dec" | "decs" | "century" | "centuries" | "c" | "cent" | "millennium" | "millennia" | "mil" | "mils"
            | "week" | "weeks" | "w" | "dow" | "isodow" | "doy" | "isoyear" | "julian" | "j" | "jd" | "timezone" | "timezone_h"
            | "timezone_m",
            _,
        ) => Err(bad_unit(&f, tyname)),
        _ => Err(PgError::new("22023", format!("unit \"{f}\" not recognized for type {tyname}"))),
    }
}

/// The parts of a timestamptz (`timestamptz_part`): the epoch counts from the instant, the
/// `timezone` fields are the session zone's offset there, the other fields are the session's
/// wall-clock ones. `numeric`: EXTRACT's result type.
fn timestamptz_part(field: &str, t: i64, numeric: bool) -> Result<Value> {
    let f = field.to_ascii_lowercase();
    let finite = t != i64::MIN && t != i64::MAX;
    let of_zone = match f.as_str() {
        "timezone" => Some(1),
        "timezone_hour" => Some(3600),
        "timezone_minute" => Some(60),
        _ => None,
    };
    let r = match of_zone {
        Some(_) if !finite => Ok(Value::Null),
        Some(unit) => {
            let east = crate::types::tz::offset_of(t)?;
            // PostgreSQL: timezone_minute is the minutes past the hour, with the sign.
            let v = if unit == 60 { i64::from(east / 60 % 60) } else { i64::from(east / unit) };
            Ok(if numeric { Value::Numeric(crate::types::Numeric::from_i64(v)) } else { Value::Float8(v as f64) })
        }
        None if f == "epoch" || !finite => {
            if numeric {
                extract(&f, &Value::Timestamp(t))
            } else {
                date_part(&f, &Value::Timestamp(t))
            }
        }
        None => {
            let local = Value::Timestamp(crate::types::tz::local_of(t)?);
            if numeric {
                extract(&f, &local)
            } else {
                date_part(&f, &local)
            }
        }
    };
    r.map_err(|mut e| {
        e.message = e.message.replace("timestamp without time zone", "timestamp with time zone");
        e
    })
}

fn date_part(field: &str, v: &Value) -> Result<Value> {
    if let Value::Interval(iv) = v {
        return interval_part(field, iv, false);
    }
    match v {
        Value::Time(t) => return time_part(field, *t, None, false),
        Value::TimeTz(t) => return time_part(field, t.time, Some(t.zone), false),
        _ => {}
    }
    if let Value::Timestamptz(t) = v {
        return timestamptz_part(field, *t, false);
    }
    let f = field.to_ascii_lowercase();
    let tyname = if matches!(v, Value::Date(_)) { "date" } else { "timestamp without time zone" };
    let Some((y, mo, d, h, mi, s, us)) = civil(v) else {
        // Infinite inputs: PostgreSQL gives +-Infinity for monotonic fields, NULL otherwise.
        let inf = match v {
            Value::Timestamp(i64::MAX) | Value::Date(i32::MAX) => f64::INFINITY,
            _ => f64::NEG_INFINITY,
        };
        return Ok(match f.as_str() {
            "year" | "years" | "decade" | "century" | "millennium" | "epoch" | "julian" | "isoyear" => Value::Float8(inf),
            _ => Value::Null,
        });
    };
    let days = days_from_civil(y, mo, d);
    let val = match f.as_str() {
        "year" | "years" | "y" | "yr" | "yrs" => {
            if y > 0 {
                y as f64
            } else {
                (y - 1) as f64
            }
        }
        "month" | "months" | "mon" | "mons" => mo as f64,
        "day" | "days" | "d" => d as f64,
        "hour" | "hours" | "h" | "hr" | "hrs" => h as f64,
        "minute" | "minutes" | "m" | "min" | "mins" => mi as f64,
        "second" | "seconds" | "s" | "sec" | "secs" => s as f64 + us as f64 / 1e6,
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" => s as f64 * 1000.0 + us as f64 / 1000.0,
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" => s as f64 * 1e6 + us as f64,
        "quarter" | "qtr" => ((mo - 1) / 3 + 1) as f64,
        "dow" => (days + 4).rem_euclid(7) as f64,
        "isodow" => {
            let w = (days + 4).rem_euclid(7);
            if w == 0 {
                7.0
            } else {
                w as f64
            }
        }
        "doy" => (days - days_from_civil(y, 1, 1) + 1) as f64,
        "epoch" => {
            let us_total = match *v {
                Value::Timestamp(u) => u,
                Value::Date(dd) => i64::from(dd) * USECS_PER_DAY,
                _ => 0,
            };
            (us_total as f64) / 1e6 + 946_684_800.0
        }
        "decade" => {
            if y >= 0 {
                (y / 10) as f64
            } else {
                -((8 - (y - 1)) / 10) as f64
            }
        }
        "century" => {
            if y > 0 {
                ((y + 99) / 100) as f64
            } else {
                -((99 - (y - 1)) / 100) as f64
            }
        }
        "millennium" => {
            if y > 0 {
                ((y + 999) / 1000) as f64
            } else {
                -((999 - (y - 1)) / 1000) as f64
            }
        }
        "julian" => (days + 2_440_588) as f64 + (h as f64 * 3600.0 + mi as f64 * 60.0 + s as f64 + us as f64 / 1e6) / 86400.0,
        "week" => iso_week(y, mo, d).1 as f64,
        "isoyear" => {
            let iy = iso_week(y, mo, d).0;
            if iy > 0 {
                iy as f64
            } else {
                (iy - 1) as f64
            }
        }
        "timezone" | "timezone_hour" | "timezone_minute" => return Err(bad_unit(&f, tyname)),
        _ => return Err(PgError::new("22023", format!("unit \"{f}\" not recognized for type {tyname}"))),
    };
    if matches!(v, Value::Date(_)) && matches!(f.as_str(), "hour" | "minute" | "second" | "millisecond" | "microsecond") {
        return Err(bad_unit(&f, "date"));
    }
    Ok(Value::Float8(val))
}

/// `pg_sleep(seconds)`, `pg_sleep_for(interval)` (the wait until the clock time now plus the
/// interval, as PostgreSQL's SQL definition of it), `pg_sleep_until(timestamptz)`: sleeps in
/// steps of at most 100 ms, checking for a cancel request between them (57014). A duration
/// that is not positive (or NaN) returns at once, as in PostgreSQL; an infinite one sleeps
/// until canceled.
/// PostgreSQL's `overlaps_timestamp` (and its time, timetz siblings): each period runs from
/// the earlier of its two values to the later (a NULL end: the start alone); they overlap when
/// one starts inside the other (half-open at the end), or both start together. A NULL where
/// the answer depends on it gives NULL.
fn overlaps(a: &[Value]) -> Value {
    use std::cmp::Ordering::{Greater, Less};
    let cmp = |x: &Value, y: &Value| crate::exec::sort::compare_key(x, y, false, false);
    let period = |s: &Value, e: &Value| -> Option<(Value, Option<Value>)> {
        match (s, e) {
            (Value::Null, Value::Null) => None,
            (Value::Null, e) => Some((e.clone(), None)),
            (s, Value::Null) => Some((s.clone(), None)),
            (s, e) if cmp(s, e) == Greater => Some((e.clone(), Some(s.clone()))),
            (s, e) => Some((s.clone(), Some(e.clone()))),
        }
    };
    let (Some((ts1, te1)), Some((ts2, te2))) = (period(&a[0], &a[1]), period(&a[2], &a[3])) else { return Value::Null };
    let verdict = match cmp(&ts1, &ts2) {
        Greater => match (&te2, &te1) {
            (None, _) => None,
            (Some(e2), _) if cmp(&ts1, e2) == Less => Some(true),
            (_, None) => None,
            _ => Some(false),
        },
        Less => match (&te1, &te2) {
            (None, _) => None,
            (Some(e1), _) if cmp(&ts2, e1) == Less => Some(true),
            (_, None) => None,
            _ => Some(false),
        },
        _ => (te1.is_some() && te2.is_some()).then_some(true),
    };
    verdict.map_or(Value::Null, Value::Bool)
}

fn pg_sleep(kind: u8, arg: &Value) -> Result<()> {
    use crate::types::datetime::now_us;
    let start = now_us();
    // The end as microseconds since 2000-01-01, or None for "never".
    let end: Option<i64> = match (kind, arg) {
        (0, v) => {
            let secs = expr::as_f64(v).ok_or_else(|| PgError::internal("pg_sleep: a number was expected"))?;
            if secs.is_nan() || secs <= 0.0 {
                return Ok(());
            }
            if secs >= (i64::MAX / 1_000_000) as f64 {
                None
            } else {
                Some(start.saturating_add((secs * 1e6) as i64))
            }
        }
        (1, Value::Interval(i)) => match crate::types::interval::timestamptz_plus(start, i)? {
            i64::MAX => None,
            t => Some(t),
        },
        (2, Value::Timestamptz(t)) if *t == i64::MAX => None,
        (2, Value::Timestamptz(t)) => Some(*t),
        (_, other) => return Err(PgError::internal(format!("pg_sleep: unexpected argument {other:?}"))),
    };
    loop {
        crate::interrupt::check_for_interrupts()?;
        let left = match end {
            Some(e) => e.saturating_sub(now_us()),
            None => i64::MAX,
        };
        if left <= 0 {
            return Ok(());
        }
        let slice = crate::interrupt::wait_slice().max(std::time::Duration::from_millis(1));
        std::thread::sleep(std::time::Duration::from_micros(left as u64).min(slice));
    }
}

/// The interval functions and operators (strict: NULLs were answered before).
fn interval_call(f: Func, args: &[Value]) -> Result<Option<Value>> {
    use crate::types::interval;
    let iv = |v: &Value| match v {
        Value::Interval(i) => Ok(*i),
        other => Err(PgError::internal(format!("an interval was expected, not {other:?}"))),
    };
    // A date, timestamp or timestamptz as microseconds; whether it is a timestamptz.
    let ts = |v: &Value| -> Result<(i64, bool)> {
        match *v {
            Value::Timestamp(t) => Ok((t, false)),
            Value::Timestamptz(t) => Ok((t, true)),
            Value::Date(i32::MIN) => Ok((i64::MIN, false)),
            Value::Date(i32::MAX) => Ok((i64::MAX, false)),
            Value::Date(d) => i64::from(d)
                .checked_mul(USECS_PER_DAY)
                .filter(|t| *t >= -211_813_488_000_000_000 && *t < 9_223_371_331_200_000_000)
                .map(|t| (t, false))
                .ok_or_else(|| PgError::new("22008", "date out of range for timestamp")),
            ref other => Err(PgError::internal(format!("a timestamp was expected, not {other:?}"))),
        }
    };
    Ok(Some(match f {
        Func::TimeArith(k) => {
            use crate::types::time;
            match (k, &args[0], &args[1]) {
                (0, Value::Time(t), Value::Interval(span)) => Value::Time(time::plus_interval(*t, span)),
                (1, Value::Time(t), Value::Interval(span)) => Value::Time(time::minus_interval(*t, span)),
                (0, Value::TimeTz(t), Value::Interval(span)) => {
                    Value::TimeTz(crate::types::TimeTz { time: time::plus_interval(t.time, span), zone: t.zone })
                }
                (1, Value::TimeTz(t), Value::Interval(span)) => {
                    Value::TimeTz(crate::types::TimeTz { time: time::minus_interval(t.time, span), zone: t.zone })
                }
                (2, Value::Time(a), Value::Time(b)) => Value::Interval(crate::types::Interval { months: 0, days: 0, micros: a - b }),
                (3, Value::Date(d), Value::Time(t)) => Value::Timestamp(time::date_plus_time(*d, *t)?),
                (3, Value::Date(d), Value::TimeTz(t)) => Value::Timestamptz(time::date_plus_timetz(*d, t)?),
                (_, a, b) => return Err(PgError::internal(format!("time arithmetic over {a:?} and {b:?}"))),
            }
        }
        Func::TsInterval(minus) => {
            let (t, tz) = ts(&args[0])?;
            let span = iv(&args[1])?;
            let r = if minus { interval::minus(t, &span, tz)? } else { interval::plus(t, &span, tz)? };
            if tz {
                Value::Timestamptz(r)
            } else {
                Value::Timestamp(r)
            }
        }
        Func::TsDiff => {
            // Beside a timestamptz, a date or timestamp is the instant the session's clocks
            // read it.
            let ((a, a_tz), (b, b_tz)) = (ts(&args[0])?, ts(&args[1])?);
            let instant = |t: i64, tz: bool| if tz || !(a_tz || b_tz) { Ok(t) } else { crate::types::tz::utc_of(t) };
            Value::Interval(interval::timestamp_diff(instant(a, a_tz)?, instant(b, b_tz)?)?)
        }
        Func::Age => {
            let ((a, tz), (b, _)) = (ts(&args[0])?, ts(&args[1])?);
            Value::Interval(interval::age_of(a, b, tz)?)
        }
        Func::IntervalArith(op) => {
            let a = iv(&args[0])?;
            Value::Interval(match op {
                0 => a.add(&iv(&args[1])?)?,
                1 => a.sub(&iv(&args[1])?)?,
                _ => {
                    let x = expr::as_f64(&args[1]).ok_or_else(|| PgError::internal("a number was expected"))?;
                    if op == 2 {
                        a.mul(x)?
                    } else {
                        a.div(x)?
                    }
                }
            })
        }
        Func::Justify(k) => {
            let a = iv(&args[0])?;
            Value::Interval(match k {
                0 => a.justify_days()?,
                1 => a.justify_hours()?,
                _ => a.justify_interval()?,
            })
        }
        _ => return Ok(None),
    }))
}

/// EXTRACT: date_part's value as numeric with PostgreSQL 15's scales (seconds with 6
/// decimals, milliseconds with 3, epoch of a timestamp with 6; whole numbers otherwise).
fn extract(field: &str, v: &Value) -> Result<Value> {
    if let Value::Interval(iv) = v {
        return interval_part(field, iv, true);
    }
    match v {
        Value::Time(t) => return time_part(field, *t, None, true),
        Value::TimeTz(t) => return time_part(field, t.time, Some(t.zone), true),
        _ => {}
    }
    if let Value::Timestamptz(t) = v {
        return timestamptz_part(field, *t, true);
    }
    let f = field.to_ascii_lowercase();
    let micros = |v: &Value| match *v {
        Value::Timestamp(u) => Some(u),
        _ => None,
    };
    let with_scale = |units: i64, scale: u32| -> Result<Value> {
        let neg = units < 0;
        let a = units.unsigned_abs();
        let p = 10u64.pow(scale);
        Ok(Value::Numeric(crate::types::Numeric::parse(&format!(
            "{}{}.{:0w$}",
            if neg { "-" } else { "" },
            a / p,
            a % p,
            w = scale as usize
        ))?))
    };
    if let (Some(u), false) = (micros(v), matches!(v, Value::Timestamp(i64::MIN | i64::MAX))) {
        let of_minute = u.rem_euclid(60_000_000);
        match f.as_str() {
            "second" | "seconds" | "s" | "sec" | "secs" => return with_scale(of_minute, 6),
            "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" => return with_scale(of_minute, 3),
            "epoch" => return with_scale(u + 946_684_800_000_000, 6),
            // PostgreSQL's numeric arithmetic: the Julian day number, plus the time of day
            // divided by a day's microseconds (numeric division's scale).
            "julian" => {
                use crate::types::Numeric;
                const POSTGRES_EPOCH_JDATE: i64 = 2_451_545;
                let (day, of_day) = (u.div_euclid(USECS_PER_DAY), u.rem_euclid(USECS_PER_DAY));
                let frac = Numeric::from_i64(of_day).div(&Numeric::from_i64(USECS_PER_DAY))?;
                return Ok(Value::Numeric(Numeric::from_i64(day + POSTGRES_EPOCH_JDATE).add(&frac)?));
            }
            _ => {}
        }
    }
    match date_part(&f, v)? {
        Value::Float8(x) if x.is_infinite() => {
            Ok(Value::Numeric(if x > 0.0 { crate::types::Numeric::infinity() } else { crate::types::Numeric::neg_infinity() }))
        }
        Value::Float8(x) => Ok(Value::Numeric(crate::types::Numeric::from_i64(x as i64))),
        other => Ok(other),
    }
}

/// ISO 8601 (year, week) of a date.
fn iso_week(y: i64, m: u32, d: u32) -> (i64, i64) {
    let days = days_from_civil(y, m, d);
    let isodow = (days + 3).rem_euclid(7); // Monday = 0
    let thursday = days - isodow + 3;
    let (ty, _, _) = civil_from_days(thursday);
    let week = (thursday - days_from_civil(ty, 1, 1)) / 7 + 1;
    (ty, week)
}

fn date_trunc(field: &str, v: &Value) -> Result<Value> {
    if let Value::Interval(iv) = v {
        return interval_trunc(field, iv);
    }
    if let Value::Timestamptz(t) = *v {
        // `timestamptz_trunc`: truncated on the session's wall clock; to a day or more the
        // zone's offset at the result applies, to less the offset the input had.
        if t == i64::MIN || t == i64::MAX {
            return Ok(v.clone());
        }
        let local = crate::types::tz::local_of(t)?;
        let Value::Timestamp(r) = date_trunc(field, &Value::Timestamp(local)).map_err(|mut e| {
            e.message = e.message.replace("timestamp without time zone", "timestamp with time zone");
            e
        })?
        else {
            return Err(PgError::internal("date_trunc of a timestamp gave no timestamp"));
        };
        let redo = !matches!(field.to_ascii_lowercase().as_str(), "microseconds" | "milliseconds" | "second" | "minute" | "hour");
        return Ok(Value::Timestamptz(if redo { crate::types::tz::utc_of(r)? } else { r - (local - t) }));
    }
    let f = field.to_ascii_lowercase();
    let Some((y, mo, d, h, mi, s, us)) = civil(v) else { return Ok(v.clone()) };
    let day_us = |yy: i64, mm: u32, dd: u32| (days_from_civil(yy, mm, dd) - 10957) * USECS_PER_DAY;
    let r = match f.as_str() {
        "microseconds" => day_us(y, mo, d) + ((h as i64 * 60 + mi as i64) * 60 + s as i64) * 1_000_000 + us as i64,
        "milliseconds" => day_us(y, mo, d) + ((h as i64 * 60 + mi as i64) * 60 + s as i64) * 1_000_000 + (us as i64 / 1000) * 1000,
        "second" => day_us(y, mo, d) + ((h as i64 * 60 + mi as i64) * 60 + s as i64) * 1_000_000,
        "minute" => day_us(y, mo, d) + (h as i64 * 60 + mi as i64) * 60_000_000,
        "hour" => day_us(y, mo, d) + h as i64 * 3_600_000_000,
        "day" => day_us(y, mo, d),
        "week" => {
            let days = days_from_civil(y, mo, d);
            let isodow = (days + 3).rem_euclid(7);
            (days - isodow - 10957) * USECS_PER_DAY
        }
        "month" => day_us(y, mo, 1),
        "quarter" => day_us(y, (mo - 1) / 3 * 3 + 1, 1),
        "year" => day_us(y, 1, 1),
        // PostgreSQL's rules for years before 1 AD (`y` is astronomical: 0 is 1 BC): a
        // decade, century or millennium BC starts at its earliest year (the 1st century BC
        // is 100 BC to 1 BC; the decade holding 44 BC starts at 51 BC).
        "decade" => day_us(if y > 0 { y - y.rem_euclid(10) } else { -((8 - (y - 1)) / 10) * 10 }, 1, 1),
        "century" => day_us(if y > 0 { ((y - 1) / 100) * 100 + 1 } else { -((99 - (y - 1)) / 100) * 100 + 1 }, 1, 1),
        "millennium" => day_us(if y > 0 { ((y - 1) / 1000) * 1000 + 1 } else { -((999 - (y - 1)) / 1000) * 1000 + 1 }, 1, 1),
        _ => return Err(PgError::new("22023", format!("unit \"{f}\" not recognized for type timestamp without time zone"))),
    };
    // A decade, century or millennium BC may start before the first timestamp.
    if !crate::types::datetime::is_valid_timestamp(r) {
        return Err(PgError::new("22008", "timestamp out of range"));
    }
    Ok(Value::Timestamp(r))
}

/// `date_trunc(unit, interval)` (`interval_trunc`): the fields below the unit zeroed (each
/// truncated toward zero, as the interval's fields are signed); weeks are refused, as
/// PostgreSQL refuses them (months have fractional weeks).
fn interval_trunc(field: &str, iv: &crate::types::Interval) -> Result<Value> {
    let f = field.to_ascii_lowercase();
    let unit = match unit_token(&f).as_str() {
        "microsecon" | "us" | "usec" | "usecs" | "usecond" | "useconds" => 0,
        "millisecon" | "ms" | "msec" | "msecs" | "msecond" | "mseconds" => 1,
        "second" | "seconds" | "s" | "sec" | "secs" => 2,
        "minute" | "minutes" | "m" | "min" | "mins" => 3,
        "hour" | "hours" | "h" | "hr" | "hrs" => 4,
        "day" | "days" | "d" => 5,
        "month" | "months" | "mon" | "mons" => 6,
        "quarter" | "qtr" => 7,
        "year" | "years" | "y" | "yr" | "yrs" => 8,
        "decade" | "decades" | "dec" | "decs" => 9,
        "century" | "centuries" | "c" | "cent" => 10,
        "millennium" | "millennia" | "mil" | "mils" => 11,
        "week" | "weeks" | "w" => {
            return Err(bad_unit(&f, "interval").with_detail("Months usually have fractional weeks."));
        }
        // Units of PostgreSQL's unit table only (dow, epoch and the like are not recognized).
        "timezone" | "timezone_h" | "timezone_m" => return Err(bad_unit(&f, "interval")),
        _ => return Err(PgError::new("22023", format!("unit \"{f}\" not recognized for type interval"))),
    };
    let (mut year, mut mon, mut mday, mut hour, mut min, mut sec, mut usec) = iv.fields();
    // PostgreSQL's fall-through: each unit truncates its field, then every smaller one.
    if unit >= 11 {
        year = year / 1000 * 1000;
    }
    if unit >= 10 {
        year = year / 100 * 100;
    }
    if unit >= 9 {
        year = year / 10 * 10;
    }
    if unit >= 8 {
        mon = 0;
    }
    if unit >= 7 {
        mon = 3 * (mon / 3);
    }
    if unit >= 6 {
        mday = 0;
    }
    if unit >= 5 {
        hour = 0;
    }
    if unit >= 4 {
        min = 0;
    }
    if unit >= 3 {
        sec = 0;
    }
    if unit >= 2 {
        usec = 0;
    } else if unit == 1 {
        usec = usec / 1000 * 1000;
    }
    Ok(Value::Interval(crate::types::Interval {
        months: year * 12 + mon,
        days: mday,
        micros: ((hour * 60 + min) * 60 + sec) * 1_000_000 + usec,
    }))
}

/// `to_timestamp(double precision)` (PostgreSQL's float8_timestamptz): microseconds since
/// 2000-01-01, rounded to the nearest; infinities are infinite timestamps; NaN and values
/// past the timestamp range are errors (22008).
fn timestamp_from_epoch(seconds: f64) -> Result<i64> {
    const UNIX_EPOCH_JDATE: f64 = 2_440_588.0;
    const POSTGRES_EPOCH_JDATE: f64 = 2_451_545.0;
    const TIMESTAMP_END_JULIAN: f64 = 109_203_528.0;
    const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
    const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;
    let out = || PgError::new("22008", format!("timestamp out of range: \"{}\"", c_format_g(seconds)));
    if seconds.is_nan() {
        return Err(PgError::new("22008", "timestamp cannot be NaN"));
    }
    if seconds.is_infinite() {
        return Ok(if seconds < 0.0 { i64::MIN } else { i64::MAX });
    }
    if !(86_400.0 * -UNIX_EPOCH_JDATE..86_400.0 * (TIMESTAMP_END_JULIAN - UNIX_EPOCH_JDATE)).contains(&seconds) {
        return Err(out());
    }
    let us = ((seconds - (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * 86_400.0) * 1e6).round_ties_even();
    let t = us as i64;
    if !(MIN_TIMESTAMP..END_TIMESTAMP).contains(&t) {
        return Err(out());
    }
    Ok(t)
}

/// C's `%g`: 6 significant digits, exponent form below 1e-4 or from 1e6, trailing zeros
/// dropped.
pub(crate) fn c_format_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x.is_infinite() {
            if x < 0.0 {
                "-inf".into()
            } else {
                "inf".into()
            }
        } else {
            "0".into()
        };
    }
    let sci = format!("{x:.5e}");
    let (mant, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("an exponent");
    let trim = |s: &str| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s.to_string() };
    if !(-4..6).contains(&exp) {
        format!("{}e{}{:02}", trim(mant), if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        trim(&format!("{x:.*}", (5 - exp).max(0) as usize))
    }
}

/// A formatting module's error as heapstore's.
fn fmt_error(code: &'static str, message: String, detail: Option<String>, hint: Option<String>) -> PgError {
    let mut e = PgError::new(code, message);
    if let Some(d) = detail {
        e = e.with_detail(d);
    }
    if let Some(h) = hint {
        e = e.with_hint(h);
    }
    e
}

/// `to_char(value, format)` for dates, timestamps, intervals and numbers (`sql::datefmt`,
/// `sql::numfmt`). A date or timestamp that is infinite, or an empty format, gives NULL
/// for dates, times and intervals, as in PostgreSQL.
fn to_char(v: &Value, fmt: &str) -> Result<Value> {
    use super::numfmt::{self, NumValue};
    let num = |n: NumValue<'_>| numfmt::to_char(n, fmt).map(Value::Text).map_err(|e| fmt_error(e.code, e.message, e.detail, e.hint));
    let kind = match v {
        Value::Int2(i) => return num(NumValue::Int4(i32::from(*i))),
        Value::Int4(i) => return num(NumValue::Int4(*i)),
        Value::Int8(i) => return num(NumValue::Int8(*i)),
        Value::Float4(f) => return num(NumValue::Float4(*f)),
        Value::Float8(f) => return num(NumValue::Float8(*f)),
        Value::Numeric(n) => return num(NumValue::Numeric(&n.to_text())),
        Value::Interval(_) if fmt.is_empty() => return Ok(Value::Null),
        Value::Interval(iv) => {
            return super::datefmt::format_interval(iv.months, iv.days, iv.micros, fmt)
                .map(Value::Text)
                .map_err(|e| fmt_error(e.code, e.message, e.detail, e.hint))
        }
        Value::Date(_) => super::datefmt::Kind::Date,
        Value::Timestamp(_) => super::datefmt::Kind::Timestamp,
        Value::Timestamptz(_) => super::datefmt::Kind::Timestamptz,
        _ => return Err(PgError::internal("to_char of a value it was not bound for")),
    };
    // A timestamptz (and a date, as the timestamptz of its midnight) on the session's
    // clocks, with the zone's offset and abbreviation at that instant.
    let instant = match *v {
        Value::Timestamptz(t) => Some(t),
        Value::Date(d) if d != i32::MIN && d != i32::MAX && !crate::types::tz::session_is_utc() => {
            let midnight =
                i64::from(d).checked_mul(USECS_PER_DAY).ok_or_else(|| PgError::new("22008", "date out of range for timestamp"))?;
            Some(crate::types::tz::utc_of(midnight)?)
        }
        _ => None,
    };
    let at = match (v, instant) {
        (Value::Timestamptz(_), Some(t)) => Value::Timestamp(crate::types::tz::local_of(t)?),
        (other, _) => other.clone(),
    };
    let Some((year, month, day, hour, minute, second, usec)) = civil(&at) else { return Ok(Value::Null) };
    if fmt.is_empty() {
        return Ok(Value::Null);
    }
    let dt = super::datefmt::DateTime { year, month, day, hour, minute, second, usec };
    let (gmtoff, abbrev) = match instant {
        Some(t) => (crate::types::tz::offset_of(t)?, crate::types::tz::abbreviation_of(t)?),
        None => (0, "UTC".to_string()),
    };
    super::datefmt::format_zoned(&dt, kind, fmt, gmtoff, &abbrev)
        .map(Value::Text)
        .map_err(|e| fmt_error(e.code, e.message, e.detail, e.hint))
}

/// `to_date(text, format)` (date) and `to_timestamp(text, format)` (timestamptz: a zone the
/// input gives is subtracted, else the fields are the session time zone's wall clock).
fn parse_datetime(input: &str, fmt: &str, for_date: bool) -> Result<Value> {
    let p = super::datefmt::parse(input, fmt, for_date).map_err(|e| fmt_error(e.code, e.message, e.detail, e.hint))?;
    let d = p.dt;
    let days = days_from_civil(d.year, d.month, d.day) - 10957;
    if for_date {
        return i32::try_from(days).map(Value::Date).map_err(|_| PgError::new("22008", format!("date out of range: \"{input}\"")));
    }
    let us = i128::from(days) * i128::from(USECS_PER_DAY)
        + i128::from(d.hour) * 3_600_000_000
        + i128::from(d.minute) * 60_000_000
        + i128::from(d.second) * 1_000_000
        + i128::from(d.usec)
        - i128::from(p.tz_offset_secs.unwrap_or(0)) * 1_000_000;
    let us = i64::try_from(us)
        .ok()
        .filter(|&u| u != i64::MIN && u != i64::MAX)
        .ok_or_else(|| PgError::new("22008", "timestamp out of range"))?;
    match p.tz_offset_secs {
        Some(_) => Ok(Value::Timestamptz(us)),
        None => crate::types::tz::utc_of(us).map(Value::Timestamptz),
    }
}

/// MD5 of `data` as 32 hex digits (RFC 1321).
fn md5_hex(data: &[u8]) -> String {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    let k: Vec<u32> = (0..64).map(|i| ((i as f64 + 1.0).sin().abs() * 4_294_967_296.0) as u32).collect();
    let (mut a0, mut b0, mut c0, mut d0) = (0x6745_2301u32, 0xefcd_ab89u32, 0x98ba_dcfeu32, 0x1032_5476u32);
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_le_bytes());
    for chunk in msg.chunks(64) {
        let m: Vec<u32> = chunk.chunks(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
        let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(k[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        a0 = a0.wrapping_add(a);
        b0 = b0.wrapping_add(b);
        c0 = c0.wrapping_add(c);
        d0 = d0.wrapping_add(d);
    }
    [a0, b0, c0, d0].iter().flat_map(|w| w.to_le_bytes()).map(|b| format!("{b:02x}")).collect()
}

/// `x LIKE pattern` (`%` any string, `_` one character, `esc` escaping the next character;
/// case-folded for ILIKE). A pattern ending in the escape character is an error, as in
/// PostgreSQL.
pub fn like(x: &str, pattern: &str, ci: bool, esc: Option<char>) -> Result<bool> {
    // The escape character is read before case is folded (PostgreSQL rewrites the pattern
    // with like_escape first): `'%' ILIKE 'Z%' ESCAPE 'Z'`.
    let fold = |c: char| if ci { lower_char(c) } else { c };
    let x: Vec<char> = x.chars().map(fold).collect();
    let p: Vec<char> = pattern.chars().collect();
    // Tokens: Some(c) literal, None `_`, and `%` as a separate marker.
    #[derive(Clone, Copy, PartialEq)]
    enum Tok {
        Lit(char),
        One,
        Any,
    }
    let mut toks = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        let c = p[i];
        if Some(c) == esc {
            i += 1;
            let Some(&n) = p.get(i) else {
                return Err(PgError::new("22025", "LIKE pattern must not end with escape character"));
            };
            toks.push(Tok::Lit(fold(n)));
        } else if c == '%' {
            toks.push(Tok::Any);
        } else if c == '_' {
            toks.push(Tok::One);
        } else {
            toks.push(Tok::Lit(fold(c)));
        }
        i += 1;
    }
    // Iterative matcher with backtracking to the last `%`.
    let (mut xi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while xi < x.len() {
        match toks.get(ti) {
            Some(Tok::Lit(c)) if *c == x[xi] => {
                xi += 1;
                ti += 1;
            }
            Some(Tok::One) => {
                xi += 1;
                ti += 1;
            }
            Some(Tok::Any) => {
                star = Some((ti, xi));
                ti += 1;
            }
            _ => match star {
                Some((st, sx)) => {
                    ti = st + 1;
                    xi = sx + 1;
                    star = Some((st, sx + 1));
                }
                None => return Ok(false),
            },
        }
    }
    while toks.get(ti) == Some(&Tok::Any) {
        ti += 1;
    }
    Ok(ti == toks.len())
}

fn escape_char(v: &Option<sqlparser::ast::Value>) -> Result<Option<char>> {
    match v {
        None => Ok(Some('\\')),
        Some(sqlparser::ast::Value::SingleQuotedString(s)) => {
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (None, _) => Ok(None),
                (Some(c), None) => Ok(Some(c)),
                _ => Err(PgError::new("22019", "invalid escape string").with_hint("Escape string must be empty or one character.")),
            }
        }
        Some(other) => Err(PgError::feature(format!("ESCAPE {other} is not supported"))),
    }
}

/// PostgreSQL's similar_to_escape: a SIMILAR TO pattern as a POSIX regular expression
/// anchored at both ends (`^(?:...)$`): `%` is `.*`, `_` is `.`, `(` a non-capturing group,
/// `\ . ^ $` literal; a bracket expression is copied (its backslashes doubled); the escape
/// character makes the next character literal, and escape-double-quote splits the pattern into
/// SUBSTRING's three parts (at most two of them, 2200C). A bracket expression that starts with
/// `]` or holds another `[` is refused: PostgreSQL's releases read those differently.
fn similar_to_regex(pattern: &str, esc: Option<char>) -> Result<String> {
    let mut r = String::from("^(?:");
    let (mut after_escape, mut in_class, mut nquotes) = (false, false, 0);
    let chars: Vec<char> = pattern.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if after_escape {
            if c == '"' && !in_class {
                match nquotes {
                    0 => r.push_str("){1,1}?("),
                    1 => r.push_str("){1,1}(?:"),
                    _ => {
                        return Err(PgError::new(
                            "2200C",
                            "SQL regular expression may not contain more than two escape-double-quote separators",
                        ))
                    }
                }
                nquotes += 1;
            } else {
                r.push('\\');
                r.push(c);
            }
            after_escape = false;
        } else if Some(c) == esc {
            after_escape = true;
        } else if in_class {
            if c == '[' {
                return Err(PgError::feature(format!(
                    "SIMILAR TO pattern \"{pattern}\": a bracket expression inside brackets is not supported by heapstore"
                )));
            }
            if c == '\\' {
                r.push('\\');
            }
            r.push(c);
            if c == ']' {
                in_class = false;
            }
        } else if c == '[' {
            let rest = &chars[i + 1..];
            if rest.first() == Some(&']') || (rest.first() == Some(&'^') && rest.get(1) == Some(&']')) {
                return Err(PgError::feature(format!(
                    "SIMILAR TO pattern \"{pattern}\": a bracket expression starting with ] is not supported by heapstore"
                )));
            }
            r.push(c);
            in_class = true;
        } else {
            match c {
                '%' => r.push_str(".*"),
                '_' => r.push('.'),
                '(' => r.push_str("(?:"),
                '\\' | '.' | '^' | '$' => {
                    r.push('\\');
                    r.push(c);
                }
                _ => r.push(c),
            }
        }
    }
    r.push_str(")$");
    Ok(r)
}

/// An integer constant (a frame offset).
/// A RANGE frame's `offset PRECEDING / FOLLOWING`, bound to the offset type of the ORDER BY
/// column's type (`ty`), as PostgreSQL's in_range support functions take it: an integer
/// column an integer offset (bigint for a bigint column), a float column float8, numeric
/// numeric, and date / timestamp / timestamptz / time / timetz an interval. An untyped literal takes that
/// type. The offset must not read a column.
fn range_offset(b: &Binder<'_>, ty: Option<SqlType>, n: &Expr) -> Result<Scalar> {
    // The parser reads a quoted string in a frame bound as an interval literal: it is an
    // untyped literal there, typed by the column (`'1.5' PRECEDING` over a numeric).
    let n = match n {
        Expr::Interval(iv)
            if iv.leading_field.is_none()
                && iv.last_field.is_none()
                && iv.leading_precision.is_none()
                && iv.fractional_seconds_precision.is_none()
                && matches!(&*iv.value, Expr::Value(_)) =>
        {
            &*iv.value
        }
        other => other,
    };
    let o = b.bind(n)?;
    // The query's own columns are not allowed. An enclosing query's would be allowed by
    // PostgreSQL, but the planner does not see a frame offset when it decides whether a
    // subquery reads its enclosing query (and may run it once), so they are refused.
    let (mut own, mut enclosing) = (false, false);
    o.visit(&mut |x| match x {
        Scalar::Col(..) => own = true,
        Scalar::Outer(..) => enclosing = true,
        _ => {}
    });
    if own {
        return Err(PgError::new("42P10", "argument of RANGE must not contain variables"));
    }
    if enclosing {
        return Err(PgError::feature("a RANGE offset that reads an enclosing query's column is not supported by heapstore yet"));
    }
    let Some(col) = ty else {
        return Err(PgError::feature("RANGE with offset PRECEDING/FOLLOWING over an untyped column is not supported"));
    };
    let name = col.name();
    let offset_ty = match col.id {
        TypeId::Int2 | TypeId::Int4 | TypeId::Int8 => match type_of(&o) {
            None => col,
            Some(x) if is_int(x.id) && col.id == TypeId::Int8 => t(TypeId::Int8),
            Some(x) if is_int(x.id) => x,
            Some(x) => return Err(range_offset_unsupported(&name, Some(&x.name()))),
        },
        TypeId::Float4 | TypeId::Float8 => match type_of(&o) {
            None => f8(),
            Some(x) if is_num(x.id) => f8(),
            Some(x) => return Err(range_offset_unsupported(&name, Some(&x.name()))),
        },
        TypeId::Numeric => match type_of(&o) {
            None => numeric(),
            Some(x) if is_int(x.id) || x.id == TypeId::Numeric => numeric(),
            Some(x) => return Err(range_offset_unsupported(&name, Some(&x.name()))),
        },
        TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz | TypeId::Time | TypeId::TimeTz => match type_of(&o) {
            None => t(TypeId::Interval),
            Some(x) if x.id == TypeId::Interval => x,
            Some(x) => return Err(range_offset_unsupported(&name, Some(&x.name()))),
        },
        _ => return Err(range_offset_unsupported(&name, None)),
    };
    match type_of(&o) {
        None => coerce(o, Some(offset_ty)),
        Some(x) if x.id == offset_ty.id => Ok(o),
        Some(_) => Ok(Scalar::Cast(Box::new(o), offset_ty)),
    }
}

fn range_offset_unsupported(column: &str, offset: Option<&str>) -> PgError {
    match offset {
        None => PgError::feature(format!("RANGE with offset PRECEDING/FOLLOWING is not supported for column type {column}")),
        Some(o) => {
            PgError::feature(format!("RANGE with offset PRECEDING/FOLLOWING is not supported for column type {column} and offset type {o}"))
                .with_hint("Cast the offset value to an appropriate type.")
        }
    }
}

fn constant_i64(e: &Expr) -> Result<i64> {
    let b = expr::bind(e, &crate::sql::query::no_table())?;
    match b.eval(&[], &[])? {
        v @ (Value::Int2(_) | Value::Int4(_) | Value::Int8(_)) => Ok(expr::as_i64(&v).unwrap_or(0)),
        Value::Null => Err(PgError::new("22004", "frame starting offset must not be null")),
        _ => Err(PgError::feature("a frame offset must be an integer constant")),
    }
}

fn cmp_op(op: &BinaryOperator) -> Option<CmpOp> {
    Some(match op {
        BinaryOperator::Eq => CmpOp::Eq,
        BinaryOperator::NotEq => CmpOp::Ne,
        BinaryOperator::Lt => CmpOp::Lt,
        BinaryOperator::LtEq => CmpOp::Le,
        BinaryOperator::Gt => CmpOp::Gt,
        BinaryOperator::GtEq => CmpOp::Ge,
        _ => return None,
    })
}

/// PostgreSQL's common type of several expressions (CASE, COALESCE, UNION, ...): all
/// unknown is text; integers widen (int2 < int4 < int8) and go to float8 with a float; text
/// types go to text (varchar when all are varchar); date with timestamp is timestamp. Other
/// mixes fail naming `what`: 42804 when the types' categories differ, else 42846 (PostgreSQL
/// keeps the first type of a category and then cannot convert the other to it: json and
/// jsonb, uuid and bytea, int[] and text[]).
pub fn common_type(types: &[Option<SqlType>], what: &str) -> Result<Option<SqlType>> {
    let r = common_type_of(types, what)?;
    // select_common_typmod: a modifier survives only when every input has the type and that
    // modifier; an untyped input (a literal, NULL) has neither.
    Ok(if types.iter().any(Option::is_none) { r.map(|t| if t.id == TypeId::NullArray { t } else { SqlType::new(t.id) }) } else { r })
}

fn common_type_of(types: &[Option<SqlType>], what: &str) -> Result<Option<SqlType>> {
    let mut cur: Option<SqlType> = None;
    for t in types.iter().flatten() {
        cur = Some(match cur {
            None => *t,
            Some(c) if c == *t => c,
            Some(c) if c.id == t.id => SqlType::new(c.id),
            // Records of one field-type list share a column (each value keeps its own field
            // names); others are refused rather than typed wrongly.
            Some(SqlType { id: TypeId::Record(k), .. }) if matches!(t.id, TypeId::Record(_)) => {
                let TypeId::Record(l) = t.id else { unreachable!("a record") };
                if !k.same_field_types(l) {
                    return Err(PgError::feature(format!("{what} over records of different field types is not supported by heapstore")));
                }
                SqlType::new(TypeId::Record(k))
            }
            Some(c) if is_int(c.id) && is_int(t.id) => SqlType::new(if int_rank(c.id) >= int_rank(t.id) { c.id } else { t.id }),
            // select_common_type over the numeric category: the type every other converts to
            // implicitly, up the chain integer < numeric < real < double precision (so
            // numeric with real is real, as in PostgreSQL).
            Some(c) if is_num(c.id) && is_num(t.id) => {
                let rank = |x: TypeId| match x {
                    TypeId::Numeric => 10,
                    TypeId::Float4 => 11,
                    TypeId::Float8 => 12,
                    i => int_rank(i),
                };
                SqlType::new(if rank(c.id) >= rank(t.id) { c.id } else { t.id })
            }
            // text, varchar and char(n) convert to one another implicitly both ways, so the
            // first one's type stays (select_common_type): char(n) with text is character.
            Some(c) if is_text(c.id) && is_text(t.id) => SqlType::new(
                if matches!(c.id, TypeId::Varchar | TypeId::Bpchar) && matches!(t.id, TypeId::Text | TypeId::Varchar | TypeId::Bpchar) {
                    c.id
                } else {
                    TypeId::Text
                },
            ),
            // The reg* types are oids (binary-coercible in PostgreSQL).
            Some(c) if oidish(c.id) && oidish(t.id) => SqlType::new(TypeId::Oid),
            Some(c) if expr::is_datetime(c.id) && expr::is_datetime(t.id) => {
                SqlType::new(if c.id == TypeId::Timestamptz || t.id == TypeId::Timestamptz {
                    TypeId::Timestamptz
                } else {
                    TypeId::Timestamp
                })
            }
            // time converts to timetz implicitly, not back.
            Some(c) if matches!((c.id, t.id), (TypeId::Time, TypeId::TimeTz) | (TypeId::TimeTz, TypeId::Time)) => {
                SqlType::new(TypeId::TimeTz)
            }
            // Arrays convert as their elements do (int[] with bigint[] is bigint[]).
            Some(c)
                if c.is_array()
                    && t.is_array()
                    && common_type_of(&[c.elem(), t.elem()], what).ok().flatten().and_then(|e| e.array_of()).is_some() =>
            {
                let e = common_type_of(&[c.elem(), t.elem()], what).ok().flatten().expect("checked");
                SqlType::new(e.array_of().expect("checked").id)
            }
            Some(c) if super::pg_catalog::type_category(c.id) == super::pg_catalog::type_category(t.id) => {
                let what = if what == "CASE" { "CASE/WHEN" } else { what };
                return Err(PgError::new("42846", format!("{what} could not convert type {} to {}", t.name(), c.name())));
            }
            Some(c) => {
                return Err(PgError::new("42804", format!("{what} types {} and {} cannot be matched", c.name(), t.name())));
            }
        });
    }
    Ok(cur)
}

fn oidish(t: TypeId) -> bool {
    matches!(t, TypeId::Oid | TypeId::Regclass | TypeId::Regtype | TypeId::Regnamespace)
}

/// Converts `e` to `ty` (an untyped literal is read as `ty`; a typed value of another type
/// is cast).
pub fn to_type(e: Scalar, ty: Option<SqlType>) -> Result<Scalar> {
    let Some(ty) = ty else { return Ok(e) };
    match type_of(&e) {
        None => match e {
            Scalar::Const(Value::Null) => Ok(Scalar::Cast(Box::new(e), ty)),
            other => coerce(other, Some(ty)),
        },
        Some(t) if t == ty => Ok(e),
        // A record of the same field types (common_type checked): as it is.
        Some(t) if matches!((t.id, ty.id), (TypeId::Record(_), TypeId::Record(_))) => Ok(e),
        Some(t) if t.id == ty.id && ty.typmod < 0 => Ok(e),
        Some(_) => Ok(Scalar::Cast(Box::new(e), ty)),
    }
}

/// An integer bitwise operator (`&`, `|`, `#`, `<<`, `>>`, `~`): integer operands (an untyped
/// literal takes the other's type), the result in the wider type (a shift: the left's).
pub fn bind_bitwise(op: u8, sym: &str, args: Vec<Scalar>) -> Result<Scalar> {
    let types: Vec<Option<SqlType>> = args.iter().map(type_of).collect();
    let ty = if op >= 3 {
        types[0].or(Some(t(TypeId::Int4)))
    } else {
        let known: Vec<Option<SqlType>> = types.iter().copied().filter(Option::is_some).collect();
        common_type(&known, sym).ok().flatten().or(Some(t(TypeId::Int4)))
    };
    let Some(ty) = ty.filter(|t| is_int(t.id)) else {
        return Err(expr::no_operator(sym, types.first().copied().flatten(), types.get(1).copied().flatten()));
    };
    let mut out = Vec::with_capacity(args.len());
    for (k, a) in args.into_iter().enumerate() {
        let want = if op >= 3 && k == 1 { t(TypeId::Int4) } else { ty };
        let a = coerce(a, Some(want))?;
        match type_of(&a) {
            // A shift's count is an integer: a bigint one does not narrow (42883).
            Some(at) if op >= 3 && k == 1 && at.id == TypeId::Int8 => return Err(expr::no_operator(sym, Some(ty), Some(at))),
            Some(at) if is_int(at.id) => out.push(if at.id == want.id { a } else { Scalar::Cast(Box::new(a), want) }),
            other => return Err(expr::no_operator(sym, Some(ty), other)),
        }
    }
    Ok(Scalar::Func(Func::Bit(op), out, SqlType::new(ty.id)))
}

/// Whether a set-returning call (`Scalar::Srf`) is inside `e`.
fn has_srf(e: &Scalar) -> bool {
    let mut found = false;
    e.visit(&mut |x| found |= matches!(x, Scalar::Srf(..)));
    found
}

fn function_name(f: &sqlparser::ast::Function) -> String {
    let n = f.name.to_string().to_lowercase();
    n.strip_prefix("pg_catalog.").map(str::to_string).unwrap_or(n)
}

/// The left operand of IN / ANY / ALL over a subquery column of type `rt`: an untyped literal
/// takes the column's type; otherwise the two must be comparable (42883 if not). A char(n)
/// column is refused (its padding rules are not built there).
fn in_operand(l: Scalar, rt: Option<SqlType>, op: &str) -> Result<Scalar> {
    let l = expr::unpad(l);
    if rt.is_some_and(|t| t.id == TypeId::Bpchar) {
        return Err(PgError::feature("IN / ANY / ALL over a char(n) subquery column is not supported by heapstore yet"));
    }
    let lt = type_of(&l);
    let l = coerce(l, rt)?;
    // Types with no common one have no operator between them (PostgreSQL's 42883).
    let ty = common_type(&[type_of(&l), rt], "IN").map_err(|_| expr::no_operator(op, lt, rt))?;
    if let (Some(a), Some(b)) = (type_of(&l), rt) {
        if !(a.id == b.id || (is_num(a.id) && is_num(b.id)) || (is_text(a.id) && is_text(b.id)) || ty.is_some()) {
            return Err(expr::no_operator(op, lt, rt));
        }
    }
    Ok(l)
}

/// `x LIKE p` (`~~`; `ILIKE`, `~~*`): both sides text (an untyped literal is read as text;
/// a char(n) operand keeps its padding, a char(n) pattern does not, as in PostgreSQL);
/// another type is 42883 naming the operands' types as written.
/// Whether `x ILIKE p` runs under the C collation (an explicit C-like COLLATE on either side;
/// two different explicit collations are PostgreSQL's 42P21).
pub(super) fn ilike_in_c(x: &Expr, p: &Expr) -> Result<bool> {
    let (a, b) = (explicit_collation(x)?, explicit_collation(p)?);
    if let (Some(a), Some(b)) = (&a, &b) {
        if a != b {
            let shown = |c: &str| match c {
                "c" => "C".to_string(),
                "posix" => "POSIX".to_string(),
                other => other.to_string(),
            };
            return Err(PgError::new(
                "42P21",
                format!("collation mismatch between explicit collations \"{}\" and \"{}\"", shown(a), shown(b)),
            )
            .with_hint("Use the COLLATE clause to set the collation explicitly."));
        }
    }
    Ok(c_like(a.or(b).as_deref()))
}

/// As [`like_scalar`]; `c`: ILIKE under the C collation, which folds ASCII letters only
/// (PostgreSQL lowers both sides with the collation, then matches case-sensitively).
pub(super) fn like_scalar_c(x: Scalar, p: Scalar, negated: bool, ci: bool, esc: Option<char>, c: bool) -> Result<Scalar> {
    if !(ci && c) {
        return like_scalar(x, p, negated, ci, esc);
    }
    if esc.is_some_and(|e| e.is_ascii_alphabetic()) {
        return Err(PgError::feature("ILIKE under the C collation with a letter as ESCAPE is not supported by heapstore"));
    }
    let low = |s: Scalar| -> Result<Scalar> { Ok(Scalar::Func(Func::LowerC, vec![coerce(s, Some(text()))?], text())) };
    match like_scalar(x, p, negated, true, esc)? {
        Scalar::Like(x, p, negated, _, esc) => Ok(Scalar::Like(Box::new(low(*x)?), Box::new(low(*p)?), negated, false, esc)),
        other => Ok(other),
    }
}

pub(super) fn like_scalar(x: Scalar, p: Scalar, negated: bool, ci: bool, esc: Option<char>) -> Result<Scalar> {
    let (tx, tp) = (type_of(&x), type_of(&p));
    if tx.is_some_and(|t| !is_text(t.id)) || tp.is_some_and(|t| !is_text(t.id)) {
        let sym = match (negated, ci) {
            (false, false) => "~~",
            (false, true) => "~~*",
            (true, false) => "!~~",
            (true, true) => "!~~*",
        };
        return Err(expr::no_operator(sym, tx, tp));
    }
    let x = coerce(x, Some(text()))?;
    // The pattern is text: a char(n) one is cast, losing its padding (PostgreSQL's only forms
    // are `~~(text, text)` and `~~(bpchar, text)`).
    let p = expr::unpad(coerce(p, Some(text()))?);
    Ok(Scalar::Like(Box::new(x), Box::new(p), negated, ci, esc))
}

/// `function name(...) does not exist` points at the function's name, as in PostgreSQL (an
/// error about an operator or a function inside the arguments is left as it is).
fn at_name(e: PgError, f: &sqlparser::ast::Function, name: &str) -> PgError {
    let about_this = matches!(e.code, "42883" | "42725") && e.position == 0 && e.message.starts_with(&format!("function {name}("));
    match f.name.0.first().and_then(|p| p.as_ident()) {
        Some(id) if about_this => e.at(id.span.start),
        _ => e,
    }
}

impl Binder<'_> {
    /// Expression forms beyond columns, literals and operators (see the module doc).
    pub(super) fn bind_more(&self, e: &Expr) -> Result<Scalar> {
        Ok(match e {
            Expr::Function(f) => self.function(f)?,
            Expr::Case { operand, conditions, else_result, .. } => {
                let op = operand.as_ref().map(|o| self.bind(o)).transpose()?;
                let mut conds = Vec::with_capacity(conditions.len());
                let mut results = Vec::with_capacity(conditions.len());
                for c in conditions {
                    let cond = match &op {
                        Some(o) => {
                            let (a, b) = bind_pair(o.clone(), self.bind(&c.condition)?)?;
                            expr::check_comparable(&a, &b, "=")?;
                            Scalar::Cmp(CmpOp::Eq, Box::new(a), Box::new(b))
                        }
                        None => self.boolean(&c.condition, "CASE/WHEN")?,
                    };
                    conds.push(cond);
                    results.push(self.bind(&c.result)?);
                }
                let els = else_result.as_ref().map(|e| self.bind(e)).transpose()?;
                if conds.iter().chain(&results).chain(&els).any(has_srf) {
                    return Err(PgError::feature("set-returning functions are not allowed in CASE"));
                }
                // PostgreSQL resolves the ELSE result first (a missing one is an untyped NULL),
                // so `CASE WHEN .. THEN char_col ELSE text_col END` is text.
                let mut types: Vec<Option<SqlType>> = vec![els.as_ref().and_then(type_of)];
                types.extend(results.iter().map(type_of));
                let ty = common_type(&types, "CASE")?.or(Some(text()));
                let results = results.into_iter().map(|r| to_type(r, ty)).collect::<Result<Vec<_>>>()?;
                let els = els.map(|e| to_type(e, ty)).transpose()?.map(Box::new);
                Scalar::Case(conds.into_iter().zip(results).collect(), els, ty)
            }
            Expr::Like { negated, any: false, expr, pattern, escape_char: esc } => self.like(expr, pattern, *negated, false, esc)?,
            Expr::SimilarTo { negated, expr, pattern, escape_char: esc } => self.similar_to(expr, pattern, *negated, esc)?,
            Expr::ILike { negated, any: false, expr, pattern, escape_char: esc } => self.like(expr, pattern, *negated, true, esc)?,
            Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) if expr::row_items(a).is_some() && expr::row_items(b).is_some() => {
                // Row-wise: distinct when some pair is distinct.
                let not = matches!(e, Expr::IsNotDistinctFrom(..));
                let (Some(l), Some(r)) = (expr::row_items(a), expr::row_items(b)) else { unreachable!("both are rows") };
                if l.len() != r.len() {
                    return Err(PgError::syntax("unequal number of entries in row expressions"));
                }
                let mut acc: Option<Scalar> = None;
                for (x, y) in l.iter().zip(&r) {
                    let (x, y) = bind_pair(self.bind(x)?, self.bind(y)?)?;
                    expr::check_comparable(&x, &y, "=")?;
                    let (x, y) = expr::unpad_pair(x, y);
                    let d = Scalar::IsDistinct(Box::new(x), Box::new(y), not);
                    acc = Some(match acc {
                        None => d,
                        Some(p) if not => Scalar::And(Box::new(p), Box::new(d)),
                        Some(p) => Scalar::Or(Box::new(p), Box::new(d)),
                    });
                }
                acc.unwrap_or(Scalar::Const(Value::Bool(not)))
            }
            Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => {
                let (x, y) = bind_pair(self.bind(a)?, self.bind(b)?)?;
                expr::check_comparable(&x, &y, "=")?;
                let (x, y) = expr::unpad_pair(x, y);
                Scalar::IsDistinct(Box::new(x), Box::new(y), matches!(e, Expr::IsNotDistinctFrom(..)))
            }
            Expr::IsTrue(x) => Scalar::IsBool(Box::new(self.boolean(x, "IS TRUE")?), Some(true), false),
            Expr::IsNotTrue(x) => Scalar::IsBool(Box::new(self.boolean(x, "IS NOT TRUE")?), Some(true), true),
            Expr::IsFalse(x) => Scalar::IsBool(Box::new(self.boolean(x, "IS FALSE")?), Some(false), false),
            Expr::IsNotFalse(x) => Scalar::IsBool(Box::new(self.boolean(x, "IS NOT FALSE")?), Some(false), true),
            Expr::IsUnknown(x) => Scalar::IsBool(Box::new(self.boolean(x, "IS UNKNOWN")?), None, false),
            Expr::IsNotUnknown(x) => Scalar::IsBool(Box::new(self.boolean(x, "IS NOT UNKNOWN")?), None, true),
            Expr::Substring { expr, substring_from, substring_for, .. } => {
                let mut args = vec![self.bind(expr)?];
                args.push(match substring_from {
                    Some(f) => self.bind(f)?,
                    None => Scalar::Const(Value::Int4(1)),
                });
                if let Some(f) = substring_for {
                    args.push(self.bind(f)?);
                }
                // A text or untyped pattern: the regular expression forms (`substring`
                // resolves them), else the positions (`substr`).
                if substring_from.is_some() && type_of(&args[1]).is_none_or(|t| is_text(t.id)) {
                    bind_call("substring", args)?
                } else {
                    bind_call("substr", args)?
                }
            }
            Expr::Position { expr, r#in } => bind_call("strpos", vec![self.bind(r#in)?, self.bind(expr)?])?,
            Expr::Overlay { expr, overlay_what, overlay_from, overlay_for } => {
                let mut args = vec![self.bind(expr)?, self.bind(overlay_what)?, self.bind(overlay_from)?];
                if let Some(f) = overlay_for {
                    args.push(self.bind(f)?);
                }
                bind_call("overlay", args)?
            }
            Expr::Trim { expr, trim_where, trim_what, trim_characters } => {
                if trim_characters.is_some() {
                    return Err(PgError::feature("TRIM with a character list is not supported"));
                }
                let name = match trim_where {
                    None | Some(TrimWhereField::Both) => "btrim",
                    Some(TrimWhereField::Leading) => "ltrim",
                    Some(TrimWhereField::Trailing) => "rtrim",
                };
                let mut args = vec![self.bind(expr)?];
                if let Some(w) = trim_what {
                    args.push(self.bind(w)?);
                }
                bind_call(name, args)?
            }
            Expr::Extract { field, syntax: _, expr } => {
                let field = field.to_string().to_lowercase().trim_matches('\'').to_string();
                let x = self.bind(expr)?;
                let x = match type_of(&x) {
                    Some(t)
                        if matches!(
                            t.id,
                            TypeId::Date | TypeId::Timestamp | TypeId::Timestamptz | TypeId::Interval | TypeId::Time | TypeId::TimeTz
                        ) =>
                    {
                        x
                    }
                    None => coerce(x, Some(t(TypeId::Timestamp)))?,
                    Some(other) => {
                        return Err(PgError::new("42883", format!("function extract(unknown, {}) does not exist", other.name())));
                    }
                };
                Scalar::Func(Func::Extract, vec![Scalar::Const(Value::Text(field)), x], numeric())
            }
            Expr::Ceil { expr, field: CeilFloorKind::DateTimeField(DateTimeField::NoDateTime) } => {
                bind_call("ceil", vec![self.bind(expr)?])?
            }
            Expr::Floor { expr, field: CeilFloorKind::DateTimeField(DateTimeField::NoDateTime) } => {
                bind_call("floor", vec![self.bind(expr)?])?
            }
            Expr::Subquery(q) => self.sublink(q, SubKind::Scalar, None)?,
            Expr::Exists { subquery, negated } => {
                let l = self.sublink(subquery, SubKind::Exists, None)?;
                if *negated {
                    Scalar::Not(Box::new(l))
                } else {
                    l
                }
            }
            Expr::InSubquery { expr, subquery, negated } => {
                let l = match expr::row_items(expr) {
                    Some(items) => self.sublink_row(subquery, &items)?,
                    None => self.sublink(subquery, SubKind::Any(CmpOp::Eq), Some((self.bind(expr)?, &**expr)))?,
                };
                if *negated {
                    Scalar::Not(Box::new(l))
                } else {
                    l
                }
            }
            Expr::Collate { expr, collation } => {
                // heapstore compares text bytewise: the C collation, which is also its default.
                let c = collation.to_string().to_ascii_lowercase().replace('"', "");
                let c = c.strip_prefix("pg_catalog.").unwrap_or(&c);
                if !matches!(c, "default" | "c" | "posix" | "ucs_basic") {
                    return Err(PgError::feature(format!(
                        "collation {collation} is not supported by heapstore (text compares bytewise, as with \"C\")"
                    )));
                }
                let x = self.bind(expr)?;
                // Set after the operand is bound: `lower(x) COLLATE "C"` maps case by the
                // default collation, and only later case mappings could meet a C value.
                if c_like(Some(c)) {
                    if let Some(seen) = self.queries.and_then(|q| q.c_collation_seen()) {
                        seen.set(true);
                    }
                }
                match type_of(&x) {
                    Some(ty) if !is_text(ty.id) => {
                        return Err(PgError::new("42804", format!("collations are not supported by type {}", ty.name())))
                    }
                    _ => x,
                }
            }
            Expr::AnyOp { left, compare_op, right, .. } | Expr::AllOp { left, compare_op, right } => {
                let Some(op) = cmp_op(compare_op) else {
                    return Err(PgError::feature(format!("{compare_op} ANY/ALL is not supported")));
                };
                let mut r = &**right;
                while let Expr::Nested(inner) = r {
                    r = inner;
                }
                let nested = matches!(r, Expr::Array(arr) if arr.elem.iter().any(|e| matches!(e, Expr::Array(_))));
                if let (Expr::Array(arr), false) = (r, nested) {
                    // x op ANY (ARRAY[a, b]) is (x op a) OR (x op b), with the same NULL rules;
                    // ALL is the AND. An empty array: false for ANY, true for ALL.
                    // The array's elements take one common type (untyped ones: text), as
                    // PostgreSQL resolves ARRAY[...]; then each is compared with x.
                    let any = matches!(e, Expr::AnyOp { .. });
                    if arr.elem.is_empty() {
                        return Err(PgError::new("42P18", "cannot determine type of empty array")
                            .with_hint("Explicitly cast to the desired type, for example ARRAY[]::integer[]."));
                    }
                    let elems = arr.elem.iter().map(|el| self.bind(el)).collect::<Result<Vec<_>>>()?;
                    let ty = common_type(&elems.iter().map(type_of).collect::<Vec<_>>(), "ARRAY")?.or(Some(text()));
                    let elems = elems.into_iter().map(|el| to_type(el, ty)).collect::<Result<Vec<_>>>()?;
                    let x = self.bind(left)?;
                    let mut acc: Option<Scalar> = None;
                    for el in elems {
                        let cmp = expr::compare_scalars(op, x.clone(), el).map_err(|e| expr::at_operator(e, left))?;
                        acc = Some(match acc {
                            None => cmp,
                            Some(prev) if any => Scalar::Or(Box::new(prev), Box::new(cmp)),
                            Some(prev) => Scalar::And(Box::new(prev), Box::new(cmp)),
                        });
                    }
                    return Ok(acc.unwrap_or(Scalar::Const(Value::Bool(!any))));
                }
                let Expr::Subquery(q) = r else {
                    let any = matches!(e, Expr::AnyOp { .. });
                    let (x, arr) = (self.bind(left)?, self.bind(r)?);
                    return super::array::bind_any_all(op, any, x, arr).map_err(|e| expr::at_operator(e, left));
                };
                let kind = if matches!(e, Expr::AnyOp { .. }) { SubKind::Any(op) } else { SubKind::All(op) };
                if let Some(items) = expr::row_items(left) {
                    // `(a, b) op ANY / ALL (subquery)`: each of the subquery's rows compared
                    // row-wise with the row (PostgreSQL's row comparison sublink).
                    use sqlparser::ast::Spanned;
                    return self.sublink_rows(q, &items, kind).map_err(|e| {
                        if e.code == sqlstate::SYNTAX_ERROR && e.message.starts_with("subquery has too") {
                            e.at_next(left.span().end)
                        } else {
                            e
                        }
                    });
                }
                self.sublink(q, kind, Some((self.bind(left)?, &**left)))?
            }
            other => return Err(PgError::feature(format!("expression not supported: {other}"))),
        })
    }

    /// Binds `e` as a boolean condition (an untyped literal is read as boolean).
    pub fn boolean(&self, e: &Expr, what: &str) -> Result<Scalar> {
        let b = coerce(self.bind(e)?, Some(SqlType::new(TypeId::Bool)))?;
        match type_of(&b) {
            Some(t) if t.id != TypeId::Bool => {
                Err(PgError::new(sqlstate::DATATYPE_MISMATCH, format!("argument of {what} must be type boolean, not type {}", t.name())))
            }
            _ => Ok(b),
        }
    }

    /// `x [NOT] SIMILAR TO pattern [ESCAPE e]`: the pattern (a constant) is rewritten into a
    /// POSIX regular expression as PostgreSQL's similar_to_escape does, then matched as `~`
    /// matches (`expr::regex_match`, which refuses what it cannot read as PostgreSQL does).
    /// `ESCAPE NULL` or a NULL pattern gives NULL.
    fn similar_to(&self, x: &Expr, p: &Expr, negated: bool, esc: &Option<sqlparser::ast::Value>) -> Result<Scalar> {
        let (xs, ps) = (self.bind(x)?, self.bind(p)?);
        let null = || Ok(Scalar::Cast(Box::new(Scalar::Const(Value::Null)), t(TypeId::Bool)));
        if matches!(esc, Some(sqlparser::ast::Value::Null)) {
            return null();
        }
        // similar_to_escape's code for a bad escape is 22025 (LIKE's is 22019).
        let e = escape_char(esc).map_err(|mut e| {
            if e.code == "22019" {
                e.code = "22025";
            }
            e
        })?;
        if let Some(ty) = type_of(&ps) {
            if !is_text(ty.id) {
                let shown = type_of(&xs).map(|t| t.name()).unwrap_or_else(|| "unknown".into());
                return Err(PgError::new("42883", format!("operator does not exist: {shown} ~ {}", ty.name()))
                    .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."));
            }
        }
        let pattern = match &ps {
            Scalar::Unknown(s) | Scalar::Const(Value::Text(s)) => s.clone(),
            Scalar::Const(Value::Null) => return null(),
            _ => return Err(PgError::feature("a SIMILAR TO pattern that is not a constant is not supported by heapstore yet")),
        };
        let are = similar_to_regex(&pattern, e)?;
        expr::regex_match(xs, Scalar::Const(Value::Text(are)), negated, false).map_err(|err| expr::at_operator(err, x))
    }

    fn like(&self, x: &Expr, p: &Expr, negated: bool, ci: bool, esc: &Option<sqlparser::ast::Value>) -> Result<Scalar> {
        let c = if ci { ilike_in_c(x, p)? } else { false };
        // ILIKE's result is boolean: a C collation written on its operands goes no further.
        let (xs, ps) = if c { (self.bind_direct_collate(x)?, self.bind_direct_collate(p)?) } else { (self.bind(x)?, self.bind(p)?) };
        if ci && !c {
            self.collation_unknown("ILIKE", &[x, p])?;
        }
        like_scalar_c(xs, ps, negated, ci, escape_char(esc)?, c).map_err(|e| expr::at_operator(e, x))
    }

    /// A set-returning function in a select list: collected for the `ProjectSet` node and
    /// replaced by its column (`Scalar::Srf`). Anywhere else it is refused, as in PostgreSQL.
    fn srf_call(&self, name: &str, exprs: &[&Expr]) -> Result<Scalar> {
        let Some(c) = self.collect.filter(|_| !self.in_agg) else {
            return Err(PgError::feature(if self.in_agg {
                "aggregate function calls cannot contain set-returning function calls".to_string()
            } else {
                format!("set-returning function {name}() is not allowed here")
            }));
        };
        let args = exprs.iter().map(|e| self.bind(e)).collect::<Result<Vec<_>>>()?;
        let mut nested = false;
        for a in &args {
            a.visit(&mut |x| nested |= matches!(x, Scalar::Srf(..)));
        }
        if nested {
            return Err(PgError::feature("a set-returning function in another one's arguments is not supported by heapstore yet"));
        }
        let call = super::srf::bind(name, args, true)?;
        let ty = call.types[0];
        let mut srfs = c.srfs.borrow_mut();
        srfs.push(call);
        Ok(Scalar::Srf(srfs.len() - 1, ty))
    }

    /// A subquery of an expression, planned with this scope and the enclosing ones as its
    /// outer scopes.
    fn plan_sublink_query(&self, q: &sqlparser::ast::Query) -> Result<crate::exec::BoundQuery> {
        let Some(qb) = self.queries else {
            return Err(PgError::feature("subqueries are not supported in this statement by heapstore yet"));
        };
        let mut outer: Vec<&expr::Scope> = vec![self.scope];
        outer.extend_from_slice(self.outer);
        qb.subquery(q, &outer)
    }

    fn sublink(&self, q: &sqlparser::ast::Query, kind: SubKind, lhs: Option<(Scalar, &Expr)>) -> Result<Scalar> {
        let sub = self.plan_sublink_query(q)?;
        let ncols = sub.columns.len();
        match kind {
            SubKind::Exists => {}
            _ if ncols != 1 => {
                return Err(PgError::syntax(if ncols > 1 {
                    "subquery has too many columns"
                } else {
                    "subquery must return only one column"
                }));
            }
            _ => {}
        }
        let mut col_ty = sub.columns.first().map(|c| c.ty);
        let lhs = match lhs {
            Some((l, left)) => {
                let op = match kind {
                    SubKind::Any(o) | SubKind::All(o) => o.symbol(),
                    _ => "=",
                };
                let l = in_operand(l, col_ty, op).map_err(|e| expr::at_operator(e, left))?;
                // A column of unknown type (`SELECT NULL`) takes the operand's.
                if col_ty.is_none() {
                    col_ty = type_of(&l);
                }
                Some(l)
            }
            None => None,
        };
        Ok(Scalar::SubLink(Box::new(SubLink::new(kind, lhs, sub, col_ty))))
    }

    /// `make_interval(years, months, weeks, days, hours, mins, secs)`, each defaulting to 0,
    /// in positional or named notation (`days => 3`, `days := 3`; positional ones first): the
    /// first six integer, `secs` double precision. As in PostgreSQL, every argument is bound
    /// before the notation is checked.
    fn make_interval(&self, list: &[FunctionArg]) -> Result<Scalar> {
        use sqlparser::ast::Spanned;
        const PARAMS: [&str; 7] = ["years", "months", "weeks", "days", "hours", "mins", "secs"];
        // Each argument: its name (None: positional) with where the name is, its expression.
        type Loc = sqlparser::tokenizer::Location;
        /// An argument: its name and where the name is (None: positional), its value, where it is.
        type Arg = (Option<(String, Loc)>, Scalar, Loc);
        let mut args: Vec<Arg> = Vec::new();
        for a in list {
            let (name, e) = match a {
                // `name := value` reaches here as an assignment expression.
                FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::BinaryOp { left, op: BinaryOperator::Assignment, right }))
                    if matches!(&**left, Expr::Identifier(_)) =>
                {
                    let Expr::Identifier(id) = &**left else { unreachable!("an identifier") };
                    (Some((crate::catalog::fold_ident(id), id.span.start)), &**right)
                }
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => (None, e),
                FunctionArg::Named { name, arg: FunctionArgExpr::Expr(e), .. }
                | FunctionArg::ExprNamed { name: Expr::Identifier(name), arg: FunctionArgExpr::Expr(e), .. } => {
                    (Some((crate::catalog::fold_ident(name), name.span.start)), e)
                }
                other => return Err(PgError::feature(format!("function argument {other} is not supported"))),
            };
            args.push((name, self.bind(e)?, e.span().start));
        }
        // The notation: positional arguments first, each name once.
        let mut names: Vec<&str> = Vec::new();
        for (name, _, at) in &args {
            match name {
                None if !names.is_empty() => return Err(PgError::syntax("positional argument cannot follow named argument").at(*at)),
                None => {}
                Some((n, at)) if names.contains(&n.as_str()) => {
                    return Err(PgError::syntax(format!("argument name \"{n}\" used more than once")).at(*at));
                }
                Some((n, _)) => names.push(n),
            }
        }
        // Each argument's parameter (None: matches none, so no function matches).
        let mut slots: [Option<Scalar>; 7] = Default::default();
        let mut shown = Vec::new();
        let mut matches = args.len() <= PARAMS.len();
        for (i, (name, x, _)) in args.into_iter().enumerate() {
            let slot = match &name {
                None => (i < PARAMS.len()).then_some(i),
                Some((n, _)) => PARAMS.iter().position(|p| p == n),
            };
            let slot = slot.filter(|&k| slots[k].is_none());
            let x = match slot {
                Some(6) => coerce(x, Some(t(TypeId::Float8)))?,
                Some(_) => coerce(x, Some(t(TypeId::Int4)))?,
                None => x,
            };
            let ty = type_of(&x);
            let tyname = ty.map(|t| t.name()).unwrap_or_else(|| "unknown".into());
            shown.push(match &name {
                Some((n, _)) => format!("{n} => {tyname}"),
                None => tyname,
            });
            let fits = match (slot, ty.map(|t| t.id)) {
                (Some(6), Some(id)) => is_num(id),
                (Some(_), Some(id)) => matches!(id, TypeId::Int2 | TypeId::Int4),
                (Some(_), None) => true,
                (None, _) => false,
            };
            match slot {
                Some(k) if fits => slots[k] = Some(x),
                _ => matches = false,
            }
        }
        if !matches {
            return Err(PgError::new("42883", format!("function make_interval({}) does not exist", shown.join(", ")))
                .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
        }
        let args = slots
            .into_iter()
            .enumerate()
            .map(|(k, s)| match s {
                Some(x) if k == 6 => to_type(x, Some(t(TypeId::Float8))),
                Some(x) => Ok(x),
                None if k == 6 => Ok(Scalar::Const(Value::Float8(0.0))),
                None => Ok(Scalar::Const(Value::Int4(0))),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Scalar::Func(Func::MakeInterval, args, t(TypeId::Interval)))
    }

    /// `(a, b, ...) IN (subquery)`: the subquery's columns compared pairwise with the row's
    /// items, each pair typed as a single IN would type it.
    fn sublink_row(&self, q: &sqlparser::ast::Query, items: &[&Expr]) -> Result<Scalar> {
        self.sublink_rows(q, items, SubKind::Any(CmpOp::Eq))
    }

    /// `(a, b, ...) op (subquery)` (`kind` RowCompare), `op ANY / ALL (subquery)` or `IN`
    /// (`kind` Any(=)): the row's items paired with the subquery's columns, each pair typed as
    /// one comparison would be.
    pub(super) fn sublink_rows(&self, q: &sqlparser::ast::Query, items: &[&Expr], kind: SubKind) -> Result<Scalar> {
        let sub = self.plan_sublink_query(q)?;
        let ncols = sub.columns.len();
        if ncols != items.len() {
            return Err(PgError::syntax(if ncols > items.len() {
                "subquery has too many columns"
            } else {
                "subquery has too few columns"
            }));
        }
        let mut lhs = Vec::with_capacity(items.len());
        let op = match kind {
            SubKind::RowCompare(o) | SubKind::Any(o) | SubKind::All(o) => o.symbol(),
            _ => "=",
        };
        for (e, c) in items.iter().zip(&sub.columns) {
            lhs.push(in_operand(self.bind(e)?, Some(c.ty), op)?);
        }
        if lhs.is_empty() {
            return Err(PgError::feature("cannot compare rows of zero length"));
        }
        let mut link = SubLink::new(kind, None, sub, None);
        link.lhs_row = lhs;
        Ok(Scalar::SubLink(Box::new(link)))
    }

    /// The functions of the session and of the catalog (`current_database()`,
    /// `pg_get_userbyid`, `pg_get_indexdef`, `format_type`, `to_regclass`, ...). Their
    /// answers come from the catalog as the planning session sees it, so a plan using a
    /// catalog lookup is not cached. None: not one of them.
    pub(super) fn session_function(&self, name: &str, exprs: &[&Expr], bare: bool) -> Result<Option<Scalar>> {
        use crate::sql::pg_catalog as pc;
        use std::collections::HashMap;
        let Some(s) = self.queries.and_then(|q| q.session()) else { return Ok(None) };
        let n = exprs.len();
        let txt = |v: &str| Scalar::Const(Value::Text(v.to_string()));
        let typed_null = |id: TypeId| Scalar::Cast(Box::new(Scalar::Const(Value::Null)), t(id));
        let who = s.identity();
        let lookup = |name: &str, arg: Scalar, map: HashMap<i64, Value>, ty: TypeId| -> Result<Option<Scalar>> {
            if let Some(u) = self.now_used {
                u.set(true);
            }
            let arg = coerce(arg, Some(t(TypeId::Oid)))?;
            // pg_get_userbyid names an unknown role so, as PostgreSQL does.
            let missing = (name == "pg_get_userbyid").then_some("unknown (OID={})");
            let table = expr::LookupTable { name: name.to_string(), map, missing, ..Default::default() };
            Ok(Some(Scalar::Lookup(Box::new(arg), std::sync::Arc::new(table), t(ty))))
        };
        let relations = || -> Vec<(u32, String)> {
            let mut v = Vec::new();
            for tb in s.visible_tables() {
                v.push((tb.oid, tb.name.clone()));
                v.extend(tb.indexes.iter().map(|i| (i.oid, i.name.clone())));
            }
            v
        };
        Ok(Some(match (name, n, bare) {
            ("current_database", 0, false) | ("current_catalog", 0, true) => Scalar::Const(Value::Text(who.database.to_string())),
            ("current_user" | "session_user" | "user" | "current_role", 0, true) => Scalar::Const(Value::Text(who.user.to_string())),
            ("current_schema", 0, _) => Scalar::Const(Value::Text("public".into())),
            ("pg_backend_pid", 0, false) => Scalar::Const(Value::Int4(s.id() as i32)),
            ("current_schemas", 1, false) if s.temp_namespace_if_any().is_some() => {
                // The session's temporary schema leads the implicit part of the search path.
                if let Some(u) = self.now_used {
                    u.set(true);
                }
                let arg = self.bind(exprs[0])?;
                match crate::sql::array::bind_call("current_schemas", vec![arg]) {
                    Some(Ok(Scalar::Func(f, mut args, ty))) => {
                        args.push(txt(&pc::temp_schema_name(s)));
                        Scalar::Func(f, args, ty)
                    }
                    Some(r) => r?,
                    None => return Ok(None),
                }
            }
            ("pg_my_temp_schema", 0, false) => {
                // The session's temporary schema, 0 before it has one (as PostgreSQL).
                if let Some(u) = self.now_used {
                    u.set(true);
                }
                Scalar::Const(Value::Oid(s.temp_namespace_if_any().unwrap_or(0)))
            }
            ("version", 0, false) => txt(&crate::server_version_string()),
            ("current_setting", 1 | 2, false) => {
                let name_arg = self.bind(exprs[0])?;
                let (Scalar::Unknown(setting) | Scalar::Const(Value::Text(setting))) = &name_arg else {
                    // A name known only at run time: every setting's value now, by name (a
                    // missing one is an error unless missing_ok is given and true).
                    if exprs.len() == 2 {
                        return Err(PgError::feature(
                            "current_setting(name, missing_ok) with a name that is not a constant is not supported",
                        ));
                    }
                    if let Some(u) = self.now_used {
                        u.set(true);
                    }
                    let mut by_text = HashMap::new();
                    for (k, v, _) in s.shared().settings.all() {
                        by_text.insert(k.to_ascii_lowercase(), Value::Text(v));
                    }
                    by_text.insert("work_mem".into(), Value::Text(crate::sql::memory_text(s.work_mem_bytes() / 1024)));
                    for (k, v) in s.client_settings() {
                        by_text.insert(k.to_ascii_lowercase(), Value::Text(v));
                    }
                    let table = expr::LookupTable {
                        name: "current_setting".into(),
                        by_text,
                        lower_text: true,
                        missing_text: Some((sqlstate::UNDEFINED_OBJECT, "unrecognized configuration parameter \"{}\"")),
                        ..Default::default()
                    };
                    let key = Scalar::Cast(Box::new(coerce(name_arg, Some(text()))?), text());
                    return Ok(Some(Scalar::Lookup(Box::new(key), std::sync::Arc::new(table), text())));
                };
                let setting = setting.clone();
                // A session's settings can change between executions: never a cached plan.
                if let Some(u) = self.now_used {
                    u.set(true);
                }
                let missing_ok = match exprs.get(1) {
                    None => false,
                    Some(e) => match self.bind(e)? {
                        Scalar::Const(Value::Bool(b)) => b,
                        Scalar::Unknown(b) => matches!(b.to_ascii_lowercase().as_str(), "t" | "true" | "on" | "yes" | "1"),
                        _ => {
                            return Err(PgError::feature(
                                "current_setting(name, missing_ok) with a missing_ok that is not a constant is not supported",
                            ))
                        }
                    },
                };
                let lower = setting.to_ascii_lowercase();
                let client = s.client_settings().into_iter().find(|(k, _)| k.to_ascii_lowercase() == lower).map(|(_, v)| v);
                let v = match client {
                    Some(v) => Some(v),
                    None => match lower.as_str() {
                        "work_mem" => Some(crate::sql::memory_text(s.work_mem_bytes() / 1024)),
                        "temp_file_limit" => {
                            let kb = s.temp_file_limit_kb();
                            Some(if kb < 0 { "-1".to_string() } else { crate::sql::memory_text(kb as u64) })
                        }
                        _ => match s.shared().settings.get(&setting) {
                            Ok(v) => Some(v.to_string()),
                            Err(_) if missing_ok => None,
                            Err(e) => return Err(e),
                        },
                    },
                };
                match v {
                    Some(v) => txt(&v),
                    None => typed_null(TypeId::Text),
                }
            }
            ("pg_get_userbyid", 1, false) => {
                let roles = crate::auth::load_roles(&s.shared().dir).unwrap_or_default();
                let map = roles
                    .iter()
                    .filter_map(|r| pc::role_oid(s, &r.rolname).map(|o| (i64::from(o), Value::Text(r.rolname.clone()))))
                    .collect();
                return lookup("pg_get_userbyid", self.bind(exprs[0])?, map, TypeId::Name);
            }
            ("pg_table_is_visible", 1, false) => {
                let mut map: HashMap<i64, Value> = relations().into_iter().map(|(o, _)| (i64::from(o), Value::Bool(true))).collect();
                for d in pc::catalog_oids() {
                    // information_schema is not on the search path.
                    map.insert(i64::from(d), Value::Bool(pc::table_is_visible(s, d).unwrap_or(true)));
                }
                return lookup("pg_table_is_visible", self.bind(exprs[0])?, map, TypeId::Bool);
            }
            ("pg_relation_is_publishable", 1, false) => {
                // Only permanent ordinary tables outside the system schemas can be published.
                let mut map: HashMap<i64, Value> = HashMap::new();
                for tb in s.visible_tables() {
                    let ok = tb.is_table() && tb.persistence == crate::catalog::Persistence::Permanent;
                    map.insert(i64::from(tb.oid), Value::Bool(ok));
                    map.extend(tb.indexes.iter().map(|i| (i64::from(i.oid), Value::Bool(false))));
                }
                map.extend(pc::catalog_oids().map(|o| (i64::from(o), Value::Bool(false))));
                return lookup("pg_relation_is_publishable", self.bind(exprs[0])?, map, TypeId::Bool);
            }
            ("pg_tablespace_location", 1, false) => {
                // The built-in tablespaces live in the data directory: an empty location.
                let map = [1663i64, 1664].into_iter().map(|o| (o, Value::Text(String::new()))).collect();
                return lookup("pg_tablespace_location", self.bind(exprs[0])?, map, TypeId::Text);
            }
            ("pg_collation_is_visible", 1, false) => {
                let map = [100i64, 950, 951].into_iter().map(|o| (o, Value::Bool(true))).collect();
                return lookup("pg_collation_is_visible", self.bind(exprs[0])?, map, TypeId::Bool);
            }
            ("pg_conversion_is_visible" | "pg_function_is_visible" | "pg_opclass_is_visible" | "pg_operator_is_visible", 1, false) => {
                // Objects heapstore keeps no catalog rows for: NULL, PostgreSQL's answer for
                // an OID that names none.
                return lookup(name, self.bind(exprs[0])?, HashMap::new(), TypeId::Bool);
            }
            ("pg_get_serial_sequence", 2, false) => {
                // (table, column): the sequence a serial or identity column owns, qualified.
                let mut by_text = HashMap::new();
                for tb in s.visible_tables() {
                    if let Some(seq) = tb.sequence() {
                        if let Some((owner, col)) = &seq.owned_by {
                            if let Some(owner) = s.visible_tables().iter().find(|o| o.oid == *owner) {
                                let col_name = col;
                                // PostgreSQL names the temporary schema `pg_temp` here.
                                let schema = if owner.is_temp() { "pg_temp" } else { "public" };
                                let v =
                                    Value::Text(format!("{}.{}", if tb.is_temp() { "pg_temp" } else { "public" }, quote_ident(&tb.name)));
                                by_text.entry(format!("{}\u{1}{col_name}", owner.name)).or_insert(v.clone());
                                by_text.insert(format!("{schema}.{}\u{1}{col_name}", owner.name), v);
                            }
                        }
                    }
                }
                if let Some(u) = self.now_used {
                    u.set(true);
                }
                let rel = coerce(self.bind(exprs[0])?, Some(text()))?;
                let col = coerce(self.bind(exprs[1])?, Some(text()))?;
                let key = Scalar::Concat(
                    Box::new(Scalar::Concat(
                        Box::new(Scalar::Cast(Box::new(rel), text())),
                        Box::new(Scalar::Const(Value::Text("\u{1}".into()))),
                    )),
                    Box::new(Scalar::Cast(Box::new(col), text())),
                );
                let table = expr::LookupTable { name: "pg_get_serial_sequence".into(), by_text, fold_names: true, ..Default::default() };
                return Ok(Some(Scalar::Lookup(Box::new(key), std::sync::Arc::new(table), text())));
            }
            // Definitions of objects heapstore has none of (statistics objects, triggers,
            // rules, partitioning): NULL for every OID, as PostgreSQL answers for an OID that
            // names no such object.
            (
                "pg_get_statisticsobjdef"
                | "pg_get_statisticsobjdef_columns"
                | "pg_get_statisticsobjdef_expressions"
                | "pg_get_partkeydef"
                | "pg_get_partition_constraintdef",
                1,
                false,
            )
            | ("pg_get_triggerdef" | "pg_get_ruledef", 1 | 2, false) => {
                if let Some(e) = exprs.get(1) {
                    coerce(self.bind(e)?, Some(t(TypeId::Bool)))?;
                }
                let ty =
                    if name == "pg_get_statisticsobjdef_expressions" { TypeId::Array(crate::types::ArrayElem::Text) } else { TypeId::Text };
                return lookup(name, self.bind(exprs[0])?, HashMap::new(), ty);
            }
            ("pg_type_is_visible", 1, false) => {
                let map = crate::types::BUILTIN.iter().map(|&id| (i64::from(SqlType::new(id).pg_oid()), Value::Bool(true))).collect();
                return lookup("pg_type_is_visible", self.bind(exprs[0])?, map, TypeId::Bool);
            }
            ("pg_get_indexdef", 3, false) => {
                // (index, column, pretty): column 0 is the whole definition, column k the k-th
                // key column's name (quoted as needed).
                let col = coerce(self.bind(exprs[1])?, Some(t(TypeId::Int4)))?;
                let pretty = coerce(self.bind(exprs[2])?, Some(t(TypeId::Bool)))?;
                if !type_of(&col).is_some_and(|c| is_int(c.id)) || type_of(&pretty).is_some_and(|p| p.id != TypeId::Bool) {
                    return Err(no_function("pg_get_indexdef", &[self.bind(exprs[0])?, col, pretty]));
                }
                if let Some(u) = self.now_used {
                    u.set(true);
                }
                // Looked up by (oid * 2 + pretty) * 65536 + column: `pretty` leaves out the
                // parentheses around a partial index's predicate.
                let mut map = HashMap::new();
                for tb in s.visible_tables() {
                    for ix in &tb.indexes {
                        for pretty in [false, true] {
                            let key = ((i64::from(ix.oid) << 1) + i64::from(pretty)) << 16;
                            if let Some(d) = pc::index_def_pretty(s, ix.oid, pretty) {
                                map.insert(key, Value::Text(d));
                            }
                            let mut exprs = ix.exprs.iter();
                            for (k, &c) in ix.columns.iter().enumerate() {
                                let col = if c == crate::catalog::EXPR_KEY {
                                    super::index::expr_display(exprs.next().expect("one expression for each expression key"))
                                } else {
                                    quote_ident(&tb.columns[c].name)
                                };
                                map.insert(key + k as i64 + 1, Value::Text(col));
                            }
                            for (k, &c) in ix.include.iter().enumerate() {
                                map.insert(key + (ix.columns.len() + k) as i64 + 1, Value::Text(quote_ident(&tb.columns[c].name)));
                            }
                        }
                    }
                }
                let oid = Scalar::Cast(
                    Box::new(Scalar::Cast(Box::new(coerce(self.bind(exprs[0])?, Some(t(TypeId::Oid)))?), t(TypeId::Oid))),
                    t(TypeId::Int8),
                );
                let doubled = Scalar::Arith(expr::ArithOp::Mul, Box::new(oid), Box::new(Scalar::Const(Value::Int8(2))));
                // A NULL `pretty` gives NULL, as the strict function.
                let flag = Scalar::Case(
                    vec![(pretty.clone(), Scalar::Const(Value::Int8(1))), (Scalar::Not(Box::new(pretty)), Scalar::Const(Value::Int8(0)))],
                    None,
                    Some(t(TypeId::Int8)),
                );
                let with_flag = Scalar::Arith(expr::ArithOp::Add, Box::new(doubled), Box::new(flag));
                let shifted = Scalar::Arith(expr::ArithOp::Mul, Box::new(with_flag), Box::new(Scalar::Const(Value::Int8(65536))));
                let key = Scalar::Arith(expr::ArithOp::Add, Box::new(shifted), Box::new(Scalar::Cast(Box::new(col), t(TypeId::Int8))));
                let table = expr::LookupTable { name: "pg_get_indexdef".to_string(), map, missing: None, ..Default::default() };
                return Ok(Some(Scalar::Lookup(Box::new(key), std::sync::Arc::new(table), t(TypeId::Text))));
            }
            ("pg_get_indexdef", 1, false) => {
                let map =
                    relations().into_iter().filter_map(|(o, _)| pc::index_def(s, o).map(|d| (i64::from(o), Value::Text(d)))).collect();
                return lookup("pg_get_indexdef", self.bind(exprs[0])?, map, TypeId::Text);
            }
            ("pg_get_viewdef", 1 | 2, false) => {
                if let Some(e) = exprs.get(1) {
                    self.bind(e)?;
                }
                let map = pc::view_defs(s).into_iter().map(|(o, d)| (i64::from(o), Value::Text(d))).collect();
                return lookup("pg_get_viewdef", self.bind(exprs[0])?, map, TypeId::Text);
            }
            ("pg_get_constraintdef", 1 | 2, false) => {
                // Keyed by oid * 2 + pretty: a CHECK prints `CHECK ((expr))`, or with pretty
                // true `CHECK (expr)` (the expression as written).
                let mut map: HashMap<i64, Value> = HashMap::new();
                for (o, _) in relations() {
                    if let Some(d) = pc::constraint_def(s, o) {
                        map.insert(i64::from(o) * 2, Value::Text(d.clone()));
                        map.insert(i64::from(o) * 2 + 1, Value::Text(d));
                    }
                }
                for (o, d) in pc::fk_defs(s) {
                    map.insert(i64::from(o) * 2, Value::Text(d.clone()));
                    map.insert(i64::from(o) * 2 + 1, Value::Text(d));
                }
                for (o, plain, pretty) in pc::check_defs(s) {
                    map.insert(i64::from(o) * 2, Value::Text(plain));
                    map.insert(i64::from(o) * 2 + 1, Value::Text(pretty));
                }
                if let Some(u) = self.now_used {
                    u.set(true);
                }
                let pretty = match exprs.get(1) {
                    Some(e) => {
                        let p = coerce(self.bind(e)?, Some(t(TypeId::Bool)))?;
                        if type_of(&p).is_some_and(|x| x.id != TypeId::Bool) {
                            return Err(no_function("pg_get_constraintdef", &[self.bind(exprs[0])?, p]));
                        }
                        Scalar::Case(
                            vec![(Scalar::IsBool(Box::new(p), Some(true), false), Scalar::Const(Value::Int8(1)))],
                            Some(Box::new(Scalar::Const(Value::Int8(0)))),
                            Some(t(TypeId::Int8)),
                        )
                    }
                    None => Scalar::Const(Value::Int8(0)),
                };
                let oid = Scalar::Cast(Box::new(coerce(self.bind(exprs[0])?, Some(t(TypeId::Oid)))?), t(TypeId::Int8));
                let doubled = Scalar::Arith(expr::ArithOp::Mul, Box::new(oid), Box::new(Scalar::Const(Value::Int8(2))));
                let key = Scalar::Arith(expr::ArithOp::Add, Box::new(doubled), Box::new(pretty));
                let table = expr::LookupTable { name: "pg_get_constraintdef".to_string(), map, missing: None, ..Default::default() };
                return Ok(Some(Scalar::Lookup(Box::new(key), std::sync::Arc::new(table), t(TypeId::Text))));
            }
            // Sizes of the relation files as they are now (PostgreSQL's pg_relation_size family).
            ("pg_relation_size" | "pg_table_size" | "pg_total_relation_size" | "pg_indexes_size", 1, false) => {
                let sh = s.shared();
                let bs = sh.pool.block_size() as i64;
                let size = |rel: crate::storage::RelFileNumber, forks: &[crate::storage::ForkNumber]| -> i64 {
                    forks.iter().map(|&f| i64::from(sh.smgr.nblocks(rel, f).unwrap_or(0)) * bs).sum()
                };
                use crate::storage::ForkNumber::{Fsm, Main, Vm};
                let mut map: HashMap<i64, Value> = HashMap::new();
                for tb in s.visible_tables() {
                    let main = size(tb.relfile, &[Main]);
                    let table = size(tb.relfile, &[Main, Fsm, Vm]) + tb.toast_relfile.map_or(0, |r| size(r, &[Main, Fsm, Vm]));
                    let indexes: i64 = tb.indexes.iter().map(|ix| size(ix.relfile, &[Main])).sum();
                    let v = match name {
                        "pg_relation_size" => main,
                        "pg_table_size" => table,
                        "pg_total_relation_size" => table + indexes,
                        _ => indexes,
                    };
                    map.insert(i64::from(tb.oid), Value::Int8(v));
                    for ix in &tb.indexes {
                        let v = if name == "pg_indexes_size" { 0 } else { size(ix.relfile, &[Main]) };
                        map.insert(i64::from(ix.oid), Value::Int8(v));
                    }
                }
                // The catalogs are generated, not stored: no files.
                for o in pc::catalog_oids() {
                    map.insert(i64::from(o), Value::Int8(0));
                }
                let x = self.bind(exprs[0])?;
                let x = match x {
                    Scalar::Unknown(_) | Scalar::Const(Value::Text(_)) => self.regclass_cast(x)?,
                    x => x,
                };
                return lookup(name, x, map, TypeId::Int8);
            }
            ("pg_encoding_to_char", 1, false) => {
                // PostgreSQL's encoding numbers; an unknown one is ''.
                const ENCODINGS: &[&str] = &[
                    "SQL_ASCII",
                    "EUC_JP",
                    "EUC_CN",
                    "EUC_KR",
                    "EUC_TW",
                    "EUC_JIS_2004",
                    "UTF8",
                    "MULE_INTERNAL",
                    "LATIN1",
                    "LATIN2",
                    "LATIN3",
                    "LATIN4",
                    "LATIN5",
                    "LATIN6",
                    "LATIN7",
                    "LATIN8",
                    "LATIN9",
                    "LATIN10",
                    "WIN1256",
                    "WIN1258",
                    "WIN866",
                    "WIN874",
                    "KOI8R",
                    "WIN1251",
                    "WIN1252",
                    "ISO_8859_5",
                    "ISO_8859_6",
                    "ISO_8859_7",
                    "ISO_8859_8",
                    "WIN1250",
                    "WIN1253",
                    "WIN1254",
                    "WIN1255",
                    "WIN1257",
                    "KOI8U",
                    "SJIS",
                    "BIG5",
                    "GBK",
                    "UHC",
                    "GB18030",
                    "JOHAB",
                    "SHIFT_JIS_2004",
                ];
                let map = ENCODINGS.iter().enumerate().map(|(k, v)| (k as i64, Value::Text(v.to_string()))).collect();
                let arg = coerce(self.bind(exprs[0])?, Some(t(TypeId::Int4)))?;
                let table = expr::LookupTable { name: "pg_encoding_to_char".into(), map, missing: Some(""), ..Default::default() };
                Scalar::Lookup(Box::new(arg), std::sync::Arc::new(table), t(TypeId::Name))
            }
            ("format_type", 2, false) => {
                let (a, b) = (self.bind(exprs[0])?, self.bind(exprs[1])?);
                Scalar::Func(Func::FormatType, vec![coerce(a, Some(t(TypeId::Oid)))?, coerce(b, Some(t(TypeId::Int4)))?], text())
            }
            // Comments on relations and indexes (`sql::comment`): the one-argument form reads
            // any object's, the two-argument form only the catalog named (pg_class's: heapstore
            // keeps comments on nothing else).
            ("obj_description", 1 | 2, false) => {
                let oid = self.bind(exprs[0])?;
                // The catalog's name: a constant decides now; any other expression (a cast to
                // name, a parameter) per row.
                let mut catalog = None;
                if let Some(e) = exprs.get(1) {
                    match self.bind(e)? {
                        Scalar::Unknown(c) | Scalar::Const(Value::Text(c)) if c != "pg_class" => {
                            return Ok(Some(typed_null(TypeId::Text)));
                        }
                        Scalar::Unknown(_) | Scalar::Const(Value::Text(_)) => {}
                        Scalar::Const(Value::Null) => return Ok(Some(typed_null(TypeId::Text))),
                        other => catalog = Some(coerce(other, Some(text()))?),
                    }
                }
                let map = super::comment::descriptions(s)
                    .into_iter()
                    .filter(|(_, sub, _)| *sub == 0)
                    .map(|(o, _, c)| (i64::from(o), Value::Text(c)))
                    .collect();
                let oid =
                    Scalar::Cast(Box::new(Scalar::Cast(Box::new(coerce(oid, Some(t(TypeId::Oid)))?), t(TypeId::Oid))), t(TypeId::Int8));
                let found = lookup("obj_description", oid, map, TypeId::Text)?.expect("a lookup");
                return Ok(Some(match catalog {
                    None => found,
                    Some(c) => {
                        let is_pg_class = Scalar::Cmp(CmpOp::Eq, Box::new(c), Box::new(txt("pg_class")));
                        Scalar::Case(vec![(is_pg_class, found)], None, Some(text()))
                    }
                }));
            }
            // Column comments: looked up by table oid * 65536 + attribute number.
            ("col_description", 2, false) => {
                let oid = Scalar::Cast(
                    Box::new(Scalar::Cast(Box::new(coerce(self.bind(exprs[0])?, Some(t(TypeId::Oid)))?), t(TypeId::Oid))),
                    t(TypeId::Int8),
                );
                let att = Scalar::Cast(Box::new(coerce(self.bind(exprs[1])?, Some(t(TypeId::Int4)))?), t(TypeId::Int8));
                let map = super::comment::descriptions(s)
                    .into_iter()
                    .filter(|(_, sub, _)| *sub > 0)
                    .map(|(o, sub, c)| ((i64::from(o) << 16) + i64::from(sub), Value::Text(c)))
                    .collect();
                let shifted = Scalar::Arith(expr::ArithOp::Mul, Box::new(oid), Box::new(Scalar::Const(Value::Int8(65536))));
                let key = Scalar::Arith(expr::ArithOp::Add, Box::new(shifted), Box::new(att));
                return lookup("col_description", key, map, TypeId::Text);
            }
            // heapstore keeps no comments on databases and roles: NULL is the true answer.
            ("shobj_description", 2, false) => {
                for e in exprs {
                    self.bind(e)?;
                }
                typed_null(TypeId::Text)
            }
            // heapstore's `adbin` / `conbin` hold the expression's SQL text already.
            ("pg_get_expr", 2 | 3, false) => {
                let a = self.bind(exprs[0])?;
                self.bind(exprs[1])?;
                match type_of(&a) {
                    Some(ty) if ty.id == TypeId::PgNodeTree => Scalar::Cast(Box::new(a), text()),
                    _ => coerce(a, Some(text()))?,
                }
            }
            // heapstore has no privileges: every role may do everything.
            ("has_table_privilege" | "has_schema_privilege" | "has_database_privilege" | "has_column_privilege", 2..=4, false) => {
                // heapstore has no privileges: every role may do everything to every object
                // that exists. The object must exist (an error for a missing name, NULL for an
                // OID that names nothing, as in PostgreSQL) and the privilege must be one the
                // object has.
                let column = name == "has_column_privilege";
                let (user, rest) = match (exprs.len(), column) {
                    (2, false) | (3, true) => (None, exprs),
                    (3, false) | (4, true) => (Some(exprs[0]), &exprs[1..]),
                    _ => return Err(no_function(name, &[])),
                };
                if let Some(u) = user {
                    if let Scalar::Unknown(r) | Scalar::Const(Value::Text(r)) = self.bind(u)? {
                        if pc::role_oid(s, &r).is_none() {
                            return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("role \"{r}\" does not exist")));
                        }
                    }
                }
                let privs: &[&str] = match name {
                    "has_table_privilege" => &["select", "insert", "update", "delete", "truncate", "references", "trigger"],
                    "has_column_privilege" => &["select", "insert", "update", "references"],
                    "has_schema_privilege" => &["create", "usage"],
                    _ => &["create", "connect", "temporary", "temp"],
                };
                if let Scalar::Unknown(p) | Scalar::Const(Value::Text(p)) = self.bind(rest[rest.len() - 1])? {
                    for one in p.split(',') {
                        let one = one.trim().to_ascii_lowercase();
                        let one = one.strip_suffix(" with grant option").unwrap_or(&one).trim();
                        if !privs.contains(&one) {
                            return Err(PgError::new(
                                sqlstate::INVALID_PARAMETER_VALUE,
                                format!("unrecognized privilege type: \"{}\"", p.trim()),
                            ));
                        }
                    }
                }
                let object = self.bind(rest[0])?;
                let exists = match name {
                    "has_table_privilege" | "has_column_privilege" => match type_of(&object) {
                        // A name: regclass's reading of it (a missing relation is an error).
                        None | Some(SqlType { id: TypeId::Text | TypeId::Varchar | TypeId::Name, .. }) => {
                            let rel = self.regclass_cast(object)?;
                            if column {
                                if let (Scalar::Const(Value::Regclass(oid, rname)), Scalar::Unknown(c) | Scalar::Const(Value::Text(c))) =
                                    (&rel, self.bind(rest[1])?)
                                {
                                    let tb = s.visible_tables().into_iter().find(|t| t.oid == *oid);
                                    if tb.is_some_and(|t| t.column_index(&c).is_none()) {
                                        return Err(PgError::new(
                                            sqlstate::UNDEFINED_COLUMN,
                                            format!("column \"{c}\" of relation \"{rname}\" does not exist"),
                                        ));
                                    }
                                }
                            }
                            rel
                        }
                        _ => {
                            let map = relations()
                                .into_iter()
                                .chain(pc::catalog_relations())
                                .map(|(o, _)| (i64::from(o), Value::Bool(true)))
                                .collect();
                            return lookup(name, object, map, TypeId::Bool);
                        }
                    },
                    "has_schema_privilege" => {
                        if let Scalar::Unknown(n) | Scalar::Const(Value::Text(n)) = &object {
                            crate::types::regnamespace_in(n)
                                .map_err(|_| PgError::new("3F000", format!("schema \"{n}\" does not exist")))?;
                        }
                        object
                    }
                    // pg_database's one row: the database the session connected to.
                    _ => match &object {
                        Scalar::Unknown(n) | Scalar::Const(Value::Text(n)) => {
                            if *n != s.identity().database {
                                return Err(PgError::new("3D000", format!("database \"{n}\" does not exist")));
                            }
                            object
                        }
                        _ => {
                            let map = [(i64::from(pc::DATABASE_OID), Value::Bool(true))].into_iter().collect();
                            return lookup(name, object, map, TypeId::Bool);
                        }
                    },
                };
                Scalar::Case(vec![(Scalar::IsNull(Box::new(exists), true), Scalar::Const(Value::Bool(true)))], None, Some(t(TypeId::Bool)))
            }
            // The argument's type (not evaluated: a NULL has a type too); an untyped literal
            // is `unknown`, as in PostgreSQL.
            ("pg_typeof", 1, false) => {
                let a = self.bind(exprs[0])?;
                if let Some(TypeId::Record(k)) = type_of(&a).map(|t| t.id) {
                    if let Some(rel) = k.table() {
                        // PostgreSQL names a table's row type; heapstore has no row types.
                        return Err(PgError::feature(format!(
                            "pg_typeof() of the whole row of \"{rel}\" is not supported by heapstore (it has no row types)"
                        )));
                    }
                }
                Scalar::Const(Value::Regtype(type_of(&a).map_or(705, |ty| ty.pg_oid())))
            }
            ("to_regtype", 1, false) => {
                let a = coerce(self.bind(exprs[0])?, Some(text()))?;
                Scalar::Func(Func::ToRegtype, vec![a], t(TypeId::Regtype))
            }
            ("to_regclass", 1, false) => {
                if let Some(u) = self.now_used {
                    u.set(true);
                }
                let a = coerce(self.bind(exprs[0])?, Some(text()))?;
                let mut by_text = HashMap::new();
                // A session's temporary relation comes first in `visible_tables` and wins a
                // bare name.
                for tb in s.visible_tables() {
                    let schema = if tb.is_temp() { "pg_temp" } else { "public" };
                    for (o, nm) in std::iter::once((tb.oid, &tb.name)).chain(tb.indexes.iter().map(|i| (i.oid, &i.name))) {
                        by_text.entry(nm.clone()).or_insert(Value::Regclass(o, nm.clone()));
                        by_text.insert(format!("{schema}.{nm}"), Value::Regclass(o, nm.clone()));
                    }
                }
                for (o, nm) in pc::catalog_relations() {
                    by_text.entry(nm.clone()).or_insert(Value::Regclass(o, nm));
                }
                for (o, nm) in pc::catalog_relations() {
                    by_text.insert(format!("pg_catalog.{nm}"), Value::Regclass(o, nm));
                }
                let table = expr::LookupTable { name: "to_regclass".into(), by_text, fold_names: true, ..Default::default() };
                Scalar::Lookup(Box::new(a), std::sync::Arc::new(table), t(TypeId::Regclass))
            }
            _ => return Ok(None),
        }))
    }

    /// A cast to regclass: a constant name is looked up now (42P01 if no relation has it); an
    /// OID becomes the relation it names (its number if none, as PostgreSQL prints it).
    /// A sequence function: its relation argument is kept as a name (`'s'`, `'s'::regclass`)
    /// or an OID and resolved when the call runs, as the session then sees the catalog.
    fn sequence_call(&self, f: super::sequence::SeqFunc, exprs: &[&Expr]) -> Result<Scalar> {
        use super::sequence::SeqFunc;
        let n = exprs.len();
        let ok = match f {
            SeqFunc::Lastval => n == 0,
            SeqFunc::Nextval | SeqFunc::Currval => n == 1,
            SeqFunc::Setval => n == 2 || n == 3,
        };
        let mut args = Vec::with_capacity(n);
        for (k, e) in exprs.iter().enumerate() {
            let a = if k == 0 {
                let lit = match e {
                    Expr::Cast { expr, data_type, .. } if data_type.to_string().eq_ignore_ascii_case("regclass") => &**expr,
                    other => *other,
                };
                match lit {
                    Expr::Value(v) => match &v.value {
                        sqlparser::ast::Value::SingleQuotedString(t) => Scalar::Const(Value::Text(t.clone())),
                        _ => coerce(self.bind(lit)?, Some(t(TypeId::Oid)))?,
                    },
                    _ => {
                        let b = self.bind(lit)?;
                        match type_of(&b) {
                            Some(ty) if is_text(ty.id) => b,
                            None => coerce(b, Some(text()))?,
                            Some(_) => coerce(b, Some(t(TypeId::Oid)))?,
                        }
                    }
                }
            } else if k == 1 {
                arg_as(f.name(), &[], self.bind(e)?, t(TypeId::Int8))?
            } else {
                arg_as(f.name(), &[], self.bind(e)?, t(TypeId::Bool))?
            };
            args.push(a);
        }
        if !ok {
            return Err(no_function(f.name(), &args));
        }
        Ok(Scalar::Func(Func::Seq(f), args, t(TypeId::Int8)))
    }

    /// Binds an argument whose C-like COLLATE is written directly on it, without marking the
    /// statement as having a collation its columns could carry
    /// (`SubqueryBinder::c_collation_seen`).
    fn bind_direct_collate(&self, e: &Expr) -> Result<Scalar> {
        let seen = self.queries.and_then(|q| q.c_collation_seen());
        let before = seen.map(|s| s.get());
        let r = self.bind(e);
        if let (Some(s), Some(b)) = (seen, before) {
            s.set(b);
        }
        r
    }

    /// A case mapping (or ILIKE) whose arguments carry no explicit collation, checked after
    /// they are bound: refused (0A000) when the statement has bound a C-like COLLATE (in an
    /// earlier clause, a view, a subquery of the argument) and an argument reads a column,
    /// which may come from a subquery, WITH query or view whose output has that collation
    /// (heapstore does not derive collations through queries).
    pub(super) fn collation_unknown(&self, what: &str, args: &[&Expr]) -> Result<()> {
        if !self.queries.and_then(|q| q.c_collation_seen()).is_some_and(|s| s.get()) {
            return Ok(());
        }
        let mut reads = false;
        for a in args {
            let _ = sqlparser::ast::visit_expressions(*a, |x| {
                reads |= matches!(x, Expr::Identifier(_) | Expr::CompoundIdentifier(_));
                std::ops::ControlFlow::<()>::Continue(())
            });
        }
        if reads {
            return Err(PgError::feature(format!(
                "{what} of a column in a statement that also uses COLLATE \"C\" elsewhere is not supported by heapstore"
            ))
            .with_detail("The column may carry the C collation from a subquery, and heapstore does not derive collations through queries.")
            .with_hint("Write COLLATE directly on the argument."));
        }
        Ok(())
    }

    pub(super) fn regclass_cast(&self, x: Scalar) -> Result<Scalar> {
        use crate::sql::pg_catalog as pc;
        let Some(s) = self.queries.and_then(|q| q.session()) else {
            return Err(PgError::feature("regclass is not supported here"));
        };
        if let Some(u) = self.now_used {
            u.set(true);
        }
        let ty = t(TypeId::Regclass);
        if let Scalar::Unknown(name) | Scalar::Const(Value::Text(name)) = &x {
            // A number is an OID, taken as it is (regclassin does not look it up).
            if let Ok(o) = name.trim().parse::<u32>() {
                let nm = pc::relation_name_of_oid(s, o).unwrap_or_else(|| o.to_string());
                return Ok(Scalar::Const(Value::Regclass(o, nm)));
            }
            let o = pc::relation_oid_of_name(s, name)
                .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))?;
            let nm = pc::relation_name_of_oid(s, o).unwrap_or_else(|| o.to_string());
            return Ok(Scalar::Const(Value::Regclass(o, nm)));
        }
        let mut map = std::collections::HashMap::new();
        let mut by_text = std::collections::HashMap::new();
        // A session's temporary relation comes first in `visible_tables` and wins a bare name.
        for tb in s.visible_tables() {
            let schema = if tb.is_temp() { "pg_temp" } else { "public" };
            map.insert(i64::from(tb.oid), Value::Regclass(tb.oid, tb.name.clone()));
            by_text.entry(tb.name.clone()).or_insert(Value::Regclass(tb.oid, tb.name.clone()));
            by_text.insert(format!("{schema}.{}", tb.name), Value::Regclass(tb.oid, tb.name.clone()));
            for ix in &tb.indexes {
                map.insert(i64::from(ix.oid), Value::Regclass(ix.oid, ix.name.clone()));
                by_text.entry(ix.name.clone()).or_insert(Value::Regclass(ix.oid, ix.name.clone()));
                by_text.insert(format!("{schema}.{}", ix.name), Value::Regclass(ix.oid, ix.name.clone()));
            }
        }
        for (o, nm) in pc::catalog_relations() {
            map.insert(i64::from(o), Value::Regclass(o, nm.clone()));
            by_text.insert(format!("pg_catalog.{nm}"), Value::Regclass(o, nm.clone()));
            by_text.entry(nm.clone()).or_insert(Value::Regclass(o, nm));
        }
        if matches!(x, Scalar::Param(_, None)) || type_of(&x).is_some_and(|f| is_text(f.id)) {
            // A name computed at run time (a parameter, a text column): read as regclassin
            // does, a missing relation an error (a number is an OID).
            let x = coerce(x, Some(text()))?;
            let table =
                expr::LookupTable { name: "regclass".into(), map, by_text, fold_names: true, text_is_regclass: true, ..Default::default() };
            return Ok(Scalar::Lookup(Box::new(Scalar::Cast(Box::new(x), text())), std::sync::Arc::new(table), ty));
        }
        let from = type_of(&x);
        if !from.is_some_and(|f| expr::is_oid_like(f.id) || is_int(f.id)) {
            return Err(PgError::new("42846", format!("cannot cast type {} to regclass", from.map(|f| f.name()).unwrap_or_default())));
        }
        let table = expr::LookupTable { name: "regclass".into(), map, ..Default::default() };
        // An OID naming no relation prints as its number.
        let known = Scalar::Lookup(Box::new(x.clone()), std::sync::Arc::new(table), ty);
        Ok(Scalar::Coalesce(vec![known, Scalar::Cast(Box::new(x), ty)], Some(ty)))
    }

    /// `now()`, `CURRENT_TIMESTAMP` (timestamptz) and `LOCALTIMESTAMP` (timestamp, the
    /// session's clocks then): the transaction's start, the same value for every call in the
    /// transaction.
    fn transaction_time(&self, id: TypeId, what: &str) -> Result<Scalar> {
        let now = self.now_us.ok_or_else(|| PgError::feature(format!("{what} is not supported here")))?;
        if let Some(u) = self.now_used {
            u.set(true);
        }
        Ok(Scalar::Const(if id == TypeId::Timestamptz {
            Value::Timestamptz(now)
        } else {
            Value::Timestamp(crate::types::tz::local_of(now)?)
        }))
    }

    fn function(&self, f: &sqlparser::ast::Function) -> Result<Scalar> {
        let sqlparser::ast::Function { name: _, uses_odbc_syntax, parameters, args, filter, null_treatment, over, within_group } = f;
        let name = function_name(f);
        if name == "row" {
            let call = Expr::Function(f.clone());
            let items = expr::row_items(&call).ok_or_else(|| PgError::syntax("syntax error at or near \"ROW\""))?;
            return self.row_value(&items);
        }
        if *uses_odbc_syntax || !matches!(parameters, FunctionArguments::None) || null_treatment.is_some() {
            return Err(PgError::feature(format!("this form of {name}() is not supported by heapstore yet")));
        }
        let (list, distinct, clauses) = match args {
            FunctionArguments::None => (Vec::new(), false, Vec::new()),
            FunctionArguments::Subquery(q) if name == "array" => {
                if filter.is_some() || over.is_some() {
                    return Err(PgError::syntax("syntax error at or near \"(\""));
                }
                let l = self.sublink(q, SubKind::Array, None)?;
                if let Scalar::SubLink(link) = &l {
                    if let Some(t) = link.col_ty {
                        super::array::array_type_of(if t.is_vector() { t.array_of().and_then(|a| a.elem()).unwrap_or(t) } else { t })?;
                    }
                }
                return Ok(l);
            }
            FunctionArguments::Subquery(_) => return Err(PgError::feature("a subquery as a function argument is not supported")),
            FunctionArguments::List(l) => {
                let distinct = match l.duplicate_treatment {
                    None | Some(sqlparser::ast::DuplicateTreatment::All) => false,
                    Some(sqlparser::ast::DuplicateTreatment::Distinct) => true,
                };
                (l.args.clone(), distinct, l.clauses.clone())
            }
        };
        let mut order = Vec::new();
        for c in &clauses {
            match c {
                FunctionArgumentClause::OrderBy(o) => order = o.clone(),
                other => return Err(PgError::feature(format!("{other} in a function call is not supported"))),
            }
        }
        let star = matches!(list.as_slice(), [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)]);
        // `f(t.*)`: the whole row of FROM item t (read as `t` where no column takes that name).
        let list: Vec<FunctionArg> = list
            .into_iter()
            .map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::QualifiedWildcard(n)) if n.0.len() == 1 => {
                    let id =
                        n.0[0].as_ident().cloned().ok_or_else(|| PgError::feature(format!("function argument {n}.* is not supported")))?;
                    let name = crate::catalog::fold_ident(&id);
                    let shadowed =
                        std::iter::once(self.scope).chain(self.outer.iter().copied()).any(|s| s.cols.iter().any(|c| c.name == name));
                    if shadowed {
                        return Err(PgError::feature(format!(
                            "function argument {n}.*, where a column is also named {name}, is not supported"
                        )));
                    }
                    Ok(FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(id))))
                }
                a => Ok(a),
            })
            .collect::<Result<_>>()?;
        if name == "make_interval" && !star && !distinct && order.is_empty() && filter.is_none() && over.is_none() {
            return self.make_interval(&list).map_err(|e| at_name(e, f, &name));
        }
        let exprs: Vec<&Expr> = if star {
            Vec::new()
        } else {
            list.iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
                    other => Err(PgError::feature(format!("function argument {other} is not supported"))),
                })
                .collect::<Result<Vec<_>>>()?
        };
        let ordered_set = matches!(AggFunc::named(&name), Some(AggFunc::Ordered(_)));
        if !within_group.is_empty() || ordered_set {
            // PostgreSQL points these errors at the function's name.
            let e = |code: &'static str, m: String| {
                let err = PgError::new(code, m);
                Err(match f.name.0.first().and_then(|p| p.as_ident()) {
                    Some(id) => err.at(id.span.start),
                    None => err,
                })
            };
            // No such function: PostgreSQL looks for one taking the direct arguments and
            // then the ordered ones.
            let missing = || -> Result<Scalar> {
                let mut shown = Vec::new();
                for x in exprs.iter().copied().chain(within_group.iter().map(|o| &o.expr)) {
                    shown.push(type_of(&self.bind(x)?).map(|t| t.name()).unwrap_or_else(|| "unknown".into()));
                }
                Err(PgError::new("42883", format!("function {name}({}) does not exist", shown.join(", ")))
                    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."))
            };
            let Some(agg) = AggFunc::named(&name).filter(|_| ordered_set) else {
                return if AggFunc::named(&name).is_some() {
                    e("42809", format!("{name} is not an ordered-set aggregate, so it cannot have WITHIN GROUP"))
                } else {
                    missing().map_err(|e| at_name(e, f, &name))
                };
            };
            if within_group.is_empty() {
                return missing().map_err(|e| at_name(e, f, &name));
            }
            if over.is_some() {
                return e("0A000", format!("OVER is not supported for ordered-set aggregate {name}"));
            }
            if distinct {
                return e("42601", "cannot use DISTINCT with WITHIN GROUP".into());
            }
            if !order.is_empty() {
                return e("42601", "cannot use multiple ORDER BY clauses with WITHIN GROUP".into());
            }
            if star {
                return e("42601", format!("syntax error at or near \"*\" in {name}()"));
            }
            // The ordered argument first, then the direct ones (the fraction).
            let mut all: Vec<&Expr> = within_group.iter().map(|o| &o.expr).collect();
            all.extend(exprs.iter().copied());
            return self.aggregate(agg, &name, &all, false, false, filter.as_deref(), within_group).map_err(|e| at_name(e, f, &name));
        }
        if let Some(agg) = AggFunc::named(&name) {
            if over.is_some() && agg == AggFunc::Grouping {
                return Err(PgError::new("42809", "OVER specified, but grouping is not a window function nor an aggregate function"));
            }
            if over.is_some() {
                if distinct || !order.is_empty() {
                    return Err(PgError::feature(format!(
                        "DISTINCT or ORDER BY inside {name}() OVER (...) is not supported by heapstore yet"
                    )));
                }
                return self.window_call(&name, &exprs, star, over.as_ref().expect("checked"), filter.as_deref());
            }
            return self.aggregate(agg, &name, &exprs, star, distinct, filter.as_deref(), &order).map_err(|e| at_name(e, f, &name));
        }
        if let Some(w) = WinFunc::named(&name) {
            let Some(over) = over else {
                return Err(PgError::new("42809", format!("window function {name} requires an OVER clause")));
            };
            let _ = w;
            return self.window_call(&name, &exprs, star, over, filter.as_deref());
        }
        if over.is_some() {
            return Err(PgError::new("42809", format!("OVER specified, but {name} is not a window function nor an aggregate function")));
        }
        if filter.is_some() {
            return Err(PgError::new("42809", format!("FILTER specified, but {name} is not an aggregate function")));
        }
        if distinct || !order.is_empty() {
            return Err(PgError::new("42809", format!("DISTINCT or ORDER BY specified, but {name} is not an aggregate function")));
        }
        if star {
            return Err(no_function(&name, &[]));
        }
        // The set-returning functions (`_pg_expandarray` lives in information_schema only).
        let srf = match name.strip_prefix("information_schema.") {
            Some("_pg_expandarray") => Some("_pg_expandarray"),
            None if name != "_pg_expandarray" && super::srf::is_srf(&name) => Some(name.as_str()),
            _ => None,
        };
        if let Some(n) = srf {
            return self.srf_call(n, &exprs);
        }
        if let Some(f) = super::sequence::SeqFunc::named(&name) {
            return self.sequence_call(f, &exprs);
        }
        if let Some(r) = self.session_function(&name, &exprs, matches!(args, FunctionArguments::None))? {
            return Ok(r);
        }
        // Case mapping under the C collation: ASCII letters only.
        if matches!(name.as_str(), "lower" | "upper" | "initcap") && exprs.len() == 1 {
            let c = c_like(explicit_collation(exprs[0])?.as_deref());
            // The argument is bound first: a view or subquery it reads is bound with it, and
            // may bring a C collation (`collation_unknown`). The result keeps the collation
            // of the argument, so a C one stays noted for later case mappings.
            let arg = self.bind(exprs[0])?;
            if !c {
                self.collation_unknown(&name, &exprs)?;
            }
            let r = bind_call(&name, vec![arg]).map_err(|e| at_name(e, f, &name))?;
            return Ok(match r {
                Scalar::Func(Func::Lower, a, ty) if c => Scalar::Func(Func::LowerC, a, ty),
                Scalar::Func(Func::Upper, a, ty) if c => Scalar::Func(Func::UpperC, a, ty),
                Scalar::Func(Func::Initcap, a, ty) if c => Scalar::Func(Func::InitcapC, a, ty),
                other => other,
            });
        }
        // Functions of the transaction and session, evaluated when bound.
        match (name.as_str(), exprs.len()) {
            ("current_date", 0) if matches!(args, FunctionArguments::None) => {
                let now = self.now_us.ok_or_else(|| PgError::feature("current_date is not supported here"))?;
                if let Some(u) = self.now_used {
                    u.set(true);
                }
                // The date on the session's clocks.
                let now = crate::types::tz::local_of(now)?;
                return Ok(Scalar::Const(Value::Date(now.div_euclid(USECS_PER_DAY) as i32)));
            }
            // age(x): from midnight of the transaction's date (PostgreSQL's
            // `age(current_date, x)`).
            ("age", 1) => {
                let now = self.now_us.ok_or_else(|| PgError::feature("age(x) is not supported here"))?;
                if let Some(u) = self.now_used {
                    u.set(true);
                }
                let midnight = crate::types::tz::local_of(now)?.div_euclid(USECS_PER_DAY) * USECS_PER_DAY;
                let x = self.bind(exprs[0])?;
                return bind_call("age", vec![Scalar::Const(Value::Timestamp(midnight)), x]);
            }
            ("now" | "transaction_timestamp", 0) if matches!(args, FunctionArguments::List(_)) => {
                return self.transaction_time(TypeId::Timestamptz, name.as_str());
            }
            ("statement_timestamp", 0) if matches!(args, FunctionArguments::List(_)) => {
                let at = self.stmt_us.ok_or_else(|| PgError::feature("statement_timestamp() is not supported here"))?;
                // A plan that read it is not cached, as one that read now().
                if let Some(u) = self.now_used {
                    u.set(true);
                }
                return Ok(Scalar::Const(Value::Timestamptz(at)));
            }
            ("current_timestamp", 0) if matches!(args, FunctionArguments::None) => {
                return self.transaction_time(TypeId::Timestamptz, "CURRENT_TIMESTAMP");
            }
            ("localtimestamp", 0) if matches!(args, FunctionArguments::None) => {
                return self.transaction_time(TypeId::Timestamp, "LOCALTIMESTAMP");
            }
            // CURRENT_TIME and LOCALTIME [ (p) ]: the transaction's start on the session's
            // clocks (with the zone's offset then, for CURRENT_TIME), rounded to p digits.
            ("current_time" | "localtime", n @ (0 | 1))
                if matches!((n, args), (0, FunctionArguments::None) | (1, FunctionArguments::List(_))) =>
            {
                let precision = match exprs.first() {
                    None => None,
                    Some(e) => match self.bind(e)? {
                        Scalar::Const(Value::Int4(p)) if p >= 0 => Some(p.min(6)),
                        _ => return Err(PgError::syntax(format!("syntax error at or near \"{}\"", e))),
                    },
                };
                let what = if name == "current_time" { "CURRENT_TIME" } else { "LOCALTIME" };
                let now = self.now_us.ok_or_else(|| PgError::feature(format!("{what} is not supported here")))?;
                if let Some(u) = self.now_used {
                    u.set(true);
                }
                let Some(t) = crate::types::time::timetz_of_instant(now)? else {
                    return Err(PgError::internal("the transaction's start is not a finite time"));
                };
                let time = crate::types::time::adjust_time(t.time, precision.unwrap_or(-1));
                let typmod = precision.unwrap_or(-1);
                return Ok(Scalar::Cast(
                    Box::new(Scalar::Const(if name == "current_time" {
                        Value::TimeTz(crate::types::TimeTz { time, zone: t.zone })
                    } else {
                        Value::Time(time)
                    })),
                    SqlType::with_typmod(if name == "current_time" { TypeId::TimeTz } else { TypeId::Time }, typmod),
                ));
            }
            ("current_timestamp" | "localtimestamp", 1) => {
                return Err(PgError::feature(format!("{} with a precision is not supported by heapstore yet", name.to_uppercase())));
            }
            ("coalesce", _) => {
                if exprs.is_empty() {
                    return Err(PgError::syntax("syntax error at or near \")\""));
                }
                let items = exprs.iter().map(|e| self.bind(e)).collect::<Result<Vec<_>>>()?;
                if items.iter().any(has_srf) {
                    return Err(PgError::feature("set-returning functions are not allowed in COALESCE"));
                }
                let ty = common_type(&items.iter().map(type_of).collect::<Vec<_>>(), "COALESCE")?.or(Some(text()));
                let items = items.into_iter().map(|i| to_type(i, ty)).collect::<Result<Vec<_>>>()?;
                return Ok(Scalar::Coalesce(items, ty));
            }
            ("greatest" | "least", n) if n > 0 => {
                let items = exprs.iter().map(|e| self.bind(e)).collect::<Result<Vec<_>>>()?;
                let what = if name == "greatest" { "GREATEST" } else { "LEAST" };
                let ty = common_type(&items.iter().map(type_of).collect::<Vec<_>>(), what)?.or(Some(text()));
                let items = items.into_iter().map(|i| to_type(i, ty)).collect::<Result<Vec<_>>>()?;
                return Ok(Scalar::MinMax(name == "greatest", items, ty));
            }
            ("nullif", 2) => {
                let (a, b) = bind_pair(self.bind(exprs[0])?, self.bind(exprs[1])?)?;
                expr::check_comparable(&a, &b, "=")?;
                let a = if type_of(&a).is_none() { coerce(a, Some(text()))? } else { a };
                // PostgreSQL returns the first argument of the `=` it resolves, promoted to
                // that operator's input type: an integer or numeric beside a float becomes
                // double precision, an integer beside numeric numeric, char(n) beside text
                // text (without its padding), varchar beside char(n) character. char(n)
                // beside char(n) compares without padding (the evaluation's rule).
                let (ta, tb) = (type_of(&a).map(|t| t.id), type_of(&b).map(|t| t.id));
                let float = |x: Option<TypeId>| matches!(x, Some(TypeId::Float4 | TypeId::Float8));
                let int = |x: Option<TypeId>| x.is_some_and(is_int);
                let cast = |x: Scalar, id: TypeId| Scalar::Cast(Box::new(x), t(id));
                let (a, b) = match (ta, tb) {
                    (x, y) if (int(x) || x == Some(TypeId::Numeric)) && float(y) => (cast(a, TypeId::Float8), b),
                    (x, Some(TypeId::Numeric)) if int(x) => (cast(a, TypeId::Numeric), b),
                    (Some(TypeId::Bpchar), Some(TypeId::Text)) => (expr::unpad(a), b),
                    (Some(TypeId::Text), Some(TypeId::Bpchar)) => (a, expr::unpad(b)),
                    (Some(TypeId::Varchar), Some(TypeId::Bpchar)) => (cast(a, TypeId::Bpchar), b),
                    // No varchar = varchar: texteq, whose left input is text.
                    (Some(TypeId::Varchar), _) => (cast(a, TypeId::Text), b),
                    _ => (a, b),
                };
                return Ok(Scalar::NullIf(Box::new(a), Box::new(b)));
            }
            _ => {}
        }
        let args = exprs.iter().map(|e| self.bind(e)).collect::<Result<Vec<_>>>()?;
        // `function f(...) does not exist` points at the function's name, as in PostgreSQL.
        bind_call(&name, args).map_err(|e| at_name(e, f, &name))
    }

    #[allow(clippy::too_many_arguments)]
    fn aggregate(
        &self,
        agg: AggFunc,
        name: &str,
        exprs: &[&Expr],
        star: bool,
        distinct: bool,
        filter: Option<&Expr>,
        order: &[sqlparser::ast::OrderByExpr],
    ) -> Result<Scalar> {
        let Some(collect) = self.collect else {
            return Err(PgError::new("42803", "aggregate functions are not allowed here"));
        };
        if self.in_agg {
            return Err(PgError::new("42803", "aggregate function calls cannot be nested"));
        }
        let inner = Binder {
            scope: self.scope,
            outer: self.outer,
            queries: self.queries,
            collect: self.collect,
            in_agg: true,
            now_us: self.now_us,
            now_used: self.now_used,
            stmt_us: self.stmt_us,
        };
        let args = exprs.iter().map(|e| inner.bind(e)).collect::<Result<Vec<_>>>()?;
        // An aggregate whose arguments read only an enclosing query's columns belongs to that
        // query in PostgreSQL; heapstore does not move it there.
        let (mut local, mut outer_ref) = (false, false);
        for a in &args {
            a.visit(&mut |x| match x {
                Scalar::Col(..) => local = true,
                Scalar::Outer(..) => outer_ref = true,
                _ => {}
            });
        }
        if outer_ref && !local {
            return Err(PgError::feature(format!("{name}() over an outer query's columns is not supported by heapstore yet")));
        }
        let filter = filter.map(|f| inner.boolean(f, "FILTER")).transpose()?;
        let mut keys = Vec::new();
        for o in order {
            let e = inner.bind(&o.expr)?;
            keys.push(SortKey::new(e, &o.options));
        }
        let call = AggCall::bind(agg, name, args, star, distinct, filter, keys)?;
        let ty = call.ty;
        let mut aggs = collect.aggs.borrow_mut();
        aggs.push(call);
        Ok(Scalar::Agg(aggs.len() - 1, ty))
    }

    fn window_call(&self, name: &str, exprs: &[&Expr], star: bool, over: &WindowType, filter: Option<&Expr>) -> Result<Scalar> {
        let Some(collect) = self.collect else {
            return Err(PgError::new("42P20", "window functions are not allowed here"));
        };
        if self.in_agg {
            return Err(PgError::new("42803", "aggregate function calls cannot contain window function calls"));
        }
        let spec = match over {
            WindowType::WindowSpec(spec) => super::query::resolve_window(spec, &collect.named_windows)?,
            WindowType::NamedWindow(name) => {
                super::query::lookup_window(&crate::catalog::fold_ident(name), &collect.named_windows)?.clone()
            }
        };
        let spec = &spec;
        // Window arguments and PARTITION BY / ORDER BY may hold aggregates (of the grouped
        // query) but not other window calls.
        let inner = Binder {
            scope: self.scope,
            outer: self.outer,
            queries: self.queries,
            collect: self.collect,
            in_agg: false,
            now_us: self.now_us,
            now_used: self.now_used,
            stmt_us: self.stmt_us,
        };
        let args = exprs.iter().map(|e| inner.bind(e)).collect::<Result<Vec<_>>>()?;
        let filter = match filter {
            Some(_) if crate::exec::WinFunc::named(name).is_some() => {
                return Err(PgError::feature("FILTER is not implemented for non-aggregate window functions"));
            }
            Some(f) => Some(inner.boolean(f, "FILTER")?),
            None => None,
        };
        let partition = spec.partition_by.iter().map(|e| inner.bind(e)).collect::<Result<Vec<_>>>()?;
        for p in &partition {
            super::query::need_operator(type_of(p), false)?;
        }
        let mut order = Vec::new();
        for o in &spec.order_by {
            let k = inner.bind(&o.expr)?;
            super::query::need_operator(type_of(&k), true)?;
            order.push(SortKey::new(k, &o.options));
        }
        let frame = match &spec.window_frame {
            None => None,
            Some(f) => {
                if f.units == WindowFrameUnits::Groups && order.is_empty() {
                    return Err(PgError::new("42P20", "GROUPS mode requires an ORDER BY clause"));
                }
                let range_offset = |n: &Expr| -> Result<Scalar> {
                    if order.len() != 1 {
                        return Err(PgError::new("42P20", "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column"));
                    }
                    range_offset(&inner, type_of(&order[0].expr), n)
                };
                let (mut start_offset, mut end_offset) = (None, None);
                let mut bound = |b: &WindowFrameBound, is_start: bool| -> Result<crate::exec::FrameBound> {
                    use crate::exec::FrameBound as B;
                    Ok(match b {
                        WindowFrameBound::CurrentRow => B::Current,
                        WindowFrameBound::Preceding(None) => B::Unbounded,
                        WindowFrameBound::Following(None) => B::Unbounded,
                        WindowFrameBound::Preceding(Some(n)) | WindowFrameBound::Following(Some(n))
                            if f.units == WindowFrameUnits::Range =>
                        {
                            let o = Some(range_offset(n)?);
                            if is_start {
                                start_offset = o;
                            } else {
                                end_offset = o;
                            }
                            if matches!(b, WindowFrameBound::Preceding(_)) {
                                B::Preceding(0)
                            } else {
                                B::Following(0)
                            }
                        }
                        WindowFrameBound::Preceding(Some(n)) | WindowFrameBound::Following(Some(n)) => {
                            let v = constant_i64(n)?;
                            if v < 0 {
                                return Err(PgError::new("22013", "frame starting offset must not be negative"));
                            }
                            if matches!(b, WindowFrameBound::Preceding(_)) {
                                B::Preceding(v)
                            } else {
                                B::Following(v)
                            }
                        }
                    })
                };
                let start = bound(&f.start_bound, true)?;
                let end = match &f.end_bound {
                    Some(b) => bound(b, false)?,
                    None => crate::exec::FrameBound::Current,
                };
                let start_is_unbounded_following = matches!(f.start_bound, WindowFrameBound::Following(None));
                let end_is_unbounded_preceding = matches!(f.end_bound, Some(WindowFrameBound::Preceding(None)));
                if start_is_unbounded_following {
                    return Err(PgError::new("42P20", "frame start cannot be UNBOUNDED FOLLOWING"));
                }
                if end_is_unbounded_preceding {
                    return Err(PgError::new("42P20", "frame end cannot be UNBOUNDED PRECEDING"));
                }
                let start_following = matches!(f.start_bound, WindowFrameBound::Following(Some(_)));
                let end_preceding = matches!(f.end_bound, Some(WindowFrameBound::Preceding(Some(_))));
                if matches!(f.start_bound, WindowFrameBound::CurrentRow) && end_preceding {
                    return Err(PgError::new("42P20", "frame starting from current row cannot have preceding rows"));
                }
                // `n FOLLOWING` alone ends at the current row (PostgreSQL's grammar words the
                // two cases differently).
                if start_following && f.end_bound.is_none() {
                    return Err(PgError::new("42P20", "frame starting from following row cannot end with current row"));
                }
                if start_following && (end_preceding || matches!(f.end_bound, Some(WindowFrameBound::CurrentRow))) {
                    return Err(PgError::new("42P20", "frame starting from following row cannot have preceding rows"));
                }
                Some(crate::exec::Frame {
                    rows: f.units == WindowFrameUnits::Rows,
                    groups: f.units == WindowFrameUnits::Groups,
                    start,
                    end,
                    start_following,
                    end_preceding,
                    start_offset,
                    end_offset,
                })
            }
        };
        let call = WinCall::bind(name, args, star, partition, order, frame, filter)?;
        let ty = call.ty;
        let mut w = collect.windows.borrow_mut();
        w.push(call);
        Ok(Scalar::Win(w.len() - 1, ty))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        assert!(like("hello", "h%o", false, Some('\\')).unwrap());
        assert!(like("hello", "h_llo", false, Some('\\')).unwrap());
        assert!(!like("hello", "h_lo", false, Some('\\')).unwrap());
        assert!(like("a%b", "a\\%b", false, Some('\\')).unwrap());
        assert!(!like("axb", "a\\%b", false, Some('\\')).unwrap());
        assert!(like("HeLLo", "hello", true, Some('\\')).unwrap());
        assert!(like("", "%", false, Some('\\')).unwrap());
        assert!(like("abcabc", "%abc", false, None).unwrap());
        assert!(like("mississippi", "%iss%pi", false, None).unwrap());
        assert_eq!(like("a", "a\\", false, Some('\\')).unwrap_err().code, "22025");
    }

    #[test]
    fn md5_matches_rfc_1321() {
        assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(md5_hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    }

    #[test]
    fn calendar_round_trips() {
        for d in [-800_000i64, -1, 0, 10957, 11016, 2_000_000] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        assert_eq!(civil_from_days(10957), (2000, 1, 1));
        assert_eq!(substr("hello", 0, Some(3)).unwrap(), "he");
        assert_eq!(substr("hello", 2, None).unwrap(), "ello");
    }
}
