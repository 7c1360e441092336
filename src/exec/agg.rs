//! Aggregation: aggregate calls (count, sum, avg, min, max, bool_and, bool_or, every,
//! string_agg, array_agg, jsonb_agg, jsonb_object_agg, bit_and / bit_or / bit_xor, the
//! statistics of one variable (stddev, variance and their _samp / _pop forms) and of two
//! (corr, covar_*, regr_*); with DISTINCT, FILTER and ORDER BY inside), hashed by the group key.
//!
//! Result types are PostgreSQL's: count is bigint; sum of smallint / integer is bigint, of
//! real real, of double precision double precision; avg of a float is double precision;
//! min / max keep their argument's type; sum of bigint or numeric and avg of integers or
//! numeric are numeric (sums of bigint are kept exactly in an i128 while they fit).
//!
//! Statistics follow PostgreSQL's arithmetic to the last digit: over integers and numeric
//! the sums of x and x² are exact and the result is numeric_stddev_internal's (`N·Σx² −
//! (Σx)²` over `N·(N−1)` or `N²`, divided at `select_div_scale`, square root at that scale);
//! over real and double precision the sums are the Youngs-Cramer updates of float8_accum /
//! float8_regr_accum, so the same inputs in the same order give the same bits.

use super::sort::{compare_keys, SortKey};
use super::{int_key, key_of, Exec, KeyMap, Node, Row};
use crate::access::heap::Flow;
use crate::error::{sqlstate, PgError, Result};
use crate::sql::expr::{self, coerce, is_int, is_text, type_of, Scalar};
use crate::types::{Numeric, SqlType, TypeId, Value};

/// The aggregate functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Avg,
    Min,
    Max,
    BoolAnd,
    BoolOr,
    StringAgg,
    /// `array_agg(x)`: the inputs, NULLs included, as an array (arrays as one more dimension).
    ArrayAgg,
    /// `jsonb_agg(x)`: the inputs as a jsonb array (NULL as JSON null).
    JsonbAgg,
    /// `jsonb_object_agg(k, v)`: a jsonb object (a NULL key is an error; a NULL value is
    /// JSON null; the last value of a repeated key wins).
    JsonbObjectAgg,
    /// `json_agg(x)`: the inputs as a json array, in PostgreSQL's json text (`[1, 2]`).
    JsonAgg,
    /// `json_object_agg(k, v)`: a json object in PostgreSQL's text (`{ "k" : v }`).
    JsonObjectAgg,
    /// `GROUPING(a, b, ...)`: which of its arguments the current grouping set leaves out, as
    /// bits (the first argument the highest). The planner replaces it by each grouping set's
    /// constant (`sql::query`); it never reaches an aggregation.
    Grouping,
    /// `every(x)`: bool_and under the SQL standard's name.
    Every,
    /// bit_and / bit_or / bit_xor of integers (the argument's type).
    BitAnd,
    BitOr,
    BitXor,
    /// A statistic of one variable.
    Stat(Stat),
    /// A statistic of two variables `(y, x)`, over double precision.
    Regr(Regr),
    /// The ordered-set aggregates `percentile_cont(f)`, `percentile_disc(f)` and `mode()`
    /// `WITHIN GROUP (ORDER BY x)`: `args[0]` is x, `args[1]` the fraction (a constant).
    Ordered(OrderedSet),
}

/// The ordered-set aggregates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderedSet {
    PercentileCont,
    PercentileDisc,
    Mode,
}

/// The statistics of one variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    Stddev,
    StddevSamp,
    StddevPop,
    Variance,
    VarSamp,
    VarPop,
}

impl Stat {
    /// (the sample's, not the population's; the standard deviation, not the variance)
    fn sample_stddev(self) -> (bool, bool) {
        match self {
            Stat::Stddev | Stat::StddevSamp => (true, true),
            Stat::StddevPop => (false, true),
            Stat::Variance | Stat::VarSamp => (true, false),
            Stat::VarPop => (false, false),
        }
    }
}

/// The statistics of two variables (PostgreSQL's float8_regr_* and float8_corr /
/// float8_covar_*), their arguments in SQL's order `(y, x)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regr {
    Corr,
    CovarPop,
    CovarSamp,
    Count,
    Sxx,
    Syy,
    Sxy,
    AvgX,
    AvgY,
    Slope,
    Intercept,
    R2,
}

impl AggFunc {
    /// The aggregate called `name` (`count` is resolved to `count(*)` when bound).
    pub fn named(name: &str) -> Option<AggFunc> {
        Some(match name {
            "count" => AggFunc::Count,
            "sum" => AggFunc::Sum,
            "avg" => AggFunc::Avg,
            "min" => AggFunc::Min,
            "max" => AggFunc::Max,
            "bool_and" => AggFunc::BoolAnd,
            "bool_or" => AggFunc::BoolOr,
            "string_agg" => AggFunc::StringAgg,
            "grouping" => AggFunc::Grouping,
            "array_agg" => AggFunc::ArrayAgg,
            "jsonb_agg" => AggFunc::JsonbAgg,
            "jsonb_object_agg" => AggFunc::JsonbObjectAgg,
            "json_agg" => AggFunc::JsonAgg,
            "json_object_agg" => AggFunc::JsonObjectAgg,
            "every" => AggFunc::Every,
            "bit_and" => AggFunc::BitAnd,
            "bit_or" => AggFunc::BitOr,
            "bit_xor" => AggFunc::BitXor,
            "stddev" => AggFunc::Stat(Stat::Stddev),
            "stddev_samp" => AggFunc::Stat(Stat::StddevSamp),
            "stddev_pop" => AggFunc::Stat(Stat::StddevPop),
            "variance" => AggFunc::Stat(Stat::Variance),
            "var_samp" => AggFunc::Stat(Stat::VarSamp),
            "var_pop" => AggFunc::Stat(Stat::VarPop),
            "corr" => AggFunc::Regr(Regr::Corr),
            "covar_pop" => AggFunc::Regr(Regr::CovarPop),
            "covar_samp" => AggFunc::Regr(Regr::CovarSamp),
            "regr_count" => AggFunc::Regr(Regr::Count),
            "regr_sxx" => AggFunc::Regr(Regr::Sxx),
            "regr_syy" => AggFunc::Regr(Regr::Syy),
            "regr_sxy" => AggFunc::Regr(Regr::Sxy),
            "regr_avgx" => AggFunc::Regr(Regr::AvgX),
            "regr_avgy" => AggFunc::Regr(Regr::AvgY),
            "regr_slope" => AggFunc::Regr(Regr::Slope),
            "regr_intercept" => AggFunc::Regr(Regr::Intercept),
            "regr_r2" => AggFunc::Regr(Regr::R2),
            "percentile_cont" => AggFunc::Ordered(OrderedSet::PercentileCont),
            "percentile_disc" => AggFunc::Ordered(OrderedSet::PercentileDisc),
            "mode" => AggFunc::Ordered(OrderedSet::Mode),
            _ => return None,
        })
    }

    /// The function's SQL name (as EXPLAIN shows a call).
    pub fn sql_name(self) -> &'static str {
        match self {
            AggFunc::CountStar | AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Avg => "avg",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::BoolAnd => "bool_and",
            AggFunc::BoolOr => "bool_or",
            AggFunc::Every => "every",
            AggFunc::StringAgg => "string_agg",
            AggFunc::ArrayAgg => "array_agg",
            AggFunc::JsonbAgg => "jsonb_agg",
            AggFunc::JsonbObjectAgg => "jsonb_object_agg",
            AggFunc::JsonAgg => "json_agg",
            AggFunc::JsonObjectAgg => "json_object_agg",
            AggFunc::Grouping => "grouping",
            AggFunc::BitAnd => "bit_and",
            AggFunc::BitOr => "bit_or",
            AggFunc::BitXor => "bit_xor",
            AggFunc::Stat(s) => match s {
                Stat::Stddev => "stddev",
                Stat::StddevSamp => "stddev_samp",
                Stat::StddevPop => "stddev_pop",
                Stat::Variance => "variance",
                Stat::VarSamp => "var_samp",
                Stat::VarPop => "var_pop",
            },
            AggFunc::Ordered(o) => match o {
                OrderedSet::PercentileCont => "percentile_cont",
                OrderedSet::PercentileDisc => "percentile_disc",
                OrderedSet::Mode => "mode",
            },
            AggFunc::Regr(r) => match r {
                Regr::Corr => "corr",
                Regr::CovarPop => "covar_pop",
                Regr::CovarSamp => "covar_samp",
                Regr::Count => "regr_count",
                Regr::Sxx => "regr_sxx",
                Regr::Syy => "regr_syy",
                Regr::Sxy => "regr_sxy",
                Regr::AvgX => "regr_avgx",
                Regr::AvgY => "regr_avgy",
                Regr::Slope => "regr_slope",
                Regr::Intercept => "regr_intercept",
                Regr::R2 => "regr_r2",
            },
        }
    }
}

/// A bound aggregate call.
#[derive(Clone, Debug)]
pub struct AggCall {
    pub func: AggFunc,
    pub args: Vec<Scalar>,
    pub distinct: bool,
    pub filter: Option<Scalar>,
    pub order: Vec<SortKey>,
    /// The result type.
    pub ty: SqlType,
    /// The argument's type (of the first argument).
    pub arg_ty: Option<SqlType>,
}

fn no_agg(name: &str, args: &[Scalar]) -> PgError {
    let types: Vec<String> = args.iter().map(|a| type_of(a).map(|t| t.name()).unwrap_or_else(|| "unknown".into())).collect();
    PgError::new("42883", format!("function {name}({}) does not exist", types.join(", ")))
        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

impl AggCall {
    /// Type-checks a call and gives it PostgreSQL's result type.
    pub fn bind(
        func: AggFunc,
        name: &str,
        args: Vec<Scalar>,
        star: bool,
        distinct: bool,
        filter: Option<Scalar>,
        order: Vec<SortKey>,
    ) -> Result<AggCall> {
        let t = SqlType::new;
        let mut args = args;
        if func == AggFunc::Grouping {
            if star || distinct || filter.is_some() || !order.is_empty() || args.is_empty() || args.len() > 31 {
                return Err(PgError::syntax("GROUPING takes from 1 to 31 grouping expressions, without *, DISTINCT, FILTER or ORDER BY"));
            }
            return Ok(AggCall { func, args, distinct, filter, order, ty: t(TypeId::Int4), arg_ty: None });
        }
        if star {
            if func != AggFunc::Count {
                return Err(PgError::syntax(format!("{name}(*) is not an aggregate that takes *")));
            }
            if distinct {
                return Err(PgError::syntax("DISTINCT specified, but count(*) takes no arguments"));
            }
            return Ok(AggCall { func: AggFunc::CountStar, args, distinct, filter, order, ty: t(TypeId::Int8), arg_ty: None });
        }
        if let AggFunc::Ordered(o) = func {
            return bind_ordered_set(o, name, args, filter, order);
        }
        let want =
            if matches!(func, AggFunc::StringAgg | AggFunc::JsonbObjectAgg | AggFunc::JsonObjectAgg | AggFunc::Regr(_)) { 2 } else { 1 };
        if args.len() != want {
            return Err(no_agg(name, &args));
        }
        if let AggFunc::Regr(r) = func {
            // (double precision, double precision) only: every numeric type is cast to it
            // implicitly, an untyped literal is read as one.
            let f8 = Some(t(TypeId::Float8));
            let args_before = args.clone();
            let mut cast = Vec::with_capacity(2);
            for a in &args {
                if !type_of(a).is_none_or(|ty| matches!(ty.id, TypeId::Float8 | TypeId::Float4 | TypeId::Numeric) || is_int(ty.id)) {
                    return Err(no_agg(name, &args));
                }
            }
            for a in args {
                cast.push(crate::sql::func::to_type(a, f8)?);
            }
            for k in &order {
                crate::sql::query::need_operator(type_of(&k.expr), true)?;
            }
            if distinct {
                check_distinct_order(&args_before, &order)?;
            }
            let ty = t(if r == Regr::Count { TypeId::Int8 } else { TypeId::Float8 });
            return Ok(AggCall { func, args: cast, distinct, filter, order, ty, arg_ty: f8 });
        }
        if let (AggFunc::Stat(_), Scalar::Unknown(_) | Scalar::Const(Value::Null) | Scalar::Param(_, None)) = (func, &args[0]) {
            // An untyped literal is read as double precision, the numeric category's
            // preferred type.
            let a = std::mem::replace(&mut args[0], Scalar::Const(Value::Null));
            args[0] = crate::sql::func::to_type(a, Some(t(TypeId::Float8)))?;
        }
        if matches!(func, AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor) {
            // Several input types and nothing to choose by (PostgreSQL's 42725).
            if let Scalar::Unknown(_) | Scalar::Const(Value::Null) | Scalar::Param(_, None) = &args[0] {
                return Err(PgError::new("42725", format!("function {name}(unknown) is not unique"))
                    .with_hint("Could not choose a best candidate function. You might need to add explicit type casts."));
            }
        }
        // An untyped literal argument is text (bool for bool_and / bool_or).
        if matches!(func, AggFunc::JsonbAgg | AggFunc::JsonAgg) {
            // jsonb_agg(anyelement): an untyped argument has no type to resolve it by.
            crate::sql::jsonfn::polymorphic(&args[0])?;
        }
        let lit_ty = if matches!(func, AggFunc::BoolAnd | AggFunc::BoolOr | AggFunc::Every) { TypeId::Bool } else { TypeId::Text };
        args = args.into_iter().map(|a| coerce(a, Some(t(lit_ty)))).collect::<Result<Vec<_>>>()?;
        if func == AggFunc::StringAgg {
            // string_agg(text, text): a char(n) argument is cast to text, losing its padding.
            args = args.into_iter().map(expr::unpad).collect();
        }
        if let Some(Scalar::Const(Value::Null)) = args.first() {
            args[0] = Scalar::Cast(Box::new(Scalar::Const(Value::Null)), t(lit_ty));
        }
        if matches!(func, AggFunc::Sum | AggFunc::Avg) && type_of(&args[0]).is_some_and(|t| t.id == TypeId::Time) {
            // sum / avg of a time is of an interval (PostgreSQL's implicit cast).
            let a = std::mem::replace(&mut args[0], Scalar::Const(Value::Null));
            args[0] = Scalar::Cast(Box::new(a), t(TypeId::Interval));
        }
        let at = type_of(&args[0]);
        let id = at.map(|t| t.id);
        // DISTINCT needs equality of the argument, ORDER BY ordering of its keys (json has
        // neither in PostgreSQL).
        if distinct {
            for a in &args {
                crate::sql::query::need_operator(type_of(a), false)?;
            }
        }
        for k in &order {
            crate::sql::query::need_operator(type_of(&k.expr), true)?;
        }

        let ty = match func {
            AggFunc::Count | AggFunc::CountStar => t(TypeId::Int8),
            AggFunc::Sum => match id {
                Some(TypeId::Interval) => t(TypeId::Interval),
                Some(TypeId::Int2 | TypeId::Int4) => t(TypeId::Int8),
                Some(TypeId::Float4) => t(TypeId::Float4),
                Some(TypeId::Float8) => t(TypeId::Float8),
                Some(TypeId::Int8 | TypeId::Numeric) => t(TypeId::Numeric),
                _ => return Err(no_agg(name, &args)),
            },
            AggFunc::Avg => match id {
                Some(TypeId::Interval) => t(TypeId::Interval),
                Some(TypeId::Float4 | TypeId::Float8) => t(TypeId::Float8),
                Some(x) if is_int(x) || x == TypeId::Numeric => t(TypeId::Numeric),
                _ => return Err(no_agg(name, &args)),
            },
            AggFunc::Min | AggFunc::Max => match at {
                // PostgreSQL 15 has no min / max for bytea, boolean, json or uuid.
                Some(x)
                    if !matches!(
                        x.id,
                        TypeId::Bytea | TypeId::Bool | TypeId::Json | TypeId::Jsonb | TypeId::Uuid | TypeId::Record(_) | TypeId::Void
                    ) =>
                {
                    if is_text(x.id) {
                        SqlType::new(if x.id == TypeId::Bpchar { TypeId::Bpchar } else { TypeId::Text })
                    } else {
                        SqlType::new(x.id)
                    }
                }
                _ => return Err(no_agg(name, &args)),
            },
            AggFunc::BoolAnd | AggFunc::BoolOr | AggFunc::Every => match id {
                Some(TypeId::Bool) => t(TypeId::Bool),
                _ => return Err(no_agg(name, &args)),
            },
            AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => match id {
                Some(x @ (TypeId::Int2 | TypeId::Int4 | TypeId::Int8)) => t(x),
                _ => return Err(no_agg(name, &args)),
            },
            AggFunc::Stat(_) => match id {
                Some(TypeId::Float4 | TypeId::Float8) => t(TypeId::Float8),
                Some(x) if is_int(x) || x == TypeId::Numeric => t(TypeId::Numeric),
                _ => return Err(no_agg(name, &args)),
            },
            AggFunc::Regr(_) | AggFunc::Ordered(_) => unreachable!("returned above"),
            AggFunc::StringAgg => {
                let st = type_of(&args[1]).map(|t| t.id);
                match (id, st) {
                    (Some(a), Some(b)) if is_text(a) && is_text(b) => t(TypeId::Text),
                    _ => return Err(no_agg(name, &args)),
                }
            }
            AggFunc::ArrayAgg => match at {
                // char(n) elements keep their type without the length (bpchar[]).
                Some(x) if x.id == TypeId::Bpchar => t(TypeId::Bpchar).array_of().expect("bpchar[] exists"),
                Some(x) if x.is_vector() => x.array_of().expect("vectors have arrays"),
                Some(x) => crate::sql::array::array_type_of(SqlType::new(x.id))?,
                None => return Err(no_agg(name, &args)),
            },
            AggFunc::JsonbAgg | AggFunc::JsonbObjectAgg => t(TypeId::Jsonb),
            AggFunc::JsonAgg | AggFunc::JsonObjectAgg => t(TypeId::Json),
            AggFunc::Grouping => unreachable!("GROUPING returned above"),
        };
        if distinct {
            check_distinct_order(&args, &order)?;
        }
        Ok(AggCall { func, args, distinct, filter, order, ty, arg_ty: at })
    }
}

/// `percentile_cont(f) / percentile_disc(f) / mode() WITHIN GROUP (ORDER BY x)`: `args` is
/// x then the direct arguments. The fraction must be a constant (evaluated here; PostgreSQL
/// evaluates it once per group): NULL, or in 0..=1 (22003 otherwise, also over no rows).
/// percentile_cont interpolates double precision (numbers are converted) or interval;
/// percentile_disc and mode return x's type.
fn bind_ordered_set(o: OrderedSet, name: &str, args: Vec<Scalar>, filter: Option<Scalar>, order: Vec<SortKey>) -> Result<AggCall> {
    let t = SqlType::new;
    let direct = if o == OrderedSet::Mode { 0 } else { 1 };
    if args.len() != 1 + direct || order.len() != 1 {
        // PostgreSQL names the direct arguments, then the ordered ones.
        let mut shown: Vec<Scalar> = args.iter().skip(order.len()).cloned().collect();
        shown.extend(args.iter().take(order.len()).cloned());
        return Err(no_agg(name, &shown));
    }
    let mut it = args.into_iter();
    let x = it.next().expect("the ordered argument");
    let mut out = Vec::with_capacity(2);
    let (x, ty) = match o {
        OrderedSet::PercentileCont => match type_of(&x).map(|t| t.id) {
            Some(TypeId::Interval) => (x, t(TypeId::Interval)),
            // A time is an interval here (PostgreSQL's implicit cast).
            Some(TypeId::Time) => (Scalar::Cast(Box::new(x), t(TypeId::Interval)), t(TypeId::Interval)),
            Some(id) if expr::is_num(id) => (Scalar::Cast(Box::new(x), t(TypeId::Float8)), t(TypeId::Float8)),
            None => (coerce(x, Some(t(TypeId::Float8)))?, t(TypeId::Float8)),
            Some(_) => {
                let fraction = it.clone().next().and_then(|f| type_of(&f)).map(|t| t.name()).unwrap_or_else(|| "unknown".into());
                let shown = format!("function {name}({fraction}, {}) does not exist", type_of(&x).map(|t| t.name()).unwrap_or_default());
                return Err(PgError::new("42883", shown)
                    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
            }
        },
        _ => {
            let x = coerce(x, Some(t(TypeId::Text)))?;
            let ty = type_of(&x).map(|t| if t.id == TypeId::Bpchar { SqlType::new(TypeId::Bpchar) } else { t }).unwrap_or(t(TypeId::Text));
            crate::sql::query::need_operator(Some(ty), true)?;
            (x, ty)
        }
    };
    out.push(x);
    let mut ty = ty;
    if direct == 1 {
        // An array of fractions gives an array of answers, of the same shape.
        let raw = it.next().expect("the fraction");
        let multi = type_of(&raw).is_some_and(|at| at.is_array());
        let f = if multi {
            match type_of(&raw).and_then(|at| at.elem()) {
                Some(e) if expr::is_num(e.id) => {
                    let float8s = t(TypeId::Float8).array_of().expect("float8[]");
                    if e.id == TypeId::Float8 {
                        raw
                    } else {
                        Scalar::Cast(Box::new(raw), float8s)
                    }
                }
                _ => return Err(no_agg(name, &[raw])),
            }
        } else {
            crate::sql::func::to_type(raw, Some(t(TypeId::Float8)))?
        };
        if !multi && type_of(&f).is_some_and(|ft| !expr::is_num(ft.id)) {
            return Err(no_agg(name, &[f]));
        }
        let mut reads = false;
        f.visit(&mut |s| {
            reads |= matches!(s, Scalar::Col(..) | Scalar::Outer(..) | Scalar::Param(..) | Scalar::Agg(..) | Scalar::SubLink(..))
        });
        if reads || expr::calls_volatile(&f) {
            return Err(PgError::feature(format!("{name}() with a fraction that is not a constant is not supported by heapstore yet")));
        }
        let v = f.eval(&[], &[])?;
        let as_float = |v: Value| -> Result<Value> {
            Ok(match v {
                Value::Null => Value::Null,
                v => Value::Float8(expr::as_f64(&v).ok_or_else(|| PgError::internal("a fraction that is not a number"))?),
            })
        };
        let v = match v {
            Value::Array(mut a) if multi => {
                for item in a.items.iter_mut() {
                    *item = as_float(std::mem::replace(item, Value::Null))?;
                }
                ty = ty.array_of().ok_or_else(|| {
                    PgError::feature(format!("{name}() of an array of fractions over this type is not supported by heapstore"))
                })?;
                Value::Array(a)
            }
            v if multi => {
                ty = ty.array_of().ok_or_else(|| {
                    PgError::feature(format!("{name}() of an array of fractions over this type is not supported by heapstore"))
                })?;
                as_float(v)?
            }
            v => as_float(v)?,
        };
        out.push(Scalar::Const(v));
    }
    for k in &order {
        crate::sql::query::need_operator(type_of(&k.expr), true)?;
    }
    // The sort key is x itself (before its conversion to double precision).
    Ok(AggCall { func: AggFunc::Ordered(o), args: out, distinct: false, filter, order, ty, arg_ty: Some(ty) })
}

/// The final value of an ordered-set aggregate over its inputs sorted by the WITHIN GROUP
/// key (NULL inputs already left out): percentile_disc's row ceil(f·n) (the first for 0),
/// percentile_cont's interpolation between rows floor and ceil of f·(n−1) (`lo + (hi − lo) ·
/// (f·(n−1) − floor)`, float8_lerp / interval_lerp), mode's most frequent value (the first of
/// equally frequent ones in sort order).
fn ordered_set_final(c: &AggCall, o: OrderedSet, rows: &[(Row, Row)]) -> Result<Value> {
    // An array of fractions (percentile_cont_multi_final / percentile_disc_multi_final): NULL
    // over no rows or for a NULL array; else every fraction checked, then one answer per
    // fraction (NULL for a NULL one) in an array of the fractions' shape.
    if let Some(Scalar::Const(Value::Array(fr))) = c.args.get(1) {
        if rows.is_empty() {
            return Ok(Value::Null);
        }
        for f in &fr.items {
            if let Value::Float8(f) = f {
                check_fraction(*f)?;
            }
        }
        let mut items = Vec::with_capacity(fr.items.len());
        for f in &fr.items {
            items.push(match f {
                Value::Float8(f) => percentile(o, *f, rows)?,
                _ => Value::Null,
            });
        }
        return Ok(Value::Array(Box::new(crate::types::array::Array { ty: c.ty, dims: fr.dims.clone(), items })));
    }
    let fraction = match c.args.get(1) {
        Some(Scalar::Const(Value::Float8(f))) => Some(*f),
        Some(Scalar::Const(Value::Null)) => return Ok(Value::Null),
        _ => None,
    };
    if let Some(f) = fraction {
        check_fraction(f)?;
    }
    if rows.is_empty() {
        return Ok(Value::Null);
    }
    match o {
        OrderedSet::PercentileDisc | OrderedSet::PercentileCont => percentile(o, fraction.unwrap_or(0.0), rows),
        OrderedSet::Mode => {
            let value = |i: usize| rows[i].0[0].clone();
            let same = |a: &Value, b: &Value| -> Result<bool> { Ok(bpchar_compare(c, a, b)? == std::cmp::Ordering::Equal) };
            let (mut best, mut best_n) = (value(0), 0usize);
            let (mut cur, mut cur_n) = (value(0), 0usize);
            for r in rows {
                if same(&r.0[0], &cur)? {
                    cur_n += 1;
                } else {
                    cur = r.0[0].clone();
                    cur_n = 1;
                }
                if cur_n > best_n {
                    best = cur.clone();
                    best_n = cur_n;
                }
            }
            Ok(best)
        }
    }
}

/// 22003 for a percentile fraction outside 0..=1.
fn check_fraction(f: f64) -> Result<()> {
    if (0.0..=1.0).contains(&f) {
        return Ok(());
    }
    Err(PgError::new(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("percentile value {} is not between 0 and 1", crate::sql::func::c_format_g(f)),
    ))
}

/// percentile_disc / percentile_cont at fraction `f` (in 0..=1) over sorted, non-empty `rows`.
fn percentile(o: OrderedSet, f: f64, rows: &[(Row, Row)]) -> Result<Value> {
    let n = rows.len();
    debug_assert!(n > 0 && (0.0..=1.0).contains(&f), "a percentile of some rows at a fraction in 0..=1");
    let value = |i: usize| rows[i].0[0].clone();
    Ok(match o {
        OrderedSet::PercentileDisc => {
            let rownum = (f * n as f64).ceil() as usize;
            value(rownum.max(1).min(n) - 1)
        }
        OrderedSet::PercentileCont => {
            let pos = f * (n - 1) as f64;
            let (first, second) = (pos.floor() as usize, pos.ceil() as usize);
            let (lo, hi) = (value(first), value(second.min(n - 1)));
            if first == second {
                lo
            } else {
                let pct = pos - first as f64;
                match (lo, hi) {
                    (Value::Float8(a), Value::Float8(b)) => Value::Float8(a + (b - a) * pct),
                    (Value::Interval(a), Value::Interval(b)) => Value::Interval(a.add(&b.sub(&a)?.mul(pct)?)?),
                    _ => return Err(PgError::internal("percentile_cont of another type")),
                }
            }
        }
        OrderedSet::Mode => return Err(PgError::internal("mode() is not a percentile")),
    })
}

/// PostgreSQL: with DISTINCT, ORDER BY expressions must appear in the argument list (as the
/// arguments are after their casts).
fn check_distinct_order(args: &[Scalar], order: &[SortKey]) -> Result<()> {
    for k in order {
        let shown = format!("{:?}", k.expr);
        if !args.iter().any(|a| format!("{a:?}") == shown) {
            return Err(PgError::new("42P10", "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list"));
        }
    }
    Ok(())
}

/// min / max's comparison: char(n) without trailing blanks (bpchar_larger / _smaller).
fn bpchar_compare(c: &AggCall, a: &Value, b: &Value) -> Result<std::cmp::Ordering> {
    match (c.arg_ty, a, b) {
        (Some(t), Value::Text(x), Value::Text(y)) if t.id == TypeId::Bpchar => {
            Ok(x.trim_end_matches(' ').as_bytes().cmp(y.trim_end_matches(' ').as_bytes()))
        }
        _ => expr::compare(a, b),
    }
}

/// The values as a json array in PostgreSQL's json_agg text: "[", elements separated by
/// ", " (and "\n " before a structured element that is not NULL: `structured`), "]"
/// (jsonb_agg parses it into jsonb).
fn json_array_text(items: &[Value], structured: bool) -> String {
    let mut text = String::from("[");
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
            if structured && *v != Value::Null {
                text.push_str("\n ");
            }
        }
        crate::types::json::to_json(v, &v.natural_type().unwrap_or(SqlType::new(TypeId::Text)), &mut text);
    }
    text.push(']');
    text
}

/// Aggregates that take NULL inputs (the others skip them).
fn non_strict(f: AggFunc) -> bool {
    matches!(
        f,
        AggFunc::CountStar | AggFunc::ArrayAgg | AggFunc::JsonbAgg | AggFunc::JsonbObjectAgg | AggFunc::JsonAgg | AggFunc::JsonObjectAgg
    )
}

/// The running state of one aggregate in one group.
#[derive(Clone, Debug)]
enum Acc {
    Count(i64),
    SumInt(Option<i128>),
    /// sum of bigint (exact in i128, numeric at the end) or numeric; avg of integers or
    /// numeric: (sum, count).
    SumBig(Option<i128>, Option<Numeric>, i64),
    SumF4(Option<f32>),
    SumF8(Option<f64>),
    /// avg of a float: float8_accum's N, Σx, Sxx (PostgreSQL's avg shares variance's state,
    /// so an Sxx overflow of finite inputs is its error too).
    AvgF(f64, f64, f64),
    /// sum / avg of interval: (sum, count); avg is the sum divided by the count
    /// (`interval_div`), as PostgreSQL computes it.
    Iv(Option<crate::types::Interval>, i64),
    Min(Value),
    Max(Value),
    Bool(Option<bool>),
    Str(Option<String>),
    /// array_agg's inputs so far.
    Items(Vec<Value>),
    /// DISTINCT or ORDER BY inside: the (arguments, sort keys) seen, folded at the end.
    Collect(Vec<(Row, Row)>),
    /// bit_and / bit_or / bit_xor so far.
    Bits(Option<i64>),
    /// Statistics of integers up to integer: N, Σx, Σx² (exact).
    StatInt(i64, i128, i128),
    /// Statistics of bigint or numeric: N (finite inputs), Σx, Σx² (exact), and the count of
    /// NaN and infinite inputs.
    StatNum(Box<StatNum>),
    /// Statistics of floats: float8_accum's N, Σx, Sxx.
    StatF(f64, f64, f64),
    /// float8_regr_accum's N, Sx, Sxx, Sy, Syy, Sxy.
    Regr([f64; 6]),
}

#[derive(Clone, Debug)]
struct StatNum {
    n: i64,
    sx: Numeric,
    sxx: Numeric,
    special: i64,
}

fn fresh(c: &AggCall) -> Acc {
    if c.distinct || !c.order.is_empty() {
        return Acc::Collect(Vec::new());
    }
    plain(c)
}

fn plain(c: &AggCall) -> Acc {
    match c.func {
        AggFunc::Grouping => unreachable!("the planner replaces GROUPING by constants (sql::query)"),
        AggFunc::Count | AggFunc::CountStar => Acc::Count(0),
        AggFunc::Sum | AggFunc::Avg if c.ty.id == TypeId::Numeric => Acc::SumBig(None, None, 0),
        AggFunc::Sum | AggFunc::Avg if c.ty.id == TypeId::Interval => Acc::Iv(None, 0),
        AggFunc::Sum => match c.ty.id {
            TypeId::Int8 => Acc::SumInt(None),
            TypeId::Float4 => Acc::SumF4(None),
            _ => Acc::SumF8(None),
        },
        AggFunc::Avg => Acc::AvgF(0.0, 0.0, 0.0),
        AggFunc::Min => Acc::Min(Value::Null),
        AggFunc::Max => Acc::Max(Value::Null),
        AggFunc::BoolAnd | AggFunc::BoolOr | AggFunc::Every => Acc::Bool(None),
        AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => Acc::Bits(None),
        AggFunc::Stat(_) => match c.arg_ty.map(|t| t.id) {
            Some(TypeId::Float4 | TypeId::Float8) => Acc::StatF(0.0, 0.0, 0.0),
            Some(TypeId::Int2 | TypeId::Int4) => Acc::StatInt(0, 0, 0),
            _ => Acc::StatNum(Box::new(StatNum { n: 0, sx: Numeric::zero(), sxx: Numeric::zero(), special: 0 })),
        },
        AggFunc::Regr(_) => Acc::Regr([0.0; 6]),
        // Always collected (its WITHIN GROUP ORDER BY), finished by ordered_set_final.
        AggFunc::Ordered(_) => Acc::Collect(Vec::new()),
        AggFunc::StringAgg => Acc::Str(None),
        AggFunc::ArrayAgg | AggFunc::JsonbAgg | AggFunc::JsonbObjectAgg | AggFunc::JsonAgg | AggFunc::JsonObjectAgg => {
            Acc::Items(Vec::new())
        }
    }
}

/// Feeds one row's argument values into `acc`.
fn step(c: &AggCall, acc: &mut Acc, args: &[Value]) -> Result<()> {
    // Strict aggregates skip NULL inputs (count(*) has none; array_agg and the jsonb ones
    // keep them).
    if !non_strict(c.func) && args.first().is_some_and(|v| *v == Value::Null) {
        return Ok(());
    }
    if matches!(c.func, AggFunc::Regr(_)) && args.get(1).is_some_and(|v| *v == Value::Null) {
        return Ok(());
    }
    match acc {
        Acc::Bits(b) => {
            let x = expr::as_i64(&args[0]).ok_or_else(|| PgError::internal("bit_and of a non-integer"))?;
            *b = Some(match (*b, c.func) {
                (None, _) => x,
                (Some(y), AggFunc::BitAnd) => y & x,
                (Some(y), AggFunc::BitOr) => y | x,
                (Some(y), _) => y ^ x,
            });
        }
        Acc::StatInt(n, sx, sxx) => {
            let x = i128::from(expr::as_i64(&args[0]).ok_or_else(|| PgError::internal("stddev of a non-integer"))?);
            *n += 1;
            *sx += x;
            // Each square is below 2^62: 2^64 of them fit.
            *sxx = sxx.checked_add(x * x).ok_or_else(|| PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range"))?;
        }
        Acc::StatNum(st) => {
            let x = match &args[0] {
                Value::Numeric(x) => x.clone(),
                v => Numeric::from_i64(expr::as_i64(v).ok_or_else(|| PgError::internal("stddev of a non-number"))?),
            };
            if !x.is_finite() {
                // do_numeric_accum counts NaN and infinities apart from the sums.
                st.special += 1;
            } else {
                st.n += 1;
                st.sxx = st.sxx.add(&x.mul(&x)?)?;
                st.sx = st.sx.add(&x)?;
            }
        }
        Acc::StatF(n, sx, sxx) => {
            let x = expr::as_f64(&args[0]).ok_or_else(|| PgError::internal("stddev of a non-float"))?;
            float8_accum(n, sx, sxx, x)?;
        }
        // regr_count only counts (int8inc_float8_float8): it never overflows.
        Acc::Regr(t) if c.func == AggFunc::Regr(Regr::Count) => t[0] += 1.0,
        Acc::Regr(t) => {
            let y = expr::as_f64(&args[0]).ok_or_else(|| PgError::internal("regression of a non-float"))?;
            let x = expr::as_f64(&args[1]).ok_or_else(|| PgError::internal("regression of a non-float"))?;
            float8_regr_accum(t, y, x)?;
        }
        Acc::Count(n) => *n += 1,
        Acc::SumInt(s) => *s = Some(s.unwrap_or(0) + i128::from(expr::as_i64(&args[0]).unwrap_or(0))),
        // float4pl / float8pl: finite addends whose sum is infinite overflow (22003).
        Acc::SumF4(s) => {
            let x = match args[0] {
                Value::Float4(f) => f,
                ref v => expr::as_f64(v).unwrap_or(0.0) as f32,
            };
            let a = s.unwrap_or(0.0);
            let r = a + x;
            if r.is_infinite() && a.is_finite() && x.is_finite() {
                return Err(float_overflow());
            }
            *s = Some(r);
        }
        Acc::SumF8(s) => {
            let (a, x) = (s.unwrap_or(0.0), expr::as_f64(&args[0]).unwrap_or(0.0));
            let r = a + x;
            if r.is_infinite() && a.is_finite() && x.is_finite() {
                return Err(float_overflow());
            }
            *s = Some(r);
        }
        Acc::SumBig(i, n, count) => {
            *count += 1;
            match &args[0] {
                Value::Numeric(x) => {
                    *n = Some(match n.take() {
                        Some(y) => y.add(x)?,
                        None => x.clone(),
                    })
                }
                v => {
                    let x = i128::from(expr::as_i64(v).unwrap_or(0));
                    // i128 holds any sum of 2^64 bigints; past that, fold into the numeric.
                    match i.unwrap_or(0).checked_add(x) {
                        Some(t) => *i = Some(t),
                        None => {
                            let carried = Numeric::parse(&i.unwrap_or(0).to_string())?;
                            *n = Some(match n.take() {
                                Some(y) => y.add(&carried)?,
                                None => carried,
                            });
                            *i = Some(x);
                        }
                    }
                }
            }
        }
        Acc::AvgF(n, sx, sxx) => float8_accum(n, sx, sxx, expr::as_f64(&args[0]).unwrap_or(0.0))?,
        Acc::Iv(sum, n) => {
            let Value::Interval(x) = &args[0] else { return Err(PgError::internal("sum(interval) of another type")) };
            *sum = Some(match sum {
                None => *x,
                Some(acc) => acc.add(x)?,
            });
            *n += 1;
        }
        // On a tie the later value wins, as in PostgreSQL's `*_larger` / `*_smaller` (which
        // keep their first argument only when it is strictly larger / smaller): it shows for
        // values that compare equal yet print differently (numeric 1.0 and 1.00, interval
        // '1 mon' and '30 days'). Equal text is the same text (char(n) keeps the first, as
        // bpchar_larger does).
        Acc::Min(m) => {
            let keep = *m != Value::Null
                && match bpchar_compare(c, &args[0], m)? {
                    std::cmp::Ordering::Equal => matches!(args[0], Value::Text(_)),
                    o => o == std::cmp::Ordering::Greater,
                };
            if !keep {
                *m = args[0].clone();
            }
        }
        Acc::Max(m) => {
            let keep = *m != Value::Null
                && match bpchar_compare(c, &args[0], m)? {
                    std::cmp::Ordering::Equal => matches!(args[0], Value::Text(_)),
                    o => o == std::cmp::Ordering::Less,
                };
            if !keep {
                *m = args[0].clone();
            }
        }
        Acc::Bool(b) => {
            let x = args[0] == Value::Bool(true);
            *b = Some(match (*b, c.func) {
                (None, _) => x,
                (Some(y), AggFunc::BoolAnd | AggFunc::Every) => y && x,
                (Some(y), _) => y || x,
            });
        }
        Acc::Str(s) => {
            let Value::Text(x) = &args[0] else { return Ok(()) };
            match s {
                None => *s = Some(x.clone()),
                Some(cur) => {
                    if let Some(Value::Text(sep)) = args.get(1) {
                        cur.push_str(sep);
                    }
                    cur.push_str(x);
                }
            }
        }
        Acc::Items(items) => {
            if let Some(max) = items.len().checked_add(1).filter(|&n| n > 134_217_727) {
                return Err(PgError::new(
                    sqlstate::PROGRAM_LIMIT_EXCEEDED,
                    format!("array size exceeds the maximum allowed ({})", max - 1),
                ));
            }
            if matches!(c.func, AggFunc::JsonbObjectAgg | AggFunc::JsonObjectAgg) {
                if args[0] == Value::Null {
                    return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "field name must not be null"));
                }
                items.push(args[0].clone());
                items.push(args.get(1).cloned().unwrap_or(Value::Null));
            } else {
                items.push(args[0].clone());
            }
        }
        Acc::Collect(_) => unreachable!("collected aggregates are folded in finish"),
    }
    Ok(())
}

fn finish(c: &AggCall, acc: Acc) -> Result<Value> {
    Ok(match acc {
        Acc::Bits(b) => match (b, c.ty.id) {
            (None, _) => Value::Null,
            (Some(v), TypeId::Int2) => Value::Int2(v as i16),
            (Some(v), TypeId::Int4) => Value::Int4(v as i32),
            (Some(v), _) => Value::Int8(v),
        },
        Acc::StatInt(n, sx, sxx) => {
            let AggFunc::Stat(s) = c.func else { return Err(PgError::internal("a statistic's state for another aggregate")) };
            let (sample, stddev) = s.sample_stddev();
            let (sx, sxx) = (Numeric::parse(&sx.to_string())?, Numeric::parse(&sxx.to_string())?);
            Numeric::stddev_internal(n, 0, &sx, &sxx, !stddev, sample)?.map_or(Value::Null, Value::Numeric)
        }
        Acc::StatNum(st) => {
            let AggFunc::Stat(s) = c.func else { return Err(PgError::internal("a statistic's state for another aggregate")) };
            let (sample, stddev) = s.sample_stddev();
            Numeric::stddev_internal(st.n, st.special, &st.sx, &st.sxx, !stddev, sample)?.map_or(Value::Null, Value::Numeric)
        }
        Acc::StatF(n, _, sxx) => {
            let AggFunc::Stat(s) = c.func else { return Err(PgError::internal("a statistic's state for another aggregate")) };
            let (sample, stddev) = s.sample_stddev();
            // float8_var_samp / _pop and float8_stddev_samp / _pop.
            let var = match sample {
                true if n <= 1.0 => return Ok(Value::Null),
                false if n == 0.0 => return Ok(Value::Null),
                true => sxx / (n - 1.0),
                false => sxx / n,
            };
            Value::Float8(if stddev { var.sqrt() } else { var })
        }
        Acc::Regr(t) => {
            let AggFunc::Regr(r) = c.func else { return Err(PgError::internal("a regression state for another aggregate")) };
            regr_final(r, t)
        }
        Acc::Count(n) => Value::Int8(n),
        Acc::SumInt(None) | Acc::SumF4(None) | Acc::SumF8(None) => Value::Null,
        Acc::SumInt(Some(s)) => {
            Value::Int8(i64::try_from(s).map_err(|_| PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range"))?)
        }
        Acc::SumF4(Some(s)) => Value::Float4(s),
        Acc::SumBig(_, _, 0) => Value::Null,
        Acc::SumBig(i, n, count) => {
            let mut total = Numeric::zero();
            if let Some(i) = i {
                total = Numeric::parse(&i.to_string())?;
            }
            if let Some(n) = n {
                total = total.add(&n)?;
            }
            if c.func == AggFunc::Avg {
                Value::Numeric(Numeric::avg(&total, count)?)
            } else {
                Value::Numeric(total)
            }
        }
        Acc::SumF8(Some(s)) => Value::Float8(s),
        Acc::Iv(None, _) => Value::Null,
        Acc::Iv(Some(sum), n) if c.func == AggFunc::Avg => Value::Interval(sum.div(n as f64)?),
        Acc::Iv(Some(sum), _) => Value::Interval(sum),
        Acc::AvgF(0.0, _, _) => Value::Null,
        Acc::AvgF(n, sx, _) => Value::Float8(sx / n),
        Acc::Min(v) | Acc::Max(v) => v,
        Acc::Bool(b) => b.map(Value::Bool).unwrap_or(Value::Null),
        Acc::Str(s) => s.map(Value::Text).unwrap_or(Value::Null),
        Acc::Items(items) if items.is_empty() => Value::Null,
        Acc::Items(items) if c.func == AggFunc::JsonbAgg => {
            Value::Jsonb(crate::types::jsonb::parse(&json_array_text(&items, false))?.to_text())
        }
        // json_agg_transfn puts "\n " before each array or record element after the first that
        // is not NULL.
        Acc::Items(items) if c.func == AggFunc::JsonAgg => {
            Value::Json(json_array_text(&items, c.arg_ty.is_some_and(|t| t.is_array() || matches!(t.id, TypeId::Record(_)))))
        }
        Acc::Items(items) if c.func == AggFunc::JsonObjectAgg => {
            // json_object_agg_transfn: "{ ", `"key" : value` pairs separated by ", ", " }";
            // keys kept as given, repeated ones too.
            let mut text = String::from("{ ");
            for (i, kv) in items.chunks(2).enumerate() {
                if i > 0 {
                    text.push_str(", ");
                }
                let key = crate::types::json::key_text(&kv[0], &kv[0].natural_type().unwrap_or(SqlType::new(TypeId::Text)))?;
                crate::types::json::to_json(&Value::Text(key), &SqlType::new(TypeId::Text), &mut text);
                text.push_str(" : ");
                crate::types::json::to_json(&kv[1], &kv[1].natural_type().unwrap_or(SqlType::new(TypeId::Text)), &mut text);
            }
            text.push_str(" }");
            Value::Json(text)
        }
        Acc::Items(items) if c.func == AggFunc::JsonbObjectAgg => {
            let mut pairs = Vec::with_capacity(items.len() / 2);
            for kv in items.chunks(2) {
                let key = crate::types::json::key_text(&kv[0], &kv[0].natural_type().unwrap_or(SqlType::new(TypeId::Text)))?;
                let mut value = String::new();
                crate::types::json::to_json(&kv[1], &kv[1].natural_type().unwrap_or(SqlType::new(TypeId::Text)), &mut value);
                pairs.push((key, crate::types::jsonb::parse(&value)?));
            }
            Value::Jsonb(crate::types::jsonb::Jsonb::Object(crate::types::jsonb::normalize(pairs)).to_text())
        }
        Acc::Items(items) => array_agg_result(c, items)?,
        Acc::Collect(mut rows) => {
            if c.distinct && c.order.is_empty() {
                // DISTINCT without ORDER BY: PostgreSQL sorts the arguments to find the
                // distinct ones, so they come out in ascending order (NULLs last).
                rows.sort_by(|a, b| {
                    for (i, (x, y)) in a.0.iter().zip(&b.0).enumerate() {
                        let o = match (x, y) {
                            (Value::Null, Value::Null) => std::cmp::Ordering::Equal,
                            (Value::Null, _) => std::cmp::Ordering::Greater,
                            (_, Value::Null) => std::cmp::Ordering::Less,
                            (x, y) if i == 0 => bpchar_compare(c, x, y).unwrap_or(std::cmp::Ordering::Equal),
                            (x, y) => expr::compare(x, y).unwrap_or(std::cmp::Ordering::Equal),
                        };
                        if o != std::cmp::Ordering::Equal {
                            return o;
                        }
                    }
                    std::cmp::Ordering::Equal
                });
            }
            rows.sort_by(|a, b| compare_keys(&a.1, &b.1, &c.order));
            if let AggFunc::Ordered(o) = c.func {
                return ordered_set_final(c, o, &rows);
            }
            let mut acc = plain(c);
            let mut seen = std::collections::HashSet::new();
            let mut key = Vec::new();
            for (args, _) in rows {
                if c.distinct {
                    // DISTINCT compares every argument (string_agg's separator too, as
                    // PostgreSQL's sort of the aggregate's input does).
                    key_of(&args, &mut key);
                    if !seen.insert(key.clone()) {
                        continue;
                    }
                }
                step(c, &mut acc, &args)?;
            }
            finish(c, acc)?
        }
    })
}

fn float_overflow() -> PgError {
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow")
}

/// PostgreSQL's float8_accum: the Youngs-Cramer update of (N, Σx, Sxx) by `x`. Finite inputs
/// whose sums overflow are an error; an infinite or NaN input makes Sxx NaN.
fn float8_accum(n: &mut f64, sx: &mut f64, sxx: &mut f64, x: f64) -> Result<()> {
    let (n0, sx0) = (*n, *sx);
    *n += 1.0;
    *sx += x;
    if n0 > 0.0 {
        let tmp = x * *n - *sx;
        *sxx += tmp * tmp / (*n * n0);
        if sx.is_infinite() || sxx.is_infinite() {
            if !sx0.is_infinite() && !x.is_infinite() {
                return Err(float_overflow());
            }
            *sxx = f64::NAN;
        }
    } else if x.is_infinite() || x.is_nan() {
        *sxx = f64::NAN;
    }
    Ok(())
}

/// PostgreSQL's float8_regr_accum: the Youngs-Cramer update of (N, Sx, Sxx, Sy, Syy, Sxy)
/// by one (y, x) pair.
fn float8_regr_accum(t: &mut [f64; 6], y: f64, x: f64) -> Result<()> {
    let [n0, sx0, _, sy0, _, _] = *t;
    let [n, sx, sxx, sy, syy, sxy] = t;
    *n += 1.0;
    *sx += x;
    *sy += y;
    if n0 > 0.0 {
        let tx = x * *n - *sx;
        let ty = y * *n - *sy;
        let scale = 1.0 / (*n * n0);
        *sxx += tx * tx * scale;
        *syy += ty * ty * scale;
        *sxy += tx * ty * scale;
        if sx.is_infinite() || sxx.is_infinite() {
            if !sx0.is_infinite() && !x.is_infinite() {
                return Err(float_overflow());
            }
            *sxx = f64::NAN;
        }
        if sy.is_infinite() || syy.is_infinite() {
            if !sy0.is_infinite() && !y.is_infinite() {
                return Err(float_overflow());
            }
            *syy = f64::NAN;
        }
        if sxy.is_infinite() {
            if !sx0.is_infinite() && !x.is_infinite() && !sy0.is_infinite() && !y.is_infinite() {
                return Err(float_overflow());
            }
            *sxy = f64::NAN;
        }
    } else {
        if x.is_infinite() || x.is_nan() {
            *sxx = f64::NAN;
            *sxy = f64::NAN;
        }
        if y.is_infinite() || y.is_nan() {
            *syy = f64::NAN;
            *sxy = f64::NAN;
        }
    }
    Ok(())
}

/// The final functions of the two-variable statistics (float8_corr, float8_covar_*,
/// float8_regr_*): NULL without rows (covar_samp: fewer than two), and where PostgreSQL's
/// answer is undefined (a vertical or horizontal line).
fn regr_final(r: Regr, t: [f64; 6]) -> Value {
    let [n, sx, sxx, sy, syy, sxy] = t;
    if r == Regr::Count {
        return Value::Int8(n as i64);
    }
    if n < 1.0 || (r == Regr::CovarSamp && n < 2.0) {
        return Value::Null;
    }
    let v = match r {
        Regr::Sxx => sxx,
        Regr::Syy => syy,
        Regr::Sxy => sxy,
        Regr::AvgX => sx / n,
        Regr::AvgY => sy / n,
        Regr::CovarPop => sxy / n,
        Regr::CovarSamp => sxy / (n - 1.0),
        Regr::Corr if sxx == 0.0 || syy == 0.0 => return Value::Null,
        Regr::Corr => sxy / (sxx * syy).sqrt(),
        Regr::R2 if sxx == 0.0 => return Value::Null,
        Regr::R2 if syy == 0.0 => 1.0,
        Regr::R2 => (sxy * sxy) / (sxx * syy),
        Regr::Slope | Regr::Intercept if sxx == 0.0 => return Value::Null,
        Regr::Slope => sxy / sxx,
        Regr::Intercept => (sy - sx * sxy / sxx) / n,
        Regr::Count => unreachable!("returned above"),
    };
    Value::Float8(v)
}

/// array_agg's result: a one-dimensional array of the inputs, or for array inputs an array of
/// one more dimension (PostgreSQL's `array_agg(anyarray)` rules: no NULL or empty inputs, all
/// of the same dimensions).
fn array_agg_result(c: &AggCall, items: Vec<Value>) -> Result<Value> {
    if c.arg_ty.is_some_and(|t| t.is_array()) {
        let err = |m: &str| PgError::new("2202E", m.to_string());
        let mut dims: Option<Vec<crate::types::Dim>> = None;
        let mut all = Vec::new();
        for v in &items {
            let Value::Array(a) = v else { return Err(PgError::new("22004", "cannot accumulate null arrays")) };
            if a.items.is_empty() {
                return Err(err("cannot accumulate empty arrays"));
            }
            match &dims {
                None => dims = Some(a.dims.clone()),
                Some(d) if *d == a.dims => {}
                Some(_) => return Err(err("cannot accumulate arrays of different dimensionality")),
            }
            all.extend(a.items.iter().cloned());
        }
        let inner = dims.unwrap_or_default();
        if inner.len() + 1 > crate::types::array::MAXDIM {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("number of array dimensions ({}) exceeds the maximum allowed ({})", inner.len() + 1, crate::types::array::MAXDIM),
            ));
        }
        let mut d = vec![crate::types::Dim { len: items.len() as i32, lower: 1 }];
        d.extend(inner);
        crate::types::Array::check_dims(&d)?;
        return Ok(Value::Array(Box::new(crate::types::Array { ty: c.ty, dims: d, items: all })));
    }
    Ok(Value::Array(Box::new(crate::types::Array::from_items(c.ty, items))))
}

struct Group {
    keys: Row,
    accs: Vec<Acc>,
}

/// Partitions a hash aggregate or hash join spills into.
pub const PARTITIONS: usize = 16;

/// The partition of a key at recursion `depth` (a different hash at each depth, so that a
/// partition that overflows again splits differently).
pub(super) fn partition_of(key: &[u8], depth: u32) -> usize {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    depth.hash(&mut h);
    key.hash(&mut h);
    (h.finish() % PARTITIONS as u64) as usize
}

/// A source of rows: calls its argument with each row.
pub(super) type Source<'s> = dyn FnMut(&mut dyn FnMut(&[Value]) -> Result<Flow>) -> Result<()> + 's;

pub(super) fn run(
    ex: &Exec<'_>,
    node: &Node,
    input: &Node,
    group: &[Scalar],
    aggs: &[AggCall],
    outer: &[&[Value]],
    sink: &mut dyn FnMut(&[Value]) -> Result<Flow>,
) -> Result<Flow> {
    let mut source = |f: &mut dyn FnMut(&[Value]) -> Result<Flow>| ex.run(input, outer, f).map(|_| ());
    aggregate(ex, node, &mut source, group, aggs, outer, sink, 0)
}

/// Hash aggregation of `source`'s rows. Past `work_mem`, rows of groups not yet in memory go
/// to temporary files by a hash of their group key; the groups in memory are finished first,
/// then each file is aggregated the same way (a group's rows all land in one file).
#[allow(clippy::too_many_arguments)]
fn aggregate(
    ex: &Exec<'_>,
    node: &Node,
    source: &mut Source<'_>,
    group: &[Scalar],
    aggs: &[AggCall],
    outer: &[&[Value]],
    sink: &mut dyn FnMut(&[Value]) -> Result<Flow>,
    depth: u32,
) -> Result<Flow> {
    let mut groups: Vec<Group> = Vec::new();
    let mut index: KeyMap<usize> = KeyMap::default();
    let mut ints: std::collections::HashMap<i64, usize, foldhash::fast::RandomState> = Default::default();
    if group.is_empty() {
        // Without GROUP BY there is exactly one group, even over no rows: every row goes to
        // it without a key to build or look up.
        groups.push(Group { keys: Vec::new(), accs: aggs.iter().map(fresh).collect() });
    }
    let mut keys = Vec::with_capacity(group.len());
    let mut key = Vec::new();
    let mut args = Vec::new();
    let mut mem = 0usize;
    let mut parts: Vec<super::spill::TempFile<'_>> = Vec::new();
    // Grouped aggregation may spill; without GROUP BY there is one group, always in memory.
    let may_spill = !group.is_empty() && depth < 8;
    source(&mut |row| {
        let gi = if group.is_empty() {
            0
        } else {
            // The key straight from the row for a plain column (no copy of its value); other
            // expressions are evaluated once and kept for a new group. A single integer key
            // is looked up by value in `ints`, any other by its key_of bytes in `index`
            // (key_of gives integers of every width one key by value, equal to no other
            // type's, so which table holds a group follows from its key's value alone).
            keys.clear();
            let mut int = None;
            if let [g] = group {
                let v = match g {
                    Scalar::Col(i, _) => &row[*i],
                    g => {
                        keys.push(ex.eval(g, row, outer)?);
                        &keys[0]
                    }
                };
                int = int_key(v);
            }
            let found = match int {
                Some(n) => ints.get(&n).copied(),
                None => {
                    key.clear();
                    match (group, keys.first()) {
                        // A single key evaluated above.
                        ([_], Some(v)) => super::key_one(v, &mut key),
                        _ => {
                            for g in group {
                                match g {
                                    Scalar::Col(i, _) => super::key_one(&row[*i], &mut key),
                                    g => {
                                        let v = ex.eval(g, row, outer)?;
                                        super::key_one(&v, &mut key);
                                        keys.push(v);
                                    }
                                }
                            }
                        }
                    }
                    index.get(&key[..]).copied()
                }
            };
            match found {
                Some(i) => i,
                None => {
                    if int.is_some() {
                        // The bytes, for spilling's partition and the memory estimate.
                        key.clear();
                        super::key_one(
                            keys.first().unwrap_or_else(|| match &group[0] {
                                Scalar::Col(i, _) => &row[*i],
                                _ => unreachable!("an evaluated key is kept"),
                            }),
                            &mut key,
                        );
                    }
                    if may_spill && mem > ex.work_mem {
                        if parts.is_empty() {
                            for _ in 0..PARTITIONS {
                                parts.push(ex.temp.create()?);
                            }
                        }
                        parts[partition_of(&key, depth)].write_row(row)?;
                        return Ok(Flow::Continue);
                    }
                    let mut evaluated = keys.iter();
                    let keys: Row = group
                        .iter()
                        .map(|g| match g {
                            Scalar::Col(i, _) => row[*i].clone(),
                            _ => evaluated.next().expect("one value per evaluated key").clone(),
                        })
                        .collect();
                    mem += super::row_bytes(&keys) + aggs.len() * std::mem::size_of::<Acc>() + key.len() + 64;
                    groups.push(Group { keys, accs: aggs.iter().map(fresh).collect() });
                    match int {
                        Some(n) => ints.insert(n, groups.len() - 1),
                        None => index.insert(super::Key::new(&key), groups.len() - 1),
                    };
                    groups.len() - 1
                }
            }
        };
        let g = &mut groups[gi];
        for (c, acc) in aggs.iter().zip(g.accs.iter_mut()) {
            if let Some(f) = &c.filter {
                if !ex.truth(f, row, outer)? {
                    continue;
                }
            }
            // A plain column argument is stepped with the row's own value (no copy).
            if let ([Scalar::Col(i, _)], false) = (c.args.as_slice(), matches!(acc, Acc::Collect(_))) {
                step(c, acc, std::slice::from_ref(&row[*i]))?;
                continue;
            }
            args.clear();
            for a in &c.args {
                args.push(ex.eval(a, row, outer)?);
            }
            if let Acc::Collect(rows) = acc {
                if !non_strict(c.func) && args.first().is_some_and(|v| *v == Value::Null) {
                    continue;
                }
                let mut k = Vec::with_capacity(c.order.len());
                for o in &c.order {
                    let b = expr::type_of(&o.expr).is_some_and(|t| t.id == TypeId::Bpchar);
                    k.push(super::sort::sort_value(ex.eval(&o.expr, row, outer)?, b));
                }
                mem += super::row_bytes(&args) + super::row_bytes(&k);
                rows.push((args.clone(), k));
            } else {
                step(c, acc, &args)?;
            }
        }
        Ok(Flow::Continue)
    })?;
    ex.note_mem(node, mem as u64);
    let mut out = Vec::with_capacity(group.len() + aggs.len());
    for g in groups {
        out.clear();
        out.extend(g.keys);
        for (c, acc) in aggs.iter().zip(g.accs) {
            out.push(finish(c, acc)?);
        }
        if let Flow::Stop = sink(&out)? {
            return Ok(Flow::Stop);
        }
    }
    drop((index, ints));
    if !parts.is_empty() {
        ex.note_disk(node, parts.iter().map(|p| p.len()).sum());
    }
    for p in parts {
        let mut reader = p.reader()?;
        let mut part_source = |f: &mut dyn FnMut(&[Value]) -> Result<Flow>| -> Result<()> {
            while let Some(r) = reader.next_row()? {
                if let Flow::Stop = f(&r)? {
                    break;
                }
            }
            Ok(())
        };
        if let Flow::Stop = aggregate(ex, node, &mut part_source, group, aggs, outer, sink, depth + 1)? {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

/// An aggregate folded row by row whose current value can be read at any point (window
/// aggregates over growing frames).
pub struct Running<'c> {
    call: &'c AggCall,
    acc: Acc,
}

impl<'c> Running<'c> {
    pub fn new(call: &'c AggCall) -> Running<'c> {
        Running { call, acc: plain(call) }
    }

    pub fn step(&mut self, args: &[Value]) -> Result<()> {
        step(self.call, &mut self.acc, args)
    }

    pub fn value(&self) -> Result<Value> {
        finish(self.call, self.acc.clone())
    }
}
